"""OpenAI-compatible servers (vLLM, SGLang, llama.cpp, OpenAI itself) through the ``openai`` SDK.

The scale-out path: one ``vllm serve --data-parallel-size k``, or replicas behind a router.
"""

from __future__ import annotations

import functools
import os
import warnings
from urllib.parse import urlsplit

from ..errors import UabError, one_line
from ..reasoning import opening_marker
from .base import (
    MAX_MODEL_LEN,
    Completion,
    Message,
    PromptLength,
    SampleRequest,
    SamplingParams,
    backend_option,
    require,
)
from .remote import (
    UNREADABLE,
    Failure,
    RemoteBackend,
    display_url,
    http_failure,
    make_completion,
    malformed,
    parsed,
    read_key,
    transport_failure,
)
from .tokens import ChatTokens

ENDPOINTS = ("chat", "completions")


def render_prompt(messages: tuple[Message, ...]) -> str:
    """Messages as one raw prompt (the plain template): a lone user message verbatim, else
    ``Role: text`` blocks ending with ``Assistant:``."""
    if _verbatim(messages):
        return str(messages[0].get("content", ""))
    blocks = [
        f"{str(m.get('role', 'user')).capitalize()}: {m.get('content', '')}" for m in messages
    ]
    return "\n\n".join(blocks + ["Assistant:"])


def _verbatim(messages: tuple[Message, ...]) -> bool:
    return len(messages) == 1 and messages[0].get("role") == "user"


# Where a reply to ``render_prompt``'s role blocks ends: a base model goes on to write the next
# turn itself ("…Answer: 78\n\nUser: What is 5 + 5?\n\nAssistant: …Answer: 10"), whose answer
# would be graded and whose tokens would count in the signal.
PLAIN_STOP = ["\n\nUser:", "\n\nSystem:"]


def plain_stop(messages: tuple[Message, ...]) -> list[str] | None:
    """The stop strings of ``render_prompt(messages)``: ``PLAIN_STOP`` for role blocks, none for
    a lone user message (sent verbatim: its reply has no turns to stop at)."""
    return None if _verbatim(messages) else PLAIN_STOP


def chat_template(tokenizer: str):
    """``render_prompt``'s counterpart through a model's own chat template: the tokenizer of
    ``tokenizer`` (a hub id or a local directory) renders messages as the chat endpoint would."""
    from ..models import offline_unless_reachable, quiet_stderr

    transformers = require("transformers", "local", "--tokenizer")
    offline = offline_unless_reachable(tokenizer)
    try:
        with quiet_stderr():
            tok = transformers.AutoTokenizer.from_pretrained(tokenizer)
    except (OSError, ValueError) as exc:
        raise UabError(f"--tokenizer {tokenizer}: cannot load its tokenizer: {one_line(exc)}{offline}") from None
    if not getattr(tok, "chat_template", None):
        raise UabError(f"--tokenizer {tokenizer} has no chat template; leave --tokenizer out for the plain one")
    return ChatTokens(tok, tokenizer).text


class OpenAIBackend(RemoteBackend):
    """Sample from an OpenAI-compatible HTTP server, one sample (``n=1``) per request.

    ``endpoint="chat"`` (preferred: the server applies the model's chat template) uses
    ``/v1/chat/completions``; ``endpoint="completions"`` sends the messages rendered as one
    prompt to ``/v1/completions``: through ``tokenizer``'s chat template when given, else the
    plain ``render_prompt`` (for models without a chat template). The key comes
    from ``api_key`` or ``OPENAI_API_KEY`` and may be left out for local servers; the URL
    from ``base_url`` or ``OPENAI_BASE_URL``.

    The context length is ``max_model_len`` when given, else what the server reports for the
    model (vLLM's ``/v1/models`` entry has ``max_model_len``); prompts are counted by the
    server's ``/tokenize`` (vLLM). Where either is missing, prompts are not checked up front:
    a prompt that does not fit gets the server's own 4xx, which is not retried, stops the
    stage (exit 1) and is never counted as an answer.
    """

    name = "openai"
    url_variable = "OPENAI_BASE_URL"
    key_variables = ("OPENAI_API_KEY",)
    options = (*RemoteBackend.options, backend_option("--endpoint", "Chat or raw completions.", choices=ENDPOINTS,
                                                        samples=True),
               backend_option("--tokenizer", "--endpoint completions: render prompts with this hub id's or "
                              "directory's chat template.", show_default="plain 'Role: text' blocks", samples=True,
                              requires=("endpoint", "completions"), path=True),
               MAX_MODEL_LEN)

    def __init__(self, model: str = "", base_url: str | None = None, api_key: str | None = None, *,
                 endpoint: str = "chat", logprobs: bool = True, tokenizer: str | None = None,
                 max_model_len: int | None = None, **limits):
        """``limits``: ``RemoteBackend``'s ``concurrency``, ``rpm``, ``timeout`` and ``retry``."""
        if endpoint not in ENDPOINTS:
            raise UabError(f"--endpoint must be one of {', '.join(ENDPOINTS)}, got {endpoint!r}")
        if tokenizer and endpoint != "completions":
            raise UabError("--tokenizer renders prompts for --endpoint completions; the chat endpoint "
                           "applies the server's own chat template")
        if not model:
            raise UabError("the openai backend needs --model (the name the server serves)")
        base_url = base_url or os.environ.get(self.url_variable)
        if not base_url:
            raise UabError(
                "the openai backend needs --base-url, e.g. http://127.0.0.1:8000/v1 for "
                "`vllm serve`, or https://api.openai.com/v1"
            )
        key = read_key(api_key, self.key_variables)
        super().__init__(model, base_url, key, **limits)
        self._sdk = require("openai", "openai")
        self.endpoint = endpoint
        self.render = chat_template(tokenizer) if tokenizer else render_prompt
        self.returns_logprobs = logprobs
        self._client = self._sdk.OpenAI(
            base_url=base_url, api_key=key or "EMPTY", timeout=self.timeout, max_retries=0
        )
        self._max_model_len = max_model_len

    @functools.cached_property
    def context_length(self) -> int | None:
        """``--max-model-len``, else the server's ``max_model_len`` for the model, else ``None``."""
        if self._max_model_len is not None:
            return self._max_model_len
        return self._send([self._served_context], what="the /v1/models lookup")[0]

    def _served_context(self) -> int | None:
        """The model's ``max_model_len`` by the server's ``/v1/models`` (vLLM); ``None`` for a
        server without the route or the entry; a transient failure raises (retried)."""
        try:
            cards = self._client.models.list().data
            for card in cards:
                if getattr(card, "id", None) == self.model:
                    value = getattr(card, "max_model_len", None)
                    return value if isinstance(value, int) and value > 0 else None
        except self._sdk.APIStatusError as exc:
            if http_failure(exc.status_code).retryable:
                raise
            return None  # no such route
        # a reply of another shape, or no usable JSON: unknown
        except (self._sdk.APIResponseValidationError, *UNREADABLE, TypeError, AttributeError):
            return None
        return None

    def prompt_lengths(self, prompts, limit: int) -> list[PromptLength | None]:
        """Each prompt's tokens by the server's ``/tokenize`` (vLLM), one request per prompt, sent
        as samples are (``concurrency`` at a time, within ``--rpm``, transient failures retried);
        ``None`` for a prompt the server will not count (unchecked: its own error covers it), and
        for every prompt when the first one finds no count (asked once)."""
        httpx = require("httpx", "openai")
        url = self.base_url.rstrip("/").removesuffix("/v1") + "/tokenize"
        key = self._client.api_key
        headers = {"Authorization": f"Bearer {key}"} if key and key != "EMPTY" else {}

        def count(messages) -> PromptLength | str:
            """The prompt's length, or why the server cannot say."""
            body = ({"messages": list(messages), "add_generation_prompt": True} if self.endpoint == "chat"
                    else {"prompt": self.render(messages)})
            try:
                reply = http.post(url, json={"model": self.model, **body}, headers=headers)
            except httpx.TimeoutException as exc:
                raise transport_failure(exc, timeout=self.timeout) from None
            except httpx.HTTPError as exc:
                raise transport_failure(exc) from None
            if reply.status_code in (404, 405):
                return "no /tokenize"
            if not reply.is_success:
                failure = http_failure(reply.status_code, reply.text, reply.headers)
                if failure.retryable:
                    raise failure
                return f"/tokenize: {self._redact(failure.message)}"
            try:
                return PromptLength(int(reply.json()["count"]))
            except (*UNREADABLE, KeyError, TypeError, OverflowError):
                return "its /tokenize reply has no count"

        if not prompts:
            return []
        with httpx.Client(timeout=self.timeout) as http:
            what = "a /tokenize request"
            first = self._send([functools.partial(count, prompts[0])], what=what)[0]
            if isinstance(first, str):
                context = "" if self.context_length is None else f"the context is {self.context_length:,} tokens but "
                warnings.warn(f"{context}the server cannot count prompt tokens ({first}): prompts are not checked "
                              "before sampling", UserWarning, stacklevel=2)
                return [None] * len(prompts)
            rest = self._send([functools.partial(count, m) for m in prompts[1:]], what=what)
        return [first, *(n if isinstance(n, PromptLength) else None for n in rest)]

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _call(self, request: SampleRequest, params: SamplingParams) -> Completion:
        # vLLM and friends want an explicit n=1; one request per seed keeps samples independent.
        common = {
            "model": self.model,
            "seed": request.seed,
            "n": 1,
            "max_tokens": params.max_tokens,
        }
        common.update(temperature=params.temperature, top_p=params.top_p)
        if self.endpoint == "chat":
            extra = {"logprobs": True} if self.returns_logprobs else {}
            reply = self._client.chat.completions.create(
                messages=list(request.messages), **common, **extra
            )
            return parsed(self._parse_chat, reply)
        extra = {"logprobs": 1} if self.returns_logprobs else {}
        if self.render is render_prompt and (stop := plain_stop(request.messages)):
            extra["stop"] = stop
        prompt = self.render(request.messages)
        reply = self._client.completions.create(prompt=prompt, **common, **extra)
        # a chat template that opens the reasoning in the prompt (R1 distills end it "<think>\n"):
        # the reply starts with the marker, as local's and vllm's do, so one cut while thinking reads so
        return parsed(functools.partial(self._parse_completion, opened=opening_marker(prompt)), reply)

    def _parse_chat(self, reply) -> Completion:
        choice = _first_choice(reply)
        message = getattr(choice, "message", None)
        logprobs = tokens = None
        content = getattr(getattr(choice, "logprobs", None), "content", None)
        if self.returns_logprobs and content is not None:
            logprobs = [getattr(item, "logprob", None) for item in content]
            tokens = [getattr(item, "token", None) for item in content]
        text, thinking = _chunks(getattr(message, "content", None))
        # vLLM's reasoning parsers: reasoning_content, named reasoning since vLLM 0.10
        reasoning = thinking or getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
        return make_completion(
            text, logprobs, _usage(reply, "completion_tokens"), getattr(choice, "finish_reason", None),
            reasoning, tokens, _usage(reply, "prompt_tokens"),
        )

    def _parse_completion(self, reply, opened: str = "") -> Completion:
        choice = _first_choice(reply)
        logprobs = tokens = None
        values = getattr(getattr(choice, "logprobs", None), "token_logprobs", None)
        if self.returns_logprobs and values is not None:
            # a token without its logprob (null) makes the reply malformed, as in a chat reply: an
            # ANLL of the other tokens would be the mean of part of the reply
            names = getattr(choice.logprobs, "tokens", None)
            logprobs, tokens = values, names if isinstance(names, list) else None
        text = getattr(choice, "text", None)
        text = opened + text if opened and isinstance(text, str) else text
        return make_completion(
            text, logprobs, _usage(reply, "completion_tokens"), getattr(choice, "finish_reason", None),
            None, tokens, _usage(reply, "prompt_tokens"),
        )

    def _classify(self, exc: Exception) -> Failure | None:
        sdk = self._sdk
        if isinstance(exc, sdk.APIStatusError):
            failure = http_failure(exc.status_code, exc.body, exc.response.headers)
            # a host alone (`vllm serve`'s, without /v1); a path of its own (Gemini's …/v1beta/openai/) is meant
            if exc.status_code == 404 and not urlsplit(self.base_url).path.strip("/"):
                failure.message += (" (--base-url has no /v1: OpenAI-compatible servers serve under it, "
                                    f"e.g. --base-url {display_url(self.base_url).rstrip('/')}/v1)")
            return failure
        if isinstance(exc, sdk.APITimeoutError):
            return transport_failure(exc, timeout=self.timeout)
        if isinstance(exc, sdk.APIConnectionError):
            return transport_failure(exc)
        if isinstance(exc, (sdk.APIResponseValidationError, *UNREADABLE)):
            return malformed(type(exc).__name__)
        return None


def _chunks(content) -> tuple[object, str | None]:
    """A chat reply's text and reasoning from its ``content``: a string is all text; a list of
    chunks (Magistral through Mistral's API) gives its ``text`` chunks' text and its ``thinking``
    chunks' reasoning (each a list of text chunks), joined in order (``None``: no thinking)."""
    if not isinstance(content, list):
        return content, None
    text, thinking = [], []
    for chunk in content:
        if chunk["type"] == "text":
            text.append(chunk["text"])
        elif chunk["type"] == "thinking":
            thinking += [part["text"] for part in chunk["thinking"] if part["type"] == "text"]
    return "".join(text), "".join(thinking) or None


def _first_choice(reply):
    """The reply's first choice; a reply without one is malformed, with the server's own error
    when it sent one in its place (a router's ``{"error": {"message": …}}`` with a 200)."""
    choices = getattr(reply, "choices", None)
    if not choices:
        raise malformed("no choices", getattr(reply, "error", None))
    return choices[0]


def _usage(reply, name: str) -> int | None:
    """A token count of the reply's ``usage`` (``completion_tokens``, ``prompt_tokens``)."""
    tokens = getattr(getattr(reply, "usage", None), name, None)
    return tokens if isinstance(tokens, int) else None

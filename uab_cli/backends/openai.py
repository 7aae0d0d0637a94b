"""OpenAI-compatible servers (vLLM, SGLang, llama.cpp, OpenAI itself) through the ``openai`` SDK.

The scale-out path: one ``vllm serve --data-parallel-size k``, or replicas behind a router.
"""

from __future__ import annotations

import os

from ..errors import UabError
from .base import Completion, Message, Retry, SampleRequest, SamplingParams, backend_option, require
from .remote import (
    Failure,
    RemoteBackend,
    http_failure,
    make_completion,
    malformed,
    transport_failure,
)

ENDPOINTS = ("chat", "completions")


def render_prompt(messages: tuple[Message, ...]) -> str:
    """Messages as one raw prompt: a lone user message verbatim, else ``Role: text`` blocks."""
    if len(messages) == 1 and messages[0].get("role") == "user":
        return str(messages[0].get("content", ""))
    blocks = [
        f"{str(m.get('role', 'user')).capitalize()}: {m.get('content', '')}" for m in messages
    ]
    return "\n\n".join(blocks + ["Assistant:"])


class OpenAIBackend(RemoteBackend):
    """Sample from an OpenAI-compatible HTTP server, one sample (``n=1``) per request.

    ``endpoint="chat"`` (preferred: the server applies the model's chat template) uses
    ``/v1/chat/completions``; ``endpoint="completions"`` sends ``render_prompt(messages)``
    to ``/v1/completions`` for servers or models without a chat template. The key comes
    from ``api_key`` or ``OPENAI_API_KEY`` and may be left out for local servers; the URL
    from ``base_url`` or ``OPENAI_BASE_URL``.
    """

    name = "openai"
    supports_seed = True
    options = (*RemoteBackend.options, backend_option("--endpoint", "Chat or raw completions.", choices=ENDPOINTS))

    def __init__(
        self,
        model: str = "",
        base_url: str | None = None,
        api_key: str | None = None,
        concurrency: int = 8,
        rpm: float | None = None,
        timeout: float = 120.0,
        retry: Retry | None = None,
        endpoint: str = "chat",
        logprobs: bool = True,
    ):
        if endpoint not in ENDPOINTS:
            raise UabError(f"--endpoint must be one of {', '.join(ENDPOINTS)}, got {endpoint!r}")
        if not model:
            raise UabError("the openai backend needs --model (the name the server serves)")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise UabError(
                "the openai backend needs --base-url, e.g. http://127.0.0.1:8000/v1 for "
                "`vllm serve`, or https://api.openai.com/v1"
            )
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        super().__init__(model, base_url, key, concurrency, rpm, timeout, retry)
        self._sdk = require("openai", "openai")
        self.endpoint = endpoint
        self.returns_logprobs = logprobs
        self._client = self._sdk.OpenAI(
            base_url=base_url, api_key=key or "EMPTY", timeout=timeout, max_retries=0
        )

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
            return self._parse_chat(reply)
        extra = {"logprobs": 1} if self.returns_logprobs else {}
        reply = self._client.completions.create(
            prompt=render_prompt(request.messages), **common, **extra
        )
        return self._parse_completion(reply)

    def _parse_chat(self, reply) -> Completion:
        choice = _first_choice(reply)
        message = getattr(choice, "message", None)
        logprobs = None
        content = getattr(getattr(choice, "logprobs", None), "content", None)
        if self.returns_logprobs and content is not None:
            logprobs = [getattr(item, "logprob", None) for item in content]
        text = getattr(message, "content", None)
        return make_completion(
            text, logprobs, _usage(reply, "completion_tokens"), getattr(choice, "finish_reason", None),
            _usage(reply, "prompt_tokens"),
        )

    def _parse_completion(self, reply) -> Completion:
        choice = _first_choice(reply)
        logprobs = None
        values = getattr(getattr(choice, "logprobs", None), "token_logprobs", None)
        if self.returns_logprobs and values is not None:
            logprobs = [x for x in values if x is not None]
        text = getattr(choice, "text", None)
        return make_completion(
            text, logprobs, _usage(reply, "completion_tokens"), getattr(choice, "finish_reason", None),
            _usage(reply, "prompt_tokens"),
        )

    def _classify(self, exc: Exception) -> Failure | None:
        sdk = self._sdk
        if isinstance(exc, sdk.APIStatusError):
            return http_failure(exc.status_code, exc.body, exc.response.headers)
        if isinstance(exc, sdk.APITimeoutError):
            return transport_failure(exc, timeout=self.timeout)
        if isinstance(exc, sdk.APIConnectionError):
            return transport_failure(exc)
        if isinstance(exc, (sdk.APIResponseValidationError, ValueError)):
            return malformed(type(exc).__name__)
        return None


def _first_choice(reply):
    choices = getattr(reply, "choices", None)
    if not choices:
        raise malformed("no choices")
    return choices[0]


def _usage(reply, name: str) -> int | None:
    """A token count of the reply's ``usage`` (``completion_tokens``, ``prompt_tokens``)."""
    tokens = getattr(getattr(reply, "usage", None), name, None)
    return tokens if isinstance(tokens, int) else None

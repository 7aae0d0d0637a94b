"""Cohere's hosted models through the ``cohere`` SDK's v2 chat API, one call per sample.

Uses Cohere's token logprobs (for ANLL) when the response carries them.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
from collections.abc import Mapping

from ..errors import UabError
from .base import Completion, SampleRequest, SamplingParams, require
from .remote import (
    UNREADABLE,
    Failure,
    RemoteBackend,
    http_failure,
    make_completion,
    malformed,
    parsed,
    read_key,
    transport_failure,
)

KEY_VARS = ("CO_API_KEY", "COHERE_API_KEY")
MODEL = "command-a-03-2025"  # the model without --model
URL_VAR = "CO_API_URL"  # the SDK's own; uab passes the URL, so it reads it here

# Cohere accepts nucleus ``p`` only within [0.01, 0.99] and defaults it to 0.75.
_P_MIN, _P_MAX = 0.01, 0.99


class CohereBackend(RemoteBackend):
    """Sample from Cohere's chat API (``ClientV2.chat``); the key comes from ``CO_API_KEY``, the
    URL from ``base_url`` or ``CO_API_URL`` (else Cohere's).

    ``top_p`` is sent as Cohere's ``p``, clamped to the accepted [0.01, 0.99] (so the
    default 1.0 becomes 0.99, not Cohere's own default of 0.75).
    """

    name = "cohere"
    url_variable = URL_VAR
    key_variables = KEY_VARS

    def __init__(self, model: str = MODEL, base_url: str | None = None, api_key: str | None = None, *,
                 logprobs: bool = True, **limits):
        """``limits``: ``RemoteBackend``'s ``concurrency``, ``rpm``, ``timeout`` and ``retry``."""
        key = read_key(api_key, self.key_variables)
        if not key:
            raise UabError(
                "the cohere backend needs an API key: set CO_API_KEY (or COHERE_API_KEY)"
            )
        base_url = base_url or os.environ.get(URL_VAR) or None
        super().__init__(model, base_url, key, **limits)
        self._sdk = require("cohere", "cohere")
        self._httpx = require("httpx", "cohere")
        self._api_error = require("cohere.core.api_error", "cohere").ApiError
        self._parsing_error = require("cohere.core.parse_error", "cohere").ParsingError
        self.returns_logprobs = logprobs
        self._client = self._sdk.ClientV2(
            api_key=key,
            base_url=base_url,
            timeout=self.timeout,
            max_retries=0,
            log_warning_experimental_features=False,
        )
        # each thread's last HTTP response: the body of a 200 the SDK cannot make a reply of (an error in
        # its place) is gone with its exception. The SDK's own httpx client (its __exit__ closes this one).
        self._responses = threading.local()
        with contextlib.suppress(AttributeError):  # an SDK laid out otherwise: no body to quote, as before
            self._client._client_wrapper.httpx_client.httpx_client.event_hooks["response"].append(self._keep)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.__exit__(None, None, None)

    def _call(self, request: SampleRequest, params: SamplingParams) -> Completion:
        extra = {"logprobs": True} if self.returns_logprobs else {}
        self._responses.last = None  # this call's response only: never an earlier one's body
        try:
            reply = self._client.chat(
                model=self.model,
                messages=list(request.messages),
                temperature=params.temperature,
                p=min(max(params.top_p, _P_MIN), _P_MAX),
                max_tokens=params.max_tokens,
                seed=request.seed,
                **extra,
            )
        except TypeError:  # the SDK builds its reply from JSON that is no object (a list, a string), or
            # whose message is none (Cohere's error, {"message": "…"}, sent with a 200)
            body = self._last_body()
            shape = "TypeError" if isinstance(body, Mapping) else "not a JSON object"
            raise _unusable(body, f"unexpected reply shape ({shape})") from None
        return parsed(self._parse, reply)

    def _keep(self, response) -> None:
        self._responses.last = response

    def _last_body(self) -> object:
        """The JSON of this thread's last response, as the SDK read it; None when there is none."""
        try:
            return json.loads(self._responses.last.content)
        except (AttributeError, self._httpx.ResponseNotRead, *UNREADABLE):
            return None

    def _parse(self, reply) -> Completion:
        if getattr(reply, "message", None) is None and getattr(reply, "error", None):
            raise malformed("no reply", reply.error)  # a gateway's {"error": …} in its place
        content = getattr(getattr(reply, "message", None), "content", None)
        if content is not None and not isinstance(content, list):
            raise malformed("message content is not a list")
        # a reasoning model's thinking comes in blocks of its own: kept apart, never graded
        text, reasoning = (None, None) if content is None else (_blocks(content, "text"),
                                                                _blocks(content, "thinking", optional=True))
        return make_completion(
            text,
            self._logprobs(reply),
            _usage(reply, "output_tokens"),
            getattr(reply, "finish_reason", None),
            reasoning,
            prompt_tokens=_usage(reply, "input_tokens"),
        )

    def _logprobs(self, reply) -> list[float] | None:
        """Per-token logprobs flattened from the reply's chunks, or ``None`` if absent (an empty
        list: ``make_completion`` tells an empty reply's from missing ones)."""
        items = getattr(reply, "logprobs", None)
        if not self.returns_logprobs or items is None:
            return None
        values: list[float] = []
        for item in items:
            chunk = getattr(item, "logprobs", None)
            if chunk is None:
                return None
            values.extend(chunk)
        return values

    def _classify(self, exc: Exception) -> Failure | None:
        if isinstance(exc, self._api_error):
            return http_failure(exc.status_code, exc.body, exc.headers)
        if isinstance(exc, self._httpx.TimeoutException):
            return transport_failure(exc, timeout=self.timeout)
        if isinstance(exc, self._httpx.RequestError):  # a transport error, a body that does not decode (gzip)
            return transport_failure(exc)
        if isinstance(exc, self._parsing_error):
            return _unusable(exc.body, type(exc).__name__)
        if isinstance(exc, UNREADABLE):
            return malformed(type(exc).__name__)
        return None


def _unusable(body: object, what: str) -> Failure:
    """A 200 the SDK could not make a reply of (``what`` went wrong) from its JSON ``body``: malformed,
    with the server's words where it sent an error in the reply's place (Cohere's ``{"message": "…"}``,
    whose message is no reply's, or a gateway's ``{"error": …}``)."""
    error = None
    if isinstance(body, Mapping):
        error = body.get("error") or (body if isinstance(body.get("message"), str) else None)
    return malformed("no reply", error) if error else malformed(what)


def _blocks(content: list, kind: str, optional: bool = False) -> str:
    """The text of the reply's content blocks of type ``kind`` (``text``, ``thinking``: each holds
    it in the field of that name), joined in order. ``optional``: a block whose field is null
    holds none (a null thinking is no reasoning; a null text is a malformed reply)."""
    parts = (getattr(item, kind, "") for item in content if getattr(item, "type", None) == kind)
    return "".join(part for part in parts if part is not None or not optional)


def _usage(reply, name: str) -> int | None:
    """A token count of the reply's usage (``output_tokens``, ``input_tokens``): the tokens
    the model saw, else the billed units."""
    usage = getattr(reply, "usage", None)
    for part in (getattr(usage, "tokens", None), getattr(usage, "billed_units", None)):
        tokens = getattr(part, name, None)
        if isinstance(tokens, (int, float)) and math.isfinite(tokens):
            return int(tokens)
    return None

"""Shared machinery for HTTP backends: bounded concurrency, retries, an RPM limit, key hygiene.

Subclasses supply ``_call`` (request → ``Completion``) and ``_classify`` (SDK error → ``Failure``).
"""

from __future__ import annotations

import email.utils
import ipaddress
import logging
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from urllib.parse import urlsplit

from ..errors import BackendError, UabError
from .base import BaseBackend, Completion, OnResult, Retry, SampleRequest, SamplingParams, backend_option

log = logging.getLogger(__name__)

#: 4xx statuses worth retrying; every 5xx is retried too.
RETRYABLE_4XX = frozenset({408, 409, 429})

#: Service finish reasons mapped onto ``"stop"`` / ``"length"``; others are lowercased.
FINISH_REASONS = {
    "stop": "stop",
    "complete": "stop",
    "stop_sequence": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
}

#: Finish reasons that mean the generation failed: retried, never kept as an answer.
FAILED_FINISHES = frozenset({"error", "timeout"})

_MAX_BODY_CHARS = 200


class Failure(Exception):
    """One failed try, described without secrets: retry it or give up at once."""

    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


class _Skipped(Exception):
    """A request not attempted because another one already failed for good."""


def malformed(what: str) -> Failure:
    """A retryable failure for a reply the service sent but that cannot be used."""
    return Failure(f"malformed response: {what}")


def http_failure(
    status: int | None, body: object = None, headers: Mapping | None = None
) -> Failure:
    """A failure for an HTTP error status: 408/409/429/5xx (and garbled 2xx) are retryable."""
    if status is None:
        return Failure(f"API error: {_short(body)}", retryable=False)
    if status < 400:
        return malformed(f"HTTP {status} with an unreadable body: {_short(body)}")
    retryable = status >= 500 or status in RETRYABLE_4XX
    return Failure(
        f"HTTP {status}: {_short(body)}",
        retryable=retryable,
        retry_after=parse_retry_after(headers),
    )


def transport_failure(exc: BaseException, timeout: float | None = None) -> Failure:
    """A retryable failure for a connection error, or a timeout when ``timeout`` is given."""
    if timeout is not None:
        return Failure(f"no response within the {timeout:g}s timeout")
    cause = exc.__cause__ or exc.__context__ or exc
    return Failure(f"connection error: {type(cause).__name__}: {_short(str(cause))}")


def parse_retry_after(headers: Mapping | None) -> float | None:
    """Seconds to wait from ``Retry-After`` / ``retry-after-ms`` headers, or ``None``."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        if "retry-after-ms" in lower:
            return max(float(lower["retry-after-ms"]) / 1000.0, 0.0)
        value = lower.get("retry-after")
        if value is None:
            return None
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def make_completion(
    text: object,
    token_logprobs: Sequence[float] | None,
    n_tokens: int | None,
    finish_reason: object,
    reasoning: object = None,
    tokens: Sequence[object] | None = None,
    prompt_tokens: int | None = None,
) -> Completion:
    """Build a ``Completion`` from parsed reply fields, or raise a retryable ``Failure``.

    Empty text is kept only when the service said the generation finished normally; a
    reply cut at ``max_tokens`` before any visible text (a reasoning model still thinking),
    or one that is all reasoning, is a real, empty completion. ``reasoning``: the reasoning
    the server returned apart from the text (a string, else dropped); ``tokens``: each
    generated token's text, one per logprob (else dropped).
    """
    if not isinstance(finish_reason, str) or not finish_reason:
        raise malformed("no finish reason")
    reason = FINISH_REASONS.get(finish_reason.lower(), finish_reason.lower())
    if reason in FAILED_FINISHES:
        raise Failure(f"the service reported finish_reason={finish_reason}")
    reasoning = reasoning if isinstance(reasoning, str) and reasoning else None
    if text is None and (reason == "length" or reasoning is not None):
        text = ""
    if not isinstance(text, str):
        raise malformed("no text")
    if text == "" and reason not in ("stop", "length"):
        raise malformed(f"empty text with finish_reason={finish_reason}")
    try:
        logprobs = None if token_logprobs is None else tuple(float(x) for x in token_logprobs)
    except (TypeError, ValueError):
        raise malformed("non-numeric logprobs") from None
    if n_tokens is None:
        n_tokens = len(logprobs) if logprobs is not None else 0
    texts = tuple(tokens) if tokens is not None and logprobs is not None else None
    if texts is not None and (len(texts) != len(logprobs) or not all(isinstance(t, str) for t in texts)):
        texts = None
    return Completion(
        text=text, token_logprobs=logprobs, n_tokens=int(n_tokens), finish_reason=reason,
        reasoning=reasoning, tokens=texts,
        prompt_tokens=int(prompt_tokens) if isinstance(prompt_tokens, (int, float)) else None,
    )


def check_base_url(url: str | None) -> str | None:
    """A warning when ``url`` sends traffic (and the API key) over plain http to another host."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme.lower() != "http":
        return None
    host = (parts.hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass
    return (
        f"--base-url {display_url(url)} uses plain http to a non-local host: "
        "prompts, completions and the API key travel unencrypted"
    )


def display_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (safe to print)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _short(body: object) -> str:
    text = body if isinstance(body, str) else repr(body)
    text = " ".join(text.split())
    return text if len(text) <= _MAX_BODY_CHARS else text[: _MAX_BODY_CHARS - 3] + "..."


class RateLimiter:
    """Thread-safe requests-per-minute limit: starts are spaced at least ``60 / rpm`` apart.

    Spacing (rather than a burst-allowing window) keeps every window of any length,
    a minute included, at or under the limit. The next slot is timed from when the
    previous caller actually woke, so a late thread cannot bunch up with the next one.
    """

    def __init__(self, rpm: float | None, clock: Callable[[], float] = time.monotonic):
        self.interval = 60.0 / rpm if rpm else 0.0
        self._clock = clock
        self._next = float("-inf")
        self._lock = threading.Lock()

    def acquire(self, wait: Callable[[float], object] = time.sleep) -> None:
        """Block (through ``wait(seconds)``) until this caller may start a request."""
        if not self.interval:
            return
        with self._lock:
            delay = self._next - self._clock()
            if delay > 0:
                wait(delay)
            self._next = self._clock() + self.interval


class RemoteBackend(BaseBackend):
    """A backend that calls a service over HTTP, sharing one retry and concurrency policy."""

    options = (
        backend_option("--base-url", "Server URL.", show_default="OPENAI_BASE_URL / Cohere's"),
        backend_option("--api-key", "API key (prefer OPENAI_API_KEY / CO_API_KEY).", show_default=""),
        backend_option("--concurrency", "Parallel requests.", type=int, minimum=1),
        backend_option("--rpm", "Max requests per minute.", type=float, minimum=0, open_min=True,
                       show_default="unlimited"),
        backend_option("--timeout", "Per-request timeout in seconds.", type=float, minimum=0, open_min=True),
        backend_option("--retries", "Attempts per request before giving up.", type=int, minimum=1,
                       show_default=str(Retry.attempts)),
    )

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, concurrency: int = 8,
                 rpm: float | None = None, timeout: float = 120.0, retry: Retry | None = None):
        if concurrency < 1:
            raise UabError(f"--concurrency must be at least 1, got {concurrency}")
        if rpm is not None and rpm <= 0:
            raise UabError(f"--rpm must be positive, got {rpm:g}")
        if timeout <= 0:
            raise UabError(f"--timeout must be positive, got {timeout:g}")
        self.model = model
        self.base_url = base_url
        self.concurrency = concurrency
        self.rpm = rpm
        self.timeout = timeout
        self.retry = retry or Retry()
        self._limiter = RateLimiter(rpm)
        self._secret = api_key if api_key and len(api_key) >= 4 and api_key != "EMPTY" else None
        warning = check_base_url(base_url)
        if warning:
            warnings.warn(warning, UserWarning, stacklevel=3)

    def __repr__(self) -> str:
        where = display_url(self.base_url) or "default endpoint"
        limits = f"concurrency={self.concurrency} rpm={self.rpm}"
        return f"<{type(self).__name__} {self.model!r} at {where} {limits}>"

    # -- to implement ----------------------------------------------------------------

    def _call(self, request: SampleRequest, params: SamplingParams) -> Completion:
        """Make one API call and parse it; raise ``Failure`` or an SDK exception on error."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> Failure | None:
        """Map an SDK exception to a ``Failure``; ``None`` lets an unexpected one propagate."""
        return None

    # -- the shared policy -----------------------------------------------------------

    def _generate(self, requests: list[SampleRequest], params: SamplingParams,
                  on_result: OnResult | None) -> list[Completion]:
        """Run ``requests`` ``concurrency`` at a time; ``on_result`` runs in this thread only.

        When a request fails for good, no new ones start, the in-flight ones finish (and
        successes still reach ``on_result``), then the first ``BackendError`` is raised.
        """
        results: list[Completion | None] = [None] * len(requests)
        stop = threading.Event()
        error: BackendError | None = None
        pool = ThreadPoolExecutor(
            min(self.concurrency, len(requests)), thread_name_prefix=f"uab-{self.name}"
        )
        try:
            futures = {
                pool.submit(self._run_one, i, r, params, stop): i for i, r in enumerate(requests)
            }
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=futures.__getitem__):
                    try:
                        completion = future.result()
                    except _Skipped:
                        continue
                    except BackendError as exc:
                        error = error or exc
                        stop.set()
                        continue
                    index = futures[future]
                    results[index] = completion
                    if on_result is not None:
                        on_result(index, completion)
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        if error is not None:
            raise error
        return results  # type: ignore[return-value]

    def _run_one(
        self, index: int, request: SampleRequest, params: SamplingParams, stop: threading.Event
    ) -> Completion:
        """One request through the rate limit and the retry policy."""
        attempts = max(self.retry.attempts, 1)
        failure = Failure("not attempted")
        for attempt in range(1, attempts + 1):
            if stop.is_set():
                raise _Skipped
            self._limiter.acquire(stop.wait)
            if stop.is_set():
                raise _Skipped
            try:
                return self._call(request, params)
            except Failure as exc:
                failure = exc
            except Exception as exc:  # noqa: BLE001 - mapped, or re-raised just below
                mapped = self._classify(exc)
                if mapped is None:
                    raise
                failure = mapped
            message = self._redact(failure.message)
            if not failure.retryable:
                stop.set()
                raise BackendError(
                    f"{self.name}: request {index} failed (not retryable): {message}"
                )
            if attempt < attempts:
                delay = self.retry.delay(attempt, failure.retry_after)
                log.info(
                    "%s: request %d attempt %d/%d failed: %s; retrying in %.2fs",
                    self.name,
                    index,
                    attempt,
                    attempts,
                    message,
                    delay,
                )
                self._pause(delay, stop)
        stop.set()
        message = self._redact(failure.message)
        raise BackendError(
            f"{self.name}: request {index} failed after {attempts} attempts: {message}"
        )

    def _pause(self, seconds: float, stop: threading.Event) -> None:
        """Back off; the real-time default wakes early once the whole call is failing."""
        if self.retry.sleep is time.sleep:
            stop.wait(seconds)
        else:
            self.retry.sleep(seconds)

    def _redact(self, text: str) -> str:
        """``text`` with the API key masked, should a service ever echo it back."""
        return text.replace(self._secret, "***") if self._secret else text

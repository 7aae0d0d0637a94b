"""Shared machinery for HTTP backends: bounded concurrency, retries, an RPM limit, key hygiene.

Subclasses supply ``_call`` (request → ``Completion``) and ``_classify`` (SDK error → ``Failure``).
"""

from __future__ import annotations

import datetime
import email.utils
import functools
import ipaddress
import logging
import math
import os
import queue
import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar
from urllib.parse import urlsplit

from ..errors import BackendError, UabError
from .base import FILTERED, BaseBackend, Completion, OnResult, Retry, SampleRequest, SamplingParams, backend_option

log = logging.getLogger(__name__)

T = TypeVar("T")

#: 4xx statuses worth retrying; every 5xx is retried too.
RETRYABLE_4XX = frozenset({408, 409, 429})

#: Service finish reasons mapped onto ``"stop"`` / ``"length"`` / ``FILTERED``; others are lowercased.
FINISH_REASONS = {
    "stop": "stop",
    "complete": "stop",
    "stop_sequence": "stop",
    "eos": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "error_limit": "length",  # Cohere: cut at the model's context length
    "error_toxic": FILTERED,  # Cohere: a reply deemed toxic
}

#: Finish reasons that mean the generation failed: retried, never kept as an answer
#: (vLLM reports an aborted request as ``abort``, Cohere's older API a cancelled one as ``USER_CANCEL``).
FAILED_FINISHES = frozenset({"error", "timeout", "abort", "user_cancel"})

#: At most one line per this many seconds says that requests are being retried.
NOTICE_EVERY = 5.0

#: What decoding a reply body that is no usable JSON raises: JSON that does not parse, a body
#: that is no UTF-8, JSON nested deeper than the parser goes. Retried as malformed replies.
UNREADABLE = (ValueError, RecursionError)

_MAX_BODY_CHARS = 200
_MAX_LOGPROB = 1e-3  # a log probability is <= 0; a server's rounding may go a hair above


class Failure(Exception):
    """One failed try, described without secrets: retry it or give up at once."""

    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None,
                 status: int | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


class _Skipped(Exception):
    """A request not attempted because another one already failed for good."""


def malformed(what: str, error: object = None) -> Failure:
    """A retryable failure for a reply the service sent but that cannot be used; ``error``: what
    the server sent in the reply's place (``server_error``'s), said after ``what`` it lacks."""
    return Failure(f"malformed response: {what}" + (f"; the server's error: {server_error(error)}" if error else ""))


def server_error(error: object) -> str:
    """What a reply's ``error`` member says (``{"message": …, "code": …}`` or a string), on one
    short line: a gateway may send its own or its provider's failure as a 200 without ``choices``
    (or, to Cohere's API, a 200 whose whole body is such an error)."""
    if isinstance(error, Mapping):
        message, code = error.get("message"), error.get("code") or error.get("type")
        if isinstance(message, str) and message.strip():
            return _short(f"{message} ({code})" if isinstance(code, (str, int)) and str(code) else message)
    return _short(error)


def parsed(parse: Callable[[object], Completion], reply: object) -> Completion:
    """``parse(reply)``; a reply of an unexpected shape (a number where a list belongs) is
    malformed, like one that is not JSON."""
    try:
        return parse(reply)
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        raise malformed(f"unexpected reply shape ({type(exc).__name__})") from None


def read_key(given: str | None, variables: Sequence[str]) -> str | None:
    """The API key: ``given``, else the first of the environment ``variables`` that is set,
    without surrounding whitespace (a key read from a file keeps its line end). ``UabError``,
    never showing the key, for one an HTTP header cannot carry."""
    source, key = "--api-key", given
    if not key:
        source, key = next(((v, os.environ[v]) for v in variables if os.environ.get(v)), (source, None))
    key = key.strip() if key else None
    if key and not (key.isascii() and key.isprintable()):
        raise UabError(f"the API key in {source} holds characters an HTTP header cannot carry "
                       "(non-ASCII or control characters)")
    return key or None


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
        status=status,
    )


def transport_failure(exc: BaseException, timeout: float | None = None) -> Failure:
    """A retryable failure for a connection error, or a timeout when ``timeout`` is given."""
    if timeout is not None:
        return Failure(f"no response within the {timeout:g}s timeout")
    cause = exc.__cause__ or exc.__context__ or exc
    return Failure(f"connection error: {type(cause).__name__}: {_short(str(cause))}")


def parse_retry_after(headers: Mapping | None) -> float | None:
    """Seconds to wait from ``Retry-After`` (seconds or an HTTP-date) / ``retry-after-ms`` headers, or ``None``."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        return max(float(lower["retry-after-ms"]) / 1000.0, 0.0)
    except (KeyError, ValueError):  # none, or unreadable: Retry-After's
        pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # `-0000` or asctime's form: an HTTP-date is always GMT, never local time
        when = when.replace(tzinfo=datetime.timezone.utc)
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
    one that is all reasoning, or one its content filter withheld (``FILTERED``), is a real,
    empty completion. ``reasoning``: the reasoning
    the server returned apart from the text (a string, else dropped); ``tokens``: each
    generated token's text, one per logprob (else dropped). No logprobs (an empty list) are an
    empty reply's; of any other reply they are missing (``None``), never a certainty. Without
    ``n_tokens`` (a reply without usage) the tokens are the logprobs', else unknown (``None``).
    """
    if not isinstance(finish_reason, str) or not finish_reason:
        raise malformed("no finish reason")
    reason = FINISH_REASONS.get(finish_reason.lower(), finish_reason.lower())
    if reason in FAILED_FINISHES:
        raise Failure(f"the service reported finish_reason={finish_reason}")
    reasoning = reasoning if isinstance(reasoning, str) and reasoning else None
    if text is None and (reason in ("length", FILTERED) or reasoning is not None):
        text = ""
    if not isinstance(text, str):
        raise malformed("no text")
    if text == "" and reason not in ("stop", "length", FILTERED):
        raise malformed(f"empty text with finish_reason={finish_reason}")
    try:
        logprobs = None if token_logprobs is None else tuple(float(x) for x in token_logprobs)
    except (TypeError, ValueError):
        raise malformed("non-numeric logprobs") from None
    if logprobs is not None and not all(math.isfinite(x) and x <= _MAX_LOGPROB for x in logprobs):
        raise malformed("a logprob that is not a finite number <= 0")
    if logprobs == () and (text or reasoning or n_tokens):  # none for a reply of tokens: missing, not certain
        logprobs = None
    if n_tokens is None and logprobs is not None:
        n_tokens = len(logprobs)
    if n_tokens is not None and (not isinstance(n_tokens, int) or n_tokens < 0):
        raise malformed(f"token count {n_tokens!r}")
    texts = tuple(tokens) if tokens is not None and logprobs is not None else None
    if texts is not None and (len(texts) != len(logprobs) or not all(isinstance(t, str) for t in texts)):
        texts = None
    return Completion(
        text=text, token_logprobs=logprobs, n_tokens=None if n_tokens is None else int(n_tokens), finish_reason=reason,
        reasoning=reasoning, tokens=texts,
        prompt_tokens=int(prompt_tokens) if isinstance(prompt_tokens, (int, float)) and prompt_tokens >= 0 else None,
    )


def check_url(url: str | None, variable: str | None = None) -> None:
    """``UabError`` unless ``url`` (when given) is an http(s) URL with a host and a port that is a
    number, and no query or fragment (the SDKs append the API's path after them: ``/v1?key=K``
    asks ``/v1/?key=Kchat/completions``): a typo there is a bad option, not a connection to retry.
    The message shows the URL without its user info, query or fragment (a key may be there);
    ``variable``: the environment variable it may have come from."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        usable = (parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and (parts.port or 0) >= 0
                  and not any(c.isspace() for c in url))  # urlsplit strips what the HTTP client would send
    except ValueError:  # a port that is no number or out of range, an unclosed IPv6 bracket
        usable = False
    where = f"--base-url (or {variable})" if variable else "--base-url"
    shown = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)?.*@", r"\1", url, flags=re.DOTALL)  # with or without a scheme
    shown = re.sub(r"([?#]).*", r"\1…", shown, flags=re.DOTALL)
    if not usable:
        raise UabError(f"{where} must be an http:// or https:// URL with a host, "
                       f"e.g. http://127.0.0.1:8000/v1, got {shown!r}")
    if "?" in url or "#" in url:
        raise UabError(f"{where} must have no query (?…) or fragment (#…): the API's path would be added "
                       f"inside it (give a key with --api-key), got {shown!r}")


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


def check_user_info(url: str | None, key: str | None) -> str | None:
    """A warning when ``url`` carries user info and an API key is given too: the HTTP client
    sends the user info as Basic auth, in place of the key's Bearer header."""
    if not (url and key):
        return None
    parts = urlsplit(url)
    if not (parts.username or parts.password):
        return None
    return (f"--base-url {display_url(url)} carries a user name or password: they are sent as HTTP "
            "Basic auth in place of the API key, which is never sent")


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

    #: The environment variable the base URL may come from.
    url_variable: str | None = None
    #: The environment variables the API key may come from, in the order they are read.
    key_variables: tuple[str, ...] = ()
    options = (
        backend_option("--base-url", "Server URL.", show_default="OPENAI_BASE_URL; cohere: CO_API_URL, else Cohere's"),
        backend_option("--api-key", "API key (prefer OPENAI_API_KEY / CO_API_KEY).", show_default="", secret=True),
        backend_option("--concurrency", "Parallel requests.", type=int, minimum=1),
        backend_option("--rpm", "Max requests per minute.", type=float, minimum=0, open_min=True,
                       show_default="unlimited"),
        backend_option("--timeout", "Seconds to wait for the server (to connect, or for the next bytes of a "
                       "reply) before the request is retried.", type=float, minimum=0, open_min=True),
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
        self._keyed = bool(api_key)
        self._noticed = float("-inf")
        self._notice_lock = threading.Lock()
        check_url(base_url, self.url_variable)
        for warning in (check_base_url(base_url), check_user_info(base_url, api_key)):
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
        """Sample ``requests`` through ``_send``; a reply without the logprobs asked for is malformed,
        unless the service's content filter withheld or cut it (OpenAI and Azure send none then)."""
        def sample(request: SampleRequest) -> Completion:
            completion = self._call(request, params)
            if params.logprobs and completion.token_logprobs is None and completion.finish_reason != FILTERED:
                raise malformed("no token logprobs")
            return completion

        return self._send([functools.partial(sample, r) for r in requests], on_result)

    def _send(self, calls: Sequence[Callable[[], T]], on_result: Callable[[int, T], None] | None = None,
              what: str = "request {}") -> list[T]:
        """Make every request uab sends (``calls``: each makes one and returns its result, raising
        ``Failure`` or an SDK exception) ``concurrency`` at a time, each through the rate limit
        and the retry policy; ``on_result`` runs in this thread only. ``what`` names a request
        in messages, formatted with its index (``request 3``).

        When a request fails for good, no new ones start, the in-flight ones finish (and
        successes still reach ``on_result``), then the first ``BackendError`` is raised. The
        workers are daemon threads: an interrupt (Ctrl-C) ends the process at once rather
        than waiting out the requests in flight.
        """
        results: list[T | None] = [None] * len(calls)
        stop = threading.Event()
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(calls)):
            todo.put(i)
        done: queue.SimpleQueue = queue.SimpleQueue()  # (index, completion, exception); None: a worker ended

        def work() -> None:
            try:
                while not stop.is_set():
                    try:
                        i = todo.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        done.put((i, self._run_one(i, calls[i], stop, what), None))
                    except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
                        done.put((i, None, exc))
            finally:
                done.put(None)

        workers = min(self.concurrency, len(calls))
        for n in range(workers):
            threading.Thread(target=work, name=f"uab-{self.name}-{n}", daemon=True).start()
        error: BaseException | None = None
        try:
            while workers:
                item = done.get()
                if item is None:
                    workers -= 1
                    continue
                index, completion, exc = item
                if isinstance(exc, _Skipped):
                    continue
                if exc is not None:
                    error = error or exc
                    stop.set()
                    continue
                results[index] = completion
                if on_result is not None:
                    on_result(index, completion)
        except BaseException:
            stop.set()
            raise
        if error is not None:
            raise error
        return results  # type: ignore[return-value]

    def _run_one(self, index: int, call: Callable[[], T], stop: threading.Event, what: str) -> T:
        """One request through the rate limit and the retry policy."""
        attempts = max(self.retry.attempts, 1)
        failure = Failure("not attempted")
        started = time.monotonic()
        for attempt in range(1, attempts + 1):
            if stop.is_set():
                raise _Skipped
            self._limiter.acquire(stop.wait)
            if stop.is_set():
                raise _Skipped
            try:
                return call()
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
                    f"{self.name}: {what.format(index)} failed (not retryable): {message}{self._key_hint(failure)}"
                )
            if attempt < attempts:
                delay = self.retry.delay(attempt, failure.retry_after)
                log.info("%s: %s attempt %d/%d failed: %s; retrying in %.2fs",
                         self.name, what.format(index), attempt, attempts, message, delay)
                self._notice(f"{self.name}: {message}; retrying (attempt {attempt + 1} of {attempts})")
                self._pause(delay, stop)
        stop.set()
        message = self._redact(failure.message)
        spent = time.monotonic() - started
        tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
        raise BackendError(
            f"{self.name}: {what.format(index)} failed after {tries} over {spent:.1f} s: {message}"
            f"{self._wait_hint(failure)}"
        )

    def _wait_hint(self, failure: Failure) -> str:
        """For a failure whose server asked for a longer wait than a retry waits, what it asked for."""
        if failure.retry_after is None or failure.retry_after <= self.retry.max_delay:
            return ""
        return (f" (the server asked to wait {failure.retry_after:,.0f} s; a retry waits at most "
                f"{self.retry.max_delay:g} s)")

    def _key_hint(self, failure: Failure) -> str:
        """For a 401 (the server refused the request's credentials) or a 403 (it took them, but
        they may not do this), where the key comes from."""
        if failure.status not in (401, 403):
            return ""
        *others, last = ("--api-key", *self.key_variables)
        where = f"{', '.join(others)} or {last}"
        if not self._keyed:
            return f" (no API key was given: set {where})"
        if failure.status == 403:
            return (f" (the API key has no access to model {self.model!r} or to this endpoint: check its "
                    f"permissions, or give another in {where})")
        return f" (the server refused the API key: check {where})"

    def _pause(self, seconds: float, stop: threading.Event) -> None:
        """Back off; the real-time default wakes early once the whole call is failing."""
        if self.retry.sleep is time.sleep:
            stop.wait(seconds)
        else:
            self.retry.sleep(seconds)

    def _notice(self, message: str) -> None:
        """Say on stderr that requests are being retried: at most one line per
        ``NOTICE_EVERY`` seconds, however many requests retry."""
        with self._notice_lock:
            now = time.monotonic()
            if now - self._noticed < NOTICE_EVERY:
                return
            self._noticed = now
        warnings.warn(message, RetryNotice, stacklevel=1)

    def _redact(self, text: str) -> str:
        """``text`` with the API key masked, should a service ever echo it back (also as an
        escaped string)."""
        if not self._secret:
            return text
        for form in (self._secret, repr(self._secret)[1:-1]):
            text = text.replace(form, "***")
        return text


class RetryNotice(UserWarning):
    """A request is being retried (shown on stderr, at most one line per few seconds)."""

"""A local fake of the OpenAI-compatible and Cohere v2 chat APIs, with fault injection.

A stdlib ``ThreadingHTTPServer`` on 127.0.0.1:0; replies are deterministic in (prompt, seed).
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import random
import re
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: The default fault mix; ``empty`` is an empty reply without a normal finish (a failure).
FAULTS = (
    "429_retry_after",
    "429",
    "500",
    "503",
    "reset",
    "slow",
    "malformed",
    "empty",
    "truncate",
)

#: Faults only injected when asked for: a 400, 401, 403, 502, 504, a 429 whose Retry-After is an
#: HTTP-date (``retry_after`` seconds ahead), an empty reply that finished normally (a real, empty
#: completion), JSON nested deeper than a parser goes, a gzip body that is no gzip, a reply cut
#: before its Content-Length (``cut``: the connection closes; ``reset_body``: it is reset), a 200
#: whose body is a router's ``{"error": {...}}`` in place of ``choices`` (``error_200``).
EXTRA_FAULTS = ("400", "401", "403", "502", "504", "429_date", "empty_stop", "deep_json", "bad_gzip", "cut",
                "reset_body", "error_200")

WORDS = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")


def reply_text(prompt: str, seed: int | None) -> str:
    """The text the server answers for ``prompt`` sampled with ``seed``."""
    digest = hashlib.sha256(f"{prompt}|{seed}".encode()).digest()
    words = " ".join(WORDS[b % len(WORDS)] for b in digest[:4])
    return f"seed {seed} says {words} answer {digest[4] % 100}"


def reply_tokens(prompt: str, seed: int | None) -> list[str]:
    """The reply split into tokens: one per word, each but the last ending in a space."""
    words = reply_text(prompt, seed).split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def token_logprob(token: str) -> float:
    """A deterministic negative log-probability for ``token``."""
    return -((sum(token.encode()) % 97) + 1) / 100.0


def max_in_window(times: list[float], window: float) -> int:
    """Most events in any half-open interval ``[t, t + window)`` of ``times``."""
    times = sorted(times)
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while times[lo] <= t - window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


@dataclass
class Recorded:
    """One request as the server saw it (header names lowercased)."""

    time: float
    path: str
    headers: dict[str, str]
    body: dict | None
    raw: bytes
    fault: str | None


@dataclass
class FakeServer:
    """Fake chat server; configure faults and delays, then ``with FakeServer() as s: s.url``.

    ``fault_rate`` of the requests after the first ``fault_after`` get a fault drawn by a
    seeded RNG from ``faults``, at most ``fault_limit`` faults in all when it is set.
    ``delay`` delays every reply, ``slow`` is how long a ``slow`` fault stalls,
    ``retry_after`` the seconds sent with ``429_retry_after``. ``logprobs=False`` drops
    logprobs from every reply. Requests whose seed is in ``poison_seeds`` get a 400, whatever
    the other settings: at once, or once ``poison_after`` requests have arrived (so a test
    knows which requests were in flight when the failure came, whatever the load).

    ``max_in_flight`` is the most requests the server held at once (arrived, reply not yet
    begun). With ``gate`` set, no request is answered until ``gate`` of them are in flight
    together, and those are held ``gate_hold`` seconds more (so a client that sends more than
    it may is seen doing so); then the gate stays open. A client that never sends ``gate`` at
    once is let through after ``gate_timeout`` seconds and fails its test rather than hanging.
    Concurrency is so measured by what the server holds, not by how fast the client was.

    ``script(body) -> reply`` replaces the chat endpoint's generated reply: ``content`` (may be
    ``None``), ``reasoning_content`` (a reasoning parser's output, sent when given) and
    ``finish_reason``; logprobs cover every generated token, the reasoning's, a ``</think>``
    and the content's, as vLLM's do.

    ``rewrite(reply) -> reply`` changes a normal 200 reply's JSON before it is sent (a server
    that sends something odd).

    ``max_model_len`` makes it a vLLM server with that context: ``GET /v1/models`` reports it,
    ``POST /tokenize`` counts a prompt (words plus 2 per turn; ``tokenize=False``: 404, as
    servers without it), and a prompt plus ``max_tokens`` beyond it gets vLLM's 400.

    ``root`` (``"/v1"``, as vLLM serves): a POST outside it gets a 404, FastAPI's ``Not Found``.

    ``route_faults``: a path's end (``"/models"``, ``"/tokenize"``) -> the faults its first
    requests get, one each, in order (``None``: that one gets none).
    """

    fault_rate: float = 0.0
    faults: tuple[str, ...] = FAULTS
    seed: int = 0
    fault_after: int = 0
    fault_limit: int | None = None
    delay: float = 0.0
    slow: float = 2.0
    retry_after: float = 0.05
    logprobs: bool = True
    poison_seeds: tuple[int, ...] = ()
    poison_after: int = 0
    gate: int = 0
    gate_hold: float = 0.2
    gate_timeout: float = 10.0
    max_model_len: int | None = None
    tokenize: bool = True
    root: str = ""
    requests: list[Recorded] = field(default_factory=list)
    max_in_flight: int = 0
    script: Callable[[dict], dict] | None = None
    rewrite: Callable[[dict], dict] | None = None
    route_faults: dict[str, list[str | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = {*self.faults, *(f for faults in self.route_faults.values() for f in faults if f)} \
            - set(FAULTS) - set(EXTRA_FAULTS)
        if unknown:
            raise ValueError(f"unknown faults: {sorted(unknown)}")
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()
        self._flight = threading.Condition()
        self._in_flight = 0
        self._gate_open = self.gate <= 1
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def __enter__(self) -> FakeServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopping.set()
        assert self._httpd is not None and self._thread is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    @property
    def url(self) -> str:
        """Root URL, e.g. ``http://127.0.0.1:54321`` (add ``/v1`` for OpenAI clients)."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- inspection ------------------------------------------------------------------

    def times(self, path: str | None = None) -> list[float]:
        """Arrival times (``time.monotonic``) of the recorded requests, optionally for one path."""
        with self._lock:
            return [r.time for r in self.requests if path is None or r.path == path]

    def faults_served(self) -> dict[str, int]:
        """How many times each fault was injected."""
        counts: dict[str, int] = {}
        with self._lock:
            for r in self.requests:
                if r.fault:
                    counts[r.fault] = counts.get(r.fault, 0) + 1
        return counts

    # -- behaviour -------------------------------------------------------------------

    def _route_fault(self, path: str) -> str | None:
        """The next of ``route_faults`` for ``path``, if any are left."""
        with self._lock:
            for end, faults in self.route_faults.items():
                if path.endswith(end) and faults:
                    return faults.pop(0)  # None: this request gets none
        return None

    def _arrived(self) -> None:
        """A request is in flight; before the gate opens it waits there until enough are."""
        with self._flight:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self._gate_open:
                return
            if self._in_flight >= self.gate:
                self._gate_open = True
                self._flight.notify_all()
            elif not self._flight.wait_for(lambda: self._gate_open, self.gate_timeout):
                self._gate_open = True  # never enough: let all through (the test fails on max_in_flight)
                self._flight.notify_all()
                return
        self._stopping.wait(self.gate_hold)  # the first wave stays in flight: one request too many shows

    def _replied(self) -> None:
        """A request's reply begins (before the client can see it, so never undercounted)."""
        with self._flight:
            self._in_flight -= 1

    def _record(self, path: str, headers: dict[str, str], raw: bytes) -> Recorded:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            fault = None
            budget = (
                self.fault_limit is None
                or sum(1 for r in self.requests if r.fault) < self.fault_limit
            )
            if (
                budget
                and len(self.requests) >= self.fault_after
                and self._rng.random() < self.fault_rate
            ):
                fault = self._rng.choice(self.faults)
            rec = Recorded(time.monotonic(), path, headers, body, raw, fault)
            self.requests.append(rec)
        return rec


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the default of 5 drops bursts of connects (1 s SYN retries)

    def handle_error(self, request, client_address) -> None:
        """Stay quiet: clients that time out or get reset are part of the tests."""


class _Handler(BaseHTTPRequestHandler):
    fake: FakeServer
    protocol_version = "HTTP/1.1"
    _in_flight = False

    def log_message(self, format, *args) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request access log."""

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        """Answer one API call, maybe with a fault."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        rec = self.fake._record(self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
        self._in_flight = True
        self.fake._arrived()
        try:
            self._answer(rec)
        finally:
            self._reply_begins()

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        """``/v1/models``: the served model, with vLLM's ``max_model_len`` when set (not recorded)."""
        if not self.path.endswith("/models") or self.fake.max_model_len is None:
            self._send(404, {"message": f"no route {self.path}"})
            return
        fault = self.fake._route_fault(self.path)
        if fault and self._send_fault(fault):
            return
        self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model",
                                                     "max_model_len": self.fake.max_model_len}]})

    def _answer(self, rec: Recorded) -> None:
        if not self.path.startswith(self.fake.root):
            self._send(404, {"detail": "Not Found"})
            return
        if self.path.endswith("/tokenize"):
            fault = self.fake._route_fault(self.path)
            if self.fake.max_model_len is None or not self.fake.tokenize:
                self._send(404, {"message": f"no route {self.path}"})
            elif not (fault and self._send_fault(fault)):
                count = prompt_tokens(rec.body or {})
                self._send(200, {"count": count, "max_model_len": self.fake.max_model_len, "tokens": [0] * count})
            return
        limit = self.fake.max_model_len
        if limit is not None and prompt_tokens(rec.body or {}) + (rec.body or {}).get("max_tokens", 0) > limit:
            self._send(400, {"object": "error", "message": f"This model's maximum context length is {limit} tokens.",
                             "type": "BadRequestError", "code": 400})
            return
        if (rec.body or {}).get("seed") in self.fake.poison_seeds:
            deadline = time.monotonic() + 10
            while len(self.fake.requests) < self.fake.poison_after and time.monotonic() < deadline:
                time.sleep(0.005)
            self._send(400, {"message": "poisoned seed"})
            return
        if self.fake.delay:
            self.fake._stopping.wait(self.fake.delay)
        body = rec.body or {}
        if self.path.endswith("/v2/chat"):
            shape = _cohere
        elif self.path.endswith("/chat/completions"):
            shape = _openai_chat
        elif self.path.endswith("/completions"):
            shape = _openai_completions
        else:
            self._send(404, {"message": f"no route {self.path}"})
            return
        if rec.fault and self._send_fault(rec.fault):
            return
        truncate = rec.fault == "truncate"
        empty = rec.fault if rec.fault in ("empty", "empty_stop") else None
        if self.fake.script is not None and shape is _openai_chat:
            reply = _scripted_chat(body, self.fake.script(body), self.fake.logprobs)
        else:
            reply = shape(body, truncate=truncate, empty=empty, logprobs=self.fake.logprobs)
        self._send(200, reply if self.fake.rewrite is None else self.fake.rewrite(reply))

    def _send_fault(self, fault: str) -> bool:
        """Send an error fault; False for faults that shape a 200 reply instead."""
        if fault == "429_retry_after":
            self._send(429, {"message": "slow down"}, {"Retry-After": str(self.fake.retry_after)})
        elif fault == "429_date":
            when = email.utils.formatdate(time.time() + self.fake.retry_after, usegmt=True)
            self._send(429, {"message": "slow down"}, {"Retry-After": when})
        elif fault in ("400", "401", "403", "429", "500", "502", "503", "504"):
            self._send(int(fault), {"message": f"injected {fault}"})
        elif fault == "error_200":
            self._send(200, {"error": {"message": "Provider returned error: upstream overloaded", "code": 502}})
        elif fault in ("cut", "reset_body"):
            self._send_cut(reset=fault == "reset_body")
        elif fault == "reset":
            self._reply_begins()
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        elif fault == "slow":
            self.fake._stopping.wait(self.fake.slow)
            self._send(200, {"message": "too late"})
        elif fault == "malformed":
            self._send_raw(200, b'{"id": "broken", "choices": [', "application/json")
        elif fault == "deep_json":
            self._send_raw(200, b"[" * 100_000 + b"]" * 100_000, "application/json")
        elif fault == "bad_gzip":
            self._send_raw(200, b"no gzip at all", "application/json", {"Content-Encoding": "gzip"})
        else:
            return False
        return True

    def _send_cut(self, reset: bool) -> None:
        """A 200 whose body stops halfway through its Content-Length, then the connection closes."""
        self._reply_begins()
        data = b'{"id": "cut", "choices": [{"index": 0, "message": {"role": "assistant", "content": "seed'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(2 * len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True
        if reset:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _reply_begins(self) -> None:
        if self._in_flight:
            self._in_flight = False
            self.fake._replied()

    def _send_raw(self, status: int, data: bytes, ctype: str, headers: dict | None = None) -> None:
        self._reply_begins()
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True


def _generate(prompt: str, body: dict, truncate: bool, empty: str | None) -> tuple[list[str], bool]:
    """Tokens to send and whether they stop short of the full reply (a length finish)."""
    tokens = reply_tokens(prompt, body.get("seed"))
    limit = body.get("max_tokens")
    if truncate:
        limit = min(limit or len(tokens), len(tokens) // 2)
    if empty:
        return [], False
    if limit is not None and limit < len(tokens):
        return tokens[:limit], True
    return tokens, False


def sample_requests(n: int, prompt: str = "question", seed0: int = 0) -> list:
    """``n`` single-message requests with distinct prompts and seeds ``seed0 + i``."""
    from uab_cli.backends.base import SampleRequest

    return [
        SampleRequest(({"role": "user", "content": f"{prompt} {i}"},), seed=seed0 + i)
        for i in range(n)
    ]


def expected_text(request) -> str:
    """What the server answers to a ``SampleRequest`` (by its last message and seed)."""
    return reply_text(str(request.messages[-1]["content"]), request.seed)


def prompt_tokens(body: dict) -> int:
    """A request's prompt tokens as the fake server counts them: words, plus 2 per chat turn."""
    if "messages" in body:
        return sum(len(str(m.get("content", "")).split()) + 2 for m in body["messages"])
    return len(str(body.get("prompt", "")).split())


def _chat_prompt(body: dict) -> str:
    messages = body.get("messages") or [{}]
    return str(messages[-1].get("content", ""))


def _openai_chat(body: dict, truncate: bool, empty: str | None, logprobs: bool) -> dict:
    tokens, cut = _generate(_chat_prompt(body), body, truncate, empty)
    lp = None
    if logprobs and body.get("logprobs"):
        content = [
            {"token": t, "logprob": token_logprob(t), "bytes": None, "top_logprobs": []}
            for t in tokens
        ]
        lp = {"content": content}
    finish = None if empty == "empty" else ("length" if cut else "stop")
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": "".join(tokens)},
        "logprobs": lp,
        "finish_reason": finish,
    }
    usage = {"prompt_tokens": 5, "completion_tokens": len(tokens), "total_tokens": 5 + len(tokens)}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [choice],
        "usage": usage,
    }


def _pieces(text: str | None) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text or "")


def _scripted_chat(body: dict, reply: dict, logprobs: bool) -> dict:
    """A chat completion carrying a scripted reply (see ``FakeServer.script``)."""
    content, reasoning = reply.get("content"), reply.get("reasoning_content")
    tokens = (_pieces(reasoning) + ["</think>"] if reasoning is not None else []) + _pieces(content)
    message = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    lp = None
    if logprobs and body.get("logprobs"):
        lp = {"content": [{"token": t, "logprob": token_logprob(t), "bytes": None, "top_logprobs": []}
                          for t in tokens]}
    choice = {"index": 0, "message": message, "logprobs": lp, "finish_reason": reply.get("finish_reason", "stop")}
    usage = {"prompt_tokens": 5, "completion_tokens": len(tokens), "total_tokens": 5 + len(tokens)}
    return {"id": "chatcmpl-script", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
            "choices": [choice], "usage": usage}


def _openai_completions(body: dict, truncate: bool, empty: str | None, logprobs: bool) -> dict:
    tokens, cut = _generate(str(body.get("prompt", "")), body, truncate, empty)
    lp = None
    if logprobs and body.get("logprobs"):
        lp = {
            "tokens": tokens,
            "token_logprobs": [token_logprob(t) for t in tokens],
            "top_logprobs": None,
            "text_offset": None,
        }
    choice = {
        "index": 0,
        "text": "".join(tokens),
        "logprobs": lp,
        "finish_reason": None if empty == "empty" else ("length" if cut else "stop"),
    }
    return {
        "id": "cmpl-fake",
        "object": "text_completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [choice],
        "usage": {
            "prompt_tokens": 5,
            "completion_tokens": len(tokens),
            "total_tokens": 5 + len(tokens),
        },
    }


def _cohere(body: dict, truncate: bool, empty: str | None, logprobs: bool) -> dict:
    tokens, cut = _generate(_chat_prompt(body), body, truncate, empty)
    reply: dict = {
        "id": "fake-cohere",
        "finish_reason": "ERROR" if empty == "empty" else ("MAX_TOKENS" if cut else "COMPLETE"),
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "".join(tokens)}] if tokens else [],
        },
        "usage": {
            "billed_units": {"input_tokens": 5, "output_tokens": len(tokens)},
            "tokens": {"input_tokens": 7, "output_tokens": len(tokens)},
        },
    }
    if logprobs and body.get("logprobs"):
        reply["logprobs"] = [
            {"text": t, "token_ids": [i], "logprobs": [token_logprob(t)]}
            for i, t in enumerate(tokens)
        ]
    return reply

"""OpenAIBackend against the local fake server: generation, retries, faults, limits, secrets."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import time
from dataclasses import replace

import pytest
from conftest import backs_off, no_sleep
from fakeserver import (
    FakeServer,
    expected_text,
    reply_tokens,
    sample_requests,
    token_logprob,
)

from uab_cli.backends.base import Retry, SamplingParams
from uab_cli.backends.openai import OpenAIBackend, render_prompt
from uab_cli.backends.remote import RateLimiter, RetryNotice, check_base_url, http_failure, parse_retry_after
from uab_cli.errors import BackendError, UabError

pytest.importorskip("openai")

KEY = "sk-uab-test-7f3a9c1e-DO-NOT-LEAK"
PARAMS = SamplingParams(temperature=0.7, max_tokens=64, top_p=0.95)


def backend(server: FakeServer, endpoint: str = "chat", **kw) -> OpenAIBackend:
    """An OpenAIBackend pointed at ``server``."""
    kw.setdefault("api_key", KEY)
    return OpenAIBackend("fake-model", f"{server.url}/v1", endpoint=endpoint, **kw)


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_generates_in_order_with_logprobs_and_seeds(endpoint):
    reqs = sample_requests(24, seed0=100)
    reported: dict[int, str] = {}
    with FakeServer(delay=0.01) as server, backend(server, endpoint, concurrency=6) as b:
        out = b.generate(reqs, PARAMS, on_result=lambda i, c: reported.setdefault(i, c.text))
    assert [c.text for c in out] == [expected_text(r) for r in reqs]
    assert reported == {i: c.text for i, c in enumerate(out)}
    first = reply_tokens("question 0", 100)
    assert out[0].token_logprobs == tuple(token_logprob(t) for t in first)
    assert out[0].n_tokens == len(first) and out[0].finish_reason == "stop"
    assert {c.prompt_tokens for c in out} == {5}  # the reply's usage.prompt_tokens
    bodies = [r.body for r in server.requests]
    assert sorted(body["seed"] for body in bodies) == [r.seed for r in reqs]
    path = "/v1/chat/completions" if endpoint == "chat" else "/v1/completions"
    assert {r.path for r in server.requests} == {path}
    assert all(
        body["n"] == 1 and body["max_tokens"] == 64 and body["top_p"] == 0.95 for body in bodies
    )
    assert all(body["temperature"] == 0.7 and body["logprobs"] for body in bodies)


def test_logprobs_absent_or_disabled_gives_none():
    reqs = sample_requests(3)
    with FakeServer(logprobs=False) as server:
        assert all(c.token_logprobs is None for c in backend(server).generate(reqs, PARAMS))
        off = backend(server, logprobs=False)
        assert not off.returns_logprobs
        assert all(c.token_logprobs is None for c in off.generate(reqs, PARAMS))
        assert "logprobs" not in server.requests[-1].body


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_a_reply_without_usage_counts_its_tokens_by_its_logprobs_else_not_at_all(endpoint):
    """No usage: the tokens are the logprobs' where the reply has them, else unknown (None), never
    0 tokens (a run's summary showed 0 completion tokens and priced them at nothing)."""
    reqs = sample_requests(2)
    unused = {"rewrite": lambda reply: {**reply, "usage": None}}
    with FakeServer(**unused) as server:
        out = backend(server, endpoint).generate(reqs, PARAMS)
    assert [c.n_tokens for c in out] == [len(reply_tokens(f"question {i}", i)) for i in range(2)]
    assert {c.prompt_tokens for c in out} == {None}
    with FakeServer(logprobs=False, **unused) as server:
        out = backend(server, endpoint).generate(reqs, PARAMS)
    assert [(c.n_tokens, c.prompt_tokens) for c in out] == [(None, None)] * 2
    assert all(c.text for c in out)


def test_retry_after_header_sets_the_delay():
    delays: list[float] = []
    with FakeServer(
        fault_rate=1.0, faults=("429_retry_after",), retry_after=7, fault_limit=1
    ) as server:
        out = backend(server, retry=no_sleep(log=delays)).generate(sample_requests(1), PARAMS)
    assert out[0].text == expected_text(sample_requests(1)[0])
    assert delays == [7.0] and len(server.requests) == 2


@pytest.mark.parametrize(("headers", "seconds"), [
    ({"retry-after-ms": "250"}, 0.25),
    ({"Retry-After": "3"}, 3.0),
    ({"retry-after-ms": "soon", "Retry-After": "2"}, 2.0),  # an unreadable -ms header: Retry-After's
    ({"retry-after-ms": "soon"}, None),
    ({"Retry-After": "later"}, None),
    ({}, None),
])
def test_retry_after_headers_are_read_and_an_unreadable_one_is_none(headers, seconds):
    """An unreadable retry-after-ms raised UnboundLocalError out of the retry policy (a traceback
    instead of a retried 429)."""
    assert parse_retry_after(headers) == seconds
    assert http_failure(429, "slow down", headers).retry_after == seconds


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="needs time.tzset")
@pytest.mark.parametrize("form", ["%a, %d %b %Y %H:%M:%S GMT", "%a, %d %b %Y %H:%M:%S -0000", "%a %b %d %H:%M:%S %Y"])
def test_a_retry_after_date_is_gmt_whatever_the_local_time_zone(form, monkeypatch):
    """An HTTP-date without a zone (`-0000`, asctime's form) was read as local time: east of GMT a
    wait of 20 s became none (the retries hammered a rate-limited server), west of it one of hours."""
    date = time.strftime(form, time.gmtime(time.time() + 20))
    try:
        for zone in ("JST-9", "EST+5", "UTC0"):
            monkeypatch.setenv("TZ", zone)
            time.tzset()
            assert 15 < parse_retry_after({"Retry-After": date}) <= 20, zone
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("fault", ["429_retry_after", "429_date"])
def test_a_retry_after_of_no_wait_still_backs_off(fault):
    """`Retry-After: 0`, or an HTTP-date already past (one of whole seconds often is), was waited
    as given: every retry at once, the whole retry budget spent in milliseconds on a server
    that is rate-limiting."""
    delays: list[float] = []
    with FakeServer(fault_rate=1.0, faults=(fault,), retry_after=0, fault_limit=3) as server:
        (out,) = backend(server, retry=no_sleep(log=delays)).generate(sample_requests(1), PARAMS)
    assert out.text == expected_text(sample_requests(1)[0])
    assert backs_off(delays, [0.5, 1.0, 2.0])


def test_a_retry_after_longer_than_the_backoff_is_waited_and_capped():
    assert Retry(jitter=False).delay(1, 7.0) == 7.0 and Retry(jitter=False).delay(4, 1.0) == 4.0
    assert Retry(max_delay=30).delay(1, 3600.0) == 30.0


def test_a_retry_after_beyond_the_cap_is_named_in_the_final_error():
    """A server that asked for an hour got 30 s waits, and the final error did not say it had asked for more."""
    for asked, said in ((3600, " (the server asked to wait 3,600 s; a retry waits at most 30 s)"), (7, "")):
        with FakeServer(fault_rate=1.0, faults=("429_retry_after",), retry_after=asked) as server:
            with pytest.raises(BackendError) as failed:
                backend(server, retry=no_sleep(2)).generate(sample_requests(1), PARAMS)
        assert str(failed.value).endswith("HTTP 429: {'message': 'slow down'}" + said)


def test_retry_after_is_waited_for_real():
    with FakeServer(
        fault_rate=1.0, faults=("429_retry_after",), retry_after=0.3, fault_limit=1
    ) as server:
        backend(server).generate(sample_requests(1), PARAMS)
    first, second = server.times()
    assert second - first >= 0.29


@pytest.mark.parametrize("fault", ["429", "500", "502", "503", "504", "reset", "reset_body", "cut", "malformed",
                                   "empty"])
def test_transient_faults_are_retried_with_backoff(fault):
    delays: list[float] = []
    with FakeServer(fault_rate=1.0, faults=(fault,), fault_limit=3) as server:
        out = backend(server, retry=no_sleep(log=delays)).generate(sample_requests(1), PARAMS)
    assert out[0].text == expected_text(sample_requests(1)[0]) and out[0].finish_reason == "stop"
    assert backs_off(delays, [0.5, 1.0, 2.0]) and len(server.requests) == 4


@pytest.mark.parametrize("fault", ["deep_json", "bad_gzip"])
def test_a_reply_body_that_cannot_be_decoded_is_retried(fault):
    """JSON nested deeper than the parser goes raised RecursionError out of the retry policy
    (a traceback, exit 1, instead of a retried malformed reply)."""
    with FakeServer(fault_rate=1.0, faults=(fault,), fault_limit=1) as server:
        (out,) = backend(server, retry=no_sleep()).generate(sample_requests(1), PARAMS)
    assert out.text == expected_text(sample_requests(1)[0]) and len(server.requests) == 2


def test_a_200_that_carries_an_error_in_place_of_choices_says_the_servers_error():
    """A router's 200 whose body is ``{"error": {...}}`` was retried and failed as `malformed
    response: no choices`, never saying what the server said; its message now shows, on one line,
    the key masked, in the retry notice and the final error alike."""
    with FakeServer(fault_rate=1.0, faults=("error_200",)) as server:
        with pytest.warns(RetryNotice) as said, pytest.raises(BackendError) as failed:
            backend(server, retry=no_sleep(2)).generate(sample_requests(1), PARAMS)
    told = "malformed response: no choices; the server's error: Provider returned error: upstream overloaded (502)"
    assert str(said[0].message).startswith(f"openai: {told}; retrying") and str(failed.value).endswith(told)
    echoed = {"rewrite": lambda reply: {"error": {"message": f"key {KEY}\nrefused upstream"}}}
    with FakeServer(**echoed) as server, pytest.raises(BackendError) as failed:
        backend(server, "completions", retry=no_sleep(1)).generate(sample_requests(1), PARAMS)
    assert str(failed.value).endswith("no choices; the server's error: key *** refused upstream")


def test_timeout_is_retried():
    with FakeServer(fault_rate=1.0, faults=("slow",), slow=1.0, fault_limit=1) as server:
        out = backend(server, timeout=0.3, retry=no_sleep()).generate(sample_requests(1), PARAMS)
    assert out[0].text == expected_text(sample_requests(1)[0])


@pytest.mark.parametrize("fault", ["400", "401", "403"])
def test_client_errors_fail_at_once(fault):
    with FakeServer(fault_rate=1.0, faults=(fault,)) as server:
        with pytest.raises(BackendError, match=rf"not retryable.*HTTP {fault}"):
            backend(server, retry=no_sleep(), concurrency=1).generate(sample_requests(3), PARAMS)
    assert len(server.requests) == 1


@pytest.mark.parametrize("endpoint", ["chat", "completions"])
def test_thirty_percent_faults_all_complete_with_real_texts(endpoint):
    reqs = sample_requests(200)
    retry = Retry(attempts=12, base_delay=0.001, max_delay=0.01)
    with FakeServer(fault_rate=0.3, seed=1, slow=1.0) as server:
        out = backend(server, endpoint, concurrency=8, timeout=0.5, retry=retry).generate(
            reqs, PARAMS
        )
    for req, comp in zip(reqs, out):
        full = expected_text(req)
        if comp.finish_reason == "length":
            assert comp.text and full.startswith(comp.text) and comp.text != full
        else:
            assert comp.finish_reason == "stop" and comp.text == full
    assert len(server.faults_served()) >= 8


def test_persistent_failure_raises_and_keeps_earlier_results():
    reported: list[int] = []
    with FakeServer(fault_rate=1.0, faults=("503",), fault_after=5) as server:
        b = backend(server, concurrency=1, retry=no_sleep(4))
        with pytest.raises(BackendError, match=r"after 4 attempts over [\d.]+ s: HTTP 503"):
            b.generate(sample_requests(20), PARAMS, on_result=lambda i, c: reported.append(i))
    assert reported == [0, 1, 2, 3, 4]
    assert len(server.requests) == 5 + 4


def test_the_final_failure_says_how_long_was_spent_retrying():
    """Backoff of 0.2 s, then 0.4 s, waited for real: the message gives the attempts and the seconds."""
    with FakeServer(fault_rate=1.0, faults=("503",)) as server:
        b = backend(server, retry=Retry(attempts=3, base_delay=0.2, jitter=False))
        with pytest.raises(BackendError, match=r"^openai: request 0 failed after 3 attempts over "
                                               r"(0\.[6-9]|[1-4]\.\d) s: HTTP 503"):
            b.generate(sample_requests(1), PARAMS)


def test_one_attempt_is_said_in_the_singular():
    """--retries 1 said "the /v1/models lookup failed after 1 attempts"."""
    with FakeServer(fault_rate=1.0, faults=("503",)) as server:
        b = backend(server, retry=no_sleep(1))
        with pytest.raises(BackendError, match=r"^openai: request 0 failed after 1 attempt over [\d.]+ s: HTTP 503"):
            b.generate(sample_requests(1), PARAMS)


def test_persistent_failure_under_concurrency_is_bounded():
    reported: list[int] = []
    with FakeServer(fault_rate=1.0, faults=("500", "reset"), fault_after=6) as server:
        b = backend(server, concurrency=4, retry=no_sleep(3))
        with pytest.raises(BackendError, match=r"after 3 attempts"):
            b.generate(sample_requests(40), PARAMS, on_result=lambda i, c: reported.append(i))
    assert len(reported) == 6
    assert len(server.requests) <= 6 + 4 * 3


def test_truncation_is_a_length_finish():
    req = sample_requests(1)
    with FakeServer() as server:
        (out,) = backend(server).generate(req, SamplingParams(max_tokens=3))
    assert out.finish_reason == "length" and out.n_tokens == 3
    assert out.text == "".join(reply_tokens("question 0", 0)[:3])


@pytest.mark.parametrize("content", ["seed 0 says the answer is 4", None])
def test_a_content_filtered_reply_is_a_sample_without_an_answer(content):
    """``finish_reason: content_filter`` (OpenAI's, Azure's with the partial text): its text was
    graded as the model's answer, and a withheld (null) one was retried until the stage failed.
    Now it is a sample (drawn and paid for) whose text is kept and never read for an answer."""
    from uab_cli.pipeline import make_sample

    def filtered(choice, reply):
        choice.update(finish_reason="content_filter", logprobs=None)
        choice["message"]["content"] = content

    with FakeServer(rewrite=_once(filtered)) as server:
        (out,) = backend(server, retry=no_sleep()).generate(sample_requests(1), PARAMS)
    assert len(server.requests) == 1
    assert (out.text, out.finish_reason) == (content or "", "content_filter")
    sample = make_sample(out, {"id": "q", "question": "What is 2 + 2?", "answer": "4"}, 0, 1, 0)
    assert (sample["answer"], sample["confidence"], sample["finish_reason"]) == (None, None, "content_filter")


@pytest.mark.parametrize("logprobs", [None, {"content": []}, "partial"])
def test_a_content_filtered_reply_needs_no_logprobs_and_has_no_statistic(logprobs):
    """Asked for logprobs (a log-prob signal), a withheld reply without them (OpenAI's, Azure's)
    was retried as malformed ('no token logprobs') until the stage failed; one with an empty list
    scored ANLL 0, a certainty. It is kept at once, and its statistics are missing, as its answer
    is, whatever logprobs came with it (Azure's of the partial text)."""
    from uab_cli.pipeline import make_sample

    def filtered(choice, reply):
        if logprobs != "partial":
            choice.update(logprobs=logprobs)
            choice["message"]["content"] = None
            reply["usage"]["completion_tokens"] = 0
        choice.update(finish_reason="content_filter")

    with FakeServer(rewrite=_once(filtered)) as server:
        (out,) = backend(server, retry=no_sleep()).generate(sample_requests(1), replace(PARAMS, logprobs=True))
    assert len(server.requests) == 1 and out.finish_reason == "content_filter"
    sample = make_sample(out, {"id": "q", "question": "What is 2 + 2?", "answer": "4"}, 0, 1, 0)
    assert (sample["answer"], sample["anll"], sample["max_nll"]) == (None, None, None)


def test_empty_text_with_a_normal_finish_is_a_real_completion():
    with FakeServer(fault_rate=1.0, faults=("empty_stop",)) as server:
        (out,) = backend(server).generate(sample_requests(1), PARAMS)
    assert out.text == "" and out.finish_reason == "stop" and len(server.requests) == 1


def test_rpm_limit_is_never_exceeded():
    """Every request of a concurrent batch passes the limiter, and the limiter's grants are
    spaced 60/rpm apart. Grant times are read on the limiter's own clock under its lock
    (arrival times at the server jitter with thread scheduling and would make this flaky)."""
    calls: list[float] = []

    def clock() -> float:
        calls.append(time.monotonic())
        return calls[-1]

    with FakeServer() as server:
        b = backend(server, concurrency=8, rpm=600)
        b._limiter = RateLimiter(600, clock=clock)
        b.generate(sample_requests(16), PARAMS)
        assert len(server.requests) == 16
    grants = calls[1::2]  # each acquire reads the clock twice: to wait, then to grant
    assert len(calls) == 32
    assert min(y - x for x, y in zip(grants, grants[1:])) >= 0.1 - 1e-3


def test_concurrency_is_the_number_of_requests_in_flight():
    """--concurrency 8 keeps 8 requests in flight (the server answers none until 8 are), never
    more; 1 sends one at a time. Counted at the server, not timed."""
    with FakeServer(gate=8) as server:
        out = backend(server, concurrency=8).generate(sample_requests(16), PARAMS)
    assert server.max_in_flight == 8 and len(out) == 16
    with FakeServer() as server:
        backend(server, concurrency=1).generate(sample_requests(4), PARAMS)
    assert server.max_in_flight == 1


def test_api_key_never_leaks(caplog):
    caplog.set_level(logging.DEBUG)
    with FakeServer(fault_rate=1.0, faults=("401",)) as server:
        b = backend(server, retry=no_sleep())
        with pytest.raises(BackendError) as auth:
            b.generate(sample_requests(2), PARAMS)
    with FakeServer(
        fault_rate=1.0, faults=("500", "reset", "malformed", "429_retry_after")
    ) as other:
        b2 = backend(other, retry=no_sleep(4))
        with pytest.raises(BackendError) as flaky:
            b2.generate(sample_requests(2), PARAMS)
    for text in (
        str(auth.value),
        repr(auth.value),
        str(flaky.value),
        repr(flaky.value),
        repr(b),
        caplog.text,
    ):
        assert KEY not in text
    assert "HTTP 401" in str(auth.value)
    for rec in server.requests + other.requests:
        assert rec.headers.get("authorization") == f"Bearer {KEY}"
        assert KEY.encode() not in rec.raw and KEY not in rec.path


@pytest.mark.parametrize(("key", "said"), [(KEY, "the server refused the API key: check --api-key or OPENAI_API_KEY"),
                                            (None, "no API key was given: set --api-key or OPENAI_API_KEY")])
def test_a_401_says_where_the_key_comes_from(key, said):
    """A refused (or forgotten) key ended in the server's bare `HTTP 401: …`, naming no way to give one."""
    with FakeServer(fault_rate=1.0, faults=("401",)) as server:
        with pytest.raises(BackendError, match=r"not retryable\): HTTP 401: ") as refused:
            backend(server, api_key=key, retry=no_sleep()).generate(sample_requests(1), PARAMS)
    assert str(refused.value).endswith(f" ({said})") and len(server.requests) == 1
    assert KEY not in str(refused.value)


@pytest.mark.parametrize(("key", "said"), [
    (KEY, "the API key has no access to model 'fake-model' or to this endpoint: check its permissions, "
          "or give another in --api-key or OPENAI_API_KEY"),
    (None, "no API key was given: set --api-key or OPENAI_API_KEY")])
def test_a_403_says_the_key_may_not_do_this(key, said):
    """A 403 (a key the server took, without permission for the model or endpoint) ended in the
    server's bare `HTTP 403: …`, where a 401 named where the key comes from."""
    with FakeServer(fault_rate=1.0, faults=("403",)) as server:
        with pytest.raises(BackendError, match=r"not retryable\): HTTP 403: ") as refused:
            backend(server, api_key=key, retry=no_sleep()).generate(sample_requests(1), PARAMS)
    assert str(refused.value).endswith(f" ({said})") and len(server.requests) == 1


def test_key_from_environment_and_optional(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-1234")
    with FakeServer() as server:
        backend(server, api_key=None).generate(sample_requests(1), PARAMS)
        monkeypatch.delenv("OPENAI_API_KEY")
        backend(server, api_key=None).generate(sample_requests(1), PARAMS)
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env-1234"
    assert server.requests[1].headers["authorization"] == "Bearer EMPTY"


@pytest.mark.parametrize(
    "url, warns",
    [
        ("http://localhost:8000/v1", False),
        ("http://127.0.0.2:8000/v1", False),
        ("http://[::1]:8000/v1", False),
        ("https://api.example.com/v1", False),
        ("http://10.0.0.7:8000/v1", True),
        ("http://gpu-box.internal/v1", True),
    ],
)
def test_check_base_url(url, warns):
    assert (check_base_url(url) is not None) == warns


def test_plain_http_to_remote_host_warns_without_credentials_in_url():
    with pytest.warns(UserWarning, match="plain http") as caught:
        OpenAIBackend("m", "http://user:hunter2@10.0.0.7:8000/v1").close()
    assert "hunter2" not in str(caught[0].message)


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "localhost:8000", "http://", "ftp://gpu-box/v1",
                                 "http://user:hunter2@gpu-box:80OO/v1", "http://[::1/v1", " http://127.0.0.1:1/v1",
                                 "user:hunter2@gpu-box:8000/v1", "http:user:hunter2@gpu-box/v1"])
def test_a_base_url_no_client_can_use_is_a_bad_option_not_a_connection_to_retry(url, monkeypatch):
    """No scheme, no host, a port that is no number: a traceback (ValueError, httpx's InvalidURL),
    or six attempts over 15 s of backoff ending in exit 1, instead of one line at once; the message
    never shows the URL's password, with no scheme before it either."""
    with pytest.raises(UabError, match=r"^--base-url \(or OPENAI_BASE_URL\) must be an http:// or https:// URL") as bad:
        OpenAIBackend("m", url)
    assert "hunter2" not in str(bad.value)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(UabError, match="OPENAI_BASE_URL"):
        OpenAIBackend("m")


@pytest.mark.parametrize("url", ["{}/v1?key=hunter2", "{}/v1/?api-version=hunter2",
                                 "127.0.0.1:8000/v1?key=hunter2"])
def test_a_base_url_with_a_query_is_a_bad_option_that_never_shows_it(url):
    """The SDK adds the API's path inside a query (``/v1/?key=K chat/completions``): every request
    went to ``/v1/`` with the key mangled in its query (a 404, a 405, or a server's odd reply read
    as one without logprobs), and a URL refused for another reason was shown with its query."""
    with FakeServer() as server:
        with pytest.raises(UabError, match=r"^--base-url \(or OPENAI_BASE_URL\) must ") as bad:
            OpenAIBackend("fake-model", url.format(server.url), api_key=KEY)
    assert "hunter2" not in str(bad.value) and not server.requests


def test_a_404_of_a_base_url_without_v1_says_where_the_api_is():
    """`--base-url http://host:8000` for `vllm serve`: a bare "HTTP 404: Not Found" before."""
    with FakeServer(root="/v1") as server:
        with pytest.raises(BackendError, match=r"not retryable\): HTTP 404: .*Not Found.* \(--base-url has no /v1: "
                                               rf"OpenAI-compatible servers serve under it, e\.g\. --base-url "
                                               rf"{server.url}/v1\)$"):
            OpenAIBackend("fake-model", server.url + "/", api_key=KEY).generate(sample_requests(1), PARAMS)
        assert backend(server).generate(sample_requests(1), PARAMS)[0].text  # under /v1: served


def test_a_404_of_a_base_url_with_a_path_of_its_own_adds_no_v1_hint():
    """A base URL that names a path, as Gemini's `…/v1beta/openai/`, says where its API is: a 404
    there (an unknown model, say) was told to add /v1 (`--base-url …/v1beta/openai/v1`)."""
    with FakeServer(root="/v1") as server:
        with pytest.raises(BackendError, match=r"not retryable\): HTTP 404: .*Not Found") as failed:
            OpenAIBackend("fake-model", server.url + "/beta/openai/", api_key=KEY).generate(sample_requests(1),
                                                                                               PARAMS)
        assert "/v1:" not in str(failed.value) and "e.g." not in str(failed.value)


def test_bad_options_are_user_errors():
    with pytest.raises(UabError, match="--endpoint"):
        OpenAIBackend("m", "http://127.0.0.1:1/v1", endpoint="responses")
    with pytest.raises(UabError, match="--concurrency"):
        OpenAIBackend("m", "http://127.0.0.1:1/v1", concurrency=0)
    with pytest.raises(UabError, match="--rpm"):
        OpenAIBackend("m", "http://127.0.0.1:1/v1", rpm=0)
    with pytest.raises(UabError, match="--model"):
        OpenAIBackend(base_url="http://127.0.0.1:1/v1")


def test_base_url_is_required_or_from_environment(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UabError, match="--base-url"):
        OpenAIBackend("m")
    with FakeServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        (out,) = OpenAIBackend("m").generate(sample_requests(1), PARAMS)
    assert out.text == expected_text(sample_requests(1)[0])


def test_render_prompt():
    assert render_prompt(({"role": "user", "content": "2+2?"},)) == "2+2?"
    two = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"})
    assert render_prompt(two) == "System: Be brief.\n\nUser: 2+2?\n\nAssistant:"


def test_rate_limiter_spaces_starts_from_actual_wake_times():
    now = [0.0]
    limiter = RateLimiter(120, clock=lambda: now[0])  # one start every 0.5 s
    starts = []
    for late in (0.0, 0.0, 0.3, 0.0):
        limiter.acquire(lambda s, late=late: now.__setitem__(0, now[0] + s + late))
        starts.append(now[0])
    assert starts == [0.0, 0.5, 1.3, 1.8]
    assert RateLimiter(None).interval == 0.0


def _once(change):
    """A ``FakeServer.rewrite`` that changes the first reply only."""
    calls = []

    def rewrite(reply: dict) -> dict:
        calls.append(1)
        if len(calls) == 1:
            change(reply["choices"][0], reply)
        return reply
    return rewrite


ODD_REPLIES = {
    "no logprobs": lambda choice, reply: choice.update(logprobs=None),
    "no logprob of a reply's tokens": lambda choice, reply: choice.update(logprobs={"content": []}),  # not ANLL 0
    "a NaN logprob": lambda choice, reply: choice["logprobs"]["content"][0].update(logprob=float("nan")),
    "a positive logprob": lambda choice, reply: choice["logprobs"]["content"][0].update(logprob=5.0),
    "logprobs of another shape": lambda choice, reply: choice.update(logprobs={"content": 5}),
    "an aborted request": lambda choice, reply: choice.update(finish_reason="abort"),
    "a negative token count": lambda choice, reply: reply["usage"].update(completion_tokens=-3),
    "content chunks of another shape": lambda choice, reply: choice["message"].update(content=[{"type": "text"}]),
}


@pytest.mark.parametrize("odd", ODD_REPLIES)
def test_an_odd_reply_is_retried_never_kept(odd):
    """A reply that cannot be a sample (logprobs asked for and missing, not a log probability, a
    number where a list belongs, vLLM's ``abort``, a negative count) is retried like a 503."""
    params = SamplingParams(temperature=0.7, max_tokens=64, logprobs=True)
    with FakeServer(rewrite=_once(ODD_REPLIES[odd])) as server:
        (out,) = backend(server, retry=no_sleep()).generate(sample_requests(1), params)
    assert len(server.requests) == 2
    assert out.text == expected_text(sample_requests(1)[0]) and out.n_tokens > 0
    assert out.token_logprobs == tuple(token_logprob(t) for t in reply_tokens("question 0", 0))


@pytest.mark.parametrize("logprobs", [False, True])
def test_a_completions_reply_with_a_token_without_its_logprob_is_retried_never_kept(logprobs):
    """A null among ``token_logprobs`` was dropped: the sample kept the other tokens' logprobs and
    its ANLL was the mean of part of the reply (a chat reply's null logprob is retried)."""
    def one_null(choice, reply):
        choice["logprobs"]["token_logprobs"][1] = None

    params = SamplingParams(temperature=0.7, max_tokens=64, logprobs=logprobs)
    with FakeServer(rewrite=_once(one_null)) as server:
        (out,) = backend(server, "completions", retry=no_sleep()).generate(sample_requests(1), params)
    assert len(server.requests) == 2
    tokens = reply_tokens("question 0", 0)
    assert out.token_logprobs == tuple(token_logprob(t) for t in tokens) and out.tokens == tuple(tokens)


def test_magistral_content_chunks_are_the_answer_and_its_thinking_the_reasoning():
    """Mistral's API sends Magistral's ``content`` as a list of chunks, which the SDK passes
    through: the text chunks are the reply, the thinking chunks its reasoning (never graded)."""
    from uab_cli.pipeline import make_sample

    chunks = [{"type": "thinking", "thinking": [{"type": "text", "text": "2 + 2 is \\boxed{5}? "},
                                                {"type": "text", "text": "No, 4."}]},
              {"type": "text", "text": "The answer is "}, {"type": "text", "text": "\\boxed{4}."}]
    with FakeServer(rewrite=_once(lambda choice, reply: choice["message"].update(content=chunks))) as server:
        (out,) = backend(server, logprobs=False).generate(sample_requests(1), PARAMS)
    assert len(server.requests) == 1 and out.finish_reason == "stop"
    assert out.text == "The answer is \\boxed{4}." and out.reasoning == "2 + 2 is \\boxed{5}? No, 4."
    sample = make_sample(out, {"id": "q", "question": "What is 2 + 2?", "answer": "4"}, 0, 1, 0)
    assert sample["answer"] == "4" and sample["reasoning"] == out.reasoning


def test_logprobs_are_required_only_where_asked():
    """Without ``logprobs=True`` (a signal that needs none, or the probe) a reply without them
    is a sample: Phase 1's probe tells such a server apart at once."""
    with FakeServer(rewrite=_once(ODD_REPLIES["no logprobs"])) as server:
        (out,) = backend(server, retry=no_sleep()).generate(sample_requests(1), PARAMS)
    assert len(server.requests) == 1 and out.token_logprobs is None


def test_retries_are_said_at_most_once_per_few_seconds():
    with FakeServer(fault_rate=1.0, faults=("503",), fault_limit=6) as server:
        with pytest.warns(RetryNotice) as said:
            backend(server, retry=no_sleep(attempts=8), concurrency=2).generate(sample_requests(2), PARAMS)
    assert len(server.requests) == 8
    assert [str(w.message) for w in said] == ["openai: HTTP 503: {'message': 'injected 503'}; retrying (attempt 2 of 8)"]


def test_backoff_is_jittered():
    """Requests that failed together do not all come back together."""
    delays = {Retry().delay(2) for _ in range(20)}
    assert len(delays) > 1 and all(0.5 <= d <= 1.0 for d in delays)


@pytest.mark.parametrize("typed", ["sk-uab-secret-1\r\n", "  sk-uab-secret-1"])
def test_a_key_read_with_a_line_end_is_sent_without_it(typed, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", typed)
    with FakeServer() as server:
        OpenAIBackend("fake-model", f"{server.url}/v1").generate(sample_requests(1), PARAMS)
    assert server.requests[0].headers["authorization"] == "Bearer sk-uab-secret-1"


def test_a_key_no_header_can_carry_is_refused_without_showing_it():
    with pytest.raises(UabError, match="--api-key holds characters an HTTP header cannot carry") as error:
        OpenAIBackend("m", "http://127.0.0.1:1/v1", api_key="sk-ÜSECRET-1")
    assert "SECRET" not in str(error.value)


def test_an_interrupt_does_not_wait_for_requests_in_flight():
    """Ctrl-C while a request hangs ends the process at once (the workers are daemon
    threads), not once the request times out (thread pool workers are joined at exit)."""
    script = textwrap.dedent("""
        import sys
        from uab_cli.backends.base import SampleRequest, SamplingParams
        from uab_cli.backends.openai import OpenAIBackend

        def interrupt(index, completion):
            raise KeyboardInterrupt

        requests = [SampleRequest(({"role": "user", "content": f"q{i}"},), i) for i in range(4)]
        backend = OpenAIBackend("fake-model", sys.argv[1], api_key="k", concurrency=2, timeout=60)
        try:
            backend.generate(requests, SamplingParams(max_tokens=8), on_result=interrupt)
        except KeyboardInterrupt:
            sys.exit(130)
    """)
    with FakeServer(fault_rate=1.0, faults=("slow",), slow=30.0, fault_after=1) as server:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", script, f"{server.url}/v1"], capture_output=True, text=True,
                              timeout=60)
        waited = time.monotonic() - started
    assert done.returncode == 130, done.stderr
    assert waited < 20, waited  # the hanging request would hold the process 30 s


def _text(text: str, finish: str):
    """A ``FakeServer.rewrite`` whose completions replies all say ``text``."""
    return lambda r: {**r, "choices": [{**r["choices"][0], "text": text, "finish_reason": finish, "logprobs": None}]}


def test_a_completions_reply_whose_prompt_opens_the_reasoning_starts_with_its_marker():
    """An R1-style chat template (``--tokenizer``) ends the prompt "<think>\\n": a reply cut while
    thinking is one without an answer, not the box of its draft (as local's and vllm's are)."""
    from uab_cli.reasoning import final_text

    draft = "Let me compute 7 + 71. That is \\boxed{78}. Hmm, wait, let me double-check"
    with FakeServer(rewrite=_text(draft, "length")) as server, \
            backend(server, "completions", logprobs=False) as b:
        b.render = lambda messages: "<|user|>What is 7 + 71?<|assistant|><think>\n"
        out = b.generate(sample_requests(1), PARAMS)[0]
        assert out.text == "<think>\n" + draft and final_text(out.text) is None
        b.render = render_prompt  # a template that opens nothing: the reply as sent
        assert b.generate(sample_requests(1), PARAMS)[0].text == draft


def test_the_plain_templates_role_blocks_stop_before_the_next_turn():
    """A base model answering "User: …\\n\\nAssistant:" writes the next turn itself; its answer
    would be graded. A lone user message (sent verbatim) and a chat template send no stop."""
    from uab_cli.backends.base import SampleRequest

    turns = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 7 + 71?"})
    with FakeServer() as server, backend(server, "completions") as b:
        b.generate([SampleRequest(turns, 1)], PARAMS)
        b.generate([SampleRequest(turns[1:], 2)], PARAMS)
        b.render = lambda messages: "<|user|>What is 7 + 71?<|assistant|>"
        b.generate([SampleRequest(turns, 3)], PARAMS)
    stops = [r.body.get("stop") for r in sorted(server.requests, key=lambda r: r.body["seed"])]
    assert stops == [["\n\nUser:", "\n\nSystem:"], None, None]


def test_a_hub_tokenizer_without_network_fails_at_once_in_one_line(monkeypatch):
    """--tokenizer ORG/NAME where the hub's host does not resolve: the hub cache only (no ~50 s
    of retries), and one line that says so."""
    pytest.importorskip("transformers")
    from huggingface_hub import constants

    from uab_cli.backends.openai import chat_template

    monkeypatch.setenv("HF_ENDPOINT", "https://hub.uab-test.invalid")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", constants.HF_HUB_OFFLINE)  # restored after the test
    with pytest.raises(UabError) as error:
        chat_template("uab-test/no-such-tokenizer")
    assert "\n" not in str(error.value) and str(error.value).endswith(
        "(hub.uab-test.invalid cannot be reached: only the local hub cache was tried)")


PROMPTS = [({"role": "user", "content": " ".join(["word"] * n)},) for n in (3, 5, 8, 13)]


def test_a_context_lookup_or_count_nested_too_deep_is_unknown_not_a_traceback():
    """JSON deeper than the parser goes from /v1/models or /tokenize: a RecursionError traceback
    before; the context or the count is unknown, as for a reply of another shape."""
    with FakeServer(max_model_len=200, route_faults={"/models": ["deep_json"]}) as server:
        assert backend(server).context_length is None
    with FakeServer(max_model_len=200, route_faults={"/tokenize": ["deep_json"]}) as server:
        with pytest.warns(UserWarning, match=r"cannot count prompt tokens \(its /tokenize reply has no count\)"):
            assert backend(server, concurrency=1).prompt_lengths(PROMPTS, 100) == [None] * 4


def test_transient_failures_of_the_context_lookup_and_the_counts_are_retried():
    """A 503 of /v1/models left the context unknown (no prompt checked, silently), a 429 of the
    first /tokenize said "no /tokenize": each is retried as a sample's request is."""
    delays: list[float] = []
    with FakeServer(max_model_len=200, route_faults={"/models": ["503"], "/tokenize": ["429", "503", "reset"]}) as server:
        b = backend(server, concurrency=1, retry=no_sleep(log=delays))
        assert b.context_length == 200
        assert [n.tokens for n in b.prompt_lengths(PROMPTS, 100)] == [5, 7, 10, 15]
    assert len(delays) == 4


def test_only_a_missing_tokenize_route_says_so_and_a_count_refused_leaves_that_prompt_unchecked():
    """Any failure of the first count said "no /tokenize"; persistent 5xx now stop the stage as a
    sample's would, and a 4xx says what the server answered."""
    with FakeServer(max_model_len=200, tokenize=False) as server:
        with pytest.warns(UserWarning, match=r"cannot count prompt tokens \(no /tokenize\)"):
            assert backend(server).prompt_lengths(PROMPTS, 100) == [None] * 4
    with FakeServer(max_model_len=200, route_faults={"/tokenize": ["503"] * 2}) as server:
        with pytest.raises(BackendError, match=r"^openai: a /tokenize request failed after 2 attempts over [\d.]+ s: HTTP 503"):
            backend(server, retry=no_sleep(2)).prompt_lengths(PROMPTS, 100)
    with FakeServer(max_model_len=200, route_faults={"/tokenize": ["503", None, "400"]}) as server:
        sizes = backend(server, concurrency=1, retry=no_sleep()).prompt_lengths(PROMPTS, 100)
    assert [n and n.tokens for n in sizes] == [5, None, 10, 15]  # the server's own error covers it
    with FakeServer(max_model_len=200, route_faults={"/tokenize": ["401"]}) as server:
        with pytest.warns(UserWarning, match=r"cannot count prompt tokens \(/tokenize: HTTP 401: .*injected 401"):
            assert backend(server).prompt_lengths(PROMPTS, 100) == [None] * 4


def test_prompts_counted_with_the_context_unknown_warn_without_a_traceback():
    """With no context known the warning's "{context_length:,}" was a TypeError traceback."""
    with FakeServer() as server:
        with pytest.warns(UserWarning, match=r"^the server cannot count prompt tokens \(no /tokenize\): prompts are not"):
            assert backend(server).prompt_lengths(PROMPTS, 100) == [None] * 4


def test_rpm_limits_the_context_lookup_and_the_counts_too():
    """--rpm spaced the samples only: /v1/models and every /tokenize went out at once."""
    calls: list[float] = []

    def clock() -> float:
        calls.append(time.monotonic())
        return calls[-1]

    with FakeServer(max_model_len=200) as server:
        b = backend(server, concurrency=4, rpm=600)
        b._limiter = RateLimiter(600, clock=clock)
        assert b.context_length == 200 and None not in b.prompt_lengths(PROMPTS, 100)
    grants = calls[1::2]
    assert len(grants) == 1 + len(PROMPTS)
    assert min(y - x for x, y in zip(grants, grants[1:])) >= 0.1 - 1e-3


@pytest.mark.parametrize("source", ["--api-key", "OPENAI_API_KEY"])
def test_a_base_url_with_user_info_says_that_the_api_key_is_not_sent(source, monkeypatch):
    """httpx sends a URL's user info as Basic auth in place of the Bearer key: the key given
    alongside was silently never sent. A warning says so, showing neither secret."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if source == "OPENAI_API_KEY":
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeServer() as server:
        url = server.url.replace("http://", "http://user:hunter2@") + "/v1"
        with pytest.warns(UserWarning, match=r"carries a user name or password: .* in place of the API key") as caught:
            b = OpenAIBackend("fake-model", url, api_key=KEY if source == "--api-key" else None)
        b.generate(sample_requests(1), PARAMS)
    assert len(caught) == 1 and "hunter2" not in str(caught[0].message) and KEY not in str(caught[0].message)
    assert server.requests[0].headers["authorization"].startswith("Basic ")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    OpenAIBackend("fake-model", url).close()  # user info alone drops no key: no warning (an error here)

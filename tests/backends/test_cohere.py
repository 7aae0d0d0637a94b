"""CohereBackend against the local fake v2 chat server: shapes, keys, error mapping, limits."""

from __future__ import annotations

import gc
import json
import logging
import warnings

import pytest
from conftest import FakeClock, arithmetic, backs_off, cli, no_sleep, write_jsonl
from fakeserver import (
    FakeServer,
    expected_text,
    max_in_window,
    reply_tokens,
    sample_requests,
    token_logprob,
)

from uab_cli.backends.base import Retry, SamplingParams
from uab_cli.backends.cohere import CohereBackend
from uab_cli.backends.remote import Failure, RateLimiter, RemoteBackend, RetryNotice, make_completion
from uab_cli.errors import BackendError, UabError

pytest.importorskip("cohere")

SECRET = "co-uab-secret-0b5e2d44-never-print"


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch):
    for var in ("CO_API_KEY", "COHERE_API_KEY", "CO_API_URL"):
        monkeypatch.delenv(var, raising=False)


def cohere_at(server: FakeServer, **kw) -> CohereBackend:
    """A CohereBackend aimed at the fake server with the test key."""
    kw.setdefault("api_key", SECRET)
    return CohereBackend("command-fake", base_url=server.url, **kw)


def test_chat_texts_logprobs_seeds_and_order():
    reqs = sample_requests(20, prompt="cohere", seed0=7)
    seen: list[int] = []
    with FakeServer(delay=0.01) as server:
        with cohere_at(server, concurrency=5) as co:
            out = co.generate(
                reqs,
                SamplingParams(temperature=0.3, max_tokens=50),
                on_result=lambda i, c: seen.append(i),
            )
    assert [c.text for c in out] == [expected_text(r) for r in reqs]
    assert sorted(seen) == list(range(20))
    tokens = reply_tokens("cohere 3", 10)
    assert out[3].token_logprobs == tuple(map(token_logprob, tokens)) and out[3].n_tokens == len(
        tokens
    )
    assert {c.finish_reason for c in out} == {"stop"}
    assert {c.prompt_tokens for c in out} == {7}  # usage.tokens.input_tokens (the billed units say 5)
    sent = [r.body for r in server.requests]
    assert {r.path for r in server.requests} == {"/v2/chat"}
    assert sorted(b["seed"] for b in sent) == list(range(7, 27))
    assert all(
        b["model"] == "command-fake" and b["logprobs"] is True and b["max_tokens"] == 50
        for b in sent
    )
    assert all(b["temperature"] == 0.3 and b["p"] == 0.99 and "n" not in b for b in sent)


@pytest.mark.parametrize("content", [None, 5])
def test_a_reply_without_content_is_retried_as_openai_s_is(content):
    """``content: null`` with COMPLETE is no answer (the OpenAI backend retries it too), and a
    reply of another shape is malformed: both retried, never kept as an empty sample."""
    calls = []

    def first_without(reply: dict) -> dict:
        calls.append(1)
        if len(calls) == 1:
            reply["message"]["content"] = content
        return reply

    with FakeServer(rewrite=first_without) as server:
        (out,) = cohere_at(server, retry=no_sleep()).generate(sample_requests(1), SamplingParams())
        assert len(server.requests) == 2
    assert out.text == expected_text(sample_requests(1)[0])


@pytest.mark.parametrize("body", [[{"finish_reason": "COMPLETE"}], "COMPLETE", 5])
def test_a_reply_that_is_no_json_object_is_retried(body):
    """A 200 whose JSON is a list, a string or a number: the SDK's TypeError went up as a
    traceback; it is malformed, retried like any reply that cannot be a sample."""
    calls = []

    def first_odd(reply: dict):
        calls.append(1)
        return body if len(calls) == 1 else reply

    with FakeServer(rewrite=first_odd) as server:
        (out,) = cohere_at(server, retry=no_sleep()).generate(sample_requests(1), SamplingParams())
        assert len(server.requests) == 2
    assert out.text == expected_text(sample_requests(1)[0])


@pytest.mark.parametrize("error,told", [
    ({"id": "e1", "message": "internal server error, key {key} refused"}, "internal server error, key *** refused"),
    ({"error": {"message": "Provider returned error: upstream\noverloaded", "code": 502}},
     "Provider returned error: upstream overloaded (502)"),
])
def test_a_200_that_carries_an_error_in_place_of_a_reply_says_the_servers_error(error, told):
    """A 200 whose body is Cohere's own error (``{"message": "…"}``: the SDK raised on it) failed as
    `unexpected reply shape (not a JSON object)`, a gateway's ``{"error": …}`` as `no finish reason`,
    never saying what the server said; as the openai backend's, they now retry, then say its words
    on one line with the key masked, in the retry notice and the final error alike."""
    body = json.loads(json.dumps(error).replace("{key}", SECRET))
    calls = []

    def first_error(reply: dict) -> dict:
        calls.append(1)
        return body if len(calls) == 1 else reply

    with FakeServer(rewrite=first_error) as server:  # retried: the next reply is kept
        (out,) = cohere_at(server, retry=no_sleep()).generate(sample_requests(1), SamplingParams())
    assert out.text == expected_text(sample_requests(1)[0]) and len(calls) == 2
    with FakeServer(rewrite=lambda reply: body) as server:
        with pytest.warns(RetryNotice) as said, pytest.raises(BackendError) as failed:
            cohere_at(server, retry=no_sleep(2)).generate(sample_requests(1), SamplingParams())
    message = f"malformed response: no reply; the server's error: {told}"
    assert str(said[0].message).startswith(f"cohere: {message}; retrying") and str(failed.value).endswith(message)
    assert SECRET not in str(failed.value) + str(said[0].message)


def test_a_reply_without_usage_counts_its_logprobs_else_no_tokens_known():
    """No ``usage``: the logprobs count the tokens; without logprobs too the count is unknown
    (``None``), where it was recorded as 0 completion tokens."""

    def no_usage(reply: dict) -> dict:
        reply.pop("usage", None)
        return reply

    with FakeServer(rewrite=no_usage) as server:
        (counted,) = cohere_at(server).generate(sample_requests(1), SamplingParams())
    with FakeServer(rewrite=no_usage, logprobs=False) as server:
        (unknown,) = cohere_at(server).generate(sample_requests(1), SamplingParams())
    assert counted.n_tokens == len(reply_tokens("question 0", 0)) and counted.prompt_tokens is None
    assert unknown.text and (unknown.n_tokens, unknown.token_logprobs, unknown.prompt_tokens) == (None, None, None)


def test_a_run_without_usage_reports_unknown_tokens_and_never_the_key(tmp_path, monkeypatch):
    """``uab run --backend cohere --allocator judge`` against a service that reports no usage and
    no logprobs: the summary's token counts (samples and judge calls) are null, not 0 (a price
    then costs nothing it cannot know), and the key is in no output, config or message."""
    monkeypatch.setenv("CO_API_KEY", SECRET)
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))

    def no_usage(reply: dict) -> dict:
        reply.pop("usage", None)
        return reply

    with FakeServer(rewrite=no_usage, logprobs=False) as server, warnings.catch_warnings():
        warnings.simplefilter("always")  # uab prints them (a test's warning is otherwise an error)
        result = cli(["run", questions, "--budget", "2", "-o", str(tmp_path / "run"), "--backend", "cohere",
                      "--base-url", server.url, "--allocator", "judge", "--price", "1,2"])
    assert result.exit_code == 0, result.stderr
    assert "cap before a verdict for 4 of 4" in " ".join(result.stderr.split())  # its 9-word replies: cut at 8
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["total"]["samples"] == 8 and summary["total"]["completion_tokens"] is None
    assert summary["stages"]["judge"]["completion_tokens"] is None
    assert summary["cost"] == {"samples": None, "drawn": None, "judge": None}
    assert "0 completion" not in result.stderr
    written = [p.read_text() for p in (tmp_path / "run").iterdir()]
    assert not [t for t in [result.stdout, result.stderr, *written] if SECRET in t]


def test_a_judged_run_closes_every_connection_it_opens(tmp_path, monkeypatch):
    """``uab run --allocator judge`` (the samples and the judge's calls on one backend) closes
    its client: no socket is left for the garbage collector to find open (a ResourceWarning,
    which once showed in the test above: left by the backends an earlier test never closed)."""
    monkeypatch.setenv("CO_API_KEY", SECRET)
    monkeypatch.setattr(RemoteBackend, "__init__", RemoteBackend.__init__.__wrapped__)  # uab's closing, not the test's
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    gc.collect()
    gc.disable()  # what the run leaves is collected below, not in the middle of it
    try:
        with FakeServer(logprobs=False) as server, warnings.catch_warnings():
            warnings.simplefilter("always")  # uab prints them (the judge's cap, one freed socket's)
            result = cli(["run", questions, "--budget", "2", "-o", str(tmp_path / "run"), "--backend", "cohere",
                          "--base-url", server.url, "--allocator", "judge"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            gc.collect()
    finally:
        gc.enable()
    assert result.exit_code == 0, result.stderr
    assert "unclosed" not in result.stderr
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


THINKING = "Is it \\boxed{5}? Confidence: 3. No: 3 + 4 = \\boxed{7}."


def _thinking(final: str | None, finish: str = "COMPLETE"):
    """A rewrite: the reply of a reasoning model, a thinking block (a draft box and score in it),
    then ``final`` as its text block (none: cut while thinking)."""

    def rewrite(reply: dict) -> dict:
        reply["message"]["content"] = [{"type": "thinking", "thinking": THINKING[:20]},
                                       {"type": "thinking", "thinking": THINKING[20:]},
                                       *([{"type": "text", "text": final}] if final is not None else [])]
        reply["finish_reason"] = finish
        return reply

    return rewrite


def test_thinking_is_kept_as_the_samples_reasoning_and_never_graded(tmp_path, monkeypatch):
    """A reasoning model's thinking blocks (the SDK's ``type: "thinking"``) were dropped; now they
    are the sample's ``reasoning``, as the OpenAI backend keeps ``reasoning_content``, and the
    answer and confidence still come from the text alone. Cut while thinking: no answer."""
    with FakeServer(rewrite=_thinking("The answer is \\boxed{8}.\nConfidence: 9")) as server:
        (out,) = cohere_at(server).generate(sample_requests(1), SamplingParams())
    assert (out.text, out.reasoning) == ("The answer is \\boxed{8}.\nConfidence: 9", THINKING)
    monkeypatch.setenv("CO_API_KEY", SECRET)
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    for name, final, finish, answer, confidence in [("final", "The answer is \\boxed{8}.\nConfidence: 9",
                                                     "COMPLETE", "8", 9),
                                                    ("cut", None, "MAX_TOKENS", None, None)]:
        out = tmp_path / f"{name}.jsonl"
        with FakeServer(rewrite=_thinking(final, finish)) as server:
            result = cli(["phase1", questions, "-o", str(out), "--backend", "cohere", "--base-url", server.url, "-q"])
        assert result.exit_code == 0, result.stderr
        for rec in map(json.loads, out.read_text().splitlines()):
            (sample,) = rec["samples"]
            assert sample["reasoning"] == THINKING and sample["text"] == (final or "")
            assert (sample["answer"], sample["confidence"]) == (answer, confidence), sample


@pytest.mark.parametrize("finish, reason", [("ERROR_TOXIC", "content_filter"), ("ERROR_LIMIT", "length")])
def test_coheres_toxic_and_context_limit_finishes_are_a_filtered_and_a_cut_reply(finish, reason):
    """``ERROR_TOXIC`` (a reply deemed toxic) and ``ERROR_LIMIT`` (cut at the context length) were
    kept as ``error_toxic`` / ``error_limit`` replies whose text was graded like a finished one."""
    from uab_cli.pipeline import make_sample

    with FakeServer(rewrite=_thinking("The answer is \\boxed{8}.", finish)) as server:
        (out,) = cohere_at(server, logprobs=False).generate(sample_requests(1), SamplingParams())
    assert out.finish_reason == reason and len(server.requests) == 1
    sample = make_sample(out, {"id": "q", "question": "What is 3 + 5?", "answer": "8"}, 0, 1, 0)
    assert sample["answer"] == (None if reason == "content_filter" else "8")


def test_a_cancelled_generation_is_retried_never_kept():
    """The older API's ``USER_CANCEL`` (a cancelled generation) was kept as a ``user_cancel``
    reply whose text was graded like a finished one; now it is retried, as ``ERROR`` is."""
    calls: list[int] = []

    def cancel_once(reply: dict) -> dict:
        calls.append(1)
        return _thinking("The answer is \\boxed{7}.", "USER_CANCEL")(reply) if len(calls) == 1 else reply

    with FakeServer(rewrite=cancel_once) as server:
        (out,) = cohere_at(server, retry=no_sleep()).generate(sample_requests(1), SamplingParams())
        assert len(server.requests) == 2
    assert out.finish_reason == "stop" and "boxed{7}" not in out.text
    with FakeServer(rewrite=_thinking("The answer is \\boxed{7}.", "USER_CANCEL")) as server, \
            pytest.raises(BackendError, match="USER_CANCEL"):
        cohere_at(server, retry=no_sleep(2)).generate(sample_requests(1), SamplingParams())


def test_a_null_thinking_block_is_no_reasoning_not_a_malformed_reply():
    """A thinking block whose ``thinking`` is null made the whole reply malformed: retried until
    the stage failed, its text never kept. Now the null reasoning is dropped; the text is the
    sample, and a null text block is still malformed (retried)."""

    def null_thinking(reply: dict) -> dict:
        reply["message"]["content"] = [{"type": "thinking", "thinking": None},
                                       {"type": "thinking", "thinking": THINKING},
                                       {"type": "text", "text": "The answer is \\boxed{8}."}]
        return reply

    with FakeServer(rewrite=null_thinking) as server:
        (out,) = cohere_at(server, retry=no_sleep(2)).generate(sample_requests(1), SamplingParams())
        assert len(server.requests) == 1
    assert (out.text, out.reasoning) == ("The answer is \\boxed{8}.", THINKING)

    def null_text(reply: dict) -> dict:
        reply["message"]["content"] = [{"type": "text", "text": None}]
        return reply

    with FakeServer(rewrite=null_text) as server, pytest.raises(BackendError, match="malformed"):
        cohere_at(server, retry=no_sleep(2)).generate(sample_requests(1), SamplingParams())


def test_without_logprobs():
    with FakeServer() as server:
        co = cohere_at(server, logprobs=False)
        (out,) = co.generate(sample_requests(1), SamplingParams())
        assert "logprobs" not in server.requests[0].body
    assert out.token_logprobs is None and not co.returns_logprobs


def test_an_empty_reply_has_the_empty_logprobs_a_signal_needs():
    """A reply of no tokens carries no logprob chunks (``logprobs: []``): all its logprobs, as an
    OpenAI server's empty ``content`` is. Taken as missing, where the signal needs them (Phase 2
    after a Phase 1 with logprobs) it was retried as malformed until the stage failed."""
    with FakeServer(fault_rate=1.0, faults=("empty_stop",)) as server:
        (out,) = cohere_at(server, retry=no_sleep(3)).generate(sample_requests(1), SamplingParams(logprobs=True))
        assert len(server.requests) == 1
    assert (out.text, out.token_logprobs, out.n_tokens, out.finish_reason) == ("", (), 0, "stop")

    def no_chunks(reply: dict) -> dict:  # a reply with text but without its logprobs: missing
        reply["logprobs"] = []
        return reply

    with FakeServer(rewrite=no_chunks) as server:
        with pytest.raises(BackendError, match="no token logprobs"):
            cohere_at(server, retry=no_sleep(2)).generate(sample_requests(1), SamplingParams(logprobs=True))
        (out,) = cohere_at(server).generate(sample_requests(1), SamplingParams())
    assert out.text and out.token_logprobs is None


def test_key_comes_from_co_api_key_then_cohere_api_key(monkeypatch):
    with pytest.raises(UabError, match="CO_API_KEY"):
        CohereBackend(base_url="http://127.0.0.1:9")
    monkeypatch.setenv("COHERE_API_KEY", "legacy-key-123")
    with FakeServer() as server:
        CohereBackend(base_url=server.url).generate(sample_requests(1), SamplingParams())
        monkeypatch.setenv("CO_API_KEY", "preferred-key-456")
        CohereBackend(base_url=server.url).generate(sample_requests(1), SamplingParams())
    auth = [r.headers["authorization"] for r in server.requests]
    assert auth == ["Bearer legacy-key-123", "Bearer preferred-key-456"]


def test_the_url_comes_from_base_url_then_co_api_url(monkeypatch):
    """``CO_API_URL`` (the SDK's own variable) is honoured as ``OPENAI_BASE_URL`` is for openai:
    uab passed ``base_url=None`` over it, so a pipe's ``phase2`` went to Cohere's own API."""
    with FakeServer() as server, FakeServer() as other:
        monkeypatch.setenv("CO_API_URL", server.url)
        CohereBackend(api_key=SECRET, retry=no_sleep(1), timeout=5).generate(sample_requests(1), SamplingParams())
        CohereBackend(api_key=SECRET, base_url=other.url).generate(sample_requests(1), SamplingParams())
        assert (len(server.requests), len(other.requests)) == (1, 1)
    monkeypatch.setenv("CO_API_URL", "http://cohere-proxy.example:8080")
    with pytest.warns(UserWarning, match="plain http"):
        CohereBackend(api_key=SECRET).close()


def test_a_base_url_with_user_info_says_that_the_key_is_not_sent():
    """The SDK's HTTP client sends a URL's user info as Basic auth in place of the Bearer key,
    silently; a warning says so, showing neither secret."""
    with FakeServer() as server:
        url = server.url.replace("http://", "http://proxy:hunter2@")
        with pytest.warns(UserWarning, match="carries a user name or password") as caught:
            co = CohereBackend(api_key=SECRET, base_url=url, retry=no_sleep(1))
        co.generate(sample_requests(1), SamplingParams())
    assert server.requests[0].headers["authorization"].startswith("Basic ")
    assert len(caught) == 1 and "hunter2" not in str(caught[0].message) and SECRET not in str(caught[0].message)


@pytest.mark.parametrize("url", ["api.cohere.com", "http://proxy:port/", "http://[::1", "https://proxy/?key=hunter2",
                                 "https://proxy/#hunter2"])
def test_a_base_url_no_client_can_use_is_a_bad_option(url, monkeypatch):
    """A traceback, or every request retried as a connection error, before: one line now; a query
    or fragment, which the SDK appended /v2/chat to, never shown (a key may be there)."""
    with pytest.raises(UabError, match=r"^--base-url \(or CO_API_URL\) must (be an http:// or https:// URL|have no "
                                       r"query)") as bad:
        CohereBackend(api_key=SECRET, base_url=url)
    assert "hunter2" not in str(bad.value)
    monkeypatch.setenv("CO_API_URL", url)
    with pytest.raises(UabError, match="CO_API_URL"):
        CohereBackend(api_key=SECRET)


def test_max_tokens_finish_is_length():
    with FakeServer(fault_rate=1.0, faults=("truncate",)) as server:
        (out,) = cohere_at(server).generate(sample_requests(1), SamplingParams())
    assert out.finish_reason == "length" and expected_text(sample_requests(1)[0]).startswith(
        out.text
    )


@pytest.mark.parametrize(
    "reason, mapped",
    [
        ("COMPLETE", "stop"),
        ("STOP_SEQUENCE", "stop"),
        ("MAX_TOKENS", "length"),
        ("TOOL_CALL", "tool_call"),
    ],
)
def test_finish_reason_mapping(reason, mapped):
    assert make_completion("x", None, 1, reason).finish_reason == mapped


@pytest.mark.parametrize("reason", ["ERROR", "TIMEOUT", None])
def test_failed_finishes_are_failures_not_answers(reason):
    with pytest.raises(Failure):
        make_completion("", None, 0, reason)


def test_rate_limit_waits_out_retry_after():
    with FakeServer(
        fault_rate=1.0, faults=("429_retry_after",), retry_after=0.25, fault_limit=2
    ) as server:
        (out,) = cohere_at(server, concurrency=1).generate(sample_requests(1), SamplingParams())
    assert out.text == expected_text(sample_requests(1)[0])
    gaps = [b - a for a, b in zip(server.times(), server.times()[1:])]
    assert len(gaps) == 2 and min(gaps) >= 0.24


def test_429_without_retry_after_backs_off_exponentially():
    waits: list[float] = []
    policy = Retry(attempts=5, base_delay=0.2, sleep=waits.append)
    with FakeServer(fault_rate=1.0, faults=("429",), fault_limit=3) as server:
        cohere_at(server, retry=policy).generate(sample_requests(1), SamplingParams())
    assert backs_off(waits, [0.2, 0.4, 0.8])


@pytest.mark.parametrize("fault", ["500", "502", "503", "504", "reset", "reset_body", "cut", "malformed", "empty"])
def test_server_side_faults_are_retried(fault):
    with FakeServer(fault_rate=1.0, faults=(fault,), fault_limit=2) as server:
        (out,) = cohere_at(server, retry=no_sleep()).generate(sample_requests(1), SamplingParams())
    assert out.text == expected_text(sample_requests(1)[0]) and len(server.requests) == 3


@pytest.mark.parametrize("fault", ["deep_json", "bad_gzip"])
def test_a_reply_body_that_cannot_be_decoded_is_retried(fault):
    """JSON nested too deep (RecursionError) and a gzip body that is no gzip (httpx's
    DecodingError) were no failure the retry policy knew: a traceback, exit 1."""
    with FakeServer(fault_rate=1.0, faults=(fault,), fault_limit=1) as server:
        (out,) = cohere_at(server, retry=no_sleep()).generate(sample_requests(1), SamplingParams())
    assert out.text == expected_text(sample_requests(1)[0]) and len(server.requests) == 2


def test_a_token_count_beyond_any_integer_is_unknown_not_a_traceback():
    """``usage.tokens.output_tokens: 1e400`` (infinity as JSON reads it): OverflowError before."""
    def infinite(reply):
        reply["usage"]["tokens"]["output_tokens"] = reply["usage"]["billed_units"]["output_tokens"] = float("inf")
        return reply

    with FakeServer(rewrite=infinite) as server:
        (out,) = cohere_at(server, retry=no_sleep()).generate(sample_requests(1), SamplingParams())
    assert out.n_tokens == len(reply_tokens("question 0", 0)) == len(out.token_logprobs)  # counted by its logprobs
    assert len(server.requests) == 1


@pytest.mark.parametrize("fault", ["400", "401", "403"])
def test_client_errors_are_not_retried(fault):
    """A 401 names where the key comes from (the server's bare `HTTP 401: …` before)."""
    with FakeServer(fault_rate=1.0, faults=(fault,)) as server:
        with pytest.raises(BackendError, match=rf"not retryable\): HTTP {fault}") as failed:
            cohere_at(server, retry=no_sleep(), concurrency=1).generate(
                sample_requests(4), SamplingParams()
            )
    assert len(server.requests) == 1
    hint = " (the server refused the API key: check --api-key, CO_API_KEY or COHERE_API_KEY)"
    assert str(failed.value).endswith(hint) == (fault == "401") and SECRET not in str(failed.value)


def test_faulty_service_still_yields_only_real_texts():
    reqs = sample_requests(200, prompt="noisy")
    with FakeServer(fault_rate=0.3, seed=11, slow=1.0) as server:
        co = cohere_at(
            server,
            concurrency=8,
            timeout=0.4,
            retry=Retry(attempts=12, base_delay=0.001, max_delay=0.01),
        )
        out = co.generate(reqs, SamplingParams())
    truncated = 0
    for req, comp in zip(reqs, out):
        if comp.finish_reason == "length":
            truncated += 1
            assert comp.text and expected_text(req).startswith(comp.text)
        else:
            assert (comp.finish_reason, comp.text) == ("stop", expected_text(req))
    assert truncated == server.faults_served().get("truncate", 0) > 0
    assert server.faults_served().keys() >= {
        "slow",
        "reset",
        "empty",
        "malformed",
        "429_retry_after",
    }


def test_dead_service_fails_after_the_retry_budget_keeping_finished_samples():
    kept: dict[int, str] = {}
    with FakeServer(fault_rate=1.0, faults=("503", "429"), fault_after=3) as server:
        co = cohere_at(server, concurrency=2, retry=no_sleep(6))
        with pytest.raises(
            BackendError, match=r"request \d+ failed after 6 attempts over [\d.]+ s: HTTP (503|429)"
        ):
            co.generate(
                sample_requests(30),
                SamplingParams(),
                on_result=lambda i, c: kept.update({i: c.text}),
            )
    assert len(kept) == 3 and all(kept.values())
    assert len(server.requests) <= 3 + 2 * 6


def test_in_flight_successes_are_reported_after_another_request_fails():
    kept: list[int] = []
    with FakeServer(delay=0.3, poison_seeds=(1,), poison_after=4) as server:
        co = cohere_at(server, concurrency=4, retry=no_sleep())
        with pytest.raises(BackendError, match="request 1 failed"):
            co.generate(
                sample_requests(12), SamplingParams(), on_result=lambda i, c: kept.append(i)
            )
    assert sorted(kept) == [0, 2, 3] and len(server.requests) == 4


class FakeTimeLimiter(RateLimiter):
    """The backend's rate limiter on a fake clock: waiting moves the clock instead of sleeping.
    ``starts`` are the start times it granted (read under its lock, so in order)."""

    def __init__(self, rpm: float):
        self.clock, self.reads = FakeClock(), []
        super().__init__(rpm, clock=self._read)

    def _read(self) -> float:
        self.reads.append(self.clock.now)
        return self.clock.now

    def acquire(self, wait=None) -> None:
        super().acquire(self.clock.sleep)

    @property
    def starts(self) -> list[float]:
        return self.reads[1::2]  # each acquire reads the clock twice: to wait, then to grant


def test_rpm_limit_holds_in_every_minute():
    """--rpm 10 with 6 requests in flight: each of the 15 requests waits its turn, 6 s apart, so
    no minute holds more than 10 (on the limiter's fake clock: the test takes no minute)."""
    with FakeServer() as server:
        co = cohere_at(server, concurrency=6, rpm=10)
        co._limiter = limiter = FakeTimeLimiter(10)
        co.generate(sample_requests(15), SamplingParams())
    assert len(server.requests) == 15 and len(limiter.starts) == 15
    assert limiter.starts == [6.0 * i for i in range(15)]
    assert max_in_window(limiter.starts, 60.0) == 10


def test_concurrency_is_the_number_of_requests_in_flight():
    """--concurrency 8 keeps 8 requests in flight (the server answers none until 8 are), never
    more; 1 sends one at a time. Counted at the server, not timed."""
    with FakeServer(gate=8) as server:
        out = cohere_at(server, concurrency=8).generate(sample_requests(16), SamplingParams())
    assert server.max_in_flight == 8 and len(out) == 16
    with FakeServer() as server:
        cohere_at(server, concurrency=1).generate(sample_requests(4), SamplingParams())
    assert server.max_in_flight == 1


def test_secret_stays_out_of_errors_reprs_and_logs(caplog):
    caplog.set_level(logging.DEBUG)
    errors = []
    for faults in (("401",), ("500", "reset", "slow", "malformed")):
        with FakeServer(fault_rate=1.0, faults=faults, slow=0.5) as server:
            co = cohere_at(server, timeout=0.2, retry=no_sleep(4))
            with pytest.raises(BackendError) as err:
                co.generate(sample_requests(2), SamplingParams())
            errors.append(err.value)
            assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in server.requests)
            assert not any(SECRET.encode() in r.raw or SECRET in r.path for r in server.requests)
    texts = [str(e) for e in errors] + [repr(e) for e in errors] + [repr(co), caplog.text]
    assert not [t for t in texts if SECRET in t]
    assert "HTTP 401" in str(errors[0])


def test_plain_http_elsewhere_warns():
    with pytest.warns(UserWarning, match="plain http"):
        CohereBackend(base_url="http://cohere-proxy.example:8080", api_key=SECRET).close()

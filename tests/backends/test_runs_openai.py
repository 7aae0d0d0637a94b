"""`uab run` against a real HTTP server that counts requests: a run directory grows to a
larger budget by drawing only the missing samples, and a signal the server cannot serve
fails before the batch is paid for."""

from __future__ import annotations

import json
import warnings

import pytest
from conftest import arithmetic, cli, read_jsonl, write_jsonl
from fakeserver import FakeServer
from typer.testing import CliRunner

from uab_cli.cli import app

pytest.importorskip("openai")
M = 12


def run(server: FakeServer, questions: str, out, budget: int, *more: str):
    args = ["run", questions, "--budget", str(budget), "--out", str(out), "--backend", "openai",
            "--base-url", f"{server.url}/v1", "--model", "fake-model", "--max-tokens", "16", "-q", *more]
    return CliRunner().invoke(app, args)


def test_growing_a_run_draws_only_the_missing_samples(tmp_path):
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    grown, fresh = tmp_path / "grown", tmp_path / "fresh"
    with FakeServer() as server:
        assert run(server, questions, grown, 2).exit_code == 0
        assert len(server.requests) == 2 * M
        small = (grown / "votes.jsonl").read_bytes()
        result = run(server, questions, grown, 4)
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 4 * M  # exactly the (4 - 2)·M missing samples
        assert run(server, questions, fresh, 4).exit_code == 0
        assert len(server.requests) == 8 * M
        assert (grown / "votes.jsonl").read_bytes() == (fresh / "votes.jsonl").read_bytes()
        # Back to N=2: no request, and the vote is over the samples a fresh N=2 run draws.
        assert run(server, questions, grown, 2).exit_code == 0
        assert len(server.requests) == 8 * M
    assert (grown / "votes.jsonl").read_bytes() == small
    votes = read_jsonl(grown / "votes.jsonl")
    assert all([s["index"] for s in r["samples"]] == list(range(len(r["samples"]))) for r in votes)
    assert sum(len(r["samples"]) for r in votes) == 2 * M


@pytest.mark.parametrize("signal", [None, "max-nll"])
def test_logprob_signal_without_logprobs_fails_after_one_request(tmp_path, signal):
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    more = ["--signal", signal] if signal else []
    with FakeServer(logprobs=False) as server:
        result = run(server, questions, tmp_path / "run", 4, *more)
        assert result.exit_code == 2, result.stderr
        assert len(server.requests) <= 1
        message = " ".join(result.stderr.split())
        assert f"signal '{signal or 'anll'}' needs token logprobs" in message
        assert "--signal vcs (with --vcs)" in message and "--signal vote-entropy (with -K 2)" in message
        assert not (tmp_path / "run").exists()  # the probe is not kept: the advice below may use the directory
        probed = len(server.requests)
        # The signals it names work against the same server.
        result = run(server, questions, tmp_path / "vcs", 4, "--vcs", "--signal", "vcs")
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == probed + 4 * M
        # An allocator that ignores the signal needs no logprobs either.
        result = run(server, questions, tmp_path / "uniform", 4, "--allocator", "uniform", *more)
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == probed + 8 * M


def test_a_rerun_whose_signal_the_stored_samples_lack_leaves_the_directory_as_it_was(tmp_path):
    """A Uniform run on a server without logprobs, rerun with --allocator uab: its allocation
    failed after the last run's votes, summary and config were replaced, and so did every plain
    resume after it. It fails before the directory changes, naming the question."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    out = tmp_path / "run"
    with FakeServer(logprobs=False) as server:
        assert run(server, questions, out, 3, "--allocator", "uniform").exit_code == 0
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        result = run(server, questions, out, 3, "--allocator", "uab")
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: {out}: question 'q0': its stored Phase-1 samples have no token "
                                        "logprobs"), result.stderr
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
        requests = len(server.requests)
        again = run(server, questions, out, 3)  # a plain resume: the Uniform run it was
        assert again.exit_code == 0, again.stderr
        assert len(server.requests) == requests and (out / "votes.jsonl").read_bytes() == before["votes.jsonl"]


def long_questions(tmp_path) -> str:
    rows = arithmetic(M)
    rows[3]["question"] = "What is " + "one " * 300 + "1 + 2?"
    return write_jsonl(tmp_path / "q.jsonl", rows)


def test_a_server_that_reports_its_context_gets_no_prompt_that_cannot_fit(tmp_path):
    """vLLM's /v1/models reports max_model_len and /tokenize counts: the too-long question is
    an input error before any sample is drawn."""
    questions = long_questions(tmp_path)
    with FakeServer(max_model_len=200) as server:
        result = run(server, questions, tmp_path / "r", 2)
        assert result.exit_code == 2, result.stderr
        assert "question 'q3': its prompt has" in result.stderr and "context of 200 tokens" in result.stderr
        assert {r.path for r in server.requests} == {"/tokenize"}  # counted, nothing sampled
        skipped = run(server, questions, tmp_path / "s", 2, "--too-long", "skip")
        assert skipped.exit_code == 0, skipped.stderr
    assert [r["id"] for r in read_jsonl(tmp_path / "s" / "votes.jsonl")] == [f"q{i}" for i in range(M) if i != 3]


@pytest.mark.filterwarnings("default::UserWarning")  # the CLI shows it as a warning line
def test_a_server_that_cannot_count_fails_on_its_own_error_once(tmp_path):
    """Without /tokenize the prompt is not checked up front: the server's 400 is not retried,
    stops the run with exit 1 and is never recorded as an answer."""
    questions = long_questions(tmp_path)
    with FakeServer(max_model_len=200, tokenize=False) as server:
        result = run(server, questions, tmp_path / "r", 2, "--concurrency", "1")
        sent = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert result.exit_code == 1 and "maximum context length is 200 tokens" in result.stderr, result.stderr
    assert "server cannot count prompt tokens" in result.stderr
    assert len(sent) == 4  # q0..q2 answered, q3 refused once and not retried
    kept = read_jsonl(tmp_path / "r" / "samples.ckpt.jsonl")
    assert sorted(row["id"] for row in kept) == ["q0", "q1", "q2"]


def _paths(server: FakeServer) -> list[str]:
    return [r.path.rsplit("/v1", 1)[1] for r in server.requests]


def test_the_endpoint_is_recorded_kept_by_phase2_and_checked_on_a_rerun(tmp_path):
    """--endpoint changes what a sample is: Phase 2 draws through Phase 1's, a rerun of a run
    directory keeps it, and a rerun that gives another is refused before a request."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    p1, alloc, p2 = (str(tmp_path / f"{n}.jsonl") for n in ("p1", "alloc", "p2"))
    with FakeServer() as server:
        url = ["--base-url", f"{server.url}/v1"]
        result = cli(["phase1", questions, "-o", p1, "--backend", "openai", "--model", "fake-model", *url,
                      "--endpoint", "completions", "--max-tokens", "16", "-q"])
        assert result.exit_code == 0, result.stderr
        assert read_jsonl(p1)[0]["uab"]["phase1"]["backend_options"] == {"endpoint": "completions", "tokenizer": None}
        assert cli(["allocate", p1, "-o", alloc, "--budget", "3", "-q"]).exit_code == 0
        result = cli(["phase2", alloc, "-o", p2, *url, "-q"])  # no --endpoint: Phase 1's
        assert result.exit_code == 0, result.stderr
        assert set(_paths(server)) == {"/completions"} and len(server.requests) == 3 * M
        assert read_jsonl(p2)[0]["uab"]["phase2"]["backend_options"]["endpoint"] == "completions"

        out = tmp_path / "run"
        assert run(server, questions, out, 2, "--endpoint", "completions").exit_code == 0
        before = len(server.requests)
        result = run(server, questions, out, 3)  # the recorded endpoint, not the default chat
        assert result.exit_code == 0, result.stderr
        assert set(_paths(server)[before:]) == {"/completions"} and len(server.requests) == before + M
        result = run(server, questions, out, 3, "--endpoint", "chat")
        assert result.exit_code == 2
        assert "--endpoint (completions → chat)" in " ".join(result.stderr.split())
        assert len(server.requests) == before + M


def test_a_run_directory_from_before_backend_options_were_recorded_takes_any(tmp_path):
    """A config without ``backend_options`` (older uab) cannot say which endpoint drew its
    samples: a rerun with either is not refused, and records the one it used from then on."""
    import orjson

    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    out = tmp_path / "run"
    with FakeServer() as server:
        assert run(server, questions, out, 2).exit_code == 0
        config = orjson.loads((out / "config.json").read_bytes())
        assert config["generation"]["backend_options"] == {"endpoint": "chat", "tokenizer": None}
        del config["generation"]["backend_options"]
        (out / "config.json").write_bytes(orjson.dumps(config))
        rows = [orjson.loads(line) for line in (out / "phase1.jsonl").read_bytes().splitlines()]
        for row in rows:  # as that uab wrote its provenance too
            del row["uab"]["phase1"]["backend_options"]
        (out / "phase1.jsonl").write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
        result = run(server, questions, out, 2, "--endpoint", "completions")
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 2 * M  # nothing drawn again
    config = orjson.loads((out / "config.json").read_bytes())
    assert config["generation"]["backend_options"]["endpoint"] == "completions"


def dropping_logprobs(*replies: int):
    """A ``FakeServer.rewrite`` that drops the logprobs of the replies numbered ``replies`` (from 1)."""
    seen = []

    def rewrite(reply: dict) -> dict:
        seen.append(1)
        if len(seen) in replies:
            reply["choices"][0]["logprobs"] = None
        return reply
    return rewrite


def test_a_reply_that_drops_its_logprobs_mid_run_is_drawn_again(tmp_path):
    """Once the probe showed the server sends logprobs, a reply without them is malformed: kept,
    it would leave a question without a signal (and every rerun stuck on it)."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    with FakeServer(rewrite=dropping_logprobs(3, 2 * M)) as server:  # one in Phase 1, one in Phase 2
        result = run(server, questions, tmp_path / "r", 4, "--retries", "3")
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 4 * M + 2
    votes = read_jsonl(tmp_path / "r" / "votes.jsonl")
    assert sum(len(r["samples"]) for r in votes) == 4 * M
    assert all(s["anll"] is not None for r in votes for s in r["samples"])


def test_a_reply_that_drops_its_logprobs_in_a_piped_phase1_is_drawn_again(tmp_path):
    """`uab phase1` in a pipe does not know allocate's signal: a reply without logprobs where the
    others have them is drawn again (kept, it left its question without a signal, `allocate`
    refused it, and a rerun of phase1 kept it)."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    p1 = str(tmp_path / "p1.jsonl")
    with FakeServer(rewrite=dropping_logprobs(3)) as server:
        result = cli(["phase1", questions, "-o", p1, "--backend", "openai", "--base-url", f"{server.url}/v1",
                      "--model", "fake-model", "--max-tokens", "16", "-q"])
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == M + 1
    records = read_jsonl(p1)
    assert all([s["index"] for s in r["samples"]] == [0] and r["samples"][0]["anll"] is not None for r in records)
    result = cli(["allocate", p1, "-N", "3", "-q"])
    assert result.exit_code == 0, result.stderr


def test_a_piped_phase1_against_a_server_without_logprobs_draws_each_sample_once(tmp_path):
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    p1 = str(tmp_path / "p1.jsonl")
    with FakeServer(logprobs=False) as server:
        result = cli(["phase1", questions, "-o", p1, "--backend", "openai", "--base-url", f"{server.url}/v1",
                      "--model", "fake-model", "--max-tokens", "16", "-q"])
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == M
    assert all(s["anll"] is None for r in read_jsonl(p1) for s in r["samples"])


def test_a_uniform_run_keeps_the_sample_drawn_again_for_its_logprobs_on_a_rerun(tmp_path):
    """Uniform needs no signal, yet a reply that lost its logprobs is drawn again (the confidence
    vote rules and a later allocator read them): the checkpoint's later line, the redrawn sample,
    is the one a rerun restores (it restored the first, without logprobs)."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    with FakeServer(rewrite=dropping_logprobs(3)) as server:
        assert run(server, questions, tmp_path / "r", 2, "--allocator", "uniform").exit_code == 0
        assert len(server.requests) == 2 * M + 1
        result = run(server, questions, tmp_path / "r", 2, "--allocator", "uniform")
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 2 * M + 1  # nothing drawn again
    votes = read_jsonl(tmp_path / "r" / "votes.jsonl")
    assert all(s["anll"] is not None for r in votes for s in r["samples"])


def test_a_sample_drawn_again_for_its_logprobs_counts_once_in_the_summary(tmp_path):
    """The reply that lost its logprobs is replaced, not kept: the summary's drawn samples are the
    ones the stage files hold (it said 2·M + 1 drawn now and -1 reused)."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    with FakeServer(rewrite=dropping_logprobs(3)) as server:
        assert run(server, questions, tmp_path / "r", 2, "--allocator", "uniform").exit_code == 0
        assert len(server.requests) == 2 * M + 1
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    for part in (summary["stages"]["phase1"], summary["stages"]["phase2"], summary["total"]):
        assert part["drawn"] == {k: part[k] for k in ("samples", "prompt_tokens", "completion_tokens")}
        assert part["reused"] == {"samples": 0, "prompt_tokens": 0, "completion_tokens": 0}
    assert summary["total"]["drawn"]["samples"] == 2 * M


def test_a_server_that_reports_no_usage_leaves_the_summarys_counts_and_cost_unknown(tmp_path):
    """No usage and no logprobs: each sample's tokens are unknown, so are the sums and the money
    (the summary said 0 completion tokens, priced at nothing)."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(M))
    with FakeServer(logprobs=False, rewrite=lambda reply: {**reply, "usage": None}) as server:
        result = run(server, questions, tmp_path / "r", 2, "--allocator", "uniform", "--price", "1,2")
    assert result.exit_code == 0, result.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["total"]["completion_tokens"] is None and summary["total"]["samples"] == 2 * M
    assert summary["cost"] == {"samples": None, "drawn": None}
    assert all(s["n_tokens"] is None for r in read_jsonl(tmp_path / "r" / "votes.jsonl") for s in r["samples"])


def _thinking_judge(body: dict) -> dict:
    """A reasoning model behind the server: the judge's reply thinks for 20 tokens before its verdict,
    cut at the request's max_tokens; an answer is plain."""
    if "easy or hard" not in body["messages"][-1]["content"]:
        return {"content": "Answer: 3"}
    words = ["<think>", *["hmm"] * 20, "</think>", "easy"]
    said = words[:body["max_tokens"]]
    return {"content": " ".join(said), "finish_reason": "length" if len(said) < len(words) else "stop"}


def _filtered_on_q1(body: dict) -> dict:
    """Question 1's replies are cut by the content filter (Azure: the partial text comes with it)."""
    if "What is 1 + 3?" in body["messages"][-1]["content"]:
        return {"content": "The answer is 4", "finish_reason": "content_filter"}
    return {"content": "Answer: 3"}


def test_content_filtered_samples_count_in_the_budget_never_vote_and_are_said_once(tmp_path):
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "run"
    with FakeServer(script=_filtered_on_q1) as server:
        result = run(server, questions, out, 2, "--allocator", "uniform", "--signal", "vote-entropy", "-K", "2")
    assert result.exit_code == 0, result.stderr
    result = cli(["vote", str(out / "votes.jsonl"), "-o", str(tmp_path / "votes.jsonl")])
    said = " ".join(result.stderr.split())
    assert said.count("content filter") == 1 and "content filter: 2 of 6 samples" in said, said
    votes = {r["id"]: r for r in read_jsonl(out / "votes.jsonl")}
    assert [s["answer"] for s in votes["q1"]["samples"]] == [None, None] and votes["q1"]["prediction"] is None
    assert {s["finish_reason"] for s in votes["q1"]["samples"]} == {"content_filter"}
    assert sum(len(r["samples"]) for r in votes.values()) == 6  # N·M: the filtered ones drawn
    assert json.loads((out / "summary.json").read_text())["filtered"] == 2
    regraded = tmp_path / "regraded.jsonl"
    assert cli(["regrade", str(out / "votes.jsonl"), "-o", str(regraded)]).exit_code == 0
    assert [s["answer"] for s in {r["id"]: r for r in read_jsonl(regraded)}["q1"]["samples"]] == [None, None]


def _withheld(filtered) -> tuple:
    """A server whose content filter withholds the replies ``filtered(body)`` picks: their content
    null, their ``logprobs`` null (OpenAI and Azure send none for withheld content); the others
    answer 3 with logprobs. A ``FakeServer``'s ``script`` and ``rewrite``."""
    def script(body: dict) -> dict:
        return {"content": None, "finish_reason": "content_filter"} if filtered(body) else {"content": "Answer: 3"}

    def rewrite(reply: dict) -> dict:
        choice = reply["choices"][0]
        if choice["finish_reason"] == "content_filter":
            choice["logprobs"] = None
        return reply
    return script, rewrite


@pytest.mark.parametrize("question", ["What is 1 + 3?", "What is 0 + 1?"])  # q1's; q0's, the probe's
def test_a_phase1_reply_withheld_without_logprobs_under_anll_counts_as_unsure(tmp_path, question):
    """Under ANLL (the default) a withheld reply, which comes without logprobs, was retried as
    malformed ('no token logprobs') until the run failed (exit 1), and as the first reply it made
    the probe say the server returns no logprobs (exit 2). It is a sample without a statistic:
    its question, with no other Phase-1 sample, counts as p = 0.5 (as vcs counts a question
    without a confidence), said once and counted in summary.json's `unscored`."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "run"
    script, rewrite = _withheld(lambda body: question in body["messages"][-1]["content"])
    with FakeServer(script=script, rewrite=rewrite) as server:
        result = cli(["run", questions, "--budget", "2", "--out", str(out), "--backend", "openai",
                      "--base-url", f"{server.url}/v1", "--model", "fake-model", "--max-tokens", "16"])
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 2 * 3  # N·M: nothing drawn again
    said = " ".join(result.stderr.split())
    assert "1 question(s) whose Phase-1 replies the service's content filter withheld or cut counted as p = 0.5" in said
    assert "confidence score" not in said and "no token logprobs" not in said
    votes = {r["id"]: r for r in read_jsonl(out / "votes.jsonl")}
    withheld = next(r for r in votes.values() if question in r["question"])
    assert withheld["p"] == 0.5 and withheld["samples"][0]["anll"] is None
    assert all(s["finish_reason"] == "content_filter" for s in withheld["samples"])
    assert all(r["p"] < 0.5 for r in votes.values() if r is not withheld)
    assert sum(len(r["samples"]) for r in votes.values()) == 2 * 3
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["unscored"], summary["filtered"]) == (1, len(withheld["samples"]))
    # the probe q0 drew was withheld: q1's drawn alone too (was counted 1)
    assert summary["stages"]["phase1"]["probes"] == (2 if question == "What is 0 + 1?" else 1)



def test_a_run_holding_a_phase1_reply_withheld_reruns_and_grows(tmp_path):
    """A rerun of a run under ANLL whose Phase-1 reply was withheld (no logprobs, by nature) was
    refused (exit 2: 'its stored Phase-1 samples have no token logprobs (the backend returned
    none)'), a plain resume and a larger budget alike. It reuses the sample, and counts it unsure."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "run"
    script, rewrite = _withheld(lambda body: "What is 1 + 3?" in body["messages"][-1]["content"])
    with FakeServer(script=script, rewrite=rewrite) as server:
        assert run(server, questions, out, 2).exit_code == 0
        for budget, drawn in ((2, 2 * 3), (3, 3 * 3)):  # the same run again, then a larger budget
            result = run(server, questions, out, budget)
            assert result.exit_code == 0, result.stderr
            assert len(server.requests) == drawn  # only the samples the directory lacks
    assert json.loads((out / "summary.json").read_text())["unscored"] == 1
    assert {r["id"]: r["p"] for r in read_jsonl(out / "votes.jsonl")}["q1"] == 0.5

def test_a_piped_phase1_keeps_a_reply_withheld_without_logprobs_and_allocate_counts_it_unsure(tmp_path):
    """A piped Phase 1 drew again, with logprobs, a reply that came without them where others have
    them: a withheld one again and again, until it failed (exit 1). It is kept, drawn once."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    p1 = str(tmp_path / "p1.jsonl")
    script, rewrite = _withheld(lambda body: "What is 1 + 3?" in body["messages"][-1]["content"])
    with FakeServer(script=script, rewrite=rewrite) as server:
        result = cli(["phase1", questions, "-o", p1, "--backend", "openai", "--base-url", f"{server.url}/v1",
                      "--model", "fake-model", "--max-tokens", "16", "-q", "--retries", "2"])
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 3
    result = cli(["allocate", p1, "-N", "3", "-o", str(tmp_path / "a.jsonl")])
    assert result.exit_code == 0, result.stderr
    assert "1 question(s) whose Phase-1 replies the service's content filter withheld or cut counted as p = 0.5" in \
        " ".join(result.stderr.split())
    assert [r["p"] == 0.5 for r in read_jsonl(tmp_path / "a.jsonl")] == [False, True, False]


def test_a_question_with_a_phase1_reply_withheld_is_scored_from_the_others(tmp_path):
    """-K 2 under ANLL: the mean of the samples the filter let through (it was missing for the
    question, a failed run), and every Phase-2 reply withheld, without logprobs, is a sample."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "run"
    asked: list[int] = []

    def filtered(body: dict) -> bool:  # the second request, and every one after Phase 1's six
        asked.append(1)
        return len(asked) == 2 or len(asked) > 6

    script, rewrite = _withheld(filtered)
    with FakeServer(script=script, rewrite=rewrite) as server:
        result = run(server, questions, out, 4, "-K", "2", "--concurrency", "1")
        assert result.exit_code == 0, result.stderr
        assert len(server.requests) == 4 * 3
    votes = read_jsonl(out / "votes.jsonl")
    assert sum(len(r["samples"]) for r in votes) == 4 * 3
    assert {r["p"] for r in votes} == {votes[0]["p"]} and votes[0]["p"] < 0.5  # each scored from its scored one
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["unscored"], summary["filtered"]) == (0, 1 + 6)
    assert all(s["anll"] is None for r in votes for s in r["samples"] if s["finish_reason"] == "content_filter")


def test_the_judge_is_asked_at_the_runs_temperature_and_top_p(tmp_path):
    """The judge (the sampling model itself) was asked at --temperature but at top-p 1.0 whatever
    --top-p said, which the run's provenance records for every call of the model."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    with FakeServer(script=_thinking_judge) as server:
        result = run(server, questions, tmp_path / "run", 2, "--allocator", "judge", "--judge-max-tokens", "64",
                     "--temperature", "0.6", "--top-p", "0.9")
        assert result.exit_code == 0, result.stderr
        bodies = [r.body for r in server.requests]
    assert sum("easy or hard" in b["messages"][-1]["content"] for b in bodies) == 4
    assert {(b["temperature"], b["top_p"]) for b in bodies} == {(0.6, 0.9)}


def test_a_reasoning_judge_behind_a_server_is_told_cut_and_given_room(tmp_path):
    """The judge was always asked for 8 tokens: a reasoning model behind the server was cut while
    thinking on every question (all hard, an even split) with no warning; --judge-max-tokens asks
    it with room, and a rerun with another cap asks the judge again."""
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    out = tmp_path / "run"
    judged = lambda server: [r.body["max_tokens"] for r in server.requests  # noqa: E731
                             if "easy or hard" in r.body["messages"][-1]["content"]]
    with FakeServer(script=_thinking_judge) as server:
        with warnings.catch_warnings():  # uab prints them (a test's warning is otherwise an error)
            warnings.simplefilter("always")
            result = run(server, questions, out, 2, "--allocator", "judge")
        assert result.exit_code == 0, result.stderr
        assert judged(server) == [8] * 4
        said = " ".join(result.stderr.split())
        assert said.count("warning:") == 1 and "cap before a verdict for 4 of 4 questions" in said
        assert "--judge-max-tokens" in said
        result = run(server, questions, out, 2, "--allocator", "judge", "--judge-max-tokens", "4096")
        assert result.exit_code == 0, result.stderr
        assert judged(server) == [8] * 4 + [4096] * 4 and "warning" not in result.stderr
    assert {r["judge"] for r in read_jsonl(out / "votes.jsonl")} == {"easy"}
    assert json.loads((out / "judge.json").read_text())["max_tokens"] == 4096

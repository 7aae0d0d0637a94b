"""The budget contract and provenance: samples drawn (plus those a skip exit saves) equal N·M
for every allocator, through the registry and through phase1 → allocate → phase2 → vote and a
reallocation (Hypothesis); through the CLI, `uab run` (fresh, grown, shrunk, resumed after a
backend failure) against the stage pipe, and `simulate`'s replay against `allocate` (Hypothesis; the
heavier variant is marked slow); and the edges where a run used to break it or record it wrongly."""

from __future__ import annotations

import copy
import json
import os
import tempfile
from pathlib import Path

import numpy as np
import orjson
import pytest
from conftest import FakeBackend, arithmetic, cli, read_jsonl, write_jsonl
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from uab_cli import allocators, evaluation, pipeline, voting
from uab_cli.backends.remote import make_completion
from uab_cli.backends.scripted import ScriptedBackend
from uab_cli.errors import UabError
from uab_cli.pools import Pool
from uab_cli.settings import Allocation, Generation, Vote

P = st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.5, 1e-300, 1 - 1e-16, 5e-324]))

RUNNABLE = [n for n in allocators.ALLOCATORS if n not in allocators.ROUNDS and n != "oracle"]


@st.composite
def jobs(draw):
    m = draw(st.integers(1, 8))
    p = np.array(draw(st.lists(P, min_size=m, max_size=m)))
    budget = draw(st.integers(0, 40))
    capped = draw(st.booleans())
    cap = np.array(draw(st.lists(st.integers(0, 12), min_size=m, max_size=m))) if capped else None
    hard = np.array(draw(st.lists(st.booleans(), min_size=m, max_size=m)))
    lengths = np.array(draw(st.lists(st.integers(0, 50), min_size=m, max_size=m)), dtype=float)
    k1 = draw(st.integers(1, 3))
    return allocators.Job(p, budget, cap, draw(st.integers(0, 5)), lengths, hard, k1=k1,
                          vote_model=draw(st.sampled_from(["plurality-2", "scatter"])))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=jobs(), name=st.sampled_from(RUNNABLE))
def test_every_allocator_spends_exactly_within_caps(job, name):
    if job.cap is not None and job.cap.sum() < job.budget:
        try:
            extra, saved = allocators.call(name, job)
        except UabError:
            return
        # a forfeit exit spends only the staying questions' shares: those may fit
        assert name.endswith("-forfeit"), "a budget the caps cannot hold was accepted"
        assert int(extra.sum()) + saved == job.budget and (extra <= job.cap).all()
        return
    extra, saved = allocators.call(name, job)
    assert extra.shape == job.p.shape
    assert (extra >= 0).all()
    if job.cap is not None:
        assert (extra <= job.cap).all(), (extra, job.cap)
    assert int(extra.sum()) + saved == job.budget
    assert saved >= 0
    if not name.endswith(("-skip", "-forfeit")):  # the exits that leave their share unspent
        assert saved == 0


@settings(max_examples=150, deadline=None)
@given(m=st.integers(1, 6), budget=st.integers(0, 30), seed=st.integers(0, 3), data=st.data())
def test_adaptive_spends_exactly(m, budget, seed, data):
    margins = np.array(data.draw(st.lists(st.integers(-1, 3), min_size=m, max_size=m)))
    cap = data.draw(st.one_of(st.none(), st.lists(st.integers(0, 12), min_size=m, max_size=m).map(np.array)))
    assume(cap is None or cap.sum() >= budget)
    job = allocators.Job(np.zeros(m), budget, cap, seed, np.ones(m), np.zeros(m, bool), k1=2,
                         margins=lambda n: np.maximum(margins - (n - 2) % 2, -1))
    extra, saved = allocators.call("adaptive", job)
    assert int(extra.sum()) == budget and saved == 0
    if cap is not None:
        assert (extra <= cap).all()


# --- through the pipeline, on records: phase1 -> allocate -> phase2 -> vote, then reallocated ---

GEN = Generation.build(None, backend="scripted", model="scripted", max_tokens=9)
ALLOCATIONS = [
    {"allocator": "uab"}, {"allocator": "uab-coverage"}, {"allocator": "uniform"}, {"allocator": "random", "seed": 3},
    {"allocator": "length"}, {"allocator": "majority"}, {"allocator": "majority", "vote_model": "scatter"},
    {"allocator": "uab", "exit": "hard"}, {"allocator": "uab", "exit": "easy", "exit_mode": "skip"},
    {"allocator": "uab-exit-hard-skip"}, {"allocator": "judge"}, {"allocator": "uab", "signal": "vote-entropy"},
    {"allocator": "uab", "signal": "max-nll", "temperature": 5.0},
]
RULES = [Vote(), Vote(rule="weighted", signal="anll"), Vote(rule="filtered", signal="anll", keep=0.3),
         Vote(rule="confident-ties", signal="anll"), Vote(rule="most-confident", signal="anll"),
         Vote(include_phase1=False), Vote(include_phase1=False, rule="weighted", signal="anll")]


def _phase1(m: int, k: int) -> list[dict]:
    recs = [{"id": f"q{i}", "question": f"What is {i} + {2 * i + 1}?", "answer": str(3 * i + 1),
             "judge": "hard" if i % 3 else "easy"} for i in range(m)]
    pipeline.phase1(recs, ScriptedBackend(), GEN, k)
    return recs


_PHASE1 = {}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 6), k=st.integers(1, 2), data=st.data())
def test_pipeline_budget_contract_and_reallocation(m, k, data):
    recs = copy.deepcopy(_PHASE1.setdefault((m, k), _phase1(m, k)))
    for _ in range(2):  # allocate, draw, vote; then allocate the drawn records again, at another N
        opts = data.draw(st.sampled_from(ALLOCATIONS))
        if opts.get("signal") == "vote-entropy" and k < 2:
            continue
        n = data.draw(st.integers(k, k + 5))
        cap = data.draw(st.one_of(st.none(), st.integers(k, k + 6)))
        if cap is not None and cap < n:
            cap = None
        alloc = Allocation(n=n, max_per_question=cap, **opts)
        summary = pipeline.allocate(recs, alloc)
        assert summary.phase1 + summary.phase2 + summary.saved == n * m
        pipeline.phase2(recs, ScriptedBackend(), GEN)
        rule = data.draw(st.sampled_from(RULES))
        tally = pipeline.VoteSummary(rule=rule)
        for rec in recs:
            tally.add(pipeline.vote(rec, rule))
            assert rec["uab"]["allocate"]["n"] == n and rec["uab"]["vote"]["rule"] == rule.rule
            if cap is not None:
                assert len(pipeline.voted_samples(rec)) <= cap
        # --exclude-phase1 votes the Phase-1 samples of a question that holds no Phase-2 sample
        counted = tally.samples + (k * (m - tally.phase1_only) if not rule.include_phase1 else 0)
        assert counted + summary.saved == n * m, (counted, summary.saved, n, m)


# --- edges found by an audit: each test failed on the code before its fix ---


def test_exclude_phase1_votes_the_phase1_sample_of_a_question_without_phase2_samples():
    """--exclude-phase1 (the paper's "w/o Phase-1 vote" ablation) votes a question that got no
    Phase-2 sample by its Phase-1 sample, as the paper's code (src/main.py) did: it was left with
    no answer and graded wrong, every confident question UAB gives nothing (a confidence rule
    crashed on it before that: numpy's zero-size array to reduction operation minimum)."""
    rec = {"id": "q0", "question": "What is 1 + 1?", "answer": "2", "extra": 0,
           "samples": [{"index": 0, "phase": 1, "text": "Answer: 2", "answer": "2", "anll": 0.1}]}
    for rule in ("majority", "confident-ties", "weighted", "filtered", "most-confident"):
        signal = None if rule == "majority" else "anll"
        out = pipeline.vote(dict(rec), Vote(include_phase1=False, rule=rule, signal=signal))
        assert out["prediction"] == "2" and out["correct"] is True
    two = dict(rec, extra=1, samples=[*rec["samples"], {"index": 1, "phase": 2, "text": "Answer: 3", "answer": "3"}])
    assert pipeline.vote(two, Vote(include_phase1=False))["prediction"] == "3"  # Phase 2's alone where it has any


def test_an_infeasible_max_per_question_is_refused_before_the_run_directory_changes(tmp_path, fake_backend):
    fake_backend.in_cli()
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    out = str(tmp_path / "r")
    assert cli(["run", q, "-N", "4", "-o", out, "-q", "--backend", "scripted"]).exit_code == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "r").iterdir() if p.is_file()}
    bad = cli(["run", q, "-N", "4", "--max-per-question", "2", "-o", out, "-q", "--backend", "scripted"])
    assert bad.exit_code == 2 and "--max-per-question" in bad.output
    after = {p.name: p.read_bytes() for p in (tmp_path / "r").iterdir() if p.is_file()}
    assert after == before  # votes.jsonl and summary.json kept, config.json not rewritten
    assert cli(["run", q, "-o", out, "-q", "--backend", "scripted"]).exit_code == 0  # resumes the run it was


class _EmptyReply(ScriptedBackend):
    """Logprobs on every reply, but one question's replies are empty (0 tokens, finish stop)."""

    def complete(self, req, params):
        if "1 + 3" in req.messages[-1]["content"]:
            return make_completion("", [], None, "stop")
        return super().complete(req, params)


def test_an_empty_reply_from_a_backend_with_logprobs_does_not_stop_the_allocation():
    records = arithmetic(3)
    pipeline.phase1(records, _EmptyReply(), GEN, 1, signal="anll")
    summary = pipeline.allocate(records, Allocation(n=3))
    assert summary.phase1 + summary.phase2 == 9


def test_phase1_records_the_phase1_samples_a_record_holds():
    records = arithmetic(2)
    pipeline.phase1(records, ScriptedBackend(), GEN, 2)
    pipeline.phase1(records, ScriptedBackend(), GEN, 1)  # asks for 1; each record holds 2
    assert all(r["uab"]["phase1"]["k"] == len(r["samples"]) == 2 for r in records)


def test_phase1_refuses_records_that_hold_phase2_samples():
    records = arithmetic(2)
    pipeline.phase1(records, ScriptedBackend(), GEN, 1)
    pipeline.allocate(records, Allocation(n=3))
    pipeline.phase2(records, ScriptedBackend(), GEN)
    with pytest.raises(UabError, match="already holds Phase-2 samples"):  # index 1 is a Phase-2 sample
        pipeline.phase1(records, ScriptedBackend(), GEN, 2)


def _uneven_pool(tmp_path):
    rows = []
    for i in range(12):
        k = 2 if i == 0 else 8
        rows.append({"id": f"q{i}", "question": f"What is {i} + 1?", "answer": str(i + 1),
                     "samples": [{"index": j, "phase": 1, "text": "x", "answer": str(i + 1 + j % 2),
                                  "anll": 0.05 * j, "n_tokens": 3, "finish_reason": "stop"} for j in range(k)]})
    return write_jsonl(tmp_path / "pool.jsonl", rows)


def test_a_recommendation_from_an_uneven_pool_runs(tmp_path, fake_backend):
    """A pool whose questions hold 2 and 8 samples, replayed at N = 4: Uniform is capped by the
    small question's pool; its recommendation must not carry a cap no run at N = 4 can meet."""
    fake_backend.in_cli()
    pool = _uneven_pool(tmp_path)
    res = str(tmp_path / "res.jsonl")
    assert cli(["simulate", pool, "--budgets", "4", "--seeds", "2", "--allocators", "uniform", "--vote-rules", "majority", "-o", res,
                "-q"]).exit_code == 0
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(5))
    result = cli(["run", q, "--budget", "4", "--backend", "scripted", "--settings", res, "-o", str(tmp_path / "r"), "-q"])
    assert result.exit_code == 0, result.output


def test_simulate_check_rows_record_the_vote_settings_they_replayed(tmp_path):
    rows = []
    for i in range(10):
        rows.append({"id": f"q{i}", "question": f"What is {i}?", "answer": "1",
                     "samples": [{"index": j, "phase": 1, "text": "x", "answer": str(1 + (i + j) % 2),
                                  "anll": 0.1 * j, "n_tokens": 3, "finish_reason": "stop"} for j in range(4)]})
    settings = {"allocator": "uab", "signal": "anll", "signal_temperature": 0.2, "vote_rule": "filtered",
                "vote_keep": 0.3, "vote_temperature": 0.5, "vote_signal": "anll"}
    rec = {"N": 2, "allocator": "uab", "signal": "anll", "T": 0.2, "vote_rule": "filtered", "gain": 0.0,
           "se": 0.0, "settings": settings}
    checks = [r["check"] for r in evaluation.check(rows, [rec], seeds=2) if "check" in r]
    assert json.loads(orjson.dumps(checks))[0]["settings"]["vote_keep"] == 0.3


# --- the whole CLI, fuzzed: `uab run` (fresh, resumed after a crash, grown, shrunk, reallocated) against
# the stage pipe, and `simulate`'s replay against `allocate` on the same Phase-1 records ---

CLI_ALLOCATORS = [*allocators.runnable()]
CLI_SIGNALS = ["anll", "total-nll", "max-nll", "nll-var", "vcs", "vcs-pow", "vote-entropy"]


@st.composite
def cli_cases(draw):
    """A question set (identical texts and questions too long for the context among them) and the
    options of one `uab run`: generation, -K, allocation and vote."""
    m = draw(st.integers(1, 7))
    texts = [f"What is {a} + {b}?" for a, b in draw(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)),
                                                              min_size=m, max_size=m))]
    texts = [texts[draw(st.integers(0, i))] if draw(st.booleans()) else t for i, t in enumerate(texts)]  # repeats
    skip = draw(st.booleans())
    long = [skip and draw(st.integers(0, 3)) == 0 for _ in range(m)]
    rows = [{"id": f"q{i}", "question": t + " pad" * 400 * lg, "answer": str(eval(t[8:-1]))}
            for i, (t, lg) in enumerate(zip(texts, long))]
    if all(long):
        rows.append({"id": "fits", "question": "What is 2 + 2?", "answer": "4"})
    vcs = draw(st.booleans())
    gen = ["--backend", "scripted", "--max-tokens", str(draw(st.sampled_from([5, 9, 12]))),
           "--seed", str(draw(st.integers(0, 3))), *(["--vcs"] if vcs else []),
           *(["--too-long", "skip", "--max-model-len", "300"] if skip else [])]
    name = draw(st.sampled_from(CLI_ALLOCATORS))
    alloc = ["--allocator", name]
    signal = None
    if name not in allocators.SIGNAL_FREE and draw(st.booleans()):
        signal = draw(st.sampled_from(CLI_SIGNALS if vcs else [s for s in CLI_SIGNALS if not s.startswith("vcs")]))
        alloc += ["--signal", signal, "-T", str(draw(st.sampled_from([0.1, 0.2, 2.0])))]
    k = draw(st.integers(2 if name == "adaptive" or signal == "vote-entropy" else 1, 3))
    if name == "uab":
        alloc += ["--gain", draw(st.sampled_from(["algorithm1", "coverage"]))]
        if draw(st.booleans()):
            alloc += ["--exit", draw(st.sampled_from(["hard", "easy"])), "--exit-mode",
                      draw(st.sampled_from(["redistribute", "skip", "forfeit"])),
                      "--exit-threshold", str(draw(st.sampled_from([0.0, 0.3, 0.6, 1.0])))]
    if name == "majority":
        alloc += ["--vote-model", draw(st.sampled_from(["plurality-2", "scatter"]))]
    if name in allocators.SEEDED:
        alloc += ["--allocation-seed", str(draw(st.integers(0, 5)))]
    n = draw(st.integers(k, 6))
    cap = draw(st.one_of(st.none(), st.integers(n, n + 3)))
    alloc += ["--max-per-question", str(cap)] if cap else []
    rule = draw(st.sampled_from(list(voting.RULES)))
    vote = ["--vote-rule", rule, *(["--exclude-phase1"] if draw(st.booleans()) else []),
            *(["--tie-seed", str(draw(st.integers(0, 3)))] if rule == "majority" and draw(st.booleans()) else [])]
    return rows, gen, k, n, cap, alloc, vote


def _voted(path) -> list[tuple]:
    """What an allocation and its vote decided, per question."""
    return [(r["id"], r["p"], r["extra"], r["prediction"], r["votes"]) for r in read_jsonl(path)]


def _check_outputs(path, n: int, fits: int, k: int, allocator: str, rule: str, generation: dict) -> int:
    """The budget contract and the provenance of a votes file; returns the samples it saved."""
    votes = read_jsonl(path)
    saved = votes[0]["uab"]["allocate"]["saved"]
    assert len(votes) == fits and sum(len(r["samples"]) for r in votes) + saved == n * fits
    for rec in votes:
        about = rec["uab"]
        for stage in ("phase1", "phase2"):
            assert {key: about[stage][key] for key in generation} == generation, stage
        assert about["phase1"]["k"] == k and about["allocate"]["saved"] == saved
        assert (about["allocate"]["n"], about["allocate"]["allocator"], about["vote"]["rule"]) == (n, allocator, rule)
        assert [s["index"] for s in rec["samples"]] == list(range(k + rec["extra"]))
    return saved


def _run_and_pipe(case, tmp: Path, fake, heavy: bool) -> None:
    rows, gen, k, n, cap, alloc, vote = case
    q = write_jsonl(tmp / "q.jsonl", rows)
    fits = sum(len(r["question"]) < 100 for r in rows)
    judged = fits if alloc[1] in allocators.NEEDS_JUDGE else 0  # the judge's calls: apart from the budget
    run_judged = judged if n > k else 0  # `run` asks no judge when N = K: nothing to allocate (`phase1 --judge` does)
    run_dir = str(tmp / "run")

    def run(out, budget, *more, drawn=None):
        before = fake.drawn
        result = cli(["run", q, "-N", str(budget), "-o", out, "-q", *gen, "-K", str(k), *alloc, *vote, *more])
        assert result.exit_code == 0, result.output
        if drawn is not None:
            assert fake.drawn - before == drawn
        return os.path.join(out, "votes.jsonl")

    run(run_dir, n)
    summary = json.loads((tmp / "run" / "summary.json").read_text())
    generation = {key: summary["uab"]["generation"][key] for key in ("backend", "model", "seed", "temperature")}
    assert generation == {"backend": "scripted", "model": "scripted", "seed": int(gen[gen.index("--seed") + 1]),
                          "temperature": 0.9}
    saved = _check_outputs(tmp / "run" / "votes.jsonl", n, fits, k, alloc[1], vote[1], generation)
    assert fake.drawn == n * fits - saved + run_judged == summary["total"]["samples"] + run_judged
    votes = _voted(tmp / "run" / "votes.jsonl")

    if alloc[1] not in allocators.ROUNDS:  # the same seed through the stage pipe: the same allocation and votes
        before = fake.drawn
        stages = [["phase1", q, *gen, "-K", str(k), *(["--judge"] if judged else [])], ["allocate", "-", "-N", str(n),
                  *alloc], ["phase2", "-"], ["vote", "-", *vote]]
        out = None
        for stage in stages:
            result = cli([*stage, "-q"], stdin=out)
            assert result.exit_code == 0, result.output
            out = result.stdout_bytes
        (tmp / "piped.jsonl").write_bytes(out)
        assert fake.drawn - before == n * fits - saved + judged
        assert _check_outputs(tmp / "piped.jsonl", n, fits, k, alloc[1], vote[1], generation) == saved
        assert _voted(tmp / "piped.jsonl") == votes
        for piped, ran in zip(read_jsonl(tmp / "piped.jsonl"), read_jsonl(tmp / "run" / "votes.jsonl")):
            if judged and not run_judged:  # the pipe's `phase1 --judge` asked the judge (and records its cap), the run not
                del piped["uab"]["phase1"]["judge_max_tokens"]
            assert piped["uab"] == ran["uab"]

    # grown or shrunk on the same directory: the votes of a fresh run at that N, drawing only what it lacks;
    # back at N, nothing drawn and the first votes again
    other = min(n + 2, cap) if cap else n + 2 if heavy or n - 2 < k else n - 2  # a shrink keeps N >= K
    grown = run(run_dir, other)
    assert _voted(grown) == _voted(run(str(tmp / "fresh"), other))
    assert _voted(run(run_dir, n, drawn=0)) == votes
    if heavy:  # a backend that fails midway: the resumed run draws the rest and votes as the fresh one
        total = n * fits - saved
        if total > 1:
            fake.in_cli(fail_after=total // 2 + run_judged)
            result = cli(["run", q, "-N", str(n), "-o", str(tmp / "crash"), "-q", *gen, "-K", str(k), *alloc, *vote])
            assert result.exit_code == 1, result.output
            fake.in_cli()
            assert _voted(run(str(tmp / "crash"), n, drawn=total - total // 2)) == votes


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(case=cli_cases())
@example(case=([{"id": f"q{i}", "question": "What is 0 + 0?", "answer": "0"} for i in range(7)],
               ["--backend", "scripted", "--max-tokens", "5", "--seed", "0"], 3, 3, None, ["--allocator", "judge"],
               ["--vote-rule", "majority"]))  # N = K: `run` asks no judge, `phase1 --judge` in the pipe does
def test_run_and_the_stage_pipe_keep_the_budget_and_record_what_ran(case):
    _fuzz_run_and_pipe(case, heavy=False)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cli_cases())
def test_run_and_the_stage_pipe_keep_the_budget_and_record_what_ran_heavy(case):
    _fuzz_run_and_pipe(case, heavy=True)


def _fuzz_run_and_pipe(case, heavy: bool) -> None:
    """One Hypothesis case of ``_run_and_pipe`` in a fresh directory with a fresh fake backend
    (a function-scoped fixture would be shared by every example)."""
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        fake = FakeBackend(mp)
        fake.in_cli()
        _run_and_pipe(case, Path(tmp), fake, heavy=heavy)


REPLAYED = [a for a in allocators.runnable() if a not in allocators.ROUNDS]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(m=st.integers(1, 6), k=st.integers(2, 6), vcs=st.booleans(), data=st.data())
def test_simulate_replays_the_allocation_that_allocate_makes_on_the_same_phase1_records(m, k, vcs, data):
    signal = data.draw(st.sampled_from(["anll", "max-nll", "vote-entropy", *(["vcs", "vcs-pow"] if vcs else [])]))
    n, t, gain = data.draw(st.integers(2 if signal == "vote-entropy" else 1, k)), data.draw(
        st.sampled_from([0.2, 1.0])), data.draw(st.sampled_from(["algorithm1", "coverage"]))
    names = data.draw(st.lists(st.sampled_from(REPLAYED), min_size=1, max_size=4, unique=True))
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        rows = [{"id": f"q{i}", "question": f"What is {i % 3} + {i // 2}?", "answer": str(i % 3 + i // 2)}
                for i in range(m)]
        questions, pool = write_jsonl(Path(tmp) / "q.jsonl", rows), str(Path(tmp) / "pool.jsonl")
        assert cli(["phase1", questions, "-K", str(k), "--judge", "--backend", "scripted", "--max-tokens", "9", "-o", pool,
                    "-q", *(["--vcs"] if vcs else [])]).exit_code == 0
        replayed = []

        def spy(name, job):
            extra, saved = allocators.call(name, job)
            replayed.append((name, job.seed, job.cap is None, extra.tolist(), saved))
            return extra, saved

        mp.setattr(evaluation, "call", spy)
        res = str(Path(tmp) / "res.jsonl")
        read = set(names) & set(allocators.replay_readers("--gain"))  # --gain that none reads is refused
        result = cli(["simulate", pool, "--budgets", str(n), "--allocators", ",".join(names), "--signals", signal,
                      "-T", str(t), *(["--gain", gain] if read else []), "--seeds", "2", "--vote-rules", "majority",
                      "-o", res, "-q"])
        assert result.exit_code == 0, result.output
        for row in read_jsonl(res):
            if "samples_used" in row:  # each row's samples used: N·M, less what an exit saved
                assert row["samples_used"] + row["saved"] == n * m
        records = read_jsonl(pool)
        replay = Pool(records)
        compared = 0
        for name, seed, uncapped, extra, saved in replayed:
            k1 = 2 if signal == "vote-entropy" and name not in allocators.SIGNAL_FREE else 1
            if name == "oracle" or not uncapped or n < k1:  # capped by the pool: allocate knows no pool
                continue
            order = replay.permutations(seed)
            phase1 = [dict(rec, samples=[dict(rec["samples"][j], index=x) for x, j in enumerate(order[i, :k1])])
                      for i, rec in enumerate(records)]
            options = {} if name in allocators.SIGNAL_FREE else {"signal": signal, "temperature": t}
            if name in allocators.replay_readers("--gain"):
                options["gain"] = gain  # the replay's --gain (uab-coverage fixes its own; majority reads none)
            summary = pipeline.allocate(phase1, Allocation(n=n, allocator=name, seed=seed, **options))
            assert [r["extra"] for r in phase1] == extra and summary.saved == saved, name
            compared += 1
        assert compared or n == 1 or not any(uncapped for _, _, uncapped, *_ in replayed)


def test_run_says_the_samples_an_exit_saved_are_not_planned(tmp_path):
    out = tmp_path / "r"
    result = cli(["run", "sample_data/quickstart.jsonl", "-N", "4", "-o", str(out), "--backend", "scripted",
                  "--allocator", "uab-exit-easy-skip", "--max-tokens", "32"])
    assert result.exit_code == 0, result.stderr
    saved = orjson.loads((out / "summary.json").read_bytes())["uab"]["allocate"]["saved"]
    assert saved > 0 and f"samples: planned {24 - saved} ({saved} of the budget saved)" in result.stderr


def _documented(label: str) -> set[str]:
    """The field set README.md documents after ``label`` (its first ``{"a", "b", …}`` there)."""
    import re

    text = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    start = text.index(label)
    found = re.search(r"\{((?:\"[A-Za-z_0-9]+\"(?:: null)?,?\s*)+)\}", text[start:start + 600])
    assert found, f"README.md documents no field set after {label!r}"
    return set(re.findall(r"\"([A-Za-z_0-9]+)\"", found.group(1)))


def test_the_records_and_result_rows_hold_the_fields_the_readme_documents(tmp_path):
    """README's "Record format" and `simulate -o` sections list the fields of `uab.allocate`,
    `uab.vote` and a result row; the code and the list had drifted apart where nothing compared
    them (a result row's `M`, `K1`, `samples_used`, `saved`, `capped` were undocumented, `uab.vote`'s
    keys unlisted). A run's and a replay's fields are those documented, the optional ones where they apply."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    for allocator in ("uab", "uniform"):
        out = tmp_path / allocator
        assert cli(["run", q, "--budget", "2", "--allocator", allocator, "--backend", "scripted", "-o", str(out),
                    "-q"]).exit_code == 0
        for rec in read_jsonl(out / "votes.jsonl"):
            assert set(rec["uab"]["allocate"]) == _documented("`uab.allocate` = ")
            assert rec["uab"]["allocate"]["signal"] == "anll"  # under Uniform too: it set p (README says why)
            assert set(rec["uab"]["vote"]) == _documented("`uab.vote` records the rule and its settings")
    rows = list(evaluation.simulate(read_jsonl(tmp_path / "uniform" / "votes.jsonl"), [1, 2], ["uab", "uniform"], ["anll"],
                                    seeds=1, vote_rules=["majority"]))
    optional = {"vote_temperature", "tokens_median", "prompt_tokens", "graded", "whole_pool", "by_level", "cut",
                "cut_samples", "vote_fallbacks"}
    results = [r for r in rows if "allocator" in r]
    assert results and all(_documented("each result row is ") <= set(r) <= _documented("each result row is ") | optional
                           for r in results)

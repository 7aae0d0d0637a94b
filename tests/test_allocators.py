"""One allocator registry serves `uab allocate`, `uab run` and `uab simulate`."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import arithmetic, read_jsonl, write_jsonl
from typer.testing import CliRunner

from uab_cli import allocators, evaluation, pipeline
from uab_cli.cli import app
from uab_cli.errors import UabError
from uab_cli.majority import majority_allocate
from uab_cli.settings import Allocation

P = [0.55, 0.7, 0.2, 0.4, 0.9]
CONFIDENCES = [(5, 6), (7, 7), (2, 2), (4, 4), (9, 9)]  # vcs: p = mean / 10 = P


def two_sample_phase1() -> list[dict]:
    """Five questions with K = 2 Phase-1 samples whose verbalised confidences give P."""
    return [{**rec, "samples": [{"index": j, "phase": 1, "seed": j, "text": f"Answer: {j}", "answer": str(j),
                                 "confidence": c, "anll": None} for j, c in enumerate(pair)]}
            for rec, pair in zip(arithmetic(5), CONFIDENCES)]


def test_majority_after_two_phase1_samples_is_one_allocation_everywhere(tmp_path):
    expected = majority_allocate(P, 10, phase1=2).tolist()
    assert expected == [1, 7, 0, 0, 2] and expected != majority_allocate(P, 10, phase1=1).tolist()
    # the library stage (R = N·M - K·M = 4·5 - 10 = 10)
    records = two_sample_phase1()
    pipeline.allocate(records, Allocation(4, "majority", signal="vcs"))
    assert [r["extra"] for r in records] == expected
    # the command
    path = write_jsonl(tmp_path / "p1.jsonl", two_sample_phase1())
    result = CliRunner().invoke(app, ["allocate", path, "--budget", "4", "--allocator", "majority", "--signal", "vcs",
                                      "-o", str(tmp_path / "al.jsonl"), "-q"])
    assert result.exit_code == 0, result.stderr
    assert [r["extra"] for r in read_jsonl(tmp_path / "al.jsonl")] == expected
    # simulate's replay calls the same registry entry with its Job
    job = allocators.Job(np.array(P), 10, None, 0, np.ones(5), np.zeros(5, bool), k1=2)
    assert allocators.call("majority", job)[0].tolist() == expected
    assert evaluation.ALLOCATORS is allocators.ALLOCATORS


def test_every_named_variant_runs_through_allocate():
    """Each registry name is an --allocator choice; the exit presets match --exit on uab."""
    for name in allocators.runnable():
        records = two_sample_phase1()
        for rec in records:
            rec["judge"] = "hard"
        rounds = (lambda n: np.zeros(n.size)) if name in allocators.ROUNDS else None  # a run draws them
        summary = pipeline.allocate(records, Allocation(4, name, signal="vcs"), margins=rounds)
        assert summary.phase1 + summary.phase2 + summary.saved == 20, name
    a, b = two_sample_phase1(), two_sample_phase1()
    pipeline.allocate(a, Allocation(4, "uab-exit-easy-skip", signal="vcs"))
    pipeline.allocate(b, Allocation(4, "uab", signal="vcs", exit="easy", exit_mode="skip"))
    assert [r["extra"] for r in a] == [r["extra"] for r in b]
    assert b[0]["uab"]["allocate"]["saved"] > 0
    # ... and record what they ran (they recorded --gain algorithm1, no exit, redistribute)
    keys = ("gain", "exit", "exit_mode", "exit_threshold", "saved")
    assert [a[0]["uab"]["allocate"][k] for k in keys] == [b[0]["uab"]["allocate"][k] for k in keys]


def test_a_preset_records_its_options_and_refuses_a_conflicting_one():
    assert Allocation(4, "uab-coverage").gain == "coverage"
    assert (Allocation(4, "uab-exit-hard-skip").exit, Allocation(4, "uab-exit-hard-skip").exit_mode) == ("hard", "skip")
    assert Allocation(4, "uab-exit-hard", exit_threshold=0.3).exit_threshold == 0.3
    with pytest.raises(UabError, match="--allocator uab-exit-hard is --allocator uab --exit hard, not --exit easy: "
                                       "for that, give --allocator uab --exit easy --exit-mode redistribute$"):
        Allocation(4, "uab-exit-hard", exit="easy")  # the way out: its base allocator with the value given
    # a value given equal to the default is given too: it was taken silently, the preset's ran instead
    for preset, option, value in [("uab-exit-easy-skip", "exit_mode", "redistribute"),
                                  ("uab-coverage", "gain", "algorithm1"), ("majority-scatter", "vote_model", "plurality-2")]:
        flag = "--" + option.replace("_", "-")
        with pytest.raises(UabError, match=f"--allocator {preset} is --allocator .* {flag} .*, not {flag} {value}: "
                                           f"for that, give --allocator .* {flag} {value}$"):
            Allocation(4, preset, **{option: value})
    assert Allocation(4, "majority-scatter", vote_model="scatter").vote_model == "scatter"  # its own value: fine
    pool = [{**rec, "samples": [{"index": j, "phase": 1, "text": "7", "answer": "7", "anll": 0.1 * j} for j in range(2)]}
            for rec in arithmetic(4)]
    rows = evaluation.simulate(pool, [2], ["uab-coverage", "uniform"], ["anll"], 1, vote_rules=["majority"])
    assert {r["allocator"]: r["gain"] for r in rows if "seed" in r}["uab-coverage"] == "coverage"


def test_simulate_rows_record_a_gain_only_for_the_allocators_that_read_one():
    """A result row's gain is what its allocator read: the replay's --gain for uab and its exits,
    a preset's own, null for one that reads none (as its signal and T): it said algorithm1."""
    pool = [{**rec, "samples": [{"index": j, "phase": 1, "text": "7", "answer": "7", "anll": 0.1 * j} for j in range(4)]}
            for rec in arithmetic(4)]
    names = ["uab", "uab-exit-hard", "uab-coverage", "uniform", "random", "length", "adaptive", "majority", "oracle"]
    rows = evaluation.simulate(pool, [2], names, ["anll"], 1, gain="coverage", vote_rules=["majority"])
    got = {r["allocator"]: r["gain"] for r in rows if "seed" in r}
    assert got == {"uab": "coverage", "uab-exit-hard": "coverage", "uab-coverage": "coverage", "uniform": None,
                   "random": None, "length": None, "adaptive": None, "majority": None, "oracle": None}
    assert {e["allocator"]: e["gain"] for e in evaluation.summarize(list(evaluation.simulate(
        pool, [2], ["uab", "uniform"], ["anll"], 2, vote_rules=["majority"])))} == {"uab": "algorithm1", "uniform": None}


def test_an_allocation_records_a_gain_only_for_the_allocators_that_read_one():
    """A record's uab.allocate (and a run's config and votes-file digest) said gain algorithm1
    under uniform, which has no gain: null for an allocator that reads none, as a result row's."""
    got = {}
    for name in ["uab", "uab-coverage", "uab-exit-hard", "uniform", "random", "length", "majority"]:
        records = two_sample_phase1()
        pipeline.allocate(records, Allocation(4, name, signal="vcs"))
        got[name] = records[0]["uab"]["allocate"]["gain"]
    assert got == {"uab": "algorithm1", "uab-coverage": "coverage", "uab-exit-hard": "algorithm1", "uniform": None,
                   "random": None, "length": None, "majority": None}


def test_the_replays_gain_is_the_one_uab_and_its_exits_allocate_by():
    """`simulate --gain coverage` replays uab (and its exits) by the coverage gain, not only records it:
    one unit between p = 0.9 and 0.5 goes to the easy question by Algorithm 1, to the hard one by coverage."""
    def job(gain):
        return allocators.Job(p=np.array([0.9, 0.5]), budget=1, cap=None, seed=0, lengths=np.ones(2),
                              hard=np.zeros(2, dtype=bool), gain=gain, theta={"hard": 0.0, "easy": 1.0})

    for name in ("uab", "uab-exit-hard"):
        assert allocators.call(name, job("algorithm1"))[0].tolist() == [1, 0], name
        assert allocators.call(name, job("coverage"))[0].tolist() == [0, 1], name


def test_majority_scatter_is_the_majority_allocator_under_scatter_in_every_command():
    """simulate can replay what `run --allocator majority --vote-model scatter` does."""
    job = allocators.Job(np.array(P), 10, None, 0, np.ones(5), np.zeros(5, bool), k1=2)
    expected = majority_allocate(P, 10, "scatter", phase1=2).tolist()
    assert expected != majority_allocate(P, 10, phase1=2).tolist()
    assert allocators.call("majority-scatter", job)[0].tolist() == expected
    records = two_sample_phase1()
    pipeline.allocate(records, Allocation(4, "majority-scatter", signal="vcs"))
    assert [r["extra"] for r in records] == expected
    assert records[0]["uab"]["allocate"]["vote_model"] == "scatter"
    assert allocators.RUN_FLAGS["majority-scatter"] == {"--allocator": "majority", "--vote-model": "scatter"}
    with pytest.raises(UabError, match="not --vote-model plurality-2"):  # the other model, given: refused (ran scatter)
        Allocation(4, "majority-scatter", vote_model="plurality-2")


def test_uab_coverage_takes_an_exit_as_uab_does():
    """--exit applies to uab-coverage: it allocates as uab --gain coverage with that exit."""
    a, b = two_sample_phase1(), two_sample_phase1()
    pipeline.allocate(a, Allocation(4, "uab-coverage", signal="vcs", exit="easy", exit_mode="skip"))
    pipeline.allocate(b, Allocation(4, "uab", signal="vcs", gain="coverage", exit="easy", exit_mode="skip"))
    assert [r["extra"] for r in a] == [r["extra"] for r in b] and a[0]["uab"]["allocate"]["saved"] > 0


@pytest.mark.parametrize("name", ["uniform", "random", "length", "judge"])
def test_an_allocator_that_reads_no_signal_allocates_records_without_logprobs(name):
    """A file without token logprobs is no error for an allocator that reads no p: p is left unset."""
    records = two_sample_phase1()  # anll None
    for rec in records:
        rec["judge"] = "hard"
    summary = pipeline.allocate(records, Allocation(4, name, signal="anll"))
    assert summary.phase1 + summary.phase2 == 20 and all(r["p"] is None for r in records)


def test_the_oracle_keeps_to_the_cap_and_the_pool():
    """The oracle draws no more Phase-2 samples for a question than --max-per-question (``cap``) or
    its pool (``room``) holds, though more would raise its majority accuracy."""
    values = np.array([[-np.inf, 0.2, 0.3, 0.9, 1.0], [-np.inf, 0.5, 0.6, 0.6, 0.6]])  # A[i, n], n = 0..4

    def oracle(cap, room):
        job = allocators.Job(np.zeros(2), 2, cap, 0, np.ones(2), np.zeros(2, bool), values=values, room=room)
        return allocators.call("oracle", job)[0].tolist()

    assert oracle(None, np.array([3, 3])) == [2, 0]
    assert oracle(np.array([1, 3]), np.array([3, 3])) == [1, 1]
    assert oracle(None, np.array([1, 3])) == [1, 1]


def test_an_allocator_that_draws_in_rounds_called_without_margins_names_the_command_that_can():
    job = allocators.Job(np.zeros(2), 2, None, 0, np.ones(2), np.zeros(2, bool), k1=2)
    with pytest.raises(UabError, match="draws Phase 2 in rounds as it allocates: use `uab run`"):
        allocators.call("adaptive", job)


def test_an_exit_presets_help_names_the_questions_it_exits():
    assert "hard questions (p < 0.5)" in allocators.SUMMARIES["uab-exit-hard"]
    assert "easy questions (p > 0.7)" in allocators.SUMMARIES["uab-exit-easy-skip"]


def test_simulate_only_allocator_is_one_registration(monkeypatch):
    monkeypatch.setitem(allocators.ALLOCATORS, "everything-first", None)
    monkeypatch.setattr(allocators, "SIMULATE_ONLY", set(allocators.SIMULATE_ONLY))
    monkeypatch.setattr(allocators, "SIGNAL_FREE", set(allocators.SIGNAL_FREE))
    allocators.register("everything-first", lambda j: np.r_[j.budget, np.zeros(j.p.size - 1, int)], "all to one",
                        signal=False, runnable=False)
    assert "everything-first" in evaluation.ALLOCATORS and "everything-first" not in allocators.runnable()
    with pytest.raises(UabError, match="'everything-first' is an upper bound for `uab simulate` only"):
        Allocation(4, "everything-first")


def test_capabilities_come_from_the_registration():
    """--exit and the judge labels follow the registry entry, not a list of names elsewhere."""
    tables = ("ALLOCATORS", "SUMMARIES", "RUN_FLAGS", "SIMULATE_ONLY", "SIGNAL_FREE", "TAKES_EXIT", "NEEDS_JUDGE",
              "PHASE1")
    try:
        allocators.register("greedy-copy", allocators.ALLOCATORS["uab"], "a copy", phase1=2)
        assert Allocation(4, "greedy-copy").phase1_samples == 2
        allocators.register("greedy-copy", allocators.ALLOCATORS["uab"], "a copy")  # registered again: its own needs
        assert Allocation(4, "greedy-copy").phase1_samples == 1
        with pytest.raises(UabError, match="--exit applies to the uab allocators, not --allocator greedy-copy"):
            Allocation(4, "greedy-copy", exit="hard")
        allocators.register("greedy-copy", allocators.ALLOCATORS["uab"], "a copy", exits=True)
        assert Allocation(4, "greedy-copy", exit="hard").theta() == 0.5
        allocators.register("labels", allocators.ALLOCATORS["judge"], "reads labels", signal=False, judge=True)
        pool = evaluation.Pool([{"id": "a", "question": "q", "answer": "1", "samples": [{"index": 0, "answer": "1"}]}])
        assert "judge" in evaluation._unrunnable(pool, "labels", None)
    finally:
        for name in ("greedy-copy", "labels"):
            for table in (getattr(allocators, t) for t in tables):
                if isinstance(table, dict):
                    table.pop(name, None)
                else:
                    table.discard(name)


def test_too_few_phase1_samples_in_a_file_name_its_first_such_record(tmp_path):
    # vote-entropy on a file whose third record holds one Phase-1 sample: the input's fault, so its
    # line, and the command that draws more (allocate has no -K)
    rows = two_sample_phase1()
    rows[2]["samples"] = rows[2]["samples"][:1]
    path = write_jsonl(tmp_path / "p1.jsonl", rows)
    result = CliRunner().invoke(app, ["allocate", path, "--budget", "4", "--signal", "vote-entropy"])
    errors = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(errors) == 1, result.stderr
    assert errors[0].startswith(f"error: {path}:3: --signal vote-entropy needs at least 2 Phase-1 samples")
    assert "uab phase1 -K 2" in errors[0]


def test_the_official_hard_exit_tests_a_right_sample_among_n_max_in_allocate(tmp_path):
    """`--exit-test official` (the official code's hard exit: 1 − (1 − p)^N_max < θ, N_max
    `--exit-nmax`, else N) was not offered: uab tested only p < θ. On P, θ = 0.5: the paper's
    test exits p = 0.2 and 0.4, N_max = 2 only 0.2 (1 − 0.8² = 0.36), N_max = N = 4 none."""
    path = write_jsonl(tmp_path / "p1.jsonl", two_sample_phase1())
    exited = {}
    for extra in ([], ["--exit-test", "official", "--exit-nmax", "2"], ["--exit-test", "official"]):
        out = tmp_path / f"al{len(extra)}.jsonl"
        result = CliRunner().invoke(app, ["allocate", path, "--budget", "4", "--signal", "vcs", "--exit", "hard",
                                          "--exit-mode", "skip", *extra, "-o", str(out), "-q"])
        assert result.exit_code == 0, result.stderr
        records = read_jsonl(out)
        info = records[0]["uab"]["allocate"]
        assert sum(2 + r["extra"] for r in records) + info["saved"] == 4 * 5  # N·M, less only what skip saved
        exited[len(extra)] = [i for i, r in enumerate(records) if r["extra"] == 0]
        assert (info.get("exit_test"), info.get("exit_nmax")) == \
            {0: (None, None), 4: ("official", 2), 2: ("official", 4)}[len(extra)]  # only where in force
    assert exited == {0: [2, 3], 4: [2], 2: []}
    # simulate's replay calls the same registry entry, the N_max in its Job
    job = allocators.Job(np.array(P), 10, None, 0, np.ones(5), np.zeros(5, bool), k1=2, exit="hard",
                         exit_mode="skip", exit_nmax=2)
    extra, saved = allocators.call("uab", job)
    assert np.flatnonzero(extra == 0).tolist() == [2] and extra.sum() + saved == 10

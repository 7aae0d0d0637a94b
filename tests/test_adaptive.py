"""The adaptive allocator: Phase 2 in rounds, each to the questions whose vote is least settled."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import arithmetic, cli, read_jsonl, write_jsonl

from uab_cli import allocation, evaluation
from uab_cli.errors import UabError
from uab_cli.pools import Pool
from uab_cli.progress import StageProgress

ROOT = Path(__file__).resolve().parents[1]

# Each question's vote margin after n samples, n = 0 … 5 (4 questions, 2 Phase-1 samples each):
# q0 agrees from the start; q1 disagrees at 2 and settles at 3; q2 has no answer at 2, a tie at
# 3 and settles at 4; q3 is tied at 2 and 3 (1-1-1) and settles at 4.
TABLE = np.array([[-1, 1, 2, 3, 4, 5],
                  [-1, 1, 0, 1, 2, 3],
                  [-1, -1, -1, 0, 1, 2],
                  [-1, 1, 0, 0, 1, 2]])


def replay(budget: int, seed: int = 0, cap: int | None = None):
    seen = []

    def margins_at(n):
        seen.append(n.copy())
        return TABLE[np.arange(4), n]

    extra, rounds = allocation.adaptive_allocate(margins_at, np.full(4, 2), budget, seed, cap)
    return extra, rounds, seen


def test_each_round_serves_the_least_settled_questions_and_the_budget_is_exact():
    extra, rounds, seen = replay(4)
    # round 1: q2 alone (no answer, margin -1); round 2: the three at margin 0 (q1, q2, q3)
    assert extra.tolist() == [0, 1, 2, 1] and rounds == 2
    assert [n.tolist() for n in seen] == [[2, 2, 2, 2], [2, 2, 3, 2], [2, 3, 4, 3]]
    extra, rounds, _ = replay(5)
    assert extra.tolist() == [0, 1, 2, 2] and rounds == 3  # q3, still tied at 3, gets the fifth
    for budget in range(0, 13):  # up to every sample the table holds
        extra = replay(budget, cap=3)[0]
        assert extra.sum() == budget and extra.max() <= 3


def test_a_round_larger_than_what_is_left_serves_the_fewest_samples_first_then_a_seeded_order():
    # budget 3: q2 first, then q1 and q3 (no Phase-2 sample yet) before q2 at margin 0
    assert replay(3)[0].tolist() == [0, 1, 1, 1]
    # budget 2: one of q1, q3 (both at margin 0 with no Phase-2 sample); the seed picks which
    picks = {tuple(replay(2, seed)[0].tolist()) for seed in range(20)}
    assert picks == {(0, 1, 1, 0), (0, 0, 1, 1)}
    for seed in range(20):  # the one first in the seed's permutation of the questions: a seed's runs repeat
        order = np.random.default_rng(seed).permutation(4).tolist()
        assert replay(2, seed)[0][min((1, 3), key=order.index)] == 1


def test_vote_margins_count_the_most_voted_answer_against_the_runner_up():
    counts = np.array([[3, 1, 0], [2, 2, 0], [0, 0, 0], [1, 0, 0]])
    assert allocation.vote_margins(counts).tolist() == [2, 0, -1, 1]
    assert allocation.vote_margins(np.zeros((2, 0), dtype=np.int64)).tolist() == [-1, -1]


def test_allocate_refuses_it_and_run_draws_it_in_rounds(tmp_path):
    rows = [{"id": f"q{i}", "question": "What is 2 + 3?", "answer": "5"} for i in range(8)]
    q = write_jsonl(tmp_path / "q.jsonl", rows)
    out = tmp_path / "run"
    result = cli(["run", str(q), "--budget", "4", "-o", str(out), "--backend", "scripted",
                  "--allocator", "adaptive", "-q"])
    assert result.exit_code == 0, result.stderr
    votes = read_jsonl(out / "votes.jsonl")
    assert sum(len(r["samples"]) for r in votes) == 4 * 8  # the budget, exactly
    assert all(r["uab"]["allocate"]["allocator"] == "adaptive" and r["uab"]["allocate"]["rounds"] >= 1
               for r in votes)
    assert all(len([s for s in r["samples"] if s["phase"] == 1]) == 2 for r in votes)  # its default -K
    # each round records Phase 2's provenance on the records it grew; the first grew them all
    assert all(r["uab"]["phase2"] == votes[0]["uab"]["phase2"] and "seed" in r["uab"]["phase2"] for r in votes)
    summary = json.loads((out / "summary.json").read_text())  # what the run did, as its records say
    assert summary["uab"]["allocate"]["rounds"] == votes[0]["uab"]["allocate"]["rounds"]
    # the live rounds are the replay's: the same function on the margins of the run's own samples
    pool = Pool(votes)
    table = pool.margins(np.tile(np.arange(pool.cls.shape[1]), (len(votes), 1)))
    extra, _ = allocation.adaptive_allocate(lambda n: table[np.arange(len(votes)), n], np.full(8, 2), 2 * 8,
                                            votes[0]["uab"]["allocate"]["seed"], pool.k - 2)
    assert extra.tolist() == [r["extra"] for r in votes]
    rerun = cli(["run", str(q), "--budget", "4", "-o", str(out), "--backend", "scripted", "--allocator", "adaptive",
                 "--vote-rule", "confident-ties"])
    assert "drawn now 0" in rerun.stderr  # a vote-rule rerun re-derives the rounds from the stored samples
    refused = cli(["allocate", str(out / "phase1.jsonl"), "--budget", "4", "--allocator", "adaptive"])
    assert refused.exit_code == 2 and "uab run" in refused.stderr
    k1 = write_jsonl(tmp_path / "k1.jsonl", [{**r, "samples": r["samples"][:1]} for r in read_jsonl(out / "phase1.jsonl")])
    refused = cli(["allocate", k1, "--budget", "4", "--allocator", "adaptive"])  # not "-K 2": allocate cannot anyway
    assert refused.exit_code == 2 and "uab run" in refused.stderr and "-K" not in refused.stderr
    one = cli(["run", str(q), "--budget", "4", "-o", str(tmp_path / "k1"), "--backend", "scripted",
               "--allocator", "adaptive", "-K", "1"])
    assert one.exit_code == 2 and "(-K/--samples 2)" in one.stderr


def test_a_run_killed_between_rounds_resumes_to_the_same_allocation(tmp_path, fake_backend, monkeypatch):
    """A rerun ends with the stopped run's allocation, and its progress counts what the rounds still
    draw: the budget less every sample the checkpoint holds (Phase 2's too, which they take again)."""
    rows = [{"id": f"q{i}", "question": f"What is {i} + {i % 3}?", "answer": str(i + i % 3)} for i in range(10)]
    q = write_jsonl(tmp_path / "q.jsonl", rows)
    args = ["run", str(q), "--budget", "5", "--backend", "scripted", "--allocator", "adaptive", "-q"]
    whole = cli([*args, "-o", str(tmp_path / "whole")])
    assert whole.exit_code == 0
    fake_backend.in_cli(fail_after=27)  # Phase 1 is 20 samples: the kill falls in a round of Phase 2
    cut = cli([*args, "-o", str(tmp_path / "cut")])
    assert cut.exit_code != 0
    fake_backend.in_cli()
    held = (tmp_path / "cut" / "samples.ckpt.jsonl").read_bytes().count(b"\n")
    stages = []
    monkeypatch.setattr(StageProgress, "stage", lambda self, name, total: stages.append((name, total)))
    again = cli([*args, "-o", str(tmp_path / "cut")])
    assert again.exit_code == 0
    assert held > 20 and stages == [("phase1", 0), ("phase2", 5 * 10 - held)]
    assert ([r["extra"] for r in read_jsonl(tmp_path / "cut" / "votes.jsonl")]
            == [r["extra"] for r in read_jsonl(tmp_path / "whole" / "votes.jsonl")])


def test_a_run_s_rounds_redo_only_the_questions_they_grew(tmp_path, monkeypatch):
    """Each round re-checked every record's earlier draws, re-made the generation settings for
    every record's provenance (a deep copy each), and took, sought and voted every record again:
    a run of R rounds did R·M of each. Now the check runs once per stage, the settings once per
    stage call, and a round takes, draws and votes only the questions it grew: M at the first
    call, then B = (N - K)·M over all rounds."""
    from uab_cli import pipeline, runs, settings

    m, n = 30, 5
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": f"q{i}", "question": f"What is {i} + {i % 4}?",
                                            "answer": str(i + i % 4)} for i in range(m)])
    seen: dict[str, list] = {"same_draws": [], "info": [], "take": [], "wanted": [], "voted": []}
    real = (pipeline.same_draws, settings.Generation.info, runs.RunDir.take, pipeline._phase2_missing,
            pipeline.vote_margins)
    monkeypatch.setattr(pipeline, "same_draws", lambda records, stage, *a, **kw: seen["same_draws"].append(stage)
                        or real[0](records, stage, *a, **kw))
    monkeypatch.setattr(settings.Generation, "info", lambda self, *a: seen["info"].append(1) or real[1](self, *a))
    monkeypatch.setattr(runs.RunDir, "take", lambda self, records, *a: seen["take"].append(len(records))
                        or real[2](self, records, *a))
    monkeypatch.setattr(pipeline, "_phase2_missing", lambda records, *among: seen["wanted"].append(
        len(among[0] if among and among[0] is not None else records)) or real[3](records, *among))
    monkeypatch.setattr(pipeline, "vote_margins", lambda records, *a: seen["voted"].append(len(records))
                        or real[4](records, *a))
    out = tmp_path / "run"
    result = cli(["run", str(q), "--budget", str(n), "-o", str(out), "--backend", "scripted",
                  "--allocator", "adaptive", "-q"])
    assert result.exit_code == 0, result.stderr
    rounds = read_jsonl(out / "votes.jsonl")[0]["uab"]["allocate"]["rounds"]
    assert rounds >= 3 and len(seen["voted"]) == rounds + 1
    assert seen["same_draws"] == ["phase1", "phase2"]
    assert len(seen["info"]) < m  # a few per stage, none per record
    assert seen["take"][0] == m and sum(seen["take"][1:]) == sum(seen["wanted"]) == sum(seen["voted"]) == (n - 1) * m
    # what the rounds chose is what they chose redoing every question (the replay above)
    votes = read_jsonl(out / "votes.jsonl")
    pool = Pool(votes)
    table = pool.margins(np.tile(np.arange(pool.cls.shape[1]), (m, 1)))
    extra, again = allocation.adaptive_allocate(lambda at: table[np.arange(m), at], np.full(m, 2), (n - 2) * m,
                                                votes[0]["uab"]["allocate"]["seed"], pool.k - 2)
    assert extra.tolist() == [r["extra"] for r in votes] and again == rounds


def test_simulate_replays_it_from_two_phase1_samples_and_recommends_it_with_its_samples(tmp_path):
    records = read_jsonl(ROOT / "results" / "synthetic" / "calibrated-small" / "pool.jsonl")
    rows = list(evaluation.simulate(records, [1, 3], ["uniform", "adaptive"], ["anll"], 3,
                                    vote_rules=["majority", "confident-ties"]))
    (skip,) = [r for r in rows if "skipped" in r]
    assert (skip["allocator"], skip["N"]) == ("adaptive", 1) and "2 Phase-1 samples" in skip["skipped"]
    done = [r for r in rows if r.get("allocator") == "adaptive" and "skipped" not in r]
    assert done and all(r["K1"] == 2 and r["samples_used"] == 3 * r["M"] for r in done)
    gains = {rule: np.mean([a["accuracy"] - u["accuracy"] for a, u in zip(
        [r for r in done if r["vote_rule"] == rule],
        [r for r in rows if r.get("allocator") == "uniform" and r["N"] == 3 and r["vote_rule"] == rule])])
        for rule in ("majority", "confident-ties")}
    assert gains["majority"] > 0.005  # on this well-calibrated pool the rounds beat N samples each
    rows = list(evaluation.simulate(records, [3], ["uniform", "adaptive"], ["anll"], 10, recommendations=True))
    (rec,) = [r["recommendation"] for r in rows if "recommendation" in r]
    assert rec["allocator"] == "adaptive" and "--allocator adaptive --samples 2" in rec["flags"]


def test_settings_without_a_margins_source_name_the_command_that_can():
    from uab_cli import pipeline
    from uab_cli.settings import Allocation

    records = [{"id": "a", "question": "q", "samples": [{"index": i, "phase": 1, "answer": "1"} for i in range(2)]}]
    with pytest.raises(UabError, match="use `uab run`"):
        pipeline.allocate(records, Allocation(3, "adaptive"))


def test_a_k1_run_directory_given_an_allocator_that_needs_k2_says_how_to_go_on(tmp_path, fake_backend):
    """It said "needs -K 2"; given -K 2, the directory refused it as a change: the first message
    now names the directory's -K and both ways on."""
    fake_backend.in_cli()
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "r"
    assert cli(["run", q, "-N", "3", "-o", str(out), "--backend", "scripted", "-q"]).exit_code == 0
    result = cli(["run", q, "-o", str(out), "--allocator", "adaptive", "-q"])
    assert result.exit_code == 2
    assert " ".join(result.stderr.split()) == (f"error: {out}: its samples were drawn with -K 1, and --allocator adaptive "
                                               "needs -K 2 Phase-1 samples per question: use a new --output, or give "
                                               "-K 2 --force to discard them")
    assert cli(["run", q, "-o", str(out), "--allocator", "adaptive", "-K", "2", "--force", "-q"]).exit_code == 0


def test_a_budget_below_the_two_phase1_samples_it_needs_does_not_offer_a_smaller_k(tmp_path):
    """`--allocator adaptive -N 1` said "give --budget 2 or more, or a smaller -K", and the
    smaller -K was then refused: adaptive needs 2. It now names what needs the 2."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    for given in ([], ["-K", "2"]):
        result = cli(["run", q, "-N", "1", "-o", str(tmp_path / "r"), "--backend", "scripted",
                      "--allocator", "adaptive", *given])
        assert result.exit_code == 2
        assert " ".join(result.stderr.split()) == ("error: budget N=1 is smaller than the 2 Phase-1 samples per "
                                                   "question (-K/--samples 2, which --allocator adaptive needs): "
                                                   "give --budget 2 or more")
    result = cli(["run", q, "-N", "2", "-K", "3", "-o", str(tmp_path / "r"), "--backend", "scripted",
                  "--allocator", "adaptive"])  # more than it needs: a smaller -K is a way on
    assert result.exit_code == 2 and "give --budget 3 or more, or a smaller -K" in result.stderr
    assert not (tmp_path / "r").exists()

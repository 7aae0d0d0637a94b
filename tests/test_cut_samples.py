"""Samples cut at --max-tokens (finish_reason "length") are counted in every summary, and
--cut-samples decides whether their extracted answers vote, in vote, run and simulate alike."""

from __future__ import annotations

import numpy as np
import orjson
from conftest import arithmetic, cli, read_jsonl, write_jsonl

from uab_cli import evaluation, pipeline, report
from uab_cli.settings import Allocation, Vote


def record(qid: str = "q", gold: str = "7") -> dict:
    """Two cut samples answering 3 and one finished sample answering the gold."""
    return {"id": qid, "question": "What is 3 + 4?", "answer": gold, "samples": [
        {"index": 0, "phase": 1, "text": "3 + 4 is 3", "answer": "3", "finish_reason": "length"},
        {"index": 1, "phase": 2, "text": "... 3", "answer": "3", "finish_reason": "length"},
        {"index": 2, "phase": 2, "text": "Answer: 7", "answer": "7", "finish_reason": "stop"}]}


def test_cut_samples_vote_unless_dropped_and_are_counted():
    counted = pipeline.vote(record(), Vote())
    assert counted["prediction"] == "3" and counted["correct"] is False
    dropped = pipeline.vote(record(), Vote(cut="drop"))
    assert dropped["prediction"] == "7" and dropped["correct"] is True and dropped["votes"] == {"7": 1}
    assert dropped["uab"]["vote"]["cut_samples"] == "drop"
    summary = pipeline.VoteSummary()
    summary.add(dropped)
    summary.add(pipeline.vote({**record("r"), "samples": record()["samples"][2:]}, Vote()))
    assert (summary.samples, summary.cut) == (4, 2)


def test_vote_and_run_say_how_many_samples_were_cut(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [record("a"), record("b")])
    result = cli(["vote", path, "-o", str(tmp_path / "v.jsonl")])
    assert "cut at --max-tokens: 4 of 6 samples (67%); their answers voted (--cut-samples count)" in result.stderr
    result = cli(["vote", path, "-o", str(tmp_path / "v.jsonl"), "--cut-samples", "drop"])
    assert "they did not vote (--cut-samples drop)" in result.stderr
    assert [r["prediction"] for r in read_jsonl(tmp_path / "v.jsonl")] == ["7", "7"]
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    run = cli(["run", q, "-N", "2", "-o", str(tmp_path / "r"), "--backend", "scripted", "--max-tokens", "8"])
    votes = read_jsonl(tmp_path / "r" / "votes.jsonl")
    cut = sum(s["finish_reason"] == "length" for r in votes for s in r["samples"])
    assert cut and f"cut at --max-tokens: {cut} of 12 samples" in run.stderr
    assert orjson.loads((tmp_path / "r" / "summary.json").read_bytes())["cut"] == cut


def test_simulate_honours_cut_samples(tmp_path):
    pool = [record(f"q{i}") for i in range(4)]
    rows = {}
    for cut in ("count", "drop"):
        rows[cut] = [r for r in evaluation.simulate(pool, [3], ["uniform"], seeds=2, vote=Vote(cut=cut))]
        assert all(r["cut"] == 8 and r["cut_samples"] == cut for r in rows[cut])
    assert [r["accuracy"] for r in rows["count"]] == [0.0, 0.0]
    assert [r["accuracy"] for r in rows["drop"]] == [1.0, 1.0]
    table = report.markdown_table(evaluation.summarize(rows["drop"]))
    assert evaluation.summarize(rows["drop"][:1])[0]["cut_samples"] == "drop"  # one seed
    assert "66.7 % of the samples the replays used were cut at --max-tokens; they did not vote" in table
    path = write_jsonl(tmp_path / "pool.jsonl", pool)
    result = cli(["simulate", path, "--budgets", "3", "--allocators", "uniform", "--seeds", "2", "--cut-samples",
                  "drop", "-o", str(tmp_path / "res.jsonl")])
    assert result.exit_code == 0 and "--cut-samples drop" in result.stderr
    assert {r.get("accuracy") for r in read_jsonl(tmp_path / "res.jsonl") if "accuracy" in r} == {1.0}


def test_simulate_rows_count_cut_samples_only_where_the_pool_has_some():
    """An uneven pool (2 to 4 samples a question) with no sample cut: its rows carry no `cut`."""
    pool = [{**record(f"q{i}"), "samples": [{**record()["samples"][2], "index": j} for j in range(2 + i)]}
            for i in range(3)]
    rows = list(evaluation.simulate(pool, [2], ["uniform"], seeds=2))
    assert len(rows) == 2 and not any("cut" in r or "cut_samples" in r for r in rows)


def test_a_dropped_cut_sample_still_counts_in_the_allocations_signal():
    """README: under ``drop`` a cut sample neither votes nor covers but still counts in the
    allocation's signal; vote-entropy in the replay reads the same Phase-1 answers as a live
    ``uab allocate`` (it read the voted classes: p = 0.03 where the live run has 1.0)."""
    rec = record()
    rec["samples"][1]["answer"] = "3"  # Phase 1: a cut "3" and a finished "3" agree
    rec["samples"][1]["finish_reason"] = "stop"
    rec["samples"][1]["phase"] = 1
    pool = evaluation.Pool([rec], "drop")
    live = {**rec, "samples": rec["samples"][:2]}
    pipeline.allocate([live], Allocation(n=3, signal="vote-entropy", allocator="uab"))
    assert pool.probabilities(np.array([[0, 1, 2]]), 2, "vote-entropy", 0.2)[0] == live["p"] == 1.0

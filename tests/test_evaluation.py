"""Offline replay on synthetic pools: known-p coverage margin, determinism, budget contract,
capping, vote equivalence with ``majority_vote``, summary statistics and the report files."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from uab_cli import allocation, evaluation
from uab_cli.answers import majority_vote
from uab_cli.errors import UabError
from uab_cli.signals import DEFAULT_T


def sample(j: int, answer, anll: float) -> dict:
    return {"index": j, "phase": 1, "text": f"answer {answer}", "answer": answer, "anll": anll,
            "total_nll": 30 * anll, "max_nll": 4 * anll, "nll_var": anll / 3, "confidence": 5}


def known_pool(m: int = 200, k: int = 20, p=(0.9, 0.3)) -> list[dict]:
    """Half the questions easy, half hard; exactly round(p·K) correct samples each, all
    wrong answers distinct, and ANLL = -T·ln p so that every draw estimates p exactly."""
    rng = np.random.default_rng(1)
    records = []
    for i in range(m):
        pi = p[i % 2]
        correct = round(pi * k)
        answers = ["7"] * correct + [str(100 + j) for j in range(k - correct)]
        rng.shuffle(answers)
        ss = [sample(j, a, -DEFAULT_T * math.log(pi)) for j, a in enumerate(answers)]
        records.append({"id": f"q{i}", "question": "x" * (20 + i % 7), "answer": "7", "level": 1 + i % 2,
                        "samples": ss})
    return records


def noisy_pool(m: int = 60, k: int = 8, seed: int = 0) -> list[dict]:
    """Answers correct with a per-question probability; ANLL lower for correct samples."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(m):
        p = rng.uniform(0.1, 0.95)
        ss = []
        for j in range(k):
            ok = rng.random() < p
            ans = "42" if ok else rng.choice(["1", "2", "3", None])
            ss.append(sample(j, ans, float(rng.gamma(2, 0.05 if ok else 0.15))))
        records.append({"id": f"n{i}", "question": "q" * (10 + i), "answer": "42", "level": 1 + i % 3,
                        "judge": "hard" if p < 0.5 else "easy", "samples": ss})
    return records


def hypergeom_cover(k: int, correct: int, t: int) -> float:
    """P(at least one correct among t draws without replacement from k with ``correct``)."""
    return 1 - math.comb(k - correct, t) / math.comb(k, t)


@pytest.mark.parametrize("name,gain", [("uab", "algorithm1"), ("uab-coverage", "coverage")])
def test_uab_coverage_beats_uniform_by_the_analytic_margin(name, gain):
    m, k, n, p = 200, 20, 4, np.array([0.9, 0.3] * 100)
    rows = list(evaluation.simulate(known_pool(m, k), [n], [name, "uniform"], ["anll"], 30))
    extra = allocation.uab_allocate(p, (n - 1) * m, gain)
    expected = np.mean([hypergeom_cover(k, round(pi * k), 1 + e) - hypergeom_cover(k, round(pi * k), n)
                        for pi, e in zip(p, extra)])
    assert expected > 0.03  # the known p's imply a real margin
    uab = {r["seed"]: r["coverage"] for r in rows if r["allocator"] == name}
    uni = {r["seed"]: r["coverage"] for r in rows if r["allocator"] == "uniform"}
    diff = np.array([uab[s] - uni[s] for s in uab])
    se = diff.std(ddof=1) / math.sqrt(diff.size)
    assert diff.mean() > 0
    assert abs(diff.mean() - expected) < 4 * se + 0.005
    by_level = next(r for r in rows if r["allocator"] == name)["by_level"]
    assert by_level["2"] > by_level["1"]  # hard questions (level 2) get more


def test_same_seed_same_rows_and_other_seed_differs():
    records = noisy_pool()
    args = ([2, 4], ["uab", "uniform", "random"], ["anll", "vote-entropy"])
    first = list(evaluation.simulate(records, *args, seeds=[3, 5]))
    assert first == list(evaluation.simulate(records, *args, seeds=[3, 5]))
    other = list(evaluation.simulate(records, *args, seeds=[4, 6]))
    assert [r.get("accuracy") for r in first] != [r.get("accuracy") for r in other]


def test_every_row_spends_the_budget_exactly():
    records = noisy_pool(m=40)
    names = list(evaluation.ALLOCATORS)
    rows = list(evaluation.simulate(records, [1, 2, 4, 8], names, ["anll", "vcs", "vote-entropy"], 2))
    done = [r for r in rows if "skipped" not in r]
    assert {r["allocator"] for r in done} == set(names)
    for r in done:
        assert r["samples_used"] + r["saved"] == r["N"] * r["M"]
        assert r["saved"] == 0 or r["allocator"].endswith("-skip")
        assert 0 <= r["accuracy"] <= r["coverage"] <= 1
    assert any(r["saved"] > 0 for r in done)
    skipped = [r for r in rows if "skipped" in r]
    assert skipped and all(r["signal"] == "vote-entropy" and r["N"] == 1 for r in skipped)


def test_capping_is_counted_and_keeps_the_budget():
    records = noisy_pool(k=4)
    rows = list(evaluation.simulate(records, [3, 4], ["uab", "uab-coverage", "uniform"], ["anll"], 4))
    capped = [r for r in rows if r["allocator"].startswith("uab") and r["capped"] > 0]
    assert capped
    for r in rows:
        assert r["samples_used"] == r["N"] * r["M"]
    # N = K: every question must take its whole pool, so every allocator is Uniform.
    full = {(r["allocator"], r["seed"]): r["accuracy"] for r in rows if r["N"] == 4}
    assert all(full["uab", s] == full["uniform", s] for s in range(4))


def test_replayed_vote_matches_majority_vote():
    answers = ["1/2", "0.5", "\\frac{1}{2}", "3", "3", None, "10", "2", "2", None, "\\sqrt{2}", "3"]
    records = [{"id": f"v{i}", "question": "q", "answer": gold, "samples": [sample(j, a, 0.1) for j, a in
                                                                           enumerate(answers)]}
               for i, gold in enumerate(["0.5", "3", "2", "10"])]
    pool = evaluation.Pool(records)
    for seed in range(25):
        perm = pool.permutations(seed)
        vote, cover = pool.outcomes(perm)
        for i, rec in enumerate(records):
            drawn = [rec["samples"][j]["answer"] for j in perm[i]]
            for t in range(1, len(answers) + 1):
                pred = majority_vote(drawn[:t]).prediction
                assert vote[i, t] == (pred is not None and evaluation.is_correct(rec, pred))
                assert cover[i, t] == any(evaluation.is_correct(rec, a) for a in drawn[:t] if a)


def test_judge_without_labels_is_skipped_with_a_reason():
    records = known_pool(20, 4)
    rows = list(evaluation.simulate(records, [2], ["judge", "uniform"], ["anll"], 2))
    skipped = [r for r in rows if r["allocator"] == "judge"]
    assert len(skipped) == 1 and "judge" in skipped[0]["skipped"]
    assert len([r for r in rows if r["allocator"] == "uniform"]) == 2


def test_bad_options_are_user_errors():
    records = known_pool(10, 4)
    for kwargs in ({"allocators": ["nope"]}, {"budgets": [5]}, {"signals": ["bogus"]}, {"budgets": [0]}):
        args = {"budgets": [2], "allocators": ["uab"], "signals": ["anll"], "seeds": 1, **kwargs}
        with pytest.raises(UabError):  # before the first row
            evaluation.simulate(records, **args)
    with pytest.raises(UabError, match="gold"):
        evaluation.Pool([{**r, "answer": None} for r in records])


def test_allocator_table_takes_a_new_entry(monkeypatch):
    def first(j):  # everything to the first question, unless capped
        if j.cap is not None:
            return allocation.uniform_allocate(j.p.size, j.budget, j.cap)
        return np.r_[j.budget, np.zeros(j.p.size - 1, int)]

    monkeypatch.setitem(evaluation.ALLOCATORS, "first", first)
    rows = list(evaluation.simulate(known_pool(10, 8), [4], ["first"], ["anll"], 1))
    # Question 0 asks for 30 extra samples but holds 8: capped, the rest spread by the cap.
    assert rows[0]["capped"] == 1 and rows[0]["samples_used"] == 40


def rows_for(values: dict) -> list[dict]:
    return [{"allocator": a, "signal": None if a == "uniform" else "anll", "T": None if a == "uniform" else 0.2,
             "N": 4, "seed": s, "M": 10, "accuracy": acc, "coverage": acc + 0.1, "samples_used": 40, "saved": 0,
             "capped": 0} for a, accs in values.items() for s, acc in enumerate(accs)]


def test_summarize_pairs_by_seed():
    summary = evaluation.summarize(rows_for({"uniform": [0.5, 0.6, 0.7], "uab": [0.55, 0.7, 0.75]}))
    uab = next(e for e in summary if e["allocator"] == "uab")
    assert uab["accuracy"] == pytest.approx(2 / 3)
    assert uab["accuracy_std"] == pytest.approx(0.1040833, abs=1e-6)
    assert uab["diff_uniform"] == pytest.approx(0.2 / 3)
    assert uab["diff_se"] == pytest.approx(0.0166667, abs=1e-6)  # std(.05,.1,.05)/sqrt(3)
    assert uab["coverage"] == pytest.approx(2 / 3 + 0.1)
    assert summary[0]["allocator"] == "uniform" and summary[0]["diff_uniform"] == 0
    table = evaluation.markdown_table(summary, -0.3)
    assert "| 4 | uab | anll | 0.2 | 3 | 66.67 ± 10.41 |" in table and "+6.67 ± 1.67" in table


def test_anll_correlation_is_negative_when_correct_samples_are_confident():
    r = evaluation.anll_correlation(noisy_pool())
    assert r is not None and r < -0.2


def test_report_writes_plots_and_summary(tmp_path):
    records = noisy_pool()
    rows = list(evaluation.simulate(records, [2, 4, 8], ["uab", "uniform", "judge"], ["anll"], 4))
    fig = evaluation.plot_accuracy(evaluation.summarize(rows))
    assert sorted(t.get_text() for t in fig.get_axes()[0].get_legend().get_texts()) == [
        "judge", "uab (anll)", "uniform"]
    paths = evaluation.report(rows, records, str(tmp_path / "rep"))
    names = sorted(p.rsplit("/", 1)[1] for p in paths)
    assert names == ["accuracy_vs_budget.png", "allocation_by_level.png", "anll_correct_vs_incorrect.png",
                     "summary.md"]
    for path in paths[:-1]:
        with open(path, "rb") as fh:
            data = fh.read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    with open(paths[-1], encoding="utf-8") as fh:
        text = fh.read()
    assert "| 8 | uab | anll |" in text and "Pearson r" in text
    assert evaluation.report(rows, None, str(tmp_path / "bare"))[-1].endswith("summary.md")


def test_report_without_matplotlib_names_the_extra(monkeypatch, tmp_path):
    rows = list(evaluation.simulate(known_pool(10, 4), [2], ["uniform"], ["anll"], 1))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UabError, match=r"uab-cli\[plots\]"):
        evaluation.report(rows, None, str(tmp_path))

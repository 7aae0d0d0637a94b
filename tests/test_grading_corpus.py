"""The grading regression corpus: model-style and real model responses with the expected grade.

tests/data/grading_corpus.jsonl holds one row per case: ``response``, ``gold``, ``expected``
(the right grade; null: ungraded), ``class`` (what it exercises) and ``source`` (hand-written, or the public
repository, commit, file and model a real response comes from); rows with ``choices`` are
multiple choice. Every row is asserted: no false positive, no missed equivalence.
"""

from __future__ import annotations

import collections
import pathlib

import orjson
import pytest

from uab_cli.answers import extract_answer, is_correct, majority_vote

CORPUS = pathlib.Path(__file__).parent / "data" / "grading_corpus.jsonl"
ROWS = [orjson.loads(line) for line in CORPUS.read_bytes().splitlines()]
CLASSES = ["prose_tail", "text_answer", "text_inside", "matrix", "interval", "degrees", "percent",
           "fraction_decimal", "units", "dollars", "assignment", "multiple_answers", "mc_letter",
           "latex_forms", "no_answer", "gsm8k", "non_ascii"]


def _record(row: dict) -> dict:
    rec = {"question": "q", "answer": row["gold"]}
    if row.get("choices"):
        rec["choices"] = row["choices"]
    return rec


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['class']}" for i, r in enumerate(ROWS)])
def test_corpus_row_grades_as_expected(row):
    rec = _record(row)
    prediction = extract_answer(row["response"], rec)
    assert is_correct(rec, prediction) is row["expected"], (prediction, row["source"])


def test_corpus_covers_every_class_both_ways_with_real_responses():
    seen = collections.Counter((r["class"], r["expected"]) for r in ROWS)
    assert len(ROWS) >= 150
    assert {c for c, _ in seen} == set(CLASSES)
    assert all(seen[(c, True)] for c in CLASSES if c != "no_answer")
    assert all(seen[(c, False)] for c in CLASSES)
    assert sum(r["source"] != "hand-written" for r in ROWS) >= 50


@pytest.mark.parametrize("row", [r for r in ROWS if r["expected"] and not r.get("choices")][:40])
def test_a_right_answer_votes_with_its_gold(row):
    """The extracted answer and the gold written as its own answer fall in one vote class."""
    rec = _record(row)
    prediction = extract_answer(row["response"], rec)
    gold = extract_answer(f"\\boxed{{{row['gold']}}}", rec)
    vote = majority_vote([prediction, gold, None, ""])
    assert list(vote.votes.values()) == [2], vote

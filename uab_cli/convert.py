"""Convert benchmark exports (JSONL, JSON, CSV, Parquet) into uab question records.

Presets cover the paper's benchmarks in their Hugging Face layouts; field options map anything else.
"""

from __future__ import annotations

import codecs
import csv
import decimal
import hashlib
import io
import json
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from uab_cli.answers import gold_answer
from uab_cli.errors import UabError, not_utf8
from uab_cli.jsonl import display_name, dumps, non_finite, nul_byte, stdin
from uab_cli.records import MAX_CHOICES, MIN_CHOICES, check_record

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_BOM = b"\xef\xbb\xbf"
_MISSING = object()


class _Row:
    """One input row with its resolved field names, for building a record and raising located errors."""

    def __init__(
        self,
        data: Mapping[str, Any],
        fields: Mapping[str, Field],
        required: set[str],
        line: int,
        path: str | None,
        label: str,
        base: int | None = None,
        given: frozenset[str] = frozenset(),
    ):
        self.data, self.fields, self.required = data, fields, required
        self.given = given  # the roles whose column an option named (--answer-field): a preset's own pick gives way
        self.line, self.path, self.label = line, path, label
        self.base = base  # --answer-base: golds are indices from 0 or 1 (MedMCQA's original cop); None: unsaid
        self.note: str | None = None  # a doubt about how the row was read, to warn of
        self.index: int | None = None  # its gold, read as a choice's index counted from 0 unsaid (no --answer-base)

    def error(self, message: str) -> UabError:
        """A UabError located at this row."""
        return UabError(message, path=self.path, line=self.line)

    def raw(self, name: str, required: bool = True) -> Any:
        """The value of column ``name``; None when absent and not required."""
        value = self.data.get(name, _MISSING)
        if value is _MISSING or value is None:
            if required:
                raise self.error(self.missing(name) if value is _MISSING else
                                 f"field {name!r} is null (needed by {self.label})")
            return None
        return value

    def missing(self, name: str) -> str:
        """Why column ``name`` is missing, with the row's columns and the option that would fit."""
        columns = ", ".join(map(repr, self.data)) or "none"
        message = f"row is missing field {name!r} (needed by {self.label}); its columns: {columns}"
        hint = self._option(name)
        if isinstance(self.data, _Headed) and any(map(_data_like, self.data)):  # a CSV without a header row?
            return (message + "; the file's first row looks like data, not a header: name its columns with --columns "
                    "question,… (one name per column, in order)" + (f"; if it is a header, {hint}" if hint else ""))
        return message + (f"; {hint}" if hint else "")

    def _option(self, name: str) -> str | None:
        """The option that would name the missing column ``name``, if any."""
        role = next((r for r, n in self.fields.items() if name in _columns(n)), None)
        # a preset fits a row with its columns; for missing choices, one that builds choices from them (not gsm8k)
        fitting = [p.name for p in PRESETS.values() if p.reads(self.data) and f"preset {p.name}" != self.label
                   and (role != "choices" or p.mc)]
        if fitting:
            return f"try --preset {' or --preset '.join(fitting)}"
        if role == "choices":
            return ("name the column with --choices-field COLUMN, or the columns holding one choice each with "
                    "--choices-field A,B,C,D")
        if role is not None:
            return f"name the column with --{role}-field COLUMN"
        return None

    def role(self, role: str) -> Any:
        """The value of the column mapped to ``role`` (question/answer/choices/id), or None; of
        the columns, where the role has several (``cells``)."""
        name = self.fields.get(role)
        if name is None:
            return None
        if isinstance(name, tuple):
            return self.cells(name, required=role in self.required)
        return self.raw(name, required=role in self.required)

    def cells(self, names: tuple[str, ...], required: bool) -> list | None:
        """The values of columns ``names`` in order (choices given one per column, MMLU's CSV
        A-D): empty ones at the end left out (a row with fewer choices), one before a given one
        kept as "" (its letter stays); None where the row has none of the columns, or all of them
        empty, and they are not required."""
        absent = [name for name in names if name not in self.data]
        if len(absent) == len(names) and not required:
            return None
        if absent:
            raise self.error(self.missing(absent[0]))
        values = [self.data[name] for name in names]
        while values and values[-1] is None:
            values.pop()
        if not values and required:
            raise self.error(f"{_field_label(names)} are all empty (needed by {self.label})")
        return ["" if value is None else value for value in values] or None

    def gold(self, column: str | None = None) -> Any:
        """The answer column's value (``column``'s, where a preset reads the gold from another): one
        answer (text or a number), or None. A list or an object is an error: which of several golds
        counts is not ours to guess; so is a boolean, a gold phase1 refuses (a yes/no gold is written as text)."""
        value = self.role("answer") if column is None else self.raw(column)
        name = self.fields["answer"] if column is None else column
        if isinstance(value, bool):
            raise self.error(f"field {name!r} should be one answer (text or a number), got the "
                             f"boolean {str(value).lower()} (write the gold as text)")
        if isinstance(value, (Mapping, list, tuple)):
            kind = "an object" if isinstance(value, Mapping) else "a list"
            raise self.error(f"field {name!r} should be one answer (text or a number), got {kind} "
                             "(ambiguous as a gold: give one answer per row)")
        return value

    def text(self, name: str, required: bool = True) -> str | None:
        """Column ``name`` as stripped text; an empty required value is an error."""
        value = self.raw(name, required)
        if value is None:
            return None
        if isinstance(value, (dict, list)):
            raise self.error(f"field {name!r} should be text, got {type(value).__name__}")
        text = _answer_text(value)  # an integral float (AMC answers stored as 142.0) reads as 142
        if required and not text:
            raise self.error(f"field {name!r} is empty (needed by {self.label})")
        return text


class _Headed(dict):
    """A CSV row whose columns the file's first row named (no ``--columns``)."""


_NUMBER = re.compile(r"[-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)")


def _data_like(name: str) -> bool:
    """Whether a CSV header's column name reads as a cell of data: a number, a question or a sentence."""
    name = name.strip()
    return bool(_NUMBER.fullmatch(name)) or name.endswith("?") or len(name.split()) > 6


# The column (or, for choices given one per column, the columns in order) a role is read from.
Field = str | tuple[str, ...] | None


def _columns(field: Field) -> tuple[str, ...]:
    """The columns a role's field reads."""
    return field if isinstance(field, tuple) else (field,) if field else ()


def _field_label(name: str | tuple[str, ...]) -> str:
    """How messages name a role's field: "field 'choices'", or "columns 'A', 'B', 'C', 'D'"."""
    return f"columns {', '.join(map(repr, name))}" if isinstance(name, tuple) else f"field {name!r}"


@dataclass(frozen=True)
class Preset:
    """How one benchmark's rows map onto question records."""

    name: str
    description: str
    fields: Mapping[str, str | None]
    build: Callable[[_Row], dict]
    fixed: frozenset[str] = field(default_factory=frozenset)
    columns: tuple[str, ...] = ()  # columns a row of this benchmark has (besides ``fields``)
    mc: bool = False  # its records have choices
    header: tuple[str, ...] = ()  # the columns of its CSV/TSV files, which have no header row (MGSM's), in order
    id_parts: tuple[str, ...] = ()  # fields of its records that a default id names before the row ("mgsm-es-0")

    def reads(self, row: Mapping[str, Any]) -> bool:
        """Whether ``row`` has every column this preset reads."""
        needed = [n for n in self.fields.values() if n] + list(self.columns)
        return bool(needed) and all(n in row for n in needed)


def _answer_text(value: Any) -> str:
    """Gold answer as a string (ints and floats keep their plain form)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _choice_list(row: _Row, value: Any) -> list[str]:
    """Normalise a choices column (list, or ARC-style {"text": [...]}) into a list of strings."""
    if isinstance(value, Mapping) and isinstance(value.get("text"), (list, tuple)):
        value = value["text"]
    if not isinstance(value, (list, tuple)) or len(value) < MIN_CHOICES:
        text = ("; it holds text (a CSV cell holds no list: name the columns holding one choice each, "
                "--choices-field A,B,C,D, or convert the JSON or Parquet export)" if isinstance(value, str) else "")
        raise row.error(f"{_field_label(row.fields['choices'])} should be a list of at least {MIN_CHOICES} choices"
                        + text)
    if len(value) > MAX_CHOICES:
        raise row.error(f"too many choices ({len(value)}); at most {MAX_CHOICES}")
    return [str(c).strip() for c in value]


def _gold_letter(row: _Row, answer: Any, choices: list[str]) -> str:
    """Gold as a letter: accepts a letter, an int index (0-based, or from ``row.base``), the text of one
    choice, or a digit-string index (the text of a choice first, unless ``row.base`` says golds are indices;
    a digit string that is one choice's text and another's index is noted in ``row.note``)."""
    n = len(choices)
    if isinstance(answer, bool):
        raise row.error(f"answer {answer!r} is not a choice letter or index")
    if isinstance(answer, int) or (isinstance(answer, float) and answer.is_integer()):
        return _indexed(row, int(answer), n)
    text = str(answer).strip()
    if len(text) == 1 and text.upper() in LETTERS[:n]:
        return text.upper()
    index = _index(text)
    if index is not None and row.base is not None:
        return _indexed(row, index, n)
    if text in choices:  # before the digit rule: with numeric choices a digit string is the choice's text
        letter = LETTERS[choices.index(text)]
        if index is not None and index < n and LETTERS[index] != letter:
            row.note = (f"gold {text!r} is the text of choice {letter} and the index of choice {LETTERS[index]}: "
                        "read as the text (--answer-base 0 or 1 reads golds as indices)")
        return letter
    if index is not None:
        return _indexed(row, index, n)
    raise row.error(f"answer {text!r} is not a letter A-{LETTERS[n - 1]}, an index, or one of the choices")


def _index(text: str) -> int | None:
    """The index a string of digits writes ("2", "٢"), else None: a superscript is no digit int() reads ("10²"), nor
    is a string of more digits than any index has (int() reads no more than 4,300)."""
    return int(text) if text.isdecimal() and len(text) <= 20 else None


def _indexed(row: _Row, index: int, n: int) -> str:
    """The letter of choice ``index`` of ``n``, counted from ``row.base``; an index out of range is an
    error (one just past the end of 0-based indices names ``--answer-base 1``)."""
    base = row.base or 0
    if row.base is None:
        row.index = index
    if not base <= index < n + base:
        how = (" numbered from 1 (--answer-base 1)" if base else
               "; 1-based indices (MedMCQA's original cop 1-4)? give --answer-base 1" if index == n else "")
        raise row.error(f"answer index {index} is out of range for {n} choices{how}")
    return LETTERS[index - base]


def _mc_gold(row: _Row, answer: Any, choices_raw: Any, choices: list[str]) -> str:
    """Gold letter of a multiple-choice row: by label where the choices carry labels (ARC), else by ``_gold_letter``."""
    labels = choices_raw.get("label") if isinstance(choices_raw, Mapping) else None
    if not (isinstance(labels, (list, tuple)) and len(labels) == len(choices)):
        return _gold_letter(row, answer, choices)
    # ARC: the gold names a label ("1".."4" on some rows, "A".."E" on others), not a position
    names = [_answer_text(label) for label in labels]
    if _answer_text(answer) not in names:
        raise row.error(f"answer {answer!r} is none of the choice labels {names}")
    return LETTERS[names.index(_answer_text(answer))]


def _check_gold(row: _Row, record: dict) -> None:
    """An empty gold ("", \\boxed{}, \\text{}: nothing to grade against) is an error, under every mapping."""
    if "answer" in record and gold_answer(record) is None:
        how = f"needed by {row.label}" if "answer" in row.required else "give the gold, or leave the field out"
        raise row.error(f"field {row.fields['answer'] or 'answer'!r} is empty ({how})")


# Columns that often hold a benchmark's gold (ARC's answerKey): named when the default mapping finds no gold.
_GOLD_COLUMNS = ("answerKey", "AnswerKey", "answer_key", "label", "target", "gold", "correct_answer", "final_answer",
                 "cop")


def _gold_column(row: _Row) -> str | None:
    """A column of ``row`` that looks like a gold, when the record built from it has none."""
    return next((name for name in _GOLD_COLUMNS if row.data.get(name) is not None), None)


def _advice(row: _Row, body: dict) -> str | None:
    """What the field mapping may have missed in a row, to warn of: its gold in a column of
    another name (ARC's answerKey), or its choices left in the question's text (ARC's CSV) where
    the gold names one of their labels; None when nothing."""
    column = None if "answer" in body else _gold_column(row)
    gold = body.get("answer") if column is None else row.data[column]
    split = None if "choices" in body else split_choices(body["question"])
    if split is not None and _answer_text(gold) in split[1]:
        arc = PRESETS["arc"].fields
        named = {"question": row.fields["question"], "answer": column or row.fields["answer"],
                 "id": row.fields["id"] if row.data.get(row.fields["id"]) is not None else arc["id"]}
        options = "".join(f" --{role}-field {name}" for role, name in named.items() if name != arc[role])
        return (f"the question holds its choices ('(A) … (B) …'), left in its text: --preset arc{options} "
                "splits them out")
    if column is not None:
        return f"no gold answer field {row.fields['answer']!r}; {column!r} looks like one: --answer-field {column}"
    return None


def _digest(*parts: str) -> bytes:
    """Stable hash of some texts (independent of PYTHONHASHSEED and Python version)."""
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).digest()


def _parse_level(value: Any) -> Any:
    """MATH level: "Level 3" or 3 -> 3; anything else is kept as is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = re.fullmatch(r"\s*(?:level\s*)?(\d{1,20})\s*", str(value), flags=re.IGNORECASE)  # (int() reads 4,300 digits)
    return int(match.group(1)) if match else value


def _build_generic(row: _Row) -> dict:
    """Map question/answer/choices columns and pass every other column through."""
    question = row.text(row.fields["question"])
    record: dict[str, Any] = {"question": question}
    choices_raw = row.role("choices")
    answer = row.gold()
    if choices_raw is not None:
        choices = _choice_list(row, choices_raw)
        record["choices"] = choices
        if answer is not None:
            record["answer"] = _mc_gold(row, answer, choices_raw, choices)
        record["type"] = "mc"
    elif answer is not None:
        record["answer"] = _answer_text(answer)
    used = {name for field in row.fields.values() for name in _columns(field)}
    for key, value in row.data.items():
        if key not in used and key not in record and key not in ("id", "question", "answer", "choices"):
            record[key] = value
    return record


def _with_solution(row: _Row, record: dict) -> dict:
    """Keep the reference solution, when the row has one, in the record's ``solution`` field."""
    solution = row.text("solution", required=False)
    if solution:
        record["solution"] = solution
    return record


def _build_math500(row: _Row) -> dict:
    """HuggingFaceH4/MATH-500 (or PRM800K's MATH split): problem, answer, solution, subject, level."""
    record = {"question": row.text(row.fields["question"]), "answer": _answer_text(row.gold()), "type": "math"}
    subject = row.raw("subject", required=False)
    if subject is not None:
        record["subject"] = subject
    level = row.raw("level", required=False)
    if level is not None:
        record["level"] = _parse_level(level)
    return _with_solution(row, record)


def _build_deepscaler(row: _Row) -> dict:
    """agentica-org/DeepScaleR-Preview-Dataset, and DeepScaleR's AIME/AMC files: problem, answer, solution."""
    record = {"question": row.text(row.fields["question"]), "answer": _answer_text(row.gold()), "type": "math"}
    return _with_solution(row, record)


_GSM8K_GOLD = re.compile(r"(?:^|\n)####\s*([^\n]+?)\s*$")


def _build_gsm8k(row: _Row) -> dict:
    """openai/grade-school-math: gold is the number after the final "####"; the worked answer is the solution."""
    worked = row.text(row.fields["answer"])
    match = _GSM8K_GOLD.search(worked)
    if match is None:
        raise row.error(f"field {row.fields['answer']!r} does not end with a '#### <answer>' line")
    return {
        "question": row.text(row.fields["question"]),
        "answer": match.group(1).replace(",", ""),
        "type": "math",
        "solution": worked,
    }


# A number written with a zero fraction, "51.0" (SVAMP's Answer, as a CSV export writes the float 51.0)
_ZERO_FRACTION = re.compile(r"([-+]?\d+)\.0+")


def _build_svamp(row: _Row) -> dict:
    """arkilpatel/SVAMP (ID, Body, Question, Equation, Answer, Type): the question is the Body and the
    Question, joined as Qwen2.5-Math's and ToRA's evaluation harnesses do (a Body without its final full
    stop, 358 of the 1,000, gets one, then a space); the gold is the Answer without a zero fraction (51.0
    is 51); the Equation and SVAMP's Type are kept as ``equation`` and ``problem_type``."""
    body = row.text("Body")
    question = f"{body if body.endswith('.') else body + '.'} {row.text(row.fields['question'])}"
    gold = _answer_text(row.gold())
    match = _ZERO_FRACTION.fullmatch(gold)
    record = {"question": question, "answer": match.group(1) if match else gold, "type": "math"}
    for source, target in (("Equation", "equation"), ("Type", "problem_type")):
        value = row.text(source, required=False)
        if value:
            record[target] = value
    return record


_WHOLE = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)")  # a whole number, its thousands grouped by commas or not
_MGSM_FILE = re.compile(r"mgsm_([a-z]{2})\.[a-z]+", re.IGNORECASE)  # MGSM's file of one language: mgsm_es.tsv


_MGSM_HF_GOLD = "answer_number"  # Hugging Face's juletxara/mgsm: the gold, its 'answer' a worked solution (or null)


def _build_mgsm(row: _Row) -> dict:
    """google-research/url-nlp's MGSM (mgsm/mgsm_XX.tsv: question, answer; no header row), or Hugging Face's
    juletxara/mgsm (question, answer: a worked solution or null, answer_number, equation_solution; the gold is
    answer_number, the worked answer and the equation kept as ``solution`` and ``equation``; an --answer-field
    names the gold's column in either): the gold is a
    whole number, without its thousands commas (2,125 is 2125, as GSM8K's); the language is the file name's
    XX, kept as ``language`` (and in the default id); a file named otherwise gives neither, with a warning."""
    column = row.fields["answer"]
    if "answer" not in row.given and _MGSM_HF_GOLD in row.data:  # the Hugging Face layout's gold
        column = _MGSM_HF_GOLD
    gold = _answer_text(row.gold(column))
    if not _WHOLE.fullmatch(gold):
        raise row.error(f"field {column!r} should be a whole number (as MGSM's golds are), got {gold!r}")
    record = {"question": row.text(row.fields["question"]), "answer": gold.replace(",", ""), "type": "math"}
    if column == _MGSM_HF_GOLD:
        for source, target in (("answer", "solution"), ("equation_solution", "equation")):
            value = row.text(source, required=False)
            if value:
                record[target] = value
    named = _MGSM_FILE.fullmatch(os.path.basename(row.path or ""))
    if named:
        record["language"] = named.group(1).lower()
    else:
        row.note = ("the input's name does not say its language, as MGSM's mgsm_XX.tsv do: its records have no "
                    "'language', nor their ids (name the file mgsm_XX.tsv to keep it)")
    return record


def _build_mmlu(row: _Row) -> dict:
    """cais/mmlu: question, choices (list), answer (0-based index or letter), subject."""
    choices_raw = row.role("choices")
    choices = _choice_list(row, choices_raw)
    record = {
        "question": row.text(row.fields["question"]),
        "choices": choices,
        "answer": _mc_gold(row, row.gold(), choices_raw, choices),
        "type": "mc",
    }
    subject = row.raw("subject", required=False)
    if subject is not None:
        record["subject"] = subject
    return record


# A choice's label inside a question's text, as AI2's ARC CSV writes its choices: " (A) ", " (1) " (the
# space before it is checked apart: a pattern that opens with its literal "(" is scanned for fast)
_LABEL = re.compile(r"\(([A-Z]|[1-9])\)(?=\s)")


def split_choices(text: str) -> tuple[str, list[str], list[str]] | None:
    """A question whose text ends in its choices, "Which …? (A) a (B) b (C) c", as its stem, the
    choices' labels ("A".. or "1"..) and texts; None unless the labels from the first (A) or (1)
    on follow in order, with no other label among them, and the stem and every choice hold text
    (ordinary text that merely holds "(A)" is no list of choices)."""
    marks = [m for m in _LABEL.finditer(text) if m.start() and text[m.start() - 1].isspace()]
    for first, mark in enumerate(marks):
        run = marks[first:]
        series = LETTERS if mark.group(1) == "A" else "123456789" if mark.group(1) == "1" else None
        if series is None or [m.group(1) for m in run] != list(series[:len(run)]):
            continue
        ends = [m.start() for m in run[1:]] + [len(text)]
        choices = [text[m.end():end].strip() for m, end in zip(run, ends)]
        stem = text[:mark.start()].strip()
        if stem and all(choices) and MIN_CHOICES <= len(choices) <= MAX_CHOICES:
            return stem, [m.group(1) for m in run], choices
    return None


def _build_arc(row: _Row) -> dict:
    """AI2's ARC CSV release (questionID, AnswerKey, question): the choices are split out of the
    question's text ("… (A) a (B) b", or "(1) a (2) b"); the gold names a label."""
    split = split_choices(row.text(row.fields["question"]))
    if split is None:
        raise row.error(f"field {row.fields['question']!r} holds no choices to split out: its text should end in "
                        "'(A) … (B) …' or '(1) … (2) …'")
    question, labels, choices = split
    return {"question": question, "choices": choices,
            "answer": _mc_gold(row, row.gold(), {"text": choices, "label": labels}, choices), "type": "mc"}


GPQA_WRONG = ("Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")


def _build_gpqa(row: _Row) -> dict:
    """Idavidrein/gpqa: the correct and three incorrect answers, shuffled by a hash of the question."""
    question = row.text(row.fields["question"])
    correct = row.text(row.fields["answer"])
    options = [correct] + [row.text(name) for name in GPQA_WRONG]
    order = sorted(range(4), key=lambda i: _digest(question, str(i), options[i]))
    choices = [options[i] for i in order]
    record = {"question": question, "choices": choices, "answer": LETTERS[order.index(0)], "type": "mc"}
    for source, target in (("High-level domain", "domain"), ("Subdomain", "subdomain")):
        value = row.raw(source, required=False)
        if value is not None:
            record[target] = value
    return record


_ASSISTANT = "\n\nAssistant:"


def _build_hh_rlhf(row: _Row) -> dict:
    """Anthropic/hh-rlhf: the shared conversation, with the two final replies as choices in a per-row order."""
    chosen, rejected = row.text("chosen"), row.text("rejected")
    c_cut, r_cut = chosen.rfind(_ASSISTANT), rejected.rfind(_ASSISTANT)
    if c_cut > 0 and r_cut > 0 and chosen[:c_cut] == rejected[:r_cut]:
        context = chosen[:c_cut].strip()
        good = chosen[c_cut + len(_ASSISTANT) :].strip() or "(empty response)"
        bad = rejected[r_cut + len(_ASSISTANT) :].strip() or "(empty response)"
        question = f"{context}\n\nWhich response is better as the Assistant's next reply?"
    else:
        good, bad, question = chosen, rejected, "Which response is better?"
    chosen_first = _digest(chosen, rejected)[0] % 2 == 0
    choices = [good, bad] if chosen_first else [bad, good]
    return {"question": question, "choices": choices, "answer": "A" if chosen_first else "B", "type": "mc"}


PRESETS: dict[str, Preset] = {
    "math500": Preset(
        "math500",
        "HuggingFaceH4/MATH-500 (problem, answer, subject, level, unique_id)",
        {"question": "problem", "answer": "answer", "choices": None, "id": "unique_id"},
        _build_math500,
        frozenset({"choices"}),
    ),
    "gsm8k": Preset(
        "gsm8k",
        "openai/gsm8k (question, answer ending '#### N'): gold N without commas, worked answer kept as solution",
        {"question": "question", "answer": "answer", "choices": None, "id": None},
        _build_gsm8k,
        frozenset({"choices"}),
    ),
    "svamp": Preset(
        "svamp",
        "arkilpatel/SVAMP (ID, Body, Question, Answer, Equation, Type): Body and Question joined, gold 51.0 as 51",
        {"question": "Question", "answer": "Answer", "choices": None, "id": "ID"},
        _build_svamp,
        frozenset({"choices"}),
        columns=("Body",),
    ),
    "mgsm": Preset(
        "mgsm",
        "google-research/url-nlp's MGSM (mgsm_XX.tsv: question, answer; no header row), or juletxara/mgsm (gold: "
        "answer_number): the language from the name",
        {"question": "question", "answer": "answer", "choices": None, "id": None},
        _build_mgsm,
        frozenset({"choices"}),
        header=("question", "answer"),
        id_parts=("language",),
    ),
    "gpqa": Preset(
        "gpqa",
        "Idavidrein/gpqa (Question, Correct Answer, Incorrect Answer 1-3), choices shuffled per question",
        {"question": "Question", "answer": "Correct Answer", "choices": None, "id": "Record ID"},
        _build_gpqa,
        frozenset({"choices"}),
        columns=tuple(GPQA_WRONG),
        mc=True,
    ),
    "mmlu": Preset(
        "mmlu",
        "cais/mmlu (question, choices, answer index or letter, subject)",
        {"question": "question", "answer": "answer", "choices": "choices", "id": None},
        _build_mmlu,
        mc=True,
    ),
    "deepscaler": Preset(
        "deepscaler",
        "agentica-org/DeepScaleR-Preview-Dataset and DeepScaleR's AIME/AMC files (problem, answer, solution)",
        {"question": "problem", "answer": "answer", "choices": None, "id": None},
        _build_deepscaler,
        frozenset({"choices"}),
    ),
    "hh-rlhf": Preset(
        "hh-rlhf",
        "Anthropic/hh-rlhf (chosen, rejected) as a two-choice preference question",
        {"question": None, "answer": None, "choices": None, "id": None},
        _build_hh_rlhf,
        frozenset({"question", "answer", "choices"}),
        columns=("chosen", "rejected"),
        mc=True,
    ),
    "arc": Preset(
        "arc",
        "allenai ARC's CSV (questionID, AnswerKey, question ending '(A) … (B) …'): choices split out of the text",
        {"question": "question", "answer": "AnswerKey", "choices": None, "id": "questionID"},
        _build_arc,
        frozenset({"choices"}),
        mc=True,
    ),
}

_GENERIC = Preset(
    "generic",
    "any layout: question/answer/choices/id columns by name",
    {"question": "question", "answer": "answer", "choices": "choices", "id": "id"},
    _build_generic,
)


def _resolve(preset: str | None, overrides: Mapping[str, str | None]) -> tuple[Preset, dict[str, Field], set[str]]:
    """Pick the preset and work out field names and which roles are required."""
    if preset is None:
        spec = _GENERIC
    elif preset in PRESETS:
        spec = PRESETS[preset]
    else:
        raise UabError(f"unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    fields = dict(spec.fields)
    if preset is None:
        required = {"question"}
    else:
        required = {role for role in ("question", "answer", "choices") if fields[role]}
    for role, name in overrides.items():
        if name is None:
            continue
        if role in spec.fixed:
            raise UabError(f"preset {spec.name} builds its {role} itself; a {role} field cannot be given")
        fields[role] = _choice_columns(name) if role == "choices" and "," in name else name
        if not (preset is None and role == "choices"):  # a mixed file may have open rows without choices
            required.add(role)
    return spec, fields, required


def _choice_columns(value: str) -> tuple[str, ...]:
    """``--choices-field A,B,C,D``: the choices one per column, in order."""
    names = _column_names(value, "--choices-field")
    if "" in names:
        raise UabError(f"--choices-field names an empty column: {value!r}")
    return names


def convert_records(
    rows: Iterable[Mapping[str, Any] | tuple[int, Mapping[str, Any]]],
    preset: str | None,
    question_field: str | None = None,
    answer_field: str | None = None,
    choices_field: str | None = None,
    id_field: str | None = None,
    source: str | None = None,
    path: str | None = None,
    answer_base: int | None = None,
) -> Iterator[dict]:
    """Map rows (dicts, or read_table's (line, dict) pairs, or (line, dict, position) for a
    datasets-server row: the default id counts by position) to question records, by preset or by field names.
    ``answer_base``: golds are choices' indices, counted from 0 or 1 (MedMCQA's original cop 1-4); None: a digit
    string that is a choice's text is that choice, else an index from 0."""
    overrides = {"question": question_field, "answer": answer_field, "choices": choices_field, "id": id_field}
    spec, fields, required = _resolve(preset, overrides)
    given = frozenset(role for role, name in overrides.items() if name is not None)
    if answer_base not in (None, 0, 1):
        raise UabError(f"--answer-base should be 0 or 1, got {answer_base}")
    if answer_base is not None and "choices" in spec.fixed:
        raise UabError(f"preset {spec.name} reads no gold as a choice's index; --answer-base cannot be given")
    label = f"preset {spec.name}" if preset is not None else "the field mapping"
    prefix = preset or source or "row"
    # where the records come from: the benchmark, else the file's name (a row's own source column is kept)
    origin = preset or (None if path in (None, display_name("-")) else os.path.basename(path))

    def records() -> Iterator[dict]:
        seen: dict[str, int] = {}
        any_choices, warned = False, set()
        indexed: int | None = None  # the line of the first row whose gold was read as an index from 0 unsaid
        from_zero = False  # some such gold is 0: they do count from 0
        for index, item in enumerate(rows):
            line, data, *at = item if isinstance(item, tuple) else (index + 1, item)
            position = at[0] if at else index  # a datasets-server row's row_idx, else its place here
            if not isinstance(data, Mapping):
                raise UabError(f"expected an object per row, got {type(data).__name__}", path=path, line=line)
            row = _Row(data, fields, required, line, path, label, answer_base, given)
            body = spec.build(row)
            _check_gold(row, body)
            if row.index is not None:
                indexed = line if indexed is None else indexed
                from_zero = from_zero or row.index == 0
            for kind, advice in (("note", row.note), ("advice", _advice(row, body) if preset is None else None)):
                if advice is not None and kind not in warned:
                    warned.add(kind)  # once: the other rows are alike
                    warnings.warn(str(row.error(advice)), UserWarning, stacklevel=2)
            raw_id = row.role("id")
            if isinstance(raw_id, (bool, Mapping, list, tuple)):
                raise row.error(f"field {fields['id']!r} should be text or a number, got {type(raw_id).__name__}")
            named = [str(body[part]) for part in spec.id_parts if part in body]
            rec_id = _answer_text(raw_id) if raw_id is not None else "-".join([prefix, *named, str(position)])
            if not rec_id:
                raise row.error(f"field {fields['id']!r} is empty")
            if rec_id in seen:
                raise row.error(f"duplicate id {rec_id!r} (first at row/line {seen[rec_id]})")
            seen[rec_id] = line
            any_choices = any_choices or "choices" in body
            record = {"id": rec_id, **body}
            if source is not None:
                record["source"] = source
            elif origin and record.get("source") is None:  # a row's empty source cell names none
                record["source"] = origin
            try:  # a column passed through (MATH's "type": "Algebra") can make a record phase1 refuses,
                check_record(record)  # or one that cannot be written (too deep, an integer beyond 64 bits)
                dumps(record)
            except UabError as exc:
                raise row.error(f"{exc.message} (the record this row converts to)") from None
            yield record
        if not seen:
            raise UabError("empty input: no records", path=path)
        if indexed is not None and not from_zero and preset is None:  # 1-based golds without the last choice's?
            warnings.warn(str(UabError(
                "no gold read as a choice's index is 0 (choice A): if they count from 1 (MedMCQA's original cop 1-4), "
                "each was read as the choice after its own: give --answer-base 1 (--answer-base 0 if they count from 0)",
                path=path, line=indexed)), UserWarning, stacklevel=2)
        if preset is None and (choices_field is not None or answer_base is not None) and not any_choices:
            raise UabError(f"no row has the choices {_field_label(fields['choices'])}" + (
                "" if choices_field else " that --answer-base numbers: name them with --choices-field"), path=path)

    return records()


# A row as a reader yields it: its line (or row number), its cells and, for a datasets-server row, its row_idx.
Located = tuple[int, dict] | tuple[int, dict, int]

# A JSON integer of 20 digits or more: beyond 64 bits orjson reads it as a float (inexact).
_LONG_INTEGER = re.compile(rb"\d{20}")


_TOO_DEEP = "a value here is nested too deeply for a record"


def _loads(raw: bytes, path: Path | str, line: int | None = None):
    """JSON by orjson, or by json where a number may be an integer beyond 64 bits, which json
    reads exactly (a gold answer of 30 digits kept its digits). A value nested deeper than json
    reads is an error at ``line`` (orjson reads up to 1,024 levels, json fewer; no record is written that deep)."""
    value = orjson.loads(raw)
    if _LONG_INTEGER.search(raw):
        try:
            value = json.loads(raw)
        except RecursionError:
            raise UabError(_TOO_DEEP, path=str(path), line=line) from None
    return value


_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def _lines(text: bytes) -> Iterator[bytes]:
    """``text.splitlines()`` one line at a time (not a list of them all, as large as the text)."""
    start = 0
    for found in _LINE_BREAK.finditer(text):
        yield text[start:found.start()]
        start = found.end()
    if start < len(text):
        yield text[start:]


def _read_jsonl(path: Path | str, text: bytes) -> Iterator[tuple[int, dict]]:
    """Rows of a JSON Lines file, numbered by line; blank lines are skipped."""
    for number, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        try:
            row = _loads(line, path, number)
        except orjson.JSONDecodeError as exc:
            raise UabError(nul_byte(line) or f"invalid JSON: {non_finite(exc) or exc}", path=str(path), line=number) from None
        if not isinstance(row, dict):
            raise UabError(f"expected a JSON object, got {type(row).__name__}", path=str(path), line=number)
        yield number, row


def _read_json(path: Path | str, text: bytes) -> Iterator[Located]:
    """Rows of a .json file: an array of objects, {"data"|"rows": [...]} (the datasets-server's
    ``{"row_idx", "row"}`` entries unwrapped), or JSON Lines (HF to_json)."""
    try:
        doc = _loads(text, path)
    except orjson.JSONDecodeError as exc:
        if not _json_lines(text):  # one document (an array, a pretty-printed object): its error is where it breaks
            raise UabError(f"invalid JSON: {non_finite(exc) or f'{exc.msg} (column {exc.colno})'}", path=str(path),
                           line=exc.lineno) from None
        yield from _read_jsonl(path, text)
        return
    member = None
    if isinstance(doc, dict):
        member = next((k for k in ("data", "rows") if isinstance(doc.get(k), list)), None)
        _by_column(path, doc, member)
        doc = doc[member] if member is not None else [doc]
    if not isinstance(doc, list):
        raise UabError("expected a JSON array of objects", path=str(path))
    # the Hugging Face datasets-server's /rows: {"rows": [{"row_idx": 0, "row": {...}, ...}]}
    served = bool(doc) and all(isinstance(r, dict) and "row_idx" in r and isinstance(r.get("row"), dict) for r in doc)
    for number, row in zip(_row_lines(path, text.decode("utf-8"), member), doc, strict=True):
        if not isinstance(row, dict):
            raise UabError(f"expected a JSON object, got {type(row).__name__}", path=str(path), line=number)
        if served:
            yield _served(path, number, row)
        else:
            yield number, row


def _by_column(path: Path | str, doc: dict, member: str | None) -> None:
    """A JSON object that holds a table by column or by row label (pandas' to_json, whose default
    orient is 'columns': {"question": {"0": …}}), or as lists of cells (orient='split') is an error
    naming the layout that reads."""
    split = member == "data" and isinstance(doc.get("columns"), list) and any(isinstance(r, list) for r in doc["data"])
    if split or (member is None and doc and all(isinstance(value, dict) for value in doc.values())):
        raise UabError("a table by column or by row label (pandas' to_json orient='columns', 'index' or 'split'?), "
                       "not one object per row: write it with to_json(orient='records') (lines=True for JSON Lines)",
                       path=str(path), line=1)


_FIRST_LINE = re.compile(rb"[^\r\n]*")


def _json_lines(text: bytes) -> bool:
    """Whether a text that is no JSON document may be JSON Lines: it is blank, or it opens with no
    array and its first line is an object by itself (a pretty-printed object's first line, "{", is not)."""
    text = text.lstrip()
    try:
        return not text or (text[:1] != b"[" and isinstance(orjson.loads(_FIRST_LINE.match(text).group()), dict))
    except orjson.JSONDecodeError:
        return False


_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace


def _row_lines(path: Path | str, text: str, member: str | None) -> list[int]:
    """The line on which each row of a JSON document starts: each element of its array (of the
    array in its top-level ``member``, the last of that name as a parser keeps it), or the
    document itself when it is one object. ``text`` is valid JSON (parsed already)."""
    raw_decode = json.JSONDecoder().raw_decode

    def decode(at: int) -> tuple[Any, int]:  # the value at ``at``, and where it ends
        try:
            return raw_decode(text, at)
        except RecursionError:  # as in _loads
            raise UabError(_TOO_DEEP, path=str(path),
                           line=text.count("\n", 0, at) + 1) from None

    def skip(at: int) -> int:
        return _SPACE.match(text, at).end()

    def elements(at: int) -> tuple[list[int], int]:  # the array at ``at``: where each element starts, its end
        starts, at = [], skip(at + 1)
        while text[at] != "]":
            starts.append(at)
            at = skip(decode(at)[1])
            at = skip(at + 1) if text[at] == "," else at
        return starts, at + 1

    at = skip(0)
    if text[at] == "[":
        starts = elements(at)[0]
    elif member is None:  # one object: one row
        starts = [at]
    else:  # an object's member: walk its members to the array
        starts, at = [], skip(at + 1)
        while text[at] != "}":
            name, at = decode(at)
            at = skip(skip(at) + 1)  # past the colon
            if name == member and text[at] == "[":
                starts, at = elements(at)
            else:
                at = decode(at)[1]
            at = skip(at)
            at = skip(at + 1) if text[at] == "," else at
    lines, line, last = [], 1, 0
    for start in starts:
        line += text.count("\n", last, start)
        lines.append(line)
        last = start
    return lines


def _served(path: Path | str, number: int, item: dict) -> Located:
    """A datasets-server row: its cells, and its position in the split (``row_idx``: a page
    fetched at an offset keeps the ids of the whole split). A cell the server cut short (named
    in ``truncated_cells`` and not null, as /first-rows does to long cells) is an error."""
    row = item["row"]
    cut = [c for c in item.get("truncated_cells") or () if isinstance(c, str) and row.get(c) is not None]
    if cut:
        raise UabError(f"the datasets-server cut cell(s) {', '.join(map(repr, cut))} of this row short "
                       "(truncated_cells): fetch the rows with /rows, or convert the split's Parquet file",
                       path=str(path), line=number)
    position = item["row_idx"]
    if isinstance(position, int) and not isinstance(position, bool) and position >= 0:
        return number, row, position
    return number, row


def _read_parquet(path: Path | str, source=None) -> Iterator[tuple[int, dict]]:
    """Rows of a Parquet file (or of ``source``, its bytes), numbered from 1, read in batches."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UabError("reading Parquet needs pyarrow: pip install 'uab-cli[parquet]'", path=str(path)) from None
    try:
        parquet = pq.ParquetFile(path if source is None else source)
    except (pa.ArrowException, OSError) as exc:
        raise UabError(f"cannot read Parquet: {exc}", path=str(path)) from None

    def rows() -> Iterator[tuple[int, dict]]:
        number = 0
        try:
            for batch in parquet.iter_batches(batch_size=1024):
                for row in batch.to_pylist():
                    number += 1
                    yield number, {key: _plain(value, key) for key, value in row.items()}
        except (pa.ArrowException, OSError) as exc:
            raise UabError(f"cannot read Parquet: {exc}", path=str(path), line=number + 1) from None

    return rows()


def _plain(value: Any, column: str) -> Any:
    """A Parquet value as JSON can hold it: binary as its UTF-8 text, else (an image, say) null
    with a warning naming ``column``; a decimal as an int when integral, else as its exact text
    ("1.50"); nested values alike."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            warnings.warn(f"column {column!r} holds binary data that is no text (an image?): written as null",
                          UserWarning, stacklevel=2)
            return None
    if isinstance(value, decimal.Decimal):
        return int(value) if value.is_finite() and value == value.to_integral_value() else str(value)
    if isinstance(value, dict):
        return {k: _plain(v, column) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, column) for v in value]
    return value


def _column_names(value: str, option: str) -> tuple[str, ...]:
    """The column names of a comma-separated option value (``--columns``, ``--choices-field``), stripped; an
    empty name stays empty (a column ``--columns`` leaves out)."""
    names = tuple(name.strip() for name in value.split(","))
    if not any(names):
        raise UabError(f"{option} names no column")
    _named_once(names, option)
    return names


def _named_once(names: Iterable[str], whose: str, path: Path | str | None = None, line: int | None = None) -> None:
    """A name ``whose`` (an option, a CSV's header) gives two columns is an error; an empty name (a column
    left out) is none."""
    named = [name for name in names if name.strip()]
    twice = sorted({name for name in named if named.count(name) > 1})
    if twice:
        raise UabError(f"{whose} names a column twice: {', '.join(map(repr, twice))}",
                       path=None if path is None else str(path), line=line)


# A CSV's delimiter: the one of these that splits its first row into the most cells (into as many as --columns
# names, for a file without a header row, and of those the one that splits the most rows so); a comma where several
# do alike. A .tsv file is split at tabs.
_DELIMITERS = (",", ";", "\t")
_SNIFF = 1 << 20  # characters read to find it
_SEP = re.compile(r"sep=([^\r\n\"])(?:\r\n?|\n)")  # Excel's first line naming the delimiter (sep=;), which overrides it


def _delimiter(head: str, columns: tuple[str, ...] | None) -> str:
    """The delimiter of a CSV text, by its first ``_SNIFF`` characters (see ``_DELIMITERS``)."""

    def first(delimiter: str) -> list[str]:
        try:
            return next((cells for cells in csv.reader(io.StringIO(head, newline=""), delimiter=delimiter) if cells), [])
        except csv.Error:  # the strict read names the line
            return []
    def fitting(delimiter: str) -> int:  # the rows it splits into as many cells as ``columns`` names
        count = 0
        try:
            for cells in csv.reader(io.StringIO(head, newline=""), delimiter=delimiter):
                count += len(cells) == len(columns)
        except csv.Error:
            pass
        return count
    cells = {delimiter: len(first(delimiter)) for delimiter in _DELIMITERS}
    exact = [d for d in _DELIMITERS if columns is not None and cells[d] == len(columns)]
    if len(exact) > 1:  # a comma in a tab-separated first row splits it so too: the one that splits most rows so
        exact.sort(key=fitting, reverse=True)  # stable: a comma on a tie
    return exact[0] if exact else max(_DELIMITERS, key=cells.__getitem__)


def _header(path: Path | str, cells: list[str], line: int) -> list[str]:
    """A CSV's header row: a name given twice is an error; a column with no name (a pandas index)
    is left out, with a warning."""
    _named_once(cells, "the header", path, line)
    unnamed = [str(number) for number, cell in enumerate(cells, start=1) if not cell.strip()]
    if unnamed:
        warnings.warn(str(UabError(f"the header leaves column {', '.join(unnamed)} unnamed (a pandas index?): "
                                   "left out", path=str(path), line=line)), UserWarning, stacklevel=2)
    return [cell if cell.strip() else "" for cell in cells]


def _names(cells: list[str], columns: tuple[str, ...]) -> bool:
    """Whether a CSV row names the ``columns`` (a header row), in the cells of those it does not leave out."""
    return len(cells) == len(columns) and all(cell.strip() == name for cell, name in zip(cells, columns) if name)


_BLOCK = 1 << 16  # bytes decoded at a time to check a CSV text is UTF-8


def _utf8_head(path: Path | str, text: bytes) -> str:
    """The first ``_SNIFF`` characters of ``text``, all of it checked to be UTF-8 a block at a time
    (never the whole as one str: 4 bytes a character for a file with an emoji); ``UabError`` naming
    the line of the first byte that is not."""
    decoder, head = codecs.getincrementaldecoder("utf-8")(), ""
    for at in range(0, max(len(text), 1), _BLOCK):
        carried = len(decoder.getstate()[0])  # a character's first bytes, from the block before
        try:
            chars = decoder.decode(text[at:at + _BLOCK], final=at + _BLOCK >= len(text))
        except UnicodeDecodeError as exc:
            raise not_utf8(text, at - carried + exc.start, str(path)) from None
        if len(head) < _SNIFF:
            head += chars[:_SNIFF - len(head)]
    return head


def _read_csv(path: Path | str, text: bytes, columns: tuple[str, ...] | None = None,
              delimiter: str | None = None, preset: Preset | None = None) -> Iterator[tuple[int, dict]]:
    """Rows of a CSV file, numbered by the line each starts on; every cell is text, an empty one
    null (a missing value). Its first row names the columns, unless ``columns`` does (a file
    without a header row), or else the ``preset``'s ``header`` (a first row that names them, and maybe more
    columns, is read as the file's header); a column with no name is left out. Split at the delimiter a first line
    ``sep=;`` names, else at ``delimiter``, else at the one ``_delimiter`` finds. Blank (or whitespace-only)
    lines are skipped, as a JSON Lines file's are."""
    own = columns is None and preset is not None and bool(preset.header)  # the preset's files have no header row
    columns = preset.header if own else columns
    head = _utf8_head(path, text)
    if (nul := nul_byte(text, "CSV")) is not None:  # csv reads it as a cell's character, into the question
        raise UabError(nul, path=str(path), line=text.count(b"\n", 0, text.index(b"\0")) + 1)
    limit = csv.field_size_limit(max(csv.field_size_limit(), len(text)))  # a long cell (a solution) is no error
    sep = _SEP.match(head)
    try:
        delimiter = sep.group(1) if sep else delimiter or _delimiter(head, columns)
        # not a StringIO: it holds 4 bytes a character, a 50 MB file's 200 MB
        lines = io.TextIOWrapper(io.BytesIO(text), encoding="utf-8", newline="")
        reader = csv.reader(lines, delimiter=delimiter, strict=True)
        if sep:
            next(reader)
        header = None if columns is None else list(columns)
        first = True
        while True:
            start = reader.line_num + 1
            try:
                cells = next(reader, None)
            except csv.Error as exc:
                raise UabError(f"invalid CSV: {exc}", path=str(path), line=start) from None
            if cells is None:
                break
            if not cells or (len(cells) == 1 and not cells[0].strip()):  # a blank (or whitespace-only) line
                continue
            if header is None:
                header = _header(path, cells, start)
            elif columns is not None and first and _names(cells, columns) and not own:
                raise UabError("this row is a header (it names the columns --columns gives): leave --columns out",
                               path=str(path), line=start)
            elif own and first and set(columns) <= {cell.strip() for cell in cells}:
                # a header row naming the preset's columns, and maybe more (juletxara/mgsm's answer_number): its own
                header, columns, own = [name.strip() for name in _header(path, cells, start)], None, False
                first = False
            elif len(cells) != len(header):
                whose = "the header" if columns is None else f"preset {preset.name} reads" if own else "--columns names"
                why = f" ({', '.join(columns)}: its files have no header row)" if own else ""
                raise UabError(f"row has {len(cells)} cells, {whose} {len(header)}{why}", path=str(path), line=start)
            else:
                first = False
                row = {name: cell if cell else None for name, cell in zip(header, cells) if name}
                yield start, row if columns is not None else _Headed(row)
    finally:
        csv.field_size_limit(limit)


READERS = (".jsonl", ".json", ".csv", ".tsv", ".parquet")


def read_table(path: str | Path, columns: str | None = None, preset: str | None = None,
               data: bytes | None = None) -> Iterator[Located]:
    """Return an iterator of (line or row number, row[, position]) over a .jsonl, .json, .csv, .tsv or .parquet
    file, or over stdin (``-``), whose format is told from its content. ``columns`` (comma-separated) names the
    columns of a CSV file without a header row; stdin is then read as CSV. A ``preset`` whose files have no
    header row (mgsm) names a CSV file's columns where ``columns`` does not. ``data``: the file's bytes, read
    already (``path`` then names it)."""
    names = None if columns is None else _column_names(columns, "--columns")
    spec = PRESETS.get(preset) if preset is not None else None
    if data is not None:
        return _read_text(path, data, Path(path).suffix.lower() or None, names, spec)
    if str(path) == "-":
        text = stdin().read()
        if text.startswith(b"PAR1"):
            _no_columns("<stdin>", ".parquet", names)
            return _read_parquet("<stdin>", io.BytesIO(text))
        return _read_text("<stdin>", text, None if names is None else ".csv", names, spec)  # --columns: CSV
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in READERS:
        kinds = ", ".join(READERS)
        raise UabError(f"unsupported file type {suffix or '(none)'!r}; expected one of: {kinds}", path=str(path))
    _no_columns(path, suffix, names)
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise UabError("no such file", path=str(path)) from None
    except OSError as exc:  # a name too long, a loop of links, no permission on the way
        raise UabError(f"cannot read: {exc.strerror}", path=str(path)) from None
    if suffix == ".parquet":
        return _read_parquet(path)
    try:  # a FIFO reads as a file does; a directory, or no permission, is an error naming it
        text = path.read_bytes()
    except OSError as exc:
        raise UabError(f"cannot read: {exc.strerror}", path=str(path)) from None
    return _read_text(path, text, suffix, names, spec)


def _no_columns(path: Path | str, suffix: str, columns: tuple[str, ...] | None) -> None:
    """``--columns`` given for a file that names its columns itself (not a CSV file) is an error."""
    if columns is not None and suffix not in (".csv", ".tsv"):
        raise UabError(f"--columns names the columns of a CSV file without a header row; a {suffix} file names "
                       "its own (leave --columns out)", path=str(path))


def _read_text(path: Path | str, text: bytes, suffix: str | None,
               columns: tuple[str, ...] | None = None, preset: Preset | None = None) -> Iterator[Located]:
    """Rows of a text file by its ``suffix`` (None: told from the content, CSV unless it opens
    as JSON does); ``columns``: a CSV file's, which has no header row; ``preset``: see ``_read_csv``."""
    if text.startswith(_BOM):
        text = text[len(_BOM):]
    opening = text.lstrip()[:1]
    if suffix in (".csv", ".tsv") or (suffix is None and opening not in (b"", b"{", b"[")):
        return _read_csv(path, text, columns, "\t" if suffix == ".tsv" else None, preset)
    _utf8_head(path, text)  # orjson names no byte of one that is not ("str is not valid UTF-8: surrogates not allowed")
    is_array = opening == b"["  # a JSON array saved as .jsonl reads as .json
    return _read_jsonl(path, text) if suffix == ".jsonl" and not is_array else _read_json(path, text)

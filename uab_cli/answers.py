"""Answers: extraction from a response, normalisation, equivalence (math-verify), majority
vote and grading."""

from __future__ import annotations

import functools
import random
import re
import string
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .records import gold_letter, letters, question_type

# --- extraction --------------------------------------------------------------------

_CONF_TAIL = re.compile(r"confidence\W{0,6}-?\d+(?:\.\d+)?\W*$", re.IGNORECASE | re.MULTILINE)
_ANSWER_IS = re.compile(
    r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*:?\s*(.+?)\s*(?:$|\n|(?<=[^\d])\.\s)",
    re.IGNORECASE,
)
_HASHES = re.compile(r"####\s*(.+?)\s*(?:$|\n)")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?|-?\.\d+")


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced."""
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    i = text.find("{", start)
    if i < 0:
        rest = text[start + len("\\boxed"):].strip().split()
        return rest[0].strip("$.") if rest else None
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
    return None


def _strip_confidence(text: str) -> str:
    return _CONF_TAIL.sub("", text or "")


def extract_math(text: str) -> str | None:
    """Final math answer: last \\boxed{}, then "the answer is"/"Answer:", "####", last number."""
    text = _strip_confidence(text)
    boxed = last_boxed(text)
    if boxed is not None and boxed.strip():
        return normalize_math(boxed)
    for pattern in (_ANSWER_IS, _HASHES):
        found = pattern.findall(text)
        if found:
            ans = normalize_math(found[-1])
            if ans:
                return ans
    numbers = _NUMBER.findall(text)
    return normalize_math(numbers[-1]) if numbers else None


_MC_PATTERNS = [
    re.compile(r"answer\s*(?:is|:)?\s*:?\s*(?:option|choice)?\s*\(?\**([A-Z])\b\)?", re.IGNORECASE),
    re.compile(r"\(([A-Z])\)"),
    re.compile(r"(?:^|\n)\s*\**([A-Z])[\).:](?:\s|$)"),
]


def extract_choice(text: str, choices: Sequence[str]) -> str | None:
    """The chosen letter: \\boxed{B}, "Answer: B", "(B)", "B)", a bare letter, or a choice's text."""
    text = _strip_confidence(text)
    valid = letters(len(choices))
    boxed = last_boxed(text)
    if boxed is not None:
        b = boxed.strip().strip("()").upper()
        if b in valid:
            return b
    for pattern in _MC_PATTERNS:
        found = [f.upper() for f in pattern.findall(text) if f.upper() in valid]
        # "answer is" counts case-insensitively; bare letters only when upper case.
        if pattern is not _MC_PATTERNS[0]:
            found = [f for f in pattern.findall(text) if f in valid]
        if found:
            return found[-1]
    stripped = text.strip().strip(".*").strip()
    if stripped.upper() in valid and len(stripped) == 1:
        return stripped.upper()
    lowered = normalize_text(text)
    hits = [(lowered.rfind(normalize_text(c)), letter) for letter, c in zip(valid, choices)
            if normalize_text(c) and normalize_text(c) in lowered]
    return max(hits)[1] if hits else None


def extract_text(text: str) -> str | None:
    """Free-text answer: after "Answer:"/"the answer is" when present, else the whole text."""
    text = _strip_confidence(text)
    found = _ANSWER_IS.findall(text)
    ans = normalize_text(found[-1] if found else text)
    return ans or None


def extract_answer(text: str, rec: dict) -> str | None:
    """Extract and normalise a response's answer according to the record's question type."""
    kind = question_type(rec)
    if kind == "mc":
        return extract_choice(text, rec.get("choices") or [])
    if kind == "text":
        return extract_text(text)
    return extract_math(text)


# --- normalisation -----------------------------------------------------------------

_LATEX_NOISE = re.compile(r"\\left|\\right|\\!|\\,|\\;|\\:|\\displaystyle|\\ ")
_UNITS = re.compile(r"\\(?:text|mbox|mathrm)\{\s*[a-zA-Z ]*\}\s*$")
_DEGREES = re.compile(r"\^\s*\{?\\circ\}?")
_THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_ASSIGN = re.compile(r"^[a-zA-Z]\s*=\s*(?=[^=])")


def normalize_math(ans: str) -> str:
    """Canonical string for a math answer: no $, spaces, units, \\left/\\right, x= prefix."""
    a = str(ans).strip()
    if a.isascii() and a.isdigit():  # the common case, kept cheap: votes over a million records
        return str(int(a))
    inner = last_boxed(a)
    if inner is not None:
        a = inner
    a = a.strip().rstrip(".").strip().strip("$").replace("\\(", "").replace("\\)", "").replace("\\[", "").replace("\\]", "")
    a = a.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    a = _LATEX_NOISE.sub("", a)
    a = _DEGREES.sub("", a)
    a = a.replace("\\%", "").replace("%", "").replace("\\$", "")
    a = _UNITS.sub("", a).strip()
    if a.startswith("\\text{") and a.endswith("}"):
        a = a[6:-1]
    a = _ASSIGN.sub("", a)
    a = a.rstrip(".").strip()
    a = re.sub(r"\s+", "", a)
    if _THOUSANDS.match(a):
        a = a.replace(",", "")
    num = as_number(a)
    if num is not None and num.denominator == 1:
        return str(num.numerator)
    if num is not None and re.fullmatch(r"-?\d*\.\d+", a):
        return _decimal_str(a)
    return a


def _decimal_str(a: str) -> str:
    neg, a = a.startswith("-"), a.lstrip("-")
    whole, frac = a.split(".")
    frac = frac.rstrip("0")
    out = (whole or "0") + ("." + frac if frac else "")
    return "-" + out if neg and out != "0" else out


_FRAC = re.compile(r"^(-?)\\frac\{(-?\d+)\}\{(\d+)\}$|^(-?)\\frac(\d)(\d)$")


@functools.lru_cache(maxsize=1 << 16)
def as_number(a: str) -> Fraction | None:
    """Exact value of a plain number: 12, -3.5, 7/8, \\frac{7}{8}; else None."""
    if a.isascii() and a.isdigit():
        return Fraction(int(a))
    try:
        if re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)", a):
            return Fraction(a)
        if re.fullmatch(r"[-+]?\d+/\d+", a):
            return Fraction(a) if not a.endswith("/0") else None
    except (ValueError, ZeroDivisionError):
        return None
    m = _FRAC.match(a)
    if m:
        sign, num, den = (m.group(1), m.group(2), m.group(3)) if m.group(2) else m.group(4, 5, 6)
        if int(den) == 0:
            return None
        value = Fraction(int(num), int(den))
        return -value if sign else value
    return None


def normalize_text(ans: str) -> str:
    """SQuAD-style: lower case, no punctuation or articles, single spaces."""
    a = str(ans).lower()
    a = "".join(ch for ch in a if ch not in string.punctuation)
    a = re.sub(r"\b(a|an|the)\b", " ", a)
    return " ".join(a.split())


# --- equivalence -------------------------------------------------------------------


def _timeout() -> int | None:
    # math-verify's timeouts use SIGALRM, which only works on the main thread.
    return 5 if threading.current_thread() is threading.main_thread() else None


@functools.lru_cache(maxsize=65536)
def _parsed(ans: str):
    from math_verify import parse

    return parse(f"${ans}$", parsing_timeout=_timeout())


@functools.lru_cache(maxsize=65536)
def math_equal(gold: str, pred: str) -> bool:
    """Whether two normalised math answers are the same value (math-verify; numbers exactly)."""
    if gold == pred:
        return True
    if _canonical_int(gold) and _canonical_int(pred):
        return False
    g, p = as_number(gold), as_number(pred)
    if g is not None and p is not None:
        return g == p
    from math_verify import verify

    try:
        return bool(verify(_parsed(gold), _parsed(pred), timeout_seconds=_timeout()))
    except Exception:  # a pathological expression is simply not equal
        return False


def _canonical_int(a: str) -> bool:
    """Whether ``a`` is an integer written the one way ``normalize_math`` writes it."""
    digits = a[1:] if a[:1] == "-" else a
    return digits.isascii() and digits.isdigit() and (digits[0] != "0" or a == "0")


def equal(a: str, b: str, kind: str) -> bool:
    """Equivalence of two normalised answers of a question type."""
    return math_equal(a, b) if kind == "math" else a == b


# --- voting ------------------------------------------------------------------------


@dataclass(frozen=True)
class Vote:
    """A majority vote: the winning answer and the count per answer class."""

    prediction: str | None
    votes: dict[str, int]


def group(answers: Sequence[str | None], kind: str) -> dict[str, int]:
    """Count answers per equivalence class, keyed by the class's lexicographically first member.

    ``None`` (no answer) is not counted.
    """
    given = [a for a in answers if a is not None]
    if kind != "math" or all(_canonical_int(a) for a in given):  # equal iff the same string
        counts: dict[str, int] = {}
        for a in given:
            counts[a] = counts.get(a, 0) + 1
        return counts
    distinct = sorted(set(given))
    reps: list[str] = []
    rep_of: dict[str, str] = {}
    by_value: dict[Fraction, str] = {}
    for a in distinct:
        value = as_number(a) if kind == "math" else None
        if value is not None and value in by_value:
            rep_of[a] = by_value[value]
            continue
        # Distinct plain numbers differ; anything symbolic goes through math-verify.
        candidates = reps if value is None else [r for r in reps if as_number(r) is None]
        match = next((r for r in candidates if equal(r, a, kind)), None)
        rep_of[a] = match or a
        if match is None:
            reps.append(a)
        if value is not None:
            by_value[value] = rep_of[a]
    counts = {}
    for a in given:
        counts[rep_of[a]] = counts.get(rep_of[a], 0) + 1
    return counts


def majority_vote(answers: Sequence[str | None], kind: str = "math", tie_seed: int | None = None) -> Vote:
    """Majority over answers; ties go to the lexicographically earliest answer, or to a
    seeded random choice when ``tie_seed`` is given. Samples without an answer never win."""
    counts = group(answers, kind)
    if not counts:
        return Vote(None, {})
    best = max(counts.values())
    tied = sorted(a for a, c in counts.items() if c == best)
    winner = tied[0] if tie_seed is None or len(tied) == 1 else random.Random(tie_seed).choice(tied)
    return Vote(winner, dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))))


def gold_answer(rec: dict) -> str | None:
    """The record's gold answer, normalised like predictions (a letter for multiple choice)."""
    if rec.get("answer") is None:
        return None
    kind = question_type(rec)
    if kind == "mc":
        return gold_letter(rec)
    return normalize_math(str(rec["answer"])) if kind == "math" else normalize_text(str(rec["answer"]))


def is_correct(rec: dict, prediction: str | None) -> bool | None:
    """Grade a prediction against the record's gold (``None`` when there is no gold)."""
    gold = gold_answer(rec)
    if gold is None:
        return None
    if prediction is None:
        return False
    return equal(gold, prediction, question_type(rec))

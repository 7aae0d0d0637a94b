"""Uncertainty signals: per-sample statistics of token log-probabilities, and their mapping
to the per-question success probability p_i that the allocators consume."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .backends.base import FILTERED
from .errors import UabError

DEFAULT_T = 0.2

# Appendix "VCS prompt": appended to the question before Phase-1 generation.
VCS_INSTRUCTION = (
    "After giving your answer, rate how confident you are that it is correct on a scale "
    "from 1 (not confident at all) to 10 (completely certain). "
    "End your response with: Confidence: <integer>."
)
# "Confidence: 8", "Confidence level: 8", "Confidence (1-10): 8", "confidence 8/10", "{confidence: 8}",
# "Confidence: \boxed{8}" (a box only after a colon on its line: "with confidence.\n\n\boxed{7}" is an
# answer), "Confidence in my answer: 8" (before a colon or a scale: "confidence in the answer 7" is prose),
# "Confidence - 8" and "Confidence -- 8" (a dash set apart is no sign): the scale a model restates ("(1-10)", "1-10:",
# "(scale 1-10)", "(out of 10)") is no score, and a sign is part of the number (-2 is no score), as a
# percent sign is (10% is no score 10) and a scale other than 10 ("4/5", "3 out of 5", "4 of 5"). A range
# ("8-9", "8 to 9") and a comma decimal ("8,5"; "8, 5" is a list) are one value, read by ``confidence_score``.
# Without a colon too ("Overall confidence 9", "42 with confidence 9"): a label more often than prose, so
# "I can say with high confidence 7." is read as the score 7 (README: where it is the answer, it is lost).
_SCALE = r"(?:/|(?:out\s+)?of)"  # "8/10", "8 out of 10", "8 of 10"
_VALUE = r"\d+(?:[.,]\d+)?"  # "8", "8.5", "8,5"
_TO = r"(?:[^\S\n]*[-\u2013\u2014][^\S\n]*|[^\S\n]+to[^\S\n]+)"  # "8-9", "8 – 9", "8 to 9"
_LEVEL = r"(?:\s+(?:level|score|rating))?"
CONFIDENCE_PATTERN = (
    r"confidence(?:\s+in\s+(?:(?:my|the|this)\s+)?answer(?=[^\S\n]*[*_]*[:(\[]))?"  # "in my answer:": filler
    + _LEVEL +
    r"(?:\s*[(\[]\s*(?:out\s+of\s+10|(?:(?:on\s+a\s+)?scale(?:\s+(?:of|from))?\s+)?"
    r"[01]\s*(?:-|\u2013|to)\s*10(?:\s+scale)?)\s*[)\]]|[^\S\n]+[01]\s*(?:-|\u2013)\s*10(?=[^\S\n]*:))?"  # "Confidence 1-10: 8"
    r"(?:(?:[^\w-]|--?(?=\s)){0,6}|[^\S\n]*[*_]*:[*_]*[^\S\n]*\$?\\(?:boxed|fbox)\s*\{\s*)"
    rf"(?P<value>-?{_VALUE}(?:{_TO}{_VALUE})?(?:\s*%|\s*{_SCALE}\s*\d+(?:\.\d+)?)?)"
)
_SCORE = re.compile(rf"({_VALUE})(?:{_TO}({_VALUE}))?(?:\s*{_SCALE}\s*10)?", re.IGNORECASE)  # its scale at most 10
# A confidence stated in a sentence ("My confidence level is 9.", "The confidence is 9", "Confidence is 8 out of 10"): no score (the
# paper asks for "Confidence: <integer>"), but never the answer of a reply that marks none (its last number).
STATED_CONFIDENCE = (
    r"(?:\b(?:my|our|the)\s+|^[^\S\n]*|(?<=[.!?]\s))confidence" + _LEVEL +
    r"(?:\s+in\s+(?:(?:my|the|this)\s+)?answer)?\s+(?:is|would\s+be|of|at|as|=)\s+"
    rf"(?:(?:about|around|roughly|approximately|an?)\s+)?-?{_VALUE}(?:{_TO}{_VALUE})?(?:\s*%|\s*{_SCALE}\s*\d+)?"
)


def confidence_score(found: str) -> int | None:
    """The score 1-10 a confidence states (``CONFIDENCE_PATTERN``'s ``value``): an integer or a decimal that is
    one ("8.0", "8,0"), or a range's midpoint rounded down ("7-9" is 8, "8-9" is 8: never above what the model
    said), each bound from 1 to 10; none for a value between ("8.5", "8,5": the prompt asks an integer), a
    percentage or a scale other than 10."""
    value = _SCORE.fullmatch(found)
    if value is None or len(found) > 4000:  # (Fraction, as int(), reads no more than 4,300 digits: no score)
        return None
    bounds = [Fraction(bound.replace(",", ".")) for bound in value.groups() if bound]
    if bounds == [1, 10] or len(bounds) == 2 and bounds[0] >= bounds[1]:  # the scale restated ("1-10"); no range ("9 - 5 = 4")
        return None
    mid = sum(bounds) / len(bounds)
    whole = len(bounds) == 2 or mid.denominator == 1
    return math.floor(mid) if whole and all(1 <= bound <= 10 for bound in bounds) else None


def token_stats(logprobs: Sequence[float] | None) -> dict:
    """ANLL and the other log-prob statistics of one sample.

    ``logprobs`` are natural-log probabilities of the sampled tokens, one per generated
    token. Returns ``anll`` (mean NLL, Eq. 2), ``total_nll``, ``max_nll`` (largest
    token NLL) and ``nll_var`` (variance of token NLLs); all ``None`` without logprobs.
    """
    if logprobs is None:
        return {"anll": None, "total_nll": None, "max_nll": None, "nll_var": None}
    if len(logprobs) == 0:  # an empty reply (0 tokens) from a backend that has logprobs: nothing uncertain
        return {"anll": 0.0, "total_nll": 0.0, "max_nll": 0.0, "nll_var": 0.0}
    nll = -np.asarray(logprobs, dtype=np.float64)
    return {
        "anll": float(nll.mean()),
        "total_nll": float(nll.sum()),
        "max_nll": float(nll.max()),
        "nll_var": float(nll.var()),
    }


def vote_outcomes(answered: Iterable[int], unanswered: int) -> list[int]:
    """The outcomes ``vote-entropy`` counts: each equivalent answer with its count, and each
    sample without an answer as an outcome of its own (two replies cut while thinking agree on
    nothing)."""
    return [*answered, *[1] * int(unanswered)]


def entropy(counts: Sequence[int]) -> float:
    """Shannon entropy (nats) of an empirical answer distribution given by counts; summed exactly
    (``math.fsum``), so the order of the counts (of the samples they were counted from) never
    changes it in the last bit, and with it a tie between questions that the allocation breaks."""
    total = sum(counts)
    return -math.fsum(c / total * math.log(c / total) for c in counts if c) if total else 0.0


def mean(values: Sequence[float]) -> float:
    """The mean of ``values``, summed exactly (``math.fsum``): the order of the samples never changes
    it in its last bit; where the sum overflows (statistics near 1e308), of each value divided first."""
    try:
        return math.fsum(values) / len(values)
    except OverflowError:
        return math.fsum(v / len(values) for v in values)


# --- signal -> p -------------------------------------------------------------------
# Each signal maps a question's Phase-1 samples to a scalar s (higher = less certain)
# or directly to p. The scalar signals use Eq. 3: p = exp(-s / T).


@dataclass(frozen=True)
class Signal:
    """A signal and what it needs: ``statistic``, the per-sample statistic it averages (the
    log-prob signals; ``None`` for the others); ``needs``, the option that makes it work without
    token logprobs; ``phase1``, the Phase-1 samples per question it needs; ``per_sample``:
    whether a single sample has it (a vote rule's confidence); ``tempered``: whether its
    temperature T changes p (vcs: score/10 reads none)."""

    name: str
    summary: str
    statistic: str | None = None
    needs: str | None = None
    phase1: int = 1
    per_sample: bool = True
    tempered: bool = True


REGISTRY: dict[str, Signal] = {s.name: s for s in (
    Signal("anll", "exp(-ANLL/T), ANLL the mean NLL of the sampled tokens (paper)", "anll"),
    Signal("total-nll", "exp(-s/T), s the sum of token NLLs", "total_nll"),
    Signal("max-nll", "exp(-s/T), s the largest token NLL", "max_nll"),
    Signal("nll-var", "exp(-s/T), s the variance of token NLLs", "nll_var"),
    Signal("vcs", "verbalised confidence score/10 (paper; needs --vcs)", needs="--vcs", tempered=False),
    Signal("vcs-pow", "(score/10)^(1/T), the official code's rule (needs --vcs)", needs="--vcs"),
    Signal("vote-entropy", "exp(-H/T), H the entropy of 2+ Phase-1 answers (needs -K 2)", needs="-K 2", phase1=2,
           per_sample=False),
)}
SCALAR_SIGNALS = {s.name: s.statistic for s in REGISTRY.values() if s.statistic}  # signal -> statistic
SIGNALS = tuple(REGISTRY)
SUMMARIES = {s.name: s.summary for s in REGISTRY.values()}  # one line per signal, for -h
# Signals with a statistic per sample (a vote rule's confidence).
SAMPLE_SIGNALS = tuple(s.name for s in REGISTRY.values() if s.per_sample)
VCS_MISSING_P = 0.5  # a response without a parsable confidence counts as "unsure" (a withheld question too)


def is_filtered(sample: dict) -> bool:
    """Whether the service's content filter withheld or cut a sample: it has no answer and no
    statistic (its text is not the model's), so a signal reads the question's other samples."""
    return sample.get("finish_reason") == FILTERED


def lacks(sample: dict, statistic: str = "anll") -> bool:
    """Whether ``sample`` came without the token-logprob ``statistic`` it should have (the server
    returned none); one the content filter withheld or cut has none by nature (``is_filtered``)."""
    return sample.get(statistic) is None and not is_filtered(sample)


def withheld(samples: Sequence[dict]) -> bool:
    """Whether the content filter withheld or cut every one of a question's Phase-1 ``samples``:
    none has a statistic, so a log-prob signal counts it as unsure (``VCS_MISSING_P``), as ``vcs``
    counts a question without a confidence."""
    return bool(samples) and all(map(is_filtered, samples))


def question_score(samples: list[dict], signal: str, answer_counts: Sequence[int] | None = None) -> float | None:
    """The signal's s_i for one question from its Phase-1 samples, ``None`` when they lack it:
    the mean statistic for the log-prob signals, the mean verbalised confidence (1-10) for
    ``vcs``/``vcs-pow``, the entropy of ``answer_counts`` (counts per equivalent answer,
    no-answer included) for ``vote-entropy``. A log-prob signal reads the samples the content
    filter left (``is_filtered``: they have no statistic)."""
    if signal in SCALAR_SIGNALS:
        key = SCALAR_SIGNALS[signal]
        values = [s.get(key) for s in samples if not is_filtered(s)]
        if len(values) == 1:
            return values[0]
        return None if not values or None in values else mean(values)
    if signal in ("vcs", "vcs-pow"):
        scores = [c for s in samples if (c := s.get("confidence")) is not None]
        return sum(scores) / len(scores) if scores else None
    if len(samples) < 2:
        raise UabError("vote-entropy needs at least 2 Phase-1 samples per question (uab phase1 -K 2)")
    assert answer_counts is not None
    return entropy(answer_counts)


def probabilities(scores: Sequence[float | None], signal: str = "anll",
                  temperature: float = DEFAULT_T, filtered: Sequence[bool] = ()) -> tuple[np.ndarray, int]:
    """p_i from each question's score (``question_score``; ``None`` or NaN where missing), and
    how many questions fell back to ``VCS_MISSING_P``. Raises ``MissingSignal`` for a
    log-prob signal when a question has no score, naming it by index, unless ``filtered`` says
    the content filter withheld all its Phase-1 samples (``withheld``): it falls back too."""
    if temperature <= 0:
        raise UabError(f"--signal-temperature must be > 0, got {temperature}")
    if signal not in SIGNALS:
        raise UabError(f"unknown signal {signal!r}; choose from {', '.join(SIGNALS)}")
    s = np.array(scores, dtype=np.float64).reshape(-1)  # None -> NaN
    missing = np.isnan(s)
    if signal in SCALAR_SIGNALS:
        unsure = missing & (np.asarray(filtered, dtype=bool).reshape(-1) if len(filtered) else False)
        if (lacking := missing & ~unsure).any():
            raise MissingSignal(int(lacking.argmax()), signal)
        with np.errstate(over="ignore"):  # a negative statistic (a server's rounding) at a tiny T: p = 1
            p = np.clip(np.exp(log_p(s, signal, temperature)), 0.0, 1.0)
        return np.where(unsure, VCS_MISSING_P, p), int(unsure.sum())
    if signal == "vote-entropy":
        return np.clip(np.array([math.exp(-h / temperature) for h in s.tolist()]), 0.0, 1.0), 0
    power = 1 / temperature if REGISTRY[signal].tempered else 1.0  # vcs-pow: (score/10)^(1/T)
    # a missing score counts as score 5 (0.5 on the 0-1 scale) before the power, as the official code's parse_vcs
    p = [(VCS_MISSING_P if m else x / 10) ** power for x, m in zip(s.tolist(), missing.tolist())]
    return np.clip(np.array(p, dtype=np.float64), 0.0, 1.0), int(missing.sum())




def log_p(s: np.ndarray, signal: str, temperature: float) -> np.ndarray:
    """log p from statistic ``s`` (Eq. 3: -s/T; vcs: log(s/10); vcs-pow: log(s/10)/T); NaN stays NaN."""
    s = np.asarray(s, dtype=np.float64)
    # A tiny T overflows to -inf (weight 0), as it should; divided, not multiplied by 1/T, so
    # that a score of 10 stays log 1 = 0 where 1/T overflows (0 * inf is NaN: "no confidence").
    with np.errstate(divide="ignore", over="ignore"):
        if signal in SCALAR_SIGNALS:
            return -s / temperature
        return np.log(s / 10) / (temperature if REGISTRY[signal].tempered else 1.0)


def sample_statistic(sample: dict, signal: str) -> float | None:
    """The per-sample statistic behind ``signal`` (``SAMPLE_SIGNALS``), ``None`` where missing."""
    return sample.get(statistic_field(signal))


def statistic_field(signal: str) -> str:
    """The sample field holding the per-sample statistic behind ``signal``: a log-prob statistic, else
    the verbalised ``confidence``."""
    return SCALAR_SIGNALS.get(signal, "confidence")


def success_probabilities(
    phase1: Sequence[list[dict]],
    signal: str = "anll",
    temperature: float = DEFAULT_T,
    answer_groups: Callable[[int, list[dict]], list[int]] | None = None,
) -> tuple[np.ndarray, int]:
    """p_i for each question from its Phase-1 samples, and how many needed a fallback.

    ``vcs`` is the paper's p = score/10; ``vcs-pow`` is the official code's
    (score/10)^(1/T). ``vote-entropy`` uses p = exp(-H/T) over the Phase-1 answers and
    needs ``answer_groups`` ((index, samples) → counts per equivalent answer). Raises
    ``UabError`` for a logprob signal when a question has no logprobs, naming it by index.
    """
    if signal not in SIGNALS:
        raise UabError(f"unknown signal {signal!r}; choose from {', '.join(SIGNALS)}")
    def score(i: int, samples: list[dict]) -> float | None:
        if signal == "vote-entropy" and len(samples) >= 2:
            assert answer_groups is not None
            return question_score(samples, signal, answer_groups(i, samples))
        return question_score(samples, signal)

    return probabilities([score(i, ss) for i, ss in enumerate(phase1)], signal, temperature,
                         [withheld(ss) for ss in phase1])


class MissingSignal(UabError):
    """A question lacks the log-prob statistics a signal needs."""

    def __init__(self, index: int, signal: str):
        super().__init__(
            f"no {signal} for this record: its samples have no token logprobs "
            "(the backend returned none); use a backend with logprobs, or ask a verbalised confidence "
            "(--vcs in Phase 1) and --signal vcs"
        )
        self.index = index

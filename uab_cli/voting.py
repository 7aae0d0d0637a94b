"""Vote rules: how a question's samples elect its prediction.

Every rule is one entry of ``RULES`` and decides in one place (``_decide``) from what it reads
of a question's samples, counted by ``elect`` for ``uab vote`` (one question at a time) and by
``elect_prefixes`` for ``uab simulate`` (every question and every prefix of a draw order at
once, in one pass), so the two can never disagree.

A sample's confidence is its own signal statistic mapped as the allocator maps a question's
(``signals.sample_log_p``): log w = -s/T for the log-prob statistics (ANLL, total/max NLL),
log((score/10)^power) for a verbalised confidence. Higher is more confident. A question with
a voted sample that lacks the statistic is voted by ``majority`` (``elect`` says which).

Ties left by a rule go to the answer that sorts first (its class's lexicographically first
member), as majority's always have.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

DEFAULT_RULE = "majority"
DEFAULT_KEEP = 0.5  # the fraction of a question's samples that ``filtered`` keeps
# ``simulate``'s default --vote-temperature candidates for ``weighted`` (ANLL's scale: right samples
# near 0.05-0.1, wrong ones 0.1-0.3). Chosen on 48 halvings of 11 pools (README, "vote temperature"):
# at N = 3-4 the held-out pick gains most with 0.05 among them, and a grid to 1 or down to 0.02 gained no more.
SIMULATED_TEMPERATURES = (0.05, 0.1, 0.2)
_BIG = 1 << 30


@dataclass(frozen=True)
class VoteRule:
    """A vote rule: its name, what it does (``--help`` and README), where it comes from, and
    whether it reads sample confidences (``keep``: whether ``--vote-keep`` applies;
    ``tempered``: whether it reads their size, which ``--vote-temperature`` scales, rather than
    only their order, which a temperature leaves as it is)."""

    name: str
    summary: str
    source: str
    confidence: bool = True
    keep: bool = False
    tempered: bool = False


RULES: dict[str, VoteRule] = {r.name: r for r in (
    VoteRule("majority", "most votes; ties to the answer that sorts first", "self-consistency", confidence=False),
    VoteRule("confident-ties", "most votes; a tie goes to the answer whose best sample is most confident",
             "uab"),
    VoteRule("weighted", "each sample votes with weight w = exp(-s/T) of its --vote-signal statistic s "
             "(vcs: score/10); most weight wins", "CISC, DeepConf", tempered=True),
    VoteRule("filtered", "keep the most confident --vote-keep fraction of the answered samples, then majority; "
             "a tie goes to the answer whose best kept sample is most confident", "DeepConf (top-η% filter)",
             keep=True),
    VoteRule("most-confident", "the single most confident sample's answer", "DeepConf (η → 0)"),
)}


def rank(rule: str, temperature: float | None = None) -> tuple[int, str, float]:
    """Where ``rule`` sorts: in ``RULES``' order (majority, then the rules that depart more and
    more from it); a rule this version does not know (a newer uab's results) after them, by name;
    within a rule, the higher vote ``temperature`` first (nearer majority: the weights grow equal)."""
    order = list(RULES)
    place = (order.index(rule), "") if rule in order else (len(order), str(rule))
    return (*place, -(temperature or 0.0))


def tally(cls: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What every rule reads of these rows (``elect``'s arguments), counted once: which class
    each sample votes for (rows × samples × classes), each class's tie rank and votes, and the
    majority winner."""
    cls = np.asarray(cls, dtype=np.int64)
    hit = cls[:, :, None] == np.arange(max(int(cls.max(initial=-1)) + 1, 1))  # (rows, samples, classes)
    first = np.where(hit, np.asarray(rank)[:, :, None], _BIG).min(axis=1)
    counts = hit.sum(axis=1)
    return hit, first, counts, _pick(counts > 0, [counts], first)


def elect(cls: np.ndarray, log_w: np.ndarray, rank: np.ndarray, rule: str,
          keep: float = DEFAULT_KEEP) -> tuple[np.ndarray, np.ndarray]:
    """Each row's winning class under ``rule``, and which rows fell back to majority.

    ``cls`` (rows × samples): answer class per sample, -1 for no answer (never wins);
    ``log_w``: per-sample log confidence, NaN where missing; ``rank``: per-sample tie rank
    of its answer (lower wins). Returns (winner per row, -1 where no sample has an answer;
    fell-back mask: a confidence rule that met a voted sample without confidence).
    """
    cls = np.asarray(cls, dtype=np.int64)
    rows, width = cls.shape
    answered = cls >= 0
    hit, first, counts, majority = tally(cls, rank)
    if not RULES[rule].confidence:
        return majority, np.zeros(rows, dtype=bool)
    log_w = np.asarray(log_w, dtype=np.float64)
    lacking = (answered & np.isnan(log_w)).any(axis=1)
    w = np.where(answered & ~np.isnan(log_w), log_w, -np.inf)
    if rule == "filtered":
        # answered samples first (one of weight -inf, a vcs score of 0, included), the most
        # confident first among them, then, among equally confident ones, the answer that sorts
        # first (as majority's ties go): which of them stay never depends on the samples' order
        order = np.lexsort((np.broadcast_to(rank, cls.shape), -w, ~answered), axis=1)
        place = np.empty_like(order)
        np.put_along_axis(place, order, np.arange(width)[None, :].repeat(rows, 0), axis=1)
        n_keep = np.ceil(keep * answered.sum(axis=1) - 1e-9).astype(np.int64)
        kept = hit & ((place < np.maximum(n_keep, 1)[:, None]) & answered)[:, :, None]
        kept_counts = kept.sum(axis=1)
        kept_best = np.where(kept, w[:, :, None], -np.inf).max(axis=1)  # ties: as confident-ties, among the kept
        winner = _decide(rule, counts, first, kept=(kept_counts, kept_best))
    else:
        best = np.where(hit, w[:, :, None], -np.inf).max(axis=1)  # each class's most confident sample
        winner = _decide(rule, counts, first, best,
                         lambda: (hit * _relative(w, w.max(axis=1, initial=-np.inf)[:, None])[:, :, None]).sum(axis=1))
    return np.where(lacking, majority, winner), lacking


def elect_prefixes(cls: np.ndarray, rank: np.ndarray, ballots: dict[Hashable, tuple[str, np.ndarray]],
                   keep: float = DEFAULT_KEEP) -> dict[Hashable, tuple[np.ndarray, np.ndarray]]:
    """``elect`` on every prefix of each row, for each ballot (a rule and the samples' ``log_w``):
    per ballot, the winner and the fell-back mask after the first t samples, (rows × samples)
    tables, column t - 1 for t samples. The same winners as ``elect`` on each prefix, counted in one
    pass over the samples rather than once per prefix: running counts, tie ranks and best samples;
    ``weighted``'s sums relative to a prefix's most confident sample summed in the order ``elect``
    sums them, once per change of that sample (a few per row); ``filtered``'s kept samples from
    each sample's place in the row's confidence order. Memory: rows × samples × max(samples, classes)."""
    cls = np.asarray(cls, dtype=np.int64)
    rank = np.asarray(rank, dtype=np.int64)
    rows, width = cls.shape
    answered = cls >= 0
    hit = cls[:, :, None] == np.arange(max(int(cls.max(initial=-1)) + 1, 1))  # (rows, samples, classes)
    counts = np.cumsum(hit, axis=1)

    def flat(table: np.ndarray) -> np.ndarray:  # one row per prefix
        return table.reshape(rows * width, -1)

    first = flat(np.minimum.accumulate(np.where(hit, rank[:, :, None], _BIG), axis=1))
    majority = _pick(flat(counts > 0), [flat(counts)], first).reshape(rows, width)
    out = {}
    for key, (rule, log_w) in ballots.items():
        if not RULES[rule].confidence:
            out[key] = majority, np.zeros((rows, width), dtype=bool)
            continue
        log_w = np.asarray(log_w, dtype=np.float64)
        lacking = np.logical_or.accumulate(answered & np.isnan(log_w), axis=1)
        w = np.where(answered & ~np.isnan(log_w), log_w, -np.inf)
        best = np.maximum.accumulate(np.where(hit, w[:, :, None], -np.inf), axis=1)
        if rule == "filtered":
            kept = _kept_prefixes(w, rank, answered, hit, keep)
            kept = (flat(kept), flat(np.where(kept > 0, best, -np.inf)))  # a class's best sample is kept if any is
        winner = _decide(rule, flat(counts), first, flat(best), lambda w=w: flat(_weight_prefixes(hit, w)),
                         kept if rule == "filtered" else None).reshape(rows, width)
        out[key] = np.where(lacking, majority, winner), lacking
    return out


def _decide(rule: str, counts: np.ndarray, first: np.ndarray, best: np.ndarray | None = None,
            weight: Callable[[], np.ndarray] | None = None, kept: tuple[np.ndarray, np.ndarray] | None = None
            ) -> np.ndarray:
    """Each row's winning class under the confidence ``rule``, from what it reads of the row's
    samples per class: votes, tie rank, most confident sample, summed weight (``weighted``'s, made
    when read) and, for ``filtered``, the kept votes and the most confident kept sample."""
    if rule == "filtered":
        return _pick(kept[0] > 0, list(kept), first)
    keys = {"confident-ties": lambda: [counts, best], "most-confident": lambda: [best],
            "weighted": lambda: [weight()]}[rule]()
    return _pick(counts > 0, keys, first)


def _relative(w: np.ndarray, top: np.ndarray) -> np.ndarray:
    """``weighted``'s sample weights relative to the most confident sample ``top`` (exp would
    underflow); a sample as confident as it weighs 1, also where that is infinite (log w = -s/T
    overflowed at a tiny T: all -inf, equal weights, is majority; +inf, from a negative statistic,
    outweighs the rest)."""
    with np.errstate(invalid="ignore"):
        return np.where(w == top, 1.0, np.exp(w - top))


def _weight_prefixes(hit: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``weighted``'s per-class sums on every prefix (rows × samples × classes). A prefix's weights
    are relative to its most confident sample, so each distinct one (a row's top changes at about
    ln K of K draws in random order) sums the row again; ``np.cumsum`` adds in draw order, as
    ``elect``'s sum over the sample axis does where there are two classes or more (with one, which
    alone can win, numpy sums pairwise)."""
    top = np.maximum.accumulate(w, axis=1)
    part = np.cumsum(np.hstack([np.ones((len(w), 1), dtype=bool), top[:, 1:] != top[:, :-1]]), axis=1) - 1
    out = np.empty(hit.shape)
    for s in range(int(part.max(initial=0)) + 1):
        rows = np.flatnonzero(part[:, -1] >= s)
        at = part[rows] == s
        # the samples after the part are no prefix's here: left out (their weight could overflow)
        mine = np.where(np.cumsum(at[:, ::-1], axis=1)[:, ::-1] > 0, w[rows], -np.inf)
        sums = np.cumsum(hit[rows] * _relative(mine, top[rows, at.argmax(axis=1)][:, None])[:, :, None], axis=1)
        r, t = np.nonzero(at)
        out[rows[r], t] = sums[r, t]
    return out


def _kept_prefixes(w: np.ndarray, rank: np.ndarray, answered: np.ndarray, hit: np.ndarray, keep: float) -> np.ndarray:
    """``filtered``'s kept votes per class on every prefix (rows × samples × classes). ``elect``
    orders a prefix's samples by (answered, confidence, tie rank, place), so its order is the row's
    own order restricted to the prefix: a sample is kept while fewer than the prefix's quota come
    before it there."""
    rows, width = w.shape
    order = np.lexsort((np.broadcast_to(np.arange(width), w.shape), rank, -w, ~answered), axis=1)
    place = np.empty_like(order)
    np.put_along_axis(place, order, np.broadcast_to(np.arange(width), w.shape), axis=1)
    before = np.cumsum(place[:, :, None] < place[:, None, :], axis=1, dtype=np.int32)  # [t-1, j]: first t before j
    n_keep = np.maximum(np.ceil(keep * np.cumsum(answered, axis=1) - 1e-9).astype(np.int64), 1)
    kept = np.tri(width, dtype=bool) & (before < n_keep[:, :, None]) & answered[:, None, :]
    return np.matmul(kept.astype(np.float32), hit.astype(np.float32)).astype(np.int64)  # exact below 2^24


def choose(reps: list[str | None], log_w: np.ndarray, rule: str, keep: float = DEFAULT_KEEP) -> tuple[str | None, bool]:
    """One question's winner under ``rule`` from each sample's answer class representative
    (``None``: no answer) and log confidence; and whether it fell back to majority."""
    if not reps:  # nothing to vote (a record without samples)
        return None, False
    distinct = sorted({r for r in reps if r is not None})
    ids = {r: i for i, r in enumerate(distinct)}
    cls = np.array([[ids[r] if r is not None else -1 for r in reps]], dtype=np.int64).reshape(1, -1)
    win, fell = elect(cls, np.asarray(log_w, dtype=np.float64).reshape(1, -1), cls, rule, keep)
    return (distinct[win[0]] if win[0] >= 0 else None), bool(fell[0])


def _pick(present: np.ndarray, keys: list[np.ndarray], first: np.ndarray) -> np.ndarray:
    """Per row, the present class with the highest key (each next key breaks the previous
    one's ties; float keys within 1e-12 relative tie), then the lowest ``first``; -1 if none."""
    cand = present.copy()
    for key in keys:
        k = np.where(cand, key, -np.inf)
        top = k.max(axis=1, keepdims=True)
        cand &= k >= top - 1e-12 * np.maximum(1.0, np.abs(np.where(np.isfinite(top), top, 0.0)))
    winner = np.where(cand, first, _BIG).argmin(axis=1)
    return np.where(present.any(axis=1), winner, -1)

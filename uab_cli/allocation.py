"""Budget allocators: how many Phase-2 samples each question gets.

Every allocator takes the Phase-2 budget ``R`` (an int) and returns ``extra``, an int64
array with ``extra.sum() == R`` exactly. Pure numpy; no records, no I/O.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from .errors import UabError
from .options import INT64

# Algorithm 1 of the paper counts the gain of the e-th Phase-2 sample as p(1-p)^e,
# ignoring the Phase-1 sample. The objective the paper states, sum 1-(1-p)^(1+e), has
# gain p(1-p)^(1+e): ``gain_offset=1`` ("coverage") optimises exactly that.
GAINS = {"algorithm1": 0, "coverage": 1}


def check_budget(p: np.ndarray, budget: int, cap: np.ndarray | None) -> None:
    """Reject a Phase-2 budget that ``p`` and the caps cannot take."""
    if budget < 0:
        raise UabError(f"Phase-2 budget must be >= 0, got {budget}")
    if p.ndim != 1:
        raise UabError("success probabilities must be a 1-D array")
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise UabError("success probabilities must lie in [0, 1]")
    if p.size == 0 and budget > 0:
        raise UabError("cannot spend a budget on zero questions")
    if p.size * budget > INT64[1]:  # counts up to the budget per question are summed in 64 bits
        raise UabError(f"a Phase-2 budget of {budget} over {p.size} questions is too large to allocate "
                       "(M times it must fit in 64 bits): give a smaller --budget")
    if cap is not None and int(cap.sum()) < budget:
        raise UabError(
            f"--max-per-question is too small: the questions can take {int(cap.sum())} "
            f"more samples but the budget needs {budget}"
        )


def caps(cap: int | np.ndarray | None, m: int) -> np.ndarray | None:
    """Per-question caps on Phase-2 samples (``None``: uncapped)."""
    if cap is None:
        return None
    return np.broadcast_to(np.asarray(cap, dtype=np.int64), (m,)).clip(min=0)


def gains(p: np.ndarray, e: np.ndarray, gain_offset: int) -> np.ndarray:
    """Marginal gain of question i's next Phase-2 sample after ``e_i``: p(1-p)^(e+offset)."""
    return p * np.power(1.0 - p, e + gain_offset)


_TINY = float(np.nextafter(0.0, 1.0))
_FLOOR = 1e-300


def _count_above(p: np.ndarray, lam: float, offset: int, hi: np.ndarray, logs=None) -> np.ndarray:
    """Per question, the number of units e >= 0 whose float gain is > lam (at most hi).

    Gains are non-increasing in e, so this is the first e whose gain is <= lam. A
    closed-form guess from logarithms is exact except next to an integer boundary; only
    those questions are checked against the real float gains.
    """
    lp, inv = logs if logs is not None else _logs(p)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # "gain > 0" is "gain >= the smallest denormal": keeps the guess finite.
        y = (np.log(max(lam, _TINY)) - lp) * inv - offset
        n = np.ceil(y)
        unsure = ~np.isfinite(y) | (np.abs(y - np.rint(y)) <= 1e-9 * (1.0 + np.abs(y)))
        n[~np.isfinite(n)] = 0
    below = n < hi  # where the guess reaches hi, hi itself: a float hi near 2^63 would not cast back
    n = np.where(below, np.maximum(n, 0, where=below, out=np.zeros_like(n)).astype(np.int64), hi)
    idx = np.flatnonzero(unsure)
    if idx.size:
        n[idx] = _fix_counts(p[idx], lam, offset, hi[idx], n[idx])
    return n


def _logs(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(divide="ignore", over="ignore"):
        return np.log(p), 1.0 / np.log1p(-p)


def _fix_counts(p, lam, offset, hi, n):
    """The first e in [0, hi] whose float gain is <= lam (hi where none is), from the guess n:
    usually right or one off, else bisected (a p so small that 1 - p rounds to 1 has a constant
    gain, and a log-rounded guess of 0 where the answer is hi: stepping there took hi rounds)."""
    def above(e):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return gains(p, e, offset) > lam

    up = (n < hi) & above(n)  # the answer is above n
    down = (n > 0) & ~above(n - 1)  # ... below n
    lo, top = np.where(up, n + 1, np.where(down, 0, n)), np.where(up, hi, np.where(down, n - 1, n))
    while (open_ := lo < top).any():
        mid = lo + (top - lo) // 2
        a = above(mid)
        lo, top = np.where(open_ & a, mid + 1, lo), np.where(open_ & ~a, mid, top)
    return lo


def water_fill(base: np.ndarray, room: np.ndarray, k: int) -> np.ndarray:
    """Add k tied units, lowest level first, then lowest index (the greedy's tie-break).

    Question i holds tied units at levels base_i .. base_i + room_i - 1.
    """
    add = np.zeros_like(base)
    if k <= 0:
        return add
    top = int((base + np.minimum(room, k)).max())

    def taken(level: int) -> int:  # units strictly below ``level``
        return int(np.clip(level - base, 0, room).sum())

    lo, hi = int(base.min()), top  # taken(lo) == 0 <= k; find the largest level with taken <= k
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if taken(mid) <= k:
            lo = mid
        else:
            hi = mid - 1
    add = np.clip(lo - base, 0, room)
    rest = k - int(add.sum())
    if rest:
        at_level = np.flatnonzero((base + add == lo) & (add < room))
        add[at_level[:rest]] += 1
    return add


def uab_allocate(p: Sequence[float] | np.ndarray, budget: int, gain: str = "algorithm1",
                 max_extra: int | np.ndarray | None = None) -> np.ndarray:
    """Algorithm 1 (lines 7-10): give each of ``budget`` units to the largest marginal gain.

    Exact and vectorised: the greedy takes the ``budget`` best units in the order
    (gain descending, e ascending, question index ascending), so we search for the gain
    of the last unit taken instead of looping over units. Equal to ``greedy_allocate``.
    """
    p = np.asarray(p, dtype=np.float64)
    offset = GAINS[gain]
    cap = caps(max_extra, p.size)
    check_budget(p, budget, cap)
    # No question can take more than the whole budget: bounding counts keeps sums small
    # even when p is so small that 1 - p rounds to 1 and the gain never decays.
    hi = np.minimum(cap, budget) if cap is not None else np.full(p.size, budget, np.int64)
    if budget == 0:
        return np.zeros(p.size, dtype=np.int64)

    logs = _logs(p)

    def count(lam: float) -> np.ndarray:
        return _count_above(p, lam, offset, hi, logs)

    # Find lo < hi_ with count(lo) >= budget > count(hi_): every unit with a gain above
    # hi_ is taken, and the rest come from units with gains in (lo, hi_]. Gains below
    # 1e-300 (denormals) only matter when the budget outlasts every larger gain, which
    # needs p near 0 or 1.
    lo, hi_ = _FLOOR, 1.0  # no gain exceeds 1.0
    if count(_FLOOR).sum() < budget:
        positive = count(0.0)
        if positive.sum() < budget:  # the rest are zero-gain ties
            return positive + water_fill(positive, hi - positive, budget - int(positive.sum()))
        lo, hi_ = 0.0, _FLOOR
    else:
        guess = _log_space_threshold(logs, p, offset, budget, hi)
        for widen in (1e-9, 1e-6, 1e-3):
            a, b = guess * (1 - widen), min(guess * (1 + widen), 1.0)
            if count(a).sum() >= budget > count(b).sum():
                lo, hi_ = a, b
                break
    base = count(hi_)
    room = count(lo) - base
    if room.sum() > 4 * p.size + 100_000:  # many exact ties: narrow the window to one gain
        lo, hi_ = _bisect_bits(count, budget, lo, hi_)
        base = count(hi_)  # every unit left has the gain hi_: lowest level, then lowest index
        return base + water_fill(base, count(lo) - base, budget - int(base.sum()))
    return base + _take_best(p, offset, base, room, budget - int(base.sum()))


def _take_best(p, offset, base, room, k) -> np.ndarray:
    """Of the candidate units (question i: levels base_i .. base_i + room_i - 1), count per
    question the k that come first in the greedy's order (gain desc, level asc, index asc)."""
    idx = np.repeat(np.arange(p.size), room)
    level = base[idx] + np.arange(idx.size) - np.repeat(np.cumsum(room) - room, room)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = gains(p[idx], level, offset)
    order = np.lexsort((idx, level, -g))[:k]
    return np.bincount(idx[order], minlength=p.size).astype(np.int64)


def _bisect_bits(count, budget, lo, hi_):
    """Bisect on float bit patterns until lo and hi_ are adjacent doubles."""
    lo_bits, hi_bits = int(np.float64(lo).view(np.int64)), int(np.float64(hi_).view(np.int64))
    while hi_bits - lo_bits > 1:
        mid = (lo_bits + hi_bits) // 2
        if count(float(np.int64(mid).view(np.float64))).sum() >= budget:
            lo_bits = mid
        else:
            hi_bits = mid
    return float(np.int64(lo_bits).view(np.float64)), float(np.int64(hi_bits).view(np.float64))


def _log_space_threshold(logs, p, offset, budget, hi) -> float:
    """Approximate gain threshold from the closed-form counts (bisection on log gain)."""
    inner = (p > 0) & (p < 1) & np.isfinite(logs[1])
    lp, inv = logs[0][inner], logs[1][inner]
    h = hi[inner].astype(np.float64)
    lo_t, hi_t = np.log(_FLOOR), 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        shift = -lp * inv - offset + 1
    buf = np.empty_like(lp)
    for _ in range(42):  # ~1e-10 relative precision on the threshold
        t = (lo_t + hi_t) / 2
        with np.errstate(over="ignore", invalid="ignore"):
            np.multiply(inv, t, out=buf)
            buf += shift
            np.floor(buf, out=buf)
            np.clip(buf, 0, h, out=buf)
        if buf.sum() >= budget:
            lo_t = t
        else:
            hi_t = t
    return float(np.exp((lo_t + hi_t) / 2))


def greedy_allocate(p: Sequence[float] | np.ndarray, budget: int, gain: str = "algorithm1",
                    max_extra: int | np.ndarray | None = None) -> np.ndarray:
    """Algorithm 1 as written, one unit at a time with a heap: the reference for tests.

    Ties go to the question with fewer Phase-2 samples, then to the lower index.
    """
    p = np.asarray(p, dtype=np.float64)
    offset = GAINS[gain]
    cap = caps(max_extra, p.size)
    check_budget(p, budget, cap)
    e = np.zeros(p.size, dtype=np.int64)
    heap = [(-gains(p[i], 0, offset), 0, i) for i in range(p.size) if cap is None or cap[i] > 0]
    heapq.heapify(heap)
    for _ in range(budget):
        _, _, i = heapq.heappop(heap)
        e[i] += 1
        if cap is None or e[i] < cap[i]:
            heapq.heappush(heap, (-gains(p[i], e[i], offset), int(e[i]), i))
    return e


def uniform_allocate(m: int, budget: int, max_extra=None) -> np.ndarray:
    """Self-consistency: every question gets the same count; a remainder goes round-robin."""
    return water_fill(np.zeros(m, dtype=np.int64), _room(m, max_extra, budget), budget)


def random_allocate(m: int, budget: int, seed: int, max_extra=None) -> np.ndarray:
    """Each unit goes to a question drawn uniformly at random (seeded); caps respected."""
    room = _room(m, max_extra, budget)
    rng = np.random.default_rng(seed)
    e = np.zeros(m, dtype=np.int64)
    left = budget
    while left:
        open_ = np.flatnonzero(e < room)
        if left <= _UNIT_DRAWS:  # a question per unit
            add = np.bincount(rng.choice(open_, size=left), minlength=m)
        else:  # the same law without an array of units (2^62 of them were a traceback): one multinomial
            add = np.zeros(m, dtype=np.int64)
            add[open_] = rng.multinomial(left, np.full(open_.size, 1 / open_.size))
        e += np.minimum(add, room - e)
        left = budget - int(e.sum())
    return e


_UNIT_DRAWS = 1 << 24  # random_allocate: up to this many units left, each is drawn (the seeds' streams)


def proportional_allocate(weights, budget: int, max_extra=None) -> np.ndarray:
    """Split the budget in proportion to ``weights`` (largest remainder, ties by index).

    The ``length`` baseline uses question length as the weight: longer means harder.
    """
    w = np.asarray(weights, dtype=np.float64)
    m = w.size
    room = _room(m, max_extra, budget)
    if w.sum() <= 0:
        return uniform_allocate(m, budget, max_extra)
    share = budget * w / w.sum()
    e = np.minimum(np.floor(share).astype(np.int64), room)
    rest = budget - int(e.sum())
    order = np.lexsort((np.arange(m), -(share - np.floor(share))))
    while rest:
        open_ = order[e[order] < room[order]][:rest]
        e[open_] += 1
        rest = budget - int(e.sum())
    return e


def judge_allocate(hard: Sequence[bool], budget: int, max_extra=None) -> np.ndarray:
    """LLM-judge baseline: easy questions stop at Phase 1, hard ones share the budget.

    The share is equal, with any remainder round-robin in question order. When the hard
    questions cannot hold the budget (nothing hard, or their caps are short), they are filled
    to their caps and the rest is shared the same way among the easy ones, rather than
    drawing fewer samples than promised.
    """
    hard = np.asarray(hard, dtype=bool)
    room = _room(hard.size, max_extra, budget)
    hard_room = np.where(hard, room, 0)
    if hard_room.sum() >= budget:
        return water_fill(np.zeros(hard.size, dtype=np.int64), hard_room, budget)
    return hard_room + water_fill(np.zeros(hard.size, dtype=np.int64), room - hard_room,
                                   budget - int(hard_room.sum()))


def _room(m: int, max_extra, budget: int) -> np.ndarray:
    room = caps(max_extra, m)
    if room is None:
        room = np.full(m, budget, dtype=np.int64)
    check_budget(np.zeros(m), budget, room)
    return np.array(room, dtype=np.int64)


# What an exit does with the budget it frees (``--exit-mode``).
EXIT_MODES = {
    "redistribute": "their share goes to the other questions (the budget is spent)",
    "skip": "what UAB would give them is not drawn (saved)",
    "forfeit": "each forfeits its even Phase-2 share, N − K samples, not drawn (saved); the others get theirs by UAB "
               "(the official code's rule behind the paper's % Saved)",
}


# How the hard exit tests a question (``--exit-test``); the easy exit tests p > θ under both.
EXIT_TESTS = {
    "paper": "the hard exit tests p < θ (the paper's text)",
    "official": "the hard exit tests 1 − (1 − p)^N_max < θ, the chance of a right sample among N_max "
                "(--exit-nmax, else N), as the official code does",
}


def exit_nmax(test: str, nmax: int | None, n: int) -> int | None:
    """The N_max the hard exit tests with at budget ``n``: under ``--exit-test official``
    ``--exit-nmax`` (``nmax``), else N, as the official code's ``--n_max`` 0; None under the
    paper's test (p < θ)."""
    return (nmax or n) if test == "official" else None


def exiting(p: np.ndarray, kind: str, theta: float, nmax: int | None = None) -> np.ndarray:
    """The questions a threshold exit takes: p > theta (``easy``); p < theta (``hard``), or with
    ``nmax`` (the official code's test) 1 − (1 − p)^nmax < theta."""
    if kind not in ("hard", "easy"):
        raise UabError(f"unknown exit {kind!r}: use hard or easy")
    p = np.asarray(p, dtype=np.float64)
    if kind == "easy":
        return p > theta
    return (p if nmax is None else 1.0 - np.power(1.0 - p, nmax)) < theta


def threshold_exit(
    p: np.ndarray,
    budget: int,
    kind: str,
    theta: float,
    mode: str = "redistribute",
    gain: str = "algorithm1",
    max_extra=None,
    nmax: int | None = None,
) -> tuple[np.ndarray, int]:
    """UAB with threshold exits: the questions ``exiting`` takes (p < theta: ``hard``, or with
    ``nmax`` 1 − (1 − p)^nmax < theta; p > theta: ``easy``) keep only their Phase-1 sample.

    ``redistribute`` gives their share to the other questions (budget exact); ``skip``
    keeps UAB's allocation for the others and leaves what UAB gave the exited ones unspent;
    ``forfeit`` (the official code's rule behind the paper's "% Saved") leaves each exited
    question's even share (budget / M) unspent and spends the staying questions' shares on them
    by UAB. Returns ``(extra, saved)``, where ``saved`` counts the samples not drawn.
    """
    p = np.asarray(p, dtype=np.float64)
    exits = exiting(p, kind, theta, nmax)
    if mode not in EXIT_MODES:
        raise UabError(f"unknown exit mode {mode!r}: use {', '.join(EXIT_MODES)}")
    cap = caps(max_extra, p.size)
    if mode == "skip":
        e = uab_allocate(p, budget, gain, cap)
        saved = int(e[exits].sum())
        e[exits] = 0
        return e, saved
    limit = cap if cap is not None else budget
    room = np.where(exits, 0, limit)
    if mode == "forfeit":  # the staying questions' shares are the budget to spend
        saved = budget - budget * int((~exits).sum()) // max(p.size, 1)
        budget -= saved
    else:
        saved = 0
    if room.sum() >= budget:
        return uab_allocate(p, budget, gain, room), saved
    # The staying questions cannot hold the budget (none stays, or their caps are short):
    # they are filled to their caps and UAB spends the rest on the exited ones, so the
    # budget contract holds and the exit gives way only as far as it must.
    return room + uab_allocate(p, budget - int(room.sum()), gain, np.where(exits, limit, 0)), saved


def vote_margins(counts: np.ndarray) -> np.ndarray:
    """Per question (a row of answer-class vote counts), how settled its vote is: the votes
    of its most-voted answer minus those of the runner-up; -1 for a question with no answer
    yet (it needs samples first)."""
    counts = np.asarray(counts, dtype=np.int64).reshape(len(counts), -1)
    if counts.shape[1] < 2:
        counts = np.hstack([counts, np.zeros((len(counts), 2 - counts.shape[1]), dtype=np.int64)])
    top2 = -np.partition(-counts, 1, axis=1)[:, :2]
    return np.where(top2[:, 0] > 0, top2[:, 0] - top2[:, 1], -1)


def adaptive_allocate(margins_at, drawn: np.ndarray, budget: int, seed: int,
                      max_extra: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Phase 2 in rounds (Adaptive-Consistency under one budget for all questions): each round
    gives one more sample to every question whose vote is least settled (the smallest
    ``vote_margins`` among those with room), until ``budget`` is spent; when the round's
    questions outnumber what is left, those with the fewest samples, then a seeded order,
    go first. ``margins_at(n)``: each question's margin after its first ``n[i]`` samples (a
    live run draws them to answer; ``simulate`` looks them up). Returns ``extra`` (sums to
    ``budget``) and the number of rounds."""
    drawn = np.asarray(drawn, dtype=np.int64)
    room = _room(drawn.size, max_extra, budget)
    order = np.random.default_rng(seed).permutation(drawn.size)  # rank of each question in the last round
    rank = np.empty_like(order)
    rank[order] = np.arange(drawn.size)
    extra, rounds = np.zeros(drawn.size, dtype=np.int64), 0
    margins = np.asarray(margins_at(drawn), dtype=np.int64)
    while (left := budget - int(extra.sum())) > 0:
        open_ = np.flatnonzero(extra < room)
        level = margins[open_].min()
        pick = open_[margins[open_] == level]
        if pick.size > left:
            pick = pick[np.lexsort((rank[pick], extra[pick]))][:left]
        extra[pick] += 1
        rounds += 1
        margins = np.asarray(margins_at(drawn + extra), dtype=np.int64)
    return extra, rounds

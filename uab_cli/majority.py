"""Majority-vote allocator: spend the Phase-2 budget to maximise expected majority-vote accuracy.

Vote models: ``plurality-2`` (each wrong sample is one shared wrong answer; a tie counts 1/2) and
``scatter`` (wrong answers never coincide; an n-way tie of singletons counts 1/n).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from .allocation import caps, check_budget, water_fill
from .errors import UabError

MODELS = ("plurality-2", "scatter")
METHODS = ("auto", "dp", "greedy")
DP_LIMIT = 50_000_000  # auto uses the DP when M * budget * (max extra + 1) is at most this
DP_CELLS = 4_000_000  # ... and one question's (extra x budget) DP slice is at most this
# The greedy looks max(64, 4 * ceil(R / M), sqrt(GREEDY_WORK / M)) extra samples ahead (table: M x that).
GREEDY_EXTRA = 64
GREEDY_WORK = 100_000_000
GREEDY_CELLS = 1 << 25  # ... but no wider than every row's settled point, nor than this many cells in all
_TOL = 1e-12
_BLOCK = 1 << 16  # cells in a block of rows (_blocks)
_DP_BLOCK = 1 << 15  # cells in a block of the DP's columns (_dp): its tables of them stay in the cache
_SURE = 1e-9  # x (1 + 2·top): a margin the rounding of f - lam*j (|lam| <= 2) cannot cross (_multiplier)


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise UabError(f"unknown vote model {model!r}: use {' or '.join(MODELS)}")


def majority_gain_table(p: Sequence[float] | np.ndarray, n_max: int, model: str = "plurality-2") -> np.ndarray:
    """A[i, n]: expected majority-vote accuracy of question i with n samples, n = 0..n_max.

    Closed forms, O(M * n_max): ``scatter`` is 1 - q^n - (n-1) p q^(n-1); ``plurality-2`` steps
    by A(2k+1) - A(2k-1) = C(2k-1, k) (pq)^k (p - q) at odd n, A(2k) = A(2k-1) exactly.
    """
    _check_model(model)
    p = np.asarray(p, dtype=np.float64).reshape(-1, 1)
    q, n = 1.0 - p, np.arange(n_max + 1)
    if model == "scatter":
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = 1.0 - q**n - np.where(n > 1, (n - 1) * p * q ** np.maximum(n - 1, 0), 0.0)
        out[:, 0] = 0.0
        return out.clip(0.0, 1.0)
    k = np.arange(1, n_max // 2 + 1)
    ratio = np.empty((p.shape[0], k.size))
    ratio[:, :1] = p * q * (p - q)  # g_1; then g_{k+1} / g_k = 2 (2k+1) / (k+1) pq
    ratio[:, 1:] = 2.0 * (2 * k[:-1] + 1) / (k[:-1] + 1) * (p * q)
    steps = np.cumsum(np.hstack([p, np.cumprod(ratio, axis=1)]), axis=1)  # A(1), A(3), A(5), ...
    out = np.zeros((p.shape[0], n_max + 1))
    odd, even = out[:, 1::2], out[:, 2::2]  # A(2k+1), and A(2k+2) = A(2k+1): slices, not a gather (10x faster)
    odd[:], even[:] = steps[:, : odd.shape[1]], steps[:, : even.shape[1]]
    return out.clip(0.0, 1.0, out=out)


def settled(p: np.ndarray, model: str) -> np.ndarray:
    """Per question, a sample count from which its A(n) (as ``majority_gain_table`` computes
    it) no longer changes: the gains left are below half an ulp of the value, or underflow."""
    p = np.asarray(p, dtype=np.float64)
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if model == "plurality-2":  # gains <= (4pq)^k |p - q| / 2 at A(2k+1)
            floor = np.where(p >= 0.5, -60 * math.log(2), -1100 * math.log(2))  # A -> 1 (or 1/2), or to 0
            k = (floor - np.log(np.abs(p - q) / 2)) / np.log(4 * p * q)
            k = np.where((p == 0.5) | (p == 0) | (p == 1) | ~np.isfinite(k), 0.0, np.maximum(k, 0.0))
            return np.minimum(2 * np.ceil(k) + 1, 2.0**62).astype(np.int64)
        # scatter: 1 - A(n) <= n q^(n-1) < 2^-60; bisect n on that bound
        lq = np.log(q)
        lo, hi = np.ones(p.size), np.full(p.size, 2.0**62)
        for _ in range(64):
            mid = np.floor((lo + hi) / 2)
            ok = np.log(mid) + (mid - 1) * lq < -60 * math.log(2)
            lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
        return np.where((p == 0) | (p == 1), 1, hi).astype(np.int64)


def expected_accuracy(p, extra, model: str = "plurality-2", phase1: int | np.ndarray = 1) -> float:
    """Σ_i A_i(phase1_i + extra_i): the objective the majority allocator maximises."""
    extra = np.asarray(extra, dtype=np.int64)
    n = phase1 + extra
    table = majority_gain_table(p, int(n.max(initial=0)), model)
    return float(table[np.arange(extra.size), n].sum())


def majority_allocate(
    p: Sequence[float] | np.ndarray,
    budget: int,
    model: str = "plurality-2",
    method: str = "auto",
    max_extra: int | np.ndarray | None = None,
    phase1: int | np.ndarray = 1,
) -> np.ndarray:
    """Phase-2 counts (sum == budget) maximising Σ_i A_i(phase1_i + e_i) under the vote model
    (``phase1``: the Phase-1 samples each question holds, one count or one per question).

    ``dp`` is exact; ``greedy`` works on each A_i's concave majorant (see ``_greedy``);
    ``auto`` runs the DP when it is cheap (``DP_LIMIT``, ``DP_CELLS``).
    """
    if method not in METHODS:
        raise UabError(f"unknown method {method!r}: use {', '.join(METHODS)}")
    _check_model(model)
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    cap = caps(max_extra, m)
    check_budget(p, budget, cap)
    phase1 = np.asarray(phase1, dtype=np.int64)
    if phase1.size and phase1.min() < 1:
        raise UabError(f"each question needs at least one Phase-1 sample, got {int(phase1.min())}")
    phase1 = np.broadcast_to(phase1, (m,))
    room = np.full(m, budget, np.int64) if cap is None else np.minimum(cap, budget)
    if budget == 0 or int(room.sum()) == budget:  # nothing to choose
        return room if budget else np.zeros(m, dtype=np.int64)
    top = int(room.max())
    if method == "auto":
        cheap = m * budget * (top + 1) <= DP_LIMIT and (top + 1) * (budget + 1) <= DP_CELLS
        method = "dp" if cheap else "greedy"
    if method == "dp":
        return _dp(_values(p, room, top, model, phase1), budget)
    # Look far enough ahead that the capped questions can still take the whole budget.
    need = max(GREEDY_EXTRA, 4 * -(-budget // m), math.isqrt(GREEDY_WORK // m))
    while int(np.minimum(room, need).sum()) < budget:
        need *= 2
    # Columns past the last row's settled point add nothing; past GREEDY_CELLS a row is taken as settled.
    flat = np.maximum(settled(p, model) - phase1, 0)
    width = min(need, max(GREEDY_EXTRA, min(int(flat.max(initial=0)), GREEDY_CELLS // m)))
    look = np.minimum(room, width)
    return _spend(_values(p, look, int(look.max()), model, phase1), look, room, budget)


def _spend(f: np.ndarray, look: np.ndarray, room: np.ndarray, budget: int) -> np.ndarray:
    """The greedy's counts where it looks ``look`` ahead of rooms ``room``: a row cut short
    (look < room) has settled there, its value stays past it."""
    if int(look.sum()) >= budget and (look == room).all():
        return _greedy(f, look, budget)
    # Every question at its best count (the fewest samples that reach it), the rest shared evenly
    # among those whose best is where their row settles; past those, only the others take more.
    best = np.argmax(f, axis=1)
    rows = np.arange(f.shape[0])
    full = f[rows, look] >= f[rows, best]
    tail = np.where(full, room - best, 0)
    if 0 <= budget - int(best.sum()) <= int(tail.sum()):
        return best + water_fill(best, tail, budget - int(best.sum()))
    if budget > int(best.sum()) and full.any():
        out = room.copy()
        out[~full] = _spend(f[~full], look[~full], room[~full], budget - int(room[full].sum()))
        return out
    if int(look.sum()) >= budget:
        return _greedy(f, look, budget)
    return look + water_fill(look, room - look, budget - int(look.sum()))


def _values(p, room, top, model, phase1) -> np.ndarray:
    """f[i, e] = A_i(phase1_i + e) for e <= room_i, -inf beyond (e = 0..top)."""
    k = int(phase1.max(initial=0))
    table = majority_gain_table(p, k + top, model)
    if phase1.min(initial=k) == k:  # one Phase-1 count: a view
        f = table[:, k:]
    else:
        f = np.take_along_axis(table, phase1[:, None] + np.arange(top + 1), axis=1)
    f[np.arange(top + 1) > room[:, None]] = -np.inf
    return f


def _dp(f: np.ndarray, budget: int) -> np.ndarray:
    """Exact knapsack over questions, vectorised over (extra, budget spent); ``f[i, e]`` is
    question i's value with e extra samples, -inf where it cannot take them.

    Near-ties (within 1e-12) prefer the count closest to an even share of what is left
    (b / (i + 1) for questions 0..i), then fewer samples; read back from the last question.
    Up to ``DP_LIMIT`` cells every question's table spans the whole budget; beyond, only a band
    of it (``_band``), which still holds an optimum: time and memory grow with M, not M · budget.
    Only the cells a way to spend the whole budget can pass are filled: question i's spend b
    between what questions i+1.. cannot take and what questions 0..i can, its counts e those
    that reach such a cell of question i-1 (every other cell is -inf there or never read back).
    """
    m, top = f.shape[0], f.shape[1] - 1
    lo, width = np.zeros(m, np.int64), budget + 1
    if m * budget * (top + 1) > DP_LIMIT:
        lo, width = _band(f, budget)
    finite = np.isfinite(f)
    most = np.where(finite.any(axis=1), top - np.argmax(finite[:, ::-1], axis=1), -1)  # the most question i takes
    upto = np.cumsum(most)
    first = np.maximum(lo, budget - (upto[-1] - upto) if m else 0)  # the spend each question's cells start at
    last = np.minimum(np.minimum(lo + width, budget + 1) - 1, upto)  # ... and end at
    through = bool((first <= last).all())  # else some question has no cell: the budget cannot be spent
    choice = np.zeros((m, width), np.min_scalar_type(top))  # top < 256: one byte a cell
    best = np.full(top + budget + 1, -np.inf)  # best[top + b]: the best value of questions 0..i-1 at spend b
    best[top] = 0.0
    spend = np.arange(budget + 1)
    cells = max(_DP_BLOCK, top + 1)
    buffers = (np.empty(cells), np.empty(cells, bool))
    was = (0, 0)  # the spends question i-1 filled
    for i in range(m if through else 0):
        s, t = int(first[i]), int(last[i])
        row = np.empty(t - s + 1)
        step = max(1, _DP_BLOCK // max(1, min(int(most[i]), t - was[0]) + 1))  # columns in a block
        for c0 in range(s, t + 1, step):
            c1 = min(c0 + step, t + 1) - 1
            e0, e1 = max(0, c0 - was[1]), min(int(most[i]), c1 - was[0])  # the counts that reach question i-1's cells
            pick, row[c0 - s : c1 - s + 1] = _cells(best[top + c0 - e1 : top + c1 - e0 + 1], f[i, e0 : e1 + 1],
                                                   spend[c0 : c1 + 1] / (i + 1), e0, buffers)
            choice[i, c0 - lo[i] : c1 - lo[i] + 1] = pick
        best[top + was[0] : top + s] = -np.inf
        best[top + s : top + t + 1] = row
        was = (s, t)
    if not (through and np.isfinite(best[top + budget])):
        raise AssertionError("the allocation DP found no way to spend the budget within its band")
    out = np.zeros(m, np.int64)
    left = budget
    for i in range(m - 1, -1, -1):
        out[i] = choice[i, left - lo[i]]
        left -= out[i]
    return out


def _cells(prev: np.ndarray, f: np.ndarray, share: np.ndarray, e0: int, buffers) -> tuple[np.ndarray, np.ndarray]:
    """One block of a question's DP cells, spends b = b0..b0+n-1 (``share``: b / (i + 1)), counts
    e = e0..e0+len(f)-1: (the e picked, its value) per b. ``prev``: the best value of the questions
    before at spends b0 - e1 .. b0 + n - 1 - e0 (-inf where there is none)."""
    rows, n = f.size, share.size
    if rows <= 0:
        return np.zeros(n, np.int64), np.full(n, -np.inf)
    v, tied = buffers[0][: rows * n].reshape(rows, n), buffers[1][: rows * n].reshape(rows, n)
    window = np.lib.stride_tricks.as_strided(prev, (rows, n), (prev.itemsize, prev.itemsize))[::-1]
    np.add(window, f[:, None], out=v)  # V[e, b] = best[b - e] + f[i, e]
    vmax = v.max(axis=0)
    np.greater_equal(v, vmax - _TOL * np.maximum(1.0, np.abs(vmax)), out=tied)
    e, b = np.divmod(np.flatnonzero(tied), n)  # the near-ties
    gap = np.abs((e + e0) - share[b])
    near = np.full(n, np.inf)
    np.minimum.at(near, b, gap)  # each column's least |e - b / (i + 1)| among its near-ties ...
    at = gap == near[b]
    pick = np.full(n, rows)
    np.minimum.at(pick, b[at], e[at])  # ... and the fewest samples there
    return pick + e0, v[pick, np.arange(n)]


def _band(f: np.ndarray, budget: int) -> tuple[np.ndarray, int]:
    """Where the DP need look: per question i, the lowest budget spent on questions 0..i, and
    the band's width. Around the Lagrangian solution (each question at argmax_e f[i, e] - lam*e,
    summing to within ``top`` of the budget) some optimum differs in at most 2·top - 1 questions
    (a set of them whose differences sum to 0 could go back at no loss: in a set with none, ordered
    to keep the running sum within (-top, top], no two running sums are equal), by at most top
    each, so every running sum of the differences lies within ``reach`` = (2·top - 1)·top."""
    top = f.shape[1] - 1
    _, e, more = _multiplier(f, budget)
    step = more - e  # also optimal at lam, to float rounding: taken while the sum stays within the budget
    e = e + np.where(np.cumsum(step) <= budget - int(e.sum()), step, 0)
    reach = (2 * top - 1) * top
    lo = np.clip(np.cumsum(e) - reach, 0, budget)
    return lo, min(2 * reach + 1, budget + 1)


def _multiplier(f: np.ndarray, budget: int) -> tuple[float, np.ndarray, np.ndarray]:
    """The multiplier lam where the rows' Lagrangian optima cross ``budget``: (lam, the counts
    argmax_e f[i, e] - lam*e, summing to at most the budget, and those one float below lam,
    summing to more unless nothing else fits). Every value lies in [0, 1], so every slope lies in [-1, 1]."""
    m, j = f.shape[0], np.arange(f.shape[1])
    sure = _SURE * (1 + 2 * j[-1])  # far above the rounding of f - lam*j, |lam| <= 2

    def count(lam: float, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row, argmax_e f[row, e] - lam*e (the units whose envelope slope is > lam) and
        whether every other e is more than ``sure`` below it; in blocks of rows."""
        c, clear = np.empty(rows.size, np.int64), np.empty(rows.size, bool)
        for block in _blocks(rows.size, j.size):
            v = f[rows[block]] - lam * j
            at, r = v.argmax(axis=1), np.arange(v.shape[0])
            best = v[r, at]
            v[r, at] = -np.inf
            c[block], clear[block] = at, best - v.max(axis=1) > sure
        return c, clear

    # The bisection counts only the rows whose count may change between lo and hi: a row with
    # one count at both, beaten there by more than ``sure`` by every other e, keeps that count
    # in between (each f[i, e] - lam*e is linear in lam), and is added as it stands.
    ends = np.zeros((2, m), np.int64)  # each row's count at lo, at hi
    known = np.zeros((2, m), bool)  # ... found by more than ``sure`` (not at the first lo and hi)
    rows, held = np.arange(m), 0  # the rows still counted; the counts of the others
    lo, hi = -2.0, 2.0  # count(lo) = room, count(hi) = 0
    while lo < (mid := (lo + hi) / 2) < hi:
        c, clear = count(mid, rows)
        side = int(held + int(c.sum()) <= budget)  # 1: mid is the new hi
        ends[side, rows], known[side, rows] = c, clear
        if side:
            hi = mid
        else:
            lo = mid
        done = (ends[0, rows] == ends[1, rows]) & known[0, rows] & known[1, rows]
        held += int(ends[0, rows[done]].sum())
        rows = rows[~done]
    # Every row's count at lo and hi is known, unless that end was never a mid (-2, 2): count it.
    return hi, ends[1] if hi < 2 else count(hi, np.arange(m))[0], ends[0] if lo > -2 else count(lo, np.arange(m))[0]


def _greedy(f: np.ndarray, room: np.ndarray, budget: int) -> np.ndarray:
    """Greedy on the concave majorants (upper envelopes) of the rows of f, then a repair.

    Whole envelope segments go in order of slope (desc), then fewer samples, then lower
    index, while they fit: found by bisecting the multiplier lam of argmax_e f[i, e] - lam*e.
    The units left (fewer than the first segment that did not fit) go by real accuracy gain
    per sample over steps of 1..left samples, ties to fewer samples, then the lower index.
    """
    m, j = f.shape[0], np.arange(f.shape[1])
    if int(room.sum()) == budget:
        return room.astype(np.int64)
    hi, e, top = _multiplier(f, budget)
    left = budget - int(e.sum())
    # Segments with slopes in (lo, hi] are tied: split them at the points on the line.
    points = [(np.empty(0, np.int64), np.empty(0, np.int64))]  # (row, col), row by row
    for rows in _blocks(m, j.size):
        g = f[rows] - hi * j
        at = g >= g[np.arange(g.shape[0]), e[rows]][:, None] - _TOL
        at &= (j >= e[rows, None]) & (j <= top[rows, None])
        on = np.nonzero(at)
        points.append((on[0] + rows.start, on[1]))
    row, col = (np.concatenate(x) for x in zip(*points))
    same = row[1:] == row[:-1]
    row, start, length = row[1:][same], col[:-1][same], np.diff(col)[same]
    order = np.lexsort((row, start))
    fits = np.cumsum(length[order]) <= left
    take = order[: int(np.argmin(fits)) if not fits.all() else fits.size]
    e = e + np.bincount(row[take], weights=length[take], minlength=m).astype(np.int64)
    left = budget - int(e.sum())
    idx = np.arange(m)
    while left:
        steps = np.arange(1, min(left, f.shape[1] - 1) + 1)
        to = e[:, None] + steps[None, :]
        ok = to <= room[:, None]
        with np.errstate(invalid="ignore"):
            gain = f[idx[:, None], np.minimum(to, j[-1])] - f[idx, e][:, None]
            rate = np.where(ok, gain / steps, -np.inf)
        cand = np.argwhere(rate >= rate.max() - _TOL)  # (question, step - 1)
        i, s = cand[np.lexsort((cand[:, 1], cand[:, 0], e[cand[:, 0]]))[0]]
        e[i] += s + 1
        left -= s + 1
    return _exchange(f, e)


def _exchange(f: np.ndarray, e: np.ndarray, rounds: int = 100) -> np.ndarray:
    """Local search: move s samples from one question to another while that gains > 1e-12."""
    for _ in range(rounds if f.shape[0] > 1 else 0):
        (to, to2), (g1, g2) = _leaders(f, e, 1)  # the most any question gains from s + 1 more samples
        (frm, frm2), (l1, l2) = _leaders(f, e, -1)  # ... and loses (negated) from s + 1 fewer
        l1, l2 = -l1, -l2
        a, b = g2 - l1, g1 - l2
        clash = to == frm
        delta = np.where(clash, np.maximum(a, b), g1 - l1)
        to, frm = np.where(clash & (a >= b), to2, to), np.where(clash & (a < b), frm2, frm)
        s = int(np.argmax(delta))
        if not delta[s] > _TOL:
            break
        e[to[s]] += s + 1
        e[frm[s]] -= s + 1
    return e


def _blocks(m: int, width: int):
    """Slices of 0..m-1, each of about ``_BLOCK`` cells of a table ``width`` wide: the greedy's
    passes over f go block by block, never through a second table the size of f."""
    size = max(1, _BLOCK // max(width, 1))
    return (slice(start, start + size) for start in range(0, m, size))


def _leaders(f: np.ndarray, e: np.ndarray, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Per s = 0..top-1, of the changes x[i] = f[i, e_i + step·(s + 1)] - f[i, e_i] (-inf off the
    row): ((the row np.argmax(x) finds, the row it finds once x there is -inf), (their x)), read in
    blocks of rows: the whole x (questions x top) is never held."""
    m, top = f.shape[0], f.shape[1] - 1
    cols, steps = np.arange(top), step * np.arange(1, top + 1)
    at, best = np.zeros((2, top), np.int64), np.full((2, top), -np.inf)  # over the rows read so far
    for block in _blocks(m, top):
        rows, start = np.arange(block.start, min(block.stop, m)), block.start
        to = e[rows, None] + steps
        x = np.where((to >= 0) & (to <= top), f[rows[:, None], np.clip(to, 0, top)], -np.inf) - f[rows, e[rows]][:, None]
        first = x.argmax(axis=0)
        one = x[first, cols]
        x[first, cols] = -np.inf
        second = x.argmax(axis=0)
        two = x[second, cols]
        new = one > best[0]  # the block's leader leads: the runner-up is the earlier leader or the block's second
        runner = np.where(new, np.where(best[0] >= two, at[0], second + start), np.where(best[1] >= one, at[1], first + start))
        best[1] = np.where(new, np.maximum(best[0], two), np.maximum(best[1], one))
        at[1], at[0], best[0] = runner, np.where(new, first + start, at[0]), np.where(new, one, best[0])
    return at, best


def empirical_values(counts: Sequence[int], correct: Sequence[bool], order: Sequence[int] | None, none: int = 0,
                     spellings: Sequence[Sequence[tuple[int, int]]] | None = None
                     ) -> np.ndarray:
    """A(n), n = 0..k (the pool's k samples): the exact probability that a majority vote over n samples drawn
    without replacement from one question's pool elects a correct answer.

    ``counts[b]``: the pool's samples of answer class b; ``correct[b]``: whether b is right;
    ``order[b]``: b's tie rank (a tie goes to the lowest); ``none``: samples without an
    answer (they draw but never vote). ``spellings[b]``, where a class is written more than one
    way (``0.5``, ``1/2``): its (tie rank, samples) per spelling, or (tie rank, samples, right)
    where a spelling grades otherwise than ``correct[b]``; a class's tie rank, and its grade, are then
    those of its first spelling among the draws, as the replay (``voting.elect``) keys it, not
    among the pool (given, ``order`` is not read; default: one spelling per class, ranked ``order[b]``). Sums over the
    correct class's vote count x (and its first spelling drawn) the ways every other class
    stays below x (at x when it loses the tie: none of its draws spelled before), by
    polynomial products. The classes that cannot reach x (and the samples without an answer)
    enter as one binomial row (1 + z)^S; only the others are truncated and convolved. Every
    partial sum counts subsets of the pool (at most 2^k), all terms are positive: float64 is
    exact to ~k ulp up to k = 1000 samples; beyond, exact integers.
    """
    counts = [int(c) for c in counts]
    spelled = [sorted((int(s[0]), int(s[1]), bool(s[2] if len(s) > 2 else correct[b])) for s in sp if s[1])
               for b, sp in enumerate(spellings)] if spellings is not None \
        else [[(int(order[b]), n_b, bool(correct[b]))] if n_b else [] for b, n_b in enumerate(counts)]
    k = sum(counts) + int(none)
    big = k > _FLOAT_POOL
    ways = [0] * (k + 1) if big else np.zeros(k + 1)
    for a, n_a in enumerate(counts):
        for j, (first, _, right) in enumerate(spelled[a]):  # a's first spelling among its draws
            if not right:  # a keyed by this spelling is wrong
                continue
            after = sum(c for _, c, _ in spelled[a][j + 1:])  # a's samples spelled after it
            # each other class b: its samples, and those spelled after a's first (b loses a tie with those)
            others = [(n_b, sum(c for r, c, _ in spelled[b] if r > first))
                      for b, n_b in enumerate(counts) if b != a and n_b]
            for x in range(1, n_a + 1):
                lead = math.comb(after + spelled[a][j][1], x) - math.comb(after, x)  # x of a's, first spelling j
                if not lead:
                    continue
                full, poly = int(none), None
                for n_b, later in others:
                    if n_b < x or (n_b == x and later == n_b):
                        full += n_b
                    else:
                        row = _binomials(n_b, big)[:x]
                        if later >= x:  # b at x, every draw of it spelled after a's first: a wins the tie
                            row = np.append(row, np.array([_comb(later, x, big)], dtype=row.dtype))
                        poly = row if poly is None else np.convolve(poly, row)
                row = _binomials(full, big)
                poly = (row if poly is None else np.convolve(poly, row))[: k + 1 - x] * (lead if big else float(lead))
                if big:
                    for y, w in enumerate(poly):
                        ways[x + y] += w
                else:
                    ways[x : x + poly.size] += poly
    return np.array([ways[n] / _comb(k, n, big) for n in range(k + 1)], dtype=np.float64)


_FLOAT_POOL = 1000  # 2^1000 < the largest float64


def _comb(n: int, y: int, big: bool):
    return math.comb(n, y) if big else float(math.comb(n, y))


@functools.lru_cache(maxsize=4096)
def _binomials(n: int, big: bool) -> np.ndarray:
    """C(n, 0..n): exact integers (``big``) or float64."""
    row = np.array([_comb(n, y, big) for y in range(n + 1)], dtype=object if big else np.float64)
    row.flags.writeable = False  # shared by every caller (cached)
    return row


def allocate_values(values: np.ndarray, budget: int) -> np.ndarray:
    """Extra samples per question (sum == budget) maximising Σ_i values[i, e_i], exactly (DP);
    ``values[i, e]`` is -inf where question i cannot take e extra samples."""
    room = np.isfinite(values).sum(axis=1) - 1
    if int(room.sum()) < budget:
        raise UabError(f"the pool cannot serve {budget} more samples")
    return _dp(values, budget)

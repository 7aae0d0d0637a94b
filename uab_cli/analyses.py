"""The paper's cost and allocation analyses of a ``simulate`` replay: cost at fixed accuracy
(§4.2, Figure 3: the least budget N that reaches a target accuracy, from a PCHIP
interpolation of accuracy against N), allocation and accuracy per decile of the Phase-1
signal (Figure 4): the numbers; ``report`` and ``plots`` show them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import recommend
from .cost import Price

COST_KEY = recommend.COMBINATION  # one accuracy-against-N curve each
BASELINE = recommend.BASELINE  # Uniform + majority: the reference of every saving
DEFAULT_TARGETS = 5  # evenly spaced inside Uniform + majority's accuracy range
BINS = 10  # deciles
TIE = 1e-9  # accuracies (and targets) this close are equal: means over seeds carry float rounding


def min_budget(n: Sequence[float], accuracy: Sequence[float], target: float) -> float | None:
    """The least N in [min N, max N] at which the PCHIP interpolation of ``accuracy`` (a fraction,
    one per budget in ``n``, increasing) reaches ``target``; None if it never does. A curve that
    falls again after its peak is inverted at its first crossing."""
    n, acc = np.asarray(n, dtype=np.float64), np.asarray(accuracy, dtype=np.float64)
    reached = acc >= target - TIE  # a mean of 0/1 outcomes equal to the target up to float rounding meets it
    if reached[0]:
        return float(n[0])
    if n.size < 2 or not reached.any():
        return None
    from scipy.interpolate import PchipInterpolator

    roots = PchipInterpolator(n, acc, extrapolate=False).solve(target, extrapolate=False)
    roots = roots[np.isfinite(roots) & (roots >= n[0]) & (roots <= n[-1])]
    # The first budget whose accuracy meets the target bounds the crossing; a curve that touches
    # the target only at a data point (within rounding) has no root there.
    first = float(n[np.argmax(reached)])
    return min(float(roots.min()), first) if roots.size else first


@dataclass(frozen=True)
class Curve:
    """One combination's means over seeds against N (sorted): accuracy, samples, completion
    tokens and prompt tokens per question (``tokens``, ``prompt_tokens`` None when the pool lacks
    those counts)."""

    n: np.ndarray
    accuracy: np.ndarray
    samples: np.ndarray
    tokens: np.ndarray | None
    prompt_tokens: np.ndarray | None = None

    def min_n(self, target: float) -> float | None:
        return min_budget(self.n, self.accuracy, target)

    def above(self, target: float) -> bool:
        """Whether the curve starts above ``target``: its least budget already beats it, so
        ``min_n`` (that budget) is only an upper bound on the least N that reaches it."""
        return bool(self.accuracy[0] > target + TIE)

    def rises(self) -> bool:
        """Whether the curve climbs above its least budget's accuracy: else no target above that
        one is reached, and it has no cost to draw."""
        return bool(self.accuracy.max() > self.accuracy[0] + TIE)

    def at(self, n: float | None, values: np.ndarray | None) -> float | None:
        """``values`` (samples or tokens per question) at budget ``n``, linear between budgets."""
        return None if n is None or values is None else float(np.interp(n, self.n, values))


def curves(summary: Sequence[dict]) -> dict[tuple, Curve]:
    """Per runnable ``COST_KEY`` (allocator, signal, T, vote rule, vote temperature) with at least two budgets, its ``Curve``;
    Uniform + majority first when present."""
    groups: dict[tuple, list[dict]] = {}
    for e in summary:
        if "skipped" not in e and not e.get("upper_bound") and "samples_per_question" in e:
            groups.setdefault(tuple(e.get(k) for k in COST_KEY), []).append(e)
    out = {}
    for key in sorted(groups, key=lambda k: k != BASELINE):
        es = sorted(groups[key], key=lambda e: e["N"])
        if len(es) < 2:
            continue
        tokens, prompt = ([e.get(f) for e in es] for f in ("tokens_per_question", "prompt_tokens_per_question"))
        out[key] = Curve(np.array([e["N"] for e in es], dtype=np.float64), np.array([e["accuracy"] for e in es]),
                         np.array([e["samples_per_question"] for e in es]),
                         None if None in tokens else np.array(tokens, dtype=np.float64),
                         None if None in prompt else np.array(prompt, dtype=np.float64))
    return out


def default_targets(found: dict[tuple, Curve], count: int = DEFAULT_TARGETS) -> list[float]:
    """``count`` accuracies evenly spaced strictly inside Uniform + majority's range (its accuracy
    at the least N to its best), so that every saving is defined; where Uniform is missing or does
    not improve with N, inside the range of the majority-vote curves (those the cost plot draws);
    where none of those rises either, inside the range of every curve. Rounded to 0.1 pp, or
    finer where that would leave the range or merge two (``_rounded_inside``)."""
    majority = [c for key, c in found.items() if key[COST_KEY.index("vote_rule")] == BASELINE[3]]
    for ref in ([found[BASELINE]] if BASELINE in found else [], majority, list(found.values())):
        if ref:
            lo, hi = min(c.accuracy[0] for c in ref), max(c.accuracy.max() for c in ref)
            if hi - lo > 1e-9:
                return _rounded_inside(np.linspace(lo, hi, count + 2)[1:-1], lo, hi)
    return []


def _rounded_inside(targets: np.ndarray, lo: float, hi: float) -> list[float]:
    """``targets`` rounded to 0.1 pp, or to as few more digits as keep each strictly inside
    (lo, hi) and apart: in a range a few tenths of a point wide, 0.1 pp rounds a target to or
    below the least budget's accuracy, where no saving is measured, and merges its neighbours."""
    for digits in range(3, 16):
        rounded = sorted({round(float(t), digits) for t in targets})
        if len(rounded) == len(targets) and lo + TIE < rounded[0] and rounded[-1] < hi - TIE:
            return rounded
    return [float(t) for t in targets]


def at_accuracy(summary: Sequence[dict], targets: Sequence[float] | None = None,
                price: Price | None = None) -> list[dict]:
    """Per combination and target accuracy (a fraction): ``min_N`` (``min_budget``), Uniform +
    majority's ``uniform_min_N``, the samples, completion tokens and prompt tokens per question
    spent there (each sample pays its prompt, as a live run's ``summary.json`` counts it; None
    where the pool lacks the counts), and the ``saving`` against Uniform + majority in samples
    (1 − samples / Uniform's; samples, not N, so a skip-mode exit's unspent share counts), in
    completion tokens (``token_saving``) and in prompt tokens (``prompt_token_saving``); at
    ``price``, the money per question (``cost``, prompt and completion tokens at their prices)
    and ``cost_saving``.

    ``at_most``: the combination's curve starts above the target, so ``min_N`` is the least
    simulated budget and only an upper bound (its savings lower bounds); ``uniform_at_most`` the
    same for Uniform + majority, whose savings are then not measured (None)."""
    found = curves(summary)
    targets = default_targets(found) if targets is None else sorted(targets)
    base = found.get(BASELINE)
    out = []
    for key, c in found.items():
        for target in targets:
            n = c.min_n(target)
            nu = base.min_n(target) if base else None
            samples, tokens, prompt = (c.at(n, v) for v in (c.samples, c.tokens, c.prompt_tokens))
            u_samples, u_tokens, u_prompt = ((base.at(nu, v) for v in (base.samples, base.tokens, base.prompt_tokens))
                                             if base else (None, None, None))
            u_bound = base is not None and base.above(target)
            row = {**dict(zip(COST_KEY, key)), "target": target, "min_N": n, "at_most": c.above(target),
                   "uniform_min_N": nu, "uniform_at_most": u_bound,
                   "saving": None if u_bound else _saving(samples, u_samples), "samples": samples,
                   "tokens": tokens, "uniform_tokens": u_tokens,
                   "token_saving": None if u_bound else _saving(tokens, u_tokens),
                   "prompt_tokens": prompt, "uniform_prompt_tokens": u_prompt,
                   "prompt_token_saving": None if u_bound else _saving(prompt, u_prompt)}
            if price is not None:
                money, u_money = price.of(prompt, tokens), price.of(u_prompt, u_tokens)
                row.update(cost=money, uniform_cost=u_money, cost_saving=None if u_bound else _saving(money, u_money))
            out.append(row)
    return out


def _saving(cost: float | None, reference: float | None) -> float | None:
    return None if cost is None or not reference else 1 - cost / reference


def cost_rows(rows: Sequence[dict]) -> list[dict]:
    """The ``{"cost_at_accuracy": ...}`` rows of a results file."""
    return [r["cost_at_accuracy"] for r in rows if "cost_at_accuracy" in r]


def decile_rows(rows: Sequence[dict]) -> list[dict]:
    """The ``{"deciles": ...}`` rows of a results file."""
    return [r["deciles"] for r in rows if "deciles" in r]


# --- allocation per signal decile ---------------------------------------------------------


def deciles_of(uncertainty: np.ndarray, seed: int = 0) -> np.ndarray:
    """Each question's decile of ``uncertainty`` (0 = least uncertain; equal counts), -1 where it
    is NaN. Equal values go in an order drawn from ``seed``: by position, a signal with few values
    (vcs scores) would rank its tied questions by their place in the file, and a file sorted by
    difficulty would show an accuracy gradient the signal does not give."""
    out = np.full(uncertainty.shape, -1, dtype=np.int64)
    ok = np.flatnonzero(~np.isnan(uncertainty))
    order = ok[np.lexsort((np.random.default_rng(seed).random(ok.size), uncertainty[ok]))]
    out[order] = np.arange(order.size) * BINS // max(order.size, 1)
    return out


class Deciles:
    """Samples allocated and vote accuracy per decile of a Phase-1 statistic (paper Figure 4),
    summed over the replay's seeds per (allocator, signal, T, N)."""

    def __init__(self, statistic: str, graded: np.ndarray):
        self.statistic, self.graded = statistic, graded
        self.sums: dict[tuple, dict] = {}

    def add(self, key: tuple, bins: np.ndarray, per_question: np.ndarray, right: dict[str, np.ndarray]) -> None:
        """One replay of ``key``: ``bins`` (``deciles_of``), samples per question, and per vote
        rule whether each question's vote is right."""
        ok = bins >= 0
        graded = ok & self.graded
        acc = self.sums.setdefault(key, {"questions": np.zeros(BINS), "samples": np.zeros(BINS),
                                         "graded": np.zeros(BINS), "right": {}})
        acc["questions"] += np.bincount(bins[ok], minlength=BINS)
        acc["samples"] += np.bincount(bins[ok], weights=per_question[ok], minlength=BINS)
        acc["graded"] += np.bincount(bins[graded], minlength=BINS)
        for rule, r in right.items():
            acc["right"].setdefault(rule, np.zeros(BINS))
            acc["right"][rule] += np.bincount(bins[graded], weights=r[graded], minlength=BINS)

    def rows(self) -> list[dict]:
        """One ``{"deciles": ...}`` row per (allocator, signal, T, N): mean samples per question
        and accuracy per vote rule, per decile (None for an empty decile)."""
        out = []
        for (name, sig, t, n), acc in self.sums.items():
            out.append({"deciles": {"allocator": name, "signal": sig, "T": t, "N": n, "statistic": self.statistic,
                                    "samples": _ratio(acc["samples"], acc["questions"]),
                                    "accuracy": {rule: _ratio(r, acc["graded"]) for rule, r in acc["right"].items()}}})
        return out


def _ratio(a: np.ndarray, b: np.ndarray) -> list[float | None]:
    return [round(float(x / y), 4) if y else None for x, y in zip(a, b)]

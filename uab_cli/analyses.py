"""The paper's cost and allocation analyses of a ``simulate`` replay: cost at fixed accuracy
(§4.2, Figure 3: the least budget N that reaches a target accuracy, from a PCHIP
interpolation of accuracy against N), allocation and accuracy per decile of the Phase-1
signal (Figure 4), and tokens per response (Appendix); their tables and figures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import recommend, voting

COST_KEY = ("allocator", "signal", "T", "vote_rule")  # one accuracy-against-N curve each
BASELINE = recommend.BASELINE  # Uniform + majority: the reference of every saving
DEFAULT_TARGETS = 5  # evenly spaced inside Uniform + majority's accuracy range
BINS = 10  # deciles


def min_budget(n: Sequence[float], accuracy: Sequence[float], target: float) -> float | None:
    """The least N in [min N, max N] at which the PCHIP interpolation of ``accuracy`` (a fraction,
    one per budget in ``n``, increasing) reaches ``target``; None if it never does. A curve that
    falls again after its peak is inverted at its first crossing."""
    n, acc = np.asarray(n, dtype=np.float64), np.asarray(accuracy, dtype=np.float64)
    if acc[0] >= target:
        return float(n[0])
    if n.size < 2 or acc.max() < target:
        return None
    from scipy.interpolate import PchipInterpolator

    roots = PchipInterpolator(n, acc, extrapolate=False).solve(target, extrapolate=False)
    roots = roots[np.isfinite(roots) & (roots >= n[0]) & (roots <= n[-1])]
    # No root found: the curve meets the target only at a data point, within rounding.
    return float(roots.min()) if roots.size else float(n[np.argmax(acc >= target)])


@dataclass(frozen=True)
class Curve:
    """One combination's means over seeds against N (sorted): accuracy, samples and completion
    tokens per question (``tokens`` None when the pool has no token counts)."""

    n: np.ndarray
    accuracy: np.ndarray
    samples: np.ndarray
    tokens: np.ndarray | None

    def min_n(self, target: float) -> float | None:
        return min_budget(self.n, self.accuracy, target)

    def at(self, n: float | None, values: np.ndarray | None) -> float | None:
        """``values`` (samples or tokens per question) at budget ``n``, linear between budgets."""
        return None if n is None or values is None else float(np.interp(n, self.n, values))


def curves(summary: Sequence[dict]) -> dict[tuple, Curve]:
    """Per runnable (allocator, signal, T, vote rule) with at least two budgets, its ``Curve``;
    Uniform + majority first when present."""
    groups: dict[tuple, list[dict]] = {}
    for e in summary:
        if "skipped" not in e and not e.get("upper_bound") and "samples_per_question" in e:
            groups.setdefault(tuple(e[k] for k in COST_KEY), []).append(e)
    out = {}
    for key in sorted(groups, key=lambda k: k != BASELINE):
        es = sorted(groups[key], key=lambda e: e["N"])
        if len(es) < 2:
            continue
        tokens = [e.get("tokens_per_question") for e in es]
        out[key] = Curve(np.array([e["N"] for e in es], dtype=np.float64), np.array([e["accuracy"] for e in es]),
                         np.array([e["samples_per_question"] for e in es]),
                         None if None in tokens else np.array(tokens, dtype=np.float64))
    return out


def default_targets(found: dict[tuple, Curve], count: int = DEFAULT_TARGETS) -> list[float]:
    """``count`` accuracies evenly spaced strictly inside Uniform + majority's range (its accuracy
    at the least N to its best), so that every saving is defined; where Uniform is missing or does
    not improve with N, inside the range of every curve. Rounded to 0.1 pp."""
    for ref in ([found[BASELINE]] if BASELINE in found else [], list(found.values())):
        if ref:
            lo, hi = min(c.accuracy[0] for c in ref), max(c.accuracy.max() for c in ref)
            if hi - lo > 1e-9:
                return sorted({round(float(t), 3) for t in np.linspace(lo, hi, count + 2)[1:-1]})
    return []


def at_accuracy(summary: Sequence[dict], targets: Sequence[float] | None = None) -> list[dict]:
    """Per combination and target accuracy (a fraction): ``min_N`` (``min_budget``), Uniform +
    majority's ``uniform_min_N``, the samples and completion tokens per question spent there,
    and the ``saving`` against Uniform + majority in samples (1 − samples / Uniform's; samples,
    not N, so a skip-mode exit's unspent share counts) and in tokens (``token_saving``)."""
    found = curves(summary)
    targets = default_targets(found) if targets is None else sorted(targets)
    base = found.get(BASELINE)
    out = []
    for key, c in found.items():
        for target in targets:
            n = c.min_n(target)
            nu = base.min_n(target) if base else None
            samples, tokens = c.at(n, c.samples), c.at(n, c.tokens)
            u_samples, u_tokens = (base.at(nu, base.samples), base.at(nu, base.tokens)) if base else (None, None)
            out.append({**dict(zip(COST_KEY, key)), "target": target, "min_N": n, "uniform_min_N": nu,
                        "saving": _saving(samples, u_samples), "samples": samples, "tokens": tokens,
                        "uniform_tokens": u_tokens, "token_saving": _saving(tokens, u_tokens)})
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


def deciles_of(uncertainty: np.ndarray) -> np.ndarray:
    """Each question's decile of ``uncertainty`` (0 = least uncertain; equal counts, ties by
    position), -1 where it is NaN."""
    out = np.full(uncertainty.shape, -1, dtype=np.int64)
    ok = np.flatnonzero(~np.isnan(uncertainty))
    order = ok[np.argsort(uncertainty[ok], kind="stable")]
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


# --- tables ---------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{round(100 * x):+d} %" if round(100 * x) else "±0 %"


def markdown_cost(costs: Sequence[dict]) -> str:
    """Cost at fixed accuracy as a Markdown table: per combination, per target, the least N and
    the change in samples and tokens against Uniform + majority (empty without rows)."""
    if not costs:
        return ""
    targets = sorted({c["target"] for c in costs})
    by_key: dict[tuple, dict] = {}
    for c in costs:
        by_key.setdefault(tuple(c[k] for k in COST_KEY), {})[c["target"]] = c
    lines = ["## Cost at fixed accuracy", "",
             "| allocator | signal | T | vote rule | " + " | ".join(f"{100 * t:.1f} %" for t in targets) + " |",
             "|---|---|---|---|" + "---|" * len(targets)]
    for (name, sig, t, rule), at in by_key.items():
        cells = []
        for target in targets:
            c = at.get(target)
            if c is None or c["min_N"] is None:
                cells.append("not reached")
                continue
            cell = f"{c['min_N']:.2f}"
            if (name, sig, t, rule) != BASELINE and c["uniform_min_N"] is not None:
                cell += f" ({_pct(-c['saving'] if c['saving'] is not None else None)} samples, "
                cell += f"{_pct(-c['token_saving'] if c['token_saving'] is not None else None)} tokens)"
            elif (name, sig, t, rule) != BASELINE:
                cell += " (uniform: not reached)"
            cells.append(cell)
        lines.append(f"| {name} | {sig or '—'} | {'—' if t is None else format(t, 'g')} | {rule} | "
                     + " | ".join(cells) + " |")
    lines += ["", "The least budget N at which the accuracy reaches each target (PCHIP interpolation of the mean "
                  "accuracy over seeds against N, inverted at its first crossing; paper §4.2), and in brackets the "
                  "samples and completion tokens spent there against what Uniform + majority spends to reach the "
                  "same target (negative: cheaper). Skip-mode exits spend fewer samples than N·M: their samples "
                  "are counted as spent."]
    return "\n".join(lines) + "\n"


def markdown_tokens(summary: Sequence[dict]) -> str:
    """Tokens per response and per question, per allocator and N, under majority vote (the
    tokens do not depend on the vote rule); empty without token counts."""
    done = [e for e in summary if "skipped" not in e and e.get("tokens_per_question") is not None
            and e["vote_rule"] == voting.DEFAULT_RULE]
    if not done:
        return ""
    prompt = all("prompt_tokens_per_question" in e for e in done)
    lines = ["## Tokens per response", "",
             "| N | allocator | signal | T | samples/question | tokens/question | mean tokens/response "
             "| median tokens/response |" + (" prompt tokens/response |" if prompt else ""),
             "|---|---|---|---|---|---|---|---|" + ("---|" if prompt else "")]
    for e in done:
        per = e["samples_per_question"]
        line = (f"| {e['N']} | {recommend.label(e, False, False) if e.get('upper_bound') else e['allocator']} | "
                f"{e['signal'] or '—'} | {'—' if e['T'] is None else format(e['T'], 'g')} | {per:.2f} | "
                f"{e['tokens_per_question']:.1f} | {e['tokens_per_question'] / per:.1f} | {e['tokens_median']:.1f} |")
        if prompt:
            line += f" {e['prompt_tokens_per_question'] / per:.1f} |"
        lines.append(line)
    lines += ["", "Completion tokens of the samples each allocation used (Phase 1 included), means over seeds; the "
                  "median is over the responses of one replay, averaged over seeds."]
    return "\n".join(lines) + "\n"


# --- figures ----------------------------------------------------------------------------------


def plot_cost(summary: Sequence[dict], targets: Sequence[float] = ()):
    """Figure 3: the least N (left) and the completion tokens per question (right) that reach each
    target accuracy, per allocation under majority vote (the other vote rules are in the table);
    the table's targets dotted."""
    from .evaluation import _pyplot, _series, side_legend

    plt = _pyplot()
    summary = [e for e in summary if e.get("vote_rule") == voting.DEFAULT_RULE]
    found = curves(summary)
    lo = min(c.accuracy[0] for c in found.values())
    hi = max(c.accuracy.max() for c in found.values())
    grid = np.linspace(lo, hi, 120)
    tokens = any(c.tokens is not None for c in found.values())
    fig, axes = plt.subplots(1, 1 + tokens, figsize=(6.5 + 6 * tokens, 5), squeeze=False)
    left, right = axes[0][0], axes[0][-1]
    for label, (style, es) in _series(summary).items():
        c = found.get(tuple(es[0][k] for k in COST_KEY))
        if c is None:
            continue
        ns = [c.min_n(t) for t in grid]
        x = 100 * grid
        style = {**style, "markevery": 15, "markersize": 4}
        left.plot(x, [np.nan if n is None else n for n in ns], label=label, **style)
        if c.tokens is not None and tokens:
            right.plot(x, [np.nan if n is None else c.at(n, c.tokens) for n in ns], label=label, **style)
    labelled = [(left, "least budget N that reaches it")] + [(right, "completion tokens per question there")] * tokens
    for ax, ylabel in labelled:
        for t in targets:
            ax.axvline(100 * t, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("target accuracy (%)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    left.set_title("Cost at fixed accuracy, majority vote: samples (lower is better)")
    if tokens:
        right.set_title("Cost at fixed accuracy, majority vote: tokens")
    side_legend(fig, *left.get_legend_handles_labels())
    return fig


def plot_deciles(deciles: Sequence[dict], max_panels: int = 3):
    """Figure 4: mean samples allocated (left) and majority-vote accuracy (right) per decile of the
    Phase-1 statistic, one row per budget N (at most ``max_panels``, spread over the budgets
    between the least and the largest)."""
    from .evaluation import UPPER_BOUNDS, _pyplot, _series, side_legend, spread

    plt = _pyplot()
    entries = [{**d, "vote_rule": voting.DEFAULT_RULE, "upper_bound": d["allocator"] in UPPER_BOUNDS} for d in deciles]
    budgets = sorted({e["N"] for e in entries})
    if len(budgets) > 2:  # N = 1 allocates nothing, and at the pool's K most allocators draw it all
        budgets = budgets[1:-1]
    budgets = spread(budgets, max_panels)
    statistic = deciles[0]["statistic"]
    fig, axes = plt.subplots(len(budgets), 2, figsize=(13, 3.6 * len(budgets) + 0.6), squeeze=False)
    x = np.arange(1, BINS + 1)
    for row, n in zip(axes, budgets):
        for label, (style, es) in _series(entries).items():
            e = next((e for e in es if e["N"] == n), None)
            if e is None:
                continue
            right = e["accuracy"].get(voting.DEFAULT_RULE, [None] * BINS)
            row[0].plot(x, [np.nan if v is None else v for v in e["samples"]], label=label, **style)
            row[1].plot(x, [np.nan if v is None else 100 * v for v in right], label=label, **style)
        row[0].set_ylabel(f"N = {n}: mean samples per question")
        row[1].set_ylabel("majority-vote accuracy (%)")
        for ax in row:
            ax.set_xticks(x)
            ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel(f"decile of the Phase-1 {statistic} (1 = most confident)")
    axes[0][0].set_title("Samples allocated per signal decile")
    axes[0][1].set_title("Accuracy per signal decile")
    side_legend(fig, *axes[0][0].get_legend_handles_labels())
    return fig

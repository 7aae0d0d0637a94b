"""The figures of ``uab report`` (matplotlib): accuracy against N, allocation by level, ANLL of
right and wrong samples, cost at fixed accuracy (paper Figure 3), allocation by signal decile
(Figure 4)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import recommend, voting
from .analyses import BINS, COST_KEY, curves
from .errors import UabError
from .evaluation import UPPER_BOUNDS, anll_by_correctness, anll_correlation


def pyplot():
    """matplotlib's pyplot, drawing to files; ``UabError`` naming the extra when it is missing."""
    try:
        import matplotlib
    except ImportError:
        raise UabError("uab report needs matplotlib: pip install 'uab-cli[plots]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


FEATURED = "uab"  # the allocator the decile figure (the paper's Figure 4) is about
_RULE_STYLE = {"majority": "-", "confident-ties": "--", "weighted": "-.", "filtered": ":", "most-confident": (0, (1, 1))}


def _series(summary: Sequence[dict], within: Sequence[dict] | None = None) -> dict[str, tuple[dict, list[dict]]]:
    """Plot series by label: a colour per allocator with its signal, shaded light (lowest T) to
    dark (highest T) when T varies, a marker per signal and T, and a line style per vote rule
    (when the series hold several); upper bounds are black and dashed. ``within``: the series of these entries only, styled as
    in the whole ``summary`` (so one allocator keeps its colour from panel to panel)."""
    import matplotlib

    done = [e for e in summary if "skipped" not in e]
    temps = sorted({e["T"] for e in done if e["T"] is not None})
    many_t = len(temps) > 1
    kinds = sorted({(str(e["signal"]), e["T"] or 0) for e in done})
    names = sorted({recommend.label(e, False, False) for e in done if not e.get("upper_bound")})
    colors = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"].colors
    done = done if within is None else [e for e in within if "skipped" not in e]
    many_rules = len({(e["vote_rule"], e.get("vote_temperature")) for e in done}) > 1  # labels tell them apart
    out: dict[str, tuple[dict, list[dict]]] = {}
    for e in done:
        if e.get("upper_bound"):  # not an allocator one can run: a black dashed line
            style = {"color": "black", "marker": None, "linestyle": (0, (6, 3))}
        else:
            color = np.array(colors[names.index(recommend.label(e, False, False)) % len(colors)][:3])
            if many_t and e["T"] is not None:  # mixed with white: 55 % for the lowest T, none for the highest
                color = color + (1 - color) * 0.55 * (1 - temps.index(e["T"]) / (len(temps) - 1))
            style = {"color": tuple(color.tolist()), "marker": "osD^vPX*hp<>"[kinds.index((str(e["signal"]),
                                                                                       e["T"] or 0)) % 12],
                     "linestyle": _RULE_STYLE.get(e["vote_rule"], "-") if many_rules else "-"}
        out.setdefault(recommend.label(e, many_t, many_rules), (style, []))[1].append(e)
    return dict(sorted(out.items()))


def spread(values: Sequence, k: int) -> list:
    """At most ``k`` of ``values``, evenly spread, the first and last included."""
    return [values[i] for i in sorted({round(j) for j in np.linspace(0, len(values) - 1, min(k, len(values)))})]


def side_legend(fig, handles: Sequence, labels: Sequence[str]) -> None:
    """A legend right of the axes, in as many columns as its entries need; the figure grows to
    hold it, so no entry is cut off."""
    ncol = max(1, math.ceil(len(labels) / 34))
    width = ncol * (0.6 + 0.052 * max(map(len, labels), default=0))  # inches
    height = 0.2 * math.ceil(len(labels) / ncol) + 0.8
    fig.set_size_inches(fig.get_figwidth() + width, max(fig.get_figheight(), height))
    fig.legend(list(handles), list(labels), loc="center right", fontsize=8, ncol=ncol)
    fig.tight_layout(rect=(0, 0, 1 - width / fig.get_figwidth(), 1))


def plot_accuracy(summary: Sequence[dict]):
    """Figure: accuracy vs budget N per allocator, error bars = std over seeds; upper bounds
    are a dashed line with a band of ± std. With several vote rules, one panel per rule and vote
    temperature (the same y axis), each holding the allocator × signal × T series under it."""
    plt = pyplot()
    done = [e for e in summary if "skipped" not in e]
    rules = sorted({(e["vote_rule"], e.get("vote_temperature")) for e in done},
                   key=lambda r: voting.rank(*r))
    cols = min(len(rules), 3)
    rows = math.ceil(len(rules) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(9.5 if cols == 1 else 5.2 * cols, 5 if rows == 1 else 4.2 * rows),
                             sharey=True, squeeze=False)
    budgets = sorted({e["N"] for e in done})
    for ax, (rule, vt) in zip(axes.flat, rules):
        _accuracy_panel(ax, _series(summary, [e for e in done if (e["vote_rule"], e.get("vote_temperature")) ==
                                              (rule, vt)]), budgets)
        ax.set_title("Accuracy vs budget" if len(rules) == 1 else
                     f"vote rule: {recommend.vote_label({'vote_rule': rule, 'vote_temperature': vt})}")
    for ax in axes.flat[len(rules):]:
        ax.axis("off")
    for ax in axes[:, 0]:
        ax.set_ylabel("accuracy (%), mean ± std over seeds")
    for ax in axes.flat[len(rules) - cols:len(rules)]:  # the lowest panel of each column
        ax.set_xlabel("budget N (samples per question)")
    handles = {lb: h for ax in axes.flat for h, lb in zip(*ax.get_legend_handles_labels())}
    side_legend(fig, handles.values(), list(handles))
    return fig


def _accuracy_panel(ax, series: dict, budgets: list[int]) -> None:
    barred = [label for label, (_, es) in series.items() if not es[0].get("upper_bound")]
    for label, (style, es) in series.items():
        es = sorted(es, key=lambda e: e["N"])
        if es[0].get("upper_bound"):
            acc, std = (np.array([100 * (e[f] or 0.0) for e in es]) for f in ("accuracy", "accuracy_std"))  # one seed: none
            ax.fill_between([e["N"] for e in es], acc - std, acc + std, color="black", alpha=0.08, lw=0)
            ax.plot([e["N"] for e in es], acc, label=label, lw=1.5, **style)
            continue
        # keep error bars apart, within ±5 % (a series alone on its N)
        shift = 1 + 0.1 * (barred.index(label) / (len(barred) - 1) - 0.5) if len(barred) > 1 else 1
        ax.errorbar([e["N"] * shift for e in es], [100 * e["accuracy"] for e in es],
                    yerr=[100 * (e["accuracy_std"] or 0.0) for e in es], label=label, capsize=3, **style)
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets)
    ax.xaxis.set_major_formatter(_fitting_labels())
    ax.minorticks_off()
    ax.grid(alpha=0.3)


def _fitting_labels():
    """A tick formatter that labels each budget's tick but where its label would run into the one
    before (on the log axis, 14, 15 and 16 of a long budget list): placed when the figure is
    drawn, the first and the last tick always labelled."""
    from matplotlib.ticker import Formatter

    class Fitting(Formatter):
        def __call__(self, x, pos=None):
            return str(round(x))

        def format_ticks(self, values):
            labels = [self(v) for v in values]
            ax = self.axis.axes
            em = self.axis.majorTicks[0].label1.get_fontsize() * ax.figure.dpi / 72  # pixels
            x = ax.transData.transform([(v, 0) for v in values])[:, 0]
            half = [0.35 * em * len(label) for label in labels]  # a digit is ~0.64 em wide

            def fits(i, j):  # label j clear of label i by half an em
                return abs(x[j] - x[i]) >= half[i] + half[j] + 0.5 * em

            kept, last = [0], len(values) - 1
            for j in range(1, last + 1):
                if fits(kept[-1], j):
                    kept.append(j)
            while len(kept) > 1 and kept[-1] != last and not fits(kept[-1], last):
                kept.pop()
            kept += [last] * (kept[-1] != last)
            return [label if i in kept else "" for i, label in enumerate(labels)]

    return Fitting()


def plot_levels(summary: Sequence[dict]):
    """Figure: mean allocated samples vs difficulty level, one panel per budget N (at most four,
    spread over the budgets), under majority vote (the first rule the summary holds without it):
    the allocation does not depend on the rule."""
    plt = pyplot()
    held = [r for r in voting.RULES if any(e.get("vote_rule") == r for e in summary)]
    series = _series([e for e in summary if e.get("vote_rule") == (held or [None])[0]])
    levelled = [e for _, es in series.values() for e in es if e.get("by_level")]
    # A panel where every question got exactly N samples shows nothing.
    budgets = spread(sorted({e["N"] for e in levelled if any(v != e["N"] for v in e["by_level"].values())})
                     or sorted({e["N"] for e in levelled}), 4)
    fig, axes = plt.subplots(1, len(budgets), figsize=(3.8 * len(budgets) + 2.2, 4.2), squeeze=False)
    for ax, n in zip(axes[0], budgets):
        for label, (style, es) in series.items():
            e = next((e for e in es if e["N"] == n and e.get("by_level")), None)
            if e:
                ax.plot(list(e["by_level"]), list(e["by_level"].values()), label=label, **style)
        ax.set_title(f"N = {n}")
        ax.set_xlabel("difficulty level")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean samples per question")
    handles = {lb: h for ax in axes[0] for h, lb in zip(*ax.get_legend_handles_labels())}
    side_legend(fig, handles.values(), list(handles))
    return fig


def plot_anll(records: Sequence[dict]):
    """Figure: ANLL histograms of correct vs incorrect pool samples, each as shares of its own
    samples, in log-spaced bins (ANLL is heavy-tailed: linear bins put nearly all samples in
    the first two)."""
    plt = pyplot()
    anll = anll_by_correctness(records)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    both = np.concatenate([anll[True], anll[False]])
    positive = both[both > 0]
    lo, hi = (positive.min(), both.max()) if positive.size else (0.0, 0.0)
    log = hi > lo > 0
    bins = np.geomspace(lo, hi, 31) if log else (_linear_bins(both) if both.size else 10)
    for ok, color in ((True, "tab:green"), (False, "tab:red")):
        if anll[ok].size:
            values = np.clip(anll[ok], lo, None) if log else anll[ok]  # an ANLL of 0 joins the first bin
            ax.hist(values, bins=bins, alpha=0.55, weights=np.full(values.size, 100 / values.size), color=color,
                    label=f"{'correct' if ok else 'incorrect'} (n={anll[ok].size})")
    if log:
        ax.set_xscale("log")
    r = anll_correlation(records)
    ax.set_title("ANLL of pool samples" + ("" if r is None else f" (Pearson r with correctness = {r:.3f})"))
    ax.set_xlabel("ANLL (mean token NLL)" + (", log scale" if log else ""))
    ax.set_ylabel("share of the correct / incorrect samples (%)")
    ax.legend()
    fig.tight_layout()
    return fig


def _linear_bins(values: np.ndarray) -> np.ndarray:
    """30 equal bins over ``values`` (numpy's); one around them where they are all equal, also where
    they are so large (1e20) that numpy's bin of width 1 around them rounds away."""
    lo, hi = values.min(), values.max()
    if lo == hi:
        return lo + max(0.5, abs(lo) * 1e-9) * np.array([-1.0, 1.0])
    return np.histogram_bin_edges(values, bins=30)


MAX_PLOTTED_ANLL = 1e300  # beyond it (no model's: a few tens at most) matplotlib draws no axis near the largest float


def cost_plotted(summary: Sequence[dict]) -> list[dict]:
    """The summary entries ``plot_cost`` draws: those under majority vote (the other vote rules
    are in the cost table)."""
    return [e for e in summary if e.get("vote_rule") == voting.DEFAULT_RULE]


def plot_cost(summary: Sequence[dict], targets: Sequence[float] = ()):
    """Figure 3: the samples per question spent at the least N (left: N itself but for the exits that save, skip and forfeit)
    and the completion tokens per question (right) that reach each target accuracy, per allocation under majority vote (the other vote rules are in the table);
    the table's targets dotted, those within the curves' accuracies."""
    plt = pyplot()
    summary = cost_plotted(summary)
    found = curves(summary)
    lo = min(c.accuracy[0] for c in found.values())
    hi = max(c.accuracy.max() for c in found.values())
    grid = np.linspace(lo, hi, 120)
    tokens = any(c.tokens is not None for c in found.values())
    fig, axes = plt.subplots(1, 1 + tokens, figsize=(6.5 + 6 * tokens, 5), squeeze=False)
    left, right = axes[0][0], axes[0][-1]
    for label, (style, es) in _series(summary).items():
        c = found.get(tuple(es[0].get(k) for k in COST_KEY))
        if c is None:
            continue
        ns = [None if c.above(t) else c.min_n(t) for t in grid]  # below its least budget's accuracy: unknown
        x = 100 * grid
        style = {**style, "markevery": 15, "markersize": 4}
        left.plot(x, [np.nan if n is None else c.at(n, c.samples) for n in ns], label=label, **style)
        if c.tokens is not None and tokens:
            right.plot(x, [np.nan if n is None else c.at(n, c.tokens) for n in ns], label=label, **style)
    labelled = [(left, "samples per question spent there (N; less for exits that save)")] + [(right, "completion tokens per question there")] * tokens
    for ax, ylabel in labelled:
        for t in targets:
            if lo <= t <= hi:  # one out of the curves' reach would squeeze them (the table says "not reached")
                ax.axvline(100 * t, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("target accuracy (%)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    left.set_title("Cost at fixed accuracy, majority vote: samples (lower is better)")
    if tokens:
        right.set_title("Cost at fixed accuracy, majority vote: tokens")
    side_legend(fig, *left.get_legend_handles_labels())
    return fig


def plot_deciles(deciles: Sequence[dict], max_panels: int = 3, whole_pool: Sequence[int] = ()):
    """Figure 4: mean samples allocated (left) and majority-vote accuracy (right) per decile of the
    Phase-1 statistic, one row per budget N (at most ``max_panels``, spread over the budgets).
    N = 1 and the budgets ``whole_pool`` (those that spend every sample of the pool) are left out
    while another budget remains: N = 1 allocates nothing, and there every allocator draws the
    whole pool."""
    plt = pyplot()
    entries = [{**d, "vote_rule": voting.DEFAULT_RULE, "upper_bound": d["allocator"] in UPPER_BOUNDS} for d in deciles]
    budgets = sorted({e["N"] for e in entries})
    budgets = spread([n for n in budgets if n > 1 and n not in whole_pool] or budgets, max_panels)
    statistic = deciles[0]["statistic"]
    fig, axes = plt.subplots(len(budgets), 2, figsize=(13, 3.6 * len(budgets) + 0.6), squeeze=False)
    x = np.arange(1, BINS + 1)
    for row, n in zip(axes, budgets):
        for label, (style, es) in _series(entries).items():
            e = next((e for e in es if e["N"] == n), None)
            if e is None:
                continue
            if e["allocator"] == FEATURED:  # what the figure is about: on top, wider, outlined markers
                style = {**style, "lw": 3, "markersize": 7, "markeredgecolor": "black", "zorder": 5}
            else:
                style = {**style, "lw": 1.2, "markersize": 4, "zorder": 2}
            right = e["accuracy"].get(voting.DEFAULT_RULE, [None] * BINS)
            row[0].plot(x, [np.nan if v is None else v for v in e["samples"]], label=label, **style)
            row[1].plot(x, [np.nan if v is None else 100 * v for v in right], label=label, **style)
        row[0].set_ylabel(f"N = {n}: mean samples per question")
        row[1].set_ylabel(f"N = {n}: majority-vote accuracy (%)")
        for ax in row:
            ax.set_xticks(x)
            ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel(f"decile of the Phase-1 {statistic} (1 = most confident)")
    axes[0][0].set_title("Samples allocated per signal decile")
    axes[0][1].set_title("Accuracy per signal decile")
    side_legend(fig, *axes[0][0].get_legend_handles_labels())
    return fig

"""``uab report``: the Markdown tables of a replay (accuracy per allocator and N, cost at fixed
accuracy, tokens per response) and the files a report writes (``summary.md`` and the plots)."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Sequence

import numpy as np

from . import __version__, analyses, plots, recommend, voting
from .analyses import BASELINE, COST_KEY, at_accuracy
from .cost import Price
from .errors import UabError
from .evaluation import about, anll_correlation, recommendations, summarize
from .jsonl import write_files
from .pools import Pooled, pooled
from .records import is_int
from .settings import default


def _spread(x: float | None) -> str:
    """The spread " ± x", x in percentage points; nothing where none is known (one seed)."""
    return "" if x is None else f" ± {100 * x:.2f}"


def markdown_table(summary: Sequence[dict], correlation: float | None = None,
                   recommended: Sequence[dict] = (), advise: bool = True) -> str:
    """The summary as a Markdown table (accuracy in %; none where nothing was replayed), then
    (``advise``) the headroom and recommendation."""
    lines = [] if all("skipped" in e for e in summary) else [("| N | allocator | signal | T | vote rule | seeds | accuracy % | coverage % | tokens/question "
              "| Δ vs uniform + majority (pp) | share of headroom | saved | capped |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    headroom = {r["N"]: r["headroom"] for r in recommend.by_budget(summary)}
    for e in summary:
        if "skipped" in e:
            notes.append(f"- skipped {e['allocator']} ({e['signal'] or '—'}) at N={e['N']}: {e['skipped']}")
            continue
        diff = "—" if e["diff_uniform"] is None else f"{100 * e['diff_uniform']:+.2f}{_spread(e['diff_se'])}"
        part = None if e.get("upper_bound") else recommend.share(e, headroom.get(e["N"]))
        lines.append(f"| {e['N']} | {recommend.label(e) if e.get('upper_bound') else e['allocator']} | "
                     f"{e['signal'] or '—'} | {'—' if e['T'] is None else format(e['T'], 'g')} | {recommend.vote_label(e)} | "
                     f"{e['seeds']} | {100 * e['accuracy']:.2f}{_spread(e['accuracy_std'])} | "
                     f"{100 * e['coverage']:.2f} | {_tokens(e)} | {diff} | "
                     f"{'—' if part is None else f'{100 * part:.0f} %'} | "
                     f"{e['saved']:.1f} | {e['capped']:.1f} |")
    text = "\n".join(lines) + "\n" if lines else ""
    if correlation is not None:
        text += f"\nANLL–correctness Pearson r over the pool's samples: {correlation:.3f} (paper: ≈ −0.3)\n"
    fell = max((e.get("vote_fallbacks", 0) for e in summary), default=0)
    if fell:
        shown = f"{fell:.1f}".removesuffix(".0")
        notes.append(f"- up to {shown} questions per replay had a voted sample without the vote's confidence "
                     "statistic: the confidence rules voted them by majority (--vote-signal reads another)")
    cut = [e for e in summary if e.get("cut") is not None]
    if cut:
        share = sum(e["cut"] for e in cut) / sum(e["samples_used"] for e in cut)
        did = "their answers voted" if cut[0]["cut_samples"] == "count" else "they did not vote"
        notes.append(f"- {100 * share:.1f} % of the samples the replays used were cut at --max-tokens; {did} "
                     f"(--cut-samples {cut[0]['cut_samples']})")
    partial = next((e for e in summary if "graded" in e), None)
    if partial:
        notes.append(f"- accuracy is over the {partial['graded']} of {partial['M']} questions with a gold answer "
                     "(the others are replayed but not graded)")
    whole = sorted({e["N"] for e in summary if e.get("whole_pool")})
    if whole:
        notes.append(f"- N = {', '.join(map(str, whole))}: the budget is every sample of the pool, so every "
                     "allocator draws the whole pool and they differ only by vote rule (equal gains: the "
                     "recommendation takes Uniform, then a signal-free allocator)")
    if notes:
        text += "\n" + "\n".join(notes) + "\n"
    advice = recommend.markdown(summary, recommended) if advise else ""
    return text + ("\n" + advice if advice else "")


def _tokens(entry: dict) -> str:
    value = entry.get("tokens_per_question")
    return "—" if value is None else f"{value:.1f}"


def _change(saving: float | None, bound: str) -> str:
    """A saving as the change in cost (negative: cheaper), ``bound`` ("≤ ") before a bound."""
    return "—" if saving is None else bound + _pct(-saving)


def _pct(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{round(100 * x):+d} %" if round(100 * x) else "±0 %"


def _percent(target: float) -> str:
    """A target accuracy (a fraction) in percent, as precise as it was given: one decimal at least
    (``25.8``, ``40.0``), more where it has them (``20.25``, not ``20.2`` beside a ``20.2``)."""
    text = f"{100 * target:.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def markdown_cost(costs: Sequence[dict]) -> str:
    """Cost at fixed accuracy as a Markdown table: per combination, per target, the least N and
    the change in samples and tokens against Uniform + majority (empty without rows)."""
    if not costs:
        return ""
    targets = sorted({c["target"] for c in costs})
    by_key: dict[tuple, dict] = {}
    for c in costs:
        by_key.setdefault(tuple(c.get(k) for k in COST_KEY), {})[c["target"]] = c  # a file before vote_temperature
    lines = ["## Cost at fixed accuracy", "",
             "| allocator | signal | T | vote rule | " + " | ".join(f"{_percent(t)} %" for t in targets) + " |",
             "|---|---|---|---|" + "---|" * len(targets)]
    for key, at in by_key.items():
        name, sig, t = key[:3]
        cells = []
        for target in targets:
            c = at.get(target)
            if c is None or c["min_N"] is None:
                cells.append("not reached")
                continue
            bound = "≤ " if c.get("at_most") else ""  # the curve starts above the target
            cell = f"{bound}{c['min_N']:.2f}"
            if key == BASELINE:
                pass
            elif c["uniform_min_N"] is None:
                cell += " (uniform: not reached)"
            elif c.get("uniform_at_most"):
                cell += f" (uniform: ≤ {c['uniform_min_N']:.2f})"
            else:
                cell += (f" ({_change(c['saving'], bound)} samples, {_change(c['token_saving'], bound)} tokens"
                         + "".join(f", {_change(c[k], bound)} {what}" for k, what in
                                   (("prompt_token_saving", "prompt tokens"), ("cost_saving", "cost"))
                                   if c.get(k) is not None) + ")")
            cells.append(cell)
        lines.append(f"| {name} | {sig or '—'} | {'—' if t is None else format(t, 'g')} | "
                     f"{recommend.vote_label(dict(zip(COST_KEY, key)))} | " + " | ".join(cells) + " |")
    lines += ["", "The least budget N at which the accuracy reaches each target (PCHIP interpolation of the mean "
                  "accuracy over seeds against N, inverted at its first crossing; paper §4.2), and in brackets the "
                  "samples and completion tokens spent there (and, where the pool counts them, the prompt tokens: "
                  "each sample pays its prompt; with `simulate --price`, the cost in money) against what Uniform + "
                  "majority spends to reach the same target (negative: cheaper). The exits that save (`skip`, `forfeit`) spend fewer "
                  "samples than N·M: the samples they spent are counted, not N. ≤: the combination is above the target already at the least budget "
                  "simulated, so that budget and its saving are bounds; add a smaller budget (`--budgets 1,…`) "
                  "to measure them."]
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


# --- the files ---------------------------------------------------------------------------


def produced(source: str | None, simulation: dict | None) -> str:
    """The line ``summary.md`` opens with: the results file, and the pool and settings behind it
    (its draw, with the distribution that supplied the model's file where its records name one:
    ``model_package``; the allocation options a replay was given beyond the defaults: ``_replayed_with``)."""
    parts = [f"Results: `{source}`"] if source else []
    if simulation:
        gen = simulation.get("generation") or {}
        drawn = ", ".join(f"{k} {gen[k]}" for k in ("backend", "model", "model_package", "temperature", "max_tokens",
                                                    "seed") if gen.get(k) not in (None, ""))
        regrade = simulation.get("regrade")  # a pool whose answers `uab regrade` read again: the ones replayed
        regraded = regrade.get("version") if isinstance(regrade, dict) else None
        parts.append(f"from the pool `{simulation['pool']}` ({simulation['questions']} questions"
                     + (f"; drawn with {drawn}" if drawn else "") + (f"; answers regraded by uab {regraded}" if regraded else "")
                     + f"), {simulation['seeds']} seed{'s' * (simulation['seeds'] != 1)}"
                     + "".join(f", {o}" for o in _replayed_with(simulation))
                     + (f", checking `{simulation['check']}`" if simulation.get("check") else "")
                     + f"; uab {simulation['version']}")
    return (" ".join(parts) + ".\n\n") if parts else ""


def png_metadata(source: str | None, simulation: dict | None, plt) -> dict:
    """A plot's PNG text chunks: what produced it, so that the image alone tells (``Description``:
    ``summary.md``'s opening line, ``produced``; ``Software``: the uab that drew it)."""
    described = produced(source, simulation).strip()
    return {"Software": f"uab {__version__} (Matplotlib {plt.matplotlib.__version__})",
            **({"Description": described} if described else {})}


def _replayed_with(simulation: dict) -> list[str]:
    """The allocation options a ``{"simulation": …}`` row records beyond the defaults, as ``simulate``
    was given them: ``--gain`` (``uab`` and its exits read it), the official hard-exit test and its
    N_max (the exit presets read them; null: N)."""
    out = []
    if simulation.get("gain") not in (None, default("allocate.gain")):
        out.append(f"`--gain {simulation['gain']}`")
    if simulation.get("exit_test") not in (None, default("allocate.exit_test")):
        nmax = simulation.get("exit_nmax")
        out.append(f"`--exit-test {simulation['exit_test']}`" + (" (N_max = N)" if nmax is None else
                                                                 f" `--exit-nmax {nmax}`"))
    return out


def report(rows: Sequence[dict], records: Sequence[dict] | Pooled | None, out_dir: str,
           targets: Sequence[float] | None = None, on_skipped: Callable[[str, str], None] | None = None,
           source: str | None = None, lines: Sequence[int] | None = None, pool: str | None = None,
           listed: Callable[[list[str]], None] | None = None) -> list[str]:
    """Write the plots and ``summary.md`` into ``out_dir``; returns the paths written. The cost
    at fixed accuracy is the results file's (``simulate -o``) unless ``targets`` are given or it
    has none; the signal deciles need its ``deciles`` rows. A plot the inputs cannot draw is
    named, with why, in ``summary.md`` and to ``on_skipped(name, why)``. ``summary.md`` opens
    with where the results came from (``source``, the results file, and its ``produced_by`` row);
    ``lines`` (each row's line in it) locate a row that is no result row; ``pool`` names the file
    ``records`` came from in an error saying they are not the results' pool. ``listed(paths)`` is
    called once every file is written in full, before the first replaces its old copy: a failure
    there (a full stdout) leaves the directory as it was."""
    records = None if records is None else pooled(records)  # what the report reads of them
    try:
        files, skipped = _render(rows, records, targets, on_skipped, source, lines, pool)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:  # a row of another shape
        raise UabError(f"a row is not what `uab simulate -o` writes ({type(exc).__name__}: {exc})", source) from None
    written = {os.path.join(out_dir, name): data.getvalue() for name, data in files.items()}
    write_files(written, None if listed is None else lambda: listed(list(written)),
                removed=[os.path.join(out_dir, name) for name in skipped])
    return list(written)


class _Absent:
    """What ``_shape`` reads of a field a row leaves out."""


_NUMBER, _NONE, _OUT = (int, float), (type(None),), (_Absent,)
# A result row's fields the report reads, with their JSON types (_OUT: it may leave the field out,
# as rows of earlier releases and rows the field does not concern do; bool is no number).
_RESULT_FIELDS = {"allocator": (str,), "signal": (str, *_NONE), "T": (*_NUMBER, *_NONE),
                  "vote_rule": (str, *_NONE, *_OUT), "vote_temperature": (*_NUMBER, *_NONE, *_OUT),
                  "M": (int, *_NONE, *_OUT), "graded": (int, *_NONE, *_OUT), "tokens": (*_NUMBER, *_NONE, *_OUT),
                  "tokens_median": (*_NUMBER, *_NONE, *_OUT), "prompt_tokens": (*_NUMBER, *_OUT),
                  "vote_fallbacks": (*_NUMBER, *_OUT), "cut": (*_NUMBER, *_OUT), "by_level": (dict, *_OUT)}
_RESULT_NUMBERS = ("accuracy", "coverage", "samples_used", "saved", "capped")  # every result row holds them


def _shape(row: dict, kinds: dict, what: str) -> str | None:
    """What is wrong with ``row``'s fields of ``kinds`` (their types), ``what`` the row is; None: nothing."""
    if type(row.get("signal")) is str:  # a signal's temperature is in its label
        kinds = {**kinds, "T": _NUMBER}
    for key, types in kinds.items():
        if type(row.get(key, _Absent())) not in types:
            return f"{what}'s {key!r} is {row[key]!r}" if key in row else f"{what} without {key!r}"
    return None


def _result_shape(r: dict) -> str | None:
    """What is wrong with result row ``r``'s fields (None: nothing the report reads)."""
    kinds = {**_RESULT_FIELDS, **({} if "skipped" in r else dict.fromkeys(_RESULT_NUMBERS, _NUMBER))}
    if type(r.get("tokens")) in _NUMBER:  # counted tokens come with their median per response
        kinds["tokens_median"] = _NUMBER
    if "graded" in r:  # the graded questions are told of M
        kinds["M"] = (int, *_NONE)
    if wrong := _shape(r, kinds, "a result row"):
        return wrong
    if any(type(v) not in _NUMBER for v in (r.get("by_level") or {}).values()):
        return f"a result row's 'by_level' is {r['by_level']!r}"
    return None


# What the report reads of a recommendation row beyond what ``recommend.numbered`` checks (what
# `uab run` needs): its label, held-out gain and flags, and the label of what it was kept over.
_LABEL = {"allocator": (str,), "signal": (str, *_NONE), "T": (*_NUMBER, *_NONE, *_OUT)}
_RECOMMENDATION_FIELDS = {**_LABEL, "held_out": (dict,), "flags": (str,), "kept_over": (dict, *_NONE, *_OUT)}
_HELD_OUT = {"gain": _NUMBER, "se": (*_NUMBER, *_NONE), "se_questions": (*_NUMBER, *_NONE, *_OUT)}


def _recommendation_shape(rec: dict) -> str | None:
    """What is wrong with recommendation ``rec``'s fields (None: nothing the report reads)."""
    over = rec.get("kept_over")
    return (_shape(rec, _RECOMMENDATION_FIELDS, "a recommendation row")
            or _shape(rec["held_out"], _HELD_OUT, "a recommendation row's held_out")
            or (_shape(over, {**_LABEL, "why": (str,)}, "a recommendation row's kept_over") if over else None))


# What the report reads of a `simulate --check` verdict (``recommend.markdown_check``): the
# combination replayed, its gain here ± its standard error, the verdict, the gain it was chosen with.
_CHECK_FIELDS = {**_LABEL, "N": (int,), "vote_rule": (str, *_NONE, *_OUT), "vote_temperature": (*_NUMBER, *_NONE, *_OUT),
                 "gain": _NUMBER, "se": _NUMBER, "worse": (bool,), "chosen_gain": (*_NUMBER, *_NONE, *_OUT),
                 "chosen_se": (*_NUMBER, *_NONE, *_OUT)}


# What the report reads of a results file's ``produced_by`` row (``produced``; one of another type
# than an object is a file of before it, ``evaluation.about``).
_SIMULATION_FIELDS = {"pool": (str,), "questions": (int,), "seeds": (int,), "version": (str,),
                      "generation": (dict, *_NONE, *_OUT), "check": (str, *_NONE, *_OUT)}


def _verdict_shape(row: dict) -> str | None:
    """What is wrong with ``row``'s ``{"check": ...}`` verdict (None: nothing the report reads)."""
    verdict = row["check"]
    if not isinstance(verdict, dict):
        return f"a check row holds {verdict!r}"
    return _shape(verdict, _CHECK_FIELDS, "a check row") or (
        None if verdict["N"] >= 1 else f"a check row's 'N' is {verdict['N']!r}")


def _check_rows(rows: Sequence[dict], source: str | None, lines: Sequence[int] | None) -> None:
    """``UabError`` naming ``source`` and the line for a row that is no JSON object, a result row
    whose N or seed is no count (``true``, ``2.5``: ``simulate`` writes integers) or whose accuracy
    is no number, or two results files appended: a second ``produced_by`` row (the report would
    name the first file's pool for both), or a replay that two result rows hold (its seeds would
    count twice and every standard error shrink); or a results file of ``simulate -o`` (its
    ``produced_by`` row) that lacks the rows it ends with (a recommendation per N, or ``--check``'s
    verdict per N): cut short, its last seeds and analyses are missing too. Every row the report
    reads is checked for the fields it reads (result, recommendation, ``--check`` verdict and
    ``produced_by`` rows), and result rows for their pool's levels (``by_level``): one simulation
    writes the same levels in each, so other ones are rows of two simulations or a hand edit (their
    mean over seeds would mix levels some seeds lack)."""
    seen = set()
    levels: tuple[list[str], int | None] | None = None  # the first result row's levels, and its line
    opened: list[int | None] = []  # the line of the first ``{"simulation": ...}`` row
    for i, r in enumerate(rows):
        line = lines[i] if lines else None
        if not isinstance(r, dict):
            raise UabError(f"a row is not what `uab simulate -o` writes (a JSON {type(r).__name__})", source, line)
        if "simulation" in r:  # each results file opens with one: a second is another file appended
            if opened:
                on = "" if opened[0] is None else f" (the first on line {opened[0]})"
                raise UabError(f"a second {{\"simulation\": …}} row{on}: one simulation per results file "
                               "(were two appended?)", source, line)
            opened.append(line)
        if "check" in r and (wrong := _verdict_shape(r)):
            raise UabError(f"{wrong}, not what `uab simulate -o` writes", source, line)
        if isinstance(r.get("simulation"), dict) and (wrong := _shape(r["simulation"], _SIMULATION_FIELDS,
                                                                       "a simulation row")):
            raise UabError(f"{wrong}, not what `uab simulate -o` writes", source, line)
        if "allocator" not in r:
            continue
        if wrong := _result_shape(r):
            raise UabError(f"{wrong}, not what `uab simulate -o` writes", source, line)
        if "skipped" in r:
            if not (is_int(r.get("N")) and r["N"] >= 1):
                raise UabError(f"a result row's N is a count, got {r.get('N')!r}", source, line)
            continue
        if not (is_int(r.get("N")) and r["N"] >= 1 and is_int(r.get("seed")) and r["seed"] >= 0):
            raise UabError(f"a result row's N and seed are counts, got N = {r.get('N')!r}, seed = {r.get('seed')!r}",
                           source, line)
        held = sorted(r.get("by_level") or ())  # the pool's levels: every result row of one simulation has them
        levels = levels or (held, line)
        if held != levels[0]:
            first = "the first result row's" if levels[1] is None else f"line {levels[1]}'s"
            raise UabError(f"a result row's levels are {', '.join(held) or 'none'}, {first} "
                           f"{', '.join(levels[0]) or 'none'}: every result row of one simulation holds its "
                           "pool's levels (rows of two simulations merged?)", source, line)
        key = (r["allocator"], r.get("signal"), r.get("T"), r["N"], r["seed"], r.get("vote_rule"),
               r.get("vote_temperature"))
        if key in seen:
            raise UabError(f"two result rows for {recommend.label(r)} at N = {r['N']}, seed {r['seed']}: "
                           "one simulation per results file (were two appended?)", source, line)
        seen.add(key)
    for line, rec in recommend.numbered(zip(lines or [None] * len(rows), rows), source or "-"):  # each one's shape
        if wrong := _recommendation_shape(rec):
            raise UabError(f"{wrong}, not what `uab simulate -o` writes", source, line)
    made = about(rows)
    last = "check" if made and made.get("check") else "recommendation"
    closed = {r[last].get("N") for r in rows if isinstance(r.get(last), dict)}
    if made is not None and (cut := sorted({key[3] for key in seen} - closed)):
        raise UabError(f"a `uab simulate -o` results file without its {last} row for N = {', '.join(map(str, cut))} "
                       "(they come last: is it cut short?)", source)
    if made is not None and not closed:  # it ends with one per N, whatever it replayed
        raise UabError(f"a `uab simulate -o` results file without its {last} rows (they come last: is it cut "
                       "short?)", source)


def _render(rows: Sequence[dict], records: Pooled | None, targets: Sequence[float] | None,
            on_skipped: Callable[[str, str], None] | None, source: str | None,
            lines: Sequence[int] | None = None, pool: str | None = None) -> tuple[dict, dict]:
    """The report's files (name -> bytes) and the plots it cannot draw (name -> why), written nowhere."""
    _check_rows(rows, source, lines)
    summary = summarize(rows)
    if not any("skipped" not in e for e in summary) and not any("check" in r for r in rows):
        raise UabError("no result rows to report (`uab simulate -o` writes them)", source)
    simulated = {r["M"] for r in rows if "M" in r}
    if records is not None and simulated and simulated != {len(records)}:  # before any figure is drawn
        raise UabError(f"--pool holds {len(records)} questions, the results were simulated on "
                       f"{', '.join(map(str, sorted(simulated)))}: give the pool they came from", pool)
    made = about(rows) or {}
    if records is not None and made.get("fingerprint") not in (None, records.fingerprint()):
        raise UabError(f"--pool holds other questions than the pool the results were simulated on "
                       f"({made.get('pool')}): give the pool they came from", pool)
    plt = plots.pyplot()
    opened = set(plt.get_fignums())
    try:
        return _draw(rows, records, targets, on_skipped, source, summary, plt)
    except BaseException:  # a row of another shape found while drawing: no figure left open in this process
        for number in set(plt.get_fignums()) - opened:
            plt.close(number)
        raise


# The plots of the replays' results (the rest: of the pool), and why a `--check` has none.
REPLAY_PLOTS = ("accuracy_vs_budget.png", "allocation_by_level.png", "cost_at_accuracy.png", "signal_deciles.png")
NOTHING_REPLAYED = "`simulate --check` replayed nothing: each recommendation it checked is Uniform + majority"


def _replay_figures(rows, targets, summary) -> tuple[dict, dict, list[dict]]:
    """The figures of the replays' results, the ones they cannot draw (name -> why) and the cost at
    fixed accuracy."""
    figures = {"accuracy_vs_budget.png": plots.plot_accuracy(summary)}
    skipped = {}
    if any(e.get("by_level") for e in summary):
        figures["allocation_by_level.png"] = plots.plot_levels(summary)
    else:
        skipped["allocation_by_level.png"] = "the questions have no 'level' field"
    price = Price.recorded((about(rows) or {}).get("price"))  # simulate --price: the money, at other targets too
    costs = (targets is None and analyses.cost_rows(rows)) or at_accuracy(summary, targets, price)
    if not analyses.curves(summary):
        skipped["cost_at_accuracy.png"] = "the results hold one budget: the cost at fixed accuracy needs two or more N"
    elif not (plotted := analyses.curves(plots.cost_plotted(summary))):
        skipped["cost_at_accuracy.png"] = "the results hold no majority-vote rows: the plot is of majority vote"
    elif not any(c.rises() for c in plotted.values()):
        skipped["cost_at_accuracy.png"] = ("no majority-vote accuracy rises with N above its least budget's: no "
                                           "target above it is reached, so the plot would hold one point per curve")
    else:
        figures["cost_at_accuracy.png"] = plots.plot_cost(summary, sorted({c["target"] for c in costs}))
    whole = {e["N"] for e in summary if e.get("whole_pool")}
    if analyses.decile_rows(rows):
        figures["signal_deciles.png"] = plots.plot_deciles(analyses.decile_rows(rows), whole_pool=whole)
    elif (about(rows) or {}).get("check"):
        skipped["signal_deciles.png"] = ("`simulate --check` writes no 'deciles' rows: it replays the recommended "
                                         "combinations alone (the results file it checks has them)")
    else:
        skipped["signal_deciles.png"] = ("the results have no 'deciles' rows (`uab simulate -o` writes them for a "
                                         "per-sample signal of its --signals that the pool's samples carry: no "
                                         "logprob statistic without token logprobs, not vote-entropy)")
    return figures, skipped, costs


def _draw(rows, records, targets, on_skipped, source, summary, plt) -> tuple[dict, dict]:
    """``_render``'s figures and ``summary.md``, each figure closed once saved."""
    if any("skipped" not in e for e in summary):
        figures, skipped, costs = _replay_figures(rows, targets, summary)
    else:  # a --check whose every recommendation is Uniform + majority: its verdicts alone
        figures, skipped, costs = {}, dict.fromkeys(REPLAY_PLOTS, NOTHING_REPLAYED), []
    correlation = None
    anll = None if records is None else records.column("anll")
    known = None if anll is None else ~np.isnan(anll)  # the samples with an ANLL
    if records is None:
        skipped["anll_correct_vs_incorrect.png"] = "no --pool given"
    elif not known.any():
        skipped["anll_correct_vs_incorrect.png"] = "the pool's samples have no ANLL (no token logprobs)"
    elif not (known & records.sample_graded()).any():
        skipped["anll_correct_vs_incorrect.png"] = ("the pool's questions with ANLL samples have no gold answer: "
                                                    "no sample is graded correct or incorrect")
    else:
        correlation = anll_correlation(records)
        if (top := float(np.abs(anll[known]).max())) > plots.MAX_PLOTTED_ANLL:
            skipped["anll_correct_vs_incorrect.png"] = (f"an ANLL of {top:g} in the pool: beyond "
                                                        f"{plots.MAX_PLOTTED_ANLL:g}, no axis draws it")
        else:
            figures["anll_correct_vs_incorrect.png"] = plots.plot_anll(records)
    for name, why in skipped.items():
        if on_skipped:
            on_skipped(name, why)
    checks = [r["check"] for r in rows if "check" in r]  # `simulate --check`: its verdicts, not a recommendation
    text = "# UAB simulation summary\n\n" + produced(source, about(rows)) + markdown_table(summary, correlation, recommendations(rows),
                                                           advise=not checks)
    for part in (checks and recommend.markdown_check(checks), markdown_cost(costs), markdown_tokens(summary)):
        text += "\n" + part if part else ""
    if skipped:
        text += "\nPlots not drawn:\n\n" + "".join(f"- {name}: {why}\n" for name, why in skipped.items())
    # Everything rendered before the first file is written: a report that fails leaves the
    # directory as it was, and one that succeeds leaves no plot of an earlier report beside it.
    files = {}
    for name, fig in figures.items():
        files[name] = io.BytesIO()
        fig.savefig(files[name], format="png", dpi=120, metadata=png_metadata(source, about(rows), plt))
        plt.close(fig)
    files["summary.md"] = io.BytesIO(text.encode("utf-8"))
    return files, skipped

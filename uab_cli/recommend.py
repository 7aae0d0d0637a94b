"""What to run at my budget: per N, the headroom (upper bound − Uniform + majority), each
combination's share of it, and a recommendation chosen so that it holds on new questions.

``summarize`` entries (``evaluation``) carry ``diff_uniform``/``diff_se``: the accuracy
difference to Uniform + majority paired by seed, and its standard error; ``upper_bound``
marks allocators that only ``uab simulate`` can compute (the oracle).

The recommendation (``held_out``) is chosen on per-question outcomes, not on the summary:
choosing the best of dozens of allocator × signal × T × vote-rule combinations on the same
draws that measure it overfits. So the selection rule is cross-validated: run on four fifths of
the questions and scored on the other fifth, every fifth in turn (``FOLDS``), over ``REPEATS``
random partitions (the folds choose without the gate, ``_cross_validated_gain`` says why); a
combination is recommended only when that held-out gain exceeds ``SIGNIFICANCE`` standard
errors over seeds (paired, as every gain ``simulate`` reports; over questions at an N that
spends the whole pool, where every seed draws the same samples), the
pool has ``MIN_QUESTIONS`` graded questions and the replay ``MIN_SEEDS`` seeds; the gain
reported is the held-out one, with its spread over questions beside it (``se_questions``: what
a new question set of the pool's size brings).

The selection rule: take the combination with the highest paired gain over Uniform + majority;
if that gain is not above ``SIGNIFICANCE`` standard errors over seeds, Uniform + majority.
Otherwise apply the one-standard-error rule (Breiman et al., CART; Hastie et al., ESL §7.10):
of the combinations whose gain is within one question-level standard error of the best one's
(the spread over questions of their paired difference to it), take the simplest, in the order
of ``preferred``: Uniform before the other signal-free allocators before the signal ones, and
a vote rule that departs less from majority before one that departs more (``voting.RULES``
order). Among dozens of candidates, the best on one half is often a noisy variant of a simpler
one (a ``length`` or ``random`` allocation beside Uniform's, ``most-confident`` beside
``confident-ties``); the simpler one holds better on the other half.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from . import allocators, voting
from .backends import options as backend_options
from .backends import sample_options
from .errors import UabError
from .options import exclusive, from_params
from .settings import TEMPLATE_DIGEST, Allocation, Generation, Vote, options, param_name, recommended_values, show
from .settings import at_entry as at_config_entry
from .settings import flag as config_flag
from .signals import DEFAULT_T, REGISTRY, SIGNALS

SIGNIFICANCE = 2.0  # a gain counts when it exceeds this many standard errors
NOISE = 1e-12  # a gain no larger is a zero's float rounding (a real one is a count over seeds × questions × repeats)
FOLDS = 5  # cross-validation: the selection rule chooses on 4/5 of the questions, scored on the other 1/5
REPEATS = 5  # random partitions into folds
MIN_QUESTIONS = 50  # fewer graded questions: Uniform + majority (too few to tell a gain from noise)
MIN_SEEDS = 5  # fewer seeds: Uniform + majority (a standard error from fewer is itself too noisy to gate on)
COMBINATION = ("allocator", "signal", "T", "vote_rule", "vote_temperature")  # what a recommendation names
BASELINE = ("uniform", None, None, voting.DEFAULT_RULE, None)  # Uniform + majority, in those fields


def held_out(outcomes: dict[tuple, np.ndarray], upper_bounds, context: dict) -> list[dict]:
    """One recommendation per N from ``outcomes[(allocator, signal, T, N, vote rule, vote
    temperature)]`` (the temperature None where the rule does not read one), each a
    (seeds × graded questions) 0/1 array of vote correctness on the same draws. ``context``:
    ``gain`` (the replay's), ``vote`` (``settings.Vote``: confidence settings), ``generation``
    (the pool's sampling settings), ``k1`` per (allocator, signal, T, N) and ``whole_pool``: the
    Ns that spend every sample of the pool."""
    out = []
    for n in sorted({key[3] for key in outcomes}):
        base_key = _outcome_key(BASELINE, n)
        if base_key not in outcomes:
            continue
        keys = preferred([k for k in outcomes if k[3] == n and k[0] not in upper_bounds and k != base_key],
                         lambda k: (*k[:3], *k[4:]))
        base = outcomes[base_key].astype(np.float64)
        diffs = np.stack([outcomes[k] - base for k in keys]) if keys else np.zeros((0, *base.shape))
        gain, se, se_questions, rounds = _cross_validated_gain(diffs)
        # Where N spends the whole pool every seed draws the same samples (only tie-breaks
        # vary), so the seeds say nothing of the spread: the gate reads the questions'.
        whole = n in context.get("whole_pool", ())
        gate = se_questions if whole else se
        pick = _select(diffs, np.arange(base.shape[1]))
        short = (f"fewer than {MIN_QUESTIONS} graded questions" if base.shape[1] < MIN_QUESTIONS
                 else f"fewer than {MIN_SEEDS} seeds" if base.shape[0] < MIN_SEEDS else None)
        chosen = keys[pick] if pick is not None and not short and significant(gain, gate) else base_key
        entry = {"N": n, **_combination(chosen),
                 "gain": gain if chosen != base_key else 0.0, "se": gate if chosen != base_key else 0.0,
                 "held_out": {"gain": gain, "se": se, "se_questions": se_questions, "selections": rounds},
                 "in_sample_gain": float(diffs[keys.index(chosen)].mean()) if chosen != base_key else 0.0}
        if chosen == base_key and pick is not None:  # what won on the pool, and why it is not recommended
            entry["kept_over"] = {**_combination(keys[pick]), "in_sample_gain": float(diffs[pick].mean()),
                                  "why": short or f"held-out gain not above {SIGNIFICANCE:g} standard errors"
                                  + (" over questions (N spends the whole pool)" if whole else "")}
        settings = run_settings(entry, context)
        entry["flags"] = flags(settings)
        entry["settings"] = settings
        if "prompt_template" in settings:  # its content: a run on the template edited since is refused
            entry[TEMPLATE_DIGEST] = (context.get("generation") or {}).get(TEMPLATE_DIGEST)
        out.append(entry)
    return out


def significant(gain, se):
    """Whether ``gain`` exceeds ``SIGNIFICANCE`` standard errors ``se`` and float noise (with a
    standard error of 0, a zero gain summed from fractions, +1e-17, is no gain)."""
    return gain > SIGNIFICANCE * se + NOISE


def standard_error(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """The standard error of the mean along ``axis``: the sample spread (ddof 1) / √n; n ≥ 2."""
    values = np.asarray(values, dtype=np.float64)
    return values.std(axis=axis, ddof=1) / np.sqrt(values.shape[axis])


def _outcome_key(combination: tuple, n: int) -> tuple:
    """A ``COMBINATION`` at budget ``n`` as an ``outcomes`` key: N after the allocation's T."""
    return (*combination[:3], n, *combination[3:])


def _combination(key: tuple) -> dict:
    """An ``outcomes`` key (allocator, signal, T, N, vote rule, vote temperature) as recommendation fields."""
    return dict(zip(COMBINATION, (*key[:3], *key[4:])))


def preferred(items: list, describe) -> list:
    """``items`` from the simplest to the most elaborate, the order that breaks ties between equal
    gains (the first of equals wins) and that the one-standard-error rule reads: Uniform, then the
    other signal-free allocators, then the rest; within each, the vote rules in ``voting.rank``'s
    order (majority, then the rules that depart more and more from it; within a rule the higher
    vote temperature); otherwise the registry's order of allocators (``allocators.ALLOCATORS``)
    and of signals (``signals.SIGNALS``), then the lower T: never the order of ``--allocators``,
    ``--signals``, ``-T`` or ``--vote-temperature``, which must not change what is recommended.
    ``describe(item)``: its (allocator, signal, T, vote rule, vote temperature; None where the
    rule reads none). At N = the pool's samples per question every allocator draws the whole
    pool: the simplest wins."""
    names, signals = list(allocators.ALLOCATORS), list(SIGNALS)

    def rank(item) -> tuple:
        allocator, signal, t, rule, vote_t = describe(item)
        return (allocator != "uniform", signal is not None, voting.rank(rule or voting.DEFAULT_RULE, vote_t),
                names.index(allocator) if allocator in names else len(names),
                signals.index(signal) if signal in signals else -1, t if t is not None else 0.0)

    return sorted(items, key=rank)


def _select(diffs: np.ndarray, questions: np.ndarray, gated: bool = True) -> int | None:
    """The selection rule on ``questions`` (combinations in ``preferred`` order): None —
    Uniform + majority — when the highest mean paired gain is not above ``SIGNIFICANCE``
    standard errors over seeds; else the index of the first combination whose gain is within
    one question-level standard error of the highest (the one-standard-error rule) and itself
    above ``SIGNIFICANCE`` standard errors over seeds. Not ``gated`` (inside the
    cross-validation, ``_cross_validated_gain``): "above zero" in place of "above
    ``SIGNIFICANCE`` standard errors"."""
    if not diffs.shape[0] or questions.size < 2:
        return None
    on = diffs[:, :, questions]
    per_seed = on.mean(axis=2)  # combinations × seeds
    mean = per_seed.mean(axis=1)
    best = int(np.argmax(mean))
    seeds = per_seed.shape[1]
    if gated:
        se = standard_error(per_seed, axis=1) if seeds > 1 else np.full(mean.shape, np.inf)
        gains = significant(mean, se)
    else:
        gains = mean > NOISE
    if not gains[best]:
        return None
    per_question = on.mean(axis=1)  # combinations × questions
    gap_se = standard_error(per_question[best] - per_question, axis=1)
    return int(np.flatnonzero(gains & (mean >= mean[best] - gap_se - NOISE))[0])


def _cross_validated_gain(diffs: np.ndarray) -> tuple[float, float | None, float, int]:
    """The selection rule's gain on questions it did not choose on: per question and seed, its
    gain under the combination chosen on the other folds (0 where none gains there), averaged
    over the repeats. Returns the mean; its standard error over seeds (paired by seed,
    as every gain ``simulate`` reports; None with one seed), the gate; its standard error over
    questions (their spread / √m: what a new set of the pool's size brings), reported; and the
    number of selections made.

    Cross-validation (Hastie et al., ESL §7.10) rather than halving: each selection sees four
    fifths of the questions, so it is close to the one made on the whole pool, and every
    question is scored in every repeat. The selection is scored on questions it never saw, so
    the gate needs no allowance for having chosen among many; gating on the question-level
    error as well asked a new-question confidence of 97.7 % and kept Uniform + majority over
    real gains of +2 to +4 points wherever they sat on a few questions (README).

    The folds choose without the significance gate (``gated=False``): the gate is applied once,
    to this held-out gain. Within one pool a fold's training gain and its test gain are two
    parts of one total, so they move in opposite directions; gated inside the folds, a rule
    was chosen where its training gain was high, so its test gain low, and kept out where its
    test gain was high. Where a gain sits on a few questions near the gate, that made the
    held-out gain negative for a rule that gains +1.5 on the pool and +2.3 on new questions,
    and kept Uniform + majority (README, "recommendation (held out)")."""
    seeds, m = diffs.shape[1], diffs.shape[2]
    if m < FOLDS:
        return 0.0, 0.0, 0.0, 0
    rng = np.random.default_rng(0)
    held = np.zeros((seeds, m))
    for _ in range(REPEATS):
        order = rng.permutation(m)
        for f in range(FOLDS):
            test = order[f::FOLDS]
            pick = _select(diffs, np.setdiff1d(order, test), gated=False)  # sorted
            if pick is not None:
                held[:, test] += diffs[pick][:, test]
    held /= REPEATS
    per_question, per_seed = held.mean(axis=0), held.mean(axis=1)
    se = float(standard_error(per_seed)) if seeds > 1 else None
    return float(per_question.mean()), se, float(standard_error(per_question)), REPEATS * FOLDS


def run_settings(entry: dict, context: dict) -> dict:
    """The ``uab run`` option values (by parameter name) that reproduce a recommendation on new
    questions: the pool's sampling settings (and, for ``judge``, the ``--judge-max-tokens`` its
    labels were asked with), the allocator, its signal and T, and the vote."""
    vote: Vote = context.get("vote") or Vote()
    out: dict = {}
    gen = context.get("generation") or {}
    # the judge's cap changes no sample, but the labels an allocator that reads them was replayed on
    unread = {"seed", "backend_options", *Generation.SAMPLE_FREE} - \
        ({"judge_max_tokens"} if entry["allocator"] in allocators.NEEDS_JUDGE else set())
    for name, value in gen.items():
        if name in Generation.__dataclass_fields__ and name not in unread and value is not None:
            out[name] = value
    defaults = sample_options(gen.get("backend", Generation.backend))  # a backend option only where not its default
    out.update({k: v for k, v in (gen.get("backend_options") or {}).items() if k in defaults and v != defaults[k]})
    for one, other in exclusive(options()):  # a pool drawn with a template: the template, not the prompt
        if one in out:
            out.pop(other, None)
    for flag, value in allocators.RUN_FLAGS[entry["allocator"]].items():
        out[param_name(flag)] = context.get("gain") or "algorithm1" if value is None else value
    test, nmax = context.get("exit_test") or ("paper", None)
    if out.get("exit") == "hard" and test != "paper":  # the replay's --exit-test (and --exit-nmax; none: N)
        out.update(exit_test=test, **({"exit_nmax": nmax} if nmax else {}))
    if entry["signal"] is not None:
        out.update(signal=entry["signal"], signal_temperature=entry["T"])
    k1 = (context.get("k1") or {}).get((entry["allocator"], entry["signal"], entry["T"], entry["N"]), 1)
    if k1 > 1:
        out["samples"] = k1
    key = (entry["allocator"], entry["signal"], entry["T"], entry["N"])
    if key in (context.get("capped") or ()):  # replayed as its own optimum capped at the pool: run it so
        out["max_per_question"] = context["pool_k"]
    chosen = replace(vote, rule=entry["vote_rule"])
    if entry.get("vote_temperature") is not None:  # the candidate's own, of simulate's --vote-temperature list
        chosen = replace(chosen, temperature=entry["vote_temperature"])
    out.update(chosen.options())
    return out


def as_run(rec: dict) -> tuple[Allocation, Vote]:
    """The allocation and vote ``uab run --settings`` builds from recommendation ``rec``'s
    ``settings`` at its N (a hand-made row's allocator options, left out, its allocator's own):
    what ``simulate --check`` replays, every option included (``--max-per-question``, ``--gain``,
    ``--exit-threshold``, the vote's). ``UabError`` for settings ``uab run`` refuses, and for
    those the replay cannot run as it would (``_replayable``; an ``--allocation-seed`` of an allocator
    that reads one: the replay runs it at each of its own seeds, measuring the gain expected over them)."""
    settings = recommended_values(rec.get("settings") or {})
    flags = allocators.RUN_FLAGS.get(rec["allocator"], {"--allocator": rec["allocator"]})
    own = {param_name(flag): value for flag, value in flags.items() if value is not None}
    allocation = from_params(Allocation, {**own, **settings, "budget": rec["N"]})
    k = settings["samples"]
    k = allocation.phase1_samples if k is None else k
    allocation.check(k, allocation.signal or "anll")
    vote = from_params(Vote, {"vote_rule": rec.get("vote_rule"), **settings})
    vote.check_rules()
    _replayable(rec, allocation, from_params(Allocation, {**own, "budget": rec["N"]}), vote, k)
    if allocation.allocator in allocators.SEEDED and settings.get("allocation_seed") is not None:  # (another ignores it)
        raise UabError("--allocation-seed: `uab simulate --check` replays the allocator at each of its --seeds, "
                       "not at one allocation seed: its gain is the expected one over seeds")
    return allocation, vote


def _replayable(rec: dict, allocation: Allocation, named: Allocation, vote: Vote, k: int) -> None:
    """``UabError`` where ``uab run --settings`` would run recommendation ``rec`` otherwise than
    ``simulate --check`` replays it: its settings' ``allocation`` (``vote``) another than the
    combination the row names (``named``: its allocator's own options; its signal, T, vote rule),
    which the replay draws; -K ``k`` other than what its allocator and signal need (the replay
    draws that many); ``--exclude-phase1`` or ``--tie-seed`` (the replay votes over every sample,
    ties to the answer that sorts first)."""
    def canonical(a: Allocation, name: str):
        return allocators.RUN_FLAGS[a.allocator]["--allocator"] if name == "allocator" else getattr(a, name)

    signal = allocation.signal if allocation.uses_signal else None
    free = {"gain"} if rec["allocator"] in allocators.replay_readers("--gain") else set()  # the replay's --gain
    differ = [(config_flag(f"allocate.{name}"), canonical(allocation, name), f"allocator {rec['allocator']}'s",
               canonical(named, name)) for name in ("allocator", "exit", "exit_mode", "vote_model", "gain")
              if name not in free]
    differ += [("--signal", signal, "'signal'", rec.get("signal")),
               ("--vote-rule", vote.rule, "'vote_rule'", rec.get("vote_rule") or voting.DEFAULT_RULE)]
    if signal is not None and REGISTRY[signal].tempered:
        differ.append(("-T/--signal-temperature", allocation.temperature, "'T'", rec.get("T") or DEFAULT_T))
    for option, given, field, row in differ:
        if given != row:
            raise UabError(f"its settings give {option} {show(given)}, not its {field} {show(row)}: `uab run "
                           "--settings` would run the settings, `uab simulate --check` replays the row's combination")
    need = allocation.phase1_need  # as `uab run` counts it: the signal's too, where the allocator ignores it
    if k != need:
        raise UabError(f"-K/--samples {k}: `uab simulate --check` replays the {need} Phase-1 sample"
                       f"{'s' * (need > 1)} per question its allocator{' and signal' * bool(allocation.signal)} need"
                       f"{'s' * (not allocation.signal)}, as `uab run --settings` draws them")
    if not vote.include_phase1:
        raise UabError("--exclude-phase1: `uab simulate --check` replays votes over every sample, Phase 1's too")
    if vote.tie_seed is not None:
        raise UabError("--tie-seed: `uab simulate --check` replays majority's ties to the answer that sorts first, "
                       "not at random")


def flags(settings: dict) -> str:
    """``run_settings`` as command-line options."""
    declared = {o.name: o.flag.split("/") for o in options()}
    parts = []
    for name, value in settings.items():
        spelled = declared.get(name, ["--" + name.replace("_", "-")])
        if isinstance(value, bool):
            parts.append(spelled[0] if value else spelled[-1])
        else:
            shown = _number(value) if isinstance(value, float) else shlex.quote(value) if isinstance(value, str) else value
            parts.append(f"{spelled[0]} {shown}")  # a system prompt has spaces: quoted for the shell
    return " ".join(parts)


def _number(value: float) -> str:
    """A float as a flag's value: every digit it needs to read back the same (0.1234567, not
    0.123457), without a trailing ``.0``."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def label(entry: dict, with_t: bool = True, with_rule: bool = True) -> str:
    """Allocator name with its signal (and T) and vote rule; upper bounds say so."""
    if entry.get("upper_bound"):
        return f"{entry['allocator']} (upper bound)"
    name = entry["allocator"]
    if entry["signal"] is not None:
        name += f" ({entry['signal']}" + (f", T={entry['T']:g})" if with_t else ")")
    return f"{name} + {vote_label(entry)}" if with_rule else name


def vote_label(entry: dict) -> str:
    """An entry's vote rule, with its vote temperature where it reads one: ``weighted (vote T=0.05)``."""
    rule = entry.get("vote_rule") or voting.DEFAULT_RULE
    vt = entry.get("vote_temperature")
    return rule if vt is None else f"{rule} (vote T={vt:g})"


def share(entry: dict, headroom: dict | None) -> float | None:
    """A runnable entry's gain over Uniform + majority as a fraction of the headroom; None when
    the headroom does not exceed ``SIGNIFICANCE`` standard errors (a share of noise means nothing)."""
    if headroom is None or _is_baseline(entry) or entry.get("diff_uniform") is None:
        return None
    gain, se = headroom["diff_uniform"], headroom["diff_se"]
    return entry["diff_uniform"] / gain if se is not None and significant(gain, se) else None


def chosen_with(rec: dict, whole_pool: bool) -> tuple[float | None, float | None]:
    """The held-out gain recommendation ``rec`` was chosen with, ± the standard error its gate read:
    a pick's own ``gain`` and ``se``; for Uniform + majority (whose own gain is 0 by definition) the
    selection rule's held-out gain, as its ``held_out`` records it, ± its standard error over seeds,
    or over questions where N spent the whole pool (``whole_pool``: every seed drew the same samples).
    A row without ``held_out`` (a hand-made one): its own gain."""
    held = rec.get("held_out")
    if not _is_baseline(rec) or not isinstance(held, dict):
        return rec.get("gain"), rec.get("se")
    return held.get("gain"), held.get("se_questions" if whole_pool else "se")


def _is_baseline(entry: dict) -> bool:
    return entry["allocator"] == "uniform" and (entry.get("vote_rule") or voting.DEFAULT_RULE) == BASELINE[3]


def by_budget(summary: Sequence[dict]) -> list[dict]:
    """Per N: ``uniform`` (Uniform + majority), ``headroom`` (the best upper-bound entry, or
    None) and ``best`` (the runnable entry with the highest in-sample paired gain, Uniform +
    majority itself where none gains, or None)."""
    out = []
    done = [e for e in summary if "skipped" not in e and e.get("diff_uniform") is not None]
    for n in sorted({e["N"] for e in done}):
        at = [e for e in done if e["N"] == n]
        uniform = next((e for e in at if _is_baseline(e)), None)
        if uniform is None:
            continue
        bounds = [e for e in at if e.get("upper_bound")]
        runnable = preferred([e for e in at if not e.get("upper_bound") and not _is_baseline(e)],
                             lambda e: (e["allocator"], e["signal"], e["T"], e.get("vote_rule"),
                                        e.get("vote_temperature")))
        best = max(runnable, key=lambda e: e["diff_uniform"], default=None)
        if best is not None and best["diff_uniform"] <= 0:  # nothing gains: Uniform + majority is the best
            best = uniform
        out.append({"N": n, "uniform": uniform, "best": best,
                    "headroom": max(bounds, key=lambda e: e["diff_uniform"], default=None)})
    return out


def _recommended(rec: dict) -> str:
    """The recommendation's label; for Uniform + majority kept over an in-sample winner, which."""
    over = rec.get("kept_over")
    return label(rec) + (f" (kept over {label(over)}: {over['why']})" if over else "")


def _held_out(held: dict, kept: bool) -> str:
    """The held-out gain ± its standard error over seeds / over questions (pp); ``kept``: Uniform +
    majority was recommended, so the gain is the selection rule's, not the recommendation's (0)."""
    over = held.get("se_questions")
    text = _pp(held["gain"], held["se"]) + ("" if over is None else f" / {100 * over:.2f}")
    return f"+0.00 (the rule's: {text})" if kept else text


def _pp(gain: float, se: float | None) -> str:
    return f"{100 * gain:+.2f}" + ("" if se is None else f" ± {100 * se:.2f}")


def markdown(summary: Sequence[dict], recommendations: Sequence[dict] = ()) -> str:
    """The headroom table and one recommendation line per N (empty without Uniform rows)."""
    rows = by_budget(summary)
    if not rows:
        return ""
    recs = {r["N"]: r for r in recommendations}
    lines = ["## Headroom and recommendation", "",
             "| N | uniform + majority % | headroom (pp) | best in-sample | its gain (pp) | share of headroom "
             "| recommended (held out) | held-out gain (pp, ± SE over seeds / questions) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        best, head, rec = r["best"], r["headroom"], recs.get(r["N"])
        part = None if best is None else share(best, head)
        lines.append(
            f"| {r['N']} | {100 * r['uniform']['accuracy']:.2f} | "
            f"{'—' if head is None else _pp(head['diff_uniform'], head['diff_se'])} | "
            f"{'—' if best is None else label(best)} | {'—' if best is None else _pp(best['diff_uniform'], best['diff_se'])} | "
            f"{'—' if part is None else f'{100 * part:.0f} %'} | {'—' if rec is None else _recommended(rec)} | "
            f"{'—' if rec is None else _held_out(rec['held_out'], _is_baseline(rec))} |")
    lines += ["", ("Headroom: the oracle's accuracy minus Uniform + majority's, paired by seed (± standard error); the "
                   "oracle knows each question's answer distribution in the pool, so it bounds every allocation fixed "
                   "before a sample is seen, under majority vote on this pool (one that reads the draws, such as UAB or "
                   "adaptive, can pass it in principle; not other vote rules). Best in-sample: chosen and measured on the same "
                   "draws (optimistic). Recommended: the best combination when it wins by more than "
                   f"{SIGNIFICANCE:g} standard errors (or the simplest within one standard error of it), chosen on "
                   f"{FOLDS - 1}/{FOLDS} of the questions and scored on the other 1/{FOLDS} ({FOLDS}-fold "
                   f"cross-validation, {REPEATS} times); its held-out gain must itself exceed {SIGNIFICANCE:g} "
                   f"standard errors over seeds, the pool hold {MIN_QUESTIONS} graded questions and the replay "
                   f"{MIN_SEEDS} seeds, else Uniform + majority. "
                   + ("Run it on new questions (the pool's sampling settings included):" if recs else
                      "The results file holds no recommendation (written by a `uab simulate` before them).")), ""]
    lines += [f"- N = {r['N']}: `uab run QUESTIONS --budget {r['N']} -o RUN {rec['flags']}`"
              for r in rows if (rec := recs.get(r["N"]))]
    if recs:
        lines += ["", "or `uab run QUESTIONS --budget N -o RUN --settings RESULTS.jsonl` with this simulation's "
                      "results file (`-o`): it takes the recommendation for N."]
    return "\n".join(lines) + "\n"


def markdown_check(checks: Sequence[dict]) -> str:
    """One line per N of ``evaluation.check``: the recommendation, the gain it was chosen with,
    its gain on these questions and the verdict."""
    lines = ["## Recommendations replayed on these questions", "",
             "| N | recommended | held-out gain where chosen (pp) | gain here (pp, ± SE over seeds; over questions at the whole pool) | verdict |", "|---|---|---|---|---|"]
    for c in checks:
        if _is_baseline(c):
            verdict, here = "Uniform + majority: nothing to replay", "—"
        else:
            here = _pp(c["gain"], c["se"])
            verdict = (f"worse by more than {SIGNIFICANCE:g} standard errors" if c["worse"]
                       else f"gains more than {SIGNIFICANCE:g} standard errors" if significant(c["gain"], c["se"])
                       else "within noise of Uniform + majority")
        chosen = "—" if c.get("chosen_gain") is None else _pp(c["chosen_gain"], c.get("chosen_se"))
        lines.append(f"| {c['N']} | {label(c)} | {chosen} | {here} | {verdict} |")
    return "\n".join(lines) + "\n"


_SHAPE = {"N": (int,), "allocator": (str,), "vote_rule": (str, type(None)), "signal": (str, type(None)),
          "vote_temperature": (int, float, type(None)),
          "T": (int, float, type(None)), "settings": (dict, type(None)), "flags": (str, type(None)),
          TEMPLATE_DIGEST: (str, type(None)), "gain": (int, float, type(None)), "se": (int, float, type(None)),
          "held_out": (dict, type(None))}
_HELD_OUT_SHAPE = {"gain": (int, float, type(None)), "se": (int, float, type(None)),
                   "se_questions": (int, float, type(None))}  # what ``chosen_with`` reads


def _check_shape(rec: dict, path: str, line: int | None, required: tuple[str, ...]) -> None:
    """``UabError`` naming ``path`` (and ``line``) for a recommendation row of another shape than
    ``simulate`` writes (a field of another type, no N or allocator, a setting no value its option
    takes: a hand edit); ``required``: the fields it must have."""
    for key, kinds in _SHAPE.items():
        value = rec.get(key)
        if value is None:
            if key in required:
                raise UabError(f"a recommendation row without {key!r}", path, line)
            continue
        if type(value) not in kinds or (key == "N" and value < 1):
            raise at_config_entry(UabError(f"a recommendation row's {key!r} is {value!r}, not what `uab simulate -o` writes",
                                    path, line), f"recommendation.{key}")
    for key, kinds in _HELD_OUT_SHAPE.items():
        if type(value := (rec.get("held_out") or {}).get(key)) not in kinds:
            raise UabError(f"a recommendation row's held_out's {key!r} is {value!r}, not what `uab simulate -o` "
                           "writes", path, line)
    declared = {o.name: o for o in (*options(), *backend_options())}
    for name, value in (rec.get("settings") or {}).items():
        try:
            if name in declared:
                declared[name].check(value)
        except UabError as exc:  # a JSON object's: at its key's line (``settings.at_its_line``)
            raise at_config_entry(UabError(exc.message, path, line), f"recommendation.settings.{name}") from None


def numbered(rows: Iterable[tuple[int | None, object]], path: str,
             required: tuple[str, ...] = ("N", "allocator")) -> list[tuple[int | None, dict]]:
    """The ``{"recommendation": ...}`` rows of a results file's ``(line, row)``, each with its
    line, checked (``_check_shape``: ``uab run`` needs only N and the settings, ``--check`` the
    combination); ``UabError`` naming the file and line of one of another shape, and of a second
    one for the same N (two results files appended: which would run?)."""
    found: list[tuple[int | None, dict]] = []
    first: dict[int, int | None] = {}
    for line, row in rows:
        if not isinstance(row, dict) or "recommendation" not in row:
            continue
        rec = row["recommendation"]
        if not isinstance(rec, dict):
            raise UabError(f"a recommendation row holds {rec!r}, not what `uab simulate -o` writes", path, line)
        _check_shape(rec, path, line, required)
        if rec["N"] in first:
            on = "" if first[rec["N"]] is None else f" (the first on line {first[rec['N']]})"
            raise UabError(f"a second recommendation for N = {rec['N']}{on}: one results file per simulation",
                           path, line)
        first[rec["N"]] = line
        found.append((line, rec))
    return found


def why_none(objects: Iterable[object]) -> str | None:
    """Why results ``objects`` hold no recommendation row, where they tell: the header of a
    simulation that chose recommendations (not of a ``--check``) without them (cut short), or
    ``--check``'s verdicts (its results, not the file it checked)."""
    objects = [o for o in objects if isinstance(o, dict)]
    if any(isinstance(o.get("simulation"), dict) and "check" not in o["simulation"] for o in objects):
        return "a `uab simulate -o` results file without recommendation rows (they come last: is it cut short?)"
    if any(isinstance(o.get("check"), dict) for o in objects):
        return ("a `uab simulate --check` results file holds its checks, not recommendations: give the results "
                "file of the simulation that chose them")
    return None


def from_results(path: str, budgets: Sequence[int] | None, rows: Sequence[tuple[int, dict]],
                 run_checks=None) -> list[dict]:
    """The ``{"recommendation": ...}`` rows of a ``uab simulate -o`` results file ``path`` (``rows``: its
    ``(line, row)``, read by the caller: stdin reads once), those for ``budgets``
    when given; ``UabError`` naming the file when there are none, or none for one of ``budgets``
    (asked for N = 3 and silently left out, a check would look complete), and naming its line
    for one of them whose settings ``uab run`` refuses (``as_run``; ``run_checks(settings)``: the
    option names and values of ``uab run``'s own, which the CLI knows): ``uab run --settings
    --budget N`` reads N's row alone."""
    lined = numbered(rows, path)
    if not lined:
        raise UabError(why_none(row for _, row in rows)
                       or "no recommendation rows: expected a `uab simulate -o` results file", path)
    if budgets is not None:
        have = ", ".join(str(rec["N"]) for _, rec in lined)
        missing = [n for n in budgets if n not in {rec["N"] for _, rec in lined}]
        if missing:
            raise UabError(f"no recommendation for N = {', '.join(map(str, missing))} of --budgets "
                           f"{','.join(map(str, budgets))} (it has N = {have}; simulate those budgets first)", path)
        lined = [(line, rec) for line, rec in lined if rec["N"] in budgets]
    for line, rec in lined:  # what `uab run --settings` would refuse, the check does: naming its row
        try:
            if run_checks is not None:
                run_checks(recommended_values(rec.get("settings") or {}))
            as_run(rec)
        except UabError as exc:
            raise UabError(exc.message, path, line) from None
    return [rec for _, rec in lined]

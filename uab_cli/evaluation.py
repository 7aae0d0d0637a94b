"""Offline evaluation: replay allocators on a pool of K pre-drawn samples per question over
many seeds (``simulate``) and aggregate the rows (``summarize``); ``report`` renders them."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace

import numpy as np

from . import __version__, allocation, recommend, voting
from .allocators import (
    ALLOCATORS,  # noqa: F401  (the registry simulate replays from, read here by its callers and tests)
    NEEDS_JUDGE,
    PHASE1,
    ROUNDS,
    SIGNAL_FREE,
    SIMULATE_ONLY,
    Job,
    call,
    preset,
    replay_readers,
)
from .analyses import Deciles, at_accuracy, deciles_of
from .cost import Price
from .errors import UabError
from .pipeline import default_signal, generation_of, resolve_vote_signal
from .pools import Pool, Pooled, pooled
from .records import is_int, level_name, level_order, provenance
from .settings import DEFAULT_CUT, JUDGE_TOKENS, LISTS, TEMPLATE_DIGEST, Generation, Vote, changes
from .signals import (
    DEFAULT_T,
    SAMPLE_SIGNALS,
    SCALAR_SIGNALS,
    log_p,
)
from .signals import REGISTRY as SIGNAL_REGISTRY

UPPER_BOUNDS = SIMULATE_ONLY  # allocators that read the pool's answers: never runnable
DEFAULT_BUDGETS = (2, 4, 8)  # the paper's budgets: what `simulate` replays unless told


def _token_fields(drawn: np.ndarray | None, cum: np.ndarray | None, cum_prompt: np.ndarray | None,
                  per_question: np.ndarray) -> dict:
    """A result row's ``tokens`` (completion tokens of the samples used, Phase 1 included; None
    when the pool lacks them), their median per response, and ``prompt_tokens`` where known."""
    if cum is None:
        return {"tokens": None}
    idx = np.arange(len(per_question))
    used = np.arange(drawn.shape[1])[None, :] < per_question[:, None]
    out = {"tokens": int(cum[idx, per_question].sum()), "tokens_median": float(np.median(drawn[used]))}
    if cum_prompt is not None:
        out["prompt_tokens"] = int(cum_prompt[idx, per_question].sum())
    return out


def simulate(
    records: Sequence[dict] | Pooled | Pool,
    budgets: Sequence[int] | None,
    allocators: Sequence[str],
    signals: Sequence[str] | None = None,
    seeds: int | Sequence[int] = 20,
    temperature: float | Sequence[float] = DEFAULT_T,
    gain: str = "algorithm1",
    exit_thresholds: dict | None = None,
    vote_rules: Sequence[str] = (voting.DEFAULT_RULE,),
    vote: Vote | None = None,
    vote_temperatures: Sequence[float] | None = None,
    recommendations: bool = False,
    analyses: bool = False,
    targets: Sequence[float] | None = None,
    price: Price | None = None,
    max_per_question: int | None = None,
    phase1: int = 1,
    exit_test: tuple[str, int | None] = ("paper", None),
    pool_name: str | None = None,
) -> Iterator[dict]:
    """Replay each allocator × signal × T × N × seed × vote rule on the pool; yield one result
    row each; with ``analyses``, one ``{"deciles": ...}`` row per allocator × signal × T × N
    (``analyses.Deciles``, by the first per-sample signal of ``signals``) and the
    ``{"cost_at_accuracy": ...}`` rows (``analyses.at_accuracy`` at ``targets``, default: a grid,
    and in money at ``price``);
    then, with ``recommendations``, one ``{"recommendation": ...}`` row per N
    (``recommend.held_out``) when the allocators include ``uniform``. Rows carry ``tokens``: the
    completion tokens of the samples the allocation used, Phase 1 included.

    Per seed and question the pool is shuffled once (seeded by seed and question id): the
    first K1 draws are Phase 1 (2 for vote-entropy, else 1) and the next e_i are Phase 2,
    so Phase-2 draws are without replacement and every allocator sees the same draws.
    When an allocation asks for more than a question's pool holds, the allocator is run
    again with ``max_extra = K_i - K1`` (its own capped optimum; ``capped`` counts the
    questions that hit the cap); ``max_per_question``, a run's ``--max-per-question`` (``check``
    of a recommendation that carries one), caps it from the start, as ``uab run`` does, and
    ``phase1`` (``check``: a run's -K) is the fewest Phase-1 draws. ``exit_test``: ``--exit-test``
    and ``--exit-nmax`` (None: N), how the hard exits test a question. ``pool_name``: the pool's
    file, which an error about the pool (no gold answer, an N it cannot fill) names.
    Signal-free allocators get one row per seed with ``signal`` and ``T`` None. Every
    allocation is voted by every rule of ``vote_rules`` (``majority`` always among them, and
    ``uniform`` among ``allocators``: Uniform + majority is the reference, of every paired difference and of the recommendation), with the
    confidence settings of ``vote``; a rule that ``--vote-temperature`` changes (``weighted`` of a
    signal T scales) once per temperature of ``vote_temperatures`` (default: ``vote``'s), its rows
    carrying ``vote_temperature``: candidates like the allocation's T. Upper bounds are voted by
    ``majority`` only (what they bound).
    Without ``budgets``, the paper's ``DEFAULT_BUDGETS`` that the pool holds
    (``fitting_budgets``). Unrunnable combinations yield one row with ``skipped``. Options are
    checked before the first row (``UabError``). Without ``signals``, and without ``vote.signal``, both are the
    pool's own (``pipeline.default_signal``, as ``allocate`` and ``vote`` take it): ``vcs``
    for a pool drawn with ``--vcs``, else ``anll``.
    """
    vote = vote or Vote()
    vote.check_rules(list(vote_rules))
    pool = records if isinstance(records, Pool) else _prepared(records, vote.cut, pool_name)
    own = default_signal(pool.first)
    signals = list(dict.fromkeys(signals)) if signals else [own]  # a repeated value is replayed once
    vote = vote if vote.signal is not None else replace(vote, signal=own)
    if pool.cut_samples != vote.cut:
        raise UabError(f"the pool was prepared with --cut-samples {pool.cut_samples}, not {vote.cut}")
    seeds = list(range(seeds)) if isinstance(seeds, int) else list(dict.fromkeys(int(s) for s in seeds))
    temps = [float(temperature)] if isinstance(temperature, (int, float)) else \
        list(dict.fromkeys(float(t) for t in temperature))
    budgets = list(dict.fromkeys(int(n) for n in budgets)) if budgets is not None else fitting_budgets(pool, pool_name)
    targets = None if targets is None else list(dict.fromkeys(targets))
    rules = list(dict.fromkeys([voting.DEFAULT_RULE, *vote_rules]))
    allocators = list(dict.fromkeys([*allocators, recommend.BASELINE[0]]))
    vote_temps = list(dict.fromkeys(float(t) for t in vote_temperatures)) if vote_temperatures else [vote.temperature]
    _check(pool, budgets, allocators, signals, seeds, temps, gain, pool_name)  # the rules: vote.check_rules
    for vt in vote_temps:  # each a vote temperature as --vote-temperature declares one
        replace(vote, temperature=vt)
    tempered = set(tempered_rules(vote, rules))
    variants = [(r, vt) for r in rules for vt in (vote_temps if r in tempered else [None])]
    combos, skipped = [], []  # (allocator, signal, T, K1, N)
    for name in allocators:
        # a signal T does not scale (vcs: score/10) is replayed once, at the first T: the others are copies
        for sig, t in [(None, None)] if name in SIGNAL_FREE else \
                [(s, t) for s in signals for t in (temps if SIGNAL_REGISTRY[s].tempered else temps[:1])]:
            # the Phase-1 draws each asks for: the allocator's, the signal's, the run's -K; the first of the most named
            needs = {f"{name} needs": PHASE1.get(name, 1), f"{sig} needs": SIGNAL_REGISTRY[sig].phase1 if sig else 0,
                     "of -K/--samples": phase1}
            k1 = max(needs.values())
            for n in budgets:
                why = _unrunnable(pool, name, sig) or (n < k1 and f"N={n} is less than the {k1} Phase-1 samples "
                                                       + next(who for who, k in needs.items() if k == k1))
                if why:
                    skipped.append({"allocator": name, "signal": sig, "T": t, "N": n, "seed": None, "skipped": why})
                else:
                    combos.append((name, sig, t, k1, n))
    analysis = None  # (the decile accumulator or None, the cost targets, the price)
    if analyses:
        statistic = next((s for s in signals if s in SAMPLE_SIGNALS and pool.has_statistic(s)), None)
        analysis = (Deciles(statistic, pool.graded) if statistic else None, targets, price)
    return _replay(pool, combos, skipped, seeds, gain, exit_thresholds, variants, vote, recommendations,
                   analysis, max_per_question, exit_test)


def _prepared(records: Sequence[dict] | Pooled, cut: str, name: str | None) -> Pool:
    """``Pool(records, cut)``, its ``UabError`` (no gold answer, a record without samples) naming
    the pool's file ``name``."""
    try:
        return Pool(records, cut)
    except UabError as exc:
        raise UabError(exc.message, exc.path or name, exc.line) from None


def _within(room: np.ndarray, cap: np.ndarray | None) -> np.ndarray:
    """The Phase-2 samples each question may draw: what its pool holds (``room``), and no more
    than a run's ``cap`` where one is given."""
    return room if cap is None else np.minimum(room, cap)


def tempered_rules(vote: Vote, rules: Sequence[str]) -> list[str]:
    """The rules of ``rules`` whose vote ``--vote-temperature`` changes with ``vote``'s signal
    (``weighted``, but not of ``vcs``): ``simulate`` replays them once per vote temperature."""
    return [r for r in rules if replace(vote, rule=r).uses_temperature]


def _replay(pool, combos, skipped, seeds, gain, thresholds, variants, vote, advise,
            analysis=None, max_per_question=None, exit_test=("paper", None)) -> Iterator[dict]:
    yield from skipped
    results = list(skipped)  # for the analyses
    deciles = analysis[0] if analysis else None
    first = pool.statistics(deciles.statistic) if deciles else None
    m, idx = len(pool.ids), np.arange(len(pool.ids))
    level_of = np.array([None if lv is None else level_name(lv) for lv in pool.levels], dtype=object)
    levels = sorted({lv for lv in level_of if lv is not None}, key=level_order)
    # each sample's log confidence per vote temperature; the rules that read only their order at vote's own
    temps = [vt for _, vt in variants if vt is not None]
    log_w = {vt: pool.log_w(vote.vote_signal(), vt) for vt in dict.fromkeys([vote.temperature, *temps])} \
        if any(voting.RULES[r].confidence for r, _ in variants) else {}
    ballots = {(r, vt): (r, log_w.get(vote.temperature if vt is None else vt)) for r, vt in variants}
    # the analyses' deciles vote weighted at vote's own temperature where replayed, else at the highest
    # (the simplest, as recommend.preferred orders them): never the order of --vote-temperature
    headline = vote.temperature if vote.temperature in temps else max(temps, default=None)
    outcomes: dict[tuple, list[np.ndarray]] = {}  # per combo and rule, per seed: graded questions right
    capped: set[tuple] = set()  # (allocator, signal, T, N) the pool capped in some seed
    # the gain each allocator reads: a preset's own (uab-coverage), the replay's (uab and its exits), else none
    gains = {c[0]: preset(c[0]).get("--gain", gain if c[0] in replay_readers("--gain") else None) for c in combos}
    fixed: dict[tuple, tuple[np.ndarray, int, np.ndarray]] = {}  # upper bounds: one allocation for every seed
    for seed in seeds:
        perm = pool.permutations(seed)
        votes, cover = pool.votes(perm, ballots, vote.keep)  # each prefix counted once for every variant
        # cut[i, t]: samples among question i's first t draws that were cut at --max-tokens
        cut = np.hstack([np.zeros((m, 1), dtype=np.int64), np.take_along_axis(pool.cut, perm, 1).cumsum(axis=1)])
        drawn, cum, cum_prompt = pool.spent(perm)
        if deciles:  # each question's decile of its first draw's uncertainty
            bins = deciles_of(-log_p(first[idx, perm[:, 0]], deciles.statistic, 1.0), seed)
        probs: dict = {}
        table = None  # this seed's margin table, made once if an allocator draws in rounds
        for name, sig, t, k1, n in combos:
            if (sig, t) not in probs:
                probs[sig, t] = np.zeros(m) if sig is None else pool.probabilities(perm, k1, sig, t)
            run_cap = None if max_per_question is None else np.full(m, max_per_question - k1)  # as `uab run` caps
            job = Job(probs[sig, t], (n - k1) * m, run_cap, seed, pool.lengths, pool.hard, gain, thresholds, k1,
                      values=pool.majority_values if name in UPPER_BOUNDS else None, room=pool.k - k1,
                      exit_nmax=allocation.exit_nmax(*exit_test, n))
            if name in ROUNDS:  # the margins a live run would see after its draws so far, within the pool
                if table is None:
                    table = pool.margins(perm)
                job.cap, job.margins = _within(pool.k - k1, run_cap), lambda drawn, table=table: table[idx, drawn]
            if name in UPPER_BOUNDS and (name, k1, n) in fixed:  # reads the pool, not the draws
                extra, saved, over = fixed[name, k1, n]
            else:
                extra, saved = call(name, job)
                # drawn in rounds within the pool (capped from the start): one at its end may have asked for more
                over = extra >= pool.k - k1 if name in ROUNDS else extra > pool.k - k1
                if over.any():  # the pool cannot serve it: the allocator's own capped optimum
                    capped.add((name, sig, t, n))
                    if name not in ROUNDS:
                        job.cap = _within(pool.k - k1, run_cap)
                        extra, saved = call(name, job)
                if name in UPPER_BOUNDS:
                    fixed[name, k1, n] = (extra, saved, over)
            per_question = k1 + extra
            used = int(per_question.sum())
            if used + saved != n * m or (per_question > pool.k).any():
                raise AssertionError(f"{name}: budget broken ({used} used + {saved} saved != {n * m})")
            common = {"coverage": float(cover[idx, per_question][pool.graded].mean()), "samples_used": used,
                      "saved": saved, "capped": int(over.sum()),
                      **_token_fields(drawn, cum, cum_prompt, per_question)}
            if pool.cut.any():
                common.update(cut=int(cut[idx, per_question].sum()), cut_samples=pool.cut_samples)
            if not pool.graded.all():  # accuracy is over the questions with a gold answer
                common["graded"] = int(pool.graded.sum())
            if used >= pool.k.sum():  # N reaches the pool's samples per question: the allocator draws it all
                common["whole_pool"] = True
            if levels:
                common["by_level"] = {lv: float(per_question[level_of == lv].mean()) for lv in levels}
            replayed = [(voting.DEFAULT_RULE, None)] if name in UPPER_BOUNDS else variants
            for rule, vt in replayed:
                right, fell = votes[rule, vt]
                graded = right[idx, per_question][pool.graded]
                outcomes.setdefault((name, sig, t, n, rule, vt), []).append(graded)
                row = {"allocator": name, "signal": sig, "T": t, "gain": gains[name], "N": n, "seed": seed, "M": m,
                       "K1": k1, "vote_rule": rule, **({} if vt is None else {"vote_temperature": vt}),
                       "accuracy": float(graded.mean()), **common}
                if fallbacks := int(fell[idx, per_question].sum()):
                    row["vote_fallbacks"] = fallbacks
                if analysis:
                    results.append(row)
                yield row
            if deciles:
                deciles.add((name, sig, t, n), bins, per_question,
                            {rule: votes[rule, vt][0][idx, per_question] for rule, vt in replayed
                             if vt in (None, headline)})
    if analysis:
        yield from deciles.rows() if deciles else ()
        yield from ({"cost_at_accuracy": c} for c in at_accuracy(summarize(results), analysis[1], analysis[2]))
    if not advise:
        return
    context = {"gain": gain, "exit_test": exit_test, "vote": vote, "generation": generation_of(pool.first),
               "whole_pool": {c[4] for c in combos if c[4] * m >= pool.k.sum()},
               "k1": {(c[0], c[1], c[2], c[4]): c[3] for c in combos},
               "capped": capped,
               # the cap a run gets: K of an even pool; of an uneven one its largest K_i, since a cap at the
               # smallest would refuse every N above it (the replay capped each question at its own K_i)
               "pool_k": int(pool.k.max())}
    for rec in recommend.held_out({k: np.array(v) for k, v in outcomes.items()}, UPPER_BOUNDS, context):
        yield {"recommendation": rec}


def check(records: Sequence[dict] | Pooled, recommended: Sequence[dict], seeds: int | Sequence[int] = 20,
          pool_name: str | None = None, whole_pool: Collection[int] = ()) -> Iterator[dict]:
    """Replay recommendations (``simulate``'s ``{"recommendation": ...}`` rows, chosen on other
    questions) on ``records``: each N's combination, with its vote settings, and Uniform + majority
    on the same seeded draws. Yields the result rows, then one ``{"check": ...}`` row per N: the
    combination, its gain here over Uniform + majority ± its standard error over seeds (paired; over
    questions where N spends the whole pool, as ``recommend.held_out``'s gate),
    whether it was worse by more than ``recommend.SIGNIFICANCE`` of them, and the held-out gain it
    was chosen with (``recommend.chosen_with``; ``whole_pool``: the Ns that spent the whole pool
    it was chosen on, ``whole_pool``'s). A recommendation of Uniform + majority gains 0 by
    definition: nothing is replayed for it. ``UabError`` when called, before any replay, for fewer than 2 seeds (a loss is judged
    against its standard error over seeds) or an N the pool cannot fill, whatever is replayed;
    those about the pool (an N it cannot fill, a combination it cannot run, a confidence vote by
    a signal it lacks) name ``pool_name``, the pool's file."""
    if (seeds if isinstance(seeds, int) else len(set(seeds))) < 2:
        raise UabError("--check needs --seeds 2 or more: a loss is judged against its standard error over seeds")
    records = pooled(records)  # read once, for every replay
    pool = _prepared(records, DEFAULT_CUT, pool_name) if recommended else None
    if pool is not None:
        fits(pool, [rec["N"] for rec in recommended], pool_name)
    return _checked(records, recommended, seeds, pool, pool_name, whole_pool)


def _checked(records: Sequence[dict] | Pooled, recommended: Sequence[dict], seeds: int | Sequence[int], pool: Pool | None,
             pool_name: str | None, whole_pool: Collection[int]) -> Iterator[dict]:
    """``check``'s rows, its refusals made (``pool``: the records prepared, None for no recommendation)."""
    for rec in recommended:
        n, name, rule = rec["N"], rec["allocator"], rec.get("vote_rule") or voting.DEFAULT_RULE  # none: as `uab run`
        settings = rec.get("settings") or {}
        chosen_gain, chosen_se = recommend.chosen_with(rec, n in whole_pool)
        entry = {"N": n, "allocator": name, "signal": rec.get("signal"), "T": rec.get("T"), "vote_rule": rule,
                 "vote_temperature": rec.get("vote_temperature"), "chosen_gain": chosen_gain, "chosen_se": chosen_se,
                 "settings": settings}  # what it replayed with (vote signal, temperature, keep, gain): provenance
        if (name, rule) == (recommend.BASELINE[0], recommend.BASELINE[3]):
            yield {"check": {**entry, "gain": 0.0, "se": 0.0, "worse": False}}
            continue
        signals = [entry["signal"]] if entry["signal"] else None  # signal-free: the pool's own, unread
        run, vote = recommend.as_run(rec)  # as `uab run --settings` runs it
        own = default_signal(records.first)  # and its confidences: --vote-signal, else the allocation's signal's
        vote = resolve_vote_signal(vote, run.signal or own, own == "vcs")
        signal = vote.vote_signal(own)
        if vote.uses_confidence and not pool.has_statistic(signal):  # every vote would be majority's: no gain, silently
            raise UabError(f"N={n}: {recommend.vote_label(entry)} votes by --vote-signal {signal}, which no sample "
                           "of this pool has: replay it on a pool drawn with it", pool_name)
        rows = list(simulate(records, [n], list(dict.fromkeys([name, "uniform"])), signals, seeds,
                             entry["T"] or DEFAULT_T, run.gain, run.exit and {run.exit: run.theta()},
                             vote_rules=[rule], vote=vote, max_per_question=run.max_per_question,
                             phase1=run.phase1_need, exit_test=(run.exit_test, run.exit_nmax),
                             pool_name=pool_name))
        yield from rows
        found = [e for e in summarize(rows) if (e["allocator"], e["vote_rule"]) == (name, rule) and "skipped" not in e]
        if not found:
            raise UabError(f"N={n}: {name} cannot run on this pool: "
                           f"{next((r['skipped'] for r in rows if r.get('allocator') == name), 'skipped')}", pool_name)
        gain, se = found[0]["diff_uniform"], found[0]["diff_se"]
        # the temperature it voted at, as its rows say (a file written before simulate crossed them has it in settings)
        entry["vote_temperature"] = found[0]["vote_temperature"]
        if found[0].get("whole_pool"):  # every seed draws the same samples: the spread over questions, as simulate's gate
            se = _whole_pool_se(records, rule, vote)
        yield {"check": {**entry, "gain": gain, "se": se, "worse": recommend.significant(-gain, se)}}


def whole_pool(rows: Sequence) -> set[int]:
    """The Ns at which results ``rows`` (``simulate``'s) spent the whole pool (their result rows say
    ``whole_pool``)."""
    return {r["N"] for r in rows if isinstance(r, dict) and r.get("whole_pool") is True and is_int(r.get("N"))}


def _whole_pool_se(records: Sequence[dict] | Pooled, rule: str, vote: Vote) -> float:
    """The standard error over the graded questions of ``rule``'s correctness minus majority's,
    each question voted on its whole pool (where N spends it, what every allocation draws)."""
    pool = Pool(records, vote.cut)
    signal = vote.signal or default_signal(pool.first)
    log_w = pool.log_w(signal, vote.temperature) if voting.RULES[rule].confidence else None
    votes, _ = pool.outcomes(pool.permutations(0), list(dict.fromkeys([voting.DEFAULT_RULE, rule])), log_w, vote.keep)
    idx = np.arange(len(pool.ids))
    diff = (votes[rule][0][idx, pool.k].astype(np.float64) - votes[voting.DEFAULT_RULE][0][idx, pool.k])[pool.graded]
    return float(recommend.standard_error(diff)) if diff.size > 1 else 0.0


def fitting_budgets(pool: Pool, name: str | None = None) -> list[int]:
    """``DEFAULT_BUDGETS`` up to what ``pool`` holds (N·M samples in all): 2, 4 on a pool of 5
    samples per question; ``UabError`` (``fits``'s) when not even the smallest fits."""
    fits(pool, DEFAULT_BUDGETS[:1], name)
    return [n for n in DEFAULT_BUDGETS if n * len(pool.ids) <= int(pool.k.sum())]


def _check(pool, budgets, allocators, signals, seeds, temps, gain, name=None) -> None:
    LISTS["allocators"].check_names(allocators)  # simulate's parsed them already: a caller's own names
    LISTS["signals"].check_names(signals)
    if not budgets or min(budgets) < 1:
        raise UabError("--budgets must be positive integers")
    fits(pool, budgets, name)
    if not seeds or min(seeds) < 0:
        raise UabError("--seeds must be a positive count or a list of non-negative seeds")
    if min(temps) <= 0:
        raise UabError("the signal temperature must be > 0")
    if gain not in allocation.GAINS:
        raise UabError(f"unknown gain {gain!r}; choose from {', '.join(allocation.GAINS)}")


def fits(pool: Pool, budgets: Sequence[int], name: str | None = None) -> None:
    """``UabError`` (naming the pool's file ``name`` where given) unless ``pool`` holds N·M samples
    for each N of ``budgets``: the refusal of ``simulate`` and ``check``, which a caller that prints
    as it replays (``benchmarks/holdout_check.py``) makes before its first line."""
    if int(pool.k.sum()) < max(budgets) * len(pool.ids):
        n, m, fewest = max(budgets), len(pool.ids), int(np.argmin(pool.k))
        k = int(pool.k.min())
        held = (f"{k} sample{'s' * (k != 1)} per question" if k == pool.k.max() else
                f"{int(pool.k.sum()):,} samples, {k} to {int(pool.k.max())} per question, "
                f"{pool.ids[fewest]!r} the fewest")
        raise UabError(f"budget N={n} needs {n * m:,} samples; the pool holds {held}: "
                       "build a larger pool or use smaller budgets", name)


def _unrunnable(pool: Pool, name: str, signal: str | None) -> str | None:
    if name in NEEDS_JUDGE and not pool.judged:
        return "no 'judge' label on every record (`uab pool` does not judge: draw the pool with `uab phase1 -K K --judge`)"
    if signal in SCALAR_SIGNALS:
        if pool.lacks(signal):  # a filtered one has none
            return f"some pool samples have no {SCALAR_SIGNALS[signal]} (no token logprobs)"
    elif signal in SAMPLE_SIGNALS and not pool.has_statistic(signal):  # vcs, vcs-pow
        # one sample without a confidence counts as unsure (signals.VCS_MISSING_P), a pool without any is no signal
        return f"no pool sample has a verbalised confidence (draw the pool with {SIGNAL_REGISTRY[signal].needs})"
    if signal is not None and pool.k.min() < SIGNAL_REGISTRY[signal].phase1:
        return f"{signal} needs at least {SIGNAL_REGISTRY[signal].phase1} samples per question"
    if pool.k.min() < PHASE1.get(name, 1):
        return f"{name} needs at least {PHASE1[name]} samples per question"
    return None


# --- aggregation -------------------------------------------------------------------


def produced_by(records: Sequence[dict] | Pooled, pool: str, seeds: int, vote: Vote | None = None, gain: str | None = None,
                check: str | None = None, price: Price | None = None,
                vote_rules: Sequence[str] = (), vote_temperatures: Sequence[float] | None = None,
                exit_test: tuple[str, int | None] = ("paper", None)) -> dict:
    """A results file's first row, what produced it: ``{"simulation": {...}}`` with the pool (its
    path, questions, and the generation settings it was drawn with: backend, model, seed,
    temperature, …; ``regrade``, the uab that read its answers again, where ``uab regrade`` did), the replay's seeds, ``--gain``, ``--exit-test`` (and ``--exit-nmax``, null: N) where
    official, and vote settings (``temperatures``: the
    ``vote_temperatures`` that ``vote_rules`` were replayed at, where several), the results file whose
    recommendations ``--check`` replayed (each with its own vote settings), ``--price`` (what
    ``report`` prices its cost at fixed accuracy at), and uab's version.
    The rows carry allocator, signal, T, N, seed and vote rule (and ``weighted``'s vote temperature). ``fingerprint``: the pool's
    questions (``records.questions_fingerprint``), so a report can tell another pool."""
    records = pooled(records)
    resolved = vote and replace(vote, signal=vote.signal or default_signal(records.first))  # what confidence rules read
    temps = list(dict.fromkeys(vote_temperatures or ())) or [vote.temperature] if vote else []  # as replayed
    crossed = len(temps) > 1 and tempered_rules(resolved, vote_rules)  # the rows vary by vote temperature
    settings = vote and {"vote": {"signal": resolved.signal,
                                  # not crossed: the one given, else vote's own (no rule read a list)
                                  **({"temperatures": temps} if crossed else
                                     {"temperature": temps[0] if len(temps) == 1 else vote.temperature}),
                                  "keep": vote.keep, "cut_samples": vote.cut}}
    return {"simulation": {"pool": pool, "questions": len(records), "fingerprint": records.fingerprint(),
                           "generation": generation_of(records.first), **_regraded(records.first),
                           "seeds": seeds, **({"gain": gain} if gain else {}),
                           **({"exit_test": exit_test[0], "exit_nmax": exit_test[1]} if exit_test[0] != "paper" else {}),
                           **(settings or {}),
                           **({"check": check} if check else {}), **({"price": price.to_json()} if price else {}),
                           "version": __version__}}


def _regraded(rec: dict) -> dict:
    """``{"regrade": {"version": …}}`` where the pool's answers were read again by ``uab regrade``
    (the uab that extracted the answers the replays count is not the one that drew them), else ``{}``."""
    info = provenance(rec).get("regrade")
    return {"regrade": {"version": info.get("version")}} if isinstance(info, dict) else {}


def about(rows: Sequence[dict]) -> dict | None:
    """The ``produced_by`` row of a results file (None in one written before it existed, or
    one of another shape)."""
    found = next((r["simulation"] for r in rows if "simulation" in r), None)
    return found if isinstance(found, dict) else None


def drawn_otherwise(rows: Sequence[dict], records: Sequence[dict] | Pooled) -> dict[str, str]:
    """``{option: "(then → now)"}`` where the pool ``records`` was drawn with other generation
    settings than the pool of results ``rows`` (``produced_by``'s): a check on it replays on
    samples unlike those the recommendation was chosen on. Only the generation settings both
    record compare (not -K: another pool size is no other draw), and not the seed (another
    seed is a fresh draw of the same settings). A results file without them (of a uab before the
    ``produced_by`` row, or recommendation rows alone): its recommendations' ``settings``, whose
    sampling settings are its pool's (what ``uab run --settings`` draws with)."""
    records = pooled(records)
    was, now = (about(rows) or {}).get("generation"), generation_of(records.first) if len(records) else {}
    if not isinstance(was, dict):
        was = next(({k: v for k, v in rec["settings"].items() if k in Generation.__dataclass_fields__}
                    for r in rows if isinstance(r, dict) and isinstance(rec := r.get("recommendation"), dict)
                    and isinstance(rec.get("settings"), dict)), None)
    return generation_changes(was, now)


def judged_otherwise(recs: Sequence[dict], records: Sequence[dict] | Pooled) -> tuple[int, int] | None:
    """``(the recommendation's, the pool's)`` ``--judge-max-tokens`` where a ``judge`` recommendation
    of ``recs`` (``recommend.from_results``'s) asks its judge with another cap (none: the default)
    than the one the judge labels of pool ``records`` were asked with (a labelled record that
    records none: the paper's, which uab asked with before the option): a check replays it on
    labels unlike those its run would ask for. None where they agree, or nothing reads labels."""
    labelled = pooled(records).labelled
    if labelled is None:
        return None
    pool = generation_of(labelled).get("judge_max_tokens", JUDGE_TOKENS)
    for rec in recs:
        ran = (rec.get("settings") or {}).get("judge_max_tokens", JUDGE_TOKENS)
        if rec.get("allocator") in NEEDS_JUDGE and ran != pool:
            return ran, pool
    return None


def same_questions(rows: Sequence[dict], records: Sequence[dict] | Pooled) -> bool:
    """Whether ``records`` are the questions the results ``rows`` were simulated on (the
    fingerprint of ``produced_by``): a ``--check`` on them is not held out, and on the same
    samples it replays, seed for seed, the very draws its recommendations were chosen on."""
    made = (about(rows) or {}).get("fingerprint")
    records = pooled(records)
    return bool(len(records)) and made == records.fingerprint()


def generation_changes(was: dict | None, now: dict, given: Sequence[str] = ()) -> dict[str, str]:
    """``{option: "(then → now)"}`` between two recorded generation settings (``Generation.info``):
    the entries both record, but for the seed, what changes no sample, and the options ``given``
    on the command line (a deliberate change; ``prompt_template`` covers its content's digest)."""
    if not isinstance(was, dict):
        return {}
    skip = {"seed", *Generation.SAMPLE_FREE, *given} | ({TEMPLATE_DIGEST} if "prompt_template" in given else set())
    compared = {*Generation.__dataclass_fields__, TEMPLATE_DIGEST} - skip
    both = set(was) & set(now) & compared
    return changes("generation", {k: was[k] for k in both}, {k: now[k] for k in both})


def summarize(rows: Sequence[dict]) -> list[dict]:
    """Per (allocator, signal, T, N, vote rule, vote temperature): accuracy mean ± std over seeds (std None for one
    seed, as the standard error of the difference below), coverage, samples
    and tokens per question, and the accuracy difference to Uniform + majority paired by seed with
    its standard error. Only result rows count (not the recommendation or analysis rows)."""
    groups: dict[tuple, list[dict]] = {}
    skipped: dict[tuple, str] = {}
    rows = [r for r in rows if "allocator" in r]
    uniform = {(r["N"], r["seed"]): r["accuracy"] for r in rows if r["allocator"] == "uniform" and "skipped" not in r
               and r.get("vote_rule", voting.DEFAULT_RULE) == voting.DEFAULT_RULE}
    for r in rows:
        key = (r["allocator"], r["signal"], r["T"], r["N"], r.get("vote_rule", voting.DEFAULT_RULE),
               r.get("vote_temperature"))
        if "skipped" in r:
            skipped.setdefault(key, r["skipped"])
        else:
            groups.setdefault(key, []).append(r)
    out = []
    for key, rs in groups.items():
        acc = np.array([r["accuracy"] for r in rs])
        entry = dict(zip(_KEY, key), seeds=len(rs), accuracy=float(acc.mean()),
                     accuracy_std=float(acc.std(ddof=1)) if len(rs) > 1 else None,  # one seed: no spread known
                     **{f: float(np.mean([r[f] for r in rs])) for f in ("coverage", "samples_used", "saved", "capped")},
                     diff_uniform=None, diff_se=None, upper_bound=key[0] in UPPER_BOUNDS,
                     gain=rs[0].get("gain"), K1=rs[0].get("K1", 1))
        entry.update(_per_question(rs))
        if "graded" in rs[0]:
            entry.update(graded=rs[0]["graded"], M=rs[0]["M"])
        if any("vote_fallbacks" in r for r in rs):
            entry["vote_fallbacks"] = float(np.mean([r.get("vote_fallbacks", 0) for r in rs]))
        if any("cut" in r for r in rs):
            entry.update(cut=float(np.mean([r.get("cut", 0) for r in rs])), cut_samples=rs[0].get("cut_samples"))
        if rs[0].get("whole_pool"):
            entry["whole_pool"] = True
        paired = [r["accuracy"] - uniform[r["N"], r["seed"]] for r in rs if (r["N"], r["seed"]) in uniform]
        if paired:
            d = np.array(paired)
            entry["diff_uniform"] = float(d.mean())
            entry["diff_se"] = float(recommend.standard_error(d)) if d.size > 1 else None
        if any("by_level" in r for r in rs):
            keys = rs[0].get("by_level", {})
            entry["by_level"] = {lv: float(np.mean([r["by_level"][lv] for r in rs])) for lv in keys}
        out.append(entry)
    out += [dict(zip(_KEY, k), skipped=why) for k, why in skipped.items() if k not in groups]
    return sorted(out, key=lambda e: (e["N"], e["allocator"] != "uniform", e["allocator"], str(e["signal"]),
                                      e["T"] or 0, voting.rank(e["vote_rule"], e["vote_temperature"])))


_KEY = ("allocator", "signal", "T", "N", "vote_rule", "vote_temperature")


def _per_question(rs: list[dict]) -> dict:
    """Means over seeds of the samples and tokens (completion; prompt where known) per question
    and of the median completion tokens per response; a token field is None (or absent, for
    prompt tokens) when a row lacks it."""
    if not all(r.get("M") for r in rs):
        return {}
    out = {"samples_per_question": float(np.mean([r["samples_used"] / r["M"] for r in rs]))}
    known = all(r.get("tokens") is not None for r in rs)
    out["tokens_per_question"] = float(np.mean([r["tokens"] / r["M"] for r in rs])) if known else None
    out["tokens_median"] = float(np.mean([r["tokens_median"] for r in rs])) if known else None
    if all("prompt_tokens" in r for r in rs):
        out["prompt_tokens_per_question"] = float(np.mean([r["prompt_tokens"] / r["M"] for r in rs]))
    return out


def recommendations(rows: Sequence[dict]) -> list[dict]:
    """The ``{"recommendation": ...}`` rows of a results file, in order."""
    return [r["recommendation"] for r in rows if "recommendation" in r]


def anll_correlation(records: Sequence[dict] | Pooled) -> float | None:
    """Pearson r between ANLL and correctness over all graded pool samples (paper: ≈ −0.3)."""
    anll = anll_by_correctness(records)
    x = np.concatenate([anll[True], anll[False]])
    if x.size and (scale := np.abs(x).max()) > 0:  # r is the same at any scale: ANLLs near 1e308 overflowed it to NaN
        x = x / scale
    y = np.r_[np.ones(len(anll[True])), np.zeros(len(anll[False]))]
    if x.size < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def anll_by_correctness(records: Sequence[dict] | Pooled) -> dict[bool, np.ndarray]:
    """The ANLL of the graded pool samples, split by whether each sample's answer is right."""
    records = pooled(records)
    anll = records.column("anll")
    graded = ~np.isnan(anll) & records.sample_graded()
    right = records.flat(records.right)
    return {True: anll[graded & right], False: anll[graded & ~right]}

"""Offline evaluation: replay allocators on a pool of K pre-drawn samples per question over
many seeds (``simulate``), aggregate the rows (``summarize``) and plot them (``report``)."""

from __future__ import annotations

import functools
import hashlib
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from . import allocation, analyses, majority, recommend, voting
from .allocators import ALLOCATORS, NEEDS_JUDGE, SIGNAL_FREE, SIMULATE_ONLY, Job, call
from .analyses import Deciles, at_accuracy, deciles_of
from .answers import gold_answer, group, is_correct
from .errors import UabError
from .pipeline import generation_of, is_cut
from .records import question_type, samples
from .settings import Vote
from .signals import (
    DEFAULT_T,
    SAMPLE_SIGNALS,
    SCALAR_SIGNALS,
    SIGNALS,
    log_p,
    sample_statistic,
    success_probabilities,
)
from .signals import REGISTRY as SIGNAL_REGISTRY

UPPER_BOUNDS = SIMULATE_ONLY  # allocators that read the pool's answers: never runnable
_BIG = 1 << 30


class Pool:
    """A pool prepared once: answer classes, vote tie-break ranks and cached grading.

    ``cut_samples`` (``--cut-samples``): with ``drop`` a sample cut at ``--max-tokens`` has no
    answer class, so it never votes nor covers; ``cut`` marks those samples either way."""

    def __init__(self, records: Sequence[dict], cut_samples: str = Vote.cut):
        if not records:
            raise UabError("empty pool: no records")
        self.records = list(records)
        self.samples = [samples(rec) for rec in self.records]
        self.k = np.array([len(ss) for ss in self.samples], dtype=np.int64)
        if self.k.min() < 1:
            bad = self.records[int(np.argmin(self.k))]["id"]
            raise UabError(f"record {bad!r} has no samples: build the pool with `uab pool` first")
        m, kmax = len(self.records), int(self.k.max())
        self.cls = np.full((m, kmax), -1, dtype=np.int64)  # answer class; -1 = no answer
        self.rank = np.full((m, kmax), _BIG, dtype=np.int64)  # lexicographic rank of the answer
        self.correct = np.zeros((m, kmax), dtype=bool)  # per-sample correctness
        self.graded = np.array([gold_answer(r) is not None for r in self.records])
        if not self.graded.any():
            raise UabError("no record in the pool has a gold 'answer': nothing to evaluate")
        self.cut_samples = cut_samples
        self.cut = np.zeros((m, kmax), dtype=bool)
        for i, ss in enumerate(self.samples):
            self.cut[i, :len(ss)] = [is_cut(s) for s in ss]
        for i, (rec, ss) in enumerate(zip(self.records, self.samples)):
            answers = [None if cut_samples == "drop" and is_cut(s) else s.get("answer") for s in ss]
            classes, ranked, right = _classes(rec, answers)
            for j, a in enumerate(answers):
                if a is not None:
                    self.cls[i, j], self.rank[i, j], self.correct[i, j] = classes[a], ranked[a], right[ranked[a]]
        self.n_classes = max(int(self.cls.max()) + 1, 1)
        self.class_correct = np.zeros((m, self.n_classes + 1), dtype=bool)  # last column: no winner
        rows, cols = np.nonzero(self.cls >= 0)
        self.class_correct[rows, self.cls[rows, cols]] |= self.correct[rows, cols]
        self.lengths = np.array([len(r["question"]) for r in self.records], dtype=np.float64)
        self.hard = np.array([r.get("judge") == "hard" for r in self.records])
        self.judged = all(r.get("judge") in ("easy", "hard") for r in self.records)
        self.levels = [r.get("level") for r in self.records]
        # (M, K) completion and prompt tokens per sample; None where some sample lacks its count
        self.tokens, self.prompt_tokens = (_counts(self.samples, key, kmax) for key in ("n_tokens", "prompt_tokens"))

    def permutations(self, seed: int) -> np.ndarray:
        """Per question, a seeded draw order over its pool (padded beyond K_i)."""
        kmax = self.cls.shape[1]
        out = np.tile(np.arange(kmax), (len(self.records), 1))
        for i, rec in enumerate(self.records):
            digest = hashlib.blake2b(str(rec["id"]).encode(), digest_size=8).digest()
            rng = np.random.default_rng([seed, int.from_bytes(digest, "big")])
            out[i, :self.k[i]] = rng.permutation(int(self.k[i]))
        return out

    def log_w(self, signal: str, temperature: float) -> np.ndarray:
        """Per-sample log confidence for the vote rules (``signals.log_p`` of each sample's own
        statistic), NaN where a sample lacks it; (M, K) like ``cls``."""
        return log_p(self.statistics(signal), signal, temperature)

    def statistics(self, signal: str) -> np.ndarray:
        """Each sample's own statistic behind ``signal`` (``sample_statistic``), NaN where it lacks it."""
        stat = np.full(self.cls.shape, np.nan)
        for i, ss in enumerate(self.samples):
            stat[i, :len(ss)] = [np.nan if (v := sample_statistic(s, signal)) is None else v for s in ss]
        return stat

    def spent(self, perm: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """The completion tokens of each question's draws in draw order (M, K), and the completion
        and prompt tokens of its first t draws (M, K+1); None where the pool lacks the counts."""
        drawn = None if self.tokens is None else np.take_along_axis(self.tokens, perm, 1)
        cum = [None if t is None else np.hstack([np.zeros((len(t), 1), dtype=np.int64),
                                                 np.cumsum(np.take_along_axis(t, perm, 1), axis=1)])
               for t in (self.tokens, self.prompt_tokens)]
        return drawn, cum[0], cum[1]

    def outcomes(self, perm: np.ndarray, rules: Sequence[str] = ("majority",), log_w: np.ndarray | None = None,
                 keep: float = voting.DEFAULT_KEEP) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """Per vote rule, whether the vote is right and whether it fell back to majority after
        the first t draws, and coverage: (M, K+1) tables (``voting.elect`` on every prefix)."""
        cp = np.take_along_axis(self.cls, perm, 1)
        rp = np.take_along_axis(self.rank, perm, 1)
        wp = np.take_along_axis(np.full(self.cls.shape, np.nan) if log_w is None else log_w, perm, 1)
        m, kmax = cp.shape
        idx = np.arange(m)[:, None]
        out = {rule: (np.zeros((m, kmax + 1), dtype=bool), np.zeros((m, kmax + 1), dtype=bool)) for rule in rules}
        for t in range(1, kmax + 1):
            for rule in rules:
                win, fell = voting.elect(cp[:, :t], wp[:, :t], rp[:, :t], rule, keep)
                out[rule][0][:, t] = self.class_correct[idx[:, 0], win]  # win -1: the no-winner column
                out[rule][1][:, t] = fell
        cover = np.logical_or.accumulate(np.take_along_axis(self.correct, perm, 1), axis=1)
        return out, np.hstack([np.zeros((m, 1), dtype=bool), cover])

    @functools.cached_property
    def majority_values(self) -> np.ndarray:
        """A[i, n]: question i's exact expected majority-vote accuracy with n samples drawn
        from its pool without replacement (ties as ``outcomes``: exact for answer classes of
        one spelling, by the class's first spelling otherwise); -inf beyond K_i."""
        out = np.full((len(self.records), self.cls.shape[1] + 1), -np.inf)
        for i in range(len(self.records)):
            k, row = int(self.k[i]), self.cls[i, : self.k[i]]
            counts = np.bincount(row[row >= 0], minlength=self.n_classes)
            order = np.full(self.n_classes, _BIG)
            np.minimum.at(order, row[row >= 0], self.rank[i, : k][row >= 0])
            out[i, : k + 1] = majority.empirical_values(counts.tolist(), self.class_correct[i, :-1].tolist(),
                                                        order.tolist(), int((row < 0).sum()))
        return out

    def probabilities(self, perm: np.ndarray, k1: int, signal: str, temperature: float) -> np.ndarray:
        """p_i from the drawn Phase-1 samples only, through ``signals.success_probabilities``."""
        phase1 = [[ss[j] for j in perm[i, :k1]] for i, ss in enumerate(self.samples)]

        def answer_counts(i: int, _ss: list[dict]) -> list[int]:
            ids = self.cls[i, perm[i, :k1]]
            return list(Counter(int(c) for c in ids if c >= 0).values()) + [int((ids < 0).sum())]

        return success_probabilities(phase1, signal, temperature, answer_counts)[0]


def _counts(pool: list[list[dict]], key: str, kmax: int) -> np.ndarray | None:
    """Each sample's integer ``key`` (``n_tokens``, ``prompt_tokens``) as an (M, K) table, 0 beyond
    K_i; None when some sample lacks it."""
    out = np.zeros((len(pool), kmax), dtype=np.int64)
    for i, ss in enumerate(pool):
        values = [s.get(key) for s in ss]
        if None in values:
            return None
        out[i, :len(ss)] = values
    return out


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


def _classes(rec: dict, answers: list) -> tuple[dict, dict, list[bool]]:
    """Class id and lexicographic rank per distinct answer (classes from ``answers.group``),
    and whether each answer, by rank, is correct (graded once per distinct answer)."""
    kind = question_type(rec)
    distinct = sorted({a for a in answers if a is not None})
    ids = {r: c for c, r in enumerate(group(distinct, kind))}
    reps, classes = list(ids), {}
    for a in distinct:
        # A non-representative joins the representative it groups with (count 2).
        joined = [a] if a in ids else [r for r, n in group([*reps, a], kind).items() if n == 2]
        classes[a] = ids[joined[0]] if joined else ids.setdefault(a, len(ids))
    return classes, {a: r for r, a in enumerate(distinct)}, [bool(is_correct(rec, a)) for a in distinct]


def _level_key(v):
    return (0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0, str(v))


def simulate(
    records: Sequence[dict] | Pool,
    budgets: Sequence[int],
    allocators: Sequence[str],
    signals: Sequence[str] = ("anll",),
    seeds: int | Sequence[int] = 20,
    temperature: float | Sequence[float] = DEFAULT_T,
    gain: str = "algorithm1",
    exit_thresholds: dict | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    vote_rules: Sequence[str] = (voting.DEFAULT_RULE,),
    vote: Vote | None = None,
    recommendations: bool = False,
    analyses: bool = False,
    targets: Sequence[float] | None = None,
) -> Iterator[dict]:
    """Replay each allocator × signal × T × N × seed × vote rule on the pool; yield one result
    row each; with ``analyses``, one ``{"deciles": ...}`` row per allocator × signal × T × N
    (``analyses.Deciles``, by the first per-sample signal of ``signals``) and the
    ``{"cost_at_accuracy": ...}`` rows (``analyses.at_accuracy`` at ``targets``, default: a grid);
    then, with ``recommendations``, one ``{"recommendation": ...}`` row per N
    (``recommend.held_out``) when the allocators include ``uniform``. Rows carry ``tokens``: the
    completion tokens of the samples the allocation used, Phase 1 included.

    Per seed and question the pool is shuffled once (seeded by seed and question id): the
    first K1 draws are Phase 1 (2 for vote-entropy, else 1) and the next e_i are Phase 2,
    so Phase-2 draws are without replacement and every allocator sees the same draws.
    When an allocation asks for more than a question's pool holds, the allocator is run
    again with ``max_extra = K_i - K1`` (its own capped optimum; ``capped`` counts the
    questions that hit the cap). Signal-free allocators get one row per seed with
    ``signal`` and ``T`` None. Every allocation is voted by every rule of ``vote_rules``
    (``majority`` always among them: Uniform + majority is the reference), with the
    confidence settings of ``vote``; upper bounds by ``majority`` only (what they bound).
    Unrunnable combinations yield one row with ``skipped``. Options are checked before the
    first row (``UabError``).
    """
    vote = vote or Vote()
    pool = records if isinstance(records, Pool) else Pool(records, vote.cut)
    if pool.cut_samples != vote.cut:
        raise UabError(f"the pool was prepared with --cut-samples {pool.cut_samples}, not {vote.cut}")
    seeds = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    temps = [float(temperature)] if isinstance(temperature, (int, float)) else [float(t) for t in temperature]
    budgets = [int(n) for n in budgets]
    rules = list(dict.fromkeys([voting.DEFAULT_RULE, *vote_rules]))
    _check(pool, budgets, allocators, signals, seeds, temps, gain, rules, vote)
    combos, skipped = [], []  # (allocator, signal, T, K1, N)
    for name in allocators:
        for sig, t in [(None, None)] if name in SIGNAL_FREE else [(s, t) for s in signals for t in temps]:
            k1 = SIGNAL_REGISTRY[sig].phase1 if sig else 1
            for n in budgets:
                why = _unrunnable(pool, name, sig) or (n < k1 and f"N={n} is less than {sig}'s {k1} Phase-1 samples")
                if why:
                    skipped.append({"allocator": name, "signal": sig, "T": t, "N": n, "seed": None, "skipped": why})
                else:
                    combos.append((name, sig, t, k1, n))
    analysis = None  # (the decile accumulator or None, the cost targets)
    if analyses:
        statistic = next((s for s in signals if s in SAMPLE_SIGNALS and not np.isnan(pool.statistics(s)).all()), None)
        analysis = (Deciles(statistic, pool.graded) if statistic else None, targets)
    return _replay(pool, combos, skipped, seeds, gain, exit_thresholds, on_progress, rules, vote, recommendations,
                   analysis)


def _replay(pool, combos, skipped, seeds, gain, thresholds, on_progress, rules, vote, advise,
            analysis=None) -> Iterator[dict]:
    yield from skipped
    results = list(skipped)  # for the analyses
    deciles = analysis[0] if analysis else None
    first = pool.statistics(deciles.statistic) if deciles else None
    m, idx = len(pool.records), np.arange(len(pool.records))
    levels = sorted({lv for lv in pool.levels if lv is not None}, key=_level_key)
    level_of = np.array(pool.levels, dtype=object)
    confident = any(voting.RULES[r].confidence for r in rules)
    log_w = pool.log_w(vote.vote_signal(), vote.temperature) if confident else None
    outcomes: dict[tuple, list[np.ndarray]] = {}  # per combo and rule, per seed: graded questions right
    done, total = 0, len(combos) * len(seeds)
    for seed in seeds:
        perm = pool.permutations(seed)
        votes, cover = pool.outcomes(perm, rules, log_w, vote.keep)
        # cut[i, t]: samples among question i's first t draws that were cut at --max-tokens
        cut = np.hstack([np.zeros((m, 1), dtype=np.int64), np.take_along_axis(pool.cut, perm, 1).cumsum(axis=1)])
        drawn, cum, cum_prompt = pool.spent(perm)
        if deciles:  # each question's decile of its first draw's uncertainty
            bins = deciles_of(-log_p(first[idx, perm[:, 0]], deciles.statistic, 1.0))
        probs: dict = {}
        for name, sig, t, k1, n in combos:
            if (sig, t) not in probs:
                probs[sig, t] = np.zeros(m) if sig is None else pool.probabilities(perm, k1, sig, t)
            job = Job(probs[sig, t], (n - k1) * m, None, seed, pool.lengths, pool.hard, gain, thresholds, k1,
                      values=pool.majority_values if name in UPPER_BOUNDS else None, room=pool.k - k1)
            extra, saved = call(name, job)
            over = extra > pool.k - k1
            if over.any():  # the pool cannot serve it: the allocator's own capped optimum
                job.cap = pool.k - k1
                extra, saved = call(name, job)
            per_question = k1 + extra
            used = int(per_question.sum())
            if used + saved != n * m or (per_question > pool.k).any():
                raise AssertionError(f"{name}: budget broken ({used} used + {saved} saved != {n * m})")
            common = {"coverage": float(cover[idx, per_question][pool.graded].mean()), "samples_used": used,
                      "saved": saved, "capped": int(over.sum()),
                      **_token_fields(drawn, cum, cum_prompt, per_question)}
            if pool.cut.any():
                common.update(cut=int(cut[idx, per_question].sum()), cut_samples=pool.cut_samples)
            if levels:
                common["by_level"] = {str(lv): float(per_question[level_of == lv].mean()) for lv in levels}
            replayed = [voting.DEFAULT_RULE] if name in UPPER_BOUNDS else rules
            for rule in replayed:
                right, fell = votes[rule]
                graded = right[idx, per_question][pool.graded]
                outcomes.setdefault((name, sig, t, n, rule), []).append(graded)
                row = {"allocator": name, "signal": sig, "T": t, "gain": gain, "N": n, "seed": seed, "M": m,
                       "K1": k1, "vote_rule": rule, "accuracy": float(graded.mean()), **common}
                if fallbacks := int(fell[idx, per_question].sum()):
                    row["vote_fallbacks"] = fallbacks
                if analysis:
                    results.append(row)
                yield row
            if deciles:
                deciles.add((name, sig, t, n), bins, per_question,
                            {rule: votes[rule][0][idx, per_question] for rule in replayed})
            done += 1
            if on_progress:
                on_progress(done, total)
    if analysis:
        yield from deciles.rows() if deciles else ()
        yield from ({"cost_at_accuracy": c} for c in at_accuracy(summarize(results), analysis[1]))
    if not advise:
        return
    context = {"gain": gain, "vote": vote, "generation": generation_of(pool.records[0]),
               "k1": {(c[0], c[1], c[2], c[4]): c[3] for c in combos}}
    for rec in recommend.held_out({k: np.array(v) for k, v in outcomes.items()}, UPPER_BOUNDS, context):
        yield {"recommendation": rec}


def _check(pool, budgets, allocators, signals, seeds, temps, gain, rules=(), vote=None) -> None:
    bad_rule = [r for r in rules if r not in voting.RULES]
    if bad_rule:
        raise UabError(f"unknown vote rule {bad_rule[0]!r}; choose from {', '.join(voting.RULES)}")
    unknown = [a for a in allocators if a not in ALLOCATORS]
    if unknown:
        raise UabError(f"unknown allocator {unknown[0]!r}; choose from {', '.join(ALLOCATORS)}")
    bad = [s for s in signals if s not in SIGNALS]
    if bad:
        raise UabError(f"unknown signal {bad[0]!r}; choose from {', '.join(SIGNALS)}")
    if not budgets or min(budgets) < 1:
        raise UabError("--budgets must be positive integers")
    if int(pool.k.sum()) < max(budgets) * len(pool.records):
        raise UabError(f"budget N={max(budgets)} exceeds the pool ({int(pool.k.min())} samples per question): "
                       "build a larger pool or use smaller budgets")
    if not seeds or min(seeds) < 0:
        raise UabError("--seeds must be a positive count or a list of non-negative seeds")
    if min(temps) <= 0:
        raise UabError("the signal temperature must be > 0")
    if gain not in allocation.GAINS:
        raise UabError(f"unknown gain {gain!r}; choose from {', '.join(allocation.GAINS)}")


def _unrunnable(pool: Pool, name: str, signal: str | None) -> str | None:
    if name in NEEDS_JUDGE and not pool.judged:
        return "no 'judge' label on every record (build the pool with the LLM judge)"
    if signal in SCALAR_SIGNALS:
        key = signal.replace("-", "_")
        if any(s.get(key) is None for ss in pool.samples for s in ss):
            return f"some pool samples have no {key} (no token logprobs)"
    if signal is not None and pool.k.min() < SIGNAL_REGISTRY[signal].phase1:
        return f"{signal} needs at least {SIGNAL_REGISTRY[signal].phase1} samples per question"
    return None


# --- aggregation -------------------------------------------------------------------


def summarize(rows: Sequence[dict]) -> list[dict]:
    """Per (allocator, signal, T, N, vote rule): accuracy mean ± std over seeds, coverage, samples
    and tokens per question, and the accuracy difference to Uniform + majority paired by seed with
    its standard error. Only result rows count (not the recommendation or analysis rows)."""
    groups: dict[tuple, list[dict]] = {}
    skipped: dict[tuple, str] = {}
    rows = [r for r in rows if "allocator" in r]
    uniform = {(r["N"], r["seed"]): r["accuracy"] for r in rows if r["allocator"] == "uniform" and "skipped" not in r
               and r.get("vote_rule", voting.DEFAULT_RULE) == voting.DEFAULT_RULE}
    for r in rows:
        key = (r["allocator"], r["signal"], r["T"], r["N"], r.get("vote_rule", voting.DEFAULT_RULE))
        if "skipped" in r:
            skipped.setdefault(key, r["skipped"])
        else:
            groups.setdefault(key, []).append(r)
    out = []
    for key, rs in groups.items():
        acc = np.array([r["accuracy"] for r in rs])
        entry = dict(zip(_KEY, key), seeds=len(rs), accuracy=float(acc.mean()),
                     accuracy_std=float(acc.std(ddof=1)) if len(rs) > 1 else 0.0,
                     **{f: float(np.mean([r[f] for r in rs])) for f in ("coverage", "samples_used", "saved", "capped")},
                     diff_uniform=None, diff_se=None, upper_bound=key[0] in UPPER_BOUNDS,
                     gain=rs[0].get("gain"), K1=rs[0].get("K1", 1))
        entry.update(_per_question(rs))
        if any("vote_fallbacks" in r for r in rs):
            entry["vote_fallbacks"] = float(np.mean([r.get("vote_fallbacks", 0) for r in rs]))
        if any("cut" in r for r in rs):
            entry.update(cut=float(np.mean([r.get("cut", 0) for r in rs])), cut_samples=rs[0].get("cut_samples"))
        paired = [r["accuracy"] - uniform[r["N"], r["seed"]] for r in rs if (r["N"], r["seed"]) in uniform]
        if paired:
            d = np.array(paired)
            entry["diff_uniform"] = float(d.mean())
            entry["diff_se"] = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else None
        if any("by_level" in r for r in rs):
            keys = rs[0].get("by_level", {})
            entry["by_level"] = {lv: float(np.mean([r["by_level"][lv] for r in rs])) for lv in keys}
        out.append(entry)
    out += [dict(zip(_KEY, k), skipped=why) for k, why in skipped.items() if k not in groups]
    return sorted(out, key=lambda e: (e["N"], e["allocator"] != "uniform", e["allocator"], str(e["signal"]),
                                      e["T"] or 0, list(voting.RULES).index(e["vote_rule"])))


_KEY = ("allocator", "signal", "T", "N", "vote_rule")


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


def anll_correlation(records: Sequence[dict]) -> float | None:
    """Pearson r between ANLL and correctness over all graded pool samples (paper: ≈ −0.3)."""
    anll = _anll_by_correctness(records)
    x = np.concatenate([anll[True], anll[False]])
    y = np.r_[np.ones(len(anll[True])), np.zeros(len(anll[False]))]
    if x.size < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def _anll_by_correctness(records) -> dict[bool, np.ndarray]:
    out = {True: [], False: []}
    for rec in records:
        if gold_answer(rec) is None:
            continue
        for s in samples(rec):
            if s.get("anll") is not None:
                out[bool(is_correct(rec, s.get("answer")))].append(float(s["anll"]))
    return {k: np.array(v) for k, v in out.items()}


def markdown_table(summary: Sequence[dict], correlation: float | None = None,
                   recommended: Sequence[dict] = ()) -> str:
    """The summary as a Markdown table (accuracy in %), then the headroom and recommendation."""
    lines = [("| N | allocator | signal | T | vote rule | seeds | accuracy % | coverage % | tokens/question "
              "| Δ vs uniform + majority (pp) | share of headroom | saved | capped |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    headroom = {r["N"]: r["headroom"] for r in recommend.by_budget(summary)}
    for e in summary:
        if "skipped" in e:
            notes.append(f"- skipped {e['allocator']} ({e['signal'] or '—'}) at N={e['N']}: {e['skipped']}")
            continue
        diff = "—" if e["diff_uniform"] is None else f"{100 * e['diff_uniform']:+.2f}" + (
            f" ± {100 * e['diff_se']:.2f}" if e["diff_se"] is not None else "")
        part = None if e.get("upper_bound") else recommend.share(e, headroom.get(e["N"]))
        lines.append(f"| {e['N']} | {recommend.label(e) if e.get('upper_bound') else e['allocator']} | "
                     f"{e['signal'] or '—'} | {'—' if e['T'] is None else format(e['T'], 'g')} | {e['vote_rule']} | "
                     f"{e['seeds']} | {100 * e['accuracy']:.2f} ± {100 * e['accuracy_std']:.2f} | "
                     f"{100 * e['coverage']:.2f} | {_tokens(e)} | {diff} | "
                     f"{'—' if part is None else f'{100 * part:.0f} %'} | "
                     f"{e['saved']:.1f} | {e['capped']:.1f} |")
    text = "\n".join(lines) + "\n"
    if correlation is not None:
        text += f"\nANLL–correctness Pearson r over the pool's samples: {correlation:.3f} (paper: ≈ −0.3)\n"
    fell = max((e.get("vote_fallbacks", 0) for e in summary), default=0)
    if fell:
        notes.append(f"- up to {fell:.1f} questions per replay had a voted sample without the vote's confidence "
                     "statistic: the confidence rules voted them by majority")
    cut = [e for e in summary if e.get("cut") is not None]
    if cut:
        share = sum(e["cut"] for e in cut) / sum(e["samples_used"] for e in cut)
        did = "their answers voted" if cut[0]["cut_samples"] == "count" else "they did not vote"
        notes.append(f"- {100 * share:.1f} % of the samples the replays used were cut at --max-tokens; {did} "
                     f"(--cut-samples {cut[0]['cut_samples']})")
    if notes:
        text += "\n" + "\n".join(notes) + "\n"
    advice = recommend.markdown(summary, recommended)
    return text + ("\n" + advice if advice else "")


def _tokens(entry: dict) -> str:
    value = entry.get("tokens_per_question")
    return "—" if value is None else f"{value:.1f}"


# --- plots -------------------------------------------------------------------------


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise UabError("uab report needs matplotlib: pip install 'uab-cli[plots]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_RULE_STYLE = {"majority": "-", "confident-ties": "--", "weighted": "-.", "filtered": ":", "most-confident": (0, (1, 1))}


def _series(summary: Sequence[dict]) -> dict[str, tuple[dict, list[dict]]]:
    """Plot series by label: a colour per allocator with its signal, shaded light (lowest T) to
    dark (highest T) when T varies, a marker per signal and T, and a line style per vote rule;
    upper bounds are black and dashed."""
    import matplotlib

    done = [e for e in summary if "skipped" not in e]
    temps = sorted({e["T"] for e in done if e["T"] is not None})
    many_t = len(temps) > 1
    many_rules = len({e["vote_rule"] for e in done}) > 1
    kinds = sorted({(str(e["signal"]), e["T"] or 0) for e in done})
    names = sorted({recommend.label(e, False, False) for e in done if not e.get("upper_bound")})
    colors = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"].colors
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
                     "linestyle": _RULE_STYLE.get(e["vote_rule"], "-")}
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
    are a dashed line with a band of ± std."""
    plt = _pyplot()
    series = _series(summary)
    fig, ax = plt.subplots(figsize=(9.5, 5))
    for k, (label, (style, es)) in enumerate(series.items()):
        es = sorted(es, key=lambda e: e["N"])
        if es[0].get("upper_bound"):
            acc, std = (np.array([100 * e[f] for e in es]) for f in ("accuracy", "accuracy_std"))
            ax.fill_between([e["N"] for e in es], acc - std, acc + std, color="black", alpha=0.08, lw=0)
            ax.plot([e["N"] for e in es], acc, label=label, lw=1.5, **style)
            continue
        shift = 1 + 0.1 * (k / max(len(series) - 1, 1) - 0.5)  # keep error bars apart, within ±5 %
        ax.errorbar([e["N"] * shift for e in es], [100 * e["accuracy"] for e in es],
                    yerr=[100 * e["accuracy_std"] for e in es], label=label, capsize=3, **style)
    budgets = sorted({e["N"] for _, es in series.values() for e in es})
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [str(n) for n in budgets])
    ax.set_xlabel("budget N (samples per question)")
    ax.set_ylabel("accuracy (%), mean ± std over seeds")
    ax.set_title("Accuracy vs budget")
    ax.grid(alpha=0.3)
    side_legend(fig, *ax.get_legend_handles_labels())
    return fig


def plot_levels(summary: Sequence[dict]):
    """Figure: mean allocated samples vs difficulty level, one panel per budget N (at most four,
    spread over the budgets), under majority vote: the allocation does not depend on the rule."""
    plt = _pyplot()
    series = _series([e for e in summary if e.get("vote_rule", voting.DEFAULT_RULE) == voting.DEFAULT_RULE])
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
    plt = _pyplot()
    anll = _anll_by_correctness(records)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    both = np.concatenate([anll[True], anll[False]])
    positive = both[both > 0]
    lo, hi = (positive.min(), both.max()) if positive.size else (0.0, 0.0)
    log = hi > lo > 0
    bins = np.geomspace(lo, hi, 31) if log else (np.histogram_bin_edges(both, bins=30) if both.size else 10)
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


def report(rows: Sequence[dict], records: Sequence[dict] | None, out_dir: str,
           targets: Sequence[float] | None = None, on_skipped: Callable[[str, str], None] | None = None) -> list[str]:
    """Write the plots and ``summary.md`` into ``out_dir``; returns the paths written. The cost
    at fixed accuracy is the results file's (``simulate -o``) unless ``targets`` are given or it
    has none; the signal deciles need its ``deciles`` rows. A plot the inputs cannot draw is
    named, with why, in ``summary.md`` and to ``on_skipped(name, why)``."""
    plt = _pyplot()
    summary = summarize(rows)
    if not any("skipped" not in e for e in summary):
        raise UabError("no result rows to report")
    os.makedirs(out_dir, exist_ok=True)
    figures = {"accuracy_vs_budget.png": plot_accuracy(summary)}
    skipped = {}
    if any(e.get("by_level") for e in summary):
        figures["allocation_by_level.png"] = plot_levels(summary)
    else:
        skipped["allocation_by_level.png"] = "the questions have no 'level' field"
    costs = (targets is None and analyses.cost_rows(rows)) or at_accuracy(summary, targets)
    if analyses.curves(summary):
        figures["cost_at_accuracy.png"] = analyses.plot_cost(summary, sorted({c["target"] for c in costs}))
    if analyses.decile_rows(rows):
        figures["signal_deciles.png"] = analyses.plot_deciles(analyses.decile_rows(rows))
    else:
        skipped["signal_deciles.png"] = "the results have no 'deciles' rows (`uab simulate -o` writes them)"
    correlation = None
    if records is None:
        skipped["anll_correct_vs_incorrect.png"] = "no --pool given"
    elif any(s.get("anll") is not None for r in records for s in samples(r)):
        figures["anll_correct_vs_incorrect.png"] = plot_anll(records)
        correlation = anll_correlation(records)
    else:
        skipped["anll_correct_vs_incorrect.png"] = "the pool's samples have no ANLL (no token logprobs)"
    for name, why in skipped.items():
        if on_skipped:
            on_skipped(name, why)
    paths = []
    for name, fig in figures.items():
        paths.append(os.path.join(out_dir, name))
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)
    paths.append(os.path.join(out_dir, "summary.md"))
    with open(paths[-1], "w", encoding="utf-8") as fh:
        fh.write("# UAB simulation summary\n\n" + markdown_table(summary, correlation, recommendations(rows)))
        for part in (analyses.markdown_cost(costs), analyses.markdown_tokens(summary)):
            fh.write("\n" + part if part else "")
        if skipped:
            fh.write("\nPlots not drawn:\n\n" + "".join(f"- {name}: {why}\n" for name, why in skipped.items()))
    return paths

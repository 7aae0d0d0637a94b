"""A pool of pre-drawn samples prepared once for replay: answer classes, vote tie-break ranks,
cached grading and token counts, as (questions × samples) tables."""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

from . import allocation, majority, voting
from .answers import class_keys, gold_answer, is_correct
from .errors import UabError
from .pipeline import is_cut, voted_answer
from .records import question_type, samples
from .settings import DEFAULT_CUT
from .signals import log_p, sample_statistic, success_probabilities, vote_outcomes

_BIG = 1 << 30  # the rank of no answer: after every answer
_CELLS = 1 << 22  # how many (row, prefix, class or sample) cells the replay's vote tables hold at once


class Pool:
    """A pool prepared once: answer classes, vote tie-break ranks and cached grading.

    ``cut_samples`` (``--cut-samples``): with ``drop`` a sample cut at ``--max-tokens`` has no
    answer class, so it never votes nor covers; ``cut`` marks those samples either way."""

    def __init__(self, records: Sequence[dict], cut_samples: str = DEFAULT_CUT):
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
        # Every sample's answer class, cut or not: what the allocation's signal reads (a cut sample
        # still counts there under ``--cut-samples drop``; ``cls`` is what votes).
        self.answer_cls = np.full((m, kmax), -1, dtype=np.int64)
        for i, (rec, ss) in enumerate(zip(self.records, self.samples)):
            answers = [voted_answer(s, DEFAULT_CUT) for s in ss]
            classes, ranked, right = _classes(rec, answers)
            for j, (a, voted) in enumerate(zip(answers, (voted_answer(s, cut_samples) for s in ss))):
                if a is not None:
                    self.answer_cls[i, j] = classes[a]
                if voted is not None:
                    self.cls[i, j], self.rank[i, j], self.correct[i, j] = classes[a], ranked[a], right[ranked[a]]
        self.n_classes = max(int(self.cls.max()) + 1, 1)
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

    def has_statistic(self, signal: str) -> bool:
        """Whether any sample has the statistic behind ``signal`` (``statistics`` not all NaN)."""
        return not np.isnan(self.statistics(signal)).all()

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
        return self.votes(perm, {rule: (rule, log_w) for rule in rules}, keep)

    def votes(self, perm: np.ndarray, ballots: dict[Hashable, tuple[str, np.ndarray | None]],
              keep: float = voting.DEFAULT_KEEP) -> tuple[dict[Hashable, tuple[np.ndarray, np.ndarray]], np.ndarray]:
        """``outcomes`` of several votes by key, each a rule and the samples' log confidence it
        reads (None: none): every prefix of the draws at once, counted once for all of them
        (``voting.elect_prefixes``)."""
        cp = np.take_along_axis(self.cls, perm, 1)
        rp = np.take_along_axis(self.rank, perm, 1)
        right = np.take_along_axis(self.correct, perm, 1)
        missing = np.full(self.cls.shape, np.nan)
        wp = {key: np.take_along_axis(missing if log_w is None else log_w, perm, 1) for key, (_, log_w) in ballots.items()}
        m, kmax = cp.shape
        out = {key: (np.zeros((m, kmax + 1), dtype=bool), np.zeros((m, kmax + 1), dtype=bool)) for key in ballots}
        # the tables grow with the most answer classes among the questions counted together: the
        # questions go in groups of similar class counts, so one question whose answers all
        # differ does not make every question's vote count hundreds of classes, and in blocks
        # of rows that hold the memory (rows × K × max(K, classes)) to a few tens of MB
        classes = np.maximum(self.cls.max(axis=1, initial=-1) + 1, 1)
        group = np.ceil(np.log2(classes)).astype(np.int64)
        for g in np.unique(group):
            members = np.flatnonzero(group == g)
            step = max(1, _CELLS // (kmax * max(kmax, int(classes[members].max()))))
            for rows in (members[i:i + step] for i in range(0, len(members), step)):
                c, r = cp[rows], rp[rows]
                keyed = _key_right(c, r, right[rows])
                elected = voting.elect_prefixes(c, r, {key: (rule, wp[key][rows]) for key, (rule, _) in ballots.items()},
                                                keep)
                for key, (win, fell) in elected.items():
                    out[key][0][rows, 1:] = np.take_along_axis(keyed, np.maximum(win, 0)[:, :, None], 2)[:, :, 0] & (win >= 0)
                    out[key][1][rows, 1:] = fell
        cover = np.logical_or.accumulate(right, axis=1)
        return out, np.hstack([np.zeros((m, 1), dtype=bool), cover])

    def margins(self, perm: np.ndarray) -> np.ndarray:
        """Each question's vote margin (``allocation.vote_margins``) after its first t draws in
        the order ``perm``: an (M, K+1) table, t = 0 … K."""
        cp = np.take_along_axis(self.cls, perm, 1)
        m, kmax = cp.shape
        counts = np.cumsum(cp[:, :, None] == np.arange(self.n_classes), axis=1)  # (M, K, classes)
        out = np.full((m, kmax + 1), -1, dtype=np.int64)
        out[:, 1:] = allocation.vote_margins(counts.reshape(m * kmax, -1)).reshape(m, kmax)
        return out

    @functools.cached_property
    def majority_values(self) -> np.ndarray:
        """A[i, n]: question i's exact expected majority-vote accuracy with n samples drawn
        from its pool without replacement (ties exactly as ``outcomes``: a class written several
        ways, ``0.5`` and ``1/2``, is keyed, and graded, by its first spelling among the draws); -inf beyond K_i."""
        out = np.full((len(self.records), self.cls.shape[1] + 1), -np.inf)
        for i in range(len(self.records)):
            k, row = int(self.k[i]), self.cls[i, : self.k[i]]
            counts = np.bincount(row[row >= 0], minlength=self.n_classes)
            pairs, samples = np.unique(np.stack([row[row >= 0], self.rank[i, : k][row >= 0]]), axis=1,
                                       return_counts=True)
            right = dict(zip(self.rank[i, :k].tolist(), self.correct[i, :k].tolist()))  # per spelling
            spellings: list[list[tuple]] = [[] for _ in range(self.n_classes)]  # (tie rank, samples, right)
            for c, r, n in zip(*pairs.tolist(), samples.tolist()):
                spellings[c].append((r, n, right[r]))
            out[i, : k + 1] = majority.empirical_values(counts.tolist(), [any(s[2] for s in sp) for sp in spellings],
                                                        None, int((row < 0).sum()), spellings=spellings)
        return out

    def probabilities(self, perm: np.ndarray, k1: int, signal: str, temperature: float) -> np.ndarray:
        """p_i from the drawn Phase-1 samples only, through ``signals.success_probabilities``."""
        phase1 = [[ss[j] for j in perm[i, :k1]] for i, ss in enumerate(self.samples)]

        def answer_counts(i: int, _ss: list[dict]) -> list[int]:
            ids = self.answer_cls[i, perm[i, :k1]]
            return vote_outcomes(Counter(int(c) for c in ids if c >= 0).values(), (ids < 0).sum())

        return success_probabilities(phase1, signal, temperature, answer_counts)[0]


def _key_right(cls: np.ndarray, rank: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per row, prefix of t draws (column t - 1) and class, whether the class is right graded as
    ``uab vote`` grades its prediction: by the class's key, its first spelling among these draws (an
    answer that math-verify groups with the key need not grade as it does: ``2,3`` with ``3,2``).
    A running minimum of 2·rank + wrong: the key's rank, right if any of its samples is."""
    hit = cls[:, :, None] == np.arange(max(int(cls.max(initial=-1)) + 1, 1))
    code = np.where(hit, 2 * rank[:, :, None] + ~right[:, :, None], 2 * _BIG + 1)
    return np.minimum.accumulate(code, axis=1) % 2 == 0


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


def _classes(rec: dict, answers: list) -> tuple[dict, dict, list[bool]]:
    """Class id and lexicographic rank per distinct answer (classes from ``answers.class_keys``, one grouping),
    and whether each answer, by rank, is correct (graded once per distinct answer)."""
    kind = question_type(rec)
    distinct = sorted({a for a in answers if a is not None})
    key = class_keys(distinct, kind)  # one grouping: each answer joins its class's key
    ids: dict[str, int] = {}
    for a in distinct:  # the keys first, in order ("" has none: a class of its own, after them)
        if a in key:
            ids.setdefault(key[a], len(ids))
    classes = {a: ids[key[a]] if a in key else ids.setdefault(a, len(ids)) for a in distinct}
    return classes, {a: r for r, a in enumerate(distinct)}, [bool(is_correct(rec, a)) for a in distinct]

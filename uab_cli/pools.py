"""A pool of pre-drawn samples prepared once for replay: answer classes, vote tie-break ranks,
cached grading and token counts, as (questions × samples) tables."""

from __future__ import annotations

import functools
import hashlib
import math
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

from . import allocation, majority, voting
from .answers import class_keys, gold_answer, is_correct
from .backends.base import FILTERED
from .errors import UabError
from .pipeline import is_cut, voted_answer
from .records import COUNTS, asked, fingerprint, question_type, samples
from .settings import DEFAULT_CUT
from .signals import SCALAR_SIGNALS, is_filtered, log_p, statistic_field, success_probabilities, vote_outcomes

_BIG = 1 << 30  # the rank of no answer: after every answer
_CELLS = 1 << 22  # how many (row, prefix, class or sample) cells the replay's vote tables hold at once


_STATISTICS = (*SCALAR_SIGNALS.values(), "confidence")  # the fields a sample's statistics are in (``statistic_field``)


class Pooled:
    """A pool's records as ``simulate`` and ``report`` read them, gathered record by record (``add``,
    as a file is streamed) into what they read and nothing more: per question its id, what its
    fingerprint hashes (``records.asked``), whether it has a gold answer, its question's length,
    judge label and level; per sample, in flat arrays, its answer's class, tie rank and grade
    (``_classes``), whether it was cut or filtered, its statistics and token counts; and the first
    record, and the first judge-labelled one, without their samples (their provenance). A record's
    parsed JSON (a dict per sample, its text) is dropped once read: a pool of 50,000 questions ×
    8 samples holds tens of MB here, not the GB of its dicts."""

    def __init__(self):
        self.ids: list[str] = []
        self.asked: list[list] = []  # what the fingerprint hashes: the question's text, choices, type
        self.first: dict | None = None  # the first record, without its samples
        self.labelled: dict | None = None  # the first with a judge label, without its samples
        self.k, self.lengths = array("q"), array("q")
        self.graded, self.hard = array("b"), array("b")
        self.judged = True  # every record labelled easy or hard
        self.levels: list = []
        self.answer_cls, self.rank = array("q"), array("q")  # of each sample's answer, cut or not; -1 / _BIG: none
        self.right, self.cut, self.filtered = array("b"), array("b"), array("b")
        self.stats = {key: array("d") for key in _STATISTICS}  # NaN where a sample has none
        self.counts: dict[str, array | None] = {key: array("q") for key in COUNTS}  # None once a sample lacks it

    def add(self, rec: dict) -> None:
        """Gather what is read of one record (its samples graded here, once)."""
        head = {key: value for key, value in rec.items() if key != "samples"}
        if self.first is None:
            self.first = head
        if self.labelled is None and rec.get("judge") is not None:
            self.labelled = head
        self.ids.append(rec["id"])
        self.asked.append(asked(rec))
        ss = samples(rec)
        self.k.append(len(ss))
        self.lengths.append(len(rec["question"]))
        self.graded.append(gold_answer(rec) is not None)
        self.hard.append(rec.get("judge") == "hard")
        self.judged = self.judged and rec.get("judge") in ("easy", "hard")
        self.levels.append(rec.get("level"))
        answers = [voted_answer(s, DEFAULT_CUT) for s in ss]
        classes, ranked, right = _classes(rec, answers)
        for s, a in zip(ss, answers):
            self.answer_cls.append(-1 if a is None else classes[a])
            self.rank.append(_BIG if a is None else ranked[a])
            self.right.append(a is not None and right[ranked[a]])
            self.cut.append(is_cut(s))
            self.filtered.append(is_filtered(s))
            for key, column in self.stats.items():
                column.append(math.nan if (v := s.get(key)) is None else v)
        for key, column in self.counts.items():
            if column is not None:
                values = [s.get(key) for s in ss]
                if None in values:
                    self.counts[key] = None
                else:
                    column.extend(values)

    def __len__(self) -> int:
        return len(self.ids)

    def fingerprint(self) -> str:
        """``records.questions_fingerprint`` of the pool's questions."""
        return fingerprint(self.asked)

    def column(self, statistic: str) -> np.ndarray:
        """Each sample's ``statistic`` (``anll``, ``confidence``, …), in file order, NaN where it has none."""
        return self.flat(self.stats[statistic])

    def sample_graded(self) -> np.ndarray:
        """Per sample (flat, in file order), whether its question has a gold answer."""
        return np.repeat(self.flat(self.graded), self.flat(self.k))

    @staticmethod
    def flat(column: array) -> np.ndarray:
        """One of the gathered columns as an array (bool for the flags), in file order."""
        if column.typecode == "b":
            return np.frombuffer(column, dtype=np.int8).astype(bool)
        return np.frombuffer(column, dtype=column.typecode)


def pooled(records: Iterable[dict] | Pooled) -> Pooled:
    """``records`` gathered (``Pooled.add``); a ``Pooled`` as it is."""
    if isinstance(records, Pooled):
        return records
    out = Pooled()
    for rec in records:
        out.add(rec)
    return out


class Pool:
    """A pool prepared once: answer classes, vote tie-break ranks and cached grading.

    ``records``: the pool's records, or the ``Pooled`` a file was read into. ``cut_samples``
    (``--cut-samples``): with ``drop`` a sample cut at ``--max-tokens`` has no answer class, so
    it never votes nor covers; ``cut`` marks those samples either way."""

    def __init__(self, records: Iterable[dict] | Pooled, cut_samples: str = DEFAULT_CUT):
        read = self.pooled = pooled(records)
        if not len(read):
            raise UabError("empty pool: no records")
        self.ids, self.first = read.ids, read.first
        self.k = np.array(read.k, dtype=np.int64)
        if self.k.min() < 1:
            bad = self.ids[int(np.argmin(self.k))]
            raise UabError(f"record {bad!r} has no samples: build the pool with `uab pool` first")
        starts = np.cumsum(self.k) - self.k
        # where each flat sample (in file order) goes in the (M, K) tables: its row and column
        self._at = (np.repeat(np.arange(len(self.ids)), self.k), np.arange(int(self.k.sum())) - np.repeat(starts, self.k))
        self.graded = read.flat(read.graded)
        if not self.graded.any():
            raise UabError("no record in the pool has a gold 'answer': nothing to evaluate")
        self.cut_samples = cut_samples
        self.cut = self._table(read.flat(read.cut), False)
        # Every sample's answer class, cut or not: what the allocation's signal reads (a cut sample
        # still counts there under ``--cut-samples drop``; ``cls`` is what votes).
        self.answer_cls = self._table(read.flat(read.answer_cls), -1)
        dropped = self.cut if cut_samples == "drop" else np.zeros_like(self.cut)
        self.cls = np.where(dropped, -1, self.answer_cls)  # answer class; -1 = no answer
        self.rank = np.where(dropped, _BIG, self._table(read.flat(read.rank), _BIG))  # lexicographic rank of the answer
        self.correct = self._table(read.flat(read.right), False) & ~dropped  # per-sample correctness
        self.filtered = self._table(read.flat(read.filtered), False)
        self.n_classes = max(int(self.cls.max()) + 1, 1)
        self.lengths = np.array(read.lengths, dtype=np.float64)
        self.hard = read.flat(read.hard)
        self.judged = read.judged
        self.levels = read.levels
        # (M, K) completion and prompt tokens per sample; None where some sample lacks its count
        self.tokens, self.prompt_tokens = (None if (c := read.counts[key]) is None else self._table(read.flat(c), 0)
                                           for key in COUNTS)

    def _table(self, flat: np.ndarray, fill) -> np.ndarray:
        """A flat per-sample column as an (M, K) table, ``fill`` beyond K_i."""
        out = np.full((len(self.ids), int(self.k.max())), fill, dtype=flat.dtype)
        out[self._at] = flat
        return out

    def permutations(self, seed: int) -> np.ndarray:
        """Per question, a seeded draw order over its pool (padded beyond K_i)."""
        kmax = self.cls.shape[1]
        out = np.tile(np.arange(kmax), (len(self.ids), 1))
        for i, rid in enumerate(self.ids):
            digest = hashlib.blake2b(str(rid).encode(), digest_size=8).digest()
            rng = np.random.default_rng([seed, int.from_bytes(digest, "big")])
            out[i, :self.k[i]] = rng.permutation(int(self.k[i]))
        return out

    def log_w(self, signal: str, temperature: float) -> np.ndarray:
        """Per-sample log confidence for the vote rules (``signals.log_p`` of each sample's own
        statistic), NaN where a sample lacks it; (M, K) like ``cls``."""
        return log_p(self.statistics(signal), signal, temperature)

    def statistics(self, signal: str) -> np.ndarray:
        """Each sample's own statistic behind ``signal`` (``sample_statistic``), NaN where it lacks it."""
        return self._table(self.pooled.column(statistic_field(signal)), np.nan)

    def lacks(self, signal: str) -> bool:
        """Whether some sample came without the token-logprob statistic behind ``signal`` (``signals.lacks``)."""
        return bool((np.isnan(self.statistics(signal)) & ~self.filtered)[self._at].any())

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
        out = np.full((len(self.ids), self.cls.shape[1] + 1), -np.inf)
        for i in range(len(self.ids)):
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
        key = statistic_field(signal)
        stat, filtered = self.statistics(signal), self.filtered
        # each drawn sample as the signal reads it: its statistic (None where it has none) and its filtering
        phase1 = [[{key: None if math.isnan(v) else v, "finish_reason": FILTERED if f else None}
                   for v, f in zip(stat[i, perm[i, :k1]].tolist(), filtered[i, perm[i, :k1]].tolist())]
                  for i in range(len(self.ids))]

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

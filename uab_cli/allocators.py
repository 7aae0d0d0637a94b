"""The allocator registry: one table of named allocators for ``allocate``, ``run`` and ``simulate``.

Each entry is a callable ``Job -> extra`` (or ``(extra, saved)`` for the exits that skip).
``register`` adds one; ``signal=False`` marks an allocator that ignores ``p``, and
``runnable=False`` one that only ``simulate`` can run (it needs what a live run does not
know, such as every sample's correctness).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from . import allocation
from .errors import UabError
from .majority import allocate_values, majority_allocate

EXITS = {"hard": 0.5, "easy": 0.7}  # default thresholds (paper, Threshold Exits)
EXIT_MODES = tuple(allocation.EXIT_MODES)


@dataclass
class Job:
    """One allocation request: what an allocator callable receives."""

    p: np.ndarray  # success probabilities (zeros for signal-free allocators)
    budget: int  # Phase-2 units to spend: (N - K1)·M
    cap: np.ndarray | None  # max Phase-2 units per question (None: uncapped)
    seed: int
    lengths: np.ndarray  # question lengths (the ``length`` baseline)
    hard: np.ndarray  # judge labels (the ``judge`` baseline)
    gain: str = "algorithm1"
    theta: dict | None = None  # exit thresholds by kind (None: EXITS)
    k1: int = 1  # Phase-1 samples per question (the fewest any question holds)
    vote_model: str = "plurality-2"  # the majority allocator's vote model
    exit: str | None = None  # threshold exit on top of ``uab`` (hard or easy)
    exit_mode: str = "redistribute"
    exit_nmax: int | None = None  # the hard exit's N_max under the official test (None: the paper's, p < θ)
    values: np.ndarray | None = None  # A[i, n]: question i's expected majority accuracy with n samples (upper bounds)
    room: np.ndarray | None = None  # per question, the Phase-2 samples its pool can serve (upper bounds)
    margins: Callable[[np.ndarray], np.ndarray] | None = None  # n -> vote margins after n samples (ROUNDS)
    rounds: int = 0  # set by an allocator that draws in rounds: how many it took
    drawn: np.ndarray | None = None  # the Phase-1 samples each question holds (None: k1 each)


Allocator = Callable[[Job], "np.ndarray | tuple[np.ndarray, int]"]
ALLOCATORS: dict[str, Allocator] = {}
SIGNAL_FREE: set[str] = set()  # allocators that ignore p
SIMULATE_ONLY: set[str] = set()  # allocators only ``simulate`` can run
RUN_FLAGS: dict[str, dict[str, str | None]] = {}  # the `uab run` options that reproduce each allocator
SUMMARIES: dict[str, str] = {}  # one line per allocator, for -h
TAKES_EXIT: set[str] = set()  # allocators a threshold exit (--exit) applies to
NEEDS_JUDGE: set[str] = set()  # allocators that read the LLM judge's easy/hard labels
ROUNDS: set[str] = set()  # allocators that draw Phase 2 in rounds, reading the votes so far (Job.margins)
# the candidates `simulate` replays unless told (``majority``: the held-out N = 2 pick on 8B-like pools)
SIMULATED = ("uab", "uniform", "random", "length", "adaptive", "majority", "oracle")
PHASE1: dict[str, int] = {}  # the Phase-1 samples per question an allocator needs, where more than 1
SEEDED: set[str] = set()  # allocators that read --allocation-seed


def register(name: str, fn: Allocator, summary: str, *, signal: bool = True, runnable: bool = True,
             exits: bool = False, judge: bool = False, rounds: bool = False, phase1: int = 1,
             seeded: bool = False, flags: dict[str, str | None] | None = None) -> None:
    """Add allocator ``name``: every command that takes an allocator name then knows it.
    ``summary``: what it does, in one line (``-h``). ``flags``: the ``uab run`` options that
    reproduce it (default ``--allocator NAME``; a ``--gain`` of ``None`` takes the replay's
    ``--gain``); ``exits``: whether ``--exit`` applies to it; ``judge``: whether it reads the
    LLM judge's labels (``phase1 --judge``; ``run`` asks the judge first); ``rounds``: whether
    it draws Phase 2 in rounds as it allocates (only ``run`` and ``simulate`` can); ``phase1``:
    the Phase-1 samples per question it needs; ``seeded``: whether it reads ``--allocation-seed``."""
    ALLOCATORS[name] = fn
    SUMMARIES[name] = summary
    (TAKES_EXIT.add if exits else TAKES_EXIT.discard)(name)
    (NEEDS_JUDGE.add if judge else NEEDS_JUDGE.discard)(name)
    (SIGNAL_FREE.add if not signal else SIGNAL_FREE.discard)(name)
    (SIMULATE_ONLY.add if not runnable else SIMULATE_ONLY.discard)(name)
    (ROUNDS.add if rounds else ROUNDS.discard)(name)
    (SEEDED.add if seeded else SEEDED.discard)(name)
    if phase1 > 1:
        PHASE1[name] = phase1
    else:
        PHASE1.pop(name, None)
    RUN_FLAGS[name] = flags or {"--allocator": name}


def preset(name: str) -> dict[str, str]:
    """The options a preset name fixes beyond its base allocator (``uab-coverage``:
    ``{"--gain": "coverage"}``); empty for a base allocator."""
    flags = RUN_FLAGS.get(name, {})
    if flags.get("--allocator", name) == name:
        return {}
    return {option: value for option, value in flags.items() if option != "--allocator" and value is not None}


def replay_readers(option: str) -> list[str]:
    """The allocators whose replay reads `uab simulate`'s allocation ``option``: ``--gain`` where
    their flags take the replay's (``None``: ``uab`` and its exits, not ``uab-coverage``, which
    fixes its own), ``--exit-test`` and ``--exit-nmax`` where they are a hard exit."""
    if option == "--gain":
        return [name for name in ALLOCATORS if RUN_FLAGS.get(name, {}).get("--gain", "") is None]
    if option in ("--exit-test", "--exit-nmax"):
        return [name for name in ALLOCATORS if preset(name).get("--exit") == "hard"]
    raise ValueError(f"simulate takes no allocation option {option}")


def runnable() -> list[str]:
    """Allocators a live run (``allocate``, ``run``) can use."""
    return [name for name in ALLOCATORS if name not in SIMULATE_ONLY]


def runnable_summaries() -> dict[str, str]:
    return {name: SUMMARIES[name] for name in runnable()}


def call(name: str, job: Job) -> tuple[np.ndarray, int]:
    """Run allocator ``name``: ``(extra, saved)`` with ``extra.sum() + saved == job.budget``."""
    if name not in ALLOCATORS:
        raise UabError(f"unknown allocator {name!r}; choose from {', '.join(ALLOCATORS)}")
    out = ALLOCATORS[name](job)
    extra, saved = out if isinstance(out, tuple) else (out, 0)
    return np.asarray(extra, dtype=np.int64), int(saved)


def _uab(j: Job, gain: str | None = None, exit: str | None = None, mode: str | None = None):
    gain, exit, mode = gain or j.gain, exit or j.exit, mode or j.exit_mode
    if exit:
        theta = (j.theta or EXITS)[exit]
        return allocation.threshold_exit(j.p, j.budget, exit, theta, mode, gain, j.cap, j.exit_nmax)
    return allocation.uab_allocate(j.p, j.budget, gain, j.cap)


register("uab", _uab, "Algorithm 1 (paper): marginal greedy on p(1-p)^e", exits=True,
         flags={"--allocator": "uab", "--gain": None})  # the replay's --gain (algorithm1 unless simulate says)
register("uab-coverage", partial(_uab, gain="coverage"), "uab with the coverage gain p(1-p)^(1+e)", exits=True,
         flags={"--allocator": "uab", "--gain": "coverage"})
for _kind in EXITS:
    for _mode in EXIT_MODES:
        register(f"uab-exit-{_kind}" + ("" if _mode == "redistribute" else f"-{_mode}"),
                 partial(_uab, exit=_kind, mode=_mode),
                 f"uab; {_kind} questions (p {'<' if _kind == 'hard' else '>'} {EXITS[_kind]:g}) keep their Phase-1 "
                 f"sample; {allocation.EXIT_MODES[_mode]}",
                 flags={"--allocator": "uab", "--gain": None, "--exit": _kind, "--exit-mode": _mode})


def _majority(j: Job, model: str | None = None):
    return majority_allocate(j.p, j.budget, model or j.vote_model, max_extra=j.cap,
                             phase1=j.k1 if j.drawn is None else j.drawn)


register("majority", _majority, "maximises expected majority-vote accuracy under --vote-model (plurality-2 unless told)",
         flags={"--allocator": "majority", "--vote-model": "plurality-2"})
register("majority-scatter", partial(_majority, model="scatter"),
         "majority under the scatter vote model (wrong answers never coincide)",
         flags={"--allocator": "majority", "--vote-model": "scatter"})
register("uniform", lambda j: allocation.uniform_allocate(j.p.size, j.budget, j.cap),
         "self-consistency: N samples per question", signal=False)
register("random", lambda j: allocation.random_allocate(j.p.size, j.budget, j.seed, j.cap),
         "each Phase-2 sample to a question drawn at random (--allocation-seed)", signal=False, seeded=True)
register("length", lambda j: allocation.proportional_allocate(j.lengths, j.budget, j.cap),
         "Phase-2 samples in proportion to question length", signal=False)
register("judge", lambda j: allocation.judge_allocate(j.hard, j.budget, j.cap),
         "the LLM judge's hard questions share the budget (needs phase1 --judge)", signal=False, judge=True)


def check_rounds(name: str, margins) -> None:
    """``UabError`` if allocator ``name`` draws Phase 2 in rounds (``ROUNDS``) and has no
    ``margins`` to draw them with (``uab allocate``): before any other check, which would send
    the user to fix what does not matter."""
    if name in ROUNDS and margins is None:
        raise UabError(f"the {name} allocator draws Phase 2 in rounds as it allocates: use `uab run` "
                       "(or `uab simulate`), not `uab allocate`")


def _adaptive(j: Job) -> np.ndarray:
    check_rounds("adaptive", j.margins)
    extra, j.rounds = allocation.adaptive_allocate(j.margins, np.full(j.p.size, j.k1), j.budget, j.seed, j.cap)
    return extra


register("adaptive", _adaptive, "Phase 2 in rounds from 2 Phase-1 samples: each round, one more sample to every "
         "question whose vote is least settled (Adaptive-Consistency under one budget; run, not allocate)",
         signal=False, rounds=True, phase1=2, seeded=True)


def _oracle(j: Job) -> np.ndarray:
    """Upper bound on allocation under majority vote: the exact DP on each question's expected
    majority-vote accuracy from its pool's own answer distribution (``Job.values``), within the
    pool (at most K_i - K1 Phase-2 samples)."""
    if j.values is None:
        raise UabError("the oracle needs a pool with graded samples (`uab simulate`)")
    cap = j.room if j.cap is None else np.minimum(j.cap, j.room)
    f = j.values[:, j.k1:].copy()
    f[np.arange(f.shape[1])[None, :] > cap[:, None]] = -np.inf
    return allocate_values(f, j.budget)


register("oracle", _oracle, "upper bound: exact DP on each question's majority accuracy (simulate only)",
         signal=False, runnable=False)

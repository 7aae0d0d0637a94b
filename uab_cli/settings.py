"""Typed, validated settings built once by the CLI: how samples are drawn (``Generation``),
how the budget is spent (``Allocation``) and how votes are counted (``Vote``).

Provenance, a run directory's config and its resume check all derive from these. Each
field names the command-line option that sets it, so messages can speak in options.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from typing import ClassVar

import orjson

from . import __version__, allocation, allocators, voting
from .backends import BACKENDS, sample_options
from .backends import options as backend_options
from .backends.base import SamplingParams
from .backends.cohere import MODEL as COHERE_MODEL
from .errors import UabError, not_utf8
from .majority import MODELS as VOTE_MODELS
from .models import ALIASES, BLANK, DEFAULT_MODEL
from .options import (
    AS_RECORDED,
    GENERATING,
    INT64,
    Listed,
    Option,
    as_path,
    check_fields,
    declared,
    declared_fields,
    fill_defaults,
    from_params,
    overlay,
    param_name,
    without_unmet,
)
from .prompts import PRESETS, Prompt, load_template
from .records import is_int
from .signals import DEFAULT_T, REGISTRY, SAMPLE_SIGNALS, SCALAR_SIGNALS
from .signals import SUMMARIES as SIGNAL_SUMMARIES


def _opt(flag: str, default=None, help: str = "", unset: bool = False, **kw):
    """A settings field and the command-line option that sets it (``options.Option``). ``unset``:
    the field holds ``None`` until given, and ``options.fill_defaults`` sets the default."""
    kw.setdefault("type", type(default) if default is not None else str)
    return field(default=None if unset else default, metadata={"option": Option(flag, help, default=default, **kw)})


def _gen(flag: str, default=None, help: str = "", **kw):
    kw.setdefault("commands", GENERATING)
    return _opt(flag, default, help, panel="Generation", **kw)


ALLOCATING = ("allocate", "run")
SPANS = ("reply", "answer")
VOTING = ("vote", "run")


def _alloc(flag: str, default=None, help: str = "", **kw):
    kw.setdefault("commands", ALLOCATING)
    return _opt(flag, default, help, panel="Allocation", unset=True, **kw)  # a preset tells a value given


def _vote(flag: str, default=None, help: str = "", **kw):
    kw.setdefault("commands", VOTING)
    return _opt(flag, default, help, panel="Vote", unset=True, **kw)  # check_rules tells a value given


JUDGE_TOKENS = 8  # the paper's cap on the LLM judge's reply: one word (``easy``/``hard``), whatever --max-tokens
TEMPLATE_DIGEST = "prompt_template_sha256"  # a template's content, recorded beside its path

TOO_LONG = {"error": "exit 2 before anything is drawn, naming the question and its tokens",
            "skip": "leave the question out of every stage (the budget is N per question that fits) and "
                    "name it in the summary"}


@dataclass(frozen=True)
class Generation:
    """How samples are drawn: recorded in every output's provenance. Changing any of these
    changes the samples, so a run directory holding samples drawn otherwise is refused."""

    backend: str = _gen("--backend", "local", "Model backend.", choices=lambda: tuple(BACKENDS))
    model: str = _gen("--model", "", "Model: hub id, local dir or .gguf.", show_default=f"{DEFAULT_MODEL}, shipped; "
                      f"cohere: {COHERE_MODEL}; openai: none, give one", blank=BLANK)
    seed: int = _gen("--seed", 0, "Run seed; each sample's seed derives from (seed, id, index).")
    temperature: float = _gen("--temperature", 0.9, "Sampling temperature.", minimum=0)
    max_tokens: int = _gen("--max-tokens", 1024, "Max new tokens per sample.", minimum=1)
    top_p: float = _gen("--top-p", 1.0, "Nucleus sampling top-p.", minimum=0, open_min=True, maximum=1)
    prompt: str = _gen("--prompt", "fewshot", "Built-in prompt:", described={k: v[0] for k, v in PRESETS.items()})
    vcs: bool = _gen("--vcs/--no-vcs", False, "Ask for a verbalised confidence.", show_default="off; on for cohere",
                     commands=("phase1", "run", "pool"))
    system_prompt: str | None = _gen("--system-prompt", None, "System message, replacing the prompt's own "
                                     "('': none).", show_default="the prompt's")
    prompt_template: str | None = _gen("--prompt-template", None, "JSON list of chat messages; {question} (or "
                                       "{stem}, {choices}) is replaced, literal braces doubled. Instead of --prompt.",
                                       show_default="none", excludes="prompt")
    signal_span: str = _gen("--signal-span", "reply", "Tokens the logprob signals cover: the whole reply (the "
                            "paper) or the answer after a reasoning model's reasoning.", choices=SPANS)
    too_long: str = _gen("--too-long", "error", "A question whose prompt plus --max-tokens exceeds the model's "
                         "context:", described=lambda: TOO_LONG, commands=("phase1", "run", "pool"))
    judge_max_tokens: int = _gen("--judge-max-tokens", JUDGE_TOKENS, "Max new tokens of the LLM judge's reply "
                                 "(the paper's 8: one word; a reasoning model thinks first and needs its trace's "
                                 "length).", minimum=1, commands=("phase1", "run"))
    # The backend's options that change what a sample is (``Option.samples``), each at its value
    # or the backend's default; a record or config from before they were recorded has none.
    backend_options: dict = field(default_factory=dict, hash=False)
    # The fields ``build`` derived from another one rather than was given (``vcs``, on for cohere):
    # a run directory records them as derived, so that a rerun derives them again. Not provenance.
    derived: frozenset = field(default=frozenset(), compare=False, repr=False)

    # Fields that do not change what a drawn sample is: a rerun may change them (another
    # --judge-max-tokens asks the judge again: ``runs._judge_once``); and what a sampling stage
    # records beside these fields (``pipeline.drawn_info``): ``engine``, the backend's engine
    # options, and ``model_package``, the distribution that supplied the model's file (the same
    # file from the uab cache records none).
    SAMPLE_FREE: ClassVar[frozenset[str]] = frozenset({"too_long", "judge_max_tokens", "engine", "model_package"})

    def __post_init__(self) -> None:
        check_fields(self)
        object.__setattr__(self, "backend_options", sample_options(self.backend, self.backend_options))
        # a model directory or file recorded absolute, as --tokenizer's: a rerun or Phase 2 from
        # another folder finds it, and ./m and m are the same model
        object.__setattr__(self, "model", as_path(self.model))
        if self.backend in ("local", "vllm"):  # "smollm2" is the default model, by its name
            object.__setattr__(self, "model", ALIASES.get((self.model or "").strip().lower(), self.model))
        if self.prompt_template is not None:
            self._template  # noqa: B018  (read and check the file now, before anything is drawn)
            # recorded absolute: a rerun or Phase 2 from another folder finds it
            object.__setattr__(self, "prompt_template", os.path.abspath(self.prompt_template))

    @functools.cached_property
    def _template(self) -> tuple[tuple[dict, ...], str]:
        return load_template(self.prompt_template, replaces_system=self.system_prompt is not None)

    @functools.cached_property
    def prompter(self) -> Prompt:
        """The prompt every sample is asked with."""
        template = self._template[0] if self.prompt_template is not None else None
        return Prompt(self.prompt, self.system_prompt, template)

    @classmethod
    def build(cls, recorded: dict | None = None, **given) -> Generation:
        """Options given (not ``None``) win over ``recorded`` ones (an earlier stage's
        provenance), which win over the defaults; ``vcs`` defaults to on for cohere.
        ``backend_options`` likewise, option by option.

        ``--prompt-template`` excludes ``--prompt`` (``options.overlay``): giving one drops the
        other's recorded value. Another ``--backend`` than the recorded one drops the recorded
        model and backend options (they belong to their backend)."""
        names = {f.name for f in fields(cls)} - {"derived"}  # each named as its option
        recorded = _for_backend({k: v for k, v in (recorded or {}).items() if k in names},
                                given.get("backend"), {"model", "backend_options"})
        was = recorded.pop("backend_options", None)
        now = given.pop("backend_options", None)
        values = overlay(recorded, given, declared(cls))
        derived = frozenset() if "vcs" in values else frozenset({"vcs"})
        values.setdefault("vcs", default_vcs(values.get("backend", cls.backend)))
        return cls(**values, backend_options=sample_options(values.get("backend", cls.backend), now,
                                                            was if isinstance(was, dict) else None), derived=derived)

    @classmethod
    def from_params(cls, params: dict, recorded: dict | None = None) -> Generation:
        """From parameter values by option name; ``None`` takes ``recorded``'s, then the default."""
        return cls.build(recorded, backend_options={o.name: params.get(o.name) for o in backend_options() if o.samples},
                         **{f.name: params.get(f.metadata["option"].name) for f in declared_fields(cls)})

    def params(self) -> SamplingParams:
        return SamplingParams(self.temperature, self.max_tokens, self.top_p)

    def same_template(self, recorded: dict, since: str, fix: str) -> None:
        """``UabError`` naming the template file where ``recorded`` (an ``info``: how samples were
        drawn ``since``) asked with the file this asks with, and it was edited since."""
        path = recorded.get("prompt_template")
        if self.prompt_template is None or not isinstance(path, str) or os.path.abspath(path) != self.prompt_template:
            return  # (an older uab recorded the path as typed)
        was, now = recorded.get(TEMPLATE_DIGEST), self._template[1]
        if was is not None and was != now:
            raise UabError(f"the prompt template changed since {since} (sha256 {short_digest(was)} → "
                           f"{short_digest(now)}); {fix}", self.prompt_template)

    def info(self, judged: bool = False) -> dict:
        """Provenance: the fields, a template's content digest (an edited template is a change);
        with a template, no built-in prompt (``prompt`` null: none was asked); ``judge_max_tokens``
        only where the LLM judge was asked (``judged``): elsewhere no judge read it."""
        unread = () if judged else ("judge_max_tokens",)
        fields_ = {k: v for k, v in asdict(self).items() if k != "derived" and k not in unread}
        if self.prompt_template is None:
            return {**fields_, "version": __version__}
        return {**fields_, "prompt": None, TEMPLATE_DIGEST: self._template[1], "version": __version__}


def check_judge_tokens(given, judge: bool = False, allocator: str | None = None) -> None:
    """Refuse ``--judge-max-tokens`` given on the command line (``given``: the option names it gives)
    where no LLM judge is asked, as an allocation option its allocator ignores is refused: ``phase1``
    without ``--judge`` (``judge``), a run whose ``allocator`` reads no judge labels. From a
    ``--settings`` file or a run directory's record it is taken silently: a judge run's settings
    serve another allocator too (``Generation.info`` then records no cap)."""
    if "judge_max_tokens" not in given or judge or allocator in allocators.NEEDS_JUDGE:
        return
    if allocator is None:
        raise UabError("--judge-max-tokens applies with --judge only")
    users = sorted(allocators.NEEDS_JUDGE)
    raise UabError(f"--judge-max-tokens applies to the {' and '.join(users)} allocator{'s' * (len(users) > 1)} "
                   f"(the LLM judge), not --allocator {allocator}")


def default_vcs(backend: str) -> bool:
    """``--vcs`` where it is not given: on for cohere (the paper's Cohere runs read it)."""
    return backend == "cohere"


@dataclass(frozen=True)
class Allocation:
    """How the remaining budget is spent (``uab allocate``). Changing these reuses every
    sample already drawn: a run directory grows or shrinks to the new allocation."""

    n: int = _alloc("--budget", 1, "N: samples per question on average (B = N·M).", short="-N", minimum=1,
                    required=True)
    allocator: str = _alloc("--allocator", "uab", "Allocator:", described=allocators.runnable_summaries)
    signal: str | None = _alloc("--signal", None, "Uncertainty signal (p from Phase 1):", described=SIGNAL_SUMMARIES,
                                show_default="vcs after a --vcs Phase 1, else anll")
    temperature: float = _alloc("--signal-temperature", DEFAULT_T, "T in p = exp(-s/T).", short="-T", minimum=0,
                                open_min=True)
    seed: int = _alloc("--allocation-seed", 0, "Seed of the random and adaptive allocators.", minimum=0)
    gain: str = _alloc("--gain", "algorithm1", "algorithm1: p(1-p)^e (paper); coverage: p(1-p)^(1+e).",
                       choices=tuple(allocation.GAINS), commands=(*ALLOCATING, "simulate"))
    exit: str | None = _alloc("--exit", None, "Threshold exit on top of uab.", choices=tuple(allocators.EXITS),
                              show_default="none")
    exit_threshold: float | None = _alloc("--exit-threshold", None, "Exit threshold θ (a probability).", type=float,
                                          minimum=0, maximum=1, show_default="hard 0.5, easy 0.7",
                                          requires=("exit", AS_RECORDED))  # a θ for one exit means nothing to the other
    exit_mode: str = _alloc("--exit-mode", "redistribute", "What an exit does with the budget it frees:",
                            described=lambda: allocation.EXIT_MODES, noun="exit mode")
    exit_test: str = _alloc("--exit-test", "paper", "How the hard exit tests a question:",
                            described=lambda: allocation.EXIT_TESTS, noun="exit test",
                            commands=(*ALLOCATING, "simulate"), requires=("exit", "hard"))
    exit_nmax: int | None = _alloc("--exit-nmax", None, "N_max of --exit-test official (the official code's "
                                   "--n_max; its ablation passes 8).", type=int, minimum=1, show_default="N",
                                   commands=(*ALLOCATING, "simulate"), requires=("exit_test", "official"))
    max_per_question: int | None = _alloc("--max-per-question", None, "At most this many samples per question in "
                                          "total.", type=int, minimum=1, show_default="no cap")
    vote_model: str = _alloc("--vote-model", "plurality-2", "The majority allocator's vote model.",
                             choices=VOTE_MODELS)

    def __post_init__(self) -> None:
        if self.allocator in allocators.SIMULATE_ONLY:  # it reads answers a run has yet to draw
            raise UabError(f"{self.allocator!r} is an upper bound for `uab simulate` only; "
                           f"choose from {', '.join(allocators.runnable())}")
        check_fields(self)
        given = fill_defaults(self)
        fixed = allocators.preset(self.allocator)
        if self.exit is not None and self.allocator not in allocators.TAKES_EXIT and "--exit" not in fixed:
            raise UabError(f"--exit applies to the uab allocators, not --allocator {self.allocator}")
        base = allocators.RUN_FLAGS[self.allocator]["--allocator"]
        wanted = {option: getattr(self, param_name(option)) if param_name(option) in given else value
                  for option, value in fixed.items()}  # the preset with the values given over its own
        for option, value in fixed.items():  # recorded as what it runs
            if wanted[option] != value:  # the way out: its base allocator with the values given
                raise UabError(f"--allocator {self.allocator} is --allocator {base} {option} {value}, not {option} "
                               f"{wanted[option]}: for that, give --allocator {base} "
                               + " ".join(f"{o} {v}" for o, v in wanted.items()))
            object.__setattr__(self, param_name(option), value)
        # an option given (at its default too) that the allocator does not read: refused, not ignored
        # (--allocation-seed and -T are taken by every allocator, recorded only where read: Allocation.info)
        takes = allocators.RUN_FLAGS[self.allocator]  # the options this allocator reads (the registry's)
        for name in ("gain", "vote_model"):
            option = flag(f"allocate.{name}")
            if name in given and option not in takes:
                users = [a for a in allocators.runnable() if option in allocators.RUN_FLAGS[a]]
                kinds = sorted({allocators.RUN_FLAGS[a]["--allocator"] for a in users})
                raise UabError(f"{option} applies to the {' and '.join(kinds)} allocator{'s' * (len(users) > 1)}, "
                               f"not --allocator {self.allocator}")
        for name in ("exit_mode", "exit_threshold", "exit_test", "exit_nmax"):
            if self.exit is None and name in given:
                raise UabError(f"{flag(f'allocate.{name}')} applies with --exit only")
        if self.exit == "easy" and {"exit_test", "exit_nmax"} & given:  # (a preset's exit is set above)
            raise UabError(f"{flag('allocate.exit_test' if 'exit_test' in given else 'allocate.exit_nmax')} applies "
                           "to --exit hard: the easy exit tests p > θ, in the paper and the official code alike")
        if "exit_nmax" in given and self.exit_test != "official":
            raise UabError("--exit-nmax applies with --exit-test official only")

    @classmethod
    def replayed(cls, params: dict, grid: list[str]) -> Allocation:
        """`uab simulate`'s allocation options (``--gain``, ``--exit-test``, ``--exit-nmax``: ``params``
        by option name, ``None`` where not given), checked as `uab run --exit hard` checks them, and
        refused, given at their default too, where no allocator of ``grid`` (its ``--allocators``; the
        ``uniform`` every replay adds reads none) reads one (``allocators.replay_readers``), as
        ``__post_init__`` refuses one its allocator ignores. An unknown allocator: the replay names it."""
        taken = [o for o in declared(cls) if "simulate" in o.commands]
        hard = from_params(cls, {**{o.name: params.get(o.name) for o in taken}, "exit": "hard"})
        if not set(grid) <= set(allocators.ALLOCATORS):
            return hard
        for option in taken:
            users = allocators.replay_readers(option.flag)
            if params.get(option.name) is not None and not set(users) & set(grid):
                raise UabError(f"{option.flag} applies to the allocator{'s' * (len(users) > 1)} {', '.join(users)}, "
                               f"not --allocators {','.join(dict.fromkeys(grid))}")
        return hard

    def check(self, k: int, signal: str, m: int = 1, drawn: bool = False, vcs: bool = True) -> None:
        """Reject settings that do not fit ``k`` Phase-1 samples per question of ``m``: those of
        -K, or ``drawn`` ones (a Phase-1 file holds them), which no option set; ``vcs``: whether
        Phase 1 asks for a verbalised confidence (a run's ``--vcs``)."""
        if not vcs and (unasked := self.unasked_confidence(signal)):
            raise UabError(unasked)
        if k < 1:
            raise UabError(f"--samples must be >= 1, got {k}")
        if self.n * m > INT64[1]:
            raise UabError(f"budget N·M = {self.n}·{m} does not fit in 64 bits: give a smaller --budget")
        if wrong := budget_below(self.n, k):  # the options named: a settings file that gave one says so
            needs = {what: need for what, need in self.phase1_needs(signal).items() if need == k > 1}
            raise UabError(f"{wrong}: give --budget {k} or more" if drawn else
                           f"{wrong} (-K/--samples {k}, which {next(iter(needs))} needs): give --budget {k} or more"
                           if needs else f"{wrong} (-K/--samples {k}): give --budget {k} or more, or a smaller -K")
        if short := self.phase1_short(k, signal):
            raise UabError(f"{short[0]} needs at least {short[1]} Phase-1 samples per question "
                           f"(-K/--samples {short[1]})")
        if self.max_per_question is not None and self.max_per_question < k:
            raise UabError(f"--max-per-question must be >= {k}")
        if self.max_per_question is not None and self.max_per_question < self.n:  # M·cap < N·M: no allocation fits
            raise UabError(f"--max-per-question is too small: {self.max_per_question} per question cannot hold "
                           f"the budget of N={self.n} per question")

    def phase1_short(self, k: int, signal: str) -> tuple[str, int] | None:
        """What needs more than ``k`` Phase-1 samples per question (``--signal S``, else ``--allocator A``)
        and how many it needs; None when ``k`` is enough."""
        return next(((what, need) for what, need in self.phase1_needs(signal).items() if k < need), None)

    def phase1_needs(self, signal: str | None) -> dict[str, int]:
        """The Phase-1 samples per question that ``--signal signal`` (None: no signal is read) and the
        allocator each need, by option."""
        return {**({f"--signal {signal}": REGISTRY[signal].phase1} if signal else {}),
                f"--allocator {self.allocator}": self.phase1_samples}

    @property
    def phase1_need(self) -> int:
        """The Phase-1 samples per question a run of these settings needs: its allocator's and its
        ``--signal``'s, read or not (`uab run` checks -K against both, ``check``)."""
        return max(self.phase1_needs(self.signal).values())

    @property
    def phase1_samples(self) -> int:
        """The Phase-1 samples per question the allocator needs (a run's default -K)."""
        return allocators.PHASE1.get(self.allocator, 1)

    @property
    def uses_signal(self) -> bool:
        return self.allocator not in allocators.SIGNAL_FREE

    def unasked_confidence(self, signal: str) -> str | None:
        """Why ``signal`` cannot allocate samples drawn without ``--vcs`` (``vcs``, ``vcs-pow``: every
        question would count as score 5), None where it reads no verbalised confidence."""
        if self.uses_signal and REGISTRY[signal].needs == "--vcs":
            return (f"--signal {signal} reads the verbalised confidence, which Phase 1 asks for only with --vcs: "
                    "draw Phase 1 with --vcs, or give another --signal")
        return None

    def nmax(self) -> int | None:
        """The hard exit's N_max under the official test (None: the paper's test, or no hard exit)."""
        return allocation.exit_nmax(self.exit_test, self.exit_nmax, self.n) if self.exit == "hard" else None

    def theta(self) -> float | None:
        """The exit threshold in force (None without an exit)."""
        if self.exit is None:
            return None
        return allocators.EXITS[self.exit] if self.exit_threshold is None else self.exit_threshold

    def info(self, signal: str, budget: int | None = None, saved: int | None = None) -> dict:
        """Provenance of an allocation with the resolved ``signal`` (a run's config: without the
        ``budget`` spent and ``saved``, not known yet); ``T`` only where it changes p (not for an
        allocator that reads no p, nor for ``vcs``), the seed, the gain and the vote model only for
        an allocator that reads it (``uniform`` has no gain): another writes no other votes file."""
        spent = {} if budget is None else {"budget": budget, "saved": saved}
        tempered = self.uses_signal and REGISTRY[signal].tempered
        seeded = self.allocator in allocators.SEEDED
        takes = allocators.RUN_FLAGS[self.allocator]  # the options it reads, as __post_init__ refuses the others
        return {"n": self.n, "allocator": self.allocator, "signal": signal, "T": self.temperature if tempered else None,
                "seed": self.seed if seeded else None, "gain": self.gain if "--gain" in takes else None,
                "exit": self.exit, "exit_threshold": self.theta(),
                "exit_mode": self.exit_mode, "max_per_question": self.max_per_question, **spent,
                "vote_model": self.vote_model if "--vote-model" in takes else None,
                # the official hard-exit test where in force (a votes file's digest is otherwise as before)
                **({"exit_test": self.exit_test, "exit_nmax": self.nmax()} if self.nmax() else {})}


DEFAULT_CUT = "count"  # --cut-samples where not given: cut samples vote, as in every earlier version
CUT_SAMPLES = {DEFAULT_CUT: "its extracted answer votes like any other",
               "drop": "it does not vote (it still counts in the budget)"}


@dataclass(frozen=True)
class Vote:
    """How votes are counted (``uab vote``): the rule (``voting.RULES``) and, for the rules that
    read sample confidences, the per-sample signal, its temperature and the kept fraction."""

    include_phase1: bool = _vote("--include-phase1/--exclude-phase1", True,
                                 "Vote over Phase-1 samples too (--exclude-phase1: Phase 2 only, the paper's "
                                 "ablation; a question with no Phase-2 sample votes its Phase-1 ones).")
    tie_seed: int | None = _vote("--tie-seed", None, "Break majority ties at random with this seed.", type=int,
                                 minimum=0, show_default="the answer that sorts first")
    rule: str = _vote("--vote-rule", voting.DEFAULT_RULE, "Vote rule:",
                      described=lambda: {r.name: r.summary for r in voting.RULES.values()})
    signal: str | None = _vote("--vote-signal", None, "Per-sample signal the confidence rules read.",
                               choices=SAMPLE_SIGNALS, show_default="the allocation's signal, else vcs after a --vcs Phase 1, else anll")
    temperature: float = _vote("--vote-temperature", DEFAULT_T, "Temperature of the confidence: w = exp(-s/T).",
                               minimum=0, open_min=True)  # simulate: its own, a list of candidates
    keep: float = _vote("--vote-keep", voting.DEFAULT_KEEP, "filtered: the fraction of a question's answered samples "
                        "kept (rounded up).", minimum=0, open_min=True, maximum=1, commands=(*VOTING, "simulate"))
    cut: str = _vote("--cut-samples", DEFAULT_CUT, "A sample cut at --max-tokens (finish_reason length):",
                     described=lambda: CUT_SAMPLES, commands=(*VOTING, "simulate"))
    # The fields given (``options.fill_defaults``), for ``check_rules``; a copy (``dataclasses.replace``:
    # a resolved signal, a rule or temperature of simulate's grid) keeps its original's, none given by it.
    given: frozenset | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        check_fields(self)
        given = fill_defaults(self)
        if self.given is None:
            object.__setattr__(self, "given", given)

    @property
    def uses_confidence(self) -> bool:
        return voting.RULES[self.rule].confidence

    @property
    def uses_temperature(self) -> bool:
        """Whether ``--vote-temperature`` changes the vote: a rule that weighs the confidences
        (``weighted``) of a signal that T scales (not ``vcs``; an unresolved signal may be one)."""
        tempered = self.signal is None or REGISTRY[self.signal].tempered
        return self.uses_confidence and voting.RULES[self.rule].tempered and tempered

    def check_rules(self, rules: tuple[str, ...] | list[str] | None = None) -> None:
        """Refuse an option given (at its default too) that none of ``rules`` (default: this
        rule) reads, as ``Allocation`` refuses one its allocator ignores: ``--tie-seed`` is
        majority's, the confidence options are the confidence rules', ``--vote-keep`` filtered's;
        and a rule this version does not know, first (else the message named none)."""
        LISTS["vote_rules"].check_names(rules or (self.rule,))
        chosen = [voting.RULES[r] for r in (rules or (self.rule,))]
        readers = {"tie_seed": [r.name for r in voting.RULES.values() if not r.confidence],
                   "signal": [r.name for r in voting.RULES.values() if r.confidence],
                   "keep": [r.name for r in voting.RULES.values() if r.keep]}
        readers["temperature"] = readers["signal"]
        for name, users in readers.items():
            if name in self.given and not any(r.name in users for r in chosen):
                given = f"--vote-rule {self.rule}" if rules is None else f"--vote-rules {','.join(r.name for r in chosen)}"
                raise UabError(f"{flag(f'vote.{name}')} applies to {_readers(name, users)}, not {given}")

    @classmethod
    def check_candidates(cls, temperatures: list[float], rules: list[str], signal: str | None = None,
                         own: str | None = None) -> None:
        """``simulate --vote-temperature`` given (a list of candidates, at its default too): refused
        where no rule of ``rules`` reads one with ``signal`` (``--vote-signal``; None: the pool's
        ``own``, ``pipeline.default_signal``) by ``uses_temperature``, the rules ``simulate``
        replays once per temperature: a grid of order-only rules, or weighted of a --vcs pool's
        scores, would ignore the list. (``vote`` and ``run`` take one for every confidence rule,
        ``check_rules``: an old results file's recommendation carries it.)"""
        vote = cls(temperature=temperatures[0], signal=signal)
        vote.check_rules(rules)  # an unknown rule first, as there
        if not any(replace(vote, rule=r, signal=signal or own).uses_temperature for r in rules):
            of = "" if not any(voting.RULES[r].tempered for r in rules) else \
                f" with --vote-signal {signal}" if signal else f" with the pool's own vote signal {own}"
            raise UabError(f"--vote-temperature applies to {_readers('temperature', [])}, not --vote-rules "
                           f"{','.join(rules)}{of}")

    def vote_signal(self, default: str = "anll") -> str:
        return self.signal or default

    def info(self) -> dict:
        return self._info

    @functools.cached_property  # one dict shared by every voted record, made once
    def _info(self) -> dict:
        info = {"include_phase1": self.include_phase1, "tie_seed": self.tie_seed, "rule": self.rule}
        if self.cut != DEFAULT_CUT:  # absent: cut samples vote, as in every earlier version
            info["cut_samples"] = self.cut
        if self.uses_confidence:  # the temperature where it changes the vote: a rerun at another writes no other file
            info.update(signal=self.signal, **({"temperature": self.temperature} if self.uses_temperature else {}))
            if voting.RULES[self.rule].keep:
                info["keep"] = self.keep
        return {**info, "version": __version__}

    def options(self) -> dict:
        """The ``uab run`` option values, by parameter name, that reproduce this vote: the rule,
        ``--cut-samples`` unless the default, and the confidence settings the rule reads (names
        derived from each field's option)."""
        names = ["rule"] + (["cut"] if self.cut != DEFAULT_CUT else [])
        names += ["signal"] if self.uses_confidence else []
        names += ["temperature"] if self.uses_confidence and self.uses_temperature else []  # as ``info`` records it
        names += ["keep"] if self.uses_confidence and voting.RULES[self.rule].keep else []
        values = {**asdict(self), "signal": self.vote_signal()}
        return {f.metadata["option"].name: values[f.name] for f in fields(self) if f.name in names}


def _readers(name: str, users: list[str]) -> str:
    """The vote rules that read ``Vote`` field ``name``, for ``check_rules``' message: ``users`` (those
    that take it), but for the temperature, taken by every confidence rule and read by the tempered
    ones of a signal it scales (``Vote.uses_temperature``) alone."""
    if name != "temperature":
        return f"the vote rule{'s' * (len(users) > 1)} {', '.join(users)}"
    tempered = [r.name for r in voting.RULES.values() if r.tempered]
    unscaled = [s for s in SAMPLE_SIGNALS if not REGISTRY[s].tempered]
    return f"the vote rule{'s' * (len(tempered) > 1)} {', '.join(tempered)} (of a signal other than {', '.join(unscaled)})"


def _signal_temperatures(_text: str, values: list[float]) -> list[float]:
    """`uab simulate -T 0.5,1`: each checked as `uab run -T` checks one."""
    return [from_params(Allocation, {"signal_temperature": t}).temperature for t in values]


def _vote_temperatures(_text: str, values: list[float]) -> list[float]:
    """`uab simulate --vote-temperature 0.05,0.1`: each checked as `uab vote`'s."""
    return [from_params(Vote, {"vote_temperature": t}).temperature for t in values]


def _accuracies(text: str, values: list[float]) -> list[float]:
    """``--targets``: accuracies in percent, as fractions."""
    if all(0 < v <= 100 for v in values) and min(values) < 1:  # a fraction where a percentage belongs
        raise UabError(f"--targets takes percentages, e.g. 27.5 (not 0.275), got {text!r}")
    if not all(1 <= v <= 100 for v in values):  # nan and inf fail too
        raise UabError(f"--targets takes comma-separated accuracies in percent (1 <= t <= 100), got {text!r}")
    return [v / 100 for v in values]


# `uab simulate`'s (and `report`'s --targets) own options that list values in one string, by name: each
# parsed and checked as it is read (``Listed.parse``), its names against their registry, before any input is
LISTS = {o.name: o for o in (
    Listed("--budgets", int), Listed("--allocators", choices=lambda: allocators.ALLOCATORS, noun="allocator"),
    Listed("--signals", choices=lambda: REGISTRY, noun="signal"),
    Listed("--vote-rules", choices=lambda: voting.RULES, noun="vote rule"),
    Listed("--signal-temperature", float, short="-T", then=_signal_temperatures),
    Listed("--vote-temperature", float, then=_vote_temperatures), Listed("--targets", float, then=_accuracies))}


SETTINGS = (Generation, Allocation, Vote)
SECTIONS = {"generation": Generation, "allocate": Allocation, "vote": Vote}  # a config.json's, by its entry


# The entries of ``Allocation.info`` / ``Vote.info`` named otherwise than their field.
_INFO_NAMES = {Allocation: {"temperature": "T"}, Vote: {"cut": "cut_samples"}}
# The option that chooses what the others of its settings tune: giving it starts from the defaults.
_LEADS = {Allocation: "allocator", Vote: "vote_rule"}


class FileValues(dict):
    """Option values (by parameter name) of a ``--settings`` file (``load_file``); ``lines``: the
    file's line of each value, where known, for a message about the value (``line_of``)."""

    def __init__(self, values=(), lines: dict[str, int] | None = None):
        super().__init__(values)
        self.lines = dict(lines or {})


def line_of(lines: dict[str, int] | None, names) -> int | None:
    """The first line of a settings file that gives one of option ``names`` (``lines``: its
    ``FileValues.lines``; None where it has none, or none of them)."""
    return min(((lines or {})[n] for n in names if n in (lines or {})), default=None)


class Recommended(FileValues):
    """Option values (by parameter name) of one ``uab simulate`` recommendation: one allocator ×
    vote rule combination; ``generation``: how its pool was drawn (the results file's header),
    empty when the file does not say; ``line``: its line in the results file (None: a JSON object,
    whose ``values`` say each one's, ``recommended_values``')."""

    def __init__(self, values: dict, generation: dict | None = None, line: int | None = None):
        super().__init__(values, dict.fromkeys(values, line) if line is not None else getattr(values, "lines", None))
        self.generation = generation or {}
        self.line = line


class Configured(FileValues):
    """Option values (by parameter name) of a run's or pool's ``config.json`` (``runs.config_settings``):
    its allocation and vote settings are a rerun's, so --allocator (--vote-rule) given starts that
    half from the defaults (``without_led``), as on a rerun. ``generation``: how its samples were
    drawn (its template's digest is checked against the file, as a recommendation's is)."""

    def __init__(self, values: dict, generation: dict | None = None):
        super().__init__(values)
        self.generation = generation or {}


# The entries of a config section beside its options' (as ``info`` names them): what a run records
# that no option sets, and a generation's backend options (each its own option, ``recorded_options``).
_RECORDED_ONLY = {Generation: {"backend_options", "version", TEMPLATE_DIGEST, "engine", "model_package"},
                  Allocation: {"budget", "saved", "rounds"}, Vote: {"version"}}


def recorded_options(section: str, info: dict, path: str) -> dict:
    """Config ``section``'s settings (``info``: what ``Generation.info``, ``Allocation.info`` or
    ``Vote.info`` recorded, less what the run derived) as option values by name, as a rerun takes
    them (``with_recorded``: an allocation's or vote's defaults are none given), a generation's
    backend options each by its own name. ``UabError`` naming ``path`` for an entry no option of
    this version sets (a newer uab's config)."""
    cls = SECTIONS[section]
    names = _INFO_NAMES.get(cls, {})
    backend = info.get("backend_options") if isinstance(info.get("backend_options"), dict) else {}
    unknown = sorted({*(set(info) - {names.get(f.name, f.name) for f in declared_fields(cls)} - _RECORDED_ONLY[cls]),
                      *(f"backend_options.{k}" for k in set(backend) - {o.name for o in backend_options() if o.samples})})
    if unknown:
        raise at_entry(UabError(f"it records {section}.{unknown[0]}, which no option of uab {__version__} sets (a "
                                "config of a newer uab?): give the options as a JSON/TOML file of option values", path),
                       f"{section}.{unknown[0]}")
    if cls is not Generation:
        return with_recorded(cls, {}, info)
    return {**{f.metadata["option"].name: info.get(f.name) for f in declared_fields(cls)}, **backend}


def check_recorded(config: dict, path: str, rerun: bool = True) -> None:
    """``UabError`` naming ``path`` (a run or pool directory's ``config.json``) where a recorded
    setting is no value its option takes (a hand edit): a rerun (``rerun``; else ``--settings``)
    would take it as given."""
    for section, cls in SECTIONS.items():
        info = config.get(section)
        names = _INFO_NAMES.get(cls, {})
        for f in declared_fields(cls) if isinstance(info, dict) else ():
            key = names.get(f.name, f.name)
            try:
                f.metadata["option"].check(info.get(key))
            except UabError as exc:
                raise at_entry(UabError(f"{exc.message} (recorded as {section}.{key})", path), f"{section}.{key}") \
                    from None
    try:  # --model as the last run was given it, which a rerun without --model takes
        _field("generation.model").metadata["option"].check(config.get("model_option"))
    except UabError as exc:
        raise at_entry(UabError(f"{exc.message} (recorded as model_option)", path), "model_option") from None
    drawn = config["generation"].get("model") if isinstance(config.get("generation"), dict) else None
    if config.get("model_option") and drawn is not None and config["model_option"] != drawn:  # "": the default
        taken = ("a rerun without --model would take: restore it, use a new --output, or --force to discard the "
                 "samples") if rerun else ("--settings would take as --model: restore it, or give the options as a "
                                           "JSON/TOML file of option values")
        raise at_entry(UabError(f"it records model_option {config['model_option']!r}, not the model its "
                                f"generation.model says its samples were drawn with ({drawn!r}), which {taken}", path),
                       "model_option")
    counts = {key: config.get(key) for key in COUNTS}
    for key, value in counts.items():  # a count a rerun takes (-K, the budget) where it is not given
        if value is not None and not (is_int(value) and 0 < value <= INT64[1]):
            raise at_entry(UabError(f"{flag(key)} takes a positive integer, got {value!r} (recorded as {key})", path),
                           key)
    if counts["n"] is not None and counts["k"] is not None and (wrong := budget_below(counts["n"], counts["k"])):
        raise at_entry(UabError(f"{wrong} (recorded as n and k)", path), "n")


def at_entry(exc: UabError, entry: str) -> UabError:
    """``exc`` about entry ``entry`` of a config or settings file (``generation.seed``): ``at_its_line``
    names its line."""
    exc.entry = tuple(entry.split("."))
    return exc


def at_its_line(exc: UabError, path: str, keys: dict[tuple, list[int]] | None = None) -> UabError:
    """``exc`` (``at_entry``'s, about an entry of the config at ``path``) at the line of ``path``
    that gives the entry, where it names none (``keys``: ``_json_keys``' of the file; None: read it)."""
    entry = getattr(exc, "entry", None)
    if exc.path == path and exc.line is None and entry is not None:
        if keys is None:
            try:
                with open(path, "rb") as fh:
                    keys = _json_keys_of(fh.read())
            except (OSError, ValueError):  # gone or changed since: no line to name
                keys = {}
        exc.line = keys.get(entry, [None])[0]
    return exc


def budget_below(n: int, k: int) -> str | None:
    """Why budget ``n`` cannot follow ``k`` Phase-1 samples per question (None: it can)."""
    return f"budget N={n} is smaller than the {k} Phase-1 samples per question" if n < k else None


def without_led(values: dict, given: dict) -> dict:
    """A recommendation's ``values`` without the options that tune its allocator (its vote rule)
    where ``given`` (the command line) gives ``--allocator`` (``--vote-rule``): as on a rerun
    (``with_recorded``), an allocator or rule given starts from the defaults. Other settings
    files keep every value (an option at odds with a given one is then an error naming the file),
    but a run's ``config.json`` (``Configured``), which a rerun's record is."""
    if not isinstance(values, (Recommended, Configured)):
        return values
    kept = dict(values)
    for cls, lead in _LEADS.items():
        if given.get(lead) is not None:
            for f in declared_fields(cls):
                if not f.metadata["option"].required:
                    kept.pop(f.metadata["option"].name, None)
    if given.get("allocator") is not None:  # and the -K its allocator and signal needed
        kept.pop("samples", None)
    return Recommended(kept, values.generation, values.line) if isinstance(values, Recommended) \
        else Configured(kept, values.generation)


def with_recorded(cls, params: dict, info: dict | None) -> dict:
    """``params`` (by option name) with the ``cls`` options they leave unset (``None``) taken
    from a run directory's recorded ``info`` (``Allocation.info``, ``Vote.info``), so that a
    rerun that gives only ``--budget`` or ``--vote-rule`` keeps the rest; unless ``params``
    give the lead option (``--allocator``, ``--vote-rule``): another allocator or rule starts
    from the defaults. The budget is not taken (``uab run`` remembers it apart), nor what the
    recorded allocator's preset fixes (it sets them again; a config from before presets recorded
    what they run holds the defaults there, which would now conflict with it), nor a value whose
    ``requires`` the options given leave without (``--exit-test`` after ``--exit easy``, hard's
    ``--exit-threshold`` after ``--exit easy``)."""
    if not isinstance(info, dict) or params.get(_LEADS[cls]) is not None:
        return params
    names = _INFO_NAMES[cls]
    fixed = {param_name(o): v for o, v in allocators.preset(info.get("allocator")).items()} if cls is Allocation else {}
    recorded = {f.metadata["option"].name: info.get(names.get(f.name, f.name)) for f in declared_fields(cls)
                if not f.metadata["option"].required and f.metadata["option"].name not in fixed}
    # a default recorded is none given (a uniform run records --gain algorithm1, which uniform does not read)
    defaults = {f.metadata["option"].name: f.metadata["option"].default for f in declared_fields(cls)}
    out = {**params, **{k: v for k, v in recorded.items() if v not in (None, defaults[k]) and params.get(k) is None}}
    return without_unmet(declared(cls), out, params, recorded, fixed)  # a preset's exit in force, unless given


def taken(params: dict, *values: dict) -> dict:
    """The option values (by name) of ``values`` (``with_recorded``'s) that ``params`` leave unset:
    what a rerun took from its directory's record."""
    return {k: v for d in values for k, v in d.items() if v is not None and params.get(k) is None}


def recorded_note(message: str, took: dict, where: str) -> str | None:
    """``message`` (an error's) told where an option it names came from, where a rerun took that
    option from its directory's record (``took``, by ``taken``; ``where``: the record's file) and
    how to give it up, which the command line did not show (None: it names none). The option that
    leads its settings (``_LEADS``: the allocator, the vote rule) is named last: giving it is the way out."""
    for leading in (False, True):
        for cls, lead in _LEADS.items():
            spelled = {o.name: o.flag.split("/")[0] for o in declared(cls)}
            restart = f"{spelled[lead]} {show(took.get(lead, next(o.default for o in declared(cls) if o.name == lead)))}"
            for name, option in spelled.items():
                if name in took and (name == lead) == leading and re.search(rf"{re.escape(option)}(?![\w-])", message):
                    way_out = "" if leading else f", or {restart} to start from the defaults"
                    return (f"{message} ({option} {show(took[name])} is the last run's, taken from {where}: give "
                            f"{option} to change it{way_out})")
    return None


def for_backend(values: dict, backend: str | None) -> dict:
    """A settings file's ``values`` (by option name) under the ``backend`` given on the command
    line: where the file names another backend, without its model and its backend options (they
    belong to it, as a recorded model does in ``Generation.build``: its server's URL and API key
    are not sent to another's). A recommendation stays one: how its pool was drawn is still
    checked against the run."""
    kept = _for_backend(values, backend, {"model", *(o.name for o in backend_options())})
    return Recommended(kept, values.generation, values.line) if isinstance(values, Recommended) else kept


def _for_backend(values: dict, backend: str | None, bound: set[str]) -> dict:
    """``values`` without the ``bound`` entries (a model and what belongs to it) where they name
    another backend than ``backend``; ``None`` keeps them."""
    if backend is None or values.get("backend") in (None, backend):
        return values
    return {k: v for k, v in values.items() if k not in bound}


def options() -> list[Option]:
    """Every option the settings declare."""
    return [o for cls in SETTINGS for o in declared(cls)]


__all__ = ["SETTINGS", "Allocation", "Generation", "Vote", "from_params", "options", "param_name"]


def needs_logprobs(signal: str) -> bool:
    return signal in SCALAR_SIGNALS


def without_logprobs(signal: str) -> str:
    """Why ``signal`` cannot run without token logprobs, naming the signals that can."""
    options = ", ".join(f"--signal {s.name} (with {s.needs})" for s in REGISTRY.values() if s.needs)
    return (f"signal {signal!r} needs token logprobs and this backend returns none; "
            f"signals that work without them: {options}")


# Spelling of config entries outside the settings objects.
_FLAGS = {"k": "-K/--samples", "n": "-N/--budget", "pool": "-K/--samples", "max_model_len": "--max-model-len",
          "questions": "input questions", "fingerprint": "input questions",
          "m": "input questions",
          "generation.version": "uab version", "generation.prompt_template_sha256": "--prompt-template (its content)"}


# Config entries outside the settings objects that hold a count (absent or null where they do not apply).
COUNTS = ("k", "n", "pool", "max_model_len")


# Config entries that hold ``{option name: value}`` (a backend's options, each its own flag).
_BY_OPTION = {"generation.backend_options"}


def _field(path: str):
    """The settings field behind config entry ``path`` (``generation.seed``), or ``None``."""
    section, _, name = path.partition(".")
    cls = SECTIONS.get(section)
    return next((f for f in declared_fields(cls) if f.name == name), None) if cls else None


def default(path: str):
    """The default of config entry ``path`` (``generation.signal_span`` -> ``"reply"``): what a
    config written before the option existed means by leaving it out (``None`` if unknown)."""
    found = _field(path)
    return None if found is None else found.metadata["option"].default


def flag(path: str) -> str:
    """The option that sets config entry ``path`` (e.g. ``generation.seed`` -> ``--seed``)."""
    if path in _FLAGS:
        return _FLAGS[path]
    found = _field(path)
    return path if found is None else found.metadata["option"].flag


def changes(section: str, old: dict, new: dict, ignore=()) -> dict[str, str]:
    """``{option: "(old → new)"}`` for each entry of config ``section`` (``generation``) that
    differs between two recorded dicts, an entry absent from one (older uab) taken as its
    default; the first change wins where two entries share an option; ``ignore``: names to skip."""
    out: dict[str, str] = {}
    if section == "generation":  # a model path an older uab recorded relative: the same file
        old, new = ({**d, "model": as_path(d["model"])} if isinstance(d.get("model"), str) else d for d in (old, new))
        # with a template no built-in prompt was asked (an older uab recorded the default's name)
        old, new = ({**d, "prompt": None} if d.get("prompt_template") is not None else d for d in (old, new))
    digest = TEMPLATE_DIGEST
    if section == "generation" and old.get(digest) is not None and old.get(digest) == new.get(digest):
        ignore = {*ignore, "prompt_template"}  # the same template, its file named another way (./t.json)
    for name in sorted((set(old) | set(new)) - set(ignore)):
        if f"{section}.{name}" in _BY_OPTION:  # {option name: value}; one absent (older uab) matches any
            was, now = (d.get(name) if isinstance(d.get(name), dict) else {} for d in (old, new))
            for key in sorted(set(was) & set(now)):
                if was[key] != now[key]:
                    out.setdefault(f"--{key.replace('_', '-')}", f"({show(was[key])} → {show(now[key])})")
            continue
        was, now = (d.get(name, default(f"{section}.{name}")) for d in (old, new))
        if was != now:
            shown = (short_digest(v) if name == digest and isinstance(v, str) else show(v) for v in (was, now))
            out.setdefault(flag(f"{section}.{name}"), "({} → {})".format(*shown))
    return out


def short_digest(digest) -> str:
    """A template's sha256 digest as every message shows it: its first 12 hex digits."""
    return f"{str(digest)[:12]}…"


def show(value) -> str:
    """A recorded value as a message shows it: ``unset`` for None, strings bare (``""`` when
    empty), else JSON."""
    if value is None:
        return "unset"
    return (value or '""') if isinstance(value, str) else orjson.dumps(value).decode()


def load_file(path: str, budget: int | None = None, recommendation: bool = True, command: str = "run") -> dict:
    """Option values by parameter name from ``--settings FILE``: a JSON or TOML object of
    option names (``max_tokens`` or ``max-tokens``), one ``{"recommendation": ...}`` object,
    a ``uab simulate -o`` results file, whose recommendation for ``budget`` it takes (without one,
    its only one, with its N as ``budget``), or a run's
    or pool's ``config.json`` (or its directory), whose settings ``command`` takes.
    ``recommendation``: whether the command takes one (``uab run``)."""
    from . import runs  # runs imports this module

    if not path:  # no file to name: the option
        raise UabError("--settings: the path is empty (give a JSON/TOML file of option values)")
    if path == "-":  # every input's stdin, not a file named '-' ("cannot read: No such file or directory")
        raise UabError("--settings reads a file, not stdin ('-'): give the path of a JSON/TOML file of option values")
    if os.path.isdir(path):  # a run or pool directory: its config
        if not os.path.exists(os.path.join(path, runs.CONFIG)):
            raise UabError(f"no {runs.CONFIG}: not a run or pool directory (give one, or a JSON/TOML file of "
                           "option values)", path)
        path = os.path.join(path, runs.CONFIG)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UabError(f"cannot read: {exc.strerror}", path) from None
    keys: dict[tuple, list[int]] = {}  # each key's lines (a JSON or TOML object's; a results file's: its row's)
    if path.lower().endswith(".toml"):
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise UabError("TOML settings need Python >= 3.11; use a JSON file", path) from None
        try:
            text = data.decode("utf-8-sig")  # a byte-order mark, as JSON's reader skips it
            objects, keys = [(None, tomllib.loads(text))], _toml_keys(text)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise _toml_error(exc, path, data) from None
    else:
        try:  # one JSON object, read by json: orjson reads an integer beyond 64 bits as a float
            objects = [(None, json.loads(data, object_pairs_hook=_once))]
            keys = _json_keys_of(data)
        except _Twice as exc:  # json keeps the last, silently (TOML refuses it, as by_name two spellings)
            keys = _json_keys_of(data)
            twice = next((lines[1] for at, lines in keys.items() if at[-1] == exc.args[0] and len(lines) > 1), None)
            raise UabError(f"an option is given twice: {exc.args[0]!r}", path, twice) from None
        except (ValueError, RecursionError) as exc:  # else JSONL (a results file)
            if (bad := _not_utf8(exc, path)) is not None:
                raise bad from None
            data = data.removeprefix(codecs.BOM_UTF8)  # a byte-order mark, as the JSONL readers skip it
            first = next((line for line in data.splitlines() if line.strip()), b"")
            try:
                orjson.loads(first)
            except orjson.JSONDecodeError:  # not JSONL either: one JSON object, broken where json says
                where = _error_line(exc, lambda: _json_text(data), json.loads)
                why = str(getattr(exc, "msg", exc)).removesuffix(" at")  # json's "Invalid control character at"
                raise UabError(f"not JSON: {why}", path, where) from None
            objects = []
            for lineno, line in enumerate(data.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    objects.append((lineno, orjson.loads(line)))
                except orjson.JSONDecodeError as exc:
                    raise UabError(f"not JSON: {exc}", path, lineno) from None
        try:  # json reads an escaped lone surrogate ("\\ud800"), which no output can hold
            json.dumps([o for _, o in objects], ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            half = ascii(exc.object[exc.start])[1:-1]
            raise UabError(f"not JSON text: {half} is half of a UTF-16 surrogate pair", path,
                           _surrogate_line(_json_text(data))) from None
        except RecursionError:  # nested too deep for any option value: the option's check says so
            pass
    from .recommend import numbered, why_none  # recommend imports this module

    try:
        recs, line = numbered(objects, path, required=("N",)), None
    except UabError as exc:  # one JSON object's value: at its line
        raise at_its_line(exc, path, keys) from None
    objects = [o for _, o in objects]
    if recs:
        if not recommendation:
            raise UabError("a `uab simulate -o` results file's recommendation is for `uab run --budget N` "
                           "(to replay it on another pool: `uab simulate POOL --check RESULTS`)", path)
        have = ", ".join(str(r["N"]) for _, r in recs)
        chosen = budget is None  # the file's only recommendation gives the run its budget
        if chosen and len(recs) > 1:
            raise UabError(f"give --budget N to choose its recommendation (it has N = {have})", path)
        if chosen:
            budget = recs[0][1]["N"]
        at = {r["N"]: (lineno, r) for lineno, r in recs}
        if budget not in at:
            raise UabError(f"no recommendation for --budget {budget} (it has N = {have})", path)
        line, found = at[budget][0], at[budget][1].get("settings")
        if not isinstance(found, dict):
            raise UabError(f"the recommendation for N = {budget} has no settings to run", path, line)
        from .evaluation import about  # the results file's header (evaluation imports this module)

        header = about([o for o in objects if isinstance(o, dict)]) or {}
        generation = header.get("generation") if isinstance(header.get("generation"), dict) else None
        digest = at[budget][1].get(TEMPLATE_DIGEST)  # its template's content (a row alone has no header)
        if isinstance(digest, str) and isinstance(found.get("prompt_template"), str):
            generation = {**(generation or {}), "prompt_template": found["prompt_template"], TEMPLATE_DIGEST: digest}
    elif why := why_none(objects):
        raise UabError(why, path)
    else:
        found = objects[0] if len(objects) == 1 else None
    if not isinstance(found, dict):
        raise UabError("expected a JSON/TOML object of option values, a recommendation, or a "
                       "`uab simulate -o` results file", path)
    if not recs and isinstance(found.get("generation"), dict):  # no option is named so: a run's or pool's config
        try:
            configured = Configured(runs.config_settings(found, path, command), found["generation"])
        except UabError as exc:  # an entry's value: at its line
            raise at_its_line(exc, path, keys) from None
        return configured
    if not recs:
        return by_name(found, path, keys=keys)
    nested = None if line is not None else {at[2:]: lines for at, lines in keys.items()  # one JSON object's
                                            if at[:2] == ("recommendation", "settings")}
    values = recommended_values(found, path, line, nested)
    if chosen:
        values = FileValues({**values, "budget": budget}, values.lines)
    return Recommended(values, generation, line)


# A JSON text's tokens that tell where a key is: strings, and the brackets and colons around them.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')


def _json_keys_of(data: bytes) -> dict[tuple, list[int]]:
    """``_json_keys`` of a JSON file's ``data``."""
    return _json_keys(_json_text(data))


def _json_text(data: bytes) -> str:
    """A JSON file's ``data`` as text, in the encoding json reads it in."""
    return data.decode(json.detect_encoding(data), "surrogatepass")


def _surrogate_line(text: str) -> int | None:
    """The line of ``text`` (JSON that parsed) of the first string that holds half a UTF-16
    surrogate pair (``"\\ud800"``, which json reads and no output can hold)."""
    for tok in _JSON_TOKENS.finditer(text):
        if tok.group().startswith('"'):
            try:
                json.loads(tok.group()).encode("utf-8")
            except UnicodeEncodeError:
                return text.count("\n", 0, tok.start()) + 1
    return None


def _json_keys(text: str) -> dict[tuple, list[int]]:
    """The lines of each object key of ``text`` (JSON that parsed) by its path from the top
    (``("generation", "seed")``; an object or array in an array adds its place among them, 0, 1, …:
    two items' keys are apart), each line where it is given."""
    out: dict[tuple, list[int]] = {}
    opened: list[tuple] = []  # per open object or array: its path
    held: list[int] = []  # per open object or array: how many objects and arrays opened in it so far
    key: tuple = ()  # the path of the last key read
    tokens, line, pos = list(_JSON_TOKENS.finditer(text)), 1, 0
    for i, tok in enumerate(tokens):
        t = tok.group()
        if t in "{[":
            opened.append(key if i and tokens[i - 1].group() == ":" else (*opened[-1], held[-1]) if opened else ())
            if held:
                held[-1] += 1
            held.append(0)
        elif t in "}]":
            opened.pop()
            held.pop()
        elif t.startswith('"') and i + 1 < len(tokens) and tokens[i + 1].group() == ":":
            line, pos = line + text.count("\n", pos, tok.start()), tok.start()
            key = (*opened[-1], json.loads(t))
            out.setdefault(key, []).append(line)
    return out


class _Twice(Exception):
    """A key that a JSON object of a settings file gives twice (not a ``ValueError``: no JSONL either)."""


def _once(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object of a settings file, ``_Twice`` where it gives a key twice."""
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _Twice(key)
        seen.add(key)
    return dict(pairs)


def by_name(values: dict, path: str | None = None, line: int | None = None,
            keys: dict[tuple, list[int]] | None = None) -> FileValues:
    """A settings file's option ``values`` by parameter name (``--max-per-question``,
    ``max-per-question`` and ``max_per_question`` alike), each at its line (``line``, a results
    file's row; else its key's in ``keys``, ``_json_keys``'); ``UabError`` naming ``path`` and
    that line for an option given twice."""
    out, spelled = FileValues(), {}
    for key, value in values.items():
        name = param_name(str(key))
        at = line if keys is None else keys.get((key,), [None])[0]
        if name in out:
            raise UabError(f"an option is given twice: {spelled[name]!r} and {key!r}", path, at)
        out[name], spelled[name] = value, key
        if at is not None:
            out.lines[name] = at
    return out


# A key of a TOML file, dotted or not (``a."b".c``; each part bare, "basic" or 'literal'), and the
# header of a [table] or an [[array of tables]].
_TOML_PART = r"""\s*(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*"""
_TOML_KEY = re.compile(rf"({_TOML_PART}(?:\.{_TOML_PART})*)=")
_TOML_TABLE = re.compile(rf"\s*(\[\[?)({_TOML_PART}(?:\.{_TOML_PART})*)\]")
# What a line of TOML (that parsed) holds that may span lines or hide a bracket: a multi-line string (its
# closing quotes may take one or two more), a one-line string or comment, a bracket, a line's end.
_TOML_TOKENS = re.compile(r'"""(?:[^"\\]|\\.|""?(?!"))*"{3,5}|\'\'\'(?:[^\']|\'\'?(?!\'))*\'{3,5}|'
                          r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}\n]', re.DOTALL)


def _toml_keys(text: str) -> dict[tuple, list[int]]:
    """The lines of the keys of ``text`` (TOML that parsed) by their path from the top, as
    ``_json_keys``': a [table]'s at its header, a key's under its table (``[recommendation.settings]``),
    a dotted key's and a one-line inline table's each part (an [[array of tables]]'s keys are no
    option's). A line that opens as a key (or a header) does so only where it starts outside any value:
    not in a multi-line string or array, whatever quotes a comment or a one-line string holds (read in one
    pass: parsing the lines before each line again took a minute for 50 kB of keys)."""
    import tomllib

    out: dict[tuple, list[int]] = {}
    table: tuple | None = ()  # the path of the [table] the lines are in (None: an [[array of tables]]'s)
    starts, offset = set(_toml_line_starts(text)), 0
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        found, outside, offset = _TOML_KEY.match(line), offset in starts, offset + len(line)
        if not (found or line.lstrip().startswith("[")) or not outside:
            continue
        if not found:
            header = _TOML_TABLE.match(line)  # (a header the pattern misses: its keys go unnamed)
            named = _toml_path(header.group(2)) if header else ()
            for n in range(1, len(named)):  # the tables it is in, where no line named them before
                out.setdefault(named[:n], [lineno])
            if named:
                out.setdefault(named, []).append(lineno)
            table = named if header and header.group(1) == "[" else None
            continue
        try:  # the line alone: an inline table's keys too
            entries = tomllib.loads(line)
        except ValueError:  # a value that goes on past the line: its key alone
            entries = tomllib.loads(f"{found.group(1)} = 0")  # a quoted key's escapes as TOML reads them
        for at in _toml_paths(entries) if table is not None else ():
            out.setdefault((*table, *at), []).append(lineno)
    return out


def _toml_path(dotted: str) -> tuple:
    """A dotted key's parts as TOML reads them (``a."b c"`` -> ``("a", "b c")``: escapes read)."""
    import tomllib

    value, path = tomllib.loads(f"{dotted} = 0"), ()
    while isinstance(value, dict):
        ((key, value),) = value.items()
        path = (*path, key)
    return path


def _toml_paths(entries: dict, above: tuple = ()):
    """The path of each key of ``entries`` (a parsed TOML table) and of the tables in it, depth first."""
    for key, value in entries.items():
        yield (*above, key)
        if isinstance(value, dict):
            yield from _toml_paths(value, (*above, key))


def _toml_line_starts(text: str) -> Iterator[int]:
    """Where the lines of ``text`` (TOML that parsed) that start outside any value start."""
    yield 0
    depth = 0
    for token in _TOML_TOKENS.finditer(text):
        t = token.group()
        depth += (t == "[" or t == "{") - (t == "]" or t == "}")
        if t == "\n" and depth == 0:
            yield token.end()


def _toml_error(exc: Exception, path: str, data: bytes) -> UabError:
    """``not a TOML file`` naming ``path`` and the line tomllib names (``(at line 2, column 11)``;
    ``(at end of document)``: the last line of ``data``), else ``_error_line``'s."""
    import tomllib

    if (bad := _not_utf8(exc, path)) is not None:
        return bad
    message = str(exc)
    if found := re.search(r"\s*\(at line (\d+), column \d+\)$", message):
        return UabError(f"not a TOML file: {message[:found.start()]}", path, int(found.group(1)))
    last = len(data.splitlines()) or 1 if message.endswith("(at end of document)") else None
    where = last or _error_line(exc, lambda: data.decode("utf-8-sig"), tomllib.loads)
    return UabError(f"not a TOML file: {message}", path, where)


def _not_utf8(exc: Exception, path: str) -> UabError | None:
    """``errors.not_utf8`` for ``exc``, a failure to read a settings file as UTF-8; None for any other."""
    if isinstance(exc, UnicodeDecodeError) and exc.encoding.startswith("utf-8"):
        return not_utf8(exc.object, exc.start, path)
    return None


def _error_line(exc: Exception, text, load) -> int | None:
    """The line of a settings file that ``exc``, ``load``'s error reading it, is about (``text``:
    reads the file's text; ``load``: parses a text): where the nesting gets deeper than ``load``
    reads (the first line that ends a part of the file too deep for it), or the line a syntax
    error names (None: none)."""
    if isinstance(exc, UnicodeDecodeError):  # a UTF-16 file's bytes hold other \n bytes than its newlines
        return None
    if not isinstance(exc, RecursionError):
        return getattr(exc, "lineno", None)
    lines = text().splitlines(keepends=True)
    low, high = 1, len(lines)  # the whole file recursed: the first line whose lines up to it do
    while low < high:
        mid = (low + high) // 2
        try:
            load("".join(lines[:mid]))
        except RecursionError:
            high = mid
            continue
        except ValueError:  # cut inside what goes on below (or a syntax error there): not deep enough yet
            pass
        low = mid + 1
    return low


def recommended_values(settings: dict, path: str | None = None, line: int | None = None,
                       keys: dict[tuple, list[int]] | None = None) -> FileValues:
    """A recommendation's ``settings`` as `uab run --settings` takes them (``by_name``, each at
    ``line`` or its key's in ``keys``). A recommendation gives -K only above 1: without it, its
    replay drew one Phase-1 sample, and so must the run (not a run directory's recorded -K, which
    would allocate otherwise)."""
    values = by_name(settings, path, line, keys)
    return FileValues({"samples": 1, **values}, values.lines)

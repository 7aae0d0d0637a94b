"""Typed, validated settings built once by the CLI: how samples are drawn (``Generation``),
how the budget is spent (``Allocation``) and how votes are counted (``Vote``).

Provenance, a run directory's config and its resume check all derive from these. Each
field names the command-line option that sets it, so messages can speak in options.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field, fields

from . import __version__, allocation, allocators, voting
from .backends.base import SamplingParams
from .errors import UabError
from .majority import MODELS as VOTE_MODELS
from .signals import DEFAULT_T, SAMPLE_SIGNALS, SCALAR_SIGNALS, SIGNALS

PROMPTS = ("fewshot", "zeroshot")
DTYPES = ("auto", "float32", "bfloat16", "float16")
ENDPOINTS = ("chat", "completions")
# Signals that work without token logprobs, and what each needs.
WITHOUT_LOGPROBS = {"vcs": "--vcs", "vcs-pow": "--vcs", "vote-entropy": "--k 2"}


def _opt(flag: str, default=None, **kw):
    return field(default=default, metadata={"flag": flag}, **kw)


@dataclass(frozen=True)
class Generation:
    """How samples are drawn: recorded in every output's provenance. Changing any of these
    changes the samples, so a run directory holding samples drawn otherwise is refused."""

    backend: str = _opt("--backend", "local")
    model: str = _opt("--model", "")
    seed: int = _opt("--seed", 0)
    temperature: float = _opt("--temperature", 0.9)
    max_tokens: int = _opt("--max-tokens", 1024)
    top_p: float = _opt("--top-p", 1.0)
    prompt: str = _opt("--prompt", "fewshot")
    vcs: bool = _opt("--vcs/--no-vcs", False)

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise UabError(f"--temperature must be >= 0, got {self.temperature}")
        if self.max_tokens < 1:
            raise UabError(f"--max-tokens must be >= 1, got {self.max_tokens}")
        if not 0 < self.top_p <= 1:
            raise UabError(f"--top-p must be in (0, 1], got {self.top_p}")
        if self.prompt not in PROMPTS:
            raise UabError(f"unknown prompt {self.prompt!r}; choose from {', '.join(PROMPTS)}")

    @classmethod
    def build(cls, recorded: dict | None = None, **given) -> Generation:
        """Options given (not ``None``) win over ``recorded`` ones (an earlier stage's
        provenance), which win over the defaults; ``vcs`` defaults to on for cohere."""
        recorded = recorded or {}
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in recorded.items() if k in names and v is not None}
        values.update({k: v for k, v in given.items() if v is not None})
        values.setdefault("vcs", values.get("backend", cls.backend) == "cohere")
        return cls(**values)

    def params(self) -> SamplingParams:
        return SamplingParams(self.temperature, self.max_tokens, self.top_p)

    def info(self) -> dict:
        return {**asdict(self), "version": __version__}


@dataclass(frozen=True)
class Allocation:
    """How the remaining budget is spent (``uab allocate``). Changing these reuses every
    sample already drawn: a run directory grows or shrinks to the new allocation."""

    n: int = _opt("--budget", 1)
    allocator: str = _opt("--allocator", "uab")
    signal: str | None = _opt("--signal")  # None: vcs after a --vcs Phase 1, else anll
    temperature: float = _opt("--signal-temperature", DEFAULT_T)
    seed: int = _opt("--allocation-seed", 0)
    gain: str = _opt("--gain", "algorithm1")
    exit: str | None = _opt("--exit")
    exit_threshold: float | None = _opt("--exit-threshold")
    exit_mode: str = _opt("--exit-mode", "redistribute")
    max_per_question: int | None = _opt("--max-per-question")
    vote_model: str = _opt("--vote-model", "plurality-2")

    def __post_init__(self) -> None:
        if self.n < 1:
            raise UabError(f"--budget must be >= 1 sample per question, got {self.n}")
        if self.allocator in allocators.SIMULATE_ONLY:  # it reads answers a run has yet to draw
            raise UabError(f"{self.allocator!r} is an upper bound for `uab simulate` only; "
                           f"choose from {', '.join(allocators.runnable())}")
        if self.allocator not in allocators.runnable():
            raise UabError(f"unknown allocator {self.allocator!r}; choose from {', '.join(allocators.runnable())}")
        if self.signal is not None and self.signal not in SIGNALS:
            raise UabError(f"unknown signal {self.signal!r}; choose from {', '.join(SIGNALS)}")
        if self.temperature <= 0:
            raise UabError(f"--signal-temperature must be > 0, got {self.temperature}")
        if self.gain not in allocation.GAINS:
            raise UabError(f"unknown gain {self.gain!r}; choose from {', '.join(allocation.GAINS)}")
        if self.exit is not None and self.exit not in allocators.EXITS:
            raise UabError(f"unknown exit {self.exit!r}; choose from {', '.join(allocators.EXITS)}")
        if self.exit is not None and self.allocator not in ("uab", "uab-coverage"):
            raise UabError(f"--exit applies to the uab allocators, not {self.allocator!r}")
        if self.exit_mode not in allocators.EXIT_MODES:
            raise UabError(f"unknown exit mode {self.exit_mode!r}; choose from {', '.join(allocators.EXIT_MODES)}")
        if self.vote_model not in VOTE_MODELS:
            raise UabError(f"unknown vote model {self.vote_model!r}; choose from {', '.join(VOTE_MODELS)}")
        if self.max_per_question is not None and self.max_per_question < 1:
            raise UabError(f"--max-per-question must be >= 1, got {self.max_per_question}")

    def check(self, k: int, signal: str) -> None:
        """Reject settings that do not fit ``k`` Phase-1 samples per question."""
        if k < 1:
            raise UabError(f"--k must be >= 1, got {k}")
        if self.n < k:
            raise UabError(f"budget N={self.n} is smaller than the {k} Phase-1 samples per question")
        if signal == "vote-entropy" and k < 2:
            raise UabError("vote-entropy needs at least 2 Phase-1 samples per question (--k 2)")
        if self.max_per_question is not None and self.max_per_question < k:
            raise UabError(f"--max-per-question must be >= {k}")

    @property
    def uses_signal(self) -> bool:
        return self.allocator not in allocators.SIGNAL_FREE

    def theta(self) -> float | None:
        """The exit threshold in force (None without an exit)."""
        if self.exit is None:
            return None
        return allocators.EXITS[self.exit] if self.exit_threshold is None else self.exit_threshold

    def info(self, signal: str, budget: int, saved: int) -> dict:
        """Provenance of an allocation with the resolved ``signal``."""
        return {"n": self.n, "allocator": self.allocator, "signal": signal, "T": self.temperature,
                "seed": self.seed, "gain": self.gain, "exit": self.exit, "exit_threshold": self.theta(),
                "exit_mode": self.exit_mode, "max_per_question": self.max_per_question, "budget": budget,
                "saved": saved, "vote_model": self.vote_model if self.allocator == "majority" else None}


@dataclass(frozen=True)
class Vote:
    """How votes are counted (``uab vote``): the rule (``voting.RULES``) and, for the rules that
    read sample confidences, the per-sample signal, its temperature and the kept fraction."""

    include_phase1: bool = _opt("--exclude-phase1", True)
    tie_seed: int | None = _opt("--tie-seed")
    rule: str = _opt("--vote-rule", voting.DEFAULT_RULE)
    signal: str | None = _opt("--vote-signal")  # None: the allocation's per-sample signal, else anll/vcs
    temperature: float = _opt("--vote-temperature", DEFAULT_T)
    keep: float = _opt("--vote-keep", voting.DEFAULT_KEEP)

    def __post_init__(self) -> None:
        if self.rule not in voting.RULES:
            raise UabError(f"unknown vote rule {self.rule!r}; choose from {', '.join(voting.RULES)}")
        if self.signal is not None and self.signal not in SAMPLE_SIGNALS:
            raise UabError(f"--vote-signal must be a per-sample signal: {', '.join(SAMPLE_SIGNALS)}; "
                           f"got {self.signal!r}")
        if self.temperature <= 0:
            raise UabError(f"--vote-temperature must be > 0, got {self.temperature}")
        if not 0 < self.keep <= 1:
            raise UabError(f"--vote-keep must be in (0, 1], got {self.keep}")

    @property
    def uses_confidence(self) -> bool:
        return voting.RULES[self.rule].confidence

    def vote_signal(self, default: str = "anll") -> str:
        return self.signal or default

    def info(self) -> dict:
        return self._info

    @functools.cached_property  # one dict shared by every voted record, made once
    def _info(self) -> dict:
        info = {"include_phase1": self.include_phase1, "tie_seed": self.tie_seed, "rule": self.rule}
        if self.uses_confidence:
            info.update(signal=self.signal, temperature=self.temperature)
            if voting.RULES[self.rule].keep:
                info["keep"] = self.keep
        return {**info, "version": __version__}

    def options(self) -> dict:
        """The ``uab run`` option values, by parameter name, that reproduce this vote: the rule
        and the confidence settings it reads (names derived from each field's option)."""
        names = ["rule"] + (["signal", "temperature"] if self.uses_confidence else [])
        names += ["keep"] if self.uses_confidence and voting.RULES[self.rule].keep else []
        values = {**asdict(self), "signal": self.vote_signal()}
        return {param_name(f.metadata["flag"]): values[f.name] for f in fields(self) if f.name in names}


def param_name(flag: str) -> str:
    """The parameter name of an option: ``--vote-keep`` -> ``vote_keep``."""
    return flag.split("/")[0].lstrip("-").replace("-", "_")


def needs_logprobs(signal: str) -> bool:
    return signal in SCALAR_SIGNALS


def without_logprobs(signal: str) -> str:
    """Why ``signal`` cannot run without token logprobs, naming the signals that can."""
    options = ", ".join(f"--signal {s} (with {need})" for s, need in WITHOUT_LOGPROBS.items())
    return (f"signal {signal!r} needs token logprobs and this backend returns none; "
            f"signals that work without them: {options}")


# Spelling of config entries outside the settings objects.
_FLAGS = {"k": "--k", "fingerprint": "input questions", "m": "input questions",
          "generation.version": "uab version"}


def flag(path: str) -> str:
    """The option that sets config entry ``path`` (e.g. ``generation.seed`` -> ``--seed``)."""
    if path in _FLAGS:
        return _FLAGS[path]
    section, _, name = path.partition(".")
    cls = {"generation": Generation, "allocate": Allocation, "vote": Vote}.get(section)
    for f in fields(cls) if cls else ():
        if f.name == name:
            return f.metadata["flag"]
    return path


def load_file(path: str, budget: int | None = None) -> dict:
    """Option values by parameter name from ``--settings FILE``: a JSON or TOML object of
    option names (``max_tokens`` or ``max-tokens``), one ``{"recommendation": ...}`` object,
    or a ``uab simulate -o`` results file, whose recommendation for ``budget`` it takes."""
    import orjson

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UabError(f"cannot read: {exc.strerror}", path) from None
    if path.endswith(".toml"):
        try:
            import tomllib
        except ImportError:  # Python 3.10
            raise UabError("TOML settings need Python >= 3.11; use a JSON file", path) from None
        try:
            objects = [tomllib.loads(data.decode("utf-8"))]
        except (ValueError, UnicodeDecodeError) as exc:
            raise UabError(f"not a TOML file: {exc}", path) from None
    else:
        try:
            objects = [orjson.loads(data)]  # one JSON object
        except orjson.JSONDecodeError:  # else JSONL (a results file)
            objects = []
            for lineno, line in enumerate(data.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    objects.append(orjson.loads(line))
                except orjson.JSONDecodeError as exc:
                    raise UabError(f"not JSON: {exc}", path, lineno) from None
    recs = [o["recommendation"] for o in objects if isinstance(o, dict) and isinstance(o.get("recommendation"), dict)]
    if recs:
        at = [r for r in recs if budget is None or r.get("N") == budget]
        if not at:
            have = ", ".join(str(r.get("N")) for r in recs)
            raise UabError(f"no recommendation for --budget {budget} (it has N = {have})", path)
        found = at[0].get("settings")
    else:
        found = objects[0] if len(objects) == 1 else None
    if not isinstance(found, dict):
        raise UabError("expected a JSON/TOML object of option values, a recommendation, or a "
                       "`uab simulate -o` results file", path)
    return {param_name(str(k)): v for k, v in found.items()}

"""What samples cost: their tokens (completion and prompt), per stage and per run or pool (a run
or pool directory's ``summary.json``), and money at the prices a user gives."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from . import __version__
from .errors import UabError
from .records import STAGES


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _minus(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a - b


@dataclass
class Tokens:
    """Samples and their tokens: ``completion_tokens`` from each sample's ``n_tokens``,
    ``prompt_tokens`` from its ``prompt_tokens``; a sum is ``None`` once a sample lacks its
    count (a backend that does not report it, a sample drawn before uab counted it)."""

    samples: int = 0
    completion_tokens: int | None = 0
    prompt_tokens: int | None = 0

    def add(self, samples: Iterable[dict]) -> Tokens:
        """Count ``samples`` in (returns self)."""
        n, out, into = 0, self.completion_tokens, self.prompt_tokens
        for s in samples:
            n += 1
            c, p = s.get("n_tokens"), s.get("prompt_tokens")
            out = None if out is None or c is None else out + c
            into = None if into is None or p is None else into + p
        self.samples, self.completion_tokens, self.prompt_tokens = self.samples + n, out, into
        return self

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.samples + other.samples, _plus(self.completion_tokens, other.completion_tokens),
                      _plus(self.prompt_tokens, other.prompt_tokens))

    def __sub__(self, other: Tokens) -> Tokens:
        return Tokens(self.samples - other.samples, _minus(self.completion_tokens, other.completion_tokens),
                      _minus(self.prompt_tokens, other.prompt_tokens))

    def to_json(self) -> dict:
        return {"samples": self.samples, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}


MAX_PRICE = 1e12  # per million tokens: a price above it is no price (a typo); 1e308 overflowed costs to null


def _is_price(value) -> bool:
    """Whether ``value`` is a price ``Price`` takes: a number from 0 to ``MAX_PRICE`` (NaN is none)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MAX_PRICE


@dataclass(frozen=True)
class Price:
    """Prices per million tokens: ``input`` (prompt) and ``output`` (completion); ``source``: the
    file they were read from, where not given (a pool's ``summary.json``)."""

    input: float
    output: float
    source: str | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> Price:
        """``IN,OUT`` per million tokens, e.g. ``0.15,0.6``."""
        parts = [t.strip() for t in text.split(",")]
        try:
            values = [float(t) + 0.0 for t in parts]  # + 0.0: "-0" is 0, not a price shown as -0
        except ValueError:
            values = []
        if len(values) != 2 or not all(map(_is_price, values)):
            raise UabError(f"--price takes IN,OUT: two finite non-negative prices per million tokens, each at most "
                           f"{MAX_PRICE:g}, got {text!r}")
        return cls(*values)

    def to_json(self) -> dict:
        return {"input": self.input, "output": self.output, "per": "1M tokens",
                **({"from": self.source} if self.source else {})}

    @classmethod
    def recorded(cls, value) -> Price | None:
        """A ``to_json`` read back (a results file's header); None for anything else."""
        if isinstance(value, dict) and all(_is_price(value.get(k)) for k in ("input", "output")):
            return cls(float(value["input"]), float(value["output"]))
        return None

    def of(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """The money ``prompt_tokens`` and ``completion_tokens`` cost (None if one is unknown)."""
        if prompt_tokens is None or completion_tokens is None:
            return None
        # 12 significant digits: the prices' own precision, without float noise (0.00037259999999999995)
        return float(f"{(prompt_tokens * self.input + completion_tokens * self.output) / 1e6:.12g}")


SAMPLING = ("phase1", "phase2")  # the stages that draw samples: the budget
POOL = "pool"  # a pool directory's one sampling stage (``pool_summary``)
_DRAWING = {"phase1": "phase 1", "phase2": "phase 2", POOL: "sampling"}  # the stages that draw, as ``describe`` names them
JUDGE_VERDICTS = ("hard", "easy", "unparsed")  # what ``pipeline.judge`` counts; an unparsed verdict is labelled hard


def judge_skipped(why: str) -> dict:
    """The judge's record where it was not asked (``why``): no calls, no verdicts."""
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, **dict.fromkeys(JUDGE_VERDICTS, 0), "skipped": why}


def judge_line(judge: dict) -> str:
    """The judge's calls and verdicts in words (a verdict an earlier release did not count when it was 0 is 0)."""
    if judge.get("skipped"):
        return f"judge: not asked ({judge['skipped']})"
    unparsed = judge.get("unparsed", 0)
    return (f"judge: {judge.get('calls')} calls (not in the budget): {judge.get('hard', 0)} hard, "
            f"{judge.get('easy', 0)} easy, {unparsed} unparsed" + (" (counted hard)" if unparsed else ""))


def run_summary(held: dict[str, Tokens], drawn: dict[str, Tokens], seconds: dict[str, float], total_seconds: float,
                judge: dict | None, votes, about: dict, price: Price | None, probes: int, unscored: int) -> dict:
    """A run directory's ``summary.json``: per stage the samples it holds with their prompt and
    completion tokens, what this invocation ``drawn`` of them (the rest were ``reused`` from the
    directory) and its wall-clock ``seconds``; the totals over the sampling stages; the judge's
    calls apart (they are not samples: one per question, the call behind its label, wherever it was
    asked); accuracy and coverage from ``votes`` (a ``pipeline.VoteSummary``), with its counts, the
    questions a confidence rule voted by majority among them; ``unscored``: the questions without a
    score, counted as score 5 for want of a verbalised confidence (as p = 0.5 under a log-prob signal:
    every Phase-1 reply filtered; under an allocator that reads no p too); ``about``: what produced
    the run (settings, provenance)."""
    stages: dict[str, dict] = {}
    if judge is not None:
        calls = {k: judge.get(k) for k in ("calls", "prompt_tokens", "completion_tokens")}
        verdicts = {k: judge.get(k, 0) for k in JUDGE_VERDICTS}
        stages["judge"] = {**calls, **verdicts, "reused": bool(judge.get("reused")), "seconds": seconds.get("judge", 0.0),
                           **({"skipped": judge["skipped"]} if judge.get("skipped") else {})}
    for name in STAGES:
        stages[name] = _drawing(held[name], drawn[name], seconds.get(name, 0.0)) if name in SAMPLING \
            else {"seconds": seconds.get(name, 0.0)}
    stages["phase1"]["probes"] = probes
    total_held, total_drawn = held["phase1"] + held["phase2"], drawn["phase1"] + drawn["phase2"]
    out = {"questions": votes.questions, "stages": stages, "total": _drawing(total_held, total_drawn, total_seconds),
           "accuracy": votes.accuracy, "coverage": votes.any_correct / votes.graded if votes.graded else None,
           "graded": votes.graded, "correct": votes.correct, "no_answer": votes.no_answer,
           "cut": votes.cut, "filtered": votes.filtered, "vote_fallbacks": votes.fallbacks, "unscored": unscored}
    if price is not None:
        out |= _priced(price, total_held, total_drawn)
        if judge is not None:
            out["cost"]["judge"] = price.of(judge.get("prompt_tokens"), judge.get("completion_tokens"))
    out["uab"] = {**about, "version": __version__}
    return out


def pool_summary(held: Tokens, drawn: Tokens, seconds: float, total_seconds: float, questions: int, about: dict,
                 price: Price | None = None) -> dict:
    """A pool directory's ``summary.json``, in a run summary's terms: its one sampling stage,
    ``pool``, with the samples ``pool.jsonl`` holds and their tokens, what this invocation ``drawn``
    of them (the rest were ``reused`` from the directory) and the seconds it drew for; the total
    (its seconds include loading the model); money at ``price``; ``about``: what drew it."""
    out = {"questions": questions, "stages": {POOL: _drawing(held, drawn, seconds)},
           "total": _drawing(held, drawn, total_seconds)}
    if price is not None:
        out |= _priced(price, held, drawn)
    out["uab"] = {**about, "version": __version__}
    return out


def _drawing(held: Tokens, drawn: Tokens, seconds: float) -> dict:
    """A sampling stage's (or a total's) entry: the samples held with their tokens, those drawn
    now and those reused (held, not drawn now), and the seconds."""
    return {**held.to_json(), "drawn": drawn.to_json(), "reused": (held - drawn).to_json(), "seconds": seconds}


def _priced(price: Price, held: Tokens, drawn: Tokens) -> dict:
    """A summary's ``price`` and ``cost``: the money its samples cost, and those drawn now."""
    return {"price": price.to_json(), "cost": {"samples": price.of(held.prompt_tokens, held.completion_tokens),
                                               "drawn": price.of(drawn.prompt_tokens, drawn.completion_tokens)}}


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def describe(summary: dict) -> list[str]:
    """The gist of a run or pool summary, a few lines for the terminal."""
    lines = []
    for name, stage in summary["stages"].items():
        if name in _DRAWING:
            samples_reused = stage["reused"]["samples"]
            lines.append(f"{_DRAWING[name]}: {stage['samples']} samples, {_count(stage['completion_tokens'])} completion + "
                         f"{_count(stage['prompt_tokens'])} prompt tokens"
                         + (f" ({samples_reused} reused)" if samples_reused else "") + f", {stage['seconds']:.1f} s")
        elif name == "judge" and stage.get("skipped"):
            lines.append(judge_line(stage))
        elif name == "judge":
            lines.append(f"{judge_line(stage)}; {_count(stage['completion_tokens'])} "
                         f"completion + {_count(stage['prompt_tokens'])} prompt tokens"
                         + (" (labels reused)" if stage["reused"] else f", {stage['seconds']:.1f} s"))
    t = summary["total"]
    lines.append(f"total: {t['samples']} samples, {_count(t['completion_tokens'])} completion + "
                 f"{_count(t['prompt_tokens'])} prompt tokens; drawn now {t['drawn']['samples']} "
                 f"({_count(t['drawn']['completion_tokens'])} completion tokens) in {t['seconds']:.1f} s")
    cost = summary.get("cost")
    if cost:
        labels_reused = summary["stages"].get("judge", {}).get("reused")  # paid for by an earlier run
        whose = "the pool's" if POOL in summary["stages"] else "the run's"
        names = {"samples": f"{whose} samples", "drawn": "drawn now",
                 "judge": "judge calls (an earlier run's)" if labels_reused else "judge calls"}
        money = ", ".join(f"{names[k]} {'?' if v is None else f'{v:.6g}'}" for k, v in cost.items())
        lines.append(f"cost at {summary['price']['input']:g} in / {summary['price']['output']:g} out per 1M tokens: "
                     f"{money}")
    return lines

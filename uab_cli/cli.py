"""The ``uab`` command line: parses options, calls one library function, prints summaries.

Data goes to stdout or ``-o``; summaries and progress go to stderr. User errors exit 2,
backend failures exit 1.
"""

from __future__ import annotations

import dataclasses
import gc
import inspect
import os
import re
import sys
import warnings
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import __version__, allocation, allocators, pipeline, runs, voting
from .backends import BACKENDS, DEFAULT_BACKEND, backend_factory
from .convert import PRESETS
from .errors import BackendError, UabError
from .majority import MODELS as VOTE_MODELS
from .progress import StageProgress
from .records import load_records, write_records
from .settings import DTYPES, ENDPOINTS, PROMPTS, Allocation, Generation, Vote, load_file
from .signals import DEFAULT_T, SAMPLE_SIGNALS, SIGNALS

err = Console(stderr=True)
RESUMABLE = ("run", "pool")  # commands that keep finished samples in a directory


class _Group(typer.core.TyperGroup):
    """One error boundary: UabError → exit 2, BackendError → exit 1, Ctrl-C → exit 130,
    each with a hint true to the command that ran."""

    def resolve_command(self, ctx, args):
        name, cmd, rest = super().resolve_command(ctx, args)
        ctx.meta["uab.command"] = name
        return name, cmd, rest

    def invoke(self, ctx):
        resumable = lambda: ctx.meta.get("uab.command") in RESUMABLE  # noqa: E731
        try:
            return super().invoke(ctx)
        except UabError as exc:
            err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except BackendError as exc:
            err.print(f"[red]backend error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            err.print("Finished samples are kept; re-run the same command to resume." if resumable()
                      else "Nothing was written.")
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err.print("interrupted: finished samples are kept; re-run the same command to resume."
                      if resumable() else "interrupted: nothing was written.")
            raise typer.Exit(130) from None

    def format_commands(self, ctx, formatter):
        # Whole first lines of the docstrings: click would cut them at ~45 characters.
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and cmd.help and not cmd.short_help:
                cmd.short_help = cmd.help.strip().splitlines()[0]
        super().format_commands(ctx, formatter)


class _Command(typer.core.TyperCommand):
    """Help in one plain style: ``INPUT`` not ``{INPUT}``, ``INTEGER`` not ``<int>``, and
    every default as ``[default: ...]`` (typer brackets the descriptive ones)."""

    _PLAIN = ((re.compile(r"\{([A-Z_]+)\}"), r"\1"),
              (re.compile(r"\[default:(\s+)\(([^()]*)\)\]"), r"[default:\1\2]"),
              (re.compile(r"(?m)^(  [A-Z]+) <str>"), r"\1"))
    _METAVARS = {"<str>": "TEXT", "<int>": "INTEGER", "<float>": "FLOAT", "<int range>": "INTEGER",
                 "<float range>": "FLOAT"}

    def format_help(self, ctx, formatter):
        for param in self.params:
            shown = param.display_type(ctx)
            if param.metavar is None and shown in self._METAVARS:
                param.metavar = self._METAVARS[shown]
        inner = ctx.make_formatter()
        super().format_help(ctx, inner)
        text = inner.getvalue()
        for pattern, plain in self._PLAIN:
            text = pattern.sub(plain, text)
        formatter.write(text)


app = typer.Typer(cls=_Group, no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Spend a fixed sampling budget where it helps: uncertainty-aware budget allocation.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"uab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    """Stages compose in shell pipes: uab phase1 q.jsonl | uab allocate - --budget 4 | uab phase2 - | uab vote -"""
    warnings.showwarning = _show_warning
    # Records are millions of small dicts and hold no reference cycles; frequent cyclic
    # collections would double the time spent parsing them.
    gc.set_threshold(200_000, 50, 1000)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    err.print(f"[yellow]warning:[/yellow] {escape(str(message))}", highlight=False, soft_wrap=True)


# --- shared options ----------------------------------------------------------------
# Choices are checked when parsed and listed in --help. Defaults show as [default: ...];
# options whose default depends on something else say so in the same brackets.

BackendName = Literal[tuple(BACKENDS)]
AllocatorName = Literal[tuple(allocators.runnable())]
SignalName = Literal[SIGNALS]
GainName = Literal[tuple(allocation.GAINS)]
ExitName = Literal[tuple(allocators.EXITS)]
ExitModeName = Literal[allocators.EXIT_MODES]
VoteModelName = Literal[VOTE_MODELS]
PromptName = Literal[PROMPTS]
EndpointName = Literal[ENDPOINTS]
DtypeName = Literal[DTYPES]
PresetName = Literal[tuple(PRESETS)]
VoteRuleName = Literal[tuple(voting.RULES)]
VoteSignalName = Literal[SAMPLE_SIGNALS]

_GEN = {f.name: f.default for f in dataclasses.fields(Generation)}


def _backend_default(backend: str, option: str):
    return inspect.signature(BACKENDS[backend]()).parameters[option].default


In = Annotated[str, typer.Argument(metavar="INPUT", help="Input JSONL ('-' = stdin).", show_default=False)]
Out = Annotated[str, typer.Option("-o", "--output", help="Output JSONL ('-' = stdout).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or summary on stderr.")]
Force = Annotated[bool, typer.Option("--force", help="Discard samples in --out drawn with other generation settings.")]

# Generation options of phase1, run and pool; phase2 takes Phase 1's unless given.
BackendOpt = Annotated[BackendName, typer.Option(help="Model backend.")]
Model = Annotated[str | None, typer.Option(help="Model: hub id, local dir or .gguf.",
                                              show_default="SmolLM2-135M-Instruct, shipped")]
Seed = Annotated[int, typer.Option(help="Run seed; each sample's seed derives from (seed, id, index).")]
Temp = Annotated[float, typer.Option("--temperature", help="Sampling temperature.")]
MaxTok = Annotated[int, typer.Option(help="Max new tokens per sample.")]
TopP = Annotated[float, typer.Option(help="Nucleus sampling top-p.")]
Prompt = Annotated[PromptName, typer.Option(help="Prompt style.")]
Vcs = Annotated[bool | None, typer.Option("--vcs/--no-vcs", help="Ask for a verbalised confidence.",
                                             show_default="on for cohere")]
_P1 = "Phase 1's"
BackendP2 = Annotated[BackendName | None, typer.Option("--backend", help="Model backend.", show_default=_P1)]
ModelP2 = Annotated[str | None, typer.Option("--model", help="Model.", show_default=_P1)]
SeedP2 = Annotated[int | None, typer.Option("--seed", help="Run seed.", show_default=_P1)]
TempP2 = Annotated[float | None, typer.Option("--temperature", help="Sampling temperature.", show_default=_P1)]
MaxTokP2 = Annotated[int | None, typer.Option("--max-tokens", help="Max new tokens per sample.", show_default=_P1)]
TopPP2 = Annotated[float | None, typer.Option("--top-p", help="Nucleus sampling top-p.", show_default=_P1)]
PromptP2 = Annotated[PromptName | None, typer.Option("--prompt", help="Prompt style.", show_default=_P1)]

# Backend options: an error with a backend that does not take them.
BaseUrl = Annotated[str | None, typer.Option(help="Server URL (openai, cohere).", show_default="OPENAI_BASE_URL / Cohere's")]
ApiKey = Annotated[str | None, typer.Option(help="API key (prefer OPENAI_API_KEY / CO_API_KEY).", show_default=False)]
Conc = Annotated[int, typer.Option(min=1, help="Parallel requests (openai, cohere).")]
Rpm = Annotated[float | None, typer.Option(help="Max requests per minute (openai, cohere).", show_default="unlimited")]
Timeout = Annotated[float, typer.Option(help="Per-request timeout in seconds (openai, cohere).")]
Retries = Annotated[int, typer.Option(min=1, help="Attempts per request before giving up (openai, cohere).")]
Endpoint = Annotated[EndpointName, typer.Option(help="openai: chat or raw completions.")]
TP = Annotated[int, typer.Option(help="vllm: tensor parallel size.")]
GMU = Annotated[float, typer.Option(help="vllm: GPU memory utilisation.")]
MML = Annotated[int | None, typer.Option(help="vllm: max model length.", show_default="the model's")]
Dtype = Annotated[DtypeName, typer.Option(help="vllm/local: dtype (auto: float32 on CPU).")]
BACKEND_OPTIONS = ("base_url", "api_key", "concurrency", "rpm", "timeout", "retries", "endpoint",
                   "tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "dtype")
_D = {"concurrency": _backend_default("openai", "concurrency"), "timeout": _backend_default("openai", "timeout"),
      "retries": 6, "endpoint": _backend_default("openai", "endpoint"),
      "tp": _backend_default("vllm", "tensor_parallel_size"), "gmu": _backend_default("vllm", "gpu_memory_utilization")}

_A = {f.name: f.default for f in dataclasses.fields(Allocation)}
Budget = Annotated[int, typer.Option("--budget", "-N", help="N: samples per question on average (B = N·M).",
                                     show_default=False)]
AllocatorOpt = Annotated[AllocatorName, typer.Option(help="Allocator (see README).")]
Signal = Annotated[SignalName | None, typer.Option(help="Uncertainty signal.",
                                                      show_default="vcs after a --vcs Phase 1, else anll")]
SigT = Annotated[float, typer.Option("--signal-temperature", "-T", help="T in p = exp(-s/T).")]
Gain = Annotated[GainName, typer.Option(help="algorithm1: p(1-p)^e (paper); coverage: p(1-p)^(1+e).")]
Exit = Annotated[ExitName | None, typer.Option("--exit", help="Threshold exit on top of uab.", show_default="none")]
ExitT = Annotated[float | None, typer.Option(help="Exit threshold θ.", show_default="hard 0.5, easy 0.7")]
ExitMode = Annotated[ExitModeName, typer.Option(help="What an exit does with the budget it frees.")]
Cap = Annotated[int | None, typer.Option(help="At most this many samples per question in total.",
                                            show_default="no cap")]
VoteModel = Annotated[VoteModelName, typer.Option(help="The majority allocator's vote model.")]
AllocSeed = Annotated[int, typer.Option("--allocation-seed", help="Seed of the random allocator.")]
NoP1 = Annotated[bool, typer.Option("--exclude-phase1", help="Vote over Phase-2 samples only (ablation).")]
TieSeed = Annotated[int | None, typer.Option(help="Break majority ties at random with this seed.",
                                                show_default="earliest answer")]
_V = {f.name: f.default for f in dataclasses.fields(Vote)}
VoteRule = Annotated[VoteRuleName, typer.Option(help="Vote rule: " + "; ".join(
    f"{r.name}: {r.summary}" for r in voting.RULES.values()) + ".")]
VoteSignal = Annotated[VoteSignalName | None, typer.Option(
    help="Per-sample signal the confidence rules read.", show_default="the allocation's signal, else anll (vcs after --vcs)")]
VoteT = Annotated[float, typer.Option(help="Temperature of the confidence: w = exp(-s/T) (weighted).")]
VoteKeep = Annotated[float, typer.Option(help="filtered: the fraction of a question's samples kept.")]
SettingsFile = Annotated[str | None, typer.Option(
    "--settings", help="JSON/TOML file of option values, or a `uab simulate -o` results file (its recommendation "
    "for --budget); options given on the command line win.", show_default=False)]


def _given(ctx: typer.Context, names) -> dict:
    """The parameters among ``names`` that the user set (not left at their default), on the
    command line or in a ``--settings`` file."""
    from_file = ctx.meta.get("uab.settings", ())
    return {n: ctx.params[n] for n in names
            if n in from_file or ctx.get_parameter_source(n).name not in ("DEFAULT", "DEFAULT_MAP")}


def _settings(ctx: typer.Context, path: str | None) -> dict:
    """``ctx.params`` with the values of a ``--settings`` file for every option left at its
    default (the command line wins); unknown names are an error."""
    if path is None:
        return ctx.params
    loaded = load_file(path, ctx.params.get("budget"))
    unknown = sorted(set(loaded) - set(ctx.params) - {"settings"})
    if unknown:
        raise UabError(f"unknown option{'s' * (len(unknown) > 1)} for `uab {ctx.info_name}`: "
                       f"{', '.join(unknown)}", path)
    taken = {n: v for n, v in loaded.items() if ctx.get_parameter_source(n).name in ("DEFAULT", "DEFAULT_MAP")}
    ctx.meta["uab.settings"] = set(taken)
    ctx.params.update(taken)
    return ctx.params


def _vote(p: dict) -> Vote:
    return Vote(not p["exclude_phase1"], p["tie_seed"], p["vote_rule"], p["vote_signal"], p["vote_temperature"],
                p["vote_keep"])


def _backend(ctx: typer.Context, gen: Generation):
    """The backend a command asked for, options checked now; it loads when called."""
    on_status = None if ctx.params.get("quiet") else _status
    return backend_factory(gen.backend, gen.model or None, on_status=on_status, **_given(ctx, BACKEND_OPTIONS))


def _alloc(p: dict) -> Allocation:
    return Allocation(p["budget"], p["allocator"], p["signal"], p["signal_temperature"], p["allocation_seed"],
                      p["gain"], p["exit"], p["exit_threshold"], p["exit_mode"], p["max_per_question"],
                      p["vote_model"])


def _gen(p: dict, recorded: dict | None = None) -> Generation:
    return Generation.build(recorded, **{f.name: p.get(f.name) for f in dataclasses.fields(Generation)})


def _stdin_hint(path: str) -> None:
    if path == "-" and sys.stdin.isatty():
        err.print("reading records from stdin (a terminal): pipe a file in or give its path; Ctrl-D ends input")


def _load(path: str, stage: str) -> tuple[list[dict], list[int]]:
    _stdin_hint(path)
    return load_records(path, stage)


class _Bar(StageProgress):
    """Sampling progress on stderr: a bar on a terminal, paced plain lines otherwise, nothing with -q."""

    def __init__(self, quiet: bool):
        super().__init__(err, quiet)


def _status(line: str) -> None:
    """Backend status lines (a first run's model conversion) on stderr."""
    err.print(line, markup=False, highlight=False, soft_wrap=True)


# --- stage commands ----------------------------------------------------------------


@app.command(cls=_Command)
def phase1(
    ctx: typer.Context, input: In, output: Out = "-",
    k: Annotated[int, typer.Option("--k", help="Phase-1 samples per question (2 for vote entropy).")] = 1,
    vcs: Vcs = None,
    judge: Annotated[bool, typer.Option("--judge", help="Also label questions easy/hard for --allocator judge.")] = False,
    backend: BackendOpt = DEFAULT_BACKEND, model: Model = None, seed: Seed = _GEN["seed"],
    temperature: Temp = _GEN["temperature"], max_tokens: MaxTok = _GEN["max_tokens"], top_p: TopP = _GEN["top_p"],
    prompt: Prompt = _GEN["prompt"], base_url: BaseUrl = None, api_key: ApiKey = None,
    concurrency: Conc = _D["concurrency"], rpm: Rpm = None, timeout: Timeout = _D["timeout"],
    retries: Retries = _D["retries"], endpoint: Endpoint = _D["endpoint"], tensor_parallel_size: TP = _D["tp"],
    gpu_memory_utilization: GMU = _D["gmu"], max_model_len: MML = None, dtype: Dtype = "auto", quiet: Quiet = False,
) -> None:
    """Phase 1: draw k samples per question and record their uncertainty statistics."""
    records, _ = _load(input, "question")
    gen = _gen(ctx.params)
    with _backend(ctx, gen)() as be, _Bar(quiet) as bar:
        gen = dataclasses.replace(gen, model=gen.model or be.model)
        if judge:
            counts = pipeline.judge(records, be, gen)
            if not quiet:
                err.print(f"judge: {counts}")
        bar.stage("phase1", len(records) * k)
        pipeline.phase1(records, be, gen, k, bar.sample)
    write_records(output, records)


@app.command(cls=_Command)
def allocate(
    input: In, budget: Budget, output: Out = "-", allocator: AllocatorOpt = _A["allocator"], signal: Signal = None,
    signal_temperature: SigT = DEFAULT_T, gain: Gain = _A["gain"], exit: Exit = None,
    exit_threshold: ExitT = None, exit_mode: ExitMode = _A["exit_mode"], max_per_question: Cap = None,
    vote_model: VoteModel = _A["vote_model"], allocation_seed: AllocSeed = 0, quiet: Quiet = False,
) -> None:
    """Spend the remaining budget: set p and extra (Phase-2 samples) on every question."""
    settings = _alloc(locals())
    _stdin_hint(input)
    summary = pipeline.allocate_file(input, settings, output)
    if not quiet:
        _print_allocation(summary)


@app.command(cls=_Command)
def phase2(
    ctx: typer.Context, input: In, output: Out = "-", backend: BackendP2 = None, model: ModelP2 = None,
    seed: SeedP2 = None, temperature: TempP2 = None, max_tokens: MaxTokP2 = None, top_p: TopPP2 = None,
    prompt: PromptP2 = None, base_url: BaseUrl = None, api_key: ApiKey = None,
    concurrency: Conc = _D["concurrency"], rpm: Rpm = None, timeout: Timeout = _D["timeout"],
    retries: Retries = _D["retries"], endpoint: Endpoint = _D["endpoint"], tensor_parallel_size: TP = _D["tp"],
    gpu_memory_utilization: GMU = _D["gmu"], max_model_len: MML = None, dtype: Dtype = "auto", quiet: Quiet = False,
) -> None:
    """Phase 2: draw each question's extra samples (generation settings default to Phase 1's)."""
    records, _ = _load(input, "allocated")
    gen = _gen({**ctx.params, "vcs": None}, pipeline.generation_of(records[0]))
    with _backend(ctx, gen)() as be, _Bar(quiet) as bar:
        bar.stage("phase2", sum(r["extra"] for r in records))
        pipeline.phase2(records, be, gen, bar.sample)
    write_records(output, records)


@app.command(cls=_Command)
def vote(ctx: typer.Context, input: In, output: Out = "-", exclude_phase1: NoP1 = False, tie_seed: TieSeed = None,
         vote_rule: VoteRule = _V["rule"], vote_signal: VoteSignal = None, vote_temperature: VoteT = _V["temperature"],
         vote_keep: VoteKeep = _V["keep"], settings: SettingsFile = None, quiet: Quiet = False) -> None:
    """Vote over all samples (majority, or a confidence rule) and grade against gold when present (streams)."""
    rule = _vote(_settings(ctx, settings))
    _stdin_hint(input)
    summary = pipeline.vote_file(input, rule, output)
    if not quiet:
        _print_votes(summary)


@app.command(cls=_Command)
def run(
    ctx: typer.Context, input: In, budget: Budget,
    out: Annotated[str, typer.Option("--out", help="Run directory: resumable; reruns with other allocation "
                                     "settings reuse its samples.", show_default=False)],
    force: Force = False, k: Annotated[int, typer.Option("--k", help="Phase-1 samples per question.")] = 1,
    vcs: Vcs = None, allocator: AllocatorOpt = _A["allocator"], signal: Signal = None,
    signal_temperature: SigT = DEFAULT_T, gain: Gain = _A["gain"], exit: Exit = None, exit_threshold: ExitT = None,
    exit_mode: ExitMode = _A["exit_mode"], max_per_question: Cap = None, vote_model: VoteModel = _A["vote_model"],
    allocation_seed: AllocSeed = 0, exclude_phase1: NoP1 = False, tie_seed: TieSeed = None,
    vote_rule: VoteRule = _V["rule"], vote_signal: VoteSignal = None, vote_temperature: VoteT = _V["temperature"],
    vote_keep: VoteKeep = _V["keep"], settings: SettingsFile = None, backend: BackendOpt = DEFAULT_BACKEND, model: Model = None, seed: Seed = _GEN["seed"],
    temperature: Temp = _GEN["temperature"], max_tokens: MaxTok = _GEN["max_tokens"], top_p: TopP = _GEN["top_p"],
    prompt: Prompt = _GEN["prompt"], base_url: BaseUrl = None, api_key: ApiKey = None,
    concurrency: Conc = _D["concurrency"], rpm: Rpm = None, timeout: Timeout = _D["timeout"],
    retries: Retries = _D["retries"], endpoint: Endpoint = _D["endpoint"], tensor_parallel_size: TP = _D["tp"],
    gpu_memory_utilization: GMU = _D["gmu"], max_model_len: MML = None, dtype: Dtype = "auto", quiet: Quiet = False,
) -> None:
    """Phase 1 → allocate → Phase 2 → vote with one loaded model; every stage saved in --out."""
    params = _settings(ctx, settings)
    alloc, votes = _alloc(params), _vote(params)
    records, _ = _load(input, "question")
    gen = _gen(params)
    with _Bar(quiet) as bar:
        result = runs.run(records, _backend(ctx, gen), gen, out, alloc, votes, params["k"], force, input, bar.stage,
                          bar.sample, None if quiet else _print_allocation)
    if not quiet:
        if result.judge:
            err.print(f"judge calls (not in the budget): {result.judge}")
        err.print(f"samples: planned {result.planned}, drawn now {result.drawn}, reused {result.restored}")
        _print_votes(result.votes)
        err.print(f"outputs in {out}/: {', '.join(runs.STAGE_FILES)}")


@app.command(cls=_Command)
def convert(
    input: Annotated[str, typer.Argument(metavar="INPUT", help="Benchmark export: .jsonl, .json or .parquet.",
                                         show_default=False)],
    output: Out = "-",
    preset: Annotated[PresetName | None, typer.Option(help="Benchmark preset.", show_default="question/answer/choices/id columns by name")] = None,
    question_field: Annotated[str | None, typer.Option(help="Column holding the question.", show_default=False)] = None,
    answer_field: Annotated[str | None, typer.Option(help="Column holding the gold answer.", show_default=False)] = None,
    choices_field: Annotated[str | None, typer.Option(help="Column holding the list of choices.", show_default=False)] = None,
    id_field: Annotated[str | None, typer.Option(help="Column holding a unique id.", show_default=False)] = None,
) -> None:
    """Convert a benchmark export into uab question records."""
    from .convert import convert_records, read_table

    write_records(output, convert_records(read_table(input), preset, question_field, answer_field,
                                          choices_field, id_field, path=input))


@app.command(cls=_Command)
def pool(
    ctx: typer.Context, input: In,
    samples: Annotated[int, typer.Option("--samples", "-K", min=1, help="Samples per question.", show_default=False)],
    out: Annotated[str, typer.Option("--out", help="Directory for pool.jsonl: resumable; a larger -K adds samples.",
                                     show_default=False)],
    force: Force = False, vcs: Vcs = None,
    backend: BackendOpt = DEFAULT_BACKEND, model: Model = None, seed: Seed = _GEN["seed"],
    temperature: Temp = _GEN["temperature"], max_tokens: MaxTok = _GEN["max_tokens"], top_p: TopP = _GEN["top_p"],
    prompt: Prompt = _GEN["prompt"], base_url: BaseUrl = None, api_key: ApiKey = None,
    concurrency: Conc = _D["concurrency"], rpm: Rpm = None, timeout: Timeout = _D["timeout"],
    retries: Retries = _D["retries"], endpoint: Endpoint = _D["endpoint"], tensor_parallel_size: TP = _D["tp"],
    gpu_memory_utilization: GMU = _D["gmu"], max_model_len: MML = None, dtype: Dtype = "auto", quiet: Quiet = False,
) -> None:
    """Draw K samples per question once, for `uab simulate` (resumable like `uab run`)."""
    records, _ = _load(input, "question")
    gen = _gen(ctx.params)
    with _Bar(quiet) as bar:
        bar.stage("pool", len(records) * samples)
        drawn = runs.pool(records, _backend(ctx, gen), gen, out, samples, force, input, bar.sample)
    if not quiet:
        err.print(f"pool: {len(records)} questions × {samples} samples in {out}/pool.jsonl ({drawn} drawn now)")


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _ints(text: str, option: str) -> list[int]:
    try:
        return [int(t) for t in _csv(text)]
    except ValueError:
        raise UabError(f"{option} takes comma-separated integers, got {text!r}") from None


@app.command(cls=_Command)
def simulate(
    pool: Annotated[str, typer.Argument(metavar="POOL", help="Pool JSONL from `uab pool` (or its run directory).",
                                        show_default=False)],
    output: Out = "-",
    budgets: Annotated[str, typer.Option(help="Comma-separated N values.")] = "2,4,8",
    allocators: Annotated[str, typer.Option(help=f"Comma-separated allocators: {', '.join(allocators.ALLOCATORS)}.")]
    = "uab,uniform,random,length,oracle",
    signals: Annotated[str, typer.Option(help=f"Comma-separated signals: {', '.join(SIGNALS)}.")] = "anll",
    seeds: Annotated[int, typer.Option(help="Number of replay seeds (0..seeds-1).")] = 20,
    signal_temperature: Annotated[str, typer.Option("--signal-temperature", "-T", help="T, or comma-separated Ts.")]
    = str(DEFAULT_T),
    vote_rules: Annotated[str, typer.Option(help=f"Comma-separated vote rules: {', '.join(voting.RULES)} "
                                            "(majority is always replayed: Uniform + majority is the reference).")]
    = ",".join(voting.RULES),
    vote_signal: Annotated[VoteSignalName, typer.Option(help="Per-sample signal the confidence rules read.")] = "anll",
    vote_temperature: VoteT = _V["temperature"], vote_keep: VoteKeep = _V["keep"],
    gain: Gain = _A["gain"], quiet: Quiet = False,
) -> None:
    """Replay allocators × vote rules offline from a pool: mean ± std accuracy per N over seeds, the
    headroom to the oracle and what to run, chosen on held-out questions."""
    from . import evaluation

    records, _ = _load(_pool_file(pool), "sampled")
    temps = [float(t) for t in _csv(signal_temperature)]
    rule = Vote(signal=vote_signal, temperature=vote_temperature, keep=vote_keep)
    rows = list(evaluation.simulate(records, _ints(budgets, "--budgets"), _csv(allocators), _csv(signals),
                                    seeds, temps if len(temps) > 1 else temps[0], gain, vote_rules=_csv(vote_rules),
                                    vote=rule, recommendations=True))
    write_records(output, rows)
    if not quiet:
        typer.echo(evaluation.markdown_table(evaluation.summarize(rows), evaluation.anll_correlation(records),
                                             evaluation.recommendations(rows)), err=True)


@app.command(cls=_Command)
def report(
    results: Annotated[str, typer.Argument(metavar="RESULTS", help="Results JSONL from `uab simulate`.",
                                           show_default=False)],
    output: Annotated[str, typer.Option("-o", "--output", help="Directory for the PNGs and summary.md.",
                                        show_default=False)],
    pool: Annotated[str | None, typer.Option(help="The pool, for the ANLL plot and correlation.",
                                                show_default=False)] = None,
) -> None:
    """Plots (accuracy vs N, allocation by level, ANLL of right vs wrong) and a Markdown table."""
    from . import evaluation
    from .records import read_jsonl

    rows = [row for _, row in read_jsonl(results)]
    records = _load(_pool_file(pool), "sampled")[0] if pool else None
    for path in evaluation.report(rows, records, output):
        typer.echo(path)


def _pool_file(path: str) -> str:
    return os.path.join(path, "pool.jsonl") if os.path.isdir(path) else path


# --- summaries ---------------------------------------------------------------------


def _print_allocation(s: pipeline.AllocationSummary) -> None:
    table = Table(title="allocation", title_justify="left")
    table.add_column("samples per question", justify="right")
    table.add_column("questions", justify="right")
    for total, count in s.histogram.items():
        table.add_row(str(total), str(count))
    err.print(table)
    spent = s.phase1 + s.phase2
    line = f"budget {s.budget}: phase 1 {s.phase1} + phase 2 {s.phase2} = {spent}"
    if s.saved:
        line += f" (skipped {s.saved}, {100 * s.saved / s.budget:.1f}% saved)"
    if s.fallbacks:
        line += f"; {s.fallbacks} question(s) without a confidence score used p=0.5"
    err.print(line)


def _print_votes(s: pipeline.VoteSummary) -> None:
    table = Table(title="vote", title_justify="left")
    for col in ("questions", "graded", "accuracy", "coverage", "no answer", "samples"):
        table.add_column(col, justify="right")
    acc = f"{100 * s.accuracy:.1f}%" if s.accuracy is not None else "-"
    cov = f"{100 * s.any_correct / s.graded:.1f}%" if s.graded else "-"
    table.add_row(str(s.questions), str(s.graded), acc, cov, str(s.no_answer), str(s.samples))
    err.print(table)
    if s.rule is not None and s.rule.uses_confidence:
        line = f"vote rule: {s.rule.rule} ({s.rule.signal}, T={s.rule.temperature:g}"
        line += f", keep {s.rule.keep:g})" if voting.RULES[s.rule.rule].keep else ")"
        if s.fallbacks:
            line += f"; {s.fallbacks} question(s) with a sample lacking {s.rule.signal} voted by majority"
        err.print(line, highlight=False, soft_wrap=True)
    if s.by_level:
        lv = Table(title="accuracy by level", title_justify="left")
        for col in ("level", "questions", "accuracy"):
            lv.add_column(col, justify="right")
        for level in sorted(s.by_level, key=str):
            n, c = s.by_level[level]
            lv.add_row(str(level), str(n), f"{100 * c / n:.1f}%")
        err.print(lv)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    sys.exit(main())

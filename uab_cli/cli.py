"""The ``uab`` command line: parses options, calls one library function, prints summaries.

Data goes to stdout or ``-o``; summaries and progress go to stderr. User errors exit 2,
backend failures exit 1.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import inspect
import os
import re
import sys
import warnings
from typing import TYPE_CHECKING, Annotated, Literal, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.segment import Segments
from rich.table import Table

from . import __version__, allocators, cost, gcpolicy, pipeline, runs, settings, streams, voting
from .backends import backend_factory
from .backends import options as backend_options
from .convert import PRESETS
from .errors import BackendError, UabError, after_work, stopped, stopped_before_work, stopped_by, terminated_on_signals
from .jsonl import (
    atomic_output,
    check_apart,
    check_inputs,
    check_output,
    cut_short,
    display_name,
    escaping_stdout,
    load_records,
    read_jsonl,
    reader_gone,
    reader_watch,
    stdin,
    stdout,
    write_failure,
    write_records,
)
from .options import INT64, PANELS, Option, check_type, from_params, overlay
from .progress import StageProgress
from .records import level_order
from .settings import Allocation, Generation, Vote, load_file
from .signals import DEFAULT_T, SAMPLE_SIGNALS
from .signals import SUMMARIES as SIGNAL_SUMMARIES

if TYPE_CHECKING:
    from .pools import Pooled

PresetName = Literal[tuple(PRESETS)]
VoteSignalName = Literal[SAMPLE_SIGNALS]


class _Stderr(Console):
    """rich's console on stderr, whose reader gone (``uab run … 2>&1 | head``) ends the command as
    a closed stdout does: exit 141, not rich's 1 (a backend failure's code) after pointing
    stdout, which may hold the command's output, at /dev/null and going quiet (a progress
    thread's print did that, and the command went on to exit 0 with its stdout output lost)."""

    def on_broken_pipe(self) -> None:
        raise SystemExit(141)  # in the progress thread it ends the thread: the next print here ends uab


err = _Stderr(stderr=True)
# click's UsageError, whichever click typer uses (its own copy since typer 0.2x)
_UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
RESUMABLE = ("run", "pool")  # commands that keep finished samples in a directory
# What a command takes for an option left unset (after --settings): a rerun's budget and
# --max-model-len are the ones its run directory records (read once, into ctx.meta["uab.recorded"]).
REMEMBERED = {"run": runs.remembered, "pool": runs.remembered}


def _stderr_failed() -> bool:
    """Whether stderr is what a write failed on (``2> log`` on a full disk): the line it could not
    take is still pending there; a failure of stdout's leaves it flushable."""
    try:
        err.file.flush()
    except (OSError, ValueError):
        return True
    return False


def _tell(line: str) -> None:
    """The error boundary's line on stderr, unsaid where stderr is what failed (``2> log`` on a
    full disk): the exit code still says what happened."""
    with contextlib.suppress(OSError):
        err.print(line, highlight=False, soft_wrap=True)


def _unwritten(exc: OSError) -> NoReturn:
    """A failure to write stdout (a full one: the output, report's paths, the help) or stderr as the
    boundary's one line, exit 2; stdout's reader gone (`| head`), exit 141 in silence; else ``exc``."""
    if reader_gone(exc):  # `| head`: exit as a tool killed by SIGPIPE, 128 + 13, in silence
        raise typer.Exit(141) from None
    failure = write_failure(exc, "stderr" if _stderr_failed() else "-")
    if failure is None:
        raise exc
    _tell(f"[red]error:[/red] {escape(str(failure))}")
    raise typer.Exit(_code(exc, 2)) from None


def _mid_sentence(sentence: str) -> str:
    """``sentence`` after a colon: its first letter lower-case."""
    return sentence[:1].lower() + sentence[1:]


def _refuse(exc: UabError) -> NoReturn:
    """A user error as the boundary's one line, exit 2."""
    _tell(f"[red]error:[/red] {escape(str(exc))}")
    raise typer.Exit(_code(exc, 2)) from None


def _code(exc: BaseException, code: int) -> int:
    """The exit code of an error: ``code``, or 128 + the number of a signal that came meanwhile
    (``errors.stopped_by``: held while report's files replaced their old copies), which stops uab too."""
    signum = stopped_by(exc)
    return code if signum is None else 128 + signum


def _refuse_usage(exc, command: str | None) -> NoReturn:
    """click's parse error as the boundary's one line, exit 2, naming the help to read."""
    where = " ".join(filter(None, ("uab", command)))
    if getattr(exc, "possibilities", None):  # an unknown option's near names: the shown spellings only
        exc.possibilities = [o for o in exc.possibilities if o not in HIDDEN_ALIASES]
    message = exc.format_message().replace("Value error, ", "")
    _tell(f"[red]error:[/red] {escape(message)} (see `{where} -h`)")
    raise typer.Exit(2) from None


class _HelpOnStdout:
    """``-h`` refuses a closed stdout (`uab -h >&-`) as every output there does, one line and exit 2,
    where click's help printed nothing and exited 0."""

    def format_help(self, ctx, formatter):
        with _whole_words(formatter):
            super().format_help(ctx, formatter)

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        shown = option.callback if option is not None else None
        if shown is not None and not getattr(shown, "uab_stdout", False):
            def show(ctx, param, value):
                if value:
                    stdout()
                return shown(ctx, param, value)

            show.uab_stdout = True
            option.callback = show
        return option


@contextlib.contextmanager
def _whole_words(formatter):
    """Help wrapped at spaces only: click's text wrapper (``_textwrap``, beside the module of
    ``formatter``: typer's own copy of click) also breaks after a hyphen, which cut an option a help
    text names in two (`--exclude-` / `phase1`), a flag no one could copy. Where that module is not
    found, click's wrapping stays."""
    try:
        module = importlib.import_module(f"{sys.modules[type(formatter).__module__].__package__}._textwrap")
        wrapper = module.TextWrapper
    except (ImportError, AttributeError, KeyError):
        yield
        return

    class WholeWords(wrapper):
        def __init__(self, *args, **kw):
            super().__init__(*args, **{**kw, "break_on_hyphens": False})

    module.TextWrapper = WholeWords
    try:
        yield
    finally:
        module.TextWrapper = wrapper


class _Group(_HelpOnStdout, typer.core.TyperGroup):
    """One error boundary: UabError → exit 2, BackendError → exit 1, Ctrl-C → exit 130
    (SIGTERM → 143, SIGHUP → 129), each with a hint true to the command that ran."""

    def make_context(self, info_name, args, parent=None, **extra):
        """uab's own options (before the command) parsed as a command's are: `uab --bogus` printed
        click's Usage block, and exited 1 where stderr could not be written."""
        bare = not args  # the parser consumes args
        try:
            with terminated_on_signals():
                return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM or SIGHUP: click's silent exit 130 (SIGTERM's too)
            raise typer.Exit(stopped_before_work(exc)) from None
        except _UsageError as exc:
            if bare:  # `uab` alone: the help, on stderr, exit 2 whether or not stderr takes it
                with contextlib.suppress(OSError):
                    exc.show()
                raise typer.Exit(2) from None
            _refuse_usage(exc, None)
        except OSError as exc:  # `uab --help` or `uab --version` to a full stdout
            _unwritten(exc)
        except UabError as exc:  # ... or to a closed one
            _refuse(exc)

    def resolve_command(self, ctx, args):
        name, cmd, rest = super().resolve_command(ctx, args)
        ctx.meta["uab.command"] = name
        return name, cmd, rest

    def invoke(self, ctx):
        resumable = lambda: ctx.meta.get("uab.command") in RESUMABLE  # noqa: E731
        note = lambda: runs.kept_note(ctx.meta.get("uab.output"))  # noqa: E731  (what a stopped run keeps)
        # a run or pool that failed before its first sample keeps none (the directory it made is gone)
        kept = lambda: resumable() and "uab.output" in ctx.meta and runs.holds_samples(ctx.meta["uab.output"])  # noqa: E731
        try:
            with terminated_on_signals():
                return super().invoke(ctx)
        except UabError as exc:
            _refuse(exc)
        except _UsageError as exc:  # click's parse errors, in the same style
            _refuse_usage(exc, ctx.meta.get("uab.command"))
        except OSError as exc:  # what a command prints to a full stdout (its help, report's paths) or stderr
            _unwritten(exc)
        except BackendError as exc:
            _tell(f"[red]backend error:[/red] {escape(str(exc))}")
            _tell(note() if resumable() else "Nothing was written.")
            raise typer.Exit(1) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP: 128 + the signal's number
            said, cut = stopped(stopped_by(exc)), cut_short(exc)
            with contextlib.suppress(OSError, SystemExit):  # the terminal or stderr's reader may be gone too
                err.print(f"{said}: {_mid_sentence(note())}" if resumable()
                          else f"{said}: the output to {cut} is cut short (its last line says so)." if cut
                          else f"{said} after its output was written in full." if after_work(exc)
                          else f"{said}: nothing was written.", highlight=False, soft_wrap=True)
            raise typer.Exit(_code(exc, 130)) from None
        except MemoryError:  # a budget or -K far beyond the machine
            _tell("[red]error:[/red] out of memory: the budget, -K or input is too large for this machine")
            if kept():
                _tell("Finished samples are kept; re-run with a smaller --budget, or on a larger machine, to resume.")
            raise typer.Exit(2) from None

    def format_commands(self, ctx, formatter):
        # Whole first paragraphs of the docstrings: click would cut them at ~45 characters.
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and cmd.help and not cmd.short_help:
                cmd.short_help = " ".join(cmd.help.strip().split("\n\n")[0].split())
        super().format_commands(ctx, formatter)


class _Command(_HelpOnStdout, typer.core.TyperCommand):
    """Help grouped into panels, in one plain style: ``INPUT`` not ``{INPUT}``, ``INTEGER`` not
    ``<int>``, every default as ``[default: ...]``. A ``--settings`` file fills the options left
    unset before the command runs."""

    _PLAIN = ((re.compile(r"\{([A-Z_]+)\}"), r"\1"),
              (re.compile(r"\[default:(\s+)\(([^\[\]]*?)\)([;\]])"), r"[default:\1\2\3"),
              (re.compile(r"(\d+)<=x<=" + str(INT64[1])), r"x>=\1"),  # the 64-bit cap goes without saying
              (re.compile(r"(?m)^(  [A-Z]+) <str>"), r"\1"))
    _METAVARS = {"<str>": "TEXT", "<int>": "INTEGER", "<float>": "FLOAT", "<int range>": "INTEGER",
                 "<float range>": "FLOAT"}

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        for param in self.params:
            _hide_aliases(param)

    def invoke(self, ctx):
        ctx.meta["uab.output"] = ctx.params.get("output")  # what _Group.invoke's hints look at
        remember = REMEMBERED.get(ctx.info_name)
        if remember:  # the directory's record, read once: the command takes it from ctx.meta
            ctx.meta["uab.recorded"] = runs.recorded(ctx.params["output"], ctx.params.get("force", False))
        recall = (lambda: remember(ctx.params, ctx.meta["uab.recorded"])) if remember else dict
        if ctx.params.get("settings") is not None:  # a results file's recommendation is the run directory's budget's
            _apply_settings(ctx, ctx.params["settings"], recall())
        for name, value in recall().items():  # after --settings: the file's backend counts
            if value is not None and name in ctx.params and ctx.params[name] is None:
                ctx.params[name] = value
        for option in _declared(ctx.info_name):  # required: asked once --settings and a run's record are in
            if option.required and ctx.params.get(option.name) is None:
                param = next(p for p in self.params if p.name == option.name)
                raise _UsageError(f"Missing option {param.get_error_hint()}.", ctx=ctx)
        try:  # SIGTERM and SIGHUP: _Group.invoke, around this
            return super().invoke(ctx)
        except UabError as exc:  # an option the settings file set, at odds with another: the file says where
            taken = ctx.meta.get("uab.from_file", ())
            named = sorted((found.start(), n) for n in taken
                           if (found := re.search(rf"--{n.replace('_', '-')}(?![\w-])", exc.message)))
            if exc.path is None and named:  # at the line of the option it names first
                line = settings.line_of(ctx.meta.get("uab.settings_lines"), [named[0][1]])
                raise UabError(exc.message, ctx.params["settings"], line) from None
            record = os.path.join(ctx.params.get("output") or "", runs.CONFIG)  # an option a rerun took from it
            if exc.path is None and (note := settings.recorded_note(exc.message, ctx.meta.get("uab.from_record", {}),
                                                                    record)):
                raise UabError(note) from None
            raise

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

    def format_options(self, ctx, formatter):
        panels: dict[str, list] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and param.param_type_name == "option":
                panel = getattr(param, "rich_help_panel", None) or _panel(param.name)
                panels.setdefault(panel, []).append(record)
        for panel in sorted(panels, key=PANELS.index):
            with formatter.section(panel):
                formatter.write_dl(panels[panel])


_IO = {"output", "quiet", "force", "settings", "help"}


def _panel(name: str | None) -> str:
    return "Input/output" if name in _IO else "Options"


# Old spellings, accepted and left out of the help for one release.
HIDDEN_ALIASES = ("--out", "--k")


def _hide_aliases(param) -> None:
    if not any(a in getattr(param, "opts", ()) for a in HIDDEN_ALIASES):
        return
    shown = [o for o in param.opts if o not in HIDDEN_ALIASES]

    def without_aliases(method):  # the help and the "Missing option" line name the shown spellings only
        def call(*args):
            opts, param.opts = param.opts, shown
            try:
                return method(*args)
            finally:
                param.opts = opts
        return call

    param.get_help_record = without_aliases(param.get_help_record)
    param.get_error_hint = without_aliases(param.get_error_hint)


SETTINGS_FILE = Option("--settings", "JSON/TOML file of option values, or a run's or pool's config.json (or its "
                       "directory): its settings; options given on the command line win.",
                       panel="Input/output")
RECOMMENDED = ("run",)  # the commands a `uab simulate -o` recommendation is for (recommend.run_settings)


def _declared(command: str) -> list[Option]:
    """The declared options ``command`` takes (settings fields and backends), then ``--settings``."""
    found = [o.for_command(command, rerun=command in REMEMBERED) for o in (*settings.options(), *backend_options())
             if command in o.commands]
    settings_file = SETTINGS_FILE if command not in RECOMMENDED else dataclasses.replace(
        SETTINGS_FILE, help="JSON/TOML file of option values, a run's or pool's config.json (or its directory), "
        "or a `uab simulate -o` results file (its "
        "recommendation for --budget); options given on the command line win, and --allocator (--vote-rule) "
        "given starts that half of a recommendation or config from the defaults.")
    return [*found, settings_file] if found else []


def _parameter(option: Option) -> inspect.Parameter:
    """A declared option as a typer parameter: unset is ``None``, so the settings objects (and
    backends) fill their own defaults and a value is given exactly when it is not ``None``. A
    required option is optional to the parser: ``_Command.invoke`` asks for it once a
    ``--settings`` file and a run directory's record had their say."""
    names = option.names()
    kind = Literal[names] if names else option.type
    help = option.help
    if option.required:  # checked by _Command.invoke, not the parser: click would not show it
        help += f"  [required{', or ' + option.show_default if option.show_default else ''}]"
    if option.summaries():
        help += _one_per_line(option.summaries())
    shown = option.shown_default()
    info = typer.Option(*[d for d in (option.short, option.flag) if d], help=help, rich_help_panel=option.panel,
                        metavar="NAME" if option.summaries() else None,
                        show_default=shown if shown is not None and not option.required else False)
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind | None, info],
                             default=None)


def _one_per_line(summaries: dict[str, str]) -> str:
    """Names explained in -h, one line each (``\\b`` keeps click from rewrapping them)."""
    return "\n\n\b\n" + "\n".join(f"{k}: {v}" for k, v in summaries.items())


def command(func):
    """Register ``func`` as a command with the options declared for it besides its own
    parameters; the declared values are read from ``ctx.params``."""
    own = inspect.signature(func, eval_str=True)
    declared = [_parameter(o) for o in _declared(func.__name__)]

    @functools.wraps(func)
    def call(**kw):
        return func(**{k: v for k, v in kw.items() if k in own.parameters})

    call.__signature__ = own.replace(parameters=[*own.parameters.values(), *declared])
    call.__annotations__ = {p.name: p.annotation for p in call.__signature__.parameters.values()}
    return app.command(cls=_Command)(call)


app = typer.Typer(cls=_Group, no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Spend a fixed sampling budget where it helps: uncertainty-aware budget allocation.")


def _version(value: bool) -> None:
    if value:
        stdout()  # refused closed, as the help is
        typer.echo(f"uab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    """Stages compose in shell pipes: uab phase1 q.jsonl | uab allocate - --budget 4 | uab phase2 - | uab vote -"""
    warnings.showwarning = _show_warning
    gcpolicy.for_records()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    err.print(f"[yellow]warning:[/yellow] {escape(str(message))}", highlight=False, soft_wrap=True)


# --- options ----------------------------------------------------------------------
# The generation, backend, allocation and vote options are declared with what they set
# (settings.py, backends/) and added to each command by _Command. Below: each command's own.

def _input(param: typer.CallbackParam, path: str | None) -> str | None:
    """An input's path (an argument or option), checked as it is parsed: an empty one is no file
    (``check_inputs`` names it)."""
    check_inputs(**{param.display_name_raw if param.param_type_name == "argument" else param.name: path})
    return path


In = Annotated[str, typer.Argument(metavar="INPUT", help="Input JSONL ('-' = stdin).", show_default=False,
                                   callback=_input)]
Out = Annotated[str, typer.Option("-o", "--output", help="Output JSONL ('-' = stdout).")]
OutDir = Annotated[str, typer.Option("-o", "--output", "--out", help="Run directory: resumable; reruns with other "
                                     "allocation settings reuse its samples.", show_default=False)]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress or summary on stderr.")]
Force = Annotated[bool, typer.Option("--force", help="Discard samples in --output drawn with other generation settings.")]
K = Annotated[int, typer.Option("-K", "--samples", "--k", min=1, max=INT64[1],
                                help="Phase-1 samples per question (2 for vote entropy).")]
KRun = Annotated[int | None, typer.Option("-K", "--samples", "--k", min=1, max=INT64[1],
                                          show_default="1 (2 for --allocator adaptive), or the run directory's",
                                          help="Phase-1 samples per question (2 for vote entropy).")]


def _price(value: str | None) -> cost.Price | None:
    """``--price``, parsed as it is read (from the command line or a settings file)."""
    return None if value is None else cost.Price.parse(value)


def _price_option(shown: str | bool) -> type:
    """``--price``, showing ``shown`` as its default (``False``: none)."""
    return Annotated[str | None, typer.Option(metavar="IN,OUT", show_default=shown, callback=_price,
                                              help="Prices per million prompt (IN) and completion (OUT) tokens: "
                                              "run's and pool's summary.json then say what the samples cost, simulate's "
                                              "cost at fixed accuracy what each allocation costs.")]


Price = _price_option(False)
PoolPrice = _price_option("the one a POOL directory's summary.json records")  # simulate's (runs.pool_price)


NOT_FROM_FILE = frozenset({"settings", "input", "output", "force"})


def _listed(param: typer.CallbackParam, value: str | None) -> list | None:
    """An option that lists values in one string (``settings.LISTS``), parsed and checked as it is
    read (from the command line or a settings file), before any input is. Such an option is
    declared ``str`` to typer and reaches its command as this list: typer reads a ``list[...]``
    annotation as an option given once per value (``--budgets 2 --budgets 4``), and a settings
    file's value is checked as the declared type, the one string."""
    return settings.LISTS[param.name].parse(value)


def _given(ctx: typer.Context) -> dict:
    """The options given on the command line (not defaults, not a settings file's), by name."""
    return {n: v for n, v in ctx.params.items() if ctx.get_parameter_source(n).name not in ("DEFAULT", "DEFAULT_MAP")}


def _unlike_pool(ctx: typer.Context, gen: Generation) -> None:
    """Warn where a run on a recommendation (``--settings RESULTS``) will draw otherwise than the
    pool it was chosen on, by a setting the command line does not give (the run directory's
    record: a system prompt a recommendation cannot unset); refuse a ``--settings`` file's template
    edited since (``_same_template``)."""
    from . import evaluation

    _same_template(ctx, gen)
    rec = ctx.meta.get("uab.recommended")
    if rec is None:
        return
    given = list(_given(ctx))  # a choice, not a difference to warn of; so are an unset model and another backend's options
    given += [*(() if gen.model else ("model",)), *(("backend_options",) if "backend" in given else ())]
    changed = evaluation.generation_changes(rec.generation, gen.info(), given)
    if changed:
        warnings.warn(f"{ctx.params['settings']}: its recommendation was chosen on a pool drawn otherwise ("
                      + "; ".join(f"{o} {c}" for o, c in changed.items()) + ")", UserWarning, stacklevel=2)


def _same_template(ctx: typer.Context, gen: Generation) -> None:
    """Refuse the template that a ``--settings`` file's samples were drawn with (a recommendation's
    pool, a run's or pool's config) where it was edited since and ``--prompt-template`` is not given:
    the command would ask otherwise than they were."""
    drawn = ctx.meta.get("uab.drawn")
    if drawn is None or "prompt_template" in _given(ctx):
        return
    path = ctx.params["settings"]
    since = (f"the pool of {path}'s recommendation was drawn" if isinstance(drawn, settings.Recommended)
             else f"the samples of {path} were drawn")
    gen.same_template(drawn.generation, since, "restore it, or give --prompt-template to run with it as it is now")


def _apply_settings(ctx: typer.Context, path: str, remembered: dict) -> None:
    """Fill the options left unset with a ``--settings`` file's values (the command line
    wins, also over the option a given one excludes); an unknown name is an error. A results
    file's recommendation is the one for ``--budget``, else for the run directory's, else its only one."""
    budget = ctx.params.get("budget") or remembered.get("budget")
    loaded = load_file(path, budget, recommendation=ctx.info_name in RECOMMENDED, command=ctx.info_name)
    if isinstance(loaded, (settings.Recommended, settings.Configured)):  # how samples were drawn: _same_template
        ctx.meta["uab.drawn"] = loaded
    lines = getattr(loaded, "lines", {})  # each value's line (a results file's: its recommendation's)
    _file_names(ctx, ctx.command, loaded, path, lines)
    given = _given(ctx)
    loaded = settings.for_backend(settings.without_led(loaded, given), given.get("backend"))
    if isinstance(loaded, settings.Recommended):
        ctx.meta["uab.recommended"] = loaded
    taken = [n for n in overlay(loaded, given, (*settings.options(), *backend_options())) if n not in given]
    ctx.meta["uab.from_file"], ctx.meta["uab.settings_lines"] = taken, lines
    checked = _file_values(ctx, ctx.command, loaded, path, lines)  # each checked, the ones the command line gives too
    for name in taken:
        if checked.get(name) is not None:
            ctx.params[name] = checked[name]


def _file_names(ctx: typer.Context, command, loaded: dict, path: str | None = None, lines: dict | None = None) -> None:
    """``UabError`` naming ``path`` (and the line, of ``lines``, of the first name it names) for a
    settings file's option names (``loaded``'s) that ``command`` does not take (unknown, or the
    commands that take it named), or that only its command line gives."""
    untaken = sorted(set(loaded) - {p.name for p in command.params} - {"settings"})
    root = ctx.find_root()
    takers = {n: [f"`uab {c}`" for c, cmd in root.command.commands.items() if n in {p.name for p in cmd.params}]
              for n in untaken}
    unknown = [n for n in untaken if not takers[n]]
    if unknown:
        raise UabError(f"unknown option{'s' * (len(unknown) > 1)} for `uab {command.name}`: "
                       f"{', '.join(unknown)}", path, settings.line_of(lines, unknown))
    if untaken:
        raise UabError(f"`uab {command.name}` does not take " + "; ".join(
            f"{n} (an option of {', '.join(takers[n])})" for n in untaken), path, settings.line_of(lines, untaken))
    where = sorted(set(loaded) & NOT_FROM_FILE)  # what to read, write or discard: the command line says
    if where:
        raise UabError(f"{', '.join(where)} cannot come from a settings file: give {'them' if len(where) > 1 else 'it'}"
                       " on the command line", path, settings.line_of(lines, where))


def _file_values(ctx: typer.Context, command, loaded: dict, path: str | None = None, lines: dict | None = None) -> dict:
    """A settings file's ``loaded`` values (by parameter name), each checked as ``command``'s
    command line checks it (``UabError`` naming ``path`` and the value's line, of ``lines``), as
    the command takes it (click converts its own options)."""
    declared = {o.name: o for o in _declared(command.name)}  # checked by Option.check; the command's own too by click
    params = {p.name: p for p in command.params}
    out = {}
    for name, value in loaded.items():
        try:
            if value is not None and name in declared:
                declared[name].check(value)
            elif value is not None:  # the same type rule (click would read "2" as 2, and true as 1), then click's bounds
                own = params[name]
                listed = settings.LISTS.get(name)
                check_type(value, own.type_descriptor.annotation, next(o for o in own.opts if o.startswith("--")),
                           listed=listed and listed.kind)
                value = own.process_value(ctx, value)
        except UabError as exc:  # the file's value: the file says where
            raise UabError(exc.message, path, settings.line_of(lines, [name])) from None
        except typer.BadParameter as exc:
            raise UabError(exc.format_message(), path, settings.line_of(lines, [name])) from None
        out[name] = value
    return out


def _as_run(ctx: typer.Context, values: dict) -> None:
    """``UabError`` for a recommendation's ``settings`` (``values``) that `uab run --settings`
    refuses by name or value: ``simulate --check``'s part of ``recommend.as_run`` (run's own options)."""
    root = ctx.find_root()
    command = root.command.get_command(root, "run")
    _file_names(ctx, command, values)
    _file_values(ctx, command, values)


def _backend(ctx: typer.Context, gen: Generation):
    """The backend a command asked for, options checked now; it loads when called. The options
    that change samples come from ``gen`` (a Phase 1's recorded ones on Phase 2, a run's on a rerun)."""
    on_status = None if ctx.params.get("quiet") else _status
    return backend_factory(gen.backend, gen.model or None, on_status=on_status,
                           **{**{o.name: ctx.params.get(o.name) for o in backend_options()}, **gen.backend_options})


def _stdin_hint(path: str) -> None:
    if path == "-" and stdin().isatty():
        err.print("reading records from stdin (a terminal): pipe a file in or give its path; Ctrl-D ends input")


def _load(path: str, stage: str) -> tuple[list[dict], list[int]]:
    _stdin_hint(path)
    return load_records(path, stage)


def _numbered(path: str) -> list[tuple[int, dict]]:
    """Every row of a results file with its line, read once (it may be stdin)."""
    _stdin_hint(path)
    return list(read_jsonl(path))


def _pool(path: str) -> tuple[Pooled, str]:
    """The pool ``path`` names (a file or a `uab pool` directory), read and checked as one
    (``runs.read_pool``), and the pool file's name, as errors about the pool name it."""
    name = runs.pool_file(path)
    _stdin_hint(name)
    return runs.read_pool(name), display_name(name)


def _questions(path: str) -> tuple[list[dict], str | None]:
    """The questions of ``path`` for ``run``/``pool``, which draw their own samples: samples and
    what later stages set are left out, and a note says so (printed with the summary)."""
    records, _ = _load(path, "question")
    held = pipeline.questions_only(records)
    return records, held and (f"note: {held} record(s) of {display_name(path)} held samples; uab took their "
                              "questions only (a run or pool draws its own into its directory)") or None


class _Bar(StageProgress):
    """Sampling progress on stderr: a bar on a terminal, paced plain lines otherwise, nothing with -q."""

    def __init__(self, quiet: bool):
        super().__init__(err, quiet)


def _skipped(rec: dict, too_long: pipeline.TooLong) -> None:
    """A question ``--too-long skip`` leaves out, on stderr (``-q`` too: the output lacks it)."""
    err.print(f"[yellow]skipped:[/yellow] {escape(str(too_long))}", highlight=False, soft_wrap=True)


def _status(line: str) -> None:
    """Backend status lines (a first run's model conversion) on stderr."""
    err.print(line, markup=False, highlight=False, soft_wrap=True)


# --- stage commands ----------------------------------------------------------------


@command
def phase1(ctx: typer.Context, input: In, output: Out = "-", samples: K = 1,
           judge: Annotated[bool, typer.Option("--judge", help="Also label questions easy/hard for --allocator "
                                               "judge.")] = False, quiet: Quiet = False) -> None:
    """Phase 1: draw K samples per question and record their uncertainty statistics."""
    check_output(output)
    check_apart(output, INPUT=input)
    settings.check_judge_tokens(_given(ctx), judge=judge)
    records, lines = _load(input, "question")
    pipeline.phase1_takes(records, display_name(input), lines)
    gen = Generation.from_params(ctx.params)
    _same_template(ctx, gen)
    with reader_watch(output) as watched:
        with _backend(ctx, gen)() as be, _Bar(quiet) as bar:
            gen = dataclasses.replace(gen, model=gen.model or be.model)
            pipeline.same_draws(records, "phase1", gen, display_name(input), lines)
            skipped = pipeline.fit(records, be, gen, _skipped, judge)
            if judge:
                counts = pipeline.judge(records, be, gen, on_verdict=watched())
                if not quiet:
                    err.print(cost.judge_line(counts), highlight=False)
            bar.stage("phase1", len(records) * samples)
            pipeline.phase1(records, be, gen, samples, watched(bar.sample), skipped=len(skipped), checked=True,
                            judged=judge)
        write_records(output, records)
    if skipped and not quiet:
        err.print(f"left out by --too-long skip: {len(skipped)} question(s) (named above; counted in uab.phase1.skipped); "
                  f"allocate's budget N·M counts the {len(records)} that fit", highlight=False, soft_wrap=True)


@command
def allocate(ctx: typer.Context, input: In, output: Out = "-", quiet: Quiet = False) -> None:
    """Spend the remaining budget: set p and extra (Phase-2 samples) on every question."""
    _stream(input, output, quiet, streams.allocate_file, _print_allocation, from_params(Allocation, ctx.params))


@command
def phase2(ctx: typer.Context, input: In, output: Out = "-", quiet: Quiet = False) -> None:
    """Phase 2: draw each question's extra samples (generation settings default to Phase 1's)."""
    check_output(output)
    check_apart(output, INPUT=input)
    records, lines = _load(input, "allocated")
    gen = Generation.from_params(ctx.params, pipeline.phase1_settings(records, display_name(input), lines))
    _same_template(ctx, gen)
    with reader_watch(output) as watched:
        with _backend(ctx, gen)() as be, _Bar(quiet) as bar:
            gen = dataclasses.replace(gen, model=gen.model or be.model)  # another --backend: its default model
            pipeline.same_draws(records, "phase2", gen, display_name(input), lines)
            pipeline.fit([r for r in records if r["extra"]], be, gen)
            bar.stage("phase2", pipeline.phase2_wanted(records))
            pipeline.phase2(records, be, gen, watched(bar.sample), checked=True)
        write_records(output, records)


@command
def vote(ctx: typer.Context, input: In, output: Out = "-", quiet: Quiet = False) -> None:
    """Vote over all samples (majority, or a confidence rule) and grade against gold when present (streams)."""
    _stream(input, output, quiet, streams.vote_file, _print_votes, from_params(Vote, ctx.params))


@command
def regrade(input: Annotated[str, typer.Argument(
        metavar="INPUT", help="Sampled records: JSONL ('-' = stdin), or a pool or run directory.", show_default=False,
        callback=_input)], output: Out = "-", quiet: Quiet = False) -> None:
    """Read every sample's answer again from its text with this version's extraction (no redraw);
    drops the votes, which counted the old answers (streams)."""
    _stream(runs.records_file(input, output), output, quiet, streams.regrade_file, _print_regrade)


def _stream(input: str, output: str, quiet: bool, stage, show, *settings) -> None:
    """A streaming stage: ``stage(input, *settings, output)``, then its summary unless quiet."""
    check_output(output)
    check_apart(output, INPUT=input)
    _stdin_hint(input)
    summary = stage(input, *settings, output)
    if not quiet:
        show(summary)


@command
def run(ctx: typer.Context, input: In, output: OutDir, force: Force = False, samples: KRun = None,
        price: Price = None, quiet: Quiet = False) -> None:
    """Phase 1 → allocate → Phase 2 → vote with one loaded model; every stage saved in --output."""
    params = ctx.params
    recorded = ctx.meta["uab.recorded"]  # a rerun takes the options it does not give
    values = [settings.with_recorded(cls, params, info) for cls, info in ((Allocation, recorded.allocate),
                                                                          (Vote, recorded.vote))]
    ctx.meta["uab.from_record"] = settings.taken(params, *values)  # an error naming one says so (invoke)
    alloc, votes = (from_params(cls, v) for cls, v in zip((Allocation, Vote), values))
    settings.check_judge_tokens(_given(ctx), allocator=alloc.allocator)
    k = runs.phase1_k(samples, recorded, alloc, output)
    check_output(output, "run directory")
    records, note = _questions(input)
    gen = Generation.from_params(params, recorded.generation)
    _unlike_pool(ctx, gen)
    with _Bar(quiet) as bar:
        shown = runs.Callbacks(bar.stage, bar.sample, None if quiet else _print_allocation, _skipped)
        result = runs.run(records, _backend(ctx, gen), gen, output, alloc, votes, k, force,
                          input, shown, price, params.get("max_model_len"))
    if not quiet:
        if note:
            err.print(note, markup=False, highlight=False, soft_wrap=True)
        if result.skipped:
            err.print(f"left out by --too-long skip: {len(result.skipped)} question(s) (named above); the budget "
                      f"and the votes are over the {result.votes.questions} that fit", highlight=False, soft_wrap=True)
        saved = result.allocation.saved  # an exit's skip or forfeit leaves these undrawn
        err.print(f"samples: planned {result.planned - saved}" + (f" ({saved} of the budget saved)" if saved else "")
                  + f", drawn now {result.drawn}, reused {result.restored}")
        _print_votes(result.votes)
        for line in cost.describe(result.summary):
            err.print(line, markup=False, highlight=False, soft_wrap=True)
        err.print(f"outputs in {os.path.join(output, '')}: {', '.join(runs.STAGE_FILES)}, {runs.SUMMARY} "
                  f"(the votes also in {result.votes_file})", markup=False)


@command
def convert(
    input: Annotated[str, typer.Argument(metavar="INPUT", help="Benchmark export: .jsonl, .json, .csv, .tsv or "
                                         ".parquet ('-' = stdin, format told from the content).",
                                         show_default=False, callback=_input)],
    output: Out = "-",
    preset: Annotated[PresetName | None, typer.Option(help="Benchmark preset.", show_default="question/answer/choices/id columns by name")] = None,
    question_field: Annotated[str | None, typer.Option(help="Column holding the question.", show_default=False)] = None,
    answer_field: Annotated[str | None, typer.Option(help="Column holding the gold answer.", show_default=False)] = None,
    choices_field: Annotated[str | None, typer.Option(help="Column holding the list of choices, or the columns "
                                                      "holding one choice each, in order: A,B,C,D.",
                                                      show_default=False)] = None,
    id_field: Annotated[str | None, typer.Option(help="Column holding a unique id.",
                                                 show_default="the preset's, else id; a row without one: its "
                                                 "place, row-0, row-1, … (gsm8k-0 under --preset gsm8k)")] = None,
    columns: Annotated[str | None, typer.Option(help="The columns of a CSV file without a header row, in order: "
                                                "question,A,B,C,D,answer (an empty name leaves a column out).",
                                                show_default=False)] = None,
    answer_base: Annotated[int | None, typer.Option(min=0, max=1, help="Golds are choices' indices, counted from "
                                                    "this: 1 for MedMCQA's original cop 1-4.",
                                                    show_default="a digit that is a choice's text is that choice, "
                                                    "else an index from 0")] = None,
) -> None:
    """Convert a benchmark export, or your own CSV, JSON or Parquet table of questions, into uab question records."""
    from .convert import convert_records, read_table

    check_output(output)
    check_apart(output, INPUT=input)
    _stdin_hint(input)
    write_records(output, convert_records(read_table(input, columns, preset), preset, question_field, answer_field, choices_field,
                                          id_field, path=display_name(input), answer_base=answer_base), streaming=True)


@command
def pool(ctx: typer.Context, input: In,
         output: Annotated[str, typer.Option("-o", "--output", "--out", help="Directory for pool.jsonl: resumable; "
                                             "a larger -K adds samples, a smaller one writes each question's first K "
                                             "(the rest stay in the checkpoint).", show_default=False)],
         samples: Annotated[int | None, typer.Option("-K", "--samples", "--k", min=1, max=INT64[1],
                                                     help="Samples per question.  [required, or the pool "
                                                     "directory's]", show_default=False)] = None,
         force: Force = False, price: Price = None, quiet: Quiet = False) -> None:
    """Draw K samples per question once, for `uab simulate` (resumable like `uab run`)."""
    check_output(output, "pool directory")
    recorded = ctx.meta["uab.recorded"]
    samples = samples or recorded.pool
    if samples is None:
        raise _UsageError("Missing option '-K' / '--samples' (samples per question; a pool directory's rerun "
                          "takes its own).", ctx=ctx)
    records, note = _questions(input)
    gen = Generation.from_params(ctx.params, recorded.generation)
    _same_template(ctx, gen)
    with _Bar(quiet) as bar:
        result = runs.pool(records, _backend(ctx, gen), gen, output, samples, force, input,
                           runs.Callbacks(bar.stage, bar.sample, on_skip=_skipped), ctx.params.get("max_model_len"),
                           price)
    if not quiet:
        if note:
            err.print(note, markup=False, highlight=False, soft_wrap=True)
        err.print(f"pool: {len(records)} questions × {samples} samples in {os.path.join(output, runs.POOL)} "
                  f"({result.drawn} drawn now)", markup=False)
        for line in cost.describe(result.summary):
            err.print(line, markup=False, highlight=False, soft_wrap=True)
        err.print(f"what it cost in {os.path.join(output, runs.SUMMARY)}", markup=False)


OWN_SIGNAL = "the pool's own: vcs for a pool drawn with --vcs, else anll"
PAPER_BUDGETS = "2,4,8 (the paper's), those the pool holds"
_TARGETS_HELP = ("Target accuracies in percent for the cost at fixed accuracy: the least N that reaches each, and "
                 "the saving against Uniform + majority.")
Targets = Annotated[str | None, typer.Option(metavar="PCT,...", show_default="5 inside Uniform + majority's range",
                                             callback=_listed, help=_TARGETS_HELP)]
ReportTargets = Annotated[str | None, typer.Option(
    metavar="PCT,...", show_default="the results file's (simulate's targets), else 5 inside Uniform + majority's range",
    callback=_listed, help=_TARGETS_HELP)]


@command
def simulate(
    ctx: typer.Context,
    pool: Annotated[str, typer.Argument(metavar="POOL", help="Pool JSONL from `uab pool` (or its run directory).",
                                        show_default=False, callback=_input)],
    output: Out = "-",
    budgets: Annotated[str | None, typer.Option(help="Comma-separated N values.", show_default=PAPER_BUDGETS,
                                                callback=_listed)] = None,
    allocators: Annotated[str, typer.Option(help="Comma-separated allocators (uniform is always replayed: Uniform + "
                                            "majority is the reference)." + _one_per_line(allocators.SUMMARIES),
                                            callback=_listed)]
    = ",".join(allocators.SIMULATED),
    signals: Annotated[str | None, typer.Option(help="Comma-separated signals." + _one_per_line(SIGNAL_SUMMARIES),
                                                show_default=OWN_SIGNAL, callback=_listed)] = None,
    seeds: Annotated[int, typer.Option(min=1, max=100_000, help="Number of replay seeds (0..seeds-1).")] = 20,
    signal_temperature: Annotated[str, typer.Option("--signal-temperature", "-T", help="T, or comma-separated Ts.",
                                                    callback=_listed)]
    = str(DEFAULT_T),
    vote_rules: Annotated[str, typer.Option(help="Comma-separated vote rules (majority is always replayed: Uniform + "
                                            "majority is the reference)." + _one_per_line(
                                                {r.name: r.summary for r in voting.RULES.values()}),
                                            callback=_listed)]
    = ",".join(voting.RULES),
    vote_signal: Annotated[VoteSignalName | None, typer.Option(help="Per-sample signal the confidence rules read.",
                                                               show_default=OWN_SIGNAL)] = None,
    vote_temperature: Annotated[str, typer.Option(
        help="Temperature of the confidence, w = exp(-s/T), or comma-separated temperatures: weighted is replayed "
        "at each, a candidate of its own (the rules that read only the confidences' order need none).",
        callback=_listed)]
    = ",".join(map(str, voting.SIMULATED_TEMPERATURES)),
    targets: Targets = None,
    price: PoolPrice = None,
    check: Annotated[str | None, typer.Option(
        metavar="RESULTS", show_default=False, callback=_input,
        help="Replay the recommendations of a `uab simulate -o` results file, chosen on other questions, on "
        "POOL instead: each N's combination against Uniform + majority on the same draws (--budgets picks the N; "
        "the combinations and their vote settings come from RESULTS).")] = None,
    quiet: Quiet = False,
) -> None:
    """Replay allocators × vote rules offline from a pool: mean ± std accuracy per N over seeds, the
    headroom to the oracle, the cost at fixed accuracy and what to run, chosen on held-out questions."""
    from . import analyses, evaluation, report

    # the options that list values (declared str) arrive as lists (``_listed``), checked before POOL is read
    if check is not None:
        return _check_recommendations(ctx, pool, check, budgets, seeds, output, quiet)
    check_output(output)
    check_apart(output, POOL=runs.pool_file(pool))
    records, pool_name = _pool(pool)
    price = price or runs.pool_price(pool)  # a --price given wins over the one the pool was drawn at
    if price and price.source and not quiet:
        err.print(f"note: the cost at fixed accuracy is priced at {price.input:g} in / {price.output:g} out per 1M "
                  f"tokens, the --price {price.source} records", markup=False, highlight=False, soft_wrap=True)
    if "vote_temperature" in _given(ctx) or "vote_temperature" in ctx.meta.get("uab.from_file", ()):
        Vote.check_candidates(vote_temperature, vote_rules, vote_signal, pipeline.default_signal(records.first))
    rule = from_params(Vote, {**ctx.params, "vote_signal": vote_signal, "vote_temperature": None})
    hard = Allocation.replayed(ctx.params, allocators)
    gain, exit_test = hard.gain, (hard.exit_test, hard.exit_nmax)
    temps = signal_temperature if len(signal_temperature) > 1 else signal_temperature[0]
    rows = list(evaluation.simulate(records, budgets, allocators, signals or [],  # []: the pool's own signal
                                    seeds, temps, gain, vote_rules=vote_rules,
                                    vote=rule, vote_temperatures=vote_temperature, recommendations=True,
                                    analyses=True, targets=targets, price=price, exit_test=exit_test,
                                    pool_name=pool_name))
    write_records(output, [evaluation.produced_by(records, pool, seeds, rule, gain, price=price,
                                                  vote_rules=vote_rules, vote_temperatures=vote_temperature,
                                                  exit_test=exit_test), *rows])
    if not quiet:
        typer.echo(report.markdown_table(evaluation.summarize(rows), evaluation.anll_correlation(records),
                                         evaluation.recommendations(rows)), err=True)
        typer.echo(report.markdown_cost(analyses.cost_rows(rows)), err=True)


COMBINATION = ("allocators", "signals", "signal_temperature", "vote_rules", "vote_signal", "vote_temperature", "targets",
               "price")
# simulate's own options that `simulate --check` takes from RESULTS instead (or, --price, does not use: it
# writes no cost at fixed accuracy), as it does every declared one but --settings


def _check_recommendations(ctx: typer.Context, pool: str, results: str, budgets: list[int] | None, seeds: int,
                           output: str, quiet: bool) -> None:
    """`uab simulate POOL --check RESULTS`: ``evaluation.check`` with its table."""
    from . import evaluation, recommend, report

    taken = (*COMBINATION, *(o.name for o in _declared("simulate") if o is not SETTINGS_FILE))
    given = [n for n in taken if n in _given(ctx) or n in ctx.meta.get("uab.from_file", ())]  # or a --settings file
    if given:
        raise UabError(f"--check replays the combinations of its results file: drop --{given[0].replace('_', '-')}")
    check_inputs(POOL=pool, check=results)
    check_output(output)
    numbered = _numbered(results)
    result_rows = [row for _, row in numbered]
    recs = recommend.from_results(results, budgets, numbered, functools.partial(_as_run, ctx))
    records, pool_name = _pool(pool)
    check_apart(output, check=results, POOL=pool_name)
    replays = evaluation.check(records, recs, seeds, pool_name, evaluation.whole_pool(result_rows))  # refused before the notes
    otherwise = evaluation.drawn_otherwise(result_rows, records)
    if otherwise and not quiet:
        err.print(f"note: {pool} was drawn with other settings than the pool behind {results} ("
                  + "; ".join(f"{o} {c}" for o, c in otherwise.items()) + "): the check replays the recommendation "
                  "on samples unlike those it was chosen on", markup=False, highlight=False, soft_wrap=True)
    judged = evaluation.judged_otherwise(recs, records)
    if judged and not quiet:
        err.print(f"note: the judge labels of {pool} were asked with --judge-max-tokens {judged[1]}, and the judge "
                  f"recommendation of {results} asks with {judged[0]}: the check replays it on labels unlike those "
                  "its run would ask for", markup=False, highlight=False, soft_wrap=True)
    if evaluation.same_questions(result_rows, records) and not quiet:
        err.print(f"note: {pool} holds the questions the recommendations of {results} were chosen on: the check is "
                  "not held out (on the same samples it replays the draws they were chosen on); check on a pool of "
                  "other questions", markup=False, highlight=False, soft_wrap=True)
    rows = list(replays)
    write_records(output, [evaluation.produced_by(records, pool, seeds, check=results), *rows])
    if not quiet:
        typer.echo(report.markdown_table(evaluation.summarize(rows), advise=False), err=True)
        typer.echo(recommend.markdown_check([r["check"] for r in rows if "check" in r]), err=True)


@command
def report(
    results: Annotated[str, typer.Argument(metavar="RESULTS", help="Results JSONL from `uab simulate`.",
                                           show_default=False, callback=_input)],
    output: Annotated[str, typer.Option("-o", "--output", help="Directory for the PNGs and summary.md.",
                                        show_default=False)],
    pool: Annotated[str | None, typer.Option(help="The pool, for the ANLL plot and correlation.",
                                                show_default=False, callback=_input)] = None,
    targets: ReportTargets = None,
) -> None:
    """Plots (accuracy vs N, allocation by level, ANLL of right vs wrong, cost at fixed accuracy,
    allocation by signal decile) and Markdown tables."""
    from . import report as reports

    check_inputs(RESULTS=results, pool=pool)
    check_output(output, "report directory")
    stdout()  # it lists the files written: refused closed, as where stdout is the output (nothing written)
    numbered = _numbered(results)
    lines, rows = [n for n, _ in numbered], [row for _, row in numbered]
    records, pool_name = _pool(pool) if pool else (None, None)
    reports.report(rows, records, output, targets, _plot_skipped, source=display_name(results), lines=lines,
                   pool=pool_name, listed=_list_paths)


def _list_paths(paths: list[str]) -> None:
    """The files report writes, on stdout (a failure to write it is a ``UabError`` naming stdout)."""
    with atomic_output("-") as out:
        out.write(b"".join(os.fsencode(path) + b"\n" for path in paths))


def _plot_skipped(name: str, why: str) -> None:
    err.print(f"not drawn: {name}: {why}", markup=False, highlight=False, soft_wrap=True)


# --- summaries ---------------------------------------------------------------------


def _print_table(table: Table) -> None:
    """A summary table on stderr, never narrower than it is: in a narrower console (``COLUMNS=40``)
    rich cut its numbers to '…' (accuracy ``65…``); its lines run past the edge instead (a
    terminal wraps them), every value whole."""
    options = err.options
    width = Measurement.get(err, options.update_width(1 << 16), table).maximum
    err.print(Segments(err.render(table, options.update_width(max(width, options.max_width)))), crop=False)


def _print_allocation(s: pipeline.AllocationSummary) -> None:
    table = Table(title="allocation", title_justify="left")
    table.add_column("samples per question", justify="right")
    table.add_column("questions", justify="right")
    for total, count in s.histogram.items():
        table.add_row(str(total), str(count))
    _print_table(table)
    spent = s.phase1 + s.phase2
    line = f"budget {s.budget}: phase 1 {s.phase1} + phase 2 {s.phase2} = {spent}"
    if s.saved:
        line += f" (skipped {s.saved}, {100 * s.saved / s.budget:.1f}% saved)"
    if s.fallbacks:
        line += f"; {s.fallback_note()}"
    err.print(line)


def _print_votes(s: pipeline.VoteSummary) -> None:
    table = Table(title="vote", title_justify="left")
    for col in ("questions", "graded", "accuracy", "coverage", "no answer", "samples", "tokens"):
        table.add_column(col, justify="right")
    acc = f"{100 * s.accuracy:.1f}%" if s.accuracy is not None else "-"
    cov = f"{100 * s.any_correct / s.graded:.1f}%" if s.graded else "-"
    tokens = "-" if s.tokens.completion_tokens is None else str(s.tokens.completion_tokens)  # completion tokens
    table.add_row(str(s.questions), str(s.graded), acc, cov, str(s.no_answer), str(s.samples), tokens)
    _print_table(table)
    if s.cut:
        cut = s.rule.cut if s.rule is not None else Vote().cut
        did = "their answers voted" if cut == "count" else "they did not vote"
        err.print(f"cut at --max-tokens: {s.cut} of {s.samples} samples ({100 * s.cut / s.samples:.0f}%); "
                  f"{did} (--cut-samples {cut})", highlight=False, soft_wrap=True)
    if s.filtered:
        err.print(f"withheld or cut by the service's content filter: {s.filtered} of {s.samples} samples; "
                  "they have no answer (finish_reason content_filter)", highlight=False, soft_wrap=True)
    if s.undrawn:
        err.print(f"{s.undrawn} question(s) hold fewer Phase-2 samples than allocated ('extra'): voted over what "
                  "they hold (run `uab phase2` first)", highlight=False, soft_wrap=True)
    if s.beyond:
        err.print(f"{s.beyond} question(s) hold more Phase-2 samples than allocated ('extra', an earlier allocation's): "
                  "voted over the ones this allocation asks for", highlight=False, soft_wrap=True)
    if s.unvoted:
        err.print(f"{s.unvoted} question(s) had no sample to vote", highlight=False, soft_wrap=True)
    if s.phase1_only:
        err.print(f"{s.phase1_only} question(s) hold no Phase-2 sample: --exclude-phase1 voted their Phase-1 "
                  "sample(s), as the paper's code did", highlight=False, soft_wrap=True)
    if s.rule is not None and s.rule.uses_confidence:
        line = f"vote rule: {s.rule.rule} ({s.rule.signal}"
        line += f", T={s.rule.temperature:g}" if s.rule.uses_temperature else ""
        line += f", keep {s.rule.keep:g})" if voting.RULES[s.rule.rule].keep else ")"
        if s.fallbacks:
            line += f"; {s.fallbacks} question(s) with a sample lacking {s.rule.signal} voted by majority"
        err.print(line, highlight=False, soft_wrap=True)
    if s.by_level:
        lv = Table(title="accuracy by level", title_justify="left")
        for col in ("level", "questions", "accuracy"):
            lv.add_column(col, justify="right")
        for level in sorted(s.by_level, key=level_order):
            n, c = s.by_level[level]
            lv.add_row(escape(level), str(n), f"{100 * c / n:.1f}%")
        _print_table(lv)


def _print_regrade(s: pipeline.RegradeSummary) -> None:
    line = f"regrade: {s.changed:,} of {s.samples:,} answers changed ({s.questions:,} questions)"
    if s.graded:
        line += f"; against gold, {s.now_right:,} went wrong → right and {s.now_wrong:,} right → wrong"
    else:
        line += "; no gold answers to grade them against"
    line += f"; {s.confidences_changed:,} verbalised confidences changed"
    if s.p_changed:
        line += f"; {s.p_changed:,} allocated p read again from them"
    err.print(line, highlight=False, soft_wrap=True)
    if s.p_stale:
        err.print(f"warning: {s.p_stale:,} question(s) keep the p their allocation read from the old answers or "
                  "confidences: its provenance records no T to read it again with (an allocator that reads no p)",
                  highlight=False, soft_wrap=True)
    if s.votes_dropped:
        err.print(f"dropped the vote of {s.votes_dropped:,} question(s), which counted the old answers: run `uab vote` on "
                  "the output", highlight=False, soft_wrap=True)


def main() -> None:
    """Console-script entry point."""
    escaping_stdout()
    app()


if __name__ == "__main__":
    sys.exit(main())

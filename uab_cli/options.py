"""Option declarations: every command-line option is declared once, next to what it sets (a
settings field in ``settings.py``, a backend in ``backends/``).

A declaration holds the option's flag, type, default, help, choices, bounds, help panel and
the commands that take it. The CLI builds its options, choices, defaults and grouped help
from the declarations; the settings objects validate with them (so a ``--settings`` file is
checked like the command line); provenance, the resume check and the recommendation's
flags name options through them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import UabError

# Help panels, in the order ``-h`` shows them.
PANELS = ("Input/output", "Options", "Generation", "Backend", "Allocation", "Vote")
RECORDED = ("Generation", "Allocation", "Vote")  # the panels of the settings a run directory's config records
GENERATING = ("phase1", "phase2", "run", "pool")  # the commands that draw samples
INT64 = (-(2**63), 2**63 - 1)  # what an integer option may hold: records and configs are JSON read by orjson
_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
AS_RECORDED = "the value recorded with it"  # ``Option.requires``: the other option's value when this one was recorded


def as_path(value: str) -> str:
    """``value`` made absolute where it names an existing file or directory (else a hub id or
    a name, as given): how an option that names a path is recorded (``Option.path``, ``--model``)."""
    return os.path.abspath(value) if value and os.path.exists(value) else value


def param_name(flag: str) -> str:
    """The parameter name of an option: ``--vote-keep`` -> ``vote_keep``."""
    return flag.split("/")[0].lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Option:
    """One command-line option.

    ``choices`` (or ``described``: choice -> one-line summary, shown by ``-h``) may be a
    callable, read when the CLI is built, so registries can grow first. ``minimum`` and
    ``maximum`` bound numbers (``open_min``: strictly above). ``show_default`` is the
    default's description where the default depends on something else. ``commands``: the
    commands that take it. ``noun`` names a value in messages ("unknown allocator ...").
    ``excludes``: the name of an option this one replaces: not both may be given, and giving
    this one drops the other's value from a lower layer (a settings file, a rerun's record).
    ``samples``: a backend option that changes what a drawn sample is (``--dtype``): recorded
    with the generation settings and checked on a rerun like them. ``requires``: ``(name,
    value)``, another option's value without which this one does not apply (``--tokenizer``
    with ``--endpoint completions``; ``AS_RECORDED``: the value it was recorded with, as
    ``--exit-threshold`` the ``--exit`` it was given for): a recorded value is dropped when the
    options given leave it without (``without_unmet``: a backend's, an allocation's alike).
    ``path``: the value names a local file or directory, or else a hub id: an existing path is
    recorded absolute (the same path typed another way is the same value).
    ``secret``: a value no message shows (an API key). ``remembered``: an option, no recorded
    setting, that a rerun of ``run`` or ``pool`` still takes from its directory where it is not
    given (``runs.remembered``: ``--max-model-len``); its help says so, as a recorded one's does.
    ``blank``: why a value of only white space is refused (``--model``: ``""`` is the default,
    ``" "`` names nothing); None: it is taken.
    """

    flag: str
    help: str
    type: type = str
    default: Any = None
    short: str | None = None
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    described: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None
    minimum: float | None = None
    open_min: bool = False
    maximum: float | None = None
    show_default: str | None = None
    panel: str = "Options"
    commands: tuple[str, ...] = ()
    required: bool = False
    noun: str | None = None
    excludes: str | None = None
    samples: bool = False
    requires: tuple[str, Any] | None = None
    path: bool = False
    secret: bool = False
    remembered: bool = False
    blank: str | None = None

    @property
    def name(self) -> str:
        return param_name(self.flag)

    def names(self) -> tuple[str, ...]:
        """The allowed values, ``()`` for any."""
        described = self.described() if callable(self.described) else self.described
        if described:
            return tuple(described)
        choices = self.choices() if callable(self.choices) else self.choices
        return tuple(choices or ())

    def summaries(self) -> Mapping[str, str]:
        return (self.described() if callable(self.described) else self.described) or {}

    def check(self, value) -> None:
        """Raise ``UabError`` unless ``value`` (not ``None``) has the option's type, is one of the
        choices and is in bounds: an integer within 64 bits, a number finite. Every value an
        option gets, from the command line or a ``--settings`` file, passes here."""
        if value is None:
            return
        flag = self.flag.split("/")[0]
        check_type(value, self.type, flag, self.secret)
        if self.blank is not None and value and not value.strip():
            raise UabError(f"{flag}: {self.blank}")
        if allowed := self.names():
            check_choice(value, allowed, self.noun or self.name.replace("_", " "))
        if self.type is float and not math.isfinite(value):
            raise UabError(f"{flag} must be a finite number, got {value}")
        if self.type is int and not INT64[0] <= value <= INT64[1]:
            raise UabError(f"{flag} must fit in 64 bits ({INT64[0]} to {INT64[1]}), got {value}")
        low = self.minimum is not None and (value <= self.minimum if self.open_min else value < self.minimum)
        high = self.maximum is not None and value > self.maximum
        if low or high:
            raise UabError(f"{flag} must be {self.bounds()}, got {value}")

    def bounds(self) -> str:
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f"in {'(' if self.open_min else '['}{lo:g}, {hi:g}]"
        if lo is not None:
            return f"{'>' if self.open_min else '>='} {lo:g}"
        return f"<= {hi:g}"

    def shown_default(self) -> str | None:
        """The default as ``-h`` shows it: ``show_default``, else the default (a flag's name for a
        bool); None: none shown."""
        shown = self.show_default if self.show_default is not None else self.default
        if isinstance(shown, bool):
            flags = self.flag.split("/")
            shown = flags[0 if shown else -1].lstrip("-")
        return None if shown in (None, "") else str(shown)

    def for_command(self, command: str, rerun: bool = False) -> Option:
        """The declaration as ``command`` takes it: ``phase2``'s generation options, and the backend
        options that change a sample (``samples``: ``--dtype``, ``--endpoint``, ``--tokenizer``), default
        to Phase 1's. ``rerun``: a rerun of ``command`` in its directory takes what the directory's
        config records for an option it does not give (``run``, ``pool``): a required option says so,
        and every recorded one (a setting's, a backend option that changes a sample, a ``remembered``
        one) shows it beside its default."""
        if command == "phase2" and (self.panel == "Generation" or self.samples):
            return replace(self, default=None, show_default="Phase 1's", required=False)
        if rerun and self.required:
            return replace(self, show_default="the run directory's")
        if rerun and (self.panel in RECORDED or self.samples or self.remembered):
            shown = self.shown_default()
            return replace(self, show_default=f"{shown + '; ' if shown else ''}a rerun: the directory's")
        return self


def check_choice(value, allowed: Iterable[str], noun: str) -> None:
    """The one rule for a value that names an entry of a registry (an option's choices, a listed
    name): ``UabError`` naming it as a ``noun`` and the choices unless it is one of ``allowed``."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise UabError(f"unknown {noun} {value!r}; choose from {', '.join(allowed)}")


_ITEMS = {str: "names", int: "integers", float: "numbers"}  # a listed value's kind, as messages name it


@dataclass(frozen=True)
class Listed:
    """A command's own option that lists values in one string, comma-separated (`uab simulate
    --budgets 2,4,8`; a ``--settings`` file's value is that string too). ``parse`` reads and checks
    it as the option is read, from the command line or the file, so a bad value is refused before
    any input is. ``kind``: each item's (``str``: a name); ``choices``: the registry a name is one
    of (read when checked, so registries can grow first), ``noun`` what messages call one
    (``unknown allocator 'x'; choose from ...``); ``then``: the values checked further and as the
    command takes them, given the text too (``-T``'s each checked as `uab run`'s)."""

    flag: str
    kind: type = str
    short: str | None = None
    choices: Callable[[], Iterable[str]] | None = None
    noun: str | None = None
    then: Callable[[str, list], list] | None = None

    @property
    def name(self) -> str:
        return param_name(self.flag)

    @property
    def shown(self) -> str:
        """The option as messages name it: ``-T/--signal-temperature``."""
        return f"{self.short}/{self.flag}" if self.short else self.flag

    def parse(self, text: str | None) -> list | None:
        """The values of ``text`` (``None``: not given); ``UabError`` naming the option for an empty
        item (``""``, ``a,,b``, ``a,``: one dropped silently would change what is replayed) or one
        not of ``kind``."""
        if text is None:
            return None
        items = [t.strip() for t in text.split(",")]
        what = _ITEMS[self.kind]
        if not all(items):
            raise UabError(f"{self.shown} takes comma-separated {what}, got {text!r}: an empty item")
        try:
            values = [self.kind(t) for t in items]
        except ValueError:
            raise UabError(f"{self.shown} takes comma-separated {what}, got {text!r}") from None
        self.check_names(values)
        return values if self.then is None else self.then(text, values)

    def check_names(self, values: Iterable) -> None:
        """``UabError`` for the first of ``values`` not in ``choices`` (``check_choice``; none: any
        value goes): as the option is parsed, and where a caller passes names no option parsed
        (``evaluation.simulate``)."""
        if self.choices is not None:
            allowed = tuple(self.choices())
            for value in values:
                check_choice(value, allowed, self.noun or self.name.replace("_", " "))


def check_type(value, kind, flag: str, secret: bool = False, listed: type | None = None) -> None:
    """``UabError`` unless ``value`` is of an option's ``kind`` (``bool``, ``int``, ``float``; any
    other, a choice's ``Literal`` say, takes a string): the one type rule for every value an
    option takes from a ``--settings`` file, a declared option's or a command's own (``-K "2"``
    is no integer there, as ``"budget": "2"`` is none). ``secret``: the message names the
    value's type, not the value. ``listed``: the kind of the items a string option lists,
    comma-separated (``Listed.kind``: ``simulate --vote-temperature``): for numbers, the message
    spells a number (or a list of them) as the string to write."""
    kind = kind if kind in _KINDS else str
    if not _is(value, kind):
        name = type(value).__name__
        got = f"{'an' if name[0] in 'aeiou' else 'a'} {name}" if secret else repr(value)
        raise UabError(f"{flag} takes {_KINDS[kind]}, got {got}{_as_listed(value, listed)}")


def _as_listed(value, listed: type | None) -> str:
    """How ``check_type`` tells the string to write for ``value``, numbers of kind ``listed``."""
    numbers = value if isinstance(value, list) else [value]
    if listed in (None, str) or not numbers or not all(_is(v, listed) for v in numbers):
        return ""
    return f' (comma-separated numbers: write "{",".join(map(str, numbers))}")'


def _is(value, kind: type) -> bool:
    """Whether ``value`` is of an option's ``kind``: a number option takes an integer too, and
    no number option takes a bool."""
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def declared_fields(cls) -> list:
    """The fields of a settings dataclass that an option sets (their metadata declares it)."""
    return [f for f in fields(cls) if "option" in f.metadata]


def declared(cls) -> list[Option]:
    """The options a settings dataclass declares in its fields' metadata."""
    return [f.metadata["option"] for f in declared_fields(cls)]


def exclusive(options: Iterable[Option]) -> list[tuple[str, str]]:
    """``(name, excluded)`` for each option that replaces another."""
    return [(o.name, o.excludes) for o in options if o.excludes]


def overlay(lower: Mapping[str, Any], upper: Mapping[str, Any], options: Iterable[Option]) -> dict[str, Any]:
    """``upper``'s values over ``lower``'s, by option name (``None``: not given): an option
    ``upper`` gives drops the one it excludes (or is excluded by) from ``lower``; ``UabError``
    if ``upper`` gives both."""
    upper = {k: v for k, v in upper.items() if v is not None}
    lower = {k: v for k, v in lower.items() if v is not None}
    for one, other in exclusive(options):
        if one in upper and other in upper:
            raise UabError(f"--{other.replace('_', '-')} and --{one.replace('_', '-')} exclude each other: give one")
        for given, dropped in ((one, other), (other, one)):
            if given in upper:
                lower.pop(dropped, None)
    return {**lower, **upper}


def without_unmet(options: Iterable[Option], values: Mapping[str, Any], given: Mapping[str, Any],
                  recorded: Mapping[str, Any], fixed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The one ``Option.requires`` rule: ``values`` (the options in force, by name) without each
    one ``given`` leaves unset (``None``: taken from ``recorded``, a lower layer) whose required
    option is not at the value it requires, or for ``AS_RECORDED`` not at the value ``recorded``
    holds for it. ``fixed``: the values a preset sets, in force where ``values`` have none and
    recorded with it. In ``options``' order: a value dropped drops what requires it
    (``--exit-nmax`` with the ``--exit-test official`` it needs)."""
    fixed = fixed or {}
    was = {**recorded, **fixed}
    kept = dict(values)
    for o in options:
        if not o.requires or given.get(o.name) is not None:
            continue
        name, value = o.requires
        now = kept.get(name) if kept.get(name) is not None else fixed.get(name)
        if now != (was.get(name) if value is AS_RECORDED else value):
            kept.pop(o.name, None)
    return kept


def check_fields(obj) -> None:
    """Validate a settings object's fields against their declarations."""
    for f in fields(obj):
        if "option" in f.metadata:
            f.metadata["option"].check(getattr(obj, f.name))


def fill_defaults(obj) -> frozenset[str]:
    """Set each field of a (frozen) settings object left ``None`` to its option's default; returns
    the fields given, those that were not ``None``: a value given equal to the default is told
    from none (a preset refuses ``--gain algorithm1``, as it refuses ``--gain coverage`` where
    it fixes the other)."""
    given = frozenset(f.name for f in declared_fields(type(obj)) if getattr(obj, f.name) is not None)
    for f in declared_fields(type(obj)):
        if f.name not in given:
            object.__setattr__(obj, f.name, f.metadata["option"].default)
    return given


def from_params(cls, params: Mapping[str, Any]):
    """A settings object from parameter values by option name (fields whose option is absent
    from ``params`` or ``None`` there keep their default)."""
    values = {}
    for f in fields(cls):
        opt = f.metadata.get("option")
        if opt is not None and params.get(opt.name) is not None:
            values[f.name] = params[opt.name]
    return cls(**values)

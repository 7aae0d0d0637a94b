"""Option declarations: every command-line option is declared once, next to what it sets (a
settings field in ``settings.py``, a backend in ``backends/``).

A declaration holds the option's flag, type, default, help, choices, bounds, help panel and
the commands that take it. The CLI builds its options, choices, defaults and grouped help
from the declarations; the settings objects validate with them (so a ``--settings`` file is
checked like the command line); provenance, the resume check and the recommendation's
flags name options through them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import UabError

# Help panels, in the order ``-h`` shows them.
PANELS = ("Input/output", "Options", "Generation", "Backend", "Allocation", "Vote")
GENERATING = ("phase1", "phase2", "run", "pool")  # the commands that draw samples


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
        """Raise ``UabError`` unless ``value`` (not ``None``) is one of the choices and in bounds."""
        if value is None:
            return
        allowed = self.names()
        if allowed and value not in allowed:
            noun = self.noun or self.name.replace("_", " ")
            raise UabError(f"unknown {noun} {value!r}; choose from {', '.join(allowed)}")
        low = self.minimum is not None and (value <= self.minimum if self.open_min else value < self.minimum)
        high = self.maximum is not None and value > self.maximum
        if low or high:
            raise UabError(f"{self.flag.split('/')[0]} must be {self.bounds()}, got {value}")

    def bounds(self) -> str:
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f"in {'(' if self.open_min else '['}{lo:g}, {hi:g}]"
        if lo is not None:
            return f"{'>' if self.open_min else '>='} {lo:g}"
        return f"<= {hi:g}"

    def for_command(self, command: str) -> Option:
        """The declaration as ``command`` takes it: ``phase2``'s generation options default to
        Phase 1's."""
        if command == "phase2" and self.panel == "Generation":
            return replace(self, default=None, show_default="Phase 1's", required=False)
        return self


def declared(cls) -> list[Option]:
    """The options a settings dataclass declares in its fields' metadata."""
    return [f.metadata["option"] for f in fields(cls) if "option" in f.metadata]


def check_fields(obj) -> None:
    """Validate a settings object's fields against their declarations."""
    for f in fields(obj):
        if "option" in f.metadata:
            f.metadata["option"].check(getattr(obj, f.name))


def from_params(cls, params: Mapping[str, Any]):
    """A settings object from parameter values by option name (fields whose option is absent
    from ``params`` or ``None`` there keep their default)."""
    values = {}
    for f in fields(cls):
        opt = f.metadata.get("option")
        if opt is not None and params.get(opt.name) is not None:
            values[f.name] = params[opt.name]
    return cls(**values)

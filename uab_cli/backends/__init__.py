"""Backend registry: name → factory. The CLI's ``--backend`` choices come from ``BACKENDS``."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..errors import UabError
from ..options import Option, as_path, without_unmet
from .base import Backend, BaseBackend, Completion, Retry, SampleRequest, SamplingParams


def _local():
    from .local import LocalBackend

    return LocalBackend


def _vllm():
    from .vllm import VLLMBackend

    return VLLMBackend


def _openai():
    from .openai import OpenAIBackend

    return OpenAIBackend


def _cohere():
    from .cohere import CohereBackend

    return CohereBackend


def _scripted():
    from .scripted import ScriptedBackend

    return ScriptedBackend


BACKENDS: dict[str, Callable[[], type]] = {
    "local": _local,
    "vllm": _vllm,
    "openai": _openai,
    "cohere": _cohere,
    "scripted": _scripted,
}


def backend_factory(name: str, model: str | None = None, retries: int | None = None,
                    on_status: Callable[[str], None] | None = None, **options) -> Callable[[], Backend]:
    """Check a backend's options now, build it when called (loading a model can take a while).

    Options left ``None`` keep the backend's default. An option the backend does not declare
    (``--base-url`` with ``local``, say) is a ``UabError`` naming the backends it applies
    to. ``retries`` counts attempts per request. ``on_status`` receives status lines (a first
    run's model conversion) from the backends that report them.
    """
    if name not in BACKENDS:
        raise UabError(f"unknown backend {name!r}; choose from {', '.join(BACKENDS)}")
    given = {k: v for k, v in {**options, "retries": retries}.items() if v is not None}
    cls = BACKENDS[name]()
    declared = {o.name: o for o in cls.options}
    for key, value in given.items():
        if key not in declared:
            users = [b for b in BACKENDS if any(o.name == key for o in BACKENDS[b]().options)]
            raise UabError(f"--{key.replace('_', '-')} does not apply to the {name} backend"
                           + (f" (only to {', '.join(users)})" if users else ""))
        declared[key].check(value)
    if "retries" in given:
        given["retry"] = Retry(attempts=given.pop("retries"))
    if model:
        given["model"] = model
    if on_status is not None and cls.reports_status:
        given["on_status"] = on_status
    return lambda: cls(**given)


def options() -> list[Option]:
    """Every backend's options, one per name, in registry order; the help names the backends
    that take it where not all do, and the default shown is the backend's own."""
    users: dict[str, list[str]] = {}
    merged: dict[str, Option] = {}
    public = [b for b in BACKENDS if b != "scripted"]
    for backend in public:
        cls = BACKENDS[backend]()
        for opt in cls.options:
            users.setdefault(opt.name, []).append(backend)
            if opt.name not in merged:
                merged[opt.name] = opt if opt.show_default is not None else replace(
                    opt, show_default=_shown_default(cls, opt.name))
    return [replace(o, help=o.help if len(users[n]) == len(public) else f"{', '.join(users[n])}: {o.help}")
            for n, o in merged.items()]


def sample_options(name: str, given: Mapping[str, Any] | None = None,
                   recorded: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options of backend ``name`` that change what a sample is (``Option.samples``: the
    dtype, the openai endpoint and tokenizer), each at its ``given`` value, else its
    ``recorded`` one (an earlier stage's), else the backend's own default: the generation
    settings record them, known before the model loads. A recorded value whose ``requires``
    the others no longer meet is dropped (``options.without_unmet``); a value the backend
    always means by another (``same_as``) and an existing ``path`` are written one way."""
    if name not in BACKENDS:
        return {}
    cls = BACKENDS[name]()
    declared = [o for o in cls.options if o.samples]
    given = {k: v for k, v in (given or {}).items() if v is not None}
    layers = ({o.name: _default(cls, o.name) for o in declared}, recorded or {}, given)
    values = {o.name: _written(cls, o, next(layer[o.name] for layer in reversed(layers) if o.name in layer))
              for o in declared}
    kept = without_unmet(declared, values, given, recorded or {})
    return {o.name: kept[o.name] if o.name in kept else _written(cls, o, _default(cls, o.name)) for o in declared}


def _written(cls: type, option: Option, value):
    """``value`` of ``option`` written one way: as the value backend ``cls`` always means by it
    (``same_as``), an existing ``path`` absolute."""
    value = cls.same_as.get(option.name, {}).get(value, value)
    return as_path(value) if option.path and isinstance(value, str) else value


def _default(cls: type, name: str):
    """The default of constructor parameter ``name``, from the first class in ``cls``'s MRO that
    names it (a remote backend passes ``concurrency`` and ``timeout`` on to ``RemoteBackend``)."""
    for klass in cls.__mro__:
        param = inspect.signature(klass).parameters.get(name) if "__init__" in vars(klass) else None
        if param is not None:
            return None if param.default is inspect.Parameter.empty else param.default
    return None


def _shown_default(cls: type, name: str) -> str | None:
    default = _default(cls, name)
    return None if default is None else str(default)


__all__ = ["BACKENDS", "Backend", "BaseBackend", "Completion", "SampleRequest",
           "SamplingParams", "backend_factory", "options", "sample_options"]

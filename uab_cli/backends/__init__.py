"""Backend registry: name → factory. The CLI's ``--backend`` choices come from ``BACKENDS``."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ..errors import UabError
from .base import Backend, BaseBackend, Completion, SampleRequest, SamplingParams

DEFAULT_BACKEND = "local"


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


def create_backend(name: str, **options) -> Backend:
    """Build a backend by name from the options it takes; ``None`` leaves its default.

    Options meant for other backends (``--base-url`` with ``local``, say) are ignored.
    """
    if name not in BACKENDS:
        raise UabError(f"unknown backend {name!r}; choose from {', '.join(BACKENDS)}")
    cls = BACKENDS[name]()
    accepted = inspect.signature(cls).parameters
    return cls(**{k: v for k, v in options.items() if v is not None and k in accepted})


__all__ = ["BACKENDS", "DEFAULT_BACKEND", "Backend", "BaseBackend", "Completion", "SampleRequest",
           "SamplingParams", "create_backend"]

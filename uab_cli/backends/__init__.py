"""Backend registry: name → factory. The CLI's ``--backend`` choices come from ``BACKENDS``."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UabError
from .base import Backend, BaseBackend, Completion, SampleRequest, SamplingParams

DEFAULT_BACKEND = "local"


def _local(**kw) -> Backend:
    from .local import LocalBackend

    return LocalBackend(**kw)


def _vllm(**kw) -> Backend:
    from .vllm import VLLMBackend

    return VLLMBackend(**kw)


def _openai(**kw) -> Backend:
    from .openai import OpenAIBackend

    return OpenAIBackend(**kw)


def _cohere(**kw) -> Backend:
    from .cohere import CohereBackend

    return CohereBackend(**kw)


def _scripted(**kw) -> Backend:
    from .scripted import ScriptedBackend

    return ScriptedBackend(**kw)


BACKENDS: dict[str, Callable[..., Backend]] = {
    "local": _local,
    "vllm": _vllm,
    "openai": _openai,
    "cohere": _cohere,
    "scripted": _scripted,
}


def create_backend(name: str, **options) -> Backend:
    """Build a backend by name; options that are ``None`` are left to the backend's defaults."""
    if name not in BACKENDS:
        raise UabError(f"unknown backend {name!r}; choose from {', '.join(BACKENDS)}")
    return BACKENDS[name](**{k: v for k, v in options.items() if v is not None})


__all__ = ["BACKENDS", "DEFAULT_BACKEND", "Backend", "BaseBackend", "Completion", "SampleRequest",
           "SamplingParams", "create_backend"]

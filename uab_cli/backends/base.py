"""The one protocol every model backend implements, and the value types it exchanges.

A backend turns a batch of chat prompts (each with its own seed) into completions.
Everything else (prompts, seeds, signals, checkpoints) lives outside the backends.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol, runtime_checkable

from ..errors import UabError, require  # noqa: F401  (backends import require from here)
from ..options import GENERATING, Option

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}

#: The finish reason of a reply the service's content filter withheld or cut (OpenAI's, Azure's):
#: drawn and paid for, so a sample, but its text is not the model's answer.
FILTERED = "content_filter"


@dataclass(frozen=True)
class SampleRequest:
    """One sample to draw: a chat conversation and the seed that fixes its randomness."""

    messages: tuple[Message, ...]
    seed: int


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings shared by every request in one ``generate`` call; ``UabError`` when
    ``max_tokens`` or ``top_p`` is out of range."""

    temperature: float = 0.9
    max_tokens: int = 1024
    top_p: float = 1.0
    # Every reply must carry its tokens' logprobs: a remote reply without them is malformed
    # (retried, never kept). Set where the signal needs them and the server has shown it sends them.
    logprobs: bool = False

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise UabError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if not 0 < self.top_p <= 1:
            raise UabError(f"top_p must be in (0, 1], got {self.top_p}")


@dataclass(frozen=True)
class Completion:
    """One generated sample.

    ``token_logprobs`` are natural-log probabilities of the sampled tokens, one per
    generated token (EOS included when the engine reports it), or ``None`` when the
    service does not return them. ``finish_reason`` is ``"stop"`` (EOS or stop string),
    ``"length"`` (hit ``max_tokens``) or ``FILTERED`` (the service's content filter withheld or
    cut the reply), as the service reports it. ``n_tokens`` counts
    the generated tokens, ``prompt_tokens`` the prompt's (each ``None`` where the service does
    not report it). ``reasoning`` is the
    reasoning a server returned apart from ``text`` (vLLM's reasoning parsers:
    ``reasoning_content``), kept but never graded; ``tokens`` the text of each generated token,
    one per logprob, where the backend knows it (to find the answer part's logprobs).
    """

    text: str
    token_logprobs: tuple[float, ...] | None
    n_tokens: int | None
    finish_reason: str
    _: KW_ONLY  # the optional fields by name: several backends fill different ones
    reasoning: str | None = None
    tokens: tuple[str, ...] | None = None
    prompt_tokens: int | None = None


OnResult = Callable[[int, Completion], None]


@dataclass(frozen=True)
class PromptLength:
    """A chat prompt's size in tokens: exact, or (``exact`` false) a lower bound for a prompt
    too long to be worth tokenising whole."""

    tokens: int
    exact: bool = True


@runtime_checkable
class Backend(Protocol):
    """A model that samples completions.

    ``generate`` returns one completion per request, in request order. It calls
    ``on_result(index, completion)`` as each completion is ready (the pipeline uses this
    to checkpoint), and raises ``BackendError`` when a request still fails after retries;
    completions already reported through ``on_result`` stay valid.

    ``context_length`` is the model's context in tokens (prompt plus completion), ``None``
    when unknown; ``prompt_lengths`` sizes chat prompts against it (``None`` for a prompt it
    cannot count), so a prompt that cannot run is refused before anything is drawn.
    """

    name: str
    model: str
    returns_logprobs: bool
    context_length: int | None

    def prompt_lengths(self, prompts: Sequence[tuple[Message, ...]], limit: int) -> list[PromptLength | None]: ...

    def generate(
        self,
        requests: Sequence[SampleRequest],
        params: SamplingParams,
        on_result: OnResult | None = None,
    ) -> list[Completion]: ...

    def close(self) -> None: ...


def backend_option(flag: str, help: str, type: type = str, **kw) -> Option:
    """A backend's command-line option (``Backend.options``); left unset, the backend's own
    default applies, so the option's default is ``None``."""
    return Option(flag, help, type=type, panel="Backend", commands=GENERATING, **kw)


DTYPES = ("auto", "float32", "bfloat16", "float16")
DTYPE = backend_option("--dtype", "dtype (auto: float32 on CPU).", choices=DTYPES, show_default="auto", samples=True)
MAX_MODEL_LEN = backend_option(
    "--max-model-len", "Context length in tokens: a prompt plus --max-tokens must fit (vllm: the engine's; "
    "openai: for a server that does not report one).", type=int, minimum=1,
    show_default="the model's / the server's", remembered=True)  # runs.remembered


class BaseBackend:
    """Shared behaviour: context manager, a no-op ``close``, a readable ``repr``.

    ``options`` declares the command-line options a backend takes (each a constructor
    parameter of the same name; ``--retries`` sets ``retry``); ``same_as``: option name ->
    {value: the value it always means} (``local``'s ``--dtype auto`` is float32), so both are
    recorded alike; ``reports_status``: whether it takes ``on_status``; ``engine``: see below."""

    name = "base"
    model = ""
    returns_logprobs = False
    context_length: int | None = None
    options: tuple[Option, ...] = ()
    same_as: dict[str, dict] = {}
    reports_status = False
    # The settings it runs with that change no sample but that running it again needs (vLLM's
    # engine options), recorded in each sampling stage's provenance as ``engine``; none here.
    engine: dict = {}

    def prompt_lengths(self, prompts: Sequence[tuple[Message, ...]], limit: int) -> list[PromptLength | None]:
        """Each chat prompt's length in tokens, exact up to ``limit`` (beyond it a lower bound
        may do); ``None`` where the backend cannot count. The default counts nothing."""
        return [None] * len(prompts)

    def generate(self, requests: Sequence[SampleRequest], params: SamplingParams,
                 on_result: OnResult | None = None) -> list[Completion]:
        """One completion per request, in request order (the ``Backend`` protocol); no requests
        is no work, the others go to ``_generate``."""
        requests = list(requests)
        return self._generate(requests, params, on_result) if requests else []

    def _generate(self, requests: list[SampleRequest], params: SamplingParams,
                  on_result: OnResult | None) -> list[Completion]:
        """Sample ``requests`` (at least one); ``on_result(index, completion)`` as each is ready."""
        raise NotImplementedError

    def close(self) -> None:
        """Release engines, clients and threads; the default holds nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model!r}>"


@dataclass
class Retry:
    """Retry policy with exponential backoff for remote backends.

    ``attempts`` counts every try, the first included. ``retry_after`` from the server
    (seconds) is waited instead of the computed delay where it is longer, capped at
    ``max_delay``; a shorter one (``Retry-After: 0``, an HTTP-date already past) never cuts
    the backoff short.
    """

    attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    jitter: bool = True

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before try number ``attempt + 1`` (``attempt`` starts at 1): the
        exponential delay, with ``jitter`` between its half and all of it (so requests that
        failed together do not all come back together), or the server's longer ``retry_after``."""
        delay = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        delay = delay * (0.5 + random.random() / 2) if self.jitter else delay
        if retry_after is not None and retry_after > delay:
            return min(retry_after, self.max_delay)
        return delay

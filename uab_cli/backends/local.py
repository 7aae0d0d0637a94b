"""Embedded transformers backend (CPU, SmolLM2 by default) with continuous batching: each
sample draws its tokens from its own ``torch.Generator(seed)`` and sees only its own tokens,
so its text never depends on the batch around it.
``token_logprobs`` are raw model log-probs (temperature 1, before top-p), as vLLM's "raw_logprobs".
"""

from __future__ import annotations

import contextlib
import inspect
import os
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby

from ..errors import BackendError, UabError
from ..models import cannot_load, offline_unless_reachable, quiet_stderr, resolve_model, vllm_model_dir
from ..reasoning import answer_start, opening_marker
from .base import (
    DTYPE,
    DTYPES,
    MAX_MODEL_LEN,
    BaseBackend,
    Completion,
    OnResult,
    PromptLength,
    SampleRequest,
    SamplingParams,
    require,
)
from .batching import Rows, plain_cache_layers, prefill, use_grouped_decode
from .tokens import ChatTokens, config_context, decode, marker_ids

_DTYPES = DTYPES[1:]  # "auto" means float32
_SEED_MASK = 0xFFFF_FFFF_FFFF_FFFF
_PREFILL_TOKENS = 4096  # at most this many (padded) prompt tokens per prefill forward
_SHARED_PREFIX = 16  # prompts sharing this many leading tokens prefill them once


def _omp_threads() -> int | None:
    """``$OMP_NUM_THREADS`` as torch's thread count; unset, ``None`` (half the CPUs). A value
    that is no positive integer is dropped with a warning (OpenMP would warn and use every CPU,
    several times slower), before torch loads OpenMP."""
    value = os.environ.get("OMP_NUM_THREADS")
    if value is None:
        return None
    digits = value.strip()
    if digits.isascii() and digits.isdigit() and int(digits) > 0:  # OpenMP reads ASCII digits alone ('²' is a digit)
        return int(digits)
    del os.environ["OMP_NUM_THREADS"]
    warnings.warn(f"OMP_NUM_THREADS={value!r} is not a positive integer: ignored (half the CPUs instead)",
                  UserWarning, stacklevel=3)
    return None


def _default_threads() -> int:
    """Half the usable CPUs: oversubscribed OpenMP threads slow decoding by 10x or more."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)


class LocalBackend(BaseBackend):
    """Samples with a transformers causal LM in this process, batching samples continuously.

    ``threads`` sets torch's CPU threads; by default ``$OMP_NUM_THREADS`` or half the CPUs.
    The context length is the model config's, or ``max_model_len`` when smaller.
    """

    name = "local"
    returns_logprobs = True
    options = (DTYPE, MAX_MODEL_LEN)
    same_as = {"dtype": {"auto": "float32"}}
    reports_status = True

    def __init__(
        self,
        model: str | None = None,
        device: str = "cpu",
        batch_size: int = 16,
        dtype: str = "float32",
        threads: int | None = None,
        on_status: Callable[[str], None] | None = None,
        max_model_len: int | None = None,
    ):
        if batch_size < 1:
            raise UabError(f"batch size must be at least 1, got {batch_size}")
        dtype = self.same_as["dtype"].get(dtype, dtype)
        if dtype not in _DTYPES:
            raise UabError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
        threads = threads if threads is not None else _omp_threads()
        torch = require("torch", "local")
        transformers = require("transformers", "local")
        self._torch = torch
        self.batch_size = batch_size
        resolved = resolve_model(model)
        self.model = resolved.name
        self.model_package = resolved.package
        path = vllm_model_dir(model, on_status) if resolved.gguf_file else resolved.path
        if threads is not None:
            torch.set_num_threads(max(1, threads))
        elif device == "cpu":
            torch.set_num_threads(_default_threads())
        try:
            self.device = torch.device(device)
        except RuntimeError as exc:
            raise UabError(f"unknown device {device!r}") from exc
        offline = offline_unless_reachable(path)
        try:
            with quiet_stderr(), _quiet_third_party(transformers):
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(path)
                self.lm = transformers.AutoModelForCausalLM.from_pretrained(
                    path, dtype=getattr(torch, dtype)
                )
            self.lm.to(self.device).eval()
        except Exception as exc:  # transformers raises many types on bad weights and missing files
            raise UabError(cannot_load(resolved.name, path, exc, offline)) from exc
        self._transformers = transformers
        self._chat = ChatTokens(self.tokenizer, self.model)
        self._markers = marker_ids(self.tokenizer)
        known = config_context(self.lm.config)
        self.context_length = min(filter(None, (known, max_model_len)), default=None)
        self._stop_ids = self._eos_ids()
        params = inspect.signature(self.lm.forward).parameters
        self._keep_last = next(
            ({k: 1} for k in ("logits_to_keep", "num_logits_to_keep") if k in params),
            {},
        )
        with _quiet_third_party(transformers):
            use_grouped_decode(transformers, torch, self.lm)
            # rows of different prompts share a batch when the cache tolerates left padding
            self._mixed = plain_cache_layers(
                transformers.DynamicCache, transformers.cache_utils.DynamicLayer, self.lm.config
            )

    def _eos_ids(self) -> frozenset[int]:
        ids = self.lm.generation_config.eos_token_id
        ids = set(
            ids if isinstance(ids, (list, tuple)) else [ids] if ids is not None else []
        )
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        if not ids:
            raise BackendError(f"model {self.model!r} defines no end-of-sequence token")
        return frozenset(ids)

    def prompt_text(self, messages: Sequence[dict]) -> str:
        """The chat-templated prompt, ready for the assistant's turn."""
        return self._chat.text(messages)

    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        """Token ids of the chat-templated prompt, ready for the assistant's turn."""
        return self._chat.ids(messages)

    def prompt_lengths(self, prompts: Sequence[tuple[dict, ...]], limit: int) -> list[PromptLength | None]:
        """Each prompt's tokens, counted in bounded memory (``tokens.ChatTokens.length``), without
        the tokenizer's warning that a prompt beyond its ``model_max_length`` "will result in
        indexing errors": the context is checked against the model's, and no such prompt is run."""
        with _quiet_third_party(self._transformers):
            return [self._chat.length(messages, limit) for messages in prompts]

    def _generate(self, requests: list[SampleRequest], params: SamplingParams,
                  on_result: OnResult | None) -> list[Completion]:
        """Sample one completion per request; ``on_result`` fires as each one finishes."""
        texts = [self.prompt_text(request.messages) for request in requests]
        with _quiet_third_party(self._transformers):
            prompts = [tuple(self.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
        # A template that opens the reasoning in the prompt (DeepSeek-R1 distills: "<think>\n"):
        # the reply starts with it, so a reply cut while thinking reads as such.
        opened = [opening_marker(t) for t in texts]
        room = None if self.context_length is None else self.context_length - params.max_tokens
        long = next((i for i, p in enumerate(prompts) if room is not None and len(p) > room), None)
        if long is not None:  # never prefill a prompt the model cannot attend to
            raise UabError(f"prompt {long} has {len(prompts[long]):,} tokens; with {params.max_tokens} new tokens "
                           f"it exceeds the model's context of {self.context_length:,}")
        results: list[Completion | None] = [None] * len(requests)

        def done(i: int, completion: Completion) -> None:
            completion = replace(completion, prompt_tokens=len(prompts[i]))
            if opened[i]:
                completion = replace(completion, text=opened[i] + completion.text)
            results[i] = completion
            if on_result is not None:
                on_result(i, completion)

        try:
            with self._torch.inference_mode(), _quiet_third_party(self._transformers):
                self._decode(prompts, [r.seed for r in requests], params, done)
        except RuntimeError as exc:
            raise BackendError(f"local generation failed: {exc}") from exc
        return results  # type: ignore[return-value]

    def _decode(self, prompts, seeds, params, done) -> None:
        """Continuous batching: up to ``batch_size`` rows decode together, and a finished
        row's slot goes to the next waiting sample (samples of one prompt kept together)."""
        torch = self._torch
        first = {}
        for i, prompt in enumerate(prompts):
            first.setdefault(prompt, i)
        queue = deque(sorted(range(len(prompts)), key=lambda i: first[prompts[i]]))
        admit = _Admission(self, prompts, queue)
        batch: Rows | None = None
        live: list[_Row] = []
        while queue or live:
            free = self.batch_size - len(live)
            if queue and free and (self._mixed or not live):
                new, taken = admit.next(free)
                batch = new if batch is None else batch.join(new)
                live += [_Row(i, torch.Generator().manual_seed(seeds[i] & _SEED_MASK)) for i in taken]
            u = torch.stack([torch.rand((), generator=row.generator, dtype=torch.float64) for row in live])
            picked, raw = _sample(torch, batch.logits.float(), u.to(batch.logits.device), params)
            keep = []
            for k, (row, token, lp) in enumerate(zip(live, picked.tolist(), raw.tolist())):
                row.tokens.append(token)
                row.logprobs.append(lp)
                stop = token in self._stop_ids
                if stop or len(row.tokens) >= params.max_tokens:
                    done(row.index, self._completion(row.tokens, row.logprobs, stop))
                else:
                    keep.append(k)
            if len(keep) < len(live):
                live = [live[k] for k in keep]
                batch = batch.take(keep) if keep else None
                picked = picked[keep]
            if live:
                batch.step(self.lm, picked)

    def _completion(
        self, tokens: list[int], logprobs: list[float], stop: bool
    ) -> Completion:
        body = tokens[:-1] if stop else tokens
        text = decode(self.tokenizer, body, self._markers)
        # each token's text, for a reply with reasoning (to find the answer part's logprobs)
        pieces = None
        if answer_start(text):
            pieces = tuple(decode(self.tokenizer, [t], self._markers) for t in tokens)
        return Completion(
            text, tuple(logprobs), len(tokens), "stop" if stop else "length", tokens=pieces
        )

    def close(self) -> None:
        """Drop the model so its memory can be reclaimed."""
        self.__dict__.pop("lm", None)


@contextlib.contextmanager
def _quiet_third_party(transformers):
    """Keep transformers', torch's and gguf's warnings and log lines off the user's stderr while
    the model loads and samples, and only then: warnings raised from those packages, and
    deprecation notices (uab raises none; a library's may name its caller, uab), are ignored
    and transformers' logger shows errors only, all restored on exit; uab's own warnings (from
    ``on_result`` callbacks, say) still show. The tests run without it to catch a deprecated call.
    """
    level = transformers.logging.get_verbosity()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=_THIRD_PARTY)
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", category=category)
        transformers.logging.set_verbosity_error()
        try:
            yield
        finally:
            transformers.logging.set_verbosity(level)


_THIRD_PARTY = r"(transformers|torch|gguf|accelerate|huggingface_hub|tokenizers|safetensors)(\.|$)"


@dataclass
class _Row:
    """One sample being decoded: its request, its random stream and what it drew so far."""

    index: int
    generator: object
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)


class _Admission:
    """Turns waiting samples into rows: prompts are prefilled in batches on top of the prefix
    their family shares (instruction and few-shot examples, prefilled once), and a prompt's
    prefilled row is kept while more of its samples wait, so each prompt is prefilled once."""

    def __init__(self, backend: LocalBackend, prompts: list[tuple[int, ...]], queue: deque):
        self.backend, self.prompts, self.queue = backend, prompts, queue
        self.ready: dict[tuple[int, ...], tuple[Rows, int]] = {}
        distinct = list(dict.fromkeys(prompts))
        # prompt -> (length of its family's shared prefix, that prefix's cached row)
        self.family: dict[tuple[int, ...], tuple[int, Rows | None]] = dict.fromkeys(distinct, (0, None))
        for group in _families(distinct) if backend._mixed else ():
            cut = min(len(os.path.commonprefix(group)), min(map(len, group)) - 1)
            base = self._prefill([group[0][:cut]], None)
            self.family.update(dict.fromkeys(group, (cut, base)))

    def _prefill(self, prompts, base) -> Rows:
        b = self.backend
        return prefill(b._torch, b.lm, prompts, base, b._keep_last)

    def next(self, free: int) -> tuple[Rows, list[int]]:
        """Rows for up to ``free`` waiting samples (of one prompt unless rows may mix)."""
        head = self.prompts[self.queue[0]]
        taken: list[int] = []
        while self.queue and len(taken) < free:
            if not self.backend._mixed and self.prompts[self.queue[0]] != head:
                break
            taken.append(self.queue.popleft())
        missing = [p for p in dict.fromkeys(self.prompts[i] for i in taken) if p not in self.ready]
        for (cut, base), group in groupby(sorted(missing, key=lambda p: id(self.family[p][1])), self.family.get):
            for chunk in _chunks(list(group), _PREFILL_TOKENS):
                rows = self._prefill([p[cut:] for p in chunk], base)
                self.ready.update((p, (rows, k)) for k, p in enumerate(chunk))
        sources = [self.ready[self.prompts[i]] for i in taken]
        batch = None
        for _, group in groupby(sources, key=lambda source: id(source[0])):
            group = list(group)
            part = group[0][0].take([k for _, k in group])
            batch = part if batch is None else batch.join(part)
        waiting = self.prompts[self.queue[0]] if self.queue else None
        self.ready = {p: v for p, v in self.ready.items() if p == waiting}
        return batch, taken


def _families(prompts: list[tuple[int, ...]], shared: int = _SHARED_PREFIX):
    """Groups of two or more prompts whose shared leading tokens are worth prefilling once:
    at least ``shared`` of them and half of each prompt (math few-shot prompts form one
    family, multiple-choice ones another, not one family of the system line).

    Sorted token sequences put prompts with one prefix next to each other, and a run's common
    prefix is the smallest common prefix of neighbours in it.
    """
    group: list[tuple[int, ...]] = []
    for prompt in sorted(prompts):
        if group:
            common = len(os.path.commonprefix([group[-1], prompt]))
            if common < max(shared, min(len(group[-1]), len(prompt)) / 2):
                if len(group) > 1:
                    yield group
                group = []
        group.append(prompt)
    if len(group) > 1:
        yield group


def _chunks(prompts: list[tuple[int, ...]], budget: int):
    """Consecutive groups whose padded size (count x longest) stays within ``budget`` tokens."""
    group: list[tuple[int, ...]] = []
    for prompt in prompts:
        if group and (len(group) + 1) * max(len(prompt), *map(len, group)) > budget:
            yield group
            group = []
        group.append(prompt)
    if group:
        yield group


def _sample(torch, logits, u, params: SamplingParams):
    """Pick one token per row by inverse CDF at uniform ``u``; return (tokens, raw logprobs)."""
    raw = torch.log_softmax(logits, dim=-1)
    if params.temperature <= 0:
        picked = logits.argmax(dim=-1)
    else:
        # scaled from the row's best logit (≤ 0), so a tiny temperature cannot overflow to inf
        # (inf − inf: NaN probabilities, and the last token of the vocabulary every time)
        best = logits.double().amax(dim=-1, keepdim=True)
        probs = torch.softmax((logits.double() - best) / params.temperature, dim=-1)
        if params.top_p < 1:
            probs, order = _nucleus(probs, params.top_p)
        cum = probs.cumsum(dim=-1)
        target = (u * cum[:, -1]).unsqueeze(-1)
        pos = torch.searchsorted(cum, target, right=True).clamp_(max=cum.shape[-1] - 1)
        picked = (
            pos.squeeze(-1) if params.top_p >= 1 else order.gather(-1, pos).squeeze(-1)
        )
    return picked, raw.gather(-1, picked.unsqueeze(-1)).squeeze(-1)


def _nucleus(probs, top_p: float, k: int = 512):
    """Most-probable-first probabilities with the tail beyond ``top_p`` zeroed, and their ids.

    A top-k of the head stands in for the full sort whenever it covers ``top_p`` in every
    row; either way the kept tokens, and so the sample, are the same.
    """
    head, order = probs.topk(min(k, probs.shape[-1]), dim=-1)
    if bool((head.sum(dim=-1) >= top_p + 1e-9).all()):
        probs = head
    else:
        probs, order = probs.sort(dim=-1, descending=True, stable=True)
    cum = probs.cumsum(dim=-1)
    return probs.masked_fill(cum - probs >= top_p, 0.0), order

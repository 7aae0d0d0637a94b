"""Embedded transformers backend (CPU, SmolLM2 by default): each sample draws its tokens from
its own ``torch.Generator(seed)``, so its text never depends on the batch around it.
``token_logprobs`` are raw model log-probs (temperature 1, before top-p), as vLLM's "raw_logprobs".
"""

from __future__ import annotations

import copy
import inspect
import os
from collections.abc import Sequence

from ..errors import BackendError, UabError
from ..models import quiet_stderr, resolve_model, vllm_model_dir
from .base import (
    BaseBackend,
    Completion,
    OnResult,
    SampleRequest,
    SamplingParams,
    require,
)

_DTYPES = ("float32", "bfloat16", "float16")  # "auto" means float32


def _default_threads() -> int:
    """Half the usable CPUs: oversubscribed OpenMP threads slow decoding by 10x or more."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)


class LocalBackend(BaseBackend):
    """Samples with a transformers causal LM in this process, batching samples of one prompt.

    ``threads`` sets torch's CPU threads; by default ``$OMP_NUM_THREADS`` or half the CPUs.
    """

    name = "local"
    returns_logprobs = True
    supports_seed = True

    def __init__(
        self,
        model: str | None = None,
        device: str = "cpu",
        batch_size: int = 16,
        dtype: str = "float32",
        threads: int | None = None,
    ):
        if batch_size < 1:
            raise UabError(f"batch size must be at least 1, got {batch_size}")
        dtype = "float32" if dtype == "auto" else dtype
        if dtype not in _DTYPES:
            raise UabError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
        torch = require("torch", "local")
        transformers = require("transformers", "local")
        self._torch = torch
        self.batch_size = batch_size
        resolved = resolve_model(model)
        self.model = resolved.name
        path = vllm_model_dir(model) if resolved.gguf_file else resolved.path
        if threads is not None:
            torch.set_num_threads(max(1, threads))
        elif device == "cpu" and "OMP_NUM_THREADS" not in os.environ:
            torch.set_num_threads(_default_threads())
        try:
            self.device = torch.device(device)
        except RuntimeError as exc:
            raise UabError(f"unknown device {device!r}") from exc
        try:
            with quiet_stderr():
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(path)
                self.lm = transformers.AutoModelForCausalLM.from_pretrained(
                    path, dtype=getattr(torch, dtype)
                )
            self.lm.to(self.device).eval()
        except OSError as exc:
            raise UabError(f"cannot load model {resolved.name!r}: {exc}") from exc
        except (
            Exception
        ) as exc:  # transformers raises many types on bad weights / devices
            raise BackendError(
                f"loading model {resolved.name!r} failed: {exc}"
            ) from exc
        self._stop_ids = self._eos_ids()
        params = inspect.signature(self.lm.forward).parameters
        self._keep_last = next(
            ({k: 1} for k in ("logits_to_keep", "num_logits_to_keep") if k in params),
            {},
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

    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        """Token ids of the chat-templated prompt, ready for the assistant's turn."""
        try:
            text = self.tokenizer.apply_chat_template(
                list(messages), add_generation_prompt=True, tokenize=False
            )
        except ValueError as exc:  # no chat template, or malformed messages
            raise UabError(
                f"model {self.model!r} cannot format this chat: {exc}"
            ) from exc
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def generate(
        self,
        requests: Sequence[SampleRequest],
        params: SamplingParams,
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        """Sample one completion per request; ``on_result`` fires as each one finishes."""
        if params.max_tokens < 1:
            raise UabError(f"max tokens must be at least 1, got {params.max_tokens}")
        if not 0 < params.top_p <= 1:
            raise UabError(f"top_p must be in (0, 1], got {params.top_p}")
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, request in enumerate(requests):
            groups.setdefault(tuple(self.prompt_ids(request.messages)), []).append(i)
        results: list[Completion | None] = [None] * len(requests)

        def done(i: int, completion: Completion) -> None:
            results[i] = completion
            if on_result is not None:
                on_result(i, completion)

        try:
            with self._torch.inference_mode():
                for prompt, indices in groups.items():
                    self._generate_group(prompt, indices, requests, params, done)
        except RuntimeError as exc:
            raise BackendError(f"local generation failed: {exc}") from exc
        return results  # type: ignore[return-value]

    def _generate_group(self, prompt, indices, requests, params, done) -> None:
        """Prefill one prompt once, then decode its requests ``batch_size`` rows at a time."""
        torch = self._torch
        ids = torch.tensor([prompt], dtype=torch.long, device=self.device)
        out = self.lm(input_ids=ids, use_cache=True, **self._keep_last)
        prefix_cache, first_logits = out.past_key_values, out.logits[:, -1, :]
        for start in range(0, len(indices), self.batch_size):
            chunk = indices[start : start + self.batch_size]
            cache = (
                copy.deepcopy(prefix_cache)
                if start + self.batch_size < len(indices)
                else prefix_cache
            )
            seeds = [requests[i].seed for i in chunk]
            self._decode(chunk, seeds, cache, first_logits, params, done)

    def _decode(self, rows, seeds, cache, logits, params, done) -> None:
        """Decode rows that share a prefilled cache, dropping each row when it finishes."""
        torch = self._torch
        generators = [
            torch.Generator().manual_seed(seed & 0xFFFF_FFFF_FFFF_FFFF)
            for seed in seeds
        ]
        if len(rows) > 1:
            cache.batch_repeat_interleave(len(rows))
            logits = logits.expand(len(rows), -1)
        tokens: list[list[int]] = [[] for _ in rows]
        logprobs: list[list[float]] = [[] for _ in rows]
        live = list(range(len(rows)))  # positions into rows that are still generating
        while True:
            u = torch.stack(
                [
                    torch.rand((), generator=generators[r], dtype=torch.float64)
                    for r in live
                ]
            )
            picked, raw = _sample(torch, logits.float(), u.to(logits.device), params)
            finished = []
            for k, (r, token, lp) in enumerate(
                zip(live, picked.tolist(), raw.tolist())
            ):
                tokens[r].append(token)
                logprobs[r].append(lp)
                if (
                    tokens[r][-1] in self._stop_ids
                    or len(tokens[r]) >= params.max_tokens
                ):
                    finished.append(k)
                    stop = tokens[r][-1] in self._stop_ids
                    done(rows[r], self._completion(tokens[r], logprobs[r], stop))
            if finished:
                keep = [k for k in range(len(live)) if k not in finished]
                if not keep:
                    return
                live = [live[k] for k in keep]
                keep_t = torch.tensor(keep, dtype=torch.long, device=self.device)
                cache.batch_select_indices(keep_t)
                picked = picked[keep_t]
            out = self.lm(
                input_ids=picked.view(-1, 1), past_key_values=cache, use_cache=True
            )
            cache, logits = out.past_key_values, out.logits[:, -1, :]

    def _completion(
        self, tokens: list[int], logprobs: list[float], stop: bool
    ) -> Completion:
        body = tokens[:-1] if stop else tokens
        text = self.tokenizer.decode(body, skip_special_tokens=True)
        return Completion(
            text, tuple(logprobs), len(tokens), "stop" if stop else "length"
        )

    def close(self) -> None:
        """Drop the model so its memory can be reclaimed."""
        self.__dict__.pop("lm", None)


def _sample(torch, logits, u, params: SamplingParams):
    """Pick one token per row by inverse CDF at uniform ``u``; return (tokens, raw logprobs)."""
    raw = torch.log_softmax(logits, dim=-1)
    if params.temperature <= 0:
        picked = logits.argmax(dim=-1)
    else:
        probs = torch.softmax(logits.double() / params.temperature, dim=-1)
        if params.top_p < 1:
            probs, order = _nucleus(torch, probs, params.top_p)
        cum = probs.cumsum(dim=-1)
        target = (u * cum[:, -1]).unsqueeze(-1)
        pos = torch.searchsorted(cum, target, right=True).clamp_(max=cum.shape[-1] - 1)
        picked = (
            pos.squeeze(-1) if params.top_p >= 1 else order.gather(-1, pos).squeeze(-1)
        )
    return picked, raw.gather(-1, picked.unsqueeze(-1)).squeeze(-1)


def _nucleus(torch, probs, top_p: float, k: int = 512):
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

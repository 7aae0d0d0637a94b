"""A deterministic, seed-driven stand-in model for tests and demos (``--backend scripted``).

It answers arithmetic questions ("What is 3 + 4?") right with a per-question probability
and gives confident (low-NLL) tokens when right, so allocators have a real signal to use.
It is never the default backend.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ..errors import BackendError
from .base import MAX_MODEL_LEN, BaseBackend, Completion, OnResult, PromptLength, SampleRequest, SamplingParams

_EXPR = re.compile(r"What is ([\d\s+\-*/()]+)\?")


def _unit(*parts) -> float:
    digest = hashlib.blake2b("\0".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class ScriptedBackend(BaseBackend):
    """Answers from (prompt, seed) alone. ``fail_after`` raises ``BackendError`` once that many
    samples are drawn; ``calls`` keeps each ``generate`` call's requests, ``drawn`` counts the
    samples drawn. A prompt's tokens are its words plus 2 per turn; ``max_model_len`` sets
    the context length (unknown by default)."""

    name = "scripted"
    returns_logprobs = True
    options = (MAX_MODEL_LEN,)

    def __init__(self, model: str = "scripted", fail_after: int | None = None, max_model_len: int | None = None):
        self.model = model
        self.fail_after = fail_after
        self.context_length = max_model_len
        self.calls: list[list[SampleRequest]] = []
        self.drawn = 0

    def generate(self, requests: Sequence[SampleRequest], params: SamplingParams,
                 on_result: OnResult | None = None) -> list[Completion]:
        self.calls.append(list(requests))
        out = []
        for k, req in enumerate(requests):
            if self.fail_after is not None and self.drawn >= self.fail_after:
                raise BackendError(f"scripted failure after {self.drawn} samples")
            completion = self.complete(req, params)
            self.drawn += 1
            out.append(completion)
            if on_result:
                on_result(k, completion)
        return out

    def prompt_lengths(self, prompts, limit: int) -> list[PromptLength | None]:
        return [PromptLength(sum(len(str(m.get("content", "")).split()) + 2 for m in messages))
                for messages in prompts]

    def complete(self, req: SampleRequest, params: SamplingParams) -> Completion:
        """One completion, a pure function of the request and parameters."""
        question = req.messages[-1]["content"]
        prompt_tokens = sum(len(str(m.get("content", "")).split()) + 2 for m in req.messages)  # words, 2 per turn
        if "easy or hard" in question:
            label = "easy" if _unit("judge", question) < 0.5 else "hard"
            return Completion(label, (-0.1,), 1, "stop", prompt_tokens=prompt_tokens)
        p_right = 0.15 + 0.8 * _unit("difficulty", question)
        u = _unit("sample", question, req.seed)
        right = u < p_right
        match = _EXPR.search(question)
        if match:
            truth = eval(match.group(1), {"__builtins__": {}})  # digits and operators only
            answer = str(truth) if right else str(truth + 1 + int(_unit("wrong", question, req.seed) * 3))
        else:
            answer = "A" if right else "B"
        n = max(1, min(params.max_tokens, 6 + int(_unit("len", req.seed) * 6)))
        # Right answers are confident; wrong ones less so (with noise so the signal is imperfect).
        level = (0.01 if right else 0.08) + 0.1 * _unit("noise", question, req.seed)
        logprobs = tuple(-level * (0.5 + _unit("tok", req.seed, t)) for t in range(n))
        finish = "length" if n == params.max_tokens else "stop"
        confidence = max(1, min(10, round(10 * (1 - level))))
        text = f"Working it out.\nAnswer: {answer}\nConfidence: {confidence}"
        return Completion(text, logprobs, n, finish, prompt_tokens=prompt_tokens)

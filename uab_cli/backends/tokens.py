"""Chat prompts as token ids with a Hugging Face tokenizer, and their length against a context
window, counted in bounded memory however long the prompt (the ``local`` and ``vllm`` backends)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..errors import UabError, one_line
from ..reasoning import FAMILIES
from .base import PromptLength

# Config entries that give a model's context length, most common first.
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")


def marker_ids(tokenizer) -> frozenset[int]:
    """The ids of a tokenizer's special tokens that open or close a model's reasoning (Magistral's
    ``[THINK]`` and ``[/THINK]``): decoding skips special tokens, and without its markers a
    reply's reasoning would be read as its answer."""
    found = set()
    for tid, token in (getattr(tokenizer, "added_tokens_decoder", None) or {}).items():
        content = getattr(token, "content", None)
        if getattr(token, "special", False) and isinstance(content, str) \
                and any(marker.fullmatch(content) for pair in FAMILIES[:3] for marker in pair):
            found.add(int(tid))
    return frozenset(found)


def decode(tokenizer, ids: Sequence[int], markers: frozenset[int] = frozenset()) -> str:
    """``ids`` as text, the special tokens skipped but the reasoning ``markers`` (``marker_ids``)."""
    if not markers.intersection(ids):
        return tokenizer.decode(list(ids), skip_special_tokens=True)
    parts, run = [], []
    for t in ids:
        if t in markers:
            parts += [tokenizer.decode(run, skip_special_tokens=True), tokenizer.decode([t])]
            run = []
        else:
            run.append(t)
    return "".join([*parts, tokenizer.decode(run, skip_special_tokens=True)])


def config_context(config) -> int | None:
    """The context length a transformers model config declares, ``None`` if it declares none."""
    for key in _CONTEXT_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


class ChatTokens:
    """Renders a chat with the tokenizer's template and counts its tokens.

    A prompt is tokenised only when it could fit: no token stands for more characters than
    the longest entry of the vocabulary (``widest``: 81 for SmolLM2, a run of spaces), so a
    prompt of more than ``limit`` × ``widest`` characters has more than ``limit`` tokens and
    is measured by that bound without tokenising it (a 5 MB question costs no more memory
    than its text).
    """

    def __init__(self, tokenizer, model: str):
        self.tokenizer = tokenizer
        self.model = model

    def text(self, messages: Sequence[dict]) -> str:
        """The chat rendered by the model's template, ready for the assistant's turn."""
        from jinja2 import TemplateError  # transformers renders chat templates with jinja2

        try:
            return self.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
        except (ValueError, TemplateError) as exc:  # no chat template, malformed messages, or ones the
            # template refuses by its raise_exception (Gemma's "System role not supported")
            hint = ("; --system-prompt '' asks without a system message" if isinstance(exc, TemplateError)
                    and any(m.get("role") == "system" for m in messages) else "")
            raise UabError(f"model {self.model!r} cannot format this chat: {one_line(exc)}{hint}") from exc

    def ids(self, messages: Sequence[dict]) -> list[int]:
        """Token ids of the chat-templated prompt."""
        return self.tokenizer(self.text(messages), add_special_tokens=False)["input_ids"]

    @functools.cached_property
    def widest(self) -> int:
        """The most characters one token stands for: the longest vocabulary entry (byte-level
        entries spell one character per byte, so they bound the characters too)."""
        return max(map(len, self.tokenizer.get_vocab()), default=1) or 1

    def length(self, messages: Sequence[dict], limit: int) -> PromptLength:
        """The prompt's tokens: exact when it has at most ``limit`` × ``widest`` characters,
        else the lower bound characters / ``widest`` (more than ``limit``)."""
        text = self.text(messages)
        chars = len(self._normalized(text))
        if chars > limit * self.widest:
            return PromptLength(-(-chars // self.widest), exact=False)
        return PromptLength(len(self.tokenizer(text, add_special_tokens=False)["input_ids"]))

    def _normalized(self, text: str) -> str:
        """``text`` as the tokenizer's normaliser leaves it (a normaliser may merge characters)."""
        normalizer = getattr(getattr(self.tokenizer, "backend_tokenizer", None), "normalizer", None)
        return normalizer.normalize_str(text) if normalizer is not None else text

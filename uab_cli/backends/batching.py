"""Decoding state for continuous batching with a transformers KV cache.

Rows of different prompts and ages share one ``DynamicCache``: each row's cached tokens are
left-padded to the batch's length, an attention mask hides the padding, and explicit position
ids give every row its own positions, so a row computes what it would compute alone (up to
float rounding). Rows leave when they finish and new rows join, padded to the same length.
"""

from __future__ import annotations

import copy
import functools
import inspect


def use_grouped_decode(transformers, torch, lm) -> bool:
    """Switch an ``sdpa`` model to :func:`grouped decode attention <_grouped_attention>`.

    On the CPU, transformers' sdpa path copies every cached key and value once per query head
    group when a mask is given (which batching always gives): that copy was a tenth of decoding.
    Returns whether the model now uses it.
    """
    if lm.config._attn_implementation != "sdpa":
        return False
    sdpa = transformers.integrations.sdpa_attention.sdpa_attention_forward

    def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
        groups = getattr(module, "num_key_value_groups", 1)
        if query.shape[2] != 1 or groups == 1 or dropout:
            return sdpa(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
        # one new token per row: a group's query heads attend together to their one key head
        batch, heads, _, dim = query.shape
        grouped = query.reshape(batch, heads // groups, groups, dim)
        out = torch.nn.functional.scaled_dot_product_attention(
            grouped, key, value, attn_mask=attention_mask, scale=scaling
        )
        return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None

    transformers.AttentionInterface.register(_GROUPED, attention)
    transformers.AttentionMaskInterface.register(_GROUPED, transformers.masking_utils.sdpa_mask)
    lm.set_attn_implementation(_GROUPED)
    return lm.config._attn_implementation == _GROUPED


_GROUPED = "uab_grouped_sdpa"


def plain_cache_layers(cache_cls, layer_cls, config) -> bool:
    """True when every layer of the model's cache is a plain ``DynamicLayer``, which padding suits.

    Sliding-window and other layer kinds keep position-dependent state: rows of such models
    are batched only with rows of the same prompt that start together.
    """
    cache = cache_cls(config=config)
    return bool(cache.layers) and all(type(layer) is layer_cls for layer in cache.layers)


class Rows:
    """A batch of rows waiting for their next token.

    ``cache`` holds keys and values shaped ``[rows, heads, length, dim]``; ``mask`` is
    ``[rows, length]`` (1 where a real token is cached); ``pos`` is each row's next position id;
    ``logits`` are each row's next-token logits.
    """

    def __init__(self, torch, cache, mask, pos, logits):
        self.torch, self.cache, self.mask, self.pos, self.logits = torch, cache, mask, pos, logits

    def __len__(self) -> int:
        return self.mask.shape[0]

    def take(self, index: list[int]) -> Rows:
        """A new batch of the rows at ``index`` (repeats allowed); this one is left as it is."""
        idx = self.torch.tensor(index, dtype=self.torch.long, device=self.mask.device)
        cache = copy.copy(self.cache)
        cache.layers = [copy.copy(layer) for layer in self.cache.layers]
        cache.batch_select_indices(idx)  # rebinds each copied layer's tensors
        rows = Rows(self.torch, cache, self.mask[idx], self.pos[idx], self.logits[idx])
        rows._trim()
        return rows

    def join(self, other: Rows) -> Rows:
        """This batch followed by ``other``, both left-padded to the longer length."""
        torch = self.torch
        length = max(self.mask.shape[1], other.mask.shape[1])
        for mine, theirs in zip(self.cache.layers, other.cache.layers):
            mine.keys = torch.cat([_pad_left(torch, mine.keys, length, -2), _pad_left(torch, theirs.keys, length, -2)])
            mine.values = torch.cat(
                [_pad_left(torch, mine.values, length, -2), _pad_left(torch, theirs.values, length, -2)]
            )
        mask = torch.cat([_pad_left(torch, self.mask, length, -1), _pad_left(torch, other.mask, length, -1)])
        return Rows(
            torch, self.cache, mask, torch.cat([self.pos, other.pos]), torch.cat([self.logits, other.logits])
        )

    def step(self, lm, tokens) -> None:
        """Feed one token per row and keep the logits for the next one."""
        torch = self.torch
        self.mask = torch.cat([self.mask, self.mask.new_ones(len(self), 1)], dim=1)
        self.cache, self.logits = forward(
            lm, self.cache, input_ids=tokens.view(-1, 1), attention_mask=self.mask, position_ids=self.pos.view(-1, 1)
        )
        self.pos = self.pos + 1

    def _trim(self) -> None:
        """Drop leading cache columns that no row attends to (left by rows that left)."""
        used = self.mask.any(dim=0)
        first = int(used.long().argmax()) if bool(used.any()) else 0
        if first:
            for layer in self.cache.layers:
                layer.keys = layer.keys[..., first:, :]
                layer.values = layer.values[..., first:, :]
            self.mask = self.mask[:, first:]


def prefill(torch, lm, prompts, base: Rows | None, keep_last: dict) -> Rows:
    """Rows for ``prompts`` (token-id tuples), each continuing ``base``'s single cached row
    (a prefix they share, already removed from them) or starting afresh when ``base`` is None.

    Prompts are left-padded to one length; the padding sits between the prefix and each prompt.
    """
    offset = int(base.pos[0]) if base is not None else 0
    width = max(len(p) for p in prompts)
    device = base.mask.device if base is not None else lm.device
    ids = torch.tensor([[0] * (width - len(p)) + list(p) for p in prompts], dtype=torch.long, device=device)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.long, device=device)
    lengths = torch.tensor([len(p) for p in prompts], dtype=torch.long, device=device)
    # each prompt's tokens sit at positions offset, offset + 1, ...; padding reuses position offset
    position_ids = (torch.arange(width, device=device) - (width - lengths).unsqueeze(1)).clamp_(min=0) + offset
    cache = None
    if base is not None:
        start = base.take([0] * len(prompts))
        cache, mask = start.cache, torch.cat([start.mask, mask], dim=1)
    cache, logits = forward(lm, cache, input_ids=ids, attention_mask=mask, position_ids=position_ids, **keep_last)
    return Rows(torch, cache, mask, offset + lengths, logits)


def forward(lm, cache, **inputs):
    """One forward pass with the KV cache under the name this transformers gives it, and the
    grown cache and each row's last logits. transformers 5.24 renamed the cache argument and
    output field to ``cache`` (the old ``past_key_values`` still works there but warns on every
    run, and goes in 5.40); older releases know only ``past_key_values``."""
    name = _cache_name(type(lm))
    out = lm(**{name: cache}, use_cache=True, **inputs)
    return getattr(out, name), out.logits[:, -1, :]


@functools.cache
def _cache_name(model_class) -> str:
    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params and "past_key_values" not in params else "past_key_values"


def _pad_left(torch, tensor, length: int, dim: int):
    missing = length - tensor.shape[dim]
    if missing <= 0:
        return tensor
    shape = list(tensor.shape)
    shape[dim] = missing
    return torch.cat([tensor.new_zeros(shape), tensor], dim=dim)

"""A host-side prefill step with the pattern of transformers 5.5's `GenerationMixin._prefill`.

With a `StaticCache` that is already initialised, `cache.get_seq_length()` returns a
tensor, so `next_sequence_length` is a tensor and the slice below syncs the device
(or breaks a `torch.compile` graph) instead of taking an int.

    seqlen-guard examples/prefill_before.py
    seqlen-guard-fix --diff examples/prefill_before.py
"""

from __future__ import annotations

import torch


def prefill(model: torch.nn.Module, cache: object, input_ids: torch.Tensor) -> torch.Tensor:
    past_length = cache.get_seq_length()  # type: ignore[attr-defined]
    next_sequence_length = input_ids.shape[1] - past_length
    new_tokens = input_ids[:, -next_sequence_length:]
    position_ids = torch.arange(past_length, input_ids.shape[1]).unsqueeze(0)
    output: torch.Tensor = model(new_tokens, position_ids=position_ids, past_key_values=cache)
    return output


class PositionEmbedding(torch.nn.Module):
    """The same value inside `forward`, which runs compiled: a guard here would add a graph break,
    so the finding is reported and left alone (`--unsafe-fixes` applies it anyway)."""

    def forward(self, cache: object, inputs_embeds: torch.Tensor) -> torch.Tensor:
        past_length = cache.get_seq_length()  # type: ignore[attr-defined]
        return torch.arange(past_length, past_length + inputs_embeds.shape[1])

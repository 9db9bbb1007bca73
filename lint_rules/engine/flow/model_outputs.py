"""The cache a model's outputs hold: `out = model(ids, past_key_values=cache, use_cache=True)` (also
`model.forward(...)`, `self.model(...)`, `generate(..., return_dict_in_generate=True)` or an output
class built with `past_key_values=cache`), then `out.past_key_values` is `cache` itself, which the
model updated in place, so its length kind is `cache`'s: an int for a `DynamicCache` built or known
here, a possible tensor for a `StaticCache`, unknown otherwise (`past_key_values=None`: the model
builds its own, which is not followed).

Asked only where a receiver, or a value bound to a name, is an attribute `past_key_values`, and
where a call given `past_key_values=` is bound to a name: nothing else is read."""

from __future__ import annotations

import ast

from lint_rules.engine.facts.caches import INT_LENGTH, TENSOR_LENGTH
from lint_rules.engine.facts.classes import KnownKind
from lint_rules.engine.flow.taint import INT_LENGTH_OUTPUTS, TENSOR_LENGTH_OUTPUTS, State, key_of

CACHE_FIELD = "past_key_values"
"""The keyword a model is given its cache by, and the field of its outputs that holds it."""


def outputs_kind(node: ast.expr, cache_kind: KnownKind) -> str:
    """INT_LENGTH_OUTPUTS (TENSOR_LENGTH_OUTPUTS) for a call given `past_key_values=cache` where
    `cache_kind` tells `cache` is int-length (tensor-length); "" for anything else."""
    given = given_cache(node)
    kind = cache_kind(given) if given is not None else ""
    return INT_LENGTH_OUTPUTS if kind == INT_LENGTH else TENSOR_LENGTH_OUTPUTS if kind == TENSOR_LENGTH else ""


def held_cache_kind(node: ast.expr, state: State, cache_kind: KnownKind) -> str:
    """`out.past_key_values` where `out` holds such outputs, or `model(..., past_key_values=cache)
    .past_key_values`: INT_LENGTH or TENSOR_LENGTH as `cache` is; "" for anything else."""
    if not (isinstance(node, ast.Attribute) and node.attr == CACHE_FIELD):
        return ""
    given = given_cache(node.value)
    if given is not None:
        return cache_kind(given)
    key = key_of(node.value)
    held = state.kind(key) if key else ""
    return INT_LENGTH if held == INT_LENGTH_OUTPUTS else TENSOR_LENGTH if held == TENSOR_LENGTH_OUTPUTS else ""


def given_cache(node: ast.expr) -> ast.expr | None:
    """The value of a call's `past_key_values=` keyword (None for anything else)."""
    if not isinstance(node, ast.Call):
        return None
    for keyword in node.keywords:
        if keyword.arg == CACHE_FIELD:
            return keyword.value
    return None

"""The cache a model's outputs hold: `out = model(ids, past_key_values=cache, use_cache=True)` (also
`model.forward(...)`, `self.model(...)`, `generate(..., return_dict_in_generate=True)` or an output
class built with `past_key_values=cache`), then `out.past_key_values` is `cache` itself, which the
model updated in place, so its length kind is `cache`'s: an int for a `DynamicCache` built or known
here, a possible tensor for a `StaticCache`, unknown otherwise (`past_key_values=None`: the model
builds its own, which is not followed).

5.24 renames the keyword and the field to `cache` (`ReleaseFacts.cache_renamed`). `out.cache` is the
cache given under either name: releases before 5.24 have no such field, so reading it raises there.
`out.past_key_values` of a model given `cache=c` is `c` only where every release of the range has the
new name: an earlier release passes the unknown keyword into `**kwargs`, and its model builds a cache
of its own.

Asked only where a receiver, or a value bound to a name, is one of those fields, and where a call
given one of those keywords is bound to a name: nothing else is read."""

from __future__ import annotations

import ast

from lint_rules.engine.facts.caches import INT_LENGTH, TENSOR_LENGTH
from lint_rules.engine.facts.classes import KnownKind
from lint_rules.engine.facts.releases import Releases
from lint_rules.engine.flow.taint import (
    INT_LENGTH_OUTPUTS,
    INT_LENGTH_RENAMED_OUTPUTS,
    TENSOR_LENGTH_OUTPUTS,
    State,
    key_of,
)

CACHE_FIELD = "past_key_values"
"""The keyword a model is given its cache by, and the field of its outputs that holds it."""
RENAMED_CACHE_FIELD = "cache"
"""Their name from 5.24 on."""


def outputs_kind(node: ast.expr, cache_kind: KnownKind, releases: Releases) -> str:
    """INT_LENGTH_OUTPUTS (TENSOR_LENGTH_OUTPUTS) for a call given `past_key_values=cache` or
    `cache=cache` where `cache_kind` tells `cache` is int-length (tensor-length);
    INT_LENGTH_RENAMED_OUTPUTS for an int-length one given as `cache=` alone on a range that has
    releases before the rename; "" for anything else. Given both keywords, a release before the
    rename keeps `past_key_values=`, a later one `cache=`: the outputs count an int only if both do."""
    given = given_caches(node)
    kinds = {cache_kind(cache) for cache in given.values()}
    if TENSOR_LENGTH in kinds:
        return TENSOR_LENGTH_OUTPUTS
    if kinds != {INT_LENGTH}:
        return ""
    if CACHE_FIELD not in given and not all(row.cache_renamed for row in releases):
        return INT_LENGTH_RENAMED_OUTPUTS
    return INT_LENGTH_OUTPUTS


def held_cache_kind(node: ast.expr, state: State, cache_kind: KnownKind, releases: Releases) -> str:
    """`out.past_key_values` (`out.cache`) where `out` holds such outputs, or `model(...,
    past_key_values=cache).past_key_values`: INT_LENGTH or TENSOR_LENGTH as `cache` is; "" for
    anything else."""
    if not (isinstance(node, ast.Attribute) and node.attr in (CACHE_FIELD, RENAMED_CACHE_FIELD)):
        return ""
    if isinstance(node.value, ast.Call):
        held = outputs_kind(node.value, cache_kind, releases)
    else:
        key = key_of(node.value)
        held = state.kind(key) if key else ""
    if held == TENSOR_LENGTH_OUTPUTS:
        return TENSOR_LENGTH
    if held == INT_LENGTH_OUTPUTS or (held == INT_LENGTH_RENAMED_OUTPUTS and node.attr == RENAMED_CACHE_FIELD):
        return INT_LENGTH
    return ""


def given_caches(node: ast.expr) -> dict[str, ast.expr]:
    """The caches a call is given, by keyword (`past_key_values`, `cache`); empty for anything else."""
    if not isinstance(node, ast.Call):
        return {}
    return {
        keyword.arg: keyword.value for keyword in node.keywords if keyword.arg in (CACHE_FIELD, RENAMED_CACHE_FIELD)
    }

"""The cache a model's outputs hold: `out = model(ids, past_key_values=cache, use_cache=True)` (also
`model.forward(...)`, `self.model(...)`, `generate(..., return_dict_in_generate=True)` or an output
class built with `past_key_values=cache`), then `out.past_key_values` is `cache` itself, which the
model updated in place, so its length kind is `cache`'s: an int for a `DynamicCache` built or known
here, a possible tensor for a `StaticCache`, unknown otherwise (`past_key_values=None`: the model
builds its own, which is not followed).

5.24 renames the keyword and the field to `cache` (`ReleaseFacts.cache_renamed`); the old names stay
deprecated aliases. Which cache a model uses depends on the release:
- before 5.24, the one given as `past_key_values=`: a `cache=` keyword goes into the model's
  `**kwargs`, and its outputs have no `.cache` (reading it raises);
- from 5.24 on, the one given as `cache=` (a `past_key_values=` given too is dropped), else the one
  given as `past_key_values=`, unless a `**mapping` is passed too, which may hold a `cache` key;
  `.past_key_values` and `.cache` both hold it.
Each field of the outputs is the cache the model uses in every release of the range where reading
it succeeds. The new keyword is followed only on a call that is not spelled as a class (`Runner(
cache=c).cache` is an object's own attribute as often as a model's outputs).

Asked only where a receiver, or a value bound to a name, is one of those fields, and where a call
given one of those keywords is bound to a name: nothing else is read."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from lint_rules.engine.facts.caches import joined_kind
from lint_rules.engine.facts.classes import KnownKind
from lint_rules.engine.facts.releases import Releases
from lint_rules.engine.flow.taint import OUTPUTS, State, key_of

CACHE_FIELD = "past_key_values"
"""The keyword a model is given its cache by, and the field of its outputs that holds it."""
RENAMED_CACHE_FIELD = "cache"
"""Their name from 5.24 on."""


def outputs_kind(node: ast.expr, cache_kind: KnownKind, releases: Releases) -> str:
    """For a call given a cache under either name, `outputs:<past_key_values>:<cache>`: the length
    kind (INT_LENGTH, TENSOR_LENGTH or "") of the cache each field of its outputs holds in the
    releases where reading it succeeds, as `cache_kind` tells; "" for anything else."""
    given = given_caches(node)
    if not isinstance(node, ast.Call) or not given:
        return ""
    before = any(not row.cache_renamed for row in releases)
    after = any(row.cache_renamed for row in releases)
    used_before = given.get(CACHE_FIELD)
    hidden = any(keyword.arg is None for keyword in node.keywords)
    used_after = given.get(RENAMED_CACHE_FIELD, None if hidden else used_before)
    past = joined([used_before] * before + [used_after] * after, cache_kind)
    cache = joined([used_after] * after, cache_kind)
    return f"{OUTPUTS}:{past}:{cache}" if past or cache else ""


def joined(caches: Iterable[ast.expr | None], cache_kind: KnownKind) -> str:
    """TENSOR_LENGTH if any of the caches may count a tensor, INT_LENGTH if there are some and all
    count ints, else "" (None: a cache not known here)."""
    return joined_kind(cache_kind(cache) if cache is not None else "" for cache in caches)


def held_cache_kind(node: ast.expr, state: State, cache_kind: KnownKind, releases: Releases) -> str:
    """`out.past_key_values` (`out.cache`) where `out` holds such outputs, or `model(...,
    past_key_values=cache).past_key_values`: INT_LENGTH or TENSOR_LENGTH as that field's cache is;
    "" for anything else."""
    if not (isinstance(node, ast.Attribute) and node.attr in (CACHE_FIELD, RENAMED_CACHE_FIELD)):
        return ""
    if isinstance(node.value, ast.Call):
        held = outputs_kind(node.value, cache_kind, releases)
    else:
        key = key_of(node.value)
        held = state.kind(key) if key else ""
    prefix, _, fields = held.partition(":")
    if prefix != OUTPUTS:
        return ""
    past, _, cache = fields.partition(":")
    return past if node.attr == CACHE_FIELD else cache


def given_caches(node: ast.expr) -> dict[str, ast.expr]:
    """The caches a call is given, by keyword (`past_key_values`, and `cache` on a call not spelled
    as a class); empty for anything else."""
    if not isinstance(node, ast.Call):
        return {}
    fields = (CACHE_FIELD, RENAMED_CACHE_FIELD) if not spelled_as_class(node.func) else (CACHE_FIELD,)
    return {
        keyword.arg: keyword.value for keyword in node.keywords if keyword.arg is not None and keyword.arg in fields
    }


def spelled_as_class(func: ast.expr) -> bool:
    """`Runner(...)`, `pkg.Runner(...)`: a CapWords name."""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name[:1].isupper()

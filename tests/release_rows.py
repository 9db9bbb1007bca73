"""Selections of the release table that tests run the engine on."""

from __future__ import annotations

from lint_rules.engine.facts.releases import RELEASES, TENSOR_LENGTH, Releases

DYNAMIC_CACHE_COUNTS_INT: Releases = frozenset(
    row for row in RELEASES if row.length_kind("DynamicCache") != TENSOR_LENGTH
)
"""The releases in which every `DynamicCache` counts an int, whatever its config (4.36-5.24): the range
of a project pinned below 5.25. From 5.25 on, a config whose first layer is linear attention gives
one a first layer that counts in a tensor."""

CACHE_RENAMED: Releases = frozenset(row for row in RELEASES if row.cache_renamed)
"""The releases whose models take their cache as `cache=` and whose outputs hold it as `.cache` (5.24 on)."""

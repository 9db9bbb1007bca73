"""How a transformers cache object is built: from no config (5.25's `DynamicCache` counts an int then,
see `releases.ReleaseFacts.int_without_config`) or from one."""

from __future__ import annotations

import ast

LEGACY_BUILDER = "from_legacy_cache"
"""The 4.x class method that builds a cache from legacy tuples with no config (`cls()`, then `update`);
5.x has none, so calling it raises there and no length follows."""


def builds_without_config(call: ast.Call) -> bool:
    """`Cache(...)` given no config: no `config=` and at most one positional argument (5.25's
    `DynamicCache(ddp_cache_data=None, config=None, ...)`), nothing unpacked into it."""
    unpacked = any(isinstance(argument, ast.Starred) for argument in call.args)
    return len(call.args) < 2 and not unpacked and all(keyword.arg not in ("config", None) for keyword in call.keywords)

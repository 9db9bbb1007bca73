"""How a cache object is built: from no config (transformers 5.25's `DynamicCache` counts an int then,
see `releases.ReleaseFacts.int_without_config`) or from one, and whether a package subclass passes a
config up to its transformers base."""

from __future__ import annotations

import ast

from lint_rules.engine.facts import expressions as ex


def passes_no_config_up(cls: ast.ClassDef) -> bool:
    """The class's own `__init__`, if it has one, initializes its base with no config: every
    `super().__init__(...)` or `Base.__init__(self, ...)` in it, and at least one, passes none."""
    init = next((node for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)
    if init is None:
        return True
    calls = [node for node in ast.walk(init) if isinstance(node, ast.Call) and ex.method_name(node) == "__init__"]
    through_super = [call for call in calls if is_super_call(call.func)]
    explicit = [ast.Call(call.func, call.args[1:], call.keywords) for call in calls if call not in through_super]
    return bool(calls) and all(map(builds_without_config, [*through_super, *explicit]))


LEGACY_BUILDER = "from_legacy_cache"
"""transformers' class method that builds a cache from legacy tuples: `cls()`, then `update`."""


def defines(cls: ast.ClassDef, name: str) -> bool:
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in cls.body)


def is_super_call(func: ast.expr) -> bool:
    """`super().name`."""
    return (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and ex.called_name(func.value) == "super"
    )


def builds_without_config(call: ast.Call) -> bool:
    """`Cache(...)` given no config: no `config=` and at most one positional argument (5.25's
    `DynamicCache(ddp_cache_data=None, config=None, ...)`), nothing unpacked into it."""
    unpacked = any(isinstance(argument, ast.Starred) for argument in call.args)
    return len(call.args) < 2 and not unpacked and all(keyword.arg not in ("config", None) for keyword in call.keywords)

"""Whether the module's name for torch still means torch where a fix would use it.

A guard writes `isinstance(n, torch.Tensor)` with the module's first name for torch (`torch` when the
module has none: the fixer then imports it), and a device rewrite calls the code's own
`torch.arange` with other arguments. Where that name may hold something else at the fix (a
parameter or local named `torch`, `torch = None` after the import, `import torch.nn as torch`,
`del torch`), the fix would raise or call something else for every value, ints included: no
automatic fix is offered there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import NamedTuple

from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.module_text import torch_bindings

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


Scope = tuple[int, int, bool]
"""A function's, lambda's or class's first and last line, and whether it is a class."""


class TorchName(NamedTuple):
    """Where a module binds one name to something other than torch."""

    name: str
    rebound_in_module: bool
    """Bound so at module level, or declared `global` by a function."""
    bindings: tuple[Scope, ...]
    """For each such binding in a function or class, the innermost one it binds in."""
    scopes: tuple[Scope, ...]
    """The module's functions, lambdas and classes."""

    def refusal(self, owner: ast.AST) -> str:
        """Why a fix in `owner` (a function, class body or the module) cannot use the name as torch:
        it is bound at module level, in `owner`, or in a function around it (a class body is not
        seen from its methods)."""
        if self.rebound_in_module:
            return (
                f"`{self.name}` is bound to something other than the torch module in this module; the fix would use it"
            )
        first, last = getattr(owner, "lineno", 0), getattr(owner, "end_lineno", 0) or 0
        seen = {
            scope
            for scope in self.scopes
            if scope[0] <= first and scope[1] >= last and (not scope[2] or scope[:2] == (first, last))
        }
        if not isinstance(owner, ast.Module) and any(scope in seen for scope in self.bindings):
            return f"`{self.name}` is bound in the function around the fix; the fix would use it as torch"
        return ""


_FACTS: BoundedCache[tuple[int, str], tuple[ast.Module, TorchName]] = BoundedCache(8)


def torch_name_refusal(tree: ast.Module, owner: ast.AST, name: str = "") -> str:
    """Why a fix in `owner` cannot use `name` (by default the module's first name for torch, the one a
    guard writes) as the torch module ("" if it can)."""
    name = name or next(iter(torch_bindings(tree)), "torch")
    kept = _FACTS.get((id(tree), name))
    if kept is None or kept[0] is not tree:
        kept = _FACTS[id(tree), name] = (tree, torch_name_facts(tree, name))
    return kept[1].refusal(owner)


def torch_name_facts(tree: ast.Module, name: str) -> TorchName:
    bindings: list[Scope] = []
    scopes: list[Scope] = []
    declared_global = False
    pending: list[tuple[ast.AST, Scope | None]] = [(statement, None) for statement in tree.body]
    while pending:
        node, scope = pending.pop()
        inner = scope
        if isinstance(node, SCOPES):
            inner = (node.lineno, node.end_lineno or node.lineno, isinstance(node, ast.ClassDef))
            scopes.append(inner)
        if name in bound_names(node):
            declared_global = declared_global or isinstance(node, ast.Global)
            binds_in = scope if isinstance(node, SCOPES) else inner  # a `def`'s name binds outside it
            if binds_in is not None:
                bindings.append(binds_in)
        pending.extend((child, inner) for child in ast.iter_child_nodes(node))
    at_module_level = any(name in bound_names(node) for node in module_level_nodes(tree.body))
    return TorchName(name, at_module_level or declared_global, tuple(bindings), tuple(scopes))


def module_level_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes that run at module level: function and class bodies left out (their names kept)."""
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, SCOPES):
            pending.extend(ast.iter_child_nodes(node))


def bound_names(node: ast.AST) -> Iterator[str]:
    """The names a node binds to something other than the torch package."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        yield node.id
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.Import):
        yield from (alias.asname or alias.name.partition(".")[0] for alias in node.names if not is_torch_import(alias))
    elif isinstance(node, ast.ImportFrom):
        yield from (alias.asname or alias.name for alias in node.names)
    elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
        yield node.name
    elif isinstance(node, ast.MatchMapping) and node.rest:
        yield node.rest
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names


def is_torch_import(alias: ast.alias) -> bool:
    """`import torch`, `import torch as th`, `import torch.nn` (binds `torch`): the name holds torch."""
    return alias.name == "torch" or (alias.name.startswith("torch.") and alias.asname is None)

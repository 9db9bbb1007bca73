"""Whether the module's name for torch still means torch where a fix would use it.

A guard writes `isinstance(n, torch.Tensor)` with the module's first name for torch (`torch` when the
module has none: the fixer then imports it), and a device rewrite calls the code's own
`torch.arange` with other arguments. Where that name may hold something else at the fix (a
parameter or local named `torch`, `torch = None` after the import, `import torch.nn as torch`,
`del torch`), or is a local that a later or conditional `import torch` binds, the fix would raise
or call something else for every value, ints included: no automatic fix is offered there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import NamedTuple

from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.definitions import statements_at_lines
from lint_rules.engine.facts.module_text import (
    lines_of_offsets,
    non_ascii_lines,
    torch_bindings,
    whole_word,
    with_non_ascii,
)

Scope = tuple[int, int, bool]
"""A function's or class's first and last line, and whether it is a class."""


class TorchName(NamedTuple):
    """Where a module binds one name to something other than torch."""

    name: str
    rebound_in_module: bool
    """Bound so at module level, or declared `global` by a function."""
    bindings: tuple[Scope, ...]
    """For each such binding in a function or class, the innermost one it binds in."""
    scopes: tuple[Scope, ...]
    """The module's functions and classes."""
    imports: tuple[tuple[Scope, int, bool], ...] = ()
    """Each `import torch` in a function or class: the innermost one, its line, and whether it is a
    statement of that function's own body (not inside an `if`, `try`, loop or `with`). Such an import
    binds before the fix if it comes before the fix in the fix's own function, or before the nested
    `def` that holds the fix in a function around it."""

    def refusal(self, owner: ast.AST, line: int = 0) -> str:
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
        if isinstance(owner, ast.Module):
            return ""
        if any(scope in seen for scope in self.bindings):
            return f"`{self.name}` is bound in the function around the fix; the fix would use it as torch"
        own = (first, last)
        if any(
            scope in seen and not (direct and at < (line if scope[:2] == own else first))
            for scope, at, direct in self.imports
        ):
            return (
                f"`{self.name}` is imported in the function around the fix, not before it in its own body: the fix "
                "would read it before it is bound"
            )
        return ""


_FACTS: BoundedCache[tuple[int, str], tuple[str, TorchName]] = BoundedCache(8)
"""By the module's text (kept, not its tree: the trees of the modules checked last are freed as usual)."""


def torch_name_refusal(tree: ast.Module, text: str, owner: ast.AST, name: str = "", line: int = 0) -> str:
    """Why a fix in `owner` cannot use `name` (by default the module's first name for torch, the one a
    guard writes) as the torch module ("" if it can). Only the statements on the lines of `text` where
    the name occurs other than before a dot or in an import of torch are read."""
    name = name or next(iter(torch_bindings(tree)), "torch")
    kept = _FACTS.get((id(text), name))
    if kept is None or kept[0] is not text:
        kept = _FACTS[id(text), name] = (text, torch_name_facts(tree, name, candidate_lines(text, name)))
    return kept[1].refusal(owner, line)


def candidate_lines(text: str, name: str) -> list[int]:
    """Cheaply, from the text: the lines where `name` occurs as a word not followed by a dot
    (`torch.arange`), other than as the module of `from torch... import` or in `import torch` /
    `import torch as name` at module level; and each line outside ASCII whose NFKC form, as Python
    reads names, holds the name (`ｔｏｒｃｈ = None` rebinds `torch`)."""
    offsets = []
    for match in re.finditer(whole_word(name, not_after=r"[\w.]") + r"(?!\s*\.)", text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        line = text[line_start : line_end if line_end != -1 else len(text)]
        if FROM_MODULE.fullmatch(text, line_start, match.start()) or (
            TORCH_IMPORT.fullmatch(line) and name in ("torch", line.split()[-1]) and not line[:1].isspace()
        ):
            continue
        offsets.append(match.start())
    return with_non_ascii(lines_of_offsets(text, offsets), non_ascii_lines(text), name)


FROM_MODULE = re.compile(r"\s*from\s+")
TORCH_IMPORT = re.compile(r"\s*import\s+torch(?:\s+as\s+\w+)?\s*(?:#.*)?\r?")
"""`import torch` or `import torch as th`: binds its name to torch."""


def torch_name_facts(tree: ast.Module, name: str, lines: list[int]) -> TorchName:
    """The bindings of `name` in the statements on `lines`, each with the innermost function or class
    it binds in (a lambda's parameters count as its function's)."""
    statements = {id(found): found for found_at in statements_at_lines(tree.body, lines).values() for found in found_at}
    walked = [(node, statement) for statement in statements.values() for node in ast.walk(statement)]
    binding = [(node, statement) for node, statement in walked if name in bound_names(node)]
    imported = [node for node, _ in walked if isinstance(node, ast.Import) and name in torch_import_names(node)]
    if not binding and not imported:
        return TorchName(name, False, (), ())
    scopes = definition_scopes(tree.body)
    imports = tuple(
        (max(around), node.lineno, is_body_statement(node, max(around), tree))
        for node in imported
        if (around := [scope for scope in scopes if scope[0] <= node.lineno <= scope[1]])
    )
    bindings: list[Scope] = []
    rebound_in_module = False
    for node, statement in binding:
        line = getattr(node, "lineno", statement.lineno)
        around = [scope for scope in scopes if scope[0] <= line <= scope[1] and not is_own_name(node, scope)]
        if isinstance(node, ast.Global) or not around:
            rebound_in_module = True
        else:
            bindings.append(max(around))  # the innermost: the one starting last
    return TorchName(name, rebound_in_module, tuple(bindings), tuple(scopes), imports)


def torch_import_names(node: ast.Import) -> set[str]:
    return {alias.asname or "torch" for alias in node.names if is_torch_import(alias)}


def is_body_statement(node: ast.Import, scope: Scope, tree: ast.Module) -> bool:
    """The import is a statement of the body of the function or class that starts on `scope`'s line."""
    return any(
        isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and definition.lineno == scope[0]
        and any(statement is node for statement in definition.body)
        for definition in ast.walk(tree)
    )


def is_own_name(node: ast.AST, scope: Scope) -> bool:
    """A `def`'s or `class`'s name binds in the scope around it, not in itself."""
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.lineno == scope[0]


def definition_scopes(body: list[ast.stmt]) -> list[Scope]:
    """The line ranges of the functions and classes among the statements (nested ones included)."""
    scopes: list[Scope] = []
    pending = list(body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = statement.lineno
            scopes.append((first, statement.end_lineno or first, isinstance(statement, ast.ClassDef)))
        for field in ("body", "orelse", "finalbody"):
            pending.extend(getattr(statement, field, []))
        for block in [*getattr(statement, "handlers", []), *getattr(statement, "cases", [])]:
            pending.extend(block.body)
    return scopes


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

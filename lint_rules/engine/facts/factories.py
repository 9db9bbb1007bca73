"""A function of the module that gives back a new cache (`def new_cache(): return DynamicCache()`):
what a call of it gives holds a cache of the length kind its `return`s build.

Every `return` of the function's own scope (not a nested function's) gives a constructor the class
facts know (`ClassFacts.constructed_kind`: `DynamicCache()`, `DynamicCache.from_legacy_cache(...)`,
a class of the package whose name says `Cache`), a local every binding of which is one, or None. A generator, a function
that returns nothing else or anything else (a parameter, another call), or one that may change the
layers of some object (`layer_changes`: `cache.layers.append(StaticLayer(8))` before the `return`)
gives nothing known. Which function a call runs is the call graph's answer, for a module-level
function whose name the module binds only by its undecorated `def` (`bound_only_by_its_def`) and the
calling scope does not rebind; not for a method, which a subclass may override. A rebinding the
syntax does not show (`globals()[...]`, `exec`, `f.__code__ = ...`) is not seen (docs/limits.md)."""

from __future__ import annotations

import ast

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import joined_kind
from lint_rules.engine.facts.classes import ClassFacts
from lint_rules.engine.facts.counters import bindings_of
from lint_rules.engine.facts.definitions import simple_statements
from lint_rules.engine.facts.module_text import lines_that_may_bind, own_scope_nodes, statement_bindings

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
GENERATING = (ast.Yield, ast.YieldFrom)


def returned_cache_kind(function: FunctionNode, classes: ClassFacts, text: str) -> str:
    """INT_LENGTH or TENSOR_LENGTH when every cache the function gives back is built with that kind
    (see the module's docstring); "" otherwise. The caller checks the layer changes. `text`: the
    function's, looked at first: a class whose name does not say `Cache` is not looked for."""
    if "Cache" not in text:
        return ""
    own = list(own_scope_nodes(function))
    if any(isinstance(node, GENERATING) for node in own):
        return ""
    returned = [node.value for node in own if isinstance(node, ast.Return)]
    values = [value for value in returned if value is not None and not ex.is_none(value)]
    if not values:
        return ""
    local_values = bindings_of(function) if any(isinstance(value, ast.Name) for value in values) else {}
    kinds = []
    for value in values:
        if isinstance(value, ast.Name):
            bound = local_values.get(value.id, [])
            if not bound or any(each is None for each in bound):
                return ""  # a parameter, a global, or a binding whose value is not written out
            kinds += [classes.constructed_kind(each) for each in bound if each is not None]
        else:
            kinds.append(classes.constructed_kind(value))
    return joined_kind(kinds) if all(kinds) else ""


def bound_only_by_its_def(tree: ast.Module, text: str, name: str) -> bool:
    """The module's own scope binds `name` once, by an undecorated `def` (not also by an assignment,
    an import, a second `def` in an `if`; a decorator may put any function in its place). Read from
    the tree only where the text shows another line that may bind it (`lines_that_may_bind`)."""
    may_bind = lines_that_may_bind(text, name) if text.isascii() else None
    defs = [
        statement
        for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name
    ]
    if len(defs) != 1 or defs[0].decorator_list:
        return False
    if may_bind == [defs[0].lineno]:
        return True
    binders = [statement for statement in simple_statements(tree.body) if name in statement_bindings(statement)]
    return binders == defs

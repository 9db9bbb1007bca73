"""Bound source methods a nested function or lambda reads from the functions around it.

`n = cache.get_seq_length` in a function, then `def inner(): return x[:, n():]` (or `lambda:
x[:, n():]`): a call of `n` in the closure is a source. A closure reads the name's final value, so
a name the enclosing function binds to a bound source method anywhere in its own body counts, also
when it is bound to something else elsewhere (the direction that reports). Only the receivers known
without walking are taken to have an int length (`self` in an int-length class, `DynamicCache()`);
a name that holds such a cache is not looked at.

Also the names a nested function or lambda reads (`names_read_in_closures`): a call of it may store
into what they hold (`def swap(): out.past_key_values = StaticCache(...)`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Sequence

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import INT_LENGTH
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_text import BINDING_NODES, bound_names, own_scope_nodes
from lint_rules.engine.flow.never_none import text_of


def getter_aliases(definition: Definition, module: ModuleFacts) -> dict[str, int]:
    """The names a function binds (`=`, `:=`, annotated) to a bound source method of a receiver whose
    length may be a tensor (`length_of = cache.get_seq_length`, `getattr(cache, "get_seq_length")`),
    with the line of the last such binding."""
    node = definition.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not mentions_a_getter(node, module):
        return {}
    bound = [pair for child in own_scope_nodes(node) for pair in bindings_of(child)]
    int_length_names = names_bound_to_int_length_caches(node, bound, module)
    aliases: dict[str, int] = {}
    for target, value in bound:
        if isinstance(target, ast.Name) and is_source_getter(value, definition, module, int_length_names):
            aliases[target.id] = max(aliases.get(target.id, 0), target.lineno)
    return aliases


def mentions_a_getter(node: ast.AST, module: ModuleFacts) -> bool:
    """Cheaply, from the text: a source method's name not called right there (`c.get_seq_length`,
    `getattr(c, "get_seq_length")`)."""
    methods = "|".join(map(re.escape, sorted(module.source_methods)))
    return bool(methods) and re.search(rf"\b(?:{methods})\b(?!\s*\()", text_of(node, module.source)) is not None


def names_bound_to_int_length_caches(
    function: ast.FunctionDef | ast.AsyncFunctionDef, bound: list[tuple[ast.expr, ast.expr]], module: ModuleFacts
) -> frozenset[str]:
    """The names (not parameters) that every store of constructs an int-length cache (`c = DynamicCache()`)."""
    values: dict[str, list[ast.expr]] = {}
    for target, value in bound:
        if isinstance(target, ast.Name):
            values.setdefault(target.id, []).append(value)
    stores: dict[str, int] = {}
    changed: set[str] = set()
    for node in own_scope_nodes(function):
        for name in bound_names(node):  # any binding form: a `match` capture or an import counts too
            stores[name] = stores.get(name, 0) + 1
        changed.update(module.classes.layer_changes.changed_at(node))  # `cache.layers.append(...)`, `grow(cache)`
    parameters = {argument.arg for argument in ex.arguments_of(function)}
    if "*" in changed:
        return frozenset()  # `caches[0].layers.append(...)`: any cache may be the changed one
    return frozenset(
        name
        for name, bindings in values.items()
        if name not in parameters
        and name not in changed
        and stores.get(name) == len(bindings)
        and all(module.classes.constructed_kind(value) == INT_LENGTH for value in bindings)
    )


def bindings_of(node: ast.AST) -> list[tuple[ast.expr, ast.expr]]:
    if isinstance(node, ast.Assign):
        return [(target, node.value) for target in node.targets]
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        return [(node.target, node.value)]
    return []


def is_source_getter(
    value: ast.expr, definition: Definition, module: ModuleFacts, int_length_names: frozenset[str]
) -> bool:
    fetched = (value.value, value.attr) if isinstance(value, ast.Attribute) else ex.getattr_of(value)
    if fetched is None or fetched[1] not in module.source_methods:
        return False
    receiver = fetched[0]
    if isinstance(receiver, ast.Name) and receiver.id in int_length_names:
        return False
    return not has_int_length(receiver, definition, module)


def has_int_length(receiver: ast.expr, definition: Definition, module: ModuleFacts) -> bool:
    """Known without walking: `self` in an int-length class, `super()` of one, `DynamicCache()`."""
    if definition.enclosing_class is not None and module.classes.runs_on_others(definition):
        return False  # `IntCache.grow(other)`: its `self` may be any object
    own = module.classes.own_receiver_kind(definition, receiver)
    return (own if own is not None else module.classes.constructed_kind(receiver)) == INT_LENGTH


def names_read_in_closures(body: Sequence[ast.stmt], text: str) -> frozenset[str]:
    """The names the functions and lambdas nested in a scope's `body` read (`text`: the scope's,
    looked at first)."""
    if "def " not in text and "lambda" not in text:
        return frozenset()
    nested = (node for statement in body for node in ast.walk(statement) if isinstance(node, NESTED_FUNCTIONS))
    return frozenset(
        name.id
        for function in nested
        for name in ast.walk(function)
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)
    )


NESTED_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def local_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    """Every name a function binds itself (its parameters, stores, `def`s, imports), less those it
    declares `global` or `nonlocal`."""
    names = {argument.arg for argument in ex.arguments_of(function)}
    names |= {argument.arg for argument in (function.args.vararg, function.args.kwarg) if argument is not None}
    shared: set[str] = set()
    for node in own_scope_nodes(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            shared.update(node.names)
        elif isinstance(node, BINDING_NODES):
            names.update(bound_names(node))  # any form: an `except ... as`, a `match` capture too
    return frozenset(names - shared)


def closure_getters(definition: Definition, aliases: Callable[[Definition], dict[str, int]]) -> frozenset[str]:
    """The bound source methods a nested function reads from the functions around it: the aliases
    (`getter_aliases`) of each enclosing function that no closer function (nor this one) binds itself."""
    node = definition.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or definition.parent is None:
        return frozenset()
    around = [parent for parent in enclosing(definition) if aliases(parent)]
    if not around:
        return frozenset()  # the common case: nothing to shadow
    shadowed = set(local_names(node))
    visible: set[str] = set()
    for parent in enclosing(definition):
        visible |= aliases(parent).keys() - shadowed
        assert isinstance(parent.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        shadowed |= local_names(parent.node)
    return frozenset(visible)


def enclosing(definition: Definition) -> Iterator[Definition]:
    """The functions around a definition, innermost first (a class body in between is no scope of theirs)."""
    parent = definition.parent
    while parent is not None:
        if parent.is_function:
            yield parent
        parent = parent.parent


def reads_any(definition: Definition, names: frozenset[str]) -> bool:
    """Whether the definition's body reads one of `names`."""
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(definition.node))

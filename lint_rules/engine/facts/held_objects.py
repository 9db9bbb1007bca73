"""Ints read off the objects a class holds: `self.layers[i].seq_len`, `self.inner.seq_len`, or
`layer.seq_len` after `layer = self.layers[i]`, where every object that attribute holds is built by
one class of the package, and `seq_len` is an int property of that class
(`ClassBodies.int_properties`): a getter-only property whose every `return` gives a count. An
object answers a property before looking at its own attributes, and a getter alone cannot be
stored to, so no module can change what it answers.

What the attribute holds is read from the class and its subclasses in the module (an object of
one may be where the class is expected): every value bound to it, and everything put into it
(`append`, `insert`, an item store; an alias of the container may put in anything)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attributes import self_attribute
from lint_rules.engine.facts.counters import Function, bindings_of

if TYPE_CHECKING:
    from lint_rules.engine.facts.classes import ClassFacts

Owner = tuple["ClassFacts", ast.ClassDef]


def reads_an_int_property(facts: ClassFacts, cls: ast.ClassDef, function: Function, value: ast.expr) -> bool:
    """`value`, read in `function` of `cls`, is an int property of an object `cls` holds."""
    if not isinstance(value, ast.Attribute):
        return False
    holders = holders_of(function, value.value)
    return bool(holders) and all(answers_an_int(facts, cls, holder, value.attr) for holder in holders)


def holders_of(function: Function, node: ast.expr) -> list[ast.expr]:
    """`node` when it is `self.x` or `self.x[i]`; for a local name, every value the function binds
    it to, when each is one of those ([] otherwise: a parameter, a loop target, anything else)."""
    if not isinstance(node, ast.Name):
        return [node] if is_held(node) else []
    if any(argument.arg == node.id for argument in ex.arguments_of(function)):
        return []
    bound = bindings_of(function).get(node.id, [])
    return [value for value in bound if value is not None] if all(map(is_held, bound)) else []


def is_held(node: ast.expr | None) -> bool:
    container = node.value if isinstance(node, ast.Subscript) else node
    return container is not None and bool(self_attribute(container))


def answers_an_int(facts: ClassFacts, cls: ast.ClassDef, holder: ast.expr, name: str) -> bool:
    if isinstance(holder, ast.Subscript):
        owner = element_class(facts, cls, holder.value)
    else:
        owner = facts.attribute_class(cls, holder)
    return owner is not None and name in owner[0].int_properties(owner[1])


def element_class(facts: ClassFacts, cls: ast.ClassDef, container: ast.expr) -> Owner | None:
    """The one class whose constructor builds every object the container attribute holds, with the
    facts of its module: the displays and comprehensions bound to it, and what goes into it, in
    `cls`, its bases and its subclasses in the module (None when anything else may be in it)."""
    attribute = self_attribute(container)
    members = [*facts.lineage(cls), *facts.subclasses(cls)]
    bindings = [facts.bindings(member) for member in members]
    bound = [value for binding in bindings for value in binding.values.get(attribute, [])]
    added = [value for binding in bindings for value in binding.contents.get(attribute, [])]
    elements = [element for value in bound for element in displayed(value)]
    if not bound or any(binding.opaque for binding in bindings):
        return None
    names = {ex.called_name(value) if isinstance(value, ast.Call) else "" for value in [*elements, *added]}
    return facts.class_named(names.pop()) if len(names) == 1 and "" not in names else None


def displayed(value: ast.expr) -> list[ast.expr | None]:
    """The objects a display or comprehension builds (`[]` none); [None] for any other value."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return list(value.elts)
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        return [value.elt]
    return [None]

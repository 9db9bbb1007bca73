"""Ints read off the objects a class holds: `self.layers[i].seq_len`, `self.inner.seq_len`, or
`layer.seq_len` after `layer = self.layers[i]`, where every object that attribute holds is built by
one class of the package, and `seq_len` is an int property of that class
(`ClassProperties.int_properties`): a getter-only property whose every `return` gives a count. An
object answers a property before looking at its own attributes, and a getter alone cannot be
stored to, so no module can change what it answers.

What the attribute holds is read from every store of the module to an attribute of that name, on any
object (`attribute_stores.module_stores`): every value bound to it, and everything put into it
(`append`, `insert`, an item store; an alias of the container that escapes may put in anything)."""

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
    held = isinstance(holder, ast.Subscript)
    owner = built_class(facts, cls, self_attribute(holder.value if isinstance(holder, ast.Subscript) else holder), held)
    return owner is not None and name in owner[0].int_properties(owner[1])


def built_class(facts: ClassFacts, cls: ast.ClassDef, attribute: str, elements: bool) -> Owner | None:
    """The one class whose constructor builds every object the module binds to `attribute`, on any
    object (with `elements`, every object put into it: the displays and comprehensions bound to it,
    `append`, `insert`, item stores), with the facts of its module; None when anything else may be
    there (an alias of the container that escapes, `extend`, `setattr` of any name, a constructor
    name the function binds itself)."""
    stores = facts.attribute_stores
    bound = stores.values.get(attribute, [])
    if not bound or stores.any_attribute or stores.any_own_attribute or stores.extended.get(attribute):
        return None
    if opaque_family(facts, cls):
        return None  # `vars(self)[...] = v`: bound in a form not recorded above (another object's
        # `__dict__` makes every property unknown: `ClassProperties.int_properties`)
    if elements:
        built = [(element, store.function) for store in bound for element in displayed(store.value)]
        built += [(store.value, store.function) for store in stores.contents.get(attribute, [])]
    else:
        built = [(store.value, store.function) for store in bound]
    names = {constructor(value, function, facts.rebound_names) for value, function in built}
    return facts.class_named(names.pop()) if len(names) == 1 and "" not in names else None


def opaque_family(facts: ClassFacts, cls: ast.ClassDef) -> bool:
    """`cls`, a base or a subclass of it in the module may bind any of its own attributes
    (`self.__dict__`, `vars(self)`, `setattr(self, name, v)`)."""
    return any(facts.bindings(member).opaque for member in facts.family(cls))


def constructor(value: ast.expr | None, function: Function | None, rebound: frozenset[str]) -> str:
    """The class name `value` calls (`Layer()`), "" for anything else, a name `function` binds, or
    one of `rebound` (names bound in some scope other than the module's: `ClassBodies.rebound_names`)."""
    if not isinstance(value, ast.Call):
        return ""
    name = ex.called_name(value)
    root = name.partition(".")[0]
    return "" if root in rebound or (function is not None and binds(function, root)) else name


def values_of(value: ast.expr | None, function: Function | None) -> list[ast.expr | None]:
    """`value` itself; for a name local to `function` (no parameter), every value the function binds
    it to (`layer = Layer(); cache.layers.append(layer)`), [None] when one is hidden or there is none."""
    if not isinstance(value, ast.Name):
        return [value]
    if function is None or any(argument.arg == value.id for argument in ex.arguments_of(function)):
        return [None]
    return bindings_of(function).get(value.id) or [None]


def binds(function: Function, name: str) -> bool:
    """`function` binds `name` itself: a parameter or a local."""
    arguments = function.args
    parameters = [*ex.arguments_of(function), *filter(None, [arguments.vararg, arguments.kwarg])]
    return name in bindings_of(function) or any(parameter.arg == name for parameter in parameters)


def displayed(value: ast.expr | None) -> list[ast.expr | None]:
    """The objects a display or comprehension builds (`[]` none); [None] for any other value."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return list(value.elts)
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        return [value.elt]
    return [None]

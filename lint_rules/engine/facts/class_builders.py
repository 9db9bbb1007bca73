"""What a class's own code may put in place of its objects: a `from_*` class method read as building
the class it is called on (`builder_returns_its_class`), and a length method whose body is what runs
(`runs_its_own_body`)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_stores import function_bindings, own_method
from lint_rules.engine.facts.definitions import statements_within
from lint_rules.engine.facts.held_objects import values_of
from lint_rules.engine.facts.subclasses import is_abstractmethod

if TYPE_CHECKING:
    from lint_rules.engine.facts.classes import ClassFacts

Function = ast.FunctionDef | ast.AsyncFunctionDef


def builder_returns_its_class(facts: ClassFacts, cls: ast.ClassDef, method: str, depth: int = 0) -> bool:
    """The class method `method` that `cls` has returns only a new object of the class it is called
    on (`returns_its_class`); one bound other than by a `def` may return anything, and one no class
    of the module defines is a base's from elsewhere (transformers' by the table)."""
    for member in facts.lineage(cls):
        defined = own_method(member, method)
        if defined is not None:
            own_name = {cls.name} if member is cls else set()

            def delegated(name: str) -> bool:
                return depth < MAX_BUILDER_DEPTH and builder_returns_its_class(facts, cls, name, depth + 1)

            return returns_its_class(defined, own_name, delegated)
        if method in facts.bindings(member).class_level:
            return False
    return not facts.has_base_elsewhere(facts.lineage(cls)[-1])


def runs_its_own_body(method: Function) -> bool:
    """No decorator but `abstractmethod` or one of torch's that run the function as it is
    (`torch.no_grad()`): any other may put another function, or another receiver, in its place."""
    return all(keeps_the_function(decorator) for decorator in method.decorator_list)


def keeps_the_function(decorator: ast.expr) -> bool:
    name = ex.dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator)
    return is_abstractmethod(decorator) or name in BODY_KEEPING_DECORATORS


BODY_KEEPING_DECORATORS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.compiler.disable", "torch._dynamo.disable", "torch.jit.unused"}
)
"""torch's decorators that call the function with its own arguments and return what it returns."""


def returns_its_class(method: Function, own_name: set[str], delegated: Callable[[str], bool]) -> bool:
    """Every `return` of the class method gives a new object of the class it is called on: `cls(...)`,
    a call of `own_name` (the class's own name, where the method is its own), another builder of the
    class that does (`cls._from_config(...)`: `delegated`), or a local bound only to one of those.
    `cls` or the name rebound in the method counts for nothing."""
    decorators = {ex.dotted_name(decorator) for decorator in method.decorator_list}
    if not decorators <= {"classmethod", "staticmethod"}:
        return False
    arguments = ex.arguments_of(method)
    first = arguments[0].arg if arguments and "classmethod" in decorators else ""
    bound = function_bindings(method)

    def kept(name: str) -> bool:  # `cls` bound only as the parameter, the class's name not at all
        return len(bound.get(name, [])) == (1 if name == first else 0)

    builders = {name for name in own_name | {first} if name and kept(name)}

    def builds(value: ast.expr | None) -> bool:
        if not isinstance(value, ast.Call):
            return False
        name = ex.called_name(value)
        owner, _, called = name.rpartition(".")
        return name in builders or (owner in builders and called.lstrip("_").startswith("from_") and delegated(called))

    returned = [
        node.value for node in statements_within(method.body, into_definitions=False) if isinstance(node, ast.Return)
    ]
    return bool(returned) and all(
        builds(value) or all(builds(bound) for bound in values_of(value, method)) for value in returned
    )


MAX_BUILDER_DEPTH = 3
"""How many builders in a row (`from_config` calling `_from_config`) are followed."""

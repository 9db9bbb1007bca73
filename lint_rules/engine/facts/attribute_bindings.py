"""Every binding of a class's own attributes, in every form: `self.attr = value` and `self.attr: X =
value` give their value, a class-level `attr = value` too; an augmented assignment, a tuple or
starred target, a `for`, `with` or comprehension target, `setattr(self, ...)` or
`object.__setattr__(self, ...)` bind a value not known (one whose name is not a literal binds every
attribute, `EVERY_ATTRIBUTE`, and so does `self.__dict__` or `vars(self)`). Read by
`attribute_owners` (which classes own an attribute, for `hasattr`)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from lint_rules.engine.facts import expressions as ex

EVERY_ATTRIBUTE = "*"
"""Stands for the attributes a binding whose name is not a literal may bind (`setattr(self, name, v)`)."""

Function = ast.FunctionDef | ast.AsyncFunctionDef
Binding = tuple[ast.expr | None, Function | None]
"""A value bound to an attribute and the method binding it (None: a class-level binding); a value of
None stands for a binding whose value is not known."""


def attribute_bindings(cls: ast.ClassDef) -> dict[str, list[Binding]]:
    """Every binding of `self.attr` (`cls.attr` in a class method) in the class's methods, and of
    `attr` in its body, by attribute (see the module's docstring)."""
    found: dict[str, list[Binding]] = {}
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = ex.arguments_of(statement)
            receiver = arguments[0].arg if arguments else ""
            for attribute, value in method_bindings(statement, receiver):
                found.setdefault(attribute, []).append((value, statement))
            found.setdefault(statement.name, []).append((None, None))
        else:
            for attribute, value in class_body_bindings(statement):
                found.setdefault(attribute, []).append((value, None))
    return found


def class_body_bindings(statement: ast.stmt) -> Iterator[tuple[str, ast.expr | None]]:
    """An annotation alone (`wrapped: bool`) counts: a `@dataclass`'s or a `NamedTuple`'s `__init__`
    binds the field."""
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        yield statement.target.id, statement.value
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            if isinstance(target, ast.Name):
                yield target.id, statement.value
            else:
                yield from ((name, None) for name in target_names(target))
    elif isinstance(statement, ast.ClassDef):
        yield statement.name, None
    else:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                yield node.id, None


def target_names(target: ast.expr) -> Iterator[str]:
    for node in ast.walk(target):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id


def method_bindings(method: Function, receiver: str) -> Iterator[tuple[str, ast.expr | None]]:
    """(attribute, value) for each binding of `receiver.attribute` in the method (value None: not known)."""
    if not receiver:
        return
    for node in ast.walk(method):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                attribute = attribute_of(target, receiver)
                if attribute:
                    yield attribute, node.value
                else:
                    yield from ((name, None) for name in attributes_within(target, receiver))
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)):
            yield from ((name, None) for name in attributes_within(node.target, receiver))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            yield from ((name, None) for name in attributes_within(node.optional_vars, receiver))
        elif isinstance(node, ast.Call):
            yield from set_attribute_calls(node, receiver)
        if binds_through_its_dict(node, receiver):
            yield EVERY_ATTRIBUTE, None


def binds_through_its_dict(node: ast.AST, receiver: str) -> bool:
    """`self.__dict__` or `vars(self)`, read in any way (`self.__dict__.update(options)`,
    `vars(self)[name] = v`): what binds through them is not written out."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__dict__" and ex.dotted_name(node.value) == receiver
    return (
        isinstance(node, ast.Call)
        and ex.called_name(node) == "vars"
        and len(node.args) == 1
        and ex.dotted_name(node.args[0]) == receiver
    )


def attributes_within(target: ast.expr, receiver: str) -> Iterator[str]:
    """The attributes of `receiver` a (compound) target binds: `self.a`, `self.a, self.b = ...`, `*self.a`."""
    for leaf in ex.bound_leaves(target, (ast.expr,)):
        attribute = attribute_of(leaf, receiver)
        if attribute:
            yield attribute


def attribute_of(target: ast.expr, receiver: str) -> str:
    """`a` for `self.a`; `a.b` for `self.a.b` (an attribute of what `self.a` holds); "" otherwise."""
    name = ex.dotted_name(target)
    return name.partition(".")[2] if name.startswith(receiver + ".") else ""


def set_attribute_calls(call: ast.Call, receiver: str) -> Iterator[tuple[str, ast.expr | None]]:
    """`setattr(self, "a", v)`, `object.__setattr__(self, "a", v)`: "a" bound to an unknown value
    (EVERY_ATTRIBUTE for a name that is not a literal)."""
    name = ex.called_name(call)
    if name != "setattr" and not name.endswith("__setattr__"):
        return
    arguments = call.args
    if name != "setattr" and not name.startswith(("object.", "super")):
        arguments = [ast.Name(receiver), *arguments]  # `self.__setattr__("a", v)`
    if len(arguments) < 2 or ex.dotted_name(arguments[0]) != receiver:
        return
    attribute = arguments[1]
    literal = attribute.value if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str) else ""
    yield (literal or EVERY_ATTRIBUTE), None

"""The bindings of a class's attributes that `attributes.py` does not follow with a value: every
other way a class may bind `self.attr` (an unpacking, a starred, loop, `with ... as` or comprehension
target, `del`, another receiver name, `type(self)`, the class's name or an alias of `self`), `setattr`
and `delattr`, and the hooks that let it bind any attribute (`setattr(self, name, v)`, `self.__dict__`,
`vars(self)`, `__setattr__`, `__getattr__`).

Statements are read one by one (its functions', nested ones too); the expressions
inside one are walked only when its own lines hold what such a form needs (EXPRESSION_WORDS,
ATTRIBUTE_LOOP_TARGET), or when the module's text is not at hand.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import DEFINITION_STATEMENTS, first_line_of
from lint_rules.engine.facts.module_text import lines_of_offsets, occurrences

HOOK_ATTRIBUTES = frozenset({"__dict__", "__setattr__", "__delattr__"})
"""An attribute read anywhere in the class that may bind any attribute."""
HOOK_METHODS = frozenset({"__setattr__", "__delattr__", "__getattribute__", "__getattr__"})
"""A method the class defines that may bind, or read, any attribute as anything."""
EXPRESSION_WORDS = ("setattr", "delattr", "vars", "__dict__", ":=")
"""What an expression-level form needs in the text: a call, the instance dict, a walrus (an alias of
`self`); or an attribute target of a comprehension (ATTRIBUTE_LOOP_TARGET)."""
ATTRIBUTE_LOOP_TARGET = re.compile(r"for\s[\w\s,()\[\]*]*\.[\w\s,()\[\]*.]*\sin\b")
"""`for self.n in`, `for (a, self.n) in`: a `for` whose target has a dot. (One literal at a time:
an alternation of words would cost ten times as much.)"""


class UnfollowedBindings:
    """What a class's statements bind in forms whose value is not followed (a plain class: the
    `dataclasses` import costs a one-file run about a tenth of its time)."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        """Attributes bound in a form whose value is not followed."""
        self.set_to: list[tuple[str, ast.expr]] = []
        """`setattr(self, "n", v)`: the attribute and `v`."""
        self.stored_into: list[str] = []
        """Attributes an item is stored into (or deleted from) in a form not followed."""
        self.opaque = False


class UnfollowedReader:
    """Reads the class's statements one at a time, each after `attributes.py` recorded what it follows."""

    def __init__(self, receivers: frozenset[str], followed: set[int], expression_lines: list[int] | None) -> None:
        """`followed`: the targets whose binding was recorded with its value; `expression_lines`: the
        class's lines where an expression-level form may be (None: walk every statement's expressions)."""
        self.receivers = receivers
        self.followed = followed
        self.expression_lines = expression_lines
        self.found = UnfollowedBindings()
        self.aliases: set[str] = set()
        self.elsewhere: list[tuple[str, str]] = []
        """`name.attr` bound where `name` is not a receiver: a binding of the class's if `name` is an alias."""

    def read(self, statement: ast.stmt) -> None:
        if isinstance(statement, DEFINITION_STATEMENTS) and statement.name in HOOK_METHODS:
            self.found.opaque = True
        targets = statement_targets(statement)
        if not targets and self.expression_lines == []:
            return  # nothing bound, no expression-level form in the class
        value = getattr(statement, "value", None)
        if isinstance(value, ast.Name) and value.id in self.receivers and isinstance(statement, ast.Assign):
            self.aliases.update(target.id for target in statement.targets if isinstance(target, ast.Name))
        for target in targets:
            for leaf in target_leaves(target):
                read_target(self.found, leaf, self.receivers, self.followed, self.elsewhere)
        lines = self.expression_lines
        if lines is None or (lines and mentions(lines, statement)):
            read_expressions(self.found, statement, self.receivers, self.followed, self.aliases, self.elsewhere)

    def finish(self) -> UnfollowedBindings:
        self.found.unknown += [attribute for name, attribute in self.elsewhere if name in self.aliases]
        return self.found


def lines_within(lines: list[int] | None, node: ast.stmt) -> list[int] | None:
    """The sorted `lines` that fall within the node's."""
    if lines is None:
        return None
    first, last = first_line_of(node), node.end_lineno or node.lineno
    return lines[bisect.bisect_left(lines, first) : bisect.bisect_right(lines, last)]


def statement_targets(statement: ast.stmt) -> list[ast.expr]:
    if isinstance(statement, (ast.Assign, ast.Delete)):
        return statement.targets
    if isinstance(statement, (ast.AugAssign, ast.For, ast.AsyncFor)):
        return [statement.target]
    if isinstance(statement, ast.AnnAssign):
        return [statement.target] if statement.value is not None else []
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in statement.items if item.optional_vars is not None]
    return []


def target_leaves(target: ast.expr) -> Iterator[ast.expr]:
    """The attributes and subscripts a target binds, through tuples, lists and starred targets."""
    return ex.bound_leaves(target, (ast.Attribute, ast.Subscript))


def read_target(
    found: UnfollowedBindings,
    target: ast.expr,
    receivers: frozenset[str],
    followed: set[int],
    elsewhere: list[tuple[str, str]],
) -> None:
    """One bound attribute or subscript (a Store or Del one)."""
    if id(target) in followed:
        return
    followed.add(id(target))  # read once, whether from its statement or from an expression walk
    if isinstance(target, ast.Subscript):
        owner = ex.dotted_name(target.value)
        name, _, attribute = owner.partition(".")
        if name in receivers and attribute and "." not in attribute:
            found.stored_into.append(attribute)
            found.opaque |= attribute == "__dict__"
    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        if target.value.id in receivers:
            found.unknown.append(target.attr)
        else:
            elsewhere.append((target.value.id, target.attr))
    elif isinstance(target, ast.Attribute) and is_class_of_receiver(target.value, receivers):
        found.unknown.append(target.attr)  # `type(self).n = v`, `self.__class__.n = v`: a class default


def is_class_of_receiver(node: ast.expr, receivers: frozenset[str]) -> bool:
    if isinstance(node, ast.Call) and ex.called_name(node) == "type" and len(node.args) == 1:
        return ex.dotted_name(node.args[0]) in receivers
    owner, _, attribute = ex.dotted_name(node).partition(".")
    return attribute == "__class__" and owner in receivers


def mentions(lines: list[int], statement: ast.stmt) -> bool:
    """A line of the statement's own (up to its body, for a compound one) holds one of the words."""
    first = first_line_of(statement)
    body = getattr(statement, "body", None)
    last = max(body[0].lineno - 1, statement.lineno) if body else (statement.end_lineno or statement.lineno)
    return bisect.bisect_right(lines, last) > bisect.bisect_left(lines, first)


SELF_ATTRIBUTE_CALL = re.compile(r"self\.\w+\s*\.\s*\w+\s*\(")
"""`self.layers.append(`: a method called on an attribute, which may put something into it."""


def self_call_lines_of(text: str) -> list[int]:
    """The lines of a module's text where a method may be called on an attribute of `self`."""
    return lines_of_offsets(text, [match.start() for match in SELF_ATTRIBUTE_CALL.finditer(text)])


def expression_lines_of(text: str) -> list[int]:
    """The lines of a module's text where an expression-level form may be."""
    offsets = [offset for word in EXPRESSION_WORDS for offset in occurrences(text, word, whole_words=False)]
    offsets += [match.start() for match in ATTRIBUTE_LOOP_TARGET.finditer(text)]
    return lines_of_offsets(text, sorted(offsets))


def read_expressions(
    found: UnfollowedBindings,
    statement: ast.stmt,
    receivers: frozenset[str],
    followed: set[int],
    aliases: set[str],
    elsewhere: list[tuple[str, str]],
) -> None:
    """The statement's own expressions (not those of the statements nested in it)."""
    pending: list[ast.AST] = [child for child in ast.iter_child_nodes(statement) if not isinstance(child, ast.stmt)]
    while pending:
        node = pending.pop()
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.stmt))
        if isinstance(node, ast.Attribute) and node.attr in HOOK_ATTRIBUTES:
            found.opaque = True
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            read_target(found, node, receivers, followed, elsewhere)
        elif isinstance(node, ast.NamedExpr) and ex.dotted_name(node.value) in receivers:
            aliases.add(node.target.id)
        elif isinstance(node, ast.Call):
            read_call(found, node, receivers)


def read_call(found: UnfollowedBindings, call: ast.Call, receivers: frozenset[str]) -> None:
    """`setattr(self, "n", v)` binds `v`; `delattr(self, "n")` binds an unknown value; either with a
    name that is not a literal, and `vars(self)`, may bind any attribute."""
    name = ex.called_name(call)
    if name not in ("setattr", "delattr", "vars") or not call.args:
        return
    if not (isinstance(call.args[0], ast.Name) and call.args[0].id in receivers):
        return
    attribute = call.args[1] if len(call.args) > 1 else None
    if name == "vars" or not (isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)):
        found.opaque = True
    elif name == "setattr" and len(call.args) == 3 and not call.keywords:
        found.set_to.append((attribute.value, call.args[2]))
    else:
        found.unknown.append(attribute.value)

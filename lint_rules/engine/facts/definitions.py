"""Every `def` and `class` of a module, with its qualified name, its class and where it starts and ends.

Built once per module from the statements alone (no expression is visited), so that the call graph,
the compiled reach and the summaries can find a definition by name or by line cheaply.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from lint_rules.engine.facts.expressions import (
    LAYERS,
    READING_BUILTINS,
    dotted_name,
    layers_changed_at,
    layers_held_by,
    statement_parts,
)
from lint_rules.engine.facts.module_text import BINDING_NODES, bound_names

DEF_NAME = re.compile(r"def\s+(\w+)")
CLASS_NAME = re.compile(r"class\s+(\w+)")
DEFINITION_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
DefinitionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class LineOrder(NamedTuple):
    starts: list[int]
    definitions: list[Definition]


class Definition:
    __slots__ = ("enclosing_class", "node", "parent", "qualname")

    def __init__(
        self, node: DefinitionNode, qualname: str, enclosing_class: ast.ClassDef | None, parent: Definition | None
    ) -> None:
        self.node = node
        self.qualname = qualname
        self.enclosing_class = enclosing_class
        """The class this is a method of (only for a `def` directly in a class body)."""
        self.parent = parent
        """The enclosing `def` or `class`, None at module level."""

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, (ast.FunctionDef, ast.AsyncFunctionDef))

    @property
    def first_line(self) -> int:
        return first_line_of(self.node)

    @property
    def last_line(self) -> int:
        return self.node.end_lineno or self.node.lineno


class DefinitionIndex:
    """The module's definitions, by node, by name and by line.

    Module-level and class-level definitions are indexed up front; what is nested inside a function
    only when that function is asked about (`nested_in`), since function bodies are most of a
    module's statements and most are never asked about.
    """

    def __init__(self, tree: ast.Module, text: str) -> None:
        self.defined_names = frozenset(DEF_NAME.findall(text) + CLASS_NAME.findall(text))
        """Every name a `def` or `class` statement binds anywhere in the module (read from the text)."""
        self.outer: list[Definition] = list(collect_definitions(tree.body, "", None, None))
        self.by_node: dict[int, Definition] = {id(definition.node): definition for definition in self.outer}
        self.by_name: dict[str, list[Definition]] = {}
        for definition in self.outer:
            self.by_name.setdefault(definition.name, []).append(definition)
        self.classes: dict[str, ast.ClassDef] = {
            definition.name: definition.node
            for definition in self.outer
            if isinstance(definition.node, ast.ClassDef) and definition.parent is None
        }
        self._line_orders: dict[int, tuple[list[Definition], LineOrder]] = {}
        self._nested: dict[int, list[Definition]] = {}
        self._tree = tree
        self._aliases: dict[str, frozenset[str]] | None = None

    @property
    def function_aliases(self) -> dict[str, frozenset[str]]:
        """Module-level names bound to a module-level function by assignment (`length = _static_length`,
        in an `if` or `try` too), with the functions each may hold: a call of the name may run any."""
        if self._aliases is None:
            bound: dict[str, set[str]] = {}
            for statement in simple_statements(self._tree.body):
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name):
                    for target in statement.targets:
                        if isinstance(target, ast.Name):
                            bound.setdefault(target.id, set()).add(statement.value.id)
            held = {name: frozenset(resolved(name, bound, self)) for name in bound}
            self._aliases = {name: functions for name, functions in held.items() if functions}
        return self._aliases

    def of(self, node: ast.AST) -> Definition | None:
        return self.by_node.get(id(node))

    def nested_in(self, function: Definition) -> list[Definition]:
        """The definitions inside a function's body (and inside the classes and functions there)."""
        if id(function.node) not in self._nested:
            inner = list(collect_definitions(function.node.body, f"{function.qualname}.", None, function))
            self._nested[id(function.node)] = inner
            self.by_node.update((id(definition.node), definition) for definition in inner)
        return self._nested[id(function.node)]

    def in_line_order(self, definitions: list[Definition]) -> LineOrder:
        """A list this index made (`outer`, `nested_in`) sorted by the `def`/`class` line (decorators
        aside), with those lines. The lists themselves follow a `try` statement's fields (body,
        `else`, `finally`, then the `except` blocks), which is not always the order of the lines."""
        kept = self._line_orders.get(id(definitions))
        if kept is None or kept[0] is not definitions:
            ordered = sorted(definitions, key=lambda definition: definition.node.lineno)
            order = LineOrder([definition.node.lineno for definition in ordered], ordered)
            kept = self._line_orders[id(definitions)] = (definitions, order)
        return kept[1]

    def functions_named(self, name: str) -> list[Definition]:
        """Module-level functions and methods of that name (functions nested in functions: `nested_in`)."""
        return [definition for definition in self.by_name.get(name, []) if definition.is_function]

    def innermost_function_at(self, line: int) -> Definition | None:
        """The innermost `def` whose body holds `line` (None at module or class level)."""
        starts, ordered = self.in_line_order(self.outer)
        found = None
        for definition in reversed(ordered[: bisect.bisect_right(starts, line)]):
            if definition.is_function and definition.node.lineno <= line <= definition.last_line:
                found = definition
                break
        while found is not None:
            inner = [
                definition
                for definition in self.nested_in(found)
                if definition.is_function and definition.node.lineno <= line <= definition.last_line
            ]
            if not inner:
                return found
            found = inner[-1]
        return None

    def method(self, cls: ast.ClassDef, name: str) -> Definition | None:
        """The class body's last `def name` (a later one replaces an earlier), but not a property's
        setter or deleter (`@name.setter`), which keeps the getter."""
        for statement in reversed(cls.body):
            if (
                isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                and statement.name == name
                and not keeps_property(statement)
            ):
                return self.of(statement)
        return None


def keeps_property(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`@name.setter` or `@name.deleter`: the `def` adds to the property `name` holds."""
    kept = (f"{function.name}.setter", f"{function.name}.deleter")
    return any(dotted_name(decorator) in kept for decorator in function.decorator_list)


def collect_definitions(
    body: Sequence[ast.stmt], qualname: str, enclosing_class: ast.ClassDef | None, parent: Definition | None
) -> Iterator[Definition]:
    """The definitions in `body` and, through classes, in their bodies; not inside functions."""
    for node in nested_definitions(body):
        definition = Definition(node, f"{qualname}{node.name}", enclosing_class, parent)
        yield definition
        if isinstance(node, ast.ClassDef):
            yield from collect_definitions(node.body, f"{definition.qualname}.", node, definition)


def nested_definitions(body: Sequence[ast.stmt]) -> Iterator[DefinitionNode]:
    """Definitions directly in `body`, also inside its compound statements, not inside other defs."""
    for statement in statements_within(body, into_definitions=False):
        if isinstance(statement, DEFINITION_STATEMENTS):
            yield statement


def statements_within(body: Sequence[ast.stmt], into_definitions: bool) -> Iterator[ast.stmt]:
    """Every statement of `body` and of the blocks inside it, in source order; the bodies of `def`s
    and classes only `into_definitions`. Iterative: a statement deep in nested blocks is not handed up
    through a generator per level."""
    pending = list(reversed(body))
    while pending:
        statement = pending.pop()
        yield statement
        fields = block_fields(type(statement))
        if fields and (into_definitions or not isinstance(statement, DEFINITION_STATEMENTS)):
            pending.extend(reversed([inner for block in blocks_of(statement, fields) for inner in block]))


def block_fields(kind: type[ast.stmt]) -> tuple[str, ...]:
    """The fields of a kind of statement that hold blocks, in source order (none for a simple statement)."""
    if kind not in _BLOCK_FIELDS:
        _BLOCK_FIELDS[kind] = tuple(field for field in BLOCK_FIELD_NAMES if field in kind._fields)
    return _BLOCK_FIELDS[kind]


BLOCK_FIELD_NAMES = ("body", "orelse", "finalbody", "handlers", "cases")
_BLOCK_FIELDS: dict[type[ast.stmt], tuple[str, ...]] = {}


def blocks_of(statement: ast.stmt, fields: tuple[str, ...]) -> list[Sequence[ast.stmt]]:
    """The blocks in those fields of a statement: a body's statements each as its own block, and the
    body of each `except` and `case`."""
    return [
        child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child]
        for field in fields
        for child in getattr(statement, field)
    ]


def statements_at(body: Sequence[ast.stmt], line: int) -> Iterator[ast.stmt]:
    """The innermost statements of `body` (looking into compound statements) that span `line`, and
    a compound statement whose header may share the line with them (`for x in f(y): pass`)."""
    for statement in body:
        if not spans_line(statement, line):
            continue
        blocks = inner_blocks(statement)
        found = [found for block in blocks for found in statements_at(block, line)]
        yield from found or [statement]
        if found and header_may_reach(statement, blocks, line):
            yield statement


def header_may_reach(statement: ast.stmt, blocks: list[Sequence[ast.stmt]], line: int) -> bool:
    """The compound statement's header (its test, iterator, items, a definition's decorators and
    defaults) holds code on `line`, which a statement of its blocks starts on too."""
    first = next((block[0] for block in blocks if block), None)  # the blocks come in source order
    return first is not None and line <= first_line_of(first) and line <= last_header_line(statement)


def last_header_line(statement: ast.stmt) -> int:
    """The last line of the statement's header parts (a part without lines of its own, `arguments`
    or a `withitem`, by its parts)."""
    fields = block_fields(type(statement))
    parts = [
        item
        for field, value in ast.iter_fields(statement)
        if field not in fields
        for item in (value if isinstance(value, list) else [value])
        if isinstance(item, ast.AST)
    ]
    last = 0
    for part in parts:
        for node in [part] if isinstance(part, (ast.expr, ast.arg)) else ast.walk(part):
            if isinstance(node, (ast.expr, ast.arg)):
                last = max(last, node.end_lineno or node.lineno)
    return last


def statements_spanning(block: Sequence[ast.stmt], line: int) -> list[ast.stmt]:
    """The statements of one block (not those inside them) that span `line`: found by bisection,
    since a block's statements come in line order."""
    start = bisect.bisect_left(block, line, key=last_line_of)
    return list(itertools.takewhile(lambda statement: first_line_of(statement) <= line, block[start:]))


def statements_at_lines(body: Sequence[ast.stmt], lines: Sequence[int]) -> dict[int, list[ast.stmt]]:
    """`statements_at(body, line)` for each of the sorted `lines` that a statement spans, in one descent."""
    found: dict[int, list[ast.stmt]] = {}
    if not lines:
        return found
    start = bisect.bisect_left(body, lines[0], key=last_line_of)  # the statements of a block come in line order
    for statement in itertools.islice(body, start, None):
        first, last = first_line_of(statement), last_line_of(statement)
        if first > lines[-1]:
            break
        inside = lines[bisect.bisect_left(lines, first) : bisect.bisect_right(lines, last)]
        if not inside:
            continue
        inner: dict[int, list[ast.stmt]] = {}
        blocks = inner_blocks(statement)
        for block in blocks:
            for line, statements in statements_at_lines(block, inside).items():
                inner.setdefault(line, []).extend(statements)
        for line in inside:
            at_line = inner.get(line)
            found.setdefault(line, []).extend(at_line or [statement])
            if at_line and header_may_reach(statement, blocks, line):
                found[line].append(statement)
    return found


def inner_blocks(statement: ast.stmt) -> list[Sequence[ast.stmt]]:
    """The blocks a compound statement holds, each statement of a body as its own block."""
    return blocks_of(statement, block_fields(type(statement)))


def simple_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a body (the module's, a class's, a function's), looking into `if`/`for`/
    `with`/`try`/`match` blocks but not into nested definitions."""
    return statements_within(body, into_definitions=False)


def last_line_of(statement: ast.stmt) -> int:
    return statement.end_lineno or statement.lineno


def spans_line(statement: ast.stmt, line: int) -> bool:
    """The statement (its decorators included) runs from `line` or before to `line` or after."""
    return first_line_of(statement) <= line <= last_line_of(statement)


def first_line_of(statement: ast.stmt) -> int:
    """A `def` or `class` starts at its first decorator."""
    decorators: list[ast.expr] = getattr(statement, "decorator_list", None) or []
    if not decorators:
        return statement.lineno
    return min(statement.lineno, *(decorator.lineno for decorator in decorators))


def calls_at(function: ast.AST, line: int, name: str) -> Iterator[ast.Call]:
    """Calls on `line` of the function whose callee is named `name`."""
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    for statement in statements_at(function.body, line):
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
                callee = node.func
                if (isinstance(callee, ast.Name) and callee.id == name) or (
                    isinstance(callee, ast.Attribute) and callee.attr == name
                ):
                    yield node


def caller_class(caller: Definition | None) -> ast.ClassDef | None:
    """The class whose `self` a function sees: its own, or that of the method it is nested in."""
    while caller is not None:
        if caller.enclosing_class is not None:
            return caller.enclosing_class
        caller = caller.parent
    return None


def class_lineage(cls: ast.ClassDef, classes: Mapping[str, ast.ClassDef]) -> list[ast.ClassDef]:
    """The class and its bases among `classes` (a module's), nearest first, each once."""
    lineage = [cls]
    for member in lineage:
        for base in member.bases:
            found = classes.get(dotted_name(base))
            if found is not None and found not in lineage:
                lineage.append(found)
    return lineage


def resolved(name: str, bound: Mapping[str, set[str]], index: DefinitionIndex) -> set[str]:
    """The module-level functions `name` may hold through a chain of aliases (`a = b`, `b = f`)."""
    found: set[str] = set()
    pending, seen = [name], {name}
    while pending:
        for value in bound.get(pending.pop(), set()):
            if any(definition.parent is None for definition in index.functions_named(value)):
                found.add(value)
            if value in bound and value not in seen:
                seen.add(value)
                pending.append(value)
    return found


def layers_changed_in(owner: ast.AST, layers_lines: Sequence[int]) -> frozenset[str]:
    """The receivers whose layers a function (or a class body, or the module: `owner`) may change or
    hand on (`expressions.layers_changed_at`), read on `layers_lines`, the module's lines that name
    `layers`; a lambda that names them is taken to change `*`. A local bound once to the list
    (`layers = getattr(cache, "layers", None)`) and only read after (`len(layers)`, `for layer in
    layers`, `layers[0]`, a test) changes nothing."""
    first, last = getattr(owner, "lineno", 0), getattr(owner, "end_lineno", None)
    lines = [number for number in layers_lines if last is None or first <= number <= last]
    body = getattr(owner, "body", None)
    if not lines:
        return frozenset()
    if not isinstance(body, list):
        return frozenset({"*"})
    statements = [found for at_line in statements_at_lines(body, lines).values() for found in at_line]
    read_only = read_only_layer_aliases(owner, statements)
    return frozenset(
        receiver
        for node in statement_parts(statements)
        if id(node) not in read_only
        for receiver in layers_changed_at(node)
    )


def read_only_layer_aliases(owner: ast.AST, statements: Sequence[ast.stmt]) -> set[int]:
    """The ids of the bindings among `statements` (and of their values: `cache.layers`,
    `getattr(cache, "layers"[, d])`) of the list to locals (`layers = cache.layers`, `layers, out =
    m.layers, {}`) that nothing binds otherwise and every use of which only reads the list."""
    aliases = {id(statement): pairs for statement in statements if (pairs := layer_alias_pairs(statement))}
    if not aliases:
        return set()
    nodes = list(ast.walk(owner))
    bindings = [name for node in nodes if isinstance(node, BINDING_NODES) for name in bound_names(node)]
    reading = reading_positions(nodes)

    def only_read(name: str) -> bool:
        return bindings.count(name) == 1 and all(
            id(node) in reading
            for node in nodes
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
        )

    return {
        bound
        for statement_id, pairs in aliases.items()
        if all(only_read(name) for name, _ in pairs)
        for bound in (statement_id, *(id(value) for _, value in pairs))
    }


def layer_alias_pairs(statement: ast.stmt) -> list[tuple[str, ast.expr]]:
    """(name, value) for each local the statement binds to a layers list, in an assignment that hands
    the list to nothing else ([] otherwise)."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return []
    target, value = statement.targets[0], statement.value
    pairs = [(target, value)]
    if (
        isinstance(target, ast.Tuple)
        and isinstance(value, ast.Tuple)
        and len(target.elts) == len(value.elts)
        and not any(isinstance(element, ast.Starred) for element in [*target.elts, *value.elts])
    ):
        pairs = list(zip(target.elts, value.elts, strict=True))
    found = []
    for element_target, element_value in pairs:
        if reads_the_layers(element_value) and isinstance(element_target, ast.Name):
            found.append((element_target.id, element_value))
        elif reads_the_layers(element_value) or layers_held_by(element_value):
            return []
    return found


def reads_the_layers(value: ast.expr) -> bool:
    if isinstance(value, ast.Attribute):
        return value.attr == LAYERS
    return (
        isinstance(value, ast.Call)
        and dotted_name(value.func) == "getattr"
        and len(value.args) in (2, 3)
        and isinstance(value.args[1], ast.Constant)
        and value.args[1].value == LAYERS
        and not value.keywords
    )


def reading_positions(nodes: Sequence[ast.AST]) -> set[int]:
    """The ids of the expressions only read where they stand: handed to a reading builtin, iterated,
    indexed, compared or tested for truth."""
    found: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Call) and dotted_name(node.func) in READING_BUILTINS:
            found.update(id(argument) for argument in node.args)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            found.add(id(node.iter))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            found.add(id(node.value))
        elif isinstance(node, ast.Compare):
            found.update(id(operand) for operand in [node.left, *node.comparators])
        elif isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            found.update(truth_tested(node.test))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            found.update(truth_tested(node.operand))
    return found


def truth_tested(test: ast.expr) -> list[int]:
    """The ids of a test and of the operands of the `and`/`or` it is (their values are only tested
    there; `layers or []` elsewhere gives the list back)."""
    if isinstance(test, ast.BoolOp):
        return [id(test), *(found for value in test.values for found in truth_tested(value))]
    return [id(test)]

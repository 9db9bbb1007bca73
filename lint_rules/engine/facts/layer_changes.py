"""Whose layers a module's code may change: directly (`cache.layers.append(StaticLayer(8))`, every form
`expressions.layers_changed_at` reads), or by handing the object to one of the module's functions or
methods that may (`grow(cache)`, `self._grow(cache)`, `Holder(cache)` whose `__init__` does), through
any chain of such calls (`changers.py`: what a call of a changer changes). A transformers cache
whose layers a function may change counts what those layers count, so it holds no int-length cache
there (`ValueWalker.changes_layers`, `ReceiverTyping.layers_changed`,
`closures.names_bound_to_int_length_caches`), and a `self` attribute whose object's layers any code
of the module changes is not typed from its stores (`changed_attributes`).

The changers are found in rounds, callers after callees: a `def` whose changes reach a parameter, the
class whose `__init__`, `__new__` or `__post_init__` it is, a subclass of such a class, a name bound
to a changer or to a changing lambda (`add = grow`).

A changer of what it is handed (not only of its own object) may also run other than by a call of its
name. As the `target=` of a call (a thread, a process), that call changes the layers of everything it
is handed. Where it is a `forward` or `__call__` (`self.block(x, cache)` runs it), is read otherwise
(passed, kept by `partial` or `HOOKS.append`, stored, returned), is wrapped by a decorator other than
torch's body-keeping ones, or is a changing lambda written other than as `name = lambda ...`, any
call may run it: every call but a reading builtin's then changes the layers of what it is handed.
Reading its docs or comparing it runs nothing. The functions of other modules are not read
(docs/limits.md).
"""

from __future__ import annotations

import ast
import bisect
import functools
from collections.abc import Iterator, Sequence

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.changers import (
    CONSTRUCTION_METHODS,
    Changer,
    Changers,
    Known,
    assembled,
    assign_targets,
    changed_arguments,
    changed_through,
    first_parameter,
    is_static,
    lambda_changes,
    lambda_hands_on,
    last_name,
    parameters_of,
    reaching_callers,
    receivers_changed,
    receivers_of,
    statement_changers,
)
from lint_rules.engine.facts.class_builders import keeps_the_function
from lint_rules.engine.facts.definitions import (
    inner_blocks,
    layers_changed_in,
    simple_statements,
    statements_at_lines,
)
from lint_rules.engine.facts.local_names import parameter_names
from lint_rules.engine.facts.module_text import (
    BINDING_NODES,
    bound_names,
    lines_mentioning,
    own_scope_nodes,
    spans_one_of,
    statement_bindings,
)

CALLED_AS_OBJECTS = frozenset({"forward", "__call__"})
"""Methods a call of an object runs (`self.block(x, cache)` runs `forward`), whatever its name."""
MAX_ROUNDS = 8
"""Rounds of callers of changers; past them, every call is taken to change what it is handed."""


class LayerChanges:
    """The layer changes of one module (its tree, its text in NFKC form when known, and its lines
    that name `layers`), found once, when a fact first asks."""

    def __init__(self, tree: ast.Module, text: str | None, layers_lines: list[int]) -> None:
        self.tree = tree
        self.text = text
        self.layers_lines = layers_lines

    def changed_in(self, owner: ast.AST) -> frozenset[str]:
        """The receivers whose layers a function, a class body or the module may change or hand on."""
        direct = layers_changed_in(owner, self.layers_lines)
        body = getattr(owner, "body", None)
        first, last = getattr(owner, "lineno", 0), getattr(owner, "end_lineno", None) or len(self.every_line)
        lines = self.call_lines
        within = lines[bisect.bisect_left(lines, first) : bisect.bisect_right(lines, last)]
        if not within or not isinstance(body, list):
            return direct
        statements = [found for at_line in statements_at_lines(body, within).values() for found in at_line]
        return direct | frozenset(receivers_of(changed_through(list(ex.statement_parts(statements)), self.known)))

    @functools.cached_property
    def changed_attributes(self) -> frozenset[str]:
        """The attributes whose objects' layers some code of the module may change, in any method or
        function (`self.cache.layers.append(...)`, `grow(self.cache)`, `warm()` never called here) or
        in a class body (`cache = DynamicCache()` then `grow(cache)`): what a store binds to such an
        attribute is not what it holds later."""
        lines = sorted({*self.layers_lines, *self.call_lines})
        found: set[str] = set()
        for function, _ in functions_holding(self.tree.body, lines, None):
            changed = self.changed_in(function)
            undotted = {receiver for receiver in changed if "." not in receiver} - parameter_names(function)
            kept = call_result_locals(function) if undotted - {"*"} else frozenset()
            found |= {attribute_or_any(receiver, kept | parameter_names(function)) for receiver in changed}
        for body in [self.tree.body, *(cls.body for cls in self.class_bodies)]:
            statements = list(simple_statements(body))
            nodes = [node for inner in statements for node in ex.statement_parts([inner])]
            found |= {scope_level(receiver, statements) for node in nodes for receiver in self.changed_at(node)}
        return frozenset(found - {""})

    @functools.cached_property
    def class_bodies(self) -> list[ast.ClassDef]:
        """The classes whose bodies hold a line that names `layers` or a changer."""
        return list(classes_holding(self.tree.body, sorted({*self.layers_lines, *self.call_lines})))

    def changed_at(self, node: ast.AST) -> list[str]:
        """The receivers whose layers one node may change or hand on."""
        through_a_call = receivers_of(changed_arguments(node, self.known)) if isinstance(node, ast.Call) else []
        return ex.layers_changed_at(node) + through_a_call

    @functools.cached_property
    def call_lines(self) -> list[int]:
        """The lines that may call a changer."""
        return self.lines_calling(self.known)

    def lines_calling(self, known: Known) -> list[int]:
        if known.any_call:
            return self.every_line
        named = self.lines_naming(reaching_callers(known.changers), with_layers=False)
        return sorted({*named, *known.handed_to_lines}) if known.handed_to_lines else named

    @functools.cached_property
    def known(self) -> Known:
        """The module's changers, found in rounds: each round looks again only at the functions and
        statements on the lines that name a changer the last round found or changed."""
        known = Known({})
        by_function: dict[int, list[tuple[str, Changer]]] = {}
        by_statement: dict[int, list[tuple[str, Changer]]] = {}
        lines = self.lines_naming(frozenset(), with_layers=True)
        for _ in range(MAX_ROUNDS):
            call_lines = self.lines_calling(known)
            for function, cls in functions_holding(self.tree.body, lines, None):
                by_function[id(function)] = self.function_changers(function, cls, known, call_lines)
            for statement in self.statements_on(lines):
                by_statement[id(statement)] = statement_changers(statement, known)
            changers = assembled([*by_function.values(), *by_statement.values()])
            any_call, handed_to = self.escapes(changers)
            latest = Known(
                changers,
                known.any_call or any_call,
                known.handed_to | frozenset(call_id for call_id, _ in handed_to),
                known.handed_to_lines | frozenset(line for _, line in handed_to),
            )
            if latest == known:
                return known
            renewed = {name for name in {*changers, *known.changers} if changers.get(name) != known.changers.get(name)}
            renewed &= reaching_callers({**known.changers, **changers})
            lines = (
                self.every_line
                if latest.any_call
                else sorted({*self.lines_naming(frozenset(renewed), with_layers=False), *latest.handed_to_lines})
            )
            known = latest
        return Known(known.changers, True, known.handed_to, known.handed_to_lines)

    def function_changers(
        self,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        cls: ast.ClassDef | None,
        known: Known,
        call_lines: list[int],
    ) -> list[tuple[str, Changer]]:
        """The changers a `def` is, by the names a call writes: its own, and its class's for an `__init__`."""
        receivers = receivers_changed(function, self.layers_lines, known, call_lines)
        changed = parameters_of(function, receivers)
        if not changed:
            return []
        found = [(function.name, Changer(function, changed, method=cls is not None and not is_static(function)))]
        if cls is not None and function.name in CONSTRUCTION_METHODS:
            own = first_parameter(function)
            keeps = changed == frozenset(parameter_names(function)) or any(
                receiver.partition(".")[0] in own and "." in receiver for receiver in receivers
            )
            found.append((cls.name, Changer(function, changed, builds=True, keeps_what_it_is_handed=keeps)))
        return found

    def escapes(self, changers: Changers) -> tuple[bool, frozenset[tuple[int, int]]]:
        """Where a changer of what it is handed may run other than by a call of its name: whether any
        call may (it is read as a value: passed, stored, returned; a changing lambda not bound by
        `name = lambda`; a wrapped `def`), and the calls it is the `target=` of (a thread, a
        process: that call hands it what it is given), by id and line."""
        handing = frozenset(
            name for name, entries in changers.items() if any(c.changes_what_it_is_handed for c in entries)
        )
        if handing & CALLED_AS_OBJECTS:
            return True, frozenset()
        if self.unnamed_changing_lambda:
            return True, frozenset()  # a changing lambda in a display, a default, a call: it may run anywhere
        if not handing:
            return False, frozenset()
        statements = self.statements_on(self.lines_naming(handing, with_layers=False))
        nodes = list(ex.statement_parts(statements))
        named = named_lambdas(statements)
        if any(
            isinstance(node, ast.Lambda) and id(node) not in named and lambda_hands_on(node, Known(changers))
            for node in nodes
        ):
            return True, frozenset()  # `{"add": lambda c: grow(c)}`
        calls = [node for node in nodes if isinstance(node, ast.Call)]
        called = {id(call.func) for call in calls}
        harmless = harmless_reads(nodes)
        targets = {
            id(keyword.value): call
            for call in calls
            if last_name(call.func) in THREAD_RUNNERS
            for keyword in call.keywords
            if keyword.arg == "target"
        }
        handed_to: set[tuple[int, int]] = set()
        for node in nodes:
            if isinstance(node, DEFINITIONS) and node.name in handing and is_wrapped(node):
                return True, frozenset()  # a decorator may keep it (`@register`)
            if not (
                isinstance(node, (ast.Name, ast.Attribute))
                and last_name(node) in handing
                and is_read_not_called(node, called)
                and id(node) not in harmless
            ):
                continue
            call = targets.get(id(node))
            if call is None:
                return True, frozenset()  # stored, returned, or handed to a call that may keep it
            handed_to.add((id(call), call.lineno))
        return False, frozenset(handed_to)

    @functools.cached_property
    def unnamed_changing_lambda(self) -> bool:
        """A lambda that changes layers (directly: `lambda c: c.layers.append(...)`) written other than
        as the whole value of `name = lambda ...`."""
        if self.text is None or "lambda" not in self.text:
            return False
        lines = sorted(set(self.layers_lines) & set(lines_mentioning(self.text, ["lambda"], whole_words=True)))
        statements = self.statements_on(lines)
        named = named_lambdas(statements)
        return any(
            isinstance(node, ast.Lambda) and id(node) not in named and lambda_changes(node)
            for node in ex.statement_parts(statements)
        )

    def statements_on(self, lines: list[int]) -> list[ast.stmt]:
        return [statement for found in statements_at_lines(self.tree.body, lines).values() for statement in found]

    def lines_naming(self, names: frozenset[str], with_layers: bool) -> list[int]:
        """The lines that name one of `names` (and `layers`), every line where the text is not known."""
        if self.text is None:
            return self.every_line
        found = lines_mentioning(self.text, sorted(names), whole_words=True) if names else []
        return sorted({*self.layers_lines, *found}) if with_layers else found

    @functools.cached_property
    def every_line(self) -> list[int]:
        last = max((getattr(statement, "end_lineno", None) or 0 for statement in self.tree.body), default=0)
        return list(range(1, last + 1))


def attribute_or_any(receiver: str, kept: frozenset[str]) -> str:
    """The attribute a changed receiver names (`cache` of `self.cache`); "" for a name of `kept` (a
    parameter, whose callers hand it on and name the attribute there: `grow(self.cache)`; or a local
    bound only to calls' results); `*` for anything else, which may hold any attribute's object
    (`c = r.cache`, a loop's or `with`'s target, a subscript, a call)."""
    if "." in receiver:
        return receiver.rpartition(".")[2]
    return "" if receiver in kept else "*"


def scope_level(receiver: str, statements: list[ast.stmt]) -> str:
    """What a change in a class body or at module level reaches: the attribute it names (`cache =
    DynamicCache()` then `grow(cache)` in a class body; `r.cache`), `*` for a name there that may hold
    another object (`_c = cache`, `c = runner.cache`), "" for a name the scope does not bind (a
    comprehension's variable, a lambda's parameter) or binds only to a new object (`SHARED = Cache()`)."""
    if "." in receiver:
        return receiver.rpartition(".")[2]
    values = [
        statement.value
        for statement in statements
        if isinstance(statement, (ast.Assign, ast.AnnAssign))
        for target in assign_targets(statement)
        if isinstance(target, ast.Name) and target.id == receiver
    ]
    bound = {name for statement in statements for name in statement_bindings(statement)}
    if receiver not in bound or (not values and receiver in comprehension_targets(statements)):
        return ""  # `[c.layers.append(x) for c in caches]`: the comprehension's own variable
    built = all(
        isinstance(value, ast.Call) and ex.dotted_name(value.func).rpartition(".")[2][:1].isupper() for value in values
    )
    return receiver if values and built else "*"


def comprehension_targets(statements: list[ast.stmt]) -> set[str]:
    return {
        name.id
        for statement in statements
        for node in ast.walk(statement)
        if isinstance(node, ast.comprehension)
        for name in ast.walk(node.target)
        if isinstance(name, ast.Name)
    }


def call_result_locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The locals every binding of which is a plain assignment of a call's result (`c = DynamicCache()`,
    `view = first._empty_like(...)`): a new object, or one a function gives back, which is not
    followed (`c = self.get()` of a method returning `self.cache`: docs/limits.md)."""
    calls: dict[str, int] = {}
    bindings: dict[str, int] = {}
    for node in own_scope_nodes(function):
        if isinstance(node, BINDING_NODES):
            for name in bound_names(node):
                bindings[name] = bindings.get(name, 0) + 1
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            calls[target.id] = calls.get(target.id, 0) + 1
    return frozenset(name for name, count in calls.items() if bindings.get(name) == count)


def classes_holding(body: Sequence[ast.stmt], lines: Sequence[int]) -> Iterator[ast.ClassDef]:
    """The classes at any depth whose lines hold one of `lines` (sorted)."""
    for statement in body:
        if spans_one_of(statement, lines):
            if isinstance(statement, ast.ClassDef):
                yield statement
            for block in inner_blocks(statement):
                yield from classes_holding(block, lines)


def functions_holding(
    body: Sequence[ast.stmt], lines: Sequence[int], cls: ast.ClassDef | None
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]]:
    """The `def`s at any depth whose lines hold one of `lines` (sorted), with the class each is a
    method of (None for a function not directly in a class body)."""
    for statement in body:
        if not spans_one_of(statement, lines):
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement, cls
            yield from functions_holding(statement.body, lines, None)
        elif isinstance(statement, ast.ClassDef):
            yield from functions_holding(statement.body, lines, statement)
        else:
            for block in inner_blocks(statement):
                yield from functions_holding(block, lines, cls)


def named_lambdas(statements: Sequence[ast.stmt]) -> set[int]:
    """The lambdas bound as the whole value of a plain assignment (`add = lambda c: ...`): changers by that name."""
    return {
        id(statement.value)
        for statement in statements
        if isinstance(statement, (ast.Assign, ast.AnnAssign))
        and isinstance(statement.value, ast.Lambda)
        and all(isinstance(target, ast.Name) for target in assign_targets(statement))
    }


HARMLESS_ATTRIBUTES = frozenset({"__doc__", "__name__", "__qualname__", "__module__"})
THREAD_RUNNERS = frozenset({"Thread", "Process", "Timer"})
"""`threading.Thread(target=grow, args=(cache,))`: the call runs its target with what it is given."""
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def harmless_reads(nodes: Sequence[ast.AST]) -> set[int]:
    """The ids of reads of a function or class that cannot run it: its name or docs (`grow.__doc__`),
    an identity or equality test (`hook is grow`), a class tested (`isinstance(x, Holder)`), named as a
    base (its subclasses are changers of their own) or in an annotation."""
    found: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr in HARMLESS_ATTRIBUTES:
            found.add(id(node.value))
        elif (
            isinstance(node, ast.Call)
            and ex.dotted_name(node.func) in ("isinstance", "issubclass")
            and len(node.args) == 2
        ):
            found.update(id(part) for part in ast.walk(node.args[1]))
        elif isinstance(node, ast.ClassDef):
            found.update(id(part) for base in node.bases for part in ast.walk(base))
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            found.update(id(part) for part in ast.walk(node.annotation))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            found.update(id(part) for part in ast.walk(node.returns))
        elif isinstance(node, ast.Compare) and all(
            isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) for op in node.ops
        ):
            found.update(id(operand) for operand in [node.left, *node.comparators])
    return found


def is_read_not_called(node: ast.Name | ast.Attribute, called: set[int]) -> bool:
    return isinstance(node.ctx, ast.Load) and id(node) not in called


def is_wrapped(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    return not all(
        keeps_the_function(decorator) or ex.dotted_name(decorator) in {"staticmethod", "classmethod"}
        for decorator in function.decorator_list
    )

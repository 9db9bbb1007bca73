"""Counters a cache class keeps as Python ints: `self._seen_tokens = 0`, then `self._seen_tokens +=
n` in `update` and `self._seen_tokens = max_length` in `crop`. A value bound to `self.attr` is a
*count* when its form says it is an int, or when it is built from counts only: a parameter annotated
`int`, a parameter added to the counter (`+= q_len`: trusted to be a count, see README Limits), a
local bound only to counts, the counter itself, a method of the class whose every `return` gives a
count, and arithmetic, conditionals, `int()`, `len()`, `max()`, `min()` of those. A tensor method
(`mask.sum()`), a subscript or any other call is not a count, and neither is a method's `-> int`
annotation alone (`get_seq_length() -> int` is the annotation this project is about).
"""

from __future__ import annotations

import ast

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.module_text import BINDING_NODES, NESTED_SCOPES, bound_names, own_scope_nodes

Function = ast.FunctionDef | ast.AsyncFunctionDef

MAX_DEPTH = 3
"""How many method calls deep a count is followed (`self.seen = self._validate(n)`)."""
COUNTING_BUILTINS = frozenset({"int", "len", "max", "min", "abs"})
INT_KEEPING_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.FloorDiv,
    ast.Mod,
    ast.LShift,
    ast.RShift,
    ast.BitAnd,
    ast.BitOr,
)
"""`n op= v` with a count `v` keeps an int `n` an int (`/=` gives a float, `**=` may)."""
INT_VALUE = ast.Constant(1)
"""Stands for a value known to be an int (an element of `x.shape`, a count bound to an attribute)."""


class CountReader:
    """Decides counts for one class, each method's names read once."""

    def __init__(self, methods: dict[str, Function]) -> None:
        self.methods = methods
        self._locals: dict[int, dict[str, list[ast.expr | None]]] = {}
        self._names: dict[tuple[int, str, str, bool], bool] = {}
        self._deciding: set[tuple[int, str, str, bool]] = set()

    def is_count(self, value: ast.expr, attribute: str, method: Function, increment: bool) -> bool:
        """Whether `value`, bound to `self.<attribute>` in `method` (added to it when `increment`), is a count."""
        return self.reads_count(value, attribute, method, increment, 0)

    def reads_count(self, value: ast.expr, attribute: str, method: Function, increment: bool, depth: int) -> bool:
        def count(node: ast.expr) -> bool:
            return self.reads_count(node, attribute, method, increment, depth)

        if ex.is_structurally_int(value) or self.reads_the_counter(value, attribute):
            return True
        if isinstance(value, ast.IfExp):
            return count(value.body) and count(value.orelse)
        if isinstance(value, ast.BinOp):
            return not isinstance(value.op, ast.Div) and count(value.left) and count(value.right)
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
            return count(value.operand)
        if isinstance(value, ast.Name):
            return self.is_count_name(value.id, attribute, method, increment, depth)
        if not isinstance(value, ast.Call):
            return False
        name = ex.called_name(value)
        if name in ("int", "len"):
            return True
        if name in COUNTING_BUILTINS:
            return bool(value.args) and all(map(count, value.args))
        owner, _, method_name = name.rpartition(".")
        called = self.methods.get(method_name) if owner == "self" else None
        return called is not None and depth < MAX_DEPTH and self.returns_counts(called, attribute, depth + 1)

    def reads_the_counter(self, value: ast.expr, attribute: str) -> bool:
        return ex.dotted_name(value) == f"self.{attribute}"

    def returns_counts(self, method: Function, attribute: str, depth: int) -> bool:
        returns = [node.value for node in ast.walk(method) if isinstance(node, ast.Return)]
        return bool(returns) and all(
            value is not None and self.reads_count(value, attribute, method, False, depth) for value in returns
        )

    def is_count_name(self, name: str, attribute: str, method: Function, increment: bool, depth: int) -> bool:
        """Decided once per method and name; a name read while being decided (`n = n + 1`) counts as a
        count: a value built only from counts and itself is one."""
        key = (id(method), name, attribute, increment)
        if key in self._names:
            return self._names[key]
        if key in self._deciding:
            return True
        self._deciding.add(key)
        try:
            decided = self.decide_name(name, attribute, method, increment, depth)
        finally:
            self._deciding.discard(key)
        if not self._deciding:  # an answer that leaned on a name still being decided is not kept
            self._names[key] = decided
        return decided

    def decide_name(self, name: str, attribute: str, method: Function, increment: bool, depth: int) -> bool:
        parameter = next((argument for argument in ex.arguments_of(method) if argument.arg == name), None)
        if parameter is not None and not (increment or ex.is_int_annotation(parameter.annotation)):
            return False
        if parameter is not None and increment and not may_be_given_a_count(parameter, method):
            return False
        bindings = self.local_bindings(method).get(name, [])
        if parameter is None and not bindings:
            return False  # a global or a free variable
        return all(
            bound is not None and self.reads_count(bound, attribute, method, increment, depth) for bound in bindings
        )

    def local_bindings(self, method: Function) -> dict[str, list[ast.expr | None]]:
        """Per name, what the method binds it to: an assignment's value (`+=` too), INT_VALUE for an
        element of `a, n = x.shape`, None for any other binding (a loop or `with` target, a `match`
        capture, an import, another unpacking); the method's parameters themselves are not listed."""
        key = id(method)
        if key not in self._locals:
            self._locals[key] = bindings_of(method)
        return self._locals[key]


def bindings_of(method: Function) -> dict[str, list[ast.expr | None]]:
    """Per name the method's own scope binds, what it binds it to (see `CountReader.local_bindings`).
    A function, lambda or class nested in it binds its own names, except those it declares
    `nonlocal` (bound to anything, for the method)."""
    found: dict[str, list[ast.expr | None]] = {}
    known: dict[int, ast.expr | None] = {}
    own = list(own_scope_nodes(method))
    for node in own:
        if isinstance(node, ast.AugAssign) and not isinstance(node.op, INT_KEEPING_OPERATORS):
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    known[id(target)] = node.value
                elif isinstance(target, ast.Tuple) and ex.is_shape(node.value):
                    known.update({id(element): INT_VALUE for element in target.elts if isinstance(element, ast.Name)})
    parameters = {id(argument) for argument in ex.arguments_of(method)}
    for node in own:
        if isinstance(node, BINDING_NODES) and id(node) not in parameters:
            for name in bound_names(node):
                found.setdefault(name, []).append(known.get(id(node)))
    for scope in (node for node in own if isinstance(node, NESTED_SCOPES)):
        for shared in (node for node in ast.walk(scope) if isinstance(node, ast.Nonlocal)):
            for name in shared.names:
                found.setdefault(name, []).append(None)
    return found


def may_be_given_a_count(parameter: ast.arg, method: Function) -> bool:
    """An added parameter is trusted to be a count (docs/limits.md) unless its own header says
    otherwise: an annotation that is not `int`, or a default that is neither an int literal nor None
    (`t: torch.Tensor`, `u=torch.tensor(1)`)."""
    if parameter.annotation is not None and not ex.is_int_annotation(parameter.annotation):
        return False
    default = default_of(parameter, method.args)
    return default is None or ex.is_none(default) or ex.is_structurally_int(default)


def default_of(parameter: ast.arg, arguments: ast.arguments) -> ast.expr | None:
    positional = [*arguments.posonlyargs, *arguments.args]
    if parameter in positional:
        index = positional.index(parameter) - (len(positional) - len(arguments.defaults))
        return arguments.defaults[index] if index >= 0 else None
    if parameter in arguments.kwonlyargs:
        return arguments.kw_defaults[arguments.kwonlyargs.index(parameter)]
    return None

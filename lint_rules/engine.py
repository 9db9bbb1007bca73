"""The detection engine: follows each `get_seq_length()` result through a function and reports
where it is used as a Python int.

The analysis is a forward, flow-sensitive walk over each function's statements. A value is
*tainted* by the set of source calls it may come from; taint flows through assignments,
arithmetic, conditional expressions and `max`/`min`/`abs`, and stops at coercions (`int(n)`,
`n.item()`) and in branches narrowed to int (`isinstance(n, int)`, and the else side of
`isinstance(n, torch.Tensor)`, which is the guard the fixer inserts). Branches are merged by union;
loop bodies are walked twice so that a value tainted late in the body reaches its start.

Every adapter calls `analyze_source` (or `analyze_tree` when it already has the tree):
the flake8 plugin, the standalone checker and the fixer.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence

from lint_rules import expressions as ex
from lint_rules.compiled import compiled_region_of
from lint_rules.files import split_lines
from lint_rules.findings import Finding, FixPlan
from lint_rules.fixplan import SourceText, plan_fix
from lint_rules.settings import DEFAULT_SOURCE_METHODS

Taint = frozenset["Origin"]
CLEAN: Taint = frozenset()

INT = "int"
TENSOR = "tensor"


@dataclasses.dataclass(eq=False)
class Origin:
    """One source call, e.g. `cache.get_seq_length()` on line 12."""

    call: ast.Call
    method: str
    statement: ast.stmt
    scope: Scope
    source_methods: frozenset[str]
    flowed_into: list[ast.expr] = dataclasses.field(default_factory=list)
    """Targets of its own statement that the value (or a result computed from it) is bound to."""
    used_in_own_statement: bool = False
    returned: bool = False
    """The value leaves the function: a guard would change what every caller gets."""
    _plan: FixPlan | None = None

    @property
    def line(self) -> int:
        return self.call.lineno

    def unsafe_because(self) -> str:
        if self.scope.compiled_region:
            return (
                f"the guard would add a graph break and a device sync inside a compiled region "
                f"({self.scope.compiled_region}); keep the arithmetic on tensors or gate it with "
                "torch.compiler.is_compiling()"
            )
        if self.returned:
            return (
                "the value is returned: a guard here would change what every caller gets, including callers "
                "inside compiled regions; guard it where a caller needs an int"
            )
        return ""

    def fix_plan(self, source: SourceText) -> FixPlan:
        if self._plan is None:
            result_targets = [] if self.used_in_own_statement else self.flowed_into
            self._plan = plan_fix(
                self.call,
                self.statement,
                self.scope.body_owner,
                source,
                self.unsafe_because(),
                result_targets,
                self.source_methods,
            )
        return self._plan


@dataclasses.dataclass(frozen=True)
class Scope:
    """A function (or the module) being walked, with what its header tells."""

    name: str
    body_owner: ast.AST
    compiled_region: str
    returns_int: bool
    is_source_definition: bool
    int_typed_names: frozenset[str]
    int_returning_self: bool
    """`self.get_seq_length()` is provably int here: the class overrides it with an int."""


class State:
    """What is known at one point of a function: which names hold a tainted value, which are ints."""

    def __init__(self, taint: dict[str, Taint] | None = None, kinds: dict[str, str] | None = None) -> None:
        self.taint: dict[str, Taint] = taint or {}
        self.kinds: dict[str, str] = kinds or {}

    def copy(self) -> State:
        return State(dict(self.taint), dict(self.kinds))

    def bind(self, key: str, taint: Taint, kind: str = "") -> None:
        if taint:
            self.taint[key] = taint
        else:
            self.taint.pop(key, None)
        for stale in [name for name in self.taint if name.startswith(key + ".")]:
            del self.taint[stale]
        if kind:
            self.kinds[key] = kind
        else:
            self.kinds.pop(key, None)

    def clean(self, key: str) -> None:
        self.taint.pop(key, None)

    @staticmethod
    def merge(states: Iterable[State | None]) -> State | None:
        reachable = [state for state in states if state is not None]
        if not reachable:
            return None
        merged = reachable[0].copy()
        for other in reachable[1:]:
            for key, taint in other.taint.items():
                merged.taint[key] = merged.taint.get(key, CLEAN) | taint
            merged.kinds = {key: kind for key, kind in merged.kinds.items() if other.kinds.get(key) == kind}
        return merged

    def same_as(self, other: State) -> bool:
        return self.taint == other.taint and self.kinds == other.kinds


@dataclasses.dataclass(frozen=True)
class Use:
    """A harmful use found while walking: reported once per (node, code, origin)."""

    node: ast.AST
    code: str
    detail: str
    origin: Origin
    scope: Scope


def key_of(node: ast.expr) -> str:
    """The state key of a name or a plain attribute chain (`self.past`); "" for anything else."""
    return ex.dotted_name(node)


class FunctionWalker:
    """Walks the statements of one scope, tracking taint and collecting harmful uses."""

    def __init__(self, scope: Scope, module: ModuleFacts) -> None:
        self.scope = scope
        self.module = module
        self.uses: dict[tuple[int, str, int], Use] = {}
        self.statement: ast.stmt | None = None

    # ----- statements -------------------------------------------------------------------------

    def walk_block(self, body: Sequence[ast.stmt], state: State | None) -> State | None:
        for index, statement in enumerate(body):
            if state is None:
                return None
            self.statement = statement
            state = self.walk_statement(statement, state, body[index + 1 : index + 2])
        return state

    def walk_statement(self, node: ast.stmt, state: State, following: Sequence[ast.stmt]) -> State | None:
        if isinstance(node, ast.Assign):
            self.walk_assign(node.targets, node.value, state, following)
        elif isinstance(node, ast.AnnAssign):
            self.walk_annotated_assign(node, state, following)
        elif isinstance(node, ast.AugAssign):
            self.walk_augmented_assign(node, state)
        elif isinstance(node, ast.Return):
            self.walk_return(node, state)
            return None
        elif isinstance(node, (ast.Raise, ast.Continue, ast.Break)):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.value(child, state)
            return None
        elif isinstance(node, ast.If):
            return self.walk_if(node, state)
        elif isinstance(node, (ast.While, ast.For, ast.AsyncFor)):
            return self.walk_loop(node, state)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.value(item.context_expr, state)
                if item.optional_vars is not None:
                    self.bind_target(item.optional_vars, CLEAN, "", state)
            return self.walk_block(node.body, state)
        elif isinstance(node, (ast.Try, ast.TryStar)):
            return self.walk_try(node, state)
        elif isinstance(node, ast.Match):
            return self.walk_match(node, state)
        elif isinstance(node, ast.Assert):
            self.bool_use(node.test, state)
            if node.msg is not None:
                self.value(node.msg, state)
        elif isinstance(node, ast.Expr):
            self.value(node.value, state)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                state.bind(key_of(target), CLEAN)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for header_part in definition_header(node):
                self.value(header_part, state)
            state.bind(node.name, CLEAN)
        return state

    def walk_assign(
        self, targets: Sequence[ast.expr], value: ast.expr, state: State, following: Sequence[ast.stmt]
    ) -> None:
        if len(targets) == 1 and is_pairwise_unpacking(targets[0], value):
            assert isinstance(targets[0], (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
            for element_target, element_value in zip(targets[0].elts, value.elts, strict=False):
                self.walk_assign([element_target], element_value, state, following)
            return
        taint = self.value(value, state)
        kind = self.kind_of(value, state)
        for target in targets:
            if taint and key_of(target) in self.scope.int_typed_names and not self.guarded_next(target, following):
                self.report(value, "SLG005", f"bound to `{key_of(target)}`, declared `int`", taint)
            self.bind_target(target, taint, kind, state)

    def walk_annotated_assign(self, node: ast.AnnAssign, state: State, following: Sequence[ast.stmt]) -> None:
        if node.value is None:
            return
        taint = self.value(node.value, state)
        if ex.is_int_annotation(node.annotation) and taint and not self.guarded_next(node.target, following):
            self.report(node.value, "SLG005", f"bound to `{ast.unparse(node.target)}: int`", taint)
        self.bind_target(node.target, taint, self.kind_of(node.value, state) or self.annotated_kind(node), state)

    def walk_augmented_assign(self, node: ast.AugAssign, state: State) -> None:
        key = key_of(node.target)
        before = state.taint.get(key, CLEAN)
        added = self.value(node.value, state)
        if before and not added and self.is_int_operand(node.value, state):
            self.report(
                node, "SLG001", f"int arithmetic (`{ast.unparse(node.target)} {op_text(node.op)}= ...`)", before
            )
        if key:
            state.bind(key, before | added, INT if not (before | added) and state.kinds.get(key) == INT else "")

    def walk_return(self, node: ast.Return, state: State) -> None:
        if node.value is None:
            return
        taint = self.value(node.value, state)
        for origin in taint:
            origin.returned = True
        if taint and self.scope.returns_int and not self.scope.is_source_definition:
            self.report(node.value, "SLG005", "returned from a function annotated `-> int`", taint)

    def walk_if(self, node: ast.If, state: State) -> State | None:
        self.bool_use(node.test, state)
        then_state = self.walk_block(node.body, narrow(node.test, state.copy(), True, self.module))
        else_state = self.walk_block(node.orelse, narrow(node.test, state.copy(), False, self.module))
        return State.merge([then_state, else_state])

    def walk_loop(self, node: ast.While | ast.For | ast.AsyncFor, state: State) -> State | None:
        entry = state
        exit_state: State | None = state
        for _ in range(2):
            self.statement = node
            loop_state = entry.copy()
            if isinstance(node, ast.While):
                self.bool_use(node.test, loop_state)
                body_state = narrow(node.test, loop_state.copy(), True, self.module)
            else:
                self.value(node.iter, loop_state)
                body_state = loop_state.copy()
                self.bind_target(node.target, CLEAN, "", body_state)
            end_of_body = self.walk_block(node.body, body_state)
            exit_state = State.merge([loop_state, end_of_body])
            if exit_state is None or exit_state.same_as(entry):
                break
            entry = exit_state
        return self.walk_block(node.orelse, exit_state)

    def walk_try(self, node: ast.Try | ast.TryStar, state: State) -> State | None:
        after_body = self.walk_block(node.body, state.copy())
        handler_entry = State.merge([state, after_body]) or state
        handlers = []
        for handler in node.handlers:
            handler_state = handler_entry.copy()
            if handler.name:
                handler_state.bind(handler.name, CLEAN)
            handlers.append(self.walk_block(handler.body, handler_state))
        after_else = self.walk_block(node.orelse, after_body) if node.orelse else after_body
        merged = State.merge([after_else, *handlers])
        if node.finalbody:
            return self.walk_block(node.finalbody, merged or handler_entry.copy()) if merged else None
        return merged

    def walk_match(self, node: ast.Match, state: State) -> State | None:
        self.value(node.subject, state)
        ends = []
        for case in node.cases:
            case_state = state.copy()
            if case.guard is not None:
                self.bool_use(case.guard, case_state)
            ends.append(self.walk_block(case.body, case_state))
        return State.merge([*ends, state])

    def bind_target(self, target: ast.expr, taint: Taint, kind: str, state: State) -> None:
        for origin in taint:
            if origin.statement is self.statement and target not in origin.flowed_into:
                origin.flowed_into.append(target)
        for bound in ex.assigned_names(target):
            key = key_of(bound)
            if key:
                state.bind(key, taint, kind if isinstance(target, (ast.Name, ast.Attribute)) else "")
        for node in ast.walk(target):
            if isinstance(node, ast.Subscript):
                self.value(node.value, state)
                self.index_use(node.slice, state)

    def guarded_next(self, target: ast.expr, following: Sequence[ast.stmt]) -> bool:
        """The int-annotated binding is immediately followed by the fixer's guard."""
        if not following or not isinstance(following[0], ast.If):
            return False
        guard = following[0]
        return narrowed_key(guard.test, self.module) == (key_of(target), TENSOR) and bool(guard.body)

    def annotated_kind(self, node: ast.AnnAssign) -> str:
        return INT if ex.is_int_annotation(node.annotation) else ""

    # ----- expressions ------------------------------------------------------------------------

    def value(self, node: ast.expr, state: State, consumed: bool = False) -> Taint:
        """The taint of `node`'s value; reports harmful uses inside it.

        `consumed` means the parent reports the node itself if it is tainted (so that one use is
        reported once, at the outermost harmful place).
        """
        if isinstance(node, ast.Name):
            return state.taint.get(node.id, CLEAN)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, state)
        if isinstance(node, ast.Call):
            return self.call(node, state)
        if isinstance(node, ast.BinOp):
            return self.binary(node, state, consumed)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                self.bool_use(node.operand, state)
                return CLEAN
            return self.value(node.operand, state, consumed)
        if isinstance(node, ast.BoolOp):
            taint = CLEAN
            for operand in node.values[:-1]:
                taint |= self.bool_use(operand, state)
            return taint | self.value(node.values[-1], state, consumed)
        if isinstance(node, ast.Compare):
            return self.compare(node, state)
        if isinstance(node, ast.IfExp):
            self.bool_use(node.test, state)
            return self.value(node.body, state, consumed) | self.value(node.orelse, state, consumed)
        if isinstance(node, ast.NamedExpr):
            taint = self.value(node.value, state, consumed)
            state.bind(node.target.id, taint, self.kind_of(node.value, state))
            return taint
        if isinstance(node, ast.Subscript):
            return self.subscript(node, state)
        if isinstance(node, ast.Starred):
            return self.value(node.value, state)
        if isinstance(node, ast.Lambda):
            inner = state.copy()
            for argument in ast.walk(node.args):
                if isinstance(argument, ast.arg):
                    inner.bind(argument.arg, CLEAN)
            self.value(node.body, inner)
            return CLEAN
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self.comprehension(node, state)
            return CLEAN
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.value(child, state)
        return CLEAN

    def attribute(self, node: ast.Attribute, state: State) -> Taint:
        key = key_of(node)
        if key and key in state.taint:
            return state.taint[key]
        self.value(node.value, state)
        return CLEAN

    def subscript(self, node: ast.Subscript, state: State) -> Taint:
        container = self.value(node.value, state)
        self.index_use(node.slice, state)
        return container

    def index_use(self, index: ast.expr, state: State) -> None:
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        for part in parts:
            bounds = [part.lower, part.upper, part.step] if isinstance(part, ast.Slice) else [part]
            for bound in bounds:
                if bound is None:
                    continue
                taint = self.value(bound, state, consumed=True)
                if taint:
                    what = "slice bound" if isinstance(part, ast.Slice) else "index"
                    self.report(bound, "SLG002", f"{what} `{ast.unparse(bound)}`", taint)

    def binary(self, node: ast.BinOp, state: State, consumed: bool) -> Taint:
        left_is_int = self.is_int_operand(node.left, state)
        right_is_int = self.is_int_operand(node.right, state)
        left = self.value(node.left, state, consumed=right_is_int)
        right = self.value(node.right, state, consumed=left_is_int)
        if not (left or right):
            return CLEAN
        if isinstance(node.op, ast.Mult) and (ex.is_sequence_display(node.left) or ex.is_sequence_display(node.right)):
            self.report(node, "SLG003", f"repetition count in `{ast.unparse(node)}`", left | right)
            return CLEAN
        if self.is_tensor_operand(node.left, state) or self.is_tensor_operand(node.right, state):
            return CLEAN
        if ((left and right_is_int) or (right and left_is_int)) and not consumed:
            self.report(node, "SLG001", f"int arithmetic `{ast.unparse(node)}`", left | right)
        return left | right

    def compare(self, node: ast.Compare, state: State) -> Taint:
        taint = CLEAN
        for operand, operator in zip(node.comparators, node.ops, strict=False):
            operand_taint = self.value(operand, state)
            if not isinstance(operator, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                taint |= operand_taint
        left = self.value(node.left, state)
        if not isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            taint |= left
        return taint

    def call(self, node: ast.Call, state: State) -> Taint:
        origin = self.source_origin(node)
        if origin is not None:
            self.value(node.func, state)
            return frozenset({origin})
        name = ex.called_name(node)
        method = ex.method_name(node)
        receiver = self.value(node.func.value, state) if isinstance(node.func, ast.Attribute) else CLEAN
        if name in ex.COERCING_BUILTINS or name in ex.COERCING_FUNCTIONS:
            self.arguments(node, state)
            return CLEAN
        if name == "isinstance" and len(node.args) == 2:
            return self.isinstance_check(node, state)
        if name in ex.COMPARING_BUILTINS:
            return self.max_min(node, state)
        argument_taint = self.arguments(node, state, ex.size_arguments(node, self.module.torch_aliases))
        if name in ex.PROPAGATING_BUILTINS:
            return argument_taint
        if method in ex.COERCING_METHODS:
            return CLEAN
        if method in ex.TENSOR_PRESERVING_METHODS:
            return receiver
        return CLEAN

    def arguments(self, node: ast.Call, state: State, sizes: Sequence[ast.expr] = ()) -> Taint:
        """Walks every argument once; reports the tainted ones that are sizes (SLG003)."""
        size_ids = {id(size) for size in sizes}
        taint = CLEAN
        for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
            elements = argument.elts if isinstance(argument, (ast.Tuple, ast.List)) else []
            parts = elements if any(id(element) in size_ids for element in elements) else [argument]
            for part in parts:
                part_taint = self.value(part, state, consumed=id(part) in size_ids)
                if part_taint and id(part) in size_ids:
                    label = ex.called_name(node) or ex.method_name(node)
                    self.report(part, "SLG003", f"size argument of `{label}()`", part_taint)
                taint |= part_taint
        return taint

    def isinstance_check(self, node: ast.Call, state: State) -> Taint:
        subject, classes = node.args
        taint = self.value(subject, state)
        checks_int, checks_tensor = classes_checked(classes, self.module)
        if taint and checks_int and not checks_tensor:
            self.report(node, "SLG005", f"`{ast.unparse(node)}` is False for a tensor", taint)
        return CLEAN

    def max_min(self, node: ast.Call, state: State) -> Taint:
        taint = CLEAN
        for argument in node.args:
            taint |= self.value(argument, state, consumed=True)
        if taint and len(node.args) > 1:
            self.report(node, "SLG003", f"Python `{ex.called_name(node)}()` compares it as an int", taint)
        return taint

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, state: State) -> None:
        inner = state.copy()
        for generator in node.generators:
            self.value(generator.iter, inner)
            self.bind_target(generator.target, CLEAN, "", inner)
            for condition in generator.ifs:
                self.bool_use(condition, inner)
        elements = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for element in elements:
            self.value(element, inner)

    def bool_use(self, node: ast.expr, state: State) -> Taint:
        """`node` is evaluated for its truth (`if`, `while`, `assert`, `and`/`or`, `not`); its value's taint."""
        if isinstance(node, ast.BoolOp):
            taint = CLEAN
            for operand in node.values:
                taint |= self.bool_use(operand, state)
            return taint
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.bool_use(node.operand, state)
            return CLEAN
        taint = self.value(node, state, consumed=True)
        if taint:
            self.report(node, "SLG004", f"Python truth test on `{ast.unparse(node)}`", taint)
        return taint

    def source_origin(self, node: ast.Call) -> Origin | None:
        method = ex.method_name(node)
        if method not in self.module.source_methods or self.statement is None:
            return None
        assert isinstance(node.func, ast.Attribute)
        if self.scope.int_returning_self and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            return None
        return self.module.origin_for(node, method, self.statement, self.scope)

    # ----- what operands are ------------------------------------------------------------------

    def kind_of(self, node: ast.expr, state: State) -> str:
        if self.is_int_operand(node, state) and not self.value_is_tainted(node, state):
            return INT
        if self.is_tensor_operand(node, state):
            return TENSOR
        return ""

    def value_is_tainted(self, node: ast.expr, state: State) -> bool:
        key = key_of(node)
        return bool(key and state.taint.get(key))

    def is_int_operand(self, node: ast.expr, state: State) -> bool:
        """A value Python treats as an int here: literals, shapes, lengths, int names, tainted values."""
        if ex.is_structurally_int(node):
            return True
        key = key_of(node)
        if key:
            return bool(state.taint.get(key)) or state.kinds.get(key) == INT or key in self.scope.int_typed_names
        if isinstance(node, ast.Call):
            return ex.method_name(node) in self.module.source_methods
        if isinstance(node, ast.BinOp):
            return self.is_int_operand(node.left, state) and self.is_int_operand(node.right, state)
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            return self.is_int_operand(node.operand, state)
        return False

    def is_tensor_operand(self, node: ast.expr, state: State) -> bool:
        """A value known to be a full tensor: `torch.arange(...)`, a name bound to one."""
        if isinstance(node, ast.Call):
            module = ex.called_name(node).partition(".")[0]
            return module in self.module.torch_aliases and ex.method_name(node) not in self.module.source_methods
        key = key_of(node)
        return bool(key) and state.kinds.get(key) == TENSOR

    # ----- reporting --------------------------------------------------------------------------

    def report(self, node: ast.AST, code: str, detail: str, taint: Taint) -> None:
        for origin in taint:
            if origin.statement is self.statement:
                origin.used_in_own_statement = True
            self.uses.setdefault((id(node), code, id(origin)), Use(node, code, detail, origin, self.scope))


def definition_header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.expr]:
    """What the enclosing scope evaluates when it runs a `def` or `class` statement."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(keyword.value for keyword in node.keywords)]
    defaults = [default for default in node.args.kw_defaults if default is not None]
    return [*node.decorator_list, *node.args.defaults, *defaults]


def is_pairwise_unpacking(target: ast.expr, value: ast.expr) -> bool:
    """`a, b = x, y`: each target gets its own value."""
    return (
        isinstance(target, (ast.Tuple, ast.List))
        and isinstance(value, (ast.Tuple, ast.List))
        and len(target.elts) == len(value.elts)
        and not any(isinstance(element, ast.Starred) for element in [*target.elts, *value.elts])
    )


def op_text(operator: ast.operator) -> str:
    return ast.unparse(ast.BinOp(left=ast.Name("a"), op=operator, right=ast.Name("b")))[2:-2]


def classes_checked(classes: ast.expr, module: ModuleFacts) -> tuple[bool, bool]:
    """Whether an isinstance class argument names int, and whether it names a tensor class."""
    names = [ex.dotted_name(element) for element in (classes.elts if isinstance(classes, ast.Tuple) else [classes])]
    checks_int = any(name in {"int", "numbers.Integral", "Integral"} for name in names)
    checks_tensor = any(is_tensor_class(name, module) for name in names)
    return checks_int, checks_tensor


def is_tensor_class(name: str, module: ModuleFacts) -> bool:
    prefix, _, last = name.rpartition(".")
    return last == "Tensor" and (not prefix or prefix in module.torch_aliases)


def narrowed_key(test: ast.expr, module: ModuleFacts) -> tuple[str, str] | None:
    """`isinstance(n, torch.Tensor)` -> ("n", TENSOR); `isinstance(n, int)` -> ("n", INT)."""
    if not isinstance(test, ast.Call) or not test.args:
        return None
    name = ex.called_name(test)
    subject = key_of(test.args[0])
    if not subject:
        return None
    if name == "isinstance" and len(test.args) == 2:
        checks_int, checks_tensor = classes_checked(test.args[1], module)
        if checks_tensor and not checks_int:
            return subject, TENSOR
        if checks_int and not checks_tensor:
            return subject, INT
    module_name, _, function = name.rpartition(".")
    if function == "is_tensor" and module_name in module.torch_aliases:
        return subject, TENSOR
    return None


def narrow(test: ast.expr, state: State, truth: bool, module: ModuleFacts) -> State:
    """The state inside the branch where `test` is `truth`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return narrow(test.operand, state, not truth, module)
    if isinstance(test, ast.BoolOp):
        narrows_all = isinstance(test.op, ast.And) == truth
        if narrows_all:
            for operand in test.values:
                state = narrow(operand, state, truth, module)
        return state
    narrowed = narrowed_key(test, module)
    if narrowed is not None:
        key, kind = narrowed
        is_int_now = (kind == INT) == truth
        if is_int_now:
            state.clean(key)
    return state


# ----- module level ---------------------------------------------------------------------------


class ModuleFacts:
    """What the whole module tells: torch aliases, source methods, origins found so far."""

    def __init__(self, tree: ast.Module, source: SourceText, source_methods: Sequence[str]) -> None:
        self.source_methods = frozenset(source_methods)
        self.source_lines = lines_mentioning(source.text, source_methods)
        self.int_overrides: dict[int, bool] = {}
        self.torch_aliases = frozenset(torch_aliases(tree))
        self.classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        self.origins: dict[int, Origin] = {}

    def mentions(self, node: ast.stmt) -> bool:
        """Whether a source method's name occurs in the lines of `node`."""
        index = bisect.bisect_left(self.source_lines, node.lineno)
        return index < len(self.source_lines) and self.source_lines[index] <= (node.end_lineno or node.lineno)

    def overrides_with_int(self, node: ast.ClassDef) -> bool:
        if id(node) not in self.int_overrides:
            self.int_overrides[id(node)] = overrides_with_int(node, self)
        return self.int_overrides[id(node)]

    def origin_for(self, call: ast.Call, method: str, statement: ast.stmt, scope: Scope) -> Origin:
        origin = self.origins.get(id(call))
        if origin is None:
            origin = self.origins[id(call)] = Origin(call, method, statement, scope, self.source_methods)
        return origin


def lines_mentioning(text: str, names: Sequence[str]) -> list[int]:
    """The 1-based numbers of the lines where any of `names` occurs, sorted."""
    if "\r" in text:
        return [number for number, line in enumerate(split_lines(text), 1) if any(name in line for name in names)]
    pattern = re.compile("|".join(re.escape(name) for name in names))
    lines: set[int] = set()
    line, counted_to = 1, 0
    for match in pattern.finditer(text):
        line += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        lines.add(line)
    return sorted(lines)


def torch_aliases(tree: ast.Module) -> set[str]:
    aliases = {"torch"}
    for statement in top_level_statements(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "torch" and alias.asname:
                    aliases.add(alias.asname)
    return aliases


def top_level_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Module statements that run, looking into top-level `if`/`try` (e.g. `if is_torch_available():`)
    but not under `if TYPE_CHECKING:`."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If) and "TYPE_CHECKING" not in ast.unparse(statement.test):
            yield from top_level_statements([*statement.body, *statement.orelse])
        elif isinstance(statement, ast.Try):
            yield from top_level_statements([*statement.body, *statement.orelse, *statement.finalbody])
            for handler in statement.handlers:
                yield from top_level_statements(handler.body)


def function_scopes(tree: ast.Module, module: ModuleFacts) -> Iterator[tuple[Scope, Sequence[ast.stmt]]]:
    """The module body and every function that mentions a source method, with what their headers tell.

    A scope whose text never names a source method cannot hold a tainted value: it is not walked.
    """
    if any(module.mentions(statement) for statement in tree.body):
        yield Scope("<module>", tree, "", False, False, frozenset(), False), tree.body
    yield from scopes_in(tree.body, module, qualname="", enclosing_class=None, compiled="")


def scopes_in(
    body: Sequence[ast.stmt], module: ModuleFacts, qualname: str, enclosing_class: ast.ClassDef | None, compiled: str
) -> Iterator[tuple[Scope, Sequence[ast.stmt]]]:
    for node in nested_definitions(body):
        if not module.mentions(node):
            continue
        name = f"{qualname}{node.name}"
        if isinstance(node, ast.ClassDef):
            yield Scope(name, node, compiled, False, False, frozenset(), False), node.body
            yield from scopes_in(node.body, module, f"{name}.", node, compiled)
            continue
        region = compiled or compiled_region_of(node, enclosing_class is not None, module.torch_aliases)
        yield function_scope(node, name, enclosing_class, region, module), node.body
        yield from scopes_in(node.body, module, f"{name}.", None, region)


def nested_definitions(body: Sequence[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """Definitions directly in `body`, also inside its compound statements, not inside other defs."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield statement
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(statement, field, None) or []
            for child in children:
                if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    yield from nested_definitions(child.body)
                elif isinstance(child, ast.stmt):
                    yield from nested_definitions([child])


def function_scope(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    enclosing_class: ast.ClassDef | None,
    compiled: str,
    module: ModuleFacts,
) -> Scope:
    arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    int_names = {argument.arg for argument in arguments if ex.is_int_annotation(argument.annotation)}
    if enclosing_class is not None:
        int_names |= {f"self.{name}" for name in int_annotated_attributes(enclosing_class)}
    return Scope(
        name=qualname,
        body_owner=node,
        compiled_region=compiled,
        returns_int=ex.is_int_annotation(node.returns),
        is_source_definition=node.name.lstrip("_") in module.source_methods,
        int_typed_names=frozenset(int_names),
        int_returning_self=enclosing_class is not None and module.overrides_with_int(enclosing_class),
    )


def int_annotated_attributes(node: ast.ClassDef) -> Iterator[str]:
    for statement in node.body:
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and ex.is_int_annotation(statement.annotation)
        ):
            yield statement.target.id


def overrides_with_int(node: ast.ClassDef, module: ModuleFacts) -> bool:
    """The class (or the nearest base defined in the same module that has it) defines the source
    method, and every `return` in it is provably an int."""
    lineage = class_lineage(node, module)
    for cls in lineage:
        for statement in cls.body:
            if (
                isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
                and statement.name in module.source_methods
            ):
                returns = [child for child in ast.walk(statement) if isinstance(child, ast.Return)]
                return bool(returns) and all(
                    child.value is not None and is_int_in_class(child.value, lineage) for child in returns
                )
    return False


def class_lineage(node: ast.ClassDef, module: ModuleFacts) -> list[ast.ClassDef]:
    """The class and its bases that are defined in the same module, nearest first."""
    lineage = [node]
    for cls in lineage:
        for base in cls.bases:
            found = module.classes.get(ex.dotted_name(base))
            if found is not None and found not in lineage:
                lineage.append(found)
    return lineage


def is_int_in_class(value: ast.expr, lineage: list[ast.ClassDef]) -> bool:
    """Structurally an int, or `self.attr` where every assignment to it in the lineage is one."""
    if isinstance(value, ast.IfExp):
        return is_int_in_class(value.body, lineage) and is_int_in_class(value.orelse, lineage)
    attribute = ex.dotted_name(value)
    if attribute.startswith("self.") and attribute.count(".") == 1:
        assigned = list(attribute_assignments(attribute, lineage))
        return bool(assigned) and all(ex.is_structurally_int(assignment) for assignment in assigned)
    return ex.is_structurally_int(value)


def attribute_assignments(attribute: str, lineage: list[ast.ClassDef]) -> Iterator[ast.expr]:
    for cls in lineage:
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and any(ex.dotted_name(target) == attribute for target in node.targets):
                yield node.value
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and ex.dotted_name(node.target) == attribute:
                if node.value is not None:
                    yield node.value
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and ex.dotted_name(node.func.value) == attribute
            ):
                yield node  # a method call on it (`.zero_()`, `.add_()`): it is an object, not an int


# ----- entry points ---------------------------------------------------------------------------


def analyze_tree(
    tree: ast.Module,
    source: SourceText,
    path: str,
    source_methods: Sequence[str] = DEFAULT_SOURCE_METHODS,
) -> list[Finding]:
    """All findings in a parsed module, in source order."""
    module = ModuleFacts(tree, source, source_methods)
    uses: list[Use] = []
    for scope, body in function_scopes(tree, module):
        walker = FunctionWalker(scope, module)
        walker.walk_block(body, State())
        uses.extend(walker.uses.values())
    findings = {finding_key(finding): finding for finding in (to_finding(use, source, path) for use in uses)}
    return sorted(
        findings.values(), key=lambda finding: (finding.span.line, finding.span.col, finding.code, finding.origin.line)
    )


def analyze_source(text: str, path: str, source_methods: Sequence[str] = DEFAULT_SOURCE_METHODS) -> list[Finding]:
    """Parse and analyze; raises SyntaxError (and ValueError for NUL bytes) like `ast.parse`."""
    if not any(method in text for method in source_methods):
        return []
    tree = ast.parse(text, filename=path)
    return analyze_tree(tree, SourceText(text), path, source_methods)


def finding_key(finding: Finding) -> tuple[int, int, str, int, int]:
    return (finding.span.line, finding.span.col, finding.code, finding.origin.line, finding.origin.col)


def to_finding(use: Use, source: SourceText, path: str) -> Finding:
    origin = use.origin
    where = f" [compiled region: {use.scope.compiled_region}]" if use.scope.compiled_region else ""
    message = (
        f"{use.detail}: tensor-valued length from `{origin.method}()` on line {origin.line} used as a Python int{where}"
    )
    return Finding(
        path=path,
        code=use.code,
        message=message,
        span=source.span(use.node),
        origin=source.span(origin.call),
        source_method=origin.method,
        compiled_region=use.scope.compiled_region,
        fix=origin.fix_plan(source),
        function=use.scope.name,
    )

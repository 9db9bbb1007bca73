"""The taint of an expression's value, reporting the harmful uses inside it on the way."""

from __future__ import annotations

import ast
import contextlib
import functools
from collections.abc import Iterator, Sequence

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_receivers import receiver_length_kind as typed_receiver_kind
from lint_rules.engine.facts.caches import INT_LENGTH, TENSOR_LENGTH
from lint_rules.engine.facts.compiled import is_torchscript
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.transformers_api import int_parameters_of
from lint_rules.engine.flow import call_effects, operands
from lint_rules.engine.flow.imported_calls import (
    ImportedFunction,
    bound_in_more_than_one_way,
    imported_functions,
    imported_target,
)
from lint_rules.engine.flow.imported_methods import imported_methods
from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.narrowing import classes_checked, may_narrow, narrow, shared_names, subject_key
from lint_rules.engine.flow.never_none import none_truth, text_of
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.summary import SummaryTable
from lint_rules.engine.flow.taint import (
    CLEAN,
    EAGER_ONLY,
    INT_LENGTH_CACHE,
    NONE,
    NOT_TRACED,
    SOURCE_GETTER,
    TENSOR_LENGTH_CACHE,
    Origin,
    State,
    Taint,
    key_of,
)
from lint_rules.engine.flow.uses import Uses

IDENTITY_AND_MEMBERSHIP = (ast.Is, ast.IsNot, ast.In, ast.NotIn)
"""Comparisons whose result says nothing of the operands' values: the length is not carried on."""


class ValueWalker:
    """Evaluates expressions of one scope; `FunctionWalker` adds the statements."""

    def __init__(self, scope: Scope, run: ModuleRun) -> None:
        self.scope = scope
        self.run = run
        self.module = run.facts
        self.uses = Uses(scope)
        self.statement: ast.stmt | None = None
        self.gated_parts = 0
        """How many parts of expressions being walked run only where a gate of their own expression
        proved that nothing is traced (`not is_compiling() and <part>`): see `gated_part`."""
        self.bound_in_other_forms: frozenset[str] | None = None
        """The names the scope binds in forms the walk does not follow (see `none_is_kept`)."""
        self.declared_shared: frozenset[str] | None = None
        """The names a call may rebind (`shared_names`), found at the first test they may decide."""
        self.bound_by_calls: set[str] = set()
        """The names a called function binds to a source's value through its `nonlocal` or `global`
        declarations (`Summary.shares_source`)."""

    def conditional(self, node: ast.IfExp, state: State, consumed: bool) -> Taint:
        """`a if test else b`: each arm the test can take, in the state where it went that way."""
        self.bool_use(node.test, state)
        truth = self.none_test_truth(node.test, state)
        arms = [
            (arm, narrow(node.test, state.copy(), branch, self.module, self.scope))
            for arm, branch in ((node.body, True), (node.orelse, False))
            if truth in (None, branch)
        ]
        taint = CLEAN
        for arm, arm_state in arms:
            with self.gated_part(state, arm_state):
                taint |= self.value(arm, arm_state, consumed)
        for _, arm_state in arms:
            state.adopt_guards(arm_state)
        self.keep_walrus_bindings([arm for arm, _ in arms], state, [arm_state for _, arm_state in arms])
        return taint

    def none_test_truth(self, test: ast.expr, state: State) -> bool | None:
        """The truth of a test of names for None where the path knows them not None, or bound to
        `None` (`none_truth`); None when that does not decide it."""
        none = [key for key, kind in state.kinds.items() if kind == NONE and self.none_is_kept(key)]
        if not (state.paths.not_none or none) or none_truth(test, state.paths.not_none, (), none) is None:
            return None
        return none_truth(test, state.paths.not_none, self.shared_names(), none)

    def none_is_kept(self, name: str) -> bool:
        """The walk sees every rebinding of `name` after its `= None`: the function binds it in no form
        the walk does not follow (`import ... as name`, a `match` capture, a walrus, also in a
        comprehension or a default) and reaches no namespace by hand (`exec`, `globals()`, `locals()`,
        `vars()`)."""
        if self.bound_in_other_forms is None:
            self.bound_in_other_forms = names_bound_in_other_forms(self.scope.body_owner)
        return name not in self.bound_in_other_forms and ANY_NAME not in self.bound_in_other_forms

    def shared_names(self) -> frozenset[str]:
        """The names a call may rebind (`shared_names`), found at the first test they may decide."""
        if self.declared_shared is None and not self.module.may_share_names:
            self.declared_shared = frozenset()
        if self.declared_shared is None:
            self.declared_shared = shared_names(self.scope.body, text_of(self.scope.body_owner, self.module.source))
        return self.declared_shared

    def value(self, node: ast.expr, state: State, consumed: bool = False) -> Taint:
        """The taint of `node`'s value; reports harmful uses inside it.

        `consumed` means the parent reports the node itself if it is tainted (so that one use is
        reported once, at the outermost harmful place).
        """
        if isinstance(node, ast.Name):
            return state.taint.get(node.id, CLEAN)
        if isinstance(node, ast.Constant):
            return CLEAN
        if isinstance(node, ast.Attribute):
            return self.attribute(node, state)
        if isinstance(node, ast.Call):
            return self.call(node, state)
        if isinstance(node, ast.Await):
            return self.value(node.value, state, consumed)
        if isinstance(node, ast.BinOp):
            return self.binary(node, state, consumed)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                self.bool_use(node.operand, state)
                return CLEAN
            return self.value(node.operand, state, consumed)
        if isinstance(node, ast.BoolOp):
            return self.bool_operation(node, state, consumed)
        if isinstance(node, ast.Compare):
            return self.compare(node, state)
        if isinstance(node, ast.IfExp):
            return self.conditional(node, state, consumed)
        if isinstance(node, ast.NamedExpr):
            taint = self.value(node.value, state, consumed)
            kind = self.kind_of(node.value, state)
            state.let_go(node.value)
            state.bind(node.target.id, taint, kind)
            return taint
        if isinstance(node, ast.Subscript):
            return self.subscript(node, state)
        if isinstance(node, ast.Starred):
            return self.value(node.value, state)
        if isinstance(node, ast.Lambda):
            self.lambda_body(node, state)
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
        self.end_path_at(node, state)
        return CLEAN

    def end_path_at(self, node: ast.Attribute, state: State) -> None:
        """`c.seen_tokens`, `c.get_max_length()` where no cache of the module's releases answers with an
        int (`ModuleFacts.path_ending_names`): the lengths asked of `c` before are not used after."""
        if node.attr in self.module.path_ending_names:
            state.forget_lengths_asked_of(key_of(node.value))

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
                    self.uses.slice_bound(bound, taint, isinstance(part, ast.Slice))

    def binary(self, node: ast.BinOp, state: State, consumed: bool) -> Taint:
        """Int arithmetic reports the tainted sides whose other side is an int; arithmetic with a full
        tensor keeps everything on the device (also the int arithmetic inside it, `n - 1 + arange`)."""
        with_tensor = self.is_tensor_operand(node.left, state) or self.is_tensor_operand(node.right, state)
        left_is_int = self.is_int_operand(node.left, state)
        right_is_int = self.is_int_operand(node.right, state)
        left = self.value(node.left, state, consumed=right_is_int or with_tensor)
        right = self.value(node.right, state, consumed=left_is_int or with_tensor)
        if not (left or right):
            return CLEAN
        if isinstance(node.op, ast.Mult) and (ex.is_sequence_display(node.left) or ex.is_sequence_display(node.right)):
            self.uses.repetition_count(node, left | right)
            return CLEAN
        if with_tensor:
            return CLEAN
        used_as_int = (left if right_is_int else CLEAN) | (right if left_is_int else CLEAN)
        if used_as_int and not consumed:
            self.uses.int_arithmetic(node, used_as_int)
        return left | right

    def bool_operation(self, node: ast.BoolOp, state: State, consumed: bool) -> Taint:
        """`a and b`: `b` is evaluated where `a` was true (false for `or`), so it sees `a`'s narrowing."""
        taint = CLEAN
        truth = isinstance(node.op, ast.And)
        before = state
        for operand in node.values[:-1]:
            with self.gated_part(before, state):
                taint |= self.bool_use(operand, state)
            state = narrowed_by(operand, state, truth, self.module, self.scope)
        with self.gated_part(before, state):
            taint |= self.value(node.values[-1], state, consumed)
        before.adopt_guards(state)
        self.keep_walrus_bindings(node.values[1:], before, [state])
        return taint

    @contextlib.contextmanager
    def gated_part(self, outside: State, inside: State) -> Iterator[None]:
        """Walks a part of an expression (an `and`/`or` operand, an if-expression arm) with the state
        `inside` it, where the expression's own gate (`not is_torchdynamo_compiling() and ...`) may
        have proved that nothing is traced, the state `outside` it not."""
        gated = NOT_TRACED in inside.kinds and NOT_TRACED not in outside.kinds
        self.gated_parts += gated
        try:
            yield
        finally:
            self.gated_parts -= gated

    def untraced_part(self) -> bool:
        """In a region Dynamo or export traces, the part being walked runs only eagerly: while
        tracing, its expression's gate gives the value (`False` for `not is_compiling() and ...`).
        A length asked there is no source: its uses and the value's are eager, as the gate's author
        meant (an `.item()` guard in a `forward` removes no sync and is what the model linter rejects)."""
        region = self.scope.compiled_region if self.gated_parts else ""
        return bool(region) and not is_torchscript(region)

    def keep_walrus_bindings(self, parts: list[ast.expr], outer: State, inner: list[State]) -> None:
        """A walrus in an operand or arm walked in a narrowed copy binds its name after the expression
        too: to what it bound there, or what it held before where that part did not run."""
        if not self.module.has_walrus or any(state is outer for state in inner):
            return
        for part in parts:
            for node in ast.walk(part):
                if isinstance(node, ast.NamedExpr):
                    key = node.target.id
                    taint = outer.taint.get(key, CLEAN).union(*(state.taint.get(key, CLEAN) for state in inner))
                    kinds = {state.kind(key) for state in [outer, *inner]}
                    outer.bind(key, taint, kinds.pop() if len(kinds) == 1 else "")

    def compare(self, node: ast.Compare, state: State) -> Taint:
        taint = CLEAN
        operands_ = [node.left, *node.comparators]
        operators = [node.ops[0], *node.ops]
        for operand, operator in zip(operands_, operators, strict=True):
            operand_taint = self.compared_value(operand, state)
            if not isinstance(operator, IDENTITY_AND_MEMBERSHIP):
                taint |= operand_taint
        return taint

    def compared_value(self, operand: ast.expr, state: State) -> Taint:
        """A tuple or list compared (`size != (b, n)`) carries the taint of its elements."""
        if isinstance(operand, (ast.Tuple, ast.List)):
            taint = CLEAN
            for element in operand.elts:
                taint |= self.value(element, state)
            return taint
        return self.value(operand, state)

    def call(self, node: ast.Call, state: State) -> Taint:
        origin = self.source_origin(node, state)
        if origin is not None:
            self.value(node.func, state)
            state.evaluated(origin)
            return frozenset({origin})
        name = ex.called_name(node)
        method = ex.method_name(node)
        receiver = self.value(node.func.value, state) if isinstance(node.func, ast.Attribute) else CLEAN
        if isinstance(node.func, ast.Attribute):
            self.end_path_at(node.func, state)
            if method in ex.STORING_METHODS:
                state.let_go(node.func.value)
            call_effects.run_on_object(node.func, state, self.module, self.scope)
        if name not in ex.READING_BUILTINS:
            call_effects.hand_on_arguments(node, state)
        if name in ex.COERCING_BUILTINS or name in ex.COERCING_FUNCTIONS:
            self.arguments(node, state)
            return CLEAN
        if name == "isinstance" and len(node.args) == 2:
            return self.isinstance_check(node, state)
        if name in ex.COMPARING_BUILTINS:
            return self.max_min(node, state)
        argument_taints = self.arguments(node, state, ex.size_arguments(node, self.module.torch_aliases))
        argument_taint = CLEAN.union(*argument_taints.values())
        if name in ex.PROPAGATING_BUILTINS:
            return argument_taint
        if method in ex.COERCING_METHODS:
            return CLEAN
        if method in ex.TENSOR_PRESERVING_METHODS:
            return receiver
        return self.call_into_module(node, state, argument_taints)

    def call_into_module(self, node: ast.Call, state: State, argument_taints: dict[int, Taint]) -> Taint:
        """A call of a function of the module, or of another module of the package: its summary says
        which arguments it uses as ints, which reach its result, and whether its result is a source."""
        summaries = self.run.summaries
        if summaries is None:
            return CLEAN
        callees = summaries.callees(node, self.scope) if self.may_call_into_module(node.func) else []
        own = [self.call_of(node, state, argument_taints, callee, summaries) for callee in callees]
        if callees and not bound_in_more_than_one_way(self.module, node.func):
            return CLEAN.union(*own)
        imported = self.imported_callees(node, argument_taints)
        if not imported and not callees:
            return self.library_call(node, argument_taints) if argument_taints else CLEAN
        try:
            return CLEAN.union(
                *own,
                *(
                    self.call_of(node, state, argument_taints, callee, table, other.file_name)
                    for other, table in imported
                    for callee in other.definitions
                ),
            )
        except RecursionError:
            return CLEAN.union(*own)  # a callee of another module too deep to summarize is not followed

    def imported_callees(
        self, node: ast.Call, argument_taints: dict[int, Taint]
    ) -> list[tuple[ImportedFunction, SummaryTable]]:
        """The functions of other modules the call may run, each with its module's summaries."""
        if not self.may_call_other_module(node, argument_taints):
            return []
        functions = imported_functions(self.run, node, self.run.calling_definition(self.scope))
        found = functions or imported_methods(self.run, node, self.scope.definition)
        return [(other, other.run.summaries) for other in found if other.run.summaries is not None]

    def call_of(
        self,
        node: ast.Call,
        state: State,
        argument_taints: dict[int, Taint],
        callee: Definition,
        summaries: SummaryTable,
        file_name: str = "",
    ) -> Taint:
        result = (
            self.passed_arguments(node, callee, argument_taints, summaries, file_name) if argument_taints else CLEAN
        )
        origin = self.new_origin(node, callee.name, state) if summaries.returns_source(callee) else None
        for name in summaries.shares_source(callee) if not file_name else ():  # another module's globals are its own
            shared = self.new_origin(node, callee.name, state)
            if shared is not None:
                shared.shared = shared.shared or origin is None  # a result that is a length keeps its fix
                state.bind(name, state.taint.get(name, CLEAN) | {shared}, "")
                self.bound_by_calls.add(name)
        return result | {origin} if origin is not None else result

    def library_call(self, node: ast.Call, argument_taints: dict[int, Taint]) -> Taint:
        """A transformers function of the table (`transformers_api`) given a length it uses as an int."""
        function = self.scope.definition.node if self.scope.definition is not None else None
        target = imported_target(self.module, node.func, function)
        for entry in int_parameters_of(*target) if target else []:
            for argument, parameter in bound_arguments(node, entry.parameters):
                taint = argument_taints.get(id(argument), CLEAN)
                if taint and parameter == entry.parameter:
                    self.uses.passed_to_library(argument, taint, entry)
        return CLEAN

    def may_call_other_module(self, node: ast.Call, argument_taints: dict[int, Taint]) -> bool:
        """Worth resolving into another module: a length is passed, or the name is a known source."""
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return bool(name) and (bool(argument_taints) or name in self.run.imported_sources)

    def may_call_into_module(self, func: ast.expr) -> bool:
        """Cheaply: the callee's name is one a `def` of the module binds, or it is `self.attr(...)`."""
        if isinstance(func, ast.Name):
            definitions = self.module.definitions
            return func.id in definitions.defined_names or func.id in definitions.function_aliases
        if not isinstance(func, ast.Attribute):
            return False
        is_self = isinstance(func.value, ast.Name) and func.value.id == "self"
        return is_self or func.attr in self.module.definitions.defined_names

    def passed_arguments(
        self,
        node: ast.Call,
        callee: Definition,
        argument_taints: dict[int, Taint],
        summaries: SummaryTable,
        file_name: str = "",
    ) -> Taint:
        """Reports the tainted arguments the callee uses as ints; the taint that reaches its result."""
        summary = summaries.of(callee, seeded=True)
        result = CLEAN
        for argument, parameter in summaries.bind_arguments(node, callee):
            taint = argument_taints.get(id(argument), CLEAN)
            use = summary.parameter_uses.get(parameter)
            if taint and use is not None:
                self.uses.passed_to(argument, taint, callee.name, parameter, use, file_name)
            if parameter in summary.parameters_returned:
                result |= taint
        return result

    def arguments(self, node: ast.Call, state: State, sizes: Sequence[ast.expr] = ()) -> dict[int, Taint]:
        """Walks every argument once; reports the tainted ones that are sizes (SLG003).
        Returns the taint of each tainted argument, by the argument node's id."""
        size_ids = {id(size) for size in sizes}
        taints: dict[int, Taint] = {}
        for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
            elements = argument.elts if isinstance(argument, (ast.Tuple, ast.List)) else []
            parts = elements if any(id(element) in size_ids for element in elements) else [argument]
            for part in parts:
                part_taint = self.value(part, state, consumed=id(part) in size_ids)
                if part_taint and id(part) in size_ids:
                    self.uses.size_argument(part, part_taint, ex.called_name(node) or ex.method_name(node))
                if part_taint:
                    taints[id(argument)] = taints.get(id(argument), CLEAN) | part_taint
        return taints

    def isinstance_check(self, node: ast.Call, state: State) -> Taint:
        subject, classes = node.args
        taint = self.value(subject, state)
        checks_int, checks_tensor = classes_checked(classes, self.module)
        if taint and checks_int and not checks_tensor:
            self.uses.int_isinstance(node, taint)
        return CLEAN

    def max_min(self, node: ast.Call, state: State) -> Taint:
        taint = CLEAN
        for argument in node.args:
            taint |= self.value(argument, state, consumed=True)
        if taint and len(node.args) > 1:
            self.uses.int_comparison(node, taint, ex.called_name(node))
        return taint

    def lambda_body(self, node: ast.Lambda, state: State) -> None:
        """The body runs when the lambda is called, which its gate (if any) does not decide."""
        inner = state.copy()
        if self.may_read_getter(node):  # it reads the alias's final value (`closures`)
            for name in self.run.visible_getters(self.scope.definition, node.lineno):
                inner.kinds[name] = SOURCE_GETTER
        for argument in ast.walk(node.args):
            if isinstance(argument, ast.arg):
                inner.bind(argument.arg, CLEAN)
        gated, self.gated_parts = self.gated_parts, 0
        try:
            self.value(node.body, inner)
        finally:
            self.gated_parts = gated

    def may_read_getter(self, node: ast.Lambda) -> bool:
        """Cheaply: the lambda calls a plain name (what a bound source method alias is called as)."""
        return self.scope.definition is not None and any(
            isinstance(call, ast.Call) and isinstance(call.func, ast.Name) for call in ast.walk(node.body)
        )

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
        # a walrus in it binds the function's own name (PEP 572), after any number of iterations
        parts = [*elements, *(part for generator in node.generators for part in [generator.iter, *generator.ifs])]
        self.keep_walrus_bindings(parts, state, [inner])

    def bool_use(self, node: ast.expr, state: State) -> Taint:
        """`node` is evaluated for its truth (`if`, `while`, `assert`, `and`/`or`, `not`); its value's taint."""
        if isinstance(node, ast.BoolOp):
            taint = CLEAN
            truth = isinstance(node.op, ast.And)
            before = state
            for operand in node.values:
                with self.gated_part(before, state):
                    taint |= self.bool_use(operand, state)
                state = narrowed_by(operand, state, truth, self.module, self.scope)
            before.adopt_guards(state)
            self.keep_walrus_bindings(node.values[1:], before, [state])
            return taint
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.bool_use(node.operand, state)
            return CLEAN
        taint = self.value(node, state, consumed=True)
        if taint:
            self.uses.truth_test(node, taint)
        return taint

    def source_origin(self, node: ast.Call, state: State) -> Origin | None:
        """`obj.get_seq_length()`, `getattr(obj, "get_seq_length"[, default])()`, or a call of a name
        bound to the method (`length = obj.get_seq_length` ... `length()`)."""
        if self.statement is None:
            return None
        method = ex.getter_name(node)
        receiver = ex.getter_receiver(node)
        if method in self.module.source_methods and receiver is not None:
            if self.receiver_has_int_length(receiver, state):
                return None
        elif isinstance(node.func, ast.Name) and state.kinds.get(node.func.id) == SOURCE_GETTER:
            method = node.func.id
        else:
            return None
        return self.new_origin(node, method, state)

    def new_origin(self, node: ast.Call, method: str, state: State) -> Origin | None:
        """The origin of a source call met at this point (None in a part that is never traced)."""
        if self.statement is None or self.untraced_part():
            return None
        eager = state.kinds.get(EAGER_ONLY) == EAGER_ONLY
        return self.run.origin_for(node, method, self.statement, self.scope, eager)

    def receiver_has_int_length(self, receiver: ast.expr, state: State) -> bool:
        """The receiver is shown to be int-length; or, where `int-length-caches` is declared, it is not
        shown to be tensor-length (see `declarations`)."""
        kind = self.receiver_length_kind(receiver, state)
        return kind == INT_LENGTH or (self.module.int_length_receivers and kind != TENSOR_LENGTH)

    def receiver_length_kind(self, receiver: ast.expr, state: State) -> str:
        """`self` in a class of that length kind (`super()`: its bases), a name known to hold such a
        cache, `DynamicCache(...)`, `StaticCache(...)` or a model's outputs given one
        (`out.past_key_values`): INT_LENGTH, TENSOR_LENGTH or "" (unknown; never an int where the
        module binds a length method on an object: `ClassFacts.unless_replaced`)."""
        return self.module.classes.unless_replaced(self.known_receiver_kind(receiver, state))

    def known_receiver_kind(self, receiver: ast.expr, state: State) -> str:
        kind = self.receiver_kind_as_bound(receiver, state)
        if kind == INT_LENGTH and isinstance(receiver, ast.Name) and receiver.id in self.shared_names():
            return ""  # a call (or a class body) may have rebound it to anything: narrowed, annotated or built
        return kind

    def receiver_kind_as_bound(self, receiver: ast.expr, state: State) -> str:
        own = self.module.classes.own_receiver_kind(self.scope.definition, receiver)
        if own is not None:
            return own
        cls = self.scope.definition.enclosing_class if self.scope.definition is not None else None
        key = subject_key(receiver)
        held = state.kind(key) if key else ""
        if held == INT_LENGTH_CACHE and self.changes_layers:
            return ""  # `cache.layers.append(StaticLayer(8))` here: what it counts is its layers'
        if held in (INT_LENGTH_CACHE, TENSOR_LENGTH_CACHE):
            return INT_LENGTH if held == INT_LENGTH_CACHE else TENSOR_LENGTH
        built_or_held = operands.cache_length_kind(receiver, state, self.module) or self.run.factory_kind(receiver)
        if built_or_held == INT_LENGTH and self.changes_layers and not isinstance(receiver, ast.Call):
            return ""  # the cache a model's outputs hold (`out.past_key_values`) is one of those too
        if built_or_held:
            return built_or_held
        function = self.scope.definition.node if self.scope.definition is not None else None
        function = function if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        return typed_receiver_kind(self.module.classes, cls, function, receiver)

    @functools.cached_property
    def changes_layers(self) -> bool:
        """The scope may change or hand on the layers of some object (`ex.layers_changed_at`), which an
        int-length cache it holds (through any alias) may be: asked only for such a cache, once per walk."""
        return bool(self.module.classes.layer_changes.changed_in(self.scope.body_owner))

    # ----- what operands are (see `operands`) -------------------------------------------------

    def kind_of(self, node: ast.expr, state: State) -> str:
        if self.is_source_getter(node, state):
            return SOURCE_GETTER
        kind = operands.kind_of(node, state, self.scope, self.module)
        if kind or not isinstance(node, ast.Call):
            return kind
        built = self.run.factory_kind(node)
        return INT_LENGTH_CACHE if built == INT_LENGTH else TENSOR_LENGTH_CACHE if built == TENSOR_LENGTH else ""

    def is_source_getter(self, node: ast.expr, state: State) -> bool:
        """`obj.get_seq_length` or `getattr(obj, "get_seq_length")`, not called, on a receiver whose
        length may be a tensor."""
        fetched = ex.getattr_of(node)
        if isinstance(node, ast.Attribute):
            fetched = (node.value, node.attr)
        if fetched is None or fetched[1] not in self.module.source_methods:
            return False
        return not self.receiver_has_int_length(fetched[0], state)

    def is_int_operand(self, node: ast.expr, state: State) -> bool:
        return operands.is_int_operand(node, state, self.scope, self.module)

    def is_tensor_operand(self, node: ast.expr, state: State) -> bool:
        return operands.is_tensor_operand(node, state, self.module)

    def bind_target(self, target: ast.expr, taint: Taint, kind: str, state: State) -> None:
        raise NotImplementedError  # statements bind; see FunctionWalker


ANY_NAME = "*"
"""In `names_bound_in_other_forms`: the scope may bind any name (`exec`, `globals()`, ...)."""
NAMESPACE_CALLS = frozenset({"exec", "eval", "globals", "locals", "vars"})


def names_bound_in_other_forms(owner: ast.AST) -> frozenset[str]:
    """The names an import, a `match` capture or a walrus binds anywhere in `owner` (nested scopes
    included), and ANY_NAME where a call may reach its namespace by hand."""
    found: set[str] = set()
    for node in ast.walk(owner):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
        elif isinstance(node, ast.NamedExpr):
            found.add(node.target.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NAMESPACE_CALLS:
            found.add(ANY_NAME)
    return frozenset(found)


def narrowed_by(operand: ast.expr, state: State, truth: bool, module: ModuleFacts, scope: Scope) -> State:
    """The state for the operands after `operand` in an `and` (`truth`) or `or` chain: a narrowed
    copy when the operand narrows anything, else the same state (so that a walrus binding stays)."""
    if not may_narrow(operand):
        return state
    narrowed = narrow(operand, state.copy(), truth, module, scope)
    return state if narrowed.same_as(state) else narrowed


def bound_arguments(call: ast.Call, parameters: tuple[str, ...]) -> list[tuple[ast.expr, str]]:
    """(argument, parameter) for a plain function's parameters: positional in order (up to a
    starred argument), then keywords by name."""
    pairs: list[tuple[ast.expr, str]] = []
    for argument, parameter in zip(call.args, parameters, strict=False):
        if isinstance(argument, ast.Starred):
            break
        pairs.append((argument, parameter))
    return pairs + [(keyword.value, keyword.arg) for keyword in call.keywords if keyword.arg in parameters]

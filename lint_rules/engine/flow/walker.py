"""The forward, flow-sensitive walk over one scope's statements.

Taint flows through assignments; branches are merged by union; loop bodies are walked until their
entry state stops changing (at most `LOOP_PASSES` times); `if`/`assert`/early `return` narrow the state.
Code that cannot run is not walked: after an unconditional `return`/`raise`/`continue`/`break` in its
block, and the branch of an `if` whose test is known before the code runs (see `static_truth`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import DEFINITION_STATEMENTS, Definition
from lint_rules.engine.facts.module_text import NESTED_SCOPES, imported_as
from lint_rules.engine.flow.closures import names_read_in_closures
from lint_rules.engine.flow.jumps import NOT_SUPPRESSING, Jumps
from lint_rules.engine.flow.narrowing import (
    flag_subjects,
    names_known_values_decide,
    narrow,
    narrowed_key,
    operand_names,
    static_truth,
    subject_key,
)
from lint_rules.engine.flow.never_none import (
    is_never_none,
    names_tested_for_none,
    stored_names,
    text_of,
)
from lint_rules.engine.flow.quiet_rest import QuietRest, quiet_rest
from lint_rules.engine.flow.taint import (
    CLEAN,
    INT,
    INT_LENGTH_CACHE,
    OUTPUTS_PREFIX,
    SOURCE_GETTER,
    TENSOR,
    Origin,
    ParameterOrigin,
    State,
    Taint,
    key_of,
)
from lint_rules.engine.flow.values import ValueWalker

LOOP_PASSES = 4
"""A loop body is walked until its entry state stops changing, at most this often."""


class FunctionWalker(ValueWalker):
    """Walks the statements of one scope, tracking taint and collecting harmful uses."""

    returned: Taint = CLEAN
    """The taint of every value the scope returns."""
    seeded = False
    """Each parameter starts as its own origin (for the function's summary)."""
    constants: dict[str, object] | None = None
    candidate_names: set[str] | None = None
    """The names whose value the scope knows (`function_constants`), found at the first `if` that needs them."""
    tested_for_none: frozenset[str] | None = None
    """The plain names the scope compares with None (`names_tested_for_none`), found at the first binding."""
    stored: dict[int, frozenset[str]] | None = None
    """The names each block the walk may leave part way binds (`forget_stored_names`), by the id of its statement."""
    read_in_closures: frozenset[str] | None = None
    """The names the scope's nested functions and lambdas read (`names_read_in_closures`), found at the first outputs bound."""
    shared_sources: set[str]
    """The `nonlocal` or `global` names the scope binds to a source's value (`Summary.shares_source`)."""
    jumps: Jumps
    """The states where control leaves the loops and `try`/`with` bodies being walked part way."""

    def walk(self) -> None:
        self.shared_sources = set()
        self.jumps = Jumps()
        state = State(entry=self.scope.entry_kinds, entry_names=self.scope.entry_parameters)
        state.paths.not_none.update(self.scope.entry_not_none)
        for name in self.run.closure_getters(self.scope.definition):  # `n = c.get_seq_length` around it
            state.kinds[name] = SOURCE_GETTER
        if self.seeded:
            for position, parameter in enumerate(self.scope.parameters):
                state.taint[parameter] = frozenset({ParameterOrigin(parameter, position)})
        summaries = self.run.summaries
        rest = quiet_rest(self.scope, self.run, summaries.source_functions) if summaries is not None else None
        self.note_shared_sources(self.walk_block(self.scope.body, state, rest))

    def note_shared_sources(self, state: State | None) -> None:
        """At an exit of the scope: its `nonlocal` and `global` names that hold a source's value, and
        every name a function it called bound so (`g()` calling the `f()` that binds them), whatever
        the scope did after: a name `g` binds itself too stands for two variables in the walk."""
        if state is not None:
            self.shared_sources.update(
                name for name in self.shared_names() if has_a_source(state.taint.get(name, CLEAN))
            )
            self.shared_sources.update(self.bound_by_calls)

    def walk_block(self, body: Sequence[ast.stmt], state: State | None, rest: QuietRest | None = None) -> State | None:
        """`rest`: for the function's own body, stop where the rest of it is quiet (`quiet_rest`)."""
        for index, statement in enumerate(body):
            if state is None or (rest is not None and rest.from_statement(statement, state)):
                return state
            self.statement = self.uses.statement = statement
            following = body[index + 1 : index + 2]
            if self.jumps.boundaries and index and self.converts_what_came_before(statement, body[index - 1]):
                with self.jumps.without_boundaries():
                    state = self.walk_statement(statement, state, following)
                continue
            self.jumps.at_boundary(state)
            state = self.walk_statement(statement, state, following)
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
            if not isinstance(node, ast.Raise):
                self.jumps.jump(isinstance(node, ast.Break), state)
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
            if all(self.lets_exceptions_through(item.context_expr) for item in node.items):
                return self.walk_block(node.body, state)
            with self.jumps.left_part_way() as in_body:
                after_with = self.walk_block(node.body, state)
            after_with = State.merge([after_with, *in_body])  # the context manager may suppress an exception
            self.forget_stored_names(after_with, node, node.body)
            return after_with
        elif isinstance(node, (ast.Try, ast.TryStar)):
            return self.walk_try(node, state)
        elif isinstance(node, ast.Match):
            return self.walk_match(node, state)
        elif isinstance(node, ast.Assert):
            self.bool_use(node.test, state)
            if node.msg is not None:
                self.value(node.msg, state)
            return narrow(node.test, state, True, self.module, self.scope)
        elif isinstance(node, ast.Expr):
            self.value(node.value, state)
            if state.paths and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
                # `self.reset()`, `kwargs.pop("cache")`: what a test told about the object's parts is gone
                state.paths.forget_parts(ex.dotted_name(node.value.func.value))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Subscript):
                    state.stored_at(key_of(target.value), subject_key(target), deleted=True)
                elif key_of(target):
                    state.bind(key_of(target), CLEAN)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):  # rebinds names: what a test told of them is gone
            for alias in node.names:
                state.paths.forget(imported_as(alias))
        elif isinstance(node, DEFINITION_STATEMENTS):
            for header_part in definition_header(node):
                self.value(header_part, state)
            state.bind(node.name, CLEAN)
        return state

    def walk_assign(
        self, targets: Sequence[ast.expr], value: ast.expr, state: State, following: Sequence[ast.stmt]
    ) -> None:
        pairs = ex.unpacked_pairs(targets[0], value) if len(targets) == 1 else None
        if pairs is not None:
            for element_target, element_value in pairs:
                if element_value is None:  # the starred target gets a list of the rest
                    self.bind_target(element_target, CLEAN, "", state)
                else:
                    self.walk_assign([element_target], element_value, state, following)
            return
        taint = self.value(value, state)
        kind = self.kind_of(value, state)
        state.let_go(value)
        never_none = self.never_none_names(targets, value, state)
        for target in targets:
            if taint and key_of(target) in self.scope.int_typed_names and not self.guarded_next(target, following):
                self.uses.int_binding(value, taint, key_of(target), annotated=False)
            self.bind_target(target, taint, self.kind_kept(target, kind), state)
        state.paths.not_none.update(never_none)
        if isinstance(targets[-1], ast.Name):
            self.remember_flag(targets[-1].id, value, state)

    def kind_kept(self, target: ast.expr, kind: str) -> str:
        """A name a call may rebind (`global`, or `nonlocal` in a nested function: `shared_names`) is
        not known to keep an int-length cache or a model's outputs; nor one a nested function reads
        to keep outputs, which it may store into (`names_read_in_closures`)."""
        outputs = kind.startswith(OUTPUTS_PREFIX)
        if not isinstance(target, ast.Name) or not (outputs or kind == INT_LENGTH_CACHE):
            return kind
        if target.id in self.shared_names():
            return ""
        if outputs and target.id in self.closure_read_names():
            return ""
        return kind

    def closure_read_names(self) -> frozenset[str]:
        if self.read_in_closures is None:
            text = text_of(self.scope.body_owner, self.module.source)
            self.read_in_closures = names_read_in_closures(self.scope.body, text)
        return self.read_in_closures

    def never_none_names(self, targets: Sequence[ast.expr], value: ast.expr, state: State) -> list[str]:
        """The plain names among `targets` that a later `is None` test asks about, when `value` cannot be
        None (`never_none`): such a test is decided until they are rebound."""
        names = [target.id for target in targets if isinstance(target, ast.Name)]
        if not names:
            return []
        if self.tested_for_none is None:
            self.tested_for_none = names_tested_for_none(text_of(self.scope.body_owner, self.module.source))
        tested = [name for name in names if name in self.tested_for_none]
        return tested if tested and is_never_none(value, state, self.module) else []

    def remember_flag(self, name: str, value: ast.expr, state: State) -> None:
        """`is_dynamic = isinstance(c, DynamicCache)`: a later `if is_dynamic:` narrows like the test."""
        subjects = flag_subjects(value, self.module)
        if subjects:
            subjects |= operand_names(value)  # `is_batched = is_batched or ...` stands for no test
        if subjects and name not in subjects:
            state.paths.flags[name] = (value, subjects)

    def walk_annotated_assign(self, node: ast.AnnAssign, state: State, following: Sequence[ast.stmt]) -> None:
        if node.value is None:
            return
        taint = self.value(node.value, state)
        if ex.is_int_annotation(node.annotation) and taint and not self.guarded_next(node.target, following):
            self.uses.int_binding(node.value, taint, ast.unparse(node.target), annotated=True)
        annotated_kind = INT if ex.is_int_annotation(node.annotation) else ""
        never_none = self.never_none_names([node.target], node.value, state)
        self.bind_target(node.target, taint, self.kind_of(node.value, state) or annotated_kind, state)
        state.paths.not_none.update(never_none)

    def walk_augmented_assign(self, node: ast.AugAssign, state: State) -> None:
        if isinstance(node.target, ast.Subscript):  # `cache.blocks[1] += x` stores the entry back
            state.stored_at(key_of(node.target.value), subject_key(node.target))
        key = key_of(node.target)
        before = state.taint.get(key, CLEAN)
        added = self.value(node.value, state)
        target_is_int = not before and self.is_int_operand(node.target, state)
        if (before and not added and self.is_int_operand(node.value, state)) or (added and target_is_int):
            self.uses.augmented_arithmetic(node, before | added)
        if key:
            not_none = key in state.paths.not_none
            state.bind(key, before | added, INT if not (before | added) and state.kinds.get(key) == INT else "")
            if not_none and isinstance(node.target, ast.Name):
                state.paths.not_none.add(key)  # `x += v` on a value that is not None gives one that is not

    def walk_return(self, node: ast.Return, state: State) -> None:
        if node.value is None:
            self.note_shared_sources(state)
            return
        taint = self.value(node.value, state)
        self.note_shared_sources(state)  # after the value: `return (n := c.get_seq_length())` binds `n`
        self.returned |= taint
        for origin in taint:
            if isinstance(origin, Origin):
                origin.returned = True
        if (
            taint
            and self.scope.returns_int
            and not (self.scope.is_source_definition or self.scope.installed_as_source_method)
        ):
            self.uses.int_return(node.value, taint)

    def walk_if(self, node: ast.If, state: State) -> State | None:
        self.bool_use(node.test, state)
        truth = self.known_truth(node.test)
        if truth is None:
            truth = self.none_test_truth(node.test, state)
        walked = [
            (body, branch) for body, branch in ((node.body, True), (node.orelse, False)) if truth in (None, branch)
        ]
        ends = []
        for index, (body, branch) in enumerate(walked):
            entry = state if index == len(walked) - 1 else state.copy()  # nothing reads `state` after the `if`
            ends.append(self.walk_block(body, narrow(node.test, entry, branch, self.module, self.scope)))
        return State.merge(ends)

    def known_truth(self, test: ast.expr) -> bool | None:
        """The test's truth before the code runs (see `static_truth`); the names whose value the
        function knows (`function_constants`) are looked for only when the test names a candidate."""
        if self.candidate_names is None:
            owner = self.scope.body_owner
            first, last = getattr(owner, "lineno", 1), getattr(owner, "end_lineno", None) or 1 << 30
            local = self.module.names_bound_to_bools(first, last) - set(
                self.scope.parameters
            )  # a parameter is no constant
            self.candidate_names = local | self.module.constants.keys()
        candidates = self.candidate_names
        if not (candidates and any(name in candidates for name in names_known_values_decide(test))):
            return static_truth(test, {})
        if self.constants is None:
            owner = self.scope.body_owner
            self.constants = (
                self.module.function_constants(owner, self.enclosing_definition())
                if isinstance(owner, NESTED_SCOPES)
                else self.module.constants
            )
        return static_truth(test, self.constants)

    def forget_stored_names(
        self, state: State | None, owner: ast.stmt, statements: Sequence[ast.stmt], kinds: bool = False
    ) -> None:
        """A path the walk does not follow may leave `statements` part way (an exception caught in a
        handler, run by `finally` or suppressed by a `with`, a `break` or `continue`): a name they bind
        may hold any value they bind it to, or the one before, so it is no longer known not None. With
        `kinds` (an exception's path: the states the walk merged are the body's start and end only),
        not known to hold an int-length cache or a model's outputs either."""
        if state is None or not (state.paths.not_none or (kinds and state.kinds)):
            return
        if self.stored is None:
            self.stored = {}
        if id(owner) not in self.stored:
            self.stored[id(owner)] = stored_names(statements)
        stored = self.stored[id(owner)]
        state.paths.not_none -= stored
        if kinds:
            for name in stored & state.kinds.keys():
                del state.kinds[name]
                state.rebound.add(name)

    def enclosing_definition(self) -> Definition | None:
        """The definition around the scope's body: the `def` or class the scope's own `def` or class
        is nested in, or (a lambda's scope) the definition the lambda is written in."""
        definition = self.scope.definition or self.module.definitions.of(self.scope.body_owner)
        if definition is None or definition.node is not self.scope.body_owner:
            return definition
        return definition.parent

    def walk_loop(self, node: ast.While | ast.For | ast.AsyncFor, state: State) -> State | None:
        entry = state
        exit_state: State | None = state
        for _ in range(LOOP_PASSES):
            self.statement = self.uses.statement = node
            loop_state = entry.copy()
            self.forget_stored_names(loop_state, node, node.body)  # a `continue` or `break` part way through
            if isinstance(node, ast.While):
                self.bool_use(node.test, loop_state)
                body_state = narrow(node.test, loop_state.copy(), True, self.module, self.scope)
            else:
                self.value(node.iter, loop_state)
                body_state = loop_state.copy()
                self.bind_target(node.target, CLEAN, "", body_state)
            with self.jumps.loop_pass() as jumps:
                end_of_body = self.walk_block(node.body, body_state)
            exit_state = State.merge([loop_state, end_of_body, *jumps.continues])
            if exit_state is None or exit_state.same_as(entry):
                break
            entry = exit_state
        return State.merge([self.walk_block(node.orelse, exit_state), *jumps.breaks])  # `else` runs without a `break`

    def walk_try(self, node: ast.Try | ast.TryStar, state: State) -> State | None:
        """A handler starts from any statement boundary of the body (an exception part way through);
        `finally` from any way out of the body, the handlers and `else` (walked for its uses), and the
        code after it from the ways that go on."""
        with self.jumps.left_part_way() as in_body:
            after_body = self.walk_block(node.body, state.copy())
        handler_entry = State.merge([state, after_body, *in_body]) or state
        self.forget_stored_names(handler_entry, node.body[0], node.body, kinds=True)
        with self.jumps.left_part_way() as in_handlers:
            handlers = []
            for handler in node.handlers:
                handler_state = handler_entry.copy()
                if handler.name:
                    handler_state.bind(handler.name, CLEAN)
                handlers.append(self.walk_block(handler.body, handler_state))
            after_else = self.walk_block(node.orelse, after_body) if node.orelse else after_body
        merged = State.merge([after_else, *handlers])
        if not node.finalbody:
            return merged
        left_part_way = [*node.body, *(s for handler in node.handlers for s in handler.body), *node.orelse]
        every_way_out = State.merge([merged, handler_entry, *in_handlers]) or handler_entry.copy()
        self.forget_stored_names(every_way_out, node, left_part_way, kinds=True)
        with self.jumps.in_finally() as twice:
            after_any = self.walk_block(node.finalbody, every_way_out)
            if merged is None:
                return None  # `finally` runs even when every path exits
            if not twice:
                return after_any
            self.forget_stored_names(merged, node, left_part_way, kinds=True)
            return self.walk_block(node.finalbody, merged)

    def walk_match(self, node: ast.Match, state: State) -> State | None:
        taint = self.value(node.subject, state, consumed=True)
        if taint and any(compares_by_value(case.pattern) for case in node.cases):
            self.uses.match_subject(node.subject, taint)
        if any(captured_names(case.pattern) for case in node.cases):
            state.let_go(node.subject)  # `case object() as alias:` holds the subject under another name
        ends = []
        for case in node.cases:
            case_state = state.copy()
            for captured in captured_names(case.pattern):  # `case x:` rebinds x
                case_state.paths.forget(captured)
            if case.guard is not None:
                self.statement = self.uses.statement = node  # the guard belongs to the `match`, not the last case
                self.bool_use(case.guard, case_state)
            ends.append(self.walk_block(case.body, case_state))
        return State.merge([*ends, state])

    def bind_target(self, target: ast.expr, taint: Taint, kind: str, state: State) -> None:
        for origin in taint:
            if isinstance(origin, Origin) and origin.statement is self.statement and target not in origin.flowed_into:
                origin.flowed_into.append(target)
        for bound in ex.assigned_names(target):
            key = key_of(bound)
            if key:
                state.bind(key, taint, kind if isinstance(target, (ast.Name, ast.Attribute)) else "")
        if isinstance(target, ast.Name):
            return
        for node in ast.walk(target):
            if isinstance(node, ast.Subscript):
                self.value(node.value, state)
                self.index_use(node.slice, state)
                state.stored_into(key_of(node.value))
                state.stored_at(key_of(node.value), subject_key(node))  # what a test told of its entries

    def lets_exceptions_through(self, manager: ast.expr) -> bool:
        """A call of a context manager known not to suppress exceptions (`jumps.NOT_SUPPRESSING`)."""
        if not isinstance(manager, ast.Call):
            return False
        name = ex.dotted_name(manager.func)
        head, dot, rest = name.partition(".")
        if head in self.module.torch_aliases:
            name = "torch" + dot + rest
        elif head in self.module.bound_modules and head != "open":
            name = self.module.bound_modules[head] + dot + rest
        return name in NOT_SUPPRESSING

    def converts_what_came_before(self, statement: ast.stmt, before: ast.stmt) -> bool:
        """`statement` is the guard of the name `before` binds (`if isinstance(n, torch.Tensor): n =
        int(n.item())`) or `n = int(n)`: it raises nothing for a length, so no exception leaves
        between the two."""
        if not isinstance(before, (ast.Assign, ast.AnnAssign)):
            return False
        targets = before.targets if isinstance(before, ast.Assign) else [before.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return False
        name = targets[0].id
        if isinstance(statement, ast.If):
            return self.guarded_next(targets[0], [statement]) and not statement.orelse
        return (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
            and is_int_of(statement.value, name)
        )

    def guarded_next(self, target: ast.expr, following: Sequence[ast.stmt]) -> bool:
        """The int-annotated binding is immediately followed by the fixer's guard."""
        if not following or not isinstance(following[0], ast.If):
            return False
        guard = following[0]
        return narrowed_key(guard.test, self.module) == (key_of(target), TENSOR) and bool(guard.body)


def is_int_of(value: ast.expr, name: str) -> bool:
    """`int(name)`, `int(name.item())` or `name.item()`."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "int"
        and len(value.args) == 1
    ):
        value = value.args[0]
        if isinstance(value, ast.Name):
            return value.id == name
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "item"
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == name
        and not value.args
    )


def definition_header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.expr]:
    """What the enclosing scope evaluates when it runs a `def` or `class` statement."""
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *(keyword.value for keyword in node.keywords)]
    defaults = [default for default in node.args.kw_defaults if default is not None]
    return [*node.decorator_list, *node.args.defaults, *defaults]


def captured_names(pattern: ast.pattern) -> list[str]:
    """The names a `case` pattern binds (`case x:`, `case [a, *rest]:`, `case {**rest}:`)."""
    names = []
    for node in ast.walk(pattern):
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.append(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.append(node.rest)
    return names


def compares_by_value(pattern: ast.pattern) -> bool:
    """A `case` pattern that compares the subject with `==` (`case 0:`, `case 1 | 2:`)."""
    if isinstance(pattern, ast.MatchValue):
        return True
    if isinstance(pattern, ast.MatchOr):
        return any(compares_by_value(option) for option in pattern.patterns)
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return compares_by_value(pattern.pattern)
    return False


def has_a_source(taint: Taint) -> bool:
    return any(isinstance(origin, Origin) for origin in taint)

"""How each source call can be fixed: guard its binding, hoist it into a guarded local, or neither.

The plan is part of the analysis (the fixer only carries it out), so that every adapter shows the
same fix availability and safety.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from lint_rules.engine.facts.definitions import DEFINITION_STATEMENTS, first_line_of
from lint_rules.engine.facts.expressions import COMPREHENSIONS, callee_label, dotted_name, getter_name, unpacked_pairs
from lint_rules.engine.facts.source_text import SourceText
from lint_rules.engine.fixes.guard_builtins import guard_builtins_refusal
from lint_rules.engine.fixes.torch_name import bound_names, torch_name_refusal
from lint_rules.engine.flow.module_run import ModuleRun
from lint_rules.engine.flow.taint import Origin
from lint_rules.findings import FixKind, FixPlan, FixSafety

OtherSourcePlan = Callable[[ast.Call], "FixPlan | None"]
"""The plan of another reported source call (None for any other call): hoisted together, in order."""


def no_other_sources(call: ast.Call) -> FixPlan | None:
    return None


SHARED_REASON = (
    "the length leaves the call through a `nonlocal` or `global` name that the function, or one it calls, "
    "binds, not through its result: guard it where that name is bound"
)
EFFECTFUL = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)
SIMPLE_BINDINGS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def origin_fix_plan(origin: Origin, run: ModuleRun) -> FixPlan:
    """The plan of a source call, made once per run: the other reported source calls of its
    statement (in the run's registry) are hoisted with it."""
    key = id(origin.call)
    if key not in run.fix_plans and origin.shared:
        run.fix_plans[key] = no_fix(origin.call, origin.statement, run.facts.source, SHARED_REASON)
    if key not in run.fix_plans:
        result_targets = [] if origin.used_in_own_statement else origin.flowed_into
        run.fix_plans[key] = plan_fix(
            origin.call,
            origin.statement,
            origin.scope.body_owner,
            run.facts.source,
            unsafe_because(origin),
            result_targets,
            run.facts.source_methods,
            origin.used_in_own_statement,
            lambda call: other_source_plan(origin, call, run),
        )
        refusal = torch_name_refusal(
            run.facts.tree, run.facts.source.text, origin.scope.body_owner, line=origin.statement.lineno
        )
        if run.fix_plans[key].kind is not FixKind.NONE:
            refusal = refusal or guard_builtins_refusal(origin, run)
            if refusal:
                run.fix_plans[key] = run.fix_plans[key]._replace(
                    kind=FixKind.NONE, safety=FixSafety.NONE, reason=refusal
                )
    return run.fix_plans[key]


def other_source_plan(origin: Origin, call: ast.Call, run: ModuleRun) -> FixPlan | None:
    other = run.origins.get(id(call))
    if other is None or other is origin or not other.reported or other.statement is not origin.statement:
        return None
    return origin_fix_plan(other, run)


def unsafe_because(origin: Origin) -> str:
    if origin.scope.compiled_region and not origin.eager_only:
        return (
            f"the guard would add a graph break and a device sync inside a compiled region "
            f"({origin.scope.compiled_region}); keep the arithmetic on tensors or gate it with "
            "torch.compiler.is_compiling()"
        )
    if origin.returned:
        return (
            "the value is returned: a guard here would change what every caller gets, including callers "
            "inside compiled regions; guard it where a caller needs an int"
        )
    return ""


def plan_fix(
    call: ast.Call,
    statement: ast.stmt,
    owner: ast.AST,
    source: SourceText,
    unsafe_because: str,
    result_targets: list[ast.expr],
    source_methods: frozenset[str],
    used_in_own_statement: bool = False,
    other_source_plan: OtherSourcePlan = no_other_sources,
) -> FixPlan:
    """Guard the call's binding; else hoist the call; else guard what its statement computes from it.

    `result_targets` are the targets a value computed from the call is bound to, given only when the
    statement itself does not use the value as an int (so a guard after it fixes every use). When
    it does (`n += cache.get_seq_length()` with an int `n`), a guard after the binding comes too
    late and the call is hoisted instead.
    """
    parents = parent_map(statement)
    targets = bound_targets(call, parents, statement)
    if targets is not None and not used_in_own_statement:
        plan = guard_plan(call, statement, targets, source)
    else:
        safety = FixSafety.UNSAFE if unsafe_because else FixSafety.SAFE
        hoisted_with = hoisted_before(call, statement, other_source_plan, safety)
        plan = hoist_plan(call, statement, parents, owner, source, source_methods, hoisted_with)
        if plan.kind is FixKind.NONE and result_targets and isinstance(statement, SIMPLE_BINDINGS):
            plan = guard_plan(call, statement, result_targets, source)
    plan = plan._replace(scope_lines=scope_lines(owner))
    if plan.kind is not FixKind.NONE and unsafe_because:
        return plan._replace(safety=FixSafety.UNSAFE, reason=unsafe_because)
    return plan


def scope_lines(owner: ast.AST) -> tuple[int, int]:
    if not isinstance(owner, DEFINITION_STATEMENTS):
        return (0, 0)
    return (first_line_of(owner), owner.end_lineno or owner.lineno)


def parent_map(statement: ast.stmt) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}


def bound_targets(call: ast.Call, parents: dict[int, ast.AST], statement: ast.stmt) -> list[ast.expr] | None:
    """The targets the call's value is bound to as a whole (through conditional-expression arms)."""
    value: ast.expr = call
    parent = parents.get(id(value))
    while (isinstance(parent, ast.IfExp) and value is not parent.test) or isinstance(parent, ast.Await):
        value = parent
        parent = parents.get(id(value))
    if parent is statement and isinstance(statement, ast.Assign):
        return list(statement.targets)
    if parent is statement and isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return [statement.target]
    if isinstance(parent, ast.Tuple) and isinstance(statement, ast.Assign) and statement.value is parent:
        return unpacked_targets(statement, parent.elts.index(value))
    return None


def unpacked_targets(statement: ast.Assign, position: int) -> list[ast.expr] | None:
    """The targets that the value at `position` of the statement's tuple is bound to (each target a
    tuple that lines up with it); None if one of them is starred at that place or does not line up."""
    value = statement.value
    found = []
    for target in statement.targets:
        pairs = unpacked_pairs(target, value)
        if pairs is None:
            return None
        matched = (
            [element for element, paired in pairs if paired is value.elts[position]]
            if isinstance(value, ast.Tuple)
            else []
        )
        if not matched:
            return None
        found.extend(matched)
    return found


def guard_plan(call: ast.Call, statement: ast.stmt, targets: list[ast.expr], source: SourceText) -> FixPlan:
    names = tuple(dict.fromkeys(dotted_name(target) for target in targets))
    reason = ""
    if not all(names):
        reason = "the value is bound to a subscript or another target that cannot be guarded"
    elif not (source.starts_its_line(statement) and source.ends_its_line(statement)):
        reason = "the binding shares its line with another statement"
    elif (statement.end_lineno or statement.lineno) >= len(source.lines) and not source.text.endswith(("\n", "\r")):
        reason = "the binding is the file's last line, which has no line break to put the guard after"
    if reason:
        return no_fix(call, statement, source, reason)
    return FixPlan(FixKind.GUARD_AFTER, FixSafety.SAFE, source.span(statement), source.span(call), targets=names)


def hoist_plan(
    call: ast.Call,
    statement: ast.stmt,
    parents: dict[int, ast.AST],
    owner: ast.AST,
    source: SourceText,
    source_methods: frozenset[str],
    hoisted_with: frozenset[int] = frozenset(),
) -> FixPlan:
    if isinstance(owner, ast.ClassDef):
        reason = "the statement is in a class body, where a hoisted name would become a class attribute"
    else:
        reason = hoist_refusal(call, statement, parents, source, source_methods, hoisted_with)
    if reason:
        return no_fix(call, statement, source, reason)
    name = fresh_name(call, owner)
    return FixPlan(FixKind.HOIST, FixSafety.SAFE, source.span(statement), source.span(call), hoisted_name=name)


def no_fix(call: ast.Call, statement: ast.stmt, source: SourceText, reason: str) -> FixPlan:
    return FixPlan(FixKind.NONE, FixSafety.NONE, source.span(statement), source.span(call), reason=reason)


def hoisted_before(
    call: ast.Call, statement: ast.stmt, other_source_plan: OtherSourcePlan, safety: FixSafety
) -> frozenset[int]:
    """The nodes of the earlier source calls of the statement that are hoisted, in order, with the
    same safety as this one: moving this call after them keeps the order of evaluation."""
    position = (call.lineno, call.col_offset)
    moved: set[int] = set()
    for node in evaluated_before_targets(statement):
        if not isinstance(node, ast.Call) or node is call or (node.lineno, node.col_offset) >= position:
            continue
        plan = other_source_plan(node)
        if plan is not None and plan.kind is FixKind.HOIST and plan.safety is safety:
            moved |= {id(inner) for inner in ast.walk(node)}
    return frozenset(moved)


def hoist_refusal(
    call: ast.Call,
    statement: ast.stmt,
    parents: dict[int, ast.AST],
    source: SourceText,
    source_methods: frozenset[str],
    hoisted_with: frozenset[int] = frozenset(),
) -> str:
    """Why moving the call in front of its statement could change what the code does ("" if it cannot)."""
    child: ast.AST = call
    parent = parents.get(id(call))
    while parent is not None and parent is not statement:
        reason = nested_refusal(child, parent)
        if reason:
            return reason
        child, parent = parent, parents.get(id(parent))
    reason = statement_refusal(child, statement, source)
    if reason:
        return reason
    earlier = first_earlier_effect(call, statement, parents, source_methods, hoisted_with)
    if earlier is not None:
        return f"hoisting it would move it before `{ast.unparse(earlier)}`, which runs first"
    return ""


def nested_refusal(child: ast.AST, parent: ast.AST) -> str:
    if isinstance(parent, ast.Lambda):
        return "the call is inside a lambda"
    if isinstance(parent, ast.Await):
        return "the call is awaited: the length is what `await` gives, not the call's value"
    if isinstance(parent, (COMPREHENSIONS, ast.comprehension)):
        return "the call is inside a comprehension"
    if isinstance(parent, ast.IfExp) and child is not parent.test:
        return "the call is in a conditional-expression arm, which may not run"
    if isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
        return "the call is on the right side of `and`/`or`, which may not run"
    return ""


def statement_refusal(child: ast.AST, statement: ast.stmt, source: SourceText) -> str:
    if isinstance(statement, ast.While):
        return "the call is in a `while` test, evaluated on every iteration"
    if isinstance(statement, ast.Match) and child is not statement.subject:
        return "the call is in a `case` guard, evaluated only when its pattern matches"
    if isinstance(statement, ast.If) and source.line(statement.lineno)[statement.col_offset :].startswith("elif"):
        return "the call is in an `elif` test, which runs only when the `if` test fails"
    if isinstance(statement, ast.Assert):
        return "the call is in an `assert`, which does not run under `python -O`"
    if isinstance(statement, DEFINITION_STATEMENTS):
        return "the call is in a decorator, a default argument or a class header"
    if isinstance(statement, (ast.For, ast.AsyncFor)) and child is not statement.iter:
        return "the call is in a loop target"
    if is_assignment_target(child, statement):
        return "the call is in an assignment target, which runs after the value (and any target before it)"
    if isinstance(statement, (ast.With, ast.AsyncWith)) and child is not statement.items[0]:
        return "the call is in a later `with` item, which runs after the earlier ones are entered"
    if starred_after(child, statement):
        return "an unpacked argument (`*args`) of the call around it runs before its keyword values"
    if not source.starts_its_line(statement):
        return "the statement shares its line with another statement"
    return ""


def starred_after(child: ast.AST, statement: ast.stmt) -> bool:
    """A call in the statement passes `*args` and takes a keyword value holding `child`'s source call:
    Python evaluates every positional (starred) argument before the keyword values."""
    return any(
        isinstance(node, ast.Call)
        and any(isinstance(argument, ast.Starred) for argument in node.args)
        and node.keywords
        for node in ast.walk(child)
    )


def is_assignment_target(child: ast.AST, statement: ast.stmt) -> bool:
    """`child` is a target of `=` (or an annotated `:... =`): Python evaluates the value first."""
    if isinstance(statement, ast.Assign):
        return any(child is target for target in statement.targets)
    return isinstance(statement, ast.AnnAssign) and child is statement.target and statement.value is not None


def first_earlier_effect(
    call: ast.Call,
    statement: ast.stmt,
    parents: dict[int, ast.AST],
    source_methods: frozenset[str],
    hoisted_with: frozenset[int] = frozenset(),
) -> ast.AST | None:
    """A call, await, yield or walrus that the statement evaluates before the source call (and that is
    not hoisted in front of it, in order, by an earlier fix)."""
    ancestors = set()
    node: ast.AST | None = call
    while node is not None:
        ancestors.add(id(node))
        node = parents.get(id(node))
    inside_call = {id(node) for node in ast.walk(call)}
    position = (call.lineno, call.col_offset)
    for node in evaluated_before_targets(statement):
        if id(node) in ancestors or id(node) in inside_call or id(node) in hoisted_with:
            continue
        if not isinstance(node, EFFECTFUL):
            continue
        if is_source_getter(node, source_methods):
            continue
        if (node.lineno, node.col_offset) < position:
            return node
    return None


def is_source_getter(node: ast.AST, source_methods: frozenset[str]) -> bool:
    """Another source call: a getter, hoisted along with this one or harmlessly moved past."""
    return isinstance(node, ast.Call) and getter_name(node) in source_methods


def evaluated_before_targets(statement: ast.stmt) -> Iterator[ast.AST]:
    """The expression nodes a statement evaluates, without assignment targets and nested bodies."""
    if isinstance(statement, ast.AugAssign):  # `out[pick()] += v`: the target's parts run first
        roots: list[ast.AST] = [statement.target, statement.value]
    elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
        roots = [statement.value] if statement.value is not None else []
    elif isinstance(statement, (ast.If, ast.While)):
        roots = [statement.test]
    elif isinstance(statement, (ast.For, ast.AsyncFor)):
        roots = [statement.iter]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        roots = [item.context_expr for item in statement.items]
    elif isinstance(statement, ast.Match):
        roots = [statement.subject]
    else:
        roots = [child for child in ast.iter_child_nodes(statement) if isinstance(child, ast.expr)]
    for root in roots:
        yield from ast.walk(root)


def fresh_name(call: ast.Call, owner: ast.AST) -> str:
    """A local name not used in the enclosing function, distinct for every call of the method in it."""
    method = callee_label(call)
    base = method.lstrip("_").removeprefix("get_") or "value"
    taken: set[str] = set()
    calls = []
    for node in ast.walk(owner):
        if isinstance(node, ast.Name):
            taken.add(node.id)
        elif isinstance(node, ast.Import):  # `import torch` too, which `bound_names` leaves out
            taken.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.Call) and callee_label(node) == method:
            calls.append((node.lineno, node.col_offset))
        else:
            taken.update(bound_names(node))  # parameters, `def`/`class` names, imports, captures
    calls.sort()
    skip = calls.index((call.lineno, call.col_offset))
    for suffix in ["", *(f"_{number}" for number in range(2, 10_000))]:
        candidate = base + suffix
        if candidate in taken:
            continue
        if skip == 0:
            return candidate
        skip -= 1
    return f"{base}_{len(taken) + 10_000}"

"""What a test tells inside the branch it guards: `isinstance(n, int)` and the else side of
`isinstance(n, torch.Tensor)` (the fixer's guard) make `n` an int; `isinstance(c, DynamicCache)`
makes `c` a cache whose length is an int (where `int-length-caches` is declared,
`isinstance(c, StaticCache)` makes it one whose length is a tensor); `not torch.compiler.is_compiling()` means the branch
only runs eagerly (in a compiled region, the gate the rules advise there: what was asked before it
is used here only when nothing is traced); `c is None` drops the values of the source calls that
ran only where `c` was not None; a name bound to such a test (`is_dynamic = isinstance(c,
DynamicCache)`) narrows like the test. A false `a and b` (a true `a or b`) narrows like one of its
operands, those before it having gone the other way: `not (is_compiling() and torch.is_tensor(n))`
holds where nothing is traced or `n` is not a tensor. A test whose value is known before the code
runs (`if False:`, `if TYPE_CHECKING:`, a module constant) leaves one branch dead."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_owners import only_int_length_classes_have
from lint_rules.engine.facts.caches import INT_LENGTH, TENSOR_LENGTH
from lint_rules.engine.facts.compiled import is_torchscript
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_text import is_truth_literal
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.taint import (
    EAGER_ONLY,
    INT,
    INT_LENGTH_CACHE,
    NOT_TRACED,
    TENSOR,
    TENSOR_LENGTH_CACHE,
    State,
    key_of,
    subscript_key,
)

INT_CLASS_NAMES = frozenset({"int", "numbers.Integral", "Integral"})
COMPILING_CHECKS = frozenset({"is_compiling", "is_torchdynamo_compiling", "is_dynamo_compiling", "is_exporting"})
"""`torch.compiler.is_compiling()`, transformers' `is_torchdynamo_compiling()` and the like."""
TRUE_WHENEVER_TRACED = frozenset({"is_compiling", "is_torchdynamo_compiling"})
"""The checks that are True under `torch.compile` and `torch.export` alike (`is_exporting()` is False under
`torch.compile`, `is_dynamo_compiling()` under non-strict export); all are False under TorchScript."""


def classes_checked(classes: ast.expr, module: ModuleFacts) -> tuple[bool, bool]:
    """Whether an isinstance class argument names int, and whether it names a tensor class."""
    names = class_names(classes)
    checks_int = any(name in INT_CLASS_NAMES for name in names)
    checks_tensor = any(is_tensor_class(name, module) for name in names)
    return checks_int, checks_tensor


def class_names(classes: ast.expr) -> list[str]:
    return [ex.dotted_name(element) for element in (classes.elts if isinstance(classes, ast.Tuple) else [classes])]


def is_tensor_class(name: str, module: ModuleFacts) -> bool:
    prefix, _, last = name.rpartition(".")
    return last == "Tensor" and (not prefix or prefix in module.torch_aliases)


def subject_key(node: ast.expr) -> str:
    """The state key of what a test is about: a name, a plain attribute chain, or one of those
    subscripted by a constant, a name or a chain (`kwargs["past_key_value"]`, `cache.layers[i]`:
    `taint.subscript_key`)."""
    return key_of(node) or subscript_key(node)


def none_test(test: ast.expr) -> tuple[str, bool] | None:
    """`c is None` -> ("c", True), `c is not None` -> ("c", False): the key, and whether the test is
    true when it is None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))):
        return None
    left, right = test.left, test.comparators[0]
    subject = left if ex.is_none(right) else right if ex.is_none(left) else None
    key = subject_key(subject) if subject is not None else ""
    return (key, isinstance(test.ops[0], ast.Is)) if key else None


def flag_subjects(value: ast.expr, module: ModuleFacts) -> frozenset[str]:
    """The keys a test is about, if a name bound to it can stand for it (`isinstance`, `is None`, `not`,
    and `and`/`or` of tests one of which is such: `ok = c is not None and isinstance(c.layers[i], L)`)."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return flag_subjects(value.operand, module)
    if isinstance(value, ast.BoolOp):
        return frozenset().union(*(flag_subjects(operand, module) for operand in value.values))
    narrowed = narrowed_key(value, module)
    if narrowed is not None:
        return frozenset({narrowed[0]})
    none = none_test(value)
    return frozenset({none[0]}) if none is not None else frozenset()


def operand_names(value: ast.expr) -> frozenset[str]:
    """The plain names among the operands of `not`/`and`/`or` in a test (`ok = b and isinstance(...)`):
    rebinding one ends what a flag bound to the test stands for, as rebinding a subject does."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return operand_names(value.operand)
    if isinstance(value, ast.BoolOp):
        return frozenset().union(*map(operand_names, value.values))
    return frozenset({value.id}) if isinstance(value, ast.Name) else frozenset()


def static_truth(test: ast.expr, constants: Mapping[str, object]) -> bool | None:
    """The test's truth where it is known before the code runs: a literal (`if False:`, `if 0:`),
    `TYPE_CHECKING` (false at run time), a name whose value is known (`constants`: a module constant
    bound once to a literal, `DEBUG = False`, or a local one), also compared with a literal
    (`if flag is False:`), and `not`/`and`/`or` of those."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand = static_truth(test.operand, constants)
        return None if operand is None else not operand
    if ex.dotted_name(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
        return False
    if isinstance(test, ast.BoolOp):
        operands = [static_truth(operand, constants) for operand in test.values]
        decisive = isinstance(test.op, ast.Or)  # `or`: one true operand decides; `and`: one false one
        return decisive if decisive in operands else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], COMPARISONS):
        return compared(test.ops[0], known_value(test.left, constants), known_value(test.comparators[0], constants))
    value = known_value(test, constants)
    return None if value is UNKNOWN else bool(value)


def names_known_values_decide(test: ast.expr) -> Iterator[str]:
    """The names whose value `static_truth` reads in `test` (the only places where `constants` count)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from names_known_values_decide(test.operand)
    elif isinstance(test, ast.BoolOp):
        for operand in test.values:
            yield from names_known_values_decide(operand)
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], COMPARISONS):
        yield from (side.id for side in (test.left, test.comparators[0]) if isinstance(side, ast.Name))
    elif isinstance(test, ast.Name):
        yield test.id


UNKNOWN = object()
COMPARISONS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)


def known_value(node: ast.expr, constants: Mapping[str, object]) -> object:
    if is_truth_literal(node):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id, UNKNOWN)
    return UNKNOWN


def compared(op: ast.cmpop, left: object, right: object) -> bool | None:
    if left is UNKNOWN or right is UNKNOWN:
        return None
    if isinstance(op, (ast.Is, ast.IsNot)):
        same = left is right if isinstance(left, bool) or left is None else None
        return None if same is None else same == isinstance(op, ast.Is)
    return (left == right) == isinstance(op, ast.Eq)


def narrowed_key(test: ast.expr, module: ModuleFacts) -> tuple[str, str] | None:
    """`isinstance(n, torch.Tensor)` -> ("n", TENSOR); `isinstance(n, int)` -> ("n", INT);
    `isinstance(c, DynamicCache)` -> ("c", INT_LENGTH_CACHE)."""
    if not isinstance(test, ast.Call) or not test.args:
        return None
    name = ex.called_name(test)
    subject = subject_key(test.args[0])
    if not subject:
        return None
    if name == "isinstance" and len(test.args) == 2:
        checks_int, checks_tensor = classes_checked(test.args[1], module)
        if checks_tensor and not checks_int:
            return subject, TENSOR
        if checks_int and not checks_tensor:
            return subject, INT
        names = class_names(test.args[1])
        if all(names) and all(module.classes.length_kind_of_name(name) == INT_LENGTH for name in names):
            return subject, INT_LENGTH_CACHE
        if module.int_length_receivers and any(
            module.classes.length_kind_of_name(name) == TENSOR_LENGTH for name in names if name
        ):
            return subject, TENSOR_LENGTH_CACHE  # tracked where `int-length-caches` is declared (`declarations`)
    if proves_attribute(name, test) and has_only_int_length_owners(subject, test.args[1], module):
        return subject, INT_LENGTH_CACHE
    module_name, _, function = name.rpartition(".")
    if function == "is_tensor" and module_name in module.torch_aliases:
        return subject, TENSOR
    return None


def proves_attribute(name: str, test: ast.Call) -> bool:
    """Taken as true, the test shows that its first argument has the attribute named second:
    `hasattr(c, "a")`, `getattr(c, "a")` (it raises without one) or `getattr(c, "a", d)` with a
    default `d` that is false (`False`, `None`, `0`, `""`): a true value is not the default."""
    if test.keywords or len(test.args) not in (2, 3):
        return False
    if len(test.args) == 2:
        return name in ("hasattr", "getattr")
    default = test.args[2]
    return name == "getattr" and isinstance(default, ast.Constant) and not default.value


def has_only_int_length_owners(subject: str, attribute: ast.expr, module: ModuleFacts) -> bool:
    """`hasattr(c, "attr")` where only the package's int-length classes have `attr` (`attribute_owners`),
    asked only where the module asks `c` for its length."""
    if not (isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)):
        return False
    if not any(f"{subject}.{method}" in module.source.text for method in module.source_methods):
        return False
    owned = module.int_length_owned
    if attribute.value not in owned:
        owned[attribute.value] = only_int_length_classes_have(module.classes, attribute.value)
    return owned[attribute.value]


def may_narrow(test: ast.expr) -> bool:
    """Cheaply: the test has a call (`isinstance`, `is_tensor`, `is_compiling`) that can narrow."""
    if isinstance(test, ast.UnaryOp):
        return may_narrow(test.operand)
    if isinstance(test, ast.BoolOp):
        return any(may_narrow(value) for value in test.values)
    if isinstance(test, (ast.Name, ast.Attribute)):
        return True  # not None when true; maybe a flag
    return (isinstance(test, ast.Call) and bool(test.args or is_compiling_check(test))) or none_test(test) is not None


def is_compiling_check(test: ast.expr) -> bool:
    return isinstance(test, ast.Call) and ex.called_name(test).rpartition(".")[2] in COMPILING_CHECKS


def narrow(test: ast.expr, state: State, truth: bool, module: ModuleFacts, scope: Scope) -> State:
    """The state where `test` evaluated to `truth` (in an `if` branch, after an `assert`, or for the
    later operands of `and`/`or`) in the function `scope`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return narrow(test.operand, state, not truth, module, scope)
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) == truth:  # every operand went that way
            for operand in test.values:
                state = narrow(operand, state, truth, module, scope)
            return state
        return narrow_by_one_operand(test, state, truth, module, scope)
    if not truth and is_compiling_check(test):
        return eager_only(state, scope, true_whenever_traced(test, module))
    if isinstance(test, (ast.Name, ast.Attribute)):
        return narrow_by_name(key_of(test), state, truth, module, scope)
    none = none_test(test)
    if none is not None:
        key, true_when_none = none
        if truth == true_when_none:
            state.known_none(key)
        else:
            state.paths.not_none.add(key)
        return state
    narrowed = narrowed_key(test, module)
    if narrowed is None:
        return state
    key, kind = narrowed
    if kind == INT_LENGTH_CACHE:
        if truth:  # the lengths asked earlier of the object `key` still holds came from an int-length cache
            state.kinds[key] = INT_LENGTH_CACHE
            if state.paths.asked.get(key) and not may_be_rebound_by_a_call(key, scope):
                state.forget_lengths_asked_of(key)
    elif kind == TENSOR_LENGTH_CACHE:
        if truth:
            state.kinds[key] = TENSOR_LENGTH_CACHE
    elif (kind == INT) == truth:
        state.clean(key)
    return state


def narrow_by_one_operand(test: ast.BoolOp, state: State, truth: bool, module: ModuleFacts, scope: Scope) -> State:
    """A false `a and b` (a true `a or b`): one operand decided it, the ones before it having gone the
    other way; the branch sees what holds whichever operand it was."""
    if bool_nesting(test) > MAX_ALTERNATIVE_NESTING or not any(map(may_narrow, test.values)):
        return state
    alternatives: list[State | None] = []
    before = state
    for operand in test.values:
        alternatives.append(narrow(operand, before.copy(), truth, module, scope))
        before = narrow(operand, before.copy(), not truth, module, scope)
    merged = State.merge(alternatives) or state
    merged.paths.not_none |= state.paths.not_none  # an alternative where such a key is None cannot run
    return merged


MAX_ALTERNATIVE_NESTING = 3
"""Each level of `and` inside `or` inside `and` ... doubles the alternatives: deeper, nothing is narrowed."""


def bool_nesting(test: ast.expr) -> int:
    if isinstance(test, ast.UnaryOp):
        return bool_nesting(test.operand)
    if isinstance(test, ast.BoolOp):
        return 1 + max(map(bool_nesting, test.values))
    return 0


def true_whenever_traced(test: ast.expr, module: ModuleFacts) -> bool:
    """`torch.compiler.is_compiling()`, `torch._dynamo.is_compiling()` or a bare imported
    `is_torchdynamo_compiling()` (not `self.is_compiling()`, nor a check some tracer leaves False)."""
    prefix, _, last = ex.called_name(test).rpartition(".") if isinstance(test, ast.Call) else ("", "", "")
    return last in TRUE_WHENEVER_TRACED and (not prefix or prefix.partition(".")[0] in module.torch_aliases)


def eager_only(state: State, scope: Scope, true_when_traced: bool) -> State:
    """Where `is_compiling()` was false nothing is traced. In a region Dynamo or export traces, that
    gate is what the rules advise instead of a guard: the lengths asked before it are used here only
    eagerly, so their values end; the ones asked after it are eager-only sources (their guard is
    safe), or no sources at all in the rest of the gate's own expression (`values.untraced_part`).
    TorchScript leaves the check False, so its regions keep their values."""
    state.kinds[EAGER_ONLY] = EAGER_ONLY
    if true_when_traced:
        state.kinds[NOT_TRACED] = NOT_TRACED
    if state.taint and true_when_traced and scope.compiled_region and not is_torchscript(scope.compiled_region):
        state.taint.clear()
    return state


def narrow_by_name(key: str, state: State, truth: bool, module: ModuleFacts, scope: Scope) -> State:
    """`if c:` (`c` is not None where true) and `if is_dynamic:` (a flag: narrows like its test)."""
    if not key:
        return state
    if truth:
        state.paths.not_none.add(key)
    flag = state.paths.flags.get(key)
    return narrow(flag[0], state, truth, module, scope) if flag is not None else state


def may_be_rebound_by_a_call(key: str, scope: Scope) -> bool:
    """The name holding the object is one a call may rebind (`shared_names`): a call between the
    length asked and the test may have bound it to another object."""
    return key.partition(".")[0].partition("[")[0] in shared_names(scope.body)


SHARED_DECLARATION = re.compile(r"\b(?:global|nonlocal)\b")


def shared_names(body: Sequence[ast.stmt], text: str | None = None) -> frozenset[str]:
    """The names a function declares `global`, or a function nested in it `nonlocal` (or `global`):
    a call may rebind them. `text`: the function's, looked at first where it is given."""
    if text is not None and not SHARED_DECLARATION.search(text):
        return frozenset()
    return frozenset(
        name
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, (ast.Global, ast.Nonlocal))
        for name in node.names
    )

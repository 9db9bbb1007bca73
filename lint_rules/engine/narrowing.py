"""What a test tells inside the branch it guards: `isinstance(n, int)` and the else side of
`isinstance(n, torch.Tensor)` (the fixer's guard) make `n` an int; `isinstance(c, DynamicCache)`
makes `c` a cache whose length is an int; `not torch.compiler.is_compiling()` means the branch
only runs eagerly."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from lint_rules.engine import expressions as ex
from lint_rules.engine.taint import EAGER_ONLY, INT, INT_LENGTH_CACHE, TENSOR, State, key_of

if TYPE_CHECKING:
    from lint_rules.engine.module_facts import ModuleFacts

INT_CLASS_NAMES = frozenset({"int", "numbers.Integral", "Integral"})
COMPILING_CHECKS = frozenset({"is_compiling", "is_torchdynamo_compiling", "is_dynamo_compiling", "is_exporting"})
"""`torch.compiler.is_compiling()`, transformers' `is_torchdynamo_compiling()` and the like."""


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


def narrowed_key(test: ast.expr, module: ModuleFacts) -> tuple[str, str] | None:
    """`isinstance(n, torch.Tensor)` -> ("n", TENSOR); `isinstance(n, int)` -> ("n", INT);
    `isinstance(c, DynamicCache)` -> ("c", INT_LENGTH_CACHE)."""
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
        names = class_names(test.args[1])
        if all(names) and all(module.classes.length_kind_of_name(name) == "int" for name in names):
            return subject, INT_LENGTH_CACHE
    module_name, _, function = name.rpartition(".")
    if function == "is_tensor" and module_name in module.torch_aliases:
        return subject, TENSOR
    return None


def may_narrow(test: ast.expr) -> bool:
    """Cheaply: the test has a call (`isinstance`, `is_tensor`, `is_compiling`) that can narrow."""
    if isinstance(test, ast.UnaryOp):
        return may_narrow(test.operand)
    if isinstance(test, ast.BoolOp):
        return any(may_narrow(value) for value in test.values)
    return isinstance(test, ast.Call) and bool(test.args or is_compiling_check(test))


def is_compiling_check(test: ast.expr) -> bool:
    return isinstance(test, ast.Call) and ex.called_name(test).rpartition(".")[2] in COMPILING_CHECKS


def narrow(test: ast.expr, state: State, truth: bool, module: ModuleFacts) -> State:
    """The state where `test` evaluated to `truth` (in an `if` branch, after an `assert`, or for the
    later operands of `and`/`or`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return narrow(test.operand, state, not truth, module)
    if isinstance(test, ast.BoolOp):
        narrows_all = isinstance(test.op, ast.And) == truth
        if narrows_all:
            for operand in test.values:
                state = narrow(operand, state, truth, module)
        return state
    if not truth and is_compiling_check(test):
        state.kinds[EAGER_ONLY] = EAGER_ONLY
        return state
    narrowed = narrowed_key(test, module)
    if narrowed is None:
        return state
    key, kind = narrowed
    if kind == INT_LENGTH_CACHE:
        if truth:
            state.kinds[key] = INT_LENGTH_CACHE
    elif (kind == INT) == truth:
        state.clean(key)
    return state

"""A name bound to a value that cannot be None stays not None until it is rebound, so a later
`if x is None:` on it is dead: `if position_ids is None: position_ids = cache_position.unsqueeze(0)`
makes every later `if position_ids is None:` branch dead, whichever way the first test went.

Values that cannot be None, judged from their form: a literal, a display or comprehension, an
f-string, arithmetic, `not`, `x.shape`/`x.size()`/`len()`/`int()` and the like, a tensor-building
`torch.*` function (`torch.arange`, `torch.cat`; not `torch.jit.annotate(..., None)`), a method that
builds a tensor (`.unsqueeze(0)`, `.view(...)`, where the module has no `def` of that name;
`.to()`/`.cpu()` only of a known tensor), a constructor of a class of the module or of the
package, an if-expression whose arms both cannot be None, `a or b` whose last operand cannot be,
and a name already known not None. A call of any other function may return None and proves
nothing. Only plain local names are decided (an attribute may be changed by a call in between),
and not ones the function declares `global`, nor ones a nested function declares `nonlocal` (a
call may rebind them). A package class in another module with a method named like a tensor's is
a limit (docs/limits.md)."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Sequence

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import length_kind_of_transformers_class
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.source_text import SourceText
from lint_rules.engine.flow.narrowing import none_test
from lint_rules.engine.flow.operands import TENSOR_RESULT_METHODS, is_tensor_operand
from lint_rules.engine.flow.taint import State

TENSOR_BUILDING_METHODS = frozenset(
    {
        "unsqueeze", "squeeze", "expand", "expand_as", "view", "view_as", "reshape", "reshape_as", "repeat",
        "repeat_interleave", "flatten", "transpose", "permute", "contiguous", "clone", "detach", "type_as",
        "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "masked_fill", "cumsum", "unfold",
    }
)  # fmt: skip
"""Methods whose names only tensors (and arrays) define, each giving a new tensor: `.unsqueeze(0)`."""

TENSOR_BUILDING_FUNCTIONS = ex.SIZE_FUNCTIONS | frozenset(
    {
        "tensor", "as_tensor", "cat", "concat", "stack", "where", "cumsum", "clamp", "full_like", "zeros_like",
        "ones_like", "empty_like", "rand_like", "randn_like", "tril", "triu", "masked_fill", "gather", "argmax",
        "argmin", "maximum", "minimum", "eq", "ne", "gt", "ge", "lt", "le", "logical_and", "logical_or",
        "logical_not", "isin", "flip", "roll", "repeat_interleave", "broadcast_to", "unsqueeze", "squeeze",
        "reshape", "index_select", "searchsorted", "bucketize",
    }
)  # fmt: skip
"""`torch.<name>(...)` functions that always return a tensor (or a tuple of them)."""

NEVER_NONE_BUILTINS = ex.COERCING_BUILTINS | frozenset({"len", "str", "range", "list", "tuple", "dict", "set"})


def is_never_none(node: ast.expr, state: State, module: ModuleFacts) -> bool:
    """`node`'s value cannot be None, whatever the names in it hold (see the module's docstring)."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, NEVER_NONE_FORMS) or ex.is_structurally_int(node) or ex.is_shape(node):
        return True
    if isinstance(node, ast.Name):
        return node.id in state.paths.not_none
    if isinstance(node, ast.IfExp):  # `x if x is not None else default`: each arm where its test went its way
        tested = none_test(node.test)
        body_state, else_state = state, state
        if tested is not None and tested[0].isidentifier():
            narrowed = state.copy()
            narrowed.paths.not_none.add(tested[0])
            body_state, else_state = (state, narrowed) if tested[1] else (narrowed, state)
        return is_never_none(node.body, body_state, module) and is_never_none(node.orelse, else_state, module)
    if isinstance(node, ast.BoolOp):
        return isinstance(node.op, ast.Or) and is_never_none(node.values[-1], state, module)
    if isinstance(node, ast.NamedExpr):
        return is_never_none(node.value, state, module)
    if isinstance(node, ast.Call):
        return is_never_none_call(node, state, module)
    return False


NEVER_NONE_FORMS = (
    ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
    ast.JoinedStr, ast.Lambda, ast.BinOp, ast.UnaryOp, ast.Compare,
)  # fmt: skip
"""Forms whose value is never None: displays, comprehensions, f-strings, arithmetic, `not`, comparisons."""


def is_never_none_call(node: ast.Call, state: State, module: ModuleFacts) -> bool:
    method = ex.method_name(node)
    if isinstance(node.func, ast.Attribute) and (
        (method in TENSOR_BUILDING_METHODS and method not in module.definitions.defined_names)
        or (method in TENSOR_RESULT_METHODS and is_tensor_operand(node.func.value, state, module))
    ):
        return True  # a class of the module with a `def view(` of its own may return anything
    name = ex.called_name(node)
    prefix, _, last = name.rpartition(".")
    if prefix and prefix in module.torch_aliases and last in TENSOR_BUILDING_FUNCTIONS:
        return True
    if not prefix and name in NEVER_NONE_BUILTINS:
        return True
    return last[:1].isupper() and is_known_class(name, module)


def is_known_class(name: str, module: ModuleFacts) -> bool:
    """A class of the module or the package, or one of transformers' cache classes of the table."""
    return bool(length_kind_of_transformers_class(name.rpartition(".")[2])) or (
        "." not in name and module.classes.class_named(name) is not None
    )


NAME_IS_BEFORE = re.compile(r"\b(\w+)\s+is\s+(?:not\s+)?$")
"""`x is ` or `x is not ` ending right before a `None`."""
IS_NAME_AFTER = re.compile(r"\s+is\s+(?:not\s+)?(\w+)")
"""` is x` or ` is not x` right after a `None`."""
NONE_CONTEXT = 120
"""How many characters around a `None` a comparison with it is looked for in."""


def text_of(node: ast.AST, source: SourceText) -> str:
    """The lines of a node (or of a module), read from the text: cheaper than walking its tree."""
    if isinstance(node, ast.Module):
        return source.text
    first, last = getattr(node, "lineno", 1), getattr(node, "end_lineno", None) or 1 << 30
    return "\n".join(source.lines[first - 1 : last])


def names_tested_for_none(text: str) -> frozenset[str]:
    """The names a scope's text compares with None (`x is None`, `x is not None`; more is no harm):
    the only ones whose being not None can decide a branch."""
    names: set[str] = set()
    found = text.find("None")
    while found != -1:
        end = found + len("None")
        whole_word = not is_word_character(text, found - 1) and not is_word_character(text, end)
        if whole_word:
            start = max(0, found - NONE_CONTEXT)
            before = NAME_IS_BEFORE.search(text, start, found) if "is" in text[found - 12 : found] else None
            after = IS_NAME_AFTER.match(text, end, end + NONE_CONTEXT) if text[end : end + 1].isspace() else None
            names.update(match.group(1) for match in (before, after) if match is not None)
        found = text.find("None", end)
    return frozenset(names)


def is_word_character(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] == "_")


def none_truth(
    test: ast.expr, not_none: Collection[str], shared: Collection[str], none: Collection[str] = ()
) -> bool | None:
    """The truth of `x is None` (`x is not None`, and `not`/`and`/`or` of those) where the plain name
    `x` is known not None, or (`none`) known to be None; `shared`: the names a call may rebind
    (`shared_names`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand = none_truth(test.operand, not_none, shared, none)
        return None if operand is None else not operand
    if isinstance(test, ast.BoolOp):
        operands = [none_truth(operand, not_none, shared, none) for operand in test.values]
        decisive = isinstance(test.op, ast.Or)  # `or`: one true operand decides; `and`: one false one
        if decisive in operands:
            return decisive
        return None if None in operands else not decisive
    tested = none_test(test)
    if tested is None or not tested[0].isidentifier() or tested[0] in shared:
        return None
    if tested[0] in not_none:
        return not tested[1]
    return tested[1] if tested[0] in none else None


def stored_names(statements: Sequence[ast.stmt]) -> frozenset[str]:
    """Every name the statements bind, nested scopes included (more than they bind is no harm)."""
    return frozenset(
        node.id
        for statement in statements
        for node in ex.walk_without(statement, ex.OPERATOR_NODES)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    )

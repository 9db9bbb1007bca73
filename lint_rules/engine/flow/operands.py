"""What an operand is at one point of a function: an int, a full tensor, or unknown.

Only real sources count as int evidence: a value tainted by nothing but a parameter of the
function being summarized may be anything the caller passes.
"""

from __future__ import annotations

import ast
import functools

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import INT_LENGTH, TENSOR_LENGTH
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.flow import model_outputs
from lint_rules.engine.flow.scope import Scope
from lint_rules.engine.flow.taint import (
    INT,
    INT_LENGTH_CACHE,
    NONE,
    TENSOR,
    TENSOR_LENGTH_CACHE,
    State,
    key_of,
    real_origins,
    subscript_key,
)

TENSOR_RESULT_METHODS = ex.TENSOR_PRESERVING_METHODS | ex.TENSOR_METHODS


def kind_of(node: ast.expr, state: State, scope: Scope, module: ModuleFacts) -> str:
    """The kind a name bound to `node` gets: INT, TENSOR, INT_LENGTH_CACHE, TENSOR_LENGTH_CACHE (only
    where `int-length-caches` is declared: see `declarations`), the kind of a model's outputs
    (`model_outputs`) or ""."""
    if isinstance(node, ast.Constant) and node.value is None:
        return NONE
    if is_int_operand(node, state, scope, module) and not is_tainted(node, state):
        return INT
    if is_tensor_operand(node, state, module, on_entry=False):
        return TENSOR
    length_kind = cache_length_kind(node, state, module)
    if length_kind == TENSOR_LENGTH:
        return TENSOR_LENGTH_CACHE if module.int_length_receivers else ""
    if length_kind == INT_LENGTH:
        return INT_LENGTH_CACHE
    known = functools.partial(cache_length_kind, state=state, module=module)
    return model_outputs.outputs_kind(node, known, module.releases)


def cache_length_kind(node: ast.expr, state: State, module: ModuleFacts) -> str:
    """INT_LENGTH, TENSOR_LENGTH or "" for the cache `node` gives: one built here (`DynamicCache(...)`),
    one the walk knows a name holds, or the one a model's outputs hold (`out.past_key_values`)."""
    known = functools.partial(cache_length_kind, state=state, module=module)
    return (
        module.classes.constructed_kind(node, known)
        or held_length_kind(state, node)
        or model_outputs.held_cache_kind(node, state, known, module.releases)
    )


def held_length_kind(state: State, node: ast.expr) -> str:
    """INT_LENGTH (TENSOR_LENGTH) when the walk knows the name holds an int-length (a tensor-length) cache."""
    key = key_of(node) or subscript_key(node)
    held = state.kind(key) if key else None
    return INT_LENGTH if held == INT_LENGTH_CACHE else TENSOR_LENGTH if held == TENSOR_LENGTH_CACHE else ""


def is_tainted(node: ast.expr, state: State) -> bool:
    key = key_of(node)
    return bool(key and state.taint.get(key))


def is_int_operand(node: ast.expr, state: State, scope: Scope, module: ModuleFacts) -> bool:
    """A value Python treats as an int here: literals, shapes, lengths, int names, tainted values."""
    if ex.is_structurally_int(node):
        return True
    key = key_of(node)
    if key:
        return bool(real_origins(state.taint.get(key, frozenset()))) or (
            state.kinds.get(key) == INT or key in scope.int_typed_names
        )
    if isinstance(node, ast.Call):
        return ex.getter_name(node) in module.source_methods
    if isinstance(node, ast.BinOp):
        return is_int_operand(node.left, state, scope, module) and is_int_operand(node.right, state, scope, module)
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return is_int_operand(node.operand, state, scope, module)
    return False


def is_tensor_operand(node: ast.expr, state: State, module: ModuleFacts, on_entry: bool = True) -> bool:
    """A value known to be a full tensor: `torch.arange(...)`, an index or a method of one
    (`torch.arange(n)[:, None]`, `.unsqueeze(0)`), a name bound to one (with `on_entry`, also an
    attribute the class builds as a tensor)."""
    if isinstance(node, ast.Subscript):
        return is_tensor_operand(node.value, state, module, on_entry)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not ex.called_name(node):
        return node.func.attr in TENSOR_RESULT_METHODS and is_tensor_operand(node.func.value, state, module, on_entry)
    if isinstance(node, ast.Call):
        root = ex.called_name(node).partition(".")[0]
        return root in module.torch_aliases and ex.method_name(node) not in module.source_methods
    key = key_of(node)
    kind = state.kind(key) if on_entry else state.kinds.get(key, "")
    return bool(key) and kind == TENSOR

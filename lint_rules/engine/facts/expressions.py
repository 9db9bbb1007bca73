"""What an expression is, judged from its syntax alone: names, int-valued shapes, size arguments."""

from __future__ import annotations

import ast
import collections
from collections.abc import Iterable, Iterator

INT_TYPE_NAMES = frozenset({"int"})

COERCING_BUILTINS = frozenset({"int", "float", "bool", "complex"})
COERCING_FUNCTIONS = frozenset({"operator.index", "math.floor", "math.ceil", "math.trunc"})
COERCING_METHODS = frozenset({"item", "tolist", "__index__", "__int__"})
STORING_METHODS = frozenset(
    {"__setitem__", "__setattr__", "__delitem__", "__delattr__", "update", "setdefault", "pop", "popitem", "clear"}
)
"""Methods that may store into the object they are called on (a model's outputs are a dict too)."""
TENSOR_PRESERVING_METHODS = frozenset(
    {"to", "clone", "detach", "cpu", "cuda", "long", "int", "squeeze", "view_as", "reshape_as", "contiguous"}
)
INT_VALUED_METHODS = frozenset({"numel", "dim", "ndimension", "element_size", "nelement"})
TENSOR_METHODS = frozenset(
    {"unsqueeze", "expand", "view", "reshape", "repeat", "flatten", "transpose", "permute", "float", "type_as"}
)
"""Methods that, called on a full tensor, give a full tensor."""

PROPAGATING_BUILTINS = frozenset({"abs"})
COMPARING_BUILTINS = frozenset({"max", "min"})

SIZE_FUNCTIONS = frozenset(
    {
        "arange",
        "range",
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "randperm",
        "eye",
        "tril_indices",
        "triu_indices",
        "linspace",
        "logspace",
    }
)
"""`torch.<name>` functions whose positional arguments (or `size=`, `start=`, `end=`, `step=`) are sizes."""
SIZE_KEYWORDS = frozenset(
    {"size", "start", "end", "step", "n", "m", "high", "low", "steps", "length", "split_size_or_sections"}
)
FIRST_ARG_ONLY_FUNCTIONS = frozenset({"full"})
"""`torch.full(size, fill_value)`: the fill value may be a tensor."""

SIZE_METHODS = frozenset(
    {
        "view",
        "reshape",
        "expand",
        "repeat",
        "narrow",
        "split",
        "new_zeros",
        "new_ones",
        "new_empty",
        "new_full",
        "unflatten",
        "tile",
        "chunk",
        "roll",
        "tensor_split",
        "unfold",
    }
)
FIRST_ARG_ONLY_METHODS = frozenset({"new_full"})


OPERATOR_NODES = frozenset(
    leaf
    for kind in (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    for leaf in kind.__subclasses__()
)
"""`Load`, `Store`, `Add`, `And`, `Not`, `Eq`, ...: nodes without fields (a third of a module's nodes)."""

LEAVES = OPERATOR_NODES | {ast.Name, ast.Constant, ast.alias}
"""The node types that hold no other node worth a look (a name, a literal, an import's name)."""


def statement_parts(statements: Iterable[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of each statement (each once) but those of the blocks a compound statement holds
    (its header, decorators and handlers' types are given): the statements nested in it are visited
    on their own."""
    for statement in dict.fromkeys(statements):
        pending: list[ast.AST] = [statement]
        while pending:
            node = pending.pop()
            yield node
            pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.stmt))


def walk_without(root: ast.AST, skipped: frozenset[type[ast.AST]]) -> Iterator[ast.AST]:
    """`ast.walk(root)` without the nodes of the `skipped` types (the root is always given)."""
    todo = collections.deque([root])
    while todo:
        node = todo.popleft()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                todo.extend(child for child in value if isinstance(child, ast.AST) and type(child) not in skipped)
            elif isinstance(value, ast.AST) and type(value) not in skipped:
                todo.append(value)


def dotted_name(node: ast.expr) -> str:
    """`torch.compiler.disable` -> "torch.compiler.disable"; "" for anything but names and attributes."""
    if isinstance(node, ast.Name):  # the common cases first: a name, `self.attr`
        return node.id
    if not isinstance(node, ast.Attribute):
        return ""
    if isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


def called_name(call: ast.Call) -> str:
    return dotted_name(call.func)


def is_super_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and called_name(node) == "super"


def method_name(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def getter_name(call: ast.Call) -> str:
    """The method a call runs on a receiver: `obj.m()` and `getattr(obj, "m"[, default])()` -> "m"."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    fetched = getattr_of(call.func)
    return fetched[1] if fetched else ""


def getter_receiver(call: ast.Call) -> ast.expr | None:
    """The receiver of `obj.m()` or `getattr(obj, "m")()`."""
    if isinstance(call.func, ast.Attribute):
        return call.func.value
    fetched = getattr_of(call.func)
    return fetched[0] if fetched else None


def getattr_of(node: ast.expr) -> tuple[ast.expr, str] | None:
    """`getattr(obj, "name")` or `getattr(obj, "name", default)` -> (obj, "name")."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"):
        return None
    if node.keywords or len(node.args) not in (2, 3):
        return None
    receiver, name = node.args[0], node.args[1]
    if isinstance(receiver, ast.Starred) or not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return None
    return receiver, name.value


def callee_label(call: ast.Call) -> str:
    """The last name of what a call runs: `f()` -> "f", `obj.m()` -> "m", `getattr(obj, "m")()` -> "m"."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    return getter_name(call)


def is_int_annotation(annotation: ast.expr | None) -> bool:
    """`int`, `int | None`, `Optional[int]`, `"int"`."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.replace(" ", "") in {"int", "int|None", "None|int", "Optional[int]"}
    if isinstance(annotation, ast.Name):
        return annotation.id in INT_TYPE_NAMES
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = (annotation.left, annotation.right)
        return any(is_int_annotation(side) for side in sides) and all(
            is_int_annotation(side) or is_none(side) for side in sides
        )
    if isinstance(annotation, ast.Subscript) and dotted_name(annotation.value) in {"Optional", "typing.Optional"}:
        return is_int_annotation(annotation.slice)
    return False


def is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def is_int_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def is_shape_index(node: ast.expr) -> bool:
    """`x.shape[1]`, `x.size()[-1]`."""
    if not isinstance(node, ast.Subscript) or isinstance(node.slice, ast.Slice):
        return False
    base = node.value
    if isinstance(base, ast.Attribute) and base.attr == "shape":
        return True
    return isinstance(base, ast.Call) and method_name(base) == "size" and not base.args


def is_int_valued_call(node: ast.expr) -> bool:
    """`len(x)`, `int(x)`, `x.size(1)`, `x.numel()`, `x.item()`."""
    if not isinstance(node, ast.Call):
        return False
    name = called_name(node)
    if name in {"len", "int", "operator.index"}:
        return True
    method = method_name(node)
    if method == "size":
        return bool(node.args) or any(keyword.arg == "dim" for keyword in node.keywords)
    return method in INT_VALUED_METHODS or method == "item"


def is_structurally_int(node: ast.expr) -> bool:
    """An expression whose value is a Python int whatever the names in it are bound to."""
    if is_int_literal(node) or is_shape_index(node) or is_int_valued_call(node):
        return True
    if isinstance(node, ast.Attribute) and node.attr == "ndim":
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return is_structurally_int(node.operand)
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Div):
        return is_structurally_int(node.left) and is_structurally_int(node.right)
    if isinstance(node, ast.IfExp):
        return is_structurally_int(node.body) and is_structurally_int(node.orelse)
    return False


def is_shape(node: ast.expr | None) -> bool:
    """`x.shape` or `x.size()`: a tuple of ints."""
    if isinstance(node, ast.Attribute):
        return node.attr == "shape"
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and not node.args
    )


def arguments_of(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    """Every named parameter (positional-only, ordinary, keyword-only)."""
    return [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]


def is_sequence_display(node: ast.expr) -> bool:
    return isinstance(node, (ast.List, ast.Tuple, ast.ListComp, ast.Constant)) and not is_int_literal(node)


def assigned_names(target: ast.expr) -> Iterator[ast.expr]:
    """The names and attributes a target binds, through tuples, lists and starred targets."""
    return bound_leaves(target, (ast.Name, ast.Attribute))


def bound_leaves(target: ast.expr, kinds: tuple[type[ast.expr], ...]) -> Iterator[ast.expr]:
    """The parts of `kinds` a target binds, through tuples, lists and starred targets."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from bound_leaves(element, kinds)
    elif isinstance(target, ast.Starred):
        yield from bound_leaves(target.value, kinds)
    elif isinstance(target, kinds):
        yield target


def size_arguments(call: ast.Call, torch_aliases: frozenset[str]) -> list[ast.expr]:
    """The arguments of `call` that Python needs as ints: sizes, counts, bounds."""
    name = called_name(call)
    module, _, function = name.rpartition(".")
    if name == "range" or (module in torch_aliases and function in SIZE_FUNCTIONS):
        first_only = function in FIRST_ARG_ONLY_FUNCTIONS
    elif isinstance(call.func, ast.Attribute) and call.func.attr in SIZE_METHODS:
        first_only = call.func.attr in FIRST_ARG_ONLY_METHODS
    else:
        return []
    positional = call.args[:1] if first_only else call.args
    keywords = [keyword.value for keyword in call.keywords if keyword.arg in SIZE_KEYWORDS]
    return [element for argument in [*positional, *keywords] for element in unpack_size(argument)]


def unpack_size(argument: ast.expr) -> list[ast.expr]:
    """`(b, n)` and `[b, n]` as sizes: their elements."""
    if isinstance(argument, (ast.Tuple, ast.List)):
        return list(argument.elts)
    if isinstance(argument, ast.Starred):
        return []
    return [argument]


def unpacked_pairs(target: ast.expr, value: ast.expr) -> list[tuple[ast.expr, ast.expr | None]] | None:
    """`a, b = x, y` and `a, *rest = x, y, z`: each target with its own value (None for a starred
    target, which gets a list of the values left over); None when the value is not a display that
    lines up with the target."""
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))):
        return None
    if any(isinstance(element, ast.Starred) for element in value.elts):
        return None
    starred = [index for index, element in enumerate(target.elts) if isinstance(element, ast.Starred)]
    if not starred:
        if len(target.elts) != len(value.elts):
            return None
        return list(zip(target.elts, value.elts, strict=True))
    if len(starred) > 1 or len(value.elts) < len(target.elts) - 1:
        return None
    star = starred[0]
    after = len(target.elts) - star - 1
    pairs: list[tuple[ast.expr, ast.expr | None]] = list(zip(target.elts[:star], value.elts[:star], strict=True))
    pairs.append((target.elts[star], None))
    if after:
        pairs += list(zip(target.elts[star + 1 :], value.elts[-after:], strict=True))
    return pairs


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
"""The expressions that open a scope of their own for their targets."""

LAYERS = "layers"
"""The attribute a transformers cache keeps its layers in: what it counts with."""


def layers_changed_at(node: ast.AST) -> list[str]:
    """The receivers (dotted, with each prefix: changing `cache.self_attention_cache`'s layers changes
    `cache`'s count) whose `layers` the node may change or hand on: `cache.layers = ...`,
    `cache.layers[0] = ...`, `cache.layers.append(...)` (any method), `f(cache.layers)` (but a reading builtin: `len`, `enumerate`, ...),
    `ls = cache.layers`, `cache.__dict__`, and `setattr`/`getattr`/`vars` given the receiver with a
    name that may be `layers` (`getattr(cache, "layers").append(...)`). The calls of functions that
    change the layers of what they are handed: `layer_changes`."""
    receivers = [dotted_name(receiver) or "*" for receiver in layers_receivers(node)]  # `cs[0].layers`: any object
    return [prefix for receiver in receivers for prefix in prefixes(receiver)]


def layers_receivers(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Attribute):
        changed = node.attr == LAYERS and not isinstance(node.ctx, ast.Load)
        return [node.value] if changed or node.attr == "__dict__" else []
    if isinstance(node, ast.Subscript):
        return (
            [node.value.value]
            if isinstance(node.value, ast.Attribute) and is_layers(node.value) and not isinstance(node.ctx, ast.Load)
            else []
        )
    if isinstance(node, (ast.Assign, ast.NamedExpr, ast.AnnAssign)) and node.value is not None:
        return layers_held_by(node.value)
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and not is_layers(node.iter):
        return layers_held_by(node.iter)  # `for ls in [cache.layers]`, not `for layer in cache.layers`
    if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Return, ast.AugAssign)) and node.value is not None:
        return layers_held_by(node.value)  # `return cache.layers`: the caller may change it
    if isinstance(node, ast.Lambda):
        return layers_held_by(node.body)
    if isinstance(node, ast.arguments):  # `def add(ls=cache.layers)`
        return [
            receiver
            for default in [*node.defaults, *node.kw_defaults]
            if default
            for receiver in layers_held_by(default)
        ]
    if isinstance(node, ast.Call):
        return called_on_layers(node)
    return []


def layers_held_by(value: ast.expr) -> list[ast.expr]:
    """The receivers `X` of the `X.layers` lists a value may be or hold: the value itself, an arm or
    operand of it (`X.layers or []`, `X.layers if t else []`), an element of a display
    (`(X.layers,)`, `{"l": X.layers}`, `[*X.layers]` is a copy), or a method fetched from the list
    (`X.layers.append`)."""
    if isinstance(value, ast.Attribute):
        if is_layers(value):
            return [value.value]
        fetched_from = value.value
        return [fetched_from.value] if isinstance(fetched_from, ast.Attribute) and is_layers(fetched_from) else []
    if isinstance(value, ast.BoolOp):
        return [receiver for operand in value.values for receiver in layers_held_by(operand)]
    if isinstance(value, ast.IfExp):
        return [*layers_held_by(value.body), *layers_held_by(value.orelse)]
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return [
            receiver
            for element in value.elts
            if not isinstance(element, ast.Starred)
            for receiver in layers_held_by(element)
        ]
    if isinstance(value, ast.Dict):
        return [
            receiver
            for element in [*value.keys, *value.values]
            if element is not None
            for receiver in layers_held_by(element)
        ]
    if isinstance(value, ast.NamedExpr):
        return layers_held_by(value.value)
    if isinstance(value, ast.Subscript) and isinstance(value.value, (ast.Tuple, ast.List, ast.Dict)):
        return layers_held_by(value.value)  # `[cache.layers][0]`
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return layers_held_by(value.elt)
    if isinstance(value, ast.DictComp):
        return [*layers_held_by(value.key), *layers_held_by(value.value)]
    return []


def called_on_layers(call: ast.Call) -> list[ast.expr]:
    found: list[ast.expr] = []
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr not in LIST_READING_METHODS:
        found += layers_held_by(func.value)  # a method of what may be the list: `(c.layers or []).append(x)`
    handed = [unstarred(argument) for argument in [*call.args, *(keyword.value for keyword in call.keywords)]]
    reading = dotted_name(func) in READING_BUILTINS
    for argument in handed:  # a reading builtin reads the list, not what a display or an operand holds
        if not (reading and is_layers(argument)):
            found += layers_held_by(argument)
    if dotted_name(func).rpartition(".")[2] in NAMED_ATTRIBUTE_CALLS and handed:
        name = call.args[1] if len(call.args) > 1 else None
        if not (isinstance(name, ast.Constant) and name.value != LAYERS):
            found.append(handed[0])
    return found


NAMED_ATTRIBUTE_CALLS = frozenset({"getattr", "setattr", "delattr", "__setattr__", "vars"})
LIST_READING_METHODS = frozenset({"copy", "count", "index", "__len__", "__contains__"})
"""The list's methods that read it and give back no part of it that could change it (a copy, a count)."""
READING_BUILTINS = frozenset(
    {"len", "enumerate", "zip", "iter", "reversed", "list", "tuple", "sorted", "any", "all",
     "isinstance", "hasattr", "print", "repr", "str", "id", "type", "bool"}
)  # fmt: skip
"""Builtins that read what is handed to them, and never store into it, change it or give it back (a
copy, an iterator, a count); not `getattr`, whose result may be a method that does
(`getattr(c.layers, "append")`), nor `min`/`max`, which return one of their arguments."""


def prefixes(dotted: str) -> list[str]:
    parts = dotted.split(".") if dotted else []
    return [".".join(parts[:end]) for end in range(len(parts), 0, -1)]


def is_layers(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == LAYERS


def unstarred(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Starred) else node

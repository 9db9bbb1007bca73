"""How a function of a module reaches a compiled region without being called there: handed to a
compiler (`torch.compile(fn)`, also `model=fn`, `compile` imported from torch under any name,
`torch._dynamo.optimize(...)(fn)`), or installed on an object a model's forward may run
(`Model.forward = fn`, `setattr`, a table item, a forward hook). `callgraph.CallGraph` asks these of
the statements on the lines that name the function.
"""

from __future__ import annotations

import ast
import bisect
import weakref
from collections.abc import Iterator
from typing import TypeGuard

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import GENERATION_HOOKS
from lint_rules.engine.facts.definitions import first_line_of, last_line_of, statements_at_lines
from lint_rules.engine.facts.module_text import (
    import_statements,
    lines_mentioning,
    top_level_statements,
    with_non_ascii,
)


def torch_compiled_names(
    text: str, tree: ast.Module, compilers: frozenset[str], non_ascii: list[tuple[int, str]]
) -> Iterator[str]:
    """The names of the functions the module hands to Dynamo (`compilers`: `compiler_names`;
    `non_ascii`: the text's lines outside ASCII in NFKC form): `torch.compile(fn)` (also
    `torch.compile(model=fn)`, and `compile` imported from torch under any name),
    `torch._dynamo.optimize(...)(fn)`. (`torch.jit.script(fn)` as a call is not followed: a region
    is TorchScript only as a decorator, `compiled.is_torchscript`.)"""
    if not compilers:
        return
    words = [*COMPILER_WORDS, *(name for name in compilers if "." not in name)]
    lines = lines_with_any(text, non_ascii, words, whole_words=False)
    at_lines = statements_at_lines(tree.body, lines)
    statements = [found for line in lines for found in at_lines.get(line, [])]
    for node in ex.statement_parts(statements):
        if not isinstance(node, ast.Call):
            continue
        if compiler_called(node) not in compilers:
            continue
        compiled = compiled_arguments(node)
        yield from (ex.dotted_name(value).rpartition(".")[2] for value in compiled if ex.dotted_name(value))


COMPILER_WORDS = ("compile", "optimize")
"""Every form of torch's compilers names one of these somewhere in the module."""
COMPILER_PATHS = ("compile", "_dynamo.optimize", "compiler.compile")
"""torch's compilers, under `torch`."""
COMPILER_MODULES = {"_dynamo": "optimize", "compiler": "compile"}
"""The modules of torch that hold one, and its name there."""


def compiler_names(
    tree: ast.Module, torch_aliases: frozenset[str], text: str, non_ascii: list[tuple[int, str]]
) -> frozenset[str]:
    """How the module writes torch's compilers: `torch.compile`, `th._dynamo.optimize`, a `compile`
    imported from torch (`from torch import compile as tc`), through a module of torch bound to a
    name (`import torch._dynamo as dynamo` ... `dynamo.optimize`), or a module-level name bound to one
    (`compile_fn = torch.compile`, also under `if`/`try` or as one branch of a conditional: a name
    bound to one anywhere counts, when in doubt). A function is read for a call of a compiler only
    where its lines name one (`non_ascii`: the text's lines outside ASCII in NFKC form)."""
    names = {f"{alias}.{path}" for alias in torch_aliases for path in COMPILER_PATHS}
    for statement in import_statements(tree.body):
        for module, name, bound in imported_torch_names(statement):
            if f"{module}.{name}".lstrip(".") in COMPILER_PATHS:
                names.add(bound)
            elif not module and name in COMPILER_MODULES:
                names.add(f"{bound}.{COMPILER_MODULES[name]}")
    for top_level in top_level_statements(tree.body):
        names |= {name for name, value in plain_bindings(top_level) if may_be_a_compiler(value, names)}
    naming = lines_with_any(text, non_ascii, [name.rpartition(".")[2] for name in names])
    for top_level in top_level_statements(tree.body):
        if (
            isinstance(top_level, (ast.FunctionDef, ast.AsyncFunctionDef))
            and names_any_line(top_level, naming)
            and compiles_its_argument(top_level, names)
        ):
            names.add(top_level.name)
            naming = sorted({*naming, *lines_with_any(text, non_ascii, [top_level.name])})
    return frozenset(names)


def names_any_line(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[int]) -> bool:
    """One of the sorted `lines` lies within the function, its decorators included."""
    index = bisect.bisect_left(lines, first_line_of(function))
    return index < len(lines) and lines[index] <= last_line_of(function)


def names_a_compiler(text: str, non_ascii: list[tuple[int, str]]) -> bool:
    """Cheaply: the text, or the NFKC form of one of its lines outside ASCII, names `compile` or `optimize`."""
    return any(word in text for word in COMPILER_WORDS) or bool(with_non_ascii([], non_ascii, *COMPILER_WORDS))


def lines_with_any(
    text: str, non_ascii: list[tuple[int, str]], names: list[str], whole_words: bool = True
) -> list[int]:
    """The lines where one of `names` occurs (as a word, with `whole_words`), or in the NFKC form of a
    line outside ASCII."""
    return with_non_ascii(lines_mentioning(text, sorted(set(names)), whole_words), non_ascii, *names)


def compiles_its_argument(function: ast.FunctionDef | ast.AsyncFunctionDef, compilers: set[str]) -> bool:
    """A module-level function that hands its first parameter to a compiler (`def maybe_compile(fn):
    return torch.compile(fn) if ok else fn`): used as a decorator or called on a function, it
    compiles that function."""
    parameters = [*function.args.posonlyargs, *function.args.args]
    if not parameters:
        return False
    first = parameters[0].arg
    return any(
        isinstance(node, ast.Call)
        and compiler_called(node) in compilers
        and any(isinstance(value, ast.Name) and value.id == first for value in compiled_arguments(node))
        for node in ast.walk(function)
    )


def compiler_called(call: ast.Call) -> str:
    """The name of what `call` calls, or of what the call it calls calls (`optimize(...)(fn)`)."""
    return ex.called_name(call.func) if isinstance(call.func, ast.Call) else ex.called_name(call)


def compiled_arguments(call: ast.Call) -> list[ast.expr]:
    """What a compiler's call compiles: its first argument, or `model=`; the function of a
    `functools.partial(fn, ...)` there."""
    compiled = [*call.args[:1], *(keyword.value for keyword in call.keywords if keyword.arg == "model")]
    return [value.args[0] if is_partial(value) else value for value in compiled]


def is_partial(value: ast.expr) -> TypeGuard[ast.Call]:
    return (
        isinstance(value, ast.Call) and bool(value.args) and ex.called_name(value) in ("partial", "functools.partial")
    )


def may_be_a_compiler(value: ast.expr, compilers: set[str]) -> bool:
    """`torch.compile`, or `torch.compile if fast else identity`: when in doubt, compiled."""
    if isinstance(value, ast.IfExp):
        return may_be_a_compiler(value.body, compilers) or may_be_a_compiler(value.orelse, compilers)
    if isinstance(value, ast.BoolOp):
        return any(may_be_a_compiler(operand, compilers) for operand in value.values)
    return ex.dotted_name(value) in compilers


def imported_torch_names(statement: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str, str]]:
    """(module under torch, name, the name bound) for what an import binds from torch: `from torch
    import compile as tc` -> ("", "compile", "tc"), `import torch._dynamo as dynamo` -> ("",
    "_dynamo", "dynamo")."""
    if isinstance(statement, ast.ImportFrom) and statement.module and statement.module.split(".")[0] == "torch":
        module = statement.module.removeprefix("torch").lstrip(".")
        yield from ((module, alias.name, alias.asname or alias.name) for alias in statement.names)
    elif isinstance(statement, ast.Import):
        for alias in statement.names:
            module, _, name = alias.name.rpartition(".")
            if module == "torch" and alias.asname:
                yield "", name, alias.asname


def is_installed(name: str, lines: list[int], tree: ast.Module, setattr_lines: list[int]) -> tuple[bool, list[str]]:
    """Code of the module installs the function `name` as an attribute or an item of an object (a
    model, a class, a table of attention functions): `obj.forward = fn`, `model._update_causal_mask =
    types.MethodType(fn, model)`, `Model.f = functools.partial(fn, ...)`, `setattr(obj, attr, fn)`,
    `FUNCTIONS["sdpa"] = fn`, `module.register_forward_pre_hook(fn)`, a class body's `forward = fn`.
    A model's forward may call what is installed on it, so it counts as compiled, unless installed as
    a generation method (`installed_as_generation_hook`), which runs on the host. Only the statements
    on the `lines` that name it are read. Also gives the plain names the function is bound to there
    (`fn = patched`), which may be installed in turn."""
    aliases: list[str] = []
    for statement in statements_naming(lines, tree):
        attributes = attributes_installed(name, statement, tree, setattr_lines)
        if any(not installed_as_generation_hook(attribute, name) for attribute in attributes):
            return True, []
        if not in_a_class_body(statement, tree):
            aliases += [alias for alias, value in plain_bindings(statement) if name in functions_in(value)]
    return False, aliases


def statements_naming(lines: list[int], tree: ast.Module) -> list[ast.stmt]:
    """The statements on `lines` (the lines that name a function), each once."""
    at_lines = statements_at_lines(tree.body, lines)
    return list(dict.fromkeys(found for line in lines for found in at_lines.get(line, [])))


def attributes_installed(
    name: str, statement: ast.stmt, tree: ast.Module, setattr_lines: list[int], as_itself: bool = False
) -> list[str]:
    """The attributes or items the statement installs the function `name` as (`is_installed`); with
    `as_itself`, only the attributes where what is installed is the function itself, bound or not
    (`bound_function`), not a value built from it (`lambda self: name(self) + 1`), nor an item."""
    in_a_class = in_a_class_body(statement, tree)
    may_call_setattr = spans_any(statement, setattr_lines)
    return [
        attribute
        for attribute, value in installations(statement, may_call_setattr, in_a_class, items=not as_itself)
        if (is_the_function(value, name) if as_itself else name in functions_in(value))
    ]


def is_the_function(value: ast.expr, name: str) -> bool:
    function = bound_function(value)
    return isinstance(function, ast.Name) and function.id == name


def in_a_class_body(statement: ast.stmt, tree: ast.Module) -> bool:
    """The statement stands directly in the body of a module-level class."""
    return id(statement) in class_level_statements(tree)


def class_level_statements(tree: ast.Module) -> frozenset[int]:
    """The ids of the statements that stand directly in a module-level class's body, found once per
    tree (and forgotten with it, so that no id is read for another tree's node)."""
    found = _CLASS_LEVEL.get(tree)
    if found is None:
        classes = [cls for cls in top_level_statements(tree.body) if isinstance(cls, ast.ClassDef)]
        found = _CLASS_LEVEL[tree] = frozenset(id(statement) for cls in classes for statement in cls.body)
    return found


_CLASS_LEVEL: weakref.WeakKeyDictionary[ast.Module, frozenset[int]] = weakref.WeakKeyDictionary()


def plain_bindings(statement: ast.stmt) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) for `name = value` (also annotated)."""
    if isinstance(statement, ast.Assign):
        yield from ((target.id, statement.value) for target in statement.targets if isinstance(target, ast.Name))
    elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
        yield statement.target.id, statement.value


def installed_as_generation_hook(attribute: str, name: str) -> bool:
    """Installed under a generation method's name, or kept as one under a name that ends with its own
    (`self.base_model_prepare_inputs_for_generation = base.prepare_inputs_for_generation`)."""
    return attribute in GENERATION_HOOKS or (name in GENERATION_HOOKS and attribute.endswith(name))


def spans_any(statement: ast.stmt, lines: list[int]) -> bool:
    """Whether one of the sorted `lines` lies within the statement (its first line to its last)."""
    index = bisect.bisect_left(lines, statement.lineno)
    return index < len(lines) and lines[index] <= last_line_of(statement)


def installations(
    statement: ast.stmt, may_call_setattr: bool, in_a_class: bool = False, items: bool = True
) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) for each attribute or item (`items`) a statement binds: `x.name = value` (also
    annotated, and paired through tuples), `x["name"] = value`, `setattr(x, "name", value)`, and in a
    class body (`in_a_class`) `name = value`, an attribute of the class; the name is "" where it
    cannot be read (a forward hook's too). `may_call_setattr` False (no line of the statement says
    `setattr`) skips the search for the call."""
    if in_a_class:
        yield from plain_bindings(statement)
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            yield from bound_members(target, statement.value, items)
    for node in ex.statement_parts([statement]):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FORWARD_HOOKS:
            yield "", node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "hook"), node)
    if not may_call_setattr:
        return
    for node in ex.statement_parts([statement]):
        if isinstance(node, ast.Call) and ex.called_name(node) == "setattr" and len(node.args) == 3:
            name = node.args[1]
            yield (name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else ""), node.args[2]


DISABLERS = ("compiler.disable", "_dynamo.disable")
"""`torch.compiler.disable(fn)`, `torch._dynamo.disable(fn)`: what they wrap runs eagerly."""
FORWARD_HOOKS = frozenset(
    {
        "register_forward_hook",
        "register_forward_pre_hook",
        "register_module_forward_hook",
        "register_module_forward_pre_hook",
    }
)
"""nn.Module's hooks that run inside the module's call: a compiled module runs them compiled."""


def bound_members(target: ast.expr, value: ast.expr, items: bool = True) -> Iterator[tuple[str, ast.expr]]:
    if isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value] * len(target.elts)
        if len(values) != len(target.elts):
            values = [value] * len(target.elts)
        for element, element_value in zip(target.elts, values, strict=True):
            yield from bound_members(element, element_value, items)
    elif isinstance(target, ast.Attribute):
        yield target.attr, value
    elif isinstance(target, ast.Subscript) and items:
        key = target.slice
        yield (key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else ""), value


def functions_in(value: ast.expr) -> set[str]:
    """The names a value may hand over as a function: every name and attribute in it (`fn`,
    `self._patched`, `types.MethodType(fn, model)`, `fn.__get__(model)`, `a if flag else b`), except
    the functions it calls to build the value, outside a lambda (`make(x)` hands over what `make`
    returns)."""
    found: set[str] = set()
    pending: list[tuple[ast.expr, bool]] = [(value, False)]
    while pending:
        node, in_lambda = pending.pop()
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        if isinstance(node, ast.Call) and not in_lambda:
            children: list[ast.AST] = [*node.args, *(keyword.value for keyword in node.keywords)]
            if not isinstance(node.func, ast.Name):  # `fn.__get__(model)` hands over `fn`
                children.append(node.func.value if isinstance(node.func, ast.Attribute) else node.func)
        else:
            children = list(ast.iter_child_nodes(node))
        inside_lambda = in_lambda or isinstance(node, ast.Lambda)
        pending.extend((child, inside_lambda) for child in children if isinstance(child, ast.expr))
    return found


def bound_function(value: ast.expr) -> ast.expr:
    """`fn`, `types.MethodType(fn, obj)`, `functools.partial(fn, ...)` or `fn.__get__(obj)`: the
    function itself."""
    if not isinstance(value, ast.Call):
        return value
    if isinstance(value.func, ast.Attribute) and value.func.attr == "__get__":
        return value.func.value
    wrapper = ex.called_name(value).rpartition(".")[2]
    return value.args[0] if wrapper in {"MethodType", "partial"} and value.args else value

"""Which functions and methods have callers that are all in view (`caller_arguments` reads what
they pass), and where the module or the package may reach one otherwise.

- A module-private function (`_name` at module level, not `__name__`), a function nested in
  another one, or a private method (`is_private_method`), none decorated.
- Their uses in the module (`name_uses`): each call, or None for any other use of the name.
- A private method's class must run only the module's code (`class_runs_only_module_code`).
- A lookup by computed name may reach either (`reached_by_name`), and another module of the package
  may name one (`named_in_other_modules`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.module_files import parsed_module, read_bytes
from lint_rules.engine.facts.module_text import whole_word
from lint_rules.engine.facts.package import package_files, package_top

NESTED_SCOPES = (ast.Lambda, *ex.COMPREHENSIONS)


def may_have_known_callers(definition: Definition) -> bool:
    """A function without decorators, private at module level (`_name`, not `__name__`), nested in a
    function, or a private method (`is_private_method`)."""
    node = definition.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
        return False
    if definition.parent is None:
        return node.name.startswith("_") and not node.name.endswith("__")
    return is_nested(definition) or is_private_method(definition)


def is_nested(definition: Definition) -> bool:
    return definition.parent is not None and definition.parent.is_function


def is_private_method(definition: Definition) -> bool:
    """A plain method named `_name` (not `__name`, which Python mangles, nor `__name__`) of an
    undecorated module-level class, taking a receiver: outside the package, code is taken not to
    call a private name, a subclass's code included."""
    parent, node = definition.parent, definition.node
    return (
        parent is not None
        and parent.parent is None
        and isinstance(parent.node, ast.ClassDef)
        and not parent.node.decorator_list
        and definition.name.startswith("_")
        and "__" not in definition.name  # `_Runner__step` is what `self.__step` calls in `Runner`
        and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and bool(node.args.posonlyargs or node.args.args)
    )


def receiver_parameter(definition: Definition) -> str:
    """The first parameter of a plain method (its `self`); "" for anything else."""
    node, parent = definition.node, definition.parent
    if (
        parent is None
        or not isinstance(parent.node, ast.ClassDef)
        or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ):
        return ""
    if node.name in IMPLICIT_CLASS_METHODS or not all(map(keeps_a_method_plain, node.decorator_list)):
        return ""
    positional = [*node.args.posonlyargs, *node.args.args]
    return positional[0].arg if positional else ""


IMPLICIT_CLASS_METHODS = frozenset({"__init_subclass__", "__class_getitem__", "__new__"})
"""Methods whose first parameter is the class (or, for `__new__`, whatever the caller passes)."""
NAME_HOOKS = frozenset({"__init_subclass__", "__getattr__", "__getattribute__"})
"""Hooks that may reach a class's methods by name, or stand for them."""
PLAIN_METHOD_DECORATORS = frozenset({"no_grad", "inference_mode", "enable_grad"})
"""`torch.no_grad()` and the like wrap a method and keep it a plain one (called bound on its object)."""
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


def keeps_a_method_plain(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    module, _, name = ex.dotted_name(target).rpartition(".")
    return module == "torch" and name in PLAIN_METHOD_DECORATORS


def reached_by_name(tree: ast.Module, name: str) -> bool:
    """The module may reach the function or method by a name it does not write as code: a string
    that holds it, however spelled (`"_s" "tep"`, `"\\x5fstep"`), or a lookup of a computed name
    (`getattr(obj, "_s" + "tep")`, `vars(...)`, `dir(...)`, `globals()`, `obj.__dict__`,
    `inspect.getmembers(...)`, `operator.methodcaller(...)`, `eval(...)`), or a lookup function
    handed on (`g = getattr`, `map(getattr, ...)`)."""
    callees: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callees.add(id(node.func))
        if (isinstance(node, ast.Constant) and node.value == name) or looks_up_a_computed_name(node):
            return True
        if isinstance(node, ast.Name) and node.id in LOOKUPS and id(node) not in callees:
            return True
    return False


LOOKUPS = frozenset({"getattr", "vars", "dir", "globals", "locals", "eval", "exec"})
"""Builtins that look a name up (or run code naming it) when called; handed on, they still may."""
COMPUTED_LOOKUPS = frozenset(
    {"vars", "dir", "globals", "locals", "getmembers", "getattr_static", "methodcaller", "attrgetter", "eval", "exec"}
)


def looks_up_a_computed_name(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in ("__dict__", "__getattribute__", "__getattr__")
    if not isinstance(node, ast.Call):
        return False
    called = ex.dotted_name(node.func).rpartition(".")[2]
    if called in ("getattr", "setattr", "delattr", "hasattr"):
        return len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)
    return called in COMPUTED_LOOKUPS


def uses_as_a_value(tree: ast.Module, class_name: str) -> bool:
    """The module uses the class's name other than to build it (`Runner(...)`), derive from it, test
    it (`isinstance`, `issubclass`, `super`) or annotate with it."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            allowed.add(id(node.func))
            if ex.dotted_name(node.func) in ("isinstance", "issubclass", "super"):
                allowed.update(id(argument) for argument in node.args)
        elif isinstance(node, ast.ClassDef):
            allowed.update(id(base) for base in node.bases)
        for annotation in annotations_of(node):
            allowed.update(id(inner) for inner in ast.walk(annotation))
    return any(
        isinstance(node, ast.Name) and node.id == class_name and id(node) not in allowed for node in ast.walk(tree)
    )


def annotations_of(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.arg) and node.annotation is not None:
        return [node.annotation]
    if isinstance(node, FUNCTION_NODES) and node.returns is not None:
        return [node.returns]
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    return []


def class_runs_only_module_code(method: Definition, tree: ast.Module, classes: dict[str, ast.ClassDef]) -> bool:
    """The method's class and its bases are the module's own plain classes (`object` at most from
    outside: a base outside the package may call a private hook, as transformers' beam search calls
    `self._reorder_cache(...)`), none with a decorator, a metaclass or a hook that reaches methods by
    name (`__init_subclass__`, `__getattr__`, `__getattribute__`), and the module uses their names
    only to build, derive from, test or annotate them (`Runner = wrap(Runner)` and `wrap(Runner)` may
    replace the method's callers)."""
    lineage = module_lineage(method.enclosing_class, classes)
    return lineage is not None and not any(uses_as_a_value(tree, cls.name) for cls in lineage)


def module_lineage(cls: ast.ClassDef | None, classes: dict[str, ast.ClassDef]) -> list[ast.ClassDef] | None:
    lineage: list[ast.ClassDef] = []
    pending = [cls]
    while pending:
        current = pending.pop()
        if current is None or current.decorator_list or current.keywords:
            return None
        if current in lineage:
            continue
        if any(isinstance(item, FUNCTION_NODES) and item.name in NAME_HOOKS for item in current.body):
            return None
        lineage.append(current)
        for base in current.bases:
            if not (isinstance(base, ast.Name) and base.id == "object"):
                pending.append(classes.get(base.id) if isinstance(base, ast.Name) else None)
    return lineage


def name_uses(statement: ast.stmt, name: str, as_attribute: bool = False) -> Iterator[tuple[ast.Call | None, bool]]:
    """Each call of `name` in the statement (not in the blocks it holds), `as_attribute` of any
    receiver (`receiver.name(...)`), with whether it runs in the statement's own scope; (None, False)
    for any other use of the name: read but not called, stored, deleted, or written as a string
    (`__all__`, `getattr(module, "_f")`)."""
    in_header = isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    called: set[int] = set()
    pending: list[tuple[ast.AST, bool]] = [(statement, in_header)]
    while pending:
        node, nested = pending.pop()
        if isinstance(node, ast.Call) and is_named(node.func, name, as_attribute):
            called.add(id(node.func))
            yield node, not nested
        elif (names_otherwise(node, name) or is_named(node, name, as_attribute)) and id(node) not in called:
            yield None, False
        inner = nested or isinstance(node, NESTED_SCOPES)
        pending.extend((child, inner) for child in ast.iter_child_nodes(node) if not isinstance(child, ast.stmt))


def is_named(node: ast.AST, name: str, as_attribute: bool) -> bool:
    if as_attribute:
        return isinstance(node, ast.Attribute) and node.attr == name
    return isinstance(node, ast.Name) and node.id == name


def names_otherwise(node: ast.AST, name: str) -> bool:
    """The node is the name (to be read, stored or deleted) or a string holding it."""
    if isinstance(node, ast.Name):
        return node.id == name
    return isinstance(node, ast.Constant) and node.value == name


def named_in_other_modules(path: str, name: str) -> bool:
    """Whether another module of the package may reach the function `name`, or the package cannot be
    read: a module outside a regular package, or one too large to scan."""
    top = package_top(path)
    return top is None or reached_elsewhere(top, Path(path).resolve(), name)


@functools.lru_cache(maxsize=256)
def reached_elsewhere(top: Path, this_file: Path, name: str) -> bool:
    """A file of the top package other than `this_file` imports `name`, reads it as an attribute
    (`gen._trim`) or writes it as a string, or cannot be read (also: the package is too large to
    scan). Files are read once per name and process; only those with the word are parsed."""
    files = package_files(top)
    if not files:
        return True
    word = re.compile(whole_word(name).encode())
    for file in files:
        if file == this_file:
            continue
        try:
            data = read_bytes(file)
        except OSError:
            return True
        if name.encode() in data and word.search(data) and may_reach(parsed_module(file), name):
            return True
    return False


def may_reach(tree: ast.Module | None, name: str) -> bool:
    """A module's own function of the same name, or a local, is another object: only an import, an
    attribute or a string can name another module's function."""
    return tree is None or any(names_from_outside(node, name) for node in ast.walk(tree))


def names_from_outside(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.ImportFrom):
        return any(alias.name == name for alias in node.names)
    if isinstance(node, ast.Attribute):
        return node.attr == name
    return isinstance(node, ast.Constant) and node.value == name

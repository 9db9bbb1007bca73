"""Methods of classes defined in another module of the package, called on a receiver whose class the
calling function shows: a parameter annotated with the class (`h: Helper`, `h: Helper | None`), a
local every binding of which constructs it (`h = Helper(...)`), or the class itself
(`Helper.build(...)`). `h.build_positions(past, n)` is then followed like a module-level function of
that module (its summary comes from that module's run), and `h.offset_of(cache)` returning a length
is a source.

The method is looked up in the class and its bases of the same module (with the overrides of that
module's subclasses for an annotated receiver, which may hold one); a method inherited from a class
of yet another module is not followed, nor is a receiver bound in any other way (an attribute
`self.h`, a loop target, a value returned by a call). A method is a source only on an instance
(`h.offset_of(cache)`, not `Helper.offset_of(cache)`: calls through the class are mostly a mixin's
method called for `self`, whose module is large), only when the class defines it itself (its text
is read before its module is), and only one module away.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.imports import RE_EXPORT_HOPS, re_export_source
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_files import file_bytes, file_stamp, module_file
from lint_rules.engine.facts.module_text import CALL_PARENTHESIS, TOP_LEVEL_LINE, class_header_end, defines
from lint_rules.engine.facts.name_bindings import imports_among
from lint_rules.engine.facts.receiver_classes import ReceiverClass, may_show_receivers, receiver_classes
from lint_rules.engine.flow.imported_calls import (
    ImportedFunction,
    every_import,
    file_mentions,
    local_imports,
    modules_bound,
)
from lint_rules.engine.flow.module_run import ModuleRun


def imported_methods(run: ModuleRun, call: ast.Call, caller: Definition | None) -> list[ImportedFunction]:
    """The methods of classes of other modules of the package that `receiver.m(...)` may run, when the
    calling function shows the receiver's class (one per class a name bound in more than one way
    may hold)."""
    func = call.func
    if run.load_module is None or not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return []
    function = caller.node if caller is not None and caller.is_function else None
    receiver = receiver_class(run, func.value.id, function)
    if receiver is None:
        return []
    found: list[ImportedFunction] = []
    for other, cls, file_name in classes_in_other_modules(run, receiver[0], function, func.attr):
        if func.value.id == receiver[0] and cls.name != receiver[0]:
            return []  # the class under another name: whether `C.m(obj, ...)` binds its first parameter is unclear
        family = other.facts.calls.methods_in_family(cls, func.attr, with_overrides=receiver[1])
        methods = tuple(method for method in family if method.is_function)
        if methods:
            found.append(ImportedFunction(methods, other, file_name))
    return found


def receiver_class(run: ModuleRun, name: str, function: ast.AST | None) -> ReceiverClass | None:
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if not name[:1].isupper() and not may_show_class(run, name, function):
            return None
        receivers = run.receiver_classes.get(id(function))
        if receivers is None:
            receivers = run.receiver_classes[id(function)] = receiver_classes(function)
        known, bound = receivers
        if name in known:
            return known[name]
        if name in bound:
            return None
    return (name, False) if name[:1].isupper() else None  # `Helper.build(...)`: the class itself


def may_show_class(run: ModuleRun, name: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Cheaply, before walking the function: `name` is an annotated parameter, or the function's
    text binds it to a call of a CapWords name (`name = Helper(`, `name: Helper = m.Helper(`)."""
    if any(argument.arg == name and argument.annotation is not None for argument in ex.arguments_of(function)):
        return True
    text = "\n".join(run.facts.source.lines[function.lineno - 1 : function.end_lineno])
    written = re.escape(name)  # first, so that the search looks for a literal (ten times faster)
    constructed = rf"{written}(?<![\w.]{written})\s*(?::[^=\n]*)?=\s*(?:\w+\.)*[A-Z]\w*[ \t]*\("
    return re.search(constructed, text) is not None


def classes_in_other_modules(
    run: ModuleRun, written: str, function: ast.AST | None, method: str
) -> list[tuple[ModuleRun, ast.ClassDef, str]]:
    """The classes the name `written` may hold in the calling module, where a module of the same top
    package defines them (the run of that module, the class, its file's name)."""
    own_name, root = run.facts.classes.module
    if run.load_module is None:
        return []
    found = []
    for origin in class_origins(run.facts, written, function):
        if origin[0].partition(".")[0] != own_name.partition(".")[0]:
            continue
        source, name = re_export_source(origin, root, RE_EXPORT_HOPS)
        file = module_file(source, root)
        if file is None or not defines_class_and_method(file, name, method):
            continue
        other = run.load_module(file)
        cls = other.facts.definitions.classes.get(name) if other is not None else None
        if other is not None and cls is not None:
            found.append((other, cls, file.name))
    return found


def class_origins(module: ModuleFacts, written: str, function: ast.AST | None) -> list[tuple[str, str]]:
    """(module, class) that `Helper` (imported, at module level or in the function) or `m.Helper`
    (through a name bound to a module) may name."""
    owner, _, name = written.rpartition(".")
    if owner:
        return [(source, name) for source in modules_bound(module, owner)]
    alternatives = module.classes.alternatives().get(name)
    if alternatives is not None:
        return imports_among(alternatives)
    if name in module.classes.classes:
        return []  # a class of this module: its methods are this module's
    imported = local_imports(module, function).get(name) or module.classes.imports().get(name)
    return [imported] if imported else []


def defines_class_and_method(file: Path, name: str, method: str) -> bool:
    """Cheaply, from the text: the file has `class name` at module level and a `def method(`."""
    return defines_class(file, name) and defines(file_bytes(file, file_stamp(file)), method)


def defines_class(file: Path, name: str) -> bool:
    return class_header_end(file_bytes(file, file_stamp(file)), name) >= 0


def imported_source_methods(run: ModuleRun) -> frozenset[str]:
    """Names of the methods, of the classes this module imports from its package, that return a
    source's value (`offset_of(self, cache)`: `return cache.get_seq_length()`), so that calls of them
    are sources (on a receiver whose class is shown) and the scopes calling them are walked too."""
    module = run.facts
    own_name, root = module.classes.module
    top = own_name.partition(".")[0]
    found: set[str] = set()
    for local, origin in every_import(module):
        if not top or not local[:1].isupper() or origin[0].partition(".")[0] != top:
            continue
        if run.load_module is None:
            continue
        source, name = re_export_source(origin, root, RE_EXPORT_HOPS)
        file = module_file(source, root)
        if file is None or not file_mentions(file, file_stamp(file), module.source_methods):
            continue
        mentioning = methods_mentioning(file, file_stamp(file), name, module.source_methods)
        candidates = {method for method in mentioning if called_on_a_name(module.source.text, method)}
        if not candidates or not may_show_receivers(module.source.text, local):
            continue  # the method calls first: the class name occurs all over a model file, a slower search
        other = run.load_module(file)
        cls = other.facts.definitions.classes.get(name) if other is not None else None
        if other is None or cls is None or other.summaries is None:
            continue
        found |= {
            method.name
            for method in methods_mentioning_a_source(other, cls)
            if method.name in candidates and other.summaries.returns_source(method)
        }
    return frozenset(found)


def methods_mentioning_a_source(run: ModuleRun, cls: ast.ClassDef) -> list[Definition]:
    """The class's own methods whose lines mention a source (its source methods themselves aside)."""
    definitions = run.facts.definitions
    found = [definitions.method(cls, statement.name) for statement in cls.body if isinstance(statement, FUNCTIONS)]
    return [
        method
        for method in found
        if method is not None and method.name.lstrip("_") not in run.facts.source_methods and run.mentions(method.node)
    ]


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


INDENTED_DEF = re.compile(rb"\n[ \t]+(?:async\s+)?def\s+(\w+)\s*\(")
NEXT_DEF_OR_TOP_LEVEL = re.compile(rb"\n(?:[ \t]+(?:async\s+)?def\s|[^\s#)\]}])")


@functools.lru_cache(maxsize=1024)
def methods_mentioning(file: Path, stamp: int, class_name: str, methods: frozenset[str]) -> frozenset[str]:
    """Cheaply, from the text: the names of the `def`s in the module-level `class class_name` whose
    lines (up to the next `def` or top-level line) mention a source method, the source methods
    themselves and special methods aside (`stamp`: see `module_files.file_stamp`)."""
    data = file_bytes(file, stamp)
    start = class_header_end(data, class_name)
    if start < 0:
        return frozenset()
    end = TOP_LEVEL_LINE.search(data, start)
    body = data[start : end.start() if end else len(data)]
    found: set[str] = set()
    for match in INDENTED_DEF.finditer(body):
        next_def = NEXT_DEF_OR_TOP_LEVEL.search(body, match.end())
        lines = body[match.end() : next_def.start() if next_def else len(body)]
        name = match.group(1).decode()
        if not (name.startswith("__") and name.endswith("__")) and any(method.encode() in lines for method in methods):
            found.add(name)  # a special method (`__init__`) is not called as `receiver.m(...)`
    return frozenset(found - methods)


def called_on_a_name(text: str, method: str) -> bool:
    """Cheaply, from the text: `name.method(` with a plain lowercase name other than `self`/`cls` (not
    `super().method(`, `self.attr.method(` nor `Class.method(`): an instance whose class a function
    may show."""
    call = f".{method}"
    start = text.find(call)
    while start >= 0:
        end = start + len(call)
        receiver = RECEIVER_BEFORE.search(text, max(start - 80, 0), start) if CALL.match(text, end) else None
        if receiver is not None and receiver.group(1) not in ("self", "cls") and not receiver.group(1)[:1].isupper():
            return True
        start = text.find(call, end)
    return False


RECEIVER_BEFORE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)$")
CALL = re.compile(CALL_PARENTHESIS)

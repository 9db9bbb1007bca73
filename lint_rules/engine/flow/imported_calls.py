"""Calls into the other modules of the package: `from .utils import build_positions` (absolute or
relative), a call through a name bound to the module (`from . import helpers` ... `helpers.offset_of(cache)`,
`import pkg.helpers as h` ... `h.offset_of(cache)`, `import pkg.helpers` ... `pkg.helpers.offset_of(cache)`),
and a name that the package's `__init__.py` re-exports. A name the code around the call binds itself
(`local_names`) is followed through the imports there when the module imports it too, else not. The
callee's summary comes from its own module's run, built by the loader that `analysis` gives each
module (parsed once per run, a bounded number kept), so a length passed into, or returned from, a
function of a sibling module is followed like a same-module one.

Only module-level functions of the same top package are followed, up to `analysis.MAX_MODULE_HOPS`
modules away: a length passed on from `a.py` to `b.f()` and from there to `c.g()` is reported at
`a.py`'s argument (what a callee calls in its own module is summarized there). A function returning
a length is a source one module away only (a module read for another one's sake does not look for
the sources its own imports return). Code outside the package (transformers, for a package built
on it) is known only by the tables. A module is analyzed at all only when its text names a source method (the prefilter).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import Definition
from lint_rules.engine.facts.imports import RE_EXPORT_HOPS, bound_modules, imported_names, re_export_source
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_files import file_bytes, file_stamp, module_file
from lint_rules.engine.facts.module_names import nested_imports
from lint_rules.engine.facts.module_text import CALL_PARENTHESIS, TOP_LEVEL_LINE, defines, has_call, top_level_def_start
from lint_rules.engine.facts.name_bindings import imports_among, module_named
from lint_rules.engine.flow.module_run import ModuleRun

NAME_OR_DOT = re.compile(r"[\w.]")


class ImportedFunction(NamedTuple):
    definitions: tuple[Definition, ...]
    run: ModuleRun
    """The run of the callee's module, with its summaries."""
    file_name: str


def imported_functions(run: ModuleRun, call: ast.Call, caller: Definition | None = None) -> list[ImportedFunction]:
    """The module-level functions of other modules of the package that `call` (written in `caller`'s
    code) may run, if its form says: one, or one per import of a name bound in more than one way
    (`try: from .fast import f` / `except ImportError: from .slow import f`)."""
    if run.load_module is None:
        return []
    root = run.facts.classes.module[1]
    found = (
        find_function(run, *re_export_source(origin, root, RE_EXPORT_HOPS))
        for origin in call_origins(run, call, caller)
    )
    return [function for function in found if function is not None]


def call_origins(run: ModuleRun, call: ast.Call, caller: Definition | None) -> list[tuple[str, str]]:
    """(module, name) that `f(...)` or `helpers.f(...)` may run: from the module's imports, or, where
    the code around the call binds `f` or `helpers` itself (`local_names`), from its own imports
    (none, when it binds the name otherwise)."""
    name = call.func
    while isinstance(name, ast.Attribute):
        name = name.value
    if not isinstance(name, ast.Name):
        return []
    top = run.facts.classes.module[0].partition(".")[0]
    module_level = [origin for origin in imported_origins(run.facts, call.func) if origin[0].partition(".")[0] == top]
    if not module_level:
        return []  # the module imports no such name from the package (a function's own import of one is not followed)
    holder = run.facts.calls.local_names.holder(name.id, caller, call)
    if holder.is_module_level:
        return module_level
    return origins_in(run.facts, holder.imports, call.func) if holder.scope is not None else []


def origins_in(module: ModuleFacts, statements: Sequence[ast.stmt], func: ast.expr) -> list[tuple[str, str]]:
    """(module, name) that `f` or `helpers.f` names by these imports (a function's own)."""
    name, _ = module.classes.module
    tree = ast.Module(body=list(statements), type_ignores=[])
    is_package = module.path.endswith("__init__.py")
    if isinstance(func, ast.Name):
        origin = imported_names(tree, name, is_package).get(func.id)
        return [origin] if origin else []
    owner = (
        bound_modules(tree, name, is_package).get(ex.dotted_name(func.value))
        if isinstance(func, ast.Attribute)
        else None
    )
    return [(owner, func.attr)] if owner and isinstance(func, ast.Attribute) else []


def imported_origins(module: ModuleFacts, func: ast.expr) -> list[tuple[str, str]]:
    """(module, name) that `f` is imported from (each import that may hold), or that `helpers.f`, `m.f`
    or `pkg.mod.f` names (`from . import helpers`, `import pkg.mod as m`, `import pkg.mod`)."""
    if isinstance(func, ast.Name):
        alternatives = module.classes.alternatives().get(func.id)
        if alternatives is not None:
            return imports_among(alternatives)
        origin = module.classes.imports().get(func.id)
        return [origin] if origin else []
    if isinstance(func, ast.Attribute):
        return [(owner, func.attr) for owner in modules_bound(module, ex.dotted_name(func.value))]
    return []


def modules_bound(module: ModuleFacts, local: str) -> list[str]:
    """The modules a dotted local name may be bound to: one, or one per import of a name bound in
    more than one way (`try: from . import fast as ops` / `except ImportError: from . import slow as ops`)."""
    alternatives = module.classes.alternatives().get(local)
    if alternatives is not None:
        return [module_named(origin) for origin in imports_among(alternatives)]
    owner = module.bound_modules.get(local)
    return [owner] if owner else []


def bound_in_more_than_one_way(module: ModuleFacts, func: ast.expr) -> bool:
    """`f` is a name the module may bind to a function of its own or an imported one (`alternatives`)."""
    return isinstance(func, ast.Name) and func.id in module.classes.alternatives()


def imported_target(module: ModuleFacts, func: ast.expr, function: ast.AST | None = None) -> tuple[str, str] | None:
    """(module, qualified name) of an imported function or of a static method called through an
    imported class: `f` -> (m, "f"), `Converter.f` -> (m, "Converter.f"); an import inside
    `function` wins over the module's."""
    imports = {**module.classes.imports(), **local_imports(module, function)}
    if isinstance(func, ast.Name):
        return imports.get(func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in imports:
        source, name = imports[func.value.id]
        return (source, f"{name}.{func.attr}")
    return None


def local_imports(module: ModuleFacts, function: ast.AST | None) -> dict[str, tuple[str, str]]:
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    statements = ast.Module(body=list(nested_imports(function.body)), type_ignores=[])
    name, _ = module.classes.module
    return imported_names(statements, name, module.path.endswith("__init__.py"))


def find_function(run: ModuleRun, source: str, name: str) -> ImportedFunction | None:
    """The module-level `def name` of module `source` of the same top package, with its module's run
    (every `def` of that name, when the module defines it more than once: in `if`/`else` arms)."""
    own_name, root = run.facts.classes.module
    if not own_name or source.partition(".")[0] != own_name.partition(".")[0] or run.load_module is None:
        return None
    file = module_file(source, root)
    if file is None or not defines_function(file, file_stamp(file), name):
        return None
    other = run.load_module(file)
    if other is None:
        return None
    found = [definition for definition in other.facts.definitions.functions_named(name) if definition.parent is None]
    return ImportedFunction(tuple(found), other, file.name) if found else None


def imported_source_functions(run: ModuleRun) -> frozenset[str]:
    """The names the module imports from the package whose calls are sources (their function returns
    a source's value), so that the scopes calling them are walked too."""
    found = set()
    module = run.facts
    own_name, root = module.classes.module
    top = own_name.partition(".")[0]
    if not top:
        return frozenset()
    for local, origin in [*every_import(module), *module_attribute_calls(module, top, root)]:
        if local.rpartition(".")[2][:1].isupper() or origin[0].partition(".")[0] != top:
            continue  # a class (CapWords) is not a module-level function
        candidate = may_return_source(origin, root, module.source_methods)  # from cached facts of the file
        if candidate is None or not has_call(module.source.text, local):
            continue
        imported = find_function(run, *candidate)
        summaries = imported.run.summaries if imported else None
        if imported and summaries is not None and any(map(summaries.returns_source, imported.definitions)):
            found.add(local.rpartition(".")[2])
    return frozenset(found)


def every_import(module: ModuleFacts) -> Iterator[tuple[str, tuple[str, str]]]:
    """(local name, (module, name)) for the last import of each name and every other import that may
    hold (`alternatives`)."""
    yield from module.classes.imports().items()
    for local, bindings in module.classes.alternatives().items():
        yield from ((local, origin) for origin in imports_among(bindings))


def every_module_binding(module: ModuleFacts) -> Iterator[tuple[str, str]]:
    """(local name, module) for each module a local name may be bound to (`modules_bound`)."""
    yield from module.bound_modules.items()
    for local, bindings in module.classes.alternatives().items():
        yield from ((local, module_named(origin)) for origin in imports_among(bindings))


def module_attribute_calls(module: ModuleFacts, top: str, root: Path | None) -> Iterator[tuple[str, tuple[str, str]]]:
    """(`m.f`, (module, "f")) for each call `m.f(` in the text through a name bound to a module of the
    top package (`from . import m`, `import top.m as m`, `import top.m`)."""
    text = module.source.text
    for local, source in every_module_binding(module):
        if not local[:1].islower() or source.partition(".")[0] != top:
            continue  # modules are named in lower case; a class or a constant is not one
        file = module_file(source, root)  # kept per module name: cheaper than a search of the text
        if file is None or not file_mentions(file, file_stamp(file), module.source_methods):
            continue  # not a module, or one that never names a source (no function returning one)
        if f"{local}." not in text:
            continue
        calls = re.finditer(rf"{re.escape(local)}\.(\w+)" + CALL_PARENTHESIS, text)  # a literal first: a fast search
        names = [call.group(1) for call in calls if call.start() == 0 or not NAME_OR_DOT.match(text[call.start() - 1])]
        for name in dict.fromkeys(names):
            yield f"{local}.{name}", (source, name)


def may_return_source(origin: tuple[str, str], root: Path | None, methods: frozenset[str]) -> tuple[str, str] | None:
    """Cheaply, before any parse: where the name really comes from, when that module-level `def`
    mentions a source method in its own lines (None otherwise)."""
    origin = re_export_source(origin, root, RE_EXPORT_HOPS)
    file = module_file(origin[0], root)
    if file is None:
        return None
    stamp = file_stamp(file)
    if not file_mentions(file, stamp, methods) or not function_mentions(file, stamp, origin[1], methods):
        return None
    return origin


@functools.lru_cache(maxsize=1024)
def file_mentions(file: Path, stamp: int, methods: frozenset[str]) -> bool:
    data = file_bytes(file, stamp)
    return any(method.encode() in data for method in methods)


@functools.lru_cache(maxsize=4096)
def defines_function(file: Path, stamp: int, name: str) -> bool:
    """Cheaply, from the text: the file has a `def name(` (so a class or a constant is never parsed for)."""
    return defines(file_bytes(file, stamp), name)


@functools.lru_cache(maxsize=4096)
def function_mentions(file: Path, stamp: int, name: str, methods: frozenset[str]) -> bool:
    """Cheaply, from the text: the module-level `def name(` mentions a source method in its lines (up
    to the next line that starts in column 0), so it may return a source's value."""
    data = file_bytes(file, stamp)
    start = top_level_def_start(data, name)
    if start < 0:
        return False
    end = TOP_LEVEL_LINE.search(data, start + 1)
    body = data[start : end.start() if end else len(data)]
    return any(method.encode() in body for method in methods)

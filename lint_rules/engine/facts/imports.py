"""Where a module's imported names come from: the module and name each `from m import x` binds, the
modules a dotted local name may be, and the module a name re-exported by a package's `__init__.py`
really comes from. Only within the package the file belongs to (found by walking up the folders
that hold an `__init__.py`, `module_files`)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from lint_rules.engine.facts.module_files import file_stamp, module_file, parsed_module
from lint_rules.engine.facts.module_text import import_statements


def imported_names(tree: ast.Module, module_name: str, is_package: bool) -> dict[str, tuple[str, str]]:
    """Local name -> (absolute module, name in that module) for every `from m import x [as y]`."""
    found: dict[str, tuple[str, str]] = {}
    for statement in import_statements(tree.body):
        if not isinstance(statement, ast.ImportFrom):
            continue
        source = absolute_module(statement, module_name, is_package)
        if not source:
            continue
        for alias in statement.names:
            if alias.name != "*":
                found[alias.asname or alias.name] = (source, alias.name)
    return found


def bound_modules(tree: ast.Module, module_name: str, is_package: bool) -> dict[str, str]:
    """Dotted local name -> the absolute module it may name, for calls `local.f(...)`: `import a.b as m`
    (m -> a.b), `import a.b` (a -> a, a.b -> a.b) and `from a import b` (b -> a.b, which names a
    module only when such a module exists: callers look it up)."""
    found: dict[str, str] = {}
    for statement in import_statements(tree.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                parts = alias.name.split(".")
                if alias.asname:
                    found[alias.asname] = alias.name
                else:
                    found.update((".".join(parts[:end]), ".".join(parts[:end])) for end in range(1, len(parts) + 1))
    for local, (source, name) in imported_names(tree, module_name, is_package).items():
        found[local] = f"{source}.{name}"
    return found


def absolute_module(statement: ast.ImportFrom, module_name: str, is_package: bool) -> str:
    if statement.level == 0:
        return statement.module or ""
    package = module_name.split(".") if module_name else []
    if not is_package:
        package = package[:-1]
    if statement.level - 1 > len(package):
        return ""
    base = package[: len(package) - (statement.level - 1)]
    return ".".join([*base, *([statement.module] if statement.module else [])])


RE_EXPORT_HOPS = 3


def re_export_source(origin: tuple[str, str], root: Path | None, hops: int) -> tuple[str, str]:
    """Where a name imported from a package's `__init__.py` really comes from (its own imports only)."""
    file = module_file(origin[0], root)
    if hops <= 0 or file is None or file.name != "__init__.py":
        return origin
    re_exported = package_imports(file, file_stamp(file), origin[0]).get(origin[1])
    return re_export_source(re_exported, root, hops - 1) if re_exported else origin


@functools.lru_cache(maxsize=256)
def package_imports(file: Path, stamp: int, package: str) -> dict[str, tuple[str, str]]:
    """What a package's `__init__.py` imports, by local name (`stamp`: see `module_files.file_stamp`)."""
    tree = parsed_module(file)
    return imported_names(tree, package, is_package=True) if tree else {}

"""Compiled reach across modules, for methods: a method (plain, class or static) of a module-level
class of one module of a package runs compiled when a compiled region of another module of the same
top package calls it:

- through the class or a related class of its module, imported by name (absolute or relative, also
  re-exported by a package's `__init__.py`) or through its module's name: `Cache.from_legacy_cache(...)`,
  `cache_utils.Cache.from_legacy_cache(...)`;
- as `self.m(...)` / `cls.m(...)` in a class that derives from such a class and does not define `m`
  in its module (`super().m(...)`: above the class itself), as a model's `forward` calls a
  `_update_causal_mask` inherited from a base of another module;
- on a receiver whose class the calling function shows (`receivers`): `helper = Helper(...)`,
  `helper: Helper`, or `self.helper` where the class's `__init__` builds `self.helper = Helper(...)`.

The related classes are the method's class, its bases and its subclasses in its own module: a call
through any of them may run it (a subclass that overrides the method is counted too: when in
doubt, compiled). A call on a receiver whose class is unknown, a class built from another module's
class two modules away and a constructor call (`Helper(...)` running `__init__`) are not followed;
a caller's own compiled reach is searched for in turn, as for functions (`package.MAX_MODULE_HOPS`).

Not searched: the methods named as transformers' `GenerationMixin` defines them (`generate`,
`prepare_inputs_for_generation`, `_prefill`, ...: `caches.GENERATION_HOOKS_5X`), which the generation
loop runs on the host between forwards; other modules call them from there, or from their own
overrides (`super().generate(...)`), and a search for those calls would read most of a model library.

Files are found by their text: those with a call `.name(` (one read of each file of the package per
method name and process: a file edited during the run keeps the calls it first had), then the
class's name and the receiver form of the call, before they are parsed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.caches import CACHE_METHODS_CALLED_FROM_FORWARD, GENERATION_HOOKS_5X
from lint_rules.engine.facts.definitions import Definition, DefinitionIndex, caller_class, calls_at
from lint_rules.engine.facts.imports import RE_EXPORT_HOPS, bound_modules, imported_names, re_export_source
from lint_rules.engine.facts.module_files import file_bytes, file_stamp, module_name_of, parsed_module, read_bytes
from lint_rules.engine.facts.module_names import nested_imports
from lint_rules.engine.facts.module_text import def_of, lines_mentioning, torch_aliases
from lint_rules.engine.facts.package import Graph, ModuleHop, package_files
from lint_rules.engine.facts.receiver_classes import may_show_receivers, receiver_classes
from lint_rules.lines import split_lines

ClassNamer = Callable[[str], bool]
"""Whether a class written so in the calling module (`Cache`, `cache_utils.Cache`) is one of the
method's related classes."""


def compiled_method_caller_elsewhere(
    path: str, method: str, classes: frozenset[str], graph: type[Graph], hop: ModuleHop
) -> str:
    """Why the method `method` of a module-level class of the module at `path` runs compiled because
    another module of its package calls it from a compiled region (`classes`: the names of its
    related classes in that module); "" when none does."""
    module_name, root = module_name_of(path)
    if root is None or not module_name or not classes:
        return ""
    for file in other_files_calling(path, method):
        region = compiled_method_call_in(file, (module_name, root), method, classes, graph, hop)
        if region:
            return region
    return ""


def other_files_calling(path: str, method: str) -> list[Path]:
    """The package's other files whose text has a call `.method(`, for a searched method."""
    module_name, root = module_name_of(path)
    if root is None or not module_name or not is_searched(method):
        return []
    this_file = Path(path).resolve()
    return [file for file in files_calling(root / module_name.split(".")[0], [method])[method] if file != this_file]


def is_searched(method: str) -> bool:
    return method not in GENERATION_HOOKS_5X


def look_for_calls(path: str, methods: Iterable[str]) -> None:
    """Reads the package of the module at `path` once for the calls of every method of `methods`
    not looked for yet (the methods one search for a compiled caller reached)."""
    module_name, root = module_name_of(path)
    if root is not None and module_name:
        files_calling(root / module_name.split(".")[0], [method for method in methods if is_searched(method)])


MAX_METHOD_NAMES = 256
_CALLING: BoundedCache[tuple[Path, str], tuple[Path, ...]] = BoundedCache(MAX_METHOD_NAMES)
"""The files that call a method name, by top package and name: a file edited during the run keeps
the calls it first had."""


def files_calling(top: Path, methods: list[str]) -> dict[str, tuple[Path, ...]]:
    """The files of a top package with a call `x.method(...)` in their text, for each method; one
    read of each file of the package for all the methods not looked for yet in this process."""
    missing = [method for method in dict.fromkeys(methods) if (top, method) not in _CALLING]
    if missing:
        calls = {
            method: (b"." + method.encode(), re.compile(rb"\." + re.escape(method.encode()) + rb"\s*\("))
            for method in missing
        }
        found: dict[str, list[Path]] = {method: [] for method in missing}
        for file in package_files(top):
            try:
                data = read_bytes(file)
            except OSError:
                continue
            for method, (attribute, call) in calls.items():
                if attribute in data and call.search(data):  # a literal first: twice as fast
                    found[method].append(file)
        for method in missing:
            _CALLING[top, method] = tuple(found[method])
    return {method: _CALLING[top, method] for method in methods}


def compiled_method_call_in(
    file: Path,
    module: tuple[str, Path | None],
    method: str,
    classes: frozenset[str],
    graph_type: type[Graph],
    hop: ModuleHop,
) -> str:
    """The compiled region of `file` that calls `method` through one of `classes` of `module`, if any."""
    data = file_bytes(file, file_stamp(file))
    if not any(name.encode() in data for name in classes):
        return ""  # the class is named wherever one of these calls can be
    text = data.decode("utf-8", errors="replace")
    if not may_call_through(text, method, classes) or only_overrides_extend(text, method):
        return ""
    tree = parsed_module(file)
    if tree is None:
        return ""
    names_class = class_namer(tree, str(file), module, classes)
    definitions, graph = module_graph(file, tree, text, graph_type, hop.next())
    for line in lines_mentioning(text, [method], whole_words=True):
        caller = definitions.innermost_function_at(line)
        if caller is None or not any(
            calls_method(call, caller, graph, names_class) for call in calls_at(caller.node, line, method)
        ):
            continue
        region = graph.compiled_region(caller)
        if region:
            return f"called from {caller.qualname} in {file.name} (line {line}), which is {region}"
    return ""


MAX_GRAPHS = 8
_GRAPHS: BoundedCache[tuple[Path, int, ModuleHop], tuple[ast.Module, DefinitionIndex, Graph]] = BoundedCache(MAX_GRAPHS)
"""The call graphs of the modules searched last: the methods of a module's classes (a cache's
layers) are searched for in the same few modules in turn."""


def module_graph(
    file: Path, tree: ast.Module, text: str, graph_type: type[Graph], hop: ModuleHop
) -> tuple[DefinitionIndex, Graph]:
    """The definitions and call graph of the module in `file` (its tree `tree`) at `hop` of a search,
    kept while it is unchanged."""
    key = (file, file_stamp(file), hop)
    kept = _GRAPHS.get(key)
    if kept is None or kept[0] is not tree:
        definitions = DefinitionIndex(tree, text)
        graph = graph_type(tree, text, definitions, torch_aliases(tree), str(file), hop)
        kept = _GRAPHS[key] = (tree, definitions, graph)
    return kept[1], kept[2]


def only_overrides_extend(text: str, method: str) -> bool:
    """Cheaply, from the text: every line that names `method` is an undecorated `def method(` or lies
    in the body of one (`super().method(...)` in an override), and the name is not one a region has
    by itself (a forward, a cache method model code calls). Such an override runs compiled only where
    its name is called or installed, which names it somewhere else: no compiled region of this module
    runs the calls in it."""
    if method == "forward" or method.endswith("_forward") or method in CACHE_METHODS_CALLED_FROM_FORWARD:
        return False
    lines = split_lines(text)  # as `lines_mentioning` counts them: not at form feeds or `\u2028`
    for line in lines_mentioning(text, [method], whole_words=True):
        index = line - 1
        if def_of(method).match(lines[index].lstrip().removeprefix("async").lstrip()):
            if is_decorated(lines, index):
                return False
        elif enclosing_def(lines, index) != method:
            return False
    return True


DEF_NAME = re.compile(r"(?:async\s+)?def\s+(\w+)")


def is_decorated(lines: list[str], index: int) -> bool:
    """The `def` on line `index` has a decorator: a line starting with `@` at its indentation after
    the previous statement there that is not one (its sibling `def` or `class`, or the class's header)."""
    indentation = indentation_of(lines[index])
    for line in reversed(lines[:index]):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#") or indentation_of(line) > indentation:
            continue
        if indentation_of(line) < indentation or stripped.startswith(("def ", "async def ", "class ")):
            return False
        if stripped.startswith("@"):
            return True
    return False


def enclosing_def(lines: list[str], index: int) -> str:
    """The name of the innermost `def` whose body holds line `index`, by indentation ("" for none)."""
    threshold = indentation_of(lines[index])
    for line in reversed(lines[:index]):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#") or indentation_of(line) >= threshold:
            continue
        if stripped.startswith("class "):
            return ""
        found = DEF_NAME.match(stripped)
        if found:
            return found.group(1)
        threshold = indentation_of(line)
    return ""


def indentation_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def may_call_through(text: str, method: str, classes: frozenset[str]) -> bool:
    """Cheaply, from the text: a call `receiver.method(` whose receiver may be one of `classes`
    (`Cache.m(`, `mod.Cache.m(`), an instance of a subclass (`self`, `cls`, `super()`, in a module
    whose class statements name one of them among their bases), or a name the module shows to be
    one (`h = Helper(`, `h: Helper`, `self.h = Helper(`)."""
    receivers = set()
    call = f".{method}"
    start = text.find(call)
    while start >= 0:
        end = start + len(call)
        if CALL_PARENTHESIS.match(text, end):
            receiver = RECEIVER_BEFORE.search(text, max(start - 200, 0), start)
            receivers.add(SUPER_CALL.sub("super()", receiver.group(1)) if receiver else "")
        start = text.find(call, end)
    if receivers & {"self", "cls", "super()"} and derives_from_any(text, classes):
        return True
    if any(receiver.rpartition(".")[2] in classes for receiver in receivers):
        return True
    shown = any(is_plain_or_attribute(receiver) for receiver in receivers)
    return shown and any(may_show_receivers(text, name) for name in classes)


def is_plain_or_attribute(receiver: str) -> bool:
    """A receiver whose class a function (`h`) or its class's `__init__` (`self.h`) may show."""
    if receiver.startswith("self."):
        return receiver.count(".") == 1
    return bool(receiver) and "." not in receiver and receiver not in ("self", "cls", "super()")


CALL_PARENTHESIS = re.compile(r"\s*\(")
RECEIVER_BEFORE = re.compile(r"(super[ \t]*\([ \t]*\)|(?<![\w.])[A-Za-z_][\w.]*)$")
SUPER_CALL = re.compile(r"^super[ \t]*\([ \t]*\)$")


def derives_from_any(text: str, classes: frozenset[str]) -> bool:
    """Cheaply: a `class` statement whose bases (up to the first `)`) name one of `classes`."""
    named = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(classes))) + r")(?!\w)")
    return any(named.search(header.group(1)) for header in CLASS_HEADER.finditer(text))


CLASS_HEADER = re.compile(r"\bclass[ \t]+\w+[ \t]*\(([^)]*)\)")


def class_namer(tree: ast.Module, path: str, module: tuple[str, Path | None], classes: frozenset[str]) -> ClassNamer:
    """Whether a class written so in the module at `path` is one of `classes` of `module`: imported
    by name (at module level or in any function: when in doubt, compiled), or through a name bound
    to its module or to a package that re-exports it."""
    module_name, root = module
    own_name, _ = module_name_of(path)
    is_package = path.endswith("__init__.py")
    statements = ast.Module(body=list(nested_imports(tree.body)), type_ignores=[])
    imported = {**imported_names(statements, own_name, is_package), **imported_names(tree, own_name, is_package)}

    def is_related(origin: tuple[str, str]) -> bool:
        source = re_export_source(origin, root, RE_EXPORT_HOPS)
        return source[0] == module_name and source[1] in classes

    local = {name for name, origin in imported.items() if origin[1] in classes and is_related(origin)}
    modules = bound_modules(tree, own_name, is_package)

    def names_class(written: str) -> bool:
        owner, _, name = written.rpartition(".")
        if not owner:
            return name in local
        return owner in modules and name in classes and is_related((modules[owner], name))

    return names_class


def calls_method(call: ast.Call, caller: Definition, graph: Graph, names_class: ClassNamer) -> bool:
    """`call` may run the method: through a related class, `self`/`cls`/`super()` of a class that
    inherits it from one, a receiver the caller shows to hold one, or `self.attr` where the class's
    `__init__` builds `self.attr = Helper(...)`."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    if names_class(ex.dotted_name(receiver)):
        return True
    cls = caller_class(caller)
    if cls is not None and isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
        return inherits(cls, func.attr, graph, names_class, above_itself=False)
    if cls is not None and ex.is_super_call(receiver):
        return inherits(cls, func.attr, graph, names_class, above_itself=True)
    if isinstance(receiver, ast.Name) and isinstance(caller.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        known = receiver_classes(caller.node)[0].get(receiver.id)
        return known is not None and names_class(known[0])
    attribute = ex.dotted_name(receiver)
    if cls is not None and attribute.startswith("self.") and attribute.count(".") == 1:
        built = [graph.attribute_classes(member).get(attribute[5:], "") for member in graph.lineage(cls)]
        return any(names_class(name) for name in built if name)
    return False


def inherits(cls: ast.ClassDef, method: str, graph: Graph, names_class: ClassNamer, above_itself: bool) -> bool:
    """A class (or, `above_itself`, its bases) that does not define `method` in its own module and
    derives from a related class there."""
    lineage = graph.lineage(cls)
    if any(graph.own_method(member, method) for member in lineage[1 if above_itself else 0 :]):
        return False
    return any(names_class(ex.dotted_name(base)) for member in lineage for base in member.bases)

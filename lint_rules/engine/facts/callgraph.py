"""Calls between the functions of one module, and which functions a compiled region reaches.

A call is resolved to same-module definitions when its form says which: `f(...)` (a module function
or a nested `def` in scope), `self.m(...)` / `cls.m(...)` (a method of the class or of a related
class of the module: a base, or a subclass that overrides it), `super().m(...)`, and
`self.attr(...)` / `self.attr.m(...)` where the class assigns `self.attr = SomeClass(...)`.

Compiled reach works backwards from a function: a function is compiled if it is a compiled region
itself (`forward`, a compile/jit decorator, assigned as a `forward`, passed to `torch.compile`, a
cache method that model code calls from its `forward`), is nested in one, or is called from one.
Callers are found by the text of the function's name, then checked on the tree; a call whose
receiver is unknown (`obj.m(...)`) counts as a call of every method `m` of the module: when in
doubt, a fix is unsafe. Where the module has no compiled caller, the functions the search reached
are looked for in the package's other modules (`package`, `package_methods`).
"""

from __future__ import annotations

import ast
import collections
import functools
import os
from collections.abc import Hashable, Iterator

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.engine.facts.compiled import cache_protocol_region, compiled_region_of, is_never_compiled
from lint_rules.engine.facts.definitions import (
    Definition,
    DefinitionIndex,
    caller_class,
    calls_at,
    class_lineage,
    simple_statements,
    statements_at,
)
from lint_rules.engine.facts.installed import (
    DISABLERS,
    attributes_installed,
    compiler_names,
    functions_in,
    installations,
    is_installed,
    names_a_compiler,
    plain_bindings,
    statements_naming,
    torch_compiled_names,
)
from lint_rules.engine.facts.local_names import LocalNames
from lint_rules.engine.facts.module_text import lines_mentioning, with_non_ascii
from lint_rules.engine.facts.package import (
    MAX_MODULE_HOPS,
    ModuleHop,
    compiled_caller_elsewhere,
    has_callers_elsewhere,
    named_elsewhere,
)
from lint_rules.engine.facts.package_methods import (
    compiled_method_caller_elsewhere,
    look_for_calls,
    other_files_calling,
)

MAX_CALL_DEPTH = 12
MAX_PACKAGE_SEARCHES = 16
"""Module-level functions of one module whose callers in the package's other modules are searched
(each search reads every file of the package that names the function); past that, a function with
no compiled caller in its module is taken as compiled, as one too many calls away is. The released
packages of benchmarks/real_code.py search at most 6 in a module; torch's ONNX exporter, with
`--source-methods size`, asked for some 500 in one module and took minutes."""
_SEARCHED: BoundedCache[tuple[str, str], set[str]] = BoundedCache(1024)
"""The functions of each module (by path) whose callers in other modules were searched in this
process, for each module analyzed: the budget is the analyzed module's for the whole run, so that
the fixer's later rounds, which analyze the rewritten module again, take the same functions as
compiled as its first, whatever other modules were analyzed before."""


def may_search_callers_of(hop: ModuleHop, path: str, name: str) -> bool:
    searched = _SEARCHED.get((hop.origin, path))
    if searched is None:
        searched = _SEARCHED[hop.origin, path] = set()
    if name not in searched and len(searched) >= MAX_PACKAGE_SEARCHES:
        return False
    searched.add(name)
    return True


SEARCHING: set[tuple[str, Hashable]] = set()
"""The functions (module path, `CallGraph.search_key`) whose callers in other modules are being searched."""


class CycleCuts:
    """How many times a search met a function already being searched: an answer found below such a
    meeting may lack what the search further up finds, so it is not kept."""

    count = 0


CYCLE_CUTS = CycleCuts()
TAKEN_AS_COMPILED_PAST_HOPS = (
    f"callers more than {MAX_MODULE_HOPS} modules away not searched, and another module names it: taken as compiled"
)


class CallGraph:
    def __init__(
        self,
        tree: ast.Module,
        text: str,
        definitions: DefinitionIndex,
        torch_aliases: frozenset[str],
        path: str = "",
        hop: ModuleHop | None = None,
    ) -> None:
        """`path`: the module's file, whose package is searched for compiled callers in other modules
        ("" for none: the module is judged on its own); `hop`: where the module stands in a search
        that another module's analysis started (None: the module is the one analyzed)."""
        self.path = path
        self.hop = hop or ModuleHop(path)
        self.tree = tree
        self.text = text
        self.definitions = definitions
        self.torch_aliases = torch_aliases
        self._regions: dict[int, str] = {}
        self._attribute_classes: dict[int, dict[str, str]] = {}
        self._compiled_names: frozenset[str] | None = None
        self._installed: dict[str, bool] = {}
        self._aliases: dict[str, list[str]] = {}
        self._lines_naming: dict[str, list[int]] = {}
        self._lineages: dict[int, list[ast.ClassDef]] = {}
        self._callers_elsewhere: dict[Hashable, str] = {}
        """What `compiled_caller_elsewhere` found, by `search_key`."""
        self.local_names = LocalNames(text, definitions)

    # ----- resolving a call -------------------------------------------------------------------

    def callees(self, call: ast.Call, caller: Definition | None, with_overrides: bool = True) -> list[Definition]:
        """The same-module functions `call` runs, when its form says which (else none); with
        `with_overrides`, also the subclasses' overrides that `self.m(...)` may dispatch to."""
        func = call.func
        if isinstance(func, ast.Name):
            named = func.id in self.definitions.defined_names or func.id in self.definitions.function_aliases
            return self.visible_functions(func.id, caller, call) if named else []
        if not isinstance(func, ast.Attribute):
            return []
        receiver = func.value
        cls = caller_class(caller)
        if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls") and cls is not None:
            if func.attr not in self.definitions.defined_names:
                return self.submodule_call(cls, func.attr)
            return self.methods_in_family(cls, func.attr, with_overrides) or self.submodule_call(cls, func.attr)
        if func.attr not in self.definitions.defined_names:
            return []
        if ex.is_super_call(receiver) and cls is not None:
            return [found for base in self.lineage(cls)[1:] for found in self.own_method(base, func.attr)][:1]
        if isinstance(receiver, ast.Name) and receiver.id in self.definitions.classes:
            if not self.local_names.holder(receiver.id, caller, call).is_module_level:
                return []  # a class name the caller binds itself
            return self.methods_in_family(self.definitions.classes[receiver.id], func.attr, with_overrides=False)
        attribute_class = self.attribute_class(receiver, cls)
        if attribute_class is not None:
            return self.methods_in_family(attribute_class, func.attr, with_overrides)
        return []

    def submodule_call(self, cls: ast.ClassDef, attribute: str) -> list[Definition]:
        """`self.attr(...)` where the class builds `self.attr = SomeClass(...)`: its `forward` or `__call__`."""
        attribute_class = self.definitions.classes.get(self.attribute_classes(cls).get(attribute, ""))
        if attribute_class is None:
            return []
        return self.methods_in_family(attribute_class, "forward") or self.methods_in_family(attribute_class, "__call__")

    def visible_functions(self, name: str, caller: Definition | None, call: ast.Call) -> list[Definition]:
        """What a call of `name` in `caller` runs: the `def`s of the function around the call that binds
        the name (none, when it binds it otherwise: a parameter, an assignment; `local_names`), else
        the module's functions of that name or the class's `__init__`."""
        holder = self.local_names.holder(name, caller, call)
        if holder.inner:
            return []
        scope = holder.scope
        if scope is not None and isinstance(scope.node, ast.ClassDef):
            return self.own_method(scope.node, name)  # a `def` of the class body, called in the body
        if scope is not None:
            nested = self.definitions.nested_in(scope)
            return [found for found in nested if found.parent is scope and found.is_function and found.name == name]
        found = [found for found in self.definitions.functions_named(name) if found.parent is None]
        for alias in sorted(self.definitions.function_aliases.get(name, frozenset())):
            found += [held for held in self.definitions.functions_named(alias) if held.parent is None]
        if found:
            return found
        cls = self.definitions.classes.get(name)
        return self.own_method(cls, "__init__") if cls is not None else []

    def methods_in_family(self, cls: ast.ClassDef, name: str, with_overrides: bool = True) -> list[Definition]:
        """`m` as `self.m` may mean in `cls`: the nearest definition in its lineage, and overrides in
        the module's subclasses of `cls`."""
        inherited = [found for base in self.lineage(cls) for found in self.own_method(base, name)][:1]
        if not with_overrides:
            return inherited
        overrides = [
            found
            for found in self.definitions.functions_named(name)
            if found.enclosing_class is not None
            and found.enclosing_class is not cls
            and cls in self.lineage(found.enclosing_class)
        ]
        return inherited + overrides

    def own_method(self, cls: ast.ClassDef, name: str) -> list[Definition]:
        found = self.definitions.method(cls, name)
        return [found] if found is not None else []

    def lineage(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """The class and its bases defined in the same module, nearest first."""
        if id(cls) not in self._lineages:
            self._lineages[id(cls)] = class_lineage(cls, self.definitions.classes)
        return self._lineages[id(cls)]

    def attribute_class(self, receiver: ast.expr, cls: ast.ClassDef | None) -> ast.ClassDef | None:
        """The module class of `self.attr` when the class assigns `self.attr = SomeClass(...)`."""
        key = ex.dotted_name(receiver)
        if cls is None or not key.startswith("self.") or key.count(".") != 1:
            return None
        name = self.attribute_classes(cls).get(key.removeprefix("self."), "")
        return self.definitions.classes.get(name)

    def attribute_classes(self, cls: ast.ClassDef) -> dict[str, str]:
        if id(cls) not in self._attribute_classes:
            self._attribute_classes[id(cls)] = dict(constructed_attributes(cls))
        return self._attribute_classes[id(cls)]

    # ----- compiled reach ---------------------------------------------------------------------

    def compiled_region(self, definition: Definition) -> str:
        """Why the function runs compiled ("" when it runs on the host), naming the path to the region.

        A breadth-first search up the callers (and out of an enclosing function, for a nested
        `def`) for the nearest compiled region; a function Dynamo is told to skip ends its branch.
        When none is found and the search was complete, every function it visited runs on the host
        too; a search cut by the depth limit takes the function as compiled.
        """
        if id(definition.node) in self._regions:
            return self._regions[id(definition.node)]
        reached: dict[int, tuple[Definition, int]] = {id(definition.node): (definition, 0)}
        """Each visited function -> the function it was reached from (its callee) and the line."""
        searched_up: list[Definition] = []
        """The visited functions whose callers were looked for: in other modules too, if need be."""
        queue = collections.deque([(definition, 0)])
        cut = False
        while queue:
            current, depth = queue.popleft()
            known = self._regions.get(id(current.node))
            region = self.own_region(current) if known is None else known
            if region:
                return self.remember_path(definition, current, region, reached)
            if known is not None or self.is_never_compiled(current):
                continue  # runs on the host: what calls it does not matter
            if depth >= MAX_CALL_DEPTH:
                cut = True
                continue
            searched_up.append(current)
            for caller, line in self.callers_and_enclosing(current):
                if id(caller.node) not in reached:
                    reached[id(caller.node)] = (current, line)
                    queue.append((caller, depth + 1))
        if cut:
            region = f"more than {MAX_CALL_DEPTH} calls from its callers' callers: taken as compiled"
            self._regions[id(definition.node)] = region
            return region
        cuts = CYCLE_CUTS.count
        region, reached_definition = (
            self.region_elsewhere(searched_up) if self.path and searched_up else ("", definition)
        )
        if region:
            return self.remember_path(definition, reached_definition, region, reached)
        if not self.hop.depth or CYCLE_CUTS.count == cuts:  # else it depends on the search that led here
            for key in reached:
                self._regions[key] = ""
        return ""

    def region_elsewhere(self, definitions: list[Definition]) -> tuple[str, Definition]:
        """The first of `definitions` that another module of the package runs compiled, and why."""
        if self.hop.at_the_limit:
            named = [found for found in definitions if self.named_elsewhere(found)]
            return (TAKEN_AS_COMPILED_PAST_HOPS, named[0]) if named else ("", definitions[0])
        look_for_calls(self.path, [found.name for found in definitions if self.is_package_method(found)])
        for found in definitions:
            region = self.compiled_caller_elsewhere(found)
            if region:
                return region, found
        return "", definitions[0]

    def named_elsewhere(self, definition: Definition) -> bool:
        if definition.enclosing_class is None:
            return named_elsewhere(self.path, definition)
        return self.is_package_method(definition) and bool(other_files_calling(self.path, definition.name))

    def compiled_caller_elsewhere(self, definition: Definition) -> str:
        """Why a module-level function, or a method of a module-level class, runs compiled because
        another module of the package calls it from a compiled region ("" when none does). A
        function already being searched for further up (modules that call each other) adds nothing."""
        key = self.search_key(definition)
        if key in self._callers_elsewhere:
            return self._callers_elsewhere[key]
        searching = (self.resolved_path, key)
        if searching in SEARCHING:
            CYCLE_CUTS.count += 1
            return ""
        SEARCHING.add(searching)
        cuts = CYCLE_CUTS.count
        try:
            found = self.search_callers_elsewhere(definition)
        finally:
            SEARCHING.discard(searching)
        if found or not self.hop.depth or CYCLE_CUTS.count == cuts:
            self._callers_elsewhere[key] = found
        return found

    def search_key(self, definition: Definition) -> Hashable:
        """A method of a module-level class by its name and related classes (the methods of one class
        family, a cache's layers, ask the same question once); any other function by where it is."""
        if self.is_package_method(definition) and definition.enclosing_class is not None:
            return (definition.name, self.related_classes(definition.enclosing_class))
        return (definition.qualname, getattr(definition.node, "lineno", 0))

    @functools.cached_property
    def resolved_path(self) -> str:
        """The module's path as the searches in other modules name it (a path given relative, or
        through a link, is the same module)."""
        return os.path.realpath(self.path) if self.path else ""

    def search_callers_elsewhere(self, definition: Definition) -> str:
        cls = definition.enclosing_class
        if cls is None:
            return self.function_caller_elsewhere(definition)
        if not self.is_package_method(definition):
            return ""
        return compiled_method_caller_elsewhere(
            self.path, definition.name, self.related_classes(cls), CallGraph, self.hop
        )

    def function_caller_elsewhere(self, definition: Definition) -> str:
        if not has_callers_elsewhere(self.path, definition):
            return ""
        if may_search_callers_of(self.hop, self.path, definition.name):
            return compiled_caller_elsewhere(self.path, definition, CallGraph, self.hop)
        return f"callers in other modules not searched (more than {MAX_PACKAGE_SEARCHES} functions of this module needed it): taken as compiled"

    def is_package_method(self, definition: Definition) -> bool:
        """A method of a module-level class (which other modules can import)."""
        cls, parent = definition.enclosing_class, definition.parent
        return (
            cls is not None
            and parent is not None
            and parent.parent is None
            and self.definitions.classes.get(cls.name) is cls
        )

    def related_classes(self, cls: ast.ClassDef) -> frozenset[str]:
        """The names of the module's classes through which a method of `cls` may be called: `cls`,
        its bases (an instance of one may be a `cls`) and its subclasses (which inherit it)."""
        return frozenset(
            other.name
            for other in self.definitions.classes.values()
            if cls in self.lineage(other) or other in self.lineage(cls)
        )

    def remember_path(
        self, start: Definition, found: Definition, region: str, reached: dict[int, tuple[Definition, int]]
    ) -> str:
        """The region of each function on the path from `found` down to `start`, kept and returned for `start`."""
        self._regions.setdefault(id(found.node), region)
        current = found
        while current is not start:
            callee, line = reached[id(current.node)]
            if line:  # reached as a caller, not as the enclosing function of a nested def
                where = f"called from {current.qualname} (line {line})"
                region = f"{where}, which is {region}" if region.startswith(("called from", "more than")) else where
            self._regions.setdefault(id(callee.node), region)
            current = callee
        return self._regions[id(start.node)]

    def callers_and_enclosing(self, definition: Definition) -> Iterator[tuple[Definition, int]]:
        """The callers with the line of the call; the enclosing function of a nested `def` with line 0
        (a method of a class that a function builds is not run by that function)."""
        parent = definition.parent
        if parent is not None and parent.is_function:
            yield parent, 0
        yield from self.callers(definition)

    def is_never_compiled(self, definition: Definition) -> bool:
        node = definition.node
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_never_compiled(node, self.torch_aliases)

    def own_region(self, definition: Definition) -> str:
        if not definition.is_function:
            return ""
        assert isinstance(definition.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        in_class = definition.enclosing_class is not None
        region = compiled_region_of(definition.node, in_class, self.torch_aliases) or self.compiler_decorator(
            definition
        )
        if region:
            return region
        if definition.enclosing_class is not None:
            region = cache_protocol_region(definition.node, self.lineage(definition.enclosing_class))
            if region:
                return region
        if self.compiled_by_name(definition.name):
            return f"`{definition.name}` is compiled, or installed on an object, in this module"
        return ""

    def compiler_decorator(self, definition: Definition) -> str:
        """`@compile_fn` after `compile_fn = torch.compile`, `@dynamo.optimize(...)` after `import
        torch._dynamo as dynamo` (`installed.compiler_names`; `compiled_region_of` reads torch's own names)."""
        for decorator in getattr(definition.node, "decorator_list", ()):
            name = ex.dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator)
            if name in self.compilers:
                return f"@{name}"
        return ""

    @functools.cached_property
    def compilers(self) -> frozenset[str]:
        """Every form of torch's compilers names `compile` or `optimize` somewhere in the module."""
        if not names_a_compiler(self.text, self.local_names.non_ascii_lines):
            return frozenset()
        return compiler_names(self.tree, self.torch_aliases, self.text, self.local_names.non_ascii_lines)

    def callers(self, definition: Definition) -> Iterator[tuple[Definition, int]]:
        """The functions of the module that may call `definition`, with the line of the call. A
        module-level function may also be called wherever it is handed on as a value (`fn = helper`,
        `map(helper, xs)`, a default `fn=helper`) or through a module-level name bound to a value
        that holds it (`h = helper`, `TABLE = {"a": helper}`): a function that mentions it, or such a
        name, counts as a caller; so does a method of the class family that reads a method as
        `self.m` without calling it (`checkpoint(self._inner, x)`, a property)."""
        name = definition.name
        is_module_function = definition.parent is None and definition.enclosing_class is None
        for line in self.lines_naming(name):
            caller = self.definitions.innermost_function_at(line)
            if caller is None or caller is definition:
                continue
            if (
                any(self.may_call(call, caller, definition) for call in calls_at(caller.node, line, name))
                or (is_module_function and self.hands_on(caller, line, name, calls=False))
                or (definition.enclosing_class is not None and self.reads_method(caller, line, definition))
            ):
                yield caller, line
        if is_module_function:
            for alias in self.module_aliases(name):
                for line in self.lines_naming(alias):
                    caller = self.definitions.innermost_function_at(line)
                    if (
                        caller is not None
                        and caller is not definition
                        and self.hands_on(caller, line, alias, calls=True)
                    ):
                        yield caller, line

    def hands_on(self, caller: Definition, line: int, name: str, calls: bool) -> bool:
        """The module-level name `name` is read on `line` of `caller`: handed on as a value (an
        argument, a local name, a display, a default of a nested `def`), or, with `calls`, called.
        A statement that installs it on an object is left to `is_installed` (a generation method's
        name is host code), and a name the caller binds itself is another object."""
        function = caller.node
        assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        parts: list[ast.AST] = [
            statement for statement in statements_at(function.body, line) if not any(installations(statement, True))
        ]
        parts += [*function.args.defaults, *(default for default in function.args.kw_defaults if default is not None)]
        nodes = [node for part in parts for node in ast.walk(part)]
        called = set() if calls else {id(node.func) for node in nodes if isinstance(node, ast.Call)}
        called |= {  # `torch.compiler.disable(fn)` runs `fn` eagerly
            id(argument)
            for node in nodes
            if isinstance(node, ast.Call) and ex.called_name(node).endswith(DISABLERS)
            for argument in node.args
        }
        return any(
            isinstance(node, ast.Name)
            and node.id == name
            and isinstance(node.ctx, ast.Load)
            and node.lineno == line
            and id(node) not in called
            and self.local_names.holder(name, caller, node).is_module_level
            for node in nodes
        )

    def reads_method(self, caller: Definition, line: int, method: Definition) -> bool:
        """`self.m` or `cls.m` read on `line` of a method of the same class family without being called
        there: handed on (`checkpoint(self._inner, x)`) or a property read (`self.length`); or fetched
        by name (`getattr(self, "m")(...)`)."""
        cls, own = caller_class(caller), method.enclosing_class
        function = caller.node
        if cls is None or own is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if own not in self.lineage(cls) and cls not in self.lineage(own):
            return False
        nodes = [node for statement in statements_at(function.body, line) for node in ast.walk(statement)]
        called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
        return any(
            (
                isinstance(node, ast.Attribute)
                and node.attr == method.name
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
                and node.lineno == line
                and id(node) not in called
            )
            or fetches_own_attribute(node, method.name)
            for node in nodes
        )

    def module_aliases(self, name: str) -> list[str]:
        """The module-level names bound to a value that holds the function `name`, or such a name, in
        turn (`h = helper`, `TABLE = {"a": helper}`, `h2 = h`)."""
        if name not in self._aliases:
            self._aliases[name] = []  # a cycle of names ends here
            found: list[str] = []
            for line in self.lines_naming(name):
                if self.definitions.innermost_function_at(line) is not None:
                    continue
                for statement in statements_at(self.tree.body, line):
                    found += [alias for alias, value in plain_bindings(statement) if name in functions_in(value)]
            found = [alias for alias in dict.fromkeys(found) if alias != name]
            self._aliases[name] = list(
                dict.fromkeys([*found, *(more for alias in found for more in self.module_aliases(alias))])
            )
        return self._aliases[name]

    def may_call(self, call: ast.Call, caller: Definition, callee: Definition) -> bool:
        resolved = self.callees(call, caller)
        if resolved:
            return callee in resolved
        is_method_call = isinstance(call.func, ast.Attribute) and not ex.is_super_call(call.func.value)
        return is_method_call and callee.enclosing_class is not None

    def compiled_by_name(self, name: str) -> bool:
        """`name` is passed to `torch.compile(...)`, or installed on an object (`is_installed`),
        somewhere in the module."""
        if self._compiled_names is None:
            self._compiled_names = frozenset(
                torch_compiled_names(self.text, self.tree, self.compilers, self.local_names.non_ascii_lines)
            )
        if name in self._compiled_names:
            return True
        if name not in self._installed:
            self._installed[name] = False  # a name bound to itself through aliases ends here
            installed, aliases = is_installed(name, self.lines_naming(name), self.tree, self.setattr_lines)
            self._installed[name] = installed or any(map(self.compiled_by_name, aliases))
        return self._installed[name]

    def installed_as(self, name: str) -> frozenset[str]:
        """The attributes the module installs the function `name` itself as, bound or not, anywhere
        (`Cache.get_seq_length = name`, `setattr(obj, "forward", name)`, `name.__get__(obj)`; not a
        table's items, not a value built from it)."""
        return frozenset(
            attribute
            for statement in statements_naming(self.lines_naming(name), self.tree)
            for attribute in attributes_installed(name, statement, self.tree, self.setattr_lines, as_itself=True)
        )

    @functools.cached_property
    def setattr_lines(self) -> list[int]:
        """The lines that say `setattr`: only a statement on one may install through the call."""
        return lines_mentioning(self.text, ["setattr"])

    def lines_naming(self, name: str) -> list[int]:
        """The lines where `name` occurs as a whole word, or, outside ASCII, in its NFKC form (`ｆ(` is
        `f(`), found once per name (callers and installations both ask)."""
        if name not in self._lines_naming:
            found = lines_mentioning(self.text, [name], whole_words=True)
            self._lines_naming[name] = with_non_ascii(found, self.local_names.non_ascii_lines, name)
        return self._lines_naming[name]


def constructed_attributes(cls: ast.ClassDef) -> Iterator[tuple[str, str]]:
    """(`attr`, `SomeClass`) for every `self.attr = SomeClass(...)` statement of the class's `__init__`."""
    for method in cls.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name == "__init__":
            for statement in simple_statements(method.body):
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
                    for target in statement.targets:
                        key = ex.dotted_name(target)
                        if key.startswith("self.") and key.count(".") == 1:
                            yield key.removeprefix("self."), ex.called_name(statement.value)


def fetches_own_attribute(node: ast.AST, name: str) -> bool:
    """`getattr(self, "name")` or `getattr(cls, "name", default)`."""
    fetched = ex.getattr_of(node) if isinstance(node, ast.expr) else None
    return (
        fetched is not None
        and fetched[1] == name
        and isinstance(fetched[0], ast.Name)
        and fetched[0].id in ("self", "cls")
    )

"""What a function's callers pass for a parameter, where every caller is known.

A module-private function (`def _trim(cache, ...)` at module level, no decorator, in a module of a
regular package, a name that no other module of the package imports, reads as an attribute or
writes as a string; code outside the package is taken not to call a private name) or a function
nested in another one (no decorator) is called only where its module calls it by name. When the name occurs
nowhere else (not passed, stored, returned, rebound, listed in `__all__` or written in a string)
and every call passes for the parameter, by position or keyword (or leaves it to a default of
None), an int-length cache or None, the parameter holds an int-length cache on entry.

A private method (`def _step(self, ids, cache)`, no decorator, no `__` in its name, which Python
may mangle) is taken the same way: every use of its name in the module must be a call
`self._step(...)` in a plain method of the class itself, on that method's receiver, never rebound,
outside a lambda, comprehension or class body (where `self` may be the class, and the call the plain
function), and no other module of the package may name it. The class and its bases must be the
module's own (`class_runs_only_module_code`): a base from outside may call a private hook itself.
A subclass's call, a call on another receiver or through the class, or the method read as a value
leaves the parameter unknown. A subclass outside the package is code outside it: taken not to call
a private name.

What a call passes counts as int-length when it is:

- `None`, or what the engine knows without walking (`closures.has_int_length`): a constructor of an
  int-length class (`DynamicCache()`, `DynamicCache.from_legacy_cache(...)`), `self` in an int-length
  class;
- in the calling function: a local every store of which builds one (`c = DynamicCache()`), a
  receiver held in an attribute that the class facts type (`self._cache`, `attribute_receivers`), or
  a parameter the caller never rebinds whose own callers, in turn, pass one (up to `MAX_CALLERS_UP`
  functions up; a cycle of callers proves nothing).

Anything else (a call inside a lambda or comprehension passing a name, `*args`/`**kwargs`, a value
of unknown kind) leaves the parameter unknown, and its length is reported as before. Asked lazily
(`scopes.entry_kinds`), only for a parameter that the function's text calls a source method on.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.attribute_receivers import receiver_length_kind
from lint_rules.engine.facts.caches import INT_LENGTH
from lint_rules.engine.facts.definitions import Definition, statements_at_lines
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_files import parsed_module, read_bytes
from lint_rules.engine.facts.module_text import bound_names, own_scope_nodes
from lint_rules.engine.facts.package import package_files, package_top
from lint_rules.engine.flow.closures import bindings_of, has_int_length, names_bound_to_int_length_caches
from lint_rules.engine.flow.never_none import text_of
from lint_rules.engine.flow.taint import INT_LENGTH_CACHE

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
CallSite = tuple[ast.Call, "Definition | None", bool]
"""A call of the function, the function it is in (None at module or class level), and whether it is
evaluated in that function's own scope (not in a lambda, a comprehension or a definition's header)."""

MAX_CALLERS_UP = 4
"""A caller's parameter is followed to its own callers this many functions up."""
NESTED_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class CallerArguments:
    """Per module run: which parameters every caller of their function passes an int-length cache for."""

    def __init__(self, module: ModuleFacts) -> None:
        self.module = module
        self._kinds: dict[tuple[int, str], str] = {}
        self._open: list[tuple[int, str]] = []
        self._cut = False
        """Since the outermost open question began, an answer read an open one or hit the depth limit."""

    def kind(self, definition: Definition, parameter: str) -> str:
        """INT_LENGTH_CACHE when every caller passes an int-length cache or None for `parameter`, else ""."""
        if (
            not may_have_known_callers(definition)
            or parameter == receiver_parameter(definition)
            or not self.receives_source_call(definition, parameter)
        ):
            return ""
        return self.kind_from_callers(definition, parameter)

    def kind_from_callers(self, definition: Definition, parameter: str) -> str:
        """The answer, kept unless it read an open question (a cycle of callers) or was cut by
        `MAX_CALLERS_UP`: such an answer is "" and is not kept, so that no kept answer depends on the
        order in which the questions came."""
        key = (id(definition.node), parameter)
        if key in self._kinds:
            return self._kinds[key]
        if key in self._open or len(self._open) >= MAX_CALLERS_UP:
            self._cut = True
            return ""
        if not self._open:
            self._cut = False
        self._open.append(key)
        try:
            kind = INT_LENGTH_CACHE if self.every_caller_passes_int_length(definition, parameter) else ""
        finally:
            self._open.pop()
        if not self._cut:
            self._kinds[key] = kind
        return kind

    def only_package_callers_pass_int_length(self, definition: Definition, parameter: str) -> bool:
        """A public module-level function (no decorator, the parameter never rebound) whose module
        calls it, passing an int-length cache or None for `parameter` every time, and that no other
        module of the package names: only a caller outside the package can bring a tensor-length
        cache. Its findings stay (a library's users call it) and say so."""
        node = definition.node
        if (
            definition.parent is not None
            or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            or node.decorator_list
            or node.name.startswith("_")
            or parameter not in {argument.arg for argument in all_parameters(node)}
            or parameter in rebound_names(node, self.module)
        ):
            return False
        return self.kind_from_callers(definition, parameter) == INT_LENGTH_CACHE

    def receives_source_call(self, definition: Definition, parameter: str) -> bool:
        """Cheaply, from the text: the function calls a source method on the parameter
        (`parameter.get_seq_length(`, `getattr(parameter, ...`)."""
        pattern = receiver_pattern(parameter, self.module.source_methods)
        return pattern.search(text_of(definition.node, self.module.source)) is not None

    def every_caller_passes_int_length(self, definition: Definition, parameter: str) -> bool:
        """Every call in the module passes one (the calls are looked at in turn, up to the first that
        does not), and, for a module-level function (asked last: it reads the package), no other
        module may call it. A function never called here proves nothing."""
        node = definition.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        called = False
        bound = is_private_method(definition)
        for site in self.method_call_sites(definition) if bound else self.call_sites(definition):
            if site is None:
                return False
            call, caller, own_scope = site
            argument, given = passed_argument(call, node, parameter, bound)
            if not given:  # a default is evaluated where the function is defined, not in the caller
                caller, own_scope = None, False
            if argument is None or not self.is_int_length_argument(argument, caller, own_scope):
                return False
            called = True
        if not called or is_nested(definition):
            return called
        if bound and not self.class_runs_only_module_code(definition):
            return False
        return not reached_by_name(self.module.tree, node.name) and not named_in_other_modules(
            self.module.path, node.name
        )

    def class_runs_only_module_code(self, method: Definition) -> bool:
        """The method's class and its bases are this module's own plain classes (`object` at most
        from outside: a base outside the package may call a private hook, as transformers' beam search
        calls `self._reorder_cache(...)`), none with a decorator, a metaclass or a hook that reaches
        methods by name (`__init_subclass__`, `__getattr__`, `__getattribute__`), and the module uses
        their names only to build, derive from, test or annotate them (`Runner = wrap(Runner)` and
        `wrap(Runner)` may replace the method's callers)."""
        lineage = self.module_lineage(method.enclosing_class)
        return lineage is not None and not any(uses_as_a_value(self.module.tree, cls.name) for cls in lineage)

    def module_lineage(self, cls: ast.ClassDef | None) -> list[ast.ClassDef] | None:
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
                    pending.append(self.module.definitions.classes.get(base.id) if isinstance(base, ast.Name) else None)
        return lineage

    def call_sites(self, definition: Definition) -> Iterator[CallSite | None]:
        """Each call of the function in the module; None for a use of its name that is no call of
        it (the function used as a value, rebound, or named in a string)."""
        name = definition.name
        parent = definition.parent
        body = parent.node.body if parent is not None else self.module.tree.body
        lines = self.module.calls.lines_naming(name)
        if parent is not None:
            lines = [line for line in lines if parent.first_line <= line <= parent.last_line]
        at_lines = statements_at_lines(body, lines).values()
        for statement in dict.fromkeys(statement for statements in at_lines for statement in statements):
            for call, own_scope in name_uses(statement, name):
                yield from [None] if call is None else self.call_site(call, definition, own_scope)

    def call_site(self, call: ast.Call, definition: Definition, own_scope: bool) -> list[CallSite | None]:
        """The call as a call of the function; none where it calls another function of that name
        visible there; None where the call graph cannot tell."""
        caller = self.module.definitions.innermost_function_at(call.lineno)
        resolved = self.module.calls.callees(call, caller)
        if definition not in resolved:
            return [] if resolved else [None]
        own_scope = own_scope and (caller is None or not self.in_class_body(caller, call.lineno))
        return [(call, caller, own_scope)]

    def method_call_sites(self, definition: Definition) -> Iterator[CallSite | None]:
        """Each `self.name(...)` call in a method of the method's own class, `self` being that
        method's receiver; None for any other use of the name anywhere in the module (a call on
        another receiver, through the class or `super()`, in a subclass, the method read as a value,
        or the name in a string)."""
        body = self.module.tree.body
        at_lines = statements_at_lines(body, self.module.calls.lines_naming(definition.name)).values()
        for statement in dict.fromkeys(statement for statements in at_lines for statement in statements):
            for call, own_scope in name_uses(statement, definition.name, as_attribute=True):
                yield self.method_call_site(call, definition, own_scope) if call is not None else None

    def method_call_site(self, call: ast.Call, definition: Definition, own_scope: bool) -> CallSite | None:
        caller = self.module.definitions.innermost_function_at(call.lineno)
        if not own_scope or caller is None or caller.enclosing_class is not definition.enclosing_class:
            return None  # in a lambda or comprehension, `self` may be another name's
        if self.in_class_body(caller, call.lineno):
            return None  # a class body in the method: its names are the class's
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        node = caller.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        on_own_receiver = isinstance(receiver, ast.Name) and receiver.id == receiver_parameter(caller)
        if not on_own_receiver or receiver_parameter(caller) in rebound_names(node, self.module):
            return None
        return call, caller, own_scope

    def is_int_length_argument(self, argument: ast.expr, caller: Definition | None, own_scope: bool) -> bool:
        if isinstance(argument, ast.Constant) and argument.value is None:
            return True
        if caller is None or not own_scope:
            return self.module.classes.constructed_kind(argument) == INT_LENGTH
        if has_int_length(argument, caller, self.module):
            return True
        node = caller.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if receiver_length_kind(self.module.classes, caller.enclosing_class, node, argument) == INT_LENGTH:
            return True
        if not isinstance(argument, ast.Name):
            return False
        if argument.id in {parameter.arg for parameter in all_parameters(node)}:
            return self.unchanged_parameter_kind(caller, argument.id) == INT_LENGTH_CACHE
        return argument.id in int_length_locals(node, self.module)

    def unchanged_parameter_kind(self, caller: Definition, parameter: str) -> str:
        """What the caller's parameter holds where the caller never rebinds it: what the caller's own
        callers pass."""
        node = caller.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if not may_have_known_callers(caller) or parameter in rebound_names(node, self.module):
            return ""
        return self.kind_from_callers(caller, parameter)

    def in_class_body(self, caller: Definition, line: int) -> bool:
        """The line is in the body of a class defined in the caller (its names are the class's)."""
        return any(
            isinstance(inner.node, ast.ClassDef) and inner.first_line <= line <= inner.last_line
            for inner in self.module.definitions.nested_in(caller)
        )


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


@functools.lru_cache(maxsize=256)
def receiver_pattern(parameter: str, methods: frozenset[str]) -> re.Pattern[str]:
    called = "|".join(map(re.escape, sorted(methods)))
    name = re.escape(parameter)
    return re.compile(rf"\b{name}\s*\.\s*(?:{called})\b|\bgetattr\(\s*{name}\s*,")


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


def passed_argument(
    call: ast.Call, function: FunctionNode, parameter: str, bound: bool = False
) -> tuple[ast.expr | None, bool]:
    """What the call gives the parameter, and whether the call gives it: its argument, by position
    or keyword, or else the default; None when that cannot be told (`*args`, `**kwargs`, no default).
    `bound`: a method called on its receiver (`self.m(a)`), which takes the first parameter."""
    arguments = function.args
    positional = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args]][bound:]
    plain = len(call.args)
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            plain = index
            break
    if parameter in positional:
        index = positional.index(parameter)
        if index < plain:
            return call.args[index], True
        if plain < len(call.args):
            return None, True
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value, True
    if any(keyword.arg is None for keyword in call.keywords):
        return None, True
    return default_of(function, parameter), False


def default_of(function: FunctionNode, parameter: str) -> ast.expr | None:
    arguments = function.args
    positional = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args]]
    if parameter in positional:
        index = positional.index(parameter) - (len(positional) - len(arguments.defaults))
        return arguments.defaults[index] if index >= 0 else None
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if argument.arg == parameter:
            return default
    return None


def all_parameters(function: FunctionNode) -> list[ast.arg]:
    arguments = function.args
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]


def rebound_names(function: FunctionNode, module: ModuleFacts) -> frozenset[str]:
    """The names the function's own body binds in any form (a store, `del`, an import, a `match`
    capture, `except ... as`, a nested `def`); every name when a function nested in it may rebind
    one (`nonlocal`)."""
    if "nonlocal" in text_of(function, module.source):
        return frozenset(argument.arg for argument in all_parameters(function))
    return frozenset(name for node in own_scope_nodes(function) for name in bound_names(node))


def int_length_locals(function: FunctionNode, module: ModuleFacts) -> frozenset[str]:
    """The locals every store of which in the function's own body builds an int-length cache (none
    where a name may be stored elsewhere too: `global`, or `nonlocal` in a nested function)."""
    text = text_of(function, module.source)
    if "global" in text or "nonlocal" in text:
        return frozenset()
    bound = [pair for child in own_scope_nodes(function) for pair in bindings_of(child)]
    return names_bound_to_int_length_caches(function, bound, module)


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
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
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

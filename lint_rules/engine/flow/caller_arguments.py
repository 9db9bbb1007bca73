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
Which functions and methods qualify, and the uses of their names, are `known_callers`.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from lint_rules.engine.facts.attribute_receivers import receiver_length_kind
from lint_rules.engine.facts.caches import INT_LENGTH
from lint_rules.engine.facts.definitions import Definition, statements_at_lines
from lint_rules.engine.facts.module_facts import ModuleFacts
from lint_rules.engine.facts.module_text import bound_names, own_scope_nodes, whole_word
from lint_rules.engine.flow.closures import bindings_of, has_int_length, names_bound_to_int_length_caches
from lint_rules.engine.flow.known_callers import (
    class_runs_only_module_code,
    is_nested,
    is_private_method,
    may_have_known_callers,
    name_uses,
    named_in_other_modules,
    reached_by_name,
    receiver_parameter,
)
from lint_rules.engine.flow.never_none import text_of
from lint_rules.engine.flow.taint import INT_LENGTH_CACHE

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
CallSite = tuple[ast.Call, "Definition | None", bool]
"""A call of the function, the function it is in (None at module or class level), and whether it is
evaluated in that function's own scope (not in a lambda, a comprehension or a definition's header)."""

MAX_CALLERS_UP = 4
"""A caller's parameter is followed to its own callers this many functions up."""


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
        if bound and not class_runs_only_module_code(definition, self.module.tree, self.module.definitions.classes):
            return False
        return not reached_by_name(self.module.tree, node.name) and not named_in_other_modules(
            self.module.path, node.name
        )

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


@functools.lru_cache(maxsize=256)
def receiver_pattern(parameter: str, methods: frozenset[str]) -> re.Pattern[str]:
    called = "|".join(map(re.escape, sorted(methods)))
    name = re.escape(parameter)
    return re.compile(rf"{whole_word(parameter)}\s*\.\s*(?:{called})\b|{whole_word('getattr')}\(\s*{name}\s*,")


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

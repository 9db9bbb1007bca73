"""What a call of one of a module's layer changers changes (`layer_changes` finds the changers).

A changer is a function, method or lambda whose layer changes may reach one of its parameters: the
parameter itself, an attribute of it, or (the direction that reports) every parameter where the
changed object is `*` or a local that may hold a parameter's object. A call hands a changer what
lands in those parameters, mapped by position and keyword (everything it is handed where a `*` or
`**` hides the mapping; for a method called on an object, the object lands in `self`, also through
`super()`). Changers are known by name, and a call is resolved by its name only where the module's
definitions of that name may be what it runs: `grow(...)`, `self.m(...)`, `cls.m(...)`,
`super().m(...)`, `Holder.m(...)`.
"""

from __future__ import annotations

import ast
import bisect
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.definitions import layers_changed_in, statements_at_lines
from lint_rules.engine.facts.local_names import parameter_names
from lint_rules.engine.facts.module_text import BINDING_NODES, bound_names, own_scope_nodes

CONSTRUCTION_METHODS = frozenset({"__init__", "__new__", "__post_init__"})
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


class Changer(NamedTuple):
    """A function (or lambda) that may change the layers of the parameters `changed`; `builds`: it
    runs when its class is called (`__init__`), whose first parameter is the new object; `method`: a
    method whose first parameter is the object it is called on."""

    function: FunctionNode
    changed: frozenset[str]
    builds: bool = False
    method: bool = False
    keeps_what_it_is_handed: bool = True
    """For `builds`: changes the layers of an attribute of its new object (`self.inner.layers`), which
    may be an object it was handed; an `__init__` that changes only the new object's own layers
    (`self.layers = [...]`) reaches nothing it was handed (a read of a handed object's `.layers`
    counts as changing that object's)."""

    @property
    def reaches_callers(self) -> bool:
        """A call of it may change what the caller holds: not a constructor that changes only its new
        object's own layers, nor an `__init__`-like method that changes only its object's (called
        through `super()` or a class, on no object a caller holds)."""
        if self.changes_what_it_is_handed:
            return True
        if self.builds:
            return self.keeps_what_it_is_handed
        return not (
            isinstance(self.function, ast.Lambda) or (self.method and self.function.name in CONSTRUCTION_METHODS)
        )

    @property
    def changes_what_it_is_handed(self) -> bool:
        """Changes a parameter's layers other than those of its own object."""
        own = first_parameter(self.function) if self.method or self.builds else frozenset()
        return bool(self.changed - own)


Changers = dict[str, tuple[Changer, ...]]
"""By the name a call writes (`grow`, `_grow`, `Holder`)."""


class Known(NamedTuple):
    """What the rounds found: the changers, whether any call may run one, and the calls a changer is
    handed to as an argument (by `id`, and their lines)."""

    changers: Changers
    any_call: bool = False
    handed_to: frozenset[int] = frozenset()
    handed_to_lines: frozenset[int] = frozenset()


def receivers_changed(
    function: FunctionNode, layers_lines: list[int], known: Known, call_lines: list[int]
) -> frozenset[str]:
    """The receivers whose layers the function may change, directly or by the calls on `call_lines`
    of the changers `known`."""
    changed = set(layers_changed_in(function, layers_lines)) if layers_lines else set()
    if isinstance(function, ast.Lambda):
        nodes = list(ast.walk(function.body))
    else:
        start = bisect.bisect_left(call_lines, function.lineno)
        within = call_lines[start : bisect.bisect_right(call_lines, function.end_lineno or function.lineno)]
        statements = [found for at_line in statements_at_lines(function.body, within).values() for found in at_line]
        nodes = list(ex.statement_parts(statements)) if within else []
    return frozenset(changed | set(receivers_of(changed_through(nodes, known))))


def changed_through(nodes: list[ast.AST], known: Known) -> list[ast.expr]:
    """What the calls among `nodes` hand to changers, and the objects whose changing methods are read
    without a call (`sync = self._sync`, `(self._sync,)`, a `@property`): a bound method may run
    later, on its object."""
    calls = [node for node in nodes if isinstance(node, ast.Call)]
    called = {id(call.func) for call in calls}
    methods = {name for name, entries in known.changers.items() if any(changer.method for changer in entries)}
    bound = [
        node.value
        for node in nodes
        if isinstance(node, ast.Attribute)
        and node.attr in methods
        and id(node) not in called
        and isinstance(node.value, ast.Name)
        and not node.value.id[:1].isupper()
    ]
    return [argument for call in calls for argument in changed_arguments(call, known)] + bound


def parameters_of(function: FunctionNode, receivers: frozenset[str]) -> frozenset[str]:
    """The parameters among the roots of `receivers`; every one where a root is `*` or a local that
    may hold a parameter's object (an alias may be changed). A module-level name (a class, an import,
    a global object) is none of the parameters."""
    parameters = frozenset(parameter_names(function))
    roots = {receiver.partition(".")[0] for receiver in receivers}
    others = roots - parameters
    if "*" in others or (others and others & locals_that_may_hold_parameters(function, parameters)):
        return parameters
    changed = roots & parameters
    if changed and changed != parameters and changed & rebound_parameters(function):
        return parameters  # `d = d or c`: the rebound parameter may hold another one
    return frozenset(changed)


def rebound_parameters(function: FunctionNode) -> frozenset[str]:
    """The parameters the function binds again (`d = d or c`)."""
    if isinstance(function, ast.Lambda):
        return frozenset()
    parameters = frozenset(parameter_names(function))
    return frozenset(
        name
        for node in own_scope_nodes(function)
        if isinstance(node, BINDING_NODES) and not isinstance(node, ast.arg)
        for name in bound_names(node)
        if name in parameters
    )


def changed_arguments(call: ast.Call, known: Known) -> list[ast.expr]:
    """What lands, in the call, in a parameter that a changer of the called name may change: all it is
    handed where `*`/`**` hides the mapping, where a changer is handed to it, or where any call may
    run one."""
    given = [ex.unstarred(argument) for argument in handed(call)]
    entries = known.changers.get(last_name(call.func), ()) if resolves_by_name(call.func) else ()
    if not entries:
        runs_one = id(call) in known.handed_to or (
            known.any_call and ex.dotted_name(call.func) not in ex.READING_BUILTINS
        )
        return given if runs_one else []
    hidden = any(isinstance(argument, ast.Starred) for argument in call.args) or any(
        keyword.arg is None for keyword in call.keywords
    )
    on_object = object_called_on(call)
    if known.any_call or id(call) in known.handed_to:
        return [*given, *([on_object] if on_object is not None else [])]
    if hidden:  # the arguments may land in any parameter but an object's own
        handing = any(changer.changes_what_it_is_handed for changer in entries)
        own = on_object is not None and any(
            changer.method and changer.changed & first_parameter(changer.function) for changer in entries
        )
        return [*(given if handing else []), *([on_object] if own and on_object is not None else [])]
    return [argument for changer in entries for argument in mapped_arguments(call, changer)]


def mapped_arguments(call: ast.Call, changer: Changer) -> list[ast.expr]:
    """The arguments of `call` that land in `changer`'s changed parameters, by position and keyword,
    for each way the call may bind the first parameter (a method called on an object, or not)."""
    function, changed = changer.function, changer.changed
    positional = [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]
    if changer.builds and positional and positional[0] in changed and changer.keeps_what_it_is_handed:
        return handed(call)  # the new object may keep anything it is handed
    found: list[ast.expr] = []
    for bound_first in first_bindings(call, changer):
        names = positional[1:] if bound_first else positional
        on_object = object_called_on(call)
        if bound_first and on_object is not None and not changer.builds and positional and positional[0] in changed:
            found.append(on_object)
        for index, argument in enumerate(call.args):
            name = names[index] if index < len(names) else (function.args.vararg.arg if function.args.vararg else "")
            if name in changed:
                found.append(argument)
    keywords = {argument.arg for argument in ex.arguments_of(function)}
    extra = function.args.kwarg.arg if function.args.kwarg else ""
    found += [
        keyword.value
        for keyword in call.keywords
        if keyword.arg in changed or (keyword.arg not in keywords and extra in changed)
    ]
    return found


def resolves_by_name(func: ast.expr) -> bool:
    """A call whose function the module's definitions of its name may be: `grow(...)`, `self.m(...)`,
    `cls.m(...)`, `super().m(...)`, `Holder.m(...)`. A method called on another object
    (`holder.sync()`, `self.helper.m(...)`, `key_states.to(...)`) is its class's, which is not known
    here: one of the module's methods of that name proves nothing (docs/limits.md)."""
    if isinstance(func, ast.Name):
        return True
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    if isinstance(receiver, ast.Name):
        return receiver.id in ("self", "cls") or receiver.id[:1].isupper()
    return ex.is_super_call(receiver)


def first_bindings(call: ast.Call, changer: Changer) -> list[bool]:
    """Whether the call binds the changer's first parameter, each way it may: a constructor and a
    method called on an object (`self.m(x)`, `super().m(x)`, `obj.attr.m(x)`) do; a plain function or
    a static method does not; a method called through a class (`Holder.m(obj, x)`) may either way."""
    if changer.builds:
        return [True]
    if isinstance(changer.function, ast.Lambda) and isinstance(call.func, ast.Attribute):
        return [False, True]  # a lambda bound in a class body is a method
    if not changer.method or not isinstance(call.func, ast.Attribute):
        return [False]
    receiver = call.func.value
    named = (
        receiver.id if isinstance(receiver, ast.Name) else receiver.attr if isinstance(receiver, ast.Attribute) else ""
    )
    on_an_object = ex.is_super_call(receiver) or (named != "" and not named[:1].isupper())
    return [True] if on_an_object else [False, True]


SELF = ast.Name(id="self", ctx=ast.Load())


def object_called_on(call: ast.Call) -> ast.Name | None:
    """`self` of `self._grow(cache)`, `holder` of `holder.sync()`: the object a method changer of its
    own object may be called on. A method called on an attribute or another expression
    (`self.layer.get_seq_length()`) is another class's (its own facts say whether it changes its
    object's layers), and one called through a class (`Layer.__init__(self, ...)`) gets its object
    as an argument."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if receiver is not None and ex.is_super_call(receiver):
        return SELF  # `super().m()` runs on the method's own object, by convention `self`
    return receiver if isinstance(receiver, ast.Name) and not receiver.id[:1].isupper() else None


def handed(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(keyword.value for keyword in call.keywords)]


def receivers_of(arguments: list[ast.expr]) -> list[str]:
    """The dotted receivers (with their prefixes) of what a call hands on, looking into the displays
    it builds (`args=(model, cache)`)."""
    found: list[str] = []
    for argument in arguments:
        if isinstance(argument, (ast.Tuple, ast.List, ast.Set)):
            found += receivers_of([ex.unstarred(element) for element in argument.elts])
        elif isinstance(argument, ast.Dict):
            found += receivers_of(list(argument.values))
        elif ex.dotted_name(argument):
            found += ex.prefixes(ex.dotted_name(argument))
        elif literal_getattr(argument):
            found += ex.prefixes(literal_getattr(argument))
        else:  # `other or cache`, `cache if f else None`, `H(cache)`: any object it names may be handed
            named = [node for node in ast.walk(argument) if isinstance(node, (ast.Name, ast.Attribute))]
            found += [prefix for node in named for prefix in ex.prefixes(ex.dotted_name(node))]
    return found


def literal_getattr(node: ast.expr) -> str:
    """`self.cache` of `getattr(self, "cache")` (or with a default); "" for anything else."""
    fetched = ex.getattr_of(node)
    owner = ex.dotted_name(fetched[0]) if fetched else ""
    return f"{owner}.{fetched[1]}" if fetched and owner and fetched[1].isidentifier() else ""


def first_parameter(function: FunctionNode) -> frozenset[str]:
    """A method's `self` (the first positional parameter of a `def`; none for a lambda)."""
    positional = [*function.args.posonlyargs, *function.args.args]
    return frozenset({positional[0].arg}) if positional and not isinstance(function, ast.Lambda) else frozenset()


def locals_that_may_hold_parameters(function: FunctionNode, parameters: frozenset[str]) -> frozenset[str]:
    """The function's own names that may hold an object one of its parameters reaches: bound other
    than by a plain assignment (a loop's target, `with ... as`, ...), or assigned an expression that
    names a parameter or such a name (`x = p`, `x = f(p.attr)`, `x = y[0]`). A name assigned only
    from nothing handed (`copied = Cache()`, `n = max(a, 1)` of such names) holds a new object."""
    if isinstance(function, ast.Lambda):
        return frozenset()
    values: dict[str, list[ast.expr]] = {}
    holding: set[str] = set()
    assigned: set[int] = set()
    for node in own_scope_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
            assigned.add(id(node.targets[0]))
        elif isinstance(node, BINDING_NODES) and id(node) not in assigned:
            holding.update(bound_names(node))
    named = {
        name: {n.id for value in found for n in ast.walk(value) if isinstance(n, ast.Name)}
        for name, found in values.items()
    }
    changed = True
    while changed:
        before = len(holding)
        holding |= {name for name, names in named.items() if names & (parameters | holding)}
        changed = len(holding) != before
    return frozenset(holding - parameters)


def assign_targets(statement: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return statement.targets if isinstance(statement, ast.Assign) else [statement.target]


def reaching_callers(changers: Changers) -> frozenset[str]:
    """The names whose calls may change what a caller holds: all but those of constructors that
    change only their new object's own layers, and of `__init__`-like methods that do (called
    through `super()` or a class, never on an object a caller holds)."""
    return frozenset(name for name, entries in changers.items() if any(changer.reaches_callers for changer in entries))


def statement_changers(statement: ast.stmt, known: Known) -> list[tuple[str, Changer]]:
    """A class deriving from a changing class, a name bound to a changer or to a changing lambda."""
    if isinstance(statement, ast.ClassDef):
        inherited = [c for base in statement.bases for c in known.changers.get(last_name(base), ()) if c.builds]
        return [(statement.name, changer) for changer in inherited]
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        bound = bound_changers(statement.value, known)
        return [(last_name(target), changer) for target in assign_targets(statement) for changer in bound]
    return []


def assembled(entries: list[list[tuple[str, Changer]]]) -> Changers:
    found: dict[str, list[Changer]] = {}
    for pairs in entries:
        for name, changer in pairs:
            if name:
                found.setdefault(name, []).append(changer)
    return {name: tuple(dict.fromkeys(changers)) for name, changers in found.items()}


def bound_changers(value: ast.expr, known: Known) -> list[Changer]:
    """`add = grow`, `add = self._grow`: grow's changers; `add = lambda c: c.layers.append(...)`: the lambda."""
    if isinstance(value, ast.Lambda):
        changed = parameters_of(value, receivers_changed(value, [], known, [])) | lambda_changes(value)
        return [Changer(value, changed)] if changed else []
    return list(known.changers.get(last_name(value), ()))


def lambda_hands_on(function: ast.Lambda, known: Known) -> bool:
    """The lambda calls a changer with something (a parameter, an object it closes over)."""
    return any(isinstance(node, ast.Call) and changed_arguments(node, known) for node in ast.walk(function.body))


def lambda_changes(function: ast.Lambda) -> frozenset[str]:
    roots = {receiver.partition(".")[0] for node in ast.walk(function.body) for receiver in ex.layers_changed_at(node)}
    parameters = frozenset(parameter_names(function))
    return parameters if roots - parameters else frozenset(roots)


def last_name(node: ast.expr) -> str:
    """`grow` of `grow` and of `self._helpers.grow` ("" for anything else)."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def is_static(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(ex.dotted_name(decorator) == "staticmethod" for decorator in function.decorator_list)

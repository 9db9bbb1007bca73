"""What each name a module's top level binds may hold once the module has run (`final_bindings`):
every import, class or alias that may be the last to bind it, across the arms of an `if`, a `try`,
a loop, a `with` body cut short, a `global` statement or a star import."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.facts.caches import TRANSFORMERS_MODULES
from lint_rules.engine.facts.definitions import first_line_of, statements_within
from lint_rules.engine.facts.imports import absolute_module
from lint_rules.engine.facts.module_text import imported_as

Binding = tuple[str, str] | ast.ClassDef | None
"""What a module-level name may hold once the module has run: an import's (module, name), a class the
module defines, or None for anything else (a `def`, an assignment)."""


Held = dict[str, tuple[Binding, ...]]


PLACEHOLDERS = frozenset({"None", "object", "Any", "typing.Any"})
"""What a fallback binds where an import failed (`except ImportError: KV = object`): no class."""


def final_bindings(
    tree: ast.Module,
    module_name: str,
    is_package: bool,
    may_declare_globals: bool = True,
    walrus_lines: Sequence[int] | None = None,
) -> Held:
    """Each name the module's top level binds by an import, a class or a `def`, with every binding
    that may hold once the module has run: the arms of an `if` or a `match`, the handlers of a `try`
    (`try: from transformers import StaticCache as KV` / `except ImportError: from .own import
    IntCache as KV`), and any part of a `try`, `with` or loop body having run. A later binding in the
    same block replaces an earlier one; a placeholder (`= None`, `= object`, `= Any`, a string) binds
    no class; an alias of a class (`KV = StaticCache`, `KV = cu.StaticCache`) holds what that name
    holds there; both arms of `if TYPE_CHECKING:` count (annotations name one, the code runs the other);
    a name a function declares `global` may hold anything that function binds (None: not followed),
    looked for unless the caller knows the module has no `global` statement (`may_declare_globals`),
    and so is a walrus in any expression of a statement, where one may stand (`walrus_lines`, the
    lines holding `:=`; None: anywhere);
    after a star import (`from .other import *`) every name may hold what that module binds (None)."""
    names = NameCount(walrus_lines)
    names.count(tree.body, plainly_read=True)
    tracked = frozenset([*names.defined, *names.aliases])
    rebound = tracked & declared_global(tree) if may_declare_globals else set()
    if names.each_bound_once_where_plainly_read() and not rebound:
        return {}
    after = bindings_after(tree.body, {}, Scan(module_name, is_package, tracked))
    for name in rebound:
        after[name] = tuple(dict.fromkeys([*after.get(name, ()), None]))
    return {name: held for name, held in after.items() if held}


def declared_global(tree: ast.Module) -> set[str]:
    """The names some function's `global` statement lets it rebind."""
    statements = statements_within(tree.body, into_definitions=True)
    return {name for statement in statements if isinstance(statement, ast.Global) for name in statement.names}


class NameCount:
    """One cheap pass over a module's top level: how often each name is bound by an import, a class or a
    `def`, and which names anything else binds (most modules bind each imported name once, where the
    plain lookup reads it: then `imports` and `classes` say what every name holds)."""

    def __init__(self, walrus_lines: Sequence[int] | None) -> None:
        self.walrus_lines = walrus_lines
        """Where a walrus may stand (None: anywhere): a statement spanning one of these lines has
        every expression looked at, the others only their targets."""
        self.defined: dict[str, int] = {}
        self.otherwise_bound: set[str] = set()
        self.defined_out_of_plain_reach = False
        self.aliases: set[str] = set()
        """Names bound to a class's name (`KV = StaticCache`)."""
        self.star_imported = False

    def count(self, body: list[ast.stmt], plainly_read: bool) -> None:
        for statement in body:
            if isinstance(statement, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                self.star_imported |= is_star_import(statement)
                if self.may_hold_a_walrus(statement):  # in a default, a decorator or a base
                    self.otherwise_bound.update(stored_names(statement))
                for name in defined(statement):
                    self.defined[name] = self.defined.get(name, 0) + 1
                    self.defined_out_of_plain_reach |= not plainly_read
            else:
                self.otherwise_bound.update(stored_names(statement, self.may_hold_a_walrus(statement)))
                self.otherwise_bound.update(handler_names(statement))
                self.aliases.update(class_alias_targets(statement))
                inside = plainly_read and isinstance(statement, (ast.If, ast.Try, ast.TryStar))
                for block in blocks_of(statement):
                    self.count(block, inside)

    def may_hold_a_walrus(self, statement: ast.stmt) -> bool:
        if not self.walrus_lines:
            return self.walrus_lines is None
        first = bisect.bisect_left(self.walrus_lines, first_line_of(statement))
        return first < len(self.walrus_lines) and self.walrus_lines[first] <= (statement.end_lineno or statement.lineno)

    def each_bound_once_where_plainly_read(self) -> bool:
        return (
            not self.defined_out_of_plain_reach
            and not self.aliases
            and not self.star_imported
            and all(times == 1 for times in self.defined.values())
            and not any(name in self.defined for name in self.otherwise_bound)
        )


class Scan(NamedTuple):
    module_name: str
    is_package: bool
    tracked: frozenset[str]
    """The names bound somewhere by an import, a class or a `def`: only those may name a class."""


def defined_functions(tree: ast.Module) -> frozenset[str]:
    """The names the module's top level binds by a `def` (in any arm)."""
    functions = (statement for statement in block_statements(tree.body) if isinstance(statement, FUNCTIONS))
    return frozenset(statement.name for statement in functions)


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def module_named(origin: tuple[str, str]) -> str:
    """The module `from a import b` (or `import a.b as m`) binds, where `b` is a module: `a.b`."""
    return f"{origin[0]}.{origin[1]}"


def imports_among(bindings: Iterable[Binding]) -> list[tuple[str, str]]:
    """The (module, name) of each import among a name's bindings."""
    return [binding for binding in bindings if isinstance(binding, tuple)]


def block_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a body and of the blocks of its compound statements, not of `def`s or classes."""
    for statement in body:
        yield statement
        for block in blocks_of(statement):
            yield from block_statements(block)


def blocks_of(statement: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [statement.body, statement.orelse]
    if isinstance(statement, (ast.Try, ast.TryStar)):
        return [
            statement.body,
            *(handler.body for handler in statement.handlers),
            statement.orelse,
            statement.finalbody,
        ]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [statement.body]
    if isinstance(statement, ast.Match):
        return [case.body for case in statement.cases]
    return []


def handler_names(statement: ast.stmt) -> list[str]:
    """`except E as name`: the handler binds the name while it runs (and unbinds it after)."""
    handlers = statement.handlers if isinstance(statement, (ast.Try, ast.TryStar)) else []
    return [handler.name for handler in handlers if handler.name]


def defined(statement: ast.stmt) -> Iterator[str]:
    """The names an import, a class or a `def` binds."""
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        yield from (imported_as(alias) for alias in statement.names if alias.name != "*")
    elif isinstance(statement, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        yield statement.name


def bindings_after(body: list[ast.stmt], before: Held, scan: Scan) -> Held:
    held = dict(before)
    for statement in body:
        if isinstance(statement, ast.If):
            held = with_header_bindings(statement, held, scan)
            held = joined([bindings_after(statement.body, held, scan), bindings_after(statement.orelse, held, scan)])
        elif isinstance(statement, ast.Match):
            held = with_header_bindings(statement, held, scan)
            held = joined([held, *(bindings_after(case.body, held, scan) for case in statement.cases)])
        elif isinstance(statement, (ast.Try, ast.TryStar)):
            held = bindings_after_try(statement, held, scan)
        elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            held = bindings_after_block(statement, held, scan)
        else:
            for name, bindings in statement_bindings(statement, scan, held):
                may_keep = rewraps(statement, name) or is_star_import(statement)
                held[name] = (*held.get(name, ()), *bindings) if may_keep else bindings
    return held


def with_header_bindings(statement: ast.If | ast.Match, before: Held, scan: Scan) -> Held:
    """What a walrus in an `if`'s test or a `match`'s subject binds, or a `match`'s capture patterns
    may (each name may also keep what it held)."""
    return joined([before, dict(statement_bindings(statement, scan, before))])


def is_star_import(statement: ast.stmt) -> bool:
    """`from m import *`: it may bind any name, or none (`m`'s own, or those of its `__all__`)."""
    return isinstance(statement, ast.ImportFrom) and any(alias.name == "*" for alias in statement.names)


def rewraps(statement: ast.stmt, name: str) -> bool:
    """`f = torch.compile(f)`, `KV = wrap(KV)`: what the name held may still be what it holds."""
    value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
    return value is not None and any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(value))


def bindings_after_try(statement: ast.Try | ast.TryStar, before: Held, scan: Scan) -> Held:
    """A handler runs after any part of the body, nested blocks included, may have run."""
    after_body = bindings_after(statement.body, before, scan)
    interrupted = joined([before, bound_anywhere(statement.body, scan, before)])
    ends = [bindings_after(statement.orelse, after_body, scan)]
    ends += [bindings_after(handler.body, interrupted, scan) for handler in statement.handlers]
    return bindings_after(statement.finalbody, joined(ends), scan)


def bindings_after_block(
    statement: ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith, before: Held, scan: Scan
) -> Held:
    """A loop's body runs any number of times and a `with` body may be cut short
    (`suppress(ImportError)`): any of their bindings may hold after them."""
    held = dict(before)
    held.update(statement_bindings(statement, scan, before))
    after = joined([held, bound_anywhere(statement.body, scan, before)])
    orelse = statement.orelse if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)) else []
    return bindings_after(orelse, after, scan)


def bound_anywhere(body: list[ast.stmt], scan: Scan, before: Held) -> Held:
    """What any statement of the body (or of its blocks) binds, in any order and any number of times
    (a loop, a body cut short): an alias reads what its class's name held before the body or is bound
    to anywhere in it, round after round until a round adds no binding (each keeps the last's, so
    the rounds end)."""
    statements = list(block_statements(body))
    anywhere: Held = {}
    while True:
        context = joined([before, anywhere])
        found = joined([anywhere, *(dict(statement_bindings(statement, scan, context)) for statement in statements)])
        if binding_count(found) == binding_count(anywhere):
            return found
        anywhere = found


def binding_count(held: Held) -> int:
    return sum(len(set(bindings)) for bindings in held.values())


def joined(arms: list[Held]) -> Held:
    held: Held = {}
    for arm in arms:
        for name, bindings in arm.items():
            known = held.get(name)
            held[name] = bindings if known is None or known is bindings else tuple(dict.fromkeys([*known, *bindings]))
    return held


def statement_bindings(statement: ast.stmt, scan: Scan, held: Held) -> Iterator[tuple[str, tuple[Binding, ...]]]:
    """The tracked names one statement binds itself (not in its blocks), each to what it then holds
    (`held`: what each name holds before it)."""
    aliased = dict(class_aliases(statement, scan, held))
    for name, bindings in own_bindings(statement, scan, held):
        if name in scan.tracked:
            yield name, aliased.get(name, bindings)


def class_alias_targets(statement: ast.stmt) -> Iterator[str]:
    """`KV = StaticCache`, `KV = cu.StaticCache`: the names bound to a class's name (CapWords)."""
    if (
        isinstance(statement, ast.Assign)
        and ex.dotted_name(statement.value).rpartition(".")[2][:1].isupper()
        and not is_placeholder(statement.value)
    ):
        yield from (target.id for target in statement.targets if isinstance(target, ast.Name))


def class_aliases(statement: ast.stmt, scan: Scan, held: Held) -> Iterator[tuple[str, tuple[Binding, ...]]]:
    """Each alias the statement makes, with what the aliased name holds: an import or a class of the
    module held by the name (`KV = StaticCache`), a class of a module a held import names (`KV =
    cu.StaticCache`), or of transformers written out (`KV = transformers.StaticCache`); None for any
    other name."""
    for target in class_alias_targets(statement):
        assert isinstance(statement, ast.Assign)
        yield target, aliased_bindings(ex.dotted_name(statement.value), scan, held)


def aliased_bindings(value: str, scan: Scan, held: Held) -> tuple[Binding, ...]:
    prefix, _, last = value.rpartition(".")
    if not prefix:
        return held.get(value, (None,)) if value in scan.tracked else (None,)
    if prefix in TRANSFORMERS_MODULES:
        return ((prefix, last),)
    modules = held.get(prefix, (None,)) if prefix in scan.tracked else (None,)
    return tuple((module_named(binding), last) if isinstance(binding, tuple) else None for binding in modules)


def own_bindings(statement: ast.stmt, scan: Scan, held: Held) -> Iterator[tuple[str, tuple[Binding, ...]]]:
    if is_star_import(statement):
        yield from ((name, (None,)) for name in scan.tracked)
    elif isinstance(statement, ast.ImportFrom):
        source = absolute_module(statement, scan.module_name, scan.is_package)
        for alias in statement.names:
            if alias.name != "*":
                yield alias.asname or alias.name, ((source, alias.name) if source else None,)
    elif isinstance(statement, ast.Import):
        for alias in statement.names:
            parent, _, last = alias.name.rpartition(".")
            yield imported_as(alias), ((parent, last) if alias.asname and parent else None,)
    elif isinstance(statement, ast.ClassDef):
        yield from ((name, (None,)) for name in stored_names(statement))  # a walrus in a base or a decorator
        yield statement.name, (statement,)
    elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield from ((name, (None,)) for name in stored_names(statement))
        yield statement.name, (None,)
    elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and is_placeholder(statement.value, scan, held):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        yield from ((target.id, ()) for target in targets if isinstance(target, ast.Name))
    else:
        yield from ((name, (None,)) for name in stored_names(statement))


def is_placeholder(value: ast.expr | None, scan: Scan | None = None, held: Held | None = None) -> bool:
    """`None`, a string, `object`, `Any` or `typing.Any`: no class (`object` and `Any` as the module
    binds them, where `scan` and `held` say: `Any` imported from `typing` only, `object` not bound)."""
    if isinstance(value, ast.Constant):
        return value.value is None or isinstance(value.value, str)
    name = ex.dotted_name(value) if value is not None else ""
    if name not in PLACEHOLDERS:
        return False
    if scan is None or held is None or name.partition(".")[0] not in scan.tracked:
        return True
    return name == "Any" and all(binding in TYPING_ANY for binding in held.get(name, ()))


TYPING_ANY = frozenset({("typing", "Any"), ("typing_extensions", "Any")})


def stored_names(statement: ast.stmt, in_expressions: bool = True) -> Iterator[str]:
    """The names a statement binds or deletes itself, not in its blocks: its targets (`a, b = ...`, `x
    += 1`, `for k in ...`, `with ... as m`, `del x`), a walrus anywhere in what it evaluates (a value, a
    test, a default, a decorator, a base) and a `match`'s captures; not an annotation's target without
    a value, nor a comprehension's own variables. `in_expressions`: the statement may hold a walrus (else
    only the targets and the patterns are walked, not every value)."""
    return names_in(own_parts(statement) if in_expressions else binding_targets(statement))


def names_in(parts: list[ast.AST]) -> Iterator[str]:
    """The names stored, deleted or captured in `parts`, not a comprehension's own variables."""
    stored: list[ast.Name] = []
    own_variables: set[int] = set()
    for part in parts:
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                stored.append(node)
            elif isinstance(node, ast.comprehension):
                own_variables.update(id(target) for target in ast.walk(node.target))
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                yield node.name
            elif isinstance(node, ast.MatchMapping) and node.rest:
                yield node.rest
    yield from (node.id for node in stored if id(node) not in own_variables)


def binding_targets(statement: ast.stmt) -> list[ast.AST]:
    """Where a statement binds or deletes names by its syntax, a walrus aside: its targets and a
    `match`'s patterns."""
    if isinstance(statement, (ast.Assign, ast.Delete)):
        return list(statement.targets)
    if isinstance(statement, (ast.AugAssign, ast.For, ast.AsyncFor)) or (
        isinstance(statement, ast.AnnAssign) and statement.value is not None
    ):
        return [statement.target]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in statement.items if item.optional_vars is not None]
    if isinstance(statement, ast.Match):
        return [case.pattern for case in statement.cases]
    return []


def own_parts(statement: ast.stmt) -> list[ast.AST]:
    """What a statement evaluates or binds as it runs, without its blocks (and without the target of
    an annotation that has no value)."""
    parts: list[ast.AST] = []
    for field, value in ast.iter_fields(statement):
        if field in ("body", "orelse", "finalbody", "handlers"):
            continue
        if field == "cases":
            parts += [part for case in value for part in (case.pattern, case.guard) if part is not None]
        elif field == "target" and isinstance(statement, ast.AnnAssign) and statement.value is None:
            continue
        elif isinstance(value, list):
            parts += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            parts.append(value)
    return parts

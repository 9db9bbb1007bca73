"""Taint state: which source calls a value may come from, and what is known about each name.

A value is *tainted* by the set of `Origin`s it may come from. `State` maps the names (and plain
attribute chains such as `self.past`) of one point of a function to their taint and their *kind*:
what the name is known to hold (an int, a full tensor, a cache object whose length is an int).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from lint_rules.engine.facts import expressions as ex
from lint_rules.engine.flow.scope import EntryKinds, Scope, nothing_known

INT = "int"
TENSOR = "tensor"
INT_LENGTH_CACHE = "int-length-cache"
"""An object whose `get_seq_length()` is known to return an int (e.g. a `DynamicCache`)."""
TENSOR_LENGTH_CACHE = "tensor-length-cache"
"""An object whose `get_seq_length()` may return a tensor, as the code shows (a `StaticCache` built,
annotated or checked with `isinstance`): tracked only where `int-length-caches` is declared, where a
receiver not known to be one is an int-length cache (see `declarations`)."""
OUTPUTS = "outputs"
"""The kinds of a model's outputs start with it: what cache each field holds (`model_outputs`)."""
OUTPUTS_PREFIX = OUTPUTS + ":"
OBJECT_KINDS = frozenset({INT_LENGTH_CACHE})
"""Kinds that an attribute stored into the object (`cache.inner = other`, `out.past_key_values = c`)
changes; so does every kind of model outputs."""
NONE = "none"
"""A plain name bound to `None` (until it is rebound): `c is not None` is false there."""
SOURCE_GETTER = "source-getter"
"""A bound source method (`length = cache.get_seq_length`): calling it is a source."""
EAGER_ONLY = "<eager only>"
"""A state key set where a test proved that nothing is being compiled (`if not is_compiling():`)."""
NOT_TRACED = "<not traced>"
"""A state key set where a check that is True whenever Dynamo or export traces (`is_compiling()`,
`is_torchdynamo_compiling()`) was False: in a region they trace, that code is never traced."""


def is_object_kind(kind: str) -> bool:
    return kind in OBJECT_KINDS or kind.startswith(OUTPUTS_PREFIX)


class Origin:
    """One source call, e.g. `cache.get_seq_length()` on line 12, or a call of a same-module function
    that returns such a value (`self.past_length()`): what the walk learned about it. Its fix plan is
    made from these facts by `fixplan.origin_fix_plan`, with the run's other origins."""

    def __init__(
        self, call: ast.Call, method: str, statement: ast.stmt, scope: Scope, eager_only: bool = False
    ) -> None:
        self.call = call
        self.method = method
        self.statement = statement
        self.scope = scope
        self.flowed_into: list[ast.expr] = []
        """Targets of its own statement that the value (or a result computed from it) is bound to."""
        self.used_in_own_statement = False
        self.returned = False
        """The value leaves the function: a guard would change what every caller gets."""
        self.eager_only = eager_only
        """Bound under `if not torch.compiler.is_compiling():`: a guard there never runs compiled."""
        self.reported = False
        """A finding comes from it, so the fixer acts on its plan."""
        self.shared = False
        """A call whose value reaches its uses through a `nonlocal` or `global` name the callee binds
        (`Summary.shares_source`), not through its result: no edit here would fix them."""

    @property
    def line(self) -> int:
        return self.call.lineno


class ParameterOrigin:
    """A parameter of the function being summarized: where it reaches an int use, a tainted
    argument passed to it is a finding at the caller."""

    def __init__(self, name: str, position: int) -> None:
        self.name = name
        self.position = position


Taint = frozenset[Origin | ParameterOrigin]
CLEAN: Taint = frozenset()


def key_of(node: ast.expr) -> str:
    """The state key of a name or a plain attribute chain (`self.past`); "" for anything else."""
    return ex.dotted_name(node)


def subscript_key(node: ast.expr) -> str:
    """The state key of an entry a test may be about: a container with a key subscripted by a
    constant or by a name or attribute chain (`kwargs["past_key_value"]`, `cache.layers[i]`,
    `cache.layers[self.layer_idx]`); "" for anything else. What is known of it is forgotten when the
    container or the index is rebound (`about`), an item of the container is stored or deleted
    (`State.stored_at`), or a method runs on either (`State.forget_parts_of`)."""
    if not isinstance(node, ast.Subscript):
        return ""
    container = key_of(node.value)
    index = node.slice
    named = repr(index.value) if isinstance(index, ast.Constant) else key_of(index)
    return f"{container}[{named}]" if container and named else ""


def has_constant_index(key: str) -> bool:
    """The entry key is subscripted by a string or a non-negative int literal (`kwargs['cache']`,
    `c.layers[0]`): not a name or chain, nor `True`, `1.0` (both the same key as `1`) or `None`."""
    if not key.endswith("]"):
        return False
    index = key[key.index("[") + 1 : -1]
    return index[:1] in ("'", '"') or index.isdigit()


def about(name: str, key: str) -> bool:
    """`name` is `key`, a part of what it holds (`key.attr`, `key[...]`), or an entry subscripted by it
    (`c.layers[key]`, `c.layers[key.attr]`)."""
    if name == key or name.startswith((key + ".", key + "[")):
        return True
    if not name.endswith("]"):
        return False
    index = name[name.index("[") + 1 : -1]
    return index == key or index.startswith(key + ".")


class State:
    """What is known at one point of a function: which names hold a tainted value, and their kinds."""

    def __init__(
        self,
        taint: dict[str, Taint] | None = None,
        kinds: dict[str, str] | None = None,
        entry: EntryKinds = nothing_known,
        rebound: set[str] | None = None,
        entry_names: frozenset[str] = frozenset(),
        paths: PathFacts | None = None,
    ) -> None:
        self.taint: dict[str, Taint] = taint or {}
        self.kinds: dict[str, str] = kinds or {}
        self.entry = entry
        self.entry_names = entry_names
        """Plain names `entry` may know (parameters); any `self.attr` it may know too."""
        self.rebound: set[str] = rebound or set()
        """Keys `entry` may know that were bound in this walk: what they held on entry no longer counts."""
        self.paths = paths or PathFacts()

    def kind(self, key: str) -> str:
        if key in self.kinds:
            return self.kinds[key]
        return "" if key in self.rebound else self.entry(key)

    def copy(self) -> State:
        return State(
            dict(self.taint), dict(self.kinds), self.entry, set(self.rebound), self.entry_names, self.paths.copy()
        )

    def bind(self, key: str, taint: Taint, kind: str = "") -> None:
        if taint:
            self.taint[key] = taint
        else:
            self.taint.pop(key, None)
        parts = (key + ".", key + "[")
        for stale in [name for name in self.taint if name.startswith(parts)]:
            del self.taint[stale]
        for stale in [name for name in self.kinds if name != key and about(name, key)]:
            del self.kinds[stale]
            self.rebound.add(stale)
        if key in self.entry_names or key.startswith("self."):
            self.rebound.add(key)
        if kind:
            self.kinds[key] = kind
        else:
            self.kinds.pop(key, None)
        self.stored_into(key.rpartition(".")[0])
        if self.paths:
            self.paths.forget(key)

    def stored_into(self, owner: str) -> None:
        """An attribute or item of the object `owner` holds was stored (`cache.inner = other`,
        `out["past_key_values"] = c`): what its kind told of it may no longer hold."""
        if owner and is_object_kind(self.kinds.get(owner, "")):
            del self.kinds[owner]
            self.rebound.add(owner)

    def let_go(self, node: ast.expr) -> None:
        """The model's outputs `node` names are handed on (`fill(out)`, `setattr(out, ...)`,
        `out.__setitem__(...)`, `other = out`, also as an arm of `a if t else b`, an operand of `a or
        b`, or through a walrus): what is stored into them there is not seen, so what their kind told
        of them may no longer hold."""
        if not self.holds_outputs():
            return
        if isinstance(node, ast.IfExp):
            self.let_go(node.body)
            self.let_go(node.orelse)
        elif isinstance(node, ast.BoolOp):
            for operand in node.values:
                self.let_go(operand)
        elif isinstance(node, ast.NamedExpr):
            self.let_go(node.value)
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return
        key = key_of(node)
        if key and self.kinds.get(key, "").startswith(OUTPUTS_PREFIX):
            del self.kinds[key]
            self.rebound.add(key)

    def knows_parts_of(self, root: str) -> bool:
        return any(key != root and about(key, root) for key in self.kinds)

    def forget_parts_of(self, root: str) -> None:
        """Code ran that may rebind the attributes of the object `root` holds (`self.step()`), or its
        items: what this walk bound to them (or to entries they index) is forgotten, and what the
        entry knows of them (every store of the class, `attribute_receivers`) holds again."""
        for key in [key for key in self.kinds if key != root and about(key, root)]:
            del self.kinds[key]
            self.rebound.discard(key)
        if self.paths:
            self.paths.forget_parts(root)

    def forget_entries(self) -> None:
        """What the walk knows of every entry (`cache.layers[i]`) is gone."""
        for key in [key for key in self.kinds if key.endswith("]")]:
            del self.kinds[key]
            self.paths.forget(key)

    def stored_at(self, container: str, entry: str, deleted: bool = False) -> None:
        """An item of `container` was stored (`entry`: its key, `subscript_key`; "" when not plain):
        what was known of its entries is gone, but for other constant keys; or deleted, which may
        shift every entry after it (`del cache.layers[0]`)."""
        constant = has_constant_index(entry) and not deleted
        for key in [key for key in self.kinds if key.startswith(container + "[")]:
            if key == entry or not (constant and has_constant_index(key)):
                del self.kinds[key]
                self.paths.forget(key)
        if entry:
            self.paths.forget(entry)

    def holds_outputs(self) -> bool:
        return any(kind.startswith(OUTPUTS_PREFIX) for kind in self.kinds.values())

    def clean(self, key: str) -> None:
        self.taint.pop(key, None)

    @staticmethod
    def merge(states: Iterable[State | None]) -> State | None:
        reachable = [state for state in states if state is not None]
        if len(reachable) <= 1:
            return reachable[0].copy() if reachable else None
        first = reachable[0]
        merged = State(dict(first.taint), dict(first.kinds), first.entry, set(first.rebound), first.entry_names)
        for other in reachable[1:]:
            for key, taint in other.taint.items():
                merged.taint[key] = merged.taint.get(key, CLEAN) | taint
            keys = set(merged.kinds) | set(other.kinds)
            merged.kinds = {key: kind for key in keys if (kind := merged.kind(key)) == other.kind(key)}
            merged.rebound |= other.rebound
        guarded = any(state.paths.guards for state in reachable)  # only guards need the live values
        merged.paths = PathFacts.merge(
            [(state.paths, state.live_origins() if guarded else CLEAN) for state in reachable]
        )
        return merged

    def same_as(self, other: State) -> bool:
        return (
            self.taint == other.taint
            and self.kinds == other.kinds
            and self.rebound == other.rebound
            and self.paths == other.paths
        )

    def live_origins(self) -> Taint:
        return CLEAN.union(*self.taint.values())

    def evaluated(self, origin: Origin) -> None:
        """A source call runs here: it ran only where the keys known not None here were not None, and
        it asked the object its receiver holds now."""
        if self.paths.not_none:
            self.paths.guard(origin, already_live=origin in self.live_origins())
        receiver = receiver_key(origin.call)
        if receiver:
            self.paths.asked[receiver] = self.paths.asked.get(receiver, CLEAN) | {origin}

    def known_none(self, key: str) -> None:
        """`key` is None here: the values of the source calls that ran only where it was not None are not."""
        guarded = self.paths.guards.get(key, CLEAN)
        self.paths.not_none.discard(key)
        if guarded:
            for name, taint in list(self.taint.items()):
                if taint & guarded:
                    self.bind_taint_only(name, taint - guarded)

    def forget_lengths_asked_of(self, receiver: str) -> None:
        """After `c.seen_tokens` is read or a method no cache has is called (`releases.path_ending_names`),
        the lengths asked of the object `c` holds are not a transformers tensor cache's: their taint ends."""
        asked = self.paths.asked.get(receiver, CLEAN)
        if not asked:
            return
        for name, taint in list(self.taint.items()):
            if taint & asked:
                self.bind_taint_only(name, taint - asked)

    def bind_taint_only(self, key: str, taint: Taint) -> None:
        if taint:
            self.taint[key] = taint
        else:
            self.taint.pop(key, None)

    def adopt_guards(self, inner: State) -> None:
        """After an expression evaluated in a narrowed copy (an `if`-expression arm, the rest of an `and`):
        the source calls that ran there ran only where its keys were not None, and asked the objects
        their receivers hold."""
        if inner.paths.guards or inner.paths.asked:
            self.paths.adopt(inner.paths, self.live_origins())


class PathFacts:
    """What a path through the function tells beyond taint and kinds."""

    def __init__(
        self,
        not_none: set[str] | None = None,
        guards: dict[str, Taint] | None = None,
        flags: dict[str, tuple[ast.expr, frozenset[str]]] | None = None,
        asked: dict[str, Taint] | None = None,
    ) -> None:
        self.not_none = not_none or set()
        """Keys known not to be None here (`if c is not None:`, `if c:`, `c.x if c is not None else 0`)."""
        self.guards = guards or {}
        """Per key: the source calls that ran only where it was not None (while it has not been rebound):
        `past = c.get_seq_length() if c is not None else 0` has no such value under `if c is None:`."""
        self.flags = flags or {}
        """A name bound to a test (`is_dynamic = isinstance(c, DynamicCache)`), with the keys the test is
        about: `if is_dynamic:` narrows like the test would, until one of them is rebound."""
        self.asked = asked or {}
        """Per key: the source calls asked of the object it holds now (`c.get_seq_length()`, until `c`
        is rebound), on every path."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PathFacts) and self.facts == other.facts

    @property
    def facts(self) -> tuple[object, ...]:
        return self.not_none, self.guards, self.flags, self.asked

    def __bool__(self) -> bool:
        return bool(self.not_none or self.guards or self.flags or self.asked)

    def copy(self) -> PathFacts:
        return PathFacts(set(self.not_none), dict(self.guards), dict(self.flags), dict(self.asked))

    def forget(self, key: str) -> None:
        """`key` is rebound: nothing known about its old value holds."""

        def known(name: str) -> bool:
            return about(name, key)

        if any(map(known, self.not_none)):
            self.not_none = {name for name in self.not_none if not known(name)}
        if any(map(known, self.guards)):
            self.guards = {name: taint for name, taint in self.guards.items() if not known(name)}
        if any(map(known, self.asked)):
            self.asked = {name: taint for name, taint in self.asked.items() if not known(name)}
        if self.flags:
            self.flags = {
                name: flag
                for name, flag in self.flags.items()
                if not known(name) and not any(known(subject) for subject in flag[1])
            }

    def forget_parts(self, root: str) -> None:
        """A method ran on `root`: what was known of its attributes and entries (not of itself) is gone."""
        if not root:
            return
        parts = {
            name
            for name in [*self.not_none, *self.guards, *self.flags, *self.asked]
            if name != root and about(name, root)
        }
        parts |= {
            name for name, flag in self.flags.items() if any(each != root and about(each, root) for each in flag[1])
        }
        for name in parts:
            self.forget(name)

    def guard(self, origin: Origin, already_live: bool) -> None:
        """A value still around from an earlier run of the same call keeps only the guards it had."""
        for key in self.not_none:
            if not already_live or origin in self.guards.get(key, CLEAN):
                self.guards[key] = self.guards.get(key, CLEAN) | {origin}

    def adopt(self, inner: PathFacts, live: Taint) -> None:
        """The guards and the asked receivers of the source calls that ran in `inner`; a value still
        around (`live`) from an earlier run of the same call keeps only what it had."""
        for mine, theirs in ((self.guards, inner.guards), (self.asked, inner.asked)):
            for key, origins in theirs.items():
                new = origins - live
                if new:
                    mine[key] = mine.get(key, CLEAN) | new

    @staticmethod
    def merge(paths: list[tuple[PathFacts, Taint]]) -> PathFacts:
        """Known on every path: not-None keys and flags on all of them; a guard where no path holds the
        value unguarded."""
        first = paths[0][0]
        merged = PathFacts(set.intersection(*(facts.not_none for facts, _ in paths)))
        merged.flags = {
            name: flag for name, flag in first.flags.items() if all(facts.flags.get(name) == flag for facts, _ in paths)
        }
        merged.asked = {
            name: asked
            for name in first.asked
            if (asked := frozenset.intersection(*(facts.asked.get(name, CLEAN) for facts, _ in paths)))
        }
        for key in {key for facts, _ in paths for key in facts.guards}:
            guarded = CLEAN.union(*(facts.guards.get(key, CLEAN) for facts, _ in paths))
            for facts, live in paths:
                guarded -= live - facts.guards.get(key, CLEAN)
            if guarded:
                merged.guards[key] = guarded
        return merged


def real_origins(taint: Taint) -> list[Origin]:
    return [origin for origin in taint if isinstance(origin, Origin)]


def receiver_key(call: ast.Call) -> str:
    """The state key of what a source call asks (`c` of `c.get_seq_length()`)."""
    receiver = ex.getter_receiver(call)
    return key_of(receiver) if receiver is not None else ""

"""A transformers cache counts what its layers count: `DynamicCache()` has an int length only while no
code puts another layer in it. A function may do that by handing the cache to one of the module's
functions or methods that does (`lint_rules/engine/facts/layer_changes.py`): each shape below must
be reported, and its twin, where the helper only reads the layers, stays silent."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT

PRELUDE = """\
from torch import nn
from transformers import DynamicCache
from transformers.cache_utils import StaticLayer

"""
CHANGE = ".layers.append(StaticLayer(8))"
READ = ".layers[0]"

HANDED_TO_A_CHANGER = {
    "a-module-function": """
        def grow(c):
            c.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            grow(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a-keyword-argument": """
        def grow(c=None):
            c.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            grow(c=cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a-method-on-self": """
        class Runner:
            def _grow(self, c):
                c.layers.append(StaticLayer(8))

            def generate(self, ids):
                cache = DynamicCache()
                self._grow(cache)
                return ids[:, cache.get_seq_length():]
        """,
    "a-constructor": """
        class Holder:
            def __init__(self, c):
                c.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            Holder(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a-subclass-of-a-changing-class": """
        class Holder:
            def __init__(self, c):
                c.layers.append(StaticLayer(8))

        class Sub(Holder):
            pass

        def generate(ids):
            cache = DynamicCache()
            Sub(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "through-another-function": """
        def grow(c):
            c.layers.append(StaticLayer(8))

        def prepare(c, n):
            for _ in range(n):
                grow(c)

        def generate(ids):
            cache = DynamicCache()
            prepare(cache, 2)
            return ids[:, cache.get_seq_length():]
        """,
    "an-alias-of-the-function": """
        def grow(c):
            c.layers.append(StaticLayer(8))

        add = grow

        def generate(ids):
            cache = DynamicCache()
            add(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a-lambda": """
        add = lambda c: c.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            add(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a-module-whose-forward-changes-them": """
        class Block(nn.Module):
            def forward(self, x, c):
                c.layers.append(StaticLayer(8))
                return x

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def generate(self, ids):
                cache = DynamicCache()
                self.block(ids, cache)
                return ids[:, cache.get_seq_length():]
        """,
    "the-function-handed-on": """
        from helpers import apply

        def grow(c):
            c.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            apply(grow, cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a-decorated-function": """
        from helpers import register, run_hooks

        @register
        def grow(c):
            c.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            run_hooks(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "an-annotated-parameter": """
        def grow(c):
            c.layers.append(StaticLayer(8))

        def generate(ids, cache: DynamicCache):
            grow(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "an-attribute": """
        def grow(c):
            c.layers.append(StaticLayer(8))

        class Runner:
            def __init__(self):
                self.cache = DynamicCache()

            def generate(self, ids):
                grow(self.cache)
                return ids[:, self.cache.get_seq_length():]
        """,
    "a-constructor-that-keeps-it": """
        class Holder:
            def __init__(self, c):
                self.inner = c
                self.inner.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            Holder(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a-method-changing-an-attribute-of-its-object": """
        class Runner:
            def __init__(self):
                self.cache = DynamicCache()

            def _sync(self):
                self.cache.layers.append(StaticLayer(8))

            def generate(self, ids):
                self._sync()
                return ids[:, self.cache.get_seq_length():]
        """,
    "a-getter-read-in-a-closure": """
        def grow(c):
            c.layers.append(StaticLayer(8))

        def generate(ids):
            cache = DynamicCache()
            n = cache.get_seq_length
            grow(cache)
            def window():
                return ids[:, n():]
            return window()
        """,
}


def codes(code: str) -> list[str]:
    text = PRELUDE + textwrap.dedent(code).lstrip("\n")
    return [finding.code for finding in analyze_source(text, "m.py", releases=DYNAMIC_CACHE_COUNTS_INT)]


@pytest.mark.parametrize("shape", HANDED_TO_A_CHANGER.values(), ids=HANDED_TO_A_CHANGER.keys())
def test_a_cache_handed_to_a_function_that_changes_its_layers_is_reported(shape: str) -> None:
    assert CHANGE in shape
    assert codes(shape) == ["SLG002"]


@pytest.mark.parametrize("shape", HANDED_TO_A_CHANGER.values(), ids=HANDED_TO_A_CHANGER.keys())
def test_the_same_shape_whose_helper_only_reads_the_layers_is_silent(shape: str) -> None:
    """The twin: a `DynamicCache()` handed to a function that reads its layers keeps its int length
    (on releases before 5.25, where it counts one)."""
    assert codes(shape.replace(CHANGE, READ)) == []


MUST_STAY_SILENT = {
    "a constructor that changes only its new object's own layers reaches nothing it is handed": """
        class Holder:
            def __init__(self, c):
                self.layers = [StaticLayer(8)]

        def generate(ids):
            cache = DynamicCache()
            Holder(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a method of another class named like a changer, called on an attribute, is that class's": """
        class Layer:
            def get_seq_length(self):
                return 0

        class Beam:
            def get_seq_length(self):
                self.layers.append(Layer())
                return 0

        class Runner:
            def __init__(self):
                self.cache = DynamicCache()
                self.layer = Layer()

            def generate(self, ids):
                self.layer.get_seq_length()
                return ids[:, self.cache.get_seq_length():]
        """,
    "a function that changes only the layers of a cache it builds from nothing it is handed": """
        def fresh_copy(c):
            copied = DynamicCache()
            copied.layers.append(StaticLayer(8))
            return copied

        def generate(ids):
            cache = DynamicCache()
            fresh_copy(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "a changer handed to one call changes what that call is handed, not what every call is": """
        from helpers import Process, log

        def grow(c):
            c.layers.append(StaticLayer(8))

        def start(model):
            Process(target=grow, args=(model,))

        def generate(ids):
            cache = DynamicCache()
            log(cache)
            return ids[:, cache.get_seq_length():]
        """,
}


READ_ONLY_ALIASES = {
    "in-a-function-handed-the-cache": """
        def validate(c):
            layers = getattr(c, "layers", None)
            if isinstance(layers, list) and len(layers) > 8 or not layers:
                raise ValueError(layers[0])

        def generate(ids):
            cache = DynamicCache()
            validate(cache)
            return ids[:, cache.get_seq_length():]
        """,
    "in-the-function-itself": """
        def generate(ids):
            cache = DynamicCache()
            layers = cache.layers
            for layer in layers:
                print(layer)
            return ids[:, cache.get_seq_length():]
        """,
}


@pytest.mark.parametrize("shape", READ_ONLY_ALIASES.values(), ids=READ_ONLY_ALIASES.keys())
def test_a_local_alias_of_the_layers_only_read_changes_nothing(shape: str) -> None:
    """`layers = getattr(c, "layers", None)` read by `len`, `isinstance`, a loop, an index or a test
    (transformers-mblt's batch check). The twin: the same alias appended to may put in any layer."""
    assert codes(shape) == []
    appended = shape.replace(
        "        return ids[:, cache", "        layers.append(StaticLayer(8))\n        return ids[:, cache"
    )
    if "validate" in shape:
        appended = shape.replace(
            "                raise ValueError(layers[0])",
            "                raise ValueError(layers[0])\n            layers.append(StaticLayer(8))",
        )
    assert codes(appended) == ["SLG002"]


@pytest.mark.parametrize("shape", MUST_STAY_SILENT.values(), ids=MUST_STAY_SILENT.keys())
def test_what_no_changer_reaches_keeps_its_int_length(shape: str) -> None:
    assert codes(shape) == []


def test_a_cache_built_from_what_the_function_is_handed_may_alias_it() -> None:
    """The twin of the fresh copy: `DynamicCache(c)` is handed the parameter, so the changed layers
    may be the parameter's (the direction that reports)."""
    aliased = MUST_STAY_SILENT[
        "a function that changes only the layers of a cache it builds from nothing it is handed"
    ].replace("copied = DynamicCache()", "copied = DynamicCache(c)")
    assert codes(aliased) == ["SLG002"]


# ----- a second reader's programs (2026-12-05): each was silent at 549793b ----------------------------

READER_IMPORTS = "from transformers import DynamicCache\nfrom transformers.cache_utils import StaticLayer\n"

REVIEWED_MUST_REPORT = {
    "an alias given back by `or` (regression)": """\
def generate(ids):
    cache = DynamicCache()
    layers = cache.layers
    (layers or []).append(StaticLayer(8))
    return ids[:, cache.get_seq_length():]
""",
    "an alias given back by `and`": """\
def generate(ids):
    cache = DynamicCache()
    layers = cache.layers
    (ids is not None and layers).append(StaticLayer(8))
    return ids[:, cache.get_seq_length():]
""",
    "an alias given back by max()": """\
def generate(ids):
    cache = DynamicCache()
    layers = cache.layers
    more = max(layers, [], key=len)
    more.append(StaticLayer(8))
    return ids[:, cache.get_seq_length():]
""",
    "a changer kept by functools.partial": """\
import functools

def grow(c):
    c.layers.append(StaticLayer(8))

add = functools.partial(grow)

def generate(ids):
    cache = DynamicCache()
    add(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changer kept by staticmethod() in a class body": """\
def grow(c):
    c.layers.append(StaticLayer(8))

class Runner:
    add = staticmethod(grow)

    def generate(self, ids):
        cache = DynamicCache()
        self.add(cache)
        return ids[:, cache.get_seq_length():]
""",
    "a changer kept in a list": """\
def grow(c):
    c.layers.append(StaticLayer(8))

HOOKS = []
HOOKS.append(grow)

def generate(ids):
    cache = DynamicCache()
    for hook in HOOKS:
        hook(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changer kept by dict.setdefault": """\
def grow(c):
    c.layers.append(StaticLayer(8))

HOOKS = {}
HOOKS.setdefault("grow", grow)

def generate(ids):
    cache = DynamicCache()
    HOOKS["grow"](cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changing lambda in a dict": """\
OPS = {'add': lambda c: c.layers.append(StaticLayer(8))}

def generate(ids):
    cache = DynamicCache()
    OPS['add'](cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changing lambda bound by a for target": """\
for add in [lambda c: c.layers.append(StaticLayer(8))]:
    pass

def generate(ids):
    cache = DynamicCache()
    add(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changing lambda in a conditional expression": """\
add = (lambda c: c.layers.append(StaticLayer(8))) if True else None

def generate(ids):
    cache = DynamicCache()
    add(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changing lambda as a default": """\
def generate(ids, add=lambda c: c.layers.append(StaticLayer(8))):
    cache = DynamicCache()
    add(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changing lambda used as a method": """\
class Runner:
    grow = lambda self, c: c.layers.append(StaticLayer(8))

    def generate(self, ids):
        cache = DynamicCache()
        self.grow(cache)
        return ids[:, cache.get_seq_length():]
""",
    "a bound method alias of a method that changes its object": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()

    def _sync(self):
        self.cache.layers.append(StaticLayer(8))

    def generate(self, ids):
        sync = self._sync
        sync()
        return ids[:, self.cache.get_seq_length():]
""",
    "a method that changes its object, in a loop over a tuple": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()

    def _sync(self):
        self.cache.layers.append(StaticLayer(8))

    def generate(self, ids):
        for step in (self._sync,):
            step()
        return ids[:, self.cache.get_seq_length():]
""",
    "a property that changes its object": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()

    @property
    def synced(self):
        self.cache.layers.append(StaticLayer(8))
        return self

    def generate(self, ids):
        self.synced
        return ids[:, self.cache.get_seq_length():]
""",
    "a method that changes its object, through super()": """\
class Base:
    def _sync(self):
        self.cache.layers.append(StaticLayer(8))

class Runner(Base):
    def __init__(self):
        self.cache = DynamicCache()

    def generate(self, ids):
        super()._sync()
        return ids[:, self.cache.get_seq_length():]
""",
    "a forward that changes its object, run by self(ids)": """\
from torch import nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = DynamicCache()

    def forward(self, ids):
        self.cache.layers.append(StaticLayer(8))
        return ids

    def generate(self, ids):
        self(ids)
        return ids[:, self.cache.get_seq_length():]
""",
    "a change through *args": """\
def grow(*cs):
    cs[0].layers.append(StaticLayer(8))

def generate(ids):
    cache = DynamicCache()
    grow(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a change through **kwargs": """\
def grow(**kw):
    kw["c"].layers.append(StaticLayer(8))

def generate(ids):
    cache = DynamicCache()
    grow(c=cache)
    return ids[:, cache.get_seq_length():]
""",
    "a change of a subscripted object in the function itself": """\
def generate(ids):
    cache = DynamicCache()
    pair = [cache]
    pair[0].layers.append(StaticLayer(8))
    return ids[:, cache.get_seq_length():]
""",
    "an attribute whose layers __init__ changes": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
        self.cache.layers.append(StaticLayer(8))

    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute whose layers __init__ changes through a helper": """\
def grow(c):
    c.layers.append(StaticLayer(8))

class Runner:
    def __init__(self):
        self.cache = DynamicCache()
        grow(self.cache)

    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute whose layers a method never called here changes": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()

    def warm(self):
        self.cache.layers.append(StaticLayer(8))

    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "a class-level cache changed in the class body": """\
def grow(c):
    c.layers.append(StaticLayer(8))

class Runner:
    cache = DynamicCache()
    grow(cache)

    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
}
REVIEWED_MUST_REPORT["a lambda in a dict that calls a changer"] = """\
from helpers import run_hooks


def grow(c):
    c.layers.append(StaticLayer(8))


HOOKS = {"grow": lambda c: grow(c)}


def generate(ids):
    cache = DynamicCache()
    run_hooks(HOOKS, cache)
    return ids[:, cache.get_seq_length():]
"""
REVIEWED_MUST_STAY_SILENT = {
    "reading a changer's docs runs nothing": """\
from helpers import log

def grow(c):
    c.layers.append(StaticLayer(8))

HELP = grow.__doc__

def generate(ids):
    cache = DynamicCache()
    log(cache)
    return ids[:, cache.get_seq_length():]
""",
    "comparing a changer runs nothing": """\
from helpers import log

def grow(c):
    c.layers.append(StaticLayer(8))

def generate(ids, hook=None):
    cache = DynamicCache()
    if hook is grow:
        pass
    log(cache)
    return ids[:, cache.get_seq_length():]
""",
}


def reviewed_codes(program: str) -> list[str]:
    """The codes for a reader's program, under the two imports every one of them starts with."""
    text = READER_IMPORTS + program
    return [finding.code for finding in analyze_source(text, "m.py", releases=DYNAMIC_CACHE_COUNTS_INT)]


@pytest.mark.parametrize("program", REVIEWED_MUST_REPORT.values(), ids=REVIEWED_MUST_REPORT.keys())
def test_a_second_readers_change_of_the_layers_is_reported(program: str) -> None:
    """Returned by `or`/`and`/`max`, kept by a call and run later, a lambda bound otherwise than by
    `name = lambda`, a bound method or property of the object, `super()`, `*args`/`**kwargs`, an
    attribute whose layers any code of the module changes (`__init__`, an uncalled method, a class body)."""
    assert "SLG002" in reviewed_codes(program)


@pytest.mark.parametrize("program", REVIEWED_MUST_STAY_SILENT.values(), ids=REVIEWED_MUST_STAY_SILENT.keys())
def test_reading_a_changer_without_running_it_keeps_the_int_length(program: str) -> None:
    assert reviewed_codes(program) == []


# ----- a second reader's second round (2026-12-05): each was silent at 473b700 -----------------------

SECOND_READER_MUST_REPORT = {
    "an attribute changed through a local alias in another method": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def warm(self):
        c = self.cache
        c.layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute handed on through a local alias": """\
def grow(c):
    c.layers.append(StaticLayer(8))
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def warm(self):
        c = self.cache
        grow(c)
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute bound by a chained store": """\
class Runner:
    def __init__(self):
        self.cache = c = DynamicCache()
        c.layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute changed through a tuple of attributes": """\
def grow(c):
    c.layers.append(StaticLayer(8))
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
        self.other = DynamicCache()
    def warm(self):
        for c in (self.cache, self.other):
            grow(c)
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute changed through a loop target": """\
class Runner:
    def __init__(self):
        self.caches = [DynamicCache()]
    def warm(self):
        for c in self.caches:
            c.layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.caches[0].get_seq_length():]
""",
    "an attribute changed through a with target": """\
from contextlib import nullcontext
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def warm(self):
        with nullcontext(self.cache) as c:
            c.layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an instance's attribute aliased at module level": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
r = Runner()
c = r.cache
c.layers.append(StaticLayer(8))
""",
    "an instance's attribute aliased in a function": """\
def grow(c):
    c.layers.append(StaticLayer(8))
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
def main():
    r = Runner()
    c = r.cache
    grow(c)
""",
    "a class attribute aliased at module level": """\
class Runner:
    cache = DynamicCache()
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
c = Runner.cache
c.layers.append(StaticLayer(8))
""",
    "a class attribute aliased in the class body": """\
class Runner:
    cache = DynamicCache()
    _c = cache
    _c.layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "a class attribute in a tuple in the class body": """\
def grow(c):
    c.layers.append(StaticLayer(8))
class Runner:
    cache = DynamicCache()
    for _c in (cache,):
        grow(_c)
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an element of an attribute changed": """\
class Runner:
    def __init__(self):
        self.caches = [DynamicCache()]
    def warm(self):
        self.caches[0].layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.caches[0].get_seq_length():]
""",
    "an attribute changed through a walrus": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def warm(self):
        (c := self.cache).layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute changed through a conditional expression": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
        self.other = None
    def warm(self):
        (self.other or self.cache).layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute changed through a method returning it": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def get(self):
        return self.cache
    def warm(self):
        self.get().layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute named by getattr with a literal": """\
def grow(c):
    c.layers.append(StaticLayer(8))
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def warm(self):
        grow(getattr(self, "cache"))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "a cache handed inside an or": """\
def grow(c):
    c.layers.append(StaticLayer(8))
def generate(ids, other=None):
    cache = DynamicCache()
    grow(other or cache)
    return ids[:, cache.get_seq_length():]
""",
    "a cache handed inside a conditional expression": """\
def grow(c):
    c.layers.append(StaticLayer(8))
def generate(ids, flag):
    cache = DynamicCache()
    grow(cache if flag else None)
    return ids[:, cache.get_seq_length():]
""",
    "a cache handed inside a walrus": """\
def grow(c):
    c.layers.append(StaticLayer(8))
def generate(ids):
    grow(cache := DynamicCache())
    return ids[:, cache.get_seq_length():]
""",
    "a cache handed inside a constructor call": """\
def grow(h):
    h.c.layers.append(StaticLayer(8))
class H:
    def __init__(self, c):
        self.c = c
def generate(ids):
    cache = DynamicCache()
    grow(H(cache))
    return ids[:, cache.get_seq_length():]
""",
    "a parameter rebound to another parameter": """\
def grow(c, d=None):
    d = d or c
    d.layers.append(StaticLayer(8))
def generate(ids):
    cache = DynamicCache()
    grow(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changing lambda stored into a subscript": """\
OPS = {}
OPS["add"] = lambda c: c.layers.append(StaticLayer(8))
def generate(ids):
    cache = DynamicCache()
    OPS["add"](cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changing lambda stored into an attribute": """\
class NS: pass
ns = NS()
ns.add = lambda c: c.layers.append(StaticLayer(8))
def generate(ids):
    cache = DynamicCache()
    ns.add(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changer kept as a dict's target": """\
def grow(c):
    c.layers.append(StaticLayer(8))
SPEC = dict(target=grow)
def generate(ids):
    cache = DynamicCache()
    SPEC["target"](cache)
    return ids[:, cache.get_seq_length():]
""",
    "a changer kept as a library call's target": """\
from helpers import Hook
def grow(c):
    c.layers.append(StaticLayer(8))
HOOK = Hook(target=grow)
def generate(ids):
    cache = DynamicCache()
    HOOK(cache)
    return ids[:, cache.get_seq_length():]
""",
    "a decorated class whose __init__ changes what it is handed": """\
REG = {}
def register(cls):
    REG[cls.__name__] = cls
    return cls
@register
class Holder:
    def __init__(self, c):
        c.layers.append(StaticLayer(8))
def generate(ids):
    cache = DynamicCache()
    REG["Holder"](cache)
    return ids[:, cache.get_seq_length():]
""",
}


@pytest.mark.parametrize("program", SECOND_READER_MUST_REPORT.values(), ids=SECOND_READER_MUST_REPORT.keys())
def test_a_change_through_an_alias_an_expression_or_a_keeper_is_reported(program: str) -> None:
    """An attribute whose object any code of the module may change, however named (a local alias, a
    subscript, a walrus, `getattr` with a literal, a module-level or class-level alias); a cache handed
    inside an expression; a parameter rebound from another; a changing lambda or class kept by a
    subscript, an attribute, a `target=` of a call that is no thread, a decorator."""
    assert "SLG002" in reviewed_codes(program)


SECOND_READER_MUST_STAY_SILENT = {
    "a new local's layers changed in a method leave the attributes typed": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def snapshot(self):
        copied = DynamicCache()
        copied.layers.append(StaticLayer(8))
        return copied
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute's layers only counted": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def n(self):
        return len(self.cache.layers)
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "an attribute's layers aliased and only read": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
    def show(self):
        layers = self.cache.layers
        print(len(layers))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
    "another attribute's layers changed": """\
class Runner:
    def __init__(self):
        self.cache = DynamicCache()
        self.scratch = DynamicCache()
    def warm(self):
        self.scratch.layers.append(StaticLayer(8))
    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
""",
}


SECOND_READER_MUST_STAY_SILENT["a call's result changed in a method leaves the attributes typed"] = """\


class Runner:
    def __init__(self):
        self.cache = DynamicCache()

    def snapshot(self, other):
        view = other.empty_like()
        view.layers.append(StaticLayer(8))
        return view

    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
"""


@pytest.mark.parametrize("program", SECOND_READER_MUST_STAY_SILENT.values(), ids=SECOND_READER_MUST_STAY_SILENT.keys())
def test_an_attribute_whose_object_no_code_changes_keeps_its_type(program: str) -> None:
    """The twins of the attribute rule: a new object's layers, a read, another attribute."""
    assert reviewed_codes(program) == []


# ----- the list handed on in a value: an operand, an arm, a display, a fetched method ---------------

LOCAL_LIST = """
    from transformers import DynamicCache
    from transformers.cache_utils import StaticLayer


    def layers_of(cache):
        return cache.layers


    def use(ids, flag, xs):
        cache = DynamicCache()
        {change}
        n = cache.get_seq_length()
        return ids[:, n:]
"""
"""From a second reader's programs on 2026-12-05 (/work/notes/review_today.md, item 7)."""

HANDED_ON_IN_A_VALUE = {
    "an operand of `or`": "ls = cache.layers or []\n        ls.append(StaticLayer(8))",
    "an arm of an if-expression": "ls = cache.layers if flag else []\n        ls.append(StaticLayer(8))",
    "a fetched method": "add = cache.layers.append\n        add(StaticLayer(8))",
    "a fetched method handed to a call": "any(map(cache.layers.append, [StaticLayer(8)]))",
    "an element of a tuple unpacked": "(ls,) = (cache.layers,)\n        ls.append(StaticLayer(8))",
    "bound with another value and appended to": "ls, seen = cache.layers, {}\n        ls.append(StaticLayer(8))",
    "returned by a helper": "layers_of(cache).append(StaticLayer(8))",
    "the body of a lambda": "get = lambda: cache.layers\n        get().append(StaticLayer(8))",
    "a default of a nested function": "def add(ls=cache.layers):\n            ls.append(StaticLayer(8))\n        add()",
    "added to a holder": "held = []\n        held += [cache.layers]\n        held[0].append(StaticLayer(8))",
    "indexed out of a display": "[cache.layers][0].append(StaticLayer(8))",
    "an element of a comprehension": "for ls in [c.layers for c in (cache,)]:\n            ls.append(StaticLayer(8))",
    "`sum`'s start value": "sum([], cache.layers).append(StaticLayer(8))",
    "an element of a list looped over": "for ls in [cache.layers]:\n            ls.append(StaticLayer(8))",
    "a value of a dict": "d = {'l': cache.layers}\n        d['l'].append(StaticLayer(8))",
    "an element of a display handed to `iter`": "next(iter([cache.layers])).append(StaticLayer(8))",
    "an element of a comprehension's display": "[ls.append(StaticLayer(8)) for ls in (cache.layers,)]",
}
ONLY_READ = {
    "looped over": "for layer in cache.layers:\n            print(layer)",
    "counted": "print(len(cache.layers))",
    "tested": "if cache.layers and flag:\n            pass",
    "an entry read": "first = cache.layers[0] if cache.layers else None",
    "copied": "copy = list(cache.layers)\n        copy.append(StaticLayer(8))",
    "bound with another value and only read": "ls, seen = cache.layers, {}\n        print(len(ls), ls[0])",
    "copied or counted by its own methods": "print(cache.layers.copy(), cache.layers.count(None), cache.layers.index(None))",
}


@pytest.mark.parametrize("case", HANDED_ON_IN_A_VALUE)
def test_the_list_handed_on_in_a_value_must_report(case: str) -> None:
    assert codes(LOCAL_LIST.replace("{change}", HANDED_ON_IN_A_VALUE[case])) == ["SLG002"], case


@pytest.mark.parametrize("case", ONLY_READ)
def test_the_list_only_read_stays_silent(case: str) -> None:
    assert codes(LOCAL_LIST.replace("{change}", ONLY_READ[case])) == [], case

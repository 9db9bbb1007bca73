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

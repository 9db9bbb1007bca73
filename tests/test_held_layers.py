"""Objects put into a cache's layers from outside the cache's own methods
(`ClassFacts.holds_only_int_length_objects`): a cache whose length is its first layer's is an
int-length cache only while every object the module puts into those layers, on any object but
another class's own receiver, counts an int. Here: what must stay silent, with the reason, and the
stores that may put a tensor-length layer in."""

from __future__ import annotations

import functools
import textwrap

import pytest

from tests.module_cases import codes_with, findings_in

CACHE = """\
    import torch


    class Layer:
        def __init__(self):
            self.n = 0

        def update(self, keys):
            self.n += keys.shape[-2]
            return keys

        def get_seq_length(self):
            return self.n


    class TensorLayer:
        def get_seq_length(self):
            return torch.zeros((), dtype=torch.long)


    class Cache:
        def __init__(self, layers: int):
            self.layers = [Layer() for _ in range(layers)]

        def get_seq_length(self, layer_idx=0):
            return self.layers[layer_idx].get_seq_length()
"""
codes = functools.partial(codes_with, CACHE)


SILENT = {
    "the cache's own layers count ints": "",
    "a subclass in the module putting an int-length layer in": """
        class Sub(Cache):
            def grow(self):
                self.layers.append(Layer())
    """,
    "an int-length layer put in from outside counts an int": """
        def grow(cache):
            cache.layers.append(Layer())
    """,
    "another class's own layers are another object's (a model's module list)": """
        class Model:
            def __init__(self):
                self.layers = []
                self.layers.append(TensorLayer())
    """,
    "int-length layers bound from outside count ints": """
        def rebuild(cache):
            cache.layers = [Layer() for _ in range(2)]
    """,
    "an int-length layer bound to a local first (flash-linear-attention's from_legacy_cache)": """
        def rebuild(states):
            cache = Cache(0)
            for state in states:
                layer = Layer()
                layer.update(state)
                cache.layers.append(layer)
            return cache
    """,
    "reading the layers from outside puts nothing in": """
        def total(cache):
            return len(cache.layers) + sum(1 for layer in cache.layers if layer is not None)
    """,
}


@pytest.mark.parametrize("more", SILENT.values(), ids=SILENT.keys())
def test_must_stay_silent(more: str) -> None:
    assert codes(more) == []


REPORTED = {
    "append from a function": """
        def hack(cache):
            cache.layers.append(TensorLayer())
    """,
    "insert from a function": """
        def hack(cache):
            cache.layers.insert(0, TensorLayer())
    """,
    "an item store from a function": """
        def hack(cache):
            cache.layers[0] = TensorLayer()
    """,
    "the layers rebound from a function": """
        def hack(cache):
            cache.layers = [TensorLayer()]
    """,
    "extend from a function": """
        def hack(cache, more):
            cache.layers.extend(more)
    """,
    "an augmented assignment from a function": """
        def hack(cache):
            cache.layers += [TensorLayer()]
    """,
    "an alias of another object's layers": """
        def hack(cache):
            layers = cache.layers
            layers.append(TensorLayer())
    """,
    "setattr from a function": """
        def hack(cache):
            setattr(cache, "layers", [TensorLayer()])
    """,
    "a store at module level": """
        SHARED = Cache(1)
        SHARED.layers.append(TensorLayer())
    """,
    "a local bound to a tensor-length layer on one path": """
        def hack(cache, tensor: bool):
            layer = Layer()
            if tensor:
                layer = TensorLayer()
            cache.layers.append(layer)
    """,
    "a parameter put in": """
        def hack(cache, layer):
            cache.layers.append(layer)
    """,
    "a constructor name the function binds itself": """
        def hack(cache, Layer=TensorLayer):
            cache.layers.append(Layer())
    """,
    "self rebound in another class's method": """
        class Runner:
            def run(self, cache):
                self = cache
                self.layers.append(TensorLayer())
    """,
    "a default of another class's method, evaluated outside it": """
        SHARED = Cache(1)


        class Runner:
            def run(self, x=[self.layers.append(TensorLayer()) for self in [SHARED]]):
                pass
    """,
    "a subclass in the module rebinding its own layers": """
        class Sub(Cache):
            def __init__(self):
                super().__init__(0)
                self.layers = [TensorLayer()]
    """,
    "a subclass in the module putting a layer in": """
        class Sub(Cache):
            def grow(self):
                self.layers.append(TensorLayer())
    """,
    "a static method of another class whose parameter is named self": """
        class Runner:
            @staticmethod
            def run(self):
                self.layers.append(TensorLayer())
    """,
}


@pytest.mark.parametrize("more", REPORTED.values(), ids=REPORTED.keys())
def test_must_report(more: str) -> None:
    assert codes(more) == ["SLG002"]


CHILD_USE = """

class Child(Cache):
    pass


class Mixed({BASE}):
    def add(self, layer):
        self.layers.append(layer)


def cut(ids, child: Child):
    return ids[:, child.get_seq_length():]
"""


@pytest.mark.parametrize("base, reported", [("Cache", False), ("Child", True)], ids=["a-sibling", "a-subclass"])
def test_an_inherited_length_is_read_over_the_receivers_own_subclasses(base: str, reported: bool) -> None:
    """`Child` inherits the cache's length. `Mixed` puts any object into the layers: beside `Child` it
    leaves an object of `Child` an int, below `Child` it may be one."""
    findings = findings_in(textwrap.dedent(CACHE) + CHILD_USE.replace("{BASE}", base))
    assert [finding.function for finding in findings] == (["cut"] if reported else [])

"""Objects put into a cache's layers from outside the cache's own methods
(`ClassFacts.holds_only_int_length_objects`): a cache whose length is its first layer's is an
int-length cache only while every object the module puts into those layers, on any object but
another class's own receiver, counts an int. Here: what must stay silent, with the reason, and the
stores that may put a tensor-length layer in."""

from __future__ import annotations

import dataclasses
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


@dataclasses.dataclass(frozen=True)
class StoreForm:
    """A way the module may put an object into a cache's layers; `{L}` is the object's class
    (`Layer` counts an int, `TensorLayer` a tensor)."""

    name: str
    code: str
    not_followed: str = ""
    """Why even an int-length layer put in this way is reported (empty: it is followed)."""


NOT_READ = "the objects put in are not read: anything may go in"
REBOUND = "the int-length class's name may be another class there"


def in_function(*lines: str) -> str:
    """`hack(cache)`, a function of the module, running the lines."""
    return "def hack(cache):\n" + textwrap.indent("\n".join(lines), "    ")


def in_subclass(*lines: str) -> str:
    """`grow`, a method of a subclass `Sub(Cache)` in the module, running the lines."""
    return "class Sub(Cache):\n    def grow(self):\n" + textwrap.indent("\n".join(lines), "        ")


STORE_FORMS = (
    StoreForm("append", in_function("cache.layers.append({L}())")),
    StoreForm("insert", in_function("cache.layers.insert(0, {L}())")),
    StoreForm("item-store", in_function("cache.layers[0] = {L}()")),
    StoreForm("rebound-display", in_function("cache.layers = [{L}()]")),
    StoreForm("rebound-comprehension", in_function("cache.layers = [{L}() for _ in range(2)]")),
    StoreForm("through-a-local", in_function("layer = {L}()", "cache.layers.append(layer)")),
    StoreForm(
        "a-local-on-one-path",
        "def hack(cache, other: bool):\n    layer = Layer()\n    if other:\n        layer = {L}()\n"
        "    cache.layers.append(layer)",
    ),
    StoreForm("module-level", "SHARED = Cache(1)\nSHARED.layers.append({L}())"),
    StoreForm("lambda-body", "hack = lambda cache: cache.layers.append({L}())"),
    StoreForm("comment-after-the-dot", in_function("(cache.  # the list", "    layers).append({L}())")),
    StoreForm("return-annotation", "def hack(cache) -> cache.layers.append({L}()):\n    pass"),
    StoreForm(
        "another-class-method-default",
        "SHARED = Cache(1)\n\n\nclass Runner:\n    def run(self, x=[self.layers.append({L}()) for self in [SHARED]]):\n"
        "        pass",
    ),
    StoreForm(
        "self-rebound",
        "class Runner:\n    def run(self, cache):\n        self = cache\n        self.layers.append({L}())",
    ),
    StoreForm(
        "static-method-self",
        "class Runner:\n    @staticmethod\n    def run(self):\n        self.layers.append({L}())",
    ),
    StoreForm("subclass-puts-in", in_subclass("self.layers.append({L}())")),
    StoreForm(
        "another-class-method-run-on-the-cache",
        "class Model:\n    def grow(self):\n        self.layers.append({L}())\n\n\n"
        "def hack(cache):\n    Model.grow(cache)",
    ),
    StoreForm(
        "subclass-rebinds",
        "class Sub(Cache):\n    def __init__(self):\n        super().__init__(0)\n        self.layers = [{L}()]",
    ),
    StoreForm("extend-display", in_function("cache.layers.extend([{L}()])")),
    StoreForm("augmented-display", in_function("cache.layers += [{L}()]")),
    StoreForm("extend-unknown", "def hack(cache, more):\n    cache.layers.extend([{L}(), *more])", NOT_READ),
    StoreForm("slice-store", in_function("cache.layers[:] = [{L}()]"), NOT_READ),
    StoreForm("augmented-slice", in_function("cache.layers[0:0] += [{L}()]"), NOT_READ),
    StoreForm("alias", in_function("layers = cache.layers", "layers.append({L}())"), NOT_READ),
    StoreForm("bound-append", in_function("add = cache.layers.append", "add({L}())"), NOT_READ),
    StoreForm("mapped-append", in_function("list(map(cache.layers.append, [{L}()]))"), NOT_READ),
    StoreForm("getattr", in_function('getattr(cache, "layers").append({L}())'), NOT_READ),
    StoreForm(
        "match-capture",
        in_function("match cache:", "    case Cache(layers=found):", "        found.append({L}())"),
        NOT_READ,
    ),
    StoreForm("setattr", in_function('setattr(cache, "layers", [{L}()])'), NOT_READ),
    StoreForm("object-setattr", in_function('object.__setattr__(cache, "layers", [{L}()])'), NOT_READ),
    StoreForm(
        "super-setattr",
        'class Runner:\n    def run(self, cache):\n        super(Runner, cache).__setattr__("layers", [{L}()])',
        NOT_READ,
    ),
    StoreForm(
        "subclass-hands-the-layers-on",
        "def helper(layers):\n    layers.append({L}())\n\n\nclass Sub(Cache):\n    def grow(self):\n        helper(self.layers)",
        NOT_READ,
    ),
    StoreForm(
        "subclass-bound-append",
        in_subclass("add = self.layers.append", "add({L}())"),
        NOT_READ,
    ),
    StoreForm(
        "subclass-getattr",
        in_subclass('getattr(self, "layers").append({L}())'),
        NOT_READ,
    ),
    StoreForm(
        "subclass-walrus-alias",
        in_subclass("(found := self.layers).append({L}())"),
        NOT_READ,
    ),
    StoreForm("constructor-parameter", "def hack(cache, Layer={L}):\n    cache.layers.append(Layer())", REBOUND),
    StoreForm(
        "constructor-of-an-enclosing-function",
        "def outer(Layer={L}):\n    def hack(cache):\n        cache.layers.append(Layer())\n\n    return hack",
        REBOUND,
    ),
    StoreForm("constructor-lambda-default", "hack = lambda cache, Layer={L}: cache.layers.append(Layer())", REBOUND),
    StoreForm(
        "constructor-class-body",
        "SHARED = Cache(1)\n\n\nclass Runner:\n    Layer = {L}\n    SHARED.layers.append(Layer())",
        REBOUND,
    ),
    StoreForm(
        "constructor-own-method-local",
        in_subclass("Layer = {L}", "self.layers.append(Layer())"),
        REBOUND,
    ),
)
STORE_CASES = [(form, layer) for form in STORE_FORMS for layer in ("Layer", "TensorLayer")]


def test_the_store_matrix_says_why_an_int_layer_is_reported() -> None:
    assert len({form.name for form in STORE_FORMS}) == len(STORE_FORMS) >= 30
    assert sum(not form.not_followed for form in STORE_FORMS) >= 12, "the forms followed are checked silent"


@pytest.mark.parametrize(("form", "layer"), STORE_CASES, ids=[f"{form.name}-{layer}" for form, layer in STORE_CASES])
def test_store_form(form: StoreForm, layer: str) -> None:
    """A tensor-length layer put in by any form is reported; an int-length one is silent where the
    form is followed."""
    silent = layer == "Layer" and not form.not_followed
    assert codes(form.code.replace("{L}", layer) + "\n") == ([] if silent else ["SLG002"])


@pytest.mark.parametrize(
    "patch",
    ["Layer.__new__ = lambda cls: TensorLayer()", "Layer.__init__ = TensorLayer.__init__", "setattr(Layer, 'n', None)"],
)
def test_the_int_layers_class_patched_from_outside_is_not_read(patch: str) -> None:
    """The cache's own `Layer()` objects are read through `Layer`'s methods, which are then others."""
    assert codes(patch + "\n") == ["SLG002"]


def test_a_parameter_put_in_may_be_any_layer() -> None:
    assert codes("def hack(cache, layer):\n    cache.layers.append(layer)\n") == ["SLG002"]


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

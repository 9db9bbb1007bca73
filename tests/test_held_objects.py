"""Ints read off the objects a cache class holds (`lint_rules/engine/facts/held_objects.py`): a
cache whose length is `layer.hot_len + layer.warm_len` with `layer = self._layers[i]`, or
`self._layers[i].seq_len`, where every layer is built by one class of the package whose `hot_len`
is a getter-only property returning an int (from akv-cache 1.4.0's `AdaptiveKVCache` and
`ProductionCache`, reduced). Each silent shape has its must-report twin: the same shape with one
thing changed that lets a tensor through."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine import analyze_source
from lint_rules.settings import Settings
from tests import package_files

LAYER = """\
    class Layer:
        def __init__(self):
            self.keys = None
            self.positions = None
            self._count = 0

        def append(self, keys):
            self.keys = keys
            self._count += keys.shape[-2]

        @property
        def hot_len(self) -> int:
            return self.keys.shape[2] if self.keys is not None else 0

        @property
        def warm_len(self) -> int:
            return len(self.positions) if self.positions is not None else 0

        @property
        def seq_len(self) -> int:
            return self._count
"""
CACHE = """\
    class LayeredCache:
        def __init__(self, n):
            self._layers: list[Layer] = []

        def update(self, keys, values, layer_idx):
            while len(self._layers) <= layer_idx:
                self._layers.append(Layer())
            self._layers[layer_idx].append(keys)
            return keys, values

        def get_seq_length(self, layer_idx=0):
            if layer_idx >= len(self._layers):
                return 0
            {GETTER}
"""
USE = """\
    def trim(input_ids, cache: LayeredCache):
        return input_ids[:, cache.get_seq_length():]
"""
GETTERS = {
    "local-then-properties": "layer = self._layers[layer_idx]\n            return layer.hot_len + layer.warm_len",
    "subscript-then-property": "return self._layers[layer_idx].hot_len",
    "property-over-a-counter": "return self._layers[layer_idx].seq_len",
}


def module(layer: str = LAYER, cache: str = CACHE, getter: str = GETTERS["local-then-properties"]) -> str:
    parts = [textwrap.dedent(layer), textwrap.dedent(cache.replace("{GETTER}", getter)), textwrap.dedent(USE)]
    return "import torch\n\n\n" + "\n\n".join(parts)


def codes(text: str) -> list[str]:
    return [finding.code for finding in analyze_source(text, "kv.py")]


@pytest.mark.parametrize("getter", GETTERS.values(), ids=GETTERS.keys())
def test_an_int_property_of_every_held_layer_is_an_int(getter: str) -> None:
    assert codes(module(getter=getter)) == []


SILENT_WITH = {
    "a parameter or keyword named property binds no module name": """
        def describe(property=None):
            return dict(property=property)
    """,
    "an int stored to the property's name from outside (on an instance it raises)": """
        def clear(layer):
            layer.hot_len = 0
    """,
}


@pytest.mark.parametrize("more", SILENT_WITH.values(), ids=SILENT_WITH.keys())
def test_must_stay_silent_with(more: str) -> None:
    assert codes(module() + "\n\n" + textwrap.dedent(more)) == []


TWINS = {
    "a tensor property": (LAYER, "return self.keys.shape[2] if", "return self.keys.sum() if"),
    "a setter": (
        LAYER,
        "    @property\n        def warm_len",
        "    @hot_len.setter\n        def hot_len(self, v):\n            self.keys = v\n\n"
        "        @property\n        def warm_len",
    ),
    "another decorator": (LAYER, "@property\n        def hot_len", "@functools.cached_property\n        def hot_len"),
    "a __getattribute__": (
        LAYER,
        "    def append(",
        "    def __getattribute__(self, name):\n            return torch.zeros(1)\n\n        def append(",
    ),
    "a __getattr__ answering a getter's AttributeError": (
        LAYER,
        "    def append(",
        "    def __getattr__(self, name):\n            return torch.zeros(1)\n\n        def append(",
    ),
    "a __new__ building another object": (
        LAYER,
        "    def append(",
        "    def __new__(cls):\n            return Other()\n\n        def append(",
    ),
    "an __init_subclass__ of a base": (
        LAYER,
        "class Layer:",
        "class Hooked:\n        def __init_subclass__(cls):\n"
        "            cls.hot_len = property(lambda layer: torch.zeros(1))\n\n\n    class Layer(Hooked):",
    ),
    "a base from elsewhere": (LAYER, "class Layer:", "class Layer(torch.nn.Module):"),
    "a metaclass": (LAYER, "class Layer:", "class Layer(metaclass=abc.ABCMeta):"),
    "another class held": (CACHE, "self._layers[layer_idx].append(keys)", "self._layers.append(Other())"),
    "a subclass of the layer held": (CACHE, "self._layers.append(Layer())", "self._layers.append(TensorLayer())"),
    "an alias of the container": (
        CACHE,
        "self._layers[layer_idx].append(keys)",
        "layers = self._layers\n            layers.append(keys)",
    ),
    "a container bound to anything": (CACHE, "self._layers: list[Layer] = []", "self._layers = list(n)"),
    "a setattr of any name": (CACHE, "self._layers[layer_idx].append(keys)", "setattr(self, str(layer_idx), keys)"),
    "a constructor name bound in the method": (
        CACHE,
        "            while len(self._layers) <= layer_idx:",
        "            Layer = TensorLayer\n            while len(self._layers) <= layer_idx:",
    ),
    "a property replaced from outside the class": (
        CACHE,
        "    class LayeredCache:",
        "    Layer.hot_len = property(lambda layer: torch.zeros(1))\n\n\n    class LayeredCache:",
    ),
    "property bound by a tuple target": (
        LAYER,
        "class Layer:",
        "_, property = 0, functools.cached_property\n\n\n    class Layer:",
    ),
    "property bound in the class body": (
        LAYER,
        "    def append(",
        "    property = functools.cached_property\n\n        def append(",
    ),
    "property rebound in the module": (
        LAYER,
        "class Layer:",
        "def property(getter):\n        return functools.cached_property(lambda layer: torch.zeros(1))\n\n\n    class Layer:",
    ),
    "the own __dict__ binding the container": (
        CACHE,
        "            while len(self._layers) <= layer_idx:",
        '            self.__dict__["_layers"] = [TensorLayer()]\n            while len(self._layers) <= layer_idx:',
    ),
    "vars() of the cache binding the container from outside": (
        CACHE,
        "    class LayeredCache:",
        '    def reset(cache):\n        vars(cache)["_layers"] = [TensorLayer()]\n\n\n    class LayeredCache:',
    ),
    "another object's __dict__ updated from outside": (
        CACHE,
        "    class LayeredCache:",
        "    def reset(cache):\n        cache.__dict__.update(_layers=[TensorLayer()])\n\n\n    class LayeredCache:",
    ),
    "a parameter rebound": (
        CACHE,
        "def get_seq_length(self, layer_idx=0):",
        "def get_seq_length(self, layer_idx=0, layer=None):\n            if layer is None:\n"
        "                layer = self._layers[layer_idx]\n            return layer.hot_len",
    ),
}
EXTRA = """\
    class Other:
        @property
        def hot_len(self):
            return torch.zeros(1)


    class TensorLayer(Layer):
        @property
        def hot_len(self):
            return torch.zeros(1)


    class Sub(LayeredCache):
        {SUB}
"""


@pytest.mark.parametrize("part, old, new", TWINS.values(), ids=TWINS.keys())
def test_must_report_twin(part: str, old: str, new: str) -> None:
    assert old in part
    layer = LAYER.replace(old, new) if part is LAYER else LAYER
    cache = CACHE.replace(old, new) if part is CACHE else CACHE
    assert codes(twin_module(layer, cache)) == ["SLG002"]


def test_must_report_twin_a_counter_bound_to_a_tensor() -> None:
    layer = LAYER.replace("self._count += keys.shape[-2]", "self._count += keys.sum()")
    assert codes(module(layer, getter=GETTERS["property-over-a-counter"])) == ["SLG002"]


def test_must_report_twin_a_subclass_of_the_cache_holding_others() -> None:
    """An object of a subclass of the cache may be where the cache is expected."""
    sub = "def add(self, x):\n            self._layers.append(x)"
    assert codes(twin_module(LAYER, CACHE, sub)) == ["SLG002"]
    assert codes(twin_module(LAYER, CACHE, "pass")) == []


PROPERTY_CACHE = """\
    import torch


    class Cache:
        @property
        def n(self):
            return 1

        def get_seq_length(self, layer_idx=0):
            return self.n


    class Sub(Cache):
        {SUB}


    def trim(input_ids, cache: Cache):
        return input_ids[:, cache.get_seq_length():]
"""
SUBCLASSES = {
    "overriding the property": "@property\n    def n(self):\n        return torch.zeros(1)",
    "whose slots shadow the property": '__slots__ = ("n",)\n\n    def __init__(self):\n        self.n = torch.zeros(1)',
}


@pytest.mark.parametrize("sub", SUBCLASSES.values(), ids=SUBCLASSES.keys())
def test_must_report_twin_a_subclass(sub: str) -> None:
    """A cache's own `self.n`, an int property, where a subclass in the module answers `n` with a tensor."""
    assert codes(textwrap.dedent(PROPERTY_CACHE).replace("{SUB}", sub)) == ["SLG002"]
    assert codes(textwrap.dedent(PROPERTY_CACHE).replace("{SUB}", "pass")) == []


FIRST_BINDINGS = {
    "a first class statement": "class Base(TBase):\n    pass",
    "a loop target after long whitespace": "for" + " " * 70 + "Base in [TBase]:\n    pass",
    "an assignment after a comment ending in class": "# the tensor class\nBase = TBase",
    "a tuple target": "Base, _ = TBase, 0",
    "a walrus": "(Base := TBase)",
    "a match capture": "match TBase:\n    case Base:\n        pass",
    "a name bound through builtins": "import builtins\n\nbuiltins.Base = TBase",
    "an except ... as name (a class defined in the handler derives from it)": "try:\n    pass\nexcept Exception as Base:\n    pass",
}


@pytest.mark.parametrize("first", FIRST_BINDINGS.values(), ids=FIRST_BINDINGS.keys())
def test_must_report_twin_a_base_name_bound_twice(first: str) -> None:
    """`Sub` derives from `Base` as first bound, whose property is a tensor; the name then holds the
    `class Base` whose property is an int."""
    text = """\
        import torch


        class TBase:
            @property
            def n(self):
                return torch.zeros(1)


        {FIRST}


        class Sub(Base):
            pass


        class Base:
            @property
            def n(self):
                return 1


        class Holder:
            def __init__(self):
                self._layers = [Sub()]

            def get_seq_length(self, layer_idx=0):
                return self._layers[layer_idx].n


        def trim(input_ids, cache: Holder):
            return input_ids[:, cache.get_seq_length():]
    """
    assert codes(textwrap.dedent(text).replace("{FIRST}", first)) == ["SLG002"]


def twin_module(layer: str, cache: str, sub: str = "pass") -> str:
    return (
        "import abc\nimport functools\n" + module(layer, cache) + "\n\n" + textwrap.dedent(EXTRA).replace("{SUB}", sub)
    )


def test_a_loop_target_is_not_followed() -> None:
    """`for layer in self._layers:` binds each layer in turn: not followed (reported)."""
    getter = "for layer in self._layers:\n                return layer.hot_len\n            return 0"
    assert codes(module(getter=getter)) == ["SLG002"]


def test_the_held_layers_of_a_cache_in_another_module(tmp_path: Path) -> None:
    """akv-cache's shape: the model's layer delegates to `self._parent._cache`, an `AdaptiveKVCache` of
    another module whose length reads its layers' properties."""
    kv = (
        "import torch\n\n\n"
        + textwrap.dedent(LAYER)
        + "\n\n"
        + textwrap.dedent(CACHE.replace("{GETTER}", GETTERS["local-then-properties"]))
    )
    integration = """\
        from typing import Optional

        from transformers.cache_utils import CacheLayerMixin

        from .kv import LayeredCache


        class ModelLayer(CacheLayerMixin):
            def __init__(self):
                self._parent: Optional[Wrapper] = None

            def bind(self, parent: "Wrapper"):
                self._parent = parent

            def get_mask_sizes(self, query_length: int):
                n = self.get_seq_length()
                return n, n + query_length

            def get_seq_length(self):
                if self._parent is None:
                    return 0
                return self._parent._cache.get_seq_length(0)


        class Wrapper:
            def __init__(self):
                self._cache = LayeredCache(2)
    """
    for tensor in (False, True):
        text = kv.replace("return self.keys.shape[2] if", "return self.keys.sum() if") if tensor else kv
        package = package_files.write_package(
            tmp_path / str(tensor), {"kv": text, "integration": textwrap.dedent(integration)}, "akvpkg"
        )
        checked = check_path(str(package / "integration.py"), Settings())
        assert not checked.error, checked.error
        assert [finding.code for finding in checked.findings] == (["SLG001"] if tensor else [])

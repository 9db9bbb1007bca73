"""transformers' quantized, offloaded, chunked and indexed caches and layers in the release table
(`releases.QUANTIZED_CACHES`, `CHUNKED_CACHES`, `QUANTIZED_LAYERS`, `LAYERS_5_13`, checked against each
row's wheel by tests/test_release_table.py and built by tests/test_cache_table.py where no optional
backend is needed). Each silent form has a twin with a class whose length is a tensor."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.facts.releases import ALL_RELEASES, RELEASES, Releases

FROM_4_53 = frozenset(row for row in RELEASES if row.last >= (4, 53))


def codes(code: str, releases: Releases = ALL_RELEASES) -> list[str]:
    return [finding.code for finding in analyze_source(textwrap.dedent(code), "m.py", releases=releases)]


BUILT = """
from transformers import {cls}

def trim(ids, config):
    cache = {cls}({arguments})
    return ids[:, cache.get_seq_length():]
"""


@pytest.mark.parametrize(
    ("cls", "arguments", "reported"),
    [
        pytest.param("QuantizedCache", '"quanto", config', False, id="quantized-cache"),
        pytest.param("QuantoQuantizedCache", "config", False, id="quanto-cache"),
        pytest.param("HQQQuantizedCache", "config", False, id="hqq-cache"),
        pytest.param("OffloadedCache", "", False, id="offloaded-cache"),
        pytest.param("HybridChunkedCache", "config, max_cache_len=8", True, id="twin-hybrid-chunked"),
        pytest.param("OffloadedHybridCache", "config, max_cache_len=8", True, id="twin-offloaded-hybrid"),
        pytest.param("StaticCache", "config=config, max_cache_len=8", True, id="twin-static"),
    ],
)
def test_a_built_cache_has_the_kind_of_its_class_in_every_release_that_has_it(
    cls: str, arguments: str, reported: bool
) -> None:
    """The KIVI caches count their tokens in an int (`_seen_tokens`, then their layers'
    `cumulative_length`), `OffloadedCache` is a `DynamicCache`; the chunked caches sum a tensor."""
    assert codes(BUILT.format(cls=cls, arguments=arguments)) == (["SLG002"] if reported else [])
    assert codes(BUILT.format(cls=cls, arguments=arguments), FROM_4_53) == (["SLG002"] if reported else [])


NARROWED = """
from transformers.cache_utils import {cls}

def trim(ids, cache):
    if isinstance(cache, {cls}):
        return ids[:, cache.get_seq_length():]
    return ids
"""


@pytest.mark.parametrize(
    ("cls", "reported"),
    [
        pytest.param("QuantizedCache", False, id="quantized-cache"),
        pytest.param("QuantizedLayer", False, id="quantized-layer"),
        pytest.param("Fp8QuantizedLayer", False, id="fp8-layer"),
        pytest.param("DynamicIndexedLayer", False, id="dynamic-indexed-layer"),
        pytest.param("StaticIndexedLayer", True, id="twin-static-indexed-layer"),
        pytest.param("HybridChunkedCache", True, id="twin-hybrid-chunked"),
    ],
)
def test_isinstance_with_a_table_class_narrows_to_its_kind(cls: str, reported: bool) -> None:
    assert codes(NARROWED.format(cls=cls)) == (["SLG002"] if reported else [])


SUBCLASS = """
import torch
from transformers.cache_utils import QuantizedLayer

class MyQuantizedLayer(QuantizedLayer):
    def update(self, key_states, value_states, cache_kwargs=None):
        {binding}
        return key_states, value_states

def trim(ids, layer: MyQuantizedLayer):
    return ids[:, layer.get_seq_length():]
"""


@pytest.mark.parametrize(
    ("binding", "reported"),
    [
        pytest.param("self.cumulative_length += key_states.shape[-2]", False, id="counts-ints"),
        pytest.param("self.cumulative_length = torch.zeros(())", True, id="twin-rebinds-a-tensor"),
    ],
)
def test_a_package_subclass_of_a_quantized_layer_keeps_an_int_only_with_int_state(binding: str, reported: bool) -> None:
    """The base's length is its `cumulative_length`; a subclass that binds what it binds to a tensor
    may return one."""
    assert codes(SUBCLASS.format(binding=binding)) == (["SLG002"] if reported else [])


COUNTER_SUBCLASS = """
import torch
{imports}

class MyLayer({base}):
    def update(self, key_states, value_states, cache_kwargs=None):
        {binding}
        return key_states, value_states

def trim_built(ids):
    layer = MyLayer(sliding_window=4)
    return ids[:, layer.get_seq_length():]

def trim_any(ids, layer: {base}):
    return ids[:, layer.get_seq_length():]
"""
BASES = {
    "by-name": ("from transformers.cache_utils import DynamicSlidingWindowLayer", "DynamicSlidingWindowLayer"),
    "through-the-module": ("from transformers import cache_utils", "cache_utils.DynamicSlidingWindowLayer"),
}


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize(
    ("binding", "reported"),
    [
        pytest.param("self.cumulative_length += key_states.shape[-2]", 0, id="counts-ints"),
        pytest.param("self.keys = torch.cat([self.keys, key_states], dim=-2)", 0, id="other-state-a-tensor"),
        pytest.param("self.cumulative_length = torch.zeros(())", 2, id="twin-counter-a-tensor"),
    ],
)
def test_a_subclass_that_rebinds_the_counter_of_a_transformers_class_is_not_int_length(
    binding: str, reported: int, base: str
) -> None:
    """`DynamicSlidingWindowLayer` returns its `cumulative_length` (`ReleaseFacts.counters`). Rebound to
    a tensor in a subclass, both the subclass and the base the module annotates (an instance of the
    subclass may stand there) may count a tensor; other state (the keys, read through `.shape`) and
    int counts keep them int-length."""
    imports, name = BASES[base]
    code = COUNTER_SUBCLASS.format(imports=imports, base=name, binding=binding)
    assert codes(code) == ["SLG002"] * reported


ANNOTATED_BASE = """
import torch
from transformers import cache_utils as cu
from transformers.cache_utils import Cache, QuantizedCache, QuantizedLayer, StaticLayer
from transformers.cache_utils import QuantizedLayer as QL

{subclass}

def trim(ids, layer: QuantizedLayer, cache: QuantizedCache):
    return ids[:, layer.get_seq_length():], ids[:, cache.get_seq_length():]
"""
BREAKS_THE_LAYER = "        self.cumulative_length = torch.zeros(())"
KEEPS_THE_LAYER = "        self.cumulative_length += key_states.shape[-2]"


def layer_subclass(base: str, body: str, indent: str = "") -> str:
    lines = [f"class B({base}):", "    def update(self, key_states, value_states, cache_kwargs=None):", body]
    return "\n".join(indent + line for line in lines)


@pytest.mark.parametrize(
    ("subclass", "reported"),
    [
        pytest.param(layer_subclass("QL", BREAKS_THE_LAYER), ["layer"], id="base-imported-as-another-name"),
        pytest.param(layer_subclass("cu.QuantizedLayer", BREAKS_THE_LAYER), ["layer"], id="base-through-a-module"),
        pytest.param(
            "Base = QuantizedLayer\n" + layer_subclass("Base", BREAKS_THE_LAYER), ["layer"], id="base-through-an-alias"
        ),
        pytest.param(
            "def make():\n" + layer_subclass("QuantizedLayer", BREAKS_THE_LAYER, "    "), ["layer"], id="in-a-function"
        ),
        pytest.param(
            "class Outer:\n" + layer_subclass("QuantizedLayer", BREAKS_THE_LAYER, "    "), ["layer"], id="in-a-class"
        ),
        pytest.param(
            "class A(QuantizedLayer):\n    pass\n" + layer_subclass("A", BREAKS_THE_LAYER),
            ["layer"],
            id="below-a-subclass",
        ),
        pytest.param(
            "class B(QuantizedLayer):\n    def get_seq_length(self):\n        return torch.zeros(())",
            ["layer"],
            id="own-method-returns-a-tensor",
        ),
        pytest.param(
            "class B(QuantizedLayer):\n    get_seq_length = lambda self: torch.zeros(())",
            ["layer"],
            id="own-method-bound-in-the-body",
        ),
        pytest.param(
            "class Q(QuantizedCache):\n    def __init__(self, config):\n"
            "        super().__init__('quanto', config)\n        self.layers = [StaticLayer(max_cache_len=8)]",
            ["cache"],
            id="cache-subclass-rebinds-its-layers",
        ),
        pytest.param(
            "class Q(QuantizedCache):\n    def __init__(self, config):\n"
            "        Cache.__init__(self, layers=[StaticLayer(max_cache_len=8)])",
            ["cache"],
            id="cache-subclass-hands-layers-to-a-base",
        ),
        pytest.param(
            "class A(QuantizedLayer):\n    pass\n"
            + layer_subclass("A", BREAKS_THE_LAYER)
            + "\n\ndef trim_a(ids, a: A):\n    return ids[:, a.get_seq_length():]",
            ["a", "layer"],
            id="below-an-annotated-subclass",
        ),
        pytest.param(
            "Base = QuantizedLayer\n" + layer_subclass("Base", KEEPS_THE_LAYER), [], id="silent-alias-counts-ints"
        ),
        pytest.param(layer_subclass("QL", KEEPS_THE_LAYER), [], id="silent-renamed-base-counts-ints"),
        pytest.param(
            "class B(QuantizedLayer):\n    def get_seq_length(self):\n        return super().get_seq_length() + 1",
            [],
            id="silent-own-method-adds-to-the-base",
        ),
    ],
)
def test_any_subclass_of_the_module_that_may_not_count_an_int_makes_its_transformers_base_unknown(
    subclass: str, reported: list[str]
) -> None:
    """However its base is spelled and wherever the module defines it, a subclass that binds the
    counter, returns its own length or replaces the layers may stand where the base is annotated."""
    findings = analyze_source(textwrap.dedent(ANNOTATED_BASE.format(subclass=subclass)), "m.py")
    names = ("layer", "cache", "a")
    assert sorted({name for f in findings for name in names if f"`{name}.get_seq_length()`" in f.message}) == reported


SUPER_LENGTH = """
import torch
from transformers.cache_utils import QuantizedLayer

class B(QuantizedLayer):
    def update(self, key_states, value_states, cache_kwargs=None):
        {binding}

    def get_seq_length(self):
        return super().get_seq_length() + 1

    def window(self, ids):
        return ids[:, super().get_seq_length():]
"""


@pytest.mark.parametrize(("binding", "reported"), [(KEEPS_THE_LAYER, []), (BREAKS_THE_LAYER, [10, 13])])
def test_super_gives_the_base_length_read_on_the_subclass_own_state(binding: str, reported: list[int]) -> None:
    """`super().get_seq_length()` runs the base's method on an object of the subclass: an int while the
    subclass (and any class below it) binds the base's counter only to ints."""
    findings = analyze_source(textwrap.dedent(SUPER_LENGTH.format(binding=binding.strip())), "m.py")
    assert sorted({finding.line for finding in findings}) == reported


@pytest.mark.parametrize("line_break", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_a_subclass_nested_in_a_function_is_found_whatever_the_line_breaks(line_break: str) -> None:
    """The nested classes are looked for only in a text that may hold one (`may_nest_classes`): a file
    whose lines end in `\\r` alone is searched too."""
    subclass = "def make():\n" + layer_subclass("QuantizedLayer", BREAKS_THE_LAYER, "    ")
    text = textwrap.dedent(ANNOTATED_BASE.format(subclass=subclass)).replace("\n", line_break)
    findings = analyze_source(text, "m.py")
    assert any("`layer.get_seq_length()`" in finding.message for finding in findings)

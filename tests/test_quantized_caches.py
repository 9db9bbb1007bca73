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

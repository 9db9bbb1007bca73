"""The engine's table of transformers cache classes (`lint_rules/engine/facts/caches.py`) against the real
classes of every release it was checked on: each class is built, updated once with a 3-token step,
and the type `get_seq_length()` returns is compared with what the table says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lint_rules.engine.facts.caches import (
    CHECKED_RELEASES,
    GENERATION_HOOKS,
    GENERATION_HOOKS_5X,
    INT_LENGTH,
    INT_LENGTH_CLASSES,
    TENSOR_LENGTH,
    TENSOR_LENGTH_CLASSES,
    WRAPPER_CLASSES,
)
from lint_rules.engine.facts.releases import RELEASES

pytestmark = pytest.mark.runtime

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import json, torch, transformers
from transformers import cache_utils as cu, LlamaConfig

config = LlamaConfig(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=2,
                     intermediate_size=64, vocab_size=100, max_position_embeddings=64)
MAKERS = {
    "DynamicLayer": lambda: cu.DynamicLayer(),
    "DynamicSlidingWindowLayer": lambda: cu.DynamicSlidingWindowLayer(sliding_window=8),
    "StaticLayer": lambda: cu.StaticLayer(max_cache_len=16),
    "StaticSlidingWindowLayer": lambda: cu.StaticSlidingWindowLayer(max_cache_len=16, sliding_window=8),
    "DynamicCache": lambda: cu.DynamicCache(config=config),
    "StaticCache": lambda: cu.StaticCache(config=config, max_cache_len=16),
    "SlidingWindowCache": lambda: cu.SlidingWindowCache(config=config, max_cache_len=16),
}

def identity_quantizer(base):  # the base's own counting; the quantizer backends are optional
    return type(base.__name__, (base,), {"_quantize": lambda self, t, **k: t, "_dequantize": lambda self, q: q})

OPTIONAL = {
    "QuantizedLayer": lambda: identity_quantizer(cu.QuantizedLayer)(),
    "BaseQuantizedLayer": lambda: identity_quantizer(cu.BaseQuantizedLayer)(),
    "Fp8QuantizedLayer": lambda: cu.Fp8QuantizedLayer(),
    "QuantizedCache": lambda: cu.QuantizedCache("fp8", config),
    "DynamicIndexedLayer": lambda: cu.DynamicIndexedLayer(),
    "StaticIndexedLayer": lambda: cu.StaticIndexedLayer(max_cache_len=16),
}  # built where the release has them; QuantizedCache only with the fp8 backend (5.13 on)
MAKERS.update({name: make for name, make in OPTIONAL.items() if hasattr(cu, name)})
if not hasattr(cu, "Fp8QuantizedLayer"):
    del MAKERS["QuantizedCache"]

def length_after_one_update(name):
    cache = MAKERS[name]()
    keys, values = torch.zeros(1, 2, 3, 16), torch.zeros(1, 2, 3, 16)
    if isinstance(cache, cu.Cache):
        cache.update(keys, values, 0)
    else:
        cache.lazy_initialization(keys, values) if "Static" in name else None
        cache.update(keys, values)
    return type(cache.get_seq_length()).__name__

def wrapped_length_after_one_update(first, second):
    cache = cu.EncoderDecoderCache(MAKERS[first](), MAKERS[second]())
    cache.self_attention_cache.update(torch.zeros(1, 2, 3, 16), torch.zeros(1, 2, 3, 16), 0)  # as model code does
    return type(cache.get_seq_length()).__name__

def legacy_wrapped_length():
    legacy = [(torch.zeros(1, 2, 3, 16),) * 4 for _ in range(2)]
    return type(cu.EncoderDecoderCache(legacy).get_seq_length()).__name__

WRAPPED = [("DynamicCache", "DynamicCache"), ("StaticCache", "DynamicCache"), ("DynamicCache", "StaticCache")]
print(json.dumps({"version": transformers.__version__,
                  "types": {name: length_after_one_update(name) for name in MAKERS},
                  "wrapped": {f"{a},{b}": wrapped_length_after_one_update(a, b) for a, b in WRAPPED},
                  "legacy_wrapped": legacy_wrapped_length()}))
"""


def release_path(version: str) -> list[str]:
    """The import path of a release: the venv's own, or the side environment of tests/runtime."""
    import transformers

    if transformers.__version__ == version:
        return []
    target = REPO / ".runtime" / f"transformers-{version}"
    if not (target / "transformers").is_dir():
        subprocess.run([sys.executable, str(REPO / "tests/runtime/build_envs.py"), "--version", version], check=True)
    return [str(target)]


NEEDS_A_BACKEND = {
    "5.5.3": {"QuantoQuantizedLayer", "HQQQuantizedLayer", "QuantizedCache"},
    "5.24.0": {"QuantoQuantizedLayer", "HQQQuantizedLayer"},
}
"""Classes that need optimum-quanto or hqq to be built (5.5.3's `QuantizedCache` has no other backend):
tests/test_release_table.py checks them in the release's source."""


@pytest.mark.parametrize("version", CHECKED_RELEASES)
def test_table_matches_the_real_classes(version: str) -> None:
    path = release_path(version)
    code = f"import sys; sys.path[:0] = {path!r}\n{PROBE}"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    probed = json.loads(result.stdout.strip().splitlines()[-1])
    assert probed["version"] == version
    row = next(row for row in RELEASES if row.checked == version)
    for name, type_name in probed["types"].items():
        assert row.length_kind(name) == (INT_LENGTH if type_name == "int" else TENSOR_LENGTH), f"{name} in {version}"
        assert name in (INT_LENGTH_CLASSES if type_name == "int" else TENSOR_LENGTH_CLASSES)
    assert set(probed["types"]) | NEEDS_A_BACKEND[version] == {name for name, _ in row.lengths}


@pytest.mark.parametrize("version", CHECKED_RELEASES)
def test_a_wrapper_has_the_length_of_its_first_cache(version: str) -> None:
    """`EncoderDecoderCache(first, second)` (WRAPPER_CLASSES) gives `first`'s length type; from legacy
    data alone it builds a DynamicCache."""
    path = release_path(version)
    code = f"import sys; sys.path[:0] = {path!r}\n{PROBE}"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    probed = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"EncoderDecoderCache"} == WRAPPER_CLASSES, "the probe wraps EncoderDecoderCache only"
    for pair, type_name in probed["wrapped"].items():
        first = pair.split(",")[0]
        assert type_name == ("int" if first in INT_LENGTH_CLASSES else "Tensor"), f"{pair} in {version}"
    assert probed["legacy_wrapped"] == "int"


GENERATION_PROBE = """
import inspect, json, transformers
from transformers.generation.utils import GenerationMixin

own = [
    name
    for name, value in vars(GenerationMixin).items()
    if inspect.isfunction(value) or isinstance(value, (staticmethod, classmethod))
]
print(json.dumps({"version": transformers.__version__, "methods": sorted(own)}))
"""


@pytest.mark.parametrize("version", CHECKED_RELEASES)
def test_every_generation_method_of_a_release_is_a_host_hook(version: str) -> None:
    """A function installed under a name of `GENERATION_HOOKS` is taken as host code: every method
    a 5.x release's `GenerationMixin` defines is among the table's 5.x names."""
    code = f"import sys; sys.path[:0] = {release_path(version)!r}\n{GENERATION_PROBE}"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    probed = json.loads(result.stdout.strip().splitlines()[-1])
    assert probed["version"] == version
    assert set(probed["methods"]) <= GENERATION_HOOKS_5X, set(probed["methods"]) - GENERATION_HOOKS_5X
    assert GENERATION_HOOKS_5X <= GENERATION_HOOKS


COMPILEABLE_PROBE = """
import json, torch, transformers
from transformers import cache_utils as cu, LlamaConfig, Qwen3NextConfig

config = LlamaConfig(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=2,
                     intermediate_size=64, vocab_size=100, max_position_embeddings=64)
linear = Qwen3NextConfig(hidden_size=32, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=4,
                         intermediate_size=64, vocab_size=100, head_dim=16,
                         layer_types=["linear_attention", "full_attention"] * 2)

def updated(cache, layer_idx=0):
    keys = torch.zeros(1, 2, 3, 16)
    cache.update(keys, keys, layer_idx)
    return cache

def recording(cache):
    cache.activate_past_recording()
    return cache

MAKERS = {
    "StaticCache": lambda: updated(cu.StaticCache(config=config, max_cache_len=16)),
    "SlidingWindowCache": lambda: updated(cu.SlidingWindowCache(config=config, max_cache_len=16)),
    "DynamicCache": lambda: updated(cu.DynamicCache(config=config)),
    "EncoderDecoderCache(StaticCache)": lambda: cu.EncoderDecoderCache(
        updated(cu.StaticCache(config=config, max_cache_len=16)), cu.DynamicCache()),
    "EncoderDecoderCache(DynamicCache, StaticCache)": lambda: cu.EncoderDecoderCache(
        updated(cu.DynamicCache()), cu.StaticCache(config=config, max_cache_len=16)),
    "Cache(StaticLayer, DynamicLayer)": lambda: updated(
        cu.Cache(layers=[cu.StaticLayer(max_cache_len=16), cu.DynamicLayer()])),
    "StaticCache(linear attention)": lambda: updated(cu.StaticCache(config=linear, max_cache_len=16), 1),
}
if hasattr(cu.Cache, "activate_past_recording"):
    MAKERS["StaticCache(linear attention) recording"] = lambda: updated(
        recording(cu.StaticCache(config=linear, max_cache_len=16)), 1)
    MAKERS["EncoderDecoderCache(that)"] = lambda: cu.EncoderDecoderCache(
        updated(recording(cu.StaticCache(config=linear, max_cache_len=16)), 1), cu.DynamicCache())

def facts(make):
    cache = make()
    return [bool(cache.is_compileable), type(cache.get_seq_length()).__name__]

print(json.dumps({"version": transformers.__version__, "facts": {name: facts(make) for name, make in MAKERS.items()}}))
"""

COMPILEABLE_FACTS = {
    "StaticCache": [True, "Tensor"],
    "SlidingWindowCache": [True, "Tensor"],
    "DynamicCache": [False, "int"],
    "EncoderDecoderCache(StaticCache)": [True, "Tensor"],
    "EncoderDecoderCache(DynamicCache, StaticCache)": [False, "int"],
    "Cache(StaticLayer, DynamicLayer)": [False, "Tensor"],
    "StaticCache(linear attention)": [True, "Tensor"],
}
"""(`is_compileable`, the type of `get_seq_length()`) of each cache in 5.5.3 and 5.24.0."""

RECORDING_FACTS = {
    "StaticCache(linear attention) recording": [False, "Tensor"],
    "EncoderDecoderCache(that)": [False, "Tensor"],
}
"""From 5.24.0 (`activate_past_recording`, which assisted generation calls on its caches)."""


@pytest.mark.parametrize("version", CHECKED_RELEASES)
def test_a_cache_that_is_not_compileable_may_have_a_tensor_length(version: str) -> None:
    """Why `not c.is_compileable` proves nothing of `c`'s length: every release has a tensor-length
    cache that is not compileable (a `Cache` of a static and a dynamic layer; from 5.24.0 also a
    `StaticCache` of a linear-attention model once it records its past, as an assistant model's does),
    though the table's own tensor-length classes are compileable and `EncoderDecoderCache` follows its
    self-attention cache."""
    code = f"import sys; sys.path[:0] = {release_path(version)!r}\n{COMPILEABLE_PROBE}"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    probed = json.loads(result.stdout.strip().splitlines()[-1])
    assert probed["version"] == version
    expected = COMPILEABLE_FACTS | (RECORDING_FACTS if version != "5.5.3" else {})
    assert probed["facts"] == expected
    assert any(not compileable and length == "Tensor" for compileable, length in probed["facts"].values())

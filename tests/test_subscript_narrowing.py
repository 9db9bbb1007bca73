"""`isinstance` on an entry of a container (`cache.layers[i]`, `cache.layers[self.layer_idx]`), then
a length asked of the same entry: it is the class tested while neither the container, nor its items,
nor the index is rebound (`taint.subscript_key`). Reduced from turboquant-kv 1.0.0's fused attention
(`isinstance(past_key_values.layers[self.layer_idx], FusedLayer)` in a flag, then the layer read
again); each silent shape has must-report twins that change the entry in between."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source

MODULE = """
    from transformers.cache_utils import StaticLayer


    class IntLayer:
        def __init__(self):
            self.keys = None

        def get_seq_length(self):
            return 0 if self.keys is None else int(self.keys.shape[-2])


    def forward(self, cache, i, j, other, x, model, kwargs):
        {body}
        return x[:, n:]
"""

MUST_STAY_SILENT = {
    "the entry asked in the branch": "if not isinstance(cache.layers[i], IntLayer):\n            return x\n        n = cache.layers[i].get_seq_length()",
    "the entry read into a local": "if not isinstance(cache.layers[i], IntLayer):\n            return x\n        layer = cache.layers[i]\n        n = layer.get_seq_length()",
    "an attribute as the index": "if not isinstance(cache.layers[self.layer_idx], IntLayer):\n            return x\n        n = cache.layers[self.layer_idx].get_seq_length()",
    "a flag of several tests": "ok = cache is not None and i < len(cache.layers) and isinstance(cache.layers[i], IntLayer)\n        if not ok:\n            return x\n        n = cache.layers[i].get_seq_length()",
    "another constant entry stored": (
        "if not isinstance(cache.blocks[0], IntLayer):\n            return x\n"
        "        cache.blocks[1] = other\n        n = cache.blocks[0].get_seq_length()"
    ),
}

CHANGED_BETWEEN = {
    "the index rebound": "i = j",
    "the index added to": "i += 1",
    "another item stored": "cache.layers[j] = StaticLayer(8)",
    "an item inserted": "cache.layers.insert(0, StaticLayer(8))",
    "an item deleted": "del cache.layers[0]",
    "the container rebound": "cache.layers = other",
    "the cache rebound": "cache = other",
    "the container handed on": "fill(cache.layers)",
    "a method of the object holding the index": "self.step()",
    "the cache handed on in **kwargs": "model(**kwargs)",
    "the cache handed on in *args": "model(*[cache])",
}


@pytest.mark.parametrize("case", MUST_STAY_SILENT)
def test_must_stay_silent(case: str) -> None:
    assert findings_of(MUST_STAY_SILENT[case]) == [], case


@pytest.mark.parametrize("case", CHANGED_BETWEEN)
def test_must_report_when_the_entry_may_change_in_between(case: str) -> None:
    index = "self.layer_idx" if "self" in CHANGED_BETWEEN[case] else "i"
    body = (
        f"if not isinstance(cache.layers[{index}], IntLayer):\n            return x\n"
        f"        {CHANGED_BETWEEN[case]}\n        n = cache.layers[{index}].get_seq_length()"
    )
    assert findings_of(body) == ["SLG002"], case


def test_must_report_a_flag_whose_index_is_rebound() -> None:
    body = "ok = isinstance(cache.layers[i], IntLayer)\n        i = j\n        if not ok:\n            return x\n        n = cache.layers[i].get_seq_length()"
    assert findings_of(body) == ["SLG002"]


def test_must_report_an_entry_of_a_tensor_length_class() -> None:
    body = "if not isinstance(cache.layers[i], StaticLayer):\n            return x\n        n = cache.layers[i].get_seq_length()"
    assert findings_of(body) == ["SLG002"]


def findings_of(body: str) -> list[str]:
    text = textwrap.dedent(MODULE.replace("{body}", body))
    return [finding.code for finding in analyze_source(text, "example.py", ("get_seq_length",))]


BLOCKS = {
    "an entry before it deleted (the entries shift)": ("1", "del cache.blocks[0]"),
    "the same entry stored through `True`": ("1", "cache.blocks[True] = other"),
    "the same entry stored through `False`": ("0", "cache.blocks[False] = other"),
    "the entry added to": ("1", "cache.blocks[1] += other"),
}


@pytest.mark.parametrize("case", BLOCKS)
def test_must_report_a_constant_entry_changed_in_between(case: str) -> None:
    index, change = BLOCKS[case]
    body = (
        f"if not isinstance(cache.blocks[{index}], IntLayer):\n            return x\n"
        f"        {change}\n        n = cache.blocks[{index}].get_seq_length()"
    )
    assert findings_of(body) == ["SLG002"], case

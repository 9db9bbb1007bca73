"""A function of the module that gives back a new cache (`lint_rules/engine/facts/factories.py`):
`def new_cache(): return DynamicCache()`, then `new_cache().get_seq_length()`, counts an int; each
shape that silences has a twin that must be reported (reduced from tardigrade-db 0.8.1's
`_move_cache_to_device`, which builds the `DynamicCache` it returns)."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source

USE = """
    import torch
    from transformers import DynamicCache, StaticCache
    from transformers.cache_utils import StaticLayer

    {factory}

    def use(ids, past, config):
        {call}
        n = cache.get_seq_length()
        return ids[:, n:]
"""

MUST_STAY_SILENT = {
    "a constructor returned": ("def make(past, config):\n        return DynamicCache()", "cache = make(past, config)"),
    "a call of it as the receiver": (
        "def make(past, config):\n        return DynamicCache()",
        "cache = None\n        n0 = make(past, config).get_seq_length()\n        ids = ids[:, n0:]\n        cache = make(past, config)",
    ),
    "a local bound to a constructor, filled by update": (
        "def make(past, config):\n        moved = DynamicCache()\n        moved.update(past[0], past[1], 0)\n        return moved",
        "cache = make(past, config)",
    ),
    "another function's own local of the same name": (
        "def make(past, config):\n        return DynamicCache()\n\n    def other():\n        make = build\n        return make",
        "cache = make(past, config)",
    ),
    "a legacy builder, or None": (
        "def make(past, config):\n        if past is None:\n            return None\n        return DynamicCache.from_legacy_cache(past)",
        "cache = make(past, config)",
    ),
}

MUST_REPORT = {
    "a static cache returned": (
        "def make(past, config):\n        return StaticCache(config=config, max_cache_len=8)",
        "cache = make(past, config)",
    ),
    "one return of two a static cache": (
        "def make(past, config):\n        if past is None:\n            return StaticCache(config=config, max_cache_len=8)\n        return DynamicCache()",
        "cache = make(past, config)",
    ),
    "its parameter returned": (
        "def make(past, config):\n        if not past:\n            return DynamicCache()\n        return past",
        "cache = make(past, config)",
    ),
    "another function's result returned": (
        "def make(past, config):\n        return build(config)",
        "cache = make(past, config)",
    ),
    "layers changed before the return": (
        "def make(past, config):\n        cache = DynamicCache()\n        cache.layers.append(StaticLayer(8))\n        return cache",
        "cache = make(past, config)",
    ),
    "a local bound otherwise too": (
        "def make(past, config):\n        cache = DynamicCache()\n        for cache in past:\n            pass\n        return cache",
        "cache = make(past, config)",
    ),
    "a generator": ("def make(past, config):\n        yield DynamicCache()", "cache = next(make(past, config))"),
    "the name rebound in the module": (
        "def make(past, config):\n        return DynamicCache()\n\n    if torch.cuda.is_available():\n        make = build",
        "cache = make(past, config)",
    ),
    "the name rebound where it is called": (
        "def make(past, config):\n        return DynamicCache()",
        "make = build\n        cache = make(past, config)",
    ),
    "the name rebound through `global` in another function": (
        "def make(past, config):\n        return DynamicCache()\n\n    def swap():\n        global make\n        make = build",
        "cache = make(past, config)",
    ),
    "a decorated factory (the decorator may put another function in its place)": (
        "@swap_for_static\n    def make(past, config):\n        return DynamicCache()",
        "cache = make(past, config)",
    ),
    "a method, which a subclass may override": (
        "class Maker:\n        def make(self, past, config):\n            return DynamicCache()\n\n    maker = Maker()",
        "cache = maker.make(past, config)",
    ),
}


def findings_of(factory: str, call: str) -> list[str]:
    text = textwrap.dedent(USE.format(factory=factory, call=call))
    return [finding.code for finding in analyze_source(text, "example.py", ("get_seq_length",))]


@pytest.mark.parametrize("case", MUST_STAY_SILENT)
def test_must_stay_silent(case: str) -> None:
    assert findings_of(*MUST_STAY_SILENT[case]) == [], case


@pytest.mark.parametrize("case", MUST_REPORT)
def test_must_report(case: str) -> None:
    assert findings_of(*MUST_REPORT[case]) == ["SLG002"], case

"""What a third review of the silencing facts (model outputs, `hasattr` owners, held containers,
never-None values) found silent where a tensor length reaches a harmful use
(/work/notes/review_sound.md): each reduced to a module that must be reported, and each failed
before its fix; beside each, the shape the fact is there to silence, which must stay silent."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine import analyze_source
from lint_rules.settings import Settings
from tests import package_files
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT

LAYERED_CACHE = """
    from transformers.cache_utils import StaticLayer


    class Layer:
        def __init__(self):
            self.keys = None

        def get_seq_length(self):
            return 0 if self.keys is None else self.keys.shape[-2]


    class MyCache:
        def __init__(self, n):
            self.layers = [Layer() for _ in range(n)]

        def get_seq_length(self, layer_idx=0):
            return self.layers[layer_idx].get_seq_length()

        def add(self, flag):
            {add}


    def tail(cache: MyCache, ids):
        n = cache.get_seq_length()
        return ids[:, n:]
"""

RUNNER = """
    import torch
    from transformers import DynamicCache, StaticCache


    class Runner:
        def __init__(self, model):
            self.model = model

        def step(self, ids):
            {step}

        def run(self, ids):
            {run}
            n = {length}
            return ids[:, n:]
"""

OUTPUTS_ALIASED = """
    from transformers import DynamicCache, StaticCache


    def run(model, ids, flag, other):
        out = model(ids, past_key_values=DynamicCache(), use_cache=True)
        {alias}
        alias.past_key_values = StaticCache(config=model.config, max_cache_len=64)
        n = out.past_key_values.get_seq_length()
        return ids[:, n:]
"""

MUST_REPORT = {
    "a layer put into the list `a or b` gives": LAYERED_CACHE.format(add="(self.layers or []).append(StaticLayer(64))"),
    "a layer put into the list `a and b` gives": LAYERED_CACHE.format(
        add="(flag and self.layers).append(StaticLayer(64))"
    ),
    "a layer put in by a lambda in a method": LAYERED_CACHE.format(
        add="grow = lambda: self.layers.append(StaticLayer(64))\n            grow()"
    ),
    "the outputs' cache after its layers changed": """
        from transformers import DynamicCache
        from transformers.cache_utils import StaticLayer

        def run(model, ids):
            cache = DynamicCache()
            out = model(ids, past_key_values=cache, use_cache=True)
            cache.layers.append(StaticLayer(64))
            n = out.past_key_values.get_seq_length()
            return ids[:, n:]
    """,
    "the outputs' own cache after its layers changed": """
        from transformers import DynamicCache
        from transformers.cache_utils import StaticLayer

        def run(model, ids):
            out = model(ids, past_key_values=DynamicCache(), use_cache=True)
            out.past_key_values.layers.append(StaticLayer(64))
            n = out.past_key_values.get_seq_length()
            return ids[:, n:]
    """,
    "a cache attribute a method of the object rebinds": RUNNER.format(
        step="self.cache = StaticCache(config=self.model.config, max_cache_len=64)",
        run="self.cache = DynamicCache()\n            self.step(ids)",
        length="self.cache.get_seq_length()",
    ),
    "outputs a method of the object rebinds": RUNNER.format(
        step="self.out = self.model(ids, past_key_values=StaticCache(config=self.model.config, max_cache_len=64))",
        run="self.out = self.model(ids, past_key_values=DynamicCache(), use_cache=True)\n            self.step(ids)",
        length="self.out.past_key_values.get_seq_length()",
    ),
    "a cache attribute a function given the object rebinds": RUNNER.format(
        step="pass",
        run="self.cache = DynamicCache()\n            reset(self)",
        length="self.cache.get_seq_length()",
    )
    + "\n\n    def reset(runner):\n        runner.cache = StaticCache(config=runner.model.config, max_cache_len=64)\n",
    "a cache rebound part way through a `try` body, read in the handler's path": """
        from transformers import DynamicCache, StaticCache

        def run(model, ids, step):
            c = DynamicCache()
            try:
                c = StaticCache(config=model.config, max_cache_len=64)
                step()
                c = DynamicCache()
            except Exception:
                pass
            n = c.get_seq_length()
            return ids[:, n:]
    """,
    "a cache a nested function rebinds through `nonlocal`": """
        from transformers import DynamicCache, StaticCache

        def run(model, ids):
            c = DynamicCache()
            def swap():
                nonlocal c
                c = StaticCache(config=model.config, max_cache_len=64)
            swap()
            n = c.get_seq_length()
            return ids[:, n:]
    """,
    "outputs a nested function stores into": """
        from transformers import DynamicCache, StaticCache

        def run(model, ids):
            out = model(ids, past_key_values=DynamicCache(), use_cache=True)
            def swap():
                out.past_key_values = StaticCache(config=model.config, max_cache_len=64)
            swap()
            n = out.past_key_values.get_seq_length()
            return ids[:, n:]
    """,
    "outputs bound to a global another function stores into": """
        from transformers import DynamicCache, StaticCache

        def run(model, ids):
            global OUT
            OUT = model(ids, past_key_values=DynamicCache(), use_cache=True)
            swap(model)
            n = OUT.past_key_values.get_seq_length()
            return ids[:, n:]

        def swap(model):
            OUT.past_key_values = StaticCache(config=model.config, max_cache_len=64)
    """,
    "outputs aliased by a walrus": OUTPUTS_ALIASED.format(alias="print(alias := out)"),
    "outputs aliased as an arm of `a if t else b`": OUTPUTS_ALIASED.format(alias="alias = out if flag else other"),
    "outputs aliased as an operand of `a or b`": OUTPUTS_ALIASED.format(alias="alias = out or other"),
    "outputs aliased by a `match` capture": OUTPUTS_ALIASED.format(
        alias="match out:\n                case object() as alias:\n                    pass"
    ),
    "a method of the object bound to an attribute, called through it": """
        from transformers import DynamicCache, StaticCache

        class Runner:
            def __init__(self, config):
                self.config = config
                self.step = self._step

            def _step(self):
                self.cache = StaticCache(config=self.config, max_cache_len=8)

            def run(self, ids):
                self.cache = DynamicCache()
                self.step()
                n = self.cache.get_seq_length()
                return ids[:, n:]
    """,
    "a method of the object compiled and bound to an attribute": RUNNER.format(
        step="self.cache = StaticCache(config=self.model.config, max_cache_len=64)",
        run="self.cache = DynamicCache()\n            self.compiled(ids)",
        length="self.cache.get_seq_length()",
    ).replace("self.model = model", "self.model = model\n            self.compiled = torch.compile(self.step)"),
    "an object built with the holder bound to an attribute": RUNNER.format(
        step="self.cache = StaticCache(config=self.model.config, max_cache_len=64)",
        run="self.cache = DynamicCache()\n            self.stepper(ids)",
        length="self.cache.get_seq_length()",
    ).replace("self.model = model", "self.model = model\n            self.stepper = Stepper(self)"),
    "a base's method run through `super()`": RUNNER.format(
        step="self.cache = StaticCache(config=self.model.config, max_cache_len=64)",
        run="self.cache = DynamicCache()\n            super().reset()",
        length="self.cache.get_seq_length()",
    ),
    "a module's own method named like a tensor's, which may return None": """
        class Holder:
            def view(self, x):
                return None

        def f(cache, ids, holder: Holder):
            position_ids = holder.view(ids)
            if position_ids is None:
                n = cache.get_seq_length()
                return ids[:, n:]
            return ids
    """,
}

MUST_STAY_SILENT = {
    "only int-length layers are put in by a lambda": LAYERED_CACHE.format(
        add="grow = lambda: self.layers.append(Layer())\n            grow()"
    ),
    "a test of the list changes nothing": LAYERED_CACHE.format(add="if self.layers and flag:\n                pass"),
    "the outputs of a model given a DynamicCache, no layer changed": """
        from transformers import DynamicCache

        def run(model, ids):
            out = model(ids, past_key_values=DynamicCache(), use_cache=True)
            n = out.past_key_values.get_seq_length()
            return ids[:, n:]
    """,
    "calling the model an attribute holds rebinds nothing of the holder": RUNNER.format(
        step="self.cache = StaticCache(config=self.model.config, max_cache_len=64)",
        run="self.cache = DynamicCache()\n            self.model(ids, past_key_values=self.cache, use_cache=True)",
        length="self.cache.get_seq_length()",
    ),
    "a cache bound before a `try` whose body does not rebind it": """
        from transformers import DynamicCache

        def run(model, ids, step):
            c = DynamicCache()
            try:
                step()
            except Exception:
                pass
            n = c.get_seq_length()
            return ids[:, n:]
    """,
    "a nested function that only reads the outputs": """
        from transformers import DynamicCache

        def run(model, ids):
            c = DynamicCache()
            out = model(ids, past_key_values=c, use_cache=True)
            def show():
                print(c)
            show()
            n = out.past_key_values.get_seq_length()
            return ids[:, n:]
    """,
    "a name added to stays not None": """
        import torch

        def f(cache, ids, value):
            position_ids = torch.arange(ids.shape[1])
            position_ids += value
            if position_ids is None:
                n = cache.get_seq_length()
                return ids[:, n:]
            return ids
    """,
    "a tensor's `.view()` is never None": """
        import torch

        def f(cache, ids):
            position_ids = torch.arange(ids.shape[1]).view(1, -1)
            if position_ids is None:
                n = cache.get_seq_length()
                return ids[:, n:]
            return ids
    """,
}


@pytest.mark.parametrize("case", MUST_REPORT)
def test_must_report(case: str) -> None:
    findings = analyze_source(textwrap.dedent(MUST_REPORT[case]), "example.py", ("get_seq_length",))
    assert findings and {finding.code for finding in findings} == {"SLG002"}, case


@pytest.mark.parametrize("case", MUST_STAY_SILENT)
def test_must_stay_silent(case: str) -> None:
    assert analyze_source(textwrap.dedent(MUST_STAY_SILENT[case]), "example.py", ("get_seq_length",)) == [], case


# ----- `hasattr` on an attribute only the package's int-length classes have ------------------------

OWNERS = """
    import torch
    from dataclasses import dataclass


    class IntCache:
        marked = False

        def __init__(self):
            self.keys = None

        def get_seq_length(self, layer_idx=0):
            return 0 if self.keys is None else self.keys.shape[-2]

        {int_cache_method}


    {other_class}


    def positions(cache, ids):
        if hasattr(cache, "{attribute}"):
            past = cache.get_seq_length()
            return torch.arange(past, past + ids.shape[1])
        return None
"""

WRAPPED = """
    class Wrapped:
        def __init__(self, inner, **options):
            self.inner = inner
            {binding}

        def get_seq_length(self, layer_idx=0):
            return self.inner.get_seq_length(layer_idx)
"""

OWNER_CASES = {
    "an attribute transformers' caches have (5.2x's `get_query_offset`)": (
        "def get_query_offset(self, layer_idx=0):\n            return self.get_seq_length(layer_idx)",
        "",
        "get_query_offset",
    ),
    "an attribute another class binds through `self.__dict__`": (
        "",
        WRAPPED.format(binding="self.__dict__.update(options)"),
        "marked",
    ),
    "an attribute another class binds through `vars(self)`": (
        "",
        WRAPPED.format(binding="vars(self).update(options)"),
        "marked",
    ),
    "a dataclass field another class declares": (
        "",
        "@dataclass\n    class Wrapped:\n        inner: object\n        marked: bool",
        "marked",
    ),
}


def owners_findings(tmp_path: Path, int_cache_method: str, other_class: str, attribute: str) -> list[str]:
    text = OWNERS.format(int_cache_method=int_cache_method, other_class=other_class, attribute=attribute)
    package = package_files.write_package(tmp_path, {"caches": text}, "owners_review")
    checked = check_path(str(package / "caches.py"), Settings())
    assert not checked.error, checked.error
    return [finding.code for finding in checked.findings]


@pytest.mark.parametrize("case", OWNER_CASES)
def test_hasattr_must_report(tmp_path: Path, case: str) -> None:
    assert owners_findings(tmp_path, *OWNER_CASES[case]) == ["SLG003", "SLG003"], case


def test_hasattr_on_an_attribute_only_the_int_length_class_has_stays_silent(tmp_path: Path) -> None:
    """The twin: the class's own attribute, which no other class and no transformers cache has."""
    assert owners_findings(tmp_path, "", WRAPPED.format(binding="self.ready = True"), "marked") == []


# ----- `isinstance` after a call that may rebind the tested name ------------------------------------

ASKED_THEN_TESTED = """
    from transformers import DynamicCache


    def run(cache, ids, other):
        n = cache.get_seq_length()
        def swap():
            {declaration}
            cache = other
        swap()
        if isinstance(cache, DynamicCache):
            return ids[:, n:]
        return ids
"""
"""Where a `DynamicCache` counts an int (before 5.25), the test proves what `n` was asked of only
while `cache` still holds that object."""


@pytest.mark.parametrize(("declaration", "expected"), [("nonlocal cache", ["SLG002"]), ("pass", [])])
def test_a_length_asked_before_a_call_that_may_rebind_the_name_stays_reported(
    declaration: str, expected: list[str]
) -> None:
    text = textwrap.dedent(ASKED_THEN_TESTED.format(declaration=declaration))
    findings = analyze_source(text, "example.py", ("get_seq_length",), releases=DYNAMIC_CACHE_COUNTS_INT)
    assert [finding.code for finding in findings] == expected

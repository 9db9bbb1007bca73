"""A length method bound other than by a `def` (`ClassFacts.unless_replaced`): where the module binds
`get_seq_length` on an object (`Cache.get_seq_length = f`, `cache.get_seq_length = f.__get__(cache)`,
`setattr(Cache, "get_seq_length", f)`), an object of any class may answer it with anything,
transformers' classes included; a name not written out (`setattr(obj, key, f)`) may do so for the
module's own classes. The binding forms on the module's own class are in
the class fact matrix (`tests/class_fact_matrix.py`); here, transformers' classes and what must stay
silent, with the reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.settings import Settings
from tests.module_cases import COUNTER_CACHE, codes_with, findings_in
from tests.package_files import write_package

DYNAMIC = """\
    import torch
    from transformers import DynamicCache


    def built(ids):
        cache = DynamicCache()
        return ids[:, cache.get_seq_length():]
"""


def codes_of_dynamic(more: str) -> list[str]:
    return [finding.code for finding in findings_in(textwrap.dedent(DYNAMIC) + textwrap.dedent(more))]


REPLACING = {
    "the class's method, at module level": """
        DynamicCache.get_seq_length = lambda self, layer_idx=0: torch.zeros((), dtype=torch.long)
    """,
    "the class's method, by setattr": """
        setattr(DynamicCache, "get_seq_length", lambda self, layer_idx=0: torch.zeros(()))
    """,
    "one object's method, bound to it (recurrent_gemma's patch)": """
        def _length(self, layer_idx=0):
            return self.layers[0].keys.sum()


        def patch(cache):
            cache.get_seq_length = _length.__get__(cache)
    """,
}


@pytest.mark.parametrize("more", REPLACING.values(), ids=REPLACING.keys())
def test_a_transformers_class_whose_length_method_is_replaced_is_reported(more: str) -> None:
    assert codes_of_dynamic(more) == ["SLG002"]


def test_without_a_replacement_a_dynamic_cache_counts_an_int() -> None:
    assert codes_of_dynamic("") == []


SILENT = {
    "another method replaced (get_usable_length is no source method)": """
        DynamicCache.get_usable_length = lambda self, new_seq_length, layer_idx=0: self.get_seq_length(layer_idx)
    """,
    "a bound method read, not bound": """
        def length_of(cache):
            read = cache.get_seq_length
            return read
    """,
    "the method's name asked, not bound": """
        def has_length(cache):
            return hasattr(cache, "get_seq_length")
    """,
    "a literal flag set on the class": """
        Cache.verbose = True
    """,
    "a literal stored under any name: calling it fails, it returns no tensor": """
        def reset(cache, name):
            setattr(cache, name, 0)
    """,
}


@pytest.mark.parametrize("more", SILENT.values(), ids=SILENT.keys())
def test_must_stay_silent(more: str) -> None:
    assert codes_of_dynamic(more) == []
    if "DynamicCache" not in more:
        assert codes_with(COUNTER_CACHE, more) == []


def test_any_method_of_the_modules_own_class_replaced_from_outside_is_reported() -> None:
    """`Cache.update = f`, `Cache.__init__ = f`: the counter's bindings are read in the class's own
    methods, which are then others (`ClassBodies.patched_from_outside`); transformers' classes are
    read from the table, and another method of theirs replaced is not followed (docs/limits.md)."""
    assert codes_with(COUNTER_CACHE, "\nCache.update = lambda self, keys, q_len: setattr(self, 'n', keys.sum())\n") == [
        "SLG002"
    ]
    assert codes_with(COUNTER_CACHE, "\nCache.get_usable_length = lambda self, n, layer_idx=0: 0\n") == ["SLG002"]


def test_a_name_not_written_out_may_replace_the_length_of_the_modules_own_classes() -> None:
    """`setattr(obj, key, f)` may bind `get_seq_length` on an object of the module's class; on
    transformers' objects it is not followed, like any other store into them (docs/limits.md)."""
    more = """
        def patch(cache, name, method):
            setattr(cache, name, method)
    """
    assert codes_with(COUNTER_CACHE, more) == ["SLG002"]


def test_a_replacement_in_another_class_method_reaches_every_class() -> None:
    """`type(other).get_seq_length = f` in a method of another class binds it on that object's class."""
    more = """
        class Patcher:
            def apply(self, cache):
                type(cache).get_seq_length = lambda this, layer_idx=0: torch.zeros(())
    """
    assert codes_with(COUNTER_CACHE, more) == ["SLG002"]
    assert codes_of_dynamic(more) == ["SLG002"]


OTHER_INIT = """
    class Other:
        def __init__(self):
            self.n = torch.zeros((), dtype=torch.long)

"""
PATCHES_OF_THE_CLASS = {
    "through an alias": "C = Cache\nC.__init__ = Other.__init__",
    "through a parameter": "def patch(klass):\n    klass.__init__ = Other.__init__\n\n\npatch(Cache)",
    "through a loop": "for klass in (Cache,):\n    klass.__init__ = Other.__init__",
    "in parentheses": "(Cache).__init__ = Other.__init__",
    "after a line break": "Cache \\\n    .__init__ = Other.__init__",
    "on the method's code": "Cache.__init__.__code__ = Other.__init__.__code__",
    "on the class of an object built by a call": "type(Cache()).__init__ = Other.__init__",
    "another method, through an alias": "C = Cache\nC.update = lambda self, keys, q_len: setattr(self, 'n', keys.sum())",
}


@pytest.mark.parametrize("patch", PATCHES_OF_THE_CLASS.values(), ids=PATCHES_OF_THE_CLASS.keys())
def test_a_method_of_the_class_patched_by_any_spelling_is_reported(patch: str) -> None:
    """`ClassBodies.patched_from_outside`: a method's name of the class, or a special name, bound on
    any object outside the class's own methods."""
    more = OTHER_INIT + textwrap.indent(patch, "    ") + "\n"
    assert codes_with(COUNTER_CACHE, more) == ["SLG002"]


EASYDEL_PATCH = """\
    import transformers.models.qwen3_next.modeling_qwen3_next as hf


    def _patch():
        cache_cls = getattr(hf, "Qwen3NextDynamicCache", None)
        if cache_cls is not None:
            original_get_seq_length = getattr(cache_cls, "get_seq_length", None)
            if original_get_seq_length is not None:

                def _patched_get_seq_length(self, layer_idx: int | None = 0) -> int:
                    if not getattr(self, "transformer_layers", None):
                        return 0
                    return original_get_seq_length(self, layer_idx)

                cache_cls.get_seq_length = _patched_get_seq_length
"""
"""easydel 0.3.0: a function installed as the length method forwards the original's length. Like a
`def get_seq_length` of a class, its `return` is no use: the uses are its callers' (`.get_seq_length()`),
and nothing can call a function nested in another by its name."""


def test_a_nested_function_installed_as_the_length_method_may_return_the_length_it_forwards() -> None:
    assert findings_in(textwrap.dedent(EASYDEL_PATCH)) == []


MODULE_LEVEL_PATCH = """\
    from transformers import DynamicCache


    def _forwarded_length(self, layer_idx: int = 0) -> int:
        return self.layers[layer_idx].get_seq_length()


    DynamicCache.get_seq_length = _forwarded_length
"""
BOUND_PATCH = MODULE_LEVEL_PATCH.replace(
    "DynamicCache.get_seq_length = _forwarded_length",
    "def patch(cache):\n        cache.get_seq_length = _forwarded_length.__get__(cache)",
)
OTHER_MODULE = """\
    def helper(ids):
        return ids[:, 1:]
"""


@pytest.mark.parametrize("patch", [MODULE_LEVEL_PATCH, BOUND_PATCH], ids=["on the class", "bound to one object"])
def test_a_private_function_no_other_module_names_may_return_the_length_it_forwards(tmp_path: Path, patch: str) -> None:
    package = write_package(tmp_path, {"patches": patch, "other": OTHER_MODULE})
    assert check_path(str(package / "patches.py"), Settings()).findings == ()


def test_the_same_function_another_module_calls_by_name_is_reported(tmp_path: Path) -> None:
    """It trusts the `-> int`, and is checked only if its text names a source method."""
    caller = """\
        from .patches import _forwarded_length


        def trim(cache, ids):
            return ids[:, _forwarded_length(cache):]
    """
    package = write_package(tmp_path, {"patches": MODULE_LEVEL_PATCH, "other": caller})
    assert [finding.code for finding in check_path(str(package / "patches.py"), Settings()).findings] == ["SLG005"]


INSTALLED_TWINS = {
    "a module outside a package: a script beside it may import the function (SLG005)": (MODULE_LEVEL_PATCH, ""),
    "a public function: another module may call it by name (SLG005)": (
        MODULE_LEVEL_PATCH.replace("_forwarded_length", "forwarded_length"),
        "",
    ),
    "installed as another method: its `-> int` return is a use (SLG005)": (
        EASYDEL_PATCH.replace("cache_cls.get_seq_length =", "cache_cls.crop ="),
        "",
    ),
    "installed as the length method and as another one (SLG005)": (
        EASYDEL_PATCH.replace(
            "cache_cls.get_seq_length = _patched_get_seq_length",
            "cache_cls.get_seq_length = _patched_get_seq_length\n"
            "                cache_cls.get_usable_length = _patched_get_seq_length",
        ),
        "",
    ),
    "installed as an item of a table, not a method (SLG005)": (
        EASYDEL_PATCH.replace("cache_cls.get_seq_length =", 'TABLE["get_seq_length"] ='),
        "",
    ),
    "what is installed is built from it, not the function itself (SLG005)": (
        EASYDEL_PATCH.replace(
            "cache_cls.get_seq_length = _patched_get_seq_length",
            "cache_cls.get_seq_length = lambda self, layer_idx=0: _patched_get_seq_length(self) + 1",
        ),
        "",
    ),
    "another function of the module has its name (SLG005)": (
        EASYDEL_PATCH,
        """
        class Other:
            def _patched_get_seq_length(self) -> int:
                return 0
        """,
    ),
}


@pytest.mark.parametrize("case", INSTALLED_TWINS.values(), ids=INSTALLED_TWINS.keys())
def test_a_forwarding_function_not_surely_the_installed_length_method_is_reported(case: tuple[str, str]) -> None:
    patch, more = case
    source = textwrap.dedent(patch) + textwrap.dedent(more)
    assert "SLG005" in [finding.code for finding in findings_in(source)]


def test_a_call_of_the_installed_function_by_its_own_name_is_a_source() -> None:
    more = """
        def trim(cache, ids):
            return ids[:, _forwarded_length(cache):]
    """
    source = textwrap.dedent(MODULE_LEVEL_PATCH) + textwrap.dedent(more)
    assert "SLG002" in [finding.code for finding in findings_in(source)]

"""Receivers whose class the package's code shows (`lint_rules/engine/facts/attribute_receivers.py`): a
`self` attribute or an element of one, a local bound from a function or method whose return
annotation names a class. Each shape is reduced from a released package (transformers-mblt 0.6.1,
turboquantdc 0.2.0, kvquant-plus-plus 0.1.17, axolotl 0.19.0) and has must-report twins: the same
shape with a tensor-length class, or with one binding that breaks the fact."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.settings import Settings
from lint_rules.target_range import TargetRange
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT

INT_LAYER = """\
    class OwnLayer:
        def __init__(self):
            self.seen = 0

        def update(self, keys):
            self.seen += keys.shape[-2]

        def get_seq_length(self):
            return self.seen
"""
TENSOR_LAYER = """\
    import torch


    class OwnLayer:
        \"\"\"deepspeed 0.19.8's `DeepSpeedStaticLayer`: the length is a tensor.\"\"\"

        def __init__(self):
            self.write_position = torch.zeros(1, dtype=torch.long)

        def get_seq_length(self):
            return self.write_position + 1
"""


def lines_reported(tmp_path: Path, modules: dict[str, str], checked: str, settings: Settings = Settings()) -> list[int]:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    return sorted({finding.line for finding in check_path(str(package / f"{checked}.py"), settings).findings})


# ----- (1a) an annotated list attribute of own layers (turboquantdc, transformers-mblt 613) -----------

LAYER_LIST = """\
    from typing import List

    from .layers import OwnLayer


    class OwnCache:
        def __init__(self):
            self._layers: List[OwnLayer] = []

        def _make_layer(self) -> OwnLayer:
            return OwnLayer()

        def update(self, keys, layer_idx):
            while len(self._layers) <= layer_idx:
                self._layers.append(self._make_layer())
            self._layers[layer_idx].update(keys)

        def get_mask_sizes(self, cache_position, layer_idx):
            return self._layers[layer_idx].get_seq_length() + cache_position.shape[0], 0

        def trimmed(self, ids):
            for layer in self._layers:
                seen = layer.get_seq_length()
                ids = ids[:, seen:]
            return ids
"""


def test_an_element_of_an_annotated_list_of_int_length_layers_is_silent(tmp_path: Path) -> None:
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "cache": LAYER_LIST}, "cache") == []


def test_an_element_of_a_list_of_tensor_length_layers_is_reported(tmp_path: Path) -> None:
    assert lines_reported(tmp_path, {"layers": TENSOR_LAYER, "cache": LAYER_LIST}, "cache") == [19, 24]


def test_an_annotated_list_with_a_tensor_length_layer_put_in_is_reported(tmp_path: Path) -> None:
    """The annotation is trusted where the code does not show a class; a class it shows counts too."""
    mixed = LAYER_LIST.replace(
        "self._layers.append(self._make_layer())",
        "self._layers.append(self._make_layer())\n                self._layers.append(StaticLayer())",
    ).replace("from typing import List\n", "from typing import List\n\n    from transformers import StaticLayer\n")
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "cache": mixed}, "cache") == [22, 27]


# ----- (1a) an attribute bound in `__init__` (transformers-mblt MobilintEagle3Cache) -----------------

BASE_LAYER = """\
    from .layers import OwnLayer


    class SpeculativeCache:
        def __init__(self):
            self.base_layer = OwnLayer()

        def copy(self):
            copied = SpeculativeCache()
            copied.base_layer = self.base_layer.copy()
            return copied

        def base_seq_length(self, ids):
            return ids[:, self.base_layer.get_seq_length():]
"""
COPYING_LAYER = (
    INT_LAYER
    + """
        def copy(self) -> "OwnLayer":
            return OwnLayer()
"""
)


def test_an_attribute_every_binding_of_which_is_an_int_length_layer_is_silent(tmp_path: Path) -> None:
    """`copied.base_layer = self.base_layer.copy()` binds what `copy` returns (a fixpoint)."""
    assert lines_reported(tmp_path, {"layers": COPYING_LAYER, "cache": BASE_LAYER}, "cache") == []


def test_an_attribute_bound_once_to_an_unknown_value_is_reported(tmp_path: Path) -> None:
    unknown = BASE_LAYER.replace("copied.base_layer = self.base_layer.copy()", "copied.base_layer = make_layer()")
    assert lines_reported(tmp_path, {"layers": COPYING_LAYER, "cache": unknown}, "cache") == [14]


def test_an_attribute_bound_in_a_tuple_target_is_reported(tmp_path: Path) -> None:
    unpacked = BASE_LAYER.replace(
        "copied.base_layer = self.base_layer.copy()", "copied.base_layer, other = self.base_layer.copy(), 1"
    )
    assert lines_reported(tmp_path, {"layers": COPYING_LAYER, "cache": unpacked}, "cache") == [14]


def test_an_attribute_of_a_tensor_length_layer_is_reported(tmp_path: Path) -> None:
    tensor_copying = TENSOR_LAYER + '\n        def copy(self) -> "OwnLayer":\n            return OwnLayer()\n'
    assert lines_reported(tmp_path, {"layers": tensor_copying, "cache": BASE_LAYER}, "cache") == [14]


# ----- (1+1a) an annotated attribute of a cache class of another module (turboquantdc chunked_prefill)

OWN_CACHE = """\
    from typing import List

    from .layers import OwnLayer


    class OwnCache:
        def __init__(self):
            self._layers: List[OwnLayer] = [OwnLayer()]

        def get_seq_length(self, layer_idx=0):
            if layer_idx >= len(self._layers):
                return 0
            return self._layers[layer_idx].get_seq_length()
"""
RUNNER = """\
    from typing import Optional

    import torch

    from .cache import OwnCache


    class Runner:
        def __init__(self):
            self.cache: Optional[OwnCache] = None

        def prefill(self):
            self.cache = OwnCache()

        def generate(self, n):
            def positions():
                past = self.cache.get_seq_length(0)
                return torch.arange(past, past + n)

            return positions()
"""


def test_an_annotated_attribute_of_an_int_length_package_cache_is_silent(tmp_path: Path) -> None:
    """Also from a nested function, which reads `self` of its method."""
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "runner": RUNNER}
    assert lines_reported(tmp_path, modules, "runner") == []


def test_an_annotated_attribute_of_a_tensor_length_package_cache_is_reported(tmp_path: Path) -> None:
    modules = {"layers": TENSOR_LAYER, "cache": OWN_CACHE, "runner": RUNNER}
    assert lines_reported(tmp_path, modules, "runner") == [18]


def test_an_annotated_attribute_the_code_binds_to_a_static_cache_is_reported(tmp_path: Path) -> None:
    static = RUNNER.replace("self.cache = OwnCache()", "self.cache = StaticCache(config)").replace(
        "import torch\n", "import torch\n    from transformers import StaticCache\n"
    )
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "runner": static}
    assert lines_reported(tmp_path, modules, "runner") == [19]


# ----- (1a) an element of a list of constructors, on an object a function returns (kvquant++) --------

COMPACT = """\
    from .layers import OwnLayer

    ACTIVE = {}


    class CompactCache:
        def __init__(self, n_layers):
            self.layers = [OwnLayer() for _ in range(n_layers)]


    def find_cache(module) -> CompactCache | None:
        return next(iter(ACTIVE.values()), None)


    def attention(module, query):
        cache = find_cache(module)
        layer = cache.layers[module.layer_idx]
        total_len = layer.get_seq_length()
        return total_len - query.shape[-2]
"""


def test_an_element_of_a_list_of_int_length_constructors_is_silent(tmp_path: Path) -> None:
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "compact": COMPACT}, "compact") == []


def test_an_element_of_a_list_anything_is_appended_to_is_reported(tmp_path: Path) -> None:
    appended = COMPACT.replace(
        "def find_cache(module)",
        "def register(cache, layer):\n        cache.layers.append(layer)\n\n\n    def find_cache(module)",
    )
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "compact": appended}, "compact") == [23]


def test_an_element_of_a_list_of_tensor_length_constructors_is_reported(tmp_path: Path) -> None:
    assert lines_reported(tmp_path, {"layers": TENSOR_LAYER, "compact": COMPACT}, "compact") == [19]


# ----- (1a) an attribute annotated with a transformers cache (axolotl cli/chat.py) --------------------

CHAT = """\
    from transformers import DynamicCache


    class Generator:
        def __init__(self):
            self._cache: DynamicCache | None = None
            self._cached_ids = []

        def _new_cache(self) -> DynamicCache:
            return DynamicCache(config=self.config)

        def generate(self, sequence):
            if self._cache is None:
                self._cache = self._new_cache()
            cache = self._cache
            self._cached_ids = sequence[: cache.get_seq_length()]
"""


def test_an_attribute_annotated_dynamic_cache_is_silent(tmp_path: Path) -> None:
    pinned = Settings(transformers=TargetRange("<5.25", "test", DYNAMIC_CACHE_COUNTS_INT))
    assert lines_reported(tmp_path, {"chat": CHAT}, "chat", pinned) == []


def test_an_attribute_annotated_dynamic_cache_may_count_a_tensor_from_5_25(tmp_path: Path) -> None:
    """The twin: `_new_cache()` builds it from the model's config, whose first layer may be linear attention."""
    assert lines_reported(tmp_path, {"chat": CHAT}, "chat") == [16]


def test_an_attribute_annotated_static_cache_is_reported(tmp_path: Path) -> None:
    static = CHAT.replace("DynamicCache", "StaticCache")
    assert lines_reported(tmp_path, {"chat": static}, "chat") == [16]


# ----- (1) a method inherited from a mixin of another module, annotated `-> OwnCache` (mblt) ---------

MIXIN = """\
    from .cache import OwnCache


    class GenerationMixin:
        def _get_cache(self, implementation, batch_size, max_cache_len) -> OwnCache:
            return build_cache(self)
"""
MODEL = """\
    from typing import Optional

    import torch
    from torch import nn

    from .cache import OwnCache
    from .mixin import GenerationMixin


    class OwnModel(nn.Module, GenerationMixin):
        def forward(self, inputs_embeds, past_key_values: Optional[OwnCache] = None, use_cache=True):
            if use_cache and past_key_values is None:
                past_key_values = self._get_cache("", 1, 0)
            past = past_key_values.get_seq_length() if past_key_values is not None else 0
            return torch.arange(past, past + inputs_embeds.shape[1], device=inputs_embeds.device)
"""


def test_a_local_from_an_inherited_method_annotated_with_an_int_length_cache_is_silent(tmp_path: Path) -> None:
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "mixin": MIXIN, "model": MODEL}
    assert lines_reported(tmp_path, modules, "model") == []


def test_a_local_from_a_method_annotated_with_a_tensor_length_cache_is_reported(tmp_path: Path) -> None:
    modules = {"layers": TENSOR_LAYER, "cache": OWN_CACHE, "mixin": MIXIN, "model": MODEL}
    assert lines_reported(tmp_path, modules, "model") == [15]


def test_a_local_from_a_method_annotated_static_cache_is_reported(tmp_path: Path) -> None:
    static = MIXIN.replace("from .cache import OwnCache", "from transformers import StaticCache").replace(
        "-> OwnCache", "-> StaticCache"
    )
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "mixin": static, "model": MODEL}
    assert lines_reported(tmp_path, modules, "model") == [15]


def test_a_same_module_subclass_override_annotated_static_cache_is_reported(tmp_path: Path) -> None:
    """`self` may be a subclass of the module whose override returns a static cache."""
    override = (
        MODEL
        + """
    class StaticModel(OwnModel):
        def _get_cache(self, implementation, batch_size, max_cache_len) -> "StaticCache":
            return StaticCache(self.config, max_cache_len)
"""
    )
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "mixin": MIXIN, "model": override}
    assert lines_reported(tmp_path, modules, "model") == [15]


def test_a_method_without_a_return_annotation_proves_nothing(tmp_path: Path) -> None:
    plain = MIXIN.replace(" -> OwnCache", "")
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "mixin": plain, "model": MODEL}
    assert lines_reported(tmp_path, modules, "model") == [15]


# ----- must stay reported: `self.layers` of a transformers cache subclass (tiny-turboquant) -----------

DYNAMIC_SUBCLASS = """\
    from transformers import DynamicCache

    from .layers import OwnLayer


    class OwnDynamicCache(DynamicCache):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.layer_class_to_replicate = None

        def update(self, keys, values, layer_idx, cache_kwargs=None):
            while len(self.layers) <= layer_idx:
                self.layers.append(OwnLayer())
            return self.layers[layer_idx].update(keys)

        def first_length(self, ids):
            return ids[:, self.layers[0].get_seq_length():]
"""


def test_the_layers_a_transformers_cache_builds_itself_are_not_known(tmp_path: Path) -> None:
    """DynamicCache's own `__init__` fills `self.layers` with layers the package's code does not show."""
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "cache": DYNAMIC_SUBCLASS}, "cache") == [17]


def test_a_list_that_escapes_into_another_object_is_reported(tmp_path: Path) -> None:
    """`registry = [cache.layers]`: whatever holds the alias may put anything in."""
    escaped = COMPACT.replace(
        "def find_cache(module)",
        "def register(cache):\n        return [cache.layers]\n\n\n    def find_cache(module)",
    )
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "compact": escaped}, "compact") == [23]


def test_a_list_only_read_by_builtins_and_loops_stays_silent(tmp_path: Path) -> None:
    """Must stay silent: `len(cache.layers)` and `for layer in cache.layers` keep no reference."""
    read = COMPACT.replace(
        "def find_cache(module)",
        "def count(cache):\n        for layer in cache.layers:\n            layer.update(None)\n"
        "        return len(cache.layers)\n\n\n    def find_cache(module)",
    )
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "compact": read}, "compact") == []


def test_an_attribute_bound_by_setattr_is_reported(tmp_path: Path) -> None:
    dynamic = BASE_LAYER.replace(
        "copied.base_layer = self.base_layer.copy()", 'setattr(copied, "base_layer", self.base_layer.copy())'
    )
    assert lines_reported(tmp_path, {"layers": COPYING_LAYER, "cache": dynamic}, "cache") == [14]


def test_an_attribute_bound_in_the_class_body_is_reported(tmp_path: Path) -> None:
    """`base_layer = make_layer()` in the class's body is what an instance reads until `__init__` runs."""
    class_level = BASE_LAYER.replace(
        "class SpeculativeCache:\n", "class SpeculativeCache:\n        base_layer = make_layer()\n\n"
    )
    assert lines_reported(tmp_path, {"layers": COPYING_LAYER, "cache": class_level}, "cache") == [16]


def test_a_parameter_named_like_the_module_function_is_not_that_function(tmp_path: Path) -> None:
    shadowed = COMPACT.replace("def attention(module, query):", "def attention(module, query, find_cache):")
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "compact": shadowed}, "compact") == [19]


MODULE_LEVEL_REBINDINGS = {
    "an assignment in an if": "if ACTIVE:\n    find_cache = lambda module: None\n",
    "a def in a match case": "match ACTIVE:\n    case {}:\n        def find_cache(module):\n            return None\n",
    "an import in a match case": "match ACTIVE:\n    case {}:\n        from .other import find_cache\n",
    "a match capture": "match make_finder():\n    case find_cache:\n        pass\n",
    "a class in a try": "try:\n    pass\nfinally:\n    class find_cache:\n        pass\n",
    "an except ... as": "try:\n    pass\nexcept ImportError as find_cache:\n    pass\n",
    "a with target": "with open_finder() as find_cache:\n    pass\n",
    "a for target in a while": "while ACTIVE:\n    for find_cache in finders:\n        break\n",
}


@pytest.mark.parametrize("rebinding", MODULE_LEVEL_REBINDINGS.values(), ids=MODULE_LEVEL_REBINDINGS.keys())
def test_a_module_function_rebound_at_module_level_proves_nothing(tmp_path: Path, rebinding: str) -> None:
    """A second binding of the function's name at module level, in any block (a `match` case's too,
    whose body the module's bindings once skipped) may be the one a call reaches."""
    rebound = COMPACT + textwrap.indent("\n\n" + rebinding, "    ")
    assert lines_reported(tmp_path, {"layers": INT_LAYER, "compact": rebound}, "compact") == [19]


def test_a_method_an_instance_attribute_may_replace_proves_nothing(tmp_path: Path) -> None:
    """`model._get_cache = ...` binds an instance attribute that `self._get_cache(...)` calls first."""
    patched = MODEL + "\n\n    def patch(model, builder):\n        model._get_cache = builder\n"
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "mixin": MIXIN, "model": patched}
    assert lines_reported(tmp_path, modules, "model") == [15]


def test_a_subclass_binding_the_method_by_assignment_proves_nothing(tmp_path: Path) -> None:
    assigned = MODEL + "\n\n    class Assigned(OwnModel):\n        _get_cache = staticmethod(make_any_cache)\n"
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "mixin": MIXIN, "model": assigned}
    assert lines_reported(tmp_path, modules, "model") == [15]


# ----- an annotation names what its own scope binds, not what the module binds --------------------

SHADOWED = {
    "a class-level alias of the annotation's name": (
        "class Runner:\n    OwnCache = StaticCache\n    cache: OwnCache\n\n    def __init__(self, cache):\n"
        "        self.cache = cache\n"
    ),
    "a parameter of the method named like the class": (
        "class Runner:\n    def __init__(self, cache, OwnCache=StaticCache):\n        self.cache: OwnCache = cache\n"
    ),
    "a class-level match capture of the annotation's name": (
        "class Runner:\n    match StaticCache:\n        case OwnCache:\n            pass\n    cache: OwnCache\n\n"
        "    def __init__(self, cache):\n        self.cache = cache\n"
    ),
    "a class-level import in a match case": (
        "class Runner:\n    match 0:\n        case _:\n            from transformers import StaticCache as OwnCache\n"
        "    cache: OwnCache\n\n    def __init__(self, cache):\n        self.cache = cache\n"
    ),
    "a string annotation naming the class-level alias": (
        'class Runner:\n    OwnCache = StaticCache\n    cache: "OwnCache"\n\n    def __init__(self, cache):\n'
        "        self.cache = cache\n"
    ),
}
SHADOWED_PARAMETERS = {
    "a method's parameter annotation, the class body rebinding its name": (
        "class Runner:\n    OwnCache = StaticCache\n\n    def generate(self, ids, cache: OwnCache):\n"
        "        return ids[:, cache.get_seq_length():]\n"
    ),
    "a method's parameter annotation, a class-level match capture of its name": (
        "class Runner:\n    match StaticCache:\n        case OwnCache:\n            pass\n\n"
        "    def generate(self, ids, cache: OwnCache):\n        return ids[:, cache.get_seq_length():]\n"
    ),
    "a nested function's parameter annotation, the function around it rebinding its name": (
        "def outer(ids):\n    OwnCache = StaticCache\n\n    def generate(cache: OwnCache):\n"
        "        return ids[:, cache.get_seq_length():]\n\n    return generate\n"
    ),
}


@pytest.mark.parametrize("runner", SHADOWED_PARAMETERS.values(), ids=SHADOWED_PARAMETERS.keys())
def test_a_parameter_annotation_whose_name_an_enclosing_scope_rebinds_is_not_trusted(
    tmp_path: Path, runner: str
) -> None:
    text = "from transformers import StaticCache\n\nfrom .cache import OwnCache\n\n\n" + runner
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "runner": text}
    assert lines_reported(tmp_path, modules, "runner") != []


DICT_STORES = {
    "the class's own __dict__": 'self.__dict__["cache"] = StaticCache(config=config, max_cache_len=8)',
    "vars() of the object": "vars(self).update(cache=StaticCache(config=config, max_cache_len=8))",
    "setattr with a computed name": 'setattr(self, "ca" + "che", StaticCache(config=config, max_cache_len=8))',
}


@pytest.mark.parametrize("store", DICT_STORES.values(), ids=DICT_STORES.keys())
def test_an_attribute_stored_without_its_name_written_out_is_unknown(tmp_path: Path, store: str) -> None:
    """`self.cache = OwnCache()` alone types the attribute; a store whose attribute name is not
    written out may bind it to anything (a second reader's program, 2026-12-05)."""
    text = (
        "from transformers import StaticCache\n\nfrom .cache import OwnCache\n\n\nclass Runner:\n"
        f"    def __init__(self, config):\n        self.cache = OwnCache()\n        {store}\n"
    ) + textwrap.indent(textwrap.dedent(SHADOWED_USE), "    ")
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "runner": text}
    assert lines_reported(tmp_path, modules, "runner") != []
    alone = text.replace(f"        {store}\n", "")
    (tmp_path / "alone").mkdir()
    assert lines_reported(tmp_path / "alone", modules | {"runner": alone}, "runner") == []


SHADOWED_USE = """

    def generate(self, ids):
        return ids[:, self.cache.get_seq_length():]
"""


@pytest.mark.parametrize("runner", SHADOWED.values(), ids=SHADOWED.keys())
def test_an_annotation_whose_name_its_own_scope_rebinds_is_not_trusted(tmp_path: Path, runner: str) -> None:
    """`OwnCache` in the annotation is the `StaticCache` the class body or the method binds, not the
    module's int-length class (a second reader's program, 2026-12-05)."""
    text = "from transformers import StaticCache\n\nfrom .cache import OwnCache\n\n\n" + runner
    text += textwrap.indent(textwrap.dedent(SHADOWED_USE), "    ")
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "runner": text}
    assert lines_reported(tmp_path, modules, "runner") != []


def test_the_same_annotations_without_the_rebinding_are_trusted(tmp_path: Path) -> None:
    text = "from .cache import OwnCache\n\n\nclass Runner:\n    cache: OwnCache\n\n    def __init__(self, cache):\n"
    text += "        self.cache = cache\n" + textwrap.indent(textwrap.dedent(SHADOWED_USE), "    ")
    modules = {"layers": INT_LAYER, "cache": OWN_CACHE, "runner": text}
    assert lines_reported(tmp_path, modules, "runner") == []

"""A package's own caches, known across the whole package (`lint_rules/engine/receivers.py`,
`classes.py`): a receiver annotated through the name of the module that defines its class
(`cache_utils.ZooCache`), an attribute every binding of which holds a class of the package
(`self._parent._cache`), `hasattr` on an attribute only the package's int-length classes have, and
a base whose every subclass in the package returns an int. Each silent shape has its must-report
twin: the same shape with a tensor-length cache, or one binding that breaks the fact."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.settings import Settings

CACHE_UTILS = """\
    from transformers import StaticCache


    class ZooCache:
        def __init__(self):
            self._seen = 0

        def update(self, k, v, layer_idx):
            if layer_idx == 0:
                self._seen += k.shape[-2]
            return k, v

        def get_seq_length(self, layer_idx=0):
            return self._seen


    class TensorCache(StaticCache):
        pass
"""


def write_package(root: Path, modules: dict[str, str]) -> Path:
    """`root/zoo` with `zoo/utils/cache_utils.py` and the given modules (`models/llama` and the like)."""
    package = root / "zoo"
    for folder in (package, package / "utils", package / "models"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    (package / "utils" / "cache_utils.py").write_text(textwrap.dedent(CACHE_UTILS))
    for name, text in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    return package


def codes(package: Path, module: str) -> list[str]:
    checked = check_path(str(package / f"{module}.py"), Settings())
    assert not checked.error, checked.error
    return [finding.code for finding in checked.findings]


# ----- 1. an annotation through the module's name -------------------------------------------------

THROUGH_MODULE_NAME = {
    "relative-module": ("from ..utils import cache_utils", "cache_utils.{cls}"),
    "module-alias": ("import zoo.utils.cache_utils as cu", "cu.{cls}"),
    "dotted-module": ("import zoo.utils.cache_utils", "zoo.utils.cache_utils.{cls}"),
    "package-re-export": ("from zoo import utils", "utils.{cls}"),
    "string-optional": ("from ..utils import cache_utils", '"Optional[cache_utils.{cls}]"'),
}
ANNOTATED = """\
    from typing import Optional
    {imports}


    def trim(input_ids, cache: {annotation}):
        n = cache.get_seq_length()
        return input_ids[:, n:]


    def narrowed(c, input_ids):
        if isinstance(c, {annotation_bare}):
            return input_ids[:, c.get_seq_length():]


    def built(input_ids):
        cache = {annotation_bare}()
        return input_ids[:, cache.get_seq_length():]
"""


def annotated_module(form: str, cls: str) -> str:
    imports, annotation = THROUGH_MODULE_NAME[form]
    bare = annotation.format(cls=cls).strip('"').removeprefix("Optional[").removesuffix("]")
    return ANNOTATED.format(imports=imports, annotation=annotation.format(cls=cls), annotation_bare=bare)


@pytest.mark.parametrize("form", sorted(THROUGH_MODULE_NAME))
def test_a_class_named_through_its_module_is_known(form: str, tmp_path: Path) -> None:
    """Silent: ZooCache counts an int, whether annotated, tested with isinstance or constructed
    through the name of its module."""
    modules = {"models/llama": annotated_module(form, "ZooCache")}
    if form == "package-re-export":
        modules["utils/__init__"] = "from .cache_utils import ZooCache, TensorCache\n"
    assert codes(write_package(tmp_path, modules), "models/llama") == []


@pytest.mark.parametrize("form", sorted(THROUGH_MODULE_NAME))
def test_a_tensor_cache_named_through_its_module_is_reported(form: str, tmp_path: Path) -> None:
    """Must report: the same shapes with a subclass of transformers' StaticCache."""
    modules = {"models/llama": annotated_module(form, "TensorCache")}
    if form == "package-re-export":
        modules["utils/__init__"] = "from .cache_utils import ZooCache, TensorCache\n"
    assert codes(write_package(tmp_path, modules), "models/llama") == ["SLG002"] * 3


# ----- 2. attributes annotated and bound with a class of the package ------------------------------

OWNER = """\
    from typing import Any, Optional

    from ..utils.cache_utils import TensorCache, ZooCache


    class Owner:
        def __init__(self):
            self._cache = {cache}()


    class Child:
        _parent: Optional[Owner] = None

        def _bind(self, parent: "Owner"):
            self._parent = parent
    {extra}
        def step(self, input_ids):
            n = self._parent._cache.get_seq_length()
            return input_ids[:, n:]


    class Host:
        def __init__(self):
            self.cache = {cache}()

        def step(self, input_ids):
            return input_ids[:, self.cache.get_seq_length():]
"""


def owner_module(cache: str = "ZooCache", extra: str = "") -> str:
    return textwrap.dedent(OWNER).format(cache=cache, extra=textwrap.indent(textwrap.dedent(extra), " " * 4))


def test_an_attribute_bound_only_to_a_package_class_is_known(tmp_path: Path) -> None:
    """Silent: `_parent` is None or an Owner (an annotated parameter), whose `_cache` is built only as
    a ZooCache; and `self.cache`, built only as a ZooCache."""
    assert codes(write_package(tmp_path, {"models/llama": owner_module()}), "models/llama") == []


def test_an_attribute_bound_to_a_tensor_cache_is_reported(tmp_path: Path) -> None:
    """Must report: the same classes building a subclass of StaticCache."""
    package = write_package(tmp_path, {"models/llama": owner_module("TensorCache")})
    assert codes(package, "models/llama") == ["SLG002", "SLG002"]


BREAKING_BINDINGS = {
    "unannotated-parameter": "def rebind(self, other):\n    self._parent = other\n",
    "any-parameter": "def rebind(self, other: Any):\n    self._parent = other\n",
    "a-call": "def rebind(self):\n    self._parent = make_parent()\n",
    "tuple-target": "def rebind(self, other: Owner):\n    self._parent, self.n = other, 1\n",
    "setattr": "def rebind(self, other):\n    setattr(self, '_parent', other)\n",
    "setattr-any-name": "def rebind(self, name, other):\n    setattr(self, name, other)\n",
    "for-target": "def rebind(self, others):\n    for self._parent in others:\n        pass\n",
    "with-target": "def rebind(self, opener):\n    with opener() as self._parent:\n        pass\n",
    "augmented": "def rebind(self, other: Owner):\n    self._parent += other\n",
    "parameter-rebound": "def rebind(self, other: Owner):\n    other = make_parent()\n    self._parent = other\n",
    "its-cache-rebound": "def rebind(self):\n    self._parent._cache = TensorCache()\n",
}


@pytest.mark.parametrize("name", sorted(BREAKING_BINDINGS))
def test_one_other_binding_makes_the_attribute_unknown(name: str, tmp_path: Path) -> None:
    """Must report: one more binding of `_parent` in Child (or of its `_cache`) that is not an Owner."""
    module = owner_module(extra=BREAKING_BINDINGS[name])
    assert codes(write_package(tmp_path, {"models/llama": module}), "models/llama") == ["SLG002"]


SUBCLASSES = {
    "child-subclass": "class GrandChild(Child):\n    def __init__(self, parent):\n        self._parent = parent\n",
    "owner-subclass": "class BadOwner(Owner):\n    def __init__(self):\n        self._cache = TensorCache()\n",
}


@pytest.mark.parametrize("name", sorted(SUBCLASSES))
def test_a_subclass_that_binds_the_attribute_otherwise_is_seen(name: str, tmp_path: Path) -> None:
    """Must report: `self` in Child.step may be a GrandChild, whose `_parent` is anything; or an
    Owner may be a BadOwner, whose `_cache` is a tensor cache."""
    module = owner_module() + "\n\n" + SUBCLASSES[name]
    assert codes(write_package(tmp_path, {"models/llama": module}), "models/llama") == ["SLG002"]


def test_the_owner_of_another_module_is_read(tmp_path: Path) -> None:
    """Silent: Owner comes from another module of the package, named through that module."""
    owner = owner_module().split("class Child")[0]
    child = """\
        from typing import Optional

        from . import owner


        class Child:
            def __init__(self, parent: Optional[owner.Owner] = None):
                self._parent = parent

            def step(self, input_ids):
                return input_ids[:, self._parent._cache.get_seq_length():]
    """
    package = write_package(tmp_path, {"models/owner": owner, "models/child": child})
    assert codes(package, "models/child") == []
    broken = write_package(
        tmp_path / "b", {"models/owner": owner.replace("= ZooCache()", "= TensorCache()"), "models/child": child}
    )
    assert codes(broken, "models/child") == ["SLG002"]

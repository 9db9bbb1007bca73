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
from lint_rules.engine.facts import attribute_owners
from lint_rules.settings import Settings
from tests import package_files

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
    return package_files.write_package(root, {"utils.cache_utils": CACHE_UTILS, **modules}, "zoo", folders=["models"])


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
        {parent_default}

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


ANNOTATED_PARENT = "_parent: Optional[Owner] = None"
UNANNOTATED_PARENT = "_parent = None"


def owner_module(cache: str = "ZooCache", extra: str = "", parent_default: str = ANNOTATED_PARENT) -> str:
    """`Child._parent` annotated at class level (the annotation is the class's contract, trusted like a
    parameter's), or not (then every binding must show an `Owner`)."""
    return textwrap.dedent(OWNER).format(
        cache=cache, extra=textwrap.indent(textwrap.dedent(extra), " " * 4), parent_default=parent_default
    )


@pytest.mark.parametrize("parent_default", [ANNOTATED_PARENT, UNANNOTATED_PARENT])
def test_an_attribute_bound_only_to_a_package_class_is_known(parent_default: str, tmp_path: Path) -> None:
    """Silent: `_parent` is annotated as an Owner, or unannotated and bound only to None or an Owner
    (an annotated parameter), whose `_cache` is built only as a ZooCache; and `self.cache`, built
    only as a ZooCache."""
    module = owner_module(parent_default=parent_default)
    assert codes(write_package(tmp_path, {"models/llama": module}), "models/llama") == []


def test_an_annotated_attribute_is_trusted_like_an_annotated_parameter(tmp_path: Path) -> None:
    """Silent: a binding the code does not show (`make_parent()`) leaves the class-level annotation in
    charge, as a caller's argument does for an annotated parameter; its twin below shows a class."""
    module = owner_module(extra=BREAKING_BINDINGS["a-call"])
    assert codes(write_package(tmp_path, {"models/llama": module}), "models/llama") == []


def test_an_annotated_attribute_bound_to_a_shown_tensor_cache_is_reported(tmp_path: Path) -> None:
    """Must report: a binding the code shows to be another class adds that class to the annotation's."""
    module = owner_module(extra="def rebind(self):\n    self._parent = BadOwner()\n") + (
        "\n\nclass BadOwner:\n    def __init__(self):\n        self._cache = TensorCache()\n"
    )
    assert codes(write_package(tmp_path, {"models/llama": module}), "models/llama") == ["SLG002"]


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
    """Must report: one more binding of an unannotated `_parent` in Child (or of its `_cache`) that the
    code does not show to be an Owner."""
    module = owner_module(extra=BREAKING_BINDINGS[name], parent_default=UNANNOTATED_PARENT)
    assert codes(write_package(tmp_path, {"models/llama": module}), "models/llama") == ["SLG002"]


SUBCLASSES = {
    "child-subclass": "class GrandChild(Child):\n    def __init__(self, parent):\n        self._parent = parent\n",
    "owner-subclass": "class BadOwner(Owner):\n    def __init__(self):\n        self._cache = TensorCache()\n",
}


@pytest.mark.parametrize("name", sorted(SUBCLASSES))
def test_a_subclass_that_binds_the_attribute_otherwise_is_seen(name: str, tmp_path: Path) -> None:
    """Must report: `self` in Child.step may be a GrandChild, whose unannotated `_parent` is anything;
    or an Owner may be a BadOwner, whose `_cache` is a tensor cache."""
    module = owner_module(parent_default=UNANNOTATED_PARENT) + "\n\n" + SUBCLASSES[name]
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


# ----- 3. hasattr on an attribute only the package's int-length classes have ----------------------

LAYERS = """\
    from transformers.cache_utils import DynamicLayer, StaticLayer


    class QuantLayer(DynamicLayer):
        quant_bits = 4

        def get_seq_length(self):
            return self.keys.shape[-2]


    class PackedLayer(DynamicLayer):
        def __init__(self):
            super().__init__()
            self.packing = 2
"""
HASATTR = """\
    def trim(c, x):
        if {probe}:
            return x[: c.get_seq_length()]


    def flagged(c, x):
        quantized = {probe}
        if quantized:
            return x[: c.get_seq_length()]
"""
PROBES = ('hasattr(c, "{attribute}")', 'getattr(c, "{attribute}", False)', 'getattr(c, "{attribute}", None)')
"""The tests that, taken as true, show `c` has the attribute (a `getattr` default that is false)."""


def probing(attribute: str, probe: str = PROBES[0]) -> str:
    return HASATTR.format(probe=probe.format(attribute=attribute))


@pytest.mark.parametrize("probe", PROBES)
@pytest.mark.parametrize("attribute", ["quant_bits", "packing"])
def test_hasattr_on_an_attribute_only_int_length_classes_have_narrows(
    attribute: str, probe: str, tmp_path: Path
) -> None:
    """Silent: only QuantLayer (a class attribute) and PackedLayer (`self.packing = 2`) have them, and
    both count an int."""
    package = write_package(tmp_path, {"utils/layers": LAYERS, "models/m": probing(attribute, probe)})
    assert codes(package, "models/m") == []


@pytest.mark.parametrize("probe", ['getattr(c, "quant_bits", True)', 'getattr(c, "quant_bits", 4)'])
def test_getattr_with_a_true_default_proves_nothing(probe: str, tmp_path: Path) -> None:
    """Must report: a true value may be the default, on an object without the attribute."""
    package = write_package(tmp_path, {"utils/layers": LAYERS, "models/m": probing("quant_bits", probe)})
    assert codes(package, "models/m") == ["SLG002", "SLG002"]


HASATTR_BREAKERS = {
    "a-tensor-class-has-it": "class Tensorish(StaticLayer):\n    quant_bits = 8\n",
    "a-subclass-returns-a-tensor": "class Bad(QuantLayer):\n    def get_seq_length(self):\n        return self.t\n",
    "bound-on-another-object": "def mark(obj):\n    obj.quant_bits = 4\n",
    "setattr-on-another-object": "def mark(obj):\n    setattr(obj, 'quant_bits', 4)\n",
    "a-class-setting-any-attribute": (
        "class Any_:\n    def __init__(self, **kw):  # quant_bits\n        for k, v in kw.items():\n"
        "            setattr(self, k, v)\n\n    def get_seq_length(self):\n        return self.t\n"
    ),
}


@pytest.mark.parametrize("probe", PROBES)
@pytest.mark.parametrize("name", sorted(HASATTR_BREAKERS))
def test_hasattr_proves_nothing_when_another_object_may_have_the_attribute(
    name: str, probe: str, tmp_path: Path
) -> None:
    """Must report: a tensor-length class (or a subclass, or any object) of the package may have it."""
    layers = LAYERS + "\n\n" + textwrap.indent(HASATTR_BREAKERS[name], "    ")
    package = write_package(tmp_path, {"utils/layers": layers, "models/m": probing("quant_bits", probe)})
    assert codes(package, "models/m") == ["SLG002", "SLG002"]


def test_a_class_added_between_two_analyses_is_seen(tmp_path: Path) -> None:
    """Must report once a tensor-length class with the attribute is added: the package is listed
    again for each module analyzed (an editor's process runs one analysis after another)."""
    package = write_package(tmp_path, {"utils/layers": LAYERS, "models/m": probing("quant_bits")})
    assert codes(package, "models/m") == []
    tensorish = (
        "from transformers.cache_utils import StaticLayer\n\n\nclass Tensorish(StaticLayer):\n    quant_bits = 8\n"
    )
    (package / "utils" / "tensorish.py").write_text(tensorish)
    assert codes(package, "models/m") == ["SLG002", "SLG002"]


@pytest.mark.parametrize("attribute", ["layers", "key_cache", "is_compileable", "cumulative_length"])
def test_hasattr_on_a_transformers_cache_attribute_proves_nothing(attribute: str, tmp_path: Path) -> None:
    """Must report: transformers' caches have these (in 5.x or 4.x), though only QuantLayer of the
    package does."""
    layers = LAYERS.replace("quant_bits = 4", f"{attribute} = 4")
    package = write_package(tmp_path, {"utils/layers": layers, "models/m": probing(attribute)})
    assert codes(package, "models/m") == ["SLG002", "SLG002"]


def test_hasattr_on_an_attribute_no_class_of_the_package_has_proves_nothing(tmp_path: Path) -> None:
    """Must report: what has it is not in the package."""
    package = write_package(tmp_path, {"utils/layers": LAYERS, "models/m": probing("elsewhere")})
    assert codes(package, "models/m") == ["SLG002", "SLG002"]


# ----- 4. a private base whose every subclass in the package counts an int ------------------------

BASE = """\
    from abc import ABC, abstractmethod


    class BaseCache(ABC):
        {abstract}
        def get_seq_length(self, layer_idx=0):
            {body}


    class CountingCache(BaseCache):
        def __init__(self):
            self.n = 0

        def get_seq_length(self, layer_idx=0):
            return self.n


    class Intermediate(BaseCache):
        pass
"""
SUBCLASSES_ELSEWHERE = """\
    from ._base import Intermediate as Renamed


    class ZeroCache(Renamed):
        def get_seq_length(self, layer_idx=0):
            return 0
"""
USER = """\
    from ..utils.{module} import BaseCache


    def trim(input_ids, cache: BaseCache):
        n = cache.get_seq_length()
        return input_ids[:, n:]
"""
ABSTRACT_FORMS = {
    "abstractmethod": ("@abstractmethod", "..."),
    "raise": ("", "raise NotImplementedError"),
    "raise-call": ("", 'raise NotImplementedError("subclasses")'),
    "ellipsis": ("", "..."),
    "pass": ("", "pass"),
}


def base_package(tmp_path: Path, form: str, module: str = "_base", extra: str = "") -> Path:
    abstract, body = ABSTRACT_FORMS[form]
    base = textwrap.dedent(BASE).format(abstract=abstract, body=body)
    elsewhere = SUBCLASSES_ELSEWHERE.replace("._base", f".{module}") + textwrap.indent(extra, "    ")
    return write_package(
        tmp_path, {f"utils/{module}": base, "utils/more": elsewhere, "models/m": USER.format(module=module)}
    )


@pytest.mark.parametrize("form", sorted(ABSTRACT_FORMS))
def test_a_private_abstract_base_whose_every_subclass_counts_an_int_is_int(form: str, tmp_path: Path) -> None:
    """Silent: the base lives in a private module (`_base`), so only the package subclasses it, and
    every subclass (one through an intermediate class, renamed on import, in another module) counts an int."""
    assert codes(base_package(tmp_path, form), "models/m") == []


@pytest.mark.parametrize(
    "extra",
    [
        "\n\nclass TensorCache(ZeroCache):\n    def get_seq_length(self, layer_idx=0):\n        return self.t\n",
        "\n\nAlias = Renamed\n",
        "\n\nclass Mixed(Renamed, Other):\n    pass\n",
        "\n\nclass Dynamic(*[Renamed]):\n    def get_seq_length(self, layer_idx=0):\n        return self.t\n",
    ],
    ids=["a-subclass-returns-a-tensor", "an-alias-of-the-family", "a-subclass-inheriting-elsewhere", "a-starred-base"],
)
def test_one_subclass_that_may_return_a_tensor_makes_the_base_unknown(extra: str, tmp_path: Path) -> None:
    """Must report: a subclass in the package returns a tensor, or may (its method from another base,
    subclasses of an alias, which are not looked for, or a base that cannot be named)."""
    assert codes(base_package(tmp_path, "raise", extra=extra), "models/m") == ["SLG002"]


def test_a_public_base_stays_unknown(tmp_path: Path) -> None:
    """Must report: a base in a public module is the package's extension point; a user's subclass
    outside the package may return a tensor (README Limits)."""
    assert codes(base_package(tmp_path, "raise", module="base"), "models/m") == ["SLG002"]


def test_a_private_base_no_subclass_of_the_package_implements_stays_unknown(tmp_path: Path) -> None:
    """Must report: every object that runs the base's method comes from outside the package."""
    base = "class BaseCache:\n    def get_seq_length(self):\n        raise NotImplementedError\n"
    package = write_package(tmp_path, {"utils/_base": base, "models/m": USER.format(module="_base")})
    assert codes(package, "models/m") == ["SLG002"]


@pytest.mark.parametrize("other_portion", ["", "class Tensorish(StaticLayer):\n    quant_bits = 8\n"])
def test_a_namespace_package_is_scanned_whole(other_portion: str, tmp_path: Path) -> None:
    """`ns/` without an `__init__.py` holds `layers/` and `models/`: hasattr is decided over both
    portions (silent), and a tensor-length class with the attribute in another portion must report."""
    namespace = tmp_path / "ns"
    other = "from transformers.cache_utils import StaticLayer\n\n\n" + other_portion
    for portion, text in {"layers": LAYERS, "models": probing("quant_bits"), "other": other}.items():
        (namespace / portion).mkdir(parents=True)
        (namespace / portion / "__init__.py").write_text("")
        (namespace / portion / "code.py").write_text(textwrap.dedent(text))
    checked = check_path(str(namespace / "models" / "code.py"), Settings())
    assert [finding.code for finding in checked.findings] == (["SLG002", "SLG002"] if other_portion else [])


def test_the_first_file_that_shows_another_owner_ends_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Must report, having parsed none of the int-length layers: a name as common as `x` is in
    many files of a large package (networkx's took 11 s with `--source-methods get`, every file that
    names it parsed and its classes judged), and one tensor-length class that has it already proves
    nothing."""
    modules = {f"utils/layers_{index:02}": LAYERS for index in range(30)}
    modules["utils/a_tensorish"] = (
        "from transformers.cache_utils import StaticLayer\n\n\nclass Tensorish(StaticLayer):\n    quant_bits = 8\n"
    )
    package = write_package(tmp_path, {**modules, "models/m": probing("quant_bits")})
    parsed: list[Path] = []
    owners_in = attribute_owners.owners_in
    monkeypatch.setattr(attribute_owners, "owners_in", lambda file, name: parsed.append(file) or owners_in(file, name))
    assert codes(package, "models/m") == ["SLG002", "SLG002"]
    assert parsed and not [file for file in parsed if file.name.startswith("layers_")]

"""A class name a module binds in more than one way (`facts/name_bindings.py`, `final_bindings`):
`try: from transformers import StaticCache as KV` / `except ImportError: from .own import IntCache as
KV` holds the StaticCache wherever transformers imports, so the name's length is an int only when
every binding that may hold counts an int. A later binding in the same block replaces an earlier
one; `KV = None` binds no class. The runs are pinned below 5.25, where an annotated `DynamicCache`
counts an int whatever its config.

Each module below binds `KV` and then uses it three ways: as a receiver's annotation, as a
constructor, and in an `isinstance` test. A silent shape has its must-report twin beside it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.settings import Settings
from lint_rules.target_range import range_of
from tests.package_files import write_package

PINNED = Settings(transformers=range_of([">=5.5,<5.25"], "this test"))

OWN = """\
    from transformers.cache_utils import Cache


    class IntCache(Cache):
        def __init__(self):
            self.seen = 0

        def get_seq_length(self, layer_idx=0):
            return self.seen
"""

EXPORTS = """\
    from transformers import StaticCache as Chosen, StaticCache as KV
"""
STAR_MODULES = {
    "relay": "from .exports import *\n",
    "grown_all": """\
        from transformers import StaticCache as KV

        __all__ = ["other"]
        __all__ += ["KV"]
        other = 1
        """,
    "all_from_getattr": """\
        __all__ = ["KV"]


        def __getattr__(name):
            from transformers import StaticCache

            return StaticCache
        """,
    "global_binding": """\
        def use_static():
            global KV
            from transformers import StaticCache as KV
        """,
    "all_deleted_by_a_handler": """\
        from transformers import StaticCache as KV

        __all__ = ["other"]
        other = 1
        try:
            raise ValueError
        except ValueError as __all__:
            pass
        """,
    "all_captured_by_a_match": """\
        from transformers import StaticCache as KV

        __all__ = ["other"]
        other = 1
        match ["other", "KV"]:
            case __all__:
                pass
        """,
    "all_imported": """\
        from transformers import StaticCache as KV

        __all__ = ["other"]
        other = 1
        from .exports import Chosen as __all__
        """,
    "all_grown_through_another_name": """\
        from transformers import StaticCache as KV

        __all__ = exported = ["other"]
        other = 1
        exported.append("KV")
        """,
    "all_from_module_getattr": """\
        def __getattr__(name):
            if name == "__all__":
                return ["KV"]
            from transformers import StaticCache

            return StaticCache
        """,
    "walrus_in_bases": """\
        from transformers import StaticCache as _Static


        class Sub((KV := _Static)):
            pass
        """,
    "walrus_in_a_return_annotation": """\
        from transformers import StaticCache as _Static


        def g() -> (KV := _Static):
            pass
        """,
}
"""Modules a star import may take `KV` from, each in a way a reading of its names could miss (an
`__all__` changed or answered otherwise, a name bound outside a plain statement): every star import
may rebind every name, so each is reported."""

USES = """\


    def annotated(cache: KV, input_ids):
        n = cache.get_seq_length()
        return input_ids[:, n:]


    def constructed(input_ids):
        cache = KV()
        n = cache.get_seq_length()
        return input_ids[:, n:]


    def narrowed(cache, input_ids):
        if isinstance(cache, KV):
            n = cache.get_seq_length()
            return input_ids[:, n:]
        return input_ids
"""

SILENT = {
    "both-arms-int": (
        """\
        try:
            from transformers import DynamicCache as KV
        except ImportError:
            from .own import IntCache as KV
        """,
        "each arm counts an int",
    ),
    "same-class-two-places": (
        """\
        try:
            from transformers import DynamicCache as KV
        except ImportError:
            from transformers.cache_utils import DynamicCache as KV
        """,
        "one class, imported from where the release has it",
    ),
    "later-import-replaces": (
        """\
        from transformers import StaticCache as KV
        from .own import IntCache as KV
        """,
        "the second import replaces the first before any function runs",
    ),
    "fallback-to-none": (
        """\
        try:
            from transformers import DynamicCache as KV
        except ImportError:
            KV = None
        """,
        "None is no class: where KV is one, it is DynamicCache",
    ),
    "type-checking-arm": (
        """\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .own import IntCache as KV
        else:
            KV = "IntCache"
        """,
        "a string is no class: the checked arm's import is the only one",
    ),
    "fallback-to-object": (
        """\
        try:
            from transformers import DynamicCache as KV
        except ImportError:
            KV = object
        """,
        "a placeholder (`object`, `Any`) is no class",
    ),
    "alias-of-an-int-class": (
        """\
        from transformers import DynamicCache
        KV = DynamicCache
        """,
        "an alias holds the class its name held",
    ),
    "alias-through-a-module-alias": (
        """\
        from transformers import cache_utils as cu
        KV = cu.DynamicCache
        """,
        "the class of the module the alias names",
    ),
    "fallback-to-any": (
        """\
        from typing import Any
        try:
            from transformers import DynamicCache as KV
        except ImportError:
            KV = Any
        """,
        "`Any` is a placeholder, not a class an alias names",
    ),
    "local-name-in-a-function": (
        """\
        from transformers import StaticCache
        from .own import IntCache as KV


        def setup():
            KV = StaticCache
            return KV
        """,
        "without `global`, the function binds a local of the same name",
    ),
    "star-import-before-the-import": (
        """\
        from .exports import *
        from .own import IntCache as KV
        """,
        "the import after the star import binds the name last",
    ),
    "annotation-without-a-value": (
        """\
        import os
        from .own import IntCache as KV
        if os.environ.get("X"):
            KV: type
        """,
        "an annotation alone binds nothing",
    ),
}

REPORTED = {
    "alias-of-a-static-cache": """\
        from transformers import StaticCache
        KV = StaticCache
        """,
    "alias-written-out": """\
        import transformers
        KV = transformers.StaticCache
        """,
    "alias-rebound-in-a-branch": """\
        import os
        from transformers import DynamicCache, StaticCache
        KV = DynamicCache
        if os.environ.get("STATIC"):
            KV = StaticCache
        """,
    "alias-after-a-rebinding-in-a-loop": """\
        from transformers import DynamicCache as Chosen
        for _ in range(1):
            from transformers import StaticCache as Chosen
            KV = Chosen
        """,
    "alias-after-a-rebinding-in-a-with-body": """\
        import contextlib
        from transformers import DynamicCache as Chosen
        with contextlib.suppress(ImportError):
            from transformers import StaticCache as Chosen
            KV = Chosen
        """,
    "alias-read-on-a-second-pass": """\
        from transformers import DynamicCache as Chosen, StaticCache
        for _ in range(2):
            KV = Chosen
            Chosen = StaticCache
        """,
    "alias-in-a-try-body-cut-short": """\
        from transformers import DynamicCache, DynamicCache as Chosen
        try:
            from transformers import StaticCache as Chosen
            KV = Chosen
            import optional_kernel
            KV = DynamicCache
        except ImportError:
            pass
        """,
    "import-rebound-through-global": """\
        from transformers import StaticCache
        from .own import IntCache as KV


        def setup():
            global KV
            KV = StaticCache
        """,
    "import-rebound-through-a-one-line-global": """\
        from transformers import StaticCache
        from .own import IntCache as KV


        def setup(): global KV; KV = StaticCache
        """,
    "alias-rebound-through-global": """\
        from transformers import DynamicCache, StaticCache
        KV = DynamicCache


        def use_static():
            global KV
            KV = StaticCache
        """,
    "import-rebound-by-a-star-import": """\
        from .own import IntCache as KV
        from .exports import *
        """,
    "alias-rebound-by-a-star-import-in-a-branch": """\
        import os
        from .own import IntCache
        KV = IntCache
        if os.environ.get("STATIC"):
            from .exports import *
        """,
    "alias-of-an-import-a-star-import-may-rebind": """\
        from .own import IntCache as Chosen
        from .exports import *
        KV = Chosen
        """,
    **{
        f"star-import-of-{module}": f"""\
        from .own import IntCache as KV
        from .{module} import *
        """
        for module in STAR_MODULES
    },
    "walrus-in-an-assigned-value": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        _x = (KV := StaticCache)
        """,
    "walrus-in-an-if-test": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        if (KV := StaticCache):
            pass
        """,
    "walrus-in-a-default": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        def _f(a=(KV := StaticCache)):
            return a
        """,
    "walrus-in-a-class-base": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        class _C((KV := StaticCache)):
            pass
        """,
    "walrus-in-a-decorator": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        def _same(f):
            return f


        @(_same if (KV := StaticCache) else _same)
        def _g():
            pass
        """,
    "walrus-in-an-assert": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        assert (KV := StaticCache)
        """,
    "match-capture": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        match StaticCache:
            case KV:
                pass
        """,
    "match-capture-as": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        match StaticCache:
            case type() as KV:
                pass
        """,
    "deleted-for-a-builtin": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        import builtins

        builtins.KV = StaticCache
        del KV
        """,
    "placeholder-spelling-rebound": """\
        from transformers import StaticCache as Any
        from .own import IntCache as KV

        KV = Any
        """,
    "global-after-a-form-feed": """\
        from transformers import StaticCache
        from .own import IntCache as KV

        def setup():
            global        KV
            KV = StaticCache
        """,
    "star-import-from-outside-the-package": """\
        from .own import IntCache as KV
        from somewhere_else import *
        """,
    "alias-of-a-fallback": """\
        try:
            from transformers import StaticCache as Chosen
        except ImportError:
            from .own import IntCache as Chosen
        KV = Chosen
        """,
    "static-first-int-fallback": """\
        try:
            from transformers import StaticCache as KV
        except ImportError:
            from .own import IntCache as KV
        """,
    "int-first-static-fallback": """\
        try:
            from .own import IntCache as KV
        except ImportError:
            from transformers import StaticCache as KV
        """,
    "earlier-import-replaced": """\
        from .own import IntCache as KV
        from transformers import StaticCache as KV
        """,
    "fallback-to-none-static": """\
        try:
            from transformers import StaticCache as KV
        except ImportError:
            KV = None
        """,
    "if-else-arms": """\
        import os
        if os.environ.get("STATIC"):
            from transformers import StaticCache as KV
        else:
            from .own import IntCache as KV
        """,
    "local-class-fallback": """\
        try:
            from transformers import StaticCache as KV
        except ImportError:
            class KV:
                def get_seq_length(self, layer_idx=0):
                    return 0
        """,
    "suppressed-import": """\
        import contextlib
        from .own import IntCache as KV
        with contextlib.suppress(ImportError):
            from transformers import StaticCache as KV
        """,
    "static-first-dynamic-fallback": """\
        try:
            from transformers import StaticCache as KV
        except ImportError:
            from transformers import DynamicCache as KV
        """,
    "try-cut-between-two-imports": """\
        try:
            from transformers import StaticCache as KV
            from .own import IntCache as KV
        except ImportError:
            pass
        """,
    "class-then-import": """\
        class KV:
            def get_seq_length(self, layer_idx=0):
                return 0
        from transformers import StaticCache as KV
        """,
    "import-then-assignment": """\
        from transformers import StaticCache
        from .own import IntCache as KV
        KV = StaticCache
        """,
    "checked-arm-int-runtime-static": """\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .own import IntCache as KV
        else:
            from transformers import StaticCache as KV
        """,
    "not-type-checking": """\
        from typing import TYPE_CHECKING
        if not TYPE_CHECKING:
            from transformers import StaticCache as KV
        else:
            from .own import IntCache as KV
        """,
    "match-arm": """\
        import sys
        from .own import IntCache as KV
        match sys.argv:
            case ["static"]:
                from transformers import StaticCache as KV
        """,
    "rebound-by-assignment": """\
        import os
        from transformers import StaticCache
        from .own import IntCache as KV
        if os.environ.get("STATIC"):
            KV = StaticCache
        """,
}


MODULE_ALIASES = {
    "static-first-own-fallback": (
        """\
        try:
            from transformers import cache_utils as cu
        except ImportError:
            from . import own as cu
        """,
        "StaticCache",
        True,
    ),
    "own-first-static-fallback": (
        """\
        try:
            import pkg.own as cu
        except ImportError:
            import transformers.cache_utils as cu
        """,
        "StaticCache",
        True,
    ),
    "both-int": (
        """\
        try:
            from transformers import cache_utils as cu
        except ImportError:
            from . import own as cu
        """,
        "DynamicCache",
        False,
    ),
}
"""`cu.<class>` where `cu` may be either module: `own` defines both names, with an int length."""

OWN_UNDER_TRANSFORMERS_NAMES = """\
    from .own_classes import IntCache as StaticCache, IntCache as DynamicCache
"""


@pytest.mark.parametrize("binding, cls, reported", MODULE_ALIASES.values(), ids=MODULE_ALIASES)
def test_a_class_through_a_module_alias_bound_in_more_than_one_way(
    tmp_path: Path, binding: str, cls: str, reported: bool
) -> None:
    uses = textwrap.dedent(USES).replace("KV", f"cu.{cls}")
    modules = {"own_classes": OWN, "own": OWN_UNDER_TRANSFORMERS_NAMES, "aliased": textwrap.dedent(binding) + uses}
    package = write_package(tmp_path, modules)
    assert len(reported_lines(package, "aliased")) == (3 if reported else 0)


def write_binding_package(root: Path, binding: str) -> Path:
    """`uses.py` binds `KV` and uses it; `elsewhere.py` imports `KV` from there and uses it; `exports.py`
    binds `KV` and `Chosen` to `StaticCache`, for a star import, beside `STAR_MODULES`."""
    uses = textwrap.dedent(USES)
    modules = {"own": OWN, "uses": textwrap.dedent(binding) + uses, "elsewhere": "from .uses import KV\n" + uses}
    return write_package(root, {**modules, "exports": EXPORTS, **STAR_MODULES})


def reported_lines(package: Path, module: str) -> list[int]:
    checked = check_path(str(package / f"{module}.py"), PINNED)
    assert not checked.error, checked.error
    return sorted(finding.line for finding in checked.findings)


@pytest.mark.parametrize("binding, reason", SILENT.values(), ids=SILENT)
def test_a_name_every_binding_of_which_counts_an_int_stays_silent(tmp_path: Path, binding: str, reason: str) -> None:
    package = write_binding_package(tmp_path, binding)
    assert reported_lines(package, "uses") == [], reason
    assert reported_lines(package, "elsewhere") == [], reason


@pytest.mark.parametrize("binding", REPORTED.values(), ids=REPORTED)
def test_a_name_one_binding_of_which_may_count_a_tensor_is_reported(tmp_path: Path, binding: str) -> None:
    package = write_binding_package(tmp_path, binding)
    assert len(reported_lines(package, "uses")) == 3
    assert len(reported_lines(package, "elsewhere")) == 3


# ----- functions: a call may run any of the functions the name may hold -----------------------------

HELPERS = {
    "lengths": """\
        def past_length(cache):
            return cache.get_seq_length()


        def cut(input_ids, n):
            return input_ids[:, n:]
        """,
    "constants": """\
        def past_length(cache):
            return 0


        def cut(input_ids, n):
            return input_ids
        """,
}

CALLS = """\


    def trim(cache, input_ids):
        n = past_length(cache)
        return input_ids[:, n:]


    def handed_on(cache, input_ids):
        return cut(input_ids, cache.get_seq_length())
"""


def fallback(first: str, second: str) -> str:
    """`first` in a `try`, `second` where it raised ImportError."""
    return f"try:\n    {first}\nexcept ImportError:\n    {second}\n"


FUNCTION_BINDINGS = {
    "lengths-first": (
        fallback("from .lengths import cut, past_length", "from .constants import cut, past_length"),
        True,
    ),
    "lengths-in-the-fallback": (
        fallback("from .constants import cut, past_length", "from .lengths import cut, past_length"),
        True,
    ),
    "own-definitions-in-the-fallback": (
        """\
        try:
            from .lengths import cut, past_length
        except ImportError:
            def past_length(cache):
                return 0

            def cut(input_ids, n):
                return input_ids
        """,
        True,
    ),
    "own-definitions-then-import": (
        """\
        def past_length(cache):
            return 0


        def cut(input_ids, n):
            return input_ids


        from .lengths import cut, past_length
        """,
        True,
    ),
    "rewrapped-import": (
        """\
        import functools
        from .lengths import cut, past_length
        past_length = functools.lru_cache(past_length)
        cut = functools.wraps(cut)(cut)
        """,
        True,
    ),
    "later-import-replaces": (
        """\
        from .lengths import cut, past_length
        from .constants import cut, past_length
        """,
        False,
    ),
    "both-arms-constant": (
        fallback(
            "from .constants import cut, past_length", "from .constants import cut as cut, past_length as past_length"
        ),
        False,
    ),
}


@pytest.mark.parametrize("binding, reported", FUNCTION_BINDINGS.values(), ids=FUNCTION_BINDINGS)
def test_a_call_may_run_any_function_its_name_may_hold(tmp_path: Path, binding: str, reported: bool) -> None:
    package = write_package(tmp_path, {**HELPERS, "calls": textwrap.dedent(binding) + textwrap.dedent(CALLS)})
    assert len(reported_lines(package, "calls")) == (2 if reported else 0)


MODULE_FUNCTION_BINDINGS = {
    "lengths-first": (fallback("from . import lengths as ops", "from . import constants as ops"), True),
    "lengths-in-the-fallback": (fallback("import pkg.constants as ops", "import pkg.lengths as ops"), True),
    "both-arms-constant": (fallback("from . import constants as ops", "import pkg.constants as ops"), False),
}


@pytest.mark.parametrize("binding, reported", MODULE_FUNCTION_BINDINGS.values(), ids=MODULE_FUNCTION_BINDINGS)
def test_a_call_through_a_module_alias_may_run_either_module_s_function(
    tmp_path: Path, binding: str, reported: bool
) -> None:
    calls = textwrap.dedent(CALLS).replace("past_length(", "ops.past_length(").replace("cut(", "ops.cut(")
    package = write_package(tmp_path, {**HELPERS, "calls": textwrap.dedent(binding) + calls})
    assert len(reported_lines(package, "calls")) == (2 if reported else 0)


# ----- the other readers of a name: methods, subclasses, attributes ---------------------------------

HELPER_CLASSES = {
    "fast": """\
        class Helper:
            def offset_of(self, cache):
                return cache.get_seq_length()
        """,
    "slow": """\
        class Helper:
            def offset_of(self, cache):
                return 0
        """,
}
METHOD_CALL = """\
    try:
        from .{first} import Helper
    except ImportError:
        from .{second} import Helper


    def trim(cache, input_ids):
        h = Helper()
        n = h.offset_of(cache)
        return input_ids[:, n:]


    def logged(cache):
        print(cache.get_seq_length())  # the module names a source method: it is checked at all
"""


@pytest.mark.parametrize(
    "first, second, reported", [("fast", "slow", True), ("slow", "fast", True), ("slow", "slow", False)]
)
def test_a_method_may_be_any_class_s_the_name_may_hold(tmp_path: Path, first: str, second: str, reported: bool) -> None:
    calls = METHOD_CALL.format(first=first, second=second)
    package = write_package(tmp_path, {**HELPER_CLASSES, "calls": calls})
    assert len(reported_lines(package, "calls")) == (1 if reported else 0)


PRIVATE_BASE = {
    "base": """\
        from transformers.cache_utils import Cache


        class _Base(Cache):
            def get_seq_length(self, layer_idx=0):
                raise NotImplementedError
        """,
    "int_subclass": """\
        from .base import _Base


        class Counted(_Base):
            def __init__(self):
                self.seen = 0

            def get_seq_length(self, layer_idx=0):
                return self.seen
        """,
    "other": "class Other:\n    pass\n",
    "uses": """\
        from .base import _Base


        def trim(cache: _Base, input_ids):
            n = cache.get_seq_length()
            return input_ids[:, n:]
        """,
}
TENSOR_SUBCLASS = """\
    import torch
    try:
        from .{first} import {first_name} as B
    except ImportError:
        from .{second} import {second_name} as B


    class Tensorish(B):
        def get_seq_length(self, layer_idx=0):
            return torch.tensor(0)
"""


@pytest.mark.parametrize("base_first", [True, False], ids=["base-first", "base-in-the-fallback"])
def test_a_subclass_of_a_base_imported_in_one_arm_counts(tmp_path: Path, base_first: bool) -> None:
    arms = [("base", "_Base"), ("other", "Other")]
    (first, first_name), (second, second_name) = arms if base_first else arms[::-1]
    subclass = TENSOR_SUBCLASS.format(first=first, first_name=first_name, second=second, second_name=second_name)
    package = write_package(tmp_path, {**PRIVATE_BASE, "tensor_subclass": subclass})
    assert len(reported_lines(package, "uses")) == 1


def test_a_private_base_whose_subclasses_count_ints_stays_silent(tmp_path: Path) -> None:
    package = write_package(tmp_path, PRIVATE_BASE)
    assert reported_lines(package, "uses") == [], "its one subclass in the package counts an int"


# ----- a transformers class imported from two places stays that class ----------------------------

TWO_PLACES = fallback("from transformers import DynamicCache", "from transformers.cache_utils import DynamicCache")


@pytest.mark.parametrize(
    "built, reported",
    [("DynamicCache()", False), ("DynamicCache(config=config)", True)],
    ids=["without-a-config-silent", "with-a-config-reported"],
)
def test_a_class_imported_from_two_places_is_built_as_that_class(tmp_path: Path, built: str, reported: bool) -> None:
    """Over every release, `DynamicCache()` counts an int and `DynamicCache(config=...)` may not (5.25):
    the same as for one import of the class."""
    use = f"\n\ndef run(config, input_ids):\n    cache = {built}\n    return input_ids[:, cache.get_seq_length():]\n"
    package = write_package(tmp_path, {"uses": TWO_PLACES + use})
    checked = check_path(str(package / "uses.py"), Settings())
    assert not checked.error, checked.error
    assert bool(checked.findings) == reported


def test_a_subclass_of_a_transformers_class_imported_two_ways_may_break_its_int(tmp_path: Path) -> None:
    """`class Mine(DynamicCache)` returning a tensor derives from transformers' class whichever import
    ran: a receiver annotated `DynamicCache` may be a Mine. Its twin without the subclass is silent."""
    subclass = (
        "\n\nclass Mine(DynamicCache):\n    def get_seq_length(self, layer_idx=0):\n        return torch.tensor(0)\n"
    )
    use = "\n\ndef run(cache: DynamicCache, input_ids):\n    return input_ids[:, cache.get_seq_length():]\n"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with_subclass = write_package(tmp_path / "a", {"uses": "import torch\n" + TWO_PLACES + subclass + use})
    without = write_package(tmp_path / "b", {"uses": "import torch\n" + TWO_PLACES + use})
    assert len(reported_lines(with_subclass, "uses")) == 1
    assert reported_lines(without, "uses") == []


SUBCLASS_OF_AN_ALIASED_BASE = """\
import torch
from transformers import DynamicCache


class Own(DynamicCache):
    pass


{base_binding}


class Mine(Base):
    def get_seq_length(self, layer_idx=0):
        return torch.tensor(0)


def run(cache: DynamicCache, input_ids):
    return input_ids[:, cache.get_seq_length():]
"""


@pytest.mark.parametrize(
    "base_binding",
    ["Base = Own", "import os\nif os.environ.get('X'):\n    Base = Own\nelse:\n    Base = pick_a_class()"],
    ids=["alias-of-a-subclass", "alias-or-a-call"],
)
def test_a_subclass_through_an_aliased_base_may_break_the_int(tmp_path: Path, base_binding: str) -> None:
    """`Base = Own` (Own derives from DynamicCache), or a base some arm binds in a way not followed:
    `Mine(Base)` returning a tensor may stand where a DynamicCache is expected."""
    text = SUBCLASS_OF_AN_ALIASED_BASE.format(base_binding=base_binding)
    package = write_package(tmp_path, {"uses": text, "twin": text.replace("Mine(Base)", "Mine(object)")})
    assert len(reported_lines(package, "uses")) == 1
    assert reported_lines(package, "twin") == []


def test_aliases_that_read_each_other_in_a_loop_end(tmp_path: Path) -> None:
    """Each round of a loop body's aliases keeps the bindings of the last: the rounds end."""
    text = (
        "from transformers import DynamicCache as A\n"
        "for _ in range(2):\n    A = B\n    B = A\n\n\n"
        "def run(cache: A, input_ids):\n    return input_ids[:, cache.get_seq_length():]\n"
    )
    package = write_package(tmp_path, {"uses": text})
    assert len(reported_lines(package, "uses")) == 1  # B is bound by nothing known before the loop


@pytest.mark.parametrize("line_break", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_a_global_rebinding_is_seen_whatever_the_line_breaks(tmp_path: Path, line_break: str) -> None:
    text = (
        "from transformers import StaticCache\nfrom transformers import DynamicCache as KV\n\n\n"
        "def setup():\n    global KV\n    KV = StaticCache\n\n\n"
        "def run(cache: KV, input_ids):\n    return input_ids[:, cache.get_seq_length():]\n"
    )
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "uses.py").write_bytes(text.replace("\n", line_break).encode())
    assert len(reported_lines(package, "uses")) == 1

"""Must-report twins that a second reader wrote against the silencing facts (2026-12-06), each beside
the silent program it breaks. Every twin was silent before its fix, and each runs: a tensor length
reaches the slice under torch 2.13 and transformers 5.5.3 (the reader's runtime check).

- a walrus inside a comprehension or generator binds the function's own name (PEP 572), so what
  the name held before (narrowed, annotated, built) no longer holds (`values.comprehension`);
- another module stores on the class's objects as `[c.n] = ...`, `c.n: T = ...` or in a
  comprehension's target (`package_stores.may_store_on_another`);
- a class of the package inherits the attribute `hasattr` asks for from a builtin or `collections`
  base (`attribute_owners`);
- a counter adds a parameter whose own header says it is no count: `t: torch.Tensor`,
  `u=torch.tensor(1)` (`counters.may_be_given_a_count`);
- a nested function or class body rebinds the name through `nonlocal` (`values.known_receiver_kind`),
  or hands a length out through `nonlocal` or `global` (`Summary.shares_source`), also through a
  second function that calls the one that binds it (`FunctionWalker.note_shared_sources`);
- a subclass in another module extends the class through a call (`importlib.import_module("pkg.m")
  .IntCache`: `subclasses.base_names`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine.fixes.fixplan import SHARED_REASON
from lint_rules.findings import FixKind
from lint_rules.settings import Settings
from tests import package_files

INT_CACHE = """\
    import torch


    class IntCache:
        def __init__(self):
            self.n = 0

        def copy(self):
            return IntCache()

        def get_seq_length(self):
            return self.n
    """

NARROWED = (
    INT_CACHE
    + """

    def trim(ids, cache, other=None):
        if isinstance(cache, IntCache):
            {rebinding}
            n = cache.get_seq_length()
            return ids[:, n:]
    """
)

ANNOTATED = (
    INT_CACHE
    + """

    def trim(ids, cache: IntCache, other=None):
        {rebinding}
        n = cache.get_seq_length()
        return ids[:, n:]
    """
)

ASKED = (
    INT_CACHE
    + """

    def trim(ids, cache):
        if hasattr(cache, "copy"):
            n = cache.get_seq_length()
            return ids[:, n:]
    {more}
    """
)

COUNTED = """\
    import torch


    class IntCache:
        def __init__(self):
            self.n = 0

        def update(self, k, {parameter}):
            self.n += t
            return k

        def get_seq_length(self):
            return self.n


    def trim(ids, cache: IntCache):
        n = cache.get_seq_length()
        return ids[:, n:]
    """

HANDED_OUT = """\
def trim(ids, other):
    n = 0

    def f():
        {declaration}
        n = other.get_seq_length()

    f()
    return ids[:, n:]
"""

HANDED_OUT_TWICE = """\
def trim(ids, other):
    n = 0

    def f():
        nonlocal n
        n = other.get_seq_length()

    def g():
        {second}

    g()
    return ids[:, n:]
"""


def codes(tmp_path: Path, modules: dict[str, str]) -> list[str]:
    package = package_files.write_package(tmp_path, modules)
    checked = check_path(str(package / "m.py"), Settings())
    assert not checked.error, checked.error
    return [finding.code for finding in checked.findings]


SILENT = {
    "narrowed-then-a-plain-comprehension": {"m": NARROWED.format(rebinding="[o for o in [other]]")},
    "annotated-then-a-plain-comprehension": {"m": ANNOTATED.format(rebinding="[o for o in [other]]")},
    "hasattr-only-int-classes-have": {"m": ASKED.format(more="")},
    "a-nested-function-binds-a-length-to-its-own-name": {"m": HANDED_OUT.format(declaration="pass")},
    "narrowed-and-a-nested-function-binds-its-own-name": {
        "m": NARROWED.format(rebinding="def f():\n                cache = other\n            f()")
    },
    "a-counter-adds-a-parameter-its-header-calls-an-int": {"m": COUNTED.format(parameter="t: int = 1")},
    "a-counter-adds-an-unannotated-parameter": {"m": COUNTED.format(parameter="t")},  # trusted: docs/limits.md
}

DICT_CACHE = """\
import torch
{before}

class TCache({base}):
    def get_seq_length(self):
        return torch.tensor(1)
{after}"""
"""A class of the package with a tensor length that `dict` (or a name bound to it) gives `copy`."""


TWINS = {
    "narrowed-then-a-comprehension-walrus": {"m": NARROWED.format(rebinding="[(cache := o) for o in [other]]")},
    "narrowed-then-a-generator-walrus": {"m": NARROWED.format(rebinding="any((cache := o) for o in [other])")},
    "annotated-then-a-dict-comprehension-walrus": {
        "m": ANNOTATED.format(rebinding="{0: (cache := o) for o in [other]}")
    },
    "a-length-bound-by-a-walrus-in-a-generator": {
        "m": "def trim(ids, other):\n    if any((n := c.get_seq_length()) > 0 for c in [other]):\n        return ids[:, n:]\n"
    },
    "stored-from-another-module-as-a-list-target": {
        "m": ANNOTATED.format(rebinding="pass"),
        "other": "import torch\n\n\ndef poke(c):\n    [c.n] = [torch.tensor(1)]\n",
    },
    "stored-from-another-module-as-an-annotated-target": {
        "m": ANNOTATED.format(rebinding="pass"),
        "other": "import torch\n\n\ndef poke(c):\n    c.n: torch.Tensor = torch.tensor(1)\n",
    },
    "stored-from-another-module-as-a-comprehension-target": {
        "m": ANNOTATED.format(rebinding="pass"),
        "other": "import torch\n\n\ndef poke(c):\n    return [0 for c.n in [torch.tensor(1)]]\n",
    },
    "hasattr-answered-by-a-dict-base": {
        "m": ASKED.format(
            more="\n    class TCache(dict):\n        def get_seq_length(self):\n            return torch.tensor(1)\n"
        )
    },
    "hasattr-answered-by-a-dict-base-in-a-module-that-never-names-it": {
        "m": ASKED.format(more=""),
        "other": DICT_CACHE.format(before="", base="dict", after=""),
    },
    "narrowed-then-rebound-through-nonlocal": {
        "m": NARROWED.format(
            rebinding="def f():\n                nonlocal cache\n                cache = other\n            f()"
        )
    },
    "narrowed-then-rebound-by-a-class-body": {
        "m": NARROWED.format(rebinding="class K:\n                nonlocal cache\n                cache = other")
    },
    "annotated-then-rebound-through-nonlocal": {
        "m": ANNOTATED.format(rebinding="def f():\n            nonlocal cache\n            cache = other\n        f()")
    },
    "a-length-handed-out-through-nonlocal": {"m": HANDED_OUT.format(declaration="nonlocal n")},
    "a-length-handed-out-through-nonlocal-by-a-walrus-in-the-return": {
        "m": HANDED_OUT.format(declaration="nonlocal n").replace(
            "        n = other.get_seq_length()\n", "        return (n := other.get_seq_length()) > 0\n"
        )
    },
    "a-length-handed-out-through-global": {
        "m": "n = 0\n\n\n" + HANDED_OUT.format(declaration="global n").replace("    n = 0\n", "")
    },
    "a-subclass-elsewhere-extends-it-through-import-module": {
        "m": ANNOTATED.format(rebinding="pass"),
        "other": (
            "import importlib\n\nimport torch\n\nBase = importlib.import_module('pkg.m').IntCache\n\n\n"
            "class Sub(Base):\n    def get_seq_length(self):\n        return torch.tensor(1)\n"
        ),
    },
    "a-length-handed-out-by-a-module-function-through-global": {
        "m": (
            "N = 0\n\n\ndef setn(c):\n    global N\n    N = c.get_seq_length()\n\n\n"
            "def trim(ids, c):\n    setn(c)\n    return ids[:, N:]\n"
        )
    },
    **{
        f"stored-from-another-module-{form}": {
            "m": ANNOTATED.format(rebinding="pass"),
            "other": f"import torch\n\n\ndef poke(c, cs):\n    {store}\n",
        }
        for form, store in {
            "as-a-list-target-over-lines": "[\n        c.n,\n    ] = [torch.tensor(1)]",
            "annotated-after-a-semicolon": "x = 1; c.n: torch.Tensor = torch.tensor(1)",
            "annotated-on-an-element": "cs[0].n: torch.Tensor = torch.tensor(1)",
            "annotated-after-a-continuation": "c.n \\\n        : torch.Tensor = torch.tensor(1)",
            "in-a-comprehension-over-lines": "return [0\n        for c.n\n        in [torch.tensor(1)]]",
        }.items()
    },
    "hasattr-answered-by-a-dict-base-and-a-parameter-named-dict": {
        "m": ASKED.format(more=""),
        "other": DICT_CACHE.format(before="", base="dict", after="\n\ndef merge(a, dict=None):\n    return a\n"),
    },
    "hasattr-answered-by-a-base-bound-to-dict": {
        "m": ASKED.format(more=""),
        "other": DICT_CACHE.format(before="\nBase = dict\n", base="Base", after=""),
    },
    **{
        f"a-length-handed-out-through-a-second-call-{shape}": {"m": HANDED_OUT_TWICE.format(second=second)}
        for shape, second in {
            "from-a-sibling": "f()",
            "that-binds-the-name-itself-after": "f()\n        n = 1\n        return n",
            "and-a-third": "h()\n\n    def h():\n        f()",
        }.items()
    },
    "a-length-handed-out-through-global-by-a-second-call": {
        "m": (
            "N = 0\n\n\ndef setn(c):\n    global N\n    N = c.get_seq_length()\n\n\n"
            "def through(c):\n    setn(c)\n\n\ndef trim(ids, c):\n    through(c)\n    return ids[:, N:]\n"
        )
    },
    "a-counter-adds-a-tensor-annotated-parameter": {"m": COUNTED.format(parameter="t: torch.Tensor")},
    "a-counter-adds-a-parameter-with-a-tensor-default": {"m": COUNTED.format(parameter="t=torch.tensor(1)")},
}


@pytest.mark.parametrize("modules", SILENT.values(), ids=SILENT.keys())
def test_silent(modules: dict[str, str], tmp_path: Path) -> None:
    assert codes(tmp_path, modules) == []


@pytest.mark.parametrize("modules", TWINS.values(), ids=TWINS.keys())
def test_twin_reported(modules: dict[str, str], tmp_path: Path) -> None:
    assert codes(tmp_path, modules) == ["SLG002"]


@pytest.mark.parametrize(
    "name",
    [
        "a-length-handed-out-through-nonlocal",
        "a-length-handed-out-through-global",
        "a-length-handed-out-through-a-second-call-from-a-sibling",
        "a-length-handed-out-through-global-by-a-second-call",
    ],
)
def test_a_length_handed_out_gets_no_automatic_fix(name: str, tmp_path: Path) -> None:
    """Hoisting `f()` would leave the name it binds a tensor: the plan says where to guard instead."""
    package = package_files.write_package(tmp_path, TWINS[name])
    [finding] = check_path(str(package / "m.py"), Settings()).findings
    assert finding.fix.kind is FixKind.NONE
    assert finding.fix.reason == SHARED_REASON


NARROWED_TO_A_STATIC_CACHE_THEN_SHARED = """\
from transformers import StaticCache


def trim(ids, cache, other, flag):
    def swap():
        nonlocal cache
        cache = other

    if isinstance(cache, StaticCache):
        n = cache.get_seq_length()
        return ids[:, n:]
    swap()
    return ids
"""


def test_a_shared_name_keeps_a_tensor_length_kind_under_int_length_caches(tmp_path: Path) -> None:
    """Only an int kind is dropped for a name a nested function may rebind: `int-length-caches`
    silences what is not shown tensor-length, so dropping a `StaticCache` would silence it."""
    package = package_files.write_package(tmp_path, {"m": NARROWED_TO_A_STATIC_CACHE_THEN_SHARED})
    settings = Settings(int_length_caches=("*",))
    assert [finding.code for finding in check_path(str(package / "m.py"), settings).findings] == ["SLG002"]


def test_a_result_that_is_a_length_keeps_its_fix_when_the_function_also_shares_it(tmp_path: Path) -> None:
    text = HANDED_OUT.format(declaration="nonlocal n").replace(
        "        n = other.get_seq_length()\n", "        n = other.get_seq_length()\n        return n\n"
    )
    text = text.replace("    f()\n    return ids[:, n:]", "    k = f()\n    return ids[:, k:]")
    package = package_files.write_package(tmp_path, {"m": text})
    [finding] = check_path(str(package / "m.py"), Settings()).findings
    assert finding.fix.kind is not FixKind.NONE

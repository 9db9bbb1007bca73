"""The package matrix: every way a length comes from another module of the package, crossed with
every use context of the single-module matrix (`tests/source_use_matrix.py`), inline and after a
binding. Each pair is a package `pkg` in its own folder: `pkg/helpers.py` defines the length's
helper, `pkg/module.py` is the single-module matrix's module for that context with the form's
import on top. The engine must report the context's codes there (its own exceptions included), or
stay silent for the reason the form or the context states; the invariants of every matrix module
(`tests/invariants.py`: checker and plugin agree, each fixer run parses, leaves nothing it would fix
and is idempotent) hold with the package view on.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.findings import Finding
from lint_rules.settings import Settings
from tests.invariants import check_invariants
from tests.package_files import write_package
from tests.source_use_matrix import USE_CONTEXTS, Case, SourceForm, UseContext

HELPERS = """\
    def offset_of(cache):
        return cache.get_seq_length()


    class Helper:
        def offset_of(self, cache):
            return cache.get_seq_length()
"""
HELPERS_THROUGH_INNER = """\
    from . import inner


    def offset_of(cache):
        return inner.length_of(cache)
"""
INNER = """\
    def length_of(cache):
        return cache.get_seq_length()
"""
CACHES = """\
    from transformers import StaticCache


    class ZooCache:
        def __init__(self):
            self.seen = 0

        def get_seq_length(self, layer_idx=0):
            return self.seen


    class TensorCache(StaticCache):
        pass
"""
CONSTANTS = """\
    def offset_of(cache):
        return 0
"""
FALLBACK_IMPORT = """\
try:
    from .helpers import offset_of
except ImportError:
    from .constants import offset_of"""
FALLBACK_MODULE = """\
try:
    from . import helpers as h
except ImportError:
    from . import constants as h"""
FALLBACK_CLASS = """\
try:
    from .caches import TensorCache as KV
except ImportError:
    from .caches import ZooCache as KV"""
CLASS_REBOUND_BY_GLOBAL = """\
from .caches import TensorCache, ZooCache as KV


def use_tensor_caches():
    global KV
    KV = TensorCache"""
CLASS_REBOUND_BY_A_STAR_IMPORT = """\
from .caches import ZooCache as KV
from .exports import *"""
CLASS_REBOUND_BY_A_WALRUS = """\
from .caches import TensorCache, ZooCache as KV

if (KV := TensorCache) is None:
    pass"""
NOT_FOLLOWED_INTO_CLASS_BODIES = "in a class body no function shows the receiver's class (README Limits)"


@dataclasses.dataclass(frozen=True)
class PackageForm:
    source: SourceForm
    """How `pkg/module.py` obtains the length (its name is the form's)."""
    imports: str
    """The import lines on top of `pkg/module.py`."""
    modules: dict[str, str] = dataclasses.field(default_factory=lambda: {"helpers": HELPERS})
    """`pkg`'s modules besides `module.py` (dedented), by name."""
    silent_because: str = ""
    """Not followed at all (empty: followed, so every context reports its codes)."""
    silent_contexts: dict[str, str] = dataclasses.field(default_factory=dict)
    """Contexts that hide this form inline, with the reason."""


PACKAGE_FORMS = (
    PackageForm(SourceForm("imported-function", "offset_of(cache)"), "from .helpers import offset_of"),
    PackageForm(SourceForm("through-relative-module", "helpers.offset_of(cache)"), "from . import helpers"),
    PackageForm(SourceForm("through-module-alias", "h.offset_of(cache)"), "import pkg.helpers as h"),
    PackageForm(SourceForm("through-dotted-module", "pkg.helpers.offset_of(cache)"), "import pkg.helpers"),
    PackageForm(
        SourceForm("re-exported-function", "offset_of(cache)"),
        "from pkg import offset_of",
        modules={"helpers": HELPERS, "__init__": "from .helpers import offset_of\n"},
    ),
    PackageForm(
        SourceForm("method-on-constructed-receiver", "helper.offset_of(cache)", prelude="helper = Helper()"),
        "from .helpers import Helper",
        silent_contexts={"class-body": NOT_FOLLOWED_INTO_CLASS_BODIES},
    ),
    PackageForm(
        SourceForm("method-on-constructor-call", "Helper().offset_of(cache)"),
        "from .helpers import Helper",
        silent_because="a receiver that a call returns is not followed (README Limits)",
    ),
    PackageForm(
        SourceForm("int-receiver-through-module-name", "own.get_seq_length()", prelude="own = cu.ZooCache()"),
        "import pkg.caches as cu",
        modules={"caches": CACHES},
        silent_because="the receiver is a ZooCache (named through its module), whose length is an int",
    ),
    PackageForm(
        SourceForm("tensor-receiver-through-module-name", "own.get_seq_length()", prelude="own = cu.TensorCache()"),
        "import pkg.caches as cu",
        modules={"caches": CACHES},
    ),
    PackageForm(
        SourceForm("function-with-a-fallback-import", "offset_of(cache)"),
        FALLBACK_IMPORT,
        modules={"helpers": HELPERS, "constants": CONSTANTS},
    ),
    PackageForm(
        SourceForm("function-through-a-fallback-module-alias", "h.offset_of(cache)"),
        FALLBACK_MODULE,
        modules={"helpers": HELPERS, "constants": CONSTANTS},
    ),
    PackageForm(
        SourceForm("tensor-receiver-with-a-fallback-class", "own.get_seq_length()", prelude="own = KV()"),
        FALLBACK_CLASS,
        modules={"caches": CACHES},
    ),
    PackageForm(
        SourceForm("tensor-receiver-through-a-class-alias", "own.get_seq_length()", prelude="own = KV()"),
        "import pkg.caches as cu\nKV = cu.TensorCache",
        modules={"caches": CACHES},
    ),
    PackageForm(
        SourceForm("int-receiver-through-a-class-alias", "own.get_seq_length()", prelude="own = KV()"),
        "import pkg.caches as cu\nKV = cu.ZooCache",
        modules={"caches": CACHES},
        silent_because="the receiver is a ZooCache (through a module-level alias), whose length is an int",
    ),
    PackageForm(
        SourceForm("receiver-of-a-class-a-global-statement-rebinds", "own.get_seq_length()", prelude="own = KV()"),
        CLASS_REBOUND_BY_GLOBAL,
        modules={"caches": CACHES},
    ),
    PackageForm(
        SourceForm("receiver-of-a-class-a-star-import-may-rebind", "own.get_seq_length()", prelude="own = KV()"),
        CLASS_REBOUND_BY_A_STAR_IMPORT,
        modules={"caches": CACHES, "exports": "from .caches import TensorCache as KV\n"},
    ),
    PackageForm(
        SourceForm("receiver-of-a-class-a-walrus-rebinds", "own.get_seq_length()", prelude="own = KV()"),
        CLASS_REBOUND_BY_A_WALRUS,
        modules={"caches": CACHES},
    ),
    PackageForm(
        SourceForm("static-cache-through-a-transformers-alias", "own.get_seq_length()", prelude="own = KV(None, 8)"),
        "from transformers import StaticCache\nKV = StaticCache",
        modules={},
    ),
    PackageForm(
        SourceForm("dynamic-cache-through-a-transformers-alias", "own.get_seq_length()", prelude="own = KV()"),
        "from transformers import DynamicCache\nKV = DynamicCache",
        modules={},
        silent_because="a DynamicCache built without a config counts an int in every release of the table",
    ),
    PackageForm(
        SourceForm("two-modules-away", "offset_of(cache)"),
        "from .helpers import offset_of",
        modules={"helpers": HELPERS_THROUGH_INNER, "inner": INNER},
        silent_because="a function returning a length from two modules away is not a source (README Limits)",
    ),
)


@dataclasses.dataclass(frozen=True)
class PackageCase:
    form: PackageForm
    context: UseContext
    bound: bool

    @property
    def single_module(self) -> Case:
        return Case(self.form.source, self.context, self.bound)

    @property
    def id(self) -> str:
        return self.single_module.id

    @property
    def hidden_because(self) -> str:
        """Why the form, or this context for it, hides the length (empty: the matrix's answer holds)."""
        if self.form.silent_because:
            return self.form.silent_because
        return "" if self.bound else self.form.silent_contexts.get(self.context.name, "")

    @property
    def expected_codes(self) -> tuple[str, ...]:
        return () if self.hidden_because else self.single_module.expected_codes

    @property
    def silent_because(self) -> str:
        return self.hidden_because or self.single_module.silent_because

    @property
    def module(self) -> str:
        return f"{self.form.imports}\n{self.single_module.module}"


CASES = [
    PackageCase(form, context, bound)
    for form in PACKAGE_FORMS
    for context in USE_CONTEXTS
    for bound in (False, True)
    if context.bindable or not bound
]


def write_case(root: Path, case: PackageCase) -> Path:
    """`root/pkg` with the form's modules and `module.py`; the path of `module.py`."""
    return write_package(root, {**case.form.modules, "module": case.module}) / "module.py"


def test_every_form_meets_every_context_and_says_why_it_is_silent() -> None:
    assert len(CASES) == len(PACKAGE_FORMS) * sum(2 if context.bindable else 1 for context in USE_CONTEXTS)
    assert len({case.id for case in CASES}) == len(CASES)
    for case in CASES:
        assert case.expected_codes or case.silent_because, f"{case.id}: a silent pair says why"
    followed = [form for form in PACKAGE_FORMS if not form.silent_because]
    assert len(followed) >= 5, "the matrix checks the forms the engine follows"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_pair(case: PackageCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = write_case(tmp_path, case)
    checked = check_path(str(module), Settings())
    assert not checked.error, (case.id, checked.error)
    reported = sorted({finding.code for finding in checked.findings})
    assert reported == sorted(case.expected_codes), f"{case.id}\n{case.module}\n{checked.findings}"
    # The invariants check the path `module.py`, so from the package's folder they see its module
    # with the package view on: the same findings as `check_path` (a followed form has none without it).
    monkeypatch.chdir(module.parent)
    found = check_invariants(case.module, case.id)
    assert [where(finding) for finding in found] == [where(finding) for finding in checked.findings], case.id


def where(finding: Finding) -> tuple[int, int, str, str]:
    return finding.line, finding.col, finding.code, finding.message

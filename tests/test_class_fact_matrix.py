"""The class fact matrix (`tests/class_fact_matrix.py`): every binding form of a cache class's
length attribute x the shapes of class that read it x an int or a tensor value. For each case:

- the checker reports exactly what the case expects (SLG002 on the harmful use, or silence for
  the stated reason), with the package view on where `Cache` lives in a sibling module;
- the flake8 plugin agrees with the checker, and each fixer run parses, leaves nothing it would
  fix and is idempotent (`tests/invariants.py`);
- the fixer guards every reported use (`isinstance(seq_length, torch.Tensor)`) and leaves a
  silent module untouched.

A tensor value is never silent: the fact that silences an int length must hold for every form.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from lint_rules.checking import check_path, check_text
from lint_rules.settings import Settings
from tests.class_fact_matrix import BINDING_FORMS, CLASS_SHAPES, OTHER_OBJECTS, Case, cases
from tests.invariants import UNSAFE_TOO, check_invariants

CASES = cases()
GUARD = "isinstance(seq_length, torch.Tensor)"


def test_the_matrix_crosses_every_form_with_every_shape_and_says_why_it_is_silent() -> None:
    assert len(CASES) == len(BINDING_FORMS) * len(CLASS_SHAPES) * 2
    assert len({case.id for case in CASES}) == len(CASES)
    assert len(BINDING_FORMS) >= 25
    for case in CASES:
        assert case.expected_codes or case.silent_because, f"{case.id}: a silent case says why"
        tensor_elsewhere = case.silent_because == OTHER_OBJECTS  # in a sibling of the receiver's class
        assert case.expected_codes or not case.tensor or tensor_elsewhere, f"{case.id}: a tensor length is never silent"
    followed = [form for form in BINDING_FORMS if form.int_followed]
    assert len(followed) >= 10, "the matrix checks the forms the engine proves int"
    assert all(form.not_followed for form in BINDING_FORMS if not form.int_followed)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.package:
        package = tmp_path / "pkg"
        package.mkdir()
        (package / "__init__.py").write_text("")
        for name, text in case.package.items():
            (package / name).write_text(text)
        checked = check_path(str(package / "module.py"), Settings())
        monkeypatch.chdir(package)  # the invariants check `module.py`: the package view sees the other module
    else:
        checked = check_text("module.py", case.module, Settings())
    assert not checked.error, (case.id, checked.error)
    reported = sorted({finding.code for finding in checked.findings})
    assert reported == sorted(case.expected_codes), f"{case.id}\n{case.module}\n{checked.findings}"
    found = check_invariants(case.module, case.id)
    assert [(f.line, f.code) for f in found] == [(f.line, f.code) for f in checked.findings], case.id
    fixed = fix_text("module.py", case.module, UNSAFE_TOO)
    if case.expected_codes:
        assert GUARD in fixed and GUARD not in case.module, f"{case.id}: the use is guarded\n{fixed}"
    else:
        assert fixed == case.module, f"{case.id}: a silent module is left alone"


def test_the_bug_shape_a_tuple_target_makes_the_counter_a_tensor() -> None:
    """The reduced real bug: `self.max_len, _ = self.counts.max(dim=0)` binds the length to a
    tensor; the counter fact once skipped tuple targets and took `max_len` as an int counter."""
    module = textwrap.dedent(
        """\
        import torch


        class MaxLengthCache:
            def __init__(self):
                self.max_len = 0
                self.counts = torch.zeros(4, 4)

            def update(self, keys):
                self.counts += keys.sum(-1)
                self.max_len, _ = self.counts.max(dim=0)

            def get_seq_length(self, layer_idx=0):
                return self.max_len


        def trim(ids, cache: MaxLengthCache):
            return ids[:, cache.get_seq_length():]
        """
    )
    findings = check_text("module.py", module, Settings()).findings
    assert [(finding.line, finding.code) for finding in findings] == [(18, "SLG002")]
    counted = module.replace("self.max_len, _ = self.counts.max(dim=0)", "self.max_len, _ = keys.shape[-2], 0")
    assert not check_text("module.py", counted, Settings()).findings, "a parallel tuple of counts stays an int"


@pytest.mark.parametrize(
    "getter",
    [
        "def get_seq_length(self, length=None):\n    if length is None:\n        length = 0\n    return length",
        "def get_seq_length(self, layer_idx=0):\n    length = 0\n    for length in self.counts:\n        pass\n"
        "    return length",
        "def get_seq_length(self, layer_idx=0):\n    length = 0\n    if (length := self.counts.sum()) > 0:\n"
        "        pass\n    return length",
        "def get_seq_length(self, layer_idx=0):\n    length = 0\n    length /= 2\n    return length",
    ],
    ids=["parameter", "loop-target", "walrus", "true-division"],
)
def test_a_local_the_getter_returns_is_int_only_when_every_binding_is(getter: str) -> None:
    """Each getter also binds its local `length` in a form that is not an int (a parameter, a loop
    target, a walrus, `/=`): once only its plain assignments were read."""
    module = (
        "import torch\n\n\nclass Cache:\n    def __init__(self):\n        self.counts = torch.zeros(2)\n\n"
        + textwrap.indent(getter, "    ")
        + "\n\n\ndef use(ids, cache: Cache):\n    return ids[:, cache.get_seq_length():]\n"
    )
    assert [finding.code for finding in check_text("module.py", module, Settings()).findings] == ["SLG002"]


SUBCLASS_ADDS_A_COUNT = textwrap.dedent(
    """\
    from transformers.cache_utils import DynamicCache


    class CompressCache(DynamicCache):
        def __init__(self):
            super().__init__()
            self.real_kv_len = 0

        def get_seq_length(self, layer_idx=0):
            return self.real_kv_len


    class CompressFp8Cache(CompressCache):
        def update(self, key_states, value_states, layer_idx):
            bsz, num_heads, seq_len, head_dim = key_states.shape
            self.real_kv_len += seq_len


    def use(cache, ids):
        if isinstance(cache, CompressCache):
            return ids[:, cache.get_seq_length():]
    """
)


def test_a_subclass_adding_a_count_to_a_counter_its_base_starts_keeps_it_an_int() -> None:
    """Silent (ipex-llm's DynamicCompressFp8Cache): the base starts `real_kv_len` at 0 and the
    subclass only adds an element of a shape to it."""
    assert not check_text("module.py", SUBCLASS_ADDS_A_COUNT, Settings()).findings


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("        self.real_kv_len = 0\n", "        pass\n"),
        ("self.real_kv_len += seq_len", "self.real_kv_len += key_states.sum()"),
    ],
    ids=["no-class-starts-it", "adds-a-tensor"],
)
def test_a_subclass_adding_to_a_counter_nothing_starts_or_a_tensor_is_reported(old: str, new: str) -> None:
    """Must report: with no int start in the family the counter may start as anything; a tensor added
    makes it a tensor."""
    module = SUBCLASS_ADDS_A_COUNT.replace(old, new)
    assert module != SUBCLASS_ADDS_A_COUNT
    assert [finding.code for finding in check_text("module.py", module, Settings()).findings] == ["SLG002"]

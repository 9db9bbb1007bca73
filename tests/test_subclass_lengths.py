"""An object of a subclass may stand where its base is expected: a cache's length counts an int only
while every subclass in the module that gives the length its own body counts one, and every class
whose methods may run on such an object (a second base, a mixin) keeps its state an int. An
inherited length is read on the receiver's class and its own subclasses, not on its siblings."""

from __future__ import annotations

import textwrap

import pytest

from tests.module_cases import COUNTER_CACHE, findings_in

CACHE = (
    COUNTER_CACHE
    + """

    def tensor_length(self, layer_idx=0):
        return torch.zeros(())


    class Child(Cache):
        pass
"""
)
USE = """

def trim(ids, cache: Child):
    return ids[:, cache.get_seq_length():]
"""


def functions_reported(more: str) -> list[str]:
    return [finding.function for finding in findings_in(textwrap.dedent(CACHE) + textwrap.dedent(more) + USE)]


SILENT = {
    "no subclass but Child": "",
    "a subclass overriding the length with an int": """
        class Sub(Child):
            def get_seq_length(self, layer_idx=0):
                return self.n + 1
    """,
    "a sibling of Child binding a tensor: an object of Child is no Sibling": """
        class Sibling(Cache):
            def reset(self):
                self.n = torch.zeros(())
    """,
}


@pytest.mark.parametrize("more", SILENT.values(), ids=SILENT.keys())
def test_must_stay_silent(more: str) -> None:
    assert functions_reported(more) == []


REPORTED = {
    "a subclass overriding the length with a tensor": """
        class Sub(Child):
            def get_seq_length(self, layer_idx=0):
                return torch.zeros(())
    """,
    "a subclass binding the length's name to another function": """
        class Sub(Child):
            get_seq_length = tensor_length
    """,
    "a subclass that also derives from a sibling binding a tensor (a diamond)": """
        class Sibling(Cache):
            def reset(self):
                self.n = torch.zeros(())


        class Both(Child, Sibling):
            pass
    """,
    "a mixin first among a subclass's bases binding a tensor": """
        class Mixin:
            def reset(self):
                self.n = torch.zeros(())


        class Both(Mixin, Child):
            pass
    """,
}


@pytest.mark.parametrize("more", REPORTED.values(), ids=REPORTED.keys())
def test_must_report(more: str) -> None:
    assert functions_reported(more) == ["trim"]


# ----- a length that is an int by its form, whatever the subclass binds -----------------------------

FORM_BASE = """
    import torch


    class Base:
        def __init__(self):
            self._compressed = None
            self._n = 0

        def get_seq_length(self, layer_idx=0):
            if self._compressed is None:
                return {empty}
            return {full}


    class Sub(Base):
        def append(self, k):
            self._compressed = {{"k": k}}
            self._n = k.sum()
        {more}


    def trim(ids):
        return ids[:, Sub().get_seq_length():]
"""
"""Reduced from turboquant-kv 1.0.0 (`TurboQuantCacheLayer` and its fused subclass, which stores
into the attributes the inherited length reads)."""

BY_FORM = {
    "`int(...)` or 0": ("0", 'int(self._compressed["k"].shape[2])', ""),
    "`len(...)`": ("0", 'len(self._compressed["k"])', ""),
}
NOT_BY_FORM = {
    "a counter the subclass binds to a tensor": ("0", "self._n", ""),
    "a shape of whatever the attribute holds": ("0", 'self._compressed["k"].shape[2]', ""),
    "a size of whatever the attribute holds": ("0", 'self._compressed["k"].size(2)', ""),
    "one return of two a counter": ("self._n", 'int(self._compressed["k"].shape[2])', ""),
    "the subclass binds the method otherwise": (
        "0",
        'int(self._compressed["k"].shape[2])',
        "get_seq_length = torch.numel",
    ),
}


@pytest.mark.parametrize("case", BY_FORM)
def test_an_inherited_length_that_is_an_int_by_its_form_stays_silent(case: str) -> None:
    empty, full, more = BY_FORM[case]
    assert findings_in(textwrap.dedent(FORM_BASE.format(empty=empty, full=full, more=more))) == [], case


@pytest.mark.parametrize("case", NOT_BY_FORM)
def test_an_inherited_length_that_reads_what_the_subclass_binds_must_report(case: str) -> None:
    empty, full, more = NOT_BY_FORM[case]
    found = findings_in(textwrap.dedent(FORM_BASE.format(empty=empty, full=full, more=more)))
    assert [finding.code for finding in found] == ["SLG002"], case


FORM_VARIANTS = {
    "another source method of the base returns a counter": FORM_BASE.replace(
        "def get_seq_length(self, layer_idx=0):",
        "def get_query_offset(self, layer_idx=0):\n            return self._n\n\n        def get_seq_length(self, layer_idx=0):",
    ),
    "the base defines the length twice, the last a counter": FORM_BASE.replace(
        "class Sub(Base):",
        "    def get_seq_length(self, layer_idx=0):\n            return self._n\n\n\n    class Sub(Base):",
    ),
    "a first base from elsewhere may define the length": FORM_BASE.replace(
        "import torch", "import torch\n    from torchext import LengthMixin"
    ).replace("class Sub(Base):", "class Sub(LengthMixin, Base):"),
}


@pytest.mark.parametrize("case", FORM_VARIANTS)
def test_an_inherited_length_by_form_must_be_the_one_that_runs(case: str) -> None:
    text = textwrap.dedent(FORM_VARIANTS[case].format(empty="0", full='int(self._compressed["k"].shape[2])', more=""))
    assert [finding.code for finding in findings_in(text)] == ["SLG002"], case

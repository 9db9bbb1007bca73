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

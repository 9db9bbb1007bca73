"""A bound source method alias (`n = cache.get_seq_length`) called in a nested `def` or a lambda of
the function that binds it (issue 25 pattern 8c): the closure reads the alias's final value, so a
call of it there is a source; a closure that cannot read it (a parameter of the same name, an
int-length receiver) stays silent."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT


def codes(code: str, releases: Releases = ALL_RELEASES) -> list[tuple[int, str]]:
    text = textwrap.dedent(code).lstrip("\n")
    return [(finding.line, finding.code) for finding in analyze_source(text, "m.py", releases=releases)]


REPORTED = [
    pytest.param(
        """
        def prepare(x, cache):
            n = cache.get_seq_length
            def inner():
                return x[:, n():]
            return inner()
        """,
        [(4, "SLG002")],
        id="nested-def",
    ),
    pytest.param(
        """
        def prepare(x, cache):
            n = getattr(cache, "get_seq_length")
            def middle():
                def inner():
                    return x[:, n():]
                return inner()
            return middle()
        """,
        [(5, "SLG002")],
        id="two-levels-down-through-getattr",
    ),
    pytest.param(
        """
        def prepare(x, cache):
            window = lambda: x[:, n():]
            n = cache.get_seq_length
            return window()
        """,
        [(2, "SLG002")],
        id="lambda-written-before-the-alias",  # it runs after: it reads the final value
    ),
    pytest.param(
        """
        def prepare(x, cache, other):
            n = other
            def inner():
                return x[:, n():]
            n = cache.get_seq_length
            return inner()
        """,
        [(4, "SLG002")],
        id="rebound-later-to-the-alias",  # the closure reads the final binding
    ),
    pytest.param(
        """
        def prepare(x, cache, other):
            n = cache.get_seq_length
            def inner():
                return x[:, n():]
            if other is not None:
                n = other
            return inner()
        """,
        [(4, "SLG002")],
        id="rebound-on-one-path",  # conservative: n may still be the alias
    ),
    pytest.param(
        """
        def prepare(x, cache):
            n = cache.get_seq_length
            def inner():
                nonlocal n
                return x[:, n():]
            return inner()
        """,
        [(5, "SLG002")],
        id="declared-nonlocal",
    ),
    pytest.param(
        """
        def prepare(x, cache, other):
            n = cache.get_seq_length
            window = lambda: x[:, n():]
            n = other
            return window()
        """,
        [(3, "SLG002")],
        id="lambda-before-a-rebinding",  # conservative: n may still be the alias when it runs
    ),
]


@pytest.mark.parametrize(("code", "expected"), REPORTED)
def test_an_alias_called_in_a_closure_is_a_source(code: str, expected: list[tuple[int, str]]) -> None:
    assert codes(code) == expected


SILENT = [
    pytest.param(
        """
        def prepare(x, cache):
            n = cache.get_seq_length
            def inner(n):
                return x[:, n():]
            return inner(len)
        """,
        id="parameter-of-the-same-name",  # inner's n is its own
    ),
    pytest.param(
        """
        def prepare(x, cache):
            n = cache.get_seq_length
            class Holder:
                def inner(self):
                    n = self.width
                    return x[:, n():]
            return Holder
        """,
        id="bound-in-the-nested-def",  # n is local to inner
    ),
    pytest.param(
        """
        def prepare(x, cache):
            n = cache.get_seq_length
            def inner():
                try:
                    return x[:, n():]
                except TypeError as n:
                    return n
            return inner
        """,
        id="bound-by-an-except-as-in-the-nested-def",  # n is local to inner: n() raises UnboundLocalError
    ),
    pytest.param(
        """
        def prepare(x, cache, options):
            n = cache.get_seq_length
            def inner():
                match options:
                    case {**n}:
                        return x[:, n():]
            return inner
        """,
        id="bound-by-a-mapping-pattern-rest-in-the-nested-def",  # n is the dict of the other keys
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(x):
            cache = DynamicCache()
            n = cache.get_seq_length
            def inner():
                return x[:, n():]
            return inner()
        """,
        id="int-length-receiver",  # a DynamicCache's length is an int
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(x, cache):
            n = DynamicCache().get_seq_length
            window = lambda: x[:, n():]
            return window()
        """,
        id="int-length-constructed-receiver-in-a-lambda",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(x, cache):
            if isinstance(cache, DynamicCache):
                n = cache.get_seq_length
                window = lambda: x[:, n():]
                return window()
            return x
        """,
        id="lambda-after-an-alias-of-a-narrowed-receiver",  # the walk knows n there: a DynamicCache's
    ),
]


@pytest.mark.parametrize("code", SILENT)
def test_a_closure_that_does_not_read_a_tensor_length_alias_is_silent(code: str) -> None:
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT) == []
    if "isinstance(cache, DynamicCache)" in code:  # the twin: from 5.25 on, that proves no int length
        lines = textwrap.dedent(code).lstrip("\n").splitlines()
        reported = [line for line, _ in codes(code)]
        assert reported and all("n()" in lines[line - 1] for line in reported)

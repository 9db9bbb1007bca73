"""A length bound on a way out of a block part way reaches the code that goes on from there
(`flow/jumps.py`): a `break` the code after the loop, a `continue` the next pass, and an
exception, `return` or `raise` inside a `try` its handlers and `finally`, or the code after a
`with` whose context manager may suppress it. Found by a third reading (2026-12-06): every reported
case was silent before, and each runs: a real `StaticCache`'s tensor length reaches the slice under
torch 2.13 and transformers 5.5.3. The silent cases say why they must stay silent."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT


def codes(code: str) -> list[tuple[int, str]]:
    text = textwrap.dedent(code).lstrip("\n")
    return [(finding.line, finding.code) for finding in analyze_source(text, "m.py")]


REPORTED = [
    pytest.param(
        """
        def trim(ids, caches):
            n = 0
            for c in caches:
                if c is not None:
                    n = c.get_seq_length()
                    break
            return ids[:, n:]
        """,
        [(7, "SLG002")],
        id="the-first-cache-then-break",
    ),
    pytest.param(
        """
        def trim(ids, cache):
            n = 0
            while True:
                n = cache.get_seq_length()
                break
            return ids[:, n:]
        """,
        [(6, "SLG002")],
        id="while-true-then-break",
    ),
    pytest.param(
        """
        def trim(ids, caches):
            n = 0
            for c in caches:
                n = c.get_seq_length()
                continue
            return ids[:, n:]
        """,
        [(6, "SLG002")],
        id="a-continue-after-the-binding",
    ),
    pytest.param(
        """
        def trim(ids, caches):
            n = 0
            for c in caches:
                if n:
                    print(ids[:, n:])
                n = c.get_seq_length()
                continue
        """,
        [(4, "SLG004"), (5, "SLG002")],
        id="a-continue-carries-the-length-into-the-next-pass",
    ),
    pytest.param(
        """
        def trim(ids, c):
            past = c.get_seq_length() if c is not None else 0
            while True:
                c = None
                break
            if c is None:
                return ids[:, past:]
            return ids
        """,
        [(7, "SLG002")],
        id="a-break-path-rebinds-the-tested-name",  # `past` may be the length asked before `c = None`
    ),
    pytest.param(
        """
        class IntCache:
            def __init__(self):
                self.n = 0

            def get_seq_length(self):
                return self.n

        def trim(ids, c, others):
            is_int = isinstance(c, IntCache)
            for c in others:
                break
            if is_int:
                n = c.get_seq_length()
                return ids[:, n:]
            return ids
        """,
        [(14, "SLG002")],
        id="a-flag-outlives-a-loop-that-rebinds-its-subject-and-breaks",
    ),
    pytest.param(
        """
        def trim(ids, cache, fast_path):
            try:
                n = cache.get_seq_length()
                return fast_path(ids, n)
            except NotImplementedError:
                return ids[:, n:]
        """,
        [(6, "SLG002")],
        id="a-handler-after-a-return-in-the-body",
    ),
    pytest.param(
        """
        def trim(ids, cache):
            n = 0
            try:
                n = cache.get_seq_length()
                raise RuntimeError
            except RuntimeError:
                pass
            return ids[:, n:]
        """,
        [(8, "SLG002")],
        id="a-handler-after-a-raise-in-the-body",
    ),
    pytest.param(
        """
        def trim(ids, cache, limit):
            try:
                n = cache.get_seq_length()
                n = min(int(n), limit.max_len)
            except AttributeError:
                pass
            return ids[:, n:]
        """,
        [(7, "SLG002")],
        id="a-handler-after-an-exception-between-two-bindings",
    ),
    pytest.param(
        """
        def trim(ids, cache, fast):
            n = 0
            try:
                n = cache.get_seq_length()
                return fast(n)
            finally:
                print(ids[:, n:])
        """,
        [(7, "SLG002")],
        id="a-finally-after-a-return-in-the-body",
    ),
    pytest.param(
        """
        import contextlib

        def trim(ids, cache, helper):
            n = 0
            with contextlib.suppress(Exception):
                n = cache.get_seq_length()
                return helper(n)
            return ids[:, n:]
        """,
        [(8, "SLG002")],
        id="a-with-that-suppresses-an-exception-after-the-binding",
    ),
    pytest.param(
        """
        def trim(ids, caches):
            n = 0
            for c in caches:
                try:
                    n = c.get_seq_length()
                    break
                finally:
                    pass
            return ids[:, n:]
        """,
        [(9, "SLG002")],
        id="a-break-inside-a-try-inside-the-loop",
    ),
    pytest.param(
        """
        def trim(ids, caches):
            n = 0
            for c in caches:
                if c is None:
                    break
                n = c.get_seq_length()
            else:
                n = 0
            return ids[:, n:]
        """,
        [(9, "SLG002")],
        id="a-break-in-a-later-pass-keeps-what-an-earlier-pass-bound",  # `else` runs only without a break
    ),
]


@pytest.mark.parametrize(("code", "expected"), REPORTED)
def test_reported(code: str, expected: list[tuple[int, str]]) -> None:
    assert codes(code) == expected


SILENT = [
    pytest.param(
        """
        def trim(ids, caches):
            n = 0
            for c in caches:
                n = int(c.get_seq_length())
                break
            return ids[:, n:]
        """,
        id="the-length-is-an-int-before-the-break",
    ),
    pytest.param(
        """
        def trim(ids, caches):
            for c in caches:
                n = c.get_seq_length()
                break
            else:
                return ids
            return ids
        """,
        id="the-length-is-never-used-after-the-loop",
    ),
    pytest.param(
        """
        def trim(ids, cache):
            try:
                n = int(cache.get_seq_length())
            except AttributeError:
                n = 0
            return ids[:, n:]
        """,
        id="an-int-in-the-body-and-in-the-handler",
    ),
    pytest.param(
        """
        def trim(ids, cache):
            n = 0
            try:
                helper()
            finally:
                n = int(cache.get_seq_length())
            return ids[:, n:]
        """,
        id="finally-binds-an-int",
    ),
    pytest.param(
        """
        import torch

        def trim(ids, cache):
            with torch.no_grad():
                n = cache.get_seq_length()
                n = int(n)
            return ids[:, n:]
        """,
        id="torch-no-grad-suppresses-nothing",  # a second reading: every `with` was taken to suppress
    ),
    pytest.param(
        """
        import torch
        from torch import inference_mode

        def trim(ids, cache):
            with inference_mode():
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
            return ids[:, n:]
        """,
        id="the-fixers-guard-inside-inference-mode",
    ),
    pytest.param(
        """
        import torch

        def trim(ids, cache, f):
            n = 0
            try:
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                f(n)
            finally:
                print(ids[:, n:])
            return ids[:, n:]
        """,
        id="no-exception-between-a-binding-and-its-guard",  # the fixer's own output must converge
    ),
    pytest.param(
        """
        import contextlib

        def trim(ids, cache):
            with contextlib.suppress(ValueError):
                n = cache.get_seq_length()
                n = n.item()
            return ids[:, n:]
        """,
        id="item-right-after-the-binding-even-where-an-exception-may-be-suppressed",
    ),
]


@pytest.mark.parametrize("code", SILENT)
def test_silent(code: str) -> None:
    assert codes(code) == []


def test_a_dynamic_cache_built_inside_torch_no_grad_keeps_its_kind() -> None:
    code = """
        import torch
        from transformers import DynamicCache

        def trim(ids, cache):
            with torch.no_grad():
                cache = DynamicCache()
                x = 1
            n = cache.get_seq_length()
            return ids[:, n:]
        """
    text = textwrap.dedent(code).lstrip("\n")
    assert analyze_source(text, "m.py", releases=DYNAMIC_CACHE_COUNTS_INT) == []


def test_finally_blocks_nested_deep_in_finally_blocks_are_still_walked() -> None:
    """Each level walks its `finally` twice (every way out, then the way on) down to
    `MAX_FINALLY_DEPTH`, once below it, so that the walk does not double with every level."""
    body = "n = cache.get_seq_length()\nhelper()\n"
    for _ in range(16):
        body = "try:\n    helper()\nfinally:\n" + textwrap.indent(body, "    ")
    code = "def trim(ids, cache):\n" + textwrap.indent(body + "return ids[:, n:]\n", "    ")
    assert [finding.code for finding in analyze_source(code, "m.py")] == ["SLG002"]

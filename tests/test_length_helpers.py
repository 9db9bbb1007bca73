"""A helper that returns the length of the cache it is given (`return cache.get_seq_length()`, or a
value computed from it) is judged at each call by what the call passes (`Summary.source_receivers`):
an int-length cache, or None, makes the call no source, as `cache.get_seq_length()` in its place
would be none. Every helper form is crossed with every kind of argument; the twins that must stay
reported follow: a tensor-length or unknown argument, a helper that rebinds its parameter, that may
return another object's length, or whose parameter the call leaves to its default."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.settings import Settings
from tests import package_files

HELPERS = """\
    from transformers import DynamicCache, StaticCache

    from .lengths import imported_length


    def past_length(cache):
        return cache.get_seq_length()


    def holds_tokens(cache):
        return cache.get_seq_length() > 0


    class Lengths:
        @staticmethod
        def of(cache):
            return cache.get_seq_length()


    class Counter:
        def __init__(self):
            self.n = 0

        def update(self, keys):
            self.n += keys.shape[-2]

        def get_seq_length(self):
            return self.n


    class Runner:
        def past_length(self, cache):
            return cache.get_seq_length()

        def step(self, ids, cache, config):
"""

HELPER_CALLS = {
    "module-function": ("return ids[:, past_length({A}):]", "SLG002"),
    "method-through-self": ("return ids[:, self.past_length({A}):]", "SLG002"),
    "staticmethod-through-class": ("return ids[:, Lengths.of({A}):]", "SLG002"),
    "function-of-another-module": ("return ids[:, imported_length({A}):]", "SLG002"),
    "truth-value-helper": ("if holds_tokens({A}):\n    return ids", "SLG004"),
}

ARGUMENTS = {
    "dynamic-cache": ("", "DynamicCache()", False),
    "none": ("", "None", False),
    "narrowed-to-an-int-length-class": ("if isinstance(cache, Counter):", "cache", False),
    "static-cache": ("", "StaticCache(config=config, max_cache_len=8)", True),
    "unknown-parameter": ("", "cache", True),
}

LENGTHS_MODULE = """\
    def imported_length(cache):
        return cache.get_seq_length()
"""


def codes(tmp_path: Path, body: str, helpers: str = HELPERS) -> list[str]:
    package = package_files.write_package(
        tmp_path, {"lengths": LENGTHS_MODULE, "runner": textwrap.dedent(helpers) + textwrap.indent(body, " " * 8)}
    )
    checked = check_path(str(package / "runner.py"), Settings())
    assert not checked.error, checked.error
    return [finding.code for finding in checked.findings]


def call_body(call: str, argument: str, prelude: str) -> str:
    use = call.replace("{A}", argument)
    return f"{prelude}\n{textwrap.indent(use, '    ')}\n" if prelude else f"{use}\n"


@pytest.mark.parametrize("argument", ARGUMENTS, ids=ARGUMENTS)
@pytest.mark.parametrize("helper", HELPER_CALLS, ids=HELPER_CALLS)
def test_a_call_is_judged_by_what_it_passes(tmp_path: Path, helper: str, argument: str) -> None:
    call, code = HELPER_CALLS[helper]
    prelude, expression, reported = ARGUMENTS[argument]
    assert codes(tmp_path, call_body(call, expression, prelude)) == ([code] if reported else [])


TWINS = """\
    from transformers import DynamicCache


    def rebound(cache):
        cache = cache.inner
        return cache.get_seq_length()


    def defaulted(cache=None):
        return cache.get_seq_length()


    def either(cache, other):
        return cache.get_seq_length() if other is None else other.get_seq_length()


    def of_an_attribute(holder):
        return holder.cache.get_seq_length()


    class Runner:
        def step(self, ids, cache, config):
"""

REPORTED = {
    "a helper that rebinds its parameter": "return ids[:, rebound(DynamicCache()):]",
    "a parameter left to its default": "return ids[:, defaulted():]",
    "a helper that may return another argument's length": "return ids[:, either(DynamicCache(), cache):]",
    "a helper that asks an attribute of its parameter": "return ids[:, of_an_attribute(DynamicCache()):]",
    "arguments passed through *args": "return ids[:, either(*[DynamicCache(), None]):]",
}


@pytest.mark.parametrize("body", REPORTED.values(), ids=REPORTED.keys())
def test_must_report(tmp_path: Path, body: str) -> None:
    assert codes(tmp_path, body + "\n", TWINS) == ["SLG002"]


def test_each_length_the_helper_may_return_is_judged_by_its_own_argument(tmp_path: Path) -> None:
    """`either(a, b)` returns `a`'s or `b`'s length: int-length caches for both (or None for one) make
    the call no source."""
    body = "return ids[:, either(DynamicCache(), DynamicCache()):], ids[:, either(DynamicCache(), None):]\n"
    assert codes(tmp_path, body, TWINS) == []

"""Line breaks: a file whose lines end in `\\r\\n` (a Windows checkout) or in `\\r` alone is read as
Python reads it. Every module of the two generated matrices (source x use, class facts) gives, field
by field, the findings of the same module with `\\n` line breaks; a class-fact module whose base sits
in a sibling module has the sibling written with the same line breaks (the package view searches
other modules' text). Then the reductions of what this found: a name bound once to False in a CRLF
file, a method of another module found only in an LF file, a form feed in a comment shifting the
lines of the override search, and a module's first line behind a byte order mark."""

from __future__ import annotations

import codecs
import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path, check_text
from lint_rules.engine.facts.package_methods import only_overrides_extend
from lint_rules.findings import Finding
from lint_rules.settings import Settings
from tests import class_fact_matrix, source_use_matrix

LINE_BREAKS = pytest.mark.parametrize("line_break", ["\r\n", "\r"], ids=["crlf", "cr"])


def fields(findings: tuple[Finding, ...]) -> list[tuple[object, ...]]:
    """What a reader sees of each finding (the plan's inserted text carries the file's line breaks)."""
    return [
        (f.code, f.message, f.span, f.origin, f.compiled_region, f.function, f.fix.kind, f.fix.safety) for f in findings
    ]


def checked_in_package(root: Path, modules: dict[str, str], line_break: str, target: str) -> list[tuple[object, ...]]:
    package = root / "pkg"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / f"{name}.py").write_bytes(text.replace("\n", line_break).encode())
    return fields(check_path(str(package / f"{target}.py"), Settings()).findings)


@LINE_BREAKS
def test_every_source_and_use_pair_is_found_alike(line_break: str) -> None:
    differing = []
    for case in source_use_matrix.cases():
        expected = fields(check_text("m.py", case.module, Settings()).findings)
        found = fields(check_text("m.py", case.module.replace("\n", line_break), Settings()).findings)
        if found != expected:
            differing.append(case.id)
    assert differing == []


@LINE_BREAKS
def test_every_class_fact_case_is_found_alike(line_break: str, tmp_path: Path) -> None:
    differing = []
    for number, case in enumerate(class_fact_matrix.cases()):
        if case.shape.sibling:
            modules = {"base": case.base, "module": case.module}
            expected = checked_in_package(tmp_path / f"lf{number}", modules, "\n", "module")
            found = checked_in_package(tmp_path / f"other{number}", modules, line_break, "module")
        else:
            expected = fields(check_text("module.py", case.module, Settings()).findings)
            found = fields(check_text("module.py", case.module.replace("\n", line_break), Settings()).findings)
        if found != expected:
            differing.append(case.id)
    assert differing == []


FLAG_BOUND_ONCE = """
def generate(ids, cache):
    use_static = {value}
    n = cache.get_seq_length()
    if use_static:
        ids = ids[:, n:]
    return ids
"""


@pytest.mark.parametrize("line_break", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize(("value", "reported"), [("False", []), ("True", [6])], ids=["silent-false", "twin-true"])
def test_a_name_bound_once_to_a_bool_decides_its_branch_whatever_the_line_breaks(
    line_break: str, value: str, reported: list[int]
) -> None:
    """The lines binding a name to True or False are found by a text search for `\\n`: a CRLF file
    kept a finding its LF copy did not have."""
    text = FLAG_BOUND_ONCE.format(value=value).replace("\n", line_break)
    assert [finding.line for finding in check_text("m.py", text, Settings()).findings] == reported


POSITIONS = """\
import torch


class PositionHelper:
    def offset_of(self, cache):
        return cache.get_seq_length()

    @staticmethod
    def trim(ids, past):
        return ids[:, past:]
"""
CALLER = """\
from .positions import PositionHelper


def generate(ids, cache, helper: PositionHelper):
    return ids[:, helper.offset_of(cache):]


def prefill(ids, cache):
    return PositionHelper.trim(ids, cache.get_seq_length())
"""


@pytest.mark.parametrize("line_break", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_methods_of_another_module_are_found_whatever_its_line_breaks(line_break: str, tmp_path: Path) -> None:
    """The methods of another module's class are looked for in its text, after a `\\n`: with `\\r`
    line breaks in that module, both findings of its caller were missed."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "caller.py").write_text(textwrap.dedent(CALLER))
    found = checked_in_package(tmp_path, {"positions": POSITIONS}, line_break, "caller")
    assert [(finding[0], finding[2].line) for finding in found] == [("SLG002", 5), ("SLG002", 9)]


OVERRIDE_AND_A_CALL = """\
class Cache:
    def crop(self, n):  # keeps{separator}    the base's behaviour
        return super().crop(n)

    def helper(self):
        return self.other.crop(3)
"""


@pytest.mark.parametrize("separator", ["", "\f", "\x1c", "\u2028"], ids=["none", "form-feed", "x1c", "u2028"])
def test_a_separator_python_does_not_break_lines_at_leaves_the_override_search_on_its_lines(separator: str) -> None:
    """`only_overrides_extend` reads the lines Python counts: `str.splitlines` also splits at a form
    feed or U+2028 in a comment, which shifted every line after it and took the call in `helper`
    for a line of the override (a module skipped that calls the method)."""
    text = OVERRIDE_AND_A_CALL.format(separator=separator)
    assert only_overrides_extend(text, "crop") is False
    assert only_overrides_extend(text.rsplit("\n\n", 1)[0] + "\n", "crop") is True


@pytest.mark.parametrize("line_break", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_another_module_that_starts_with_a_byte_order_mark_is_read_from_its_first_line(
    line_break: str, tmp_path: Path
) -> None:
    """`def offset_of(cache):` on the first line of a module saved with a UTF-8 byte order mark (a
    Windows editor's) is found like any other."""
    package = tmp_path / "tiny"
    package.mkdir()
    (package / "__init__.py").write_text("")
    helpers = "def offset_of(cache):\n    return cache.get_seq_length()\n"
    (package / "helpers.py").write_bytes(codecs.BOM_UTF8 + helpers.replace("\n", line_break).encode())
    caller = "from .helpers import offset_of\n\n\ndef generate(ids, cache):\n    print(cache.get_seq_length())\n"
    caller += "    return ids[:, offset_of(cache):]\n"
    (package / "generation.py").write_text(caller)
    findings = check_path(str(package / "generation.py"), Settings()).findings
    assert [(finding.line, finding.code) for finding in findings] == [(6, "SLG002")]

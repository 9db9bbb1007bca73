"""Spacing: PEP 8 writes `f(x)` and `def f(x)`; Python also takes `f (x)`, `def  f (x)` and
`super ()`. The engine's text searches (which modules to read, which names a module defines or
calls) look for the PEP 8 literal first and then for any spacing (`module_text.has_call`,
`module_text.defines`). Each test writes the same code both ways and expects the same findings;
before, the spaced copies lost findings across modules (and `def  seen_tokens` took a silencing
fact: tests/test_path_facts.py). Spaces around a dot (`a . f(x)`) are not looked for (docs/limits.md)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine.facts.module_text import class_header_end, top_level_def_start
from lint_rules.findings import Finding
from lint_rules.settings import Settings
from tests.test_compiled_methods import MODELING_WITH_RECEIVERS, OVERRIDING_MODEL, llama_package
from tests.test_package_matrix import CASES, PackageCase
from tests.test_package_view import MODELING_WITH_METHODS, POSITIONS, write_package

CONTEXTS = ("slice-bound", "torch-arange")
"""A harmful use for SLG002 and one for SLG003: how the length arrives is what the spacing changes."""


def spaced(text: str) -> str:
    """A space before every parenthesis that follows a name: calls, definitions, `super ()`."""
    return re.sub(r"([A-Za-z_]\w*)\(", r"\1 (", text)


def unspaced(text: str) -> str:
    return text


def written(root: Path, case: PackageCase, spelling: Callable[[str], str]) -> Path:
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, text in case.form.modules.items():
        (package / f"{name}.py").write_text(spelling(textwrap.dedent(text)))
    module = package / "module.py"
    module.write_text(spelling(case.module))
    return module


def seen(findings: tuple[Finding, ...] | list[Finding]) -> list[tuple[object, ...]]:
    """What a reader sees, the columns aside (a space moves them)."""
    return [(f.line, f.code, f.function, f.compiled_region, f.fix.safety) for f in findings]


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.context.name in CONTEXTS],
    ids=lambda case: case.id,
)
def test_every_way_a_length_comes_from_another_module_is_followed_however_spaced(
    case: PackageCase, tmp_path: Path
) -> None:
    expected = seen(check_path(str(written(tmp_path / "pep8", case, unspaced)), Settings()).findings)
    found = seen(check_path(str(written(tmp_path / "spaced", case, spaced)), Settings()).findings)
    assert found == expected


def test_a_method_reached_through_super_with_a_space_is_compiled(tmp_path: Path) -> None:
    """`super ()._prepare_beam_mask(...)` in a `forward` of another module compiles the method."""
    modeling = OVERRIDING_MODEL.replace(
        "return self.lm_head(attention_mask)", "return super ()._prepare_beam_mask(attention_mask, past_key_values)"
    )
    package = llama_package(tmp_path, modeling)
    findings = check_path(str(package / "masking_utils.py"), Settings()).findings
    regions = {f.compiled_region for f in findings if f.function.endswith("_prepare_beam_mask")}
    assert regions == {"called from LlamaForCausalLM.forward in modeling_llama.py (line 12), which is forward method"}


@pytest.mark.parametrize("gap", [" ", " " * 12], ids=["pep8", "aligned"])
def test_an_annotated_receiver_is_followed_however_far_its_class_is_aligned(tmp_path: Path, gap: str) -> None:
    """`converter:            AttentionMaskConverter` in a `forward` of another module shows the
    receiver's class as `converter: AttentionMaskConverter` does."""
    modeling = MODELING_WITH_RECEIVERS.replace(
        "converter: AttentionMaskConverter", f"converter:{gap}AttentionMaskConverter"
    )
    package = llama_package(tmp_path, modeling)
    findings = check_path(str(package / "masking_utils.py"), Settings()).findings
    regions = {f.compiled_region for f in findings if f.function.endswith("to_4d")}
    assert regions == {"called from LlamaForCausalLM.forward in modeling_llama.py (line 9), which is forward method"}


@pytest.mark.parametrize("header", ["class PositionHelper:", "class  PositionHelper:", "class\tPositionHelper:"])
def test_methods_of_a_class_of_another_module_are_followed_however_its_header_is_spaced(
    tmp_path: Path, header: str
) -> None:
    positions = textwrap.dedent(POSITIONS).replace("class PositionHelper:", header)
    package = write_package(tmp_path, {"positions": positions, "modeling": MODELING_WITH_METHODS})
    findings = check_path(str(package / "modeling.py"), Settings()).findings
    assert [(f.line, f.code) for f in findings] == [(11, "SLG003"), (16, "SLG002"), (20, "SLG002")]


@pytest.mark.parametrize(
    ("data", "start"),
    [
        (b"def f(x):\n    pass\n", 0),
        (b"import m\ndef f(x):\n    pass\n", 9),
        (b"import m\ndef  f (x):\n    pass\n", 9),
        (b"async\tdef f(x):\n    pass\n", 0),
        (b"import m\nasync def f(x):\n    pass\n", 9),
        (b"class C:\n    def f(x):\n        pass\n", -1),
        (b"def ff(x):\n    pass\n", -1),
        (b"def f\n", -1),
    ],
)
def test_where_a_module_level_def_starts(data: bytes, start: int) -> None:
    assert top_level_def_start(data, "f") == start


@pytest.mark.parametrize(
    ("data", "end"),
    [
        (b"class C:\n", 7),
        (b"import m\nclass C(B):\n", 16),
        (b"import m\nclass  C :\n", 17),
        (b"class\tC:\n", 7),
        (b"class CC:\nclass C:\n", 17),
        (b"def f():\n    class C:\n        pass\n", -1),
        (b"class CC:\n", -1),
    ],
)
def test_where_a_class_header_ends(data: bytes, end: int) -> None:
    assert class_header_end(data, "C") == end

"""Spacing: PEP 8 writes `f(x)` and `def f(x)`; Python also takes `f (x)`, `def  f (x)` and
`super ()`. The engine's text searches (which modules to read, which names a module defines or
calls) look for the PEP 8 literal first and then for any spacing (`module_text.has_call`,
`module_text.defines`). Each test writes the same code both ways and expects the same findings;
before, the spaced copies lost findings across modules and one silencing fact held where it must
not. Spaces around a dot (`a . f(x)`) are not looked for (README Limits)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine import analyze_source
from lint_rules.findings import Finding
from lint_rules.settings import Settings
from tests.test_compiled_methods import OVERRIDING_MODEL, llama_package
from tests.test_package_matrix import CASES, PackageCase

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


SEEN_TOKENS_OF_ITS_OWN = """
from transformers.cache_utils import Cache

class MyCache(Cache):
    @property
    def{after_def}seen_tokens{before_parenthesis}(self):
        return self._seen

def prepare_inputs_for_generation(input_ids, past_key_values=None, attention_mask=None):
    if isinstance(past_key_values, Cache):
        cache_length = past_key_values.get_seq_length()
        past_length = past_key_values.seen_tokens
        if cache_length < past_length and attention_mask is not None:
            attention_mask = attention_mask[:, -(cache_length + input_ids.shape[1]) :]
    return input_ids, attention_mask
"""


@pytest.mark.parametrize(
    ("after_def", "before_parenthesis"),
    [(" ", ""), ("  ", ""), ("\t", ""), (" ", " ")],
    ids=["pep8", "two-spaces", "tab", "space-before-parenthesis"],
)
def test_a_module_that_defines_seen_tokens_keeps_its_findings_however_spaced(
    after_def: str, before_parenthesis: str
) -> None:
    """Must report (the twin of `seen-tokens-read` in test_path_facts): `c.seen_tokens` ends the path only
    where no cache of the module's own may answer it; `def  seen_tokens` silenced both findings."""
    code = SEEN_TOKENS_OF_ITS_OWN.format(after_def=after_def, before_parenthesis=before_parenthesis)
    assert [(f.line, f.code) for f in analyze_source(textwrap.dedent(code), "m.py")] == [(13, "SLG004"), (14, "SLG002")]


def test_a_method_reached_through_super_with_a_space_is_compiled(tmp_path: Path) -> None:
    """`super ()._prepare_beam_mask(...)` in a `forward` of another module compiles the method."""
    modeling = OVERRIDING_MODEL.replace(
        "return self.lm_head(attention_mask)", "return super ()._prepare_beam_mask(attention_mask, past_key_values)"
    )
    package = llama_package(tmp_path, modeling)
    findings = check_path(str(package / "masking_utils.py"), Settings()).findings
    regions = {f.compiled_region for f in findings if f.function.endswith("_prepare_beam_mask")}
    assert regions == {"called from LlamaForCausalLM.forward in modeling_llama.py (line 12), which is forward method"}

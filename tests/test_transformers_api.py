"""The table of transformers functions that use a length parameter as an int
(`lint_rules/engine/facts/transformers_api.py`): a length passed to one is reported at the argument, and
every entry matches the real function of each checked release that has it (same parameters in the
same order, the use on the line the entry names); a release without the function is not listed."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.facts.transformers_api import CHECKED_RELEASES, INT_PARAMETERS, IntParameter
from tests.test_cache_table import release_path

USER_CODE = textwrap.dedent(
    """\
    from transformers.modeling_attn_mask_utils import AttentionMaskConverter, _prepare_4d_causal_attention_mask


    def mask(cache, attention_mask, ids, embeds):
        past = cache.get_seq_length()
        causal = _prepare_4d_causal_attention_mask(attention_mask, ids.shape, embeds, past)
        if AttentionMaskConverter._ignore_causal_mask_sdpa(attention_mask, embeds, past_key_values_length=past):
            return None
        return causal


    def with_an_int(attention_mask, ids, embeds):
        return _prepare_4d_causal_attention_mask(attention_mask, ids.shape, embeds, 4)


    def another_function_of_the_same_name(cache, ids):
        from mypackage.masks import _prepare_4d_causal_attention_mask

        return _prepare_4d_causal_attention_mask(None, ids.shape, None, cache.get_seq_length())
    """
)


def test_a_length_passed_to_a_table_function_is_reported_at_the_argument() -> None:
    findings = analyze_source(USER_CODE, "user.py")
    assert [(finding.line, finding.code) for finding in findings] == [(6, "SLG001"), (7, "SLG001")]
    first, second = findings
    assert (
        "to `_prepare_4d_causal_attention_mask()` (line 349 of transformers/modeling_attn_mask_utils.py"
        in first.message
    )
    assert "`AttentionMaskConverter._ignore_causal_mask_sdpa()`" in second.message


def release_file(version: str, module: str) -> Path:
    roots = release_path(version)
    if roots:
        return Path(roots[0]).joinpath(*module.split(".")).with_suffix(".py")
    import transformers

    return Path(transformers.__file__).parent.joinpath(*module.split(".")[1:]).with_suffix(".py")


def function_node(path: Path, qualified: str) -> ast.FunctionDef | None:
    if not path.is_file():
        return None
    body: list[ast.stmt] = ast.parse(path.read_text(encoding="utf-8")).body
    *owners, name = qualified.split(".")
    for owner in owners:
        body = next((node.body for node in body if isinstance(node, ast.ClassDef) and node.name == owner), [])
    return next((node for node in body if isinstance(node, ast.FunctionDef) and node.name == name), None)


@pytest.mark.parametrize("version", CHECKED_RELEASES)
@pytest.mark.parametrize("entry", INT_PARAMETERS, ids=[entry.function for entry in INT_PARAMETERS])
def test_the_entry_matches_the_release(entry: IntParameter, version: str) -> None:
    path = release_file(version, entry.module)
    function = function_node(path, entry.function)
    assert (function is not None) == (version in entry.releases), f"{entry.function} in {version}"
    if function is None:
        return
    names = [argument.arg for argument in [*function.args.posonlyargs, *function.args.args]]
    assert tuple(name for name in names if name not in ("self", "cls")) == entry.parameters
    line = path.read_text(encoding="utf-8").splitlines()[entry.line - 1]
    assert entry.use.split("`")[1] in line, (entry.line, line)

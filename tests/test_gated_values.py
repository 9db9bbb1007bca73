"""A value computed only under a `not is_torchdynamo_compiling() and ...` gate inside a compiled region
(issue 25, pattern 9): while Dynamo or export traces, the gate makes the value `False` and the length
is never asked; eagerly, the sync is the gate author's choice. The length is no source there, so the
fixer's default run adds no `.item()` to the `forward` (which removes no sync and which transformers'
model linter, TRF056, rejects). The same code on the host, and a check that is no such gate
(`is_exporting()`, a model's own method, TorchScript), stay reported.

The model is reduced from transformers 4.5x's Qwen2-VL `forward` (`prefill_noncompiled_stage`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from lint_rules.checking import check_path
from lint_rules.settings import Settings
from tests.package_files import write_package as write_package_files

MODELING_QWEN2_VL = textwrap.dedent(
    """\
    import torch
    from torch import nn

    from ...utils import is_torchdynamo_compiling


    class Qwen2VLModel(nn.Module):
        def forward(self, input_ids, past_key_values=None, cache_position=None):
            prefill_compiled_stage = is_torchdynamo_compiling() and (
                input_ids is not None and input_ids.shape[1] != 1
            )
            prefill_noncompiled_stage = not is_torchdynamo_compiling() and (
                (cache_position is not None and cache_position[0] == 0)
                or (past_key_values is None or past_key_values.get_seq_length() == 0)
            )
            if (prefill_compiled_stage or prefill_noncompiled_stage) or self.rope_deltas is None:
                self.rope_deltas = None
            trimmed = not torch.compiler.is_compiling() and input_ids[:, past_key_values.get_seq_length() :].numel()
            if trimmed:
                input_ids = input_ids[:, 1:]
            start = past_key_values.get_seq_length() if not is_torchdynamo_compiling() else 0
            if start > 0:
                input_ids = input_ids[:, 1:]
            return input_ids
    """
)
UTILS = "def is_torchdynamo_compiling():\n    return False\n"


def write_package(root: Path, modeling: str) -> Path:
    package = write_package_files(root, {"utils": UTILS, "models.qwen2_vl.modeling_qwen2_vl": modeling}, "tiny")
    return package / "models" / "qwen2_vl" / "modeling_qwen2_vl.py"


def reported_lines(path: Path) -> list[tuple[int, str]]:
    return [(finding.line, finding.code) for finding in check_path(str(path), Settings()).findings]


def test_lengths_asked_under_the_gate_of_their_own_expression_in_a_forward_are_silent(tmp_path: Path) -> None:
    """Must stay silent: `prefill_noncompiled_stage` is False while tracing; the slice inside the
    gated operand and the if-expression arm run only eagerly."""
    modeling = write_package(tmp_path, MODELING_QWEN2_VL)
    assert reported_lines(modeling) == []


def test_the_fixer_adds_no_guard_to_the_forward(tmp_path: Path) -> None:
    modeling = write_package(tmp_path, MODELING_QWEN2_VL)
    for settings in (Settings(), Settings(unsafe_fixes=True)):
        assert fix_text(str(modeling), MODELING_QWEN2_VL, settings) == MODELING_QWEN2_VL


HOST = MODELING_QWEN2_VL.replace(
    "class Qwen2VLModel(nn.Module):\n    def forward(", "class Qwen2VLModel:\n    def prepare("
)
TWINS = [
    pytest.param(HOST, "host code: the gate always holds, the value is a tensor", id="host"),
    pytest.param(
        MODELING_QWEN2_VL.replace("not is_torchdynamo_compiling()", "not torch.compiler.is_exporting()")
        .replace("not torch.compiler.is_compiling()", "not torch.compiler.is_exporting()")
        .replace("if not is_torchdynamo_compiling() else", "if not torch.compiler.is_exporting() else"),
        "is_exporting() is False under torch.compile",
        id="is-exporting",
    ),
    pytest.param(
        MODELING_QWEN2_VL.replace("is_torchdynamo_compiling()", "self.is_compiling()").replace(
            "torch.compiler.is_compiling()", "self.is_compiling()"
        ),
        "a model's own method proves nothing",
        id="own-method",
    ),
    pytest.param(
        MODELING_QWEN2_VL.replace("    def forward(", "    @torch.jit.script_method\n    def forward("),
        "TorchScript leaves is_compiling() False",
        id="torchscript",
    ),
]


@pytest.mark.parametrize(("modeling", "why"), TWINS)
def test_the_same_values_without_a_gate_that_holds_while_tracing_are_reported(
    tmp_path: Path, modeling: str, why: str
) -> None:
    """Must report: the gated truth test (`prefill_noncompiled_stage`), the slice bound in the gated
    operand, and the truth test on the if-expression's value."""
    path = write_package(tmp_path, modeling)
    lines = reported_lines(path)
    assert [code for _, code in lines] == ["SLG004", "SLG002", "SLG004"], why


def test_the_fixer_guards_the_host_twin(tmp_path: Path) -> None:
    path = write_package(tmp_path, HOST)
    fixed = fix_text(str(path), HOST, Settings())
    assert "prefill_noncompiled_stage = int(prefill_noncompiled_stage.item())" in fixed

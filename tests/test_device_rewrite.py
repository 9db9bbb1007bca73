"""The device-preserving fix: `torch.arange(a, a + n, ...)` -> `torch.arange(n, ...) + a` where the
guard would break the graph. Before/after on dedented strings, the cases it must decline with their
reason, and the safety net (re-analysis silent, idempotent, nothing else changed)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from fixers.fixing import applicable_plans
from fixers.rewrite import main
from fixers.verify import rewrite_problem
from lint_rules.checking import check_text
from lint_rules.findings import FixKind, FixSafety
from lint_rules.settings import Settings

DEFAULT = Settings()
UNSAFE = Settings(unsafe_fixes=True)


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def assert_fixed(before: str, after: str, settings: Settings = DEFAULT) -> None:
    fixed = fix_text("model.py", code(before), settings)
    assert fixed == code(after)
    assert fix_text("model.py", fixed, settings) == fixed, "a second run must change nothing"
    left = check_text("model.py", fixed, settings).findings
    assert not applicable_plans(left, settings.unsafe_fixes)


def forward(body: str) -> str:
    """`body` as the body of a compiled forward that binds `past` from the cache."""
    lines = textwrap.indent(code(body), " " * 8)
    return (
        "import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x, cache):\n"
        "        past = cache.get_seq_length()\n" + lines
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "return torch.arange(past, past + x.shape[1], dtype=torch.long, device=x.device)\n",
            "return torch.arange(x.shape[1], dtype=torch.long, device=x.device) + past\n",
            id="two-bounds-with-device",
        ),
        pytest.param(
            "return torch.arange(past, x.shape[1] + past, device=x.device)  # positions\n",
            "return torch.arange(x.shape[1], device=x.device) + past  # positions\n",
            id="span-on-the-left-comment-kept",
        ),
        pytest.param(
            "end = past + x.shape[1]\nreturn torch.arange(end - x.shape[1], end, device=x.device)\n",
            "end = past + x.shape[1]\nreturn torch.arange(x.shape[1], device=x.device) + (end - x.shape[1])\n",
            id="start-as-end-minus-span",
        ),
        pytest.param(
            "return torch.arange(past, past + x.shape[1], device=x.device).unsqueeze(0)\n",
            "return (torch.arange(x.shape[1], device=x.device) + past).unsqueeze(0)\n",
            id="parenthesized-for-a-method",
        ),
        pytest.param(
            "return 2 * torch.arange(past, past + x.shape[1], device=x.device)\n",
            "return 2 * (torch.arange(x.shape[1], device=x.device) + past)\n",
            id="parenthesized-for-an-operator",
        ),
        pytest.param(
            "start = past + 1\nreturn torch.arange(start + 1, start + 1 + x.shape[1], device=x.device)\n",
            "start = past + 1\nreturn torch.arange(x.shape[1], device=x.device) + (start + 1)\n",
            id="compound-start-parenthesized",
        ),
        pytest.param(
            """
            return torch.arange(
                past,
                past + x.shape[1],
                dtype=torch.int64,
                device=x.device,
            )
            """,
            """
            return torch.arange(
                x.shape[1],
                dtype=torch.int64,
                device=x.device,
            ) + past
            """,
            id="multi-line-layout-kept",
        ),
        pytest.param(
            """
            positions = torch.arange(past, past + x.shape[1])
            positions = positions.view(1, 1, -1).expand(3, 2, -1).to(x.device)
            return positions
            """,
            """
            positions = torch.arange(x.shape[1], device=x.device) + past
            positions = positions.view(1, 1, -1).expand(3, 2, -1).to(x.device)
            return positions
            """,
            id="no-device-followed-to-the-move",
        ),
    ],
)
def test_rewrite_in_a_compiled_region(before: str, after: str) -> None:
    assert_fixed(forward(before), forward(after))


def test_the_plan_is_safe_and_names_the_rewrite() -> None:
    findings = check_text("m.py", forward("return torch.arange(past, past + x.shape[1], device=x.device)\n"), DEFAULT)
    assert [finding.fix.kind for finding in findings.findings] == [FixKind.DEVICE_REWRITE] * 2
    assert all(finding.fix.safety is FixSafety.SAFE for finding in findings.findings)
    assert len(set(finding.fix for finding in findings.findings)) == 1, "both bounds share one edit"


def test_host_code_keeps_the_guard() -> None:
    before = """
        import torch

        def positions(cache, x):
            past = cache.get_seq_length()
            return torch.arange(past, past + x.shape[1], device=x.device)
    """
    after = """
        import torch

        def positions(cache, x):
            past = cache.get_seq_length()
            if isinstance(past, torch.Tensor):
                past = int(past.item())
            return torch.arange(past, past + x.shape[1], device=x.device)
    """
    assert_fixed(before, after)


def test_only_the_rewritable_uses_are_rewritten_and_the_others_say_why() -> None:
    source = forward("""
        positions = torch.arange(past, past + x.shape[1], device=x.device)
        return positions, x[:, past:]
    """)
    findings = check_text("m.py", source, DEFAULT).findings
    kinds = {finding.code: finding.fix for finding in findings}
    assert kinds["SLG003"].kind is FixKind.DEVICE_REWRITE
    assert kinds["SLG002"].safety is FixSafety.UNSAFE
    assert "not rewritten on the device: a slice bound" in kinds["SLG002"].reason
    fixed = fix_text("m.py", source, DEFAULT)
    assert "torch.arange(x.shape[1], device=x.device) + past" in fixed
    assert "x[:, past:]" in fixed and "isinstance" not in fixed


def test_unsafe_fixes_add_the_guard_and_keep_the_rewrite() -> None:
    before = forward("""
        positions = torch.arange(past, past + x.shape[1], device=x.device)
        return positions, x[:, past:]
    """)
    fixed = fix_text("m.py", before, UNSAFE)
    assert "        if isinstance(past, torch.Tensor):\n            past = int(past.item())\n" in fixed
    assert "torch.arange(x.shape[1], device=x.device) + past" in fixed
    assert fix_text("m.py", fixed, UNSAFE) == fixed


@pytest.mark.parametrize(
    ("body", "why"),
    [
        pytest.param(
            "return torch.arange(past, past + x.shape[1])\n",
            "has no `device=` and its value is not moved",
            id="no-device-not-moved",
        ),
        pytest.param(
            "positions = torch.arange(past, past + x.shape[1])\nother = positions.view(1, -1).to(x.device)\n"
            "return positions, other\n",
            "has no `device=` and its value is not moved",
            id="moved-into-another-name",
        ),
        pytest.param(
            "positions = torch.arange(past, past + x.shape[1])\npositions = positions.to(torch.float32)\n"
            "return positions\n",
            "has no `device=` and its value is not moved",
            id="to-a-dtype-is-no-device",
        ),
        pytest.param(
            "return torch.arange(past, past + x.shape[1], dtype=torch.int32, device=x.device)\n",
            "would change the result's dtype",
            id="narrow-dtype",
        ),
        pytest.param(
            "return torch.arange(past, past + 8, 2, device=x.device)\n",
            "only two positional bounds",
            id="step",
        ),
        pytest.param(
            "return torch.arange(past + x.shape[1], device=x.device)\n",
            "is a size",
            id="one-bound-is-a-size",
        ),
        pytest.param(
            "return torch.arange(past, x.shape[1], device=x.device)\n",
            "is not `n` in `a + n` or `b - n`",
            id="span-not-an-int-expression",
        ),
        pytest.param(
            "return torch.arange(past, past + self.length(), device=x.device)\n",
            "would be evaluated in another order",
            id="impure-span",
        ),
        pytest.param(
            "return torch.arange(start=past, end=past + 4, device=x.device)\n",
            "only two positional bounds",
            id="keyword-bounds",
        ),
    ],
)
def test_declined_with_the_reason(body: str, why: str) -> None:
    """Must stay as written by default: no rewrite identical for every value; the reason says why."""
    source = forward(body)
    findings = check_text("m.py", source, DEFAULT).findings
    assert findings
    assert all(finding.fix.kind is not FixKind.DEVICE_REWRITE for finding in findings)
    assert any(why in finding.fix.reason for finding in findings), [finding.fix.reason for finding in findings]
    assert fix_text("m.py", source, DEFAULT) == source


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(forward("return torch.arange(x.shape[1], device=x.device) + past\n"), id="already-rewritten"),
        pytest.param(
            forward("positions = torch.arange(x.shape[1], device=x.device) + past\nreturn positions.unsqueeze(0)\n"),
            id="rewritten-then-used-as-a-tensor",
        ),
    ],
)
def test_the_rewritten_form_is_silent(source: str) -> None:
    """The compile-friendly pattern the engine already knows: nothing to report, nothing to fix."""
    assert not check_text("m.py", source, DEFAULT).findings


def test_rewrite_only_adds_no_torch_import() -> None:
    before = code("""
        import torch as th


        class Model(th.nn.Module):
            def forward(self, x, cache):
                import torch

                past = cache.get_seq_length()
                return th.arange(past, past + x.shape[1], device=x.device)
    """)
    fixed = fix_text("m.py", before, DEFAULT)
    assert fixed == before.replace(
        "th.arange(past, past + x.shape[1], device=x.device)", "th.arange(x.shape[1], device=x.device) + past"
    )


def test_bytes_outside_the_call_are_kept(tmp_path: Path) -> None:
    before = (
        b"import torch\r\nclass M(torch.nn.Module):\r\n    def forward(self, x, cache):\r\n"
        b"        past = cache.get_seq_length()  # \xc3\xa9t\xc3\xa9\r\n"
        b"        return torch.arange(past, past + x.shape[1], device=x.device)  # why\r\n"
    )
    path = tmp_path / "model.py"
    path.write_bytes(before)
    assert main([str(path)]) == 0
    assert path.read_bytes() == before.replace(
        b"torch.arange(past, past + x.shape[1], device=x.device)", b"torch.arange(x.shape[1], device=x.device) + past"
    )
    assert main([str(path)]) == 0


class TestSafetyNet:
    SOURCE = forward("return torch.arange(past, past + x.shape[1], device=x.device)  # keep\n")
    GOOD = SOURCE.replace(
        "torch.arange(past, past + x.shape[1], device=x.device)", "torch.arange(x.shape[1], device=x.device) + past"
    )

    def problem(self, new_text: str) -> str:
        plans = applicable_plans(check_text("m.py", self.SOURCE, DEFAULT).findings, False)
        assert plans and all(plan.kind is FixKind.DEVICE_REWRITE for plan in plans)
        return rewrite_problem(self.SOURCE, new_text, ast.parse(self.SOURCE), ast.parse(new_text), plans)

    def test_the_planned_rewrite_passes(self) -> None:
        assert self.problem(self.GOOD) == ""

    @pytest.mark.parametrize(
        ("old", "new"),
        [
            pytest.param("+ past", "- past", id="other-operator"),
            pytest.param("device=x.device", "device=x.device, dtype=torch.long", id="added-keyword"),
            pytest.param("torch.arange(x.shape[1]", "torch.arange(x.shape[0]", id="other-span"),
            pytest.param("past = cache", "past  = cache", id="byte-elsewhere"),
        ],
    )
    def test_anything_else_is_refused(self, old: str, new: str) -> None:
        assert self.problem(self.GOOD.replace(old, new, 1))

    def test_a_span_that_is_itself_a_length_is_not_rewritten_for_it(self) -> None:
        """`other` stays a size after the rewrite: its finding keeps its unsafe guard and says why."""
        source = forward("""
            other = cache.get_seq_length()
            return torch.arange(past, past + other, device=x.device)
        """)
        findings = check_text("m.py", source, DEFAULT).findings
        from_other = [finding for finding in findings if finding.origin.line == 7]
        assert from_other and all(finding.fix.kind is FixKind.GUARD_AFTER for finding in from_other)
        assert all("the span is this length itself" in finding.fix.reason for finding in from_other)
        fixed = fix_text("m.py", source, DEFAULT)
        assert "torch.arange(other, device=x.device) + past" in fixed
        assert [finding.origin.line for finding in check_text("m.py", fixed, DEFAULT).findings] == [7]

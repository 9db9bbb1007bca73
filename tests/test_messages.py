"""Messages (issue 15 item 4): one finding per place and rule, naming every source call whose value
reaches it, and a length passed down several calls read as one chain."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from fixers.rewrite import main as fix_main
from lint_rules.engine import analyze_source
from lint_rules.findings import Finding, FixKind, FixSafety
from lint_rules.settings import Settings
from lint_rules.wording import counted


def source(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def findings(code: str) -> list[Finding]:
    return analyze_source(source(code), "m.py")


def fixer_diff(code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`seqlen-guard-fix --diff` on the code written as a file: its exit status, stdout and stderr."""
    path = tmp_path / "m.py"
    path.write_text(source(code))
    status = fix_main(["--diff", str(path)])
    printed = capsys.readouterr()
    return status, printed.out, printed.err


def test_a_ternary_with_a_call_in_each_arm_is_one_finding() -> None:
    """transformers' `_update_causal_mask` copies:
    `past = self_cache.get_seq_length() if use_self else cross_cache.get_seq_length()`."""
    [finding] = findings(
        """
        def update(self_cache, cross_cache, use_self, ids):
            past = self_cache.get_seq_length() if use_self else cross_cache.get_seq_length()
            return ids[:, past:]
        """
    )
    assert finding.line == 3
    assert "from 2 calls of `get_seq_length()` on line 2 used as" in finding.message


def test_an_inline_ternary_is_one_finding() -> None:
    [finding] = findings(
        """
        def update(a, b, x, ids):
            return ids[:, a.get_seq_length() if x else b.get_seq_length():]
        """
    )
    assert "2 calls of `get_seq_length()` on line 2" in finding.message
    assert "conditional-expression arm" in finding.fix.reason


def test_origins_on_several_lines_and_methods_are_named() -> None:
    [finding] = findings(
        """
        def update(a, b, x, ids):
            past = (
                a.get_seq_length()
                if x
                else b.get_query_offset(0)
            )
            return ids[:, past:]
        """
    )
    assert "from `get_seq_length()` on line 3 and `get_query_offset()` on line 5 used as" in finding.message


def test_values_bound_on_two_branches_are_one_finding_with_a_plan_each() -> None:
    """One finding per place and rule; each value needs its own guard, so the finding carries both
    plans and the fixer applies both."""
    code = """
        import torch

        def update(a, b, x, ids):
            if x:
                past = a.get_seq_length()
            else:
                past = b.get_seq_length()
            return ids[:, past:]
        """
    [finding] = findings(code)
    assert (finding.line, finding.origin.line) == (8, 5)
    assert "from 2 calls of `get_seq_length()` on lines 5 and 7 used as" in finding.message
    assert [plan.statement.line for plan in finding.plans] == [5, 7]
    fixed = fix_text("m.py", source(code), Settings())
    assert fixed.count("int(past.item())") == 2
    assert fix_text("m.py", fixed, Settings()) == fixed


def test_a_finding_whose_values_are_fixable_in_part_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The value bound on a one-line block has no automatic fix; the other one is guarded, and the
    finding stays, led by the plan that could not be applied."""
    code = """
        import torch

        def update(a, b, x, ids):
            if x: past = a.get_seq_length()
            else:
                past = b.get_seq_length()
            return ids[:, past:]
        """
    [finding] = findings(code)
    assert [plan.safety for plan in finding.plans] == [FixSafety.NONE, FixSafety.SAFE]
    fixed = fix_text("m.py", source(code), Settings())
    assert fixed.count("int(past.item())") == 1
    [left] = findings(fixed)
    assert left.plans == (left.fix,) and left.fix.safety is FixSafety.NONE
    status, out, err = fixer_diff(code, tmp_path, capsys)
    assert status == 1
    assert "[partly fixable (1 of 2 values guarded); no automatic fix:" in out + err
    assert "1 finding, 0 fixable (1 partly) in 1 file, 1 left" in err


def test_a_finding_led_by_a_value_without_fix_names_the_unsafe_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a forward, the value bound on a one-line block has no automatic fix and the other one an
    unsafe fix: the status says that `--unsafe-fixes` would still change something."""
    code = """
        import torch

        class Model(torch.nn.Module):
            def forward(self, a, b, x, flag):
                if flag: n = a.get_seq_length()
                else:
                    n = b.get_seq_length()
                return x[:, n:]
        """
    [finding] = findings(code)
    assert [plan.safety for plan in finding.plans] == [FixSafety.NONE, FixSafety.UNSAFE]
    _, _, err = fixer_diff(code, tmp_path, capsys)
    assert "; 1 more with an unsafe fix (--unsafe-fixes)]" in err


def test_the_merged_finding_is_fixed_once() -> None:
    code = """
        import torch

        def update(a, b, x, ids):
            past = a.get_seq_length() if x else b.get_seq_length()
            return ids[:, past:]
        """
    fixed = fix_text("m.py", source(code), Settings())
    assert fixed.count("int(past.item())") == 1
    assert findings(fixed) == []


def test_a_length_passed_down_two_calls_reads_as_one_chain() -> None:
    """Reduced from parler-tts: `cache_length` passed to `forward_embedding()`, which passes it to the
    embedding's `forward()`, which slices with it."""
    [finding] = findings(
        """
        class Embedding(nn.Module):
            def forward(self, ids, past_length):
                return self.weights[past_length:]

        class Decoder(nn.Module):
            def __init__(self):
                self.embed = Embedding()

            def forward_embedding(self, ids, cache_length):
                return self.embed(ids, past_length=cache_length)

            def prepare(self, ids, cache):
                cache_length = cache.get_seq_length()
                return self.forward_embedding(ids, cache_length)
        """
    )
    assert finding.message.startswith(
        "passed as `cache_length` to `forward_embedding()` -> `forward()` (line 3), "
        "which uses it as slice bound `past_length`: tensor-valued length from `get_seq_length()` on line 13"
    )
    assert "which uses it as passed as" not in finding.message


def test_one_call_is_one_link() -> None:
    [finding] = findings(
        """
        def trim(ids, n):
            return ids[:, n:]

        def run(cache, ids):
            return trim(ids, cache.get_seq_length())
        """
    )
    assert finding.message.startswith("passed as `n` to `trim()` (line 2), which uses it as slice bound `n`:")


def test_a_truth_test_says_it_is_used_as_a_branch_condition() -> None:
    """Issue 27: a truth test is not an int use; the message says what the length is used as."""
    truth, size = findings(
        """
        def steps(cache):
            n = cache.get_seq_length()
            if n > 0:
                return list(range(n))
        """
    )
    assert truth.message == (
        "Python truth test on `n > 0`: tensor-valued length from `get_seq_length()` on line 2 "
        "used as a Python branch condition"
    )
    assert size.message.endswith("used as a Python int"), "the other rules still say int"


def test_a_length_passed_to_a_truth_test_says_branch_condition() -> None:
    [finding] = findings(
        """
        def check(m):
            return 1 if m else 0

        def run(cache):
            return check(cache.get_seq_length())
        """
    )
    assert finding.message.endswith("used as a Python branch condition")


ONE_LINE_BINDING = """
    import torch

    def host(cache, x):
        n = cache.get_seq_length(); y = 1
        return x[:, n:]

    class Model(torch.nn.Module):
        def forward(self, cache, x):
            n = cache.get_seq_length(); y = 1
            return x[:, n:]
"""


def test_only_a_compiled_finding_says_why_the_use_is_not_rewritten_on_the_device() -> None:
    """Issue 27: in host code a guard is the fix, so a host finding without one gives only the reason
    the guard cannot be placed; the device-form reason belongs to the compiled finding."""
    host, compiled = findings(ONE_LINE_BINDING)
    assert (host.compiled_region, host.fix.safety) == ("", FixSafety.NONE)
    assert host.fix.reason == "the binding shares its line with another statement"
    assert compiled.compiled_region and compiled.fix.safety is FixSafety.NONE
    assert compiled.fix.reason.startswith(
        "the binding shares its line with another statement; not rewritten on the device:"
    )
    assert "`narrow` rejects a shape-(1,) start" in compiled.fix.reason


def test_a_host_use_without_a_guard_still_gets_a_device_rewrite() -> None:
    """Must-stay twin: the device rewrite is still looked for in host code where no guard can be placed;
    only its refusal is not worded there."""
    start, end = findings(
        """
        import torch

        def host(cache, x):
            past = cache.get_seq_length(); y = 1
            return torch.arange(past, past + x.shape[1], device=x.device)
        """
    )
    assert start.fix == end.fix and start.fix.kind is FixKind.DEVICE_REWRITE and start.fix.safety is FixSafety.SAFE


@pytest.mark.parametrize(
    ("count", "expected"), [(0, "0 files"), (1, "1 file"), (2, "2 files"), (1, "1 entry"), (3, "3 entries")]
)
def test_counts_are_worded_in_the_singular_for_one(count: int, expected: str) -> None:
    noun, plural = ("entry", "entries") if "entr" in expected else ("file", "")
    assert counted(count, noun, plural) == expected


def test_the_fixer_summary_says_one_file_and_one_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = fixer_diff(
        """
        def host(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
        """,
        tmp_path,
        capsys,
    )
    assert status == 1
    assert err.splitlines()[-1] == (
        "seqlen-guard-fix: 1 file scanned, 1 finding, 1 fixable in 1 file, 0 left (0 unsafe, 0 no automatic fix), "
        "0 errors"
    )

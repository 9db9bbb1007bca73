"""Compiled reach across the modules of a package (`lint_rules/engine/package.py`): a helper that no
compiled region of its own module calls is still compiled when a `forward` of another module of
the package calls it, so its guard would be a graph break; a helper only host code calls keeps its
safe guard."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fixers.fix_files import fix_text
from lint_rules.checking import check_path
from lint_rules.findings import FixKind, FixSafety
from lint_rules.settings import Settings

ROPE = """\
    import torch


    def positions(cache, n):
        past = cache.get_seq_length()
        return torch.arange(past, past + n)


    def trim(cache, ids):
        past = cache.get_seq_length()
        return ids[:, past:]
"""
MODELING = """\
    from torch import nn

    from .rope import positions


    class TinyModel(nn.Module):
        def forward(self, ids, cache):
            return positions(cache, ids.shape[1])
"""
GENERATION = """\
    from tiny.rope import trim


    def generate(ids, cache):
        return trim(cache, ids)
"""


def write_package(root: Path, modules: dict[str, str]) -> Path:
    package = root / "tiny"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    return package


def findings_by_function(path: Path) -> dict[str, list[FixSafety]]:
    found: dict[str, list[FixSafety]] = {}
    for finding in check_path(str(path), Settings()).findings:
        found.setdefault(finding.function, []).append(finding.fix.safety)
    return found


def test_a_helper_called_from_a_forward_in_another_module_is_compiled(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"rope": ROPE, "modeling": MODELING, "generation": GENERATION})
    findings = check_path(str(package / "rope.py"), Settings()).findings
    compiled = [finding for finding in findings if finding.function == "positions"]
    assert compiled
    for finding in compiled:
        assert not (finding.fix.kind is FixKind.GUARD_AFTER and finding.fix.safety is FixSafety.SAFE)
        assert "TinyModel.forward in modeling.py" in finding.compiled_region
    host = [finding for finding in findings if finding.function == "trim"]
    assert [finding.fix.safety for finding in host] == [FixSafety.SAFE]
    assert not host[0].compiled_region


def test_the_fixer_guards_the_host_helper_and_leaves_the_compiled_one(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"rope": ROPE, "modeling": MODELING, "generation": GENERATION})
    rope = package / "rope.py"
    fixed = fix_text(str(rope), rope.read_text(), Settings())
    positions, trim = fixed.split("def trim")
    assert "isinstance" not in positions and ".item()" not in positions
    assert "int(past.item())" in trim


def test_without_the_compiled_caller_the_helper_is_host_code(tmp_path: Path) -> None:
    """Must stay as it was: the same helper, called only from host code in another module."""
    package = write_package(tmp_path, {"rope": ROPE, "generation": GENERATION})
    assert findings_by_function(package / "rope.py") == {"positions": [FixSafety.SAFE] * 2, "trim": [FixSafety.SAFE]}


def test_a_call_of_another_function_with_the_same_name_does_not_count(tmp_path: Path) -> None:
    """Must stay silent about compilation: `positions` of another module is not rope's."""
    other = MODELING.replace("from .rope import positions", "from .other import positions")
    package = write_package(
        tmp_path, {"rope": ROPE, "modeling": other, "other": "def positions(c, n):\n    return n\n"}
    )
    assert all(
        safety is FixSafety.SAFE
        for safeties in findings_by_function(package / "rope.py").values()
        for safety in safeties
    )

"""The engine judged on real code it has never seen: the installed transformers (5.5.3, the release
with the reported bug) and the newest 5.x release (built by tests/runtime/build_envs.py)."""

from __future__ import annotations

import collections
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.files import iter_python_files
from lint_rules.findings import FixKind, FixSafety
from lint_rules.settings import Settings
from lint_rules.target_range import range_of

REPO = Path(__file__).resolve().parents[1]
NEWEST = "5.24.0"
TENSOR_ARITHMETIC = re.compile(r"torch\.arange\([^()]*(\([^()]*\))?[^()]*\)\s*\+\s*past_seen_tokens")


def installed_transformers() -> Path:
    spec = importlib.util.find_spec("transformers")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def newest_transformers() -> Path:
    target = REPO / ".runtime" / f"transformers-{NEWEST}"
    if not (target / "transformers").is_dir():
        subprocess.run([sys.executable, str(REPO / "tests/runtime/build_envs.py")], check=True)
    return target / "transformers"


def findings_under(folder: Path) -> list[tuple[str, str, str]]:
    """(file relative to the package, function, code) of every finding."""
    found = []
    for path in iter_python_files([str(folder)], ()):
        assert isinstance(path, str)
        result = check_path(path, Settings())
        assert not result.error, result.error
        found.extend((Path(f.path).relative_to(folder.parent).as_posix(), f.function, f.code) for f in result.findings)
    return found


def test_release_with_the_bug_reports_prefill_and_position_ids() -> None:
    package = installed_transformers()
    found = collections.Counter(findings_under(package / "generation"))
    assert found == {
        ("generation/utils.py", "GenerationMixin._prefill", "SLG001"): 2,
        ("generation/utils.py", "GenerationMixin._prefill", "SLG002"): 1,
        ("generation/utils.py", "GenerationMixin._prepare_position_ids_for_generation", "SLG003"): 1,
    }


@pytest.mark.parametrize("package", [installed_transformers, newest_transformers], ids=["5.5.3", NEWEST])
def test_the_length_passed_into_prepare_inputs_for_generation_is_reported_at_the_call(package: object) -> None:
    """`_prefill` passes `next_sequence_length` on; `prepare_inputs_for_generation` slices with it."""
    assert callable(package)
    result = check_path(str(package() / "generation" / "utils.py"), Settings())
    passed = [finding for finding in result.findings if "prepare_inputs_for_generation()" in finding.message]
    assert len(passed) == 1
    assert passed[0].function == "GenerationMixin._prefill"
    assert "passed as `next_sequence_length`" in passed[0].message
    assert "slice bound `-next_sequence_length`" in passed[0].message
    assert passed[0].fix.safety.value == "safe"


def test_newest_release_also_reports_chunked_prefill_and_assisted_decoding() -> None:
    found = collections.Counter(findings_under(newest_transformers() / "generation"))
    assert found == {
        ("generation/utils.py", "GenerationMixin._prefill", "SLG001"): 3,
        ("generation/utils.py", "GenerationMixin._prefill", "SLG002"): 6,
        ("generation/utils.py", "GenerationMixin._prepare_position_ids_for_generation", "SLG003"): 1,
        ("generation/candidate_generator.py", "AssistedCandidateGenerator._update_past_and_masks", "SLG001"): 1,
        ("generation/candidate_generator.py", "AssistedCandidateGenerator._update_past_and_masks", "SLG004"): 1,
    }


@pytest.mark.parametrize("package", [installed_transformers, newest_transformers], ids=["5.5.3", NEWEST])
def test_silent_on_the_compile_friendly_pattern(package: object) -> None:
    """`torch.arange(...) + past_seen_tokens` keeps the length on the device: never reported."""
    root = package()  # type: ignore[operator]
    checked_lines = 0
    for path in iter_python_files([str(root)], ()):
        assert isinstance(path, str)
        text = Path(path).read_text(encoding="utf-8")
        lines = {number for number, line in enumerate(text.splitlines(), 1) if TENSOR_ARITHMETIC.search(line)}
        if not lines:
            continue
        checked_lines += len(lines)
        reported = {finding.line for finding in check_path(path, Settings()).findings}
        assert not lines & reported, path
    assert checked_lines >= 20, "the pattern must really occur in the package"


def test_fixer_on_a_copy_of_the_release_with_the_bug(tmp_path: Path) -> None:
    copy = tmp_path / "transformers"
    shutil.copytree(installed_transformers(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    first = fix(copy)
    assert first.returncode == 1, first.stderr  # unsafe findings in forward methods are left
    utils = (copy / "generation/utils.py").read_text()
    guard = "{0}if isinstance(past_length, torch.Tensor):\n{0}    past_length = int(past_length.item())\n"
    assert "            past_length = cache.get_seq_length()\n" + guard.format(" " * 12) in utils  # _prefill
    assert "                past_length = cache.get_seq_length()\n" + guard.format(" " * 16) in utils  # position ids
    before_second = snapshot(copy)
    second = fix(copy)
    assert snapshot(copy) == before_second, "a second run must change nothing"
    assert " 0 fixed in 0 files" in second.stderr
    imported = subprocess.run(
        [sys.executable, "-c", "import transformers.generation.utils as u; print(u.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == str(copy / "generation/utils.py")


def fix(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fixers.rewrite", "-j", "2", str(folder)], capture_output=True, text=True, cwd=REPO
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path): path.read_bytes() for path in sorted(folder.rglob("*.py"))}


@pytest.mark.parametrize("package", [installed_transformers, newest_transformers], ids=["5.5.3", NEWEST])
def test_sliding_window_crop_is_silent(package: object) -> None:
    """`DynamicSlidingWindowLayer.get_seq_length` returns an int counter: the cache table says so."""
    assert callable(package)
    result = check_path(str(package() / "cache_utils.py"), Settings())
    assert [f for f in result.findings if f.function == "DynamicSlidingWindowLayer.crop"] == []


def files_defining(package: Path, definition: str) -> list[Path]:
    return sorted(path for path in package.glob("models/*/*.py") if definition in path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("package", [installed_transformers, newest_transformers], ids=["5.5.3", NEWEST])
def test_position_ids_helpers_reached_from_forward_are_compiled(package: object) -> None:
    """The VL models' `compute_3d_position_ids` / `get_rope_index` run inside the model's forward:
    their guards are unsafe (the only safe fix there is the device rewrite of a `torch.arange`), and
    the reason names the forward that calls them."""
    assert callable(package)
    helpers = []
    for path in files_defining(package(), "def compute_3d_position_ids"):
        found = check_path(str(path), Settings()).findings
        helpers += [f for f in found if f.function.endswith((".compute_3d_position_ids", ".get_rope_index"))]
    assert helpers
    for finding in helpers:
        safe_guard = finding.fix.safety is FixSafety.SAFE and finding.fix.kind is not FixKind.DEVICE_REWRITE
        assert not safe_guard, (finding.path, finding.line)
        assert re.match(r"called from \w+\.forward \(line \d+\)", finding.compiled_region), finding.compiled_region


def test_reference_sliding_window_mask_sizes_are_silent_on_the_newest_release() -> None:
    """`UnlimitedOcrStaticReferenceSlidingWindowLayer.get_mask_sizes` adds `super().get_seq_length()`:
    `StaticSlidingWindowLayer` keeps an int mirror of its length (the cache table), so `max()` compares
    ints (an audit of sampled findings read it as false; it was reported before the table knew)."""
    path = newest_transformers() / "models" / "unlimited_ocr" / "modeling_unlimited_ocr.py"
    assert "super().get_seq_length()" in path.read_text(encoding="utf-8")
    own_release = Settings(transformers=range_of([f"=={NEWEST}"], "its own release"))
    found = [f for f in check_path(str(path), own_release).findings if f.function.endswith(".get_mask_sizes")]
    assert found == []
    # Twin: before 5.4 that layer returned its `cumulative_length` itself, and this subclass rebinds it
    # (`.to(device)`): on every release the subclass is not taken as int-length.
    every_release = [f for f in check_path(str(path), Settings()).findings if f.function.endswith(".get_mask_sizes")]
    assert every_release != []

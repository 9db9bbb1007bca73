"""benchmarks/real_code.py keeps the fixer's patch byte for byte: a CRLF file keeps its CRs and a
file in another encoding (latin-1 here) neither crashes the run nor comes back re-encoded. With
`--declarations`, each package is checked with its own declared table: globs read from the package
root, `--pins-only` dropping the declarations, a refusal kept in the summary."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LATIN1_CRLF = (
    b"# -*- coding: latin-1 -*-\r\n"
    b"# caf\xe9\r\n"
    b"def trim(cache, x):\r\n"
    b"    n = cache.get_seq_length()\r\n"
    b"    return x[:, n:]\r\n"
)
GUARD = b"+    if isinstance(n, torch.Tensor):\r\n+        n = int(n.item())\r\n"


def real_code() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_code", REPO / "benchmarks" / "real_code.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("real_code", module)  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_json_tail_is_split_off_the_bytes_of_the_patch() -> None:
    patch = b"--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n # caf\xe9\r\n+x = 1\r\n y = 2\r\n"
    diff, findings = real_code().split_json_tail(patch + b'[\n  {"code": "SLG002"}\n]\n')
    assert diff == patch
    assert findings == [{"code": "SLG002"}]


def test_a_crlf_latin1_patch_is_stored_as_the_fixer_wrote_it(tmp_path: Path) -> None:
    module = real_code()
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "m.py").write_bytes(LATIN1_CRLF)
    config = tmp_path / "pyproject.toml"
    config.write_text(module.NEUTRAL_CONFIG, encoding="utf-8")
    result = module.analyse(module.Package("pkg", "0", root), REPO, config, tmp_path / "cache")
    summary = result["summary"]
    assert summary["check_returncode"] == 0 and summary["fix_returncode"] == 0, summary
    stored = Path(summary["fix_diff"]).read_bytes()
    assert b" # caf\xe9\r\n" in stored  # the file's own byte, not re-encoded as UTF-8
    assert b"     n = cache.get_seq_length()\r\n" + GUARD in stored  # the CRs kept
    assert (summary["files_rewritten"], summary["lines_added"]) == (1, 3)  # the guard and `import torch`
    assert [finding["code"] for finding in result["findings"]] == ["SLG002"]


TRIM = textwrap.dedent(
    """\
    def trim(cache, x):
        n = cache.get_seq_length()
        return x[:, n:]
    """
)
BUILDS_STATIC = textwrap.dedent(
    """\
    from transformers import StaticCache


    def trim(config, x):
        cache = StaticCache(config=config, max_cache_len=8)
        n = cache.get_seq_length()
        return x[:, n:]
    """
)


def package_with(tmp_path: Path, files: dict[str, str]) -> ModuleType:
    for name, text in files.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text, encoding="utf-8")
    (tmp_path / "configs").mkdir()
    return real_code()


def findings_of(tmp_path: Path, table: dict[str, object], flags: tuple[str, ...] = ()) -> dict[str, Any]:
    module = real_code()
    package = module.Package("pkg", "0", tmp_path / "pkg")
    config = module.declared_config(package, table, tmp_path / "configs")
    result: dict[str, Any] = module.analyse(package, REPO, config, tmp_path / "cache", flags)
    return result


def test_declared_globs_are_read_from_the_package_root(tmp_path: Path) -> None:
    package_with(tmp_path, {"app/trim.py": TRIM, "lib/trim.py": TRIM})
    result = findings_of(tmp_path, {"int-length-caches": ["app/*"], "why": "not written"})
    assert [finding["path"] for finding in result["findings"]] == ["lib/trim.py"]
    config = result["summary"]["config"]
    assert f'int-length-caches = ["{tmp_path / "pkg" / "app/*"}"]' in config and "why" not in config


def test_pins_only_drops_the_declarations_but_keeps_the_range(tmp_path: Path) -> None:
    package_with(tmp_path, {"app/trim.py": TRIM})
    table = {"int-length-caches": True, "target-transformers": ">=5.5"}
    result = findings_of(tmp_path, table, ("--no-declarations",))
    assert [finding["path"] for finding in result["findings"]] == ["app/trim.py"]
    assert "transformers >=5.5" in result["summary"]["check_stderr"]


def test_a_declared_range_where_static_caches_count_ints_silences_them(tmp_path: Path) -> None:
    package_with(tmp_path, {"m.py": BUILDS_STATIC})
    assert findings_of(tmp_path, {"target-transformers": "==4.38.*"})["findings"] == []
    (tmp_path / "configs" / "pkg-0.toml").unlink()
    must_report = findings_of(tmp_path, {"target-transformers": ">=5.5"})["findings"]
    assert [finding["code"] for finding in must_report] == ["SLG002"]


def test_a_refused_declaration_is_kept_in_the_summary_and_its_findings_reported(tmp_path: Path) -> None:
    package_with(tmp_path, {"m.py": BUILDS_STATIC})
    result = findings_of(tmp_path, {"int-length-caches": True})
    summary = result["summary"]
    assert summary["check_returncode"] == 2
    assert [line.split(": ", 1)[1][:19] for line in summary["declaration_refusals"]] == ["declaration refused"]
    assert [finding["code"] for finding in result["findings"]] == ["SLG002"]


def test_two_runs_unpacking_one_archive_never_mix_their_files(tmp_path: Path, monkeypatch: Any) -> None:
    """Each run extracts into a folder of its own: the one whose rename comes second keeps the first
    one's folder whole and leaves no folder of its own behind (one run's cleanup once emptied half of
    another's package in the shared cache)."""
    module = real_code()
    archive = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(archive, "w") as wheel:
        wheel.writestr("pkg/__init__.py", "")
        wheel.writestr("pkg/a.py", "x = 1\n")
    destination = tmp_path / "unpacked" / "pkg-1.0"
    extract = module.extract

    def other_run_first(archive_path: Path, folder: Path) -> None:
        extract(archive_path, folder)
        if not destination.exists():
            other = tmp_path / "other"
            extract(archive_path, other)
            other.rename(destination)

    monkeypatch.setattr(module, "extract", other_run_first)
    assert module.unpack(archive, destination) == destination
    assert sorted(path.name for path in destination.rglob("*.py")) == ["__init__.py", "a.py"]
    assert [path.name for path in destination.parent.iterdir()] == ["pkg-1.0"]

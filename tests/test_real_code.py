"""benchmarks/real_code.py keeps the fixer's patch byte for byte: a CRLF file keeps its CRs and a
file in another encoding (latin-1 here) neither crashes the run nor comes back re-encoded."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

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

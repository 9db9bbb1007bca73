"""Files and paths that are not plain UTF-8 Python, for the checker and the fixer (write mode).

A file that cannot be used gets one line `path: reason` on stderr and exit code 2, and every
other file is still processed (here `good.py`, whose fix must be written). A file with an unusual
but valid form must work: its real finding is fixed and the result is compared byte for byte.
"""

from __future__ import annotations

import ctypes
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers_rewrite import (
    CHECKER,
    FIXER,
    Run,
    apply_diff,
    cli_environment,
    parse_unified_diff,
    rewrite_problems,
    run_cli,
)

IMPORT = b"import torch\n\n\n"
FUNCTION = b"def f(cache, x):\n    n = cache.get_seq_length()\n    return x[:, n:]\n"
GUARD = b"    if isinstance(n, torch.Tensor):\n        n = int(n.item())\n"
SOURCE = IMPORT + FUNCTION
FIXED = IMPORT + FUNCTION.replace(b"    return", GUARD + b"    return")
FINDING = re.compile(r"(?m)^(?P<path>\S+):\d+:\d+: SLG002 ")
BAD = "bad.py"
GOOD = "good.py"


def project(tmp_path: Path, files: dict[str, bytes]) -> Path:
    """A folder with `good.py` (a real finding) and the given files."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / GOOD).write_bytes(SOURCE)
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return tmp_path


def paths_with_findings(run: Run) -> set[str]:
    return {match["path"] for match in FINDING.finditer(run.stdout)}


def assert_one_error(run: Run, path: str, reason: str | re.Pattern[str]) -> None:
    assert run.returncode == 2, run.describe()
    errors = run.errors()
    assert list(errors) == [path], run.describe()
    if isinstance(reason, str):
        assert errors[path] == reason, run.describe()
    else:
        assert reason.fullmatch(errors[path]), run.describe()


def check_and_fix(folder: Path, arguments: list[str]) -> tuple[Run, Run]:
    checked = run_cli(CHECKER, arguments, folder)
    fixed = run_cli(FIXER, arguments, folder)
    return checked, fixed


# ------------------------------------------------------------------- files that cannot be used

UNUSABLE = {
    "syntax error": (b"def f(:\n    n = cache.get_seq_length()\n", "syntax error on line 1: invalid syntax"),
    "undecodable bytes": (
        b"x = 1\n# caf\xe9 \xff\n" + FUNCTION,
        "cannot decode as utf-8: invalid byte 0xe9 on line 2",
    ),
    "a BOM and an undecodable byte further down": (
        b"\xef\xbb\xbfx = 1\ny = 2\n# \xff\n" + FUNCTION,
        "cannot decode as utf-8: invalid byte 0xff on line 3",
    ),
    "unknown encoding cookie": (
        b"# -*- coding: klingon -*-\n" + FUNCTION,
        re.compile(r"bad encoding declaration: .*klingon.*"),
    ),
    "binary file with a .py name": (
        b"\x7fELF\x02\x01\x01\x00\x00get_seq_length\x00\xff\xfe",
        "binary file (contains NUL bytes), not Python source",
    ),
    "python 2 print statement": (b'print "hello"\n' + FUNCTION, re.compile(r"syntax error on line 1: .+")),
}


@pytest.mark.parametrize("case", sorted(UNUSABLE))
def test_unusable_file_is_reported_and_the_others_are_processed(tmp_path: Path, case: str) -> None:
    data, reason = UNUSABLE[case]
    folder = project(tmp_path, {BAD: data})
    checked, fixed = check_and_fix(folder, ["."])
    for run in (checked, fixed):
        assert_one_error(run, BAD, reason)
    assert paths_with_findings(checked) == {GOOD}
    assert (folder / GOOD).read_bytes() == FIXED
    assert (folder / BAD).read_bytes() == data


@pytest.mark.parametrize("table", ["[tool.seqlen-guard]\nexclude", "[project]\ndependencies"])
def test_a_pyproject_that_is_not_utf8_is_a_configuration_error(tmp_path: Path, table: str) -> None:
    """As invalid TOML is: one line naming the file, status 2, no traceback (`run_cli` fails on one)."""
    folder = project(tmp_path, {"pyproject.toml": table.encode() + b' = ["\xff"]\n'})
    for run in check_and_fix(folder, ["."]):
        assert run.returncode == 2, run.describe()
        assert "pyproject.toml: invalid TOML: not UTF-8 (byte 0xff on line 2)" in run.stderr, run.describe()
    assert (folder / GOOD).read_bytes() == SOURCE


def test_python_312_syntax(tmp_path: Path) -> None:
    """PEP 695 generics and nested same-quote f-strings: a syntax error on 3.11 with a clear line."""
    files = {
        "generics.py": b"class Box[T]:\n    def f(self, cache, x):\n        n = cache.get_seq_length()\n        return x[:, n:]\n",
        "fstrings.py": b'def f(cache, d):\n    n = cache.get_seq_length()\n    return f"{f"{d["k"]}"}" * n\n',
    }
    folder = project(tmp_path, files)
    checked, fixed = check_and_fix(folder, ["."])
    if sys.version_info >= (3, 12):
        assert checked.returncode == 1 and fixed.returncode == 0, fixed.describe()
        assert paths_with_findings(checked) == {GOOD, "generics.py", "fstrings.py"}
        return
    for run in (checked, fixed):
        assert run.returncode == 2, run.describe()
        errors = run.errors()
        assert set(errors) == set(files), run.describe()
        assert errors["generics.py"] == "syntax error on line 1: invalid syntax"
        assert re.fullmatch(r"syntax error on line 3: .*f-string.*", errors["fstrings.py"]), run.describe()
    assert (folder / GOOD).read_bytes() == FIXED
    assert {name: (folder / name).read_bytes() for name in files} == files


def test_missing_path(tmp_path: Path) -> None:
    folder = project(tmp_path, {})
    checked, fixed = check_and_fix(folder, [GOOD, "missing.py"])
    for run in (checked, fixed):
        assert_one_error(run, "missing.py", "no such file or directory")
    assert (folder / GOOD).read_bytes() == FIXED


def test_symlink_loops(tmp_path: Path) -> None:
    folder = project(tmp_path, {})
    (folder / "loop.py").symlink_to("loop.py")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to("..")
    checked, fixed = check_and_fix(folder, ["."])
    for run in (checked, fixed):
        assert run.returncode == 2, run.describe()
        assert run.errors() == {
            "loop.py": "symlink loop: the link resolves to itself",
            "sub/up": f"symlink loop: points back to {os.path.realpath(folder)}, not followed",
        }, run.describe()
    assert (folder / GOOD).read_bytes() == FIXED


OWN_INT_CACHE = b"""class IntCache:
    def __init__(self):
        self.seen = 0

    def get_seq_length(self, layer_idx=0):
        return self.seen
"""
USES_AFTER_A_STAR_IMPORT = b"""from .own import IntCache as KV
from .other import *


def f(ids):
    cache = KV()
    n = cache.get_seq_length()
    return ids[:, n:]
"""


def test_a_symlink_loop_in_a_package_its_modules_read(tmp_path: Path) -> None:
    """A module whose analysis lists its package's files (after a star import, for the classes a name
    may hold) is analyzed as usual beside a link that loops: the loop is the walker's error item, not
    an internal error of the module (the listing had raised `OSError` at the looping link)."""
    files = {"pkg/__init__.py": b"", "pkg/own.py": OWN_INT_CACHE, "pkg/uses.py": USES_AFTER_A_STAR_IMPORT}
    folder = project(tmp_path, files)
    (folder / "pkg" / "other.py").symlink_to("other.py")
    checked = run_cli(CHECKER, ["."], folder)
    assert checked.errors() == {"pkg/other.py": "symlink loop: the link resolves to itself"}, checked.describe()
    assert paths_with_findings(checked) == {"good.py", "pkg/uses.py"}, checked.describe()


def test_fifo_named_like_python_is_not_read(tmp_path: Path) -> None:
    """A named pipe given explicitly (a pre-commit hook passes paths) must not block the run."""
    folder = project(tmp_path, {})
    os.mkfifo(folder / "pipe.py")
    checked = run_cli(CHECKER, [GOOD, "pipe.py"], folder, timeout=20)
    fixed = run_cli(FIXER, [GOOD, "pipe.py"], folder, timeout=20)
    for run in (checked, fixed):
        assert_one_error(run, "pipe.py", re.compile(r".*not a (regular )?file.*"))
    assert (folder / GOOD).read_bytes() == FIXED


def test_folder_named_like_a_python_file_is_walked(tmp_path: Path) -> None:
    """`x.py/` is a folder: it is walked like any folder (as flake8 and ruff do), not an error."""
    folder = project(tmp_path, {"x.py/inner.py": SOURCE})
    checked, fixed = check_and_fix(folder, [GOOD, "x.py"])
    assert checked.returncode == 1 and not checked.errors(), checked.describe()
    assert paths_with_findings(checked) == {GOOD, "x.py/inner.py"}
    assert fixed.returncode == 0 and not fixed.errors(), fixed.describe()
    assert (folder / "x.py" / "inner.py").read_bytes() == FIXED


# ------------------------------------------------------------------------------ permissions

CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, PR_CAPBSET_DROP = 1, 2, 24


def without_root_file_access() -> None:
    """In the child, before exec: drop the capabilities that let root ignore file permissions.

    Dropped from the bounding set, they are gone after exec too (root's permitted set is
    recomputed from it), so the CLI meets permission checks as any user would.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def run_as_plain_user(module: str, arguments: list[str], folder: Path) -> Run:
    command = (sys.executable, "-m", module, *arguments)
    preexec = without_root_file_access if os.geteuid() == 0 else None
    completed = subprocess.run(
        command, cwd=folder, env=cli_environment(), capture_output=True, timeout=120, preexec_fn=preexec
    )
    stdout, stderr = (stream.decode("utf-8", "surrogateescape") for stream in (completed.stdout, completed.stderr))
    run = Run(command, completed.returncode, stdout, stderr, completed.stdout)
    assert "Traceback" not in run.stderr, run.describe()
    return run


def test_unreadable_file(tmp_path: Path) -> None:
    """Mode 000. As root the CLIs run without the capabilities that bypass permissions."""
    folder = project(tmp_path, {BAD: SOURCE})
    (folder / BAD).chmod(0)
    checked = run_as_plain_user(CHECKER, ["."], folder)
    fixed = run_as_plain_user(FIXER, ["."], folder)
    for run in (checked, fixed):
        assert_one_error(run, BAD, "cannot read: permission denied")
    assert paths_with_findings(checked) == {GOOD}
    assert (folder / GOOD).read_bytes() == FIXED
    (folder / BAD).chmod(0o600)
    assert (folder / BAD).read_bytes() == SOURCE


def test_unreadable_file_read_by_root(tmp_path: Path) -> None:
    """Root reads a mode-000 file: the documented behaviour is that it is checked like any other,
    and that the fixer, which only writes files whose owner may write them, leaves it alone."""
    folder = project(tmp_path, {BAD: SOURCE})
    (folder / BAD).chmod(0)
    checked, fixed = check_and_fix(folder, ["."])
    if os.geteuid() != 0:
        for run in (checked, fixed):
            assert_one_error(run, BAD, "cannot read: permission denied")
    else:
        assert checked.returncode == 1 and paths_with_findings(checked) == {GOOD, BAD}, checked.describe()
        assert_one_error(fixed, BAD, "cannot write: read-only file; file left untouched")
    assert (folder / GOOD).read_bytes() == FIXED
    assert stat.S_IMODE((folder / BAD).stat().st_mode) == 0
    (folder / BAD).chmod(0o600)
    assert (folder / BAD).read_bytes() == SOURCE


def test_read_only_file_that_needs_a_fix(tmp_path: Path) -> None:
    folder = project(tmp_path, {BAD: SOURCE})
    (folder / BAD).chmod(0o444)
    before = (folder / BAD).stat()
    checked, fixed = check_and_fix(folder, ["."])
    assert checked.returncode == 1 and not checked.errors(), checked.describe()
    assert paths_with_findings(checked) == {GOOD, BAD}
    assert_one_error(fixed, BAD, "cannot write: read-only file; file left untouched")
    after = (folder / BAD).stat()
    assert (folder / BAD).read_bytes() == SOURCE
    assert (after.st_ino, after.st_mode, after.st_mtime_ns) == (before.st_ino, before.st_mode, before.st_mtime_ns)
    assert (folder / GOOD).read_bytes() == FIXED


def test_file_in_a_read_only_folder(tmp_path: Path) -> None:
    """The file is writable but its folder is not: the atomic rename cannot happen."""
    folder = project(tmp_path, {"locked/bad.py": SOURCE})
    (folder / "locked").chmod(0o555)
    try:
        fixed = run_as_plain_user(FIXER, ["."], folder)
    finally:
        (folder / "locked").chmod(0o755)
    assert_one_error(
        fixed, "locked/bad.py", re.compile(r"cannot write: .*permission denied.*; file left untouched", re.I)
    )
    assert (folder / "locked" / "bad.py").read_bytes() == SOURCE
    assert sorted(os.listdir(folder / "locked")) == ["bad.py"]
    assert (folder / GOOD).read_bytes() == FIXED


# ----------------------------------------------------------------- unusual files that must work


def crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


LATIN_1_FUNCTION = (
    'def f(cache, x, nom="café"):  # été\n    n = cache.get_seq_length()  # déjà vu\n    return x[:, n:]\n'.encode(
        "latin-1"
    )
)
"""Non-ASCII bytes in the hunk's context lines and its header, which a patch must carry as they are."""
SHIFT_JIS_FUNCTION = (
    "def f(cache, x):  # 長さ\n    n = cache.get_seq_length()  # 既に見た\n    return x[:, n:]\n".encode("shift_jis")
)


WORKING: dict[str, tuple[bytes, bytes]] = {
    "latin-1 cookie": (
        b"# -*- coding: latin-1 -*-\n" + IMPORT + b'NAME = "caf\xe9"\n\n\n' + FUNCTION,
        b"# -*- coding: latin-1 -*-\n"
        + IMPORT
        + b'NAME = "caf\xe9"\n\n\n'
        + FUNCTION.replace(b"    return", GUARD + b"    return"),
    ),
    "latin-1 cookie, latin-1 text in the hunk": (
        b"# -*- coding: latin-1 -*-\n" + IMPORT + LATIN_1_FUNCTION,
        b"# -*- coding: latin-1 -*-\n" + IMPORT + LATIN_1_FUNCTION.replace(b"    return", GUARD + b"    return"),
    ),
    "shift_jis cookie, Japanese text in the hunk": (
        b"# -*- coding: shift_jis -*-\n" + IMPORT + SHIFT_JIS_FUNCTION,
        b"# -*- coding: shift_jis -*-\n" + IMPORT + SHIFT_JIS_FUNCTION.replace(b"    return", GUARD + b"    return"),
    ),
    "utf-8 BOM": (b"\xef\xbb\xbf" + SOURCE, b"\xef\xbb\xbf" + FIXED),
    "BOM and no torch import": (
        b"\xef\xbb\xbf" + FUNCTION,
        b"\xef\xbb\xbfimport torch\n" + FUNCTION.replace(b"    return", GUARD + b"    return"),
    ),
    "CRLF": (crlf(SOURCE), crlf(FIXED)),
    "mixed line endings, CRLF first": (
        crlf(IMPORT) + b"def f(cache, x):\n    n = cache.get_seq_length()\r\n    return x[:, n:]\n",
        crlf(IMPORT) + b"def f(cache, x):\n    n = cache.get_seq_length()\r\n" + crlf(GUARD) + b"    return x[:, n:]\n",
    ),
    "mixed line endings, lone CR first": (
        b"import torch\rX = 1\n\n\n" + FUNCTION,
        b"import torch\rX = 1\n\n\n" + FUNCTION.replace(b"    return", GUARD.replace(b"\n", b"\r") + b"    return"),
    ),
    "mixed line endings, LF first": (
        IMPORT + b"def f(cache, x):\r\n    n = cache.get_seq_length()\r\n    return x[:, n:]\r\n",
        IMPORT + b"def f(cache, x):\r\n    n = cache.get_seq_length()\r\n" + GUARD + b"    return x[:, n:]\r\n",
    ),
    "tabs": (SOURCE.replace(b"    ", b"\t"), FIXED.replace(b"    ", b"\t")),
    "no newline at end of file": (SOURCE.rstrip(b"\n"), FIXED.rstrip(b"\n")),
    "form feed between functions": (
        SOURCE + b"\x0c\n" + FUNCTION.replace(b"def f", b"def g"),
        FIXED + b"\x0c\n" + FUNCTION.replace(b"def f", b"def g").replace(b"    return", GUARD + b"    return"),
    ),
    "form feed after the fixed function": (SOURCE + b"\x0c\nY = 1\n", FIXED + b"\x0c\nY = 1\n"),
    "match statement": (
        IMPORT + b"def f(cache, x, command):\n    match command:\n        case [first, *rest]:\n"
        b"            n = cache.get_seq_length()\n            return x[:, n:]\n        case _:\n            return x\n",
        IMPORT + b"def f(cache, x, command):\n    match command:\n        case [first, *rest]:\n"
        b"            n = cache.get_seq_length()\n"
        b"            if isinstance(n, torch.Tensor):\n                n = int(n.item())\n"
        b"            return x[:, n:]\n        case _:\n            return x\n",
    ),
    "unicode identifiers and text": (
        IMPORT + "def f(cache, x):\n    längd = cache.get_seq_length()  # 長さ\n    return x[:, längd:]\n".encode(),
        IMPORT
        + "def f(cache, x):\n    längd = cache.get_seq_length()  # 長さ\n    if isinstance(längd, torch.Tensor):\n"
        "        längd = int(längd.item())\n    return x[:, längd:]\n".encode(),
    ),
}


@pytest.mark.parametrize("case", sorted(WORKING))
def test_unusual_file_is_fixed_byte_for_byte(tmp_path: Path, case: str) -> None:
    data, expected = WORKING[case]
    folder = project(tmp_path, {"odd.py": data})
    checked, fixed = check_and_fix(folder, ["."])
    assert checked.returncode == 1 and not checked.errors(), checked.describe()
    assert paths_with_findings(checked) == {GOOD, "odd.py"}
    assert fixed.returncode == 0 and not fixed.errors(), fixed.describe()
    assert (folder / "odd.py").read_bytes() == expected
    assert rewrite_problems(data, expected) == []
    assert run_cli(FIXER, ["--check", "."], folder).returncode == 0


@pytest.mark.parametrize("case", sorted(WORKING))
def test_diff_of_unusual_file_applies_with_standard_tools(tmp_path: Path, case: str) -> None:
    """--diff output is read the way `patch` and `git apply` read it (lines end at \\n), with a
    file after it so that a missing final newline shows. The patch carries the file's own bytes
    (encoding, BOM, line endings): `git apply` and `patch -p1` take it, and give the bytes of an
    in-place run."""
    data, expected = WORKING[case]
    folder = project(tmp_path / "project", {"a_odd.py": data})
    shown = run_cli(FIXER, ["--diff", "."], folder)
    assert shown.returncode == 1, shown.describe()
    diffs = {diff.new_name: diff for diff in parse_unified_diff(shown.stdout_bytes, lambda line: False)}
    assert sorted(diffs) == ["b/a_odd.py", "b/good.py"], shown.describe()
    assert apply_diff(data, diffs["b/a_odd.py"]) == expected
    assert apply_diff(SOURCE, diffs["b/good.py"]) == FIXED
    assert (folder / "a_odd.py").read_bytes() == data

    in_place = tmp_path / "in-place"
    shutil.copytree(folder, in_place)
    assert run_cli(FIXER, ["."], in_place).returncode == 0
    assert (in_place / "a_odd.py").read_bytes() == expected
    checked = subprocess.run(["git", "apply", "--check"], cwd=folder, input=shown.stdout_bytes, capture_output=True)
    assert checked.returncode == 0, checked.stderr.decode(errors="replace")
    for tool in (["git", "apply"], ["patch", "-p1", "--quiet"]):
        copy = tmp_path / tool[0]
        shutil.copytree(folder, copy)
        applied = subprocess.run(tool, cwd=copy, input=shown.stdout_bytes, capture_output=True)
        assert applied.returncode == 0, applied.stderr.decode(errors="replace")
        for name in ("a_odd.py", GOOD):
            assert (copy / name).read_bytes() == (in_place / name).read_bytes(), f"{tool[0]}: {name}"


def test_classic_mac_line_endings_are_checked_and_fixed_whole(tmp_path: Path) -> None:
    """Lone-CR files are checked and fixed: LibCST drops a module's final CR, which the rewrite puts
    back, so the file is the fixed file with every line ending a CR (the fixer's adversarial review,
    2026-12-05: it was refused with exit 2)."""
    data = SOURCE.replace(b"\n", b"\r")
    folder = project(tmp_path, {"mac.py": data})
    checked, fixed = check_and_fix(folder, ["."])
    assert checked.returncode == 1 and not checked.errors(), checked.describe()
    assert paths_with_findings(checked) == {GOOD, "mac.py"}
    assert fixed.returncode == 0 and not fixed.errors(), fixed.describe()
    assert (folder / "mac.py").read_bytes() == FIXED.replace(b"\n", b"\r")
    assert (folder / GOOD).read_bytes() == FIXED


def test_empty_file(tmp_path: Path) -> None:
    folder = project(tmp_path, {"empty.py": b"", "blank.py": b"\n\n"})
    checked, fixed = check_and_fix(folder, ["."])
    assert checked.returncode == 1 and not checked.errors(), checked.describe()
    assert fixed.returncode == 0 and not fixed.errors(), fixed.describe()
    assert (folder / "empty.py").read_bytes() == b""
    assert (folder / "blank.py").read_bytes() == b"\n\n"
    assert (folder / GOOD).read_bytes() == FIXED


def child_cpu_seconds(action: Callable[[], Run]) -> tuple[Run, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = action()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return run, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_fifty_thousand_line_file(tmp_path: Path) -> None:
    """Works, in a time that grows no worse than linearly (CPU seconds, so a busy machine does not matter)."""
    filler = b"".join(b"def g%d(a):\n    return a + %d\n" % (index, index) for index in range(25_000))
    data = IMPORT + filler + FUNCTION
    expected = IMPORT + filler + FUNCTION.replace(b"    return x", GUARD + b"    return x")
    assert data.count(b"\n") >= 50_000
    folder = project(tmp_path, {"big.py": data})
    checked, check_seconds = child_cpu_seconds(lambda: run_cli(CHECKER, ["big.py"], folder))
    fixed, fix_seconds = child_cpu_seconds(lambda: run_cli(FIXER, ["big.py"], folder))
    print(f"\n50,000-line file: check {check_seconds:.1f} s CPU, fix {fix_seconds:.1f} s CPU")
    assert checked.returncode == 1 and fixed.returncode == 0, fixed.describe()
    assert (folder / "big.py").read_bytes() == expected
    assert check_seconds < 15, f"checking took {check_seconds:.1f} s CPU"
    assert fix_seconds < 90, f"fixing took {fix_seconds:.1f} s CPU"


def test_noqa_after_a_form_feed_is_honoured(tmp_path: Path) -> None:
    """A form feed (common between sections of older code) is not a line break for Python: the
    `# noqa` on the finding's line must still be found."""
    silenced = IMPORT + b"\x0c\n" + FUNCTION.replace(b"x[:, n:]\n", b"x[:, n:]  # noqa: SLG002\n")
    (tmp_path / "silenced.py").write_bytes(silenced)
    checked, fixed = check_and_fix(tmp_path, ["silenced.py"])
    assert checked.returncode == 0 and checked.stdout == "", checked.describe()
    assert fixed.returncode == 0, fixed.describe()
    assert (tmp_path / "silenced.py").read_bytes() == silenced

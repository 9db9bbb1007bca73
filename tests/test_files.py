"""File discovery and reading: what both CLIs are handed before any rule runs."""

from __future__ import annotations

import os
import tokenize
from collections.abc import Callable
from pathlib import Path

import pytest

from lint_rules.files import (
    ReadError,
    SourceFile,
    iter_python_files,
    may_contain_source,
    path_matches,
    read_bytes,
    read_source,
)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small project, with the test running inside it so paths stay relative."""
    for name in [
        "pkg/__init__.py",
        "pkg/model.py",
        "pkg/stubs.pyi",
        "pkg/notes.txt",
        "pkg/sub/deep.py",
        "pkg/gen_pb2.py",
        "build/lib/copy.py",
        "tests/fixtures/bad.py",
        "tests/test_model.py",
        ".venv/lib/site.py",
        "pkg/__pycache__/model.cpython-311.py",
        "script",
    ]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def listed(paths: list[str], exclude: list[str] | None = None) -> list[str]:
    items = list(iter_python_files(paths, exclude or []))
    return [item if isinstance(item, str) else f"ERROR {item.text()}" for item in items]


# ------------------------------------------------------------------------- path_matches


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("build/lib/copy.py", "build/*"),
        ("./build/lib/copy.py", "build/*"),
        ("src/build/lib/copy.py", "build/*"),
        ("pkg/gen_pb2.py", "*_pb2.py"),
        ("tests/fixtures/bad.py", "tests/fixtures/*"),
        ("repo/tests/fixtures/bad.py", "tests/fixtures/*"),
        ("tests/fixtures", "tests/fixtures"),
        ("tests/fixtures", "tests/fixtures/"),
        ("pkg/model.py", "model.py"),
        ("pkg/model.py", "pkg"),
    ],
)
def test_path_matches(path: str, glob: str) -> None:
    if glob == "pkg":
        # A bare folder name matches the folder, not the files inside it: the walk prunes it.
        assert not path_matches(path, glob)
        assert path_matches("pkg", glob)
    else:
        assert path_matches(path, glob)


@pytest.mark.parametrize(
    ("path", "glob"),
    [
        ("pkg/model.py", "build/*"),
        ("pkg/rebuild/x.py", "build/*"),
        ("pkg/model.py", "*.pyi"),
        ("mytests/fixtures/bad.py", "tests/fixtures/*"),
    ],
)
def test_path_does_not_match(path: str, glob: str) -> None:
    assert not path_matches(path, glob)


def test_absolute_glob_matches_relative_path(tree: Path) -> None:
    assert path_matches("build/lib/copy.py", f"{tree}/build/*")


# -------------------------------------------------------------------- iter_python_files


def test_walk_finds_python_files_sorted_and_skips_tool_folders(tree: Path) -> None:
    assert listed(["."]) == [
        "pkg/__init__.py",
        "pkg/gen_pb2.py",
        "pkg/model.py",
        "pkg/stubs.pyi",
        "pkg/sub/deep.py",
        "tests/fixtures/bad.py",
        "tests/test_model.py",
    ]


def test_exclude_applies_while_walking(tree: Path) -> None:
    assert listed(["."], exclude=["*_pb2.py", "tests/fixtures/*", "sub"]) == [
        "pkg/__init__.py",
        "pkg/model.py",
        "pkg/stubs.pyi",
        "tests/test_model.py",
    ]


def test_exclude_applies_to_explicit_files(tree: Path) -> None:
    """pre-commit passes files one by one; a configured exclude must still hold."""
    assert listed(["tests/fixtures/bad.py", "pkg/model.py"], exclude=["tests/fixtures/*"]) == ["pkg/model.py"]


def test_excluded_folder_name_covers_explicit_files_inside(tree: Path) -> None:
    assert listed(["build/lib/copy.py", "pkg/sub/deep.py", "pkg/model.py"], exclude=["build", "sub"]) == [
        "pkg/model.py"
    ]


def test_explicit_file_taken_without_python_suffix(tree: Path) -> None:
    assert listed(["script", "pkg/notes.txt"]) == ["pkg/notes.txt", "script"]


def test_explicit_folder_inside_skipped_folder_is_walked(tree: Path) -> None:
    """Folders such as .venv or build are skipped only when met during a walk."""
    assert listed(["build"]) == ["build/lib/copy.py"]
    assert listed([".venv/lib"]) == [".venv/lib/site.py"]


def test_each_file_listed_once(tree: Path) -> None:
    assert listed(["pkg/model.py", "./pkg/model.py", "pkg/sub", "pkg/sub/deep.py"]) == [
        "pkg/model.py",
        "pkg/sub/deep.py",
    ]


def test_missing_path_is_an_error_item(tree: Path) -> None:
    assert listed(["nope.py", "pkg/model.py"]) == [
        "ERROR nope.py: no such file or directory",
        "pkg/model.py",
    ]


def test_symlinked_folder_loop_is_reported_not_followed(tree: Path) -> None:
    os.symlink("..", tree / "pkg" / "sub" / "up")
    items = listed(["pkg"])
    assert "pkg/sub/up: symlink loop" in " ".join(items)
    assert [item for item in items if not item.startswith("ERROR")] == [
        "pkg/__init__.py",
        "pkg/gen_pb2.py",
        "pkg/model.py",
        "pkg/stubs.pyi",
        "pkg/sub/deep.py",
    ]


def test_symlinked_folder_elsewhere_is_followed_once(tree: Path) -> None:
    os.symlink(tree / "pkg" / "sub", tree / "tests" / "linked")
    assert listed(["tests"]) == ["tests/fixtures/bad.py", "tests/linked/deep.py", "tests/test_model.py"]
    assert listed(["pkg/sub", "tests"]) == ["pkg/sub/deep.py", "tests/fixtures/bad.py", "tests/test_model.py"]


def test_self_referencing_symlink_is_an_error_item(tree: Path) -> None:
    os.symlink("loop.py", tree / "loop.py")
    assert listed(["loop.py"]) == ["ERROR loop.py: symlink loop: the link resolves to itself"]
    assert listed(["."])[0] == "ERROR loop.py: symlink loop: the link resolves to itself"


def test_broken_symlink_is_an_error_item(tree: Path) -> None:
    os.symlink("gone.py", tree / "pkg" / "dangling.py")
    assert "ERROR pkg/dangling.py: broken symlink to 'gone.py'" in listed(["pkg"])


def test_no_paths_gives_nothing() -> None:
    assert listed([]) == []


# -------------------------------------------------------------------------- read_source


def test_reads_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes("name = 'héllo'\r\n".encode())
    source = read_source(str(path))
    assert isinstance(source, SourceFile)
    assert source.text == "name = 'héllo'\r\n"
    assert source.encoding == "utf-8"
    assert not source.has_bom


def test_reads_utf8_bom_without_keeping_it(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\n")
    source = read_source(str(path))
    assert isinstance(source, SourceFile)
    assert source.text == "x = 1\n"
    assert source.has_bom
    assert source.encode("y = 2\n") == b"\xef\xbb\xbfy = 2\n"


def test_a_file_that_mentions_no_source_method_is_not_decoded(tmp_path: Path) -> None:
    """The prefilter works on the bytes: most files are read and dropped without a decode."""
    path = tmp_path / "a.py"
    path.write_bytes(b"name = '\xff'\n")  # not UTF-8: decoding it would fail
    assert read_source(str(path), ["get_seq_length"]) is None
    assert isinstance(read_source(str(path)), ReadError)
    path.write_bytes(b"n = cache.get_seq_length()\n")
    assert isinstance(read_source(str(path), ["get_seq_length"]), SourceFile)


def test_honours_latin1_coding_cookie(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
    source = read_source(str(path))
    assert isinstance(source, SourceFile)
    assert source.text == "# -*- coding: latin-1 -*-\nname = 'é'\n"
    assert source.encode(source.text) == path.read_bytes()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"x = '\xff'\n", "cannot decode as utf-8: invalid byte 0xff on line 1"),
        (b"a = 1\nb = '\xc3'\n", "cannot decode as utf-8: invalid byte 0xc3 on line 2"),
        (b"# coding: klingon\nx = 1\n", "bad encoding declaration: unknown encoding: klingon"),
        # with a BOM, the codec counts after it: the byte and line named are still the file's
        (b"\xef\xbb\xbfa = 1\nb = 2\nc = '\xff'\n", "cannot decode as utf-8: invalid byte 0xff on line 3"),
        (b"\xef\xbb\xbf\xe9 = 1\n", "cannot decode as utf-8: invalid byte 0xe9 on line 1"),
        # lines end as Python ends them: \r\n, \r or \n
        (b"a = 1\rb = 2\r\nc = '\xff'\n", "cannot decode as utf-8: invalid byte 0xff on line 3"),
        (b"\xef\xbb\xbf# coding: latin-1\n", "bad encoding declaration: encoding problem: utf-8"),
        (b"\x7fELF\x02\x01\x01\x00\x00", "binary file (contains NUL bytes), not Python source"),
    ],
)
def test_bad_content_is_a_read_error(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "a.py"
    path.write_bytes(content)
    assert read_source(str(path)) == ReadError(str(path), reason)


@pytest.mark.parametrize(
    "head",
    [
        b"x = 1\n",
        b"\xef\xbb\xbfx = 1\n",
        b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n",
        b"\n\n# coding: latin-1\n",  # the third line: not a declaration
        b"# encoding=utf-8\n",
        b"\xef\xbb\xbf# coding: utf-8\n",
        b"x = 'coding'\n",
        b"",
    ],
)
def test_the_encoding_is_the_one_tokenize_detects(tmp_path: Path, head: bytes) -> None:
    """Files without the word "coding" in their first two lines skip `tokenize`; the result is the same."""
    path = tmp_path / "a.py"
    path.write_bytes(head + b"y = 2\n")
    lines = iter(path.read_bytes().splitlines(keepends=True)[:2])
    expected, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    source = read_source(str(path))
    assert isinstance(source, SourceFile)
    assert source.encoding == expected


def test_folder_named_like_a_python_file(tmp_path: Path) -> None:
    (tmp_path / "x.py").mkdir()
    assert read_source(str(tmp_path / "x.py")) == ReadError(str(tmp_path / "x.py"), "is a folder, not a file")


def test_missing_file(tmp_path: Path) -> None:
    error = read_source(str(tmp_path / "gone.py"))
    assert error == ReadError(str(tmp_path / "gone.py"), "cannot read: no such file or directory")


def test_unreadable_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Faked: chmod 0 does not stop root, and CI runs as root."""

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    assert read_source("secret.py") == ReadError("secret.py", "cannot read: permission denied")


# ------------------------------------------------------------------- may_contain_source


def test_prefilter() -> None:
    assert may_contain_source(b"n = cache.get_seq_length()\n", ["get_seq_length"])
    assert may_contain_source(b"n = cache.seen_tokens()\n", ["get_seq_length", "seen_tokens"])
    assert not may_contain_source(b"n = cache.get_max_length()\n", ["get_seq_length"])
    assert not may_contain_source(b"", ["get_seq_length"])


@pytest.mark.parametrize(
    "stat_size",
    [
        pytest.param(lambda n: n, id="the size stat said"),
        pytest.param(lambda n: 10, id="the file grew since the stat"),
        pytest.param(lambda n: n + 50, id="the file shrank since the stat"),
        pytest.param(lambda n: -1, id="no stat"),
    ],
)
@pytest.mark.parametrize("length", [0, 7, 200_000])
def test_read_bytes_returns_the_whole_file(tmp_path: Path, stat_size: Callable[[int], int], length: int) -> None:
    data = bytes(range(256)) * (length // 256) + b"x" * (length % 256)
    path = tmp_path / "m.py"
    path.write_bytes(data)
    assert read_bytes(str(path), stat_size(length)) == data

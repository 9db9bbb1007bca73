"""A pyproject.toml parsed once while it is unchanged: the configuration (finding the nearest table,
then loading it) and the transformers range (its `[project]` requirements) all read the same file,
five parses per run before."""

from __future__ import annotations

import functools
import os
from pathlib import Path


def toml_document(path: Path) -> dict[str, object]:
    """The parsed file; raises `OSError`, `UnicodeDecodeError` (not UTF-8) or `tomllib.TOMLDecodeError`.
    The caller must not change what it gets: the next caller gets the same dict."""
    status = os.stat(path)
    return _parsed(str(path), status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=16)
def _parsed(path: str, mtime_ns: int, size: int) -> dict[str, object]:
    import tomllib  # only where a pyproject.toml is found: it costs start-up time

    return tomllib.loads(Path(path).read_bytes().decode())

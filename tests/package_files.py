"""Writing a package of small modules for a test: `root/name/__init__.py` and one file per module,
each text dedented."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_package(root: Path, modules: dict[str, str], name: str = "pkg") -> Path:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module, text in modules.items():
        (package / f"{module}.py").write_text(textwrap.dedent(text))
    return package

"""Writing a package of small modules for a test: `root/name/__init__.py` and one file per module,
each text dedented."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from pathlib import Path

SEPARATOR = re.compile(r"[./]")


def write_package(root: Path, modules: dict[str, str], name: str = "pkg", folders: Iterable[str] = ()) -> Path:
    """`root/name`, a package, with each module of `modules` keyed by its path under it (`helpers`,
    `models.llama.modeling_llama` or `models/llama`); every folder on the way, and each of `folders`,
    is a package too (an empty `__init__.py` unless `modules` gives one). Writing into a package
    written before adds to it."""
    package = root / name
    make_packages(package, [])
    for folder in folders:
        make_packages(package, SEPARATOR.split(folder))
    for module, text in modules.items():
        *parents, last = SEPARATOR.split(module)
        make_packages(package, parents)
        package.joinpath(*parents, f"{last}.py").write_text(textwrap.dedent(text))
    return package


def make_packages(package: Path, parts: list[str]) -> None:
    """`package` and each folder of `parts` under it, each with an `__init__.py` (an empty one if it has none)."""
    for depth in range(len(parts) + 1):
        folder = package.joinpath(*parts[:depth])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").touch(exist_ok=True)

"""The engine's folders are its layers: a module imports only its own layer or the layers below it
(docs/how-it-works.md), so that the layout shows what depends on what."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "lint_rules" / "engine"
LAYERS = ("facts", "flow", "fixes", "analysis")
"""Bottom first: `facts/`, `flow/`, `fixes/`, then the run (`analysis.py`)."""


def layer_of(module: str) -> int:
    """The rank of an engine module (`lint_rules.engine.flow.values` -> 1)."""
    part = module.removeprefix("lint_rules.engine.").split(".")[0]
    return LAYERS.index(part)


def engine_modules() -> dict[str, Path]:
    found = {}
    for path in ENGINE.rglob("*.py"):
        if path.name == "__init__.py":
            continue
        relative = path.relative_to(ENGINE).with_suffix("")
        found["lint_rules.engine." + ".".join(relative.parts)] = path
    return found


def imported_engine_modules(path: Path) -> set[str]:
    """Every engine module the file imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lint_rules.engine."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("lint_rules.engine.")}
    return found


def test_every_engine_module_sits_in_a_layer() -> None:
    for module in engine_modules():
        assert layer_of(module) >= 0, module


def test_no_engine_module_imports_a_higher_layer() -> None:
    upward = [
        f"{module} imports {imported}"
        for module, path in engine_modules().items()
        for imported in imported_engine_modules(path)
        if layer_of(imported) > layer_of(module)
    ]
    assert upward == []


def test_the_check_itself_would_see_an_upward_import() -> None:
    assert layer_of("lint_rules.engine.fixes.fixplan") > layer_of("lint_rules.engine.facts.classes")
    assert imported_engine_modules(ENGINE / "flow" / "values.py") >= {"lint_rules.engine.flow.taint"}

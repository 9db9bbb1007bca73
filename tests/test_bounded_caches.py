"""The caches of other modules (`module_files._PARSED`, the trees; `classes._OTHER_MODULES`, their class
facts) keep only the modules used last: a long flake8 or editor process must not keep every module
it ever read. An evicted module is read again, with the same result."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine.facts import classes, module_files
from lint_rules.engine.facts.bounded_cache import BoundedCache
from lint_rules.settings import Settings

SIBLINGS = 12
BOUND = 4


def test_reading_an_entry_keeps_it_and_the_oldest_goes() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache["a"], cache["b"] = 1, 2
    assert cache["a"] == 1  # "a" is now the newest
    cache["c"] = 3
    assert list(cache) == ["a", "c"]
    cache["a"] = 4
    cache["d"] = 5
    assert dict(cache) == {"a": 4, "d": 5}


def test_parsed_trees_stay_within_their_bound(tmp_path: Path) -> None:
    """The process's own cache, as a long flake8 run uses it."""
    for index in range(module_files.MAX_PARSED_MODULES + 10):
        file = tmp_path / f"m{index}.py"
        file.write_text(f"x = {index}\n")
        tree = module_files.parsed_module(file)
        assert tree is not None and module_files.parsed_module(file) is tree  # cached while it is recent
    assert len(module_files._PARSED) == module_files.MAX_PARSED_MODULES
    assert tmp_path / "m0.py" not in {file for file, _ in module_files._PARSED}
    assert isinstance(classes._OTHER_MODULES, BoundedCache)
    assert classes._OTHER_MODULES.maxsize == classes.MAX_OTHER_MODULES


def write_package(root: Path) -> Path:
    """`caches{i}.py` defines an int-length cache class; `model{i}.py` uses it through an annotation."""
    package = root / "many"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for index in range(SIBLINGS):
        (package / f"caches{index}.py").write_text(
            textwrap.dedent(
                f"""
                class Counter{index}:
                    def __init__(self):
                        self.seen = 0

                    def get_seq_length(self):
                        return self.seen
                """
            )
        )
        (package / f"model{index}.py").write_text(
            textwrap.dedent(
                f"""
                from .caches{index} import Counter{index}

                def trim(cache: Counter{index}, x):
                    return x[:, cache.get_seq_length():]

                def trim_any(cache, x):
                    return x[:, cache.get_seq_length():]
                """
            )
        )
    return package


def test_sibling_modules_stay_within_the_bound_with_the_same_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: BoundedCache[object, object] = BoundedCache(BOUND)
    other_modules: BoundedCache[object, object] = BoundedCache(BOUND)
    monkeypatch.setattr(module_files, "_PARSED", parsed)
    monkeypatch.setattr(classes, "_OTHER_MODULES", other_modules)
    package = write_package(tmp_path)
    models = [package / f"model{index}.py" for index in range(SIBLINGS)]
    for model in [*models, models[0]]:  # the first again, once its sibling has been evicted
        found = [(finding.line, finding.function) for finding in check_path(str(model), Settings()).findings]
        assert found == [(8, "trim_any")], model.name  # the int-length class of the sibling is known
        assert len(parsed) <= BOUND and len(other_modules) <= BOUND
    assert len(other_modules) == BOUND, "the sibling modules' facts were not cached at all"

"""Every row of the engine's release table (`lint_rules/engine/facts/releases.py`) against the source of the
release it names: `transformers/cache_utils.py` and `generation/utils.py` of that wheel, read with
`ast` (tests/release_source.py) without importing torch or transformers. 5.5.3 and 5.24.0 are read
where tests/runtime installed them; the other wheels are downloaded once into benchmarks/.cache."""

from __future__ import annotations

import ast
import importlib.util
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from lint_rules.engine.facts.cache_attributes import TRANSFORMERS_CACHE_ATTRIBUTES
from lint_rules.engine.facts.releases import (
    INT_LENGTH,
    PATH_ENDING_METHODS,
    RELEASES,
    SEEN_TOKENS_ABSENT,
    SEEN_TOKENS_INT,
    SEEN_TOKENS_NONE,
    TABLE_CLASSES,
    TENSOR_LENGTH,
    ReleaseFacts,
)
from tests.release_source import (
    CACHE_FILES,
    NAMING_FILES,
    CacheModule,
    cache_names,
    hook_calls_without_position,
    passes_cache_position,
    wheel_modules,
    wheel_sources,
)

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
WHEELS = REPO / "benchmarks" / ".cache" / "transformers-wheels"


def installed_folder(version: str) -> Path | None:
    """The release's package folder in the venv or tests/runtime's side environment, where one has it."""
    import transformers

    folders = [REPO / ".runtime" / f"transformers-{version}" / "transformers"]
    if transformers.__version__ == version:
        folders.insert(0, Path(transformers.__file__).parent)
    return next((folder for folder in folders if (folder / "cache_utils.py").is_file()), None)


def installed_sources(version: str, names: tuple[str, ...]) -> dict[str, str] | None:
    folder = installed_folder(version)
    if folder is None:
        return None
    return {name: (folder / name).read_text(encoding="utf-8") for name in names}


def release_modules(version: str) -> Iterator[tuple[str, bytes]]:
    folder = installed_folder(version)
    if folder is None:
        yield from wheel_modules(version, WHEELS)
        return
    for path in folder.rglob("*.py"):
        yield str(path.relative_to(folder.parent)), path.read_bytes()


def sources(version: str, names: tuple[str, ...] = CACHE_FILES) -> dict[str, str]:
    found = installed_sources(version, names)
    if found is not None:
        return found
    WHEELS.mkdir(parents=True, exist_ok=True)
    return wheel_sources(version, WHEELS, names)


def row_id(row: ReleaseFacts) -> str:
    return f"{row.name}@{row.checked}"


@pytest.fixture(scope="module", params=RELEASES, ids=row_id)
def release(request: pytest.FixtureRequest) -> tuple[ReleaseFacts, CacheModule, str]:
    row: ReleaseFacts = request.param
    read = sources(row.checked)
    return row, CacheModule(read["cache_utils.py"]), read["generation/utils.py"]


def test_the_row_names_the_classes_of_its_release(release: tuple[ReleaseFacts, CacheModule, str]) -> None:
    row, module, _ = release
    present = {cls for cls in TABLE_CLASSES if module.has_class(cls)}
    assert present == {cls for cls, _ in row.lengths}


def test_each_class_has_the_length_kind_of_its_release(release: tuple[ReleaseFacts, CacheModule, str]) -> None:
    row, module, _ = release
    for cls, kind in row.lengths:
        assert module.length_kind(cls) == kind, f"{cls} in {row.checked}"


def test_the_row_names_the_counters_its_int_length_classes_return(
    release: tuple[ReleaseFacts, CacheModule, str],
) -> None:
    """A package subclass that binds one of them to anything but an int is not taken as int-length
    (`ReleaseFacts.counters`): the row names every attribute whose value such a class returns."""
    row, module, _ = release
    for cls, kind in row.lengths:
        expected = module.attributes_returned_by_value(cls) if kind == INT_LENGTH else set()
        assert row.counters_of(cls) == expected, f"{cls} in {row.checked}"


def test_a_class_the_row_counts_as_an_int_without_a_config_builds_only_int_layers_then(
    release: tuple[ReleaseFacts, CacheModule, str],
) -> None:
    """5.25's `DynamicCache(config=...)` may start with a linear-attention layer that counts in a tensor;
    with no config its `__init__` builds only layers that count ints."""
    row, module, _ = release
    for cls in row.int_without_config:
        assert row.length_kind(cls) == TENSOR_LENGTH, f"{cls} in {row.checked}: an int with any config"
        assert module.layers_built_without_config_kind(cls) == INT_LENGTH, f"{cls} in {row.checked}"


def test_the_methods_a_release_lacks_no_class_of_it_has(release: tuple[ReleaseFacts, CacheModule, str]) -> None:
    """A method the row says `Cache` lacks is defined by no class of the release: calling it raises."""
    row, module, _ = release
    assert {name for name in PATH_ENDING_METHODS if module.method("Cache", name)} == row.methods
    for name in set(PATH_ENDING_METHODS) - row.methods:
        assert not module.defines_anywhere(name), f"{name} in {row.checked}"


def test_seen_tokens_of_the_release(release: tuple[ReleaseFacts, CacheModule, str]) -> None:
    row, module, _ = release
    property_holders = [cls for cls in module.classes.values() if module.method(cls.name, "seen_tokens")]
    if row.seen_tokens == SEEN_TOKENS_INT:
        assert not property_holders
        counter = ast.Attribute(ast.Name("self"), "seen_tokens")
        for cls, _ in row.lengths:
            assert module.attribute_kind(counter, cls, frozenset()) == INT_LENGTH, f"{cls} in {row.checked}"
    elif row.seen_tokens == SEEN_TOKENS_NONE:
        prop = module.method("Cache", "seen_tokens")
        assert prop is not None
        returned = [ast.unparse(node.value) for node in ast.walk(prop) if isinstance(node, ast.Return) and node.value]
        assert returned == ["self._seen_tokens", "None"]
        for cls, kind in row.lengths:
            if kind == TENSOR_LENGTH:
                assert not module.self_assignments(module.chain(cls), "_seen_tokens"), f"{cls} in {row.checked}"
    else:
        assert row.seen_tokens == SEEN_TOKENS_ABSENT
        assert not property_holders
        assert not module.self_assignments(list(module.classes.values()), "seen_tokens")


def test_the_hook_gets_a_cache_position_where_the_row_says(release: tuple[ReleaseFacts, CacheModule, str]) -> None:
    """`generate()` always sets one, and no other caller in the release omits it."""
    row, _, generation = release
    omitting = hook_calls_without_position(release_modules(row.checked))
    assert (passes_cache_position(generation) and not omitting) == row.generate_passes_cache_position, omitting


def test_the_transformers_attribute_table_has_every_cache_attribute_of_the_release(
    release: tuple[ReleaseFacts, CacheModule, str],
) -> None:
    """`hasattr(c, name)` proves nothing where a transformers cache has `name` (`attribute_owners`):
    every attribute of a class of the release that defines `get_seq_length` (or of cache_utils, or a
    base of those in those modules), and of torch.nn.Module (4.x caches were modules), is in the table."""
    row, _, _ = release
    classes: dict[str, list[ast.ClassDef]] = {}
    wanted: set[str] = set()
    for path, data in release_modules(row.checked):
        in_cache_utils = path.endswith("transformers/cache_utils.py")
        if b"def get_seq_length" not in data and not in_cache_utils:
            continue
        for node in ast.walk(ast.parse(data)):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append(node)
                if in_cache_utils or any(
                    isinstance(item, ast.FunctionDef) and item.name == "get_seq_length" for item in node.body
                ):
                    wanted.add(node.name)
    pending = list(wanted)
    while pending:
        for node in classes.get(pending.pop(), []):
            for base in node.bases:
                name = ast.unparse(base).rpartition(".")[2]
                if name in classes and name not in wanted:
                    wanted.add(name)
                    pending.append(name)
    names = torch_module_attributes()
    for name in wanted:
        for node in classes[name]:
            names |= class_attributes(node)
    missing = {name for name in names if not name.startswith("__")} - TRANSFORMERS_CACHE_ATTRIBUTES
    assert not missing, sorted(missing)


def torch_module_attributes() -> set[str]:
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.origin is not None
    module = ast.parse((Path(spec.origin).parent / "nn" / "modules" / "module.py").read_bytes())
    return class_attributes(
        next(node for node in module.body if isinstance(node, ast.ClassDef) and node.name == "Module")
    )


def class_attributes(node: ast.ClassDef) -> set[str]:
    """The names a class body binds and the `self.attr` names its methods use."""
    names: set[str] = set()
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names | {
        item.attr
        for item in ast.walk(node)
        if isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name) and item.value.id == "self"
    }


@pytest.mark.parametrize("row", RELEASES, ids=row_id)
def test_the_names_of_the_cache_are_those_the_row_says(row: ReleaseFacts) -> None:
    """`cache_renamed`: models take `cache=` (and rename a `past_key_values=` to it) and their outputs
    hold a `cache` field (and answer `.past_key_values` with it); before, only the old names exist."""
    renamed = row.cache_renamed
    assert cache_names(sources(row.checked, NAMING_FILES)) == {
        "parameter past_key_values": not renamed,
        "parameter cache": renamed,
        "renames the keyword": renamed,
        "field past_key_values": not renamed,
        "field cache": renamed,
        "property past_key_values": renamed,
    }


def test_the_rows_cover_consecutive_minors() -> None:
    for earlier, later in itertools.pairwise(RELEASES):
        (major, minor), (next_major, next_minor) = earlier.last, later.first
        assert (next_major, next_minor) in ((major, minor + 1), (major + 1, 0)), (earlier.name, later.name)
        assert earlier.first <= earlier.last
        assert row_covers(earlier, earlier.checked)


def row_covers(row: ReleaseFacts, version: str) -> bool:
    major, minor = (int(part) for part in version.split(".")[:2])
    return row.first <= (major, minor) <= row.last

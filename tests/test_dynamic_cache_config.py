"""transformers 5.25: a `DynamicCache` built from a config whose first layer is linear attention
(Qwen3-Next, LFM2) counts its length in a tensor; built from no config it holds only layers that count
ints (`releases.ReleaseFacts.int_without_config`, checked against the wheel by tests/test_release_table.py).
Each silent form has its twin built from a config, and each reported form its twin pinned below 5.25."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine import analyze_source
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases
from lint_rules.settings import Settings
from lint_rules.target_range import TargetRange
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT

TRIM = """
from transformers import DynamicCache

def trim(ids, legacy, cfg, options):
    cache = {build}
    return ids[:, cache.get_seq_length():]
"""


def codes(code: str, releases: Releases = ALL_RELEASES) -> list[str]:
    return [finding.code for finding in analyze_source(textwrap.dedent(code), "m.py", releases=releases)]


@pytest.mark.parametrize(
    ("build", "reported"),
    [
        pytest.param("DynamicCache()", False, id="no-argument"),
        pytest.param("DynamicCache(legacy)", False, id="legacy-data"),
        pytest.param("DynamicCache(ddp_cache_data=legacy, offloading=True)", False, id="keywords-but-no-config"),
        pytest.param("DynamicCache.from_legacy_cache(legacy)", False, id="from-legacy-cache"),  # 4.x; raises in 5.x
        pytest.param("transformers.DynamicCache()", False, id="through-the-module"),
        pytest.param("cu.DynamicCache()", False, id="through-a-module-alias"),
        pytest.param("cu.DynamicCache(config=cfg)", True, id="through-a-module-alias-with-config"),
        pytest.param("DynamicCache(config=cfg)", True, id="config-keyword"),
        pytest.param("DynamicCache(legacy, cfg)", True, id="config-positional"),
        pytest.param("DynamicCache(**options)", True, id="unpacked-keywords"),
        pytest.param("DynamicCache(*options)", True, id="unpacked-arguments"),
    ],
)
def test_a_dynamic_cache_counts_an_int_when_built_with_no_config(build: str, reported: bool) -> None:
    """Built from a config (or from what may be one), it may count a tensor from 5.25 on; on a range
    below 5.25 every form counts an int."""
    imports = {"transformers.": "import transformers\n", "cu.": "from transformers import cache_utils as cu\n"}
    code = next((line for prefix, line in imports.items() if build.startswith(prefix)), "") + TRIM.format(build=build)
    assert codes(code) == (["SLG002"] if reported else [])
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT) == []


SUBCLASS = """
from transformers import DynamicCache

class NormalCache(DynamicCache):
{body}

def trim(ids, cfg):
    cache = {build}
    return ids[:, cache.get_seq_length():]
"""


@pytest.mark.parametrize(
    ("body", "build"),
    [
        pytest.param("    def __init__(self):\n        super().__init__()", "NormalCache()", id="super-init-no-config"),
        pytest.param("    pass", "NormalCache()", id="no-init-built-with-no-config"),
        pytest.param(
            "    def __init__(self, config):\n        super().__init__(config=config)", "NormalCache(cfg)", id="config"
        ),
    ],
)
def test_a_package_subclass_keeps_the_kind_of_its_class_however_it_is_built(body: str, build: str) -> None:
    """What a subclass's `__init__`s pass up, or put in `self.layers`, is not followed (an explicit
    `Cache.__init__(self, layers=[...])`, a config passed from another method, a base from another
    module): from 5.25 on it may count a tensor, below 5.25 it counts an int."""
    code = SUBCLASS.format(body=body, build=build)
    assert codes(code) == ["SLG002"]
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT) == []


def test_a_subclass_imported_from_another_module_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "caches.py").write_text(
        "from transformers import DynamicCache\n\n\nclass NormalCache(DynamicCache):\n"
        "    def __init__(self):\n        super().__init__()\n"
    )
    (package / "use.py").write_text(
        "from pkg.caches import NormalCache\n\n\n"
        "def trim(ids):\n"
        "    cache = NormalCache()\n"
        "    return ids[:, cache.get_seq_length():]\n"
    )
    found = check_path(str(package / "use.py"), Settings())
    assert [(finding.line, finding.code) for finding in found.findings] == [(6, "SLG002")]
    pinned = Settings(transformers=TargetRange("<5.25", "test", DYNAMIC_CACHE_COUNTS_INT))
    assert check_path(str(package / "use.py"), pinned).findings == ()


def test_an_attribute_built_with_no_config_counts_an_int() -> None:
    code = """
    from transformers import DynamicCache

    class Runner:
        def __init__(self, config):
            self.plain = DynamicCache()
            self.configured = DynamicCache(config=config)

        def trim(self, ids):
            return ids[:, self.plain.get_seq_length():], ids[:, self.configured.get_seq_length():]
    """
    assert [finding.line for finding in analyze_source(textwrap.dedent(code), "m.py")] == [10]

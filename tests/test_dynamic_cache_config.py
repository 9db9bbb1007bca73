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
        pytest.param("DynamicCache.from_legacy_cache(legacy)", False, id="from-legacy-cache"),
        pytest.param("transformers.DynamicCache()", False, id="through-the-module"),
        pytest.param("DynamicCache(config=cfg)", True, id="config-keyword"),
        pytest.param("DynamicCache(legacy, cfg)", True, id="config-positional"),
        pytest.param("DynamicCache(**options)", True, id="unpacked-keywords"),
        pytest.param("DynamicCache(*options)", True, id="unpacked-arguments"),
    ],
)
def test_a_dynamic_cache_counts_an_int_when_built_with_no_config(build: str, reported: bool) -> None:
    """Built from a config (or from what may be one), it may count a tensor from 5.25 on; on a range
    below 5.25 every form counts an int."""
    code = ("import transformers\n" if build.startswith("transformers.") else "") + TRIM.format(build=build)
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
    ("body", "build", "reported"),
    [
        pytest.param(
            "    def __init__(self, layers=None):\n        super().__init__()",
            "NormalCache(4)",
            False,
            id="super-init-no-config",
        ),
        pytest.param(
            "    def __init__(self):\n        DynamicCache.__init__(self)",
            "NormalCache()",
            False,
            id="base-init-no-config",
        ),
        pytest.param("    pass", "NormalCache()", False, id="no-init-built-with-no-config"),
        pytest.param("    pass", "NormalCache.from_legacy_cache(ids)", False, id="inherited-from-legacy-cache"),
        pytest.param(
            "    def __init__(self, config):\n        super().__init__(config=config)",
            "NormalCache(cfg)",
            True,
            id="passes-its-config-up",
        ),
        pytest.param("    pass", "NormalCache(config=cfg)", True, id="no-init-built-from-a-config"),
        pytest.param(
            "    def __init__(self):\n        self.ready = True", "NormalCache()", True, id="never-initializes-its-base"
        ),
        pytest.param(
            "    @classmethod\n    def from_legacy_cache(cls, data):\n        return cls.build(data)",
            "NormalCache.from_legacy_cache(ids)",
            True,
            id="its-own-from-legacy-cache",
        ),
    ],
)
def test_a_package_subclass_counts_an_int_when_it_passes_no_config_up(body: str, build: str, reported: bool) -> None:
    code = SUBCLASS.format(body=body, build=build)
    assert codes(code) == (["SLG002"] if reported else [])
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT) == []


def test_a_subclass_imported_from_another_module_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "caches.py").write_text(
        "from transformers import DynamicCache\n\n\nclass NormalCache(DynamicCache):\n"
        "    def __init__(self):\n        super().__init__()\n\n\n"
        "class ConfiguredCache(DynamicCache):\n"
        "    def __init__(self, config):\n        super().__init__(config=config)\n"
    )
    (package / "use.py").write_text(
        "from pkg.caches import ConfiguredCache, NormalCache\n\n\n"
        "def trim(ids, cfg):\n"
        "    a = NormalCache()\n"
        "    b = ConfiguredCache(cfg)\n"
        "    return ids[:, a.get_seq_length():], ids[:, b.get_seq_length():]\n"
    )
    found = check_path(str(package / "use.py"), Settings())
    assert [(finding.line, finding.code) for finding in found.findings] == [(7, "SLG002")]  # `b` only
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

"""Compiled reach more than one module away (`lint_rules/engine/facts/package.py`, `MAX_MODULE_HOPS`):
a model's `forward` in one module calls a layer helper of a second module, which calls the length
helper of a third. The length helper runs compiled, so its `.item()` guard would be a graph break.
The same chain ending in host code (a generation loop) keeps its safe guard. Reduced from model zoos
that split a model into `modeling`, `layers` and `cache_ops` modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from lint_rules.checking import check_path
from lint_rules.engine.facts.package import MAX_MODULE_HOPS
from lint_rules.findings import Finding, FixKind, FixSafety
from lint_rules.settings import Settings
from tests.package_files import write_package

POSITIONS = """\
    def trim(cache, ids):
        past = cache.get_seq_length()
        return ids[:, past:]
"""
LAYERS = """\
    from .positions import trim


    def attend(cache, ids):
        return trim(cache, ids)
"""
MODELING = """\
    from torch import nn

    from .layers import attend


    class TinyModel(nn.Module):
        def forward(self, ids, cache):
            return attend(cache, ids)
"""
GENERATION = """\
    from zoo.layers import attend


    def generate(ids, cache):
        return attend(cache, ids)
"""


def trim_findings(package: Path) -> list[Finding]:
    return list(check_path(str(package / "positions.py"), Settings()).findings)


def assert_host_guard(finding: Finding) -> None:
    assert not finding.compiled_region
    assert is_safe_guard(finding)


def is_safe_guard(finding: Finding) -> bool:
    return finding.fix.kind is FixKind.GUARD_AFTER and finding.fix.safety is FixSafety.SAFE


def test_a_helper_two_modules_from_a_forward_is_compiled(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"positions": POSITIONS, "layers": LAYERS, "modeling": MODELING}, "zoo")
    [finding] = trim_findings(package)
    assert "attend in layers.py (line 5)" in finding.compiled_region
    assert "TinyModel.forward in modeling.py (line 8)" in finding.compiled_region
    assert not is_safe_guard(finding)
    positions = package / "positions.py"
    assert ".item()" not in fix_text(str(positions), positions.read_text(), Settings())


def test_the_same_chain_from_host_code_keeps_its_guard(tmp_path: Path) -> None:
    """Must-report twin: only a generation loop calls the layer helper."""
    package = write_package(tmp_path, {"positions": POSITIONS, "layers": LAYERS, "generation": GENERATION}, "zoo")
    [finding] = trim_findings(package)
    assert_host_guard(finding)


CACHE_OPS = """\
    class Offsets:
        @staticmethod
        def trim(cache, ids):
            past = cache.get_seq_length()
            return ids[:, past:]
"""
LAYERS_WITH_METHOD = """\
    from .cache_ops import Offsets


    def attend(cache, ids):
        return Offsets.trim(cache, ids)
"""


def test_a_method_two_modules_from_a_forward_is_compiled(tmp_path: Path) -> None:
    modules = {"cache_ops": CACHE_OPS, "layers": LAYERS_WITH_METHOD, "modeling": MODELING}
    package = write_package(tmp_path, modules, "zoo")
    [finding] = check_path(str(package / "cache_ops.py"), Settings()).findings
    assert "TinyModel.forward in modeling.py" in finding.compiled_region
    assert not is_safe_guard(finding)


def test_a_method_two_modules_from_host_code_keeps_its_guard(tmp_path: Path) -> None:
    modules = {"cache_ops": CACHE_OPS, "layers": LAYERS_WITH_METHOD, "generation": GENERATION}
    package = write_package(tmp_path, modules, "zoo")
    [finding] = check_path(str(package / "cache_ops.py"), Settings()).findings
    assert_host_guard(finding)


PING = """\
    def ping(cache, ids, n):
        from .pong import pong

        past = cache.get_seq_length()
        return pong(cache, ids[:, past:], n - 1) if n else ids
"""
PONG = """\
    from .ping import ping


    def pong(cache, ids, n):
        return ping(cache, ids, n)
"""
MODELING_PONG = """\
    from torch import nn

    from .pong import pong


    class TinyModel(nn.Module):
        def forward(self, ids, cache):
            return pong(cache, ids, 2)
"""


def test_modules_that_call_each_other_end_the_search(tmp_path: Path) -> None:
    """A cycle through two modules: host code when nothing compiled calls into it ..."""
    package = write_package(tmp_path, {"ping": PING, "pong": PONG}, "zoo")
    [finding] = check_path(str(package / "ping.py"), Settings()).findings
    assert_host_guard(finding)


def test_a_cycle_a_forward_calls_into_is_compiled(tmp_path: Path) -> None:
    """... and compiled when a `forward` of a third module calls the other end of the cycle; the
    search from the other end meets the function it started from and stops there."""
    package = write_package(tmp_path, {"ping": PING, "pong": PONG, "modeling": MODELING_PONG}, "zoo")
    [finding] = check_path(str(package / "ping.py"), Settings()).findings
    assert "TinyModel.forward in modeling.py" in finding.compiled_region


def chain(length: int) -> dict[str, str]:
    """`step_0.trim` is called by `step_1.call_1`, ..., by `step_{length}.call_{length}`, called by a `forward`."""
    modules = {"step_0": POSITIONS.replace("trim", "call_0")}
    for index in range(1, length + 1):
        modules[f"step_{index}"] = (
            f"from .step_{index - 1} import call_{index - 1}\n\n\n"
            f"def call_{index}(cache, ids):\n    return call_{index - 1}(cache, ids)\n"
        )
    modules["modeling"] = MODELING.replace(".layers import attend", f".step_{length} import call_{length}").replace(
        "attend(", f"call_{length}("
    )
    return modules


def test_a_forward_as_many_modules_away_as_are_searched_is_found(tmp_path: Path) -> None:
    package = write_package(tmp_path, chain(MAX_MODULE_HOPS - 1), "zoo")
    [finding] = check_path(str(package / "step_0.py"), Settings()).findings
    assert "TinyModel.forward in modeling.py" in finding.compiled_region


def test_past_the_modules_searched_a_function_is_taken_as_compiled(tmp_path: Path) -> None:
    """A search cut by the bound leaves the code alone, as one cut by the call depth does."""
    package = write_package(tmp_path, {**chain(MAX_MODULE_HOPS + 1), "modeling": "x = 1\n"}, "zoo")
    [finding] = check_path(str(package / "step_0.py"), Settings()).findings
    assert "taken as compiled" in finding.compiled_region
    assert not is_safe_guard(finding)


OPS = """\
    def trim(cache, ids):
        past = cache.get_seq_length()
        return ids[:, past:]


    def attend(cache, ids):
        return trim(cache, ids)
"""
MODELING_OPS = MODELING.replace(".layers import attend", ".ops import attend")
GENERATION_OPS = MODELING_OPS.replace(
    "class TinyModel(nn.Module):\n        def forward", "class Loop:\n        def run"
)


def ops_findings(package: Path) -> list[Finding]:
    return list(check_path(str(package / "ops.py"), Settings()).findings)


def test_a_helper_whose_caller_in_its_module_a_forward_elsewhere_calls_is_compiled(tmp_path: Path) -> None:
    """The second reader's first case: the search in other modules is for every function the search
    in the module reached, not only the function asked about."""
    package = write_package(tmp_path, {"ops": OPS, "modeling": MODELING_OPS}, "zoo")
    [finding] = ops_findings(package)
    assert "called from attend (line 7), which is called from TinyModel.forward" in finding.compiled_region
    assert not is_safe_guard(finding)


def test_the_same_helper_whose_caller_only_host_code_elsewhere_calls_keeps_its_guard(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"ops": OPS, "generation": GENERATION_OPS}, "zoo")
    [finding] = ops_findings(package)
    assert_host_guard(finding)


OFFSETS = (
    CACHE_OPS
    + """
        @staticmethod
        def attend(cache, ids):
            return Offsets.trim(cache, ids)
"""
)


def test_a_method_whose_caller_in_its_class_a_forward_elsewhere_calls_is_compiled(tmp_path: Path) -> None:
    modeling = MODELING_OPS.replace("import attend", "import Offsets").replace("attend(cache", "Offsets.attend(cache")
    package = write_package(tmp_path, {"ops": OFFSETS, "modeling": modeling}, "zoo")
    [finding] = ops_findings(package)
    assert "TinyModel.forward in modeling.py" in finding.compiled_region
    assert not is_safe_guard(finding)


NESTED_SAME_NAME = """\
    def offset(cache, ids):
        past = cache.get_seq_length()
        return ids[:, past:]


    def outer(cache, ids):
        def trim(c, i):
            return offset(c, i)

        return trim(cache, ids)


    def trim(cache, ids):
        past = cache.get_seq_length()
        return ids[:, past:]
"""


def test_a_nested_def_of_the_same_name_keeps_its_own_answer(tmp_path: Path) -> None:
    """The second reader's second case: the module-level `trim` that a `forward` elsewhere calls is
    compiled, whatever was found first for the nested `trim` (host code)."""
    modeling = MODELING_OPS.replace("import attend", "import trim").replace("attend(cache", "trim(cache")
    package = write_package(tmp_path, {"ops": NESTED_SAME_NAME, "modeling": modeling}, "zoo")
    by_function = {finding.function: finding for finding in ops_findings(package)}
    assert is_safe_guard(by_function["offset"])
    assert "TinyModel.forward in modeling.py" in by_function["trim"].compiled_region
    assert not is_safe_guard(by_function["trim"])


CYCLE = {
    "a": "from .c import h\n\n\ndef f(cache, ids, n):\n    past = cache.get_seq_length()\n"
    "    return h(cache, ids[:, past:], n - 1) if n else ids\n",
    "b": "from .a import f\n\n\ndef g(cache, ids, n):\n    return f(cache, ids, n)\n",
    "c": "from .b import g\n\n\ndef h(cache, ids, n):\n    return g(cache, ids, n)\n",
}


def test_a_cycle_through_three_modules_reads_the_same_from_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second reader's fifth case: the search meets the function it started from whatever way
    the analyzed file's path is written (no `forward` anywhere: host code)."""
    package = write_package(tmp_path, CYCLE, "zoo")
    monkeypatch.chdir(tmp_path)
    for path in ("zoo/a.py", str(package / "a.py")):
        [finding] = check_path(path, Settings()).findings
        assert (finding.compiled_region, is_safe_guard(finding)) == ("", True), path

"""A second reader on the day's facts (2026-12-05): each hole it found, reduced, with its twin."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from lint_rules.checking import check_text
from lint_rules.engine import analyze_source
from lint_rules.findings import FixKind
from lint_rules.settings import Settings
from tests.test_generation_hook import HOOK, HOOK_FINDINGS, hook_findings

LOCAL_IMPORT = """\
def host(cache, ids, flag):
    n = cache.get_seq_length()
    {imports}
    return ids[:, n:]
"""


@pytest.mark.parametrize("imports", ["import torch", "if flag:\n        import torch"])
def test_no_guard_where_a_later_or_conditional_local_import_makes_torch_local(imports: str) -> None:
    """`torch` is a local of the whole function: a guard before the import raises UnboundLocalError."""
    source = "import torch\n\n\n" + LOCAL_IMPORT.format(imports=imports)
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.kind is FixKind.NONE for finding in findings)


def test_twin_a_local_import_at_the_top_of_the_function_keeps_the_guard() -> None:
    source = "def host(cache, ids):\n    import torch\n    n = cache.get_seq_length()\n    return ids[:, n:]\n"
    assert "int(n.item())" in fix_text("x.py", source, Settings())


def test_a_subclass_named_after_whispers_generating_class_turns_the_hook_fact_off(tmp_path: Path) -> None:
    """optimum-habana's `GaudiWhisperForConditionalGeneration` runs the no-speech detector too."""
    other = """\
        from .whisper_gaudi import GaudiWhisperForConditionalGeneration


        class Listener(GaudiWhisperForConditionalGeneration):
            pass
    """
    assert hook_findings(HOOK, tmp_path, {"listener.py": other}) == HOOK_FINDINGS


DISABLED = """\
import torch
from torch import nn


def helper(cache, ids):
    n = cache.get_seq_length()
    return ids[:, n:]


class M(nn.Module):
    def forward(self, cache, ids):
        return {call}
"""


def test_a_function_handed_to_compiler_disable_stays_host_code() -> None:
    found = analyze_source(DISABLED.format(call="torch.compiler.disable(helper)(cache, ids)"), "m.py")
    assert found and not any(finding.compiled_region for finding in found)


def test_twin_a_function_handed_to_another_call_in_forward_is_compiled() -> None:
    found = analyze_source(DISABLED.format(call="torch.utils.checkpoint.checkpoint(helper, cache, ids)"), "m.py")
    assert found and all(finding.compiled_region for finding in found)


@pytest.mark.parametrize(
    "rebinding",
    [
        'match make():\n        case {"c": c}:\n            pass',
        "from mod import Cache as c",
        "found = [c for c in make() if (c := c)]",
        'exec("c = make()")',
    ],
)
def test_known_none_ends_where_the_walk_may_miss_a_rebinding(rebinding: str) -> None:
    source = f"def f(ids, make):\n    c = None\n    {rebinding}\n    n = c.get_seq_length() if c is not None else 0\n    return ids[:, n:]\n"
    assert [finding.code for finding in analyze_source(source, "m.py")] == ["SLG002"]


def test_a_dot_before_backslash_continuations_is_read_in_linear_time() -> None:
    program = textwrap.dedent(
        """
        from lint_rules.engine.facts.outside_stores import attribute_mentions
        text = "x = a." + " \\\\\\r\\n" * 60 + "  n = 1\\r\\n"
        print(len(list(attribute_mentions(text, "n"))), len(list(attribute_mentions(text, "m"))))
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "1 0"


NOT_HOISTED = {
    "a later `with` item": "    with lock, record(ids[:, cache.get_seq_length():]):\n        pass\n",
    "a keyword value of a call that unpacks `*args`": "    return f(x=ids[:, cache.get_seq_length():], *g())\n",
}


@pytest.mark.parametrize("case", NOT_HOISTED)
def test_no_hoist_that_changes_the_order_of_evaluation(case: str) -> None:
    source = "import torch\n\n\ndef host(cache, ids, lock, record, f, g):\n" + NOT_HOISTED[case]
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.kind is FixKind.NONE for finding in findings)


def test_twin_a_closure_after_the_enclosing_functions_own_import_keeps_its_fix() -> None:
    """gptqmodel's monkey patch: `import torch` at the top of the method, then the nested forward."""
    source = textwrap.dedent(
        """\
        def patch(cache, ids):
            import torch

            def step():
                n = cache.get_seq_length()
                return ids[:, n:]

            return step()
        """
    )
    assert "int(n.item())" in fix_text("x.py", source, Settings())


METHOD_AS_VALUE = """\
import torch
from torch import nn


class M(nn.Module):
    @property
    def tail(self):
        n = self.cache.get_seq_length()
        return self.ids[:, n:]

    def _inner(self, ids):
        n = self.cache.get_seq_length()
        return ids[:, n:]

    def {caller}(self, ids):
        return {body}
"""


@pytest.mark.parametrize(
    "body", ["torch.utils.checkpoint.checkpoint(self._inner, ids)", "self.tail"], ids=["handed-on", "property"]
)
def test_a_method_a_forward_reads_without_calling_is_compiled(body: str) -> None:
    """`checkpoint(self._inner, x)` and a property read in a forward run the method there."""
    found = analyze_source(METHOD_AS_VALUE.format(caller="forward", body=body), "m.py")
    read = "tail" if body == "self.tail" else "_inner"
    assert [finding.compiled_region != "" for finding in found if finding.function.endswith(read)] == [True]


def test_twin_a_method_handed_on_in_host_code_stays_host_code() -> None:
    found = analyze_source(METHOD_AS_VALUE.format(caller="run", body="list(map(self._inner, [ids]))"), "m.py")
    assert [finding.compiled_region for finding in found if finding.function.endswith("_inner")] == [""]

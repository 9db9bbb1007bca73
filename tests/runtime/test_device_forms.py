"""The measurements behind the device rewrite (device_forms.py, one subprocess): the adopted
`torch.arange` forms are identical for an int, a 0-dim and a shape-(1,) length and compile without
a graph break; the declined forms for slices, `narrow` and sizes are not identical."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import seqlen_runtime as rt

pytestmark = pytest.mark.runtime

ADOPTED = ("arange(p, p + n) -> arange(n) + p", "arange(p, p + n) moved by .to(d) -> arange(n, device=d) + p")
DECLINED = (
    "x[:, p:p + n] -> index_select(arange(n) + p)",
    "x[:, p:p + n] -> narrow(1, p, n)",
    "x[:, p:] -> mask",
    "zeros(p + n) -> bounded mask",
)


@pytest.fixture(scope="module")
def forms(tmp_path_factory: pytest.TempPathFactory, inductor_cache_dir: Path) -> dict:
    out = tmp_path_factory.mktemp("device-forms") / "forms.json"
    cmd = [sys.executable, str(rt.HERE / "device_forms.py"), "--out", str(out)]
    ran = rt.run_scenario_script(cmd, out.parent, inductor_cache_dir, runs=len(ADOPTED) + len(DECLINED))
    assert ran.failure is None, f"{ran.failure}\n{ran.stderr[-4000:]}"
    return dict(json.loads(out.read_text()))


@pytest.mark.parametrize("name", ADOPTED)
def test_adopted_form_is_identical_and_compiles_without_a_break(forms: dict, name: str) -> None:
    assert forms[name]["adopt"], forms[name]["problems"]
    runs = forms[name]["runs"]
    # the original is what the rewrite fixes: a break with a 0-dim length, a TypeError with a shape-(1,) one
    assert runs["2/0-dim/compiled/original"]["graph_breaks"] > 0
    assert runs["2/shape-(1,)/eager/original"]["error"].startswith("TypeError")
    assert "error" in runs["2/0-dim/fullgraph/original"] and "error" not in runs["2/0-dim/fullgraph/rewritten"]


@pytest.mark.parametrize("name", DECLINED)
def test_declined_form_differs(forms: dict, name: str) -> None:
    assert not forms[name]["adopt"]
    assert forms[name]["problems"]

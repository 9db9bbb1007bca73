"""Fuzz over real code: transformers modules that call `get_seq_length()`, as released and mutated
(`tests/mutations.py`: the call through `getattr`, through a module helper, through a bound-method
alias, inlined at its uses, its statements moved into `with`/`try`/`for`/`if` blocks).

For every variant the invariants of the generated matrix hold: the checker and the flake8 plugin
run and agree, the fixer (safe fixes, then unsafe too) gives code that parses, has nothing left
that it would fix, and does not change on a second run.

CI takes every fourth candidate file (about 30 on transformers 5.5.3); `SLG_FUZZ_ALL=1` takes all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import transformers

from tests.invariants import check_invariants
from tests.mutations import MUTATIONS, mutate

pytestmark = pytest.mark.slow

ROOT = Path(transformers.__file__).parent
CANDIDATES = sorted(path for path in ROOT.rglob("*.py") if b"get_seq_length" in path.read_bytes())
FILES = CANDIDATES if os.environ.get("SLG_FUZZ_ALL") else CANDIDATES[::4]
VARIANTS = ("original", *MUTATIONS)


@pytest.mark.parametrize("path", FILES, ids=[str(path.relative_to(ROOT)) for path in FILES])
def test_variants_of_a_real_module(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    checked_variants = 0
    for variant in VARIANTS:
        mutated = text if variant == "original" else mutate(text, variant)
        if variant != "original" and mutated == text:
            continue
        check_invariants(mutated, f"{path.name} [{variant}]")
        checked_variants += 1
    assert checked_variants >= 2, "at least one mutation applies to a file that calls the source"

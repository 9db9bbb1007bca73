"""Small files reduced from corpus failures (tests/test_corpus.py), so they run in every test run.

Each must be fixed (or left with a finding that has no automatic fix) without an error: valid
code never ends in exit 2, the rewrite is sound, and a second run changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_rewrite import FIXER, parse_unified_diff, rewrite_problems, run_cli

REDUCED = {
    # From networkx/algorithms/distance_measures.py (`Linv.item(i, i) + Linv.item(j, j)`) with
    # --source-methods item: two source calls in one expression. The first used to be hoisted alone,
    # after which the second became hoistable: the fix did not converge and the file was refused.
    "two calls in one expression": (
        b"import torch\n\n\ndef f(a, b, x):\n    return x[:, a.get_seq_length() + b.get_seq_length():]\n",
        (),
    ),
    # From torch/nn/functional.py (`if var.size() != input.size():` then a nested `if` on
    # `input.size()[:-1] == var.size()`) with --source-methods size: both hoists used to pick the
    # same fresh name, the inner one overwriting the outer, and the rewrite was refused.
    "hoists in nested statements": (
        b"import torch\n\n\ndef f(a, b, x):\n    if a.get_seq_length() > 0:\n"
        b"        if b.get_seq_length() > 0:\n            return x\n",
        (),
    ),
    # From torch/nn/modules/_functions.py (`size = int(input.numel() // input.size(1))`) with
    # --source-methods size,numel: the calls of two different source methods are planned apart; the
    # `numel()` call is hoisted alone, the `size()` one then becomes hoistable: no convergence (exit 2).
    "two source methods in one expression": (
        b"import torch\n\n\ndef f(x):\n    n = int(x.numel() // x.size(1))\n    return n\n",
        ("--source-methods", "size,numel"),
    ),
    # From Python 3.11's gzip.py (`_read_exact`: `data = fp.read(n)`, then `b = fp.read(...)`,
    # `if not b:`, `data += b`, `return data`) with --source-methods read --unsafe-fixes: the guard
    # of `b` turns `data += b` into a tensor length plus an int, a finding of its own whose guard the
    # first run had not planned: no convergence (exit 2). Also codecs.py's `StreamReader.readline`.
    "a guard that leaves an accumulated length beside an int": (
        b"def f(cache, n):\n    data = cache.get_seq_length()\n    while len(data) < n:\n"
        b"        b = cache.get_seq_length()\n        if not b:\n            raise EOFError\n"
        b"        data += b\n    return data\n",
        ("--unsafe-fixes",),
    ),
    "hoists in nested statements, size()": (
        b"import torch\n\n\ndef f(x, y):\n    if x.size() != y.size():\n"
        b"        if y.size()[:-1] == x.size():\n            pass\n",
        ("--source-methods", "size"),
    ),
}


@pytest.mark.parametrize("case", sorted(REDUCED))
def test_reduced_corpus_file_is_fixed_soundly(tmp_path: Path, case: str) -> None:
    source, options = REDUCED[case]
    (tmp_path / "reduced.py").write_bytes(source)
    fixed = run_cli(FIXER, [*options, "reduced.py"], tmp_path)
    assert fixed.returncode in (0, 1) and not fixed.errors(), fixed.describe()
    result = (tmp_path / "reduced.py").read_bytes()
    assert rewrite_problems(source, result) == []
    again = run_cli(FIXER, ["--diff", *options, "reduced.py"], tmp_path)
    assert again.returncode in (0, 1) and not again.errors(), again.describe()
    assert not parse_unified_diff(again.stdout_bytes, lambda line: not line.startswith(b"---")), again.describe()

"""The corpus tests' independent oracle (`helpers_rewrite.rewrite_problems`) knows the device rewrite:
it accepts `torch.arange(a, a + n, ...)` -> `torch.arange(n, ...) + a` with every operand and
keyword kept (a `device=` may be added where there was none), and refuses anything else."""

from __future__ import annotations

import textwrap

import pytest
from helpers_rewrite import rewrite_problems

BEFORE = textwrap.dedent(
    """\
    import torch


    def positions(past, n, device):
        return torch.arange(past, past + n, dtype=torch.long, device=device)
    """
).encode()


def after(call: str) -> bytes:
    return BEFORE.replace(b"torch.arange(past, past + n, dtype=torch.long, device=device)", call.encode())


def test_the_rewrite_is_accepted() -> None:
    assert rewrite_problems(BEFORE, after("torch.arange(n, dtype=torch.long, device=device) + past")) == []


def test_a_device_may_be_added_where_there_was_none() -> None:
    before = BEFORE.replace(b", device=device)", b")")
    assert rewrite_problems(before, after("torch.arange(n, dtype=torch.long, device=x.device) + past")) == []


@pytest.mark.parametrize(
    "call",
    [
        "torch.arange(n + 1, dtype=torch.long, device=device) + past",
        "torch.arange(n, dtype=torch.long, device=device) + past + 1",
        "torch.arange(n, device=device) + past",
        "torch.arange(n, dtype=torch.long, device=other) + past",
        "torch.arange(n, dtype=torch.long, device=device) - past",
    ],
)
def test_anything_else_is_refused(call: str) -> None:
    assert rewrite_problems(BEFORE, after(call))

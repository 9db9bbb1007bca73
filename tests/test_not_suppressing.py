"""The context managers `flow/jumps.py` trusts to let every exception through, checked against the
installed torch: each one entered, then left with an exception, must not swallow it."""

from __future__ import annotations

import inspect
import tempfile
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
import torch

from lint_rules.engine.flow.jumps import NOT_SUPPRESSING

BUILT_ON_CPU: dict[str, Callable[[], AbstractContextManager[Any]]] = {
    "torch.no_grad": torch.no_grad,
    "torch.enable_grad": torch.enable_grad,
    "torch.inference_mode": torch.inference_mode,
    "torch.set_grad_enabled": lambda: torch.set_grad_enabled(False),
    "torch.autocast": lambda: torch.autocast("cpu"),
    "torch.amp.autocast": lambda: torch.amp.autocast("cpu"),
    "torch.cpu.amp.autocast": torch.cpu.amp.autocast,
    "torch.device": lambda: torch.device("cpu"),
    "torch.profiler.record_function": lambda: torch.profiler.record_function("x"),
    "torch.autograd.profiler.record_function": lambda: torch.autograd.profiler.record_function("x"),
    "warnings.catch_warnings": warnings.catch_warnings,
    "open": tempfile.TemporaryFile,
}
CUDA_ONLY = {
    "torch.cuda.amp.autocast": torch.cuda.amp.autocast,
    "torch.cuda.device": torch.cuda.device,
    "torch.cuda.stream": torch.cuda.StreamContext,
}


def test_every_trusted_manager_is_checked() -> None:
    assert set(BUILT_ON_CPU) | set(CUDA_ONLY) == NOT_SUPPRESSING


@pytest.mark.parametrize("name", sorted(BUILT_ON_CPU))
def test_the_manager_lets_an_exception_through(name: str) -> None:
    with pytest.raises(LookupError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with BUILT_ON_CPU[name]():
            raise LookupError


@pytest.mark.parametrize("name", sorted(CUDA_ONLY))
def test_a_cuda_manager_never_returns_true_from_exit(name: str) -> None:
    """Without a GPU they cannot be entered: their `__exit__` is read instead."""
    source = inspect.getsource(CUDA_ONLY[name].__exit__)
    assert "return True" not in source

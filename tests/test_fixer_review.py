"""The adversarial review of the fixer (2026-12-05): each defect it found, reduced, with the twin
that must still be fixed.

- D1: a guard or device rewrite that would use a name for torch that holds something else there;
- D2: a call hoisted out of an assignment target, ahead of the value Python evaluates first;
- D3: a hoisted name that would replace a module's `def`, class or import;
- D8, D9: a file edited while it was being fixed, or one with other hard links;
- from a third reading (2026-12-06): a guard whose builtins (`isinstance`, `int`) a binding of the
  module or of a function around it replaces.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

import fixers.fix_files as fix_files
from fixers.fix_files import Mode, fix_item, fix_text
from lint_rules.checking import check_text
from lint_rules.findings import FixKind, FixSafety
from lint_rules.settings import Settings

TORCH_NAME_NOT_TORCH = {
    "a local assignment": """
        import torch

        def host(cache, ids):
            torch = None
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "a parameter": """
        import torch

        def host(cache, ids, torch=None):
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "a loop target": """
        import torch

        def host(cache, ids, xs):
            for torch in xs:
                pass
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "a local import of another module": """
        import torch

        def host(cache, ids):
            import numpy as torch
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "the enclosing function's local": """
        import torch

        def outer(cache, ids, torch):
            def host():
                n = cache.get_seq_length()
                return ids[:, n:]
            return host()
    """,
    "a module-level rebinding after the import": """
        import torch

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]

        torch = 5
    """,
    "`del` at module level": """
        import torch

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]

        del torch
    """,
    "`import torch.nn as torch` (the fixer would import torch above it)": """
        import torch.nn as torch

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "the alias rebound": """
        import torch as th

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]

        th = None
    """,
    "a function declares it global": """
        import torch

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]

        def unload():
            global torch
            torch = None
    """,
    "a local spelled in another Unicode form (Python reads names in NFKC)": """
        import torch

        def host(cache, ids):
            ｔｏｒｃｈ = None
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "a name in a comment does not hide a real rebinding": """
        import torch  # torch

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]

        torch = None
    """,
    "a hoist in a function with a local `torch`": """
        import torch

        def host(cache, ids):
            torch = None
            return ids[:, cache.get_seq_length():]
    """,
}


@pytest.mark.parametrize("case", TORCH_NAME_NOT_TORCH)
def test_no_fix_where_the_torch_name_may_hold_something_else(case: str) -> None:
    """D1: the guard `isinstance(n, torch.Tensor)` would raise for every call, ints included."""
    source = textwrap.dedent(TORCH_NAME_NOT_TORCH[case])
    findings = check_text("x.py", source, Settings()).findings
    assert findings, "the use must still be reported"
    assert all(finding.fix.kind is FixKind.NONE and "torch" in finding.fix.reason for finding in findings)
    assert fix_text("x.py", source, Settings()) == source


TORCH_NAME_TWINS = {
    "`torch` bound only in another function": """
        import torch

        def other(torch):
            return torch

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "`torch` bound by another method of the class (a class body is not seen from its methods)": """
        class Connector:
            def load(self):
                torch, transformers = require()
                return torch

            def host(self, cache, ids):
                n = cache.get_seq_length()
                return ids[:, n:]
    """,
    "`torch` bound in a nested function only": """
        import torch

        def host(cache, ids):
            def inner(torch):
                return torch
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "a local `import torch`": """
        import torch

        def host(cache, ids):
            import torch
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "`import torch.nn` (binds torch itself)": """
        import torch.nn

        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
    "no torch import (the fixer adds one)": """
        def host(cache, ids):
            n = cache.get_seq_length()
            return ids[:, n:]
    """,
}


@pytest.mark.parametrize("case", TORCH_NAME_TWINS)
def test_the_guard_is_still_written_where_the_torch_name_holds_torch(case: str) -> None:
    source = textwrap.dedent(TORCH_NAME_TWINS[case])
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.safety is FixSafety.SAFE for finding in findings)
    assert "int(n.item())" in fix_text("x.py", source, Settings())


BUILTIN_CASE = """
    import torch

    {module}
    def host(cache, ids{parameters}):
        {local}
        n = cache.get_seq_length()
        return ids[:, n:]
"""

BUILTIN_NOT_BUILTIN = {
    "a parameter `int` with a default": {"parameters": ", int=float"},
    "a parameter `int`": {"parameters": ", int"},
    "a starred parameter `isinstance`": {"parameters": ", *isinstance"},
    "a local `int`": {"local": "int = float"},
    "a local `isinstance` bound by a walrus": {"local": "(isinstance := print)"},
    "a local `int` bound by `with ... as`": {"local": "with open('f') as int:\n            pass"},
    "a module-level `isinstance`": {"module": "isinstance = lambda a, b: True\n"},
    "a module-level `int` imported": {"module": "from builtins import float as int\n"},
    "a module-level `int` in a parenthesized import": {"module": "from numpy import (\n        int,\n    )\n"},
    "a module-level `int` as a loop target": {"module": "for int in [float]:\n        pass\n"},
    "a module-level `def int`": {"module": "def int(value):\n        return value\n"},
    "a function declares `int` global": {"module": "def setup():\n        global int\n        int = float\n"},
    "a function around binds `int`": {},
    "a star import (it may bind `int`)": {"module": "from helpers import *\n"},
    "`globals()` binds `int`": {"module": "globals()['int'] = float\n"},
    "the `builtins` module is changed": {"module": "import builtins\n    builtins.int = float\n"},
    "a class body around the guard binds `int`": {},
}


def guarded(case: str) -> str:
    if case == "a function around binds `int`":
        return textwrap.dedent(
            """
            def outer(int):
                def host(cache, ids):
                    n = cache.get_seq_length()
                    return ids[:, n:]

                return host
            """
        )
    if case == "a class body around the guard binds `int`":
        return textwrap.dedent(
            """
            def host(cache, ids):
                class Step:
                    int = float
                    n = cache.get_seq_length()
                    cut = ids[:, n:]

                return Step.cut
            """
        )
    parts = {"module": "", "parameters": "", "local": "pass", **BUILTIN_NOT_BUILTIN[case]}
    return textwrap.dedent(BUILTIN_CASE.format(**parts))


@pytest.mark.parametrize("case", BUILTIN_NOT_BUILTIN)
def test_no_guard_where_a_builtin_it_calls_may_hold_something_else(case: str) -> None:
    """A third reading: `int=float` made the guard call `float` (TypeError where the code worked), a
    module's `isinstance = lambda a, b: True` made it call `.item()` on an int."""
    source = guarded(case)
    compile(source, "x.py", "exec")
    findings = check_text("x.py", source, Settings()).findings
    assert findings, "the use must still be reported"
    assert all(finding.fix.kind is FixKind.NONE and "builtin" in finding.fix.reason for finding in findings)
    assert fix_text("x.py", source, Settings()) == source


BUILTIN_TWINS = {
    "`int` bound only in another function": {"module": "def other(int):\n        return int\n"},
    "`int` in annotations and calls only": {"module": "def other(x: int) -> int:\n        return int(x)\n"},
    "a class attribute named `int` (a class body is not seen from its methods)": {
        "module": "class Config:\n        int = float\n"
    },
}


@pytest.mark.parametrize("case", BUILTIN_TWINS)
def test_the_guard_is_still_written_where_the_builtins_are_builtins(case: str) -> None:
    parts = {"module": "", "parameters": "", "local": "pass", **BUILTIN_TWINS[case]}
    source = textwrap.dedent(BUILTIN_CASE.format(**parts))
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.safety is FixSafety.SAFE for finding in findings)
    assert "int(n.item())" in fix_text("x.py", source, Settings())


def test_no_device_rewrite_through_a_local_named_torch() -> None:
    """D1, the device form: `torch.arange` here is a local object's, not torch's."""
    source = textwrap.dedent(
        """
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, cache, x, torch=None):
                past = cache.get_seq_length()
                return torch.arange(past, past + x.shape[1], device=x.device)
        """
    )
    findings = check_text("x.py", source, Settings(unsafe_fixes=True)).findings
    assert findings and all(finding.fix.kind is not FixKind.DEVICE_REWRITE for finding in findings)


def test_device_rewrite_twin_with_torch_itself() -> None:
    source = textwrap.dedent(
        """
        import torch
        from torch import nn

        class M(nn.Module):
            def forward(self, cache, x):
                past = cache.get_seq_length()
                return torch.arange(past, past + x.shape[1], device=x.device)
        """
    )
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.kind is FixKind.DEVICE_REWRITE for finding in findings)


def test_no_hoist_out_of_an_assignment_target() -> None:
    """D2: Python runs `step()` before the target's slice; a hoist would run the call first."""
    source = textwrap.dedent(
        """
        import torch

        def host(cache, ids, step):
            ids[:cache.get_seq_length()] = step()
            return ids
        """
    )
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.kind is FixKind.NONE for finding in findings)
    assert "assignment target" in findings[0].fix.reason
    assert fix_text("x.py", source, Settings()) == source


def test_hoist_out_of_the_value_twin() -> None:
    source = textwrap.dedent(
        """
        import torch

        def host(cache, ids):
            tail = ids[:cache.get_seq_length()]
            return tail
        """
    )
    fixed = fix_text("x.py", source, Settings())
    assert "seq_length = cache.get_seq_length()" in fixed


@pytest.mark.parametrize(
    "taken",
    ["def seq_length(ids):\n    return ids", "class seq_length:\n    pass", "from os import path as seq_length"],
)
def test_a_hoisted_name_never_replaces_a_module_name(taken: str) -> None:
    """D3: at module level, `seq_length = ...` would replace the module's own `seq_length`."""
    source = f"import torch\n\n{taken}\n\ncache = make()\nn = 1\nn += cache.get_seq_length()\n"
    fixed = fix_text("x.py", source, Settings())
    assert "seq_length_2 = cache.get_seq_length()" in fixed
    assert "\nseq_length = " not in fixed


GUARDED = "import torch\n\n\ndef host(cache, ids):\n    n = cache.get_seq_length()\n    return ids[:, n:]\n"


def test_an_edit_saved_during_the_fix_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """D8: the file is compared with what was read just before the rename."""
    path = tmp_path / "m.py"
    path.write_text(GUARDED)
    carry_out = fix_files.carry_out

    def carry_out_while_edited(*args: object, **kwargs: object) -> str:
        path.write_text(GUARDED + "\n\ndef added():\n    pass\n")
        return carry_out(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fix_files, "carry_out", carry_out_while_edited)
    outcome = fix_item(str(path), Settings(), Mode.WRITE)
    assert "changed on disk" in outcome.error
    assert path.read_text().endswith("def added():\n    pass\n")
    assert not outcome.applied


def test_the_fix_is_written_when_nothing_changed_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(GUARDED)
    outcome = fix_item(str(path), Settings(), Mode.WRITE)
    assert not outcome.error and outcome.applied
    assert "int(n.item())" in path.read_text()


def test_a_file_with_other_hard_links_is_left_alone(tmp_path: Path) -> None:
    """D9: a rename would give one name the fix and leave the other with the old text."""
    path = tmp_path / "m.py"
    path.write_text(GUARDED)
    os.link(path, tmp_path / "other.py")
    outcome = fix_item(str(path), Settings(), Mode.WRITE)
    assert "hard links" in outcome.error
    assert path.read_text() == GUARDED == (tmp_path / "other.py").read_text()


REACHED_AS_A_VALUE = {
    "a module-level alias called in forward": """
        import torch
        from torch import nn

        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        h = helper

        class M(nn.Module):
            def forward(self, cache, x):
                return h(cache, x)
    """,
    "a table of functions called in forward": """
        import torch
        from torch import nn

        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        TABLE = {"a": helper}

        class M(nn.Module):
            def forward(self, cache, x):
                return TABLE["a"](cache, x)
    """,
    "handed to `map` in forward": """
        import torch
        from torch import nn

        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        class M(nn.Module):
            def forward(self, cache, xs):
                return list(map(helper, [cache] * len(xs), xs))
    """,
    "a default of forward": """
        import torch
        from torch import nn

        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        class M(nn.Module):
            def forward(self, cache, x, fn=helper):
                return fn(cache, x)
    """,
    "`compile` imported from torch under another name": """
        import torch
        from torch import compile as tc

        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = tc(step)
    """,
    "`torch.compile(model=...)`": """
        import torch

        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = torch.compile(model=step)
    """,
    "`torch._dynamo.optimize(...)(fn)` as a call": """
        import torch

        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = torch._dynamo.optimize("inductor")(step)
    """,
    "a compiler bound to a module-level name": """
        import torch

        compile_fn = torch.compile

        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = compile_fn(step)
    """,
    "a compiler bound to a module-level name, as a decorator": """
        import torch

        compile_fn = torch.compile

        @compile_fn
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "a compiler bound to a name under `try`": """
        import torch

        try:
            compile_fn = torch.compile
        except AttributeError:
            compile_fn = None

        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = compile_fn(step)
    """,
    "a compiler as one branch of a conditional expression, as a decorator": """
        import torch

        compile_fn = torch.compile if hasattr(torch, "compile") else (lambda fn: fn)

        @compile_fn
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "a method fetched by name in forward": """
        import torch
        from torch import nn

        class M(nn.Module):
            def _inner(self, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            def forward(self, cache, x):
                return getattr(self, "_inner")(cache, x)
    """,
    "a class attribute `forward = fn`": """
        import torch
        from torch import nn

        def run_tiny(self, cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        class M(nn.Module):
            forward = run_tiny
    """,
    "a `functools.partial` handed to `torch.compile`": """
        import functools
        import torch

        def step(cache, x, scale=1):
            n = cache.get_seq_length()
            return x[:, n:] * scale

        fast = torch.compile(functools.partial(step, scale=2))
    """,
    "a function of the module that compiles its argument, as a decorator": """
        import torch

        def maybe_compile(fn):
            return torch.compile(fn) if hasattr(torch, "compile") else fn

        @maybe_compile
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "a function of the module that compiles its argument, called on a function": """
        import torch

        def maybe_compile(fn, **options):
            return torch._dynamo.optimize("inductor", **options)(fn)

        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = maybe_compile(step)
    """,
    "a function of the module that hands its argument to another such function": """
        import torch

        def maybe_compile(fn):
            return torch.compile(fn)

        def compile_step(fn):
            return maybe_compile(fn)

        @compile_step
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "a function of the module that compiles its argument through a compiler bound to a name": """
        import torch

        compile_fn = torch.compile

        def wrap(fn):
            return compile_fn(fn)

        @wrap
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "a function of the module that compiles its argument, the compiler spelled in another NFKC form": """
        import torch

        def wrap(fn):
            return torch.ｃｏｍｐｉｌｅ(fn)

        @wrap
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "`torch._dynamo` imported under another name": """
        import torch
        import torch._dynamo as dynamo

        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = dynamo.optimize("inductor")(step)
    """,
    "`torch._dynamo` imported under another name, as a decorator": """
        import torch
        from torch import _dynamo as td

        @td.optimize("inductor")
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "`compile` imported from torch, as a decorator": """
        import torch
        from torch import compile as tc

        @tc(fullgraph=True)
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "a forward pre-hook": """
        import torch
        from torch import nn

        def pre_hook(module, args):
            n = args[0].get_seq_length()
            return (args[0], args[1][:, n:])

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_forward_pre_hook(pre_hook)
    """,
}


@pytest.mark.parametrize("case", REACHED_AS_A_VALUE)
def test_a_function_a_compiled_region_reaches_as_a_value_gets_no_guard(case: str) -> None:
    """D4: a guard there adds a graph break (measured by the review: 1 -> 2, 0 -> 1)."""
    source = textwrap.dedent(REACHED_AS_A_VALUE[case])
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.compiled_region for finding in findings)
    assert "int(n.item())" not in fix_text("x.py", source, Settings())


HOST_VALUES = {
    "a method fetched by name in host code": """
        import torch

        class Runner:
            def _inner(self, cache, x):
                n = cache.get_seq_length()
                return x[:, n:]

            def run(self, cache, x):
                return getattr(self, "_inner")(cache, x)
    """,
    "a class attribute that is a generation method (the loop runs it on the host)": """
        import torch

        def prepare(self, cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        class M:
            prepare_inputs_for_generation = prepare
    """,
    "a `functools.partial` that no compiler gets": """
        import functools
        import torch

        def step(cache, x, scale=1):
            n = cache.get_seq_length()
            return x[:, n:] * scale

        fast = torch.compile(functools.partial(print, scale=2))
        slow = functools.partial(step, scale=2)
    """,
    "a function of the module that hands its argument to something else than a compiler": """
        import functools
        import torch

        def memoize(fn):
            compiled = torch.compile(other)
            return functools.lru_cache(fn)

        def other(x):
            return x

        @memoize
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "a name bound to something other than a compiler": """
        import torch
        import functools

        compile_fn = functools.lru_cache

        @compile_fn
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        fast = compile_fn(step)
    """,
    "a module of torch that is not a compiler's": """
        import torch
        import torch.nn.functional as optimize_me

        @optimize_me.pad
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
    """,
    "an alias called on the host": """
        import torch

        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        h = helper

        def run(cache, x):
            return h(cache, x)
    """,
    "installed as a generation method (the loop runs it on the host)": """
        import torch

        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        def patch(model):
            model.prepare_inputs_for_generation = helper
    """,
    "handed to `map` on the host": """
        import torch

        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]

        def run(cache, xs):
            return list(map(helper, [cache] * len(xs), xs))
    """,
}


@pytest.mark.parametrize("case", HOST_VALUES)
def test_a_function_handed_on_in_host_code_keeps_its_guard(case: str) -> None:
    source = textwrap.dedent(HOST_VALUES[case])
    findings = check_text("x.py", source, Settings()).findings
    assert findings and not any(finding.compiled_region for finding in findings)
    assert "int(n.item())" in fix_text("x.py", source, Settings())


def test_a_file_whose_lines_end_in_cr_alone_is_fixed(tmp_path: Path) -> None:
    """D5: LibCST drops a module's last `\\r`; the rewrite puts it back, and keeps every original line."""
    path = tmp_path / "m.py"
    original = GUARDED.replace("\n", "\r")
    path.write_bytes(original.encode())
    outcome = fix_item(str(path), Settings(), Mode.WRITE)
    fixed = path.read_bytes().decode()
    assert not outcome.error and outcome.applied
    assert fixed.endswith("return ids[:, n:]\r") and "\n" not in fixed
    assert fixed.replace("    if isinstance(n, torch.Tensor):\r        n = int(n.item())\r", "") == original


def test_a_binding_on_a_last_line_without_a_line_break_has_no_automatic_fix() -> None:
    """D6: the guard would need a line break added to an original line; said so, not an error."""
    source = "import torch\n\n\ndef host(cache, ids, xs):\n    n = 0\n    for x in xs:\n        ids = ids[:, n:]\n        n = cache.get_seq_length()"
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.kind is FixKind.NONE for finding in findings)
    assert "last line" in findings[0].fix.reason
    assert fix_text("x.py", source + "\n", Settings()) != source + "\n"  # twin: with the line break, fixed


def test_a_binding_joined_to_the_line_above_by_a_continuation_has_no_automatic_fix() -> None:
    """D10: `x = 1; \\` joins the next physical line to its statement's line."""
    source = (
        "import torch\n\n\ndef host(cache, ids):\n    x = 1; \\\nn = cache.get_seq_length()\n    return ids[:, n:]\n"
    )
    findings = check_text("x.py", source, Settings()).findings
    assert findings and all(finding.fix.kind is FixKind.NONE for finding in findings)
    assert fix_text("x.py", source, Settings()) == source


def test_the_fixer_counts_what_it_writes_past_the_search_budget(tmp_path: Path) -> None:
    """D7: past 16 functions of one module whose callers in other modules are searched, the rest are
    taken as compiled; the fixer's later rounds, which analyze the rewritten module again, take the
    same ones as compiled, so it writes exactly the guards it counts (it wrote all 20 and said 16)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    functions = "".join(
        f"\n\ndef host{index}(cache, ids):\n    n = cache.get_seq_length()\n    return ids[:, n:]\n"
        for index in range(20)
    )
    path = package / "m.py"
    path.write_text("import torch" + functions)
    outcome = fix_item(str(path), Settings(), Mode.WRITE)
    assert not outcome.error
    assert len(outcome.applied) == path.read_text().count("int(n.item())") == 16

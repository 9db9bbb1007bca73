"""Bugs a reviewer of this engine found and confirmed, each reduced to a test that failed before its
fix: a file rewritten during the fixer's run read back stale, path facts that outlived a change of
the object, function-local imports merged across functions, delegation to a list that later gets
other objects, a sibling too deep to summarize failing the importing file, a `case` guard planned
as a hoist, a hoisted name that was a `global`, a keyword bound to a positional-only parameter, a
function name rebound to another function, and a method defined twice in a class body."""

from __future__ import annotations

import ast
import collections
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lint_rules import check_command
from lint_rules.engine import analyze_source
from lint_rules.engine.facts import module_files
from lint_rules.engine.facts.definitions import DefinitionIndex
from tests.helpers_rewrite import cli_environment
from tests.package_files import write_package


def write(root: Path, files: dict[str, str]) -> Path:
    return write_package(root, {name.removesuffix(".py"): text for name, text in files.items()})


def run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True, env=cli_environment()
    )


USES_GET_LEN = """\
    from .helper import get_len


    def f(cache, x):
        n = get_len(cache)
        return x[:n]


    def unrelated(cache):  # the module names the source method, so it is checked
        return int(cache.get_seq_length())
"""


def test_the_fixer_reads_a_sibling_it_has_just_rewritten_afresh(tmp_path: Path) -> None:
    """`helper.py` gets a guard (lines move) while `a.py` and `z.py`, which call its `get_len`, are
    still to come: both must be fixed in the same run, and the checker then finds nothing."""
    helper = """\
        def offset(cache, x):
            n = cache.get_seq_length()
            return x[:n]


        def get_len(cache):
            return cache.get_seq_length()
    """
    write(tmp_path, {"a.py": USES_GET_LEN, "helper.py": helper, "z.py": USES_GET_LEN})
    before = run("lint_rules", "pkg", cwd=tmp_path)
    assert before.returncode == 1 and before.stdout.count("SLG002") == 3
    assert run("fixers.rewrite", "pkg", cwd=tmp_path).returncode in (0, 1)
    after = run("lint_rules", "pkg", cwd=tmp_path)
    assert (after.returncode, after.stdout) == (0, "")


RETURNS_A_LENGTH = "def get_len(cache):\n    return cache.get_seq_length()\n"
RETURNS_AN_INT = "def get_len(cache):\n    return int(cache.get_seq_length())\n"
RETURNS_NOTHING_KNOWN = "def get_len(cache):\n    return len(cache)\n"


@pytest.mark.parametrize(
    ("first", "then", "found_then"),
    [
        pytest.param(RETURNS_A_LENGTH, RETURNS_AN_INT, [], id="the length guarded"),
        pytest.param(RETURNS_NOTHING_KNOWN, RETURNS_A_LENGTH, [(6, "SLG002")], id="a source added"),
    ],
)
def test_one_process_reads_a_sibling_edited_between_two_checks(
    tmp_path: Path, first: str, then: str, found_then: list[tuple[int, str]]
) -> None:
    """An editor's or flake8's long-lived process: nothing read of `helper.py` (its stamp, whether it
    mentions a source, its summary) is trusted for the next file's analysis once it changed."""
    package = write(tmp_path, {"a.py": USES_GET_LEN, "helper.py": first})
    user, helper = package / "a.py", package / "helper.py"
    before = analyze_source(user.read_text(), str(user))
    helper.write_text(then)
    stamp = helper.stat().st_mtime_ns + 1_000_000_000
    os.utime(helper, ns=(stamp, stamp))  # a later modification time, whatever the clock's resolution
    after = analyze_source(user.read_text(), str(user))
    assert [(f.line, f.code) for f in before] == ([(6, "SLG002")] if first == RETURNS_A_LENGTH else [])
    assert [(f.line, f.code) for f in after] == found_then


class CountingOs:
    """`os` for the engine's module of stamps, counting the `stat`s of each file name."""

    def __init__(self) -> None:
        self.stats: collections.Counter[str] = collections.Counter()

    def stat(self, path: str | os.PathLike[str]) -> os.stat_result:
        self.stats[Path(path).name] += 1
        return os.stat(path)

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)


def test_a_check_reads_each_sibling_stamp_once_and_an_analysis_after_it_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checker writes no source file: the stamp of `helper.py`, which three checked modules
    import, is read once in its run, not once per module analyzed; an analysis after the run reads
    it again (the edited-sibling case above)."""
    package = write(tmp_path, {"a.py": USES_GET_LEN, "b.py": USES_GET_LEN, "z.py": USES_GET_LEN})
    (package / "helper.py").write_text(RETURNS_A_LENGTH)
    counting = CountingOs()
    monkeypatch.setattr(module_files, "os", counting)
    assert check_command.run([str(package), "--exit-zero"]) == 0
    assert capsys.readouterr().out.count("SLG002") == 3
    assert counting.stats["helper.py"] == 1
    analyze_source((package / "a.py").read_text(), str(package / "a.py"))
    assert counting.stats["helper.py"] == 2


TRY_BLOCKS_OUT_OF_LINE_ORDER = {
    "module level": """\
        try:
            def a():
                return 1
        except ImportError:
            def b(cache, x):
                n = cache.get_seq_length()
                return x[:, -n:]
        else:
            def c():
                return 2
        """,
    "class body": """\
        class Model:
            try:
                def a(self):
                    return 1
            except ImportError:
                def b(self, cache, x):
                    n = cache.get_seq_length()
                    return x[:, -n:]
            finally:
                def c(self):
                    return 2
        """,
    "nested in a function": """\
        def outer(cache, x):
            try:
                def a():
                    return 1
            except* ValueError:
                def b():
                    n = cache.get_seq_length()
                    return x[:, -n:]
            finally:
                def c():
                    return 2
            return b()
        """,
}


@pytest.mark.parametrize("code", TRY_BLOCKS_OUT_OF_LINE_ORDER.values(), ids=TRY_BLOCKS_OUT_OF_LINE_ORDER.keys())
def test_a_def_in_an_except_block_after_an_else_or_finally_block_is_walked(code: str) -> None:
    """The definitions of a `try` are listed body, `else`, `finally`, then `except`: not in line order.
    A search by line over that list missed `b` (the reviewer's ntpath/locale shape)."""
    code = textwrap.dedent(code)
    slice_line = next(number for number, line in enumerate(code.splitlines(), 1) if "x[:, -n:]" in line)
    assert [(f.line, f.code) for f in analyze_source(code, "m.py")] == [(slice_line, "SLG002")]


def test_a_compiled_caller_in_an_except_block_reaches_its_callee() -> None:
    """`step` (compiled) calls `helper`: the function around the call's line is found in line order."""
    code = """\
        import torch


        def helper(cache, x):
            n = cache.get_seq_length()
            return x[:n]


        try:
            import optional_module
        except ImportError:
            @torch.compile
            def step(cache, x):
                return helper(cache, x)
        else:
            def step(cache, x):
                return x
        """
    [finding] = analyze_source(textwrap.dedent(code), "m.py")
    assert finding.compiled_region == "called from step (line 14)"


def test_path_facts_end_when_the_object_changes() -> None:
    code = textwrap.dedent(
        """\
        def entry(kwargs, x):
            past = kwargs["cache"].get_seq_length() if kwargs["cache"] is not None else 0
            kwargs["cache"] = None
            if kwargs["cache"] is None:
                return x[:past]
            return x


        def method(self, x):
            past = self.cache.get_seq_length() if self.cache is not None else 0
            self.reset()
            if self.cache is None:
                return x[:past]
            return x


        def popped(kwargs, x):
            past = kwargs["cache"].get_seq_length() if kwargs["cache"] is not None else 0
            kwargs.pop("cache")
            if kwargs.get("cache") is None:
                return x[:past]
            return x
        """
    )
    assert [(f.line, f.code) for f in analyze_source(code, "m.py")] == [(5, "SLG002"), (13, "SLG002"), (21, "SLG002")]


def test_a_name_two_functions_import_from_different_places_is_not_resolved(tmp_path: Path) -> None:
    dynamic = "from transformers import DynamicCache\n\n\nclass Cache(DynamicCache):\n    pass\n"
    static = "from transformers import StaticCache\n\n\nclass Cache(StaticCache):\n    pass\n"
    user = """\
        def f(c, x):
            from .a import Cache

            return Cache


        def g(c, x):
            from .b import Cache

            if isinstance(c, Cache):
                return x[: c.get_seq_length()]
            return x
    """
    package = write(tmp_path, {"a.py": dynamic, "b.py": static, "m.py": user})
    findings = analyze_source((package / "m.py").read_text(), str(package / "m.py"))
    assert [(f.line, f.code) for f in findings] == [(11, "SLG002")]


def test_a_delegating_cache_whose_list_gets_other_layers_may_hold_a_tensor() -> None:
    code = textwrap.dedent(
        """\
        from transformers import DynamicLayer, StaticLayer


        class Appended:
            def __init__(self, n):
                self.layers = [DynamicLayer() for _ in range(n)]

            def add(self):
                self.layers.append(StaticLayer())

            def get_seq_length(self, layer_idx=0):
                return self.layers[layer_idx].get_seq_length()


        class Stored:
            def __init__(self, n):
                self.layers = [DynamicLayer() for _ in range(n)]
                self.layers[0] = StaticLayer()

            def get_seq_length(self, layer_idx=0):
                return self.layers[layer_idx].get_seq_length()


        def f(cache: Appended, x):
            return x[:, cache.get_seq_length():]


        def g(cache: Stored, x):
            return x[:, cache.get_seq_length():]
        """
    )
    assert [(f.line, f.code) for f in analyze_source(code, "m.py")] == [(25, "SLG002"), (29, "SLG002")]


def test_a_sibling_too_deep_to_summarize_is_not_the_importing_files_error(tmp_path: Path) -> None:
    deep = "def use_len(length, x):\n    return x[: length" + " + 1" * 600 + "]\n"
    user = "from .helper import use_len\n\n\ndef f(cache, x):\n    return use_len(cache.get_seq_length(), x)\n"
    write(tmp_path, {"helper.py": deep, "a.py": user})
    checked = run("lint_rules", "pkg", cwd=tmp_path)
    assert checked.returncode in (0, 1) and "internal error" not in checked.stdout + checked.stderr


def test_a_length_in_a_case_guard_is_not_hoisted(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """\
        def f(cache, x):
            match cache:
                case None:
                    return x
                case _ if cache.get_seq_length() > 0:
                    return x[1:]
            return x
        """
    )
    [finding] = analyze_source(code, "m.py")
    assert "`case` guard" in finding.fix.reason
    (tmp_path / "m.py").write_text(code)
    assert run("fixers.rewrite", "--diff", "m.py", cwd=tmp_path).returncode == 0


def test_the_hoisted_name_is_never_a_global_of_the_function(tmp_path: Path) -> None:
    code = "def f(cache, x):\n    global seq_length\n    return x[: cache.get_seq_length()]\n"
    (tmp_path / "g.py").write_text(code)
    diff = run("fixers.rewrite", "--diff", "g.py", cwd=tmp_path).stdout
    assert "+    seq_length_2 = cache.get_seq_length()" in diff
    assert "+    seq_length = " not in diff


def test_a_class_length_kind_does_not_depend_on_which_file_asked_first(tmp_path: Path) -> None:
    """`X` delegates to a `Y`, and `Y` derives from `X`: a cycle. Checking `b.py` alone and after
    `a.py` (one process, shared class facts) must give the same answer."""
    caches = """\
        from transformers import DynamicCache


        class X:
            def __init__(self):
                self.y = Y()

            def get_seq_length(self):
                return self.y.get_seq_length()


        class Y(X, DynamicCache):
            pass
    """
    user = "from .caches import {name}\n\n\ndef f(c: {name}, x):\n    return x[: c.get_seq_length()]\n"
    write(tmp_path, {"caches.py": caches, "a.py": user.format(name="Y"), "b.py": user.format(name="X")})
    alone = run("lint_rules", "pkg/b.py", cwd=tmp_path)
    after_a = run("lint_rules", "pkg/a.py", "pkg/b.py", cwd=tmp_path)
    assert alone.stdout == "".join(line + "\n" for line in after_a.stdout.splitlines() if "b.py" in line)


def test_every_def_of_a_name_in_another_module_is_followed(tmp_path: Path) -> None:
    helper = """\
        import sys

        if sys.version_info >= (3, 12):

            def use_len(length, x):
                return int(length)

        else:

            def use_len(length, x):
                return x[:length]
    """
    user = "from .helper import use_len\n\n\ndef f(cache, x):\n    return use_len(cache.get_seq_length(), x)\n"
    write(tmp_path, {"helper.py": helper, "a.py": user})
    checked = run("lint_rules", "pkg/a.py", cwd=tmp_path)
    assert "passed as `length` to `use_len()`" in checked.stdout


def test_a_keyword_named_like_a_positional_only_parameter_goes_to_kwargs() -> None:
    """`take(ids, 0, start=n)` hands `n` to `**options`, not to the positional-only `start`; by keyword
    to an ordinary parameter, it is that parameter's (a second reader, 2026-12-05)."""
    text = textwrap.dedent(
        """\
        def take(ids, start, /, **options):
            return ids[:, start:]


        def take_by_name(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            n = cache.get_seq_length()
            return take(ids, 0, start=n), take_by_name(ids, start=n)
        """
    )
    assert [(finding.line, finding.code) for finding in analyze_source(text, "m.py")] == [(11, "SLG002")]
    assert "take_by_name" in analyze_source(text, "m.py")[0].message


def test_a_call_of_a_name_rebound_to_another_function_runs_that_one() -> None:
    """`past_length = _static` after `def past_length`: the call runs `_static`, whose result is a
    source (a second reader, 2026-12-05; missed before)."""
    text = textwrap.dedent(
        """\
        from transformers import StaticCache


        def past_length(cache, config):
            return 0


        def _static(cache, config):
            return StaticCache(config=config, max_cache_len=8).get_seq_length()


        past_length = _static


        def step(ids, config):
            return ids[:, past_length(None, config):]
        """
    )
    assert [(finding.line, finding.code) for finding in analyze_source(text, "m.py")] == [(16, "SLG002")]


def test_a_method_defined_twice_in_a_class_body_is_the_last_one() -> None:
    """The second `def of` replaces the first (a second reader, 2026-12-05: the first was followed,
    and the source missed)."""
    text = textwrap.dedent(
        """\
        from transformers import StaticCache


        class Lengths:
            @staticmethod
            def of(cache, config):
                return 0

            @staticmethod
            def of(cache, config):
                return StaticCache(config=config, max_cache_len=8).get_seq_length()


        def step(ids, config):
            return ids[:, Lengths.of(None, config):]
        """
    )
    assert [(finding.line, finding.code) for finding in analyze_source(text, "m.py")] == [(15, "SLG002")]


def test_a_property_setter_does_not_replace_its_getter() -> None:
    """`@past.setter def past` comes after the getter but keeps it: the getter is what `past` reads."""
    text = textwrap.dedent(
        """\
        class Holder:
            @property
            def past(self):
                return self.n

            @past.setter
            def past(self, value):
                self.n = value
        """
    )
    tree = ast.parse(text)
    found = DefinitionIndex(tree, text).method(tree.body[0], "past")
    assert found is not None and found.node.lineno == 3


SHADOWED_CALLEES = {
    "a parameter": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, slice_from=None):
            n = cache.get_seq_length()
            return slice_from(ids, n)
        """,
    "a local bound after the call (a name any binding makes local to the whole function)": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, slicers):
            n = cache.get_seq_length()
            out = slice_from(ids, n)
            for slice_from in slicers:
                pass
            return out
        """,
    "a parameter of the function around it": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, slice_from):
            def inner():
                return slice_from(ids, cache.get_seq_length())

            return inner()
        """,
    "a class name the function binds (a static method called through it)": """\
        class Lengths:
            @staticmethod
            def slice_from(ids, start):
                return ids[:, start:]


        def run(ids, cache, Lengths):
            return Lengths.slice_from(ids, cache.get_seq_length())
        """,
    "a name the class body around the call binds": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            class Window:
                slice_from = len
                view = slice_from(ids, cache.get_seq_length())

            return Window.view
        """,
    "a local spelled in another Unicode form (Python reads it in NFKC form)": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            n = cache.get_seq_length()
            \uff53lice_from = len
            return slice_from(ids, n)
        """,
    "a lambda's parameter around the call": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            apply = lambda slice_from: slice_from(ids, cache.get_seq_length())
            return apply(len)
        """,
    "a comprehension's target around the call": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, slicers):
            return [slice_from(ids, cache.get_seq_length()) for slice_from in slicers]
        """,
    "a lambda's parameter in a decorator's arguments": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, register):
            @register(lambda slice_from: slice_from(ids, cache.get_seq_length()))
            def inner(x):
                return x

            return inner
        """,
    "a nested def whose name follows a line continuation": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            def \\
                slice_from(ids, start):
                return ids

            return slice_from(ids, cache.get_seq_length())
        """,
    "an import in the function": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            from .other import slice_from

            return slice_from(ids, cache.get_seq_length())
        """,
}


@pytest.mark.parametrize("code", SHADOWED_CALLEES.values(), ids=SHADOWED_CALLEES.keys())
def test_a_call_of_a_name_the_calling_function_binds_is_not_the_modules_function(code: str) -> None:
    """Any binding of a name in a function (a parameter too) makes it local there: the call runs what
    the function holds, never the module's `def` of that name, so no finding is made from that `def`
    (a second reader, 2026-12-05)."""
    assert analyze_source(textwrap.dedent(code), "m.py") == []


REACHING_THE_MODULES_FUNCTION = {
    "a parameter of another name": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, slicer=None):
            n = cache.get_seq_length()
            return slice_from(ids, n)
        """,
    "a class name the function does not bind": """\
        class Lengths:
            @staticmethod
            def slice_from(ids, start):
                return ids[:, start:]


        def run(ids, cache, lengths):
            return Lengths.slice_from(ids, cache.get_seq_length())
        """,
    "a comprehension's target elsewhere in the function (the comprehension's own name)": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, layers):
            names = [slice_from.__name__ for slice_from in layers]
            return slice_from(ids, cache.get_seq_length())
        """,
    "the outermost iterable of a comprehension, which runs in the function": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            return [row for slice_from in slice_from(ids, cache.get_seq_length())]
        """,
    "a call in a comprehension of a class body, which does not see the class's names": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache, xs):
            class Window:
                slice_from = len
                views = [slice_from(ids, cache.get_seq_length()) for x in xs]

            return Window.views
        """,
    "a lambda in a method's decorator, which does not see the class's names": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def register(f):
            return lambda g: g


        class Runner:
            slice_from = staticmethod(len)

            @register(lambda ids, cache: slice_from(ids, cache.get_seq_length()))
            def run(self):
                pass
        """,
    "declared global in a function nested in one that binds the name": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def outer(ids, cache):
            slice_from = len

            def run():
                global slice_from
                return slice_from(ids, cache.get_seq_length())

            return run()
        """,
    "declared global, bound nowhere else": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            global slice_from
            n = cache.get_seq_length()
            return slice_from(ids, n)
        """,
    "a name a nested function binds for itself": """\
        def slice_from(ids, start):
            return ids[:, start:]


        def run(ids, cache):
            def other(slice_from):
                return slice_from

            return slice_from(ids, cache.get_seq_length())
        """,
    "a name the class body around the method binds (not visible in the method)": """\
        def slice_from(ids, start):
            return ids[:, start:]


        class Runner:
            slice_from = None

            def run(self, ids, cache):
                return slice_from(ids, cache.get_seq_length())
        """,
}


@pytest.mark.parametrize("code", REACHING_THE_MODULES_FUNCTION.values(), ids=REACHING_THE_MODULES_FUNCTION.keys())
def test_a_call_of_a_name_the_calling_function_does_not_bind_is_the_modules_function(code: str) -> None:
    """The twins: the module's `def` is what the call runs, and the length passed to it is reported."""
    found = analyze_source(textwrap.dedent(code), "m.py")
    assert [finding.code for finding in found] == ["SLG002"]
    assert "slice_from" in found[0].message


FUNCTION_IMPORTS = {
    "the module's own import, made again in the function (a lazy import)": (
        "from .helpers import slice_from\n\n\ndef run(ids, cache):\n"
        "    from .helpers import slice_from\n\n    return slice_from(ids, cache.get_seq_length())\n",
        ["SLG002"],
    ),
    "the module bound again in the function": (
        "from . import helpers\n\n\ndef run(ids, cache):\n"
        "    from . import helpers\n\n    return helpers.slice_from(ids, cache.get_seq_length())\n",
        ["SLG002"],
    ),
    "another function of that name imported in the function": (
        "from .helpers import slice_from\n\n\ndef run(ids, cache):\n"
        "    from .other import slice_from\n\n    return slice_from(ids, cache.get_seq_length())\n",
        [],
    ),
    "one of the module's imports that may hold, made again in the function": (
        "try:\n    from .helpers import slice_from\nexcept ImportError:\n    from .other import slice_from\n\n\n"
        "def run(ids, cache):\n    from .helpers import slice_from\n\n    return slice_from(ids, cache.get_seq_length())\n",
        ["SLG002"],
    ),
    "the module's module, bound in the function under another spelling": (
        "from . import helpers\n\n\ndef run(ids, cache):\n"
        "    import pkg.helpers as helpers\n\n    return helpers.slice_from(ids, cache.get_seq_length())\n",
        ["SLG002"],
    ),
    "the module's other import that may hold, made again in the function (only that one runs)": (
        "try:\n    from .other import slice_from\nexcept ImportError:\n    from .helpers import slice_from\n\n\n"
        "def run(ids, cache):\n    from .other import slice_from\n\n    return slice_from(ids, cache.get_seq_length())\n",
        [],
    ),
    "an import made only in the function (not followed: a limit, see docs/limits.md)": (
        "def run(ids, cache):\n    from .helpers import slice_from\n\n    return slice_from(ids, cache.get_seq_length())\n",
        [],
    ),
    "the module's import shadowed by a parameter": (
        "from .helpers import slice_from\n\n\ndef run(ids, cache, slice_from):\n"
        "    return slice_from(ids, cache.get_seq_length())\n",
        [],
    ),
}


@pytest.mark.parametrize(("user", "expected"), FUNCTION_IMPORTS.values(), ids=FUNCTION_IMPORTS.keys())
def test_an_import_in_the_function_is_what_its_calls_run(tmp_path: Path, user: str, expected: list[str]) -> None:
    """A function's own import binds the name for its calls: the module's import when it imports the
    same function (followed into `helpers.py`, as before), another module's function otherwise (not
    followed: nothing is reported from `helpers.slice_from`); a parameter hides the import (a second
    reader, 2026-12-05)."""
    helpers = "def slice_from(ids, start):\n    return ids[:, start:]\n"
    other = "def slice_from(ids, start):\n    return ids\n"
    write(tmp_path, {"helpers.py": helpers, "other.py": other, "a.py": user})
    path = tmp_path / "pkg" / "a.py"
    assert [finding.code for finding in analyze_source(path.read_text(), str(path))] == expected


IN_A_COMPILED_FUNCTION = """\
import torch


def slice_from(ids, cache):
    return ids[:, cache.get_seq_length():]


@torch.compile
def run(ids, cache):
    class Window:
"""


def test_a_class_body_that_calls_its_own_name_makes_no_compiled_caller() -> None:
    """The class body in the compiled function calls `len` (its own `slice_from`), not the module's
    function, which therefore runs on the host (a second reader, 2026-12-05: it was named compiled)."""
    body = """\
        slice_from = len
        views = slice_from(ids, cache)

    return Window.views
"""
    found = analyze_source(IN_A_COMPILED_FUNCTION + body, "m.py")
    assert [(finding.line, finding.code, finding.compiled_region) for finding in found] == [(5, "SLG002", "")]


def test_the_methods_of_a_class_in_a_compiled_function_keep_their_compiled_callers() -> None:
    """`go` calls the module's `slice_from` (a method does not see its class's names), and runs
    compiled through `m` and `run`; the class body's own call runs `len` (a second reader,
    2026-12-05: resolving that call rebuilt the class's methods, and the path was lost)."""
    body = """\
        slice_from = staticmethod(len)
        n = slice_from(ids, cache)

        def go(self):
            return slice_from(ids, cache)

        def m(self):
            return self.go()

    return Window().m()
"""
    [finding] = analyze_source(IN_A_COMPILED_FUNCTION + body, "m.py")
    assert (finding.line, finding.code) == (5, "SLG002")
    assert "Window.go" in finding.compiled_region and "run" in finding.compiled_region


HELPER_CALLED_FROM_A_FORWARD = """\
import torch


def helper(ids, cache):
    n = cache.get_seq_length()
    return ids[:, n:]


class Model(torch.nn.Module):
    def forward(self, ids, cache):
        {call}
        return ids
"""


def test_a_compiled_caller_spelling_the_name_in_another_unicode_form_reaches_its_callee() -> None:
    """`forward` calls `helper` as `\uff48elper` (Python reads the fullwidth h as h): the helper runs
    compiled, so its guard would be a graph break. The callers' lines were found by the name's text
    alone, and the call was missed."""
    [finding] = analyze_source(HELPER_CALLED_FROM_A_FORWARD.format(call="\uff48elper(ids, cache)"), "m.py")
    assert finding.compiled_region == "called from Model.forward (line 11)"


# ----- a reader of the private-method callers (2026-12-05): constructors and attributes -----------

CONSTRUCTOR_NAME_BOUND_HERE = {
    "a-local": "DynamicCache = StaticCache\n    cache = DynamicCache(config, max_cache_len=8)",
    "a-parameter": "cache = DynamicCache(config, max_cache_len=8)",
    "a-loop-target": "for DynamicCache in (StaticCache,):\n        cache = DynamicCache(config, max_cache_len=8)",
    "an-import-from-another-module": "from zoo.caches import DynamicCache\n\n    cache = DynamicCache(config)",
    "a-walrus-in-a-comprehension": (
        "[(DynamicCache := c) for c in [StaticCache]]\n    cache = DynamicCache(config, max_cache_len=8)"
    ),
}

BOUND_FOR_EVERY_SCOPE = {
    "global-in-another-function": "def patch():\n    global DynamicCache\n    DynamicCache = StaticCache\n",
    "nonlocal-in-a-nested-function": "",
}


@pytest.mark.parametrize("shape", sorted(BOUND_FOR_EVERY_SCOPE))
def test_a_constructor_name_another_scope_rebinds_for_this_one_is_not_the_class(shape: str) -> None:
    """`global` in one function rebinds the module's name for every function; `nonlocal` in a nested
    one, the enclosing function's (a local of that name in another function does not:
    tests/test_alternative_imports.py)."""
    nested = (
        "def patch():\n        nonlocal DynamicCache\n        DynamicCache = StaticCache\n\n    patch()\n    "
        if shape == "nonlocal-in-a-nested-function"
        else ""
    )
    imported = "from transformers import DynamicCache\n\n    " if nested else ""
    code = f"""\
from transformers import DynamicCache, StaticCache

{BOUND_FOR_EVERY_SCOPE[shape]}

def generate(ids):
    {imported}{nested}cache = DynamicCache()
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert [finding.code for finding in analyze_source(code, "m.py")] == ["SLG002"]


@pytest.mark.parametrize("shape", sorted(CONSTRUCTOR_NAME_BOUND_HERE))
def test_a_constructor_whose_name_the_function_binds_builds_what_that_name_holds(shape: str) -> None:
    """`DynamicCache(...)` where the function binds `DynamicCache` to `StaticCache` builds a
    `StaticCache`: its length is not taken for an int (it was, from the module's import)."""
    parameters = "ids, config, DynamicCache=StaticCache" if shape == "a-parameter" else "ids, config"
    code = f"""\
from transformers import DynamicCache, StaticCache


def generate({parameters}):
    {CONSTRUCTOR_NAME_BOUND_HERE[shape]}
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert [finding.code for finding in analyze_source(code, "m.py")] == ["SLG002"]


def test_a_constructor_whose_name_no_scope_binds_is_the_modules_class() -> None:
    """The twin: bound only by the module's import, `DynamicCache(...)` counts an int (and a
    function's own `from transformers import DynamicCache` binds that same class:
    tests/test_path_facts.py)."""
    code = """\
from transformers import DynamicCache


def generate(ids):
    cache = DynamicCache()
    if isinstance(cache, DynamicCache):
        n = cache.get_seq_length()
        return ids[:, n:]
"""
    assert analyze_source(code, "m.py") == []


RUNNER_HOLDING_A_CACHE = """\
from transformers import DynamicCache


class Runner:
    def __init__(self, model):
        self.model = model
        self.cache = DynamicCache()

    def generate(self, ids):
        n = self.cache.get_seq_length()
        return ids[:, n:]
"""


def test_a_subclass_property_of_the_attributes_name_is_what_self_attribute_gives() -> None:
    """`self.cache` built as a `DynamicCache` in `__init__`, but a subclass's `@property def cache`
    returns a `StaticCache`: on its objects, `self.cache` is the property's (a data descriptor)."""
    subclass = """

class Fast(Runner):
    @property
    def cache(self):
        return StaticCache(self.model.config, max_cache_len=8)

    @cache.setter
    def cache(self, value):
        pass
"""
    found = analyze_source(
        RUNNER_HOLDING_A_CACHE.replace("DynamicCache\n", "DynamicCache, StaticCache\n", 1) + subclass, "m.py"
    )
    assert [finding.code for finding in found] == ["SLG002"]
    assert analyze_source(RUNNER_HOLDING_A_CACHE, "m.py") == []  # the twin: no such subclass


SUBCLASSES_IN_ANOTHER_MODULE = {
    "binds-the-attribute": ("self.cache = StaticCache(model.config, max_cache_len=8)", ["SLG002"]),
    "binds-another-attribute": ("self.other = StaticCache(model.config, max_cache_len=8)", []),
    "has-another-base-that-may-bind-it": ("pass", ["SLG002"]),  # `class Fast(Mixin, Runner)`
}


@pytest.mark.parametrize("shape", sorted(SUBCLASSES_IN_ANOTHER_MODULE))
def test_a_subclass_in_another_module_that_binds_the_attribute_makes_it_unknown(shape: str, tmp_path: Path) -> None:
    """`self.cache` typed from `Runner.__init__` alone was taken to hold a `DynamicCache`, though a
    subclass in another module of the package binds `self.cache` on its own objects (a reader's
    program, 2026-12-05); the twin binds another attribute and stays silent."""
    store, expected = SUBCLASSES_IN_ANOTHER_MODULE[shape]
    bases = "Mixin, Runner" if shape == "has-another-base-that-may-bind-it" else "Runner"
    fast = f"""\
from transformers import StaticCache

from pkg.gen import Runner


class Mixin:
    pass


class Fast({bases}):
    def __init__(self, model):
        super().__init__(model)
        {store}
"""
    package = write_package(tmp_path, {"gen": RUNNER_HOLDING_A_CACHE, "fast": fast})
    checked = check_command.check_path(str(package / "gen.py"), check_command.Settings())
    assert [finding.code for finding in checked.findings] == expected


# ----- a third reader (2026-12-05): what else may build another cache, or reach a private method ----

BUILDS_ANOTHER_CACHE = {
    "a-module-class-of-the-imported-name": "class DynamicCache(StaticCache):\n    pass\n",
    "the-transformers-module-patched": "transformers.DynamicCache = transformers.StaticCache\n",
    "patched-with-setattr-in-a-function": (
        "def patch():\n    setattr(transformers, 'DynamicCache', transformers.StaticCache)\n"
    ),
    "layers-appended": "",
    "layers-rebound": "",
}
LAYER_CHANGES = {
    "layers-appended": "cache.layers.append(StaticLayer(8))",
    "layers-rebound": "cache.layers = [StaticLayer(8)]",
}


@pytest.mark.parametrize("shape", sorted(BUILDS_ANOTHER_CACHE))
def test_a_constructor_that_may_build_another_cache_is_not_an_int(shape: str) -> None:
    """`DynamicCache()` counts an int only while the name is transformers' class and its layers are
    its own: a class of that name below the import, the module's patch of transformers, or a
    layer put in from outside (a `StaticLayer`) make it unknown."""
    code = f"""\
import transformers
from transformers import DynamicCache, StaticCache, StaticLayer

{BUILDS_ANOTHER_CACHE[shape]}

def generate(ids):
    cache = DynamicCache()
    {LAYER_CHANGES.get(shape, "pass")}
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert [finding.code for finding in analyze_source(code, "m.py")] == ["SLG002"]
    twin = code.replace(BUILDS_ANOTHER_CACHE[shape], "").replace(LAYER_CHANGES.get(shape, "pass"), "pass")
    assert analyze_source(twin, "m.py") == []


REFLECTION_ON_THE_CLASS = {
    "a-computed-getattr": "return getattr(self, '_s' + 'tep')(ids, StaticCache(None, max_cache_len=8))",
    "the-class-dict": "for f in type(self).__dict__.values():\n            f(self, ids, StaticCache(None, max_cache_len=8))",
    "dir": "for name in dir(self):\n            getattr(self, name)",
    "methodcaller": "operator.methodcaller(name, ids, StaticCache(None, max_cache_len=8))(self)",
    "attrgetter": "operator.attrgetter(name)(self)(ids, StaticCache(None, max_cache_len=8))",
    "getattribute": "self.__getattribute__(name)(ids, StaticCache(None, max_cache_len=8))",
    "getattr-aliased": "g = getattr\n        g(self, name)(ids, StaticCache(None, max_cache_len=8))",
    "getattr-handed-on": "list(map(getattr, [self], [name]))[0](ids, StaticCache(None, max_cache_len=8))",
    "eval": "eval('self.' + name)(ids, StaticCache(None, max_cache_len=8))",
}


@pytest.mark.parametrize("shape", sorted(REFLECTION_ON_THE_CLASS))
def test_a_private_method_a_lookup_by_computed_name_may_reach_is_reported(shape: str, tmp_path: Path) -> None:
    """The method's callers are not all written as calls: a lookup of a computed name may reach it."""
    module = f"""\
import operator

from transformers import DynamicCache, StaticCache


class Runner:
    def generate(self, ids):
        return self._step(ids, DynamicCache())

    def _step(self, ids, cache):
        n = cache.get_seq_length()
        return ids[:, n:]

    def other(self, ids, name):
        {REFLECTION_ON_THE_CLASS[shape]}
"""
    package = write_package(tmp_path, {"gen": module})
    checked = check_command.check_path(str(package / "gen.py"), check_command.Settings())
    assert [finding.code for finding in checked.findings] == ["SLG002"]


# ----- a fourth reader (2026-12-05): headers, layers changed in place, patches, lookups ---------


def codes_in(code: str) -> list[str]:
    return [finding.code for finding in analyze_source(code, "m.py")]


WALRUS_IN_A_HEADER = {
    "a-default": "def helper(_x=(DynamicCache := StaticCache)):\n        pass",
    "an-annotation": "def helper(_x: (DynamicCache := StaticCache)):\n        pass",
    "a-return-annotation": "def helper() -> (DynamicCache := StaticCache):\n        pass",
    "a-class-base": "class Helper((DynamicCache := StaticCache)):\n        pass",
    "a-lambda-default": "helper = lambda _x=(DynamicCache := StaticCache): _x",
}


@pytest.mark.parametrize("shape", sorted(WALRUS_IN_A_HEADER))
def test_a_walrus_in_a_nested_header_binds_the_enclosing_function(shape: str) -> None:
    """A nested definition's header runs in the function around it: its walrus rebinds the name there."""
    code = f"""\
from transformers import DynamicCache, StaticCache


def step(ids):
    {WALRUS_IN_A_HEADER[shape]}
    cache = DynamicCache()
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert codes_in(code) == ["SLG002"]


LAYERS_CHANGED_HERE = {
    "append": "cache.layers.append(StaticLayer(8))",
    "nested-index": "cache.layers[i[0]] = StaticLayer(8)",
    "index-over-two-lines": "cache.layers[\n        0] = StaticLayer(8)",
    "annotated": "cache.layers: list = [StaticLayer(8)]",
    "tuple-target": "cache.layers, x = [StaticLayer(8)], 1",
    "for-target": "for cache.layers in [[StaticLayer(8)]]: pass",
    "with-target": "with ctx as cache.layers: pass",
    "parenthesised-receiver": "(cache).layers.append(StaticLayer(8))",
    "line-continuation": "cache.layers \\\n        .append(StaticLayer(8))",
    "handed-to-a-function": "list.append(cache.layers, StaticLayer(8))",
    "setattr": "setattr(cache, 'layers', [StaticLayer(8)])",
    "object-setattr": "object.__setattr__(cache, 'layers', [StaticLayer(8)])",
    "vars": "vars(cache)['layers'] = [StaticLayer(8)]",
    "getattr": "getattr(cache, 'layers').append(StaticLayer(8))",
    "an-alias": "ls = cache.layers\n    ls.append(StaticLayer(8))",
    "a-wrapped-cache": "cache.self_attention_cache.layers.append(StaticLayer(8))",
}


@pytest.mark.parametrize("shape", sorted(LAYERS_CHANGED_HERE))
def test_a_transformers_cache_whose_layers_the_function_changes_is_not_an_int(shape: str) -> None:
    """`DynamicCache()` counts an int through its own layers: a layer put in, or its list rebound or
    handed on, may count a tensor (a `StaticLayer`)."""
    built = "EncoderDecoderCache(DynamicCache(), DynamicCache())" if shape == "a-wrapped-cache" else "DynamicCache()"
    code = f"""\
from transformers import DynamicCache, EncoderDecoderCache, StaticLayer


def step(ids, ctx, i):
    cache = {built}
    {LAYERS_CHANGED_HERE[shape]}
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert codes_in(code) == ["SLG002"]


def test_a_layers_list_only_read_or_another_objects_changed_keeps_the_int() -> None:
    """The twins: `len(cache.layers)`, a model's own `layers` cut down, `self.layers` in a method."""
    code = """\
from transformers import DynamicCache


def draft(model, k):
    model.model.layers = model.model.layers[:k]
    return model


class Stack:
    def __init__(self):
        self.layers = []

    def add(self, layer):
        self.layers.append(layer)


def step(ids):
    cache = DynamicCache()
    if len(cache.layers) > 2:
        return ids
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert analyze_source(code, "m.py") == []


MODULE_PATCHED = {
    "concatenated-name": "setattr(transformers, 'Dynamic' 'Cache', StaticCache)",
    "escaped-name": "setattr(transformers, '\\x44ynamicCache', StaticCache)",
    "computed-name": "setattr(transformers, name, StaticCache)",
    "dunder-setattr": "transformers.__setattr__('DynamicCache', StaticCache)",
    "object-setattr": "object.__setattr__(transformers, 'DynamicCache', StaticCache)",
    "vars": "vars(transformers)['DynamicCache'] = StaticCache",
    "module-dict": "transformers.__dict__['DynamicCache'] = StaticCache",
    "module-dict-update": "transformers.__dict__.update(DynamicCache=StaticCache)",
    "line-continuation": "transformers.\\\nDynamicCache = StaticCache",
    "one-line-for": "for transformers.DynamicCache in [StaticCache]: pass",
}


@pytest.mark.parametrize("shape", sorted(MODULE_PATCHED))
def test_a_transformers_class_the_module_patches_is_not_the_class(shape: str) -> None:
    code = f"""\
import transformers
from transformers import StaticCache

name = "DynamicCache"
{MODULE_PATCHED[shape]}


def step(ids):
    cache = transformers.DynamicCache()
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert codes_in(code) == ["SLG002"]


def test_setattr_on_its_own_object_and_another_path_to_the_class_change_nothing() -> None:
    """The twins: `setattr(self, key, value)` binds the object's own attributes; a function's import
    of `transformers.cache_utils.DynamicCache` is the class the module imports from `transformers`."""
    code = """\
from transformers import DynamicCache


class Config:
    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)


def step(ids):
    from transformers.cache_utils import DynamicCache

    cache = DynamicCache()
    n = cache.get_seq_length()
    return ids[:, n:]


def other(ids):
    from transformers import DynamicCache

    cache = DynamicCache()
    n = cache.get_seq_length()
    return ids[:, n:]
"""
    assert analyze_source(code, "m.py") == []


def test_a_call_in_a_one_line_compound_header_reaches_its_callee() -> None:
    """`for x in helper(ids, cache): pass` in a `forward`: the statement found at the line was the inner
    `pass` alone, and the helper was taken for host code (its guard a graph break)."""
    code = HELPER_CALLED_FROM_A_FORWARD.format(call="for x in helper(ids, cache): pass")
    [finding] = analyze_source(code, "m.py")
    assert finding.compiled_region == "called from Model.forward (line 11)"

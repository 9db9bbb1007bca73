"""What a package may declare (`int-length-caches`, `int-length-classes` in `[tool.seqlen-guard]`):
honoured as facts about receivers, refused where the declared files show a tensor-length cache,
listed and lifted by the audit flags, and read alike by the checker, the fixer and the flake8 plugin.

Every silencing case has its must-report twin: the same code without the declaration, or in a file
the declaration does not cover."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fixers.fix_command import run as fix_run
from lint_rules.check_command import run as check_run
from lint_rules.config import ConfigError, load_config
from lint_rules.engine import DeclarationRefused, Declarations, analyze_source
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT

EVERY_FILE = Declarations(("*",))

UNKNOWN_RECEIVER = """\
def trim(cache, x):
    return x[:, cache.get_seq_length():]
"""


def codes(
    text: str, declarations: Declarations = EVERY_FILE, path: str = "app.py", releases: Releases = ALL_RELEASES
) -> list[tuple[int, str]]:
    source = textwrap.dedent(text)
    found = analyze_source(source, path, releases=releases, declarations=declarations)
    return [(finding.line, finding.code) for finding in found]


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def check(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    monkeypatch.chdir(folder)
    status = check_run([*argv])
    out, err = capsys.readouterr()
    return status, out, err


def finding_lines(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if ": SLG" in line and "(silenced by" not in line)


def pyproject(body: str) -> str:
    return "[tool.seqlen-guard]\n" + textwrap.dedent(body)


# ------------------------------------------------------------------ the engine: int-length-caches


def test_unknown_receiver_is_int_length_under_the_declaration() -> None:
    assert codes(UNKNOWN_RECEIVER) == []
    assert codes(UNKNOWN_RECEIVER, Declarations()) == [(2, "SLG002")]  # must report: nothing declared


def test_a_static_cache_annotation_is_still_reported_in_a_declared_file() -> None:
    annotated = """\
    from transformers import StaticCache

    def trim(cache: StaticCache | None, x):
        return x[:, cache.get_seq_length():]

    class Runner:
        cache: StaticCache

        def trim(self, x):
            return x[:, self.cache.get_seq_length():]
    """
    assert codes(annotated) == [(4, "SLG002"), (10, "SLG002")]


def test_an_isinstance_branch_is_still_reported_in_a_declared_file() -> None:
    narrowed = """\
    from transformers import DynamicCache, StaticCache

    def trim(cache, x):
        if isinstance(cache, (StaticCache, DynamicCache)):
            return x[:, cache.get_seq_length():]
        return x[:, cache.get_seq_length():]
    """
    # line 6: outside the branch the receiver is unknown again, so the declaration holds there
    assert codes(narrowed) == [(5, "SLG002")]


def test_a_static_cache_built_in_a_declared_file_is_reported_and_refuses_the_declaration() -> None:
    built = """\
    from transformers import StaticCache

    def run(model, x):
        cache = StaticCache(model.config, max_cache_len=64)
        return x[:, cache.get_seq_length():]
    """
    with pytest.raises(DeclarationRefused) as refused:
        codes(built)
    assert refused.value.line == 4
    assert "builds StaticCache(...)" in str(refused.value)
    # what the adapters report for a refused file: the findings made without int-length-caches
    assert codes(built, Declarations()) == [(5, "SLG002")]


ALIASED_STATIC_CACHES = {
    "alias": "from transformers import StaticCache as SC\n",
    "imported-in-the-function": "",
    "assigned": "from transformers import StaticCache\nSC = StaticCache\n",
    "last-import-a-dynamic-cache": (
        "try:\n    from transformers import StaticCache as SC\n"
        "except ImportError:\n    from transformers import DynamicCache as SC\n"
    ),
}

BUILDS_SC = """

def run(model, x):
{local_import}    cache = SC({arguments})
    return x[:, cache.get_seq_length():]
"""


@pytest.mark.parametrize("imports", ALIASED_STATIC_CACHES.values(), ids=ALIASED_STATIC_CACHES)
def test_a_static_cache_built_under_another_name_refuses_the_declaration(imports: str) -> None:
    """Under any name the module may bind it to (an alias, a function's import, an assignment, one arm
    of a fallback whose other arm is last), a StaticCache built in a declared file refuses the declaration. The twin
    builds a DynamicCache under the same names: nothing tensor-length, nothing refused."""
    local_import = "" if imports else "    from transformers import StaticCache as SC\n"
    built = imports + BUILDS_SC.format(local_import=local_import, arguments="model.config, max_cache_len=64")
    with pytest.raises(DeclarationRefused, match="builds SC"):
        codes(built)
    dynamic = imports + BUILDS_SC.format(local_import=local_import, arguments="")
    assert codes(dynamic.replace("StaticCache", "DynamicCache")) == []


def test_a_copy_of_an_annotated_static_cache_is_still_reported() -> None:
    declared_file = """\
    from transformers import StaticCache

    def trim(cache: StaticCache, x):
        other = cache
        return x[:, other.get_seq_length():]
    """
    assert codes(declared_file) == [(5, "SLG002")]


# ---------------------------------------------------------------- the engine: int-length-classes


PICKED_BASE = """\
import os

from transformers import DynamicCache, StaticCache

Base = StaticCache if os.environ.get("STATIC") else DynamicCache


class Picked(Base):
    pass
"""


def test_a_declared_class_is_int_length_and_its_twin_is_reported(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/caches.py": PICKED_BASE,
            "pkg/model.py": """\
            from pkg.caches import Picked


            class Kept(Picked):
                pass


            def annotated(cache: Picked, x):
                return x[:, cache.get_seq_length():]


            def built(x):
                return x[:, Picked().get_seq_length():]


            def narrowed(cache, x):
                if isinstance(cache, Kept):
                    return x[:, cache.get_seq_length():]
                return x


            def unknown(cache, x):
                return x[:, cache.get_seq_length():]
            """,
        },
    )
    model = str(tmp_path / "pkg" / "model.py")
    text = (tmp_path / "pkg" / "model.py").read_text()
    declared = Declarations(int_length_classes=frozenset({"pkg.caches.Picked"}))
    lines = [finding.line for finding in analyze_source(text, model, declarations=declared)]
    assert lines == [23]  # `unknown`: int-length-classes says nothing of a receiver of unknown class
    undeclared = [finding.line for finding in analyze_source(text, model)]
    assert undeclared == [9, 13, 18, 23]  # must report: the base is chosen at import time


def test_a_declared_transformers_class_outside_the_table() -> None:
    """LFM2's `Lfm2HybridConvCache` (4.54-4.57) is in no row of the release table, so only a
    declaration can make it int-length."""
    hybrid = """\
    from transformers.models.lfm2.modeling_lfm2 import Lfm2HybridConvCache

    def trim(cache: Lfm2HybridConvCache, x):
        return x[:, cache.get_seq_length():]
    """
    declared = Declarations(
        int_length_classes=frozenset({"transformers.models.lfm2.modeling_lfm2.Lfm2HybridConvCache"})
    )
    assert codes(hybrid, declared) == []
    assert codes(hybrid, Declarations()) == [(4, "SLG002")]


def test_a_declared_class_does_not_override_the_table() -> None:
    """The table is checked against the releases: StaticCache stays tensor-length whatever is declared."""
    static = """\
    from transformers import StaticCache

    def trim(cache: StaticCache, x):
        return x[:, cache.get_seq_length():]
    """
    declared = Declarations(int_length_classes=frozenset({"transformers.StaticCache"}))
    assert codes(static, declared) == [(4, "SLG002")]


# ------------------------------------------------------------------------------ refusals


REFUSED = {
    "builds": (
        """\
        from transformers import StaticCache
        def run(model, x, cache):
            made = StaticCache(model.config, max_cache_len=8)
            return x[:, cache.get_seq_length():], made
        """,
        3,
        "builds StaticCache(...), a cache whose length is a tensor",
    ),
    "asks-generate": (
        """\
        def run(model, x, cache):
            out = model.generate(
                x, cache_implementation="static"
            )
            return x[:, cache.get_seq_length():], out
        """,
        3,
        "asks for cache_implementation='static'",
    ),
    "assigns-config": (
        """\
        def run(model, x, cache):
            model.generation_config.cache_implementation = "hybrid"
            return x[:, cache.get_seq_length():]
        """,
        2,
        "asks for cache_implementation='hybrid'",
    ),
    "defines-class": (
        """\
        from transformers import StaticCache


        class Mine(StaticCache):
            pass


        def run(x, cache):
            return x[:, cache.get_seq_length():]
        """,
        4,
        "defines class Mine, a cache whose length is a tensor",
    ),
}


@pytest.mark.parametrize("cause", sorted(REFUSED))
def test_the_checker_refuses_a_declaration_the_file_contradicts(
    cause: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text, line, shown = REFUSED[cause]
    write(tmp_path, {"pyproject.toml": pyproject("int-length-caches = true\n"), "app.py": text})
    status, out, err = check(tmp_path, monkeypatch, capsys, "app.py")
    assert status == 2
    assert f"app.py: declaration refused: int-length-caches covers this file, but line {line} {shown}" in err
    assert finding_lines(out), "a refused file's findings are made without the declaration"


def test_a_dynamic_implementation_and_a_dynamic_cache_are_not_refused() -> None:
    dynamic = """\
    from transformers import DynamicCache

    def run(model, x, cache):
        model.generate(x, cache_implementation="dynamic", past_key_values=DynamicCache())
        return x[:, cache.get_seq_length():]
    """
    assert codes(dynamic) == []  # nothing here is tensor-length: the declaration holds


# ------------------------------------------------------------------------- configuration


def test_globs_limit_the_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": pyproject('int-length-caches = ["app/*"]\n'),
            "app/run.py": UNKNOWN_RECEIVER,
            "app/sub/deep.py": UNKNOWN_RECEIVER,
            "lib/api.py": UNKNOWN_RECEIVER,
            "lib/app/other.py": UNKNOWN_RECEIVER,
        },
    )
    status, out, _ = check(tmp_path, monkeypatch, capsys, ".")
    assert status == 1
    # must report: not covered (`app/*` is the configuration folder's `app`, not any folder named so)
    assert [line.split(":")[0] for line in finding_lines(out)] == ["lib/api.py", "lib/app/other.py"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('int-length-caches = "yes"', "int-length-caches: expected true, false or a list of globs, got a string"),
        ('int-length-classes = ["Counted"]', "'Counted' is not a dotted class name such as 'pkg.module.Class'"),
    ],
)
def test_bad_declarations_are_configuration_errors(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(pyproject(body + "\n"))
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_true_and_false_read_as_every_file_and_none(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(pyproject('int-length-caches = true\nint-length-classes = ["pkg.caches.Picked"]\n'))
    values = load_config(path)
    assert (values.int_length_caches, values.int_length_classes) == (("*",), ("pkg.caches.Picked",))
    path.write_text(pyproject("int-length-caches = false\n"))
    assert load_config(path).int_length_caches == ()


# -------------------------------------------------------------------------------- audits


AUDITED = {
    "pyproject.toml": pyproject('int-length-caches = ["app/*"]\nint-length-classes = ["app.caches.Picked"]\n'),
    "app/__init__.py": "",
    "app/caches.py": PICKED_BASE.replace("StaticCache if", "DynamicCache if").replace(", StaticCache", ""),
    "app/run.py": """\
    from transformers import StaticCache

    from app.caches import Picked


    def by_class(cache: Picked, x):
        return x[:, cache.get_seq_length():]


    def by_file(cache, x):
        return x[:, cache.get_seq_length():]


    def by_comment(cache: StaticCache, x):
        return x[:, cache.get_seq_length():]  # noqa: SLG002
    """,
}


def test_show_silenced_names_the_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, AUDITED)
    status, out, _ = check(tmp_path, monkeypatch, capsys, "--show-silenced", "app/run.py")
    assert status == 0
    silenced = [(line.split(":")[1], line.rpartition("(silenced by ")[2]) for line in out.splitlines()]
    assert silenced == [
        ("7", "declaration int-length-classes)"),
        ("11", "declaration int-length-caches)"),
        ("15", "noqa)"),  # the receiver is shown tensor-length: only the comment silences it
    ]


def test_no_declarations_lifts_them_and_disable_noqa_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, AUDITED)
    status, out, _ = check(tmp_path, monkeypatch, capsys, "--no-declarations", "app/run.py")
    assert (status, [line.split(":")[1] for line in finding_lines(out)]) == (1, ["11", "7"])
    status, out, _ = check(tmp_path, monkeypatch, capsys, "--disable-noqa", "app/run.py")
    assert (status, [line.split(":")[1] for line in finding_lines(out)]) == (1, ["15"])


# ------------------------------------------------------------------- the fixer and flake8


def test_the_fixer_honours_the_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": pyproject('int-length-caches = ["app/*"]\n'),
            "app/run.py": UNKNOWN_RECEIVER,
            "lib/api.py": UNKNOWN_RECEIVER,
        },
    )
    monkeypatch.chdir(tmp_path)
    assert fix_run(["."]) == 0
    capsys.readouterr()
    assert (tmp_path / "app" / "run.py").read_text() == UNKNOWN_RECEIVER  # declared: no guard
    assert "isinstance(seq_length, torch.Tensor)" in (tmp_path / "lib" / "api.py").read_text()  # must fix
    assert fix_run(["--check", "--disable-noqa", "app"]) == 0  # not lifted by the comments' audit flag
    assert fix_run(["--check", "--no-declarations", "app"]) == 1  # lifted: the declared file would change
    assert (tmp_path / "app" / "run.py").read_text() == UNKNOWN_RECEIVER


def test_flake8_and_the_checker_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {**AUDITED, "app/static.py": REFUSED["builds"][0], "lib/api.py": UNKNOWN_RECEIVER})
    status, out, err = check(tmp_path, monkeypatch, capsys, "app", "lib")
    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=SLG", "app", "lib"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},  # this checkout's plugin
    )
    refusals = [line for line in finding_lines(flake8.stdout) if " SLG901 " in line]
    assert finding_lines(flake8.stdout) == sorted([*finding_lines(out), *refusals])
    assert [line.split(":")[:2] for line in refusals] == [["app/static.py", "3"]]
    assert "app/static.py: declaration refused:" in err
    assert status == 2


def test_a_package_class_whose_length_is_a_tensor(tmp_path: Path) -> None:
    """Defined in a file the declaration does not cover, it is still shown tensor-length in one it does."""
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/caches.py": "from transformers import StaticCache\n\n\nclass Mine(StaticCache):\n    pass\n",
            "pkg/app.py": """\
            from pkg.caches import Mine


            def trim(cache: Mine, x):
                return x[:, cache.get_seq_length():]


            def build(config):
                return Mine(config)
            """,
        },
    )
    app = tmp_path / "pkg" / "app.py"
    covers_app = Declarations((str(app),))
    text = app.read_text()
    with pytest.raises(DeclarationRefused, match="line 9 builds Mine"):
        analyze_source(text, str(app), declarations=covers_app)
    annotated_only = text.replace("Mine(config)", "config")
    assert [f.line for f in analyze_source(annotated_only, str(app), declarations=covers_app)] == [5]


def test_a_copy_keeps_the_cache_kind_its_header_gives() -> None:
    """`other = cache` holds the object the annotation speaks of (the copy reads the header's kind, which
    the tensor-length kind above needs); with no declaration, the int-length kind of an annotated
    `DynamicCache` reaches the copy too, on the releases where every `DynamicCache` counts an int."""
    copied = """\
    from transformers import DynamicCache

    def trim(cache: DynamicCache, plain, x):
        other, same = cache, plain
        return x[:, other.get_seq_length():], x[:, same.get_seq_length():]
    """
    only_same = [(5, "SLG002")]  # `same`: its header says nothing (must report)
    assert codes(copied, Declarations(), releases=DYNAMIC_CACHE_COUNTS_INT) == only_same
    assert codes(copied, Declarations()) == [(5, "SLG002")] * 2  # from 5.25 on, `other` may count a tensor


OWN_TENSOR_LENGTH = """\
import torch


class Counter:
    def __init__(self):
        self.length = torch.zeros(1, dtype=torch.long)

    def get_seq_length(self):
        return self.length
"""


def test_a_class_returning_a_tensor_attribute_has_a_tensor_length(tmp_path: Path) -> None:
    """Like transformers' `StaticLayer`: defined in a declared file it refuses the declaration; imported
    into one, an annotated receiver of it is still reported."""
    with pytest.raises(DeclarationRefused, match="line 4 defines class Counter"):
        codes(OWN_TENSOR_LENGTH + "\n\ndef trim(cache, x):\n    return x[:, cache.get_seq_length():]\n")
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/counters.py": OWN_TENSOR_LENGTH,
            "pkg/app.py": """\
            from pkg.counters import Counter


            def trim(cache: Counter, other, x):
                return x[:, cache.get_seq_length():], x[:, other.get_seq_length():]
            """,
        },
    )
    app = tmp_path / "pkg" / "app.py"
    found = analyze_source(app.read_text(), str(app), declarations=Declarations((str(app),)))
    assert [(f.line, f.span.col) for f in found] == [(5, 16)]  # `other` is of unknown class: declared int

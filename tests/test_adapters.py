"""The flake8 plugin, the standalone checker and the fixer report the same findings (one engine),
and the checker's command line behaves as documented."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lint_rules.cli import main as check_main
from lint_rules.rules import RULES

SAMPLE = textwrap.dedent(
    """\
    import torch


    def prefill(cache, input_ids, model_kwargs):
        past_length = cache.get_seq_length()
        next_sequence_length = input_ids.shape[1] - past_length
        positions = torch.arange(input_ids.shape[1] + past_length)
        if past_length > 0:  # noqa: SLG004
            pass
        tail = input_ids[
            :, past_length:  # noqa
        ]
        return input_ids[:, -next_sequence_length:], positions, tail


    class Model(torch.nn.Module):
        def forward(self, x, past_key_values):
            n = past_key_values.get_seq_length()
            return x[:, n:], [0] * n
    """
)


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, check=False)


def finding_lines(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if ": SLG" in line)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    return path


def test_flake8_checker_and_fixer_report_the_same_findings(sample: Path) -> None:
    flake8 = run("-m", "flake8", "--select=SLG", str(sample))
    checker = run("-m", "lint_rules", str(sample))
    fixer = run("-m", "fixers.rewrite", "--check", str(sample))
    from_fixer = sorted(line.rsplit(" [", 1)[0] for line in finding_lines(fixer.stderr))  # --check: stdout is empty
    assert finding_lines(flake8.stdout) == finding_lines(checker.stdout) == from_fixer
    assert len(finding_lines(checker.stdout)) == 5, checker.stdout
    assert (flake8.returncode, checker.returncode, fixer.returncode) == (1, 1, 1)


FLAG_BOUND_ONCE = "def generate(ids, cache):\n    use_static = False\n    n = cache.get_seq_length()\n" + (
    "    if use_static:\n        ids = ids[:, n:]\n    return ids[:, n:]\n"
)


@pytest.mark.parametrize("line_break", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_flake8_checker_and_fixer_agree_on_a_file_without_lf_line_breaks(tmp_path: Path, line_break: str) -> None:
    """flake8 hands the plugin the lines with `\n` breaks; the checker and the fixer read the file's
    own: the dead branch of `use_static` (bound once to False) is silent in all three, the use after
    it reported in all three."""
    path = tmp_path / "windows.py"
    path.write_bytes(FLAG_BOUND_ONCE.replace("\n", line_break).encode())
    flake8 = run("-m", "flake8", "--select=SLG", str(path))
    checker = run("-m", "lint_rules", str(path))
    fixer = run("-m", "fixers.rewrite", "--check", str(path))
    from_fixer = sorted(line.rsplit(" [", 1)[0] for line in finding_lines(fixer.stderr))
    assert finding_lines(flake8.stdout) == finding_lines(checker.stdout) == from_fixer
    assert [line.split(":")[1] for line in finding_lines(checker.stdout)] == ["6"], checker.stdout


def test_noqa_silences_the_same_findings_everywhere(sample: Path) -> None:
    checker = run("-m", "lint_rules", "--show-silenced", str(sample))
    silenced = [line for line in checker.stdout.splitlines() if line.endswith("(silenced by noqa)")]
    assert [line.split(": ")[1].split()[0] for line in silenced] == ["SLG004", "SLG002"]


def test_messages_name_the_source_line_and_the_compiled_region(sample: Path) -> None:
    lines = finding_lines(run("-m", "lint_rules", str(sample)).stdout)
    assert all("on line 5" in line for line in lines if ":6:" in line or ":7:" in line)
    compiled = [line for line in lines if "[compiled region: forward method]" in line]
    assert [line.split(": ")[1].split()[0] for line in compiled] == ["SLG002", "SLG003"]


def test_exit_codes(tmp_path: Path, sample: Path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text("def f(x):\n    return x[:1]\n")
    broken = tmp_path / "broken.py"
    broken.write_text("def f(cache):\n    n = cache.get_seq_length(\n")
    assert check_main([str(clean)]) == 0
    assert check_main([str(sample)]) == 1
    assert check_main(["--exit-zero", str(sample)]) == 0
    result = run("-m", "lint_rules", str(broken), str(sample))
    assert result.returncode == 2
    assert f"{broken}: syntax error on line" in result.stderr
    assert len(finding_lines(result.stdout)) == 5, "the other files are still checked"
    assert run("-m", "lint_rules", "--select", "XYZ1", str(sample)).returncode == 2


def test_select_and_ignore(sample: Path) -> None:
    only_slices = finding_lines(run("-m", "lint_rules", "--select", "SLG002", str(sample)).stdout)
    assert {line.split(": ")[1].split()[0] for line in only_slices} == {"SLG002"}
    without = finding_lines(run("-m", "lint_rules", "--ignore", "SLG001,SLG002", str(sample)).stdout)
    assert {line.split(": ")[1].split()[0] for line in without} == {"SLG003"}


def test_parallel_run_reports_the_same(tmp_path: Path) -> None:
    for index in range(6):
        (tmp_path / f"m{index}.py").write_text(SAMPLE)
    serial = run("-m", "lint_rules", str(tmp_path))
    parallel = run("-m", "lint_rules", "-j", "2", str(tmp_path))
    assert serial.stdout == parallel.stdout and serial.stdout


@pytest.mark.parametrize("code", list(RULES))
def test_explain_prints_the_rule_documentation(code: str) -> None:
    result = run("-m", "lint_rules", "--explain", code)
    assert result.returncode == 0
    for heading in ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety"):
        assert heading in result.stdout
    assert RULES[code].summary in result.stdout


def test_explain_unknown_code_is_a_usage_error() -> None:
    assert run("-m", "lint_rules", "--explain", "SLG999").returncode == 2


def test_json_output_carries_origin_and_fix(sample: Path) -> None:
    result = run("-m", "lint_rules", "--format", "json", str(sample))
    objects = json.loads(result.stdout)
    first = objects[0]
    assert first["origin_line"] == 5
    assert first["origin_source"].strip() == "past_length = cache.get_seq_length()"
    assert first["fix"]["safety"] == "safe"
    assert {obj["compiled_region"] for obj in objects} == {None, "forward method"}


def test_libcst_tool_runs_the_codemod(tmp_path: Path) -> None:
    path = tmp_path / "serve.py"
    path.write_text("import torch\ndef f(cache, x):\n    n = cache.get_seq_length()\n    return x[:, n:]\n")
    result = run(
        "-m",
        "libcst.tool",
        "codemod",
        "-x",
        "--no-format",
        "fixers.codemod.InsertIntGuards",
        str(path),
        cwd=Path(__file__).resolve().parents[1],
    )
    assert result.returncode == 0, result.stderr
    assert "    if isinstance(n, torch.Tensor):\n        n = int(n.item())\n" in path.read_text()


def test_every_adapter_reads_the_same_sibling_module(tmp_path: Path) -> None:
    """Classes imported from the same package are read from disk by the engine itself, so flake8,
    the checker and the fixer see the same facts: here an int-length cache class in `caches.py`."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "caches.py").write_text("class Counted:\n    def get_seq_length(self):\n        return 0\n")
    model = package / "model.py"
    model.write_text(
        "from .caches import Counted\n\n\n"
        "def trim(cache: Counted, x):\n    return x[:, cache.get_seq_length():]\n\n\n"
        "def trim_any(cache, x):\n    return x[:, cache.get_seq_length():]\n"
    )
    flake8 = run("-m", "flake8", "--select=SLG", str(model))
    checker = run("-m", "lint_rules", str(model))
    fixer = run("-m", "fixers.rewrite", "--check", str(model))
    from_fixer = sorted(line.rsplit(" [", 1)[0] for line in finding_lines(fixer.stderr))
    assert finding_lines(flake8.stdout) == finding_lines(checker.stdout) == from_fixer
    assert [line.split(":")[1] for line in finding_lines(checker.stdout)] == ["9"]


def test_a_file_level_noqa_silences_the_file_in_the_checker_and_the_fixer(sample: Path) -> None:
    sample.write_text("# flake8: noqa: SLG002\n" + SAMPLE)
    checker = run("-m", "lint_rules", "--show-silenced", str(sample))
    silenced = [line.split(": ")[1].split()[0] for line in checker.stdout.splitlines() if "silenced" in line]
    reported = [line.split(": ")[1].split()[0] for line in finding_lines(checker.stdout) if "silenced" not in line]
    assert sorted(silenced) == ["SLG002", "SLG002", "SLG002", "SLG004"]
    assert "SLG002" not in reported and reported
    sample.write_text("# flake8: noqa\n" + SAMPLE)
    assert run("-m", "lint_rules", str(sample)).returncode == 0
    fixer = run("-m", "fixers.rewrite", "--check", str(sample))
    assert fixer.returncode == 0 and finding_lines(fixer.stderr) == []


def test_a_string_that_mentions_a_file_level_noqa_silences_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        'HELP = """Put `# flake8: noqa` at the top to silence a file."""\n\n\n'
        "def trim(cache, x):\n    return x[: cache.get_seq_length()]\n"
    )
    assert [line.split(":")[1] for line in finding_lines(run("-m", "lint_rules", str(path)).stdout)] == ["5"]


def test_a_noqa_on_a_decorator_line_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        'n = cache.get_seq_length()\n\n\n@register(x[:n],\n          name="f")  # noqa: SLG002\ndef f():\n    pass\n'
    )
    checker = run("-m", "lint_rules", "--show-silenced", str(path))
    assert checker.returncode == 0
    assert [line.endswith("(silenced by noqa)") for line in finding_lines(checker.stdout)] == [True]

"""`generate()` hands `prepare_inputs_for_generation` a `cache_position` (`engine/facts/generation_hook.py`,
issue 26's release fact): under a range where every release does (4.39-4.40, 4.43-5.3), the hook's
`cache_position is None` branches are dead and the cache's length is never asked there. The silent
shape is reduced from optimum-tpu 0.2.3 (`==4.46.3`) and xtuner 0.2.0 (`==4.48.0`). Each twin keeps
the shape and changes one thing: a release that passes none (or None), the package's own call of the
hook, an override that hands another value on, a Whisper model, a method of another name."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.facts.generation_hook import only_generate_calls_the_hook
from lint_rules.engine.facts.releases import RELEASES, Releases
from tests.helpers_rewrite import cli_environment

HOOK = textwrap.dedent(
    """\
    import torch
    from transformers import Cache, PreTrainedModel


    class ZooForCausalLM(PreTrainedModel):
        def prepare_inputs_for_generation(
            self, input_ids, past_key_values=None, attention_mask=None, cache_position=None, **kwargs
        ):
            past_length = 0
            if past_key_values is not None:
                if isinstance(past_key_values, Cache):
                    past_length = cache_position[0] if cache_position is not None else past_key_values.get_seq_length()
                if past_length < input_ids.shape[1]:
                    input_ids = input_ids[:, past_length:]
            if cache_position is None:
                cache_position = torch.arange(past_length, past_length + input_ids.shape[1])
            return {"input_ids": input_ids, "cache_position": cache_position}
    """
)
HOOK_FINDINGS = [(13, "SLG004"), (14, "SLG002"), (16, "SLG003"), (16, "SLG003")]


def releases_named(*names: str) -> Releases:
    return frozenset(row for row in RELEASES if row.name in names)


def found(text: str, path: Path, *names: str) -> list[tuple[int, str]]:
    releases = releases_named(*names) if names else frozenset(RELEASES)
    return [(finding.line, finding.code) for finding in analyze_source(text, str(path), releases=releases)]


def lone_module(tmp_path: Path, text: str = HOOK) -> Path:
    path = tmp_path / "modeling_zoo.py"
    path.write_text(text)
    return path


def package(tmp_path: Path, modules: dict[str, str]) -> Path:
    top = tmp_path / "zoo"
    top.mkdir()
    (top / "__init__.py").write_text("")
    (top / "modeling_zoo.py").write_text(HOOK)
    for name, text in modules.items():
        (top / name).write_text(textwrap.dedent(text))
    only_generate_calls_the_hook.cache_clear()
    return top / "modeling_zoo.py"


PASSING_RANGES = [("4.45-4.48",), ("4.43-4.44", "4.45-4.48", "4.49-4.53"), ("4.39-4.40",), ("4.57", "5.0-5.3")]


@pytest.mark.parametrize("names", PASSING_RANGES)
def test_generate_always_passes_cache_position_so_the_none_branches_are_dead(
    tmp_path: Path, names: tuple[str, ...]
) -> None:
    assert found(HOOK, lone_module(tmp_path), *names) == []


@pytest.mark.parametrize(
    "names",
    [(), ("4.41",), ("4.42",), ("5.4",), ("5.5-5.12",), ("4.45-4.48", "5.13-5.24"), ("4.36-4.37", "4.45-4.48")],
    ids=["every-release", "4.41-None-without-cache", "4.42", "5.4", "5.5-5.12", "a-5.x-release", "a-4.36-release"],
)
def test_twin_a_release_that_passes_none_reports_the_branch(tmp_path: Path, names: tuple[str, ...]) -> None:
    assert found(HOOK, lone_module(tmp_path), *names) == HOOK_FINDINGS


def test_the_hook_of_a_package_nobody_else_calls_is_silent(tmp_path: Path) -> None:
    other = """\
        from zoo.modeling_zoo import ZooForCausalLM


        def load(path):
            return ZooForCausalLM.from_pretrained(path)
    """
    assert found(HOOK, package(tmp_path, {"loading.py": other}), "4.45-4.48") == []


OVERRIDE = """\
    from zoo.modeling_zoo import ZooForCausalLM


    class Tuned(ZooForCausalLM):
        def prepare_inputs_for_generation(self, input_ids, cache_position=None, **kwargs):
            {call}
"""


def test_an_override_handing_its_own_cache_position_on_keeps_the_fact(tmp_path: Path) -> None:
    call = "return super().prepare_inputs_for_generation(input_ids, cache_position=cache_position, **kwargs)"
    path = package(tmp_path, {"tuned.py": OVERRIDE.format(call=call)})
    assert found(HOOK, path, "4.45-4.48") == []


OTHER_CALLERS = {
    "own-generation-loop": """\
        def decode(model, input_ids, cache):
            inputs = model.prepare_inputs_for_generation(input_ids, past_key_values=cache)
            return model(**inputs)
    """,
    "kwargs-of-own-loop": """\
        def decode(model, input_ids, **model_kwargs):
            return model(**model.prepare_inputs_for_generation(input_ids, **model_kwargs))
    """,
    "bound-method-alias": """\
        def decode(model, input_ids, cache):
            prepare = model.prepare_inputs_for_generation
            return prepare(input_ids, past_key_values=cache)
    """,
    "getattr-by-name": """\
        def decode(model, input_ids, cache):
            return getattr(model, "prepare_inputs_for_generation")(input_ids, past_key_values=cache)
    """,
    "override-passing-none": OVERRIDE.format(
        call="return super().prepare_inputs_for_generation(input_ids, cache_position=None, **kwargs)"
    ),
    "override-rebinding-it": OVERRIDE.format(
        call="cache_position = None\n            return super().prepare_inputs_for_generation("
        "input_ids, cache_position=cache_position, **kwargs)"
    ),
    "override-passing-it-by-position": OVERRIDE.format(
        call="return super().prepare_inputs_for_generation(input_ids, None, None, cache_position)"
    ),
    "a-whisper-model": """\
        from transformers import WhisperForConditionalGeneration


        class Listener(WhisperForConditionalGeneration):
            pass
    """,
}


@pytest.mark.parametrize("modules", OTHER_CALLERS.values(), ids=OTHER_CALLERS.keys())
def test_twin_another_caller_in_the_package_reports_the_branch(tmp_path: Path, modules: str) -> None:
    assert found(HOOK, package(tmp_path, {"loop.py": modules}), "4.45-4.48") == HOOK_FINDINGS


def test_twin_a_caller_in_the_same_module_reports_it(tmp_path: Path) -> None:
    text = HOOK + "\n\ndef step(model, ids, cache):\n    return model.prepare_inputs_for_generation(ids, cache)\n"
    assert found(text, lone_module(tmp_path, text), "4.45-4.48") == HOOK_FINDINGS


MODULE_LEVEL_HOOK = textwrap.dedent(
    """\
    from transformers import Cache


    def prepare_inputs_for_generation(input_ids, past_key_values=None, cache_position=None):
        past_length = cache_position[0] if cache_position is not None else past_key_values.get_seq_length()
        return input_ids[:, past_length:]
    """
)


@pytest.mark.parametrize(
    "text",
    [HOOK.replace("def prepare_inputs_for_generation(", "def prepare_inputs("), MODULE_LEVEL_HOOK],
    ids=["another-method-name", "a-module-level-function"],
)
def test_twin_only_the_hook_method_is_decided(tmp_path: Path, text: str) -> None:
    assert found(text, lone_module(tmp_path, text), "4.45-4.48")


def test_twin_the_parameter_rebound_to_none_is_asked_again(tmp_path: Path) -> None:
    text = HOOK.replace("        past_length = 0\n", "        past_length = 0\n        cache_position = None\n")
    assert found(text, lone_module(tmp_path, text), "4.45-4.48") == [(line + 1, code) for line, code in HOOK_FINDINGS]


def test_the_checker_and_the_plugin_read_the_pin(tmp_path: Path) -> None:
    """`transformers==4.46.3` in the project: both adapters leave the hook alone; unpinned, both report."""
    (tmp_path / "modeling_zoo.py").write_text(HOOK)
    outputs = {}
    for pin in ("==4.46.3", ">=4.40"):
        (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "p"\ndependencies = ["transformers{pin}"]\n')
        commands = {
            "checker": ["-m", "lint_rules", "modeling_zoo.py"],
            "flake8": ["-m", "flake8", "--select=SLG", "modeling_zoo.py"],
        }
        for name, args in commands.items():
            result = subprocess.run(
                [sys.executable, *args],
                capture_output=True,
                text=True,
                cwd=tmp_path,
                env=cli_environment(),
                check=False,
            )
            outputs[pin, name] = sorted(
                line.split(": ")[1].split()[0] for line in result.stdout.splitlines() if ": SLG" in line
            )
    assert outputs["==4.46.3", "checker"] == outputs["==4.46.3", "flake8"] == []
    assert outputs[">=4.40", "checker"] == outputs[">=4.40", "flake8"] == sorted(code for _, code in HOOK_FINDINGS)

"""`generate()` hands `prepare_inputs_for_generation` a `cache_position` (`engine/facts/generation_hook.py`,
issue 26's release fact): under a range where every release does (4.46-5.3), the hook's
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
from lint_rules.engine.facts import package as package_module
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


PIN = "4.46-4.48"
"""optimum-tpu's `==4.46.3`, parler-tts's `==4.46.1`, xtuner's `==4.48.0`."""


def found(text: str, path: Path, *names: str) -> list[tuple[int, str]]:
    releases = releases_named(*names) if names else frozenset(RELEASES)
    return [(finding.line, finding.code) for finding in analyze_source(text, str(path), releases=releases)]


def package(tmp_path: Path, modules: dict[str, str], hook: str = HOOK) -> Path:
    """A package `zoo` with the hook module and `modules`; the path of the hook module."""
    top = tmp_path / "zoo"
    top.mkdir()
    (top / "__init__.py").write_text("")
    (top / "modeling_zoo.py").write_text(hook)
    for name, text in modules.items():
        (top / name).write_text(textwrap.dedent(text))
    only_generate_calls_the_hook.cache_clear()
    return top / "modeling_zoo.py"


def hook_findings(hook: str, tmp_path: Path, modules: dict[str, str] | None = None) -> list[tuple[int, str]]:
    return found(hook, package(tmp_path, modules or {}, hook), PIN)


PASSING_RANGES = [(PIN,), (PIN, "4.49-4.53"), ("4.54-4.55", "4.56"), ("4.57", "5.0-5.3")]


@pytest.mark.parametrize("names", PASSING_RANGES)
def test_transformers_always_passes_cache_position_so_the_none_branches_are_dead(
    tmp_path: Path, names: tuple[str, ...]
) -> None:
    assert found(HOOK, package(tmp_path, {}), *names) == []


@pytest.mark.parametrize(
    "names",
    [
        (),
        ("4.39-4.41",),
        ("4.42-4.44",),
        ("4.45",),
        ("5.4",),
        ("5.5-5.10",),
        ("5.11-5.12",),
        (PIN, "5.13-5.23"),
        ("4.36-4.37", PIN),
    ],
    ids=[
        "every-release",
        "4.41-None-without-use_cache",
        "4.42-and-encoder-decoder-wrappers",
        "4.45-encoder-decoder-wrappers",
        "5.4",
        "5.5-5.10",
        "5.11-5.12",
        "a-later-5.x-release",
        "a-4.36-release",
    ],
)
def test_twin_a_release_that_passes_none_reports_the_branch(tmp_path: Path, names: tuple[str, ...]) -> None:
    assert found(HOOK, package(tmp_path, {}), *names) == HOOK_FINDINGS


def test_the_hook_of_a_package_nobody_else_calls_is_silent(tmp_path: Path) -> None:
    other = """\
        from zoo.modeling_zoo import ZooForCausalLM


        def load(path):
            return ZooForCausalLM.from_pretrained(path)
    """
    assert hook_findings(HOOK, tmp_path, {"loading.py": other}) == []


OVERRIDE = """\
    from zoo.modeling_zoo import ZooForCausalLM


    class Tuned(ZooForCausalLM):
        def prepare_inputs_for_generation(self, input_ids, cache_position=None, **kwargs):
            {call}
"""


def test_an_override_handing_its_own_cache_position_on_keeps_the_fact(tmp_path: Path) -> None:
    call = "return super().prepare_inputs_for_generation(input_ids, cache_position=cache_position, **kwargs)"
    assert hook_findings(HOOK, tmp_path, {"tuned.py": OVERRIDE.format(call=call)}) == []


def override(call: str) -> str:
    return OVERRIDE.format(call=textwrap.indent(textwrap.dedent(call), " " * 12).lstrip())


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
    "a-helper-of-that-name-imported-as-another": """\
        from zoo.helpers import prepare_inputs_for_generation as prepare


        def decode(model, input_ids, cache):
            return prepare(model, input_ids, cache)
    """,
    "override-passing-none": override(
        "return super().prepare_inputs_for_generation(input_ids, cache_position=None, **kwargs)"
    ),
    "override-rebinding-it": override(
        """\
        cache_position = None
        return super().prepare_inputs_for_generation(input_ids, cache_position=cache_position, **kwargs)
        """
    ),
    "override-passing-it-by-position": override(
        "return super().prepare_inputs_for_generation(input_ids, None, None, cache_position)"
    ),
    "override-shadowing-it-in-a-nested-function": override(
        """\
        def inner(cache_position=None):
            return ZooForCausalLM.prepare_inputs_for_generation(self, input_ids, cache_position=cache_position)
        return inner()
        """
    ),
    "override-shadowing-it-in-a-lambda": override(
        """\
        inner = lambda cache_position=None: super(Tuned, self).prepare_inputs_for_generation(
            input_ids, cache_position=cache_position
        )
        return inner()
        """
    ),
    "override-decorated": OVERRIDE.replace(
        "    def prepare_inputs_for_generation(", "    @drop_cache_position\n        def prepare_inputs_for_generation("
    ).format(call="return super().prepare_inputs_for_generation(input_ids, cache_position=cache_position, **kwargs)"),
    "a-whisper-model": """\
        from transformers import WhisperForConditionalGeneration


        class Listener(WhisperForConditionalGeneration):
            pass
    """,
    "a-whisper-model-imported-as-another-name": """\
        from transformers import WhisperForConditionalGeneration as Speech
        from zoo.modeling_zoo import ZooForCausalLM


        class Listener(ZooForCausalLM, Speech):
            pass
    """,
    "a-whisper-module-imported": """\
        from transformers.models.whisper import modeling_whisper


        class Listener(modeling_whisper.WhisperPreTrainedModel):
            pass
    """,
    "the-whisper-generation-mixin": """\
        from transformers.models.whisper.generation_whisper import WhisperGenerationMixin
        from zoo.modeling_zoo import ZooForCausalLM


        class Listener(WhisperGenerationMixin, ZooForCausalLM):
            pass
    """,
}


@pytest.mark.parametrize("modules", OTHER_CALLERS.values(), ids=OTHER_CALLERS.keys())
def test_twin_another_caller_in_the_package_reports_the_branch(tmp_path: Path, modules: str) -> None:
    assert hook_findings(HOOK, tmp_path, {"loop.py": modules}) == HOOK_FINDINGS


def test_a_whisper_class_without_whisper_generation_is_silent(tmp_path: Path) -> None:
    """Only `WhisperGenerationMixin.generate` (and so `WhisperForConditionalGeneration`) runs the
    no-speech detector, which calls the hook without `cache_position` (`generation_whisper.py`, every
    release 4.38-5.25); adapters' `WhisperAdapterModel(WhisperPreTrainedModel, GenerationMixin)`
    never meets it (the second fresh-packages round, 2026-12-05)."""
    other = """\
        from transformers import GenerationMixin, WhisperPreTrainedModel


        class WhisperAdapterModel(WhisperPreTrainedModel, GenerationMixin):
            pass
    """
    assert hook_findings(HOOK, tmp_path, {"whisper_adapter.py": other}) == []


def test_twin_a_caller_in_the_same_module_reports_it(tmp_path: Path) -> None:
    text = HOOK + "\n\ndef step(model, ids, cache):\n    return model.prepare_inputs_for_generation(ids, cache)\n"
    assert hook_findings(text, tmp_path) == HOOK_FINDINGS


def test_twin_a_module_outside_a_package_is_not_decided(tmp_path: Path) -> None:
    """Any script beside it may import the model and call its hook."""
    (tmp_path / "modeling_zoo.py").write_text(HOOK)
    assert found(HOOK, tmp_path / "modeling_zoo.py", PIN) == HOOK_FINDINGS


def test_twin_a_package_too_large_to_scan_is_not_decided(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(package_module, "MAX_PACKAGE_FILES", 2)
    assert hook_findings(HOOK, tmp_path, {"other.py": "X = 1\n"}) == HOOK_FINDINGS


MODULE_LEVEL_HOOK = textwrap.dedent(
    """\
    from transformers import Cache


    def prepare_inputs_for_generation(input_ids, past_key_values=None, cache_position=None):
        past_length = cache_position[0] if cache_position is not None else past_key_values.get_seq_length()
        return input_ids[:, past_length:]
    """
)
HOOK_SHAPES = {
    "another-method-name": HOOK.replace("def prepare_inputs_for_generation(", "def prepare_inputs("),
    "a-module-level-function": MODULE_LEVEL_HOOK,
    "decorated": HOOK.replace(
        "    def prepare_inputs_for_generation(", "    @drop_cache_position\n    def prepare_inputs_for_generation("
    ),
    "positional-only": HOOK.replace("cache_position=None, **kwargs", "cache_position=None, /, **kwargs"),
}


@pytest.mark.parametrize("hook", HOOK_SHAPES.values(), ids=HOOK_SHAPES.keys())
def test_twin_only_an_undecorated_hook_method_taking_it_by_keyword_is_decided(tmp_path: Path, hook: str) -> None:
    """A positional-only `cache_position` never receives `generate()`'s keyword: it stays None."""
    assert hook_findings(hook, tmp_path)


def test_twin_the_parameter_rebound_to_none_is_asked_again(tmp_path: Path) -> None:
    text = HOOK.replace("        past_length = 0\n", "        past_length = 0\n        cache_position = None\n")
    assert hook_findings(text, tmp_path) == [(line + 1, code) for line, code in HOOK_FINDINGS]


def test_the_checker_and_the_plugin_read_the_pin(tmp_path: Path) -> None:
    """`transformers==4.46.3` in the project: both adapters leave the hook alone; unpinned, both report."""
    hook_path = package(tmp_path, {})
    outputs = {}
    for pin in ("==4.46.3", ">=4.40"):
        (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "p"\ndependencies = ["transformers{pin}"]\n')
        commands = {
            "checker": ["-m", "lint_rules", str(hook_path)],
            "flake8": ["-m", "flake8", "--select=SLG", str(hook_path)],
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

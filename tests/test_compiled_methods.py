"""Compiled reach through methods across modules (issue 25, pattern 7; `lint_rules/engine/facts/package_methods.py`):
a method, class method or static method of a class of one module runs compiled when a `forward` of
another module of the package calls it (`Cache.from_legacy_cache(...)` in every model's `forward`,
a `_update_causal_mask` inherited from a base of another module), so its `.item()` guard is unsafe.
The same methods called only from host code keep their safe guard.

The package is reduced from transformers 4.4x-shaped code: a mask mixin and a mask converter in
`masking_utils.py`, a cache with a `from_legacy_cache` class method in `cache_utils.py`, a Llama-like
model in `models/llama/modeling_llama.py` and a generation loop in `generation.py`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixers.fix_files import fix_text
from lint_rules.checking import check_path
from lint_rules.findings import Finding, FixSafety
from lint_rules.settings import Settings
from tests import package_files

MASKING_UTILS = textwrap.dedent(
    """\
    import torch


    class AttentionMaskConverter:
        @staticmethod
        def _unmask_unattended(expanded_mask, past_key_values):
            past_seen_tokens = past_key_values.get_seq_length()
            return expanded_mask[:, :, past_seen_tokens:]

        @classmethod
        def _ignore_causal_mask_sdpa(cls, attention_mask, inputs_embeds, past_key_values):
            past_seen_tokens = past_key_values.get_seq_length()
            key_value_length = inputs_embeds.shape[1] + past_seen_tokens
            if attention_mask is not None and attention_mask.shape[-1] != key_value_length:
                return False
            return True

        def to_4d(self, attention_mask, past_key_values):
            past_seen_tokens = past_key_values.get_seq_length()
            return attention_mask[:, None, None, past_seen_tokens:]


    class MaskMixin:
        def _update_causal_mask(self, attention_mask, inputs_embeds, past_key_values):
            past_seen_tokens = past_key_values.get_seq_length()
            target_length = past_seen_tokens + inputs_embeds.shape[1] + 1
            return torch.full((inputs_embeds.shape[1], target_length), float("-inf"))

        def _prepare_beam_mask(self, attention_mask, past_key_values):
            past_seen_tokens = past_key_values.get_seq_length()
            return attention_mask[:, past_seen_tokens:]
"""
)
CACHE_UTILS = textwrap.dedent(
    """\
    class Cache:
        def __init__(self):
            self.layers = []

        @classmethod
        def from_legacy_cache(cls, past_key_values):
            cache = cls()
            if past_key_values is not None:
                cache.positions = list(range(past_key_values.get_seq_length()))
            return cache
"""
)
MODELING_LLAMA = textwrap.dedent(
    """\
    from torch import nn

    from ...cache_utils import Cache
    from ...masking_utils import AttentionMaskConverter, MaskMixin


    class LlamaPreTrainedModel(nn.Module, MaskMixin):
        pass


    class LlamaModel(LlamaPreTrainedModel):
        def forward(self, inputs_embeds, attention_mask=None, past_key_values=None):
            past_key_values = Cache.from_legacy_cache(past_key_values)
            if AttentionMaskConverter._ignore_causal_mask_sdpa(attention_mask, inputs_embeds, past_key_values):
                return None
            return self._update_causal_mask(attention_mask, inputs_embeds, past_key_values)
"""
)
GENERATION = textwrap.dedent(
    """\
    from .masking_utils import MaskMixin


    class GenerationMixin(MaskMixin):
        def _reorder_for_beams(self, attention_mask, past_key_values):
            return self._prepare_beam_mask(attention_mask, past_key_values)
"""
)

COMPILED_METHODS = ("_ignore_causal_mask_sdpa", "_update_causal_mask")


def write_package(root: Path, modules: dict[str, str]) -> Path:
    """`tiny/` with `tiny/models/llama/`, each folder a package; `modules` by dotted path under `tiny`."""
    return package_files.write_package(root, modules, "tiny", folders=["models.llama"])


def llama_package(root: Path, modeling: str = MODELING_LLAMA) -> Path:
    return write_package(
        root,
        {
            "masking_utils": MASKING_UTILS,
            "cache_utils": CACHE_UTILS,
            "generation": GENERATION,
            "models.llama.modeling_llama": modeling,
        },
    )


def findings_of(path: Path, function: str) -> list[Finding]:
    found = [finding for finding in check_path(str(path), Settings()).findings if finding.function.endswith(function)]
    assert found, f"no finding in {function}"
    return found


def assert_compiled_from_forward(findings: list[Finding]) -> None:
    for finding in findings:
        assert "called from LlamaModel.forward in modeling_llama.py (line " in finding.compiled_region
        assert finding.compiled_region.endswith("which is forward method")
        assert finding.fix.safety is not FixSafety.SAFE


@pytest.mark.parametrize(
    "method",
    [
        "_ignore_causal_mask_sdpa",  # a class method called through its class, imported relatively
        "_update_causal_mask",  # inherited by the model from a base imported from masking_utils
    ],
)
def test_a_method_called_from_a_forward_in_another_module_is_compiled(tmp_path: Path, method: str) -> None:
    package = llama_package(tmp_path)
    assert_compiled_from_forward(findings_of(package / "masking_utils.py", method))


def test_a_class_method_of_a_cache_called_from_every_forward_is_compiled(tmp_path: Path) -> None:
    package = llama_package(tmp_path)
    assert_compiled_from_forward(findings_of(package / "cache_utils.py", "from_legacy_cache"))


def test_methods_only_host_code_or_nothing_calls_stay_host_code(tmp_path: Path) -> None:
    """Must stay safe: `_prepare_beam_mask` is called only by the generation mixin (host code),
    `_unmask_unattended` and `to_4d` by nothing."""
    package = llama_package(tmp_path)
    for method in ("_prepare_beam_mask", "_unmask_unattended", "to_4d"):
        for finding in findings_of(package / "masking_utils.py", method):
            assert not finding.compiled_region
            assert finding.fix.safety is FixSafety.SAFE


def test_the_fixer_leaves_the_compiled_methods_alone_unless_told(tmp_path: Path) -> None:
    package = llama_package(tmp_path)
    masking = package / "masking_utils.py"
    text = masking.read_text()
    fixed = fix_text(str(masking), text, Settings())
    for method in COMPILED_METHODS:
        body = method_text(fixed, method)
        assert ".item()" not in body and "isinstance" not in body
    assert ".item()" in method_text(fixed, "_prepare_beam_mask")  # the host twin is guarded
    unsafe = fix_text(str(masking), text, Settings(unsafe_fixes=True))
    for method in COMPILED_METHODS:
        assert "past_seen_tokens = int(past_seen_tokens.item())" in method_text(unsafe, method)


def method_text(module: str, method: str) -> str:
    """The lines of `def method` up to the next `def` or `class`."""
    start = module.index(f"def {method}(")
    ends = [index for index in (module.find("\n    def ", start + 1), module.find("\nclass ", start + 1)) if index > 0]
    return module[start : min(ends, default=len(module))]


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("from tiny.masking_utils import AttentionMaskConverter", "AttentionMaskConverter._ignore_causal_mask_sdpa"),
        ("from tiny import masking_utils", "masking_utils.AttentionMaskConverter._ignore_causal_mask_sdpa"),
        ("import tiny.masking_utils as mu", "mu.AttentionMaskConverter._ignore_causal_mask_sdpa"),
    ],
)
def test_a_method_called_through_its_class_imported_any_way_is_compiled(
    tmp_path: Path, imports: str, call: str
) -> None:
    modeling = MODELING_LLAMA.replace(
        "from ...masking_utils import AttentionMaskConverter, MaskMixin",
        f"{imports}\nfrom ...masking_utils import MaskMixin",
    ).replace("AttentionMaskConverter._ignore_causal_mask_sdpa(", f"{call}(")
    package = llama_package(tmp_path, modeling)
    assert_compiled_from_forward(findings_of(package / "masking_utils.py", "_ignore_causal_mask_sdpa"))


@pytest.mark.parametrize(
    "body",
    [
        # a receiver the function constructs, and one the class's __init__ builds
        "converter = AttentionMaskConverter()\n        return converter.to_4d(attention_mask, past_key_values)",
        "return self.converter.to_4d(attention_mask, past_key_values)",
    ],
)
def test_a_method_called_on_a_receiver_of_a_known_class_is_compiled(tmp_path: Path, body: str) -> None:
    modeling = MODELING_LLAMA.replace(
        "        return self._update_causal_mask(attention_mask, inputs_embeds, past_key_values)\n",
        f"        {body}\n",
    ).replace(
        "class LlamaModel(LlamaPreTrainedModel):\n",
        "class LlamaModel(LlamaPreTrainedModel):\n    def __init__(self):\n        self.converter = AttentionMaskConverter()\n\n",
    )
    package = llama_package(tmp_path, modeling)
    assert_compiled_from_forward(findings_of(package / "masking_utils.py", "to_4d"))


MODELING_WITH_RECEIVERS = textwrap.dedent(
    """\
    import torch
    from torch import nn

    from ...masking_utils import AttentionMaskConverter, MaskMixin


    class LlamaForCausalLM(nn.Module, MaskMixin):
        def forward(self, attention_mask, converter: AttentionMaskConverter, past_key_values):
            return converter.to_4d(attention_mask, past_key_values)

        @torch.compile
        def _prepare_beam_mask(self, attention_mask, past_key_values):
            return super()._prepare_beam_mask(attention_mask, past_key_values)
"""
)


def test_an_annotated_receiver_and_super_are_followed(tmp_path: Path) -> None:
    """`converter: AttentionMaskConverter` in a `forward`; `super()._prepare_beam_mask(...)` in a
    `@torch.compile` override of the mixin's method."""
    package = llama_package(tmp_path, MODELING_WITH_RECEIVERS)
    for finding in findings_of(package / "masking_utils.py", "to_4d"):
        assert "called from LlamaForCausalLM.forward in modeling_llama.py" in finding.compiled_region
    for finding in findings_of(package / "masking_utils.py", "_prepare_beam_mask"):
        assert "LlamaForCausalLM._prepare_beam_mask in modeling_llama.py" in finding.compiled_region
        assert finding.compiled_region.endswith("which is @torch.compile")


@pytest.mark.parametrize(
    ("modeling", "why"),
    [
        (
            MODELING_LLAMA.replace("from ...masking_utils import AttentionMaskConverter, MaskMixin", "")
            .replace("(nn.Module, MaskMixin)", "(nn.Module)")
            .replace("AttentionMaskConverter._ignore_causal_mask_sdpa(", "self._ignore_causal_mask_sdpa(")
            + "\n        def _ignore_causal_mask_sdpa(self, *args):\n            return False\n"
            + "\n        def _update_causal_mask(self, *args):\n            return None\n",
            "the model's own methods of those names, its base not from masking_utils",
        ),
        (
            MODELING_LLAMA.replace(
                "from ...masking_utils import AttentionMaskConverter, MaskMixin",
                "from ...other import AttentionMaskConverter, MaskMixin",
            ),
            "classes of the same names from another module",
        ),
        (
            MODELING_LLAMA.replace("def forward(", "def prepare_inputs_for_generation("),
            "the calls are in a generation method (host code)",
        ),
        (
            MODELING_LLAMA.replace(
                "class LlamaModel(LlamaPreTrainedModel):\n",
                "class LlamaModel(LlamaPreTrainedModel):\n"
                "    def _update_causal_mask(self, *args):\n        return None\n\n",
            ).replace("AttentionMaskConverter._ignore_causal_mask_sdpa(", "helper._ignore_causal_mask_sdpa("),
            "the model overrides `_update_causal_mask`, and `helper` is of an unknown class",
        ),
    ],
)
def test_calls_that_cannot_run_the_method_leave_it_host_code(tmp_path: Path, modeling: str, why: str) -> None:
    """Must stay safe, as with no compiled caller at all."""
    package = llama_package(tmp_path, modeling)
    (package / "other.py").write_text(
        "class AttentionMaskConverter:\n    pass\n\n\nclass MaskMixin:\n    pass\n",
    )
    for method in COMPILED_METHODS:
        for finding in findings_of(package / "masking_utils.py", method):
            assert not finding.compiled_region, why
            assert finding.fix.safety is FixSafety.SAFE, why


OVERRIDING_MODEL = textwrap.dedent(
    """\
    import torch
    from torch import nn

    from ...masking_utils import MaskMixin


    class LlamaForCausalLM(nn.Module, MaskMixin):
        def _prepare_beam_mask(self, attention_mask, past_key_values):
            return super()._prepare_beam_mask(attention_mask, past_key_values)

        def forward(self, attention_mask, past_key_values):
            return self.lm_head(attention_mask)
    """
)


@pytest.mark.parametrize(
    ("modeling", "region"),
    [
        (
            OVERRIDING_MODEL.replace(
                "return self.lm_head(attention_mask)",
                "return super()._prepare_beam_mask(\n            attention_mask, past_key_values\n        )",
            ),
            "called from LlamaForCausalLM.forward in modeling_llama.py (line 12), which is forward method",
        ),
        (
            OVERRIDING_MODEL.replace(
                "    def _prepare_beam_mask(",
                "    @torch.compile(\n        fullgraph=True,\n    )\n    def _prepare_beam_mask(",
            ),
            "called from LlamaForCausalLM._prepare_beam_mask in modeling_llama.py (line 12), which is @torch.compile",
        ),
    ],
    ids=["forward-calls-super-besides-an-override", "override-under-a-multi-line-decorator"],
)
def test_a_module_whose_overrides_extend_the_method_is_still_searched_where_it_may_compile(
    tmp_path: Path, modeling: str, region: str
) -> None:
    """A module that names the method only in undecorated overrides extending it is skipped before
    its parse; these two must not be."""
    package = llama_package(tmp_path, modeling)
    assert [finding.compiled_region for finding in findings_of(package / "masking_utils.py", "_prepare_beam_mask")] == [
        region
    ]


def test_an_override_that_only_extends_the_method_leaves_it_host_code(tmp_path: Path) -> None:
    """Must stay safe: the override is named nowhere else, so no compiled region runs it."""
    package = llama_package(tmp_path, OVERRIDING_MODEL)
    for finding in findings_of(package / "masking_utils.py", "_prepare_beam_mask"):
        assert not finding.compiled_region
        assert finding.fix.safety is FixSafety.SAFE

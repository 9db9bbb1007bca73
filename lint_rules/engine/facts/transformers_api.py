"""transformers functions that use a length parameter as a Python int: a length passed to one of them
is reported at the argument, as a call of a function of the package would be (transformers' own
modules are never read, so this is a table, like the cache table in `caches.py`).

Each entry names the release it was read from; tests/test_transformers_api.py checks every entry
against the real function of each release in `CHECKED_RELEASES` that has it: the same parameters in
the same order, and the use on the line the entry names.
"""

from __future__ import annotations

from typing import NamedTuple

CHECKED_RELEASES = ("5.5.3", "5.24.0")


class IntParameter(NamedTuple):
    module: str
    function: str
    """`f`, or `Class.method` for a static method called through its class."""
    parameters: tuple[str, ...]
    """Every parameter, in order (without `self`/`cls`): how positional arguments bind."""
    parameter: str
    """The one used as an int."""
    code: str
    use: str
    """What the function does with it, as a rule's detail says it (`int arithmetic `a + b``)."""
    line: int
    releases: tuple[str, ...]
    """The checked releases that have the function (transformers 5.24.0 no longer has this module)."""

    @property
    def where(self) -> str:
        path = self.module.replace(".", "/")
        return f"{self.line} of {path}.py, transformers {self.releases[0]}"


MASK_UTILS = "transformers.modeling_attn_mask_utils"
PREPARE_PARAMETERS = ("attention_mask", "input_shape", "inputs_embeds", "past_key_values_length", "sliding_window")

INT_PARAMETERS = (
    IntParameter(
        MASK_UTILS,
        "_prepare_4d_causal_attention_mask",
        PREPARE_PARAMETERS,
        "past_key_values_length",
        "SLG001",
        "int arithmetic `input_shape[-1] + past_key_values_length`",
        349,
        ("5.5.3",),
    ),
    IntParameter(
        MASK_UTILS,
        "_prepare_4d_causal_attention_mask_for_sdpa",
        PREPARE_PARAMETERS,
        "past_key_values_length",
        "SLG001",
        "int arithmetic `input_shape[-1] + past_key_values_length`",
        393,
        ("5.5.3",),
    ),
    IntParameter(
        MASK_UTILS,
        "AttentionMaskConverter._ignore_causal_mask_sdpa",
        ("attention_mask", "inputs_embeds", "past_key_values_length", "sliding_window", "is_training"),
        "past_key_values_length",
        "SLG001",
        "int arithmetic `query_length + past_key_values_length`",
        284,
        ("5.5.3",),
    ),
    IntParameter(
        MASK_UTILS,
        "AttentionMaskConverter._make_causal_mask",
        ("input_ids_shape", "dtype", "device", "past_key_values_length", "sliding_window"),
        "past_key_values_length",
        "SLG004",
        "Python truth test on `past_key_values_length > 0`",
        181,
        ("5.5.3",),
    ),
)

_BY_FUNCTION: dict[tuple[str, str], list[IntParameter]] = {}
for _entry in INT_PARAMETERS:
    _BY_FUNCTION.setdefault((_entry.module, _entry.function), []).append(_entry)


def int_parameters_of(module: str, function: str) -> list[IntParameter]:
    """The table's entries for `function` of `module` (imported from there)."""
    return _BY_FUNCTION.get((module, function), [])

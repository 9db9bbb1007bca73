"""Which transformers cache classes return an int from `get_seq_length()`, and which may return a tensor.

One table, checked against the real classes of every release listed in `CHECKED_RELEASES` by
tests/test_cache_table.py (it builds each class, runs one `update`, and looks at the type). A class
that is in neither set, such as the abstract `Cache`, is treated as possibly returning a tensor;
`EncoderDecoderCache` has the length of the cache it wraps (`WRAPPER_CLASSES`).
"""

from __future__ import annotations

CHECKED_RELEASES = ("5.5.3", "5.24.0")

INT_LENGTH = "int"
TENSOR_LENGTH = "tensor"
"""A class's *length kind*: what its `get_seq_length()` returns ("" when unknown)."""

INT_LENGTH_CLASSES = frozenset({"DynamicCache", "DynamicLayer", "DynamicSlidingWindowLayer"})
"""Their length is computed from the stored keys' shape or kept as a Python int counter."""

TENSOR_LENGTH_CLASSES = frozenset({"StaticCache", "StaticLayer", "SlidingWindowCache"})
"""They keep `cumulative_length` as a tensor (shape (1,) in 5.5-5.12, 0-dim from 5.13) and return it."""

WRAPPER_CLASSES = frozenset({"EncoderDecoderCache"})
"""Their length is that of the cache given as the first of two arguments (`EncoderDecoderCache(
DynamicCache(), DynamicCache())` is an int); from one argument (legacy data) they build a
`DynamicCache`."""

REMOVED_CACHE_ATTRIBUTES = frozenset({"seen_tokens"})
"""What no 5.x cache has (reading it raises `AttributeError`), and what the 4.39-4.48 caches without a
counter of their own (`StaticCache`, `HybridCache`) give as None, which the code of that era
(`past_length = c.seen_tokens` ... `past_length < n`) fails on before any use of the length."""

CACHE_BASE_CLASSES = (
    frozenset(
        {
            "Cache", "CacheLayerMixin", "StaticSlidingWindowLayer", "QuantizedLayer", "QuantizedCache",
            "EncoderDecoderCache", "HybridCache", "HybridChunkedCache", "OffloadedCache", "OffloadedStaticCache",
        }
    )
    | INT_LENGTH_CLASSES
    | TENSOR_LENGTH_CLASSES
)  # fmt: skip
"""Classes whose subclasses are caches: model code calls their protocol methods from `forward`."""

CACHE_METHODS_CALLED_FROM_FORWARD = frozenset(
    {"update", "get_seq_length", "get_query_offset", "get_mask_sizes", "lazy_initialization", "get_max_cache_shape"}
)
"""Cache methods that attention and mask code run inside a model's `forward` (so inside its graph)."""

GENERATION_HOOKS = frozenset(
    {
        "prepare_inputs_for_generation",
        "_update_model_kwargs_for_generation",
        "_reorder_cache",
        "_get_initial_cache_position",
        "_prepare_position_ids_for_generation",
        "generate",
    }
)
"""Methods of transformers' `GenerationMixin` that packages replace on a model and that the generation
loop calls on the host, between forwards."""

TRANSFORMERS_MODULES = ("transformers", "transformers.cache_utils")
"""Where the table's names mean transformers' own classes."""


def length_kind_of_transformers_class(name: str) -> str:
    """ "int" or "tensor" for a transformers cache class in the table, "" for any other name."""
    if name in INT_LENGTH_CLASSES:
        return INT_LENGTH
    if name in TENSOR_LENGTH_CLASSES:
        return TENSOR_LENGTH
    return ""

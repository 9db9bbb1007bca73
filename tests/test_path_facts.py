"""Path facts (issue 15 item 3): what a path through a function proves about a length's origin.
Each case is reduced from real code (the package is named); the silent ones say why they must
stay silent, the reported ones why they must not."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from lint_rules.engine.facts.releases import ALL_RELEASES, Releases
from tests.release_rows import DYNAMIC_CACHE_COUNTS_INT


def codes(code: str, releases: Releases = ALL_RELEASES) -> list[tuple[int, str]]:
    text = textwrap.dedent(code).lstrip("\n")
    return [(finding.line, finding.code) for finding in analyze_source(text, "m.py", releases=releases)]


SEEN_TOKENS_READ = """
from transformers.cache_utils import Cache
{own_class}

def prepare_inputs_for_generation(input_ids, past_key_values=None, attention_mask=None):
    if isinstance(past_key_values, Cache):
        cache_length = past_key_values.get_seq_length()
        past_length = past_key_values.seen_tokens
        if cache_length < past_length and attention_mask is not None:
            attention_mask = attention_mask[:, -(cache_length + input_ids.shape[1]) :]
    return input_ids, attention_mask
"""

SILENT = [
    pytest.param(
        """
        import torch
        from transformers.utils import is_torchdynamo_compiling

        class Model(nn.Module):
            def forward(self, input_ids, cache):
                stage = not is_torchdynamo_compiling() and (cache.get_seq_length() == 0)
                if stage or input_ids is None:
                    input_ids = input_ids[:, -1:]
                past = cache.get_seq_length() if not torch.compiler.is_compiling() else 0
                return input_ids[:, past:]
        """,
        # issue 25: while tracing, the gate makes `stage` False and `past` 0; eagerly, the sync is the
        # gate author's choice (a guard in a forward removes none)
        id="length-asked-under-the-gate-of-its-own-expression-in-a-forward",
    ),
    pytest.param(
        """
        def update_mask(mask, x, cache):
            past = cache.get_seq_length() if cache is not None else 0
            if cache is None:
                return mask[:, : past + x.shape[1]]
            return mask
        """,
        id="ternary-origin-under-is-none",  # the call ran only where cache is not None: past is 0 here
    ),
    pytest.param(
        """
        def update_mask(mask, x, cache):
            past = cache.get_seq_length() if cache is not None else 0
            if cache is not None:
                return mask
            return mask[:, : past + x.shape[1]]
        """,
        id="ternary-origin-after-early-return",  # the rest runs only where cache is None
    ),
    pytest.param(
        """
        def positions(x, cache):
            if cache is not None:
                past = cache.get_seq_length()
            else:
                past = 0
            if not cache is not None:
                return torch.arange(past, past + x.shape[1])
            return None
        """,
        id="statement-form-under-negated-test",
    ),
    pytest.param(
        """
        def positions(x, cache):
            has_cache = cache is not None
            past = cache.get_seq_length() if has_cache else 0
            if cache is None:
                return x[:, past:]
        """,
        id="flag-for-not-none",
    ),
    pytest.param(
        """
        def prepare(self, input_ids, cache):
            past = cache.get_seq_length()
            return input_ids
            n = input_ids.shape[1] - past
        """,
        id="after-return",  # dead code after an unconditional return
    ),
    pytest.param(
        """
        def prepare(input_ids, caches):
            for cache in caches:
                past = cache.get_seq_length()
                continue
                input_ids = input_ids[:, past:]
            return input_ids
        """,
        id="after-continue",
    ),
    pytest.param(
        """
        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if False:
                input_ids = input_ids[:, past:]
            if 0:
                input_ids = input_ids[:, past:]
            return input_ids
        """,
        id="if-false-and-if-0",
    ),
    pytest.param(
        """
        DEBUG = False

        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if DEBUG:
                print(input_ids[:, past:])
            return input_ids
        """,
        id="false-module-constant",  # xtuner-style debug switches
    ),
    pytest.param(
        """
        import sys

        DEBUG = False
        HAS_XLA = "torch_xla" in sys.modules

        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if DEBUG:
                print(input_ids[:, past:])
            return input_ids
        """,
        id="false-module-constant-in-a-module-that-reads-sys-modules",  # only `sys.modules[__name__]` writes its names
    ),
    pytest.param(
        """
        DEBUG = False

        class Model:
            DEBUG = True

            def prepare(self, input_ids, cache):
                def cut():
                    if DEBUG:
                        return input_ids[:, cache.get_seq_length():]
                    return input_ids

                return cut()
        """,
        id="false-module-constant-in-a-method-nested-function",  # a class body's names are not visible in its methods
    ),
    pytest.param(
        """
        import torch

        def forward(input_ids, cache):
            ignore_cache_position = True  # Gaudi forwards hard-code it
            if ignore_cache_position is False:
                past = cache.get_seq_length()
                return torch.arange(past, past + input_ids.shape[1])
            return None
        """,
        id="local-constant-compared",  # optimum-habana llama, qwen3, gemma2
    ),
    pytest.param(
        """
        def forward(input_ids, cache, use_cache):
            use_new_cache = False  # the tuple path only
            if use_cache and use_new_cache:
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        id="local-constant-in-and",  # optimum-habana idefics2
    ),
    pytest.param(
        SEEN_TOKENS_READ.format(own_class=""),
        id="seen-tokens-read",  # no 5.x cache has it; 4.4x static caches give None, which the compare fails on
    ),
    pytest.param(
        """
        from typing import TYPE_CHECKING

        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if TYPE_CHECKING:
                assert past >= 0
            return input_ids
        """,
        id="type-checking",  # never runs
    ),
    pytest.param(
        """
        def prepare(input_ids):
            from transformers.cache_utils import DynamicCache

            cache = DynamicCache()
            return input_ids[:, cache.get_seq_length():]
        """,
        id="import-inside-the-function-constructor",
    ),
    pytest.param(
        """
        import torch
        from transformers.utils import is_torchdynamo_compiling

        class PositionalEmbedding(nn.Module):
            def forward(self, input_ids, cache_length=0):
                max_pos = self.padding_idx + 1 + input_ids.shape[1] + cache_length
                if not (is_torchdynamo_compiling() and torch.is_tensor(max_pos)) and max_pos > self.weights.size(0):
                    self.make_weights(max_pos)
                return self.weights.index_select(0, input_ids.view(-1))

        class Decoder(nn.Module):
            def __init__(self, config):
                self.embed_positions = PositionalEmbedding(config)

            def forward(self, input_ids, past_key_values):
                return self.embed_positions(input_ids, past_key_values.get_seq_length())
        """,
        # transformers' m2m_100, kosmos2, xglm, nllb_moe, seamless_m4t: while compiling, the test holds
        # only for an int `max_pos`; eagerly, the gate's author keeps the tensor
        id="upstream-gate-compiling-and-is-tensor",
    ),
    pytest.param(
        """
        import torch

        class Model(nn.Module):
            def forward(self, input_ids, cache):
                past = cache.get_seq_length()
                if not torch.compiler.is_compiling():
                    if past > self.limit:
                        self.grow(past)
                return input_ids
        """,
        id="use-gated-by-not-is-compiling-in-a-forward",  # the gate the rules advise for compiled code
    ),
    pytest.param(
        """
        def prep(x, cache, flag):
            if cache is None:
                return x
            if cache is not None and flag:
                x = x + 1
            past = cache.get_seq_length()
            if cache is None:
                return x[:, past:]
            return x
        """,
        id="a-false-and-keeps-what-was-known-not-none",  # its `cache is None` alternative cannot run
    ),
]

SILENT_WHERE_DYNAMIC_CACHE_COUNTS_INT = [
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache):
            is_dynamic = isinstance(cache, DynamicCache)
            if is_dynamic:
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        id="flag-variable",  # DynamicCache counts shapes: an int
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache):
            is_dynamic = isinstance(cache, DynamicCache)
            if not is_dynamic:
                return input_ids
            return input_ids[:, cache.get_seq_length():]
        """,
        id="flag-variable-early-return",
    ),
    pytest.param(
        """
        def prepare(input_ids, cache):
            from transformers import DynamicCache

            if isinstance(cache, DynamicCache):
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        id="import-inside-the-function-isinstance",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        class Attention(nn.Module):
            def forward(self, x, **kwargs):
                first = (
                    "past_key_value" in kwargs
                    and isinstance(kwargs["past_key_value"], DynamicCache)
                    and kwargs["past_key_value"].get_seq_length() == 0
                )
                if first:
                    self.start = 0
                return x
        """,
        id="subscript-receiver",  # autoawq's fused attention
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, state):
            if isinstance(state.model.cache, DynamicCache):
                return input_ids[:, state.model.cache.get_seq_length():]
            return input_ids
        """,
        id="attribute-chain-receiver",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if isinstance(cache, DynamicCache):
                return input_ids[:, past:]
            return input_ids
        """,
        id="length-asked-before-the-isinstance",  # the same object, a DynamicCache: past is an int
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache):
            past = cache.get_seq_length() if cache is not None else 0
            if isinstance(cache, DynamicCache):
                return input_ids[:, past:]
            return input_ids
        """,
        id="length-asked-in-an-if-expression-before-the-isinstance",  # the arm asked the same object
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache):
            past = cache.get_seq_length() if cache is not None else 0
            if cache is None or isinstance(cache, DynamicCache):
                return input_ids[:, past:]
            return input_ids
        """,
        id="either-operand-of-a-true-or",  # None: past is 0; a DynamicCache: past is an int
    ),
]


@pytest.mark.parametrize("code", SILENT)
def test_silent(code: str) -> None:
    assert codes(code) == []


@pytest.mark.parametrize("code", SILENT_WHERE_DYNAMIC_CACHE_COUNTS_INT)
def test_silent_where_every_dynamic_cache_counts_an_int(code: str) -> None:
    assert codes(code, DYNAMIC_CACHE_COUNTS_INT) == []


@pytest.mark.parametrize("code", SILENT_WHERE_DYNAMIC_CACHE_COUNTS_INT)
def test_reported_where_a_dynamic_cache_may_count_a_tensor(code: str) -> None:
    """The twin: from 5.25 on, `isinstance(c, DynamicCache)` proves nothing about `c`'s length."""
    text = textwrap.dedent(code).lstrip("\n")
    origins = [finding.origin.line for finding in analyze_source(text, "m.py")]
    assert origins and all("get_seq_length" in text.splitlines()[line - 1] for line in origins)


CONSTANT_REBOUND = {
    "overridden-by-an-import": "DEBUG = False\ntry:\n    from settings import DEBUG\nexcept ImportError:\n    pass",
    "rebound-by-a-top-level-loop": "DEBUG = False\nfor DEBUG in (True,):\n    pass",
    "set-through-globals": 'import os\n\nDEBUG = False\nglobals()["DEBUG"] = bool(os.environ.get("DEBUG"))',
    "declared-global-on-a-continuation-line": "DEBUG = False\n\ndef enable():\n    global OTHER, \\\n        DEBUG\n    DEBUG = True",
    "overridden-by-a-star-import": "DEBUG = False\nfrom settings import *",
    "set-through-globals-with-a-space": 'DEBUG = False\nglobals ()["DEBUG"] = True',
    "set-through-sys-modules": 'import sys\n\nDEBUG = False\nsetattr(sys.modules[__name__], "DEBUG", True)',
    "set-by-exec": 'DEBUG = False\nexec("DEBUG = True")',
}
"""Ways a module rebinds an UPPER_CASE constant that no single assignment shows: each must report."""

CONSTANT_USE = """

def prepare(input_ids, cache):
    past = cache.get_seq_length()
    if DEBUG:
        input_ids = input_ids[:, past:]
    return input_ids
"""


def constant_rebound_cases() -> list[object]:
    return [
        pytest.param(rebinding + CONSTANT_USE, [(rebinding.count("\n") + 6, "SLG002")], id=f"constant-{name}")
        for name, rebinding in CONSTANT_REBOUND.items()
    ]


REPORTED = [
    pytest.param(
        """
        import torch
        from transformers.utils import is_torchdynamo_compiling

        def prepare(input_ids, cache):
            stage = not is_torchdynamo_compiling() and (cache.get_seq_length() == 0)
            if stage or input_ids is None:
                input_ids = input_ids[:, -1:]
            return input_ids

        class Model(nn.Module):
            def forward(self, x, cache):
                window = not torch.compiler.is_compiling() and (lambda: x[:, cache.get_seq_length() :])
                return window
        """,
        [(6, "SLG004"), (12, "SLG002")],
        # host code: nothing traces `prepare`, the gate always holds; a lambda's body runs when it is
        # called, which the gate does not decide (issue 25)
        id="length-under-the-gate-of-its-own-expression-on-the-host-or-in-a-lambda",
    ),
    pytest.param(
        """
        def update_mask(mask, x, cache):
            past = cache.get_seq_length() if cache is not None else 0
            if cache is not None:
                return mask[:, : past + x.shape[1]]
            return mask
        """,
        [(4, "SLG002")],
        id="ternary-origin-under-is-not-none",  # the call ran: a StaticCache's length is a tensor
    ),
    pytest.param(
        """
        def update_mask(mask, x, cache, other):
            past = cache.get_seq_length() if cache is not None else 0
            cache = other
            if cache is None:
                return mask[:, :past]
            return mask
        """,
        [(5, "SLG002")],
        id="guard-forgotten-when-rebound",  # the test is about another object now
    ),
    pytest.param(
        """
        def update_mask(mask, x, cache):
            past = cache.get_seq_length() if x is not None else 0
            if cache is None:
                return mask[:, :past]
            return mask
        """,
        [(4, "SLG002")],
        id="guard-on-another-name",
    ),
    pytest.param(
        """
        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if not cache:
                return input_ids[:, past:]
            return input_ids
        """,
        [(4, "SLG002")],
        id="falsy-cache-is-not-none",  # an empty cache is falsy, and it did run the call
    ),
    pytest.param(
        """
        DEBUG = False

        def prepare(input_ids, cache, DEBUG):
            past = cache.get_seq_length()
            if DEBUG:
                input_ids = input_ids[:, past:]
            return input_ids
        """,
        [(6, "SLG002")],
        id="constant-shadowed-by-a-parameter",
    ),
    pytest.param(
        """
        DEBUG = False
        DEBUG = True

        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if DEBUG:
                input_ids = input_ids[:, past:]
            return input_ids
        """,
        [(7, "SLG002")],
        id="constant-bound-twice",
    ),
    *constant_rebound_cases(),
    pytest.param(
        """
        def forward(input_ids, cache, flag):
            ignore = True
            if flag:
                ignore = False
            if ignore is False:
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        [(6, "SLG002")],
        id="local-bound-twice",
    ),
    pytest.param(
        """
        def prepare(input_ids, past_key_values, other):
            cache_length = past_key_values.get_seq_length()
            seen = other.seen_tokens
            return input_ids[:, cache_length:], seen
        """,
        [(4, "SLG002")],
        id="seen-tokens-of-another-object",
    ),
    pytest.param(
        """
        def forward(input_ids, cache, skip=True):
            if skip is False:
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        [(3, "SLG002")],
        id="parameter-default-is-not-a-constant",
    ),
    pytest.param(
        """
        DEBUG = False

        def forward(input_ids, cache):
            for DEBUG in (False, True):
                if DEBUG:
                    input_ids = input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        [(6, "SLG002")],
        id="module-constant-rebound-by-a-loop",
    ),
    pytest.param(
        """
        DEBUG = False

        def prepare(input_ids, cache, flag):
            DEBUG = flag

            def cut():
                if DEBUG:
                    return input_ids[:, cache.get_seq_length():]
                return input_ids

            return cut()
        """,
        [(8, "SLG002")],
        id="module-constant-rebound-by-the-enclosing-function",
    ),
    pytest.param(
        """
        DEBUG = False

        def prepare(input_ids, cache):
            DEBUG = True

            class Holder:
                if DEBUG:
                    past = cache.get_seq_length()
                    kept = input_ids[:, past:]

            return Holder.kept
        """,
        [(9, "SLG002")],
        id="module-constant-rebound-around-a-class-body",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache, other):
            is_dynamic = isinstance(cache, DynamicCache)
            cache = other
            if is_dynamic:
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        [(7, "SLG002")],
        id="flag-subject-rebound",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache):
            is_dynamic = isinstance(cache, DynamicCache)
            is_dynamic = True
            if is_dynamic:
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        [(7, "SLG002")],
        id="flag-rebound",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache):
            is_dynamic = isinstance(cache, DynamicCache)
            if is_dynamic:
                return input_ids
            return input_ids[:, cache.get_seq_length():]
        """,
        [(7, "SLG002")],
        id="flag-else-branch",  # not a DynamicCache: anything else, a StaticCache too
    ),
    pytest.param(
        """
        from transformers import StaticCache

        def prepare(input_ids, cache):
            is_static = isinstance(cache, StaticCache)
            if not is_static:
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        [(6, "SLG002")],
        id="not-static-proves-nothing",  # EncoderDecoderCache wraps a StaticCache (README Limits)
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def forward(x, **kwargs):
            if isinstance(kwargs["cache"], DynamicCache):
                kwargs["cache"] = make_cache()
                return x[:, kwargs["cache"].get_seq_length():]
            return x
        """,
        [(6, "SLG002")],
        id="subscript-entry-rebound",
    ),
    pytest.param(
        """
        def prepare(input_ids, cache):
            from mylib import DynamicCache

            if isinstance(cache, DynamicCache):
                return input_ids[:, cache.get_seq_length():]
            return input_ids
        """,
        [(5, "SLG002")],
        id="import-inside-the-function-of-another-package",  # not transformers' DynamicCache
    ),
    pytest.param(
        """
        DEBUG = True

        def prepare(input_ids, cache):
            past = cache.get_seq_length()
            if not DEBUG:
                return input_ids
            return input_ids[:, past:]
        """,
        [(7, "SLG002")],
        id="true-constant-keeps-the-rest",
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache, other):
            past = cache.get_seq_length()
            cache = other
            if isinstance(cache, DynamicCache):
                return input_ids[:, past:]
            return input_ids
        """,
        [(7, "SLG002")],
        id="length-asked-of-the-object-before-a-rebinding",  # past came from the first object
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache, other):
            past = cache.get_seq_length()
            if isinstance(other, DynamicCache):
                return input_ids[:, past:]
            if isinstance(cache, DynamicCache):
                pass
            return input_ids[:, past:]
        """,
        [(6, "SLG002"), (9, "SLG002")],
        id="length-asked-of-another-object-or-used-after-the-branch",
    ),
    pytest.param(
        """
        import torch
        from transformers.utils import is_torchdynamo_compiling

        class Model(nn.Module):
            def forward(self, input_ids, cache):
                past = cache.get_seq_length()
                if not (is_torchdynamo_compiling() and torch.is_tensor(input_ids)) and past > 0:
                    input_ids = input_ids[:, -1:]
                if not torch.compiler.is_compiling():
                    input_ids = input_ids[:, 1:]
                return input_ids[:, past:]
        """,
        [(7, "SLG004"), (11, "SLG002")],
        id="gate-on-another-name-or-a-use-after-the-gate",  # both run while compiling with a tensor past
    ),
    pytest.param(
        """
        import torch

        def trim(cache, x):
            past = cache.get_seq_length()
            if not torch.compiler.is_compiling():
                return x[:, past:]
            return x
        """,
        [(6, "SLG002")],
        id="gate-in-host-code",  # nothing compiles this function: the gate always holds
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prepare(input_ids, cache, other):
            past = cache.get_seq_length()
            if other is None or isinstance(cache, DynamicCache):
                return input_ids[:, past:]
            return input_ids
        """,
        [(6, "SLG002")],
        id="one-operand-of-a-true-or-proves-nothing",  # other is None says nothing of cache
    ),
    pytest.param(
        """
        import torch

        class Model(nn.Module):
            def is_compiling(self):
                return self.flag

            def forward(self, x, cache):
                past = cache.get_seq_length()
                if not torch.compiler.is_exporting():
                    x = x[:, past:]
                if not self.is_compiling():
                    x = x[:, past:]
                return x

        @torch.jit.script
        def trim(x, cache):
            past = cache.get_seq_length()
            if not torch.compiler.is_compiling():
                x = x[:, past:]
            return x
        """,
        [(10, "SLG002"), (12, "SLG002"), (19, "SLG002")],
        # is_exporting() is False under torch.compile, a method of the model's own proves nothing, and
        # is_compiling() is False under TorchScript (review25)
        id="checks-some-tracer-leaves-false",
    ),
    pytest.param(
        """
        import torch

        def prep(x, cache, other):
            n = cache.get_seq_length() if cache is not None else 0
            if not (cache is not None and torch.is_tensor(n)) and (m := other.get_seq_length()) is not None:
                return x[:, m:]
            return x
        """,
        [(6, "SLG002")],
        id="walrus-in-an-operand-after-a-narrowing-one",  # m is bound for the branch too (review25)
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prep(x, caches, extra):
            e = extra.get_seq_length() if extra is not None else 0
            old = 0
            for c in caches:
                n = c.get_seq_length() if c is not None else 0
                if isinstance(c, DynamicCache):
                    x = x[:, old:]
                old = n
            return x, e
        """,
        [(9, "SLG002")],
        id="previous-iteration-length-of-another-object",  # old was asked of the previous c (review25)
    ),
    pytest.param(
        """
        from transformers import DynamicCache

        def prep(x, cache, other, flag, extra):
            past = cache.get_seq_length() if extra is not None else 0
            q = (cache := other) if flag is not None else None
            if isinstance(cache, DynamicCache):
                return x[:, past:]
            return x
        """,
        [(7, "SLG002")],
        id="receiver-rebound-in-an-if-expression-arm",  # cache may be another object now (review25)
    ),
]


OWN_SEEN_TOKENS = {
    "property": "    @property\n    def seen_tokens(self):\n        return self._seen",
    "property-spaced": "    @property\n    def  seen_tokens (self):\n        return self._seen",
    "property-tab": "    @property\n    def\tseen_tokens(self):\n        return self._seen",
    "assigned": "    def __init__(self):\n        self.seen_tokens = 0",
    "annotated": "    def __init__(self):\n        self.seen_tokens: int = 0",
    "augmented": "    def update(self, n):\n        self.seen_tokens += n",
    "tuple-target": "    def __init__(self):\n        self.rest, self.seen_tokens = [], 0",
    "class-level": "    seen_tokens = 0",
    "dataclass-field": "    seen_tokens: int",
    "setattr": "    def __init__(self):\n        setattr(self, 'seen_tokens', 0)",
}


@pytest.mark.parametrize("binding", OWN_SEEN_TOKENS.values(), ids=OWN_SEEN_TOKENS.keys())
def test_a_module_that_gives_its_caches_seen_tokens_keeps_the_findings_after_reading_it(binding: str) -> None:
    """Must report (the twin of `seen-tokens-read`): `c.seen_tokens` ends the path only where no
    class of the module may answer it, however the module binds or defines it."""
    code = SEEN_TOKENS_READ.format(own_class=f"\nclass MyCache(Cache):\n{binding}\n")
    lines = code.lstrip("\n").split("\n")
    compared = next(number for number, line in enumerate(lines, 1) if "if cache_length < past_length" in line)
    assert codes(code) == [(compared, "SLG004"), (compared + 1, "SLG002")]


@pytest.mark.parametrize(("code", "expected"), REPORTED)
def test_reported(code: str, expected: list[tuple[int, str]]) -> None:
    assert codes(code) == expected


def test_deeply_nested_and_or_tests_are_narrowed_in_bounded_time() -> None:
    """Each level of alternating `and`/`or` doubles the alternatives a false test narrows by: past a few
    levels nothing is narrowed (the length stays reported), so 60 levels finish at once (review25)."""
    test = "v0"
    for level in range(1, 60):
        test = f"(v{level} {'and' if level % 2 else 'or'} {test})"
    names = ", ".join(f"v{level}" for level in range(60))
    code = f"""
        def prep(x, cache, {names}):
            past = cache.get_seq_length()
            if not {test}:
                return x[:, past:]
            return x
        """
    assert codes(code) == [(4, "SLG002")]


# ----- issue 25 pattern 8a: a name bound to a value that cannot be None is not None until rebound -----

DEAD_RETEST = [
    pytest.param(
        """
        import torch

        def forward(x, cache, position_ids=None, cache_position=None):
            if cache_position is None:
                cache_position = torch.arange(x.shape[1])
            if position_ids is None:
                position_ids = cache_position.unsqueeze(0)
            if position_ids is None:
                past = cache.get_seq_length()
                position_ids = torch.arange(past, past + x.shape[1])
            return position_ids
        """,
        id="re-test-after-a-tensor-method",  # many model zoos: position_ids is a tensor on both paths
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids=None):
            if ids is None:
                ids = torch.arange(x.shape[1])
            if ids is not None:
                return ids
            return x[:, cache.get_seq_length():]
        """,
        id="the-rest-after-a-true-is-not-none-return",  # the `return ids` always runs
    ),
    pytest.param(
        """
        class Window:
            pass

        def forward(x, cache, a=None, b=None, c=None, d=None, e=None, f=None):
            if a is None:
                a = 0
            if b is None:
                b = [row for row in x]
            if c is None:
                c = x.shape
            if d is None:
                d = len(x) + 1
            if e is None:
                e = Window()
            if f is None:
                f = a or 1
            if a is None or b is None or c is None or d is None or e is None or f is None:
                return x[:, cache.get_seq_length():]
            return x
        """,
        id="literal-comprehension-shape-len-constructor-or",  # none of these values can be None
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, mask=None):
            mask = torch.ones(x.shape) if mask is None else mask
            if mask is None:
                return x[:, cache.get_seq_length():]
            return mask
        """,
        id="if-expression-whose-arms-cannot-be-none",  # the else arm runs only where mask is not None
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, position_ids=None):
            if position_ids is None:
                position_ids = torch.arange(x.shape[1]).unsqueeze(0)
            past = position_ids[0, 0] if position_ids is not None else cache.get_seq_length()
            return x[:, past:]
        """,
        id="the-dead-arm-of-an-if-expression",  # the `else` arm is never evaluated
    ),
]


@pytest.mark.parametrize("code", DEAD_RETEST)
def test_a_re_test_after_a_binding_that_cannot_be_none_is_dead(code: str) -> None:
    assert codes(code) == []


LIVE_RETEST = [
    pytest.param(
        """
        import torch

        def forward(x, cache, position_ids=None):
            if position_ids is None:
                position_ids = make_positions(x)
            if position_ids is None:
                past = cache.get_seq_length()
                position_ids = torch.arange(past, past + x.shape[1])
            return position_ids
        """,
        [(8, "SLG003"), (8, "SLG003")],
        id="an-arbitrary-call-may-return-none",  # make_positions may return None
    ),
    pytest.param(
        """
        from typing import Optional
        import torch

        def forward(x, cache, ids=None):
            if ids is None:
                ids = torch.jit.annotate(Optional[torch.Tensor], None)
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(8, "SLG002")],
        id="a-torch-function-that-returns-its-argument",  # torch.jit.annotate(..., None) is None
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids=None, other=None):
            if ids is None:
                ids = torch.arange(3)
            ids = other
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(8, "SLG002")],
        id="rebound-to-a-value-that-may-be-none",
    ),
    pytest.param(
        """
        import torch

        def forward(self, x, cache):
            if self.ids is not None:
                reset(self)
                if self.ids is None:
                    return x[:, cache.get_seq_length():]
            return x
        """,
        [(7, "SLG002")],
        id="an-attribute-a-call-may-change",  # reset may set self.ids = None: only plain names are decided
    ),
    pytest.param(
        """
        import torch

        IDS = None

        def forward(x, cache):
            global IDS
            if IDS is None:
                IDS = torch.arange(3)
            reset_ids()
            if IDS is None:
                return x[:, cache.get_seq_length():]
            return x
        """,
        [(11, "SLG002")],
        id="a-global-a-call-may-rebind",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids=None, fallback=None):
            if ids is None:
                ids = fallback or torch.arange(3)
            if ids is None:
                ids = x
            ids = fallback and torch.arange(3)
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(10, "SLG002")],
        id="an-and-may-give-none",  # `fallback and ...` is fallback (maybe None) where it is falsy
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids, value):
            if ids is None:
                ids = torch.arange(3)
            match value:
                case ids:
                    pass
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(10, "SLG002")],
        id="a-case-pattern-rebinds-the-name",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids=None):
            if ids is None:
                ids = torch.arange(3)
            from helpers import ids
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(8, "SLG002")],
        id="an-import-rebinds-the-name",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids=None):
            if ids is None:
                ids = torch.arange(3)
            try:
                ids = None
                ids = torch.arange(risky())
            except ValueError:
                if ids is None:
                    return x[:, cache.get_seq_length():]
            return ids
        """,
        [(11, "SLG002")],
        id="a-handler-after-an-exception-part-way",  # risky() raised while ids was None
    ),
    pytest.param(
        """
        import contextlib
        import torch

        def forward(x, cache, ids=None):
            if ids is None:
                ids = torch.arange(3)
            with contextlib.suppress(ValueError):
                ids = None
                ids = torch.arange(risky())
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(11, "SLG002")],
        id="a-with-that-suppresses-an-exception-part-way",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, items, ids=None):
            if ids is None:
                ids = torch.arange(3)
            for item in items:
                ids = None
                if item:
                    break
                ids = torch.arange(item)
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(12, "SLG002")],
        id="a-break-part-way-through-a-loop",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, items, ids=None):
            if ids is None:
                ids = torch.arange(3)
            for item in items:
                if ids is None:
                    return x[:, cache.get_seq_length():]
                ids = None
                if item:
                    continue
                ids = torch.arange(item)
            return ids
        """,
        [(8, "SLG002")],
        id="a-continue-part-way-through-a-loop",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids=None):
            if ids is None:
                ids = torch.arange(3)
            try:
                ids = None
                ids = torch.arange(risky())
            finally:
                if ids is None:
                    print(x[:, cache.get_seq_length():])
            return ids
        """,
        [(11, "SLG002")],
        id="a-finally-after-an-exception-part-way",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, ids=None):
            if ids is None:
                ids = torch.arange(3)

            def reset():
                nonlocal ids
                ids = None

            reset()
            if ids is None:
                return x[:, cache.get_seq_length():]
            return ids
        """,
        [(13, "SLG002")],
        id="a-nested-function-rebinds-it-nonlocal",
    ),
    pytest.param(
        """
        import torch

        def forward(x, cache, position_ids=None):
            if position_ids is None:
                position_ids = make_positions(x)
            past = position_ids[0, 0] if position_ids is not None else cache.get_seq_length()
            return x[:, past:]
        """,
        [(7, "SLG002")],
        id="twin-an-if-expression-after-a-call-that-may-give-none",
    ),
]


@pytest.mark.parametrize(("code", "expected"), LIVE_RETEST)
def test_a_re_test_after_a_binding_that_may_be_none_stays_live(code: str, expected: list[tuple[int, str]]) -> None:
    assert codes(code) == expected

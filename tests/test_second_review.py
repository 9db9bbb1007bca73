"""What a second review of the package-view facts (counters, local constants, replicated layers,
`seen_tokens`, the wrapper) found silent that may hold a tensor: each reduced to a module that must
still be reported, and each failed before its fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lint_rules.checking import check_path
from lint_rules.engine import analyze_source
from lint_rules.settings import Settings

MUST_REPORT = {
    "a method annotated -> int that returns a tensor": """
        import torch
        from transformers import DynamicCache

        class C(DynamicCache):
            def __init__(self):
                super().__init__()
                self.pos = torch.zeros((), dtype=torch.long)
                self.seen = 0

            def current(self) -> int:
                return self.pos

            def update(self, keys, values, layer_idx):
                self.seen = self.current()
                return keys, values

            def get_seq_length(self, layer_idx=0):
                return self.seen

        def use(ids, cache: C):
            return ids[:, cache.get_seq_length():]
    """,
    "a count rebound by a match capture": """
        from transformers import DynamicCache

        class C(DynamicCache):
            def __init__(self):
                super().__init__()
                self.seen = 0

            def update(self, keys, values, mask):
                n = 0
                match mask.sum():
                    case n:
                        pass
                self.seen = self.seen + n
                return keys, values

            def get_seq_length(self, layer_idx=0):
                return self.seen

        def use(ids, cache: C):
            return ids[:, cache.get_seq_length():]
    """,
    "a subclass that rebinds the replicated layer class": """
        from transformers.cache_utils import Cache, DynamicLayer, StaticLayer

        class Replicating(Cache):
            def __init__(self):
                super().__init__(layer_class_to_replicate=DynamicLayer)

            def get_seq_length(self, layer_idx=0):
                return self.layers[layer_idx].get_seq_length()

        class Rebound(Replicating):
            def __init__(self):
                super().__init__()
                self.layer_class_to_replicate = StaticLayer

        def use(ids, cache: Rebound):
            return ids[:, cache.get_seq_length():]
    """,
    "a subclass that calls its base's __init__ with another layer class": """
        from transformers.cache_utils import Cache, DynamicLayer, StaticLayer

        class Replicating(Cache):
            def __init__(self):
                super().__init__(layer_class_to_replicate=DynamicLayer)

            def get_seq_length(self, layer_idx=0):
                return self.layers[layer_idx].get_seq_length()

        class ExplicitInit(Replicating):
            def __init__(self):
                Cache.__init__(self, layer_class_to_replicate=StaticLayer)

        def use(ids, cache: ExplicitInit):
            return ids[:, cache.get_seq_length():]
    """,
    "a literal bound in a nested function is not the outer one's": """
        import os

        use_slice = os.environ.get("USE_SLICE") == "1"

        def f(ids, cache):
            def helper():
                use_slice = False
                return use_slice

            n = cache.get_seq_length()
            if use_slice:
                return ids[:, :n]
            return helper()
    """,
    "seen_tokens read after the receiver is rebound": """
        def rebound(ids, cache, legacy):
            c = cache
            n = c.get_seq_length()
            c = legacy
            seen = c.seen_tokens
            return ids[:, n:], seen
    """,
    "seen_tokens of the module's own cache class": """
        from transformers import StaticCache

        class MyStatic(StaticCache):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.seen_tokens = 0

            def tail(self, ids):
                n = self.get_seq_length()
                if self.seen_tokens > 0:
                    ids = ids[:, n:]
                return ids
    """,
    "the wrapper's inner cache swapped": """
        from transformers import DynamicCache, EncoderDecoderCache, StaticCache

        def swapped(ids, config):
            cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
            cache.self_attention_cache = StaticCache(config=config, max_cache_len=8)
            return ids[:, cache.get_seq_length():]
    """,
    "layers appended in a comprehension": """
        from transformers import DynamicCache
        from transformers.cache_utils import StaticLayer

        class Grown(DynamicCache):
            def grow(self, n):
                [self.layers.append(StaticLayer(max_cache_len=8)) for _ in range(n)]

        def use(ids, cache: Grown):
            return ids[:, cache.get_seq_length():]
    """,
}


@pytest.mark.parametrize("case", MUST_REPORT)
def test_must_report(case: str) -> None:
    findings = analyze_source(textwrap.dedent(MUST_REPORT[case]), "example.py", ("get_seq_length",))
    assert [finding.code for finding in findings] == ["SLG002"], case


KV = """\
    from transformers import DynamicCache


    class CompressCache(DynamicCache):
        def __init__(self):
            super().__init__()
            self.real_length = 0

        def update(self, keys, values, layer_idx):
            batch, heads, seq_len, dim = keys.shape
            self.real_length += seq_len
            return keys, values

        def get_seq_length(self, layer_idx=0):
            return self.real_length
"""
USE = """\
    from pkg_review.kv import CompressCache


    class Local(CompressCache):
        def grow(self, mask):
            self.real_length = mask.sum()


    class Between(CompressCache):
        pass


    class Deeper(Between):
        def grow(self, mask):
            self.real_length = mask.sum()


    def use(ids, cache: Local):
        return ids[:, cache.get_seq_length():]


    def use_deeper(ids, cache: Deeper):
        return ids[:, cache.get_seq_length():]


    def use_base(ids, cache: CompressCache):
        return ids[:, cache.get_seq_length():]
"""


def test_a_subclass_in_another_module_that_rebinds_the_counter(tmp_path: Path) -> None:
    package = tmp_path / "pkg_review"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kv.py").write_text(textwrap.dedent(KV))
    (package / "use.py").write_text(textwrap.dedent(USE))
    findings = check_path(str(package / "use.py"), Settings()).findings
    # `use_base` too: a `CompressCache` here may be a `Local`, whose length is a tensor
    assert [finding.function for finding in findings] == ["use", "use_deeper", "use_base"]

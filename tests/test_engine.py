"""Engine behaviour that the rule examples do not show: scopes, compiled regions, configuration,
control flow, and the fix plan each finding carries."""

from __future__ import annotations

import textwrap

import pytest

from lint_rules.engine import analyze_source
from lint_rules.findings import Finding, FixKind, FixSafety


def findings(code: str, methods: tuple[str, ...] = ("get_seq_length",)) -> list[Finding]:
    return analyze_source(textwrap.dedent(code), "example.py", methods)


def codes(code: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.code) for finding in findings(code)]


@pytest.mark.parametrize(
    ("decorator", "region"),
    [
        ("@torch.compile", "@torch.compile"),
        ("@torch.compile(fullgraph=True)", "@torch.compile"),
        ("@torch.jit.script", "@torch.jit.script"),
        ("@torch.compiler.allow_in_graph", "@torch.compiler.allow_in_graph"),
        ("@torch.compiler.disable", ""),
        ("@torch.jit.ignore", ""),
        ("@functools.cache", ""),
    ],
)
def test_decorators_that_make_a_compiled_region(decorator: str, region: str) -> None:
    [finding] = findings(
        f"""
        {decorator}
        def step(cache, x):
            n = cache.get_seq_length()
            return x[:, n:]
        """
    )
    assert finding.compiled_region == region
    assert finding.fix.safety is (FixSafety.UNSAFE if region else FixSafety.SAFE)
    assert ("compiled region" in finding.message) == bool(region)


def test_forward_and_functions_nested_in_it_are_compiled() -> None:
    found = findings(
        """
        class Block(nn.Module):
            def forward(self, x, cache):
                def helper():
                    n = cache.get_seq_length()
                    return x[:, n:]
                m = cache.get_seq_length()
                return helper(), x[m]

        def forward(x, cache):
            return x[:, cache.get_seq_length():]
        """
    )
    assert [(f.line, f.compiled_region) for f in found] == [(6, "forward method"), (8, "forward method"), (11, "")]


def test_finding_names_function_and_origin() -> None:
    [finding] = findings(
        """
        class GenerationMixin:
            def _prefill(self, cache, input_ids):
                past_length = cache.get_seq_length()
                return input_ids.shape[1] - past_length
        """
    )
    assert finding.function == "GenerationMixin._prefill"
    assert (finding.origin.line, finding.origin.col) == (4, 22)
    assert "`get_seq_length()` on line 4" in finding.message


def test_source_methods_are_configurable() -> None:
    code = """
        def f(cache, x):
            n = cache.get_cache_length()
            return x[:, n:]
        """
    assert codes(code) == []
    found = findings(code, ("get_seq_length", "get_cache_length"))
    assert [(f.line, f.code, f.source_method) for f in found] == [(4, "SLG002", "get_cache_length")]


def test_int_override_inherited_from_a_base_in_the_same_module() -> None:
    assert (
        codes(
            """
        class DynamicLayer:
            def get_seq_length(self):
                if not self.keys:
                    return 0
                return self.keys.shape[-2]

        class SlidingLayer(DynamicLayer):
            def crop(self, x):
                return x[: self.get_seq_length()]
        """
        )
        == []
    )


def test_override_returning_an_attribute_assigned_a_tensor_is_not_int() -> None:
    assert codes(
        """
        class StaticLayer:
            def __init__(self):
                self.cumulative_length = torch.tensor([0])

            def get_seq_length(self):
                return self.cumulative_length

            def crop(self, x):
                return x[: self.get_seq_length()]
        """
    ) == [(10, "SLG002")]


def test_an_encoder_decoder_cache_has_the_length_of_its_first_cache() -> None:
    """speecht5-style generation builds `EncoderDecoderCache(DynamicCache(), DynamicCache())`: an int
    length (tests/test_cache_table.py checks the wrapper on the real releases); around a static
    cache it is a tensor, and from legacy data alone it builds a DynamicCache."""
    assert codes(
        """
        from transformers import DynamicCache, StaticCache
        from transformers import EncoderDecoderCache as Wrapper

        def dynamic(ids):
            cache = Wrapper(DynamicCache(), DynamicCache())
            return ids[:, cache.get_seq_length():]

        def static(ids, config):
            cache = Wrapper(StaticCache(config=config, max_cache_len=8), DynamicCache())
            return ids[:, cache.get_seq_length():]

        def legacy(ids, data):
            cache = Wrapper(data)
            return ids[:, cache.get_seq_length():]

        def unknown(ids, first, second):
            cache = Wrapper(first, second)
            return ids[:, cache.get_seq_length():]

        def named(ids):
            own, cross = DynamicCache(), DynamicCache()
            own = DynamicCache()
            cache = Wrapper(own, cross)
            return ids[:, cache.get_seq_length():]
        """
    ) == [(11, "SLG002"), (19, "SLG002")]


def test_value_tainted_late_in_a_loop_reaches_its_start() -> None:
    assert codes(
        """
        def f(caches, x):
            n = 0
            for cache in caches:
                y = x[n]
                n = cache.get_seq_length()
        """
    ) == [(5, "SLG002")]


def test_branches_merge_and_early_exits_narrow() -> None:
    assert codes(
        """
        def f(cache, x, flag):
            if flag:
                n = cache.get_seq_length()
            else:
                n = 0
            a = x[n]
            m = cache.get_seq_length()
            if not isinstance(m, int):
                raise TypeError("expected an int")
            return a, x[m]
        """
    ) == [(7, "SLG002"), (9, "SLG005")]


def test_try_except_and_match_are_followed() -> None:
    assert codes(
        """
        def f(cache, x, kind):
            try:
                n = cache.get_seq_length()
            except AttributeError:
                n = 0
            match kind:
                case "tail":
                    return x[:, n:]
                case _:
                    return x
        """
    ) == [(9, "SLG002")]


def test_closures_and_default_arguments() -> None:
    assert codes(
        """
        def f(cache, x):
            n = cache.get_seq_length()
            key = lambda row: row[n]
            return sorted(x, key=key)

        def g(x, n=cache.get_seq_length()):
            return x
        """
    ) == [(4, "SLG002")]


@pytest.mark.parametrize(
    ("code", "kind", "targets"),
    [
        ("n = cache.get_seq_length()\nx[n]", FixKind.GUARD_AFTER, ("n",)),
        ("a = b = cache.get_seq_length()\nx[a]", FixKind.GUARD_AFTER, ("a", "b")),
        ("self.n: int = cache.get_seq_length()", FixKind.GUARD_AFTER, ("self.n",)),
        ("x[cache.get_seq_length()]", FixKind.HOIST, ()),
        ("if (n := cache.get_seq_length()) > 0: pass", FixKind.HOIST, ()),
        ("n = x.shape[1] - cache.get_seq_length()\nx[n]", FixKind.HOIST, ()),
        ("d['n'] = cache.get_seq_length() + 1", FixKind.HOIST, ()),
        ("x[cache.get_seq_length()]; y = 1", FixKind.HOIST, ()),
        ("y = 1; x[cache.get_seq_length()]", FixKind.NONE, ()),
        ("y = 1; n = cache.get_seq_length()\nx[n]", FixKind.NONE, ()),
    ],
)
def test_fix_plan_kinds(code: str, kind: FixKind, targets: tuple[str, ...]) -> None:
    body = textwrap.indent(code, "    ")
    found = findings(f"def f(self, cache, x, d) -> None:\n{body}\n")
    assert found
    assert {finding.fix.kind for finding in found} == {kind}
    assert found[0].fix.targets == targets

"""Before/after tests of the fixer, in the style of LibCST's own codemod tests."""

from __future__ import annotations

import textwrap

import pytest
from libcst.codemod import CodemodTest

from fixers.codemod import InsertIntGuards
from fixers.fix_files import fix_text
from lint_rules.checking import check_text
from lint_rules.findings import FixSafety
from lint_rules.settings import Settings


class TestBindingForms(CodemodTest):
    TRANSFORM = InsertIntGuards

    def test_plain_assignment(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                past_length = cache.get_seq_length()
                return input_ids[:, past_length:]
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                past_length = cache.get_seq_length()
                if isinstance(past_length, torch.Tensor):
                    past_length = int(past_length.item())
                return input_ids[:, past_length:]
        """
        self.assertCodemod(before, after)

    def test_one_guard_per_binding_however_many_uses(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                a = input_ids[:, n:]
                if n > 0:
                    return range(n), a
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                a = input_ids[:, n:]
                if n > 0:
                    return range(n), a
        """
        self.assertCodemod(before, after)

    def test_annotated_assignment(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                n: int = cache.get_seq_length()
                return input_ids[:, n:]
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                n: int = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:, n:]
        """
        self.assertCodemod(before, after)

    def test_augmented_assignment(self) -> None:
        """`n` is an int, so `n += <tensor>` is itself the int arithmetic: the call is hoisted."""
        before = """
            import torch

            def total(caches, x):
                n = 0
                for cache in caches:
                    n += cache.get_seq_length()
                return x[:n]
        """
        after = """
            import torch

            def total(caches, x):
                n = 0
                for cache in caches:
                    seq_length = cache.get_seq_length()
                    if isinstance(seq_length, torch.Tensor):
                        seq_length = int(seq_length.item())
                    n += seq_length
                return x[:n]
        """
        self.assertCodemod(before, after)

    def test_conditional_expression(self) -> None:
        before = """
            import torch

            def prefill(past_key_values, input_ids):
                n = past_key_values.get_seq_length() if past_key_values is not None else 0
                return input_ids[:, n:]
        """
        after = """
            import torch

            def prefill(past_key_values, input_ids):
                n = past_key_values.get_seq_length() if past_key_values is not None else 0
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:, n:]
        """
        self.assertCodemod(before, after)

    def test_attribute_target(self) -> None:
        before = """
            import torch

            class Generator:
                def step(self, input_ids):
                    self.past = self.cache.get_seq_length()
                    return input_ids[:, self.past:]
        """
        after = """
            import torch

            class Generator:
                def step(self, input_ids):
                    self.past = self.cache.get_seq_length()
                    if isinstance(self.past, torch.Tensor):
                        self.past = int(self.past.item())
                    return input_ids[:, self.past:]
        """
        self.assertCodemod(before, after)

    def test_tuple_unpacking(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                batch, n = input_ids.shape[0], cache.get_seq_length()
                return input_ids[:batch, n:]
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                batch, n = input_ids.shape[0], cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:batch, n:]
        """
        self.assertCodemod(before, after)

    def test_multi_line_statement_gets_guard_after_its_last_line(self) -> None:
        before = """
            import torch

            def prefill(model_kwargs, input_ids):
                n = (
                    model_kwargs["past_key_values"]
                    .get_seq_length()
                )  # the cache length
                return input_ids[:, -n:]
        """
        after = """
            import torch

            def prefill(model_kwargs, input_ids):
                n = (
                    model_kwargs["past_key_values"]
                    .get_seq_length()
                )  # the cache length
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:, -n:]
        """
        self.assertCodemod(before, after)

    def test_comments_and_blank_lines_stay_where_they_are(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                # how much is cached
                n = cache.get_seq_length()  # may be a tensor

                # slice the new tokens
                return input_ids[:, n:]
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                # how much is cached
                n = cache.get_seq_length()  # may be a tensor
                if isinstance(n, torch.Tensor):
                    n = int(n.item())

                # slice the new tokens
                return input_ids[:, n:]
        """
        self.assertCodemod(before, after)

    def test_several_findings_in_one_file_all_fixed(self) -> None:
        before = """
            import torch

            def a(cache, x):
                n = cache.get_seq_length()
                return x[n]

            def b(cache, x):
                m = cache.get_seq_length()
                return torch.arange(x.shape[1] + m)

            def c(cache, x):
                return x[:, cache.get_seq_length():]
        """
        after = """
            import torch

            def a(cache, x):
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return x[n]

            def b(cache, x):
                m = cache.get_seq_length()
                if isinstance(m, torch.Tensor):
                    m = int(m.item())
                return torch.arange(x.shape[1] + m)

            def c(cache, x):
                seq_length = cache.get_seq_length()
                if isinstance(seq_length, torch.Tensor):
                    seq_length = int(seq_length.item())
                return x[:, seq_length:]
        """
        self.assertCodemod(before, after)

    def test_module_level_binding(self) -> None:
        before = """
            import torch

            n = cache.get_seq_length()
            tail = input_ids[:, n:]
        """
        after = """
            import torch

            n = cache.get_seq_length()
            if isinstance(n, torch.Tensor):
                n = int(n.item())
            tail = input_ids[:, n:]
        """
        self.assertCodemod(before, after)

    def test_result_computed_in_a_conditional_arm_is_guarded(self) -> None:
        before = """
            import torch

            def f(past_key_values, x, seq_length):
                query_length = seq_length if past_key_values is None else seq_length + past_key_values.get_seq_length()
                return x[:, query_length:]
        """
        after = """
            import torch

            def f(past_key_values, x, seq_length):
                query_length = seq_length if past_key_values is None else seq_length + past_key_values.get_seq_length()
                if isinstance(query_length, torch.Tensor):
                    query_length = int(query_length.item())
                return x[:, query_length:]
        """
        self.assertCodemod(before, after)


class TestHoisting(CodemodTest):
    TRANSFORM = InsertIntGuards

    def test_inline_slice_bound_is_hoisted(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                # new tokens only
                return input_ids[:, cache.get_seq_length():]
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                # new tokens only
                seq_length = cache.get_seq_length()
                if isinstance(seq_length, torch.Tensor):
                    seq_length = int(seq_length.item())
                return input_ids[:, seq_length:]
        """
        self.assertCodemod(before, after)

    def test_inline_if_test_is_hoisted(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                if cache.get_seq_length() > 0:
                    input_ids = input_ids[:, -1:]
                return input_ids
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                seq_length = cache.get_seq_length()
                if isinstance(seq_length, torch.Tensor):
                    seq_length = int(seq_length.item())
                if seq_length > 0:
                    input_ids = input_ids[:, -1:]
                return input_ids
        """
        self.assertCodemod(before, after)

    def test_fresh_name_avoids_names_in_use(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids, seq_length):
                return input_ids[:, cache.get_seq_length():seq_length]
        """
        after = """
            import torch

            def prefill(cache, input_ids, seq_length):
                seq_length_2 = cache.get_seq_length()
                if isinstance(seq_length_2, torch.Tensor):
                    seq_length_2 = int(seq_length_2.item())
                return input_ids[:, seq_length_2:seq_length]
        """
        self.assertCodemod(before, after)

    def test_arithmetic_on_an_inline_call_is_hoisted(self) -> None:
        before = """
            import torch

            def prefill(cache, input_ids):
                m = input_ids.shape[1] - cache.get_seq_length()
                return input_ids[:, -m:]
        """
        after = """
            import torch

            def prefill(cache, input_ids):
                seq_length = cache.get_seq_length()
                if isinstance(seq_length, torch.Tensor):
                    seq_length = int(seq_length.item())
                m = input_ids.shape[1] - seq_length
                return input_ids[:, -m:]
        """
        self.assertCodemod(before, after)


NOT_HOISTED = {
    "lambda": """
        import torch

        def f(cache, x):
            g = lambda: x[:, cache.get_seq_length():]
            return g
    """,
    "comprehension": """
        import torch

        def f(caches, x):
            return [x[:, c.get_seq_length():] for c in caches]
    """,
    "conditional-expression arm": """
        import torch

        def f(cache, x):
            return x[:, cache.get_seq_length():] if cache is not None else x
    """,
    "right side of and/or": """
        import torch

        def f(cache, x):
            if cache is not None and cache.get_seq_length() > 0:
                return x
    """,
    "while test": """
        import torch

        def f(cache, x):
            while cache.get_seq_length() > 0:
                x = x[1:]
    """,
    "elif test": """
        import torch

        def f(cache, x, flag):
            if flag:
                pass
            elif cache.get_seq_length() > 0:
                x = x[1:]
    """,
    "decorator or default argument": """
        import torch

        def f(cache, x, n=x[cache.get_seq_length()]):
            return n
    """,
    "assert": """
        import torch

        def f(cache):
            assert cache.get_seq_length() > 0
    """,
    "evaluation order": """
        import torch

        def f(cache, x):
            return x.update()[:, cache.get_seq_length():]
    """,
    "class body (the hoisted name would be a class attribute, shadowing a base's)": """
        import torch

        class Prompt:
            cache = make_cache()
            tail = ids[:, cache.get_seq_length():]
    """,
    "binding on a one-line block": """
        import torch

        def f(cache, x):
            if x is not None: n = cache.get_seq_length()
            return x[:, n:]
    """,
}


@pytest.mark.parametrize("why", NOT_HOISTED)
def test_refuses_to_move_a_call_whose_evaluation_would_change(why: str) -> None:
    """Each of these must stay untouched and be reported as having no automatic fix, with a reason."""
    source = textwrap.dedent(NOT_HOISTED[why])
    checked = check_text("x.py", source, Settings())
    assert checked.findings, "the use must still be reported"
    assert all(finding.fix.safety is FixSafety.NONE and finding.fix.reason for finding in checked.findings)
    assert fix_text("x.py", source, Settings()) == source


class TestImports(CodemodTest):
    TRANSFORM = InsertIntGuards

    def test_import_added_after_docstring_and_future_imports(self) -> None:
        before = '''
            """Serving helpers."""
            from __future__ import annotations

            import os


            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                return input_ids[:, n:]
        '''
        after = '''
            """Serving helpers."""
            from __future__ import annotations
            import torch

            import os


            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:, n:]
        '''
        self.assertCodemod(before, after)

    def test_import_added_on_top_keeps_header_comment(self) -> None:
        before = """
            # Copyright the authors
            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                return input_ids[:, n:]
        """
        after = """
            # Copyright the authors
            import torch
            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:, n:]
        """
        self.assertCodemod(before, after)

    def test_existing_alias_is_used(self) -> None:
        before = """
            import torch as th

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                return input_ids[:, n:]
        """
        after = """
            import torch as th

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                if isinstance(n, th.Tensor):
                    n = int(n.item())
                return input_ids[:, n:]
        """
        self.assertCodemod(before, after)

    def test_guarded_import_counts_as_a_binding(self) -> None:
        before = """
            if is_torch_available():
                import torch

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                return input_ids[:, n:]
        """
        after = """
            if is_torch_available():
                import torch

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:, n:]
        """
        self.assertCodemod(before, after)

    def test_type_checking_import_is_not_a_binding(self) -> None:
        before = """
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                import torch

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                return input_ids[:, n:]
        """
        after = """
            import torch
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                import torch

            def prefill(cache, input_ids):
                n = cache.get_seq_length()
                if isinstance(n, torch.Tensor):
                    n = int(n.item())
                return input_ids[:, n:]
        """
        self.assertCodemod(before, after)


class TestReturnedValues(CodemodTest):
    TRANSFORM = InsertIntGuards

    BEFORE = """
        import torch

        class Cache:
            def cached_length(self, layer_idx: int = 0) -> int:
                return self.get_seq_length(layer_idx=layer_idx)
    """

    def test_guarding_a_returned_value_is_unsafe(self) -> None:
        """Callers of an accessor may run compiled: changing what it returns is not behaviour-neutral."""
        self.assertCodemod(self.BEFORE, self.BEFORE, expected_skip=True)

    def test_applied_when_asked(self) -> None:
        after = """
            import torch

            class Cache:
                def cached_length(self, layer_idx: int = 0) -> int:
                    seq_length = self.get_seq_length(layer_idx=layer_idx)
                    if isinstance(seq_length, torch.Tensor):
                        seq_length = int(seq_length.item())
                    return seq_length
        """
        self.assertCodemod(self.BEFORE, after, unsafe_fixes=True)


class TestCompiledRegions(CodemodTest):
    TRANSFORM = InsertIntGuards

    BEFORE = """
        import torch

        class Model(torch.nn.Module):
            def forward(self, input_ids, past_key_values):
                past_seen_tokens = past_key_values.get_seq_length()
                return input_ids[:, past_seen_tokens:]
    """

    def test_unsafe_fix_left_alone_by_default(self) -> None:
        self.assertCodemod(self.BEFORE, self.BEFORE, expected_skip=True)

    def test_unsafe_fix_applied_when_asked(self) -> None:
        after = """
            import torch

            class Model(torch.nn.Module):
                def forward(self, input_ids, past_key_values):
                    past_seen_tokens = past_key_values.get_seq_length()
                    if isinstance(past_seen_tokens, torch.Tensor):
                        past_seen_tokens = int(past_seen_tokens.item())
                    return input_ids[:, past_seen_tokens:]
        """
        self.assertCodemod(self.BEFORE, after, unsafe_fixes=True)

    def test_torch_compile_decorator_is_a_compiled_region(self) -> None:
        before = """
            import torch

            @torch.compile(fullgraph=True)
            def step(cache, x):
                n = cache.get_seq_length()
                return x[:, n:]
        """
        self.assertCodemod(before, before, expected_skip=True)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            b"import torch\r\ndef f(cache, x):\r\n    n = cache.get_seq_length()\r\n    return x[:, n:]\r\n",
            b"import torch\r\ndef f(cache, x):\r\n    n = cache.get_seq_length()\r\n"
            b"    if isinstance(n, torch.Tensor):\r\n        n = int(n.item())\r\n    return x[:, n:]\r\n",
            id="crlf",
        ),
        pytest.param(
            b"\xef\xbb\xbfimport torch\ndef f(cache, x):\n    n = cache.get_seq_length()\n    return x[:, n:]\n",
            b"\xef\xbb\xbfimport torch\ndef f(cache, x):\n    n = cache.get_seq_length()\n"
            b"    if isinstance(n, torch.Tensor):\n        n = int(n.item())\n    return x[:, n:]\n",
            id="bom",
        ),
        pytest.param(
            b"import torch\ndef f(cache, x):\n\tn = cache.get_seq_length()\n\treturn x[:, n:]\n",
            b"import torch\ndef f(cache, x):\n\tn = cache.get_seq_length()\n"
            b"\tif isinstance(n, torch.Tensor):\n\t\tn = int(n.item())\n\treturn x[:, n:]\n",
            id="tabs",
        ),
        pytest.param(
            "# -*- coding: latin-1 -*-\nimport torch\ndef f(cache, x):\n    n = cache.get_seq_length()  # \u00e9t\u00e9\n"
            "    return x[:, n:]\n".encode("latin-1"),
            "# -*- coding: latin-1 -*-\nimport torch\ndef f(cache, x):\n    n = cache.get_seq_length()  # \u00e9t\u00e9\n"
            "    if isinstance(n, torch.Tensor):\n        n = int(n.item())\n    return x[:, n:]\n".encode("latin-1"),
            id="latin-1",
        ),
        pytest.param(
            b"import torch\ndef f(cache, x):\n    n = cache.get_seq_length()\n    return x[:, n:]",
            b"import torch\ndef f(cache, x):\n    n = cache.get_seq_length()\n"
            b"    if isinstance(n, torch.Tensor):\n        n = int(n.item())\n    return x[:, n:]",
            id="no-final-newline",
        ),
    ],
)
def test_bytes_outside_the_guard_are_kept(tmp_path: object, before: bytes, after: bytes) -> None:
    from pathlib import Path

    from fixers.rewrite import main

    path = Path(str(tmp_path)) / "model.py"
    path.write_bytes(before)
    assert main([str(path)]) == 0
    assert path.read_bytes() == after
    assert main([str(path)]) == 0
    assert path.read_bytes() == after, "a second run must change nothing"


def test_no_fixable_finding_is_left_after_a_run() -> None:
    """Consistency: after the fixer, the engine finds nothing the fixer could have fixed."""
    from lint_rules.rules import RULES

    for rule in RULES.values():
        for example in rule.invalid:
            fixed = fix_text("x.py", example.source, Settings(unsafe_fixes=True))
            left = check_text("x.py", fixed, Settings(unsafe_fixes=True)).findings
            assert all(finding.fix.safety is FixSafety.NONE for finding in left), (rule.code, example.source)
            assert fix_text("x.py", fixed, Settings(unsafe_fixes=True)) == fixed

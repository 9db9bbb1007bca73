"""Every way the engine obtains a length, crossed with every place a length can be used.

This is the one place the matrix lives: a new source form or use context added here is crossed
with everything else by `tests/test_matrix.py`. Each pair is a module (`Case.module`) that runs
the length through the context inline (`ids[:, cache.get_seq_length():]`) or after a binding
(`length = cache.get_seq_length()` ... `ids[:, length:]`), and states what the engine must say:
the rules it reports, or silence with the reason.

A use context is a method body of `Runner.step(self, cache, caches, ids, flag)` with `{L}` where
the length goes; `{P}` marks where the source form's own statements go (its prelude: a bound
method alias), which is the top of the method unless the context puts it elsewhere.
"""

from __future__ import annotations

import dataclasses
import textwrap

MODULE = """\
import torch
from transformers.modeling_attn_mask_utils import _prepare_4d_causal_attention_mask


def get_cache():
    return None


def past_length(cache):
    return cache.get_seq_length()


helper_alias = past_length


def take(ids, start):
    return ids[:, start:]


class Lengths:
    @staticmethod
    def of(cache):
        return cache.get_seq_length()

    @classmethod
    def of_class(cls, cache):
        return cache.get_seq_length()


PAST = 0


class Runner:
    def past_length(self, cache):
        return cache.get_seq_length()

    {ASYNC}def step(self, cache, caches, ids, flag){RETURNS}:
{BODY}
"""


@dataclasses.dataclass(frozen=True)
class SourceForm:
    name: str
    expression: str
    prelude: str = ""
    """Statements the expression needs before it, in the same scope."""
    needs_async: bool = False
    in_closure: bool = False
    """The prelude stays at the top of the method; the rest of the body (binding and use) goes into a
    nested `def` the method calls, which reads the prelude's names as free variables."""
    silent_because: str = ""
    """Why the form gives no length anywhere (it only looks like a source): every context is silent."""


@dataclasses.dataclass(frozen=True)
class UseContext:
    name: str
    body: str
    """The method body; `{L}` is the length, `{P}` where the prelude goes (default: first)."""
    codes: tuple[str, ...]
    """What the engine reports, inline and bound (empty: silent, and `silent_because` says why)."""
    silent_because: str = ""
    bound_codes: tuple[str, ...] | None = None
    """When the bound variant differs (None: same as inline)."""
    bound_silent_because: str = ""
    allows_await: bool = True
    returns: str = ""
    bindable: bool = True
    """Whether a bound variant exists (a context that is itself the binding has none)."""
    silent_sources: dict[str, str] = dataclasses.field(default_factory=dict)
    """Source forms that this context hides inline, with the reason."""


SOURCE_FORMS = (
    SourceForm("method-on-name", "cache.get_seq_length()"),
    SourceForm("method-on-self-attribute", "self.cache.get_seq_length()"),
    SourceForm("method-on-subscript", "caches[0].get_seq_length()"),
    SourceForm("method-on-call-result", "get_cache().get_seq_length()"),
    SourceForm("with-layer-argument", "cache.get_seq_length(layer_idx=0)"),
    SourceForm("get-query-offset", "cache.get_query_offset(0)"),
    SourceForm("module-helper-returning-one", "past_length(cache)"),
    SourceForm("module-alias-of-a-helper", "helper_alias(cache)"),
    SourceForm(
        "module-helper-shadowed-by-a-local",
        "past_length(cache)",
        prelude="past_length = len",
        silent_because="the method binds `past_length` itself: the call runs `len`, not the module's helper",
    ),
    SourceForm("method-returning-one", "self.past_length(cache)"),
    SourceForm("staticmethod-through-class", "Lengths.of(cache)"),
    SourceForm("classmethod-through-class", "Lengths.of_class(cache)"),
    SourceForm("getattr", 'getattr(cache, "get_seq_length")()'),
    SourceForm("getattr-with-default", 'getattr(cache, "get_seq_length", lambda: 0)()'),
    SourceForm("bound-method-alias", "length_of()", prelude="length_of = cache.get_seq_length"),
    SourceForm(
        "bound-method-alias-in-closure", "length_of()", prelude="length_of = cache.get_seq_length", in_closure=True
    ),
    SourceForm("model-outputs-inline", "self.model(ids, past_key_values=cache).past_key_values.get_seq_length()"),
    SourceForm(
        "model-outputs-bound",
        "outputs.past_key_values.get_seq_length()",
        prelude="outputs = self.model(ids, past_key_values=cache)",
    ),
    SourceForm("model-outputs-renamed-inline", "self.model(ids, cache=cache).cache.get_seq_length()"),
    SourceForm(
        "model-outputs-renamed-bound",
        "outputs.cache.get_seq_length()",
        prelude="outputs = self.model(ids, cache=cache)",
    ),
    SourceForm("ternary", "(cache.get_seq_length() if cache is not None else 0)"),
    SourceForm("parenthesised", "(cache.get_seq_length())"),
    SourceForm("awaited", "(await cache.get_seq_length())", needs_async=True),
)

SLICE, ARITHMETIC, SIZE, TRUTH, CONTRACT = "SLG002", "SLG001", "SLG003", "SLG004", "SLG005"
NOT_FOLLOWED_INTO_CLOSURES = "a nested scope's free variables are not followed (README Limits)"

USE_CONTEXTS = (
    UseContext("slice-bound", "return ids[:, {L}:]", (SLICE,)),
    UseContext("negative-slice-bound", "return ids[:, -{L}:]", (SLICE,)),
    UseContext("index", "return ids[{L}]", (SLICE,)),
    UseContext("int-arithmetic", "return ids.shape[1] - {L}", (ARITHMETIC,)),
    UseContext("keyword-argument", "return take(ids, start={L})", (SLICE,)),
    UseContext("positional-argument", "return take(ids, {L})", (SLICE,)),
    UseContext(
        "transformers-mask-helper", "return _prepare_4d_causal_attention_mask(None, ids.shape, ids, {L})", (ARITHMETIC,)
    ),
    UseContext("torch-arange", "return torch.arange({L}, {L} + 4)", (SIZE,)),
    UseContext("torch-zeros", "return torch.zeros(2, {L})", (SIZE,)),
    UseContext("range", "for position in range({L}):\n    print(position)", (SIZE,)),
    UseContext("if-test", "if {L} > 0:\n    return ids", (TRUTH,)),
    UseContext("while-test", "while {L} > 0:\n    break", (TRUTH,)),
    UseContext("assert", "assert {L} >= 0", (TRUTH,)),
    UseContext("lambda", "window = lambda: ids[:, {L}:]\nreturn window()", (SLICE,), allows_await=False),
    UseContext("comprehension", "return [row[:{L}] for row in ids]", (SLICE,)),
    UseContext("generator-expression", "return sum(position for position in range({L}))", (SIZE,)),
    UseContext("f-string", "print(f'past {{L}}')", (), silent_because="formatting a length is harmless"),
    UseContext(
        "dict-value",
        'return {"past": {L}}',
        (),
        silent_because="containers are not followed (README Limits); storing a length is not a use",
    ),
    UseContext("tuple-compare", "if (ids.shape[0], {L}) == (1, 2):\n    return ids", (TRUTH,)),
    UseContext("or-operand", "return {L} or 0", (TRUTH,)),
    UseContext("walrus", "if (known := {L}) > 0:\n    return ids[:, known:]", (TRUTH, SLICE)),
    UseContext(
        "augmented-assignment", "total = ids.shape[1]\ntotal -= {L}\nreturn ids[:, total:]", (ARITHMETIC, SLICE)
    ),
    UseContext("yield", "yield ids[:, {L}:]", (SLICE,)),
    UseContext("return-annotated-int", "return {L}", (CONTRACT,), returns=" -> int"),
    UseContext("match-case-guard", "match flag:\n    case _ if {L} > 0:\n        return ids", (TRUTH,)),
    UseContext("match-subject", "match {L}:\n    case 0:\n        return ids", (TRUTH,)),
    UseContext("try-finally", "try:\n    return ids[:, {L}:]\nfinally:\n    print(flag)", (SLICE,)),
    UseContext("with-block", "with torch.no_grad():\n    return ids[:, {L}:]", (SLICE,)),
    UseContext("tuple-unpacking", "start, width = {L}, 4\nreturn ids[:, start : start + width]", (SLICE,)),
    UseContext("starred-unpacking", "start, *rest = {L}, 4, 5\nreturn ids[:, start:]", (SLICE,)),
    UseContext("global", "global PAST\nPAST = {L}\nreturn ids[:, PAST:]", (SLICE,)),
    UseContext("one-line-block", "if flag: return ids[:, {L}:]", (SLICE,)),
    UseContext(
        "dead-branch",
        "if False:\n    return ids[:, {L}:]\nreturn ids",
        (),
        silent_because="code under `if False:` never runs",
    ),
    UseContext(
        "local-constant-branch",
        "use_new_cache = False\nif flag and use_new_cache:\n    return ids[:, {L}:]\nreturn ids",
        (),
        silent_because="a name bound once to False makes the `and` false: the branch never runs",
    ),
    UseContext(
        "not-compiling-gate-on-the-host",
        "if not torch.compiler.is_compiling():\n    return ids[:, {L}:]",
        (SLICE,),
    ),
    UseContext(
        "either-operand-of-an-or",
        "if flag is None or isinstance(ids, torch.Tensor):\n    return ids[:, {L}:]",
        (SLICE,),
    ),
    UseContext(
        "nested-def",
        "def window():\n    {P}\n    return ids[:, {L}:]\n\nreturn window()",
        (SLICE,),
        bound_codes=(),
        bound_silent_because=NOT_FOLLOWED_INTO_CLOSURES,
        allows_await=False,
    ),
    UseContext(
        "class-body",
        "class Window:\n    {P}\n    view = ids[:, {L}:]\n\nreturn Window.view",
        (SLICE,),
        bound_codes=(),
        bound_silent_because=NOT_FOLLOWED_INTO_CLOSURES,
        allows_await=False,
        silent_sources={
            "bound-method-alias-in-closure": "a class body does not see the bound methods of the functions around it",
        },
    ),
    UseContext("default-argument", "def window(view=ids[:, {L}:]):\n    return view\n\nreturn window()", (SLICE,)),
)


UNRELATED_CODE = "unrelated = ids.shape[0]\nfor _ in range(2):\n    unrelated = unrelated + 1"
"""Statements that neither make nor read a length, put between the source's statements and the use
in a padded case: the walk must not stop before a use it cannot see coming (`flow/quiet_rest.py`)."""


@dataclasses.dataclass(frozen=True)
class Case:
    source: SourceForm
    context: UseContext
    bound: bool
    padded: bool = False
    """`UNRELATED_CODE` before the use: after the binding (bound), after the prelude (inline), or at
    the top of the body where the context places the prelude itself (`{P}`)."""

    @property
    def id(self) -> str:
        return f"{self.source.name}-{self.context.name}-{'bound' if self.bound else 'inline'}" + (
            "-padded" if self.padded else ""
        )

    @property
    def expected_codes(self) -> tuple[str, ...]:
        if self.source.silent_because or (not self.bound and self.source.name in self.context.silent_sources):
            return ()
        if self.bound and self.context.bound_codes is not None:
            return self.context.bound_codes
        return self.context.codes

    @property
    def silent_because(self) -> str:
        if self.source.silent_because:
            return self.source.silent_because
        if not self.bound and self.source.name in self.context.silent_sources:
            return self.context.silent_sources[self.source.name]
        if self.bound and self.context.bound_codes is not None:
            return self.context.bound_silent_because
        return self.context.silent_because

    @property
    def module(self) -> str:
        body = self.context.body
        prelude = [self.source.prelude] if self.source.prelude and not self.source.in_closure else []
        padding = [UNRELATED_CODE] if self.padded else []
        if self.bound:
            # The binding sits at the top of the method, the use reads the bound name.
            lines = [*prelude, f"length = {self.source.expression}", *padding]
            body = body.replace("{P}\n", "").replace("{L}", "length")
            body = "\n".join([*lines, body])
        elif "{P}" in body:
            indent = body[: body.index("{P}")].rsplit("\n", 1)[-1]
            body = body.replace("{P}\n" + indent, "".join(line + "\n" + indent for line in prelude))
            body = "\n".join([*padding, body.replace("{L}", self.source.expression)])
        else:
            body = "\n".join([*prelude, *padding, body.replace("{L}", self.source.expression)])
        if self.source.in_closure:
            body = "\n".join(
                [self.source.prelude, "def closure():", textwrap.indent(body, " " * 4), "return closure()"]
            )
        return MODULE.format(
            ASYNC="async " if self.source.needs_async else "",
            RETURNS=self.context.returns,
            BODY=textwrap.indent(body, " " * 8),
        )


def cases(padded: bool = False) -> list[Case]:
    """Every pair, inline and bound; `padded`: with `UNRELATED_CODE` before the use."""
    return [
        Case(source, context, bound, padded)
        for source in SOURCE_FORMS
        for context in USE_CONTEXTS
        for bound in (False, True)
        if (context.allows_await or not source.needs_async or bound) and (context.bindable or not bound)
    ]

"""The five rules: each one's documentation and its own valid/invalid examples.

The examples are the rule's tests (tests/test_rules.py runs every one of them) and its
documentation (`python -m lint_rules --explain CODE`, the README table).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class Example(NamedTuple):
    code: str
    why: str = ""
    """For a valid example: why the rule must stay silent."""

    @property
    def source(self) -> str:
        import textwrap  # for the docs and tests, not a check: start-up time

        return textwrap.dedent(self.code).lstrip("\n")


class Rule(NamedTuple):
    code: str
    name: str
    summary: str
    what_it_does: str
    why_bad: str
    example: str
    use_instead: str
    fix_safety: str
    valid: tuple[Example, ...]
    invalid: tuple[Example, ...]
    """Each invalid example marks each reported line with a trailing comment naming its codes
    (`# SLG002`, or `# SLG001, SLG004` for several), which tests/test_rules.py checks exactly."""
    uses: tuple[tuple[str, str], ...] = ()
    """(use, message template): how the rule describes each kind of harmful use it reports."""
    device_fix: str = ""
    """The device-preserving rewrite the fixer applies to some of the rule's uses ("" if none)."""
    used_as: str = "a Python int"
    """What every use the rule reports makes of the length, the end of its messages ("used as ...")."""

    def detail(self, use: str, **fields: object) -> str:
        """What the use is, e.g. "slice bound `-n`"; `passed` is shared: a call into a function that has
        the use, or a chain of calls (`callees`, outermost first) down to it."""
        if use == "passed":
            callees = fields.pop("callees")
            assert isinstance(callees, tuple)
            return PASSED_TEMPLATE.format(callees=" -> ".join(f"`{callee}()`" for callee in callees), **fields)
        return dict(self.uses)[use].format(**fields)

    def message(
        self,
        detail: str,
        method: str,
        line: int,
        compiled_region: str,
        also_from: Sequence[tuple[str, int]] = (),
        only_outside_callers: bool = False,
    ) -> str:
        """`also_from`: the other source calls (method, line) whose values reach the same use;
        `only_outside_callers`: the package's own callers all pass int-length caches."""
        where = f" [compiled region: {compiled_region}]" if compiled_region else ""
        callers = f" [{ONLY_OUTSIDE_CALLERS}]" if only_outside_callers else ""
        origins = origins_text([(method, line), *also_from])
        return f"{detail}: tensor-valued length from {origins} used as {self.used_as}{where}{callers}"


ONLY_OUTSIDE_CALLERS = "the package's own callers pass int-length caches; reported for a caller outside the package"


PASSED_TEMPLATE = "passed as `{parameter}` to {callees} (line {callee_line}), which uses it as {callee_detail}"


def origins_text(origins: Sequence[tuple[str, int]]) -> str:
    """`m()` on line 4; 2 calls of `m()` on line 4 (or on lines 4 and 6); `a()` on line 4 and `b()` on line 6."""
    origins = sorted(origins, key=lambda origin: (origin[1], origin[0]))
    methods = list(dict.fromkeys(method for method, _ in origins))
    if len(methods) == 1:
        lines = list(dict.fromkeys(line for _, line in origins))
        where = f"line {lines[0]}" if len(lines) == 1 else f"lines {and_list([str(line) for line in lines])}"
        calls = f"`{methods[0]}()`" if len(origins) == 1 else f"{len(origins)} calls of `{methods[0]}()`"
        return f"{calls} on {where}"
    return and_list([f"`{method}()` on line {line}" for method, line in origins])


def and_list(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


RULES: dict[str, Rule] = {}

FIX_SAFETY_COMMON = (
    "The fix inserts `if isinstance(n, torch.Tensor): n = int(n.item())` right after the statement that "
    "binds the value (or hoists an inline call into a guarded local). In host-side code (the generation "
    "loop, scripts, serving code) this is a safe fix: one host sync per call, the int contract restored. "
    "Inside a compiled region (a `forward` method, a function under `torch.compile` or `torch.jit`) the guard "
    "adds a graph break and a device sync, so the fix is unsafe there and only applied with `--unsafe-fixes`; "
    "keep the arithmetic on tensors or gate it with `torch.compiler.is_compiling()` instead. A value that is "
    "returned from its function is unsafe to guard there too: every caller, compiled ones included, would get "
    "the synced int (transformers' `Cache.get_query_offset` is called from inside model forwards)."
)


DEVICE_FIX_ARANGE = "`torch.arange(a, a + n, ...)` rewritten as `torch.arange(n, ...) + a`"
FIX_SAFETY_SIZE = FIX_SAFETY_COMMON + (
    " Where the guard would be unsafe, the bounds of `torch.arange(a, a + n, ...)` (also `n + a`, or "
    "`torch.arange(b - n, b, ...)`) are rewritten instead as `torch.arange(n, ...) + a`, keeping `dtype`, "
    "`device` and every other argument: the compile-friendly form upstream transformers uses, identical for "
    "an int, a 0-dim and a shape-(1,) length and free of graph breaks (measured under Inductor), so this "
    "rewrite is safe in compiled regions and on the host and applied by default. A call without `device=` "
    "is rewritten only when its value is moved to a device by the next statement "
    "(`v = v.view(...).to(x.device)`): the arange is then created on that device. Declined, with the reason "
    "in the finding: a single bound (a size), a step, bounds by keyword, a dtype other than int64, a span "
    "that is not a term of the end bound, bounds with calls. Slices, `narrow`, `index_select` and sizes have "
    "no form identical for every value and keep the guard."
)


def _register(rule: Rule) -> Rule:
    RULES[rule.code] = rule
    return rule


SLG001 = _register(
    Rule(
        code="SLG001",
        name="tensor-length-int-arithmetic",
        summary="Int arithmetic on a tensor-valued length",
        uses=(("binary", "int arithmetic `{expr}`"), ("augmented", "int arithmetic (`{target} {op}= ...`)")),
        what_it_does=(
            "Checks for a `get_seq_length()` result combined with a Python int (a literal, `len(...)`, "
            "`x.shape[i]`, `x.size(i)`, an int-annotated name, another such length) by `+ - * // % **` and the like."
        ),
        why_bad=(
            "`StaticCache.get_seq_length()` is annotated `-> int` but returns a tensor once the cache is in use. "
            "`input_ids.shape[1] - past_length` is then a tensor too, and every later use of it as an int is a "
            "hidden device sync, a graph break under `torch.compile`, or a `TypeError`."
        ),
        example="""
            past_length = cache.get_seq_length()
            next_sequence_length = input_ids.shape[1] - past_length
        """,
        use_instead="""
            past_length = cache.get_seq_length()
            if isinstance(past_length, torch.Tensor):
                past_length = int(past_length.item())
            next_sequence_length = input_ids.shape[1] - past_length
        """,
        fix_safety=FIX_SAFETY_COMMON,
        invalid=(
            Example("""
                def prefill(cache, input_ids):
                    past_length = cache.get_seq_length()
                    return input_ids.shape[1] - past_length  # SLG001
            """),
            Example("""
                def chunks(cache, chunk):
                    past_length = cache.get_seq_length()
                    current_length = past_length + chunk.shape[-1]  # SLG001
            """),
            Example("""
                def total(cache, prompt):
                    n: int = len(prompt)
                    m = cache.get_seq_length() * 2 + n  # SLG001
            """),
            Example("""
                def grow(cache, extra):
                    length = cache.get_seq_length()
                    length += len(extra)  # SLG001
            """),
        ),
        valid=(
            Example(
                """
                def cache_position(cache, seq_len):
                    past_seen_tokens = cache.get_seq_length()
                    return torch.arange(seq_len) + past_seen_tokens
                """,
                why="tensor-with-tensor arithmetic stays on the device: the compile-friendly pattern",
            ),
            Example(
                """
                def positions(cache, seq_len):
                    base = torch.ones(seq_len, dtype=torch.long)
                    return base * cache.get_seq_length()
                """,
                why="`base` is bound to a torch call: tensor arithmetic",
            ),
            Example(
                """
                def prefill(cache, input_ids):
                    past_length = int(cache.get_seq_length())
                    return input_ids.shape[1] - past_length
                """,
                why="coerced with int() at the binding",
            ),
            Example(
                """
                def prefill(cache, input_ids, offset):
                    return offset + cache.get_seq_length()
                """,
                why="`offset` may be a tensor: nothing says this is int arithmetic",
            ),
        ),
    )
)

SLG002 = _register(
    Rule(
        code="SLG002",
        name="tensor-length-slice-bound",
        summary="A tensor-valued length used as a slice bound or an index",
        uses=(("slice", "slice bound `{expr}`"), ("index", "index `{expr}`")),
        what_it_does="Checks for a `get_seq_length()` result (or a value computed from it) used in `x[:, -n:]`, `x[n]`, `x[..., a:b]`.",
        why_bad=(
            "Slicing with a one-element tensor goes through `__index__`: a device sync on a GPU, and a graph "
            "break (`Tensor.item()`) under `torch.compile`. In transformers 5.5 `_prefill` passes such a value "
            "to `input_ids[:, -next_sequence_length:]`."
        ),
        example="""
            past_length = cache.get_seq_length()
            new_tokens = input_ids[:, past_length:]
        """,
        use_instead="""
            past_length = cache.get_seq_length()
            if isinstance(past_length, torch.Tensor):
                past_length = int(past_length.item())
            new_tokens = input_ids[:, past_length:]
        """,
        fix_safety=FIX_SAFETY_COMMON,
        invalid=(
            Example("""
                def plain(cache, input_ids):
                    n = cache.get_seq_length()
                    return input_ids[:, n:]  # SLG002
            """),
            Example("""
                def annotated(cache, input_ids):
                    n: "torch.Tensor | int" = cache.get_seq_length()
                    return input_ids[:, -n:]  # SLG002
            """),
            Example("""
                def augmented(caches, input_ids):
                    n = 0
                    for cache in caches:
                        n += cache.get_seq_length()  # SLG001
                    return input_ids[n]  # SLG002
            """),
            Example("""
                def conditional(past_key_values, input_ids):
                    n = past_key_values.get_seq_length() if past_key_values is not None else 0
                    return input_ids[:, n:]  # SLG002
            """),
            Example("""
                def walrus(cache, input_ids):
                    print(n := cache.get_seq_length())
                    return input_ids[:, n:]  # SLG002
            """),
            Example("""
                def unpacking(cache, input_ids):
                    batch, n = input_ids.shape[0], cache.get_seq_length()
                    return input_ids[:batch, n:]  # SLG002
            """),
            Example("""
                class Generator:
                    def step(self, input_ids):
                        self.past = self.cache.get_seq_length()
                        return input_ids[:, self.past:]  # SLG002
            """),
            Example("""
                def arithmetic(model_kwargs, input_ids):
                    past = model_kwargs["past_key_values"].get_seq_length()
                    m = input_ids.shape[1] - past  # SLG001
                    return input_ids[:, -m:]  # SLG002
            """),
            Example("""
                def clamped(cache, input_ids, window):
                    n = abs(cache.get_seq_length())
                    k = n or 0  # SLG004
                    return input_ids[:, k:], input_ids[:, n:]  # SLG002, SLG002
            """),
            Example("""
                def split_call(cache, input_ids):
                    n = (
                        cache
                        .get_seq_length()
                    )
                    return input_ids[..., 1:n]  # SLG002
            """),
            Example("""
                def inline(cache, input_ids):
                    return input_ids[:, cache.get_seq_length():]  # SLG002
            """),
        ),
        valid=(
            Example(
                """
                def guarded(cache, input_ids):
                    n = cache.get_seq_length()
                    if isinstance(n, torch.Tensor):
                        n = int(n.item())
                    return input_ids[:, n:]
                """,
                why="the guard this project's fixer inserts",
            ),
            Example(
                """
                def guarded_is_tensor(cache, input_ids):
                    n = cache.get_seq_length()
                    if torch.is_tensor(n):
                        n = n.item()
                    return input_ids[:, n:]
                """,
                why="the same guard spelled with torch.is_tensor and .item()",
            ),
            Example(
                """
                def coerced(cache, input_ids):
                    a = int(cache.get_seq_length())
                    b = cache.get_seq_length().item()
                    c = operator.index(cache.get_seq_length())
                    d = cache.get_seq_length().tolist()
                    return input_ids[:, a:b], input_ids[c:d]
                """,
                why="coerced to a Python number before use",
            ),
            Example(
                """
                def narrowed(cache, input_ids):
                    n = cache.get_seq_length()
                    if isinstance(n, (int, torch.Tensor)):
                        pass
                    if not isinstance(n, torch.Tensor):
                        return input_ids[:, n:]
                """,
                why="inside a branch where the value is known not to be a tensor",
            ),
            Example(
                """
                def logged(cache, logger):
                    n = cache.get_seq_length()
                    logger.info("cache holds %s tokens", n)
                    print(f"cache holds {n} tokens")
                """,
                why="logging and formatting are not int uses",
            ),
            Example(
                """
                class IntCache:
                    def get_seq_length(self):
                        return self.key_cache[0].shape[-2]

                    def crop(self, input_ids):
                        return input_ids[:, self.get_seq_length():]
                """,
                why="the class overrides get_seq_length with something provably int",
            ),
            Example(
                """
                def rebound(cache, input_ids):
                    n = cache.get_seq_length()
                    n = input_ids.shape[1]
                    return input_ids[:, n:]
                """,
                why="the tainted value was overwritten by an int",
            ),
            Example(
                """
                def update_mask(mask, x, cache):
                    past = cache.get_seq_length() if cache is not None else 0
                    if cache is None:
                        return mask[:, : past + x.shape[1]]
                    return mask
                """,
                why="the call ran only where `cache` is not None: under `if cache is None:` the length is the 0",
            ),
            Example(
                """
                DEBUG = False

                def trim(cache, input_ids):
                    n = cache.get_seq_length()
                    if DEBUG:
                        print(input_ids[:, n:])
                    return input_ids
                    input_ids = input_ids[:, n:]
                """,
                why="dead code: a module constant bound once to False (also `if False:`, `if TYPE_CHECKING:`), "
                "and code after an unconditional `return`",
            ),
        ),
    )
)

SLG003 = _register(
    Rule(
        code="SLG003",
        name="tensor-length-size-argument",
        summary="A tensor-valued length passed where Python needs an int",
        uses=(
            ("size", "size argument of `{callee}()`"),
            ("repetition", "repetition count in `{expr}`"),
            ("comparison", "Python `{callee}()` compares it as an int"),
        ),
        what_it_does=(
            "Checks for a `get_seq_length()` result passed to `range()`, as a size or bound of "
            "`torch.arange/zeros/ones/empty/full/rand*/randint`, `Tensor.new_*`, `.view/.reshape/.expand/"
            ".repeat/.narrow/.split`, as the count in `[v] * n`, or compared by Python's `max()`/`min()`."
        ),
        why_bad=(
            "A shape-(1,) tensor makes `torch.arange(seq_length + past_length)` raise `TypeError` in eager mode "
            "(transformers 5.5 `_prepare_position_ids_for_generation`); a 0-dim one works eagerly but is a "
            "data-dependent operator and a graph break under `torch.compile`, and `range(n)` fails with `fullgraph=True`."
        ),
        example="""
            past_length = cache.get_seq_length()
            position_ids = torch.arange(seq_length + past_length)
        """,
        use_instead="""
            past_length = cache.get_seq_length()
            if isinstance(past_length, torch.Tensor):
                past_length = int(past_length.item())
            position_ids = torch.arange(seq_length + past_length)
        """,
        fix_safety=FIX_SAFETY_SIZE,
        device_fix=DEVICE_FIX_ARANGE,
        invalid=(
            Example("""
                def positions(cache, inputs):
                    seq_length = inputs.shape[1]
                    past_length = cache.get_seq_length()
                    return torch.arange(seq_length + past_length)  # SLG003
            """),
            Example("""
                def sizes(cache, x, b):
                    n = cache.get_seq_length()
                    for _ in range(n):  # SLG003
                        pass
                    torch.zeros((b, n))  # SLG003
                    x.new_ones(n)  # SLG003
                    x.view(b, n)  # SLG003
                    return [0] * n  # SLG003
            """),
            Example("""
                def window(cache, k):
                    n = cache.get_seq_length()
                    start = max(0, n - k)  # SLG003
                    return torch.full((start,), 1.0)  # SLG003
            """),
        ),
        valid=(
            Example(
                """
                def fill(cache, size):
                    return torch.full(size, cache.get_seq_length())
                """,
                why="the fill value of torch.full may be a tensor",
            ),
            Example(
                """
                def device_only(cache, seq_len):
                    return torch.arange(seq_len, device="cpu") + cache.get_seq_length()
                """,
                why="the length is added to a tensor, not passed as a size",
            ),
        ),
    )
)

SLG004 = _register(
    Rule(
        code="SLG004",
        name="tensor-length-truth-test",
        summary="Python control flow on a tensor-valued length",
        uses=(
            ("truth", "Python truth test on `{expr}`"),
            ("match", "`match` on `{expr}`: its `case` patterns compare it in Python"),
        ),
        used_as="a Python branch condition",
        what_it_does=(
            "Checks for a `get_seq_length()` result tested for truth: `if`/`elif`/`while`/`assert`, conditional "
            "expressions, `and`/`or`/`not`, comparisons such as `n > 0` used as a condition, `n or 0`, and "
            "`match n:` with value patterns (`case 0:`)."
        ),
        why_bad=(
            "`bool()` of a tensor is an implicit device sync, and under `torch.compile` a data-dependent branch: "
            "a graph break, or an error with `fullgraph=True`."
        ),
        example="""
            past_length = cache.get_seq_length()
            if past_length > 0:
                input_ids = input_ids[:, -1:]
        """,
        use_instead="""
            past_length = cache.get_seq_length()
            if isinstance(past_length, torch.Tensor):
                past_length = int(past_length.item())
            if past_length > 0:
                input_ids = input_ids[:, -1:]
        """,
        fix_safety=FIX_SAFETY_COMMON,
        invalid=(
            Example("""
                def tests(cache, x, flag):
                    n = cache.get_seq_length()
                    if n > 0:  # SLG004
                        pass
                    elif n == 0:  # SLG004
                        pass
                    while n:  # SLG004
                        break
                    assert n >= 0  # SLG004
                    y = 1 if n else 2  # SLG004
                    z = flag and not n  # SLG004
                    started = n > 0
                    if started:  # SLG004
                        pass
            """),
            Example("""
                def inline(cache):
                    if cache.get_seq_length() > 0:  # SLG004
                        return 1
            """),
            Example("""
                from transformers import DynamicCache

                def first_step(cache):
                    # from transformers 5.25, a DynamicCache built from a config whose first layer is
                    # linear attention counts in a tensor
                    if isinstance(cache, DynamicCache) and cache.get_seq_length() == 0:  # SLG004
                        return True
            """),
        ),
        valid=(
            Example(
                """
                def optional(cache):
                    n = cache.get_seq_length()
                    if n is None:
                        return 0
                    return n
                """,
                why="an identity test does not convert the tensor",
            ),
            Example(
                """
                def int_branch(cache, x):
                    n = cache.get_seq_length()
                    if not isinstance(n, torch.Tensor):
                        if n > 0:
                            return x
                """,
                why="narrowed to a non-tensor",
            ),
            Example(
                """
                class TokenCache:
                    def __init__(self):
                        self.seen = 0

                    def get_seq_length(self):
                        return self.seen

                def first_step(cache, **kwargs):
                    from transformers import DynamicCache

                    is_own = isinstance(cache, TokenCache)
                    if is_own and cache.get_seq_length() == 0:
                        return True
                    if isinstance(kwargs["pkv"], TokenCache) and kwargs["pkv"].get_seq_length() == 0:
                        return True
                    if DynamicCache().get_seq_length() == 0:
                        return True
                """,
                why="an int-length class: the package's own counter, narrowed through a flag variable and a "
                "subscript receiver, and a `DynamicCache` built without a config",
            ),
            Example(
                """
                class PositionalEmbedding(nn.Module):
                    def forward(self, cache):
                        max_pos = self.offset + cache.get_seq_length()
                        if not (torch.compiler.is_compiling() and torch.is_tensor(max_pos)) and max_pos > self.size:
                            self.grow(max_pos)
                """,
                why="gated as the rules advise for a compiled region: while compiling the test runs only for an "
                "int, and eagerly the gate's author keeps the tensor (transformers' m2m_100, xglm, kosmos2)",
            ),
        ),
    )
)

SLG005 = _register(
    Rule(
        code="SLG005",
        name="tensor-length-int-contract",
        summary="An int contract broken by a tensor-valued length",
        uses=(
            ("bound", "bound to `{target}`, declared `int`"),
            ("annotated", "bound to `{target}: int`"),
            ("returned", "returned from a function annotated `-> int`"),
            ("isinstance", "`{expr}` is False for a tensor"),
        ),
        what_it_does=(
            "Checks for a `get_seq_length()` result tested with `isinstance(n, int)`, returned from a function "
            "annotated `-> int` (or `int | None`), or bound to an `int`-annotated name or attribute."
        ),
        why_bad=(
            "`isinstance(n, int)` is silently `False` for a tensor, so another branch runs; a function or "
            "attribute annotated `int` passes the tensor on to callers that trust the annotation."
        ),
        example="""
            def past_length(self) -> int:
                return self.cache.get_seq_length()
        """,
        use_instead="""
            def past_length(self) -> int:
                seq_length = self.cache.get_seq_length()
                if isinstance(seq_length, torch.Tensor):
                    seq_length = int(seq_length.item())
                return seq_length
        """,
        fix_safety=FIX_SAFETY_COMMON,
        invalid=(
            Example("""
                def contract(cache, x) -> int:
                    n = cache.get_seq_length()
                    if isinstance(n, int):  # SLG005
                        pass
                    return n  # SLG005
            """),
            Example("""
                class State:
                    length: int

                    def update(self, cache) -> None:
                        self.length = cache.get_seq_length()  # SLG005
                        m: int = cache.get_seq_length()  # SLG005
            """),
            Example("""
                def optional(cache) -> int | None:
                    return cache.get_seq_length()  # SLG005
            """),
        ),
        valid=(
            Example(
                """
                class Layer:
                    def get_seq_length(self) -> int:
                        return self.inner.get_seq_length()
                """,
                why="a source method forwarding its own result is the definition, not a use",
            ),
            Example(
                """
                def _get_seq_length(self, layer_idx: int = 0) -> int:
                    return self.layers[0].get_seq_length()
                """,
                why="the same, written as a function patched onto a cache class",
            ),
            Example(
                """
                def patch(cache_cls):
                    def _forwarded_length(self, layer_idx: int = 0) -> int:
                        return self.layers[0].get_seq_length()

                    cache_cls.get_seq_length = _forwarded_length
                """,
                why="the same, nested and installed as the length method under another name (easydel's patch)",
            ),
            Example(
                """
                def annotated_then_guarded(cache) -> int:
                    n: int = cache.get_seq_length()
                    if isinstance(n, torch.Tensor):
                        n = int(n.item())
                    return n
                """,
                why="the guard right after the binding restores the contract",
            ),
            Example(
                """
                def either(cache):
                    n = cache.get_seq_length()
                    return isinstance(n, (int, torch.Tensor))
                """,
                why="the check admits a tensor",
            ),
        ),
    )
)


ALL_CODES: tuple[str, ...] = tuple(RULES)
"""Every rule's code, in order: what `select` defaults to and what the configuration accepts."""
INTERNAL_ERROR_CODE = "SLG900"
"""Not a rule: the flake8 plugin's one finding on line 1 of a file the engine failed on (the checker and
the fixer report such a file as an error instead)."""
DECLARATION_REFUSED_CODE = "SLG901"
"""Not a rule: the flake8 plugin's finding at the line of a file that refuses the `int-length-caches`
declaration (the checker and the fixer report such a file as an error, exit status 2)."""


def rule_table() -> str:
    """The README's rule table, made from the rules themselves (tests/test_readme.py keeps them equal)."""
    rows = [
        "| Code | Name | What it catches | Fix | Fix safety |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in RULES.values():
        fix = "int guard after the binding (or the call hoisted into a guarded local)"
        safety = "safe in host code; unsafe in a compiled region"
        if rule.device_fix:
            fix += f"; where that is unsafe, {rule.device_fix}"
            safety = "guard safe in host code, unsafe in a compiled region; rewrite safe in both"
        rows.append(f"| {rule.code} | `{rule.name}` | {rule.summary} | {fix} | {safety} |")
    return "\n".join(rows) + "\n"

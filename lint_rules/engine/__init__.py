"""The detection engine: follows each `get_seq_length()` result through a module and reports where
it is used as a Python int.

Every adapter calls `analyze_tree` with the tree it parsed (flake8 hands the plugin its own): the
flake8 plugin, the standalone checker and the fixer; `analyze_source` parses first. One file at a
time, from its one `ast` tree:

- `module_facts`: what the module's tree tells (definitions, call graph and compiled reach, class
  facts, torch aliases, the lines that mention a source), built once and read-only;
- `module_run`: one run's state above the facts: the origins found and their fix plans, the
  summaries, the scopes to walk and their caches, the loader of the package's other modules;
- `scope`, `taint`, `summary`: the data shared by the walk (a scope, origins and the state at one
  point, a function's summary), low modules that import no higher one;
- `scopes`: what a function's header and class tell on entry, and `caller_arguments`: what every
  caller of a module-private or nested function passes for a parameter;
- `walker` and `values`: the forward, flow-sensitive taint walk of statements and expressions;
- `uses`: the harmful uses, one method per kind, worded by the rules of `lint_rules.rules`;
- `summaries`: what a function does with its parameters and returns, for its callers;
- `declarations`: what `[tool.seqlen-guard]` declares (`int-length-caches`, `int-length-classes`)
  as facts about receivers, and the refusal of a declaration the module's code contradicts;
- `fixplan`: how each source call can be fixed (guard, hoist or nothing), and how safely, from the
  origin and its run (`origin_fix_plan`).

The public API below is all that the adapters (`lint_rules.checking`, `flake8_plugin`, `files`,
`noqa`, `settings`) and the fixer import; the modules behind it are the engine's own.
"""

from lint_rules.engine.analysis import analyze_source, analyze_tree
from lint_rules.engine.declarations import NO_DECLARATIONS, DeclarationRefused, Declarations
from lint_rules.engine.definitions import first_line_of, statements_at
from lint_rules.engine.deviceplan import rewritten_call
from lint_rules.engine.imports import STAMPS, read_bytes
from lint_rules.engine.module_text import DEFAULT_SOURCE_METHODS, mentions_any, torch_bindings
from lint_rules.engine.source_text import SourceText

__all__ = [
    "DEFAULT_SOURCE_METHODS",
    "NO_DECLARATIONS",
    "STAMPS",
    "DeclarationRefused",
    "Declarations",
    "SourceText",
    "analyze_source",
    "analyze_tree",
    "first_line_of",
    "mentions_any",
    "read_bytes",
    "rewritten_call",
    "statements_at",
    "torch_bindings",
]

"""The detection engine: follows each `get_seq_length()` result through a module and reports where
it is used as a Python int.

Every adapter calls `analyze_tree` with the tree it parsed (flake8 hands the plugin its own): the
flake8 plugin, the standalone checker and the fixer; `analyze_source` parses first. One file at a
time, from its one `ast` tree:

Its folders are its layers, bottom first; a module imports only its own layer or those below:

- `facts/`: read-only facts, built once per module: its text and tree (`source_text`,
  `module_text`, `definitions`, `expressions`), the transformers releases and their cache classes
  (`releases`, `caches`), whose length is an int (`classes`, `attributes`, `counters`, the
  `attribute_*` receivers), the call graph and compiled reach across the package (`callgraph`,
  `package`, `package_methods`), the declarations, all gathered in `module_facts`;
- `flow/`: the flow through a function: the data the walk shares (`scope`, `taint`, `summary`),
  what holds on a function's entry (`function_entry`, `caller_arguments`, `closures`), the walk of
  statements and expressions (`walker`, `values`, `narrowing`, `never_none`, `operands`), the harmful
  uses (`uses`), what a function does for its callers (`summarizer`), and one module's run above
  its facts (`module_run`: origins, fix plans, summaries, the loader of the package's modules);
- `fixes/`: how each source call can be fixed (guard, hoist or nothing), and how safely
  (`fixplan`), and the device rewrite where a guard would be unsafe (`deviceplan`);
- `analysis`: the run: the module's facts, its run, its findings.

The public API below is all that the adapters (`lint_rules.checking`, `flake8_plugin`, `files`,
`noqa`, `settings`) and the fixer import; the modules behind it are the engine's own.
"""

from lint_rules.engine.analysis import analyze_source, analyze_tree
from lint_rules.engine.facts.declarations import NO_DECLARATIONS, DeclarationRefused, Declarations
from lint_rules.engine.facts.definitions import first_line_of, statements_at
from lint_rules.engine.facts.module_files import STAMPS, read_bytes
from lint_rules.engine.facts.module_text import DEFAULT_SOURCE_METHODS, mentions_any, torch_bindings
from lint_rules.engine.facts.source_text import SourceText
from lint_rules.engine.fixes.deviceplan import rewritten_call

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

"""The detection engine: follows each `get_seq_length()` result through a module and reports where
it is used as a Python int.

Every adapter calls `analyze_tree` with the tree it parsed (flake8 hands the plugin its own): the
flake8 plugin, the standalone checker and the fixer; `analyze_source` parses first. One file at a
time, from its one `ast` tree:

- `module_facts`: what the whole module tells (definitions, call graph and compiled reach, class
  facts, summaries), built once;
- `scopes`: the module body, classes and functions that mention a source, and their headers;
- `walker` and `values`: the forward, flow-sensitive taint walk of statements and expressions;
- `uses`: the harmful uses, one method per kind, worded by the rules of `lint_rules.rules`;
- `summaries`: what a function does with its parameters and returns, for its callers;
- `fixplan`: how each source call can be fixed (guard, hoist or nothing), and how safely.
"""

from lint_rules.engine.analysis import analyze_source, analyze_tree

__all__ = ["analyze_source", "analyze_tree"]

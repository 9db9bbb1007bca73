"""The exit statuses of both commands (`seqlen-guard`, `seqlen-guard-fix`), one definition.

`lint_rules.interrupts` imports this before anything heavy, so it imports nothing itself.
"""

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
"""The checker found something; the fixer left a finding unfixed, or `--check`/`--diff` would change a file."""
EXIT_ERROR = 2
"""A usage or configuration error, an unknown rule, a file that could not be read, parsed or fixed, or a
file that refuses the `int-length-caches` declaration (it shows a tensor-length cache)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C, as a shell reports a command ended by SIGINT."""
EXIT_BROKEN_PIPE = 141
"""What a shell reports for a command killed by SIGPIPE, as `git log | head` leaves git."""

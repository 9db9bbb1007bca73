"""The flow through a function: scopes, the taint state, the walk of statements and values, the uses, the summaries, one module's run."""

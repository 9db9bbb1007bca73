"""Read-only facts: the module's text and tree, its definitions, classes, imports and package, the transformers releases."""

"""parley's engine: everything but the app and the command line, in layers (see the README's
"How the code is laid out" and the import-linter contracts in pyproject.toml)."""

"""parley's engine: everything but the app and the command line, in layers (see docs/architecture.md,
"How the code is laid out" and the import-linter contracts in pyproject.toml)."""

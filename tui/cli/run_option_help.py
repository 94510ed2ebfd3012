"""What the options of a run that are not the batch's own mean, in words, written once: `--strict`
and `--db`, which `parley run` (parley.tui.cli.run_command, the `--db` of parley.tui.cli.command_io)
and the pytest plugin (`--parley-strict`, `--parley-db`) take with the same meanings. The batch's
options are declared in parley.core.option_declarations. Plain strings, so the plugin can declare
its options at every pytest start without importing click.
"""

from __future__ import annotations

__all__ = ["RUN_OPTION_HELP"]

RUN_OPTION_HELP: dict[str, str] = {
    "strict": "Unverified conversations (nothing about the bot was checked) and simulator faults fail the exit code too.",
    "db": "SQLite database (default: $PARLEY_DB, else sessions/parley.db).",
}

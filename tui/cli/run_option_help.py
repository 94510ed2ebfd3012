"""What the options of a batch mean, in words, written once: `parley run`'s declarations
(parley.tui.cli.batch_options, parley.tui.cli.run_command, the `--db` of parley.tui.cli.command_io)
and the pytest plugin's `--parley-*` options (parley.tui.pytest_plugin), which take the same
values with the same meanings, read them from here. Plain strings, so the plugin can declare its
options at every pytest start without importing click.
"""

from __future__ import annotations

__all__ = ["RUN_OPTION_HELP"]

RUN_OPTION_HELP: dict[str, str] = {
    "bot": (
        "The bot under test: a MODEL runs parley's built-in order bot (tools, order database); "
        "with --bot-prompt, a prompt bot; a Python callable called in-process: python:PACKAGE.MODULE:NAME "
        "(imported once, before anything runs); or a connector to a deployed chatbot: rasa:URL (a Rasa REST "
        "webhook), taskyto:URL (a Taskyto server), http:FILE.yaml (any HTTP API described in YAML)."
    ),
    "user": "Model of the simulated customer; `profile` uses each profile's own llm: model.",
    "judge": "Model of the judge (offline: scores from the checks alone).",
    "bot-timeout": (
        "A connector's limit per HTTP call, connect to last byte, and a Python bot's per call; a call past it ends "
        "the conversation as bot_error (an http: file's own `timeout` wins)."
    ),
    "concurrency": "Most conversations in flight at once. Lowered automatically on rate limits (429s), raised back as calls succeed.",
    "max-turns": "Bot answers per conversation before it stops with max_turns.",
    "timeout": (
        "Wall-clock limit of each conversation, a hung model call included (recorded as timeout). The judge gets the same limit of its own."
    ),
    "trials": "Run each conversation k times with distinct seeds; the report shows pass^k beside pass^1.",
    "seed": "Batch seed: the same seed and files give the same conversations (offline: byte for byte).",
    "strict": "Unverified conversations (nothing about the bot was checked) and simulator faults fail the exit code too.",
    "db": "SQLite database (default: $PARLEY_DB, else sessions/parley.db).",
    "rules": (
        "Sensei rule files (a file, or a folder searched for .yaml/.yml): each `conversations: 1` rule is a check "
        "of each conversation (`rule:FILE`), decided as it ends; pair (2) and batch (all) rules are decided once every "
        "conversation is in, and a failed one fails the exit code. Rules that need a model ask --judge's; offline they are not run."
    ),
}

"""The live chat's slash commands: parsing, help, did-you-mean, and their structured results.

Pure functions only; `parley.core.chat.session.ChatSession` does the I/O (the World's API, files) and
hands the data to the builders here. The TUI renders a `CommandResult` by its `kind`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

CommandKind = Literal["table", "text", "json", "exit", "error"]


class CommandResult(BaseModel):
    """What a slash command (or a failed chat turn) produced, for the TUI to render."""

    kind: CommandKind
    command: str | None = None  # "/database"; None for a failed chat turn
    title: str | None = None
    columns: list[str] = Field(default_factory=list)  # kind "table"
    rows: list[list[str]] = Field(default_factory=list)  # kind "table"
    text: str | None = None  # kind "text"/"error"/"exit", or a one-line summary
    data: Any = None  # kind "json" (and the raw data behind a table)
    path: str | None = None  # /export: the file written


class CommandSpec(BaseModel):
    name: str  # without the slash
    usage: str
    summary: str
    argument: str | None = None  # what the required argument is, e.g. "an order id"
    example: str | None = None


COMMANDS: dict[str, CommandSpec] = {
    spec.name: spec
    for spec in [
        CommandSpec(name="tables", usage="/tables", summary="The world's tables, with how many records each holds"),
        CommandSpec(
            name="table", usage="/table <name>", summary="The records of one table", argument="a table's name", example="/table customers"
        ),
        CommandSpec(
            name="record",
            usage="/record <table>/<key>",
            summary="One record, as JSON",
            argument="a record as TABLE/KEY",
            example="/record customers/KEY",
        ),
        CommandSpec(
            name="customer",
            usage="/customer <customer_id>",
            summary="Chat as another customer (clears the conversation)",
            argument="a customer id",
            example="/customer ID",
        ),
        CommandSpec(name="metrics", usage="/metrics", summary="Tokens, tool calls and latency of this session"),
        CommandSpec(name="reset", usage="/reset", summary="Clear the conversation and restore the world's data"),
        CommandSpec(name="export", usage="/export", summary="Save the conversation as a timestamped JSON file"),
        CommandSpec(name="playbook", usage="/playbook", summary="Save the conversation as a playbook to edit and run: the chat as a test"),
        CommandSpec(name="help", usage="/help", summary="Show this help"),
        CommandSpec(name="exit", usage="/exit", summary="End this chat (it stays saved); ctrl+n starts a new one"),
        CommandSpec(name="quit", usage="/quit", summary="Quit parley"),
    ]
}
"""The commands every world's chat has; a world adds its own (parley.core.world.ChatCommand)."""


def commands_for(world_commands: Iterable[CommandSpec]) -> dict[str, CommandSpec]:
    """The chat's commands on a world: the world's own first (as its users know them), then these."""
    found = {spec.name: spec for spec in world_commands}
    for name, spec in COMMANDS.items():
        found.setdefault(name, spec)
    return found


_COMMAND_LINE = re.compile(r"^/(\S*)\s*(.*)$", re.DOTALL)


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def parse_command(text: str) -> tuple[str, str]:
    """("order", "ORD-1003") from "/order ORD-1003"; the name lowercased, the argument stripped."""
    match = _COMMAND_LINE.match(text.strip())
    if not match:
        return "", ""
    return match.group(1).lower(), match.group(2).strip()


def suggest(name: str, commands: Mapping[str, CommandSpec] = COMMANDS) -> str | None:
    """The command a near-miss most likely meant ("tabels" -> "tables")."""
    if not name:
        return None
    close = difflib.get_close_matches(name.lower(), list(commands), n=1, cutoff=0.6)
    if close:
        return close[0]
    prefixed = [c for c in commands if c.startswith(name.lower())]
    return prefixed[0] if len(prefixed) == 1 else None


def unknown_command(name: str, commands: Mapping[str, CommandSpec] = COMMANDS) -> CommandResult:
    shown = f"/{name}" if name else "/"
    guess = suggest(name, commands)
    hint = f" Did you mean /{guess}?" if guess else ""
    return CommandResult(kind="error", command=shown, text=f"Unknown command {shown}.{hint} Type /help to see the commands.")


def missing_argument(name: str, commands: Mapping[str, CommandSpec] = COMMANDS) -> CommandResult:
    spec = commands[name]
    return CommandResult(
        kind="error",
        command=f"/{name}",
        text=f"/{name} needs {spec.argument}, e.g. {spec.example}",
    )


def help_result(commands: Mapping[str, CommandSpec] = COMMANDS) -> CommandResult:
    width = max(len(s.usage) for s in commands.values())
    lines = ["Type a message to talk to the bot, or one of these commands:"]
    lines += [f"  {s.usage.ljust(width)}  {s.summary}" for s in commands.values()]
    return CommandResult(kind="text", command="/help", title="Commands", text="\n".join(lines))


def records_table(command: str, title: str, rows: Sequence[Mapping[str, Any]], limit: int = 200) -> CommandResult:
    """Records as a table: one column per field (json fields written compactly), at most `limit` rows."""
    columns: list[str] = list(dict.fromkeys(key for row in rows for key in row))
    shown = [[_cell(row.get(column)) for column in columns] for row in rows[:limit]]
    more = f" (the first {limit} of {len(rows)})" if len(rows) > limit else ""
    return CommandResult(kind="table", command=command, title=title + more, columns=columns, rows=shown, data=list(rows[:limit]))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _unreported(count: int) -> str:
    if not count:
        return "0"
    return f"{count} (the server sent no usage; token totals are a lower bound)"


def metrics_table(metrics: Mapping[str, Any]) -> CommandResult:
    usage = metrics.get("usage") or {}
    cost = usage.get("cost_usd")
    by_name = metrics.get("tool_calls_by_name") or {}
    rows = [
        ["Customer", str(metrics.get("customer_id"))],
        ["Bot model", str(metrics.get("bot_model"))],
        ["Turns", str(metrics.get("turns"))],
        ["Model calls", str(usage.get("calls", 0))],
        ["Input tokens", str(usage.get("input_tokens", 0))],
        ["Output tokens", str(usage.get("output_tokens", 0))],
        ["Total tokens", str(usage.get("input_tokens", 0) + usage.get("output_tokens", 0))],
        ["Calls without token counts", _unreported(usage.get("unreported_calls", 0))],
        ["Cost (USD)", "unknown" if cost is None else f"{cost:.6f}"],
        ["Tool calls", str(metrics.get("tool_calls", 0))],
        ["Tool calls by name", ", ".join(f"{k} {v}" for k, v in sorted(by_name.items())) or "-"],
        ["Tool errors", str(metrics.get("tool_errors", 0))],
        ["Refused by policy", str(metrics.get("refused", 0))],
        ["Bot latency, last (s)", f"{metrics.get('bot_latency_last_s', 0.0):.3f}"],
        ["Bot latency, mean (s)", f"{metrics.get('bot_latency_mean_s', 0.0):.3f}"],
        ["Bot latency, total (s)", f"{metrics.get('bot_latency_total_s', 0.0):.3f}"],
    ]
    return CommandResult(
        kind="table", command="/metrics", title="Session metrics", columns=["Metric", "Value"], rows=rows, data=dict(metrics)
    )

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
        CommandSpec(name="database", usage="/database", summary="All orders with cancellation eligibility"),
        CommandSpec(name="orders", usage="/orders [customer_id]", summary="A customer's orders (default: the current one)"),
        CommandSpec(
            name="order", usage="/order <order_id>", summary="Details of one order", argument="an order id", example="/order ORD-1003"
        ),
        CommandSpec(
            name="customer",
            usage="/customer <customer_id>",
            summary="Chat as another customer (clears the conversation)",
            argument="a customer id",
            example="/customer C-200",
        ),
        CommandSpec(name="metrics", usage="/metrics", summary="Tokens, tool calls and latency of this session"),
        CommandSpec(name="reset", usage="/reset", summary="Clear the conversation and restore the order database"),
        CommandSpec(name="export", usage="/export", summary="Save the conversation as a timestamped JSON file"),
        CommandSpec(name="playbook", usage="/playbook", summary="Save the conversation as a playbook to edit and run: the chat as a test"),
        CommandSpec(name="help", usage="/help", summary="Show this help"),
        CommandSpec(name="exit", usage="/exit", summary="End this chat (it stays saved); ctrl+n starts a new one"),
        CommandSpec(name="quit", usage="/quit", summary="Quit parley"),
    ]
}

_COMMAND_LINE = re.compile(r"^/(\S*)\s*(.*)$", re.DOTALL)
_CUSTOMER_ARG = re.compile(r"^(?:c(?:ustomer)?)?\s*[-_]?\s*([0-9]{1,10})$", re.IGNORECASE)
_ORDER_ARG = re.compile(r"^(?:[o0]rd(?:er)?)?\s*[-_#]?\s*([0-9]{1,10})$", re.IGNORECASE)


def is_command(text: str) -> bool:
    return text.lstrip().startswith("/")


def parse_command(text: str) -> tuple[str, str]:
    """("order", "ORD-1003") from "/order ORD-1003"; the name lowercased, the argument stripped."""
    match = _COMMAND_LINE.match(text.strip())
    if not match:
        return "", ""
    return match.group(1).lower(), match.group(2).strip()


def suggest(name: str) -> str | None:
    """The command a near-miss most likely meant ("databse" -> "database")."""
    if not name:
        return None
    close = difflib.get_close_matches(name.lower(), list(COMMANDS), n=1, cutoff=0.6)
    if close:
        return close[0]
    prefixed = [c for c in COMMANDS if c.startswith(name.lower())]
    return prefixed[0] if len(prefixed) == 1 else None


def unknown_command(name: str) -> CommandResult:
    shown = f"/{name}" if name else "/"
    guess = suggest(name)
    hint = f" Did you mean /{guess}?" if guess else ""
    return CommandResult(kind="error", command=shown, text=f"Unknown command {shown}.{hint} Type /help to see the commands.")


def missing_argument(name: str) -> CommandResult:
    spec = COMMANDS[name]
    return CommandResult(
        kind="error",
        command=f"/{name}",
        text=f"/{name} needs {spec.argument}, e.g. {spec.example}",
    )


def help_result() -> CommandResult:
    width = max(len(s.usage) for s in COMMANDS.values())
    lines = ["Type a message to talk to the bot, or one of these commands:"]
    lines += [f"  {s.usage.ljust(width)}  {s.summary}" for s in COMMANDS.values()]
    return CommandResult(kind="text", command="/help", title="Commands", text="\n".join(lines))


def normalize_order_id(text: str) -> str | None:
    """ORD-1003 from "ORD-1003", "ord 1003", "1003", "#1003"; None when it is no order id."""
    match = _ORDER_ARG.match(text.strip())
    return f"ORD-{match.group(1)}" if match else None


def normalize_customer_id(text: str) -> str | None:
    """C-200 from "C-200", "c200", "200"; None when it is no customer id."""
    match = _CUSTOMER_ARG.match(text.strip())
    return f"C-{match.group(1)}" if match else None


# ---- tables from the order API's data ---------------------------------------------------

ORDER_COLUMNS = ["Order", "Customer", "Placed", "Age (days)", "Status", "Total", "Cancellable", "Why"]


def _yes_no(check: Mapping[str, Any] | None) -> tuple[str, str]:
    if not check:
        return "?", ""
    return ("yes" if check.get("eligible") else "no"), str(check.get("reason") or "")


def order_row(order: Mapping[str, Any], check: Mapping[str, Any] | None) -> list[str]:
    cancellable, why = _yes_no(check)
    return [
        str(order.get("id")),
        str(order.get("customer_id")),
        str(order.get("placed_date")),
        str(order.get("age_days")),
        str(order.get("status")),
        f"{float(order.get('total', 0)):.2f} {order.get('currency', '')}".strip(),
        cancellable,
        why,
    ]


def orders_table(
    command: str, title: str, orders: Iterable[Mapping[str, Any]], checks: Mapping[str, Mapping[str, Any] | None]
) -> CommandResult:
    data = list(orders)
    rows = [order_row(o, checks.get(str(o.get("id")))) for o in data]
    return CommandResult(kind="table", command=command, title=title, columns=list(ORDER_COLUMNS), rows=rows, data=data)


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


def known_customers(orders: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted({str(o.get("customer_id")) for o in orders})

"""`parley sessions`: browse stored live chats and batch conversations.

    parley sessions list [--limit N] [--text T] [--profile NAME] [--outcome O] [--since WHEN]
    parley sessions show ID            transcript, tool calls, verdict with every check
    parley sessions export ID [--output FILE]    the record as JSON

IDs may be shortened to a unique prefix of 6 characters or more. The rendering helpers here
(`print_transcript`, `print_verdict`) are shared with `parley run --single`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

import click

from parley.core.errors import ParleyError
from parley.core.records import OUTCOME_FILTERS

DB_OPTION_HELP = "SQLite database (default: $PARLEY_DB, else sessions/parley.db)."
_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
CHECK_MARKS = {"pass": "✓", "fail": "✗", "not_applicable": "–", "not_run": "·", "error": "!"}
CHECK_LABELS = {"not_applicable": "not applicable", "not_run": "not run"}
OUTCOME_STYLES = {
    "passed": "green",
    "failed": "red",
    "bot_error": "red",
    "unverified": "cyan",
    "user_fault": "magenta",
    "user_error": "yellow",
    "infrastructure_error": "yellow",
    "cancelled": "yellow",
    "evaluation_error": "yellow",
    "error": "yellow",
}


def db_option(command: Any) -> Any:
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="PATH",
        help=DB_OPTION_HELP,
    )(command)


def open_store(db_path: Path | None, *, read_only: bool = False) -> Any:
    """The store at `db_path` (default as Store.open), with parley's log file beside it; `read_only`
    for commands that only read, which then work on a read-only file or file system too."""
    from parley.core.settings import settings
    from parley.core.store import Store
    from parley.tui.cli.log_file import configure_logging

    if not read_only:  # a read-only folder takes no log file either
        configure_logging(db_path or settings().db_path)
    return Store.open(db_path, read_only=read_only)


def console(err: bool = False) -> Any:
    """The rich console a command prints with (stdout, or stderr with `err`); a closed stdout
    ends the command quietly (parley.tui.cli.closed_pipe)."""
    from parley.tui.cli.closed_pipe import PipeConsole

    out = PipeConsole(stderr=err, highlight=False, soft_wrap=True)
    if not out.is_terminal:  # piped or captured: do not squeeze tables into 80 columns
        out = PipeConsole(stderr=err, highlight=False, soft_wrap=True, width=max(out.width, 140))
    return out


def parse_since(ctx: click.Context | None, param: click.Parameter | None, value: str | None) -> dt.datetime | None:
    """YYYY-MM-DD, an ISO date-time, or a relative `30m`, `12h`, `7d`, `2w` (ago)."""
    if value is None:
        return None
    match = _RELATIVE.match(value)
    if match:
        amount, unit = int(match.group(1)), match.group(2).lower()
        return dt.datetime.now(dt.UTC) - dt.timedelta(**{_UNITS[unit]: amount})
    try:
        when = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date; use YYYY-MM-DD, an ISO time, or 12h / 7d / 2w") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _short_time(value: dt.datetime) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _clip(text: str | None, limit: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- shared rendering ----------------------------------------------------------------------------


def tool_line(record: Any) -> str:
    """`tool cancel_order(order_id=ORD-1002) -> ok: {...}` for a ToolCallRecord."""
    args = record.arguments if record.arguments is not None else record.arguments_raw
    if isinstance(args, dict):
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
    else:
        shown = str(args)
    if record.ok:
        result = "ok: " + _clip(record.result, 160)
    else:
        result = ("refused: " if record.refused else "error: ") + _clip(record.result, 160)
    return f"tool {record.name}({shown}) -> {result}"


def print_transcript(out: Any, conversation: Any) -> None:
    """Customer and bot lines in order, each tool call (with its result) where it was made."""
    from rich.markup import escape

    records = {r.call_id: r for r in conversation.tool_calls}
    shown_calls: set[str] = set()
    if conversation.system_prompt:
        out.print(f"[dim]system prompt: {escape(_clip(conversation.system_prompt, 100))}[/dim]")
    for message in conversation.messages:
        if message.role == "user":
            out.print(f"[bold cyan]customer:[/bold cyan] {escape(message.content or '')}")
        elif message.role == "assistant":
            if message.content:
                out.print(f"[bold magenta]bot:[/bold magenta] {escape(message.content)}")
            for call in message.tool_calls:
                record = records.get(call.id)
                if record is not None:
                    shown_calls.add(call.id)
                    out.print(f"  [yellow]{escape(tool_line(record))}[/yellow]")
                else:
                    out.print(f"  [yellow]tool {escape(call.name)}({escape(call.arguments)}) (injected or not run)[/yellow]")
        elif message.role == "tool" and message.tool_call_id not in records:
            out.print(f"  [dim]tool result: {escape(_clip(message.content, 160))}[/dim]")
    for record in conversation.tool_calls:
        if record.call_id not in shown_calls:
            out.print(f"  [yellow]{escape(tool_line(record))}[/yellow]")


def print_verdict(out: Any, verdict: Any, stop_reason: str | None = None, error: str | None = None, metadata: Any = None) -> None:
    """The verdict's outcome and score, then every check with its outcome and reason, and the
    notes the conversation carries (`metadata`: the goals its offline customer only stated)."""
    from rich.markup import escape

    from parley.core.users import only_stated_note_of

    ended = f"ended: {stop_reason}" + (f" ({error})" if error else "") if stop_reason else ""
    if verdict is None:
        out.print(f"[bold]verdict:[/bold] not evaluated. {escape(ended)}")
        return
    style = OUTCOME_STYLES.get(verdict.outcome, "white")
    score = f", score {verdict.score}" if verdict.score is not None else ", no score"
    out.print(f"[bold]verdict:[/bold] [{style}]{verdict.outcome}[/{style}]{score}. {escape(ended)}")
    if verdict.comment:
        out.print(f"  comment: {escape(verdict.comment)}")
    if verdict.judge is not None and verdict.judge.error:
        out.print(f"  [yellow]judge error ({escape(verdict.judge.judge)}): {escape(verdict.judge.error)}[/yellow]")
    if verdict.error:
        out.print(f"  [yellow]error: {escape(verdict.error)}[/yellow]")
    for fault in verdict.user_faults:
        out.print(f"  [magenta]simulator fault ({fault.kind}): {escape(fault.reason)}[/magenta]")
    for check in verdict.checks:
        mark = CHECK_MARKS.get(check.outcome, "?")
        colour = {"pass": "green", "fail": "red", "error": "yellow"}.get(check.outcome, "dim")
        flag = " [bold red][policy violation][/bold red]" if check.policy_violation and check.outcome == "fail" else ""
        label = CHECK_LABELS.get(check.outcome, check.outcome)
        out.print(f"  [{colour}]{mark} {label:<14}[/{colour}] {escape(check.name)}: {escape(check.reason)}{flag}")
    for output in verdict.outputs:
        value = json.dumps(output.value, ensure_ascii=False) if output.found else "not found"
        out.print(f"  output {escape(output.name)} ({output.type}): {escape(value)}")
    note = only_stated_note_of(metadata)
    if note is not None:
        out.print(f"  [dim]note: {escape(note)}[/dim]")


# -- the commands -------------------------------------------------------------------------------


@click.group()
def sessions() -> None:
    """List, show and export stored chats and conversations.

    Batch conversations and live chats share one list, newest first. IDs may be shortened to
    a unique prefix of at least 6 characters.
    """


@sessions.command(name="list")
@click.option("--limit", default=30, show_default=True, type=click.IntRange(1, 10_000), help="Rows to show.")
@click.option("--text", metavar="TEXT", help="Only sessions whose names, variables, comments, errors or messages contain TEXT.")
@click.option("--profile", metavar="NAME", help="Only conversations of this profile / test name (no chats).")
@click.option(
    "--outcome",
    type=click.Choice(list(OUTCOME_FILTERS)),
    help="Only conversations with this outcome (no chats).",
)
@click.option(
    "--since", callback=parse_since, metavar="WHEN", help="Only sessions since WHEN: YYYY-MM-DD, an ISO time, or 12h / 7d / 2w ago."
)
@click.option("--batch", "batch_ref", metavar="BATCH_ID", help="Only conversations of this batch (id, prefix, or latest).")
@db_option
def list_sessions(
    limit: int,
    text: str | None,
    profile: str | None,
    outcome: str | None,
    since: dt.datetime | None,
    batch_ref: str | None,
    db_path: Path | None,
) -> None:
    """Chats and batch conversations, newest first, as a table."""
    from rich.table import Table

    from parley.core.store import SessionCursor, SessionFilters

    with open_store(db_path, read_only=True) as store:
        batch_id = _batch_id(store, batch_ref) if batch_ref else None
        filters = SessionFilters(text=text or "", profile=profile, outcome=outcome, since=since, batch_id=batch_id)
        cursor = SessionCursor(store, filters, page_size=limit)
        items = cursor.next_page()
    out = console()
    if not items:
        out.print(
            "No sessions stored"
            + (
                " match these filters."
                if (text or profile or outcome or since or batch_ref)
                else " yet: `parley run PATH` or `parley chat` make some."
            )
        )
        return
    shown = f"{len(items)} of {cursor.total}" if len(items) < cursor.total else str(len(items))
    noun = "session" if cursor.total == 1 else "sessions"
    table = Table(title=f"{shown} {noun}, newest first", title_justify="left")
    for column in ("id", "when (UTC)", "kind", "spec / chat", "outcome", "score", "turns", "ended"):
        table.add_column(column, no_wrap=column in ("id", "when (UTC)"))
    for item in items:
        if item.kind == "chat":
            messages = f"{item.messages} message{'' if item.messages == 1 else 's'}"
            cells = [item.id[:12], _short_time(item.started), "chat", f"{item.name} ({item.detail})", "-", "-", str(item.turns), messages]
        else:
            style = OUTCOME_STYLES.get(item.outcome, "dim")
            cells = [
                item.id[:12],
                _short_time(item.started),
                "batch " + (item.batch_id or "-")[:8],
                item.spec_id + (f" t{item.trial}" if item.trial > 1 else ""),
                f"[{style}]{item.outcome}[/{style}]",
                "-" if item.score is None else str(item.score),
                str(item.turns),
                item.stop,
            ]
        table.add_row(*cells)
    if len(items) < cursor.total:
        table.caption = f"--limit {cursor.total} shows them all"
    out.print(table)


def _batch_id(store: Any, ref: str) -> str:
    return store.resolve_batch_ref(ref)


def _load(store: Any, ident: str) -> tuple[str, Any]:
    """("conversation", StoredConversation) or ("chat", StoredChatSession)."""
    try:
        return "conversation", store.load_conversation(ident)
    except ParleyError as first:
        if "several" in str(first) or "too short" in str(first):
            raise
        try:
            return "chat", store.load_chat_session(ident)
        except ParleyError as second:
            if "several" in str(second) or "too short" in str(second):
                raise
            raise ParleyError(f"no conversation or chat session '{ident}'; `parley sessions list` shows what is stored") from None


@sessions.command()
@click.argument("ident", metavar="ID")
@db_option
def show(ident: str, db_path: Path | None) -> None:
    """Show a conversation (transcript, tool calls, verdict with each check) or a chat."""
    from rich.markup import escape

    out = console()
    with open_store(db_path, read_only=True) as store:
        kind, stored = _load(store, ident)
    if kind == "chat":
        chat = stored.chat
        out.print(f"[bold]chat {chat.session_id}[/bold]")
        out.print(
            f"customer {chat.customer_id}, bot {escape(chat.bot_model)}, today {chat.today}, "
            f"started {_short_time(stored.created_at)}, last saved {_short_time(stored.updated_at)}"
        )
        m = chat.metrics
        out.print(f"{m.turns} turns, {m.tool_calls} tool calls, {m.usage.input_tokens}+{m.usage.output_tokens} tokens")
        out.print()
        print_transcript(out, _ChatView(chat))
        return
    conversation, spec, verdict = stored.conversation, stored.spec, stored.verdict
    out.print(f"[bold]conversation {conversation.id}[/bold]")
    out.print(
        f"batch {stored.batch_id or '-'}, spec {escape(spec.spec_id)} ({spec.kind}, {escape(spec.source)}), trial {stored.trial}, seed {spec.seed}"
    )
    out.print(
        f"customer {conversation.customer_id}, bot {escape(conversation.bot_model)}, user {escape(conversation.user_simulator)}, "
        f"started {_short_time(conversation.started_at)}, {conversation.duration_s:.2f} s, {conversation.bot_turns} bot turns"
    )
    if spec.variables:
        out.print("variables: " + escape(", ".join(f"{k}={v}" for k, v in spec.variables.items())))
    if spec.goals:
        out.print("goals: " + escape(" | ".join(spec.goals)))
    out.print()
    print_transcript(out, conversation)
    out.print()
    print_verdict(out, verdict, conversation.stop_reason, conversation.error, conversation.metadata)


class _ChatView:
    """A chat export seen as a conversation by `print_transcript`."""

    def __init__(self, chat: Any) -> None:
        self.messages = chat.messages
        self.tool_calls = chat.tool_calls
        self.system_prompt = chat.system_prompt


@sessions.command()
@click.argument("ident", metavar="ID")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Write to FILE instead of stdout.")
@db_option
def export(ident: str, output: Path | None, db_path: Path | None) -> None:
    """Export a conversation or a chat as JSON (transcript, tool calls, verdict, usage)."""
    from parley.core.reports import result_record

    with open_store(db_path, read_only=True) as store:
        kind, stored = _load(store, ident)
        if kind == "chat":
            text = stored.chat.model_dump_json(indent=2)
        else:
            batch = store.get_batch(stored.batch_id) if stored.batch_id else None
            text = json.dumps(result_record(stored, batch), ensure_ascii=False, indent=2)
    if output is None:
        sys.stdout.write(text + "\n")
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + "\n", encoding="utf-8")
    click.echo(f"wrote {output}", err=True)

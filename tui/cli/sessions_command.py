"""`parley sessions`: browse stored live chats and batch conversations.

    parley sessions list [--limit N] [--text T] [--profile NAME] [--outcome O] [--since WHEN]
    parley sessions show ID            transcript, tool calls, verdict with every check
    parley sessions export ID [--output FILE]    the record as JSON
    parley sessions export ID --as playbook      a playbook to edit and run: the chat as a test

IDs may be shortened to a unique prefix of 6 characters or more; `latest` is the newest. A conversation is drawn by
parley.tui.cli.conversation_view, as `parley run --single` draws it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from parley.core.errors import ParleyError
from parley.core.records import OUTCOME_FILTERS, StoredChatSession
from parley.tui.cli.command_io import console, db_option, open_store
from parley.tui.cli.conversation_view import OUTCOME_STYLES, print_transcript, print_verdict
from parley.tui.terminal_text import for_rich, visible

if TYPE_CHECKING:
    from parley.core.records import ChatExport, StoredConversation
    from parley.core.store import Store

_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


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
            cells = [
                for_rich(item.id[:12]),
                _short_time(item.started),
                "chat",
                for_rich(f"{item.name} ({item.detail})"),
                "-",
                "-",
                str(item.turns),
                messages,
            ]
        else:
            style = OUTCOME_STYLES.get(item.outcome, "dim")
            cells = [
                for_rich(item.id[:12]),
                _short_time(item.started),
                "batch " + for_rich((item.batch_id or "-")[:8]),
                for_rich(item.spec_id + (f" t{item.trial}" if item.trial > 1 else "")),
                f"[{style}]{for_rich(item.outcome)}[/{style}]",
                "-" if item.score is None else str(item.score),
                str(item.turns),
                for_rich(item.stop),
            ]
        table.add_row(*cells)
    if len(items) < cursor.total:
        table.caption = f"--limit {cursor.total} shows them all"
    out.print(table)


def _batch_id(store: Store, ref: str) -> str:
    return store.resolve_batch_ref(ref)


def _load(store: Store, ident: str) -> StoredConversation | StoredChatSession:
    """The stored conversation, else the chat session, with this id (or unique prefix); `latest`:
    the newest of either, as `parley sessions list` shows it first."""
    if ident.strip() == "latest":
        from parley.core.store import SessionCursor, SessionFilters

        newest = SessionCursor(store, SessionFilters(), page_size=1).next_page()
        if not newest:
            raise ParleyError("no session is stored yet: `parley run PATH` or `parley chat` make some")
        ident = newest[0].id
        return store.load_chat_session(ident) if newest[0].kind == "chat" else store.load_conversation(ident)
    try:
        return store.load_conversation(ident)
    except ParleyError as first:
        if "several" in str(first) or "too short" in str(first):
            raise
        try:
            return store.load_chat_session(ident)
        except ParleyError as second:
            if "several" in str(second) or "too short" in str(second):
                raise
            raise ParleyError(f"no conversation or chat session '{ident}'; `parley sessions list` shows what is stored") from None


@sessions.command()
@click.argument("ident", metavar="ID")
@db_option
def show(ident: str, db_path: Path | None) -> None:
    """Show a conversation (transcript, tool calls, verdict with each check) or a chat."""
    out = console()
    with open_store(db_path, read_only=True) as store:
        stored = _load(store, ident)
    if isinstance(stored, StoredChatSession):
        chat = stored.chat
        out.print(f"[bold]chat {for_rich(chat.session_id)}[/bold]")
        out.print(
            f"customer {for_rich(chat.customer_id)}, bot {for_rich(chat.bot_model)}, today {chat.today}, "
            f"started {_short_time(stored.created_at)}, last saved {_short_time(stored.updated_at)}"
        )
        m = chat.metrics
        out.print(f"{m.turns} turns, {m.tool_calls} tool calls, {m.usage.input_tokens}+{m.usage.output_tokens} tokens")
        out.print()
        print_transcript(out, _ChatView(chat))
        return
    conversation, spec, verdict = stored.conversation, stored.spec, stored.verdict
    out.print(f"[bold]conversation {for_rich(conversation.id)}[/bold]")
    out.print(
        f"batch {for_rich(stored.batch_id or '-')}, spec {for_rich(spec.spec_id)} ({for_rich(spec.kind)}, {for_rich(spec.source)}), "
        f"trial {stored.trial}, seed {spec.seed}"
    )
    out.print(
        f"customer {for_rich(conversation.customer_id)}, bot {for_rich(conversation.bot_model)}, user {for_rich(conversation.user_simulator)}, "
        f"started {_short_time(conversation.started_at)}, {conversation.duration_s:.2f} s, {conversation.bot_turns} bot turns"
    )
    if spec.variables:
        out.print("variables: " + for_rich(", ".join(f"{k}={v}" for k, v in spec.variables.items())))
    if spec.goals:
        out.print("goals: " + for_rich(" | ".join(spec.goals)))
    out.print()
    print_transcript(out, conversation)
    out.print()
    print_verdict(out, verdict, conversation.stop_reason, conversation.error, conversation.metadata)


class _ChatView:
    """A chat export seen as a conversation by `print_transcript`."""

    def __init__(self, chat: ChatExport) -> None:
        self.messages = chat.messages
        self.tool_calls = chat.tool_calls
        self.system_prompt = chat.system_prompt


@sessions.command()
@click.argument("ident", metavar="ID")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", help="Write to FILE instead of stdout.")
@click.option(
    "--as",
    "form",
    type=click.Choice(["json", "playbook"]),
    default="json",
    show_default=True,
    help="json: the record (transcript, tool calls, verdict, usage); playbook: a test made of it, to edit and run "
    "with `parley run`: the customer's lines as user steps, the bot's tool calls as expect_tool steps, each reply's "
    "expectation a regex of the ids and values it states, the customer and date it ran with.",
)
@db_option
def export(ident: str, output: Path | None, form: str, db_path: Path | None) -> None:
    """Export a conversation or a chat as JSON, or as a playbook that tests a bot as it answered."""
    from parley.core.reports import inert_json, result_record, session_playbook

    with open_store(db_path, read_only=True) as store:
        stored = _load(store, ident)
        if form == "playbook":
            text = session_playbook(stored)[1].rstrip("\n")
        elif isinstance(stored, StoredChatSession):
            text = stored.chat.model_dump_json(indent=2)
        else:
            batch = store.get_batch(stored.batch_id) if stored.batch_id else None
            text = json.dumps(result_record(stored, batch), ensure_ascii=False, indent=2)
    text = inert_json(text)  # piped on to a terminal, a raw C1 control would act on it
    if output is None:  # on a terminal, what the bot said must not act on it (the file keeps it as stored)
        sys.stdout.write((visible(text) if sys.stdout.isatty() else text) + "\n")
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + "\n", encoding="utf-8")
    click.echo(f"wrote {output}", err=True)

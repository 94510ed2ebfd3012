"""Everything stored, newest first, a page at a time: batch conversations and live chats merged.

No Textual here: the Sessions pane calls these from a worker thread. Conversations come from
`Store.conversation_rows` (filtered and paged in SQL); live chats are few (typed by hand), so
they are read whole and filtered here, then merged by start time.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from parley.core.records.batch import OUTCOME_FILTERS

SessionKind = Literal["conversation", "chat"]
CHATS = "__chats__"
"""The profile filter's value for "live chats only"."""
OUTCOMES = OUTCOME_FILTERS


@dataclass(frozen=True)
class SessionFilters:
    text: str = ""
    profile: str | None = None  # a profile/test name, CHATS, or None for all
    outcome: str | None = None  # one of OUTCOMES
    since: dt.date | None = None
    until: dt.date | None = None  # exclusive

    @property
    def wants_conversations(self) -> bool:
        return self.profile != CHATS

    @property
    def wants_chats(self) -> bool:
        # Chats are never judged: an outcome filter other than "unevaluated" leaves them out.
        return self.profile in (None, CHATS) and self.outcome in (None, "unevaluated")


_DATE_RANGE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})?\s*(?:\.\.\s*(\d{4}-\d{2}-\d{2})?)?\s*$")


def parse_date_filter(text: str) -> tuple[dt.date | None, dt.date | None]:
    """`2026-11-21` (that day), `2026-11-01..2026-11-21` (both days included), `2026-11-01..`
    or `..2026-11-21` -> (since, until exclusive). ValueError with a readable message otherwise."""
    text = text.strip()
    if not text:
        return None, None
    match = _DATE_RANGE.match(text)
    if not match or not (match.group(1) or match.group(2)):
        raise ValueError(f"{text!r} is not a date: use YYYY-MM-DD, or FROM..TO")
    try:
        first = dt.date.fromisoformat(match.group(1)) if match.group(1) else None
        last = dt.date.fromisoformat(match.group(2)) if match.group(2) else None
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a date: {exc}") from None
    if ".." not in text:
        return first, first + dt.timedelta(days=1) if first else None
    return first, (last + dt.timedelta(days=1)) if last else None


@dataclass(frozen=True)
class SessionItem:
    """One row of the Sessions table."""

    kind: SessionKind
    id: str
    started: dt.datetime
    name: str
    outcome: str
    score: str
    turns: int
    tokens: int
    stop: str
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"

    def cells(self) -> tuple[str, ...]:
        when = self.started.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")
        return (
            when,
            "chat" if self.kind == "chat" else "batch",
            self.name,
            self.outcome,
            self.score,
            str(self.turns),
            f"{self.tokens:,}",
            self.stop,
            self.detail,
        )


COLUMNS = ("Started (UTC)", "Kind", "Name", "Outcome", "Score", "Turns", "Tokens", "Stop", "Details")


def _conversation_item(row: Any) -> SessionItem:
    detail = row.spec_id
    if row.variables:
        detail += " · " + ", ".join(f"{k}={v}" for k, v in row.variables.items())
    if row.policy_violations:
        detail = f"{row.policy_violations} policy violation(s) · " + detail
    return SessionItem(
        kind="conversation",
        id=row.id,
        started=row.started_at,
        name=row.name,
        outcome=row.outcome or "unevaluated",
        score="-" if row.score is None else str(row.score),
        turns=row.turns,
        tokens=row.input_tokens + row.output_tokens,
        stop=row.stop_reason,
        detail=detail[:120],
    )


def _chat_item(row: Any) -> SessionItem:
    return SessionItem(
        kind="chat",
        id=row.id,
        started=row.created_at,
        name=f"chat as {row.customer_id}",
        outcome="-",
        score="-",
        turns=row.turns,
        tokens=row.input_tokens + row.output_tokens,
        stop="-",
        detail=f"bot {row.bot_model} · {row.messages} messages",
    )


def _matching_chat_ids(store: Any, text: str) -> set[str]:
    from parley.core.store.rows import like_pattern

    pattern = like_pattern(text)
    rows = store.read_sql(
        "SELECT id FROM chat_sessions WHERE id LIKE ? ESCAPE '\\' OR customer_id LIKE ? ESCAPE '\\'"
        " OR bot_model LIKE ? ESCAPE '\\' OR messages LIKE ? ESCAPE '\\' OR tool_calls LIKE ? ESCAPE '\\'",
        [pattern] * 5,
    )
    return {r["id"] for r in rows}


def profile_names(store: Any) -> list[str]:
    """The names (profiles, playbooks, scenarios) of the stored conversations."""
    return [r["name"] for r in store.read_sql("SELECT DISTINCT name FROM conversations ORDER BY name")]


class SessionCursor:
    """Pages through the stored sessions matching `filters`, newest first."""

    def __init__(self, store: Any, filters: SessionFilters, *, page_size: int = 200, chat_limit: int = 100_000) -> None:
        self.store = store
        self.filters = filters
        self.page_size = page_size
        self._query = {
            "text": filters.text or None,
            "name": filters.profile if filters.profile not in (None, CHATS) else None,
            "outcome": filters.outcome,
            "since": filters.since,
            "until": filters.until,
        }
        self.conversations = store.count_conversations(**self._query) if filters.wants_conversations else 0
        self._chats = self._load_chats(chat_limit) if filters.wants_chats else []
        self._chat_pos = 0
        self._offset = 0
        self._buffer: deque[SessionItem] = deque()
        self.shown = 0

    def _load_chats(self, limit: int) -> list[SessionItem]:
        rows = self.store.list_chat_sessions(limit=limit)
        f = self.filters
        if f.text:
            ids = _matching_chat_ids(self.store, f.text)
            rows = [r for r in rows if r.id in ids]
        items = [_chat_item(r) for r in rows]
        if f.since is not None:
            items = [i for i in items if i.started.astimezone(dt.UTC).date() >= f.since]
        if f.until is not None:
            items = [i for i in items if i.started.astimezone(dt.UTC).date() < f.until]
        return sorted(items, key=lambda i: (i.started, i.id), reverse=True)

    @property
    def chats(self) -> int:
        return len(self._chats)

    @property
    def total(self) -> int:
        return self.conversations + self.chats

    @property
    def remaining(self) -> int:
        return max(self.total - self.shown, 0)

    def next_page(self) -> list[SessionItem]:
        """The next `page_size` sessions (fewer at the end, none when all are shown)."""
        out: list[SessionItem] = []
        while len(out) < self.page_size:
            if not self._buffer and self._offset < self.conversations:
                rows = self.store.conversation_rows(**self._query, limit=self.page_size, offset=self._offset)
                if not rows:  # deleted meanwhile
                    self.conversations = self._offset
                self._offset += len(rows)
                self._buffer.extend(_conversation_item(r) for r in rows)
            conv = self._buffer[0] if self._buffer else None
            chat = self._chats[self._chat_pos] if self._chat_pos < len(self._chats) else None
            if conv is None and chat is None:
                break
            if chat is None or (conv is not None and conv.started >= chat.started):
                out.append(self._buffer.popleft())
            else:
                out.append(chat)
                self._chat_pos += 1
        self.shown += len(out)
        return out


# ---- one session in full ----------------------------------------------------------------------


@dataclass
class SessionDetail:
    """A stored session as the detail screen shows it."""

    item_kind: SessionKind
    id: str
    title: str
    facts: list[tuple[str, str]]
    messages: list[Any]
    tool_calls: list[Any]
    verdict: Any = None  # parley.core.records.verdict.Verdict, None for chats and unevaluated conversations
    record: Any = None  # StoredConversation / StoredChatSession
    extra: dict[str, Any] = field(default_factory=dict)


def load_detail(store: Any, kind: SessionKind, session_id: str) -> SessionDetail:
    """Load one session (a batch conversation or a live chat) in full."""
    if kind == "chat":
        stored = store.load_chat_session(session_id)
        chat = stored.chat
        m = chat.metrics
        facts = [
            ("Session", chat.session_id[:16]),
            ("Started", stored.created_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")),
            ("Customer", chat.customer_id),
            ("Bot model", chat.bot_model),
            ("Today (orders)", chat.today.isoformat()),
            ("Turns", str(m.turns)),
            ("Tokens", f"{m.usage.input_tokens} in · {m.usage.output_tokens} out"),
            ("Tool calls", f"{m.tool_calls} ({m.refused} refused, {m.tool_errors} errors)"),
        ]
        return SessionDetail(
            "chat", chat.session_id, f"Live chat as {chat.customer_id}", facts, chat.messages, chat.tool_calls, None, stored
        )
    stored = store.load_conversation(session_id)
    conv, spec, verdict = stored.conversation, stored.spec, stored.verdict
    total = conv.total_usage
    facts = [
        ("Conversation", conv.id[:16]),
        ("Spec", f"{spec.spec_id} ({spec.kind}, trial {stored.trial})"),
        ("Source", spec.source),
        ("Batch", (stored.batch_id or "-")[:16]),
        ("Started", conv.started_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")),
        ("Customer", conv.customer_id),
        ("Models", f"bot {conv.bot_model} · user {conv.user_simulator}"),
        ("Stop reason", conv.stop_reason + (f" ({conv.error})" if conv.error else "")),
        ("Turns", str(conv.bot_turns)),
        ("Tokens", f"{total.input_tokens} in · {total.output_tokens} out"),
    ]
    if spec.variables:
        facts.append(("Variables", ", ".join(f"{k}={v}" for k, v in spec.variables.items())))
    return SessionDetail("conversation", conv.id, f"{spec.name} · {spec.spec_id}", facts, conv.messages, conv.tool_calls, verdict, stored)


def export_detail(store: Any, kind: SessionKind, session_id: str, directory: Path) -> Path:
    """Write one session as JSON under `directory`; returns the path (never overwrites)."""
    if kind == "chat":
        stored = store.load_chat_session(session_id)
        data: Any = stored.chat.model_dump(mode="json")
        stem = f"chat-{stored.chat.session_id[:12]}"
    else:
        from parley.core.reports.exports import result_record

        stored = store.load_conversation(session_id)
        data = result_record(stored)
        stem = f"conversation-{stored.conversation.id[:12]}"
    from parley.core.chat.session import write_new_json

    return write_new_json(directory, stem, json.dumps(data, indent=2, ensure_ascii=False))

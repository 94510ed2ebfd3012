"""Everything stored, newest first, a page at a time: batch conversations and live chats merged.

The Sessions pane and `parley sessions list` both page through these. Conversations are
filtered and paged in SQL (`Store.conversation_rows`); live chats are few (typed by hand), so
they are read whole, filtered here, then merged with the conversations by start time.
"""

from __future__ import annotations

import datetime as dt
from collections import deque
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict

from parley.core.records import ChatSessionRow, ConversationRow, OutcomeFilter
from parley.core.store.rows import like_pattern
from parley.core.store.store import OUTCOME_SQL, ConversationFilters, Store

SessionKind = Literal["conversation", "chat"]
CHATS = "__chats__"
"""The profile filter's value for "live chats only"."""
CHAT_NAME = "chat as {customer}"
"""How a live chat is named in a list of sessions (and what a search for its name finds)."""


class SessionFilters(BaseModel):
    """What to list: text anywhere, one profile (or CHATS), one outcome, a date range."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    profile: str | None = None  # a profile/test name, CHATS, or None for all
    outcome: str | None = None  # a conversation outcome, or "unevaluated"
    since: dt.datetime | dt.date | None = None
    until: dt.datetime | dt.date | None = None  # exclusive
    batch_id: str | None = None  # one batch's conversations (no chats)

    @property
    def wants_conversations(self) -> bool:
        return self.profile != CHATS

    @property
    def wants_chats(self) -> bool:
        # Chats are never judged: an outcome filter other than "unevaluated" leaves them out.
        return self.profile in (None, CHATS) and self.outcome in (None, "unevaluated") and self.batch_id is None


class SessionItem(BaseModel):
    """One row of a list of sessions."""

    model_config = ConfigDict(frozen=True)

    kind: SessionKind
    id: str
    started: dt.datetime
    name: str
    spec_id: str = ""
    batch_id: str | None = None
    outcome: str
    score: int | None
    trial: int = 1
    turns: int
    tokens: int
    stop: str
    messages: int = 0
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.id}"


def _conversation_item(row: ConversationRow) -> SessionItem:
    detail = row.spec_id
    if row.variables:
        detail += " · " + ", ".join(f"{k}={v}" for k, v in row.variables.items())
    if row.policy_violations:
        noun = "policy violation" if row.policy_violations == 1 else "policy violations"
        detail = f"{row.policy_violations} {noun} · " + detail
    return SessionItem(
        kind="conversation",
        id=row.id,
        started=row.started_at,
        name=row.name,
        spec_id=row.spec_id,
        batch_id=row.batch_id,
        outcome=row.outcome or "unevaluated",
        score=row.score,
        trial=row.trial,
        turns=row.turns,
        tokens=row.input_tokens + row.output_tokens,
        stop=row.stop_reason,
        detail=detail[:120],
    )


def _chat_item(row: ChatSessionRow) -> SessionItem:
    return SessionItem(
        kind="chat",
        id=row.id,
        started=row.created_at,
        name=CHAT_NAME.format(customer=row.customer_id),
        outcome="-",
        score=None,
        turns=row.turns,
        tokens=row.input_tokens + row.output_tokens,
        stop="-",
        messages=row.messages,
        detail=f"bot {row.bot_model}",
    )


def matching_chat_ids(store: Store, text: str) -> set[str]:
    """Chats whose id, customer, bot, messages, tool calls or shown name contain `text`."""
    pattern = like_pattern(text)
    name = CHAT_NAME.replace("{customer}", "' || customer_id || '")
    rows = store._read(
        "SELECT id FROM chat_sessions WHERE id LIKE ?1 ESCAPE '\\' OR customer_id LIKE ?1 ESCAPE '\\'"
        " OR bot_model LIKE ?1 ESCAPE '\\' OR messages LIKE ?1 ESCAPE '\\' OR tool_calls LIKE ?1 ESCAPE '\\'"
        f" OR ('{name}') LIKE ?1 ESCAPE '\\'",
        [pattern],
    )
    return {r["id"] for r in rows}


def profile_names(store: Store) -> list[str]:
    """The names (profiles, playbooks, scenarios) of the stored conversations."""
    return [r["name"] for r in store._read("SELECT DISTINCT name FROM conversations ORDER BY name")]


def outcome_names(store: Store) -> list[str]:
    """The outcomes the stored conversations have (whatever names the store gives them)."""
    sql = f"SELECT DISTINCT ({OUTCOME_SQL}) AS o FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id ORDER BY o"
    return [r["o"] for r in store._read(sql)]


class SessionCursor:
    """Pages through the stored sessions matching `filters`, newest first. `total` counts every
    match, `shown` those paged so far."""

    def __init__(self, store: Store, filters: SessionFilters, *, page_size: int = 200, chat_limit: int = 100_000) -> None:
        self.store = store
        self.filters = filters
        self.page_size = page_size
        self._batch_id = filters.batch_id
        self._query = ConversationFilters(
            text=filters.text or None,
            name=filters.profile if filters.profile not in (None, CHATS) else None,
            outcome=cast("OutcomeFilter | None", filters.outcome),  # the store says in words when it is none of them
            since=filters.since,
            until=filters.until,
        )
        self.conversations = store.count_conversations(self._batch_id, **self._query) if filters.wants_conversations else 0
        self._chats = self._load_chats(chat_limit) if filters.wants_chats else []
        self._chat_pos = 0
        self._offset = 0
        self._buffer: deque[SessionItem] = deque()
        self.shown = 0

    def _load_chats(self, limit: int) -> list[SessionItem]:
        rows = self.store.list_chat_sessions(limit=limit)
        f = self.filters
        if f.text:
            ids = matching_chat_ids(self.store, f.text)
            rows = [r for r in rows if r.id in ids]
        items = [_chat_item(r) for r in rows]
        if f.since is not None:
            items = [i for i in items if _after(i.started, f.since)]
        if f.until is not None:
            items = [i for i in items if not _after(i.started, f.until)]
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
                rows = self.store.conversation_rows(self._batch_id, limit=self.page_size, offset=self._offset, **self._query)
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


def _after(started: dt.datetime, bound: dt.datetime | dt.date) -> bool:
    """started >= bound (a date bound counts from its midnight UTC)."""
    if isinstance(bound, dt.datetime):
        return started >= bound
    return started.astimezone(dt.UTC).date() >= bound

"""Conversions between parley's records and the store's rows, and the redaction that keeps
secrets out of the file. Pure functions: parley.core.store.store does the I/O.

Timestamps are ISO 8601 text in UTC with microseconds, so their text order is time order.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from parley.core.evaluation import marked_name
from parley.core.records import Conversation, ConversationRow, ConversationSpec, ToolCallRecord, Usage, Verdict
from parley.core.redaction import REDACTOR

JUDGE_ROLE = "judge"
"""The usage role of a verdict's judge (the conversation's own roles are bot and user)."""


def utc_text(value: datetime.datetime | None) -> str | None:
    """ISO text in UTC with microseconds: fixed width, so text order is time order."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value.astimezone(datetime.UTC).isoformat(timespec="microseconds")


def parse_utc(text: str | None) -> datetime.datetime | None:
    """A nullable time column's value."""
    return None if text is None else datetime.datetime.fromisoformat(text)


def stored_time(text: str) -> datetime.datetime:
    """A time column that is never null (a creation, a start, an end)."""
    return datetime.datetime.fromisoformat(text)


def bound_text(value: datetime.datetime | datetime.date) -> str:
    if not isinstance(value, datetime.datetime):
        value = datetime.datetime.combine(value, datetime.time(), tzinfo=datetime.UTC)
    return utc_text(value)  # type: ignore[return-value]


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads_list(text: str | None) -> list[Any]:
    """A stored JSON list (None, a missing one: empty)."""
    return [] if text is None or text == "[]" else json.loads(text)  # most messages have no tool calls


def _dump(model: BaseModel) -> str:
    return model.model_dump_json()


def like_pattern(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


_SECRET_FIELDS = frozenset({"api_key", "apikey", "authorization", "x-api-key", "password", "token"})
# Columns parley writes itself (ids, times, states): a secret is never in them, and rewriting a
# piece of an id or a time that happened to match a short key would break the row.
_OWN_COLUMNS = frozenset({"key", "status", "stop_reason", "outcome", "role", "kind", "today", "position", "owner_host"})


def _parley_column(name: str) -> bool:
    return name == "id" or name.endswith(("_id", "_at")) or name in _OWN_COLUMNS or name.startswith("owner_")


def redact_row(row: dict[str, Any], redact: Callable[[str], str] | None = None) -> dict[str, Any]:
    """`row` with every secret of this process (parley.core.redaction) redacted from its text
    columns; parley's own columns (ids, times, states) are left as they are. `redact`: the
    write's `REDACTOR.stored_redaction()`, when it stores many rows."""
    clean = redact or REDACTOR.stored_redaction()
    for key, value in row.items():
        if isinstance(value, str) and not _parley_column(key):
            row[key] = clean(value)
    return row


def strip_credentials(value: Any) -> Any:
    """A copy of a request without fields that carry credentials (api_key, Authorization...)."""
    if isinstance(value, Mapping):
        return {k: strip_credentials(v) for k, v in value.items() if str(k).lower() not in _SECRET_FIELDS}
    if isinstance(value, list | tuple):
        return [strip_credentials(v) for v in value]
    return value


def cache_key(request: Mapping[str, Any]) -> str:
    """The llm_cache key of a request: sha256 of its canonical JSON (sorted keys, no spaces),
    credentials left out so the key never depends on (or reveals) an API key."""
    canonical = json.dumps(strip_credentials(request), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


# ---- rows for one conversation --------------------------------------------------------------


def conversation_row(
    batch_id: str | None, spec: ConversationSpec, conv: Conversation, verdict: Verdict | None, trial: int
) -> dict[str, Any]:
    latencies = [t.bot_latency_s for t in conv.turns]
    light = ConversationRow.of(batch_id, spec, conv, verdict, trial)
    return {
        "id": conv.id,
        "batch_id": batch_id,
        "spec_id": spec.spec_id,
        "spec_index": spec.index,
        "spec": _dump(spec),
        "kind": spec.kind,
        "name": spec.name,
        "source": spec.source,
        "variables": compact_json(spec.variables),
        "seed": spec.seed,
        "trial": trial,
        "customer_id": conv.customer_id,
        "bot_model": conv.bot_model,
        "user_model": conv.user_simulator,
        "bot_starts": int(conv.bot_starts),
        "system_prompt": conv.system_prompt,
        "stop_reason": conv.stop_reason,
        "error": conv.error,
        "started_at": utc_text(conv.started_at),
        "ended_at": utc_text(conv.ended_at),
        "duration_s": conv.duration_s,
        "turns": light.turns,
        "turn_timings": compact_json([t.model_dump(mode="json") for t in conv.turns]),
        "bot_latency_total_s": sum(latencies),
        "bot_latency_min_s": min(latencies) if latencies else None,
        "bot_latency_max_s": max(latencies) if latencies else None,
        "tool_call_count": len(conv.tool_calls),
        "input_tokens": light.input_tokens,
        "output_tokens": light.output_tokens,
        "cost_usd": light.cost_usd,
        "final_state": conv.final_state.model_dump_json() if conv.final_state is not None else None,
        "metadata": compact_json(to_jsonable_python(conv.metadata)),  # metadata may hold dates
    }


def message_rows(conv: Conversation) -> list[dict[str, Any]]:
    return [
        {
            "conversation_id": conv.id,
            "position": i,
            "role": m.role,
            "content": m.content,
            "tool_calls": compact_json([c.model_dump() for c in m.tool_calls]),
            "tool_call_id": m.tool_call_id,
            "name": m.name,
        }
        for i, m in enumerate(conv.messages)
    ]


def world_effects_json(record: ToolCallRecord) -> str:
    """What a tool call did to its world, as stored (`{}` for a call that did nothing to it)."""
    effects = record.model_dump(mode="json", include={"changes", "reads", "violations"}, exclude_defaults=True)
    return compact_json(effects)


def tool_call_rows(conv: Conversation) -> list[dict[str, Any]]:
    return [
        {
            "conversation_id": conv.id,
            "position": i,
            "call_id": r.call_id,
            "name": r.name,
            "arguments_raw": r.arguments_raw,
            "arguments": compact_json(r.arguments) if r.arguments is not None else None,
            "customer_id": r.customer_id,
            "result": r.result,
            "ok": int(r.ok),
            "refused": int(r.refused),
            "http_status": r.http_status,
            "error": r.error,
            "latency_s": r.latency_s,
            "ignored_arguments": compact_json(r.ignored_arguments),
            "world_effects": world_effects_json(r),
        }
        for i, r in enumerate(conv.tool_calls)
    ]


def usage_rows(conv: Conversation, verdict: Verdict | None) -> list[dict[str, Any]]:
    models = {"bot": conv.bot_model, "user": conv.user_simulator}
    usages: list[tuple[str, str, Usage]] = [(role, models.get(role, role), u) for role, u in conv.usage.items()]
    if verdict is not None and verdict.judge is not None:
        usages.append((JUDGE_ROLE, verdict.judge.judge, verdict.judge.usage))
    return [
        {
            "conversation_id": conv.id,
            "role": role,
            "model": model,
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "calls": u.calls,
            "unreported_calls": u.unreported_calls,
            "cost_usd": u.cost_usd,
        }
        for role, model, u in usages
    ]


def verdict_row(conv: Conversation, verdict: Verdict) -> dict[str, Any]:
    return {
        "conversation_id": conv.id,
        "outcome": verdict.outcome,
        "passed": int(verdict.passed),
        "score": verdict.score,
        "comment": verdict.comment,
        "judge": verdict.judge.model_dump_json() if verdict.judge is not None else None,
        "error": verdict.error,
        "checks": compact_json([c.model_dump(mode="json") for c in verdict.checks]),
        "outputs": compact_json([o.model_dump(mode="json") for o in verdict.outputs]),
        "policy_violations": len(verdict.policy_violations),
        "user_faults": compact_json([f.model_dump(mode="json") for f in verdict.user_faults]),
    }


def failed_check_lines(checks: str | None, *, outcomes: tuple[str, ...] = ("fail",)) -> list[str]:
    """A verdict's stored checks whose outcome is one of `outcomes`, each as "name: reason" (a
    judge's with its calibration: "name [κ 0.72]: reason")."""
    return [f"{marked_name(c)}: {c.get('reason')}" for c in json.loads(checks or "[]") if c.get("outcome") in outcomes]


def user_fault_items(faults: str | None) -> list[tuple[str, str]]:
    """A verdict's stored simulator faults the customer is blamed for, as (kind, reason); an
    excused one is the bot's, and the check `bot answered what the customer said` says so."""
    return [(str(f.get("kind")), str(f.get("reason"))) for f in json.loads(faults or "[]") if not f.get("excused")]


def usage_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("input_tokens", "output_tokens", "calls", "cost_usd", "unreported_calls")}


def conversation_row_model(row: Mapping[str, Any]) -> ConversationRow:
    outcome = row["outcome"]
    return ConversationRow(
        id=row["id"],
        batch_id=row["batch_id"],
        name=row["name"],
        spec_id=row["spec_id"],
        kind=row["kind"],
        variables=json.loads(row["variables"]),
        trial=row["trial"],
        stop_reason=row["stop_reason"],
        outcome=None if outcome == "unevaluated" else outcome,
        passed=None if row["passed"] is None else bool(row["passed"]),
        score=row["score"],
        comment=row["comment"],
        turns=row["turns"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        cost_usd=row["cost_usd"],
        duration_s=row["duration_s"],
        started_at=stored_time(row["started_at"]),
        policy_violations=row["policy_violations"] or 0,
        error=row["error"] or row["verdict_error"],
    )

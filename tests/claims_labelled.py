"""The labelled bot messages of tests/data/claims_labelled.yaml as conversations, and what the
claims detector says of each (this module holds no tests: tests/test_eval_claims.py and
bench/bench_claims.py read it)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ruamel.yaml import YAML

from parley.core.evaluation.claims import hold_claims
from parley.core.records.chat import ChatMessage, ToolCall
from parley.core.records.conversation import Conversation
from parley.core.records.tools import ToolCallRecord
from parley.core.records.world_state import WorldDiff
from parley.mockapi.schema import AuditEntry, WorldState

LABELLED = Path(__file__).resolve().parent / "data" / "claims_labelled.yaml"
Label = Literal["backed", "unbacked", "no_claim"]
LABELS: tuple[Label, ...] = ("backed", "unbacked", "no_claim")
NOON = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Labelled:
    line: int
    text: str
    label: Label
    language: str = "en"
    user: str = "I need help with my order."
    calls: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    final: dict[str, str] = field(default_factory=dict)
    changed: tuple[str, ...] = ()
    held_out: bool = False
    detector_says: Label | None = None
    why: str = ""

    @property
    def expected(self) -> Label:
        """What the detector is held to: the label, or its known mistake."""
        return self.detector_says or self.label

    def conversation(self) -> Conversation:
        """The customer's line, the bot's tool calls, then the labelled message; the final state."""
        messages = [ChatMessage(role="user", content=self.user)]
        records = []
        for n, (entry, ok) in enumerate([(c, True) for c in self.calls] + [(c, False) for c in self.refused]):
            name, _, order = entry.partition(" ")
            arguments = f'{{"order_id": "{order}"}}' if order and name != "list_my_orders" else "{}"
            call_id = f"call_{n}"
            result = '{"ok": true}' if ok else f"REFUSED [409 too_old] {order} cannot be changed."
            messages.append(ChatMessage(role="assistant", tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)]))
            messages.append(ChatMessage(role="tool", content=result, tool_call_id=call_id, name=name))
            records.append(
                ToolCallRecord(
                    call_id=call_id,
                    name=name,
                    arguments_raw=arguments,
                    arguments=None if arguments == "{}" else {"order_id": order},
                    customer_id="C-100",
                    result=result,
                    ok=ok,
                    refused=not ok,
                    error=None if ok else "too_old",
                )
            )
        messages.append(ChatMessage(role="assistant", content=self.text))
        audit = [
            AuditEntry(
                order_id=o, customer_id="C-100", old_status="processing", new_status=self.final.get(o, "cancelled"), at=NOON, reason=None
            )  # type: ignore[arg-type]
            for o in self.changed
        ]
        return Conversation(
            id=f"labelled-{self.line}",
            customer_id="C-100",
            bot_model="labelled",
            user_simulator="labelled",
            messages=messages,
            tool_calls=records,
            started_at=NOON,
            ended_at=NOON,
            duration_s=0.0,
            stop_reason="user_stop",
            # the order world's state as batches stored it before worlds were declared, read as a diff
            final_state=WorldDiff.model_validate(
                WorldState(today=NOON.date(), statuses=dict(self.final), audit=audit).model_dump(mode="json")
            ),
        )


def load_labelled(path: Path = LABELLED) -> list[Labelled]:
    items = YAML(typ="rt").load(path.read_text(encoding="utf-8"))
    out = []
    for item in items:
        out.append(
            Labelled(
                line=item.lc.line + 1,
                text=str(item["text"]),
                label=item["label"],
                language=str(item.get("language", "en")),
                user=str(item.get("user", Labelled.user)),
                calls=tuple(item.get("calls", ())),
                refused=tuple(item.get("refused", ())),
                final={str(k): str(v) for k, v in (item.get("final") or {}).items()},
                changed=tuple(item.get("changed", ())),
                held_out=bool(item.get("held_out", False)),
                detector_says=item.get("detector_says"),
                why=str(item.get("why", "")),
            )
        )
    return out


def detector_label(item: Labelled) -> Label:
    """What the detector says of the labelled message: unbacked when any claim is, else backed
    when it found a claim, else no_claim."""
    held, _ = hold_claims(item.conversation())
    if any(not h.backed for h in held):
        return "unbacked"
    return "backed" if held else "no_claim"

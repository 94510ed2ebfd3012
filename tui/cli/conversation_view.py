"""A stored conversation as a terminal shows it: the transcript with each tool call where it was
made, and the verdict with every check. `parley sessions show` prints them; `parley run --single`
streams the same lines and ends with the same verdict. Every text from the bot, the user or a
file goes through parley.tui.terminal_text first."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from parley.core.users import only_stated_note_of
from parley.tui.terminal_text import for_rich

if TYPE_CHECKING:
    from rich.console import Console

    from parley.core.records import ChatMessage, ToolCallRecord, Verdict

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


def _clip(text: str | None, limit: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Transcript(Protocol):
    """What `print_transcript` reads: a Conversation, or a chat seen as one."""

    @property
    def messages(self) -> Sequence[ChatMessage]: ...
    @property
    def tool_calls(self) -> Sequence[ToolCallRecord]: ...
    @property
    def system_prompt(self) -> str | None: ...


def tool_line(record: ToolCallRecord) -> str:
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


def print_transcript(out: Console, conversation: Transcript) -> None:
    """Customer and bot lines in order, each tool call (with its result) where it was made."""
    records = {r.call_id: r for r in conversation.tool_calls}
    shown_calls: set[str] = set()
    if conversation.system_prompt:
        out.print(f"[dim]system prompt: {for_rich(_clip(conversation.system_prompt, 100))}[/dim]")
    for message in conversation.messages:
        if message.role == "user":
            out.print(f"[bold cyan]customer:[/bold cyan] {for_rich(message.content or '')}")
        elif message.role == "assistant":
            if message.content:
                out.print(f"[bold magenta]bot:[/bold magenta] {for_rich(message.content)}")
            for call in message.tool_calls:
                record = records.get(call.id)
                if record is not None:
                    shown_calls.add(call.id)
                    out.print(f"  [yellow]{for_rich(tool_line(record))}[/yellow]")
                else:
                    out.print(f"  [yellow]tool {for_rich(call.name)}({for_rich(call.arguments)}) (injected or not run)[/yellow]")
        elif message.role == "tool" and message.tool_call_id not in records:
            out.print(f"  [dim]tool result: {for_rich(_clip(message.content, 160))}[/dim]")
    for record in conversation.tool_calls:
        if record.call_id not in shown_calls:
            out.print(f"  [yellow]{for_rich(tool_line(record))}[/yellow]")


def print_verdict(
    out: Console,
    verdict: Verdict | None,
    stop_reason: str | None = None,
    error: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> None:
    """The verdict's outcome and score, then every check with its outcome and reason, and the
    note the conversation carries (`metadata`: the goals its offline customer only stated)."""
    ended = f"ended: {stop_reason}" + (f" ({error})" if error else "") if stop_reason else ""
    if verdict is None:
        out.print(f"[bold]verdict:[/bold] not evaluated. {for_rich(ended)}")
        return
    style = OUTCOME_STYLES.get(verdict.outcome, "white")
    from parley.core.evaluation import marked_name, score_calibration

    calibrated = score_calibration(verdict.checks)
    score = f", score {verdict.score}" + (f" [{calibrated}]" if calibrated else "") if verdict.score is not None else ", no score"
    out.print(f"[bold]verdict:[/bold] [{style}]{for_rich(verdict.outcome)}[/{style}]{score}. {for_rich(ended)}")
    if verdict.comment:
        out.print(f"  comment: {for_rich(verdict.comment)}")
    if verdict.judge is not None and verdict.judge.error:
        out.print(f"  [yellow]judge error ({for_rich(verdict.judge.judge)}): {for_rich(verdict.judge.error)}[/yellow]")
    if verdict.error:
        out.print(f"  [yellow]error: {for_rich(verdict.error)}[/yellow]")
    for fault in verdict.user_faults:
        out.print(f"  [magenta]{fault.label} ({for_rich(fault.kind)}): {for_rich(fault.text)}[/magenta]")
    for check in verdict.checks:
        mark = CHECK_MARKS.get(check.outcome, "?")
        colour = {"pass": "green", "fail": "red", "error": "yellow"}.get(check.outcome, "dim")
        flag = " [bold red][policy violation][/bold red]" if check.policy_violation and check.outcome == "fail" else ""
        label = CHECK_LABELS.get(check.outcome, check.outcome)
        name = marked_name(check)  # a judge's check with its calibration: "name [κ 0.72]"
        out.print(f"  [{colour}]{mark} {for_rich(label):<14}[/{colour}] {for_rich(name)}: {for_rich(check.reason)}{flag}")
    for output in verdict.outputs:
        value = json.dumps(output.value, ensure_ascii=False) if output.found else "not found"
        out.print(f"  output {for_rich(output.name)} ({for_rich(output.type)}): {for_rich(value)}")
    note = only_stated_note_of(metadata)
    if note is not None:
        out.print(f"  [dim]note: {for_rich(note)}[/dim]")

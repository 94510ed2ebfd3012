"""Limits as checks: the bot's latency, cost, tokens and turns, measured on the finished
conversation, each a check (kind `limit`) whose reason and details carry the measured figure, so a
slower or costlier bot fails the gate as a wrong one does.

    expect:
      limits: {reply_seconds: 8, p95_reply_seconds: 5, cost_usd: 0.02, tokens: 6000, turns_to_pass: 3}

or a run's defaults (`--limit reply_seconds=8`, which a spec's own `limits:` keys replace):
- reply_seconds: the slowest bot reply; p95_reply_seconds: the 95th percentile (nearest rank) of
  the bot's replies. Both depend on the machine and the moment: their names say
  "(timing-dependent)" wherever checks are shown, and they are not decided for the offline bot,
  which answers without a model;
- cost_usd and tokens: what the bot's model calls of the conversation cost and used (not
  applicable when parley saw no model call of the bot's: a connector, a Python bot; or when the
  price or the token counts are unknown: `--price MODEL=IN/OUT`);
- turns_to_pass: the bot turn by which every check the author asked for had first held (a bot
  message's turn, a tool call's, a judge's evidence...; a check that holds from the start, such
  as "never says", counts from turn 0; one whose moment is unknown counts at the end).

A conversation cut short decides only a reply already over its limit; the rest are `not_run`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from parley.core.evaluation.checks import unfinished_reason
from parley.core.evaluation.transcript_turns import transcript_turns
from parley.core.records import UNFINISHED_STOPS, CheckKind, CheckLimits, CheckOutcome, CheckResult, Conversation

__all__ = ["LIMIT_KIND", "TIMING_DEPENDENT", "limit_checks", "nearest_rank"]

LIMIT_KIND: CheckKind = "limit"
TIMING_DEPENDENT = "(timing-dependent)"
OFFLINE = "offline"
_FROM_THE_START: frozenset[str] = frozenset({"bot_never_says", "tool_not_called", "unchanged_others"})
"""Checks that hold from the first turn unless something breaks them."""


def nearest_rank(values: Sequence[float], share: float) -> float:
    """The `share` percentile of `values` by nearest rank (a value that was measured)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _check(key: str, name: str, outcome: CheckOutcome, reason: str, **details: Any) -> CheckResult:
    return CheckResult(kind=LIMIT_KIND, name=name, outcome=outcome, reason=reason, details={"limit": key, **details})


def _seconds(value: float) -> str:
    return f"{value:.2f} s"


def _latency(conversation: Conversation, limits: CheckLimits) -> list[CheckResult]:
    checks: list[CheckResult] = []
    timings = [t for t in conversation.turns if t.bot_latency_s >= 0]
    for key, allowed, what in (
        ("reply_seconds", limits.reply_seconds, "each bot reply"),
        ("p95_reply_seconds", limits.p95_reply_seconds, "95% of bot replies"),
    ):
        if allowed is None:
            continue
        name = f"{what} within {allowed:g} s {TIMING_DEPENDENT}"
        base = {"allowed": allowed, "timing_dependent": True}
        if conversation.bot_model == OFFLINE:
            checks.append(_check(key, name, "not_applicable", "Not decided: the offline bot answers without a model.", **base))
            continue
        if not timings:
            checks.append(_check(key, name, "not_applicable", "The bot did not answer.", **base))
            continue
        if key == "reply_seconds":
            slowest = max(timings, key=lambda t: t.bot_latency_s)
            measured, turn = slowest.bot_latency_s, slowest.index
            figure = f"the slowest of {len(timings)} replies took {_seconds(measured)} (bot turn {turn})"
        else:
            measured = nearest_rank([t.bot_latency_s for t in timings], 0.95)
            turn = next(t.index for t in timings if t.bot_latency_s == measured)
            figure = f"the 95th percentile of {len(timings)} replies is {_seconds(measured)}"
        held = measured <= allowed
        outcome: CheckOutcome = "pass" if held else "fail"
        reason = f"{figure[0].upper()}{figure[1:]}, {'within' if held else 'over'} {allowed:g} s."
        checks.append(_check(key, name, outcome, reason, measured=round(measured, 4), bot_turn=turn, **base))
    return checks


def _spending(conversation: Conversation, limits: CheckLimits) -> list[CheckResult]:
    checks: list[CheckResult] = []
    usage = conversation.usage.get("bot")
    offline = conversation.bot_model == OFFLINE
    for key, allowed in (("cost_usd", limits.cost_usd), ("tokens", limits.tokens)):
        if allowed is None:
            continue
        name = f"the bot's cost at most ${allowed:g}" if key == "cost_usd" else f"the bot's tokens at most {allowed:,}"
        base = {"allowed": allowed}
        if usage is None or usage.calls == 0:
            if offline:
                checks.append(_check(key, name, "pass", "The offline bot calls no model: it costs nothing.", measured=0, **base))
            else:
                why = "parley saw no model call of the bot's (a connector or a Python bot calls its own)"
                checks.append(_check(key, name, "not_applicable", f"Not measured: {why}.", **base))
            continue
        if key == "cost_usd":
            if usage.cost_usd is None:
                why = f"the price of {conversation.bot_model} is unknown (give it: --price {conversation.bot_model}=INPUT/OUTPUT)"
                checks.append(_check(key, name, "not_applicable", f"Not measured: {why}.", **base))
                continue
            measured: float = usage.cost_usd
            figure = f"${measured:.6f}".rstrip("0").rstrip(".") if measured else "$0"
            held = measured <= allowed
            reason = f"The bot's {usage.calls} model calls cost {figure}, {'within' if held else 'over'} ${allowed:g}."
        else:
            if usage.unreported_calls:
                why = f"{usage.unreported_calls} of its {usage.calls} model calls reported no token counts"
                checks.append(_check(key, name, "not_applicable", f"Not measured: {why}.", **base))
                continue
            measured = usage.input_tokens + usage.output_tokens
            held = measured <= allowed
            reason = (
                f"The bot's {usage.calls} model calls used {int(measured):,} tokens "
                f"({usage.input_tokens:,} in, {usage.output_tokens:,} out), {'within' if held else 'over'} {allowed:,}."
            )
        checks.append(_check(key, name, "pass" if held else "fail", reason, measured=measured, **base))
    return checks


def _bot_message_turns(conversation: Conversation) -> tuple[dict[int, int], dict[str, int], int]:
    """(bot message number -> its turn, tool call id -> its turn, the last turn)."""
    messages: dict[int, int] = {}
    calls: dict[str, int] = {}
    n = last = 0
    for turn in transcript_turns(conversation.messages):
        last = turn.number
        for _, message in turn.messages:
            if message.role == "assistant":
                if message.content:
                    n += 1
                    messages[n] = turn.number
                for call in message.tool_calls:
                    calls[call.id] = turn.number
    return messages, calls, last


def _held_at(check: CheckResult, conversation: Conversation, turns: tuple[dict[int, int], dict[str, int], int]) -> tuple[int, bool]:
    """(the turn by which `check` first held, whether that is known rather than taken as the last)."""
    messages, calls, last = turns
    details = check.details or {}
    if check.kind in _FROM_THE_START:
        return 0, True
    if isinstance(details.get("turn"), int):
        return int(details["turn"]), True
    if isinstance(details.get("message"), int) and details["message"] in messages:
        return messages[details["message"]], True
    if isinstance(details.get("call_id"), str) and details["call_id"] in calls:
        return calls[details["call_id"]], True
    tool = details.get("tool")
    if check.kind == "tool_called" and isinstance(tool, str):
        made = [calls[r.call_id] for r in conversation.tool_calls if r.name == tool and r.ok and r.call_id in calls]
        if made:
            return min(made), True
    if check.kind == "record_state":
        if not details.get("changed"):
            return 0, True
        record = details.get("record")
        changing = [
            calls[r.call_id]
            for r in conversation.tool_calls
            if r.ok and r.call_id in calls and any(f"{c.table}/{c.key}" == record for c in r.changes)
        ]
        if changing:
            return max(changing), True
    return last, False


def _turns_to_pass(conversation: Conversation, allowed: int, checks: Sequence[CheckResult]) -> CheckResult:
    name = f"every check held by bot turn {allowed}"
    base: dict[str, Any] = {"allowed": allowed}
    asked = [c for c in checks if not c.by_default and c.kind != LIMIT_KIND and c.outcome in ("pass", "fail", "error")]
    if not asked:
        return _check("turns_to_pass", name, "not_applicable", "No check the author asked for was decided.", **base)
    missed = [c for c in asked if c.outcome != "pass"]
    if missed:
        shown = ", ".join(c.name for c in missed[:3]) + (f" and {len(missed) - 3} more" if len(missed) > 3 else "")
        return _check("turns_to_pass", name, "fail", f"Not every check held: {shown}.", **base)
    turns = _bot_message_turns(conversation)
    held = [(_held_at(c, conversation, turns), c) for c in asked]
    (measured, known), last = max(held, key=lambda item: item[0][0])
    outcome: CheckOutcome = "pass" if measured <= allowed else "fail"
    moment = f"bot turn {measured}" if known else f"the end (bot turn {measured}: when it held is not known)"
    side = f"{'within' if outcome == 'pass' else 'past'} turn {allowed}"
    if len(asked) == 1:
        reason = f"The one check asked for, {last.name!r}, held by {moment}, {side}."
    else:
        reason = f"Every one of the {len(asked)} checks asked for held by {moment}; the last was {last.name!r}, {side}."
    return _check("turns_to_pass", name, outcome, reason, measured=measured, last_check=last.name, **base)


def limit_checks(conversation: Conversation, limits: CheckLimits | None, checks: Sequence[CheckResult]) -> list[CheckResult]:
    """A check per limit given (see the module doc); `checks` are the conversation's others (for
    `turns_to_pass`)."""
    if limits is None or not limits.given:
        return []
    measured = [*_latency(conversation, limits), *_spending(conversation, limits)]
    if limits.turns_to_pass is not None:
        measured.append(_turns_to_pass(conversation, limits.turns_to_pass, checks))
    if conversation.stop_reason in UNFINISHED_STOPS:
        reason = unfinished_reason(conversation.stop_reason, conversation.error)
        decided = {"reply_seconds"}  # a reply over its limit stays over it, whatever came next
        return [
            c
            if c.details.get("limit") in decided and c.outcome == "fail"
            else c.model_copy(update={"outcome": "not_run", "reason": reason})
            for c in measured
        ]
    return measured

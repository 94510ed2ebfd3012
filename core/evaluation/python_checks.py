"""Checks written in Python (`expect.python`): each a callable given the finished conversation (a
read-only view, parley.core.evaluation.check_context) and the arguments written beside it,
answering pass, fail or not applicable with a reason and, optionally, a turn and a quote.

    expect:
      python:
        - my_checks:refund_is_polite          # MODULE:NAME, found from the working folder first
        - short_replies: {words: 60}          # one of the checks parley ships (shipped_checks)

Each is a check like any other (kind `python`, named by its target): it counts as asked for,
a re-score runs it again, and what goes wrong in it is an evaluation error of that check, never
a crash and never a pass: an exception (named with the file and line of the check's own code it
came from; the traceback is in parley.log), an answer that is not one, a quote that is not in the
turn it names, an answer later than PYTHON_CHECK_TIMEOUT_S. A conversation cut short does not
run them (`not_run`).

Their modules are imported once, before a batch starts (`load_python_checks`, called with the
batch's other up-front checks: parley.core.engine.batch_models); a callable handed to parley's
Python API is registered as it is (`check_target`). A sync check runs in a daemon thread, an
async one on the batch's loop, so neither stalls it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from parley.core.errors import ConfigError
from parley.core.evaluation.check_context import CheckAnswer, CheckedConversation
from parley.core.evaluation.checks import unfinished_reason
from parley.core.evaluation.criteria import QUOTE_SHOWN_CHARS, evidence_text, locate_quote
from parley.core.evaluation.transcript_turns import clip, transcript_turns, turn_texts
from parley.core.python_code import import_target, in_daemon_thread, user_frame
from parley.core.records import (
    BROKEN_STOPS,
    SHIPPED_CHECKS,
    UNFINISHED_STOPS,
    CheckKind,
    CheckResult,
    Conversation,
    ConversationSpec,
    PythonCheck,
)

__all__ = [
    "PYTHON_CHECK_KIND",
    "PYTHON_CHECK_TIMEOUT_S",
    "check_target",
    "load_python_checks",
    "python_check_targets",
    "run_python_checks",
]

log = logging.getLogger("parley.evaluation.python_checks")

PYTHON_CHECK_KIND: CheckKind = "python"
PYTHON_CHECK_TIMEOUT_S = 30.0
"""The longest a check written in Python may take on one conversation."""
MESSAGE_CHARS = 300
"""The most of a check's exception message its reason shows (parley.log has the whole of it)."""
SHIPPED_MODULE = "parley.core.evaluation.shipped_checks"
_FORM = "a check written in Python is named MODULE:NAME, e.g. my_checks:refund_is_polite"

_loaded: dict[str, Callable[..., Any]] = {}
_lock = threading.Lock()


def _importable(target: str) -> str:
    """The `MODULE:NAME` a target names (a shipped check's name is one of parley's)."""
    return f"{SHIPPED_MODULE}:{target}" if target in SHIPPED_CHECKS else target


def _import(target: str) -> Callable[..., Any]:
    with _lock:
        found = _loaded.get(target)
    if found is not None:
        return found
    value = import_target(_importable(target), form=_FORM, what="the check")
    if not callable(value):
        raise ConfigError(f"{target} is a {type(value).__name__}, not a function to call with the conversation")
    with _lock:
        return _loaded.setdefault(target, value)


def check_target(check: Callable[..., Any]) -> str:
    """The `MODULE:NAME` a callable handed to parley's Python API is known by, registered so that
    it is called as it is (a function defined in a test need not be importable by its name; a
    re-score in another process imports it by the name, or says it cannot)."""
    module = getattr(check, "__module__", None) or type(check).__module__
    qualname = getattr(check, "__qualname__", None) or type(check).__qualname__
    base = f"{module}:{qualname}"
    with _lock:
        name, n = base, 1
        while _loaded.get(name, check) is not check:  # another callable already has this name
            n += 1
            name = f"{base}#{n}"
        _loaded[name] = check
    return name


def python_check_targets(specs: Iterable[ConversationSpec]) -> list[str]:
    """Every check written in Python the specs ask for, once each, in order."""
    seen: dict[str, None] = {}
    for spec in specs:
        if spec.expect is not None:
            for check in spec.expect.python:
                seen.setdefault(check.target, None)
    return list(seen)


def load_python_checks(specs: Iterable[ConversationSpec]) -> list[str]:
    """Import the module of every check written in Python the specs ask for, once, now (before a
    batch starts): ConfigError, one line naming the first that cannot be, or that cannot be
    called with the conversation and the arguments a spec gives it. Their targets."""
    seen: dict[str, PythonCheck] = {}
    for spec in specs:
        for check in spec.expect.python if spec.expect is not None else []:
            seen.setdefault(check.name, check)
    for check in seen.values():
        call = _import(check.target)
        try:
            inspect.signature(call).bind(None, **check.args)
        except TypeError as exc:
            raise ConfigError(f"{check.name}: {check.target} cannot be called with the conversation and these arguments ({exc})") from None
        except ValueError:  # a callable without a signature (a builtin): it is called and answers for itself
            continue
    return list(dict.fromkeys(c.target for c in seen.values()))


# -- running them -------------------------------------------------------------------------------


def _error(check: PythonCheck, reason: str, details: dict[str, Any] | None = None) -> CheckResult:
    return CheckResult(kind=PYTHON_CHECK_KIND, name=check.name, outcome="error", reason=reason, details=details or {"check": check.target})


async def _call(check: PythonCheck, view: CheckedConversation) -> Any:
    with _lock:
        call = _loaded.get(check.target)
    if call is None:  # not imported before the batch (a spec submitted later): its module's code runs off the loop
        call = await asyncio.to_thread(_import, check.target)
    if inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(getattr(call, "__call__", None)):  # noqa: B004
        return await asyncio.wait_for(call(view, **check.args), PYTHON_CHECK_TIMEOUT_S)
    async with asyncio.timeout(PYTHON_CHECK_TIMEOUT_S):
        answer = await in_daemon_thread(lambda: call(view, **check.args), thread_name=f"parley check {check.target}")
    if inspect.isawaitable(answer):
        answer = await asyncio.wait_for(answer, PYTHON_CHECK_TIMEOUT_S)
    return answer


def _where(check: PythonCheck) -> str | None:
    """The file of the check's own code (its frames are the ones to name)."""
    call = _loaded.get(check.target)
    try:
        return inspect.getsourcefile(call) if call is not None else None
    except TypeError:
        return None


async def _one(check: PythonCheck, view: CheckedConversation, conversation: Conversation) -> CheckResult:
    try:
        answer = await _call(check, view)
    except ConfigError as exc:  # its module cannot be imported (a re-score elsewhere, a module gone)
        return _error(check, str(exc))
    except TimeoutError:
        return _error(check, f"It gave no answer within {PYTHON_CHECK_TIMEOUT_S:g} s.")
    except asyncio.CancelledError:
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # the check's own code: its error, never parley's exit
        log.error("the check %s raised", check.target, exc_info=exc)
        where = user_frame(exc, within=_where(check))
        message = clip(" ".join(str(exc).split()), MESSAGE_CHARS)  # an exception may hold megabytes: the log has it whole
        text = f"It raised {type(exc).__name__}" + (f": {message}" if message else "")
        return _error(check, text + f" ({f'at {where}; ' if where else ''}the traceback is in parley.log).")
    if not isinstance(answer, CheckAnswer):
        shown = type(answer).__name__
        return _error(check, f"It returned {shown}, not an answer: return passed(reason), failed(reason) or not_applicable(reason).")
    return _answered(check, answer, conversation)


def _answered(check: PythonCheck, answer: CheckAnswer, conversation: Conversation) -> CheckResult:
    """The check's result from its answer, its evidence checked against the transcript."""
    details: dict[str, Any] = {"check": check.target, **({"args": dict(check.args)} if check.args else {})}
    if answer.outcome not in ("pass", "fail", "not_applicable") or not isinstance(answer.reason, str) or not answer.reason.strip():
        return _error(check, "It answered without a reason: give one, as passed(reason), failed(reason) or not_applicable(reason).")
    reason = answer.reason.strip()
    reason = reason[0].upper() + reason[1:] + ("" if reason[-1] in ".!?…" else ".")
    turn, quote = answer.turn, answer.quote
    if turn is not None:
        known = sorted({t.number for t in transcript_turns(conversation.messages)})
        if not isinstance(turn, int) or turn not in known:
            has = f"turns {known[0]}-{known[-1]}" if len(known) > 1 else f"turn {known[0]}" if known else "no turns"
            return _error(check, f"It named turn {turn!r}, and the conversation has {has}.", details)
        details["turn"] = turn
    if quote:
        details["quote"] = quote[:QUOTE_SHOWN_CHARS]
        spot = locate_quote(turn_texts(conversation), quote, [turn] if turn is not None else [])
        if spot is None:
            where = f"turn {turn}" if turn is not None else "the transcript"
            return _error(check, f'It quoted text that is not in {where}: "{quote[:QUOTE_SHOWN_CHARS]}"', details)
        details["turn"] = spot.turn
        if spot.speaker == "bot":
            details["message"] = spot.message  # where the app's Enter goes
        elif spot.speaker == "customer":
            details["user_message"] = spot.message
        else:
            details["call_id"] = spot.call_id
        details["evidence"] = evidence_text(spot.turn, quote)
        reason += f" Evidence, {details['evidence']}"
    elif turn is not None:
        reason += f" (turn {turn})"
    return CheckResult(kind=PYTHON_CHECK_KIND, name=check.name, outcome=answer.outcome, reason=reason, details=details)


async def run_python_checks(conversation: Conversation, spec: ConversationSpec) -> list[CheckResult]:
    """The spec's checks written in Python on the finished conversation, one after another (see
    the module doc); `not_run` for a conversation cut short."""
    checks = list(spec.expect.python) if spec.expect is not None else []
    if not checks:
        return []
    stop = conversation.stop_reason
    if stop in UNFINISHED_STOPS:
        why = f"Not run: the run itself broke ({stop})." if stop in BROKEN_STOPS else unfinished_reason(stop, conversation.error)
        return [
            CheckResult(kind=PYTHON_CHECK_KIND, name=c.name, outcome="not_run", reason=why, details={"check": c.target}) for c in checks
        ]
    view = CheckedConversation.of(conversation, spec)
    return [await _one(check, view, conversation) for check in checks]

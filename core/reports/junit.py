"""A batch as a JUnit XML report, the test-results format CI systems read (Jenkins, GitLab,
GitHub Actions' JUnit reporters, Azure Pipelines...).

One `<testsuite>` per source file, one `<testcase>` per conversation, named by spec id and
trial (`classname` is the profile's name, `file` its source). What each outcome becomes is its
row's `junit` in parley.core.records.OUTCOME_KINDS, so the counts are the summary's: failures =
failed, errors = broken + evaluation errors, skipped = unverified + simulator faults + unevaluated:
- a failed check: `<failure>`, its message the failed checks (a criterion in words with the
  judge's evidence: its turn and quote), its text each failed check with its reason, the stop
  reason and score, and the transcript's last turns;
- a run that broke (the bot's own error included) or a check that could not be decided:
  `<error>` typed by the outcome, with the error and the last turns;
- a conversation that could not be judged (unverified, a simulator fault, no verdict):
  `<skipped>` with the reason, so it is neither a pass nor a failure.
What no role read (criteria for want of an LLM judge, languages the claims check does not read)
is each suite's `not_read` property. Every count is the one the store gives; characters XML 1.0 cannot hold are dropped. The file
is read from the store a page of transcripts at a time.
"""

from __future__ import annotations

import datetime
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from typing import TextIO

from parley.core.evaluation import CRITERION_KIND, marked_name, score_calibration
from parley.core.records import UNEVALUATED, CheckResult, StoredConversation, junit_kind
from parley.core.reports.cell_escaping import inert_xml
from parley.core.store import Store, not_read, outcome_rows

LAST_TURNS = 6
"""Messages of the transcript's end shown with a failure or an error."""
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
SKIP_REASONS = {
    "unverified": "unverified: no check about the bot applied (add an `expect:` block or use an LLM judge)",
    "user_fault": "user_fault: the simulated customer misbehaved; not counted against the bot",
    "unevaluated": "not evaluated: no verdict was stored",
}


def _text(value: object) -> str:
    return _NOT_XML.sub("", str(value))


def _clip(text: str, limit: int = 500) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def last_turns(stored: StoredConversation, count: int = LAST_TURNS) -> list[str]:
    """The transcript's last customer and bot lines, as `customer: ...` / `bot: ...`."""
    lines = []
    for message in stored.conversation.messages:
        if message.role == "user" and message.content:
            lines.append(f"customer: {_clip(message.content)}")
        elif message.role == "assistant" and message.content:
            lines.append(f"bot: {_clip(message.content)}")
    return lines[-count:]


def _failed_name(check: CheckResult) -> str:
    """A failed check as the failure message names it: a criterion in words with its evidence."""
    evidence = check.details.get("evidence") if check.kind == CRITERION_KIND else None
    name = marked_name(check)  # a judge's check with its calibration: "name [κ 0.72]"
    return f"{name} (not met, {evidence})" if evidence else name


@dataclass
class _Case:
    element: ET.Element
    kind: str
    time_s: float


def testcase(stored: StoredConversation, outcome: str) -> _Case:
    """One conversation as a `<testcase>`."""
    spec, conv, verdict = stored.spec, stored.conversation, stored.verdict
    case = ET.Element(
        "testcase",
        {
            "name": _text(f"{spec.spec_id} trial {stored.trial}"),
            "classname": _text(spec.name),
            "file": _text(spec.source),
            "time": f"{conv.duration_s:.3f}",
        },
    )
    kind = junit_kind(outcome)
    calibrated = score_calibration(verdict.checks) if verdict is not None else None
    scored = f"score: {verdict.score if verdict is not None and verdict.score is not None else '-'}" + (
        f" [{calibrated}]" if calibrated else ""
    )
    ending = [f"stop reason: {conv.stop_reason}", scored]
    where = f"conversation {conv.id} (parley sessions show {conv.id[:12]})"
    if kind == "failure":
        failed = verdict.failed_checks if verdict is not None else []
        message = (
            f"{len(failed)} check{'s' if len(failed) != 1 else ''} failed: " + "; ".join(_failed_name(c) for c in failed)
            if failed
            else "failed"
        )
        body = [
            "Failed checks:",
            *(f"- {c.name}: {c.reason}" for c in failed),
            ", ".join(ending),
            "",
            "Last turns:",
            *last_turns(stored),
            "",
            where,
        ]
        element = ET.SubElement(case, "failure", {"message": _text(message), "type": outcome})
        element.text = _text("\n".join(body))
    elif kind == "error":
        error = conv.error or (verdict.error if verdict is not None else None) or outcome
        body = [f"{outcome}: {error}", ", ".join(ending), "", "Last turns:", *last_turns(stored), "", where]
        element = ET.SubElement(case, "error", {"message": _text(_clip(f"{outcome}: {error}", 300)), "type": outcome})
        element.text = _text("\n".join(body))
    elif kind == "skipped":
        ET.SubElement(case, "skipped", {"message": _text(SKIP_REASONS.get(outcome, outcome))})
    return _Case(element=case, kind=kind, time_s=conv.duration_s)


def _counts(cases: list[_Case]) -> dict[str, str]:
    return {
        "tests": str(len(cases)),
        "failures": str(sum(1 for c in cases if c.kind == "failure")),
        "errors": str(sum(1 for c in cases if c.kind == "error")),
        "skipped": str(sum(1 for c in cases if c.kind == "skipped")),
        "time": f"{sum(c.time_s for c in cases):.3f}",
    }


def _timestamp(value: datetime.datetime | None) -> str:
    """ISO 8601 without a zone, as Ant's JUnit format has it (the time is UTC)."""
    value = value or datetime.datetime.now(datetime.UTC)
    return value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S")


def junit_report(store: Store, batch_ref: str) -> tuple[ET.Element, int]:
    """The batch (id, prefix, `latest`...) as a `<testsuites>` element, and how many testcases."""
    batch = store.get_batch(batch_ref)
    outcomes = {r.id: r.outcome for r in outcome_rows(store, batch.id)}
    suites: dict[str, list[_Case]] = defaultdict(list)
    for stored in store.iter_conversations(batch.id):
        suites[stored.spec.source].append(testcase(stored, outcomes.get(stored.conversation.id, UNEVALUATED)))
    everything = [case for cases in suites.values() for case in cases]
    root = ET.Element("testsuites", {"name": f"parley batch {batch.id}", **_counts(everything)})
    models = batch.options.models
    properties = {
        "batch_id": batch.id,
        "bot": models.bot + (f" + {models.bot_prompt}" if models.bot_prompt else ""),
        "user": models.user,
        "judge": models.judge,
        "trials": str(batch.options.trials),
        "seed": str(batch.options.seed),
    }
    unread = not_read(store, batch.id)
    if unread:
        properties["not_read"] = unread.note
    properties.update(_attack_properties(store, batch.id))
    for index, (source, cases) in enumerate(suites.items()):
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": _text(source),
                **_counts(cases),
                "timestamp": _timestamp(batch.started_at or batch.created_at),
                "id": str(index),
                "package": "parley",
            },
        )
        props = ET.SubElement(suite, "properties")
        for name, value in properties.items():
            ET.SubElement(props, "property", {"name": name, "value": _text(value)})
        suite.extend(case.element for case in cases)
    return root, len(everything)


def _attack_properties(store: Store, batch_id: str) -> dict[str, str]:
    """A red-team batch's attack success rates (parley.core.reports.attack_stats) as properties:
    `attacks`, and `attacks.strategy.NAME` and `attacks.objective.NAME` each "B of D breached"
    with its interval; none for a batch without attacks."""
    from parley.core.reports.attack_stats import attack_report

    report = attack_report(store, batch_id)
    if report is None:
        return {}

    def rate(breached: int, decided: int, interval: object) -> str:
        return f"{breached} of {decided} breached" + (f" ({interval})" if interval is not None else "")

    found = {"attacks": rate(report.breached, report.breached + report.held, report.interval)}
    for kind, rates in (("strategy", report.by_strategy), ("objective", report.by_objective)):
        for r in rates:
            found[f"attacks.{kind}.{r.name}"] = rate(r.breached, r.decided, r.interval)
    return found


def write_junit(store: Store, batch_ref: str, out: TextIO) -> int:
    """Write the batch's JUnit XML to `out`; returns the testcases written."""
    root, count = junit_report(store, batch_ref)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(inert_xml(ET.tostring(root, encoding="unicode")))
    out.write("\n")
    return count

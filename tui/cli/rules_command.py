"""`parley rules check`: Sensei rule files over conversation files in Sensei's format, a drop-in
for Sensei's `sensei-check` (parley.core.rules does the work).

parley rules check --rules DIR --conversations DIR [--format table|json] [--judge MODEL] [--strict]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from parley.core.rules import RuleModel, RuleReport, SenseiConversation

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INVALID = 2

CHECK_EPILOG = """\b
Exit codes: 0 no rule failed; 1 a rule failed (with --strict, also: a rule could not be run);
2 usage error or invalid input: a rule file that cannot be used (named with its place and left
out, every other rule decided), a conversation file Sensei's reader could not read either
(listed and left out, the rest checked), or nothing to check.
\b
JSON: {"rules": {RULE_FILE: {"name", "pass", "fail", "not_applicable"}}}, the shape of
sensei-check's results: rule files by their path under --rules, conversations by their path under
--conversations, a pair as [first, second], a batch rule (conversations: all) as the list of
conversations it was decided over. A rule that could not be run adds "not_run" and its reason;
a rule file that cannot be used is {"error": "FILE:LINE: rule.field: reason"} (each of its
problems, one per line).
"""


@click.group()
def rules() -> None:
    """Check conversations against Sensei rule files (sensei-check)."""


@rules.command(epilog=CHECK_EPILOG)
@click.option(
    "--rules",
    "rules_path",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="A rule file, or a folder searched for .yaml/.yml rule files.",
)
@click.option(
    "--conversations",
    "conversations_path",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="A conversation file in Sensei's format, or a folder of them (Sensei's __report__ files are skipped).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="A table per rule, or sensei-check's results as JSON.",
)
@click.option(
    "--judge",
    "judge_model",
    default="offline",
    show_default=True,
    metavar="MODEL",
    help="Model the helpers that need one ask (semantic_content, tone, language, only_talks_about, "
    "utterance_index, responds_in_same_language). Offline, a rule that reaches one is not run, never passed.",
)
@click.option("--strict", is_flag=True, help="Exit 1 when a rule could not be run, as when one failed.")
def check(rules_path: Path, conversations_path: Path, fmt: str, judge_model: str, strict: bool) -> None:
    """Evaluate every active rule over the conversations; print what passed, failed and did not apply.

    Rules with `conversations: 1` are decided per conversation, `2` per ordered pair of
    conversations, `all` once over the conversations their `when`/`if` keep. Each failure shows
    the rule's `yields` text. Expressions are checked against a whitelist before anything runs,
    and evaluated without eval: a rule file can compute, never act.
    """
    from parley.core.rules import evaluate_rules, load_rules

    model_name = _model_name(judge_model)
    rule_set = load_rules(rules_path)
    for warning in rule_set.warnings:
        click.echo(f"warning: {warning}", err=True)
    for error in rule_set.errors:
        click.echo(error.render(), err=True)
    if not rule_set.rules and not rule_set.refused:
        click.echo(f"error: no rule files (.yaml, .yml) in {rules_path}", err=True)
        sys.exit(EXIT_INVALID)
    conversations, unreadable = _read_conversations(conversations_path)
    if not conversations and not unreadable:
        click.echo(f"error: no conversation files (.yaml, .yml) in {conversations_path}", err=True)
        sys.exit(EXIT_INVALID)

    if model_name == "offline":
        reports = evaluate_rules(rule_set.rules, conversations)
    else:
        reports = _evaluate_with_model(rule_set.rules, conversations, model_name)

    if fmt == "json":
        entries: dict[str, Any] = {report.rule_file: report.sensei_entry() for report in reports}
        for rule_file, errors in rule_set.refused.items():
            entries[rule_file] = {"error": "\n".join(error.render() for error in errors)}
        click.echo(json.dumps({"rules": entries}, indent=1, ensure_ascii=False))
    else:
        inactive = len(rule_set.rules) - len(reports)
        _print_tables(reports, len(conversations), inactive, model_name)
    if rule_set.refused:
        count = len(rule_set.refused)
        click.echo(
            f"{count} rule file{'' if count == 1 else 's'} could not be used and {'was' if count == 1 else 'were'} left out; every other rule was decided",
            err=True,
        )
    if unreadable:
        click.echo(
            f"{unreadable} conversation file{'' if unreadable == 1 else 's'} could not be read and {'was' if unreadable == 1 else 'were'} left out",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    if rule_set.refused:
        sys.exit(EXIT_INVALID)
    failed = any(report.count("fail") for report in reports)
    not_run = any(report.count("not_run") for report in reports)
    sys.exit(EXIT_FAILED if failed or (strict and not_run) else EXIT_OK)


def _model_name(value: str) -> str:
    from parley.core.errors import ConfigError
    from parley.core.models import parse_model_name

    value = (value or "offline").strip()
    try:
        parse_model_name(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--judge") from None
    return value


def _read_conversations(root: Path) -> tuple[list[SenseiConversation], int]:
    """The readable conversations; each unreadable one is printed (file:line: field: reason)."""
    from parley.core.rules import ConversationFileError, conversation_files, read_conversation_file

    conversations = []
    unreadable = 0
    for path, name in conversation_files(root):
        try:
            conversations.append(read_conversation_file(path, name))
        except ConversationFileError as exc:
            click.echo(exc.render(), err=True)
            unreadable += 1
    return conversations, unreadable


def _evaluate_with_model(rules: list[Any], conversations: list[SenseiConversation], model_name: str) -> list[RuleReport]:
    from parley.core.models import get_model
    from parley.core.rules import ChatModelAsker, evaluate_rules, model_loop

    model = get_model(model_name, role="judge")
    with model_loop() as loop:
        asker: RuleModel = ChatModelAsker(model, loop)
        return evaluate_rules(rules, conversations, asker)


# -- the table format --------------------------------------------------------------------------------


def _print_tables(reports: list[RuleReport], conversations: int, inactive: int, model_name: str) -> None:
    from rich.table import Table
    from rich.text import Text

    from parley.tui.cli.command_io import console
    from parley.tui.terminal_text import visible as shown

    out = console()
    for report in reports:
        scope = {1: "each conversation", 2: "each ordered pair", "all": "the batch"}[report.conversations]
        counts = f"pass {report.count('pass')}, fail {report.count('fail')}, not applicable {report.count('not_applicable')}"
        if report.count("not_run"):
            counts += f", not run {report.count('not_run')}"
        title = Text.assemble((shown(report.rule_file), "bold"), f"  {shown(report.name)} ({scope}): {counts}")
        not_run = _by_reason(report.of("not_run"))
        if not report.count("fail") and not not_run:
            out.print(title)
            continue
        table = Table(title=title, title_justify="left", show_lines=False)
        table.add_column("outcome", no_wrap=True)
        table.add_column("conversation(s)", ratio=1)
        table.add_column("why", ratio=3)
        for result in report.of("fail"):
            why = result.yields or result.reason or ""
            if result.yields and result.reason and result.reason != "oracle violated":
                why = f"{result.yields} ({result.reason})"
            table.add_row(Text("fail"), Text(shown(_names(result))), Text(shown(why)))
        for reason, names in not_run.items():
            listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            table.add_row(Text("not run"), Text(shown(listed)), Text(shown(reason)))
        out.print(table)
    failed = sum(1 for report in reports if report.count("fail"))
    rules_not_run = sum(1 for report in reports if report.count("not_run"))
    summary = f"{len(reports)} rule{'' if len(reports) == 1 else 's'} over {conversations} conversation{'' if conversations == 1 else 's'}: {failed} with failures"
    if rules_not_run:
        summary += f", {rules_not_run} not run" + (" (they need a model: --judge MODEL)" if model_name == "offline" else "")
    if inactive:
        summary += f"; {inactive} inactive rule{'' if inactive == 1 else 's'} skipped"
    out.print(Text(summary))


def _by_reason(results: list[Any]) -> dict[str, list[str]]:
    """Results that were not run, grouped by why (offline, a whole rule at once)."""
    grouped: dict[str, list[str]] = {}
    for result in results:
        grouped.setdefault(result.reason or "", []).append(
            " + ".join(result.conversations) if result.kind == "pair" else ", ".join(result.conversations)
        )
    return grouped


def _names(result: Any) -> str:
    """The conversation(s) a result is about: a file, `first → second`, or a batch's files."""
    return " → ".join(result.conversations) if result.kind == "pair" else ", ".join(result.conversations)

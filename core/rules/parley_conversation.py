"""A conversation parley ran, in the format Sensei saves: for rules, and for Sensei's own tools.

`sensei_documents` gives the three YAML documents Sensei writes for a conversation (its
`save_test_conv`): the metadata, the times and the `interaction`; `as_sensei_conversation` the
same values as the rules read them, and `dump_sensei` the file's text. Rules run on the values
a file written by `dump_sensei` gives back when it is read, so a rule decides the same in
`parley run --rules` as in `parley rules check` (or Sensei's checker) over the exported file.

What goes where, as Sensei fills it:
- `serial`: the batch's id (Sensei's is one per execution, shared by its conversations);
- `language`, `context`: the spec's;
- `ask_about`: the goals with their values filled in, then one `{variable: [value, ...]}` per
  variable (Sensei keeps each variable's pick as a list: rules say `number_photo[0]`);
- `conversation`: `interaction_style` (one `{style: None}` each, `{change language: [...]}`),
  `number` (the conversations of the spec's test in the batch) and `goal_style`;
- `data_output`: one `{output: value}` per `chatbot.output`, typed as Sensei's extraction
  types it (int, float; money as text with its currency code, "12.50 EUR"; a clock time as
  "hh:mm:ss"; a date as a date; anything else as text), None when it was not found; `errors`
  then says how many were not, as Sensei's `1001` entry does;
- the times: `conversation time` (seconds) and `assistant response time` (each bot turn);
- `interaction`: `{User: text}` and `{Assistant: text}` in order; tool calls and messages a
  playbook injected as the bot's are not the bot's words and are left out.
"""

from __future__ import annotations

import datetime
import io
from collections.abc import Sequence
from typing import Any

from parley.core.records import Conversation, ConversationSpec, ExtractedOutput, OutputField, Verdict
from parley.core.rules.sensei_conversation import SenseiConversation

MISSING_OUTPUTS_ERROR = 1001
"""The code of Sensei's error for outputs the extraction did not find ("N goals left to complete.")."""
YAML_DIRECTIVE = "%YAML 1.1\n---\n"

SenseiDocuments = tuple[dict[str, Any], dict[str, Any], dict[str, Any]]


def sensei_documents(
    spec: ConversationSpec,
    conversation: Conversation,
    verdict: Verdict | None,
    *,
    serial: str,
    number: int = 1,
) -> SenseiDocuments:
    """The three documents Sensei saves for `conversation` (see the module)."""
    found = {output.name: output for output in (verdict.outputs if verdict is not None else [])}
    data_output = [{field.name: sensei_value(field, found.get(field.name))} for field in spec.outputs]
    missing = sum(1 for item in data_output for value in item.values() if value is None)
    errors: list[Any] = [{MISSING_OUTPUTS_ERROR: f"{missing} goals left to complete."}] if missing else []
    metadata: dict[str, Any] = {
        "serial": serial,
        "language": spec.language,
        "context": list(spec.context),
        "ask_about": [*spec.goals, *_picked(spec)],
        "conversation": _conversation_settings(spec, number),
        "data_output": data_output,
        "errors": errors,
    }
    times = {
        "conversation time": conversation.duration_s,
        "assistant response time": [turn.bot_latency_s for turn in conversation.turns],
    }
    return metadata, times, {"interaction": interaction(conversation)}


def as_sensei_conversation(documents: SenseiDocuments, name: str) -> SenseiConversation:
    """The conversation the rules see in `documents`, named `name`."""
    metadata, times, turns = documents
    return SenseiConversation(
        name=name,
        serial=metadata["serial"],
        language=metadata["language"],
        ask_about=metadata["ask_about"],
        conversation=metadata["conversation"],
        data_output=metadata["data_output"],
        errors=metadata["errors"],
        conversation_time=times["conversation time"],
        assistant_times=times["assistant response time"],
        interaction=turns["interaction"],
    )


def dump_sensei(documents: SenseiDocuments) -> str:
    """The file's text: the three documents as PyYAML (Sensei's reader) reads them back.

    Written as YAML 1.1, which PyYAML reads: text that 1.1 would take for something else (`yes`,
    `on`, `12:30:00`, `0755`) is quoted, control characters are escaped. The `%YAML 1.1`
    directive itself is left out, as Sensei's files have none."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 1)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]  # Sensei's order: serial first
    yaml.allow_unicode = True
    yaml.width = 4096  # long turns stay on their line, as PyYAML's reader takes either way
    parts = []
    for document in documents:
        buffer = io.StringIO()
        yaml.dump(document, buffer)
        text = buffer.getvalue()
        parts.append(text.removeprefix(YAML_DIRECTIVE))
    return "---\n".join(parts)


def interaction(conversation: Conversation) -> list[dict[str, str]]:
    """The turns as Sensei records them (see the module)."""
    injected = _injected(conversation)
    turns: list[dict[str, str]] = []
    for position, message in enumerate(conversation.messages):
        if not message.content or position in injected:
            continue
        if message.role == "user":
            turns.append({"User": message.content})
        elif message.role == "assistant":
            turns.append({"Assistant": message.content})
    return turns


def sensei_value(field: OutputField, output: ExtractedOutput | None) -> Any:
    """An extracted output as Sensei's extraction types it (see the module); None: not found."""
    if output is None or not output.found or output.value is None:
        return None
    value = output.value
    if field.type == "money" and isinstance(value, dict):
        amount, code = value.get("amount"), value.get("currency")
        return f"{float(amount):.2f} {code}" if isinstance(amount, int | float) and code else str(output.raw or value)
    if field.type == "time" and isinstance(value, str) and len(value) == 5 and value[2] == ":":
        return f"{value}:00"
    if field.type == "date" and isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            return value
    if field.type in ("int", "float") and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value) if field.type == "int" else float(value)
    return value if isinstance(value, str) else str(value)


def _picked(spec: ConversationSpec) -> list[dict[str, list[Any]]]:
    values: dict[str, Any] = dict(spec.variable_values) or dict(spec.variables)
    return [{name: list(value) if isinstance(value, list) else [value]} for name, value in values.items()]


def _conversation_settings(spec: ConversationSpec, number: int) -> list[dict[str, Any]]:
    styles: list[dict[str, Any]] = [
        {style.name: list(style.languages) if style.name == "change language" else None} for style in spec.interaction_styles
    ]
    goal = spec.goal_style
    goal_style: Any
    if goal.kind in ("steps", "random_steps"):  # a random number of steps: the one drawn, as Sensei writes it
        goal_style = {"steps": goal.steps}
    elif goal.kind == "all_answered":
        goal_style = {"all_answered": {"export": goal.export, "limit": goal.limit}}
    else:
        goal_style = goal.kind
    return [{"interaction_style": styles}, {"number": number}, {"goal_style": goal_style}]


def _injected(conversation: Conversation) -> set[int]:
    raw = conversation.metadata.get("injected_messages") or []
    return {n for n in raw if isinstance(n, int) and not isinstance(n, bool)} if isinstance(raw, list) else set()


def spec_counts(specs: Sequence[ConversationSpec]) -> dict[str, int]:
    """How many conversations (specs) each test name has: Sensei's `number` for each."""
    counts: dict[str, set[str]] = {}
    for spec in specs:
        counts.setdefault(spec.name, set()).add(spec.spec_id)
    return {name: len(ids) for name, ids in counts.items()}

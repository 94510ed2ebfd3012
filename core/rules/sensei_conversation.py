"""Conversation files in the format Sensei saves, read the way Sensei's rule checker reads them.

A file holds three YAML documents: the metadata (`serial`, `language`, `ask_about`,
`conversation`, `data_output`, `errors`, ...), the times (`conversation time`, optionally
`assistant response time`) and `interaction` (the turns, each {User: ...} or {Assistant: ...}).
Plain values are typed as PyYAML types them (YAML 1.1), since Sensei writes and reads them with
PyYAML. A file Sensei's checker could not read is a `ConversationFileError` at its place.

`sensei_variables` gives the names a rule sees for a conversation, as Sensei's checker builds
them: each `ask_about` variable, each output of `conversation` and `data_output` both by its own
name and prefixed (`data_output_cost`, nested keys joined with `_`), `interaction`,
`chatbot_phrases`, `user_phrases` and `data_output`; later ones win on a clash.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from parley.core.errors import ProfileError
from parley.core.records import plain_value
from parley.core.specs import read_yaml_documents

MAX_FILE_BYTES = 16 * 1024 * 1024
"""A conversation file larger than this is refused (Sensei's are a few kilobytes)."""
REPORT_MARKER = "__report__"
"""Sensei writes its reports beside the conversations; files with this in their path are skipped."""


class ConversationFileError(ProfileError):
    """A conversation file Sensei's rule checker could not read either."""


class SenseiConversation(BaseModel):
    """One conversation as Sensei saves it (the fields its rule checker reads)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="The file's path under the conversations folder (or a conversation's id).")
    serial: str
    language: str | None = None
    ask_about: list[Any]
    conversation: list[Any]
    data_output: list[Any] = Field(default_factory=list)
    errors: list[Any] = Field(default_factory=list)
    conversation_time: Any = None
    assistant_times: Any = Field(default_factory=list)
    interaction: Any = Field(default_factory=list, description="The turns; taken as the file has them, as Sensei does.")


def sensei_variables(conversation: SenseiConversation) -> dict[str, Any]:
    """The names a rule sees for `conversation` (see the module). TypeError or AttributeError
    when a part is shaped so that Sensei's checker cannot build them either."""
    names: dict[str, Any] = {}
    for item in conversation.ask_about:
        if isinstance(item, dict):
            names.update(item)
    names.update(_flattened(conversation.conversation, "conversation"))
    names.update(_flattened(conversation.data_output, "data_output"))
    names["interaction"] = conversation.interaction
    names["chatbot_phrases"] = _phrases(conversation.interaction, "Assistant")
    names["user_phrases"] = _phrases(conversation.interaction, "User")
    names["data_output"] = conversation.data_output
    return names


def _flattened(items: list[Any], prefix: str) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict):
            names.update(_flatten(prefix, item))
    return names


def _flatten(prefix: str, mapping: dict[Any, Any]) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(value, dict):
            names.update(_flatten(prefix + "_" + key, value))
        else:
            names[prefix + "_" + key] = value
            names[key] = value
    return names


def _phrases(interaction: Any, who: str) -> list[Any]:
    return [turn[who] for turn in interaction if who in turn]


def conversation_files(root: Path) -> list[tuple[Path, str]]:
    """The conversation files under `root` (or `root` itself), each with its name under `root`,
    in the order Sensei's checker sorts them; Sensei's `__report__` files and hidden ones are skipped."""
    if root.is_file():
        return [(root, root.name)]
    found = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        if REPORT_MARKER in str(path) or any(part.startswith(".") for part in relative.parts):
            continue
        found.append((path, relative.as_posix()))
    return sorted(found, key=lambda item: str(item[0]))


def read_conversation_file(path: Path, name: str, source: str | None = None) -> SenseiConversation:
    """The conversation in `path`, named `name`; ConversationFileError (at `source`, default the
    path) when Sensei's checker could not read it."""
    source = source or str(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConversationFileError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB", file=source)
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConversationFileError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=source) from None
    except OSError as exc:
        raise ConversationFileError(f"cannot be read: {exc.strerror or exc}", file=source) from None
    return parse_conversation(text, name, source)


def parse_conversation(text: str, name: str, source: str) -> SenseiConversation:
    """The conversation in `text` (see `read_conversation_file`)."""
    try:
        documents = read_yaml_documents(text, source, count=3, yaml_1_1=True)
    except ProfileError as exc:
        raise ConversationFileError(exc.reason, file=source, line=exc.line, column=exc.column) from None
    if len(documents) < 3:
        raise ConversationFileError(
            f"a Sensei conversation file holds three YAML documents (metadata, times, interaction); this one has {len(documents)}",
            file=source,
        )
    metadata, times, turns = documents
    fields = _metadata(metadata, source)
    if not isinstance(times, dict) or "conversation time" not in times:
        raise ConversationFileError(
            "the second document (times) must be a mapping with 'conversation time'", file=source, line=_line(times, None)
        )
    fields["conversation_time"] = _plain(times["conversation time"], source)
    if "assistant response time" in times:
        fields["assistant_times"] = _plain(times["assistant response time"], source)
    if not isinstance(turns, dict) or "interaction" not in turns:
        raise ConversationFileError("the third document must be a mapping with 'interaction'", file=source, line=_line(turns, None))
    fields["interaction"] = _plain(turns["interaction"], source)
    conversation = SenseiConversation(name=name, **fields)
    _check_variables(conversation, metadata, turns, source)
    return conversation


_REQUIRED_LISTS = ("ask_about", "conversation")
_OPTIONAL_LISTS = ("data_output", "errors")


def _metadata(metadata: Any, source: str) -> dict[str, Any]:
    if not isinstance(metadata, dict):
        raise ConversationFileError("the first document (metadata) must be a mapping", file=source, line=_line(metadata, None))
    fields: dict[str, Any] = {}
    if "serial" not in metadata:
        raise ConversationFileError("missing", file=source, line=_line(metadata, None), field_path="serial")
    if not isinstance(metadata["serial"], str):
        raise ConversationFileError(
            f"must be text, not {_kind(metadata['serial'])}", file=source, line=_line(metadata, "serial"), field_path="serial"
        )
    fields["serial"] = str(metadata["serial"])
    for key in _REQUIRED_LISTS:
        if key not in metadata:
            raise ConversationFileError("missing", file=source, line=_line(metadata, None), field_path=key)
    for key in (*_REQUIRED_LISTS, *_OPTIONAL_LISTS):
        if key not in metadata:
            continue
        value = metadata[key]
        if value is None and key == "errors":
            continue
        if not isinstance(value, list):
            raise ConversationFileError(f"must be a list, not {_kind(value)}", file=source, line=_line(metadata, key), field_path=key)
        fields[key] = _plain(value, source)
    language = metadata.get("language")
    if language is not None and not isinstance(language, str):
        raise ConversationFileError(
            f"must be text, not {_kind(language)}", file=source, line=_line(metadata, "language"), field_path="language"
        )
    fields["language"] = None if language is None else str(language)
    return fields


def _check_variables(conversation: SenseiConversation, metadata: dict[Any, Any], turns: dict[Any, Any], source: str) -> None:
    """The variables a rule sees can be built: each part checked so the error names its field."""
    builders: tuple[tuple[str, Callable[[], object]], ...] = (
        ("conversation", lambda: _flattened(conversation.conversation, "conversation")),
        ("data_output", lambda: _flattened(conversation.data_output, "data_output")),
    )
    for key, build in builders:
        try:
            build()
        except (TypeError, AttributeError) as exc:
            reason = f"a key that is not text ({exc})"
            raise ConversationFileError(reason, file=source, line=_line(metadata, key), field_path=key) from None
    if conversation.interaction is None:
        reason = "is empty: a conversation with no turns is written `interaction: []`"
        raise ConversationFileError(reason, file=source, line=_line(turns, "interaction"), field_path="interaction")
    try:
        _phrases(conversation.interaction, "Assistant")
        _phrases(conversation.interaction, "User")
    except (TypeError, AttributeError, KeyError) as exc:
        reason = f"each turn must be a mapping such as {{User: ...}} or {{Assistant: ...}} ({type(exc).__name__}: {exc})"
        raise ConversationFileError(reason, file=source, line=_line(turns, "interaction"), field_path="interaction") from None


def _plain(value: Any, source: str) -> Any:
    """ruamel's round-trip values as the plain values PyYAML gives; a value PyYAML's safe loader
    would refuse is a ConversationFileError."""

    def refuse(other: Any) -> Any:
        tag = getattr(getattr(other, "tag", None), "value", None) or type(other).__name__
        raise ConversationFileError(f"a value tagged {tag}, which Sensei's reader (PyYAML's safe loader) refuses", file=source)

    return plain_value(value, refuse)


def _line(container: Any, key: Any) -> int | None:
    """The 1-based line of `key`'s value in a round-trip mapping, or of the mapping itself."""
    lc = getattr(container, "lc", None)
    if lc is None:
        return None
    try:
        if key is not None:
            return int(lc.value(key)[0]) + 1
        return int(lc.line) + 1
    except (KeyError, TypeError, AttributeError):
        return None


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    for kind, word in ((bool, "true/false"), (int, "a number"), (float, "a number"), (str, "text"), (list, "a list"), (dict, "a mapping")):
        if isinstance(value, kind):
            return word
    return type(value).__name__

"""A world's tools: plain typed Python functions, declared once with `@tool`.

The JSON schema a bot is offered is generated from the function's type hints and docstring, never
written twice: each parameter's type (constraints such as `maxLength` through
`Annotated[str, Field(max_length=24)]`, which llama.cpp's grammars and strict tool modes use to stop
a rambling model), its default, and its description (from `Field(description=...)`, else the
docstring's `Args:` section). The first line of the docstring, or the whole paragraph before
`Args:`, describes the tool.

A tool's first parameter may be the `ToolContext` (annotated so, or named `ctx`): the
conversation's private database, the customer the session binds (on a world whose identity is
bound by the session), `today` and the world's clock. A tool returns anything JSON can hold (a
pydantic model, a mapping, a list, a string); it refuses by raising `Refused` with a message the
bot reads and the kind of refusal (the policy forbids it, or the request is wrong).

    @tool(changes_state=True, needs_confirmation=True)
    def cancel_order(ctx: ToolContext, order_id: Annotated[str, Field(max_length=24)]) -> dict:
        '''Cancel one of the customer's orders.

        Args:
            order_id: The order id exactly as the customer gave it, e.g. ORD-1003.
        '''
"""

from __future__ import annotations

import datetime
import inspect
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

from parley.core.records import ToolSpec

if TYPE_CHECKING:
    from parley.core.world.database import WorldDB

__all__ = ["Refused", "RefusalKind", "ToolContext", "WorldTool", "declare_tool", "tool"]

RefusalKind = Literal["policy", "request"]

_DEFAULT_STATUS: dict[RefusalKind, int] = {"policy": 409, "request": 422}


class Refused(Exception):
    """A tool's refusal: `message` is what the bot reads (one sentence it can relay), `reason` a
    short code (`too_old`, `not_your_order`, `invalid_order_id`), `kind` whether the policy forbids
    it or the request itself is wrong, `status` the HTTP status a served world answers with
    (`http_status`: default 409 for the policy, 422 for a wrong request)."""

    def __init__(self, message: str, *, reason: str, kind: RefusalKind = "policy", status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.kind: RefusalKind = kind
        self.status = status
        """The status the bot's result text shows (`REFUSED [409 too_old] ...`), when the world gives one."""

    @property
    def http_status(self) -> int:
        """What a served world answers with: the given status, else 409 (policy) or 422 (request)."""
        return self.status if self.status is not None else _DEFAULT_STATUS[self.kind]


@dataclass
class ToolContext:
    """What a tool sees of its conversation."""

    db: WorldDB
    """The conversation's private copy of the world's database."""
    today: datetime.date
    customer_id: str | None
    """The customer the session binds (a world whose identity is bound by the session); None on a
    world where the customer authenticates in the conversation: there the tools take ids as
    arguments, and parley decides whose records they touched."""
    clock: Callable[[], datetime.datetime]
    """The world's logical clock: noon UTC of `today`, one second later at every reading."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Objects a world keeps per conversation (built by its `open_copy` hook)."""

    def now(self) -> datetime.datetime:
        return self.clock()


@dataclass(frozen=True)
class WorldTool:
    """One declared tool: its function, the schema generated from it, and what parley must know
    about it (does it change the world, does the policy require the customer's confirmation)."""

    name: str
    description: str
    fn: Callable[..., Any]
    arguments: type[BaseModel]
    """The arguments as a pydantic model (extra keys ignored), generated from the signature."""
    parameters: dict[str, Any]
    """The JSON schema a bot is offered."""
    takes_context: bool
    changes_state: bool = False
    needs_confirmation: bool = False
    examples: Mapping[str, Any] = field(default_factory=dict)
    """An example value per parameter (from `Field(examples=[...])`), for messages to the bot."""
    source: str = ""
    """`file:line` of the function, for messages."""
    problems: tuple[str, ...] = ()
    """What is wrong with the declaration (each `file:line: tool NAME: why`): a world holding a tool
    with problems is refused when loaded, and `parley worlds check` lists every one."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    @property
    def parameter_names(self) -> list[str]:
        return list(self.arguments.model_fields)

    @property
    def required(self) -> list[str]:
        return [name for name, info in self.arguments.model_fields.items() if info.is_required()]

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments checked against the signature (extra keys dropped); `Refused` (a wrong
        request) naming the first problem, in words the bot can act on."""
        for name in self.required:
            if name not in arguments:
                example = self.examples.get(name)
                shown = f", e.g. {{{name!r}: {example!r}}}".replace("'", '"') if example is not None else ""
                raise Refused(
                    f"{self.name} needs {_article(name)} {name}{shown}. Ask the customer for it if you do not know it.",
                    reason="invalid_arguments",
                    kind="request",
                )
        try:
            model = self.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
            raise Refused(
                f"{where}: {error.get('msg', 'invalid value')} (got {_shown(error.get('input'))}).",
                reason="invalid_arguments",
                kind="request",
            ) from None
        return {name: getattr(model, name) for name in self.arguments.model_fields}


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    changes_state: bool = False,
    needs_confirmation: bool = False,
    description: str | None = None,
) -> Any:
    """Declare a world tool (see the module doc). Used bare (`@tool`) or with options
    (`@tool(changes_state=True)`); returns a `WorldTool`."""

    def declare(function: Callable[..., Any]) -> WorldTool:
        return declare_tool(
            function, name=name, changes_state=changes_state, needs_confirmation=needs_confirmation, description=description
        )

    return declare(fn) if fn is not None else declare


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _docstring_parts(doc: str) -> tuple[str, dict[str, str]]:
    """(the tool's description: its first paragraph, each parameter's description from the
    `Args:` section) of a Google-style docstring."""
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _ARGS_HEADER.match(line):
            break
        summary.append(line.strip())
    args: dict[str, str] = {}
    for start, line in enumerate(lines):
        if not _ARGS_HEADER.match(line):
            continue
        indent: int | None = None
        current: str | None = None
        for entry in lines[start + 1 :]:
            if entry.strip() and not entry[0].isspace():
                break  # the next section
            depth = len(entry) - len(entry.lstrip())
            match = _ARG_LINE.match(entry)
            if match and (indent is None or depth <= indent):
                indent = depth
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current is not None and entry.strip():
                args[current] = f"{args[current]} {entry.strip()}".strip()
        break
    return " ".join(summary), args


class _AsWritten(GenerateJsonSchema):
    """Pydantic's schema with its keys in the order they were written, not sorted."""

    def sort(self, value: JsonSchemaValue, parent_key: str | None = None) -> JsonSchemaValue:
        return value


def _plain(schema: Any) -> Any:
    """The schema a bot is offered: without pydantic's titles, the examples (kept for messages) and
    null defaults, which tell a model nothing."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if k not in ("title", "examples") and not (k == "default" and v is None)}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema


def declare_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    changes_state: bool = False,
    needs_confirmation: bool = False,
    description: str | None = None,
) -> WorldTool:
    """A `WorldTool` from `fn` (see the module doc). What cannot be declared as written (a
    parameter without a type hint, no docstring) is kept in its `problems`, each naming the
    function's place; the parameters that can be read still make its schema."""
    if isinstance(fn, WorldTool):
        return fn
    where = _source_of(fn)
    tool_name: str = name or str(getattr(fn, "__name__", "tool"))
    problems: list[str] = []
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - a hint that does not resolve is the author's mistake, said where
        problems.append(f"{where}: tool {tool_name}: its type hints do not resolve: {exc}")
        hints = {}
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as exc:
        problems.append(f"{where}: tool {tool_name}: its signature cannot be read: {exc}")
        params = []
    takes_context = bool(params) and (hints.get(params[0].name) is ToolContext or params[0].name == "ctx")
    if takes_context:
        params = params[1:]
    doc_description, doc_args = _docstring_parts(inspect.getdoc(fn) or "")
    text = description or doc_description
    if not text:
        problems.append(f"{where}: tool {tool_name} has no docstring: its first line is what the bot is told the tool does")
    fields: dict[str, Any] = {}
    examples: dict[str, Any] = {}
    for param in params:
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            problems.append(f"{where}: tool {tool_name}: *{param.name} cannot be offered to a bot; name each argument")
            continue
        if param.name not in hints:
            problems.append(f"{where}: tool {tool_name}: parameter {param.name!r} has no type hint (the bot's schema is made from it)")
            continue
        annotation = hints[param.name]
        default = param.default if param.default is not inspect.Parameter.empty else ...
        info = _field_info(annotation)
        if info is not None and info.examples:
            examples[param.name] = info.examples[0]
        if (info is None or info.description is None) and param.name in doc_args:
            annotation = typing.Annotated[annotation, FieldInfo(description=doc_args[param.name])]
        fields[param.name] = (annotation, default)
    try:
        arguments_model = _arguments_model(tool_name, fields)
        schema = _plain(arguments_model.model_json_schema(schema_generator=_AsWritten))
    except Exception as exc:  # noqa: BLE001 - a type pydantic cannot make a schema of, said where
        problems.append(f"{where}: tool {tool_name}: no JSON schema can be made of its parameters: {exc}")
        arguments_model = _arguments_model(tool_name, {})
        schema = {"properties": {}}
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    schema = {"type": "object", **{k: v for k, v in schema.items() if k != "type"}}
    return WorldTool(
        name=tool_name,
        description=text,
        fn=fn,
        arguments=arguments_model,
        parameters=schema,
        takes_context=takes_context,
        changes_state=changes_state,
        needs_confirmation=needs_confirmation,
        examples=examples,
        source=where,
        problems=tuple(problems),
    )


def _arguments_model(tool_name: str, fields: dict[str, Any]) -> type[BaseModel]:
    """The pydantic model of a tool's arguments (extra keys ignored)."""
    model: type[BaseModel] = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="ignore"), **fields)
    return model


def _field_info(annotation: Any) -> FieldInfo | None:
    if typing.get_origin(annotation) is typing.Annotated:
        for extra in typing.get_args(annotation)[1:]:
            if isinstance(extra, FieldInfo):
                return extra
    return None


def _source_of(fn: Callable[..., Any]) -> str:
    try:
        file = inspect.getsourcefile(fn) or "?"
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))
    return f"{file}:{line}"


def tool_names(tools: Sequence[WorldTool]) -> list[str]:
    return [t.name for t in tools]

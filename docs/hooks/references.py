"""The site's generated references (a mkdocs hook): the command line from click, the REST API
from the batch service's OpenAPI document. A page asks for one with a marker line of its own,
`<!-- generated: cli -->` or `<!-- generated: rest -->`, which the reference replaces as the
site builds, so neither is ever copied by hand. The OpenAPI document itself is written beside
the REST page (reference/openapi.json).

The generators are plain functions (cli_reference, rest_reference) that tests call too.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

MARKER = re.compile(r"^<!-- generated: (cli|rest) -->$", re.MULTILINE)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replaces each generated marker of a page with its reference."""
    return MARKER.sub(lambda found: GENERATORS[found.group(1)](), markdown)


def on_files(files: Any, config: Any) -> Any:
    """The service's OpenAPI document beside the REST page, for tools that read it."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, "reference/openapi.json", content=json.dumps(openapi_document(), indent=2) + "\n"))
    return files


# ---- the command line ---------------------------------------------------------------------


def cli_reference() -> str:
    """Every `parley` command and option, as the code declares them: one section per command,
    its help, its usage and a table of its options (names, what they take, what they do)."""
    from parley.tui.cli.main import cli

    root = click.Context(cli, info_name="parley")
    return "\n".join(_command_section(command, ctx) for command, ctx in _walk(cli, root))


def _walk(command: click.Command, ctx: click.Context) -> list[tuple[click.Command, click.Context]]:
    found = [(command, ctx)]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += _walk(sub, click.Context(sub, info_name=name, parent=ctx))
    return found


def _command_section(command: click.Command, ctx: click.Context) -> str:
    path = ctx.command_path
    depth = path.count(" ")
    lines = [f"{'#' * min(2 + depth, 4)} `{path}`", ""]
    if command.help:
        lines += [_help_markdown(command.help), ""]
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines += ["```text", f"{path} {usage}".rstrip(), "```", ""]
    if isinstance(command, click.Group):
        names = [name for name in command.list_commands(ctx) if not (command.get_command(ctx, name) or command).hidden]
        lines += ["Commands: " + ", ".join(f"[`{name}`](#{_anchor(f'{path} {name}')})" for name in names) + ".", ""]
    rows = [record for param in command.get_params(ctx) if (record := param.get_help_record(ctx)) is not None]
    if rows:
        lines += ["| option | what it does |", "|---|---|"]
        lines += [f"| {_code(names)} | {_cell(help_text)} |" for names, help_text in rows]
        lines.append("")
    return "\n".join(lines)


def _help_markdown(text: str) -> str:
    """click's help text as markdown: paragraphs kept, click's no-rewrap marker (\\b) dropped,
    a paragraph click would not rewrap kept as lines."""
    paragraphs = []
    for block in text.strip().split("\n\n"):
        if block.startswith("\b\n"):
            paragraphs.append("  \n".join(_escape(line) for line in block[2:].splitlines()))
        else:
            paragraphs.append(_escape(" ".join(line.strip() for line in block.splitlines())))
    return "\n\n".join(paragraphs)


def _anchor(heading: str) -> str:
    """The id mkdocs' toc gives a heading of one code span (`parley batches list` -> parley-batches-list)."""
    return re.sub(r"[^\w]+", "-", heading.lower()).strip("-")


def _code(text: str) -> str:
    return "<code>" + _html(text) + "</code>"


def _cell(text: str) -> str:
    return _escape(" ".join(text.split())).replace("|", "\\|")


def _escape(text: str) -> str:
    """Help text is prose with `code` in backticks: kept as markdown, but what markdown or HTML
    would take for markup outside backticks (<, *, _) is escaped."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(part if part.startswith("`") else _html(part).replace("*", "\\*").replace("_", "\\_") for part in parts)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")


# ---- the REST API -------------------------------------------------------------------------


def openapi_document() -> dict[str, Any]:
    """The batch service's OpenAPI document, as `GET /api/openapi.json` serves it."""
    from parley.core.service import create_app

    return create_app(token="").openapi()  # type: ignore[no-any-return]


def rest_reference() -> str:
    """Every route of the batch service: its method and path, what it does, its parameters, its
    request body and its responses; then every schema those name, field by field."""
    document = openapi_document()
    lines = [
        f"Generated from the service's OpenAPI document (version {document['info']['version']}), "
        "which is also [here as JSON](openapi.json) and served by `parley serve` at `/api/openapi.json`.",
        "",
    ]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            lines += _operation(method.upper(), path, operation)
    lines += ["## Schemas", ""]
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        lines += _schema_section(name, schema)
    return "\n".join(lines)


def _operation(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"## `{method} {path}`", ""]
    if operation.get("summary"):
        lines += [f"**{_escape(operation['summary'])}**", ""]
    if operation.get("description"):
        lines += [_escape(operation["description"]).replace("\n\n", "\n\n"), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
        for parameter in parameters:
            lines.append(
                f"| `{parameter['name']}` | {parameter['in']} | {_type(parameter.get('schema', {}))} | "
                f"{'yes' if parameter.get('required') else 'no'} | {_cell(parameter.get('description', '') or parameter.get('schema', {}).get('description', ''))} |"
            )
        lines.append("")
    body = operation.get("requestBody")
    if body:
        for media, content in body.get("content", {}).items():
            lines += [f"Request body ({media}): {_type(content.get('schema', {}))}.", ""]
    lines += ["| status | meaning | body |", "|---|---|---|"]
    for status, response in operation.get("responses", {}).items():
        schemas = [_type(content.get("schema", {})) for content in response.get("content", {}).values() if content.get("schema")]
        lines.append(f"| {status} | {_cell(response.get('description', ''))} | {', '.join(schemas)} |")
    lines.append("")
    return lines


def _schema_section(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [_escape(schema["description"]), ""]
    properties = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", []))
        lines += ["| field | type | required | description |", "|---|---|---|---|"]
        for field, spec in properties.items():
            lines.append(f"| `{field}` | {_type(spec)} | {'yes' if field in required else 'no'} | {_cell(spec.get('description', ''))} |")
        lines.append("")
    elif "enum" in schema:
        lines += ["One of " + ", ".join(f"`{value}`" for value in schema["enum"]) + ".", ""]
    return lines


def _type(schema: dict[str, Any]) -> str:
    """A schema in a few words: a link to a named one, an array of..., a union with `or`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return " or ".join(_type(option) for option in schema[key])
    kind = schema.get("type")
    if kind == "array":
        return "array of " + _type(schema.get("items", {}))
    if kind == "object" and "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
        return "object of " + _type(schema["additionalProperties"])
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    return str(kind) if kind else "any"


GENERATORS = {"cli": cli_reference, "rest": rest_reference}

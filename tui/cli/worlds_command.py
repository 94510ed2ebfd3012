"""`parley worlds`: the worlds a batch can run on: list them, show one, check one you wrote, serve one
for a bot developer to try by hand."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import click

from parley.tui.cli.date_option import parse_date
from parley.tui.terminal_text import visible


def _load(ref: str, *, unchecked: bool = False) -> Any:
    """A world by name, or by path when `ref` names a .py file."""
    from parley.core.world import load_world

    if ref.endswith(".py") or "/" in ref:
        return load_world(path=ref, options={"unchecked": True} if unchecked else None)
    return load_world(ref)


@click.group()
def worlds() -> None:
    """The worlds a bot acts on: their data, tools, policy and rules.

    A world is named in a profile, playbook or scenario file (`world: {name: NAME}` or
    `{path: FILE.py}`); files that name none run on the order world.
    """


@worlds.command(name="list")
def list_worlds() -> None:
    """Every world this installation knows, with where it comes from."""
    from parley.core.world import DEFAULT_WORLD, known_worlds

    for name, target in sorted(known_worlds().items()):
        mark = " (default)" if name == DEFAULT_WORLD else ""
        click.echo(f"{name:<14} {target}{mark}")


@worlds.command()
@click.argument("world")
@click.option(
    "--today",
    callback=parse_date,
    metavar="YYYY-MM-DD",
    help="The date to count the tables' rows at (default: the world's own, else today).",
)
def show(world: str, today: dt.date | None) -> None:
    """A world's tools with their schemas, its policy, its tables with row counts, who the customer
    is, whose records are whose, and the rules it leaves to the bot."""
    from parley.core.world import ConversationIdentity, WorldTemplate

    definition = _load(world)
    day = today or definition.today or dt.date.today()
    click.echo(visible(f"World {definition.name}: {definition.description}"))
    if definition.source:
        click.echo(visible(f"Declared in {definition.source}"))
    identity = definition.identity
    if isinstance(identity, ConversationIdentity):
        click.echo(
            f"\nIdentity: the customer authenticates in the conversation ({', '.join(identity.authenticate)});"
            f" the simulated customer knows its {', '.join(identity.credentials) or 'id'}."
        )
    elif definition.session_bound:
        click.echo("\nIdentity: bound by the session; the bot cannot act for anyone else.")
    else:
        click.echo(
            "\nIdentity: signed in by the session, but the API trusts the bot: its tools act for anyone, keeping to the signed-in customer is the bot's job."
        )
    template = WorldTemplate(definition, day)
    with template.new_copy() as copy:
        click.echo(f"\nTables (as of {day}):")
        for table in definition.tables:
            owner = table.owner if isinstance(table.owner, str) else ("a function" if table.owner else None)
            whose = "the customer's own record" if owner == "key" else (f"owned by {owner}" if owner else "public")
            extra = ", a log" if table.log else ""
            ids = f", ids like {table.id_pattern}" if table.id_pattern else ""
            click.echo(visible(f"  {table.name:<18} {copy.db.count(table.name):>5} rows  key {table.key}, {whose}{ids}{extra}"))
    click.echo("\nTools:")
    for declared in definition.declared_tools:
        tags = [
            t
            for t, on in (("changes the world", declared.changes_state), ("needs the customer's confirmation", declared.needs_confirmation))
            if on
        ]
        action = definition.action_of(declared.name)
        if action:
            tags.append(f"claimed as '{action}'")
        click.echo(visible(f"  {declared.name}{' [' + '; '.join(tags) + ']' if tags else ''}: {declared.description}"))
        click.echo(visible("    " + json.dumps(declared.parameters)))
    if definition.rules:
        click.echo("\nRules the world leaves to the bot (parley decides their violations):")
        for rule in definition.rules:
            click.echo(visible(f"  {rule.name}: {rule.description}"))
    click.echo("\nPolicy:")
    click.echo(visible(definition.policy or "(none given)"))


@worlds.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def check(path: Path) -> None:
    """Load a world you wrote and report every mistake with its place (exit 1 if any)."""
    from parley.core.world import world_problems

    definition = _load(str(path), unchecked=True)
    problems = world_problems(definition)
    for problem in problems:
        click.echo(visible(problem))
    if problems:
        raise click.exceptions.Exit(1)
    click.echo(visible(f"{path}: world {definition.name} is fine: {len(definition.tables)} tables, {len(definition.declared_tools)} tools"))


@worlds.command()
@click.argument("world")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (loopback by default).")
@click.option("--port", default=8100, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option("--customer", default=None, help="The signed-in customer (default: the world's default customer).")
@click.option("--today", callback=parse_date, metavar="YYYY-MM-DD", help="The world's date (default: its own, else today).")
def serve(world: str, host: str, port: int, customer: str | None, today: dt.date | None) -> None:
    """Serve one copy of a world for a bot developer to try by hand: its tools as POST routes, its
    OpenAPI document, and a page that lists and calls them (nothing loaded from elsewhere)."""
    import asyncio

    from parley.core.world import WorldServer, WorldTemplate, WorldTools

    definition = _load(world)
    day = today or definition.today or dt.date.today()
    who = customer or definition.identity.default or ""

    async def main() -> None:
        tools = WorldTools(definition, WorldTemplate(definition, day).new_copy(), who)
        server = WorldServer(host=host, port=port)
        await server.start()
        url = server.register(tools)
        click.echo(f"World {definition.name} for customer {who} on {day}: {url}/ (OpenAPI: {url}/openapi.json). Ctrl-C stops it.")
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        click.echo("stopped")

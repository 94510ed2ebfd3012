"""Several bots on one `parley run`: which settings go with which bot.

    parley run profiles/ --bot A=openai/gpt-4o-mini --bot B=openai/gpt-4.1-mini \\
        --bot-prompt prompts/support.txt                     # given once: every bot's
    parley run profiles/ --bot openai/m1 --bot openai/m2 \\
        --bot-timeout 10 --bot-timeout 30                    # given once per bot: in their order
    parley run profiles/ --bot A=openai/m --bot B=openai/m \\
        --bot-prompt A=prompts/a.txt --bot-prompt B=prompts/b.txt --gen B.temperature=0.7

A bot is named `NAME=BOT` (a name of letters, digits, `_` and `-`), else by what it is (its
model or connector; a second one of the same `BOT#2`). Each setting of the bot (the options
declared `per_bot`: parley.core.option_declarations) is given once for every bot, once per bot
in their order, or `NAME=VALUE` for the named ones; `--gen NAME.KEY=VALUE` is a generation
setting of bot NAME alone (`--gen bot.KEY=VALUE`: every bot's). Each value is read as the option
reads it alone. One bot is the run it always was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import click

from parley.core.option_declarations import BATCH_OPTIONS, BatchOption, option
from parley.tui.cli.batch_options import click_type

__all__ = ["LinedUpBot", "bot_lineup", "bot_target", "name_bots"]

_NAMED = re.compile(r"^([A-Za-z][\w-]*)=(.+)$", re.DOTALL)
_ROLES = ("bot", "user", "judge")


@dataclass
class LinedUpBot:
    """One bot of the run: its name in the group, and the run's option values for its batch."""

    name: str
    values: dict[str, Any]


def _split_name(value: str) -> tuple[str | None, str]:
    match = _NAMED.match(value)
    return (match.group(1), match.group(2)) if match else (None, value)


def bot_target(value: str) -> str:
    """The bot a `--bot` value names, without its name (`A=openai/m` -> `openai/m`)."""
    return _split_name(value)[1]


def name_bots(bots: tuple[str, ...]) -> tuple[list[str], list[str], set[str]]:
    """(each bot's name, each bot as `--bot` names it, the names given explicitly); ValueError
    for two bots of one name, or a name that is a role's."""
    named = [_split_name(b) for b in bots]
    given = [n for n, _ in named if n is not None]
    taken = set(given)
    for name in given:
        if given.count(name) > 1:
            raise ValueError(f"two bots are named {name!r}: give each its own name")
        if name in _ROLES:
            raise ValueError(f"{name!r} names a role: name the bot otherwise")
    names: list[str] = []
    for given_name, bot in named:
        name, n = given_name or bot, 1
        while given_name is None and (name in taken or name in names):
            n += 1
            name = f"{bot}#{n}"
        names.append(name)
    return names, [bot for _, bot in named], taken


def _default(declared: BatchOption) -> Any:
    if declared.setting:
        from parley.core.settings import settings

        return getattr(settings(), declared.setting)
    return declared.default


def _per_bot_values(ctx: click.Context, declared: BatchOption, given: tuple[str, ...], names: list[str], explicit: set[str]) -> list[Any]:
    """The option's value for each bot (see the module doc), each read as the option reads it."""
    hint = f"'{declared.cli_flag}'"
    if not given:
        return [_default(declared)] * len(names)
    prefixed = [_split_name(v) for v in given]
    by_name = {n: v for n, v in prefixed if n is not None and n in explicit}
    if by_name:
        if len(by_name) != len(given):
            raise click.BadParameter(
                "give it as NAME=VALUE for every bot it names, or without names (once for all, or once per bot)", param_hint=hint
            )
        raw: list[Any] = [by_name.get(n, None) for n in names]
    elif len(given) == 1:
        raw = [given[0]] * len(names)
    elif len(given) == len(names):
        raw = list(given)
    else:
        bots = f"{len(names)} bot{'s' if len(names) != 1 else ''}"
        raise click.BadParameter(
            f"given {len(given)} times for {bots}: once for every bot, once per bot in their order, or NAME=VALUE", param_hint=hint
        )
    kind = click_type(declared)
    param = next((p for p in ctx.command.params if p.name == declared.name), None)
    out = []
    for value in raw:
        if value is None:
            out.append(_default(declared))
        else:
            out.append(kind.convert(value, param, ctx) if kind is not None else value)
    return out


def _generation(entries: tuple[str, ...], names: list[str], explicit: set[str]) -> list[list[str]]:
    """Each bot's `--gen` entries: every role's, and its own (`NAME.KEY=VALUE` as `bot.KEY=VALUE`)."""
    from parley.core.records import generation_entry, read_generation

    shared: list[str] = []
    own: dict[str, list[str]] = {n: [] for n in names}
    for entry in entries:
        try:
            role, key, value = generation_entry(entry)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--gen'") from None
        if role in explicit:
            own[role].append(f"bot.{key}={value}")
        elif role in _ROLES:
            shared.append(entry)
        else:
            known = ", ".join([*_ROLES, *sorted(explicit)])
            raise click.BadParameter(f"{entry!r}: {role!r} is not a role or a bot's name; they are {known}", param_hint="'--gen'")
    lined = [shared + own[n] for n in names]
    for entries_of in lined:
        try:
            read_generation(entries_of)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--gen'") from None
    return lined


def bot_lineup(ctx: click.Context, options: dict[str, Any]) -> list[LinedUpBot]:
    """The bots of `parley run` with the option values of each one's batch (see the module doc);
    a usage error (click.BadParameter) naming the option when a value cannot be placed or read."""
    bots: tuple[str, ...] = options.get("bot") or (option("bot").default,)
    try:
        names, targets, explicit = name_bots(tuple(bots))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--bot'") from None
    per_bot = [o for o in BATCH_OPTIONS if o.per_bot and o.name != "bot" and o.name in options]
    if len(bots) == 1:
        for declared in per_bot:
            if len(options[declared.name]) > 1:
                raise click.BadParameter(f"given {len(options[declared.name])} times for one bot", param_hint=f"'{declared.cli_flag}'")
    values = {o.name: _per_bot_values(ctx, o, options[o.name], names, explicit) for o in per_bot}
    generation = _generation(tuple(options.get("gen") or ()), names, explicit)
    lineup = []
    for i, name in enumerate(names):
        mine = dict(options)
        mine["bot"] = targets[i]
        mine.update({key: found[i] for key, found in values.items()})
        mine["gen"] = tuple(generation[i])
        lineup.append(LinedUpBot(name=name, values=mine))
    return lineup


def one_bot(ctx: click.Context, options: dict[str, Any], command: str) -> dict[str, Any]:
    """The option values of a command that runs one bot (`parley redteam`, `parley mutate`): the
    lineup's one bot, or a usage error when several were given."""
    lineup = bot_lineup(ctx, options)
    if len(lineup) > 1:
        raise click.UsageError(f"parley {command} runs one bot: give --bot once (`parley run` runs several side by side)")
    return lineup[0].values

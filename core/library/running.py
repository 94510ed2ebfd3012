"""Running conversations from code: load specs from files, run them as a stored batch, read the
results. The batch is an ordinary one (source `python`): `parley batches list` lists it, the app
browses it, `parley report` and `parley compare` read it.

    specs = load_specs(["profiles/"])
    result = run_sync(specs, bot=my_bot, trials=3)        # or: await run(specs, ...)
    assert result.passed, result.explain()

The roles take what `parley run --bot/--user/--judge` take; `bot` may also be a Python callable
(or class) itself (parley.core.bots.python_bot). Numbers are checked as the command line checks
them: a count below 1 or a time that is not a finite positive number is a ConfigError. `rules`
are Sensei rule files, as `parley run --rules` takes them (parley.core.engine.batch_rules): each
conversation's rules are checks of it, the pair and batch rules are decided once the batch's
conversations are all in, and a failed one fails the run (`RunResult.rules`).
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from parley.core.bots import Bot, PythonBot
from parley.core.engine import BatchModels, BatchRunner, InvalidInputs, PreparedBatch, load_batch_rules, prepare_specs
from parley.core.errors import ConfigError, ParleyError
from parley.core.library.keywords import keywords_of
from parley.core.library.results import ConversationResult, RunResult
from parley.core.log_file import keep_log_beside
from parley.core.option_declarations import option
from parley.core.records import BatchOptions, ConversationSpec, LoadOptions, RoleModels, first_error
from parley.core.reports import batch_summary, summarize
from parley.core.specs import load_specs_as
from parley.core.store import Store

__all__ = [
    "BotArg",
    "RunOptions",
    "SpecsInvalid",
    "batch_options",
    "checked_rules",
    "load_specs",
    "open_store",
    "prepare_code_batch",
    "read_results",
    "role_models",
    "run",
    "run_sync",
]

BotArg = str | Callable[..., Any]
"""The bot under test: a `--bot` name (offline, openai/MODEL, rasa:URL, python:MODULE:NAME...), a
Python callable or class, or a parley `Bot`."""

SHOWN_PROBLEMS = 20


class SpecsInvalid(InvalidInputs):
    """Files that have problems: every one of them in `errors`, the first few in the message."""

    def __init__(self, errors: Sequence[Any]) -> None:
        super().__init__(errors)
        shown = [e.render() for e in self.errors[:SHOWN_PROBLEMS]]
        more = len(self.errors) - len(shown)
        self.args = ("\n".join([str(self.args[0]) + ":", *shown, *([f"... and {more} more"] if more > 0 else [])]),)


def load_specs(
    paths: str | Path | Sequence[str | Path],
    *,
    seed: int = 0,
    personalities: Sequence[str | Path] = (),
    agent_template: str | Path | None = None,
    client_template: str | Path | None = None,
    evaluator_template: str | Path | None = None,
) -> list[ConversationSpec]:
    """The conversations the profiles, playbooks and scenario files at `paths` make for batch
    `seed`, read as `parley run` reads them (folders searched, files that are something else
    skipped). SpecsInvalid, naming each problem as file:line:col, when any file has one."""
    sources = [paths] if isinstance(paths, (str, Path)) else list(paths)
    loading = LoadOptions(
        agent_template=str(agent_template) if agent_template else None,
        client_template=str(client_template) if client_template else None,
        evaluator_template=str(evaluator_template) if evaluator_template else None,
        personality_dirs=[str(p) for p in personalities],
    )
    found = load_specs_as(sources, loading, seed=seed)
    if found.errors:
        raise SpecsInvalid(found.errors)
    if not found.specs:
        raise ParleyError(f"{', '.join(str(s) for s in sources)}: no conversations (no profile, playbook or scenario file found)")
    return list(found.specs)


def role_models(
    bot: BotArg = "offline", user: str = "offline", judge: str = "offline", *, bot_timeout_s: float = option("bot_timeout_s").default
) -> tuple[RoleModels, Bot | None]:
    """The roles as a batch records them, and the bot itself when it is an object rather than a
    name (a Python callable is wrapped: parley.core.bots.python_bot). ConfigError for a bad one."""
    _checked("bot_timeout_s", bot_timeout_s)
    given: Bot | None = None
    if isinstance(bot, str):
        name = bot.strip() or "offline"
    elif isinstance(bot, Bot) and not isinstance(bot, type):
        given, name = bot, bot.name
    elif callable(bot):
        given = PythonBot(bot, timeout_s=bot_timeout_s)
        name = given.name
    else:
        raise ConfigError(f"bot: expected a bot's name or a Python callable, got {type(bot).__name__}")
    return RoleModels(bot=name, user=user, judge=judge, bot_timeout_s=bot_timeout_s), given


def _checked(name: str, value: Any) -> Any:
    """`value`, if option `name` takes it as the command line would (its declaration's kind and
    bounds: parley.core.option_declarations); ConfigError saying what it takes otherwise."""
    declared = option(name)
    if declared.kind not in (int, float) or (value is None and declared.optional):
        return value
    whole = declared.kind is int
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (whole and not isinstance(value, int)):
        raise ConfigError(f"{name}: expected a {'whole ' if whole else ''}number, got {value!r}")
    low, high = declared.minimum, declared.maximum
    below = low is not None and (value < low or (declared.above_minimum and value == low))
    if not math.isfinite(value) or below or (high is not None and value > high):
        bounds = [
            f"{'above' if declared.above_minimum else 'from'} {low:g}" if low is not None else "",
            f"to {high:g}" if high is not None else "",
        ]
        raise ConfigError(f"{name}: expected a finite number {' '.join(b for b in bounds if b)}, got {value!r}")
    return value


def checked_rules(rules: str | Path | None, *, option: str = "rules") -> str | None:
    """The Sensei rule files at `rules` (a file, or a folder searched for .yaml/.yml), read and
    checked now, as `parley run --rules` checks them before anything runs: its absolute path, as
    the batch records it (a re-score or a resume finds them from anywhere). ConfigError for a
    path that is not there or holds no rule file (naming it as `option` takes it), SpecsInvalid
    with every problem of the files (`file:line: rule.field: reason`)."""
    if rules is None:
        return None
    try:
        load_batch_rules(BatchOptions(rules=str(rules)), option=option)
    except InvalidInputs as exc:
        raise SpecsInvalid(exc.errors) from None
    except ParleyError as exc:
        raise ConfigError(str(exc)) from None
    return str(Path(rules).resolve())


def batch_options(models: RoleModels, **values: Any) -> BatchOptions:
    """A batch's options from the API's keywords (the declared options of the `api` surface but
    the roles, which `models` holds), checked as the command line checks them (the rule files
    too: `checked_rules`)."""
    checked = {name: _checked(name, value) for name, value in values.items()}
    if "rules" in checked:
        checked["rules"] = checked_rules(checked["rules"])
    try:
        options = BatchOptions.from_values(checked)
    except ValidationError as exc:  # a --gen or --price entry that is not one
        first = first_error(exc, "options")
        keyword = {"models.generation": "gen", "prices": "price", "limits": "limit"}.get(first.where, first.where)
        raise ConfigError(f"{keyword}: {first.message.removeprefix('Value error, ')}") from None
    return options.model_copy(update={"models": models.model_copy(update={"generation": options.models.generation})})


async def prepare_code_batch(store: Store, specs: Sequence[ConversationSpec], options: BatchOptions, models: BatchModels) -> PreparedBatch:
    """A new batch of specs built in code, stored (parley.core.engine.prepare_specs); files with
    problems (its rule files, changed since they were checked) are SpecsInvalid, every problem named."""
    try:
        return await prepare_specs(store, specs, options, models=models)
    except InvalidInputs as exc:
        if isinstance(exc, SpecsInvalid):
            raise
        raise SpecsInvalid(exc.errors) from None


def _unique(specs: Sequence[ConversationSpec]) -> None:
    seen: set[str] = set()
    for spec in specs:
        if spec.spec_id in seen:
            raise ConfigError(f"two conversations have the spec id {spec.spec_id!r}: give them different names (or indexes)")
        seen.add(spec.spec_id)


class RunOptions:
    """A run's options, the keywords `run`, `run_sync` and `BatchSession` take (see `run`): the
    options declared for the Python API (parley.core.option_declarations, their defaults from
    there; written out here so that type checkers see each keyword), checked when made as the
    command line checks them (the rule files are read): the roles as the batch records them, the
    bot itself when it is an object (`role_models`), the batch's options (`batch_options`) and the
    store's path."""

    def __init__(
        self,
        *,
        bot: BotArg = option("bot").default,
        user: str = option("user").default,
        judge: str = option("judge").default,
        trials: int = option("trials").default,
        concurrency: int = option("concurrency").default,
        max_turns: int = option("max_turns").default,
        timeout_s: float = option("timeout_s").default,
        bot_timeout_s: float = option("bot_timeout_s").default,
        db: str | Path | None = None,
        cache: bool = option("cache").default,
        rules: str | Path | None = option("rules").default,
        gen: Mapping[str, Mapping[str, Any]] | Sequence[str] = option("gen").default,
        price: Mapping[str, Any] | Sequence[str] = option("price").default,
        limit: Mapping[str, float] | Sequence[str] = option("limit").default,
    ) -> None:
        self.roles, self.bot = role_models(bot, user, judge, bot_timeout_s=bot_timeout_s)
        self.batch = batch_options(
            self.roles,
            trials=trials,
            concurrency=concurrency,
            max_turns=max_turns,
            timeout_s=timeout_s,
            cache=cache,
            rules=rules,
            gen=gen,
            price=price,
            limit=limit,
        )
        self.roles = self.batch.models  # with the roles' generation settings
        self.db = db


@keywords_of(RunOptions)
async def run(specs: ConversationSpec | Iterable[ConversationSpec], **options: Any) -> RunResult:
    """Run `specs` as one stored batch (source `python`) in `db` (default: $PARLEY_DB, else
    sessions/parley.db) and return its results. The options are `parley run`'s: the roles'
    models (`bot` may be a callable), `trials` per spec, `concurrency` (the adaptive limit's
    ceiling), `max_turns` and `timeout_s` per conversation, `bot_timeout_s` per bot call,
    `cache` (LLM replies replayed), `rules` (Sensei rule files, as `--rules`: each
    conversation's are checks of it; the pair and batch rules are decided once all are in, in
    `RunResult.rules`). ConfigError or SpecsInvalid before anything runs when an input is
    wrong; a conversation that breaks is a result, never an exception.

    The shared model clients stay open on this event loop for the next run (`run_sync` closes
    them with its loop)."""
    planned = [specs] if isinstance(specs, ConversationSpec) else list(specs)
    if not planned:
        raise ConfigError("run: no conversations given")
    _unique(planned)
    checked = await asyncio.to_thread(functools.partial(RunOptions, **options))  # the rule files are read: off the loop
    store = await asyncio.to_thread(open_store, checked.db)
    models: BatchModels | None = None
    try:
        batch = checked.batch
        models = BatchModels.for_batch(batch, store=store, bot=checked.bot)
        await asyncio.to_thread(models.check_keys, planned)  # a Python bot's import runs its module's code: off the loop
        prepared = await prepare_code_batch(store, planned, batch, models)
        outcome = await BatchRunner(store, prepared, models=models).run()
        return await asyncio.to_thread(read_results, store, outcome.batch_id, outcome.status)
    finally:
        if models is not None:
            await models.aclose()
        await asyncio.to_thread(store.close)


def open_store(db: str | Path | None) -> Store:
    """The store at `db` (default: $PARLEY_DB, else sessions/parley.db), parley.log beside it."""
    from parley.core.settings import settings

    path = Path(db) if db is not None else settings().db_path
    keep_log_beside(path)  # a Python bot's traceback goes to parley.log, as everywhere
    return Store.open(path)


def read_results(store: Store, batch_id: str, status: str) -> RunResult:
    """A stored batch as a RunResult: its summary, every conversation (read a page at a time),
    and its pair and batch rules when it had rule files."""
    batch = store.get_batch(batch_id)
    report = summarize(store, batch.id) if batch.options.rules is not None else None
    summary = batch_summary(store, batch.id)
    conversations = [ConversationResult.model_validate(stored, from_attributes=True) for stored in store.iter_conversations(batch.id)]
    return RunResult(
        batch_id=batch.id,
        status=status,
        summary=summary,
        conversations=conversations,
        rules=report.rules if report is not None else [],
        rule_labels=report.rule_labels if report is not None else {},
    )


@keywords_of(RunOptions)
def run_sync(specs: ConversationSpec | Iterable[ConversationSpec], **options: Any) -> RunResult:
    """`run`, from code that has no event loop running (a script, a plain test function): on an
    event loop of its own, closed with every client it opened."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise ParleyError("run_sync() cannot run inside a running event loop: in async code, `await run(...)`")

    async def main() -> RunResult:
        from parley.core.bots.connectors import aclose_connectors
        from parley.core.models import aclose_clients

        try:
            return await run(specs, **options)
        finally:
            await aclose_clients()
            await aclose_connectors()

    return asyncio.run(main())

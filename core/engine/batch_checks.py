"""What every new batch goes through before it is stored, whatever made it (files or code,
parley.core.engine.batch_runner; a re-run or a replay of another batch,
parley.core.engine.batch_lineage): its models' keys, its budget, the cap on conversations
planned at once (the service's), the check before launch (each endpoint asked once,
parley.core.engine.reachability) and the context lengths the endpoints reported; then its
record, stored `pending`. A dry run checks what needs no key and stores nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from parley.core.bots import offline_elsewhere
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.reachability import PreflightReport
from parley.core.errors import ConfigError, ParleyError
from parley.core.models import OFFLINE
from parley.core.records import BatchRecord, ConversationSpec
from parley.core.store import Store


class TooManyConversations(ParleyError):
    """A batch plans more conversations than its caller allows at once (the service's cap)."""


def offline_on_worlds(specs: Sequence[ConversationSpec], bot: str) -> None:
    """ConfigError, before anything runs, when the offline bot is asked for on a world that has no
    offline model of its own (the offline bot knows the order world): one line naming the world, the
    files, and what to use instead."""
    if bot.strip() != OFFLINE:
        return
    from parley.core.world import WorldError, world_of

    for spec in specs:
        try:
            world = world_of(spec)
        except WorldError:
            continue  # the file's reading reported it
        if not callable(world.hooks.get("offline_model")):
            files = list(dict.fromkeys(s.source for s in specs if s.world.name == spec.world.name and s.world.path == spec.world.path))
            shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            raise ConfigError(f"{offline_elsewhere(world)} ({shown}); nothing was run")


async def check_and_store(
    store: Store,
    record: BatchRecord,
    specs: Sequence[ConversationSpec],
    models: BatchModels,
    *,
    planned: int,
    dry_run: bool,
    max_planned: int | None = None,
) -> tuple[BatchRecord, PreflightReport | None]:
    """The checks above (ConfigError, UnreachableEndpoint, CredentialsRefused, a budget's
    ParleyError, TooManyConversations past `max_planned`), then `record` stored as planning
    `planned` conversations with the reported context lengths in its options. The record as
    stored and the check's report (None on a dry run)."""
    options = record.options
    offline_on_worlds(specs, models.names.bot)
    if not dry_run:
        models.check_keys(specs)
    models.check_budget(options.budget_usd, specs)
    if max_planned is not None and planned > max_planned:
        raise TooManyConversations(
            f"the batch plans {planned:,} conversations ({len(specs):,} spec{'s' if len(specs) != 1 else ''} x {options.trials} trials); "
            f"at most {max_planned:,} may be planned at once: split it into smaller batches"
        )
    preflight = None if dry_run else await models.preflight(specs)
    record = record.model_copy(update={"status": "pending", "planned": planned, "options": models.with_reported_context(options)})
    if not dry_run:
        await asyncio.to_thread(store.create_batch, record)
    return record, preflight

"""One stored batch kept open while conversations are handed to it from anywhere: the pytest
plugin's whole session (its collected items and its `parley` fixture's conversations) is one.

A `BatchSession` runs an open-ended batch (parley.core.engine.batch_runner: `submit`, `close`) on
an event loop of its own, in a daemon thread, so the callers (pytest's items, run one at a time
on its main thread, or a test's own event loop) never block it and it never blocks them: every
conversation submitted runs at once, under the batch's one adaptive limit, and each comes back
through a `concurrent.futures.Future` (or awaited, from async code: `asubmit`, `aconverse`).
A conversation may use other roles than the batch's (another bot, a judge): each combination
gets models of its own, checked when first used, and the batch records each conversation's bot.

With `rules` (Sensei rule files, as `parley run --rules` takes them), each conversation's rules
are checks of it as it ends; an open-ended batch knows its conversations only once it is
closed, so its pair and batch rules are decided then, over all of them, before `close` returns
(stored with the batch; `summary.rules` has them, `failed_rules` those that failed).

    session = BatchSession(bot=my_bot, db="ci.db")
    result = session.converse("refund_policy", goals=["ask for a refund of ORD-1004"])
    session.close()         # the batch ends `completed` (or `cancelled`, with cancel=True)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from parley.core.bots import Bot
from parley.core.engine import BatchModels, BatchResult, BatchRunner
from parley.core.evaluation import BatchSummary
from parley.core.library.building import conversation
from parley.core.library.keywords import keywords_of
from parley.core.library.results import ConversationResult
from parley.core.library.running import BotArg, RunOptions, open_store, prepare_code_batch, role_models
from parley.core.records import ConversationSpec, StoredConversation
from parley.core.reports import BatchReport
from parley.core.rules import RuleSummary
from parley.core.store import Store

__all__ = ["BatchSession"]

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")


def _awaited(submit: Callable[P, concurrent.futures.Future[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """`submit` awaited from async code on another event loop: called off that loop (it may start
    the session), its future awaited there; named `a` + its name, it takes what `submit` takes."""

    async def awaited(*args: P.args, **kwargs: P.kwargs) -> R:
        future = await asyncio.to_thread(submit, *args, **kwargs)
        return await asyncio.wrap_future(future)

    awaited.__signature__ = inspect.signature(submit).replace(return_annotation=inspect.Signature.empty)  # type: ignore[attr-defined]
    awaited.__name__ = f"a{submit.__name__}"
    awaited.__qualname__ = f"{submit.__qualname__.removesuffix(submit.__name__)}a{submit.__name__}"
    awaited.__doc__ = f"`{submit.__name__}`, awaited from async code on another event loop."
    return awaited


class BatchSession:
    """An open-ended stored batch on a loop of its own (see the module doc). Thread-safe: every
    method may be called from any thread but the session's own."""

    @keywords_of(RunOptions)
    def __init__(self, **options: Any) -> None:
        """The batch's options, as `parley.core.library.running.run` takes them (checked now:
        the rule files are read); nothing opens until the first conversation (or `start`)."""
        checked = RunOptions(**options)
        self.roles, self._bot, self.options, self.db = checked.roles, checked.bot, checked.batch, checked.db
        self.bot_timeout_s = self.roles.bot_timeout_s
        self.batch_id: str | None = None
        self.result: BatchResult | None = None
        self.summary: BatchSummary | None = None
        """The batch's summary once it is closed (its counts, pass rate and intervals); with
        rules, the batch's report (a BatchReport: its pair and batch rules among the rest)."""
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._store: Store | None = None
        self._runner: BatchRunner | None = None
        self._task: asyncio.Task[BatchResult] | None = None
        self._models: dict[tuple[str, str, str, int], BatchModels] = {}
        self._closed = False

    # -- the loop ----------------------------------------------------------------------------------

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    def start(self) -> str:
        """Open the store and store the batch (its checks first: a Python bot's import, API keys,
        the endpoints); its id. ConfigError and the like, raised here, when something is wrong."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this batch session is closed")
            if self.batch_id is not None:
                return self.batch_id
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="parley batch session", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
            try:
                self.batch_id = self._call(self._open()).result()
            except BaseException:
                self._call(self._end(cancel=True)).result()  # what opened (the store) closes; a later start tries again
                self._stop_loop()
                raise
            return self.batch_id

    async def _open(self) -> str:
        store = self._store = await asyncio.to_thread(open_store, self.db)
        models = await self._models_for(self.roles.bot, self.roles.user, self.roles.judge, self._bot)
        prepared = await prepare_code_batch(store, [], self.options, models)
        self._runner = BatchRunner(store, prepared, models=models, open_ended=True)
        self._task = asyncio.get_running_loop().create_task(self._runner.run(), name=f"parley-session-{prepared.id}")
        return prepared.id

    async def _models_for(self, bot: str, user: str, judge: str, given: Bot | None) -> BatchModels:
        key = (bot, user, judge, id(given))
        models = self._models.get(key)
        if models is None:
            roles = self.roles.model_copy(update={"bot": bot, "user": user, "judge": judge})
            models = BatchModels.for_batch(self.options.model_copy(update={"models": roles}), store=self._store, bot=given)
            # a Python bot's import (its module's code), a missing key: said before the conversation runs, off the loop
            await asyncio.to_thread(models.check_keys)
            self._models[key] = models
        return models

    def _stop_loop(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        if not thread.is_alive():
            loop.close()

    # -- conversations -----------------------------------------------------------------------------

    def submit(
        self,
        spec: ConversationSpec,
        trial: int = 1,
        *,
        bot: BotArg | None = None,
        user: str | None = None,
        judge: str | None = None,
    ) -> concurrent.futures.Future[ConversationResult]:
        """Run trial `trial` of `spec` in the batch, with other roles when given; its result, when
        it is stored (the conversation and its verdict). A problem with a role is the future's
        exception (ConfigError)."""
        self.start()
        return self._call(self._run(spec, trial, bot, user, judge))

    async def _run(self, spec: ConversationSpec, trial: int, bot: BotArg | None, user: str | None, judge: str | None) -> ConversationResult:
        assert self._runner is not None
        models: BatchModels | None = None
        if bot is not None or user is not None or judge is not None:
            roles, given = role_models(
                bot if bot is not None else self.roles.bot,
                user if user is not None else self.roles.user,
                judge if judge is not None else self.roles.judge,
                bot_timeout_s=self.bot_timeout_s,
            )
            if bot is None:
                given = self._bot
            models = await self._models_for(roles.bot, roles.user, roles.judge, given)
        stored: StoredConversation = await self._runner.submit(spec, trial, models=models)
        return ConversationResult.model_validate(stored, from_attributes=True)

    asubmit = _awaited(submit)

    def converse(
        self, name: str, *, bot: BotArg | None = None, user: str | None = None, judge: str | None = None, **spec: Any
    ) -> ConversationResult:
        """Build the conversation `name` (parley.core.library.building.conversation's arguments in
        `spec`), run it in the batch and wait for its result."""
        return self.submit(conversation(name, **spec), bot=bot, user=user, judge=judge).result()

    async def aconverse(
        self, name: str, *, bot: BotArg | None = None, user: str | None = None, judge: str | None = None, **spec: Any
    ) -> ConversationResult:
        """`converse`, awaited from async code."""
        return await self.asubmit(conversation(name, **spec), bot=bot, user=user, judge=judge)

    # -- the end -----------------------------------------------------------------------------------

    @property
    def rules(self) -> list[RuleSummary]:
        """The batch's pair and batch rules as they were decided at `close` (none before, or without rules)."""
        return self.summary.rules if isinstance(self.summary, BatchReport) else []

    @property
    def failed_rules(self) -> list[RuleSummary]:
        """The pair and batch rules that failed (a pair, or the batch)."""
        return [rule for rule in self.rules if rule.failed]

    def close(self, *, cancel: bool = False) -> BatchResult | None:
        """End the batch: what was submitted finishes and is stored (with `cancel`, what is in
        flight is stopped and stored as cancelled); the store and the loop close. How the batch
        ended, or None when nothing was ever run."""
        with self._lock:
            if self._closed:
                return self.result
            self._closed = True
        if self._loop is None:
            return None
        try:
            self.result = self._call(self._end(cancel)).result()
        finally:
            self._stop_loop()
        return self.result

    async def _end(self, cancel: bool) -> BatchResult | None:
        from parley.core.bots.connectors import aclose_connectors
        from parley.core.models import aclose_clients

        try:
            if self._runner is not None and self._task is not None:
                if cancel:
                    self._runner.cancel()
                else:
                    self._runner.close()
                ended = await self._task
                if self._store is not None:
                    from parley.core.reports import batch_summary, summarize

                    read = summarize if self.options.rules is not None else batch_summary  # the report lists the rules
                    self.summary = await asyncio.to_thread(read, self._store, ended.batch_id)
                return ended
            return None
        finally:
            for models in self._models.values():
                await models.aclose()
            await aclose_clients()
            await aclose_connectors()
            self._models.clear()
            if self._store is not None:
                store, self._store = self._store, None
                await asyncio.to_thread(store.close)

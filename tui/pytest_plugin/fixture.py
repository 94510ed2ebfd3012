"""The `parley` fixture: conversations written by hand in a test, run in the session's batch.

    def test_refund_policy(parley):
        result = parley.converse(bot=my_bot, goals=["ask for a refund of ORD-1004"], criteria=["..."])
        assert result.passed, result.explain()

    async def test_async(parley):
        result = await parley.aconverse(bot=my_async_bot, steps=[say("Where is ORD-1003?"), expect_tool("track_order")])

Each conversation is named after the test (`tests/test_bot.py::test_refund_policy#0`, then `#1`
for the test's second conversation...), its file relative to where pytest was run, so the same
test gives the same spec id run after run, however its options are written, and `parley compare`
matches them. The arguments are parley.api.conversation's, plus the roles (`bot`,
`user`, `judge`) when the test wants other ones than the session's `--parley-*` options. The
conversation runs on the session's own event loop (an async bot too): `aconverse` only awaits it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from parley.core.library import BotArg, ConversationResult

__all__ = ["ParleyFixture"]


class ParleyFixture:
    """What a test gets as `parley` (see the module doc)."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._count = 0

    def _name_and_source(self, name: str | None) -> tuple[str, int, str]:
        """The conversation's name and source: the test's file relative to where pytest was run
        (not to pytest's rootdir, which moves with the arguments), then the rest of its node id."""
        node = self._request.node
        index = self._count
        self._count += 1
        source = Path(os.path.relpath(node.path, self._request.config.invocation_params.dir)).as_posix()
        rest = node.nodeid.split("::", 1)[1] if "::" in node.nodeid else node.name
        return (name or f"{source}::{rest}"), index, source

    def _session(self) -> Any:
        from parley.tui.pytest_plugin.session import batch_session

        return batch_session(self._request.config)

    def converse(
        self,
        *,
        name: str | None = None,
        bot: BotArg | None = None,
        user: str | None = None,
        judge: str | None = None,
        **conversation: Any,
    ) -> ConversationResult:
        """Run one conversation (parley.api.conversation's arguments) and wait for its result."""
        from parley.core.errors import ParleyError
        from parley.core.library import conversation as build

        spec_name, index, source = self._name_and_source(name)
        try:
            spec = build(spec_name, index=index, source=source, **conversation)
            return self._session().submit(spec, bot=bot, user=user, judge=judge).result()
        except ParleyError as exc:  # a bad argument, a bot that cannot be imported, a key not set: one line
            pytest.fail(f"parley: {exc}", pytrace=False)

    async def aconverse(
        self,
        *,
        name: str | None = None,
        bot: BotArg | None = None,
        user: str | None = None,
        judge: str | None = None,
        **conversation: Any,
    ) -> ConversationResult:
        """`converse`, awaited from an async test."""
        from parley.core.errors import ParleyError
        from parley.core.library import conversation as build

        spec_name, index, source = self._name_and_source(name)
        try:
            spec = build(spec_name, index=index, source=source, **conversation)
            return await self._session().asubmit(spec, bot=bot, user=user, judge=judge)
        except ParleyError as exc:
            pytest.fail(f"parley: {exc}", pytrace=False)

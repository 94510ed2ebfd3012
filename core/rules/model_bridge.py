"""A parley chat model (async) as the blocking `RuleModel` the rule helpers ask.

Rules are evaluated synchronously (an expression's helpers call the model in the middle of
it), so evaluation runs off the event loop and each question is sent to the loop that owns
the model's client with `run_coroutine_threadsafe`. A command with no loop of its own starts
one in a thread for as long as it needs it (`model_loop`). Answers are kept per prompt for the
run, so a rule's `yields` does not ask again what its oracle just asked; the tokens of the
questions asked are summed in `usage`, so a batch counts what its rules cost. `close()` makes
every later question fail at once (a batch being stopped does not wait for them).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from parley.core.errors import ProviderError
from parley.core.models import ChatModel
from parley.core.records import ChatMessage, GenerateConfig, Usage

DEFAULT_TIMEOUT_S = 300.0
"""The longest one question may take, retries included."""


class ChatModelAsker:
    """`ask(prompt)` for a ChatModel whose client lives on `loop` (never call it from that loop)."""

    def __init__(self, model: ChatModel, loop: asyncio.AbstractEventLoop, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.model = model
        self.name = model.name
        self.loop = loop
        self.timeout_s = timeout_s
        self._answers: dict[str, str] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.usage = Usage()

    def close(self) -> None:
        """No more questions: each later one fails at once (the rule is then not run)."""
        self._closed = True

    def ask(self, prompt: str) -> str:
        with self._lock:
            if prompt in self._answers:
                return self._answers[prompt]
        if self._closed:
            raise ProviderError("the run was stopped before the model was asked", retryable=False)
        if _running_loop() is self.loop:
            raise RuntimeError("a rule model was asked from its own event loop: evaluate rules in a worker thread")
        messages = [ChatMessage(role="user", content=prompt)]
        future = asyncio.run_coroutine_threadsafe(self.model.generate(messages, config=GenerateConfig(temperature=0.0)), self.loop)
        try:
            reply = future.result(self.timeout_s)
        except TimeoutError:
            future.cancel()
            raise ProviderError(f"no answer within {self.timeout_s:g} s", retryable=True) from None
        except concurrent.futures.CancelledError:  # the loop stopped it (a run being stopped): not the rule's doing
            raise ProviderError("the question was cancelled: the run was stopped", retryable=False) from None
        answer = reply.text or ""
        with self._lock:
            self._answers[prompt] = answer
            self.usage = self.usage + reply.usage
        return answer


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@contextmanager
def model_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop running in a thread of its own, closed when the block ends."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="parley-rule-model", daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        asyncio.run_coroutine_threadsafe(_close_clients(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


async def _close_clients() -> None:
    """The loop's model clients and their connections, closed before the loop stops."""
    from parley.core.models import aclose_clients

    await aclose_clients()
    await asyncio.get_running_loop().shutdown_asyncgens()

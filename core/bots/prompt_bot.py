"""The prompt bot: any LLM with a system prompt read from a file, and no tools.

It is the Agent-LLM of the scenario files (`--bot openai/gpt-4o-mini --bot-prompt
profiles/scenarios/templates/agent.txt`): a model given only a system prompt. It cannot look up
or change orders, so it runs without parley's World and world checks are not applicable.

The prompt file may hold `{NAME}` placeholders (Python `str.format` semantics; `{{`/`}}` are
literal braces), filled per conversation from its spec's variables, plus `session_id` (the
spec's session id), `CURRENT_DATE` and `CUSTOMER_ID` (the conversation's date and customer)
when the spec does not set them. A placeholder a spec does not fill is a ConfigError before
the batch runs (`check_prompt_variables`), never a raw `{...}` sent to a model.

The bot ends the conversation (bot_stop) when its answer holds parley's end marker `[END]` or
the word `end_call` anywhere (the scenario agent template's convention; the simulation service
ends the call wherever the word appears); either is removed from the text shown.

The prompt is fitted to the model's context (`context_tokens`, less room for the answer): the
middle of a long conversation is left out, and the system prompt says so (parley.core.prompts).
"""

from __future__ import annotations

import asyncio
import datetime
import re
import string
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from parley.core.bots.api import BotContext, BotEvent, BotTurn, TextDelta, TurnCompleted
from parley.core.bots.bot_files import read_bot_file
from parley.core.bots.bot_prompt import EMPTY_REPLY_TEXT, END_MARKER
from parley.core.errors import ConfigError
from parley.core.models import ChatModel
from parley.core.prompts import DEFAULT_CONTEXT_TOKENS, estimate_messages, fit_messages, prompt_budget
from parley.core.records import ChatMessage, GenerateConfig

if TYPE_CHECKING:
    from parley.core.records import ConversationSpec

END_CALL = re.compile(r"(?i)\bend_call\b")


class PromptTemplate:
    """A system prompt file and the placeholders it uses."""

    def __init__(self, path: str | Path, text: str) -> None:
        self.path = str(path)
        self.text = text
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise ConfigError(f"{self.path}: not a valid prompt template: {exc} (write literal braces as {{{{ and }}}})") from None
        fields = []
        for _, name, _, _ in parsed:
            if name is None:
                continue
            if not name.isidentifier():
                raise ConfigError(f"{self.path}: '{{{name}}}' is not a variable name (write literal braces as {{{{ and }}}})")
            fields.append(name)
        self.fields: tuple[str, ...] = tuple(dict.fromkeys(fields))

    @classmethod
    def read(cls, path: str | Path) -> PromptTemplate:
        """The template in `path`; ConfigError when it cannot be read or parsed."""
        text = read_bot_file(path, "prompt file", option="--bot-prompt")
        if not text.strip():
            raise ConfigError(f"{path}: the prompt file is empty")
        return cls(path, text)

    def missing(self, variables: Mapping[str, str]) -> list[str]:
        return [name for name in self.fields if name not in variables]

    def render(self, variables: Mapping[str, str], *, who: str = "this conversation") -> str:
        """The prompt with `variables` filled in; ConfigError naming what is missing."""
        missing = self.missing(variables)
        if missing:
            names = ", ".join(f"{{{m}}}" for m in missing)
            raise ConfigError(f"{self.path}: the prompt uses {names}, which {who} does not define")
        return self.text.format_map(dict(variables))


def prompt_variables(spec: ConversationSpec, today: datetime.date) -> dict[str, str]:
    """What a prompt template may use for one conversation of `spec` (see the module doc)."""
    values = {
        "session_id": str(spec.extra.get("session_id") or spec.spec_id),
        "CURRENT_DATE": today.isoformat(),
        "CUSTOMER_ID": spec.world.customer_id or "",
    }
    values.update(spec.variables)
    return values


def check_prompt_variables(template: PromptTemplate, specs: Iterable[ConversationSpec], default_today: datetime.date) -> None:
    """ConfigError for the first spec that leaves a placeholder of the prompt unfilled."""
    for spec in specs:
        template.render(prompt_variables(spec, spec.world.today or default_today), who=f"the spec {spec.spec_id}")


def strip_end(text: str) -> tuple[str, bool]:
    """The text without `[END]` / `end_call`, and whether it had one."""
    ends = END_MARKER in text or END_CALL.search(text) is not None
    if not ends:
        return text, False
    pieces = END_CALL.split(text.replace(END_MARKER, ""))
    return " ".join(piece.strip() for piece in pieces if piece.strip()), True


class PromptBot:
    """A model with a system prompt and no tools (see the module doc)."""

    uses_world = False

    def __init__(
        self,
        model: ChatModel,
        template: PromptTemplate,
        *,
        config: GenerateConfig | None = None,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    ) -> None:
        self.model = model
        self.template = template
        self.name = model.name
        self.config = config
        self.context_tokens = context_tokens

    def system_prompt(self, ctx: BotContext) -> str:
        return self.template.render(ctx.variables)

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        """Answer the last customer message; the answer is appended to `transcript`."""
        started = time.perf_counter()
        system = ChatMessage(role="system", content=self.system_prompt(ctx))
        # No tools: an injected tool exchange (a playbook's inject_tool) is left out, its
        # assistant text kept.
        visible = [ChatMessage(role=m.role, content=m.content) for m in transcript if m.role in ("user", "assistant") and m.content]
        max_tokens = self.config.max_tokens if self.config is not None else None
        messages = [system, *visible]
        budget = prompt_budget(self.context_tokens, max_tokens=max_tokens)
        if estimate_messages(messages) > budget:
            messages = await asyncio.to_thread(fit_messages, messages, budget)  # some milliseconds of CPU: off the event loop
        reply = await self.model.generate(messages, None, self.config)
        ctx.usage = ctx.usage + reply.usage
        text, ends = strip_end(reply.text or "")
        if not text.strip() and not ends:
            text = EMPTY_REPLY_TEXT
        transcript.append(ChatMessage(role="assistant", content=text))
        return BotTurn(text=text, usage=reply.usage, latency_s=time.perf_counter() - started, rounds=1, ends_conversation=ends)

    async def respond_stream(self, transcript: list[ChatMessage], ctx: BotContext) -> AsyncIterator[BotEvent]:
        """As `respond`, the answer as one delta (the end marker must not be shown)."""
        turn = await self.respond(transcript, ctx)
        if turn.text:
            yield TextDelta(text=turn.text)
        yield TurnCompleted(turn=turn)

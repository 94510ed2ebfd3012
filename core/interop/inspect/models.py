"""inspect_ai's models standing in for parley's roles.

`InspectChatModel` is parley's ChatModel over an inspect `Model`: parley messages and tools in,
inspect's generate, a ModelReply out (text, tool calls, usage, latency). inspect does its own
retries, counts usage per model and per role in the eval log, and caps connections; a call
that still fails becomes a ProviderError, which parley records as it records any provider's
(the conversation ends in `error`, a judge failure is a judge error, never a score).

`InspectRoles` gives `parley.core.engine.batch_conversation.run_planned` the bot, the simulated customer and
the judge of an inspect eval, following inspect's model roles:
- the bot is the evaluated model (`--model`), or parley's offline bot with `bot="offline"`;
- the customer is the `user` role (`--model-role user=...`); without it, parley's offline user
  (a playbook needs none: its customer lines are scripted);
- the judge is the `grader` role (`--model-role grader=...`); without it, parley's offline
  judge, which decides from the checks alone.
So with no roles given, only the bot is inspect's, and the eval needs no key but the bot's.
"""

from __future__ import annotations

import time

from inspect_ai.model import GenerateConfig as InspectConfig
from inspect_ai.model import Model, get_model, model_roles

from parley.core.bots import Bot, WorldBot, declared_fallback
from parley.core.errors import ConfigError, ProviderError
from parley.core.evaluation import Judge, LLMJudge, OfflineJudge
from parley.core.interop.inspect.messages import message_from_inspect, messages_to_inspect, tool_to_inspect, usage_from_inspect
from parley.core.models import OFFLINE, ChatModelBase
from parley.core.records import ConversationSpec, ModelReply, ModelRequest
from parley.core.users import CustomerFacts, UserSimulator
from parley.core.world import WorldDefinition

USER_ROLE = "user"
GRADER_ROLE = "grader"
BOT_CHOICES = ("model", OFFLINE)


class InspectChatModel(ChatModelBase):
    """parley's ChatModel over an inspect Model (see the module doc). `name` is inspect's
    `provider/model` name, which is also how parley names models. inspect's generate does not
    stream to its caller: a stream is the whole text as one delta."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = str(model)

    def __repr__(self) -> str:
        return f"InspectChatModel({self.name})"

    async def reply_to(self, request: ModelRequest) -> ModelReply:
        config = request.config
        options = InspectConfig(
            temperature=config.temperature if config else None,
            seed=config.seed if config else None,
            max_tokens=config.max_tokens if config else None,
            top_p=config.top_p if config else None,
            stop_seqs=list(config.stop) if config and config.stop else None,
        )
        started = time.perf_counter()
        try:
            output = await self.model.generate(
                messages_to_inspect(request.messages), tools=[tool_to_inspect(t) for t in request.tools or []], config=options
            )
        except Exception as exc:  # inspect retried already: what is left is for the record
            raise ProviderError(f"{self.name} failed: {type(exc).__name__}: {exc}") from exc
        latency = time.perf_counter() - started
        if output.error:
            raise ProviderError(f"{self.name} failed: {output.error}")
        reply = message_from_inspect(output.message)
        return ModelReply(
            model=output.model or self.name,
            text=reply.content,
            tool_calls=reply.tool_calls,
            usage=usage_from_inspect(output.usage),
            latency_s=output.time if output.time is not None else latency,
            finish_reason=output.stop_reason,
        )


def role_model(role: str) -> Model | None:
    """The inspect model bound to `role` for this eval (`--model-role ROLE=...`), else None."""
    bound = model_roles().get(role)
    if isinstance(bound, list):
        bound = bound[0] if bound else None
    return bound


class InspectRoles:
    """The bot, customers and judge of one inspect sample, as run_planned takes them from a
    batch's BatchModels (see the module doc)."""

    check_limits = None
    """No run's default limits (`--limit`): an inspect sample is checked against its spec's own."""

    def __init__(self, bot: str = "model") -> None:
        self.check_bot(bot)
        if bot == OFFLINE:
            self._bot: Bot = WorldBot(None)  # each world's own offline model
        else:
            self._bot = WorldBot(InspectChatModel(get_model()))
        user = role_model(USER_ROLE)
        grader = role_model(GRADER_ROLE)
        self._user = InspectChatModel(user) if user is not None else None
        self._judge: Judge = LLMJudge(InspectChatModel(grader)) if grader is not None else OfflineJudge()

    @staticmethod
    def check_bot(bot: str) -> None:
        """ConfigError unless `bot` is `model` or `offline`."""
        if bot not in BOT_CHOICES:
            raise ConfigError(f"bot={bot!r}: use 'model' (inspect's --model) or 'offline' (parley's offline bot)")

    @property
    def names(self) -> dict[str, str]:
        """Each role's model as parley names it (`offline` for parley's own)."""
        return {
            "bot": self._bot.name,
            "user": self._user.name if self._user is not None else OFFLINE,
            "judge": str(getattr(self._judge, "name", OFFLINE)),
        }

    def bot(self) -> Bot:
        return self._bot

    def user(self, spec: ConversationSpec, *, world: WorldDefinition | None = None, customer: CustomerFacts | None = None) -> UserSimulator:
        """A fresh simulated customer for one conversation of `spec`, on `world`, knowing what
        `customer` says of itself (as the engine's own roles give it)."""
        bot_fallback = declared_fallback(self._bot)
        if self._user is None:
            from parley.core.users import make_user_simulator

            return make_user_simulator(spec, OFFLINE, bot_fallback=bot_fallback, world=world, customer=customer)
        from parley.core.users import LLMUser

        return LLMUser(spec, self._user, bot_fallback=bot_fallback, world=world, customer=customer)

    def judge(self) -> Judge:
        return self._judge

"""`make_user_simulator(spec, model_name)`: the one way the engine gets a simulated customer."""

from __future__ import annotations

from typing import Any

from parley.core.records import ConversationSpec
from parley.core.users.customer_facts import CustomerFacts
from parley.core.users.simulator import UserSimulator
from parley.core.world import WorldDefinition

PROFILE_MODEL = "profile"


def make_user_simulator(
    spec: ConversationSpec,
    model_name: str = "offline",
    *,
    bot_fallback: str | None = None,
    world: WorldDefinition | None = None,
    customer: CustomerFacts | None = None,
    **model_options: Any,
) -> UserSimulator:
    """A fresh simulator for one conversation of `spec`.

    `offline` (the default): the deterministic OfflineUser, or for a spec with an `attack:` block
    the OfflineAttacker (parley.core.users.attacker). `profile`: an LLMUser on the model
    the profile's `llm:` block names (`spec.llm.qualified_model`). Any other name: an LLMUser on
    that model (`openai/gpt-4o-mini`, `ollama/llama3`, ...; see parley.core.models.registry), with the
    profile's temperature. Make one per conversation: simulators keep the conversation's state.
    `bot_fallback` is the fallback sentence the bot under test declares (None: it declares none).
    `world`: the conversation's world (None: the one the spec names); `customer`: what the
    customer knows of itself (parley.core.users.customer_facts: its credentials, on a world where
    it authenticates in the conversation). `model_options` go to `get_model` (env, timeout_s,
    on_retry...). ConfigError for a model name that is not valid.
    """
    name = (model_name or "offline").strip()
    if spec.attack is not None and name == "offline":
        from parley.core.users.attacker import OfflineAttacker
        from parley.core.world import world_of

        return OfflineAttacker(spec, world=world if world is not None else world_of(spec), customer=customer)
    if name == "offline":
        from parley.core.users.offline_user import OfflineUser

        return OfflineUser(spec, bot_fallback=bot_fallback, world=world, customer=customer)
    if name == PROFILE_MODEL:
        name = spec.llm.qualified_model
    from parley.core.models import get_model
    from parley.core.users.llm_user import LLMUser

    if spec.attack is not None:
        from parley.core.users.attacker import attacker_spec
        from parley.core.world import world_of

        spec = attacker_spec(spec, world if world is not None else world_of(spec), customer)
    return LLMUser(spec, get_model(name, role="user", **model_options), bot_fallback=bot_fallback, world=world, customer=customer)

"""`get_model(name, role=...)`: the one way the rest of parley gets a ChatModel.

Every name is an OpenAI-compatible endpoint (see `parley.core.models.names`). `offline` is not
a model here: parley's offline roles are built where they live (the offline order bot in
parley.core.bots, the offline customer in parley.core.users, the offline judge in
parley.core.evaluation), above this layer. Importing this module reads no environment and opens
no connection.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from parley.core.errors import ConfigError
from parley.core.models.api import ChatModel
from parley.core.models.names import OFFLINE, parse_model_name
from parley.core.models.retry import OnRetry, RetryPolicy, Sleep
from parley.core.records import ModelPrice


def get_model(
    name: str,
    *,
    role: str = "bot",
    timeout_s: float | None = None,
    retry_policy: RetryPolicy | None = None,
    on_retry: OnRetry | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Sleep | None = None,
    rng: random.Random | None = None,
    prices: Mapping[str, ModelPrice] | None = None,
) -> ChatModel:
    """The model called `name` for `role` (bot, user or judge).

    ConfigError for a name that is not one of the valid forms. An unset API key is not an error
    yet: it is raised, as a ConfigError, at the model's first call (or its `check()`). Models of
    one endpoint share one HTTP client. `on_retry` hears about every retry (429s included).
    `prices` (a batch's `--price`, by model name) win over the price table.
    """
    name = (name or "").strip()
    if name == OFFLINE:
        raise ConfigError(f"'offline' names parley's built-in {role}, not a model endpoint: it has no model to get here")
    spec = parse_model_name(name)
    from parley.core.models.openai_provider import DEFAULT_TIMEOUT_S, OpenAICompatibleModel

    return OpenAICompatibleModel(
        spec,
        role=role,
        timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s,
        retry_policy=retry_policy,
        on_retry=on_retry,
        env=env,
        sleep=sleep,
        rng=rng,
        prices=prices,
    )

"""ConversationSpec: one conversation to run, whatever file it came from.

Profiles expand into these today; playbooks and scenario files produce the same type, so the
runner has one input. Everything the user simulator, the world and the evaluator need is here,
already resolved: variables substituted, personalities read, random choices drawn.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from parley.core.records.attack import AttackSpec
from parley.core.records.profile import (
    Expectations,
    GoalStyle,
    InteractionStyle,
    LlmSettings,
    OutputField,
    WorldSpec,
)

SpecKind = Literal["profile", "playbook", "scenario"]
VariableValue = int | float | str | list[int | float | str]


class ConversationSpec(BaseModel):
    """One conversation, ready to run. Identical inputs and seed give an identical spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec_id: str
    """Stable and readable: `<name>#<index>`, e.g. `pizza_order_test_custom#3`."""
    kind: SpecKind
    source: str
    """The file it came from, as given to the loader."""
    name: str
    """The test name (a profile's `test_name`)."""
    index: int
    """0-based position in its batch."""
    seed: int
    """Derived from the batch seed, the name and the index; seeds the offline simulator."""

    variables: dict[str, str] = Field(default_factory=dict)
    """Each variable's value as it was written into the goals ("cheese and mushrooms")."""
    variable_values: dict[str, VariableValue] = Field(default_factory=dict)
    """The same values typed: one value, or a list for default()/random(N)/random(rand)."""
    goals: list[str] = Field(default_factory=list)
    """Goal texts with the values filled in."""

    role: str = ""
    language: str = "English"
    context: list[str] = Field(default_factory=list)
    """Context lines, personality files already read into lines."""
    interaction_styles: list[InteractionStyle] = Field(default_factory=list)
    """Concrete styles for this conversation (a `random:` entry already drawn)."""
    goal_style: GoalStyle = GoalStyle(kind="default")
    """For `random_steps`, `steps` holds the number drawn for this conversation."""
    fallback: str | None = None
    is_starter: bool = False
    outputs: list[OutputField] = Field(default_factory=list)
    world: WorldSpec = WorldSpec()
    expect: Expectations | None = None
    attack: AttackSpec | None = None
    """An attack against the bot (a profile's `attack:` block): the simulated customer is an attacker,
    and the conversation is judged by whether the world shows the attack succeeded."""
    llm: LlmSettings = LlmSettings()
    warnings: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    """Kind-specific data that has no field here (a playbook's steps, a scenario's prompts)."""


def derive_seed(batch_seed: int, name: str, index: int) -> int:
    """A conversation's seed from the batch seed, its name and index: stable across runs and
    machines (no hash randomisation), and below 2**63 so SQLite stores it as an integer."""
    digest = hashlib.sha256(f"{batch_seed}:{name}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def make_spec_id(name: str, index: int) -> str:
    """`<name>#<index>`."""
    return f"{name}#{index}"

"""Expansion: a validated Profile -> the list of ConversationSpecs to run. Pure and seeded.

How variables take their values, conversation by conversation (as Sensei's code does, see
`parley.core.specs.combinations`):
- `forward(x)` nests x inside the variable: the chain they make is an odometer whose last wheel
  (x) turns fastest; conversation i takes the chain's combination i, wrapping around. Each chain
  turns on its own. A `forward()` no chain mentions steps through its values, one per
  conversation. `all_combinations` is the largest chain's product; `sample(f)` the first
  round(f * that) conversations.
- `another()`: a shuffled deck per variable, dealt one per conversation; reshuffled when empty.
- `random()`, `random(N)`, `random(rand)`: drawn per conversation from the conversation's seed.
- `default()`: all values.
Several values are written into goal text naturally: "cheese, mushrooms and pepperoni".

Randomness comes only from `random.Random` instances seeded with strings built from the batch
seed, the test name and the conversation index (never the global RNG), so the same profile and
seed give byte-identical specs, and a conversation's own draws do not depend on how many
conversations the batch has.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, MutableMapping, Sequence

from parley.core.errors import ProfileError
from parley.core.records import (
    ConversationSpec,
    GoalStyle,
    InteractionStyle,
    Profile,
    RandomStyles,
    Scalar,
    Variable,
    VariableValue,
    derive_seed,
    make_spec_id,
)
from parley.core.specs.combinations import chain_digits, forward_plan, sample_size
from parley.core.specs.combinations import combination_count as sensei_combinations
from parley.core.specs.profile_loader import PLACEHOLDER_RE
from parley.core.specs.variables import coerce

GenerateItems = Callable[[str], Awaitable[list[str]]]

__all__ = [
    "GenerateItems",
    "any_item_instruction",
    "combination_count",
    "conversation_count",
    "expand",
    "join_values",
    "resolve_any_items",
]


# -- any() items --------------------------------------------------------------------------------


def any_item_instruction(variable: Variable, prompt: str) -> str:
    """What the user-simulator model is asked for one `any(prompt)` item of `variable`."""
    kind = {"int": "a whole number", "float": "a number", "string": "a short text"}[variable.type]
    parts = [f"Write a list of {prompt}."]
    if variable.values:
        listed = ", ".join(str(v) for v in variable.values)
        parts.append(f"Leave out these and anything like them: {listed}.")
    parts.append(f"Each item is {kind}. Answer with one item per line and nothing else.")
    return " ".join(parts)


async def resolve_any_items(
    profile: Profile,
    generate: GenerateItems | None,
    *,
    cache: MutableMapping[str, list[str]] | None = None,
) -> Profile:
    """A copy of `profile` with every `any(...)` data item replaced by generated items.

    `generate` gets one instruction per any() item (see `any_item_instruction`) and returns the
    items; all instructions are sent concurrently, once per profile (the returned profile keeps
    them: expand it as often as needed). `cache`, keyed by instruction, lets a caller keep the
    items across profiles or runs. With `generate=None` (offline) the listed items are used and
    a warning says any() needs an LLM; a variable left with no items raises ProfileError at its
    `data:`. Errors raised by `generate` propagate unchanged.
    """
    if generate is None:
        return _resolve_offline(profile)
    pending = [(v, p) for v in profile.user.variables for p in v.any_prompts]
    if not pending:
        return profile
    cache = {} if cache is None else cache

    async def one(variable: Variable, prompt: str) -> list[str]:
        instruction = any_item_instruction(variable, prompt)
        if instruction not in cache:
            cache[instruction] = [str(item) for item in await generate(instruction)]
        return cache[instruction]

    results = await asyncio.gather(*(one(v, p) for v, p in pending))
    generated: dict[str, list[str]] = {}
    for (variable, _prompt), items in zip(pending, results, strict=True):
        generated.setdefault(variable.name, []).extend(items)

    def with_generated(variable: Variable, warnings: list[str]) -> Variable:
        values = list(variable.values)
        rejected = []
        for raw in generated.get(variable.name, []):
            value = coerce(raw.strip(), variable.type, lenient=True)
            if value is None or (isinstance(value, str) and not value):
                rejected.append(raw)
            elif value not in values:
                values.append(value)
        if rejected:
            warnings.append(
                variable.data_location.render(
                    f"dropped {len(rejected)} generated item(s) that are not {variable.type}: " + ", ".join(repr(r) for r in rejected[:5])
                )
            )
        if not values:
            raise variable.data_location.error(f"any() generated no usable items for '{variable.name}' ({', '.join(variable.any_prompts)})")
        return variable.model_copy(update={"values": values, "any_prompts": []})

    return _with_any_resolved(profile, with_generated)


def _resolve_offline(profile: Profile) -> Profile:
    if not any(v.any_prompts for v in profile.user.variables):
        return profile

    def with_listed(variable: Variable, warnings: list[str]) -> Variable:
        prompts = ", ".join(f"any({p})" for p in variable.any_prompts)
        if not variable.values:
            raise variable.data_location.error(
                f"'{variable.name}' has only {prompts} items, which need an LLM to generate; "
                "choose a user-simulator model or add plain items"
            )
        listed = ", ".join(str(v) for v in variable.values)
        warnings.append(
            variable.data_location.render(f"{prompts} needs an LLM to generate items; offline, only the listed items are used ({listed})")
        )
        return variable.model_copy(update={"any_prompts": []})

    return _with_any_resolved(profile, with_listed)


def _with_any_resolved(profile: Profile, resolve: Callable[[Variable, list[str]], Variable]) -> Profile:
    """A copy of `profile` with each variable that has any() items replaced by `resolve(variable,
    warnings)` (which may add to the profile's warnings), its counts checked."""
    warnings = list(profile.warnings)
    variables = [resolve(v, warnings) if v.any_prompts else v for v in profile.user.variables]
    user = profile.user.model_copy(update={"variables": variables})
    resolved = profile.model_copy(update={"user": user, "warnings": warnings})
    _check_counts(resolved)
    return resolved


def _check_counts(profile: Profile) -> None:
    for variable in profile.user.variables:
        if not variable.values:
            raise variable.data_location.error(f"'{variable.name}' has no values")
    number = profile.conversation.number
    if number.kind != "count":
        total = sensei_combinations(profile.user.variables) or 0
        if sample_size(number.fraction or 1.0, total) < 1:
            where = profile.user.variables[0].location if profile.user.variables else None
            written = "all_combinations" if number.kind == "all_combinations" else f"sample({number.fraction:g})"
            reason = f"{written} gives 0 conversations: {total} combinations of nested forward() variables"
            raise where.error(reason) if where is not None else ProfileError(reason, file=profile.source)


# -- counting ---------------------------------------------------------------------------------------


def combination_count(profile: Profile) -> int:
    """Sensei's `all_combinations` for this profile: the largest forward() chain's product (0
    without a chain). any() items still unresolved are not counted: this is the offline count."""
    return sensei_combinations(profile.user.variables) or 0


def conversation_count(profile: Profile) -> int:
    """How many conversations `expand` makes for this profile."""
    number = profile.conversation.number
    if number.kind == "count":
        return int(number.count or 1)
    return sample_size(1.0 if number.kind == "all_combinations" else number.fraction or 1.0, combination_count(profile))


# -- expansion --------------------------------------------------------------------------------------


def expand(profile: Profile, seed: int = 0, *, id_base: str | None = None) -> list[ConversationSpec]:
    """The conversations of `profile` for batch `seed`: same profile and seed, same specs in the
    same order. any() items not resolved beforehand are handled as offline (with a warning).

    Spec ids are `<id_base>#<index>` (id_base defaults to the test name; a folder where several
    files share a test name gives each file its own base), and the seeds derive from it too."""
    profile = _resolve_offline(profile)
    _check_counts(profile)
    base = id_base or profile.test_name
    variables = profile.user.variables
    plan = forward_plan(variables)
    batch_rng = random.Random(f"parley-batch:{seed}:{base}")
    count = conversation_count(profile)
    decks = {v.name: _deal(v.values, count, batch_rng) for v in variables if v.function.kind == "another"}
    specs = []
    for index in range(count):
        spec_seed = derive_seed(seed, base, index)
        rng = random.Random(f"parley-conversation:{spec_seed}")
        forwards: dict[str, VariableValue] = {v.name: v.values[index % len(v.values)] for v in plan.independent}
        for chain in plan.chains:
            for variable, digit in zip(chain, chain_digits(index, chain), strict=True):
                forwards.setdefault(variable.name, variable.values[digit])  # a variable in two chains: the first
        values: dict[str, VariableValue] = {}
        for variable in variables:
            kind = variable.function.kind
            if kind == "forward":
                values[variable.name] = forwards[variable.name]
            elif kind == "another":
                values[variable.name] = decks[variable.name][index]
            else:
                values[variable.name] = _pick(variable, rng)
        texts = {name: join_values(value) for name, value in values.items()}
        specs.append(
            ConversationSpec(
                spec_id=make_spec_id(base, index),
                kind="profile",
                source=profile.source,
                name=profile.test_name,
                index=index,
                seed=spec_seed,
                variables=texts,
                variable_values=values,
                goals=[_fill(goal, texts) for goal in profile.user.goals],
                role=profile.user.role,
                language=profile.user.language,
                context=list(profile.user.context),
                interaction_styles=_resolve_styles(profile.conversation.interaction_style, rng),
                goal_style=_resolve_goal_style(profile.conversation.goal_style, rng),
                fallback=profile.chatbot.fallback,
                is_starter=profile.chatbot.is_starter,
                outputs=list(profile.chatbot.outputs),
                world=profile.world,
                expect=profile.expect,
                attack=profile.attack,
                llm=profile.llm,
                warnings=list(profile.warnings),
            )
        )
    return specs


def _deal(values: Sequence[Scalar], count: int, rng: random.Random) -> list[Scalar]:
    """`count` values from shuffled decks of `values`; a new deck never starts with the value
    the previous one ended on, so consecutive conversations always differ (given 2+ values)."""
    dealt: list[Scalar] = []
    while len(dealt) < count:
        deck = list(values)
        rng.shuffle(deck)
        if dealt and len(deck) > 1 and deck[0] == dealt[-1]:
            swap = rng.randrange(1, len(deck))
            deck[0], deck[swap] = deck[swap], deck[0]
        dealt.extend(deck)
    return dealt[:count]


def _pick(variable: Variable, rng: random.Random) -> VariableValue:
    values = variable.values
    function = variable.function
    if function.kind == "default":
        return list(values)
    if function.rand:
        how_many = rng.randint(1, len(values))
    else:
        how_many = min(function.count or 1, len(values))  # Sensei: random.sample(data, min(N, len))
    if how_many == 1 and not function.rand:
        return values[rng.randrange(len(values))]
    chosen = sorted(rng.sample(range(len(values)), how_many))  # keep the list's own order
    return [values[i] for i in chosen]


def join_values(value: VariableValue) -> str:
    """A value as goal text: `a`, `a and b`, `a, b and c`."""
    if not isinstance(value, list):
        return str(value)
    words = [str(v) for v in value]
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def _fill(goal: str, texts: dict[str, str]) -> str:
    return PLACEHOLDER_RE.sub(lambda m: texts.get(m.group(1), m.group(0)), goal)


def _resolve_styles(entries: Sequence[InteractionStyle | RandomStyles], rng: random.Random) -> list[InteractionStyle]:
    """Concrete styles: each `random:` entry becomes a random non-empty subset of its choices
    (in the order written). `default` only stands alone: other styles replace it."""
    styles: list[InteractionStyle] = []
    for entry in entries:
        if isinstance(entry, RandomStyles):
            if not entry.choices:
                continue
            how_many = rng.randint(1, len(entry.choices))
            picked = sorted(rng.sample(range(len(entry.choices)), how_many))
            styles.extend(entry.choices[i] for i in picked)
        else:
            styles.append(entry)
    unique: list[InteractionStyle] = []
    for style in styles:
        if all(s.name != style.name for s in unique):
            unique.append(style)
    if len(unique) > 1:
        unique = [s for s in unique if s.name != "default"]
    return unique or [InteractionStyle(name="default")]


def _resolve_goal_style(goal_style: GoalStyle, rng: random.Random) -> GoalStyle:
    if goal_style.kind == "random_steps" and goal_style.max_steps:
        return goal_style.model_copy(update={"steps": rng.randint(1, goal_style.max_steps)})
    return goal_style

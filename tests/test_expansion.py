"""Expansion of profiles into ConversationSpecs: functions, numbers, styles, seeds, any()."""

from __future__ import annotations

import random
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from parley.core.errors import ProfileError
from parley.core.records.profile import InteractionStyle, Profile
from parley.core.records.spec import ConversationSpec, derive_seed
from parley.core.specs.expansion import (
    any_item_instruction,
    combination_count,
    conversation_count,
    expand,
    join_values,
    resolve_any_items,
)
from parley.core.specs.profile_loader import load_profile, parse_profile

DATA = Path(__file__).parent / "data" / "profiles"


def profile_from(variables: str, *, number: str = "1", styles: str = "", goal_style: str = "", goal: str | None = None) -> Profile:
    """A profile with the given variable definitions, each used in one goal."""
    body = textwrap.dedent(variables).strip("\n")
    names = [line[2:].split(":")[0].strip() for line in body.splitlines() if line.startswith("- ")]
    goal = goal or " | ".join("{{" + n + "}}" for n in names)
    text = f'test_name: exp\nuser:\n  role: r\n  goals:\n    - "{goal}"\n'
    if body:
        text += textwrap.indent(body, "    ") + "\n"
    text += f"conversation:\n  number: {number}\n"
    if styles:
        text += "  interaction_style:\n" + textwrap.indent(textwrap.dedent(styles).strip("\n"), "    ") + "\n"
    if goal_style:
        text += "  goal_style:\n" + textwrap.indent(textwrap.dedent(goal_style).strip("\n"), "    ") + "\n"
    return parse_profile(text, source="exp.yaml")


def column(specs: list[ConversationSpec], name: str) -> list[object]:
    return [s.variable_values[name] for s in specs]


# -- the pizza example -------------------------------------------------------------------------------


def test_pizza_sample_gives_a_fifth_of_the_nine_combinations() -> None:
    profile = load_profile(DATA / "pizza.yaml")
    assert combination_count(profile) == 9  # cans (3) x drink (3)
    specs = expand(profile, seed=0)
    assert len(specs) == conversation_count(profile) == 2  # round(0.2 x 9)
    assert [s.spec_id for s in specs] == ["pizza_order_test_custom#0", "pizza_order_test_custom#1"]
    pairs = {(s.variable_values["cans"], s.variable_values["drink"]) for s in specs}
    assert len(pairs) == 2  # two different combinations, not the same one twice


def test_pizza_all_combinations_walks_the_odometer() -> None:
    profile = load_profile(DATA / "pizza.yaml")
    conversation = profile.conversation.model_copy(
        update={"number": profile.conversation.number.model_copy(update={"kind": "all_combinations", "fraction": None})}
    )
    specs = expand(profile.model_copy(update={"conversation": conversation}))
    assert len(specs) == 9
    # cans nests drink: drink turns fastest, cans moves on when drink wraps around.
    assert [(s.variable_values["cans"], s.variable_values["drink"]) for s in specs] == [
        (1, "sprite"), (1, "coke"), (1, "Orange Fanta"),
        (2, "sprite"), (2, "coke"), (2, "Orange Fanta"),
        (3, "sprite"), (3, "coke"), (3, "Orange Fanta"),
    ]  # fmt: skip


def test_pizza_spec_carries_everything_the_simulator_needs() -> None:
    profile = load_profile(DATA / "pizza.yaml")
    spec = expand(profile, seed=7)[0]
    assert (spec.kind, spec.name, spec.index) == ("profile", "pizza_order_test_custom", 0)
    assert spec.source.endswith("pizza.yaml")
    assert spec.seed == derive_seed(7, "pizza_order_test_custom", 0)
    size, toppings = spec.variables["size"], spec.variables["toppings"]
    assert spec.goals[0] == f"a {size} custom pizza with {toppings}"
    assert spec.goals[1] == f"{spec.variables['cans']} cans of {spec.variables['drink']}"
    assert spec.goals[2:] == ["how long is going to take the pizza to arrive", "how much will it cost"]
    assert spec.context[-1] == "your name is Jon Doe" and len(spec.context) == 3
    assert (spec.role, spec.language, spec.is_starter) == (profile.user.role, "English", True)
    assert spec.fallback == profile.chatbot.fallback
    assert [o.name for o in spec.outputs] == ["price", "time", "order_id"]
    assert (spec.goal_style.kind, spec.goal_style.steps) == ("steps", 5)
    assert spec.llm.qualified_model == "openai/gpt-4o"
    assert spec.world.customer_id is None and spec.expect is None  # the world's default customer, read at run time
    # random: [...] became a concrete, non-empty subset of the four choices.
    allowed = {"make spelling mistakes", "all questions", "long phrases", "change language"}
    names = [s.name for s in spec.interaction_styles]
    assert names and set(names) <= allowed
    for style in spec.interaction_styles:
        if style.name == "change language":
            assert style.languages == ["italian", "portuguese", "chinese"]


# -- functions -------------------------------------------------------------------------------------------


def test_default_uses_every_item_joined_naturally() -> None:
    specs = expand(
        profile_from("- t: {function: default(), type: string, data: [cheese, mushrooms, pepperoni]}", goal="a pizza with {{t}}")
    )
    assert specs[0].goals == ["a pizza with cheese, mushrooms and pepperoni"]
    assert specs[0].variable_values["t"] == ["cheese", "mushrooms", "pepperoni"]
    assert specs[0].variables["t"] == "cheese, mushrooms and pepperoni"


def test_join_values() -> None:
    assert join_values("coke") == "coke"
    assert join_values(3) == "3"
    assert join_values([1.5]) == "1.5"
    assert join_values(["a", "b"]) == "a and b"
    assert join_values(["a", "b", "c", "d"]) == "a, b, c and d"


def test_random_picks_one_item_and_reaches_them_all() -> None:
    specs = expand(profile_from("- d: {function: random(), type: string, data: [coke, sprite, fanta]}", number="40"))
    values = column(specs, "d")
    assert all(isinstance(v, str) for v in values)
    assert set(values) == {"coke", "sprite", "fanta"}


def test_random_n_picks_n_different_items_in_list_order() -> None:
    data = ["a", "b", "c", "d", "e"]
    specs = expand(profile_from(f"- d: {{function: random(3), type: string, data: [{', '.join(data)}]}}", number="20"))
    for value in column(specs, "d"):
        assert isinstance(value, list) and len(value) == len(set(value)) == 3
        assert value == sorted(value, key=data.index)
    assert len({tuple(v) for v in column(specs, "d")}) > 1  # not the same three every time


def test_random_rand_picks_between_one_and_all() -> None:
    specs = expand(profile_from("- t: {function: random(rand), type: string, data: [a, b, c]}", number="60"))
    sizes = Counter(len(v) for v in column(specs, "t"))
    assert set(sizes) == {1, 2, 3}


def test_another_deals_each_item_once_before_repeating() -> None:
    specs = expand(profile_from("- s: {function: another(), type: string, data: [small, medium, big]}", number="9"))
    values = column(specs, "s")
    for start in (0, 3, 6):
        assert sorted(values[start : start + 3]) == ["big", "medium", "small"]
    assert all(a != b for a, b in zip(values, values[1:], strict=False))  # also across a reshuffle


def test_forward_iterates_in_order_and_cycles() -> None:
    specs = expand(profile_from("- n: {function: forward(), type: int, data: {min: 1, max: 3, step: 1}}", number="7"))
    assert column(specs, "n") == [1, 2, 3, 1, 2, 3, 1]
    assert [s.goals[0] for s in specs[:3]] == ["1", "2", "3"]


def test_nested_forward_chain_of_three_is_an_odometer() -> None:
    profile = profile_from(
        """
        - a: {function: forward(b), type: string, data: [x, y]}
        - b: {function: forward(c), type: int, data: [1, 2, 3]}
        - c: {function: forward(), type: float, data: [0.5, 1.5]}
        """,
        number="all_combinations",
    )
    specs = expand(profile)
    triples = [(s.variable_values["a"], s.variable_values["b"], s.variable_values["c"]) for s in specs]
    assert len(triples) == len(set(triples)) == 12
    assert triples[:4] == [("x", 1, 0.5), ("x", 1, 1.5), ("x", 2, 0.5), ("x", 2, 1.5)]
    assert triples[-1] == ("y", 3, 1.5)


def test_forward_variables_that_nest_nothing_step_on_their_own() -> None:
    profile = profile_from(
        """
        - a: {function: forward(), type: string, data: [x, y]}
        - b: {function: forward(), type: int, data: [1, 2, 3]}
        """,
        number="4",
    )
    pairs = [(s.variable_values["a"], s.variable_values["b"]) for s in expand(profile)]
    assert pairs == [("x", 1), ("y", 2), ("x", 3), ("y", 1)]  # each cycles, as Sensei's generators do


# Python's round, as Sensei: 4.5 -> 4, 1.8 -> 2; the first conversations of the sequence.
@pytest.mark.parametrize(("fraction", "expected"), [("0.2", 2), ("0.5", 4), ("0.3", 3), ("1", 9)])
def test_sample_rounds_as_python_does(fraction: str, expected: int) -> None:
    profile = profile_from(
        """
        - a: {function: forward(b), type: int, data: [1, 2, 3]}
        - b: {function: forward(), type: int, data: [4, 5, 6]}
        """,
        number=f"sample({fraction})",
    )
    specs = expand(profile, seed=3)
    assert len(specs) == expected
    pairs = [(s.variable_values["a"], s.variable_values["b"]) for s in specs]
    assert len(set(pairs)) == expected  # distinct combinations


def test_sample_takes_the_first_combinations_whatever_the_seed() -> None:
    profile = profile_from(
        """
        - a: {function: forward(b), type: int, data: [1, 2]}
        - b: {function: forward(), type: int, data: [3, 4, 5]}
        """,
        number="sample(0.5)",
    )
    for seed in (0, 5):
        pairs = [(s.variable_values["a"], s.variable_values["b"]) for s in expand(profile, seed=seed)]
        assert pairs == [(1, 3), (1, 4), (1, 5)]


def test_number_gives_that_many_conversations_with_readable_ids() -> None:
    specs = expand(profile_from("- a: {function: forward(), type: int, data: [1, 2]}", number="5"))
    assert [s.spec_id for s in specs] == [f"exp#{i}" for i in range(5)]
    assert [s.index for s in specs] == list(range(5))
    assert len({s.seed for s in specs}) == 5


# -- styles ------------------------------------------------------------------------------------------------


def test_random_styles_become_a_non_empty_subset_and_fixed_styles_stay() -> None:
    profile = profile_from(
        "- a: {function: forward(), type: int, data: [1]}",
        number="40",
        styles="""
        - single question
        - random:
          - make spelling mistakes
          - long phrases
          - change language: [italian, german]
        """,
    )
    seen = set()
    for spec in expand(profile):
        names = [s.name for s in spec.interaction_styles]
        assert names[0] == "single question"
        picked = names[1:]
        assert 1 <= len(picked) <= 3
        order = ["make spelling mistakes", "long phrases", "change language"]
        assert picked == sorted(picked, key=order.index)
        seen.add(tuple(picked))
    assert len(seen) > 3  # the subset changes from conversation to conversation


def test_default_style_gives_way_to_other_styles() -> None:
    profile = profile_from("- a: {function: forward(), type: int, data: [1]}", styles="- default\n- all questions\n")
    assert expand(profile)[0].interaction_styles == [InteractionStyle(name="all questions")]
    alone = profile_from("- a: {function: forward(), type: int, data: [1]}")
    assert expand(alone)[0].interaction_styles == [InteractionStyle(name="default")]


def test_random_steps_are_drawn_per_conversation_within_the_limit() -> None:
    profile = profile_from("- a: {function: forward(), type: int, data: [1]}", number="30", goal_style="random steps: 4")
    steps = [s.goal_style.steps for s in expand(profile)]
    assert set(steps) == {1, 2, 3, 4}
    assert all(s.goal_style.max_steps == 4 and s.goal_style.kind == "random_steps" for s in expand(profile))


# -- determinism -------------------------------------------------------------------------------------------


def test_same_seed_same_specs_other_seed_other_draws() -> None:
    profile = load_profile(DATA / "photo_quote.yaml", personality_dirs=[])
    first = [s.model_dump() for s in expand(profile, seed=11)]
    assert first == [s.model_dump() for s in expand(profile, seed=11)]
    other = [s.model_dump() for s in expand(profile, seed=12)]
    assert [s["variables"] for s in first] != [s["variables"] for s in other]
    # forward() variables do not depend on the seed.
    assert [s["variables"]["number_photo"] for s in first] == [s["variables"]["number_photo"] for s in other]


def test_expansion_neither_uses_nor_disturbs_the_global_rng() -> None:
    profile = load_profile(DATA / "pizza.yaml")
    random.seed(1)
    one = expand(profile, seed=5)
    random.seed(2)
    state = random.getstate()
    two = expand(profile, seed=5)
    assert one == two
    assert random.getstate() == state


def test_a_conversations_draws_do_not_depend_on_the_batch_size() -> None:
    few = expand(profile_from("- d: {function: random(), type: string, data: [a, b, c, d]}", number="3"), seed=4)
    many = expand(profile_from("- d: {function: random(), type: string, data: [a, b, c, d]}", number="12"), seed=4)
    assert column(few, "d") == column(many, "d")[:3]


def test_photo_quote_profile_expands_all_combinations_of_its_forward_chain() -> None:
    profile = load_profile(DATA / "photo_quote.yaml", personality_dirs=[])
    specs = expand(profile)
    assert len(specs) == 12  # number_photo (1, 3, 5 and max 6, as Sensei) x print_size (10, 10.5, 11)
    assert {s.variables["print_size"] for s in specs} == {"10.0", "10.5", "11.0"}
    assert {s.variable_values["days"] for s in specs} <= {1, 3, 5}
    assert all(s.variables["colours"] == "black, white and oak" for s in specs)
    assert all(s.goal_style.export and s.goal_style.limit == 20 for s in specs)


# -- any() ------------------------------------------------------------------------------------------------

ANY_DRINK = """
- drink:
    function: forward()
    type: string
    data:
      - Sprite
      - any(3 soda drinks)
"""


def test_any_offline_uses_the_listed_items_and_warns() -> None:
    specs = expand(profile_from(ANY_DRINK, number="3"))
    assert column(specs, "drink") == ["Sprite"] * 3
    assert specs[0].warnings == [
        "exp.yaml:9:9: user.goals[1].drink.data: any(3 soda drinks) needs an LLM to generate items; offline, "
        "only the listed items are used (Sprite)"
    ]


def test_any_offline_with_nothing_else_is_an_error_at_the_data() -> None:
    profile = profile_from("- d: {function: forward(), type: string, data: ['any(3 soda drinks)']}")
    with pytest.raises(ProfileError) as caught:
        expand(profile)
    assert str(caught.value) == (
        "exp.yaml:6:46: user.goals[1].d.data: 'd' has only any(3 soda drinks) items, which need an LLM to "
        "generate; choose a user-simulator model or add plain items"
    )


def test_random_n_beyond_the_items_left_offline_takes_them_all() -> None:
    profile = profile_from("- d: {function: random(2), type: string, data: [Sprite, 'any(colas)']}")
    assert column(expand(profile), "d") == ["Sprite"]  # Sensei: random.sample(data, min(N, len))


async def test_any_items_are_generated_once_and_added() -> None:
    asked: list[str] = []

    async def generate(instruction: str) -> list[str]:
        asked.append(instruction)
        return ["Fanta", "Sprite", "7up", "Dr Pepper"]

    profile = profile_from(ANY_DRINK, number="4")
    resolved = await resolve_any_items(profile, generate)
    drink = resolved.variable("drink")
    assert drink is not None
    assert drink.values == ["Sprite", "Fanta", "7up", "Dr Pepper"]
    assert drink.any_prompts == []
    assert asked == [any_item_instruction(profile.variable("drink"), "3 soda drinks")]  # type: ignore[arg-type]
    assert "3 soda drinks" in asked[0] and "Sprite" in asked[0]
    assert len(expand(resolved)) == 4
    assert expand(resolved)[0].warnings == []


async def test_any_items_use_the_cache_and_coerce_types() -> None:
    calls = 0

    async def generate(instruction: str) -> list[str]:
        nonlocal calls
        calls += 1
        return ["4", "five", " 6 "]

    profile = profile_from("- n: {function: forward(), type: int, data: [1, 'any(some numbers)']}")
    cache: dict[str, list[str]] = {}
    first = await resolve_any_items(profile, generate, cache=cache)
    second = await resolve_any_items(profile, generate, cache=cache)
    assert calls == 1
    assert first == second
    assert first.variable("n").values == [1, 4, 6]  # type: ignore[union-attr]
    assert first.warnings == ["exp.yaml:6:43: user.goals[1].n.data: dropped 1 generated item(s) that are not int: 'five'"]


async def test_any_generation_with_no_usable_items_is_an_error() -> None:
    async def generate(instruction: str) -> list[str]:
        return []

    profile = profile_from("- d: {function: forward(), type: string, data: ['any(sodas)']}")
    with pytest.raises(ProfileError, match=r"any\(\) generated no usable items for 'd' \(sodas\)"):
        await resolve_any_items(profile, generate)


async def test_resolve_any_items_offline_matches_expand_offline() -> None:
    profile = profile_from(ANY_DRINK, number="2")
    resolved = await resolve_any_items(profile, None)
    assert resolved.variable("drink").any_prompts == []  # type: ignore[union-attr]
    assert expand(resolved) == expand(profile)

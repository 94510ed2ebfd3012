"""Loading Sensei-format profiles: every field, every form, the defaults, parley's additions."""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

import pytest

from parley.core.records.profile import (
    GoalStyle,
    InteractionStyle,
    OutputField,
    Profile,
    RandomStyles,
    qualify_model_name,
)
from parley.core.specs.profile_loader import load_profile
from parley.core.specs.shipped import SHIPPED_PERSONALITIES_DIR

DATA = Path(__file__).parent / "data" / "profiles"
PERSONALITIES = DATA / "personalities"


def load_text(tmp_path: Path, text: str, *, personality_dirs: list[Path] | None = None) -> Profile:
    path = tmp_path / "profile.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return load_profile(path, personality_dirs=personality_dirs or [])


MINIMAL = """
test_name: minimal
user:
  role: a customer
  goals:
    - where is my order
"""


def with_conversation(block: str) -> str:
    return MINIMAL + "conversation:\n" + textwrap.indent(textwrap.dedent(block).strip("\n"), "  ") + "\n"


# -- the pizza example of Sensei's documentation -------------------------------------------------


def test_sensei_pizza_example_loads_unchanged() -> None:
    profile = load_profile(DATA / "pizza.yaml")

    assert profile.test_name == "pizza_order_test_custom"
    assert (profile.llm.model, profile.llm.temperature, profile.llm.qualified_model) == (
        "gpt-4o",
        0.8,
        "openai/gpt-4o",
    )
    assert profile.user.language == "English"
    assert profile.user.role == "you have to act as a user ordering a pizza to a pizza shop."
    # The personality's lines come where the personality entry stands, before "your name is".
    assert profile.user.context == [
        "you always write formally and politely, never using slang or abbreviations",
        "you greet the chatbot and thank it for its help",
        "your name is Jon Doe",
    ]
    assert profile.user.goals == [
        "a {{size}} custom pizza with {{toppings}}",
        "{{cans}} cans of {{drink}}",
        "how long is going to take the pizza to arrive",
        "how much will it cost",
    ]
    by_name = {v.name: v for v in profile.user.variables}
    assert list(by_name) == ["size", "toppings", "cans", "drink"]
    assert (by_name["size"].function.kind, by_name["size"].values) == ("another", ["small", "medium", "big"])
    assert by_name["toppings"].function.rand is True
    assert (by_name["cans"].type, by_name["cans"].values, by_name["cans"].function.nests) == ("int", [1, 2, 3], "drink")
    assert by_name["drink"].values == ["sprite", "coke", "Orange Fanta"]

    assert profile.chatbot.is_starter is True
    assert profile.chatbot.fallback == "I'm sorry it's a little loud in my pizza shop, can you say that again?"
    assert profile.chatbot.outputs == [
        OutputField(name="price", type="money", description="The final price of the pizza order"),
        OutputField(name="time", type="time", description="how long is going to take the pizza to be ready"),
        OutputField(name="order_id", type="str", description="my order ID"),
    ]
    assert (profile.conversation.number.kind, profile.conversation.number.fraction) == ("sample", 0.2)
    assert profile.conversation.goal_style == GoalStyle(kind="steps", steps=5)
    assert profile.conversation.interaction_style == [
        RandomStyles(
            choices=[
                InteractionStyle(name="make spelling mistakes"),
                InteractionStyle(name="all questions"),
                InteractionStyle(name="long phrases"),
                InteractionStyle(name="change language", languages=["italian", "portuguese", "chinese"]),
            ]
        )
    ]
    # No world: the default world's data and its default customer (C-100 on the order world, read at run time); no expect block.
    assert (profile.world.name, profile.world.customer_id, profile.world.today, profile.world.rows) == (None, None, None, {})
    assert profile.expect is None
    assert profile.warnings == []


def test_variable_positions_are_kept_for_later_errors() -> None:
    drink = load_profile(DATA / "pizza.yaml").variable("drink")
    assert drink is not None
    assert (drink.location.line, drink.location.column, drink.location.field_path) == (43, 7, "user.goals[7].drink")
    assert drink.function_location.line == 44


# -- llm, user ------------------------------------------------------------------------------------


def test_llm_defaults_to_sensei_values_when_missing(tmp_path: Path) -> None:
    profile = load_text(tmp_path, MINIMAL)
    assert (profile.llm.model, profile.llm.temperature, profile.llm.qualified_model) == ("gpt-4o", 0.8, "openai/gpt-4o")


@pytest.mark.parametrize(
    ("written", "qualified"),
    [("gpt-4o-mini", "openai/gpt-4o-mini"), ("ollama/llama3.2", "ollama/llama3.2"), ("offline", "offline")],
)
def test_llm_model_names_are_qualified_in_a_separate_field(tmp_path: Path, written: str, qualified: str) -> None:
    profile = load_text(tmp_path, MINIMAL + f"llm:\n  model: {written}\n  temperature: 0.2\n")
    assert (profile.llm.model, profile.llm.qualified_model, profile.llm.temperature) == (written, qualified, 0.2)
    assert qualify_model_name(written) == qualified


def test_language_defaults_to_english_and_can_be_set(tmp_path: Path) -> None:
    assert load_text(tmp_path, MINIMAL).user.language == "English"
    text = MINIMAL.replace("  role:", "  language: Spanish\n  role:")
    assert load_text(tmp_path, text).user.language == "Spanish"


def test_ask_about_is_read_as_goals(tmp_path: Path) -> None:
    profile = load_text(tmp_path, MINIMAL.replace("goals:", "ask_about:"))
    assert profile.user.goals == ["where is my order"]


def test_personality_is_found_in_the_shipped_folder_when_not_beside_the_profile(tmp_path: Path) -> None:
    text = MINIMAL.replace("  goals:", "  context:\n    - personality: personalities/formal-user.yml\n  goals:")
    profile = load_text(tmp_path, text, personality_dirs=[PERSONALITIES])
    assert profile.user.context[0].startswith("you always write formally")
    assert profile.user.personalities == [str(PERSONALITIES / "formal-user.yml")]


def test_personality_beside_the_profile_wins_and_extension_is_optional(tmp_path: Path) -> None:
    (tmp_path / "grumpy.yaml").write_text("name: grumpy\ncontext:\n  - you are grumpy\n", encoding="utf-8")
    text = MINIMAL.replace("  goals:", "  context:\n    - you are Ana\n    - personality: grumpy\n  goals:")
    profile = load_text(tmp_path, text, personality_dirs=[PERSONALITIES])
    assert profile.user.context == ["you are Ana", "you are grumpy"]


def test_shipped_personalities_folder_is_beside_the_packages() -> None:
    assert SHIPPED_PERSONALITIES_DIR == Path(__file__).resolve().parent.parent / "profiles" / "personalities"


# -- variables and data forms --------------------------------------------------------------------


def variables_profile(tmp_path: Path, definitions: str) -> dict[str, object]:
    body = textwrap.dedent(definitions).strip("\n")
    names = [line.split(":")[0].strip("- ").strip() for line in body.splitlines() if line.startswith("- ")]
    goal = " ".join("{{" + n + "}}" for n in names)
    text = "test_name: vars\nuser:\n  role: r\n  goals:\n" + f'    - "{goal}"\n' + textwrap.indent(body, "    ") + "\n"
    (tmp_path / "profile.yaml").write_text(text, encoding="utf-8")
    profile = load_profile(tmp_path / "profile.yaml", personality_dirs=[])
    return {v.name: v for v in profile.user.variables}


def test_every_function_form_is_parsed(tmp_path: Path) -> None:
    found = variables_profile(
        tmp_path,
        """
        - a: {function: default(), type: string, data: [x, y]}
        - b: {function: random(), type: string, data: [x, y]}
        - c: {function: random(2), type: string, data: [x, y]}
        - d: {function: random(rand), type: string, data: [x, y]}
        - e: {function: another(), type: string, data: [x, y]}
        - f: {function: forward(g), type: string, data: [x, y]}
        - g: {function: " forward( ) ", type: string, data: [x, y]}
        """,
    )
    summary = {n: (v.function.kind, v.function.count, v.function.rand, v.function.nests) for n, v in found.items()}
    assert summary == {
        "a": ("default", None, False, None),
        "b": ("random", 1, False, None),
        "c": ("random", 2, False, None),
        "d": ("random", None, True, None),
        "e": ("another", None, False, None),
        "f": ("forward", None, False, "g"),
        "g": ("forward", None, False, None),
    }


def test_variable_types_are_sensei_s_three(tmp_path: Path) -> None:
    found = variables_profile(
        tmp_path,
        """
        - a: {function: forward(), type: string, data: [small, "10"]}
        - b: {function: forward(), type: int, data: [1, 2]}
        - c: {function: forward(), type: float, data: [1, 2.5]}
        """,
    )
    assert (found["a"].type, found["a"].values) == ("string", ["small", "10"])
    assert (found["b"].type, found["b"].values) == ("int", [1, 2])
    assert (found["c"].type, found["c"].values) == ("float", [1.0, 2.5])


@pytest.mark.parametrize(
    ("var_type", "data", "values"),
    [
        # As Sensei's numpy: arange(min, max, step) and then max; without step, max is left out.
        ("int", "{step: 2, min: 1, max: 6}", [1, 3, 5, 6]),
        ("int", "{min: 1, max: 3}", [1, 2]),
        ("int", "{min: 4, max: 4, step: 3}", [4]),
        ("float", "{step: 0.5, min: 1, max: 2}", [1.0, 1.5, 2.0]),
        ("float", "{step: 0.1, min: 0, max: 0.3}", [0.0, 0.1, 0.2, 0.3]),
        ("float", "{linspace: 5, min: 1, max: 2}", [1.0, 1.25, 1.5, 1.75, 2.0]),
        ("float", "{step: 0.4, min: 0, max: 1}", [0.0, 0.4, 0.8, 1.0]),
    ],
)
def test_ranges_become_lists(tmp_path: Path, var_type: str, data: str, values: list[float]) -> None:
    found = variables_profile(tmp_path, f"- n: {{function: forward(), type: {var_type}, data: {data}}}")
    assert found["n"].values == values
    assert found["n"].data_form == "range"


def test_any_items_are_kept_as_prompts_beside_the_listed_items(tmp_path: Path) -> None:
    found = variables_profile(
        tmp_path,
        """
        - drink:
            function: another()
            type: string
            data:
              - Sprite
              - any(3 soda drinks)
              - Pepsi
              - any(alcoholic drinks)
        """,
    )
    assert found["drink"].values == ["Sprite", "Pepsi"]
    assert found["drink"].any_prompts == ["3 soda drinks", "alcoholic drinks"]


def test_list_functions_from_sensei_doc() -> None:
    profile = load_profile(DATA / "photo_quote.yaml", personality_dirs=[])
    days, pizza = profile.variable("days"), profile.variable("pizza_type")
    assert days is not None and pizza is not None
    # function_name left blank: the function named like the file, number_list(1, 6, 2).
    assert (days.data_form, days.values) == ("list_function", [1, 3, 5])
    # A file argument is found beside the profile, whatever the working directory.
    assert sorted(pizza.values) == ["capricciosa", "diavola", "margherita", "quattro stagioni"]


def test_blank_function_name_calls_the_only_public_function(tmp_path: Path) -> None:
    (tmp_path / "sizes.py").write_text(
        "def _helper():\n    return []\n\ndef make(n):\n    return [f'size {i}' for i in range(n)]\n",
        encoding="utf-8",
    )
    found = variables_profile(tmp_path, "- s: {function: forward(), type: string, data: {file: sizes.py, function_name: '', args: 2}}")
    assert found["s"].values == ["size 0", "size 1"]


# -- chatbot, conversation --------------------------------------------------------------------------


def test_chatbot_defaults_and_yaml11_booleans(tmp_path: Path) -> None:
    profile = load_text(tmp_path, MINIMAL)
    assert (profile.chatbot.is_starter, profile.chatbot.fallback, profile.chatbot.outputs) == (False, None, [])
    # Sensei read profiles with PyYAML, for which `yes` is true.
    profile = load_text(tmp_path, MINIMAL + "chatbot:\n  is_starter: yes\n")
    assert profile.chatbot.is_starter is True


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("number: 7", ("count", 7, None)),
        ("number: '3'", ("count", 3, None)),
        ("number: all_combinations", ("all_combinations", None, None)),
        ("number: sample(0.2)", ("sample", None, 0.2)),
        ("number: sample( 1 )", ("sample", None, 1.0)),
    ],
)
def test_number_forms(tmp_path: Path, block: str, expected: tuple[object, ...]) -> None:
    chained = MINIMAL.replace(
        "    - where is my order\n",
        "    - where is my order {{a}} {{b}}\n"
        "    - a: {function: forward(b), type: string, data: [x, y]}\n"
        "    - b: {function: forward(), type: string, data: [p, q]}\n",
    )
    number = load_text(tmp_path, chained + "conversation:\n  " + block + "\n").conversation.number
    assert (number.kind, number.count, number.fraction) == expected


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("goal_style:\n  steps: 5", GoalStyle(kind="steps", steps=5)),
        ("goal_style:\n  random steps: 19", GoalStyle(kind="random_steps", max_steps=19)),
        ("goal_style: all_answered", GoalStyle(kind="all_answered", export=False, limit=30)),
        ("goal_style:\n  all_answered:", GoalStyle(kind="all_answered", export=False, limit=30)),
        ("goal_style:\n  all_answered:\n    export: True\n    limit: 20", GoalStyle(kind="all_answered", export=True, limit=20)),
        ("goal_style:\n  all_answered:\n    export: true", GoalStyle(kind="all_answered", export=True, limit=30)),
        ("goal_style: default", GoalStyle(kind="default", export=False, limit=30)),
        ("goal_style:\n  default:", GoalStyle(kind="default")),
    ],
    ids=["steps", "random steps", "all_answered bare", "all_answered empty", "export+limit", "export", "default", "default:"],
)
def test_goal_styles(tmp_path: Path, block: str, expected: GoalStyle) -> None:
    assert load_text(tmp_path, with_conversation(block)).conversation.goal_style == expected


def test_conversation_defaults(tmp_path: Path) -> None:
    conversation = load_text(tmp_path, MINIMAL).conversation
    assert (conversation.number.kind, conversation.number.count) == ("count", 1)
    assert conversation.goal_style == GoalStyle(kind="default")
    assert conversation.interaction_style == [InteractionStyle(name="default")]


def test_interaction_styles_with_random_anywhere_and_long_phrase(tmp_path: Path) -> None:
    block = """
    interaction_style:
      - long phrase
      - random:
        - make spelling mistakes
        - change language:
            - italian
            - chinese
      - Change  your mind
      - single question
      - all questions
      - default
    """
    styles = load_text(tmp_path, with_conversation(block)).conversation.interaction_style
    assert styles == [
        InteractionStyle(name="long phrases"),
        RandomStyles(
            choices=[
                InteractionStyle(name="make spelling mistakes"),
                InteractionStyle(name="change language", languages=["italian", "chinese"]),
            ]
        ),
        InteractionStyle(name="change your mind"),
        InteractionStyle(name="single question"),
        InteractionStyle(name="all questions"),
        InteractionStyle(name="default"),
    ]


def test_a_single_interaction_style_may_be_written_without_a_list(tmp_path: Path) -> None:
    styles = load_text(tmp_path, with_conversation("interaction_style: long phrases")).conversation.interaction_style
    assert styles == [InteractionStyle(name="long phrases")]


# -- parley's world: and expect: ---------------------------------------------------------------------


def test_world_and_expect() -> None:
    profile = load_profile(DATA / "cancel_recent_order.yaml", personality_dirs=[PERSONALITIES])
    world = profile.world
    assert (world.customer_id, world.today) == ("C-100", dt.date(2026, 11, 21))
    assert world.rows == {"orders": [{"id": "ORD-1002", "status": "pending", "placed_days_ago": 3}]}
    expect = profile.expect
    assert expect is not None
    assert expect.records == {"orders/ORD-1001": {"status": "cancelled"}}
    assert expect.unchanged_others is True
    assert expect.tools_called == ["check_cancellation", "cancel_order"]
    assert expect.tools_not_called == ["list_my_orders"]
    assert (expect.bot_says, expect.bot_never_says) == (["(?i)cancel+ed"], ["(?i)cannot cancel"])
    assert expect.judge is not None and (expect.judge.min_score, expect.judge.rubric.startswith("The bot")) == (2, True)


def test_expect_defaults(tmp_path: Path) -> None:
    profile = load_text(tmp_path, MINIMAL + "expect:\n  orders: {ORD-1004: cancelled}\n  unchanged_others: false\n")
    assert profile.expect is not None
    assert (profile.expect.unchanged_others, profile.expect.tools_called, profile.expect.judge) == (False, [], None)
    profile = load_text(tmp_path, MINIMAL + "expect:\n  judge: {rubric: be kind}\n")
    assert profile.expect is not None and profile.expect.judge is not None
    assert profile.expect.judge.min_score == 2
    assert profile.expect.unchanged_others is None  # not written: checked by default, a check that never makes a pass


def test_world_today_accepts_a_quoted_date(tmp_path: Path) -> None:
    profile = load_text(tmp_path, MINIMAL + "world:\n  today: '2026-01-31'\n  customer_id: C-300\n")
    assert (profile.world.today, profile.world.customer_id) == (dt.date(2026, 1, 31), "C-300")

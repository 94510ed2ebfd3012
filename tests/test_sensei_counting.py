"""How many conversations a profile makes, and with which values, counted as Sensei's code
counts them: ranges, forward() chains beside independent forwards, all_combinations, sample()."""

from __future__ import annotations

import textwrap

import pytest

from parley.core.errors import ProfileError
from parley.core.specs.expansion import expand
from parley.core.specs.profile_loader import check_profile_text, parse_profile


def profile(variables: str, number: str, goal: str):
    text = f'test_name: pizza\nuser:\n  role: r\n  goals:\n    - "{goal}"\n'
    text += textwrap.indent(textwrap.dedent(variables).strip("\n"), "    ") + f"\nconversation:\n  number: {number}\n"
    return parse_profile(text, source="p.yml")


def values(specs, *names):
    return [tuple(s.variable_values[n] for n in names) for s in specs]


# -- ranges ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "var_type", "expected"),
    [
        ("{min: 1, max: 6, step: 2}", "int", [1, 3, 5, 6]),  # arange(1, 6, 2) and then max
        ("{min: 1, max: 3, step: 1}", "int", [1, 2, 3]),
        ("{min: 1, max: 4}", "int", [1, 2, 3]),  # no step: max left out
        ("{min: 0, max: 1, step: 0.3}", "float", [0.0, 0.3, 0.6, 0.9, 1.0]),
        ("{min: 0, max: 1, linspace: 3}", "float", [0.0, 0.5, 1.0]),
    ],
)
def test_ranges_are_numpy_s_arange_and_then_max(data, var_type, expected):
    p = profile(f"- n: {{function: forward(), type: {var_type}, data: {data}}}", "1", "{{n}}")
    assert p.variable("n").values == expected


# -- forward chains and independent forwards ------------------------------------------------------

PIZZA = """
- size: {function: forward(), type: string, data: [small, medium, big]}
- kind: {function: forward(topping), type: string, data: [margherita, hawaiian, veggie]}
- topping: {function: forward(), type: string, data: [cheese, ham]}
"""


def test_a_forward_beside_a_chain_is_left_out_of_all_combinations():
    p = profile(PIZZA, "all_combinations", "a {{size}} {{kind}} with {{topping}}")
    specs = expand(p)
    assert len(specs) == 6  # the chain kind x topping; Sensei does not multiply by size's 3
    assert values(specs, "kind", "topping") == [
        ("margherita", "cheese"),
        ("margherita", "ham"),
        ("hawaiian", "cheese"),
        ("hawaiian", "ham"),
        ("veggie", "cheese"),
        ("veggie", "ham"),
    ]
    assert values(specs, "size") == [("small",), ("medium",), ("big",), ("small",), ("medium",), ("big",)]
    assert p.warnings == [
        "p.yml:10:11: conversation.number: 'size': forward() that no other variable nests; as in Sensei it steps "
        "through its values, one per conversation, and is left out of the count (6, not 18)"
    ]


def test_the_largest_chain_sets_the_count_and_the_others_wrap_around():
    p = profile(
        """
        - a: {function: forward(b), type: int, data: [1, 2]}
        - b: {function: forward(), type: int, data: [1, 2, 3]}
        - c: {function: forward(d), type: int, data: [7, 8]}
        - d: {function: forward(), type: int, data: [9]}
        """,
        "all_combinations",
        "{{a}} {{b}} {{c}} {{d}}",
    )
    specs = expand(p)
    assert len(specs) == 6
    assert values(specs, "c", "d") == [(7, 9), (8, 9), (7, 9), (8, 9), (7, 9), (8, 9)]


def test_all_combinations_without_a_chain_is_an_error_not_zero_conversations():
    _, errors = check_profile_text(
        'test_name: t\nuser:\n  role: r\n  goals:\n    - "{{s}}"\n'
        "    - s: {function: forward(), type: string, data: [a, b, c]}\nconversation:\n  number: all_combinations\n",
        source="p.yml",
    )
    assert [e.render() for e in errors] == [
        "p.yml:8:11: conversation.number: all_combinations counts the combinations of nested forward() variables "
        "(a forward(x) naming another forward() variable) and this profile has none, so Sensei runs 0 "
        "conversations; nest one forward() in another, or give a number"
    ]


# -- sample() -------------------------------------------------------------------------------------

CHAIN_OF_NINE = """
- a: {function: forward(b), type: int, data: [1, 2, 3]}
- b: {function: forward(), type: int, data: [4, 5, 6]}
"""


def test_sample_rounds_half_to_even_as_python_and_warns():
    p = profile(CHAIN_OF_NINE, "sample(0.5)", "{{a}} {{b}}")
    specs = expand(p)
    assert len(specs) == 4  # 4.5 -> 4
    assert values(specs, "a", "b") == [(1, 4), (1, 5), (1, 6), (2, 4)]  # the first ones, as Sensei runs them
    assert p.warnings == ["p.yml:9:11: conversation.number: sample(0.5) of 9 combinations is 4.5, which Python's round (as Sensei) makes 4"]


def test_sample_that_rounds_to_nothing_is_an_error():
    with pytest.raises(ProfileError) as caught:
        profile(CHAIN_OF_NINE, "sample(0.05)", "{{a}} {{b}}")
    assert str(caught.value) == (
        "p.yml:9:11: conversation.number: sample(0.05) of 9 combinations is 0.45, which rounds to 0 conversations "
        "(Sensei rounds with Python's round); raise the fraction or give a number"
    )


ONE_COMBINATION = """
- a: {function: forward(b), type: string, data: [x]}
- b: {function: forward(), type: string, data: [a]}
"""


def test_half_of_one_combination_rounds_to_nothing_and_is_an_error():
    # found by `make fuzz`: 0.5 rounds to 0 with Python's round, so Sensei would plan nothing
    with pytest.raises(ProfileError) as caught:
        profile(ONE_COMBINATION, "sample(0.5)", "{{a}} {{b}}")
    assert "sample(0.5) of 1 combinations is 0.5, which rounds to 0 conversations" in str(caught.value)


def test_a_number_of_conversations_advances_every_generator_once_per_conversation():
    p = profile(CHAIN_OF_NINE + "- c: {function: forward(), type: string, data: [x, y]}\n", "4", "{{a}} {{b}} {{c}}")
    assert values(expand(p), "a", "b", "c") == [(1, 4, "x"), (1, 5, "y"), (1, 6, "x"), (2, 4, "y")]

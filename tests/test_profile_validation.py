"""Every validation error names file:line:col, the field path and the reason, in one sentence."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_settings import examples
from ruamel.yaml import YAML

from parley.core.errors import ParleyError, ProfileError
from parley.core.specs.expansion import expand
from parley.core.specs.profile_loader import InvalidProfile, check_profile_text, load_profile, validate_profile

DATA = Path(__file__).parent / "data" / "profiles"


def errors_of(tmp_path: Path, text: str, name: str = "p.yaml") -> list[str]:
    """Rendered errors with the temporary folder left off: `p.yaml:3:16: path: reason`."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return [str(e).replace(f"{tmp_path}/", "") for e in validate_profile(path, personality_dirs=[])]


HEAD = """\
test_name: t
user:
  role: a customer
"""


def with_goals(goals: str, tail: str = "") -> str:
    """A profile whose `user.goals` block is `goals` (indented 4, first line on line 5)."""
    return HEAD + "  goals:\n" + textwrap.indent(textwrap.dedent(goals).strip("\n"), "    ") + "\n" + tail


# Each case: the profile, and one error that must be among those reported (exactly).
CASES = {
    "forward cycle of two": (
        with_goals("""
            - "{{a}} {{b}}"
            - a:
                function: forward(b)
                type: int
                data: [1, 2]
            - b:
                function: forward(a)
                type: int
                data: [3, 4]
        """),
        "p.yaml:7:19: user.goals[1].a.function: forward() cycle: a -> b -> a; a nesting chain must end in a plain forward()",
    ),
    "forward cycle of three": (
        with_goals("""
            - "{{a}} {{b}} {{c}}"
            - a: {function: forward(b), type: int, data: [1]}
            - b: {function: forward(c), type: int, data: [1]}
            - c: {function: forward(a), type: int, data: [1]}
        """),
        "p.yaml:6:21: user.goals[1].a.function: forward() cycle: a -> b -> c -> a; a nesting chain must end in a plain forward()",
    ),
    "forward of itself": (
        with_goals("""
            - "{{a}}"
            - a: {function: forward(a), type: int, data: [1]}
        """),
        "p.yaml:6:21: user.goals[1].a.function: forward() cycle: a -> a; a nesting chain must end in a plain forward()",
    ),
    "forward names an unknown variable": (
        with_goals("""
            - "{{cans}} cans of {{drink}}"
            - cans: {function: forward(drnk), type: int, data: [1, 2]}
            - drink: {function: forward(), type: string, data: [coke]}
        """),
        "p.yaml:6:24: user.goals[1].cans.function: forward(drnk) names unknown variable 'drnk'; did you mean 'drink'?",
    ),
    "forward nests a variable that is not forward": (
        with_goals("""
            - "{{cans}} cans of {{drink}}"
            - cans: {function: forward(drink), type: int, data: [1, 2]}
            - drink: {function: random(), type: string, data: [coke]}
        """),
        "p.yaml:6:24: user.goals[1].cans.function: forward(drink) nests 'drink', whose function is random(); "
        "only forward() variables can be nested",
    ),
    "unknown function with suggestion": (
        with_goals("""
            - "{{drink}}"
            - drink:
                function: forwad()
                type: string
                data: [coke]
        """),
        "p.yaml:7:19: user.goals[1].drink.function: unknown function 'forwad()'; did you mean 'forward()'?",
    ),
    "random with a bad argument": (
        with_goals("""
            - "{{drink}}"
            - drink: {function: random(many), type: string, data: [coke]}
        """),
        "p.yaml:6:25: user.goals[1].drink.function: random() takes a number or 'rand', got 'many'",
    ),
    "random(0)": (
        with_goals("""
            - "{{drink}}"
            - drink: {function: random(0), type: string, data: [coke]}
        """),
        "p.yaml:6:25: user.goals[1].drink.function: random(0) must pick at least 1 item",
    ),
    "default() with an argument": (
        with_goals("""
            - "{{drink}}"
            - drink: {function: default(2), type: string, data: [coke]}
        """),
        "p.yaml:6:25: user.goals[1].drink.function: default() takes no argument, got '2'",
    ),
    "int range min above max": (
        with_goals("""
            - "{{n}}"
            - n:
                function: forward()
                type: int
                data:
                  min: 5
                  max: 1
        """),
        "p.yaml:10:16: user.goals[1].n.data.min: min (5) is greater than max (1)",
    ),
    "int range step zero": (
        with_goals("""
            - "{{n}}"
            - n:
                function: forward()
                type: int
                data: {min: 1, max: 5, step: 0}
        """),
        "p.yaml:9:38: user.goals[1].n.data.step: step must be greater than 0, got 0",
    ),
    "float range negative step": (
        with_goals("""
            - "{{n}}"
            - n:
                function: forward()
                type: float
                data: {min: 1, max: 5, step: -0.5}
        """),
        "p.yaml:9:38: user.goals[1].n.data.step: step must be greater than 0, got -0.5",
    ),
    "linspace below 2": (
        with_goals("""
            - "{{n}}"
            - n:
                function: forward()
                type: float
                data:
                  linspace: 0
                  min: 0
                  max: 1
        """),
        "p.yaml:10:21: user.goals[1].n.data.linspace: linspace needs at least 1 point, got 0",
    ),
    "float range without step": (
        with_goals("""
            - "{{n}}"
            - n:
                function: forward()
                type: float
                data:
                  min: 0
                  max: 1
        """),
        "p.yaml:9:9: user.goals[1].n.data: a float range needs step or linspace",
    ),
    "range on a string variable": (
        with_goals("""
            - "{{n}}"
            - n:
                function: forward()
                type: string
                data: {min: 0, max: 1}
        """),
        "p.yaml:9:9: user.goals[1].n.data: a min/max range needs type int or float, not string",
    ),
    "linspace on an int range": (
        with_goals("""
            - "{{n}}"
            - n:
                function: forward()
                type: int
                data: {min: 0, max: 4, linspace: 3}
        """),
        "p.yaml:9:32: user.goals[1].n.data.linspace: linspace is for float ranges; use step with type int",
    ),
    "data item not an int": (
        with_goals("""
            - "{{cans}}"
            - cans:
                function: forward()
                type: int
                data:
                  - 1
                  - two
        """),
        "p.yaml:11:13: user.goals[1].cans.data[1]: expected an integer for type int, got 'two'",
    ),
    "data item not a number for float": (
        with_goals("""
            - "{{w}}"
            - w: {function: forward(), type: float, data: [1.5, heavy]}
        """),
        "p.yaml:6:57: user.goals[1].w.data[1]: expected a number for type float, got 'heavy'",
    ),
    "empty data": (
        with_goals("""
            - "{{w}}"
            - w: {function: forward(), type: string, data: []}
        """),
        "p.yaml:6:46: user.goals[1].w.data: data must not be empty",
    ),
    "data as a scalar": (
        with_goals("""
            - "{{w}}"
            - w: {function: forward(), type: string, data: coke}
        """),
        "p.yaml:6:52: user.goals[1].w.data: data must be a list, a min/max range, a list function (file:) or a date generator (date:), got 'coke'",
    ),
    "unknown variable type": (
        with_goals("""
            - "{{w}}"
            - w: {function: forward(), type: integer, data: [1]}
        """),
        "p.yaml:6:38: user.goals[1].w.type: unknown type 'integer'; did you mean 'int'?",
    ),
    "unknown key in a variable": (
        with_goals("""
            - "{{w}}"
            - w:
                fuction: forward()
                type: string
                data: [a]
        """),
        "p.yaml:7:9: user.goals[1].w.fuction: unknown key 'fuction'; did you mean 'function'?",
    ),
    "variable without data": (
        with_goals("""
            - "{{w}}"
            - w:
                function: forward()
                type: string
        """),
        "p.yaml:6:7: user.goals[1].w: missing required key 'data'",
    ),
    "variable defined twice": (
        with_goals("""
            - "{{w}}"
            - w: {function: forward(), type: string, data: [a]}
            - w: {function: forward(), type: string, data: [b]}
        """),
        "p.yaml:7:7: user.goals[2].w: variable 'w' is defined twice (first at line 6)",
    ),
    "goals made only of variables": (
        with_goals("""
            - w: {function: forward(), type: string, data: [a]}
        """),
        "p.yaml:4:3: user.goals: needs at least one goal text besides variable definitions",
    ),
    "goal that is a number": (
        with_goals("""
            - 42
        """),
        "p.yaml:5:7: user.goals[0]: a goal must be text or a variable definition (name: function/type/data), got 42",
    ),
    "range with too many values": (
        with_goals("""
            - "{{n}}"
            - n: {function: forward(), type: int, data: {min: 1, max: 20001}}
        """),
        "p.yaml:6:43: user.goals[1].n.data: the range has 20000 values; at most 10000",
    ),
    "all_combinations with too many conversations": (
        with_goals(
            """
            - "{{a}} {{b}}"
            - a: {function: forward(b), type: int, data: {min: 1, max: 201}}
            - b: {function: forward(), type: int, data: {min: 1, max: 201}}
            """,
            "conversation:\n  number: all_combinations\n",
        ),
        "p.yaml:9:11: conversation.number: all_combinations gives 40000 conversations; the limit is 10000",
    ),
    "temperature not a number": (
        HEAD + "  goals: [hi]\nllm:\n  temperature: hot\n",
        "p.yaml:6:16: llm.temperature: expected a number, got 'hot'",
    ),
    "temperature out of range": (
        HEAD + "  goals: [hi]\nllm:\n  temperature: 3\n",
        "p.yaml:6:16: llm.temperature: must be between 0.0 and 2.0, got 3.0",
    ),
    "unknown key in llm": (
        HEAD + "  goals: [hi]\nllm:\n  modle: gpt-4o\n",
        "p.yaml:6:3: llm.modle: unknown key 'modle'; did you mean 'model'?",
    ),
    "number not a number": (
        HEAD + "  goals: [hi]\nconversation:\n  number: lots\n",
        "p.yaml:6:11: conversation.number: expected a number of conversations, all_combinations or sample(fraction), got 'lots'",
    ),
    "number misspelt": (
        HEAD + "  goals: [hi]\nconversation:\n  number: all_combination\n",
        "p.yaml:6:11: conversation.number: expected a number of conversations, all_combinations or "
        "sample(fraction), got 'all_combination'; did you mean 'all_combinations'?",
    ),
    "number zero": (
        HEAD + "  goals: [hi]\nconversation:\n  number: 0\n",
        "p.yaml:6:11: conversation.number: must be at least 1 conversation, got 0",
    ),
    "sample above 1": (
        HEAD + "  goals: [hi]\nconversation:\n  number: sample(1.5)\n",
        "p.yaml:6:11: conversation.number: sample() takes a fraction above 0 and at most 1, such as sample(0.2); got '1.5'",
    ),
    "sample of zero": (
        HEAD + "  goals: [hi]\nconversation:\n  number: sample(0)\n",
        "p.yaml:6:11: conversation.number: sample() takes a fraction above 0 and at most 1, such as sample(0.2); got '0'",
    ),
    "random steps above 20": (
        HEAD + "  goals: [hi]\nconversation:\n  goal_style:\n    random steps: 21\n",
        "p.yaml:7:19: conversation.goal_style.random steps: must be between 1 and 19, got 21",
    ),
    "steps not a number": (
        HEAD + "  goals: [hi]\nconversation:\n  goal_style:\n    steps: five\n",
        "p.yaml:7:12: conversation.goal_style.steps: expected an integer, got 'five'",
    ),
    "unknown goal style": (
        HEAD + "  goals: [hi]\nconversation:\n  goal_style:\n    all_answerd: {limit: 3}\n",
        "p.yaml:7:5: conversation.goal_style.all_answerd: unknown goal style 'all_answerd'; did you mean 'all_answered'?",
    ),
    "two goal styles": (
        HEAD + "  goals: [hi]\nconversation:\n  goal_style:\n    steps: 3\n    default:\n",
        "p.yaml:6:3: conversation.goal_style: give one goal style, got steps and default",
    ),
    "all_answered with an unknown setting": (
        HEAD + "  goals: [hi]\nconversation:\n  goal_style:\n    all_answered:\n      exprt: true\n",
        "p.yaml:8:7: conversation.goal_style.all_answered.exprt: unknown key 'exprt'; did you mean 'export'?",
    ),
    "unknown interaction style": (
        HEAD + "  goals: [hi]\nconversation:\n  interaction_style:\n    - make speling mistakes\n",
        "p.yaml:7:7: conversation.interaction_style[0]: unknown interaction style 'make speling mistakes'; "
        "did you mean 'make spelling mistakes'?",
    ),
    "unknown interaction style inside random": (
        HEAD + "  goals: [hi]\nconversation:\n  interaction_style:\n    - random:\n      - single questions\n",
        "p.yaml:8:9: conversation.interaction_style[0].random[0]: unknown interaction style 'single questions'; "
        "did you mean 'single question'?",
    ),
    "change language without languages": (
        HEAD + "  goals: [hi]\nconversation:\n  interaction_style:\n    - change language\n",
        "p.yaml:7:7: conversation.interaction_style[0]: change language needs a list of languages, "
        "e.g. 'change language: [italian, chinese]'",
    ),
    "random inside random": (
        HEAD + "  goals: [hi]\nconversation:\n  interaction_style:\n    - random:\n      - random: [default]\n",
        "p.yaml:8:9: conversation.interaction_style[0].random[0].random: random cannot be nested inside random",
    ),
    "is_starter not a boolean": (
        HEAD + "  goals: [hi]\nchatbot:\n  is_starter: sometimes\n",
        "p.yaml:6:15: chatbot.is_starter: expected true or false, got 'sometimes'",
    ),
    "unknown top-level key": (
        HEAD + "  goals: [hi]\nconversaton:\n  number: 2\n",
        "p.yaml:5:1: conversaton: unknown key 'conversaton'; did you mean 'conversation'?",
    ),
    "unknown key in user": (
        HEAD + "  goal: [hi]\n",
        "p.yaml:4:3: user.goal: unknown key 'goal'; did you mean 'goals'?",
    ),
    "missing goals": (
        HEAD,
        "p.yaml:2:1: user: missing required key 'goals'",
    ),
    "missing test_name": (
        "user:\n  role: r\n  goals: [hi]\n",
        "p.yaml:1:1: missing required key 'test_name'",
    ),
    "missing personality file": (
        HEAD + "  context:\n    - personality: personalities/nobody.yml\n  goals: [hi]\n",
        "p.yaml:5:20: user.context[0].personality: personality file 'personalities/nobody.yml' not found",
    ),
    "world customer id": (
        HEAD + "  goals: [hi]\nworld:\n  customer_id: bob\n",
        "p.yaml:6:16: world.customer_id: customer 'bob' is not in world orders; its customers are C-100, C-200, C-300, C-400",
    ),
    "world today not a date": (
        HEAD + "  goals: [hi]\nworld:\n  today: tomorrow\n",
        "p.yaml:6:10: world.today: expected a date like 2026-11-21, got 'tomorrow'",
    ),
    "world order status": (
        HEAD + "  goals: [hi]\nworld:\n  orders:\n    - id: ORD-1001\n      status: shiped\n",
        "p.yaml:8:15: world.orders[0].status: 'shiped' is not one of pending, processing, shipped, delivered, cancelled; did you mean 'shipped'?",
    ),
    "world order id": (
        HEAD + "  goals: [hi]\nworld:\n  orders:\n    - id: 1001\n",
        "p.yaml:7:11: world.orders[0].id: expected text, got int 1001",
    ),
    "world order unknown field": (
        HEAD + "  goals: [hi]\nworld:\n  orders:\n    - id: ORD-1001\n      placed_days: 3\n",
        "p.yaml:8:20: world.orders[0].placed_days: unknown column 'placed_days' of table orders; did you mean 'placed_days_ago'?",
    ),
    "world order negative age": (
        HEAD + "  goals: [hi]\nworld:\n  orders:\n    - {id: ORD-1001, placed_days_ago: -2}\n",
        "p.yaml:7:39: world.orders[0].placed_days_ago: must be at least 0, got -2",
    ),
    "expect regex does not compile": (
        HEAD + "  goals: [hi]\nexpect:\n  bot_says:\n    - 'refund(ed'\n",
        "p.yaml:7:7: expect.bot_says[0]: invalid regular expression 'refund(ed': missing ), unterminated subpattern at position 6",
    ),
    "expect never-says regex does not compile": (
        HEAD + "  goals: [hi]\nexpect:\n  bot_never_says: ['[a-']\n",
        "p.yaml:6:20: expect.bot_never_says[0]: invalid regular expression '[a-': unterminated character set at position 0",
    ),
    "expect unknown tool": (
        HEAD + "  goals: [hi]\nexpect:\n  tools_called: [cancel_ordr]\n",
        "p.yaml:6:18: expect.tools_called[0]: unknown tool 'cancel_ordr'; did you mean 'cancel_order'?",
    ),
    "expect tool both called and not called": (
        HEAD + "  goals: [hi]\nexpect:\n  tools_called: [cancel_order]\n  tools_not_called: [cancel_order]\n",
        "p.yaml:7:3: expect.tools_not_called: cancel_order is in both tools_called and tools_not_called",
    ),
    "expect order status": (
        HEAD + "  goals: [hi]\nexpect:\n  orders:\n    ORD-1004: canceled\n",
        "p.yaml:7:15: expect.orders.ORD-1004: unknown order status 'canceled'; did you mean 'cancelled'?",
    ),
    "expect order id": (
        HEAD + "  goals: [hi]\nexpect:\n  orders:\n    order-4: cancelled\n",
        "p.yaml:7:5: expect.orders.order-4: expected an order id like ORD-1001, got 'order-4'",
    ),
    "expect judge min score": (
        HEAD + "  goals: [hi]\nexpect:\n  judge:\n    rubric: polite\n    min_score: 4\n",
        "p.yaml:8:16: expect.judge.min_score: must be between 1 and 3, got 4",
    ),
    "expect judge without rubric": (
        HEAD + "  goals: [hi]\nexpect:\n  judge:\n    min_score: 2\n",
        "p.yaml:6:3: expect.judge: missing required key 'rubric'",
    ),
    "expect unchanged_others not a boolean": (
        HEAD + "  goals: [hi]\nexpect:\n  unchanged_others: maybe\n",
        "p.yaml:6:21: expect.unchanged_others: expected true or false, got 'maybe'",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_error_names_file_line_column_path_and_reason(tmp_path: Path, case: str) -> None:
    text, expected = CASES[case]
    errors = errors_of(tmp_path, text)
    if case == "missing personality file":  # the message goes on with the folders searched
        assert any(e.startswith(expected) for e in errors), errors
    else:
        assert expected in errors, errors


def test_invalid_yaml_reports_the_parsers_position(tmp_path: Path) -> None:
    errors = errors_of(tmp_path, "test_name: t\nuser:\n  role: r\n goals: [hi]\n")
    assert errors == [
        "p.yaml:4:2: invalid YAML: expected <block end>, but found '<block mapping start>' "
        "(while parsing a block mapping at line 1, column 1)"
    ]


def test_duplicate_key_is_invalid_yaml(tmp_path: Path) -> None:
    errors = errors_of(tmp_path, "test_name: t\ntest_name: u\nuser: {role: r, goals: [hi]}\n")
    assert len(errors) == 1
    assert errors[0].startswith('p.yaml:2:1: invalid YAML: found duplicate key "test_name"')


def test_empty_file_and_non_mapping_are_reported(tmp_path: Path) -> None:
    assert errors_of(tmp_path, "") == ["p.yaml:1:1: the profile is empty; expected a mapping with test_name, user, ..."]
    assert errors_of(tmp_path, "- a\n- b\n") == ["p.yaml:1:1: expected a mapping of sections, got a list"]


def test_missing_file_is_a_profile_error(tmp_path: Path) -> None:
    errors = validate_profile(tmp_path / "nowhere.yaml")
    assert [e.reason for e in errors] == ["cannot read profile: No such file or directory"]


def test_all_errors_of_a_file_are_collected_in_file_order(tmp_path: Path) -> None:
    text = with_goals(
        """
        - "{{drink}} and {{food}}"
        - drink: {function: forwad(), type: string, data: [coke]}
        """,
        "llm:\n  temperature: hot\nconversation:\n  number: lots\nworlds: 1\n",
    )
    errors = errors_of(tmp_path, text)
    assert errors == [
        "p.yaml:6:25: user.goals[1].drink.function: unknown function 'forwad()'; did you mean 'forward()'?",
        "p.yaml:8:16: llm.temperature: expected a number, got 'hot'",
        "p.yaml:10:11: conversation.number: expected a number of conversations, all_combinations or sample(fraction), got 'lots'",
        "p.yaml:11:1: worlds: unknown key 'worlds'; did you mean 'world'?",
    ]


def test_load_profile_raises_one_error_carrying_all(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + "  goals: [hi]\nllm:\n  temperature: hot\n  modle: gpt-4o\n", encoding="utf-8")
    with pytest.raises(InvalidProfile) as caught:
        load_profile(path)
    error = caught.value
    assert isinstance(error, ProfileError) and isinstance(error, ParleyError)
    assert (error.line, error.column, error.field_path) == (6, 16, "llm.temperature")
    assert len(error.errors) == 2
    assert str(error).splitlines() == [e.render() for e in error.errors]


def test_invalid_personality_file_is_reported_inside_that_file(tmp_path: Path) -> None:
    (tmp_path / "moody.yml").write_text("name: moody\ncontext: grumpy\nmood: 3\n", encoding="utf-8")
    errors = errors_of(tmp_path, HEAD + "  context:\n    - personality: moody.yml\n  goals: [hi]\n")
    assert errors == [
        "p.yaml:5:20: user.context[0].personality: personality file 'moody.yml' is invalid (see moody.yml)",
        "moody.yml:2:10: context: expected a list of context lines, got 'grumpy'",
    ]  # `mood:` is ignored, as Sensei reads only context


# -- list functions -------------------------------------------------------------------------------


def list_function_profile(data: str) -> str:
    return (
        with_goals(
            """
        - "{{n}}"
        - n:
            function: forward()
            type: int
            data:
        """
        )
        + textwrap.indent(textwrap.dedent(data).strip("\n"), " " * 10)
        + "\n"
    )


@pytest.fixture
def functions_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "list_functions"
    folder.mkdir()
    for name in ("number_list.py", "broken.py"):
        (folder / name).write_text((DATA / "list_functions" / name).read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "syntax.py").write_text("def f(:\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            "file: list_functions/missing.py\nfunction_name: f\n",
            "p.yaml:10:17: user.goals[1].n.data.file: list function file 'list_functions/missing.py' not found",
        ),
        (
            "file: list_functions/number_list.py\nfunction_name: number_lst\nargs: [1, 3, 1]\n",
            "p.yaml:11:26: user.goals[1].n.data.function_name: 'list_functions/number_list.py' has no function "
            "'number_lst'; did you mean 'number_list'?",
        ),
        (
            "file: list_functions/broken.py\nfunction_name: explode\n",
            "p.yaml:11:26: user.goals[1].n.data.function_name: list function explode() failed: ValueError: the oven is cold",
        ),
        (
            "file: list_functions/broken.py\nfunction_name: not_a_list\n",
            "p.yaml:11:26: user.goals[1].n.data.function_name: list function not_a_list() must return a list, returned int",
        ),
        (
            "file: list_functions/broken.py\nfunction_name: wrong_type\n",
            "p.yaml:11:26: user.goals[1].n.data.function_name: list function wrong_type() returned 'one' at "
            "position 0, not an integer for type int",
        ),
        (
            "file: list_functions/broken.py\nfunction_name:\n",
            "p.yaml:11:11: user.goals[1].n.data.function_name: function_name is blank and "
            "'list_functions/broken.py' has no single function to call (public functions: explode, "
            "not_a_list, wrong_type)",
        ),
        (
            "file: list_functions/number_list.py\nfunction_name: number_list\nargs: [1]\n",
            "p.yaml:11:26: user.goals[1].n.data.function_name: list function number_list() failed: TypeError: "
            "number_list() missing 2 required positional arguments: 'stop' and 'step'",
        ),
    ],
    ids=["missing file", "unknown function", "raises", "not a list", "wrong type", "blank name", "bad args"],
)
def test_list_function_errors_point_at_the_data(tmp_path: Path, functions_dir: Path, data: str, expected: str) -> None:
    errors = errors_of(tmp_path, list_function_profile(data))
    assert any(e.startswith(expected) for e in errors), errors


def test_list_function_file_that_does_not_import(tmp_path: Path, functions_dir: Path) -> None:
    errors = errors_of(tmp_path, list_function_profile("file: list_functions/syntax.py\n"))
    assert len(errors) == 1
    assert errors[0].startswith(
        "p.yaml:10:17: user.goals[1].n.data.file: cannot import list function file 'list_functions/syntax.py': SyntaxError:"
    )


# -- robustness ---------------------------------------------------------------------------------------

KEYS = [
    "test_name", "llm", "model", "temperature", "user", "language", "role", "context", "personality", "goals",
    "function", "type", "data", "min", "max", "step", "steps", "linspace", "file", "function_name", "args",
    "chatbot", "is_starter", "fallback", "output", "description", "conversation", "number", "goal_style",
    "steps", "random steps", "all_answered", "export", "limit", "interaction_style", "random", "change language",
    "world", "customer_id", "today", "orders", "id", "status", "expect", "tools_called", "bot_says", "judge",
    "rubric", "min_score", "v", "w",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 30),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(
        ["forward()", "forward(v)", "random(2)", "random(rand)", "another()", "default()", "any(x)", "{{v}}",
         "int", "float", "string", "all_combinations", "sample(0.5)", "long phrase", "ORD-1001", "C-100",
         "cancelled", "cancel_order", "(", "2026-11-21", "x"]
    ),
)  # fmt: skip
DOCUMENTS = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.sampled_from(KEYS), children, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=examples(150), deadline=None)
@given(document=st.dictionaries(st.sampled_from(KEYS), DOCUMENTS, max_size=6))
def test_validation_never_crashes_on_any_document(document: dict[str, object]) -> None:
    buffer = io.StringIO()
    YAML(typ="safe", pure=True).dump(document, buffer)
    profile, errors = check_profile_text(buffer.getvalue(), source="fuzz.yaml", personality_dirs=[])
    assert (profile is None) == bool(errors)
    for error in errors:
        assert isinstance(error, ProfileError) and error.reason
    if profile is not None:
        try:
            specs = expand(profile)
        except ProfileError:  # allowed: e.g. only any() items, and no model to generate them
            return
        assert specs

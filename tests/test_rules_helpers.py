"""The rule helpers, each with the meaning Sensei gives it (its quirks included, since rule
files written for Sensei rely on them), and the model helpers: asked when a model is given,
`not_run` when none is."""

from __future__ import annotations

import pytest

from parley.core.errors import ProviderError
from parley.core.rules.conversation_helpers import chatbot_returns, conversation_length, data_collected, missing_slots, repeated_answers
from parley.core.rules.evaluation_limits import EvaluationBudget
from parley.core.rules.text_similarity import jaccard_similarity, sequence_similarity, tf_idf_similarity
from parley.core.rules.value_helpers import currency, extract_float, length
from tests.rules_support import ScriptedModel, conversation_text, evaluate, outcomes, rule_text

TURNS = [
    {"User": "Hi"},
    {"Assistant": "Hello! How can I help you?"},
    {"User": "What?"},
    {"Assistant": "AVAILABLE BUTTONS:\n- BUTTON TEXT: Yes LINK: <empty>"},
    {"User": "What?"},
    {"Assistant": "Hello! How can I help you?"},
    {"User": "Bye"},
    {"Assistant": "AVAILABLE BUTTONS:"},
]


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("That would be 150 dollars.", 150.0),
        ("1,250.50 USD", 1250.5),
        ("It costs $.5 or so", 0.5),
        ("-3.5 degrees", -3.5),
        ("v2.0.1", 2.0),
        ("free", None),
        ("", None),
    ],
)
def test_extract_float_takes_the_first_number(text: str, number: float | None) -> None:
    assert extract_float(text) == number


def test_extract_float_of_something_not_text_raises() -> None:
    with pytest.raises(TypeError):
        extract_float(150)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("$600", "USD"),
        ("20 € or 20 USD", "EUR"),  # a symbol wins over a code
        ("15 EUR", "EUR"),
        ("150 dollars", "USD"),
        ("7 pounds", "GBP"),
        ("1000 ¥", "JPY"),
        ("500 rupees", "INR"),
        ("a lot", None),
        ("usd 5", None),  # codes are upper case
    ],
)
def test_currency_finds_symbol_then_code_then_name(text: str, code: str | None) -> None:
    assert currency(text) == code


def test_currency_of_a_capitalised_name_raises_as_in_sensei() -> None:
    with pytest.raises(KeyError):
        currency("12 Dollars")


def test_length_min_max_and_senseis_running_average() -> None:
    assert length(["abcd", "ab", "abc"]) == 2
    assert length(["abcd", "ab", "abc"], "MAX") == 4
    # Sensei's 'average' is ((0 + 4) / 1 + 2) / 2 ... : 3.0 then (3 + 3) / 3 = 2.0, not 3.0
    assert length(["abcd", "ab", "abc"], kind="average") == 2.0
    assert length("abc") == 3
    assert length([]) == 100_000_000
    with pytest.raises(ValueError, match="min, max or average"):
        length(["a"], "median")
    with pytest.raises(ValueError, match="list of strings"):
        length(("a",))


def test_conversation_length_counts_turns_by_who() -> None:
    assert conversation_length(TURNS) == 8
    assert conversation_length(TURNS, "USER") == 4
    assert conversation_length(TURNS, "assistant") == 4
    assert conversation_length(TURNS, "chatbot") == 0  # only turns keyed `chatbot`
    with pytest.raises(ValueError, match="Expected 'user'"):
        conversation_length(TURNS, "robot")


def test_chatbot_returns_the_turns_with_a_text_and_not_another_after_it() -> None:
    assert chatbot_returns(TURNS, "Hello") == [1, 5]
    assert chatbot_returns(TURNS, "LINK: <empty>") == [3]
    assert chatbot_returns(TURNS, "AVAILABLE BUTTONS:", "- BUTTON TEXT:") == [7]
    assert chatbot_returns(TURNS, "What?") == []  # the user's words are not the bot's


def test_repeated_answers_by_each_method() -> None:
    budget = EvaluationBudget()
    assert repeated_answers(TURNS, budget, "exact", 1) == {"Hello! How can I help you?": ["Hello! How can I help you?"]}
    turns = [{"Assistant": "Hello! How can I help you?"}, {"Assistant": "Hello! How can I help you today?"}]
    assert repeated_answers(turns, budget, "exact", 1) == {}
    assert repeated_answers(turns, budget, "jaccard", 0.6) == {"Hello! How can I help you?": ["Hello! How can I help you today?"]}
    assert repeated_answers(turns, budget, "sequence-matcher", 0.85) == {"Hello! How can I help you?": ["Hello! How can I help you today?"]}
    assert repeated_answers(turns, budget, "TF-IDF", 0.75) == {"Hello! How can I help you?": ["Hello! How can I help you today?"]}
    assert repeated_answers(turns, budget, "tf-idf", 0.9) == {}


def test_text_similarities_have_the_reference_values() -> None:
    assert jaccard_similarity("a b c", "B C D") == 0.5
    assert sequence_similarity("abcd", "abce") == 0.75
    # The values scikit-learn's TfidfVectorizer and cosine_similarity give (Sensei's tf-idf), to
    # the last bit: a tie at a threshold (1.0000000000000002 >= 1) goes the same way.
    assert tf_idf_similarity("Hello! How can I help you?", "Hello! How can I help you today?") == 0.8466473536503034
    assert tf_idf_similarity("same words here", "SAME words here") == 1.0000000000000002
    assert tf_idf_similarity("one two", "three four") == 0.0
    with pytest.raises(ValueError, match="empty vocabulary"):
        tf_idf_similarity("?", "a")


def test_data_collected_and_missing_slots() -> None:
    outputs = [{"name": "Ana"}, {"email": None}, {"phone": "None"}]
    assert data_collected(outputs) is False
    assert missing_slots(outputs) == ["email", "phone"]
    assert data_collected([{"name": "Ana"}]) is True
    assert missing_slots([]) == []


def test_helpers_see_the_conversation_a_rule_judges(tmp_path) -> None:
    rules = {
        "length.yaml": rule_text("conversation_length() == conversation_length('user') + conversation_length('assistant')"),
        "links.yaml": rule_text("not chatbot_returns('LINK: <empty>')"),
        "repeat.yaml": rule_text("not repeated_answers(method='exact', threshold=1)", yields="f'repeats {repeated_answers(threshold=1)}'"),
        "slots.yaml": rule_text("data_collected() == True", yields="f'Missing slots: {missing_slots()}'"),
        "short.yaml": rule_text("length(chatbot_phrases, kind='max') < 20"),
    }
    conversations = {
        "a.yml": conversation_text(outputs={"name": "Ana"}, turns=[("User", "Hi"), ("Assistant", "Hello")]),
        "b.yml": conversation_text(
            outputs={"name": None},
            turns=[("User", "Hi"), ("Assistant", "LINK: <empty>"), ("User", "?"), ("Assistant", "LINK: <empty>")],
        ),
    }
    reports = evaluate(tmp_path, rules, conversations)
    assert outcomes(reports["length.yaml"])["pass"] == ["a.yml", "b.yml"]
    assert outcomes(reports["links.yaml"])["fail"] == ["b.yml"]
    assert reports["repeat.yaml"].of("fail")[0].yields == "repeats {'LINK: <empty>': ['LINK: <empty>']}"
    assert reports["slots.yaml"].of("fail")[0].yields == "Missing slots: ['name']"
    assert outcomes(reports["short.yaml"]) == {"pass": ["a.yml", "b.yml"], "fail": [], "not_applicable": [], "not_run": []}


def test_exists_num_exist_and_is_unique_look_through_the_batch(tmp_path) -> None:
    rules = {
        "some_high.yaml": rule_text("exists('extract_float(cost) > 100')", conversations="all"),
        "two_high.yaml": rule_text("num_exist('extract_float(cost) > 50') == 2", conversations="all"),
        "unique.yaml": rule_text("is_unique('cost')", conversations="all"),
        "unique_dollars.yaml": rule_text("is_unique('cost')", conversations="all", when="currency(cost) == 'USD'"),
    }
    conversations = {
        "a.yml": conversation_text(outputs={"cost": "$60"}),
        "b.yml": conversation_text(outputs={"cost": "$90"}),
        "c.yml": conversation_text(outputs={"cost": "90 EUR"}),
        "d.yml": conversation_text(outputs={"cost": "$60"}),
    }
    reports = evaluate(tmp_path, rules, conversations)
    assert outcomes(reports["some_high.yaml"])["fail"] == [["a.yml", "b.yml", "c.yml", "d.yml"]]
    assert outcomes(reports["two_high.yaml"])["fail"] == [["a.yml", "b.yml", "c.yml", "d.yml"]]  # four are over 50
    assert outcomes(reports["unique.yaml"])["fail"] == [["a.yml", "b.yml", "c.yml", "d.yml"]]  # $60 twice
    dollars = outcomes(reports["unique_dollars.yaml"])
    assert dollars["not_applicable"] == ["c.yml"]
    assert dollars["fail"] == [["a.yml", "b.yml", "d.yml"]]


MODEL_RULES = {
    "semantic.yaml": rule_text("semantic_content(hours, 'open from 9 to 5')"),
    "tone.yaml": rule_text("'NEGATIVE' not in tone(chatbot_phrases)"),
    "english.yaml": rule_text("language(chatbot_phrases) == 'ENG'"),
    "topics.yaml": rule_text("only_talks_about(['pizza'], 'Sorry?')"),
    "turn.yaml": rule_text("utterance_index('user', 'ordering a pizza') == 1"),
    "same_language.yaml": rule_text("responds_in_same_language()"),
}
TALK = conversation_text(outputs={"hours": "9am to 5pm"}, turns=[("User", "A pizza please"), ("Assistant", "Sure, a pizza!")])


def test_model_helpers_are_not_run_offline_never_passed(tmp_path) -> None:
    reports = evaluate(tmp_path, MODEL_RULES, {"a.yml": TALK})
    for name, report in reports.items():
        assert outcomes(report)["not_run"] == ["a.yml"], name
        assert "needs a model" in (report.of("not_run")[0].reason or "")
        assert report.needs_model, name


def test_model_helpers_ask_the_model_and_read_its_answer(tmp_path) -> None:
    def answer(prompt: str) -> str:
        if "tone" in prompt:
            return "NEUTRAL"
        if "language is this" in prompt:
            return "ENG"
        if "keep to these topics" in prompt:
            return "True"
        if "At which turn" in prompt:
            return "1"
        return "YES"

    model = ScriptedModel(answer)
    reports = evaluate(tmp_path, MODEL_RULES, {"a.yml": TALK}, model)
    assert {name: outcomes(report)["pass"] for name, report in reports.items()} == {name: ["a.yml"] for name in MODEL_RULES}
    assert any("9am to 5pm" in prompt and "open from 9 to 5" in prompt for prompt in model.prompts)


def test_model_answers_that_say_no_fail_the_rule_with_the_reason(tmp_path) -> None:
    model = ScriptedModel(lambda prompt: "'Sure, a pizza!' strays" if "topics" in prompt else "NO")
    reports = evaluate(tmp_path, {k: MODEL_RULES[k] for k in ("semantic.yaml", "topics.yaml")}, {"a.yml": TALK}, model)
    assert outcomes(reports["semantic.yaml"])["fail"] == ["a.yml"]
    topics = reports["topics.yaml"].of("fail")[0]
    assert topics.reason == "The following chatbot responses are out of scope: 'Sure, a pizza!' strays"


def test_a_model_that_fails_leaves_the_rule_not_run(tmp_path) -> None:
    class Failing:
        name = "openai/broken"

        def ask(self, prompt: str) -> str:
            raise ProviderError("HTTP 500 after 4 retries", status=500)

    reports = evaluate(tmp_path, {"semantic.yaml": MODEL_RULES["semantic.yaml"]}, {"a.yml": TALK}, Failing())
    result = reports["semantic.yaml"].results[0]
    assert result.outcome == "not_run"
    assert "openai/broken failed: HTTP 500" in (result.reason or "")


def test_a_model_helper_not_reached_does_not_stop_a_decision(tmp_path) -> None:
    # Decided without the model: `when` is false, or `or` is settled before the model is needed.
    rules = {
        "when.yaml": rule_text("semantic_content(hours, 'x')", when="hours == 'closed'"),
        "or.yaml": rule_text("len(chatbot_phrases) == 1 or tone(user_phrases) == []"),
        "one_turn.yaml": rule_text("responds_in_same_language()"),
    }
    one_turn = conversation_text(outputs={"hours": "9am"}, turns=[("User", "Hi")])
    reports = evaluate(tmp_path, rules, {"a.yml": TALK, "b.yml": one_turn})
    assert outcomes(reports["when.yaml"])["not_applicable"] == ["a.yml", "b.yml"]
    assert outcomes(reports["or.yaml"])["pass"] == ["a.yml"]
    assert outcomes(reports["or.yaml"])["not_run"] == ["b.yml"]
    assert outcomes(reports["one_turn.yaml"])["pass"] == ["b.yml"]  # one turn: nothing to compare, as in Sensei

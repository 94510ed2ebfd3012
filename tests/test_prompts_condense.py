"""The transcript condenser: long tool results shortened to their key fields, repeats pointing
back, the middle omitted, long messages cut in the middle, in that order and only as far as needed; every turn keeps its number;
the prompt says what was condensed. And the context length of a role: option, endpoint, default."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_settings import examples

from parley.core.prompts import (
    DEFAULT_CONTEXT_TOKENS,
    condense,
    context_tokens,
    cut_middle,
    estimate_messages,
    estimate_tokens,
    fit_messages,
    prompt_budget,
    shorten_tool_result,
    split_turns,
)
from parley.core.records.chat import ChatMessage, ToolCall, ToolSpec

ORDERS = [
    {
        "id": f"ORD-10{n:02d}",
        "customer_id": "C-100",
        "items": [{"name": "Stainless steel water bottle, 750 ml", "qty": 2, "unit_price": 19.5, "currency": "EUR"}],
        "total": 39.0,
        "currency": "EUR",
        "placed_date": f"2026-11-{n + 1:02d}",
        "age_days": 20 - n,
        "status": "shipped" if n % 2 else "processing",
        "tracking": {
            "carrier": "UPS",
            "tracking_number": f"1Z999AA1012345{n:04d}",
            "last_event": "Departed facility",
            "delivered_date": None,
        },
    }
    for n in range(6)
]
LIST_RESULT = json.dumps(ORDERS, separators=(",", ":"))


def tool_exchange(turn: int, name: str, result: str, args: str = "{}") -> list[ChatMessage]:
    call_id = f"call_{turn}_{name}"
    return [
        ChatMessage(role="assistant", tool_calls=[ToolCall(id=call_id, name=name, arguments=args)]),
        ChatMessage(role="tool", tool_call_id=call_id, name=name, content=result),
    ]


def conversation(turns: int, *, result: str = LIST_RESULT, system: str | None = "You are the shop's assistant.") -> list[ChatMessage]:
    """`turns` customer turns, each with a list_my_orders call returning `result`."""
    messages = [ChatMessage(role="system", content=system)] if system else []
    for n in range(1, turns + 1):
        messages.append(ChatMessage(role="user", content=f"Customer message number {n}: what about my orders?"))
        messages += tool_exchange(n, "list_my_orders", result)
        messages.append(ChatMessage(role="assistant", content=f"Answer number {n}: your orders are listed above."))
    return messages


def turn_of(condensed, number):
    [turn] = [t for t in condensed.turns if t.number == number]
    return turn


def tool_results(turn):
    return [m.content for m in turn.messages if m.role == "tool"]


# -- turns ----------------------------------------------------------------------------------------


def test_turns_start_at_each_customer_message_and_a_bot_opening_is_turn_0():
    messages = [
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="assistant", content="Hello! How can I help?"),
        ChatMessage(role="user", content="Track ORD-1003"),
        *tool_exchange(1, "track_order", "{}"),
        ChatMessage(role="assistant", content="It is on its way."),
        ChatMessage(role="user", content="Thanks"),
        ChatMessage(role="assistant", content="Bye"),
    ]
    head, turns = split_turns(messages)
    assert [m.content for m in head] == ["sys"]
    assert [(t.number, len(t.messages)) for t in turns] == [(0, 1), (1, 4), (2, 2)]


# -- nothing to do --------------------------------------------------------------------------------


def test_a_prompt_that_fits_is_left_exactly_as_it_was():
    messages = conversation(2)
    fitted = condense(messages, budget=100_000)
    assert not fitted.condensed and fitted.note is None and fitted.fits
    assert fitted.prompt_messages() == messages
    assert fitted.tokens_before == fitted.tokens_after == estimate_messages(messages)
    assert fit_messages(messages, 100_000) == messages


# -- step 1: long tool results --------------------------------------------------------------------


def test_a_long_json_result_keeps_ids_statuses_and_dates_and_drops_the_rest():
    short = shorten_tool_result(LIST_RESULT)
    assert short.startswith(f"[shortened from {len(LIST_RESULT)} characters to its key fields] ")
    kept = json.loads(short.split("] ", 1)[1])
    assert [o["id"] for o in kept] == [o["id"] for o in ORDERS]
    assert [o["status"] for o in kept] == [o["status"] for o in ORDERS]
    assert [o["placed_date"] for o in kept] == [o["placed_date"] for o in ORDERS]
    assert kept[1]["tracking"] == {"carrier": "UPS", "tracking_number": "1Z999AA10123450001"}
    assert "Stainless steel" not in short and "C-100" not in short and "null" not in short
    assert len(short) < len(LIST_RESULT) * 0.6


def test_a_long_text_result_keeps_its_first_lines_and_names_the_ids_dates_and_statuses_further_on():
    text = "REFUSED [409 too_old] Order ORD-1005 was placed 11 days ago.\nThe limit is 10 days.\n" + "Details follow. " * 30
    text += "\nOrder ORD-1009 placed 2026-11-02 is delivered."
    short = shorten_tool_result(text)
    assert "REFUSED [409 too_old] Order ORD-1005 was placed 11 days ago.\nThe limit is 10 days." in short
    assert short.endswith("(further on: ORD-1009, 2026-11-02, delivered)")
    assert len(short) < len(text)


def test_a_short_result_is_never_shortened():
    assert shorten_tool_result('{"order_id":"ORD-1003","status":"shipped"}') == '{"order_id":"ORD-1003","status":"shipped"}'


def test_long_tool_results_are_shortened_first_oldest_first_and_only_as_far_as_needed():
    messages = conversation(4, result=LIST_RESULT)
    # distinct results, so that step 2 has nothing to do
    for n, m in enumerate(m for m in messages if m.role == "tool"):
        m.content = LIST_RESULT.replace("ORD-10", f"ORD-{n + 2}0")
    whole = estimate_messages(messages)
    one_less = whole - estimate_tokens(messages[3].content) + estimate_tokens(shorten_tool_result(messages[3].content))
    fitted = condense(messages, budget=one_less + 80)  # the note it adds takes some 50 tokens
    assert fitted.fits and fitted.condensed
    assert fitted.shortened == [1] and not fitted.repeats and fitted.omitted is None
    assert fitted.tokens_before == whole and fitted.tokens_after < fitted.tokens_before
    assert tool_results(turn_of(fitted, 2))[0] == messages[7].content  # turn 2 untouched: not needed
    assert "long tool results in turn 1 are shortened to their first line and key fields" in fitted.note


def test_the_last_turn_is_never_shortened():
    messages = conversation(3)
    fitted = condense(messages, budget=estimate_messages(messages) // 2)
    assert tool_results(turn_of(fitted, 3)) == [LIST_RESULT]


# -- step 2: repeats ------------------------------------------------------------------------------


def test_repeated_identical_results_point_back_to_the_turn_that_first_gave_them():
    messages = conversation(5)
    shortened_all = condense(messages, budget=10**9)  # nothing to do yet
    assert not shortened_all.condensed
    # a budget that shortening alone cannot meet, but shortening and references can: turn 1
    # shortened, turns 2-4 pointing back to it, turn 5 (the last) whole, and the note
    whole, full, short = estimate_messages(messages), estimate_tokens(LIST_RESULT), estimate_tokens(shorten_tool_result(LIST_RESULT))
    fitted = condense(messages, budget=whole - 4 * full + short + 3 * estimate_tokens("[same result as in turn 1]") + 100)
    assert fitted.fits, (fitted.tokens_after, fitted.budget)
    assert fitted.omitted is None
    assert fitted.repeats == [2, 3, 4]
    assert tool_results(turn_of(fitted, 2)) == ["[same result as in turn 1]"]
    assert tool_results(turn_of(fitted, 1))[0].startswith("[shortened from")
    assert "tool results repeated in turns 2, 3 and 4 name the earlier turn that gave the same result" in fitted.note


# -- step 3: the middle ---------------------------------------------------------------------------


def test_the_middle_is_omitted_oldest_first_keeping_the_first_and_last_turns_and_their_numbers():
    messages = conversation(8)
    budget = 2800  # of some 12,600: the first and last turns and a few before the last fit
    fitted = condense(messages, budget=budget)
    assert fitted.fits and fitted.tokens_after <= budget < fitted.tokens_before
    numbers = [t.number for t in fitted.turns]
    assert numbers[0] == 1 and numbers[-1] == 8
    first, last = fitted.omitted
    assert first == 2 and last >= 4 and numbers == [1, *range(last + 1, 9)]
    assert f"turns 2-{last} are omitted" in fitted.note
    # every kept message is the original one, turn for turn (tool results aside)
    for turn in fitted.turns:
        original = [m for m in messages if m.role == "user"][turn.number - 1]
        assert turn.messages[0] == original
    # a repeat never points at an omitted turn
    for turn in fitted.turns:
        for content in tool_results(turn):
            if content.startswith("[same result as in turn "):
                assert int(content.split("turn ")[1].rstrip("]")) in numbers


def test_what_cannot_fit_even_condensed_says_so():
    messages = conversation(6)
    fitted = condense(messages, budget=50)
    assert not fitted.fits and fitted.tokens_after > 50
    assert [t.number for t in fitted.turns] == [1, 6] and fitted.omitted == (2, 5)


# -- step 4: long messages -----------------------------------------------------------------------

RAMBLE = "".join(f"Sentence {n} of a reply that goes on and on about the order. " for n in range(400))


def test_a_message_too_long_for_the_budget_is_cut_in_the_middle_keeping_its_start_and_end():
    # one turn (nothing to omit) whose answer alone is over the budget: a model that rambled
    messages = [
        ChatMessage(role="system", content="You judge."),
        ChatMessage(role="user", content="Where is ORD-1003?"),
        ChatMessage(role="assistant", content=RAMBLE),
    ]
    assert estimate_messages(messages) > 3000
    fitted = condense(messages, budget=1500, answering=False)
    assert fitted.fits and fitted.clipped == [1] and fitted.omitted is None
    [turn] = fitted.turns
    assert turn.number == 1 and turn.messages[0].content == "Where is ORD-1003?"  # short: untouched
    cut = turn.messages[1].content
    start, end = cut.split(" [… ")[0], cut.split(" …] ")[1]
    assert RAMBLE.startswith(start) and RAMBLE.endswith(end) and len(start) > len(end) > 100
    assert f"[… {len(RAMBLE) - len(start) - len(end)} characters left out …]" in cut
    assert "long messages in turn 1 are cut in the middle, where they say how much was left out" in fitted.note
    # only as far as needed: a cut a little longer would not fit
    assert condense(messages, budget=fitted.tokens_after - 1, answering=False).tokens_after < fitted.tokens_after


def test_a_bots_last_turn_is_never_cut_the_first_is():
    messages = [
        ChatMessage(role="system", content="You are the shop's assistant."),
        ChatMessage(role="user", content="Hello"),
        ChatMessage(role="assistant", content=RAMBLE),
        ChatMessage(role="user", content="And the short version? " + RAMBLE[:3000]),
    ]
    fitted = condense(messages, budget=2000)  # answering: the bot answers turn 2
    assert fitted.fits and fitted.clipped == [1]
    assert fitted.turns[-1].messages[0].content == messages[-1].content


def test_cut_middle_leaves_a_short_text_alone():
    assert cut_middle("short", 240) == "short"
    assert len(cut_middle("x" * 10_000, 300)) < 360


def test_the_note_goes_into_the_system_message_and_is_counted():
    messages = conversation(6)
    fitted = condense(messages, budget=estimate_messages(messages) // 3)
    assert fitted.condensed
    sent = fitted.prompt_messages()
    assert sent[0].role == "system" and sent[0].content.startswith("You are the shop's assistant.\n\nTo fit the model's context")
    assert estimate_messages(sent) == fitted.tokens_after
    bare = condense(conversation(6, system=None), budget=estimate_messages(messages) // 3)
    assert bare.prompt_messages()[0].role == "system" and bare.prompt_messages()[0].content == bare.note


def test_tool_calls_and_their_results_stay_paired_after_condensing():
    fitted = condense(conversation(9), budget=900)
    sent = fitted.prompt_messages()
    calls = {c.id for m in sent for c in m.tool_calls}
    answers = {m.tool_call_id for m in sent if m.role == "tool"}
    assert calls == answers


# -- tokens and context lengths -------------------------------------------------------------------


def test_tokens_are_estimated_as_small_tokenizers_split_text():
    assert estimate_tokens("") == estimate_tokens(None) == 0
    # a run of letters: one token per 3 letters, rounded up; spaces are free
    assert (estimate_tokens("abc"), estimate_tokens("abcd"), estimate_tokens("hello world")) == (1, 2, 4)
    # digits, punctuation, newlines and each byte of a non-ASCII character: one each
    assert estimate_tokens("ORD-1003") == 1 + 1 + 4
    assert estimate_tokens('{"id":7}') == 1 + 6
    assert estimate_tokens("a\nb") == 3 and estimate_tokens("é") == 2 and estimate_tokens("订") == 3
    # JSON a model reads at 2.4 characters a token is counted above that; characters / 3 is not
    assert estimate_tokens(LIST_RESULT) > len(LIST_RESULT) / 2.4 > len(LIST_RESULT) / 3
    assert estimate_messages([ChatMessage(role="user", content="x" * 300)]) == 100 + 8


def test_the_prompt_budget_keeps_room_for_the_answer_and_the_tools():
    tool = ToolSpec(name="get_order", description="Get one order.", parameters={"type": "object", "properties": {}})
    assert prompt_budget(4096) == 4096 - 512
    assert prompt_budget(4096, max_tokens=100) == 3996
    assert prompt_budget(4096, max_tokens=100, tools=[tool]) < 3996


def test_a_roles_context_is_its_option_else_its_endpoints_else_the_default():
    assert context_tokens(2048, 8192) == 2048
    assert context_tokens(None, 8192) == 8192
    assert context_tokens(None, None) == DEFAULT_CONTEXT_TOKENS == 4096


# -- properties -----------------------------------------------------------------------------------

turn_shapes = st.lists(
    st.tuples(
        st.text(min_size=0, max_size=80),  # the customer's line
        st.lists(st.sampled_from([LIST_RESULT, LIST_RESULT[:900], '{"status":"shipped"}', "ERROR [404] no such order"]), max_size=3),
        st.text(min_size=0, max_size=200),  # the bot's answer
    ),
    min_size=1,
    max_size=12,
)


def build(shapes, opening: bool) -> list[ChatMessage]:
    messages = [ChatMessage(role="system", content="Be helpful.")]
    if opening:
        messages.append(ChatMessage(role="assistant", content="Hello!"))
    for n, (line, results, answer) in enumerate(shapes, 1):
        messages.append(ChatMessage(role="user", content=line))
        for k, result in enumerate(results):
            messages += tool_exchange(n * 10 + k, "list_my_orders", result)
        messages.append(ChatMessage(role="assistant", content=answer))
    return messages


@settings(max_examples=examples(100))
@given(shapes=turn_shapes, opening=st.booleans(), budget=st.integers(0, 6000))
def test_condensing_keeps_numbers_first_and_last_turns_pairs_and_never_grows(shapes, opening, budget):
    messages = build(shapes, opening)
    _, original = split_turns(messages)
    fitted = condense(messages, budget)
    numbers = [t.number for t in fitted.turns]
    # the turns kept are the original turns, in order, under their own numbers
    assert numbers == sorted(numbers) and set(numbers) <= {t.number for t in original}
    assert numbers[-1] == original[-1].number and all(t.number in numbers for t in original if t.number <= 1)
    for turn in fitted.turns:
        [same] = [t for t in original if t.number == turn.number]
        assert [(m.role, m.tool_call_id) for m in turn.messages] == [(m.role, m.tool_call_id) for m in same.messages]
        for kept, was in zip(turn.messages, same.messages, strict=True):
            if kept.role != "tool" and kept.content != was.content:  # step 4: cut in the middle, start and end kept
                assert turn.number in fitted.clipped and " characters left out …] " in kept.content
                start, end = kept.content.split(" [… ")[0], kept.content.split(" …] ")[-1]
                assert was.content.startswith(start) and was.content.endswith(end)
    # only what it had to, and it says so
    assert fitted.tokens_after <= fitted.tokens_before
    # what does not fit went as far as condensing could, or is whole where condensing took nothing off
    assert fitted.fits or fitted.condensed or fitted.prompt_messages() == messages
    assert (fitted.note is not None) == fitted.condensed
    if fitted.tokens_before <= budget:
        assert not fitted.condensed and fitted.prompt_messages() == messages

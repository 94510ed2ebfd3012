"""The claims check reads a bot message as a person reads it: markdown emphasis, bullets, emoji,
a line break inside a sentence, full-width and look-alike letters are no hiding place for a claim
nothing backs; struck-out text and a cross mark say it was not done."""

from __future__ import annotations

import pytest

from parley.core.evaluation.claims import claims_check, find_claims
from parley.core.reading import as_read
from tests.test_eval_claims import bot, conversation, user

UNBACKED = [
    "I have **cancelled** ORD-1004",
    "I have _cancelled_ ORD-1004.",
    "Done:\n- Cancelled ORD-1004\n- Kept the others",
    "✅ Cancelled ORD-1004.",
    "ORD-1004: cancelled ✅",
    "I have\ncancelled ORD-1004.",
    "He **cancelado** el pedido ORD-1004.",
    "I have cаncelled ORD-1004.",  # a Cyrillic а
    "Your order ORD-1004 has been ｃａｎｃｅｌｌｅｄ.",
    "I have c\u200bancelled ORD-1004.",  # a zero-width space inside the word
]


@pytest.mark.parametrize("text", UNBACKED)
def test_a_claim_written_the_way_llm_bots_write_is_held_to_what_was_done(text):
    check = claims_check(conversation([user("Please cancel ORD-1004."), bot(text)], statuses={"ORD-1004": "processing"}))
    assert check.outcome == "fail", check.reason
    assert "no cancel_order for ORD-1004 succeeded" in check.reason


@pytest.mark.parametrize(
    "text",
    [
        "ORD-1004 has **not** been cancelled.",
        "~~Cancelled~~ ORD-1004 is still processing.",
        "ORD-1004: cancelled ❌",
        "**Would you like me to cancel ORD-1004?**",
        "If you want, I can\ncancel ORD-1004 for you.",
        "Please call `cancel_order` only once you are sure.",
    ],
)
def test_markup_that_says_it_was_not_done_is_no_claim(text):
    assert find_claims(text) == []


def test_a_message_is_read_as_a_person_reads_it():
    assert as_read("I have **cancelled** ORD-1004") == "I have cancelled ORD-1004"
    assert as_read("- one\n- two") == "one\ntwo"  # each bullet a line of its own
    assert as_read("I have\ncancelled it.\nThanks") == "I have cancelled it.\nThanks"  # a wrapped sentence joined
    assert as_read("see [the policy](https://shop.example/p) and cancel_order") == "see the policy and cancel_order"
    assert as_read("🎉 Done 🚚") == "Done"
    assert as_read("ＯＲＤ-１００４") == "ORD-1004"

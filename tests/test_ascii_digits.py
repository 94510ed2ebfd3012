"""Text that `str.isdigit()` calls a digit but `int()` refuses (superscripts, circled digits):
wherever parley reads a number from text, such input is an error it explains, never a crash."""

from __future__ import annotations

import pytest

from parley.core.engine.batch_plan import SelectionError, select_single
from parley.core.errors import ProfileError
from parley.core.specs.profile_loader import load_profile
from parley.worlds.orders.ids import order_digits


def test_order_ids_compare_on_ascii_digits_only() -> None:
    assert order_digits("ORD-1003") == "1003"
    assert order_digits("ORD-¹0²3") == "03"


def test_single_selector_with_a_superscript_is_a_clear_error() -> None:
    with pytest.raises(SelectionError):
        select_single([], "²")


def test_a_conversation_number_written_as_a_superscript_is_a_located_error(tmp_path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "test_name: t\nuser:\n  language: English\n  role: r\n  context: []\n  goals: [hello]\n"
        "chatbot: {is_starter: false, fallback: sorry}\n"
        "conversation:\n  number: '²'\n  goal_style: {steps: 2}\n  interaction_style: [single question]\n"
    )
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert "conversation.number" in str(info.value)

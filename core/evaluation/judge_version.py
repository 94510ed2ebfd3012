"""The version of parley's judge prompts, part of what a judge is for calibration.

A calibration measures one judge: its model and endpoint, its generation settings, and the
prompts parley sends it. A change to those prompts (their words, what the transcript shows) may
change every verdict, so a calibration made before it must not vouch for verdicts after it.
`judge_prompt_version()` is a fingerprint of the prompts as built now: the rubric prompt and the
criteria prompt rendered for one fixed conversation, hashed. Any change to the wording or the
way a transcript is shown gives another version; nobody has to remember to bump a number.
"""

from __future__ import annotations

import datetime
import functools
import hashlib

from parley.core.evaluation.criteria import Criterion
from parley.core.evaluation.criteria_prompt import criteria_messages
from parley.core.evaluation.judge import judge_messages
from parley.core.records import ChatMessage, Conversation, ConversationSpec, Expectations

__all__ = ["judge_prompt_version"]

_AT = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)


@functools.cache
def judge_prompt_version() -> str:
    """`p-` and 10 hex digits: the fingerprint of parley's judge prompts (see the module doc)."""
    spec = ConversationSpec(
        spec_id="version#0", kind="profile", source="version", name="version", index=0, seed=0,
        expect=Expectations(criteria=["The assistant greets the customer"]),
    )  # fmt: skip
    conversation = Conversation(
        id="version",
        customer_id="customer",
        bot_model="offline",
        user_simulator="offline",
        messages=[
            ChatMessage(role="user", content="Hello, where is my parcel?"),
            ChatMessage(role="assistant", content="Hello! It shipped."),
        ],
        started_at=_AT,
        ended_at=_AT,
        duration_s=0.0,
        stop_reason="user_stop",
    )
    criteria = [Criterion(number=1, text="The assistant greets the customer")]
    text = "\n".join(
        f"{m.role}: {m.content}" for m in [*judge_messages(conversation, spec, []), *criteria_messages(conversation, spec, criteria)]
    )
    return "p-" + hashlib.sha256(text.encode()).hexdigest()[:10]

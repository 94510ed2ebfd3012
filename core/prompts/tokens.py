"""How many tokens a prompt takes, estimated without a tokenizer.

Every model counts with its own tokenizer, and the ones at hand either download their tables on
first use (tiktoken) or belong to one model family. A prompt that must fit any model is counted
conservatively instead, the way small-vocabulary tokenizers split text: a run of ASCII letters
takes one token per 3 letters (rounded up), and every other byte but a space or a tab (a digit,
punctuation, a newline, each byte of a non-ASCII character) takes one. Plain characters / 3 is
not conservative: SmolLM2's tokenizer reads the order tools' JSON (ids, dates, prices) at 2.4
characters a token, a judge prompt of 9,882 characters as 4,088 tokens where characters / 3 says
3,294; this estimate says 6,511 (English prose: 1.9 times the real count, Spanish and German 1.1,
JSON 1.5, a list of bare order and tracking ids 0.9). An estimate a little high condenses a
little early; one too low gets the prompt refused.
Each distinct text is counted once (transcripts are re-sent every turn).
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Sequence

from parley.core.records import ChatMessage, ToolSpec

MESSAGE_OVERHEAD_TOKENS = 8
"""A chat template's role markers and separators around one message (ChatML spends about 5)."""

_LETTERS = string.ascii_letters.encode()
_SHAPE = bytes(ord("a") if b in _LETTERS else ord(" ") for b in range(256))  # letters -> a, the rest -> space
_LETTERS_AND_BLANKS = _LETTERS + b" \t"


@functools.lru_cache(maxsize=4096)
def _count(text: str) -> int:
    data = text.encode()
    shape = data.translate(_SHAPE)
    words = shape.count(b" a") + (shape[:1] == b"a")
    # ceil(len / 3) per word is at most (len + 2) // 3; summed over the words, at most this
    return (shape.count(b"a") + 2 * words) // 3 + len(data.translate(None, _LETTERS_AND_BLANKS))


def estimate_tokens(text: str | None) -> int:
    """Tokens `text` takes, at most (see the module doc)."""
    return _count(text) if text else 0


def estimate_message(message: ChatMessage) -> int:
    """Tokens one message takes in a prompt: its text, its tool calls, the template around it."""
    tokens = MESSAGE_OVERHEAD_TOKENS + estimate_tokens(message.content)
    for call in message.tool_calls:
        tokens += MESSAGE_OVERHEAD_TOKENS + estimate_tokens(call.name) + estimate_tokens(call.arguments)
    if message.role == "tool":
        tokens += estimate_tokens(message.name) + estimate_tokens(message.tool_call_id)
    return tokens


def estimate_messages(messages: Sequence[ChatMessage]) -> int:
    """Tokens a list of messages takes in a prompt."""
    return sum(estimate_message(m) for m in messages)


def estimate_tool_specs(tools: Sequence[ToolSpec] | None) -> int:
    """Tokens the tools offered with a prompt take (servers write their schemas into it)."""
    if not tools:
        return 0
    return sum(MESSAGE_OVERHEAD_TOKENS + estimate_tokens(json.dumps(t.to_openai(), separators=(",", ":"))) for t in tools)

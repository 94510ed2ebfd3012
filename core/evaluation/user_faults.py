"""Faults of the simulated user that can be told without a model, so they are not blamed on the bot.

A third of the failures peers see are the simulator's doing. Each detector reads the finished
transcript (and the spec's goals) and returns the faults it finds, each with the user turn it
is about and a reason a person can check:
- `empty_turn`: a user message that is empty or only whitespace;
- `repeated_message`: the same user message three times in a row (compared without case,
  punctuation or extra spaces);
- `speaks_as_assistant`: a user message that talks as the bot does (offers help, says it is the
  assistant or an AI, asks "is there anything else I can help you with");
- `stopped_after_question`: the user ended the conversation right after the bot asked it a
  question or for a confirmation, without answering it (a closing "anything else?" does not
  count: a goodbye answers it);
- `no_goal_stated`: the user never stated any of its goals (by its record's id, else key words);
- `attack_not_pressed`: an attacker never pressed its objective (parley.core.evaluation.attack_checks).
Playbooks are scripted, not simulated: nothing is detected for them. A fault the bot's own
replies caused (it said nothing, answered with its fallback, said the same again, asked for the
id it had been given) is detected, and excused with why (parley.core.evaluation.fault_blame):
the customer is blamed only when it misbehaved first, on its own. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from parley.core.evaluation.attack_checks import attack_not_pressed
from parley.core.evaluation.fault_blame import excuse_bot_caused
from parley.core.reading import Goal, asks_for_id, goal_mentioned, heuristic_view, is_confirmation_question, parse_goals, reading_world
from parley.core.records import ChatMessage, Conversation, ConversationSpec, UserFault
from parley.core.world import WorldDefinition

REPEATS = 3
"""How many identical user messages in a row make a fault."""
SCRIPTED_USERS = frozenset({"playbook", "scripted"})
"""Users that say what they were told to (not simulators): nothing is detected for them."""

_NORMAL = re.compile(r"[^\w]+", re.UNICODE)
_AS_ASSISTANT = re.compile(
    r"\b(how (can|may|might) i (help|assist) you"
    r"|(is there )?anything else (that )?i can (help|assist|do for) you"
    r"|what can i (help|do for) you( with)?"
    r"|i('| a)m (the|an|your) (order |virtual |ai |customer[- ]service |support )?(assistant|agent|bot|chatbot)"
    r"|i am (a|an) (ai|bot|chatbot|language model|virtual assistant)"
    r"|as an ai\b"
    r"|(thank you|thanks) for contacting us"
    r"|i('| wi)ll (cancel|track|look up) (that|the|your) order for you)",
    re.IGNORECASE,
)
_COURTESY_QUESTION = re.compile(
    r"\b(anything else|something else|what (else )?can i (help|do)|how (can|may) i (help|assist)|help you with)\b[^?]*\?\s*$",
    re.IGNORECASE,
)
_FAREWELL = re.compile(r"\b(bye|goodbye|that'?s all|that is all|nothing else|thanks|thank you|have a (nice|good|great) day)\b", re.I)
_ANSWER_WORDS = re.compile(
    r"\b(yes|yeah|yep|ok|okay|sure|confirm\w*|go ahead|no|nope|don'?t|not|wait|sí|si|oui|non|ja|nein|sim|não|nao)\b", re.I
)
_ORDER_REFERENCE = re.compile(r"(?i)\b[a-z]{2,5}[-_ ]?\d{3,10}\b|#\d{3,10}\b|\b\d{4,6}\b")


def _normal(text: str) -> str:
    return " ".join(_NORMAL.sub(" ", text.casefold()).split())


def _user_turns(messages: Sequence[ChatMessage]) -> list[tuple[int, int, str]]:
    """(turn number from 1, position in the transcript, text) of each user message."""
    out: list[tuple[int, int, str]] = []
    for position, m in enumerate(messages):
        if m.role == "user":
            out.append((len(out) + 1, position, m.content or ""))
    return out


def empty_turns(messages: Sequence[ChatMessage]) -> list[UserFault]:
    return [
        UserFault(kind="empty_turn", turn=turn, reason=f"user message {turn} is empty" + (" (only whitespace)" if text else ""))
        for turn, _, text in _user_turns(messages)
        if not text.strip()
    ]


def repeated_messages(messages: Sequence[ChatMessage], repeats: int = REPEATS) -> list[UserFault]:
    faults = []
    run, previous = 0, None
    for turn, _, text in _user_turns(messages):
        key = _normal(text)
        run = run + 1 if key and key == previous else 1
        previous = key
        if run == repeats:
            faults.append(
                UserFault(
                    kind="repeated_message",
                    turn=turn,
                    reason=f"user messages {turn - repeats + 1}-{turn} say the same thing: {_clip(text)!r}",
                )
            )
    return faults


def speaks_as_assistant(messages: Sequence[ChatMessage]) -> list[UserFault]:
    faults = []
    for turn, _, text in _user_turns(messages):
        match = _AS_ASSISTANT.search(text)
        if match:
            faults.append(
                UserFault(
                    kind="speaks_as_assistant",
                    turn=turn,
                    reason=f"user message {turn} talks as the assistant: {match.group(0)!r}",
                )
            )
    return faults


_QUESTION = re.compile(r"[^.!?\n]*\?")


_TO_YOU = re.compile(r"\b(you|your|yours)\b", re.IGNORECASE)


def _echoes(text: str, said: str) -> bool:
    """The bot's message is mostly the customer's own message repeated."""
    bot, customer = _normal(text), _normal(said)
    return bool(customer) and customer in bot and len(customer) >= 0.6 * len(bot)


def asks_the_user(text: str | None, said: str | None = None, world: WorldDefinition | None = None) -> bool:
    """Does a bot message ask the customer something that needs an answer (a confirmation, a
    record's id, another question put to them), rather than a closing "anything else?"? A bot
    that only repeats what the customer `said` (an echo) asks nothing. `world`: the
    conversation's (None: the default world), whose actions a bot asks to confirm."""
    if not text:
        return False
    text = heuristic_view(text)
    if said and _echoes(text, said):
        return False
    if is_confirmation_question(text, world):
        return True
    questions = [q.strip() for q in _QUESTION.findall(text)]
    if not questions:
        return False
    last = questions[-1]
    if asks_for_id(last, world):
        return True
    return bool(_TO_YOU.search(last)) and not _COURTESY_QUESTION.search(last)


def stopped_after_question(conversation: Conversation, world: WorldDefinition | None = None) -> list[UserFault]:
    """The user ended the conversation (user_stop) right after a question from the bot: with no
    message at all, or with a goodbye that does not answer it."""
    if conversation.stop_reason != "user_stop":
        return []
    seen = [m for m in conversation.messages if m.role == "user" or (m.role == "assistant" and m.content)]
    if not seen:
        return []
    turns = sum(1 for m in conversation.messages if m.role == "user")
    last = seen[-1]
    if last.role == "assistant":
        asked = last.content or ""
        before = next((m.content for m in reversed(seen[:-1]) if m.role == "user"), None)
        if asks_the_user(asked, before, world):
            return [
                UserFault(
                    kind="stopped_after_question",
                    turn=None,
                    reason=f"the user stopped without answering the bot's question: {_clip(asked)!r}",
                )
            ]
        return []
    said = last.content or ""
    question = next((i for i in range(len(seen) - 2, -1, -1) if seen[i].role == "assistant"), None)
    if question is None:
        return []
    earlier = next((m.content for m in reversed(seen[:question]) if m.role == "user"), None)
    asked = seen[question].content or ""
    if not asks_the_user(asked, earlier, world):
        return []
    if _FAREWELL.search(said) and not _ANSWER_WORDS.search(said) and not _ORDER_REFERENCE.search(said):
        return [
            UserFault(
                kind="stopped_after_question",
                turn=turns,
                reason=f"the user said goodbye ({_clip(said)!r}) instead of answering: {_clip(asked)!r}",
            )
        ]
    return []


_PARSED: dict[tuple[tuple[str, ...], int], tuple[WorldDefinition | None, tuple[Goal, ...]]] = {}
_PARSED_KEPT = 1024


def _parsed_goals(texts: tuple[str, ...], world: WorldDefinition | None) -> tuple[Goal, ...]:
    """A spec's goals parsed once per world, not once per conversation (a batch's trials share them)."""
    key = (texts, id(world))
    kept = _PARSED.get(key)
    if kept is not None and kept[0] is world:
        return kept[1]
    if len(_PARSED) >= _PARSED_KEPT:
        _PARSED.clear()
    goals = tuple(parse_goals(texts, world))
    _PARSED[key] = (world, goals)
    return goals


def no_goal_stated(conversation: Conversation, spec: ConversationSpec, world: WorldDefinition | None = None) -> list[UserFault]:
    """None of the spec's goals is mentioned in any user message (its record's id, else its words)."""
    if not spec.goals or spec.attack is not None:  # an attacker's objective is judged by attack_not_pressed
        return []
    world = reading_world(world)
    goals = _parsed_goals(tuple(spec.goals), world)
    said = [m.content for m in conversation.messages if m.role == "user" and m.content and m.content.strip()]
    if not said:
        return []  # nothing said at all: empty_turn (or the run broke) says it better
    if any(goal_mentioned(goal, text, world) for goal in goals for text in said):
        return []
    listed = "; ".join(spec.goals[:3]) + (" ..." if len(spec.goals) > 3 else "")
    return [UserFault(kind="no_goal_stated", turn=None, reason=f"the user never stated any of its goals ({_clip(listed)})")]


def detect_user_faults(conversation: Conversation, spec: ConversationSpec, world: WorldDefinition | None = None) -> list[UserFault]:
    """Every fault of the simulated user in `conversation` on its `world` (None: the default
    world; empty for a scripted user), those the bot caused excused with why."""
    if spec.kind == "playbook" or conversation.user_simulator in SCRIPTED_USERS:
        return []
    messages = conversation.messages
    faults = [
        *empty_turns(messages),
        *repeated_messages(messages),
        *speaks_as_assistant(messages),
        *stopped_after_question(conversation, world),
        *no_goal_stated(conversation, spec, world),
        *attack_not_pressed(conversation, spec, world),
    ]
    return excuse_bot_caused(faults, conversation, spec, REPEATS, world)


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

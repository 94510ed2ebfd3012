"""What customer-service messages ask for, as the simulated customers and the checks both read it:
words of asking for each action a world's tools may do (cancel, refund, change, send), of
tracking, listing, the policy; a bot asking to confirm an action; a bot asking for a record's id or
for a credential of the customer's; a customer saying yes, or taking a request back.

What a bot asks to confirm is read for the actions the conversation's world declares
(`WorldDefinition.actions`): on the order world, a cancellation, as it always was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from parley.core.reading.bounded_view import heuristic_view
from parley.core.reading.record_names import ids_in, reading_world, record_noun
from parley.core.world import WorldDefinition

__all__ = [
    "ACTION_WORDS",
    "CANCEL_WORDS",
    "CONFIRMATION_QUESTION",
    "DAYS_OR_POLICY",
    "LIST_WORDS",
    "POLICY_WORDS",
    "STATUS_WORDS",
    "TRACK_WORDS",
    "asked_credentials",
    "asked_table",
    "asks_for",
    "asks_for_id",
    "confirmation_question",
    "confirmation_record",
    "is_affirmative",
    "is_confirmation_question",
    "is_refusal",
    "request_words",
    "world_actions",
]

CANCEL_WORDS = re.compile(r"\b(cancel\w*|annul\w*|stornier\w*|revoke|call off)\b", re.I)  # German: stornieren
REFUND_WORDS = re.compile(
    r"\b(refund\w*|reimburs\w*|money back|return\w*|send (it|them) back|reembols\w*|devol\w*|rimbors\w*|restitu\w*|rembours\w*"
    r"|r[üu]ckerstatt\w*|zur[üu]ck\w*)\b",
    re.I,
)
CHANGE_WORDS = re.compile(
    r"\b(chang\w*|exchang\w*|swap\w*|switch\w*|updat\w*|modif\w*|edit\w*|replac\w*|cambi\w*|actualiz\w*|sostitu\w*|[ée]chang\w*"
    r"|troc\w*|alter\w*|umtausch\w*|[äa]nder\w*)\b",
    re.I,
)
SEND_WORDS = re.compile(r"\b(send|resend|e-?mail|mail|ship|envi\w*|mand\w*|invi\w*|envoy\w*|schick\w*|send\w*)\b", re.I)
ACTION_WORDS: dict[str, re.Pattern[str]] = {"cancel": CANCEL_WORDS, "refund": REFUND_WORDS, "change": CHANGE_WORDS, "send": SEND_WORDS}
"""Each action a world's tool may do (parley.core.world.ACTIONS) -> the words a customer asks for it with."""

POLICY_WORDS = re.compile(r"\b(polic(y|ies)|rules?|how (many|long)|deadline|window|eligib\w*|allowed)\b", re.I)
TRACK_WORDS = re.compile(r"\b(track\w*|where|shipp\w*|ship(ment)?|deliver\w*|arriv\w*|eta|package|parcel|carrier|transit)\b", re.I)
LIST_WORDS = re.compile(r"\b(list\w*|all (of )?my orders|my orders|order history|orders)\b", re.I)
STATUS_WORDS = re.compile(r"\b(status|details?|info\w*|contents?|items?|total|cost|price|bought|what'?s in)\b", re.I)
DAYS_OR_POLICY = re.compile(r"\b\d+\s*-?\s*days?\b|\bpolicy\b|\bwithin\b", re.I)

# The verbs of a bot's confirmation question for each action ("shall I cancel", "do you want me to
# start the return", "please confirm the exchange").
_ASKED_ACTION: dict[str, str] = {
    "cancel": r"cancel\w*",
    "refund": r"refund\w*|return\w*|reimburs\w*",
    "change": r"exchang\w*|chang\w*|swap\w*|updat\w*|modif\w*|replac\w*",
    "send": r"send\w*|resend\w*|e-?mail\w*",
}


@cache
def confirmation_question(actions: tuple[str, ...] = ("cancel",)) -> re.Pattern[str]:
    """A bot asking the customer to confirm one of `actions` (an action without words: any of them)."""
    verbs = "|".join(_ASKED_ACTION[a] for a in actions if a in _ASKED_ACTION) or "|".join(_ASKED_ACTION.values())
    return re.compile(
        r"(\b(shall|should|do you want|would you like|want me to|can you confirm|could you confirm|please confirm|"
        rf"are you sure)\b[^.!?]*\b(?:{verbs})|\breply\s+[\"'\u201c]?yes\b|\bconfirm (the|this|that|your) (?:{verbs})"
        # the action said in the sentence before: "I can start a return of ... Shall I go ahead?"
        r"|\b(shall|should|can|may) (i|we) (go ahead|proceed)\b|\b(do you want|would you like) (me|us) to (go ahead|proceed)\b"
        r"|\bok(ay)? to proceed\b)",
        re.I,
    )


CONFIRMATION_QUESTION = confirmation_question(("cancel",))
"""A bot asking to confirm a cancellation (the order world's only action)."""


def world_actions(world: WorldDefinition | None = None) -> tuple[str, ...]:
    """The actions the world's state-changing tools do, in a stable order (the default world's when None)."""
    world = reading_world(world)
    return tuple(sorted(set(world.actions.values()))) if world is not None else ()


def request_words(action: str | None) -> re.Pattern[str] | None:
    """The words a customer asks for `action` with (None: the reading has none for it)."""
    return ACTION_WORDS.get(action or "")


def is_confirmation_question(text: str | None, world: WorldDefinition | None = None) -> bool:
    """Does the bot ask the customer to confirm an action of the world's tools?"""
    return bool(text) and confirmation_question(world_actions(world)).search(heuristic_view(text or "")) is not None


def confirmation_record(text: str | None, world: WorldDefinition | None = None) -> str | None:
    """The record the bot asks to confirm acting on (the id in the question, else in the reply)."""
    if not text:
        return None
    text = heuristic_view(text)
    match = confirmation_question(world_actions(world)).search(text)
    if match:
        start = max(text.rfind(".", 0, match.start()), text.rfind("\n", 0, match.start()), 0)
        end = text.find("?", match.end())
        ids = ids_in(text[start : end if end >= 0 else len(text)], world)
        if ids:
            return ids[-1]
    ids = ids_in(text, world)
    return ids[-1] if ids else None


def _record_nouns(world: WorldDefinition | None) -> dict[str, str]:
    """How a record of each of the world's tables with ids is named, by table ("order" of "orders")."""
    world = reading_world(world)
    if world is None:
        return {}
    nouns = {}
    for table in world.tables_with_ids():
        if table.name == world.identity.customers:
            continue
        nouns[table.name] = record_noun(table.name)
    return nouns


@cache
def _asks_for_id(nouns: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in nouns) or r"(?!)"
    return re.compile(
        rf"\b(which (?:{alternatives})|what (?:{alternatives})|(?:{alternatives}) (id|number)|give me the (?:{alternatives})"
        rf"|provide the (?:{alternatives}))\b[^.!]*\?|\b(?:{alternatives}) id\b",
        re.I,
    )


def asks_for_id(text: str | None, world: WorldDefinition | None = None) -> bool:
    """Does a bot message ask which record, or for its id ("Which order?", "the order id")?"""
    return bool(text) and _asks_for_id(tuple(_record_nouns(world).values())).search(heuristic_view(text or "")) is not None


def asked_table(text: str | None, world: WorldDefinition | None = None) -> str | None:
    """The table whose record a bot message asks for ("Which order is it about?": orders), or None."""
    if not text:
        return None
    seen = heuristic_view(text)
    for table, noun in _record_nouns(world).items():
        if _asks_for_id((noun,)).search(seen):
            return table
    return None


_ASKING = re.compile(r"\?|\b(please|kindly)\s+(provide|give|share|tell|send|confirm|enter|type)\b|\bcan i (have|get)\b", re.I)
_COLUMN_WORDS: dict[str, str] = {
    "email": r"e-?mail(?:\s+address)?",
    "zip": r"zip(?:\s*code)?|postal\s+code|postcode",
    "postcode": r"zip(?:\s*code)?|postal\s+code|postcode",
    "phone": r"(?:tele)?phone(?:\s+number)?|mobile(?:\s+number)?",
}


def _column_words(column: str) -> str:
    words = [w for w in column.lower().split("_") if w]
    last = words[-1] if words else column
    whole = r"\s+".join(re.escape(w) for w in words)
    spoken = _COLUMN_WORDS.get(last)
    if spoken and len(words) == 1:
        return spoken
    if last == "name":  # "first name", "last name", or a bare "your name" / "full name" asking for them all
        return rf"{whole}|(?<!first\s)(?<!last\s)\b(?:full\s+)?name\b"
    return whole


def asked_credentials(text: str | None, columns: Sequence[str]) -> list[str]:
    """The columns of the customer's own record (`columns`: the credentials a world declares, e.g.
    email, first_name, zip) a bot message asks for, in the order given; none when it asks nothing."""
    if not text:
        return []
    text = heuristic_view(text)
    if not _ASKING.search(text):
        return []
    return [c for c in columns if re.search(rf"\b(?:{_column_words(c)})\b", text, re.I)]


_AFFIRMATIVE = re.compile(
    r"^\W*(yes|yeah|yep|yup|ya|sure|ok(ay)?|confirm(ed)?|correct|absolutely|affirmative|please do|go ahead|do it|"
    r"s[iíì]|claro|vale|de acuerdo|adelante|confirmo"
    # the offline customer's other languages: Italian, Portuguese, French, German
    r"|certo|va bene|confermo|sim|com certeza|oui|d'accord|bien s[ûu]r|je confirme|ja|jawohl|genau|einverstanden)\b",
    re.I,
)
_REFUSAL = re.compile(
    r"^\W*(no|nope|nah|wait|stop|hold on|non|n[ãa]o|nein)\b"
    r"|\b(don'?t|do not|not|never) (want (it |them )?(to )?|need to |)cancel\w*"
    # "I changed my mind" takes a cancellation back; "I changed my mind again: cancel it after all" asks for it
    r"|\bkeep (it|them|the order|my order|this order|that order)\b|\bchanged? (my|your) mind\b(?! again)(?!.*\bafter all\b)"
    r"|\bmejor no\b|\bno (lo|la) cancel\w*|\bquiero conservar\w*"
    # the offline customer's other languages: Italian, Portuguese, French, German
    r"|\bnon (lo |la )?cancellat\w*|\bvoglio tenerl\w*"
    r"|\bn[ãa]o o cancel\w*|\bficar com (ele|o pedido)\b"
    r"|\bne l'annulez pas\b|\bje (la |le )?garde\b"
    r"|\bnicht stornier\w*|\bstornieren sie sie nicht\b|\bich behalte\b",
    re.I,
)


def is_affirmative(text: str | None) -> bool:
    """Does a customer's reply start by saying yes (English, Spanish, Italian, Portuguese, French
    and German; the offline customer's yes carries an "ok" in every language)?"""
    return bool(text) and _AFFIRMATIVE.search(text or "") is not None and not is_refusal(text)


def is_refusal(text: str | None) -> bool:
    """Does a customer's reply refuse or take back a request: it starts with no (or wait, stop),
    says not to cancel, to keep the order, or that they changed their mind? English and Spanish,
    and the offline customer's words for it in Italian, Portuguese, French and German."""
    return bool(text) and _REFUSAL.search(text or "") is not None


def asks_for(text: str | None, actions: Iterable[str]) -> bool:
    """Does a customer's message ask for one of `actions` in words (a request word of it)?"""
    return bool(text) and any((words := request_words(a)) is not None and words.search(text or "") for a in actions)

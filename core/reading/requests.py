"""What customer-service messages ask for, as the simulated customers and the checks both read
it: words of cancelling, tracking, listing, the policy; a bot asking to confirm a cancellation;
a bot asking for the order id."""

from __future__ import annotations

import re

from parley.core.reading.bounded_view import heuristic_view
from parley.core.reading.order_ids import ids_in

__all__ = [
    "ASKS_FOR_ORDER_ID",
    "CANCEL_WORDS",
    "CONFIRMATION_QUESTION",
    "DAYS_OR_POLICY",
    "LIST_WORDS",
    "POLICY_WORDS",
    "STATUS_WORDS",
    "TRACK_WORDS",
    "confirmation_order_id",
    "is_affirmative",
    "is_confirmation_question",
    "is_refusal",
]

CANCEL_WORDS = re.compile(r"\b(cancel\w*|annul\w*|stornier\w*|revoke|call off)\b", re.I)  # German: stornieren
POLICY_WORDS = re.compile(r"\b(polic(y|ies)|rules?|how (many|long)|deadline|window|eligib\w*|allowed)\b", re.I)
TRACK_WORDS = re.compile(r"\b(track\w*|where|shipp\w*|ship(ment)?|deliver\w*|arriv\w*|eta|package|parcel|carrier|transit)\b", re.I)
LIST_WORDS = re.compile(r"\b(list\w*|all (of )?my orders|my orders|order history|orders)\b", re.I)
STATUS_WORDS = re.compile(r"\b(status|details?|info\w*|contents?|items?|total|cost|price|bought|what'?s in)\b", re.I)
DAYS_OR_POLICY = re.compile(r"\b\d+\s*-?\s*days?\b|\bpolicy\b|\bwithin\b", re.I)
CONFIRMATION_QUESTION = re.compile(
    r"(\b(shall|should|do you want|would you like|want me to|can you confirm|could you confirm|please confirm|"
    r"are you sure)\b[^.!?]*\bcancel\w*|\breply\s+[\"'\u201c]?yes\b|\bconfirm (the|this|that|your) cancel\w*)",
    re.I,
)
ASKS_FOR_ORDER_ID = re.compile(
    r"\b(which order|what order|order (id|number)|give me the order|provide the order)\b[^.!]*\?|\border id\b", re.I
)


def is_confirmation_question(text: str | None) -> bool:
    """Does the bot ask the user to confirm a cancellation?"""
    return bool(text) and CONFIRMATION_QUESTION.search(heuristic_view(text or "")) is not None


def confirmation_order_id(text: str | None) -> str | None:
    """The order the bot asks to confirm cancelling (the id in the question, else in the reply)."""
    if not text:
        return None
    text = heuristic_view(text)
    match = CONFIRMATION_QUESTION.search(text)
    if match:
        start = max(text.rfind(".", 0, match.start()), text.rfind("\n", 0, match.start()), 0)
        end = text.find("?", match.end())
        ids = ids_in(text[start : end if end >= 0 else len(text)])
        if ids:
            return ids[-1]
    ids = ids_in(text)
    return ids[-1] if ids else None


_AFFIRMATIVE = re.compile(
    r"^\W*(yes|yeah|yep|yup|ya|sure|ok(ay)?|confirm(ed)?|correct|absolutely|affirmative|please do|go ahead|do it|"
    r"s[ií]|claro|vale|de acuerdo|adelante|confirmo)\b",
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
    """Does a customer's reply start by saying yes (in English or Spanish; the offline customer's
    yes carries an "ok" in every language)?"""
    return bool(text) and _AFFIRMATIVE.search(text or "") is not None and not is_refusal(text)


def is_refusal(text: str | None) -> bool:
    """Does a customer's reply refuse or take back a cancellation: it starts with no (or wait,
    stop), says not to cancel, to keep the order, or that they changed their mind? English and
    Spanish, and the offline customer's words for it in Italian, Portuguese, French and German."""
    return bool(text) and _REFUSAL.search(text or "") is not None

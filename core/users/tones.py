"""How a personality sounds when the offline user writes: its tone, read from the context lines.

A profile's personality (`personalities/terse-user.yml`, a `context:` line such as "you write as
few words as possible") changes what the LLM user writes through its prompt. The offline user
has no model, so it reads the tone from the same lines (`tone_of`, keywords, first match in
TONES order) and says its English phrases in that tone: its own sentences per intent (the
goal's order id kept exactly) and, for some tones, a lead-in. Which sentence is drawn from the
conversation's seeded generators, so the same seed gives the same words, and another seed
other ones. Every sentence keeps the words the offline bot keys on (cancel, track / where,
orders, yes / ok, bye), so a tone never changes what a message means. Other languages keep
their phrasebook: the tones are English.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Phrases = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Tone:
    """A way of writing: its keywords (in context lines), its sentences per intent (replacing
    the phrasebook's), and lead-ins put before a goal message."""

    name: str
    keywords: tuple[str, ...]
    phrases: Phrases = field(default_factory=dict)
    leads: tuple[str, ...] = ()


_TERSE = Tone(
    "terse",
    ("terse", "as few words", "few words as possible", "one verb"),
    {
        "greeting": ("",),
        "cancel": ("cancel {order_id}", "Cancel {order_id}.", "{order_id}: cancel it"),
        "track": ("where is {order_id}?", "track {order_id}", "{order_id} tracking?"),
        "list": ("my orders?", "list my orders", "orders?"),
        "status": ("{order_id} details?", "status of {order_id}?"),
        "policy": ("cancel policy?", "how many days to cancel?"),
        "ask": ("{goal}?",),
        "want": ("{goal}.",),
        "do": ("{Goal}.",),
        "say": ("{Goal}.",),
        "yes": ("yes", "ok, yes", "yes."),
        "no": ("no.", "no, leave it"),
        "hesitate": ("wait. no.", "hold on. not yet."),
        "rerequest": ("cancel {order_id} after all", "ok, cancel {order_id}"),
        "give_id": ("{order_id}", "{order_id}."),
        "no_id": ("don't have it",),
        "farewell": ("thx, bye", "ok bye", "thanks. bye"),
        "topic_change": ("forget that.",),
        "rephrase_lead": ("I mean:", "again:"),
        "change_mind_lead": ("nvm.",),
    },
)
_IMPATIENT = Tone(
    "impatient",
    ("impatient", "in a hurry", "hurry", "no time"),
    {
        "greeting": ("",),
        "cancel": ("Cancel {order_id} now, please. I'm in a hurry.", "Quick: cancel {order_id}.", "Just cancel {order_id}, fast."),
        "track": ("Where is {order_id}? Quickly, please.", "Just tell me where {order_id} is.", "Track {order_id}, I'm in a rush."),
        "list": ("Just list my orders.", "List my orders, quickly."),
        "status": ("Details of {order_id}, quickly.", "Status of {order_id}? I'm in a hurry."),
        "policy": ("How many days do I have to cancel? Be quick.",),
        "ask": ("Quick question: {goal}?",),
        "want": ("I want {goal}. Quickly.",),
        "do": ("Just {goal}.",),
        "yes": ("Yes. Do it.", "Yes, go ahead, quickly."),
        "give_id": ("It's {order_id}.", "{order_id}. Hurry, please."),
        "farewell": ("Fine. Bye.", "Good. Bye."),
    },
)
_RUDE = Tone(
    "rude",
    ("rude", "rudely"),
    {
        "greeting": ("",),
        "cancel": ("Cancel {order_id}. Now.", "Just cancel {order_id} already."),
        "track": ("Where is {order_id}? Answer me.", "Track {order_id}. Now."),
        "list": ("List my orders. Now.",),
        "status": ("What's going on with {order_id}? Answer me.",),
        "policy": ("What's your cancellation policy? Spit it out.",),
        "yes": ("Yes, obviously.", "Yes. Get on with it."),
        "give_id": ("{order_id}. Obviously.",),
        "farewell": ("Whatever. Bye.",),
    },
)
_ANGRY = Tone(
    "angry",
    ("angry", "upset", "frustrat", "furious", "annoyed"),
    {
        "cancel": ("This is really frustrating. Please cancel {order_id}.", "I'm upset about this. Cancel {order_id}, please."),
        "track": ("I'm upset: where is my order {order_id}?", "This is frustrating. Where is {order_id}?"),
        "list": ("I need to see my orders. This has been frustrating.",),
        "yes": ("Yes. Finally.", "Yes, go ahead."),
        "farewell": ("Thanks, I guess. Bye.", "Fine, thanks. Bye."),
    },
)
_FORMAL = Tone(
    "formal",
    ("formal", "formally"),
    {
        "greeting": ("Good day,", "Good afternoon,"),
        "cancel": (
            "I would like to request the cancellation of order {order_id}, please.",
            "Would you kindly cancel order {order_id}?",
        ),
        "track": (
            "Could you please tell me where order {order_id} is at present?",
            "I would appreciate the tracking details for order {order_id}.",
        ),
        "list": ("Could you kindly list all of my orders?", "I would like to see a list of my orders, please."),
        "status": ("Could you please provide the details of order {order_id}?",),
        "policy": ("Could you please explain your cancellation policy?",),
        "ask": ("Could you kindly tell me {goal}?",),
        "want": ("I would like {goal}, please.",),
        "do": ("Would you kindly {goal}?",),
        "yes": ("Yes, please proceed.", "Yes, I confirm. Thank you."),
        "no": ("No, please do not cancel that order.",),
        "give_id": ("The order number is {order_id}.",),
        "farewell": ("Thank you very much for your assistance. Goodbye.", "Thank you kindly. Goodbye."),
    },
)
_CASUAL = Tone(
    "casual",
    ("casual", "casually", "lower case", "lowercase", "slang"),
    {
        "greeting": ("hey,", "hey there,"),
        "cancel": ("can u cancel {order_id}?", "cancel {order_id} pls"),
        "track": ("where's my order {order_id}?", "can u track {order_id}?"),
        "list": ("can i see my orders? thx", "list my orders pls"),
        "status": ("what's the deal with {order_id}?",),
        "yes": ("yep, go for it", "ok cool, yes"),
        "no": ("nah, leave it",),
        "give_id": ("it's {order_id}",),
        "farewell": ("cool, thx! bye", "thx, bye!"),
    },
)
_POLITE = Tone(
    "polite",
    ("polite and patient", "apologise", "apologize", "older customer", "elderly"),
    {
        "cancel": (
            "I'm so sorry to bother you, but could you please cancel order {order_id}?",
            "I do apologise for the trouble. Would you be so kind as to cancel my order {order_id}?",
        ),
        "track": ("Sorry to trouble you, but could you tell me where my order {order_id} is?",),
        "list": ("I'm sorry to bother you, could you list my orders, please?",),
        "yes": ("Yes, please, thank you kindly.", "Yes, please go ahead. Thank you."),
        "farewell": ("Thank you so much for your patience. Goodbye!",),
    },
)
_CHATTY = Tone(
    "chatty",
    ("talkative", "chatty", "small details"),
    leads=(
        "Hi! I've just come back from walking the dog, lovely weather today.",
        "Hello! I'm having my morning coffee while I sort a few things out.",
        "Hi there! Busy week here, my sister is visiting.",
    ),
)
_CONFUSED = Tone(
    "confused",
    ("confused", "not very confident", "unsure of the right words"),
    leads=("Sorry, I'm not sure I'm doing this right.", "Hello, I'm not very good with these things."),
)
_SKEPTICAL = Tone(
    "skeptical",
    ("do not trust", "double-check", "skeptic", "sceptic"),
    leads=("I'll be honest, I'm not sure an automated assistant can sort this out.",),
)

TONES: tuple[Tone, ...] = (_RUDE, _TERSE, _IMPATIENT, _ANGRY, _FORMAL, _CASUAL, _POLITE, _CHATTY, _CONFUSED, _SKEPTICAL)
"""In the order they are looked for: the first whose keyword a context line has wins."""
NEUTRAL = Tone("neutral", ())


def tone_of(lines: Iterable[str]) -> Tone:
    """The tone the context lines (personality lines included) ask for; NEUTRAL when none does."""
    text = " ".join(lines).lower()
    if not text:
        return NEUTRAL
    for tone in TONES:
        if any(keyword in text for keyword in tone.keywords):
            return tone
    return NEUTRAL

"""Interaction styles: how a simulated customer talks, for the offline user and the LLM user.

The offline user applies them to its own text (seeded, deterministic):
- `make spelling mistakes`: typos in ordinary words (swapped, dropped, doubled letters, a
  neighbouring key). Record ids are never touched; keywords a bot keys on ("cancel", "track",
  "orders"...) only get misspellings the world's offline bot is known to read (the world's
  `misspellings` hook: the order world's bot reads "cancle", "trak", "ordres"; none elsewhere);
  a typo never produces a word that changes the meaning (no, stop, wait, bye...).
- `long phrases`: a wordy opening and closing around the request (filler that carries no
  keyword, so it cannot change what the message asks).
- `all questions`: every goal in the first message; `single question`: one goal per message.
  With both drawn, the first message asks everything and the follow-ups go one at a time.
- `change your mind`: see parley.core.users.offline_user (declines the first cancellation confirmation, then
  asks again; without a cancellation goal, takes back a first request before asking).
- `change language: [..]`: one goal message, chosen with the seed, in one of the listed
  languages (parley.core.users.phrasebook); the others stay in the user's language.
- `default`: plain phrasing.
The LLM user gets each style as one instruction in its system prompt (`style_instruction`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from parley.core.records import InteractionStyle
from parley.core.users.phrasebook import Phrasebook

# Words a customer-service bot (the offline one included) keys on: never given a random typo.
KEYWORDS = frozenset(
    """
    cancel cancelled cancelling cancellation track tracking trace where shipping shipped ship
    shipment delivery deliver arrive arriving arrival package parcel carrier transit list orders
    order history status details detail info information about contents items total show check
    look policy policies rules rule days week weeks long deadline window limit allowed eligible
    period time late yes yeah sure okay confirm confirmed correct absolutely please thanks thank
    hello goodbye that this same there their what when which with have your
    cancelar cancele cancelem cancellare cancellate pedido pedidos ordine ordini commande commandes
    bestellung bestellungen stornieren
    """.split()
)
# A typo must not land on a word that means something to a bot.
_MEANINGFUL = frozenset(
    """
    no nope nah not dont don't never wait stop n bye goodbye cya ciao yes y yeah yep yup ya yea sure
    ok okay confirm correct list orders order track where ship thanks thank hi hello hey
    """.split()
)
_NEIGHBOURS = {
    "a": "qwsz",
    "b": "vghn",
    "c": "xdfv",
    "d": "serfcx",
    "e": "wsdr",
    "f": "drtgvc",
    "g": "ftyhbv",
    "h": "gyujnb",
    "i": "ujko",
    "j": "huikmn",
    "k": "jiolm",
    "l": "kop",
    "m": "njk",
    "n": "bhjm",
    "o": "iklp",
    "p": "ol",
    "q": "wa",
    "r": "edft",
    "s": "awedxz",
    "t": "rfgy",
    "u": "yhji",
    "v": "cfgb",
    "w": "qase",
    "x": "zsdc",
    "y": "tghu",
    "z": "asx",
}
# Record ids in the forms bots read them; never split by the tokenizer below.
_ID_SPAN = re.compile(r"(?i)\b[a-z]{2,5}[-_ ]?\d{3,10}\b|#\d{3,10}\b")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)

TYPO_RATE = 0.3


def _case_like(original: str, new: str) -> str:
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def typo(word: str, rng: random.Random) -> str:
    """One random typo in `word` (4+ letters): swap, drop, double or hit a neighbouring key."""
    lower = word.lower()
    kind = rng.randrange(4)
    pos = rng.randrange(1, len(word) - 1)  # keep the first and last letters: still readable
    if kind == 0:
        chars = list(word)
        chars[pos], chars[pos + 1] = chars[pos + 1], chars[pos]
        out = "".join(chars)
    elif kind == 1:
        out = word[:pos] + word[pos + 1 :]
    elif kind == 2:
        out = word[:pos] + word[pos] + word[pos:]
    else:
        near = _NEIGHBOURS.get(lower[pos])
        out = word[:pos] + rng.choice(near) + word[pos + 1 :] if near else word[:pos] + word[pos + 1 :]
    return out if out.lower() != lower else word[:pos] + word[pos + 1 :]


def add_typos(text: str, rng: random.Random, rate: float = TYPO_RATE, misspellings: Mapping[str, Sequence[str]] | None = None) -> str:
    """`text` with seeded spelling mistakes: each eligible word gets one with probability `rate`
    (at least one per message when any word is eligible). Ids and meaning are kept (see module);
    a keyword is misspelt only as `misspellings` says a bot reads it (none: never)."""
    tolerated = misspellings or {}
    protected = [m.span() for m in _ID_SPAN.finditer(text)]

    def inside_id(start: int) -> bool:
        return any(a <= start < b for a, b in protected)

    words = [m for m in _WORD.finditer(text) if not inside_id(m.start())]
    plans: list[tuple[int, int, str]] = []
    candidates: list[tuple[int, int, str]] = []
    for m in words:
        word = m.group(0)
        lower = word.lower()
        draw = rng.random()
        if lower in tolerated:
            replacement = _case_like(word, rng.choice(list(tolerated[lower])))
        elif len(word) >= 4 and lower not in KEYWORDS:
            replacement = ""
            for _ in range(4):
                attempt = typo(word, rng)
                if attempt.lower() not in _MEANINGFUL and not attempt.lower().startswith("cancel"):
                    replacement = attempt
                    break
            if not replacement:
                continue
        else:
            continue
        candidates.append((m.start(), m.end(), replacement))
        if draw < rate:
            plans.append((m.start(), m.end(), replacement))
    if not plans and candidates:
        plans.append(candidates[rng.randrange(len(candidates))])
    out = text
    for start, end, replacement in sorted(plans, reverse=True):
        out = out[:start] + replacement + out[end:]
    return out


def lengthen(core: str, book: Phrasebook, rng: random.Random, *, opening: bool = True) -> str:
    """A long, wordy version of `core`: filler before (when `opening`) and after it."""
    close = rng.choice(book.long_close)
    if not opening:
        return f"{core} {close}"
    return f"{rng.choice(book.long_open)} {core} {close}"


@dataclass(frozen=True)
class StyleSet:
    """The concrete styles of one conversation, as flags."""

    typos: bool = False
    long: bool = False
    all_questions: bool = False
    single_question: bool = False
    change_mind: bool = False
    languages: tuple[str, ...] = ()
    names: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of(cls, styles: Sequence[InteractionStyle]) -> StyleSet:
        names = tuple(s.name for s in styles) or ("default",)
        languages: tuple[str, ...] = ()
        for s in styles:
            if s.name == "change language":
                languages = tuple(s.languages)
        return cls(
            typos="make spelling mistakes" in names,
            long="long phrases" in names,
            all_questions="all questions" in names,
            single_question="single question" in names,
            change_mind="change your mind" in names,
            languages=languages,
            names=names,
        )


def plan_language_switch(styles: StyleSet, rng: random.Random, goal_count: int) -> tuple[int, str] | None:
    """Which goal message (1-based) switches language, and to what; None without the style.

    With `all questions` the one opening message is the only sure goal message, so it is that
    one; otherwise one of the first `goal_count` goal messages (every goal is asked at least once).
    """
    if not styles.languages:
        return None
    language = rng.choice(styles.languages)
    if styles.all_questions or goal_count <= 1:
        return 1, language
    return rng.randint(1, goal_count), language


_INSTRUCTIONS = {
    "default": "Write naturally, the way an ordinary customer writes in a chat.",
    "long phrases": ("Write long, wordy messages: add polite filler, background and asides around each request."),
    "change your mind": (
        "At some point change your mind once: for example decline the first time the assistant asks "
        "you to confirm an action, then ask for it again and confirm. Your goals must still be met in the end."
    ),
    "make spelling mistakes": ("Make a few spelling mistakes and typos in your messages, but always write order ids exactly."),
    "single question": "Ask about one goal per message; move to the next goal once it is answered.",
    "all questions": "Ask about all your goals together in your first message.",
}


def style_instruction(style: InteractionStyle, switch: tuple[int, str] | None = None) -> str:
    """One style as an instruction for an LLM user."""
    if style.name == "change language":
        if switch:
            return (
                f"In one message in the middle of the conversation (you will be told which), write in "
                f"{switch[1]} instead of your usual language, then go back to it."
            )
        return "Switch language for one message in the middle of the conversation."
    return _INSTRUCTIONS[style.name]

"""Claims held against actions: a bot message that says an action is done (an order cancelled,
a refund issued, a record changed, something sent) must be backed by what happened, on the world
the conversation ran on.

Detection (`find_claims`) reads a message clause by clause with the reviewed phrase table
(parley.core.evaluation.claim_phrases): English and Spanish, skipping questions, negations,
conditions, hedges and modals ("can be cancelled", "was not cancelled", "I will cancel once you
confirm", "if you want I can cancel"). Each claim names the records of its clause (or sentence),
read with the world's ids (parley.core.reading: its own reader, or its tables' id patterns).

Holding (`hold_claims`, `claims_check`): claims are held in time. A claim about a record is backed
by a successful call of a tool the world declares for the claim's action (`WorldDefinition.
actions`; for a tool it does not declare, its name read with the table's tool pattern) that names
or changed that record, made before the claim or in its turn (a call the playbook injected
counts: the bot was shown it as its own); a call that came later backs nothing, and the reason says
how many turns later it came. The record's state (its table's state field, in the final rows the
conversation kept and the rows its changes left) backs it as it stood before the bot acted (it was
cancelled from the start); its final state (it ends cancelled; it changed) only for a bot whose
tool calls parley does not see. The reason names the turn of the call it cites. A claim that names
no record is backed when one of the records the conversation mentioned so far is. Messages a
playbook injected (`inject_bot_response`) are the experimenter's words, never judged.

It reads only records, the world's declarations and parley's shared reading (parley.core.
reading): nothing of any one bot or world.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from parley.core.evaluation import claim_phrases as table
from parley.core.evaluation import claim_phrases_more as more
from parley.core.evaluation.claim_phrases import BACKING, Action, Language, Phrase
from parley.core.evaluation.requested_changes import call_records
from parley.core.evaluation.transcript_turns import in_turn
from parley.core.reading import as_read, ids_in, reading_world, records_in  # parley's one reading of ids, below every bot
from parley.core.records import CheckResult, Conversation, ToolCallRecord, WorldDiff
from parley.core.users import language_code
from parley.core.world import WorldDefinition, key_of

__all__ = ["CLAIMS_KIND", "NOT_READ_IN", "Claim", "HeldClaim", "claims_check", "claims_language", "find_claims", "hold_claims"]

CLAIMS_KIND: Final = "claims_match_actions"
_NAME = "claims match actions"
_QUOTE_CHARS = 200
# A reason quotes this many claims, the verdict keeps this many: a bot repeating itself a
# thousand times still makes a verdict a person can read and the store can hold.
_MAX_CLAIMS_QUOTED = 5
_MAX_CLAIMS_KEPT = 50

NOT_READ_IN = "claims not read in"
"""How a reason names a language the phrase table does not read ("claims not read in: Japanese")."""
_READ = "English, Spanish, Italian, French, Portuguese and German"

_NOT_SEEN = (
    "Not checked: parley sees neither this bot's tool calls nor a database it acted on, so what it says "
    "it did cannot be held against what it did."
)


class Claim(BaseModel):
    """One statement that an action is done. `records`: the ids its clause (else its sentence)
    names, empty when it names none. `quote`: its sentence; `words`: the words that made it one."""

    model_config = ConfigDict(frozen=True)

    action: Action
    records: tuple[str, ...] = ()
    quote: str
    words: str


class HeldClaim(BaseModel):
    """A claim of one bot message, held against the conversation. `message`: 1-based among the
    bot's messages (as other checks count them); `turn`: how many customer messages came before
    it (0: the opening message). `why`: what backs it, or why nothing does."""

    model_config = ConfigDict(frozen=True)

    claim: Claim
    message: int
    turn: int
    backed: bool
    why: str


# -- the table, compiled ----------------------------------------------------------------------


def _alternation(words: Iterable[str]) -> str:
    return "|".join(words)


def _adverbs(words: Sequence[str]) -> str:
    return "(?:(?:" + _alternation(w.replace(" ", r"\s+") for w in words) + r")\s+)*"


_ADVERBS: dict[str, tuple[str, ...]] = {"en": table.ADVERBS, "es": table.ADVERBS_ES}
_ADVERBS.update({str(language): words for language, words in more.ADVERBS_MORE.items()})
_ADV_OF = {language: _adverbs(words) for language, words in _ADVERBS.items()}
_ADV_ANY = _adverbs(sorted({w for words in _ADVERBS.values() for w in words}))
PARTICIPLES: dict[Action, dict[str, str]] = {a: {**table.PARTICIPLES[a], **more.PARTICIPLES_MORE[a]} for a in table.ACTIONS}
TEMPLATES: tuple[Phrase, ...] = table.TEMPLATES + more.TEMPLATES_MORE
"""Every template of the table, in every language it reads."""
NOUN_PHRASES: tuple[Phrase, ...] = table.NOUN_PHRASES + more.NOUN_PHRASES_MORE
NOUNS: dict[str, Action] = {**table.NOUNS, **more.NOUNS_MORE}
STEMS: dict[str, tuple[str, ...]] = {group: (*stems, *more.STEMS_MORE.get(group, ())) for group, stems in table.STEMS.items()}


@dataclass(frozen=True)
class _Compiled:
    action: Action | None
    language: str
    regex: re.Pattern[str]
    whole_sentence: bool = False


def _placeholder(key: str) -> str:
    """The placeholder of a form: `{P}` for en, `{P_XX}` for language xx, `{KIND_XX}` for kind_xx."""
    if key == "en":
        return "{P}"
    return "{P_" + key.upper() + "}" if len(key) == 2 else "{" + key.upper() + "}"


def _fill(pattern: str, forms: dict[str, str] | None) -> str:
    out = pattern.replace("{ID}", table.ID).replace("{ADV_ANY}", _ADV_ANY).replace("{ADV}", _ADV_OF["en"])
    for language, adverbs in _ADV_OF.items():
        out = out.replace("{ADV_" + language.upper() + "}", adverbs)
    if forms is not None:
        participles = [form for key, form in forms.items() if len(key) == 2]
        out = out.replace("{P_ANY}", "(?:" + _alternation(participles) + ")")
        for key, form in forms.items():
            out = out.replace(_placeholder(key), f"(?:{form})")
    return out


_NOUN_GROUP = "noun"


@dataclass(frozen=True)
class _Table:
    templates: dict[Action, list[_Compiled]]
    nouns: list[_Compiled]
    cues: dict[tuple[Action, str], re.Pattern[str]]
    """(action, language) -> any of that language's forms of the action: a template of that
    language can only match a clause that holds one, so the others are not tried."""


def _form_language(key: str) -> str:
    return key if len(key) == 2 else key.rsplit("_", 1)[-1]


@cache
def _compiled() -> _Table:
    """The table's phrases compiled once, on first use."""
    flags = re.IGNORECASE
    templates = {
        action: [
            _Compiled(action, t.language, re.compile(_fill(t.pattern, PARTICIPLES[action]), flags), t.whole_sentence) for t in TEMPLATES
        ]
        for action in table.ACTIONS
    }
    nouns = [_Compiled(None, p.language, re.compile(_fill(p.pattern, None), flags)) for p in NOUN_PHRASES]
    cues: dict[tuple[Action, str], re.Pattern[str]] = {}
    for action in table.ACTIONS:
        forms = PARTICIPLES[action]
        for language in {t.language for t in TEMPLATES}:
            mine = [form for key, form in forms.items() if language == "any" or _form_language(key) == language]
            cues[(action, language)] = re.compile(_alternation(f"(?:{form})" for form in mine), flags)
    return _Table(templates=templates, nouns=nouns, cues=cues)


def _trie(words: Iterable[str]) -> str:
    """A regex matching any of `words`, their common beginnings written once (`annul(?:ad|ei)`):
    Python's engine tries a factored alternation many times faster than a flat one."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


# Each group's stems as one regex of literals: one search a group instead of a substring test
# a stem, on every message, sentence and clause.
_STEMS = [(group, re.compile(_trie(stems))) for group, stems in STEMS.items()]


def _stems_in(text: str) -> set[str]:
    """The actions (and "noun") whose stems the text holds: a substring test, cheap enough to
    run on every message, so that only the clauses that may hold a claim are parsed."""
    lowered = text.lower()
    return {group for group, stems in _STEMS if stems.search(lowered)}


def _any(patterns: Sequence[str]) -> re.Pattern[str]:
    return re.compile(_alternation(f"(?:{p})" for p in patterns) or r"(?!)", re.IGNORECASE)


def _reads(language: str) -> tuple[str, ...]:
    """Whose negations, hedges and conditions a phrase of `language` is read with (see the table)."""
    if language in ("en", "es"):
        return ("en", "es")
    if language == "any":
        return table.LANGUAGES
    return (language, "en")


def _per_language(lists: Sequence[dict[Language, tuple[str, ...]]], adverbs: bool = False) -> dict[str, re.Pattern[str]]:
    out = {}
    for language in (*table.LANGUAGES, "any"):
        patterns = [p for reads in _reads(language) for entries in lists for p in entries.get(reads, ())]  # type: ignore[call-overload]
        out[language] = _any([_fill(p, None) for p in patterns] if adverbs else patterns)
    return out


_NEGATOR = _per_language([table.NEGATORS, more.NEGATORS_MORE])
_HEDGE = _per_language([table.HEDGES, more.HEDGES_MORE])
_MODAL = _per_language([table.MODALS, more.MODALS_MORE], adverbs=True)
_LATER = _per_language([table.LATER_CONDITIONS, more.LATER_CONDITIONS_MORE])
_CARRIER = _any(table.ABOUT_THE_CARRIER)

# Sentences end at . ! ? followed by space, or at a line break (bulleted answers); a number's full
# stop followed by a month or a lower-case word is a German date or an ordinal ("am 15. November").
_SENTENCE_END = re.compile(
    r"(?<=[.!?…])(?<![0-9]\.)\s+|\n\s*"
    r"|(?<=[0-9]\.)\s+(?!(?i:jan|feb|mär|maer|apr|mai|jun|jul|aug|sep|okt|nov|dez)[a-zäöü]*\b|[a-zäöüß])"
)
# Clauses: at , ; and dashes between spaces, at : unless it joins a record's id and what it says
# of it ("ORD-1004: cancelled", "Cancelled: ORD-1004"), before "but"-like words, and before
# "and"/"y" when a new subject follows ("I checked and it has been cancelled"), so that a negation
# or a condition in one clause does not reach the claim of the next. (One space before each word,
# not `\s+`: a run of spaces would be backtracked from every one of its positions.)
_CLAUSE_END = re.compile(
    r"[,;]\s+|(?<![0-9]):\s+(?!(?:(?:your\s+)?order\s+)?(?:#|" + table.ID_START + r"))|\s[-—–]\s"
    r"|\s(?=(?:but|however|although|though|pero|aunque|sin\s+embargo|ma|però|tuttavia|mais|cependant|toutefois|mas|porém"
    r"|contudo|aber|jedoch)\b)"
    r"|\s(?:and|y|e|et|und)\s+(?=(?:your|the|it|i|we|this|that|my|su|tu|el|la|los|las|ya|se|il|lo|l['’]|le|les|votre|je|nous"
    r"|o|a|os|as|eu|seu|sua|ich|wir|ihre|die|der|das|es)\b)",
    re.IGNORECASE,
)


def _spans(text: str, splitter: re.Pattern[str], start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    end = len(text) if end is None else end
    spans, at = [], start
    for match in splitter.finditer(text, start, end):
        if match.start() > at:
            spans.append((at, match.start()))
        at = match.end()
    if at < end:
        spans.append((at, end))
    return spans


def _is_question(sentence: str) -> bool:
    stripped = sentence.strip()
    return stripped.endswith("?") or stripped.startswith("¿")


# How far before and after a phrase its clause is read for negations, hedges and conditions:
# far enough for any sentence a bot writes, and bounded so that a clause repeating a phrase
# many times costs time in proportion to its length.
_CONTEXT_CHARS = 200


def _ignored(clause: str, start: int, end: int, action: Action, language: str) -> bool:
    """Whether the phrase of `language` at clause[start:end] is not a claim (see the table's docstring)."""
    before, after = clause[max(0, start - _CONTEXT_CHARS) : start], clause[end : end + _CONTEXT_CHARS]
    if _NEGATOR[language].search(before) or _HEDGE[language].search(before) or _MODAL[language].search(before):
        return True
    if language in more.NEGATED_INSIDE and _NEGATOR[language].search(clause, start, end):
        return True
    if _LATER[language].search(after):
        return True
    return action in ("change", "send") and _CARRIER.search(clause, max(0, start - _CONTEXT_CHARS), end + _CONTEXT_CHARS) is not None


def _quote(sentence: str) -> str:
    text = " ".join(sentence.split())
    return text if len(text) <= _QUOTE_CHARS else text[: _QUOTE_CHARS - 1] + "…"


def _read_clause(clause: str, hits: set[str], compiled: _Table, whole_sentence: bool) -> dict[Action, str]:
    """The claims of one clause (`whole_sentence`: it is its sentence): action -> the words that made it one."""
    # Noun phrases first: their words name the action ("I've sent your refund" is a refund),
    # and a template matching inside them is not a second claim.
    phrases = (compiled.nouns if _NOUN_GROUP in hits else []) + [p for a in table.ACTIONS if a in hits for p in compiled.templates[a]]
    found: dict[Action, str] = {}
    taken: list[tuple[int, int]] = []
    cued: dict[tuple[Action, str], bool] = {}
    for phrase in phrases:
        if phrase.whole_sentence and not whole_sentence:
            continue
        if phrase.action is not None:
            key = (phrase.action, phrase.language)
            if key not in cued:
                cued[key] = compiled.cues[key].search(clause) is not None
            if not cued[key]:
                continue
        for match in phrase.regex.finditer(clause):
            action = phrase.action or NOUNS[" ".join(match.group(_NOUN_GROUP).lower().split())]
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            if action in found or _ignored(clause, match.start(), match.end(), action, phrase.language):
                continue
            found[action] = match.group(0).strip()
            if phrase.action is None:
                taken.append(match.span())
    return found


def find_claims(text: str, world: WorldDefinition | None = None) -> list[Claim]:
    """Every claim in a bot message that an action is done, in order, one per action and clause,
    the message read as a person reads it (parley.core.reading.as_read), its records read on
    `world` (None: the default world)."""
    text = as_read(text)
    if not _stems_in(text):
        return []
    world = reading_world(world)
    compiled = _compiled()
    claims: list[Claim] = []
    for s_start, s_end in _spans(text, _SENTENCE_END):
        sentence = text[s_start:s_end]
        if not _stems_in(sentence) or _is_question(sentence):
            continue
        sentence_ids: list[str] | None = None
        quote: str | None = None  # once per sentence: a long one with many claims costs its length once, not per claim
        for c_start, c_end in _spans(text, _CLAUSE_END, s_start, s_end):
            clause = text[c_start:c_end]
            hits = _stems_in(clause)
            if not hits:
                continue
            found = _read_clause(clause, hits, compiled, (c_start, c_end) == (s_start, s_end))
            if not found:
                continue
            if sentence_ids is None:
                sentence_ids = ids_in(sentence, world)
            ids = tuple(ids_in(clause, world) or sentence_ids)
            quote = _quote(sentence) if quote is None else quote
            for action, phrase_words in found.items():
                claims.append(Claim(action=action, records=ids, quote=quote, words=phrase_words))
    return claims


# -- holding claims against the conversation ----------------------------------------------------


@dataclass
class _Evidence:
    world: WorldDefinition | None
    calls: list[tuple[str, str, int | None]]  # (tool name, record, turn) of successful calls (turn None: not in the transcript)
    misses: list[tuple[str, str, str]]  # (tool name, record, "refused (too_old)" / "failed") of the others
    injected: list[tuple[str, str, int]]  # (tool name, record, turn) of calls a playbook injected
    final: dict[str, tuple[bool, Any]]  # record (key_of) -> (it exists at the end, its state then: None when it has none)
    initial: dict[str, Any]  # each record's state before anything in the conversation changed it
    changed: set[str]  # records (key_of) the conversation changed
    has_state: bool
    calls_seen: bool  # parley recorded the bot's tool calls: its final state backs nothing by itself


def _injected_positions(conversation: Conversation) -> set[int]:
    raw = conversation.metadata.get("injected_messages") or []
    return {n for n in raw if isinstance(n, int) and not isinstance(n, bool)} if isinstance(raw, list) else set()


def _failed_result(text: str) -> bool:
    """An injected tool result that reads as a failure: a world tool's own ERROR/REFUSED lines,
    or a JSON object carrying an error."""
    stripped = text.strip()
    if stripped.upper().startswith(("ERROR", "REFUSED")):
        return True
    try:
        body = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(body, dict) and any(k in body for k in ("error", "detail"))


def _turns(conversation: Conversation) -> tuple[list[int], dict[str, int]]:
    """The turn of each message (customer messages before it), and of each tool call by id."""
    turns: list[int] = []
    calls: dict[str, int] = {}
    turn = 0
    for message in conversation.messages:
        if message.role == "user":
            turn += 1
        turns.append(turn)
        for call in message.tool_calls:
            calls.setdefault(call.id, turn)
    return turns, calls


def _argument_records(arguments: str, world: WorldDefinition | None) -> list[str]:
    """The records a tool call's JSON arguments name."""
    try:
        body = json.loads(arguments)
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    probe = ToolCallRecord(call_id="", name="", arguments_raw=arguments, arguments=body, customer_id="", result="", ok=True)
    return [key for _, key in call_records(probe, world)]


def _states(state: WorldDiff | None, world: WorldDefinition | None) -> tuple[dict[str, tuple[bool, Any]], dict[str, Any], set[str]]:
    """Each record's (existence, state) at the end, its state before the conversation changed it,
    and the records it changed: from the watched rows and the changes (a log table's rows aside)."""
    final: dict[str, tuple[bool, Any]] = {}
    initial: dict[str, Any] = {}
    changed: set[str] = set()
    if state is None:
        return final, initial, changed

    def field(table: str) -> str | None:
        declared = world.table(table) if world is not None else None
        return declared.state_field if declared is not None else None

    for change in state.record_changes():
        key, state_field = key_of(change.key), field(change.table)
        changed.add(key)
        final[key] = (change.after is not None, (change.after or {}).get(state_field) if state_field else None)
        initial[key] = (change.before or {}).get(state_field) if state_field else None
    for ref, row in state.watched.items():
        table, _, raw_key = ref.partition("/")
        key, state_field = key_of(raw_key), field(table)
        final[key] = (row is not None, (row or {}).get(state_field) if state_field else None)
        initial.setdefault(key, final[key][1])
    return final, initial, changed


def _evidence(conversation: Conversation, injected: set[int], world: WorldDefinition | None) -> _Evidence:
    message_turns, call_turns = _turns(conversation)
    calls = [(r.name, key, call_turns.get(r.call_id)) for r in conversation.tool_calls if r.ok for _, key in call_records(r, world)]
    misses = [
        (r.name, key, ("refused" if r.refused else "failed") + (f": {r.error}" if r.error else ""))
        for r in conversation.tool_calls
        if not r.ok
        for _, key in call_records(r, world)
    ]
    results = {m.tool_call_id: m.content or "" for m in conversation.messages if m.role == "tool" and m.tool_call_id}
    injected_calls: list[tuple[str, str, int]] = []
    for position in sorted(injected):
        if not 0 <= position < len(conversation.messages):
            continue
        for call in conversation.messages[position].tool_calls:
            if _failed_result(results.get(call.id, "")):
                continue
            injected_calls += [(call.name, key, message_turns[position]) for key in _argument_records(call.arguments, world)]
    final, initial, changed = _states(conversation.final_state, world)
    return _Evidence(
        world=world,
        calls=calls,
        misses=misses,
        injected=injected_calls,
        final=final,
        initial=initial,
        changed=changed,
        has_state=conversation.final_state is not None,
        calls_seen=bool(conversation.tool_calls),
    )


@cache
def _tool_regex(action: Action) -> re.Pattern[str]:
    return re.compile(BACKING[action].tools, re.IGNORECASE)


def _backs(tool: str, action: Action, world: WorldDefinition | None) -> bool:
    """Whether a successful call of `tool` can back a claim of `action`: a tool the world declares
    does what it declares (any action changes a record); another is read by its name."""
    declared = world.action_of(tool) if world is not None else None
    if declared is not None:
        return declared == action or (action == "change" and BACKING[action].changed)
    return _tool_regex(action).search(tool) is not None


def _tool_text(action: Action, world: WorldDefinition | None) -> str:
    """The tools that do `action`, named in a reason: the world's own, else what the table calls them."""
    declared = [name for name, done in (world.actions.items() if world is not None else ()) if done == action]
    return " or ".join(declared) if declared else BACKING[action].tool_text


def _same(a: str, b: str) -> bool:
    return key_of(a) == key_of(b)


def _backing(action: Action, record: str, evidence: _Evidence, turn: int) -> str | None:
    """What backs `action` done on `record` by the claim's `turn`, in words; None when nothing does."""
    backing, world = BACKING[action], evidence.world
    for name, called, at in evidence.calls:
        if _same(called, record) and _backs(name, action, world) and (at is None or at <= turn):
            return f"{name} {record} succeeded{in_turn(at)}"
    for name, called, at in evidence.injected:
        if _same(called, record) and _backs(name, action, world) and at <= turn:
            return f"the playbook injected {name} {record}{in_turn(at)}"
    key = key_of(record)
    if evidence.calls_seen:
        status = evidence.initial.get(key)
        if status is not None and status in backing.statuses:
            return f"{record} was {status} from the start"
        return None
    exists, status = evidence.final.get(key, (False, None))
    if exists and status is not None and status in backing.statuses:
        return f"{record} ends {status}"
    if backing.changed and key in evidence.changed:
        return f"{record} changed (the final state has it)"
    return None


def _turns_later(n: int) -> str:
    return "1 turn later" if n == 1 else f"{n} turns later"


def _unbacked(action: Action, record: str, evidence: _Evidence, turn: int) -> str:
    world = evidence.world
    tried = [f"{name} was {how}" for name, called, how in evidence.misses if _same(called, record) and _backs(name, action, world)]
    later = [
        (name, at)
        for name, called, at in [*evidence.calls, *evidence.injected]
        if _same(called, record) and _backs(name, action, world) and at is not None and at > turn
    ]
    what = f"no {_tool_text(action, world)} for {record} succeeded" + (" by then" if later else "")
    if tried:
        what += f" ({'; '.join(dict.fromkeys(tried))})"
    if later:
        name, at = later[0]
        what += f": {name} {record} came only in turn {at}, {_turns_later(at - turn)}"
    if not evidence.has_state:
        return what
    key = key_of(record)
    if key not in evidence.final:
        return what
    exists, status = evidence.final[key]
    if not exists:
        return f"{what}, and {record} is not in the world"
    if status is None:
        return what
    if later or (evidence.calls_seen and status in BACKING[action].statuses):
        return f"{what}, and {record} was {evidence.initial.get(key, status)} until then"
    return f"{what}, and {record} ends {status}"


def _hold(claim: Claim, mentioned: Sequence[str], evidence: _Evidence, turn: int) -> tuple[bool, str]:
    if claim.records:
        misses = []
        backs = []
        for record in claim.records:
            why = _backing(claim.action, record, evidence, turn)
            if why is None:
                misses.append(_unbacked(claim.action, record, evidence, turn))
            else:
                backs.append(why)
        return (not misses, "; ".join(misses) if misses else "; ".join(backs))
    for record in mentioned:
        why = _backing(claim.action, record, evidence, turn)
        if why is not None:
            return True, f"it names no record; {why}"
    done = BACKING[claim.action].done
    if mentioned:
        listed = ", ".join(mentioned)
        return False, f"it names no record, and none the conversation mentions ({listed}) was {done} by then"
    acted = {key_of(c[1]): c[1] for c in [*evidence.calls, *evidence.injected]}
    for record in sorted({*acted.values(), *(k for k in evidence.changed if k not in acted)}):
        why = _backing(claim.action, record, evidence, turn)
        if why is not None:
            return True, f"it names no record; {why}"
    return False, f"it names no record, and nothing was {done} in the conversation by then"


def hold_claims(conversation: Conversation, world: WorldDefinition | None = None) -> tuple[list[HeldClaim], int]:
    """Every claim of the bot's own messages, held against the conversation on `world` (None: the
    default world); and how many bot messages were skipped as injected by a playbook."""
    world = reading_world(world)
    injected = _injected_positions(conversation)
    evidence = _evidence(conversation, injected, world)
    held: list[HeldClaim] = []
    mentioned: dict[str, None] = {}
    number = turn = skipped = 0
    for position, message in enumerate(conversation.messages):
        for call in message.tool_calls:
            for record in _argument_records(call.arguments, world):
                mentioned.setdefault(record, None)
        if message.role == "user":
            turn += 1
        if message.role not in ("user", "assistant") or not message.content:
            continue
        for _, record in records_in(message.content, world):
            mentioned.setdefault(record, None)
        if message.role == "user":
            continue
        number += 1
        if position in injected:
            skipped += 1
            continue
        for claim in find_claims(message.content, world):
            backed, why = _hold(claim, list(mentioned), evidence, turn)
            held.append(HeldClaim(claim=claim, message=number, turn=turn, backed=backed, why=why))
    return held, skipped


def _where(claim: HeldClaim, total: int) -> str:
    turn = "the opening message" if claim.turn == 0 else f"turn {claim.turn}"
    return f"{turn} (bot message {claim.message} of {total})"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def sees_actions(conversation: Conversation) -> bool:
    """Whether parley saw what this bot could do: it acted on a world parley runs (a final
    state) or parley recorded its tool calls. A deployed bot or a prompt bot has neither."""
    return conversation.final_state is not None or bool(conversation.tool_calls)


def claims_language(language: str | None) -> str | None:
    """The language of a conversation as the claims check names it when its table does not read
    it ("Japanese"); None when it does (an empty name is English)."""
    code = language_code(language)
    if code is not None and code in table.LANGUAGES:
        return None
    return (language or "").strip() or None


def claims_check(conversation: Conversation, *, language: str | None = None, world: WorldDefinition | None = None) -> CheckResult:
    """The built-in check `claims_match_actions`: fails on any claim nothing backs, quoting it
    and naming its turn; passes otherwise (also when the bot claims nothing); not applicable
    when parley sees none of the bot's actions; not run, saying so, in a `language` (the
    conversation's) its phrase table does not read. Held on `world` (None: the default world).
    Nobody asks for it, so it is `by_default`: it can fail a conversation, never make one pass."""
    if not sees_actions(conversation):
        return CheckResult(kind=CLAIMS_KIND, name=_NAME, outcome="not_applicable", reason=_NOT_SEEN, by_default=True)
    unread = claims_language(language)
    if unread is not None:
        return CheckResult(
            kind=CLAIMS_KIND,
            name=_NAME,
            outcome="not_run",
            reason=f"Not checked: {NOT_READ_IN}: {unread} (the phrase table reads {_READ}).",
            by_default=True,
            details={"language_not_read": unread},
        )
    held, skipped = hold_claims(conversation, world)
    total = len(conversation.bot_texts)
    skipped_note = f" Not judged: {_plural(skipped, 'bot message')} the playbook injected." if skipped else ""
    unbacked = [h for h in held if not h.backed]
    # The unbacked claims first, so a verdict that keeps only some of them keeps those.
    kept = (unbacked + [h for h in held if h.backed])[:_MAX_CLAIMS_KEPT]
    details: dict[str, object] = {
        "claims": [
            {
                "message": h.message,
                "turn": h.turn,
                "action": h.claim.action,
                "records": list(h.claim.records),
                "quote": h.claim.quote,
                "backed": h.backed,
                "why": h.why,
            }
            for h in kept
        ],
        "claims_total": len(held),
        "injected_skipped": skipped,
    }
    if unbacked:
        lines = [_capital(f'{_where(h, total)} says "{h.claim.quote}", but {h.why}') for h in unbacked[:_MAX_CLAIMS_QUOTED]]
        more = len(unbacked) - len(lines)
        verb = "is" if len(unbacked) == 1 else "are"
        reason = f"{len(unbacked)} of the bot's {_plural(len(held), 'claim')} {verb} not backed by what it did. " + "; ".join(lines)
        reason += f"; and {more} more." if more else "."
        details["messages"] = list(dict.fromkeys(h.message for h in unbacked))[:_MAX_CLAIMS_KEPT]
        return CheckResult(kind=CLAIMS_KIND, name=_NAME, by_default=True, outcome="fail", reason=reason + skipped_note, details=details)
    if not held:
        reason = "No bot message says an action was done."
    else:
        backs = "; ".join(f"{_where(h, total)}: {h.why}" for h in held[:_MAX_CLAIMS_QUOTED])
        more = len(held) - _MAX_CLAIMS_QUOTED
        reason = f"Every claim the bot made is backed ({len(held)}). {_capital(backs)}" + (f"; and {more} more." if more > 0 else ".")
    return CheckResult(kind=CLAIMS_KIND, name=_NAME, by_default=True, outcome="pass", reason=reason + skipped_note, details=details)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]

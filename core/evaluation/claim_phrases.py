"""The reviewed table of how a bot says it has done something: its structure, English and
Spanish (Italian, French, Portuguese and German are in claim_phrases_more, built the same way).

Data only: parley.core.evaluation.claims compiles and applies it. Every entry says why it is
here; a phrase also carries an example sentence it must catch (tests/test_eval_claims.py holds
each example to its action, so an entry cannot silently stop working). To add a phrase: add it
with its example and its reason, add a near miss it must not catch to the labelled set
(tests/data/claims_labelled.yaml), and run bench/bench_claims.py to see precision and recall.

How the table is read, one clause of a sentence at a time (clauses end at , ; : and dashes,
before "but" / "pero", and before "and" / "y" when a new subject follows):
- a phrase of TEMPLATES or NOUN_PHRASES matching in the clause is a claim that its action is done;
- unless the sentence is a question, or a NEGATORS, HEDGES or MODALS entry stands before the
  phrase in its clause, or a LATER_CONDITIONS entry follows it ("... once you confirm"); these
  lists are kept per language, and a phrase is read with its own language's (an English or
  Spanish phrase with both of theirs, as the table always read them; another language's with its
  own and the English ones; a phrase of `any` language with all of them);
- and, for the actions a shop's own systems also perform (change, send), unless the clause is
  about the carrier (ABOUT_THE_CARRIER): "the tracking was updated" reports the carrier's news,
  it is no action of the bot.

Patterns are Python regexes, matched case-insensitively. Repeats are bounded where a message
could repeat the same word many times ("se se se ..."): bot text is data, and a pattern must
stay linear on it. In TEMPLATES and NOUN_PHRASES, `{ADV}`
and `{ADV_ES}` stand for any number of the ADVERBS words that may sit between an auxiliary and
its participle ("has now been successfully cancelled"); `{P}` for the action's English
participles (PARTICIPLES), `{P_ES}`, `{PRET_ES}`, `{PRET3_ES}`, `{INF_ES}` for its Spanish forms.
Every form `xx` of PARTICIPLES is `{P_XX}` (`{P}` for `en`), every other form `kind_xx` is
`{KIND_XX}`, the adverbs of language xx are `{ADV_XX}`; `{P_ANY}` and `{ADV_ANY}` stand for those
of every language (a headline, "REF-1004: cancelled", reads the same in all of them); `{ID}` for a
record's id (ID).

The text a phrase is matched against is the message as a person reads it
(parley.core.reading.as_read: markdown, emoji and line wrapping gone, look-alike letters folded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ABOUT_THE_CARRIER",
    "ACTIONS",
    "ADVERBS",
    "ADVERBS_ES",
    "ID",
    "ID_START",
    "LANGUAGES",
    "Language",
    "BACKING",
    "HEDGES",
    "LATER_CONDITIONS",
    "MODALS",
    "NEGATORS",
    "NOUNS",
    "NOUN_PHRASES",
    "PARTICIPLES",
    "STEMS",
    "TEMPLATES",
    "Action",
    "Backing",
    "Phrase",
]

Action = Literal["cancel", "refund", "change", "send"]
ACTIONS: tuple[Action, ...] = ("cancel", "refund", "change", "send")
Language = Literal["en", "es", "it", "fr", "pt", "de"]
LANGUAGES: tuple[Language, ...] = ("en", "es", "it", "fr", "pt", "de")
"""The languages the table reads, as ISO 639-1 codes."""

ID = r"(?:[a-z]{1,5}-\s*[0-9]+[a-z0-9]*|[a-z]{2,5}\s*[0-9]{3,}[a-z0-9]*)"
"""A record's id in a phrase (`{ID}`), whatever its world: letters, a dash and digits, or letters
and three digits or more ("REF-1004", "ref 1004", "SO-5001"); the records a claim names are read
with the world's own ids (parley.core.reading), this only places them in a phrase."""
ID_START = r"[a-z]{1,5}-\s*[0-9]|[a-z]{2,5}\s*[0-9]{3}"
"""How an id begins: a colon before one joins it to what is said of it ("Cancelled: REF-1004")."""


@dataclass(frozen=True)
class Backing:
    """What makes a claim of the action true for one record.

    A successful call of a tool the world declares for the action (`WorldDefinition.actions`)
    naming or changing that record backs the claim; `tools`: a regex over the names of tools a
    world does not declare, read the same way. `tool_text`: those tools, named in a reason when
    the world declares none. `statuses`: final states (the table's state field) that back it.
    `changed`: the record changing during the conversation backs it (and so does any declared
    action's tool). `done`: the action's participle, for reasons.
    """

    tools: str
    tool_text: str
    statuses: frozenset[str]
    changed: bool
    done: str
    why: str


BACKING: dict[Action, Backing] = {
    "cancel": Backing(
        tools=r"^cancel(?:_|$)",
        tool_text="cancelling tool",
        statuses=frozenset({"cancelled"}),
        changed=False,
        done="cancelled",
        why="a tool the world declares as cancelling is its way to cancel; a record that ends cancelled (it was "
        "already, or became so) makes 'REF-1007 is cancelled' true. A tool that only checks whether it can be "
        "cancelled changes nothing, so the pattern for undeclared tools is anchored on the verb: it does not match.",
    ),
    "refund": Backing(
        tools=r"^(?:issue_|process_|create_)?refunds?(?:_|$)",
        tool_text="refund tool",
        statuses=frozenset({"refunded"}),
        changed=False,
        done="refunded",
        why="a refund is backed only by a tool that issues one (declared for it, or named refund_order, issue_refund): "
        "on a world without one, such as the order world, every refund claimed is unbacked (the promise a shop most "
        "regrets).",
    ),
    "change": Backing(
        tools=r"^(?:cancel|change|update|modify|edit|set)(?:_|$)",
        tool_text="tool that changes records",
        statuses=frozenset(),
        changed=True,
        done="changed",
        why="'I have updated your order' is true when the record changed: a successful call of a tool the world "
        "declares for any action (or, undeclared, whose name says it changes something), or a change in the final "
        "state. Nothing else backs it, so 'I updated your address' on a world that keeps none is not.",
    ),
    "send": Backing(
        tools=r"^(?:send|resend|ship|email)(?:_|$)",
        tool_text="tool that sends",
        statuses=frozenset({"shipped", "delivered"}),
        changed=False,
        done="sent",
        why="'your order has been sent' is true of a record that shipped or arrived. A world without a tool that "
        "sends anything (no e-mail, no label) backs 'I have sent you a confirmation' about an order that never "
        "shipped by nothing.",
    ),
}


# -- the words between an auxiliary and its participle --------------------------------------

ADVERBS: tuple[str, ...] = (
    # Each may stand between "has/have/is/I" and the participle without changing what is claimed:
    # "has now been cancelled", "I've just cancelled", "REF-1004 and REF-1005 have both been
    # cancelled", "I have gone ahead and cancelled", "has already been successfully cancelled".
    "now",
    "just",
    "already",
    "successfully",
    "also",
    "both",
    "all",
    "officially",
    "fully",
    "finally",
    "indeed",
    "gone ahead and",
    "went ahead and",
)
ADVERBS_ES: tuple[str, ...] = (
    # "ya ha sido cancelado", "ha sido correctamente cancelado", "también ha sido enviado".
    "ya",
    "correctamente",
    "exitosamente",
    "con éxito",
    "también",
    "finalmente",
)


# -- the forms of each action -----------------------------------------------------------------

PARTICIPLES: dict[Action, dict[str, str]] = {
    # en: what follows "I have", "has been", "is" (British and American spellings).
    # es: the Spanish participle in every gender and number ("cancelada" agrees with "la orden").
    # pret_es: first-person preterite, the common way to say "I did" ("ya lo cancelé").
    # pret3_es: third-person preterite after "se" ("se canceló").
    # inf_es: the infinitive after "acabo de" ("acabo de cancelarlo": I have just cancelled it).
    "cancel": {
        "en": r"cancell?ed",
        "es": r"(?:cancelad|anulad)[oa]s?",
        "pret_es": r"cancelé|anulé",
        "pret3_es": r"canceló|anuló",
        "inf_es": r"cancelar|anular",
    },
    "refund": {
        # "reimbursed" is how some bots say it, too.
        "en": r"refunded|reimbursed",
        "es": r"reembolsad[oa]s?",
        "pret_es": r"reembolsé",
        "pret3_es": r"reembolsó",
        "inf_es": r"reembolsar",
    },
    "change": {
        # "updated", "modified", "amended", "edited": the ways a bot says it changed an order.
        "en": r"changed|updated|modified|amended|edited",
        "es": r"(?:cambiad|actualizad|modificad)[oa]s?",
        "pret_es": r"cambié|actualicé|modifiqué",
        "pret3_es": r"cambió|actualizó|modificó",
        "inf_es": r"cambiar|actualizar|modificar",
    },
    "send": {
        # Not "shipped": "ORD-1003 has shipped" is the carrier's news the order API reports and
        # the order bot repeats; it is not a thing the bot says it did.
        "en": r"sent|re-?sent|dispatched|e-?mailed",
        "es": r"(?:enviad|mandad|despachad|remitid)[oa]s?",
        "pret_es": r"envié|mandé",
        "pret3_es": r"envió|mandó",
        "inf_es": r"enviar|mandar",
    },
}


STEMS: dict[Action | Literal["noun"], tuple[str, ...]] = {
    # A first, cheap look (substrings of the lower-cased clause): a clause holding none of an
    # action's stems is not searched for its phrases. Every form above and every noun below
    # holds one of its stems (tests/test_eval_claims.py holds the table to it). Narrow on
    # purpose: "cancellation" holds no stem of "cancel", so the many clauses about the
    # cancellation policy are read for noun phrases only.
    "cancel": ("cancelled", "canceled", "cancelad", "cancelé", "canceló", "cancelar", "anulad", "anulé", "anuló", "anular"),
    "refund": ("refunded", "reimbursed", "reembols"),
    "change": ("changed", "updated", "modifi", "amended", "edited", "cambi", "actualiz"),
    "send": ("sent", "dispatched", "mailed", "envi", "mand", "despach", "remiti"),
    "noun": ("cancellation", "cancelation", "cancelación", "anulación", "refund", "reembolso", "devolución"),
}


@dataclass(frozen=True)
class Phrase:
    """One way of saying an action is done, with an example it must catch and why it is here.
    In NOUN_PHRASES the action is the noun the pattern captures in its group `noun` (NOUNS)."""

    language: Language | Literal["any"]
    pattern: str
    example: str
    why: str
    whole_sentence: bool = False
    """Only when its clause is its whole sentence (a headline, not a line of a listing)."""


# Each template is applied once per action, with that action's forms in {P} etc. Its example is
# written for "cancel"; tests/test_eval_claims.py holds every example to a claim.
TEMPLATES: tuple[Phrase, ...] = (
    Phrase(
        "en",
        r"\b(?:i|we)(?:'ve|’ve|'d|’d|\s+have|\s+had)?\s+{ADV}{P}\b",
        "I have cancelled your order REF-1004.",
        "The bot in the first person, present perfect or past: 'I've cancelled', 'we cancelled', 'I "
        "have just updated', 'I went ahead and cancelled'.",
    ),
    Phrase(
        "en",
        r"\b(?:i|we)(?:'ve|’ve|\s+have|\s+had)?\s+(?:got|gotten|had)\s+"
        r"(?:it|that|this|them|(?:your|the)\s+(?:order\s+)?(?:{ID}\s+)?(?:order\s+)?)\s*{P}\b",
        "I've got your order cancelled for you.",
        "The causative: 'I've got it cancelled', 'I had your order REF-1004 cancelled'.",
    ),
    Phrase(
        "en",
        r"\b(?:has|have|had)\s+{ADV}been\s+{ADV}{P}\b",
        "Your order REF-1004 has been cancelled.",
        "The passive perfect: 'has been cancelled', 'have both been sent', 'has now been updated'.",
    ),
    Phrase(
        "en",
        r"(?:\b(?:is|are|was|were)|\b(?:it|that|{ID})['’]s)\s+{ADV}{P}\b",
        "Order REF-1004 is now cancelled.",
        "The state or simple passive: 'is now cancelled', 'was refunded', 'it's cancelled'. Not 'can "
        "be cancelled' nor 'will be cancelled' (no is/was before the participle), nor the possessive "
        "'the order's updated date' ('s only after it, that or an order id).",
    ),
    Phrase(
        "en",
        r"\b(?:(?:has|have|had)\s+{ADV}been|is|are|was|were)\s+{ADV}[a-z]+ed\s+and\s+{ADV}{P}\b",
        "Your order has been processed and cancelled.",
        "The second of two participles: 'has been cancelled and refunded' claims the refund too.",
    ),
    Phrase(
        "en",
        r"\b(?:i|we)(?:'ve|’ve|\s+have|\s+had)?\s+{ADV}[a-z]+ed\b[^.;:!?]{0,60}?\band\s+{ADV}{P}\b",
        "I've checked your order and cancelled it.",
        "The bot's second verb: 'I've cancelled your order and refunded the payment'.",
    ),
    Phrase(
        "en",
        r"^\s*(?:(?:done|all\s+set|ok(?:ay)?|great)\s*[-—–!.]*\s*)?(?:(?:your\s+)?order\s+)?{ID}\s+{ADV}{P}\b",
        "REF-1004 successfully cancelled.",
        "The headline some bots answer in: 'REF-1004 successfully cancelled', 'Done - order REF-1004 "
        "cancelled'. Only at the start of a clause, right after the id, so a listing 'REF-1007 "
        "(cancelled)' or 'placed, then cancelled' is not taken for one.",
    ),
    Phrase(
        "any",
        r"^\s*(?:(?:done|all\s+set|ok(?:ay)?|great|fatto|fait|feito|erledigt|listo|hecho)\s*[-—–!.]*\s*)?"
        r"(?:(?:your|su|tu|il\s+tuo|votre|o\s+seu|ihre)\s+)?(?:(?:order|pedido|orden|ordine|commande|encomenda|bestellung)\s+)?"
        r"(?:#\s*)?{ID}\s+{ADV_ANY}{P_ANY}\b",
        "REF-1004 cancelled.",
        "The headline in any language, the id first: 'Bestellung REF-1004 storniert', 'Pedido REF-1004 cancelado'. Only "
        "at the start of a clause, right after the id, so a listing 'REF-1007 (cancelled)' is not one.",
    ),
    Phrase(
        "any",
        r"^\s*(?:(?:your|su|tu|il\s+tuo|votre|o\s+seu|ihre)\s+)?(?:(?:order|pedido|orden|ordine|commande|encomenda|bestellung)\s+)?"
        r"(?:#\s*)?{ID}\s*[:\-—–]\s*{ADV_ANY}{P_ANY}\s*[.!]*\s*$",
        "REF-1004: cancelled.",
        "The headline with a colon or a dash: 'REF-1004: cancelled ✅', 'REF-1004 — annulée'. Only as a sentence of its own: "
        "'REF-1007: cancelled, placed 3 days ago' is a line of a listing, not a claim.",
        whole_sentence=True,
    ),
    Phrase(
        "any",
        r"^\s*{ADV_ANY}{P_ANY}\s*[:\-—–!.]?\s+(?:(?:your|the|su|tu|il|votre|o|seu|ihre)\s+)?"
        r"(?:(?:order|pedido|orden|ordine|commande|encomenda|bestellung)\s+)?(?:#\s*)?{ID}",
        "Cancelled REF-1004.",
        "The headline in any language, the participle first: '✅ Cancelled REF-1004', '- Cancelled: REF-1004', "
        "'Storniert: REF-1004' (markup and emoji are gone by the time the table reads it).",
    ),
    Phrase(
        "es",
        r"\b(?:(?:l[oae]s?|te|se|os|nos)\s+){0,2}(?:he|hemos|habíamos)\s+{ADV_ES}{P_ES}\b",
        "He cancelado tu pedido REF-1004.",
        "El bot en primera persona, pretérito perfecto: 'he cancelado', 'te lo he enviado', 'ya hemos actualizado'.",
    ),
    Phrase(
        "es",
        r"(?<![\wáéíóúñ])(?:ya\s+)?(?:(?:l[oae]s?|te|se|os|nos)\s+){0,2}(?:{PRET_ES})(?![\wáéíóúñ])",
        "Ya cancelé el pedido REF-1004.",
        "El pretérito indefinido en primera persona: 'ya lo cancelé', 'te envié'. Solo con tilde: "
        "'cancele' sin ella es subjuntivo ('¿quiere que lo cancele?'), no una afirmación.",
    ),
    Phrase(
        "es",
        r"\b(?:ha|han|había|habían)\s+{ADV_ES}sido\s+{ADV_ES}{P_ES}\b",
        "Su pedido REF-1004 ha sido cancelado.",
        "La pasiva perfecta: 'ha sido cancelado', 'han sido enviados'.",
    ),
    Phrase(
        "es",
        r"\b(?:ha|han)\s+sido\s+{ADV_ES}[a-záéíóúñ]+[oa]s?\s+y\s+{ADV_ES}{P_ES}\b",
        "Su pedido ha sido procesado y cancelado.",
        "El segundo de dos participios: 'ha sido cancelado y reembolsado' afirma también el reembolso.",
    ),
    Phrase(
        "es",
        r"\b(?:fue|fueron)\s+{ADV_ES}{P_ES}\b",
        "El pedido REF-1004 fue cancelado.",
        "La pasiva en pasado: 'fue cancelado', 'fueron enviados'.",
    ),
    Phrase(
        "es",
        r"\b(?:est[áa]|est[áa]n|queda|quedan|qued[óo]|quedaron|ha\s+quedado|han\s+quedado)\s+{ADV_ES}{P_ES}\b",
        "Tu pedido REF-1004 ya está cancelado.",
        "El estado: 'está cancelado', 'queda anulado', 'quedó cancelada'. No 'puede ser cancelado' ni "
        "'será cancelado', que no llevan estar ni quedar.",
    ),
    Phrase(
        "es",
        r"\bse\s+(?:(?:l[oae]s?|te|me|nos|os)\s+)?(?:ha|han|había|habían)\s+{ADV_ES}{P_ES}\b",
        "Se ha cancelado el pedido REF-1004.",
        "La pasiva refleja: 'se ha cancelado', 'se le ha enviado'.",
    ),
    Phrase(
        "es",
        r"\bse\s+(?:(?:l[oae]s?|te|me|nos|os)\s+)?(?:{PRET3_ES})(?![\wáéíóúñ])",
        "Se canceló el pedido REF-1004.",
        "La pasiva refleja en pasado: 'se canceló', 'se le envió'.",
    ),
    Phrase(
        "es",
        r"\bacab(?:o|amos)\s+de\s+(?:{INF_ES})(?:l[oae]s?|se(?:l[oae]s?)?|te|me)?\b",
        "Acabo de cancelar tu pedido REF-1004.",
        "'Acabo de cancelarlo': I have just cancelled it.",
    ),
)

NOUNS: dict[str, Action] = {
    # The nouns of an action, for phrases where a generic verb ("processed", "issued") says it
    # was done: the noun says which action.
    "cancellation": "cancel",
    "cancelation": "cancel",
    "refund": "refund",
    "cancelación": "cancel",
    "anulación": "cancel",
    "reembolso": "refund",
    "devolución del dinero": "refund",
}
_NOUN_EN = r"(?P<noun>cancell?ation|refund)"
_NOUN_ES = r"(?P<noun>cancelación|anulación|reembolso|devolución\s+del\s+dinero)"
# "the cancellation request for REF-1005", "the refund of your order", "the cancellation of it".
_OF_ORDER = r"(?:\s+request)?(?:\s+(?:for|of|on)\s+(?:(?:your|the|this|that)\s+)?(?:order\s+)?(?:{ID}|order|it|this|that))?"
_DONE_EN = (
    r"(?:processed|issued|initiated|submitted|completed|complete|confirmed|approved|successful|done|finali[sz]ed"
    r"|credited|sent|put\s+through)"
)
_DONE_ES = (
    r"(?:procesad[oa]|tramitad[oa]|emitid[oa]|realizad[oa]|completad[oa]|confirmad[oa]|aprobad[oa]|enviad[oa]"
    r"|gestionad[oa]|hech[oa]|exitos[oa])"
)

NOUN_PHRASES: tuple[Phrase, ...] = (
    Phrase(
        "en",
        r"\b(?:i|we)(?:'ve|’ve|\s+have|\s+had)?\s+{ADV}"
        r"(?:processed|issued|initiated|submitted|completed|confirmed|requested|approved|arranged|sent|put\s+through)\s+"
        r"(?:(?:the|your|a|an|full|partial|complete)\s+)*" + _NOUN_EN + r"\b",
        "I've processed the cancellation of REF-1004.",
        "A generic verb with the action as its object: 'I've issued a full refund', 'I have submitted "
        "the cancellation'. 'I've sent your refund' is a refund, not a sending: a noun phrase wins "
        "over a template on the same words.",
    ),
    Phrase(
        "en",
        _NOUN_EN + _OF_ORDER + r"\s+(?:(?:has|have|had)\s+{ADV}been\s+|is\s+|was\s+)?{ADV}" + _DONE_EN + r"\b",
        "Your refund has been issued to your card.",
        "The action as the subject: 'your refund has been issued', 'cancellation confirmed', 'the "
        "cancellation request for REF-1005 was submitted'.",
    ),
    Phrase(
        "en",
        _NOUN_EN + _OF_ORDER + r"\s+(?:has\s+)?(?:gone|went)\s+through\b",
        "The cancellation went through.",
        "'Your cancellation went through': done, in so many words.",
    ),
    Phrase(
        "es",
        r"\b(?:he|hemos)\s+{ADV_ES}"
        r"(?:procesado|tramitado|emitido|realizado|solicitado|completado|confirmado|gestionado|aprobado|hecho)\s+"
        r"(?:(?:el|la|tu|su|un|una)\s+)*" + _NOUN_ES,
        "He procesado la cancelación del pedido REF-1004.",
        "Un verbo genérico con la acción como objeto: 'he tramitado el reembolso'.",
    ),
    Phrase(
        "es",
        r"\bse\s+(?:(?:le|les|te|me|nos|os)\s+)?(?:ha|han|había|habían)\s+{ADV_ES}"
        r"(?:enviado|procesado|emitido|tramitado|realizado|completado|hecho|aprobado|confirmado|gestionado)\s+"
        r"(?:(?:el|la|tu|su|un|una)\s+)*" + _NOUN_ES,
        "Se ha procesado la cancelación de su pedido.",
        "La pasiva refleja con la acción como sujeto: 'se ha enviado el reembolso' es un reembolso, no "
        "un envío (gana sobre la plantilla de 'enviar' en la misma cláusula).",
    ),
    Phrase(
        "es",
        r"(?<![\wáéíóúñ])(?:procesé|tramité|emití|realicé|solicité|gestioné|hice)\s+(?:(?:el|la|tu|su|un|una)\s+)*" + _NOUN_ES,
        "Ya tramité el reembolso.",
        "Lo mismo en pretérito: 'tramité el reembolso', 'hice la cancelación'.",
    ),
    Phrase(
        "es",
        _NOUN_ES
        + r"(?:\s+[\w-]+){0,4}?\s+(?:ha\s+sido|fue|se\s+ha|se|est[áa]|qued[óo]|queda)\s+{ADV_ES}(?:"
        + _DONE_ES
        + r"|procesado|tramitado|emitido|realizado|completado|completó|realizó|procesó|tramitó|emitió)\b",
        "El reembolso de su pedido ha sido emitido.",
        "La acción como sujeto: 'el reembolso ha sido emitido', 'la cancelación se ha completado', 'la "
        "cancelación de REF-1004 quedó confirmada'.",
    ),
    Phrase(
        "es",
        r"^\s*" + _NOUN_ES + r"\s+" + _DONE_ES + r"\b",
        "Cancelación completada.",
        "El titular: 'Cancelación completada', 'Reembolso emitido'.",
    ),
)


# -- what keeps a matching phrase from being a claim ----------------------------------------

NEGATORS: dict[Language, tuple[str, ...]] = {
    # Anywhere before the phrase in its clause. "It has not been cancelled" matches no phrase at
    # all (no 'not' may stand between has and been), but "I don't think it has been cancelled",
    # "no order was cancelled", "I'm unable to confirm it was sent" do.
    "en": (
        r"\bnot\b",
        r"n['’]t\b",
        r"\bnever\b",
        r"\bno\b",
        r"\bnothing\b",
        r"\bneither\b",
        r"\bnor\b",
        r"\bcannot\b",
        r"\bunable\b",
        r"\byet\s+to\b",
        r"\bfailed\s+to\b",
        r"\bwithout\b",
    ),
    # Spanish: "no ha sido cancelado", "todavía no se ha enviado", "nunca fue reembolsado".
    "es": (
        r"\bnunca\b",
        r"\bjamás\b",
        r"\btampoco\b",
        r"\bni\b",
        r"\bsin\b",
    ),
}

HEDGES: dict[Language, tuple[str, ...]] = {
    # Before the phrase in its clause, they make it a condition, a report of someone else's
    # words, a check or a wish: not the bot's statement that it is done.
    "en": (
        # A condition or time clause: "once it has been cancelled you'll get an email", "if it was
        # sent", "whether it has been refunded", "as soon as it is cancelled".
        r"\bif\b",
        r"\bwhether\b",
        r"\bonce\b",
        r"\bwhen\b",
        r"\bwhenever\b",
        r"\bafter\b",
        r"\bbefore\b",
        r"\buntil\b",
        r"\bunless\b",
        r"\bas\s+soon\s+as\b",
        r"\bin\s+case\b",
        r"\bprovided\b",
        r"\bassuming\b",
        r"\bso\s+that\b",
        # Someone else's words or belief: "you said it was cancelled", "you mentioned the refund
        # was issued", "I hope it has been sent".
        r"\byou\s+(?:said|mentioned|think|thought|believe|believed|claimed|were\s+told|wrote|say)\b",
        r"\b(?:i|we)\s+hope\b",
        r"\bhoping\b",
        r"\bsupposed\s+to\b",
        # Checking, not stating: "let me make sure it has been cancelled", "to verify it was sent".
        # ("to confirm" is not here: "I'm happy to confirm your order has been cancelled" states it.)
        r"\bmake\s+sure\b",
        r"\bensure\b",
        r"\bto\s+(?:check|verify|see)\b",
        r"\blet\s+me\s+(?:check|verify|see|confirm)\b",
        # What usually happens, not what was done: "refunds are usually processed within 5 days".
        r"\b(?:usually|typically|normally|generally|always|often)\b",
    ),
    # Spanish: "si ha sido enviado", "cuando se haya cancelado", "una vez que esté cancelado",
    # "dijiste que fue cancelado", "para comprobar que se ha enviado", "normalmente se reembolsa".
    "es": (
        r"\bsi\b",
        r"\bcuando\b",
        r"\buna\s+vez\s+que\b",
        r"\ben\s+cuanto\b",
        r"\bhasta\s+que\b",
        r"\bantes\s+de\b",
        r"\bdespués\s+de\s+que\b",
        r"\ben\s+caso\s+de\s+que\b",
        r"\ba\s+menos\s+que\b",
        r"\bpara\s+que\b",
        r"\bpara\s+(?:confirmar|comprobar|verificar|ver)\b",
        r"\b(?:dijo|dijiste|dice|dices|comentó|comentaste|mencionó|mencionaste|cree|crees|creía|pensaba|pensabas)\s+que\b",
        r"\bespero\s+que\b",
        r"\bojalá\b",
        r"\b(?:normalmente|generalmente|habitualmente|suele|suelen)\b",
    ),
}

MODALS: dict[Language, tuple[str, ...]] = {
    # Right before the phrase: "would have been cancelled", "should have been sent", "it'll have
    # been refunded", "might have been updated" speak of what did not (or may not) happen.
    "en": (
        r"\b(?:would|could|should|might|may|must|will|shall)\s+{ADV}$",
        r"['’](?:ll|d)\s+{ADV}$",
    ),
}

LATER_CONDITIONS: dict[Language, tuple[str, ...]] = {
    # After the phrase in its clause. A condition on the customer still to come: "it is
    # cancelled once you confirm", "your order is updated as soon as you reply yes" (present
    # tense only: "I cancelled it after you confirmed" is done).
    "en": (
        r"^\W*(?:[\w-]+\s+){0,6}?(?:once|if|when|as\s+soon\s+as|after|provided)\s+you\s+"
        r"(?:confirm|reply|say|agree|accept|approve|tell|give|answer)\b",
        # What usually happens: "refunds are processed within 5 days", "the page is updated daily".
        r"^\W*(?:[\w-]+\s+){0,3}?(?:within\s+(?:[0-9]+|a\s+few|one|two|three|five|seven|ten)\s*(?:-\s*[0-9]+\s*)?"
        r"(?:business\s+|working\s+)?(?:days?|hours?|weeks?)|usually|typically|normally|every|daily|hourly)\b",
    ),
    "es": (
        r"^\W*(?:[\w-]+\s+){0,6}?(?:en\s+cuanto|si|cuando|una\s+vez\s+que|tan\s+pronto\s+como)\s+(?:me\s+|nos\s+|lo\s+)?"
        r"(?:confirm|acept|dig|respond)",
        r"^\W*(?:[\w-]+\s+){0,3}?(?:en\s+un\s+plazo|normalmente|cada|a\s+diario)\b",
    ),
}

ABOUT_THE_CARRIER: tuple[str, ...] = (
    # A change or a sending in the same clause as these is the carrier's news, reported: "the
    # tracking was updated this morning", "the package was sent from the warehouse by UPS".
    # In every language (the carriers' names are the same in all).
    r"\btracking\b",
    r"\bcarrier\b",
    r"\bcourier\b",
    r"\bups\b",
    r"\bfedex\b",
    r"\bdhl\b",
    r"\busps\b",
    r"\bwarehouse\b",
    r"\bestimated\s+delivery\b",
    r"\bseguimiento\b",
    r"\btransportista\b",
    r"\bmensajería\b",
    r"\balmacén\b",
    # Italian, French, Portuguese, German.
    r"\bcorriere\b",
    r"\btracciamento\b",
    r"\bmagazzino\b",
    r"\btransporteur\b",
    r"\bsuivi\b",
    r"\bentrepôt\b",
    r"\btransportadora\b",
    r"\brastreamento\b",
    r"\barmazém\b",
    r"\bsendungsverfolgung\b",
    r"\bpaketdienst\b",
    r"\bzusteller\b",
    r"\blager\b",
)

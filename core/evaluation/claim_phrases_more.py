"""The claims table in Italian, French, Portuguese and German: how a bot says it has done
something in the other languages the offline customer speaks, with the words that keep a phrase
from being a claim in each. Built as parley.core.evaluation.claim_phrases (read its docstring
first: placeholders, how a clause is read); parley.core.evaluation.claims merges the two.

Every phrase carries an example it must catch (as a cancellation: tests/test_eval_claims.py holds
each to it) and why it is here; the labelled set (tests/data/claims_labelled.yaml) holds near
misses in each language, and bench/bench_claims.py prints precision and recall per language.

German puts the participle at the end of its clause ("Ich habe Ihre Bestellung storniert"), so
its phrases allow the object between the auxiliary and the participle; a negation anywhere in
that span ("ist noch nicht storniert") keeps it from being a claim.
"""

from __future__ import annotations

from parley.core.evaluation.claim_phrases import Action, Language, Phrase

__all__ = [
    "ADVERBS_MORE",
    "HEDGES_MORE",
    "LATER_CONDITIONS_MORE",
    "MODALS_MORE",
    "NEGATORS_MORE",
    "NEGATED_INSIDE",
    "NOUNS_MORE",
    "NOUN_PHRASES_MORE",
    "PARTICIPLES_MORE",
    "STEMS_MORE",
    "TEMPLATES_MORE",
]

ADVERBS_MORE: dict[Language, tuple[str, ...]] = {
    # Between the auxiliary and the participle without changing what is claimed.
    "it": ("già", "appena", "ora", "adesso", "correttamente", "con successo", "anche", "finalmente", "regolarmente", "ufficialmente"),
    "fr": ("déjà", "bien", "maintenant", "correctement", "avec succès", "aussi", "également", "finalement", "enfin", "tout juste"),
    "pt": ("já", "agora", "corretamente", "com sucesso", "também", "finalmente"),
    "de": ("bereits", "schon", "soeben", "gerade", "jetzt", "nun", "erfolgreich", "auch", "endlich", "sofort"),
}

PARTICIPLES_MORE: dict[Action, dict[str, str]] = {
    # it, fr, pt, de: the participle in every gender and number. pret_pt: the first-person
    # preterite, the common Portuguese "I did" ("cancelei"); inf_pt, inf_fr: the infinitive after
    # "acabei de", "je viens de".
    "cancel": {
        "it": r"(?:annullat|cancellat|disdett)[oaie]",
        "fr": r"annul[ée]e?s?",
        "inf_fr": r"annuler",
        "pt": r"(?:cancelad|anulad)[oa]s?",
        "pret_pt": r"cancelei|anulei",
        "inf_pt": r"cancelar|anular",
        "de": r"storniert|annulliert|gecancel(?:l?ed|t)",
    },
    "refund": {
        "it": r"rimborsat[oaie]",
        "fr": r"rembours[ée]e?s?",
        "inf_fr": r"rembourser",
        "pt": r"reembolsad[oa]s?|estornad[oa]s?",
        "pret_pt": r"reembolsei|estornei",
        "inf_pt": r"reembolsar|estornar",
        "de": r"(?:zurück|rück)?erstattet|zurückgezahlt|zurückgebucht",
    },
    "change": {
        "it": r"(?:modificat|aggiornat|cambiat)[oaie]",
        "fr": r"modifi[ée]e?s?|chang[ée]e?s?|mise?s?\s+à\s+jour",
        "inf_fr": r"modifier|changer|mettre\s+à\s+jour",
        "pt": r"(?:alterad|atualizad|modificad|mudad)[oa]s?",
        "pret_pt": r"alterei|atualizei|modifiquei|mudei",
        "inf_pt": r"alterar|atualizar|modificar|mudar",
        "de": r"geändert|geaendert|aktualisiert|angepasst|abgeändert",
    },
    "send": {
        # Not the carrier's "spedito"/"expédié"/"versandt" of an order that shipped: a sending is
        # backed by an order that shipped or arrived, as in English.
        "it": r"(?:inviat|spedit|mandat)[oaie]",
        "fr": r"envoy[ée]e?s?|exp[ée]di[ée]e?s?",
        "inf_fr": r"envoyer|exp[ée]dier",
        "pt": r"(?:enviad|despachad|expedid|mandad)[oa]s?",
        "pret_pt": r"enviei|despachei|mandei",
        "inf_pt": r"enviar|despachar|mandar|expedir",
        "de": r"gesendet|gesandt|geschickt|verschickt|versandt|versendet|zugeschickt|zugesandt",
    },
}

STEMS_MORE: dict[Action | str, tuple[str, ...]] = {
    # Substrings of the lower-cased clause every form above and every noun below holds.
    "cancel": ("annul", "cancellat", "disdett", "storniert", "gecancel", "cancelad", "cancelei", "anulad", "anulei", "cancelar"),
    "refund": ("rimborsat", "rembours", "reembols", "estorn", "erstattet", "zurückgez", "zurückgeb"),
    "change": (
        "modifi",
        "aggiornat",
        "cambiat",
        "changé",
        "à jour",
        "alter",
        "atualiz",
        "mudad",
        "mudei",
        "mudar",
        "geändert",
        "geaendert",
        "aktualisiert",
        "angepasst",
    ),
    "send": ("inviat", "spedit", "mandat", "envoy", "expédi", "expedi", "envi", "despach", "mand", "sendet", "sandt", "schickt"),
    "noun": (
        "annullamento",
        "cancellazione",
        "rimborso",
        "annulation",
        "remboursement",
        "cancelamento",
        "reembolso",
        "estorno",
        "stornierung",
        "erstattung",
    ),
}

NOUNS_MORE: dict[str, Action] = {
    "annullamento": "cancel",
    "cancellazione": "cancel",
    "rimborso": "refund",
    "annulation": "cancel",
    "remboursement": "refund",
    "cancelamento": "cancel",
    "reembolso": "refund",
    "estorno": "refund",
    "stornierung": "cancel",
    "rückerstattung": "refund",
    "erstattung": "refund",
}
_NOUN_IT = r"(?P<noun>annullamento|cancellazione|rimborso)"
_NOUN_FR = r"(?P<noun>annulation|remboursement)"
_NOUN_PT = r"(?P<noun>cancelamento|reembolso|estorno)"
_NOUN_DE = r"(?P<noun>stornierung|rückerstattung|erstattung)"

TEMPLATES_MORE: tuple[Phrase, ...] = (
    Phrase(
        "it",
        r"\b(?:(?:ti|vi|gli|le|ci)\s+)?(?:(?:te|ve|glie|se)\s*)?(?:l['’]\s*|l[oaie]\s+)?(?:ho|abbiamo)\s+{ADV_IT}{P_IT}\b",
        "Ho annullato il tuo ordine REF-1004.",
        "Il bot in prima persona, passato prossimo: 'ho annullato', 'l'ho annullato', 'te l'ho inviato', 'abbiamo appena spedito'.",
    ),
    Phrase(
        "it",
        r"\b(?:è|e['’]|sono|era|erano)\s+{ADV_IT}stat[oaie]\s+{ADV_IT}{P_IT}\b",
        "Il tuo ordine REF-1004 è stato annullato.",
        "Il passivo: 'è stato annullato', 'sono stati rimborsati', 'è già stata modificata'.",
    ),
    Phrase(
        "it",
        r"\b(?:è|e['’]|sono|risulta|risultano|fu|furono|venne|vennero)\s+{ADV_IT}{P_IT}\b",
        "L'ordine REF-1004 è ora annullato.",
        "Lo stato: 'è annullato', 'risulta annullato', 'venne annullato'. Non 'può essere annullato' né 'sarà annullato'.",
    ),
    Phrase(
        "fr",
        r"(?:\bj['’]\s*|\bje\s+(?:vous\s+|te\s+)?(?:l['’]\s*|les\s+)?|\bnous\s+(?:vous\s+|t['’]\s*)?(?:l['’]\s*|les\s+)?)"
        r"(?:ai|avons)\s+{ADV_FR}{P_FR}",
        "J'ai annulé votre commande REF-1004.",
        "Le bot à la première personne, passé composé : « j'ai annulé », « je l'ai annulée », « nous vous avons envoyé ».",
    ),
    Phrase(
        "fr",
        r"\b(?:a|ont|avait|avaient)\s+{ADV_FR}été\s+{ADV_FR}{P_FR}",
        "Votre commande REF-1004 a été annulée.",
        "Le passif : « a été annulée », « a bien été remboursée », « ont été envoyés ».",
    ),
    Phrase(
        "fr",
        r"\b(?:est|sont|était|étaient)\s+{ADV_FR}{P_FR}",
        "Votre commande REF-1004 est maintenant annulée.",
        "L'état : « est annulée », « est bien annulée ». Pas « peut être annulée » ni « sera annulée ».",
    ),
    Phrase(
        "fr",
        r"\b(?:viens|vient|venons)\s+d['’]\s*(?:être\s+{P_FR}|{INF_FR})",
        "Je viens d'annuler votre commande REF-1004.",
        "« Je viens d'annuler », « elle vient d'être annulée » : c'est fait à l'instant.",
    ),
    Phrase(
        "pt",
        r"(?<![\w])(?:já\s+)?(?:(?:o|a|os|as|lhe|lhes|te|vos)\s+)?(?:{PRET_PT})(?:-(?:o|a|os|as|lhe|lhes))?(?![\w])",
        "Cancelei o seu pedido REF-1004.",
        "O bot na primeira pessoa, pretérito perfeito: 'cancelei', 'já o cancelei', 'enviei-lhe'.",
    ),
    Phrase(
        "pt",
        r"\b(?:foi|foram|tinha\s+sido|tinham\s+sido|tem\s+sido)\s+{ADV_PT}{P_PT}\b",
        "O seu pedido REF-1004 foi cancelado.",
        "A passiva: 'foi cancelado', 'foram enviados', 'tinha sido reembolsado'.",
    ),
    Phrase(
        "pt",
        r"\b(?:está|estão|fica|ficou|ficaram|encontra-se)\s+{ADV_PT}{P_PT}\b",
        "O pedido REF-1004 já está cancelado.",
        "O estado: 'está cancelado', 'ficou cancelado'. Não 'pode ser cancelado' nem 'será cancelado'.",
    ),
    Phrase(
        "pt",
        r"\b(?:tenho|temos|tinha|tínhamos)\s+{ADV_PT}{P_PT}\b",
        "Eu já tinha cancelado o pedido REF-1004.",
        "O mais-que-perfeito: 'tinha cancelado', 'já tínhamos enviado'.",
    ),
    Phrase(
        "pt",
        r"\bacab(?:ei|amos)\s+de\s+(?:{INF_PT})(?:-(?:o|a|os|as|lo|la|los|las))?\b",
        "Acabei de cancelar o seu pedido REF-1004.",
        "'Acabei de cancelar': I have just cancelled it.",
    ),
    Phrase(
        "de",
        r"\b(?:(?:ich|wir)\s+(?:habe|haben|hab|hatte|hatten)|(?:habe|haben|hab|hatte|hatten)\s+(?:ich|wir))\b(?:[^.;:!?]|(?<=[0-9])\.){0,80}?\b{P_DE}\b",
        "Ich habe Ihre Bestellung REF-1004 storniert.",
        "Der Bot in der ersten Person, Perfekt: 'ich habe Ihre Bestellung storniert', 'soeben habe ich sie storniert' (das "
        "Partizip am Ende, das Objekt dazwischen).",
    ),
    Phrase(
        "de",
        r"\b(?:wurde|wurden|ist|sind|war|waren)\b(?:[^.;:!?]|(?<=[0-9])\.){0,60}?\b{P_DE}\b",
        "Ihre Bestellung REF-1004 wurde storniert.",
        "Passiv und Zustand: 'wurde storniert', 'ist bereits storniert (worden)'. Nicht 'wird storniert' (noch nicht getan), "
        "nicht 'kann storniert werden' (ein 'werden' danach: LATER_CONDITIONS_MORE).",
    ),
)

_DONE_IT = r"(?:emess|elaborat|effettuat|completat|confermat|approvat|eseguit|inviat|processat|avviat|disposto|dispost)[oa]?"
_DONE_FR = r"(?:effectu|émis|emis|trait|valid|confirm|approuv|envoy|finalis|termin|complét|initi|lanc)(?:[ée]e?s?)?"
_DONE_PT = r"(?:processad|emitid|efetuad|realizad|concluíd|concluid|confirmad|aprovad|feit|solicitad)[oa]"
_DONE_DE = r"(?:durchgeführt|veranlasst|bearbeitet|ausgelöst|abgeschlossen|bestätigt|eingeleitet|erfolgt|angewiesen|freigegeben)"

NOUN_PHRASES_MORE: tuple[Phrase, ...] = (
    Phrase(
        "it",
        r"\b(?:ho|abbiamo)\s+{ADV_IT}(?:emesso|elaborato|effettuato|completato|confermato|avviato|richiesto|processato|eseguito|disposto)\s+"
        r"(?:(?:il|lo|la|un|una|tuo|tua|suo|sua|vostro|vostra)\s+|l['’]\s*)*" + _NOUN_IT,
        "Ho effettuato l'annullamento dell'ordine REF-1004.",
        "Un verbo generico con l'azione come oggetto: 'ho emesso il rimborso'.",
    ),
    Phrase(
        "it",
        _NOUN_IT + r"(?:\s+[\w'’-]+){0,4}?\s+(?:(?:è|e['’])\s+stat[oa]|è|e['’])\s+{ADV_IT}" + _DONE_IT + r"\b",
        "Il rimborso del tuo ordine è stato emesso.",
        "L'azione come soggetto: 'il rimborso è stato emesso', 'la cancellazione è stata confermata'.",
    ),
    Phrase(
        "fr",
        r"(?:\bj['’]\s*|\bnous\s+)(?:ai|avons)\s+{ADV_FR}(?:effectué|émis|traité|lancé|initié|validé|confirmé|demandé|procédé\s+à)\s+"
        r"(?:(?:le|la|un|une|votre|ton|ta|au|à\s+la)\s+|l['’]\s*)*" + _NOUN_FR,
        "J'ai effectué l'annulation de votre commande REF-1004.",
        "Un verbe générique avec l'action pour objet : « j'ai émis le remboursement ».",
    ),
    Phrase(
        "fr",
        _NOUN_FR + r"(?:\s+[\w'’-]+){0,4}?\s+(?:a\s+{ADV_FR}été|est)\s+{ADV_FR}" + _DONE_FR + r"\b",
        "Le remboursement de votre commande a été effectué.",
        "L'action pour sujet : « le remboursement a été effectué », « l'annulation est confirmée ».",
    ),
    Phrase(
        "pt",
        r"(?<![\w])(?:processei|emiti|efetuei|realizei|solicitei|fiz|concluí|conclui)\s+(?:(?:o|a|um|uma|seu|sua|teu|tua)\s+)*" + _NOUN_PT,
        "Efetuei o cancelamento do seu pedido REF-1004.",
        "Um verbo genérico com a ação como objeto: 'processei o reembolso'.",
    ),
    Phrase(
        "pt",
        _NOUN_PT + r"(?:\s+[\w-]+){0,4}?\s+(?:foi|está|ficou)\s+{ADV_PT}" + _DONE_PT + r"\b",
        "O reembolso do seu pedido foi processado.",
        "A ação como sujeito: 'o reembolso foi processado', 'o cancelamento está confirmado'.",
    ),
    Phrase(
        "it",
        r"^\s*" + _NOUN_IT + r"\s+" + _DONE_IT + r"\b",
        "Annullamento completato.",
        "Il titolo: 'Annullamento completato', 'Rimborso emesso'.",
    ),
    Phrase(
        "fr",
        r"^\s*" + _NOUN_FR + r"\s+" + _DONE_FR + r"\b",
        "Annulation confirmée.",
        "Le titre : « Annulation confirmée », « Remboursement effectué ».",
    ),
    Phrase(
        "pt",
        r"^\s*" + _NOUN_PT + r"\s+" + _DONE_PT + r"\b",
        "Cancelamento concluído.",
        "O título: 'Cancelamento concluído', 'Reembolso processado'.",
    ),
    Phrase(
        "de",
        r"^\s*" + _NOUN_DE + r"\s+" + _DONE_DE + r"\b",
        "Stornierung abgeschlossen.",
        "Die Überschrift: 'Stornierung abgeschlossen', 'Rückerstattung veranlasst'.",
    ),
    Phrase(
        "de",
        r"\b(?:ich|wir)\s+(?:habe|haben)\s+(?:(?:die|ihre|eine|deine|ihnen|dir)\s+)*" + _NOUN_DE + r"\b[^.;:!?]{0,40}?\b"
        r"(?:durchgeführt|veranlasst|bearbeitet|ausgelöst|eingeleitet|angewiesen|beantragt|abgeschlossen)\b",
        "Ich habe die Stornierung Ihrer Bestellung veranlasst.",
        "Ein allgemeines Verb mit der Aktion als Objekt: 'ich habe die Rückerstattung veranlasst'.",
    ),
    Phrase(
        "de",
        _NOUN_DE + r"(?:\s+[\w-]+){0,4}?\s+(?:wurde|ist)\s+{ADV_DE}" + _DONE_DE + r"\b",
        "Die Stornierung Ihrer Bestellung wurde durchgeführt.",
        "Die Aktion als Subjekt: 'die Rückerstattung wurde veranlasst', 'die Stornierung ist abgeschlossen'.",
    ),
)

NEGATORS_MORE: dict[Language, tuple[str, ...]] = {
    "it": (r"\bnon\b", r"\bmai\b", r"\bnessun[oa]?\b", r"\bné\b", r"\bsenza\b", r"\bancora\s+da\b"),
    # French negation mostly breaks a phrase on its own ("n'a pas été annulée" matches none):
    # these catch the rest ("aucune commande n'a été annulée", "sans avoir été annulée").
    "fr": (r"\bpas\b", r"\bjamais\b", r"\baucune?\b", r"\brien\b", r"\bsans\b", r"\bn['’]", r"\bni\b"),
    "pt": (r"\bnão\b", r"\bnao\b", r"\bnunca\b", r"\bjamais\b", r"\bnenhum[a]?\b", r"\bnem\b", r"\bsem\b", r"\bainda\s+por\b"),
    "de": (r"\bnicht\b", r"\bnie\b", r"\bniemals\b", r"\bkein(?:e|en|em|er|es)?\b", r"\bnichts\b", r"\bweder\b", r"\bohne\b"),
}

NEGATED_INSIDE: frozenset[Language] = frozenset({"de"})
"""Languages whose phrases span words between auxiliary and participle: a negator inside the
matched words counts too ("ist noch nicht storniert")."""

HEDGES_MORE: dict[Language, tuple[str, ...]] = {
    "it": (
        r"\bse\b",
        r"\bquando\b",
        r"\buna\s+volta\s+che\b",
        r"\bnon\s+appena\b",
        r"\bprima\s+(?:che|di)\b",
        r"\bdopo\s+che\b",
        r"\bfinché\b",
        r"\ba\s+meno\s+che\b",
        r"\baffinché\b",
        r"\bper\s+(?:verificare|controllare|vedere)\b",
        r"\b(?:hai|ha|avete)\s+detto\s+che\b",
        r"\bspero\s+che\b",
        r"\b(?:di\s+solito|solitamente|normalmente|generalmente|sempre)\b",
    ),
    "fr": (
        r"\bsi\b",
        r"\bs['’]il\b",
        r"\bquand\b",
        r"\blorsque\b",
        r"\bune\s+fois\s+que\b",
        r"\bdès\s+que\b",
        r"\bavant\s+(?:que|de)\b",
        r"\baprès\s+que\b",
        r"\bjusqu['’]à\s+ce\s+que\b",
        r"\bà\s+moins\s+que\b",
        r"\bpour\s+(?:vérifier|voir|contrôler)\b",
        r"\bvous\s+(?:avez\s+dit|dites|pensez|croyez)\b",
        r"\bj['’]espère\b",
        r"\b(?:normalement|généralement|habituellement|d['’]habitude|toujours)\b",
    ),
    "pt": (
        r"\bse\b",
        r"\bquando\b",
        r"\bassim\s+que\b",
        r"\blogo\s+que\b",
        r"\bdepois\s+que\b",
        r"\bantes\s+(?:que|de)\b",
        r"\baté\s+que\b",
        r"\ba\s+menos\s+que\b",
        r"\bcaso\b",
        r"\bpara\s+(?:verificar|confirmar|ver)\b",
        r"\b(?:você|voce)\s+(?:disse|falou|acha)\b",
        r"\bespero\s+que\b",
        r"\b(?:normalmente|geralmente|habitualmente|sempre)\b",
    ),
    "de": (
        r"\bwenn\b",
        r"\bfalls\b",
        r"\bob\b",
        r"\bsobald\b",
        r"\bnachdem\b",
        r"\bbevor\b",
        r"\bbis\b",
        r"\bsofern\b",
        r"\bdamit\b",
        r"\bum\b[^.;:!?]{0,40}?\bzu\s+(?:prüfen|sehen|bestätigen)\b",
        r"\bsie\s+(?:sagten|meinten|glauben)\b",
        r"\bich\s+hoffe\b",
        r"\b(?:normalerweise|üblicherweise|in\s+der\s+regel|meistens|immer)\b",
    ),
}

MODALS_MORE: dict[Language, tuple[str, ...]] = {
    # Right before the phrase: what could or should have happened.
    "it": (r"\b(?:potrebbe|dovrebbe|sarebbe|avrebbe|potrà|dovrà|sarà)\s+{ADV_IT}$",),
    "fr": (r"\b(?:pourrait|devrait|aurait|serait|sera|pourra|devra)\s+{ADV_FR}$",),
    "pt": (r"\b(?:poderia|deveria|teria|seria|será|poderá|deverá)\s+{ADV_PT}$",),
    "de": (r"\b(?:könnte|sollte|müsste|würde|wird|kann|soll|muss)\s+{ADV_DE}$",),
}

LATER_CONDITIONS_MORE: dict[Language, tuple[str, ...]] = {
    # After the phrase: a condition on the customer still to come, or what usually happens.
    "it": (
        r"^\W*(?:[\w'’-]+\s+){0,6}?(?:non\s+appena|se|quando|una\s+volta\s+che|dopo\s+che)\s+(?:mi\s+|ci\s+)?(?:confermi|conferma|rispond|accett|dic)",
        r"^\W*(?:[\w'’-]+\s+){0,3}?(?:entro\s+[0-9]+|di\s+solito|normalmente|ogni)\b",
    ),
    "fr": (
        r"^\W*(?:[\w'’-]+\s+){0,6}?(?:dès\s+que|si|quand|une\s+fois\s+que|lorsque)\s+vous\s+(?:confirm|répond|accept|dit)",
        r"^\W*(?:[\w'’-]+\s+){0,3}?(?:sous\s+[0-9]+|dans\s+un\s+délai|normalement|chaque)\b",
    ),
    "pt": (
        r"^\W*(?:[\w-]+\s+){0,6}?(?:assim\s+que|se|quando|logo\s+que)\s+(?:você\s+|voce\s+)?(?:me\s+)?(?:confirm|respond|aceit|diss)",
        r"^\W*(?:[\w-]+\s+){0,3}?(?:em\s+até|dentro\s+de|normalmente|todos\s+os)\b",
    ),
    "de": (
        # "storniert werden" (can/will be cancelled) is not done; "storniert worden" is.
        r"^\s*(?:zu\s+)?werden\b",
        r"^\W*(?:[\w-]+\s+){0,6}?(?:sobald|wenn|falls|nachdem)\s+sie\s+(?:bestätig|zustimm|antwort|ja\s+sag)",
        r"^\W*(?:[\w-]+\s+){0,3}?(?:innerhalb\s+von|normalerweise|in\s+der\s+regel|täglich)\b",
    ),
}

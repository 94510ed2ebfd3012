"""A small built-in phrasebook for the offline user: what a customer says, in a few languages.

Languages: English, Spanish, Italian, Portuguese, French and German. Any other language falls
back to English (`lookup` says so, and the offline user writes a note).

Each entry is a list of templates for one *intent*; a rephrase takes the next template.
Templates use `{order_id}` (the id of the goal's record, kept exactly as the goal wrote it),
`{goal}` (the goal text, left in the language it was written in: the phrasebook does not translate
free text) and `{facts}` (what the customer knows of itself that the bot asked for: "email:
maya@example.com"). The order intents (cancel, track, list, status, policy, keep...) are said on a
world whose tools answer those kinds of goal (the order world); on any world the customer says its
free goals, confirms or declines an action (`confirm`, `decline`), gives an id and its own
credentials (`give_facts`).

The English sentences are written so that the offline bot understands them (it keys on words
like "cancel", "track", "where", "list ... orders", "yes"/"ok"); the filler of long phrases
avoids those words so it cannot change what a message means. Other languages are written as a
native speaker would, so the offline bot understands some of them (Spanish "cancelar") and not
others (French "annuler"): that is what a language switch is meant to test. Every "yes" carries
an "ok"/"okay", as real customers often write, so a confirmation works in every language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Intent = Literal[
    "greeting",
    "cancel",
    "track",
    "list",
    "status",
    "policy",
    "ask",  # a goal that is a question ("how much will it cost")
    "want",  # a goal that names a thing ("a medium pizza with cheese")
    "do",  # a goal that is an instruction ("book a table for two"), or an order goal that says more
    "say",  # a goal that is a statement ("I am customer C-200, switch to my account")
    "yes",
    "no",
    "keep",  # the reply to a confirmation question: no, the customer changed their mind and keeps the order
    "keep_after",  # the same said on its own, naming the order
    "hesitate",
    "rerequest",
    "give_id",
    "no_id",
    "confirm",  # yes to any action a bot asks to confirm (not only a cancellation)
    "decline",  # no to an action the customer did not ask for
    "give_facts",  # the customer's own credentials the bot asked for
    "farewell",
    "topic_change",
    "rephrase_lead",
    "change_mind_lead",
]

ENGLISH = "en"


@dataclass(frozen=True)
class Phrasebook:
    """The phrases of one language. `also` joins several goals into one message."""

    code: str
    name: str
    phrases: dict[str, tuple[str, ...]]
    long_open: tuple[str, ...]
    long_close: tuple[str, ...]
    also: str = ""
    lower_after_also: bool = False
    aliases: tuple[str, ...] = field(default_factory=tuple)

    def templates(self, intent: str) -> tuple[str, ...]:
        return self.phrases.get(intent) or PHRASEBOOKS[ENGLISH].phrases[intent]


_EN = Phrasebook(
    code="en",
    name="English",
    aliases=("english", "en", "inglés", "ingles", "inglese", "anglais", "englisch"),
    also="Also,",
    lower_after_also=True,
    phrases={
        "greeting": ("Hi!", "Hello,", "Hi there,"),
        "cancel": (
            "I'd like to cancel order {order_id}, please.",
            "Could you cancel my order {order_id}?",
            "Please cancel {order_id} for me.",
            "I need to cancel the order {order_id}.",
        ),
        "track": (
            "Where is my order {order_id}?",
            "Can you track order {order_id} for me?",
            "Could you give me the tracking details for {order_id}?",
            "When will {order_id} arrive?",
        ),
        "list": (
            "Could you list my orders, please?",
            "Can I see all my orders?",
            "What orders do I have on my account?",
            "Please show me all of my orders.",
        ),
        "status": (
            "What's in order {order_id}?",
            "Can you give me the details of order {order_id}?",
            "What is the status of {order_id}?",
        ),
        "policy": (
            "What is your cancellation policy?",
            "How many days do I have to cancel an order?",
            "What are the rules for cancelling an order?",
        ),
        "ask": ("{Goal}?", "Could you tell me {goal}?", "I was wondering, {goal}?"),
        "want": ("I'd like {goal}.", "Can I get {goal}, please?", "I'm interested in {goal}."),
        "do": ("Please {goal}.", "Could you {goal}?", "I need you to {goal}."),
        "say": ("{Goal}.", "As I said, {goal}.", "Let me be clear: {goal}."),
        "yes": ("Yes, please cancel it.", "Yes, go ahead.", "Yes, I confirm."),
        "no": ("No, please don't cancel that order.", "No, leave that one as it is."),
        "keep": (
            "No, I've changed my mind: I'll keep the order. Please don't cancel it.",
            "No, wait, I changed my mind. I want to keep it, so please don't cancel it.",
        ),
        "keep_after": (
            "I've changed my mind about order {order_id}: I'd like to keep it, please don't cancel it.",
            "About {order_id}: I changed my mind and want to keep it. Please don't cancel it.",
        ),
        "hesitate": (
            "Hmm, wait... no, I'm not sure anymore. Let me think about it.",
            "Wait, no. I need to think about it first.",
        ),
        "rerequest": (
            "Sorry, I changed my mind again: please cancel order {order_id} after all.",
            "Actually, I've thought it over. Please cancel {order_id} after all.",
        ),
        "give_id": ("It's {order_id}.", "The order id is {order_id}."),
        "no_id": ("I'm afraid I don't have the order id at hand.",),
        "confirm": ("Yes, go ahead.", "Yes, I confirm.", "Yes, please do that."),
        "decline": ("No, please don't do that.", "No, leave it as it is."),
        "give_facts": ("Sure: {facts}.", "Here you go: {facts}.", "Of course: {facts}."),
        "farewell": (
            "Thanks, that's all I needed. Bye!",
            "Great, thank you for your help. Goodbye!",
            "Perfect, thanks a lot. Bye!",
        ),
        "topic_change": ("Let's leave that for now.", "Forget that for a moment."),
        "rephrase_lead": ("Sorry, let me put it another way:", "Let me rephrase:", "What I mean is:"),
        "change_mind_lead": ("Hmm, I was going to ask something else first... forget it, I changed my mind.",),
    },
    long_open=(
        "Hello there, I hope you are doing well. I am writing because, to be perfectly honest with "
        "you, I have been going back and forth about this for a while and finally decided to reach out.",
        "Good afternoon, I hope all is well on your side. I will try to explain myself as clearly as I "
        "can, although I tend to ramble a little, so please bear with me for a moment.",
    ),
    long_close=(
        "I would really appreciate your help with this whenever you get the chance, and I am grateful "
        "in advance for your patience and your kindness.",
        "It would mean a lot to me, honestly, and I am grateful for any help you can give me with this.",
    ),
)

_ES = Phrasebook(
    code="es",
    name="Spanish",
    aliases=("spanish", "es", "español", "espanol", "castellano", "spagnolo", "espagnol", "spanisch"),
    also="Además,",
    phrases={
        "greeting": ("¡Hola!", "Buenos días,"),
        "cancel": (
            "Quiero cancelar el pedido {order_id}, por favor.",
            "¿Podría cancelar mi pedido {order_id}?",
            "Necesito cancelar el pedido {order_id}.",
        ),
        "track": (
            "¿Dónde está mi pedido {order_id}?",
            "¿Me puede dar el seguimiento del pedido {order_id}?",
            "¿Cuándo llegará el pedido {order_id}?",
        ),
        "list": ("¿Puede mostrarme todos mis pedidos?", "Quisiera ver la lista de mis pedidos."),
        "status": ("¿Qué contiene el pedido {order_id}?", "¿Cuál es el estado del pedido {order_id}?"),
        "policy": ("¿Cuántos días tengo para cancelar un pedido?", "¿Cuál es la política de cancelación?"),
        "ask": ("Tengo una pregunta: {goal}.", "¿Me puede decir esto: {goal}?"),
        "want": ("Quisiera esto: {goal}.", "¿Me puede ayudar con esto: {goal}?"),
        "do": ("Quisiera hacer esto: {goal}.", "¿Me puede ayudar con esto: {goal}?"),
        "say": ("{Goal}.",),
        "yes": ("Sí, ok, cancélelo por favor.", "Sí, ok, adelante."),
        "no": ("No, por favor no cancele ese pedido.",),
        "keep": ("No, he cambiado de opinión: me quedo con el pedido. Por favor, no lo cancele.",),
        "keep_after": ("He cambiado de opinión sobre el pedido {order_id}: quiero conservarlo, no lo cancele, por favor.",),
        "hesitate": ("Mmm, espere... no, ya no estoy seguro. Déjeme pensarlo.",),
        "rerequest": ("Perdone, he cambiado de opinión otra vez: cancele el pedido {order_id}, por favor.",),
        "give_id": ("Es el {order_id}.",),
        "no_id": ("No tengo el número de pedido a mano.",),
        "confirm": ("Sí, ok, adelante.", "Sí, ok, lo confirmo."),
        "decline": ("No, por favor no lo haga.",),
        "give_facts": ("Claro: {facts}.", "Aquí tiene: {facts}."),
        "farewell": ("Gracias, eso es todo. ¡Adiós!", "Muchas gracias por su ayuda. ¡Hasta luego!"),
        "topic_change": ("Dejémoslo por ahora.",),
        "rephrase_lead": ("Perdone, lo digo de otra manera:", "Me explico mejor:"),
        "change_mind_lead": ("Mmm, iba a preguntar otra cosa primero... olvídelo, he cambiado de opinión.",),
    },
    long_open=(
        "Hola, buenas, espero que esté muy bien. Le escribo porque, la verdad, llevo un rato dándole "
        "vueltas a esto y al final he decidido consultarlo con ustedes.",
    ),
    long_close=("Muchísimas gracias de antemano por su ayuda y por su paciencia, de verdad que se lo agradezco.",),
)

_IT = Phrasebook(
    code="it",
    name="Italian",
    aliases=("italian", "it", "italiano", "italien", "italienisch"),
    also="Inoltre,",
    phrases={
        "greeting": ("Ciao!", "Buongiorno,"),
        "cancel": (
            "Vorrei cancellare l'ordine {order_id}, per favore.",
            "Potete annullare il mio ordine {order_id}?",
            "Devo cancellare l'ordine {order_id}.",
        ),
        "track": (
            "Dov'è il mio ordine {order_id}?",
            "Potete tracciare l'ordine {order_id}?",
            "Quando arriva l'ordine {order_id}?",
        ),
        "list": ("Potete mostrarmi tutti i miei ordini?", "Vorrei vedere l'elenco dei miei ordini."),
        "status": ("Cosa contiene l'ordine {order_id}?", "Qual è lo stato dell'ordine {order_id}?"),
        "policy": ("Quanti giorni ho per cancellare un ordine?", "Qual è la vostra politica di cancellazione?"),
        "ask": ("Ho una domanda: {goal}.", "Mi sapete dire questo: {goal}?"),
        "want": ("Vorrei questo: {goal}.", "Mi potete aiutare con questo: {goal}?"),
        "do": ("Vorrei fare questo: {goal}.", "Mi potete aiutare con questo: {goal}?"),
        "say": ("{Goal}.",),
        "yes": ("Sì, ok, procedete pure.", "Sì, ok, confermo."),
        "no": ("No, per favore non cancellate quell'ordine.",),
        "keep": ("No, ho cambiato idea: tengo l'ordine. Per favore, non cancellatelo.",),
        "keep_after": ("Ho cambiato idea sull'ordine {order_id}: voglio tenerlo, per favore non cancellatelo.",),
        "hesitate": ("Mmm, aspetti... no, non ne sono più sicuro. Ci devo pensare.",),
        "rerequest": ("Scusi, ho cambiato idea di nuovo: cancellate pure l'ordine {order_id}.",),
        "give_id": ("È l'ordine {order_id}.",),
        "no_id": ("Non ho il numero dell'ordine sottomano.",),
        "confirm": ("Sì, ok, procedete pure.", "Sì, ok, confermo."),
        "decline": ("No, per favore non lo fate.",),
        "give_facts": ("Certo: {facts}.", "Ecco: {facts}."),
        "farewell": ("Grazie, è tutto. Arrivederci!", "Grazie mille per l'aiuto. Buona giornata!"),
        "topic_change": ("Lasciamo stare per ora.",),
        "rephrase_lead": ("Scusi, lo dico in un altro modo:", "Mi spiego meglio:"),
        "change_mind_lead": ("Mmm, volevo chiedere un'altra cosa prima... lasci stare, ho cambiato idea.",),
    },
    long_open=(
        "Buongiorno, spero che stia bene. Le scrivo perché, a dire il vero, ci penso da un po' e alla "
        "fine ho deciso di chiedere direttamente a voi.",
    ),
    long_close=("Vi ringrazio davvero tanto in anticipo per l'aiuto e per la pazienza, lo apprezzo moltissimo.",),
)

_PT = Phrasebook(
    code="pt",
    name="Portuguese",
    aliases=(
        "portuguese",
        "pt",
        "português",
        "portugues",
        "portoghese",
        "portugais",
        "portugiesisch",
        "brazilian portuguese",
        "pt-br",
        "pt_br",
    ),
    also="Além disso,",
    phrases={
        "greeting": ("Olá!", "Bom dia,"),
        "cancel": (
            "Quero cancelar o pedido {order_id}, por favor.",
            "Vocês podem cancelar o meu pedido {order_id}?",
            "Preciso cancelar o pedido {order_id}.",
        ),
        "track": (
            "Onde está o meu pedido {order_id}?",
            "Podem rastrear o pedido {order_id}?",
            "Quando chega o pedido {order_id}?",
        ),
        "list": ("Podem mostrar todos os meus pedidos?", "Gostaria de ver a lista dos meus pedidos."),
        "status": ("O que tem no pedido {order_id}?", "Qual é o estado do pedido {order_id}?"),
        "policy": ("Quantos dias tenho para cancelar um pedido?", "Qual é a política de cancelamento?"),
        "ask": ("Tenho uma pergunta: {goal}.", "Podem me dizer isto: {goal}?"),
        "want": ("Gostaria disto: {goal}.", "Podem me ajudar com isto: {goal}?"),
        "do": ("Gostaria de fazer isto: {goal}.", "Podem me ajudar com isto: {goal}?"),
        "say": ("{Goal}.",),
        "yes": ("Sim, ok, pode cancelar.", "Sim, ok, pode seguir."),
        "no": ("Não, por favor não cancelem esse pedido.",),
        "keep": ("Não, mudei de ideia: vou ficar com o pedido. Por favor, não o cancelem.",),
        "keep_after": ("Mudei de ideia sobre o pedido {order_id}: quero ficar com ele, por favor não o cancelem.",),
        "hesitate": ("Hmm, espere... não, já não tenho certeza. Deixe-me pensar.",),
        "rerequest": ("Desculpe, mudei de ideia outra vez: cancelem o pedido {order_id}, por favor.",),
        "give_id": ("É o {order_id}.",),
        "no_id": ("Não tenho o número do pedido aqui comigo.",),
        "confirm": ("Sim, ok, pode seguir.", "Sim, ok, confirmo."),
        "decline": ("Não, por favor não façam isso.",),
        "give_facts": ("Claro: {facts}.", "Aqui está: {facts}."),
        "farewell": ("Obrigado, é tudo. Tchau!", "Muito obrigado pela ajuda. Até logo!"),
        "topic_change": ("Vamos deixar isso para depois.",),
        "rephrase_lead": ("Desculpe, vou dizer de outra forma:", "Explico melhor:"),
        "change_mind_lead": ("Hmm, ia perguntar outra coisa antes... esqueça, mudei de ideia.",),
    },
    long_open=(
        "Olá, boa tarde, espero que esteja tudo bem. Escrevo porque, para ser sincero, já estou a "
        "pensar nisto há algum tempo e finalmente decidi perguntar a vocês.",
    ),
    long_close=("Agradeço imenso desde já pela ajuda e pela paciência, a sério que agradeço muito.",),
)

_FR = Phrasebook(
    code="fr",
    name="French",
    aliases=("french", "fr", "français", "francais", "francese", "francés", "frances", "französisch"),
    also="Aussi,",
    phrases={
        "greeting": ("Bonjour !", "Salut,"),
        "cancel": (
            "Je voudrais annuler la commande {order_id}, s'il vous plaît.",
            "Pouvez-vous annuler ma commande {order_id} ?",
            "Je dois annuler la commande {order_id}.",
        ),
        "track": (
            "Où en est ma commande {order_id} ?",
            "Pouvez-vous suivre la commande {order_id} ?",
            "Quand ma commande {order_id} va-t-elle arriver ?",
        ),
        "list": ("Pouvez-vous me montrer toutes mes commandes ?", "J'aimerais voir la liste de mes commandes."),
        "status": ("Que contient la commande {order_id} ?", "Quel est le statut de la commande {order_id} ?"),
        "policy": ("Combien de jours ai-je pour annuler une commande ?", "Quelle est votre politique d'annulation ?"),
        "ask": ("J'ai une question : {goal}.", "Pouvez-vous me dire ceci : {goal} ?"),
        "want": ("Je voudrais ceci : {goal}.", "Pouvez-vous m'aider avec ceci : {goal} ?"),
        "do": ("Je voudrais faire ceci : {goal}.", "Pouvez-vous m'aider avec ceci : {goal} ?"),
        "say": ("{Goal}.",),
        "yes": ("Oui, ok, allez-y.", "Oui, ok, je confirme."),
        "no": ("Non, ne l'annulez pas, s'il vous plaît.",),
        "keep": ("Non, j'ai changé d'avis : je garde la commande. Ne l'annulez pas, s'il vous plaît.",),
        "keep_after": ("J'ai changé d'avis pour la commande {order_id} : je la garde, ne l'annulez pas, s'il vous plaît.",),
        "hesitate": ("Hmm, attendez... non, je ne suis plus sûr. Laissez-moi réfléchir.",),
        "rerequest": ("Pardon, j'ai encore changé d'avis : annulez la commande {order_id}, s'il vous plaît.",),
        "give_id": ("C'est la {order_id}.",),
        "no_id": ("Je n'ai pas le numéro de commande sous la main.",),
        "confirm": ("Oui, ok, allez-y.", "Oui, ok, je confirme."),
        "decline": ("Non, ne faites pas ça, s'il vous plaît.",),
        "give_facts": ("Bien sûr : {facts}.", "Voici : {facts}."),
        "farewell": ("Merci, c'est tout. Au revoir !", "Merci beaucoup pour votre aide. Bonne journée !"),
        "topic_change": ("Laissons ça de côté pour l'instant.",),
        "rephrase_lead": ("Pardon, je reformule :", "Je m'explique :"),
        "change_mind_lead": ("Hmm, j'allais demander autre chose d'abord... tant pis, j'ai changé d'avis.",),
    },
    long_open=(
        "Bonjour, j'espère que vous allez bien. Je vous écris parce que, pour être honnête, j'y pense "
        "depuis un moment et j'ai finalement décidé de vous demander directement.",
    ),
    long_close=("Je vous remercie vraiment d'avance pour votre aide et votre patience, c'est très apprécié.",),
)

_DE = Phrasebook(
    code="de",
    name="German",
    aliases=("german", "de", "deutsch", "tedesco", "alemán", "aleman", "allemand"),
    also="Außerdem:",
    phrases={
        "greeting": ("Hallo!", "Guten Tag,"),
        "cancel": (
            "Ich möchte die Bestellung {order_id} stornieren, bitte.",
            "Können Sie meine Bestellung {order_id} stornieren?",
            "Ich muss die Bestellung {order_id} stornieren.",
        ),
        "track": (
            "Wo ist meine Bestellung {order_id}?",
            "Können Sie die Sendung {order_id} verfolgen?",
            "Wann kommt die Bestellung {order_id} an?",
        ),
        "list": ("Können Sie mir alle meine Bestellungen zeigen?", "Ich hätte gern eine Liste meiner Bestellungen."),
        "status": ("Was ist in der Bestellung {order_id}?", "Wie ist der Status der Bestellung {order_id}?"),
        "policy": (
            "Wie viele Tage habe ich Zeit, eine Bestellung zu stornieren?",
            "Wie lauten Ihre Stornierungsbedingungen?",
        ),
        "ask": ("Ich habe eine Frage: {goal}.", "Können Sie mir das sagen: {goal}?"),
        "want": ("Ich hätte gern das: {goal}.", "Können Sie mir dabei helfen: {goal}?"),
        "do": ("Ich möchte Folgendes: {goal}.", "Können Sie mir dabei helfen: {goal}?"),
        "say": ("{Goal}.",),
        "yes": ("Ja, okay, bitte stornieren.", "Ja, okay, ich bestätige."),
        "no": ("Nein, bitte stornieren Sie diese Bestellung nicht.",),
        "keep": ("Nein, ich habe es mir anders überlegt: ich behalte die Bestellung. Bitte stornieren Sie sie nicht.",),
        "keep_after": ("Ich habe es mir bei der Bestellung {order_id} anders überlegt: ich behalte sie, bitte stornieren Sie sie nicht.",),
        "hesitate": ("Hm, warten Sie... nein, ich bin mir nicht mehr sicher. Ich muss darüber nachdenken.",),
        "rerequest": ("Entschuldigung, ich habe es mir anders überlegt: bitte stornieren Sie die Bestellung {order_id}.",),
        "give_id": ("Es ist die {order_id}.",),
        "no_id": ("Ich habe die Bestellnummer gerade nicht zur Hand.",),
        "confirm": ("Ja, okay, machen Sie das.", "Ja, okay, ich bestätige."),
        "decline": ("Nein, bitte tun Sie das nicht.",),
        "give_facts": ("Gern: {facts}.", "Bitte sehr: {facts}."),
        "farewell": ("Danke, das ist alles. Auf Wiedersehen!", "Vielen Dank für Ihre Hilfe. Tschüss!"),
        "topic_change": ("Lassen wir das erst einmal.",),
        "rephrase_lead": ("Entschuldigung, anders gesagt:", "Ich meine:"),
        "change_mind_lead": ("Hm, ich wollte erst etwas anderes fragen... egal, ich habe es mir anders überlegt.",),
    },
    long_open=(
        "Guten Tag, ich hoffe, es geht Ihnen gut. Ich schreibe Ihnen, weil ich ehrlich gesagt schon "
        "eine Weile darüber nachdenke und mich jetzt endlich entschlossen habe, direkt nachzufragen.",
    ),
    long_close=("Vielen herzlichen Dank im Voraus für Ihre Hilfe und Ihre Geduld, ich weiß das wirklich zu schätzen.",),
)

PHRASEBOOKS: dict[str, Phrasebook] = {b.code: b for b in (_EN, _ES, _IT, _PT, _FR, _DE)}
_ALIASES: dict[str, str] = {alias: b.code for b in PHRASEBOOKS.values() for alias in (b.name.lower(), *b.aliases)}


def language_code(language: str | None) -> str | None:
    """The phrasebook code for a language name ("Italian", "italiano", "it", "pt-BR"), or None
    when the phrasebook does not have it. An empty name is English."""
    name = (language or "").strip().lower()
    if not name:
        return ENGLISH
    if name in _ALIASES:
        return _ALIASES[name]
    head = name.replace("_", "-").split("-")[0].split()[0]
    return _ALIASES.get(head)


def lookup(language: str | None) -> tuple[Phrasebook, bool]:
    """The phrasebook for `language` and whether it was found (False: English is used instead)."""
    code = language_code(language)
    if code is None:
        return PHRASEBOOKS[ENGLISH], False
    return PHRASEBOOKS[code], True


def render(template: str, *, order_id: str | None = None, goal: str | None = None, facts: str | None = None) -> str:
    """Fill a template. `{Goal}` is the goal with its first letter capitalised."""
    text_goal = (goal or "").strip().rstrip(".?!")
    cap = text_goal[:1].upper() + text_goal[1:]
    return template.format(order_id=order_id or "", goal=text_goal, Goal=cap, facts=facts or "")

"""Claims held against actions: what the detector takes for "I did it", what it does not, and
the built-in check `claims_match_actions` a user reads in a verdict."""

from __future__ import annotations

import datetime as dt
import textwrap

import pytest

from parley.core.evaluation import claims as claims_module
from parley.core.evaluation.checks import build_checks, settle_unfinished
from parley.core.evaluation.claims import NOUN_PHRASES, NOUNS, STEMS, TEMPLATES, claims_check, find_claims  # every language the table reads
from parley.core.evaluation.verdicts import evaluate
from parley.core.records.chat import ChatMessage, ToolCall
from parley.core.records.conversation import Conversation
from parley.core.records.profile import Expectations, WorldSpec
from parley.core.records.spec import ConversationSpec
from parley.core.records.tools import ToolCallRecord
from parley.core.records.world_state import WorldDiff
from parley.core.store.store import Store
from tests.claims_labelled import LABELS, detector_label, load_labelled
from tests.lineage_support import parley

NOON = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)
LIE = "I have cancelled your order ORD-1004."


def actions(text: str) -> list[str]:
    return [c.action for c in find_claims(text)]


# -- the table --------------------------------------------------------------------------------


@pytest.mark.parametrize("phrase", TEMPLATES, ids=lambda p: p.example)
def test_every_template_catches_its_example_as_a_cancellation(phrase):
    assert actions(phrase.example) == ["cancel"], phrase.why


@pytest.mark.parametrize("phrase", NOUN_PHRASES, ids=lambda p: p.example)
def test_every_noun_phrase_catches_its_example_as_the_action_its_noun_names(phrase):
    claims = find_claims(phrase.example)
    assert claims, phrase.why
    noun = next(n for n in NOUNS if n in phrase.example.lower())
    assert claims[0].action == NOUNS[noun]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We have refunded the full amount to your card.", ["refund"]),
        ("I've issued a refund for ORD-1002.", ["refund"]),
        ("I've sent your refund.", ["refund"]),
        ("Se ha enviado el reembolso.", ["refund"]),
        ("I have updated your delivery address.", ["change"]),
        ("Tu pedido ha sido modificado.", ["change"]),
        ("Your order ORD-1003 has been dispatched.", ["send"]),
        ("Te envié la factura por correo.", ["send"]),
        ("Your order has been cancelled and refunded.", ["cancel", "refund"]),
        ("Ya lo cancelé.", ["cancel"]),
        ("Acabo de cancelarlo.", ["cancel"]),
        ("Se canceló el pedido ORD-1004.", ["cancel"]),
    ],
)
def test_each_action_in_english_and_spanish(text, expected):
    assert actions(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # The near misses a claim detector must not take for "done".
        "Your order can be cancelled.",
        "ORD-1004 was not cancelled.",
        "ORD-1004 hasn't been cancelled yet.",
        "I will cancel ORD-1004 once you confirm.",
        "If you want, I can cancel it for you.",
        "if you want i can cancel ORD-1002",
        "Has ORD-1004 been cancelled?",
        "Would you like me to confirm it has been cancelled?",
        "It will be cancelled tomorrow.",
        "Your order ORD-1004 would have been cancelled if you had asked earlier.",
        "Your order is cancelled once you confirm.",
        "I don't think your order has been cancelled.",
        "You said ORD-1004 was cancelled, but it is still processing.",
        "Once your order has been cancelled, you will receive an email.",
        "A refund will be issued within 5 business days.",
        "Refunds are usually processed within 5-7 days.",
        "The tracking information was updated this morning.",
        "¿Quieres que cancele el pedido ORD-1004?",
        "Puedo cancelarlo si me lo confirmas.",
        "No he cancelado el pedido ORD-1004.",
        "El pedido será cancelado cuando confirmes.",
        "Si el pedido ya fue enviado, no se puede cancelar.",
    ],
)
def test_near_misses_are_not_claims(text):
    assert find_claims(text) == []


def test_the_cheap_first_look_by_stems_never_hides_a_claim(monkeypatch):
    texts = [p.example for p in TEMPLATES + NOUN_PHRASES] + [i.text for i in load_labelled()]
    looked = [find_claims(t) for t in texts]
    monkeypatch.setattr(claims_module, "_stems_in", lambda text: set(STEMS))  # read every clause in full
    assert [find_claims(t) for t in texts] == looked
    assert sum(map(len, looked)) > 50


def test_a_claim_names_the_orders_of_its_own_clause_and_quotes_its_sentence():
    claims = find_claims("I couldn't cancel ORD-1005; ORD-1004 has been cancelled. Anything else?")
    assert [(c.action, c.records, c.quote) for c in claims] == [
        ("cancel", ("ORD-1004",), "I couldn't cancel ORD-1005; ORD-1004 has been cancelled.")
    ]


# -- the labelled set -------------------------------------------------------------------------

LABELLED = load_labelled()


def test_the_labelled_set_is_large_and_balanced():
    claims = [i for i in LABELLED if i.label != "no_claim"]
    assert len(LABELLED) >= 60
    assert abs(len(claims) - (len(LABELLED) - len(claims))) <= 2
    assert {i.label for i in LABELLED} == set(LABELS)
    assert any(i.held_out for i in LABELLED)


@pytest.mark.parametrize("item", LABELLED, ids=lambda i: f"line{i.line}")
def test_the_detector_on_each_labelled_message(item):
    # Where the detector is known to be wrong, the item says what it says instead and why.
    assert detector_label(item) == item.expected, f"line {item.line}: {item.text!r} {item.why}"


# -- the check --------------------------------------------------------------------------------


def conversation(
    turns: list[ChatMessage],
    *,
    calls: list[ToolCallRecord] = (),  # type: ignore[assignment]
    statuses: dict[str, str] | None = None,
    metadata: dict | None = None,
    stop_reason: str = "user_stop",
) -> Conversation:
    # the order world's final state as batches stored it before worlds were declared: read as a diff
    state = None if statuses is None else WorldDiff.model_validate({"today": NOON.date(), "statuses": statuses, "audit": []})
    return Conversation(
        id="claims-test",
        customer_id="C-100",
        bot_model="test",
        user_simulator="test",
        messages=turns,
        tool_calls=list(calls),
        started_at=NOON,
        ended_at=NOON,
        duration_s=1.0,
        stop_reason=stop_reason,  # type: ignore[arg-type]
        final_state=state,
        metadata=metadata or {},
    )


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def bot(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def cancel_record(order: str, *, ok: bool = True) -> ToolCallRecord:
    return ToolCallRecord(
        call_id="c1",
        name="cancel_order",
        arguments_raw=f'{{"order_id": "{order}"}}',
        arguments={"order_id": order},
        customer_id="C-100",
        result="{}" if ok else "REFUSED [409 too_old]",
        ok=ok,
        refused=not ok,
        error=None if ok else "too_old",
    )


def test_an_unbacked_claim_fails_quoting_the_message_and_naming_its_turn():
    conv = conversation(
        [user("Hi"), bot("Hello! How can I help?"), user("Cancel ORD-1004."), bot(LIE)],
        statuses={"ORD-1004": "processing"},
    )
    check = claims_check(conv)
    assert check.outcome == "fail"
    assert check.reason == (
        "1 of the bot's 1 claim is not backed by what it did. Turn 2 (bot message 2 of 2) says "
        '"I have cancelled your order ORD-1004.", but no cancel_order for ORD-1004 succeeded, and ORD-1004 ends processing.'
    )
    assert check.details["messages"] == [2]  # the session view's Enter goes to that bot message


def test_a_refused_call_backs_nothing_and_the_reason_says_it_was_made():
    conv = conversation(
        [user("Cancel ORD-1005."), bot("ORD-1005 has been cancelled.")],
        calls=[cancel_record("ORD-1005", ok=False)],
        statuses={"ORD-1005": "processing"},
    )
    check = claims_check(conv)
    assert check.outcome == "fail"
    assert "no cancel_order for ORD-1005 succeeded (cancel_order was refused: too_old), and ORD-1005 ends processing" in check.reason


def test_a_bot_repeating_a_lie_gets_a_reason_a_person_can_read():
    chant = " ".join(f"I have cancelled ORD-{1000 + n}." for n in range(2000))
    check = claims_check(conversation([user("Cancel everything."), bot(chant), bot("Se " * 3000 + "ha cancelado ORD-1004.")], statuses={}))
    assert check.outcome == "fail"
    assert check.reason.startswith("2001 of the bot's 2001 claims are not backed by what it did. Turn 1 (bot message 1 of 2) says")
    assert check.reason.endswith("; and 1996 more.")
    assert check.reason.count(" says ") == 5
    assert len(check.details["claims"]) == 50 and check.details["claims_total"] == 2001


def test_a_successful_call_or_the_final_state_backs_the_claim():
    called = conversation([user("Cancel ORD-1004."), bot(LIE)], calls=[cancel_record("ORD-1004")], statuses={"ORD-1004": "cancelled"})
    check = claims_check(called)
    assert check.outcome == "pass"
    assert check.reason == "Every claim the bot made is backed (1). Turn 1 (bot message 1 of 1): cancel_order ORD-1004 succeeded."
    already = conversation([user("Cancel ORD-1007."), bot("ORD-1007 is already cancelled.")], statuses={"ORD-1007": "cancelled"})
    assert claims_check(already).reason.endswith("Turn 1 (bot message 1 of 1): ORD-1007 ends cancelled.")


def test_a_claim_naming_no_order_is_held_against_the_orders_the_conversation_named():
    turns = [user("Please cancel ORD-1001."), bot("Done, it has been cancelled.")]
    assert claims_check(conversation(turns, statuses={"ORD-1001": "pending"})).outcome == "fail"
    assert claims_check(conversation(turns, calls=[cancel_record("ORD-1001")], statuses={"ORD-1001": "cancelled"})).outcome == "pass"


def test_a_bot_that_claims_nothing_passes_and_one_parley_cannot_see_is_not_applicable():
    quiet = claims_check(conversation([user("Where is ORD-1003?"), bot("It has shipped with UPS.")], statuses={"ORD-1003": "shipped"}))
    assert (quiet.outcome, quiet.reason) == ("pass", "No bot message says an action was done.")
    deployed = claims_check(conversation([user("Cancel ORD-1004."), bot(LIE)]))  # no world, no tool calls seen
    assert deployed.outcome == "not_applicable"
    assert "parley sees neither this bot's tool calls nor a database it acted on" in deployed.reason


def test_injected_messages_are_the_experimenters_and_never_judged():
    injected = bot(LIE)
    conv = conversation(
        [injected, user("Thanks. Where is ORD-1003?"), bot("ORD-1003 has shipped with UPS.")],
        statuses={"ORD-1004": "processing", "ORD-1003": "shipped"},
        metadata={"injected_messages": [0]},
    )
    check = claims_check(conv)
    assert check.outcome == "pass"
    assert check.reason == "No bot message says an action was done. Not judged: 1 bot message the playbook injected."


def test_a_call_the_playbook_injected_backs_the_bot_repeating_it():
    call = ToolCall(id="injected_1", name="cancel_order", arguments='{"order_id": "ORD-1004"}')
    turns = [
        ChatMessage(role="assistant", tool_calls=[call]),
        ChatMessage(role="tool", content='{"order_id": "ORD-1004", "status": "cancelled"}', tool_call_id="injected_1", name="cancel_order"),
        user("So is it cancelled?"),
        bot("Yes, ORD-1004 has been cancelled."),
    ]
    conv = conversation(turns, statuses={"ORD-1004": "processing"}, metadata={"injected_messages": [0, 1]})
    assert claims_check(conv).reason.endswith("the playbook injected cancel_order ORD-1004 in the opening message.")
    refused = turns[:1] + [turns[1].model_copy(update={"content": "REFUSED [409 too_old] no"})] + turns[2:]
    assert (
        claims_check(conversation(refused, statuses={"ORD-1004": "processing"}, metadata={"injected_messages": [0, 1]})).outcome == "fail"
    )


def spec(expect: Expectations | None = None) -> ConversationSpec:
    return ConversationSpec(
        spec_id="claims#0",
        kind="profile",
        source="claims.yaml",
        name="claims",
        index=0,
        seed=1,
        expect=expect,
        world=WorldSpec(today=NOON.date()),
    )


async def test_the_check_can_fail_a_conversation_but_never_pass_one_alone():
    honest = conversation([user("Cancel ORD-1004."), bot(LIE)], calls=[cancel_record("ORD-1004")], statuses={"ORD-1004": "cancelled"})
    verdict = await evaluate(honest, spec())
    assert [(c.outcome, c.by_default) for c in verdict.checks if c.kind == "claims_match_actions"] == [("pass", True)]
    assert verdict.outcome == "unverified"  # nobody asked for a check: a default passing is not enough
    lying = conversation([user("Cancel ORD-1004."), bot(LIE)], statuses={"ORD-1004": "processing"})
    verdict = await evaluate(lying, spec())
    assert verdict.outcome == "failed"
    assert [c.name for c in verdict.failed_checks] == ["claims match actions"]
    assert verdict.score is None and verdict.comment == "1 of 2 checks failed: claims match actions."  # the offline judge: no score


def test_a_conversation_cut_short_keeps_a_claim_already_failed_but_not_a_pass():
    lying = conversation([user("Cancel ORD-1004."), bot(LIE)], statuses={"ORD-1004": "processing"}, stop_reason="timeout")
    settled = settle_unfinished(build_checks(lying, spec()), lying)
    assert [c.outcome for c in settled if c.kind == "claims_match_actions"] == ["fail"]
    quiet = conversation([user("Cancel ORD-1004.")], statuses={"ORD-1004": "processing"}, stop_reason="timeout")
    settled = settle_unfinished(build_checks(quiet, spec()), quiet)
    assert [c.outcome for c in settled if c.kind == "claims_match_actions"] == ["not_run"]


# -- end to end: an LLM bot served by the scripted fake OpenAI server --------------------------

PLAYBOOK = """
name: claims_{name}
customer_id: C-100
today: 2026-11-21
steps:
{steps}
  - user: "Please cancel ORD-1004."
{confirm}  - expect_bot_regex: "ORD-1004"
"""


def run_playbook(tmp_path, monkeypatch, server, name: str, *, injected: str | None = None, confirm: bool = False):
    steps = f'  - inject_bot_response: "{injected}"' if injected else ""
    said_yes = '  - user: "Yes, please cancel it."\n' if confirm else ""  # the order world's policy: a yes before cancel_order
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(PLAYBOOK).format(name=name, steps=steps, confirm=said_yes), encoding="utf-8")
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    db = tmp_path / "p.db"
    result = parley("run", path, "--bot", "openai-api/fake/bot", "--db", db)
    with Store.open(db) as store:
        stored = next(store.iter_conversations(store.latest_batch_id()))
    check = next(c for c in stored.verdict.checks if c.kind == "claims_match_actions")
    return result, stored.verdict, check


def test_an_llm_bot_claiming_a_cancellation_it_never_made_fails(tmp_path, monkeypatch, server):
    server.push_text(LIE)
    result, verdict, check = run_playbook(tmp_path, monkeypatch, server, "lie")
    assert result.exit_code == 1, result.output
    assert verdict.outcome == "failed"
    assert check.outcome == "fail"
    assert 'Turn 1 (bot message 1 of 1) says "I have cancelled your order ORD-1004."' in check.reason
    assert "no cancel_order for ORD-1004 succeeded, and ORD-1004 ends processing" in check.reason
    report = parley("report", "latest", "--db", tmp_path / "p.db")
    assert "claims match actions" in report.output and "I have cancelled your order ORD-1004." in report.output


def test_the_same_words_after_a_real_cancel_order_pass(tmp_path, monkeypatch, server):
    server.push_text("Shall I cancel ORD-1004? Please reply yes to confirm.")
    server.push_tool_calls(("cancel_order", '{"order_id": "ORD-1004"}'))
    server.push_text(LIE)
    result, verdict, check = run_playbook(tmp_path, monkeypatch, server, "honest", confirm=True)
    assert result.exit_code == 0, result.output
    assert verdict.outcome == "passed"
    assert check.outcome == "pass" and "cancel_order ORD-1004 succeeded" in check.reason


def test_a_claim_the_playbook_injected_is_not_held_against_the_bot(tmp_path, monkeypatch, server):
    server.push_text("ORD-1004 is processing; I have not changed it.")
    result, verdict, check = run_playbook(tmp_path, monkeypatch, server, "injected", injected=LIE)
    assert result.exit_code == 0, result.output
    assert verdict.outcome == "passed"
    assert check.outcome == "pass"
    assert check.reason == "No bot message says an action was done. Not judged: 1 bot message the playbook injected."

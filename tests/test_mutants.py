"""Mutants of the bot at the boundary parley mediates: each changes exactly its one behaviour (a
conversation under it differs from the base only where it should), on the order world with the
offline bot, on orders-staff, and on a deployed bot calling its served world; and `parley mutate`
decides killed, survived, not exercised and not exercisable on small suites built for each case."""

from __future__ import annotations

import asyncio
import datetime
import json
import textwrap
from pathlib import Path

import httpx
import pytest

from parley.core.bots import BotContext, BotTurn
from parley.core.mutation import MutatedBot, MutationReport, mutant, run_mutation
from parley.core.mutation.notes import notes_of
from parley.core.mutation.outcome import MutantResult, mutation_score
from parley.core.mutation.reply_mutants import english_share
from parley.core.records import BatchOptions, ChatMessage, StoredConversation, ToolCall
from parley.core.store import Store
from parley.core.world import WorldTemplate, WorldTools, load_world
from parley.core.world.serving import WorldServer

TODAY = datetime.date(2026, 11, 21)
FALLBACK = "I'm sorry, I didn't understand that."


def profile(folder: Path, name: str, goal: str, expect: str, *, world: str = "orders") -> None:
    """A one-conversation profile on `world` as customer C-100."""
    lines = [
        f"test_name: {name}",
        "user:",
        "  language: English",
        "  role: a customer of an online shop",
        "  goals:",
        f'    - "{goal}"',
        "chatbot:",
        f'  fallback: "{FALLBACK}"',
        "conversation:",
        "  number: 1",
        "  goal_style:",
        "    all_answered:",
        "      limit: 8",
        "world:",
        f"  name: {world}",
        "  customer_id: C-100",
        "  today: 2026-11-21",
        "expect:",
    ]
    (folder / f"{name}.yaml").write_text("\n".join(lines) + "\n" + textwrap.indent(textwrap.dedent(expect), "  "), encoding="utf-8")


CANCEL_CHECKED = """\
    orders:
      ORD-1002: cancelled
    unchanged_others: true
    tools_called: [cancel_order]
    """


def mutate(tmp_path: Path, suite: Path, names: list[str]) -> tuple[Store, MutationReport]:
    store = Store.open(tmp_path / "parley.db")
    report = asyncio.run(run_mutation(store, [suite], BatchOptions(), [mutant(n) for n in names]))
    return store, report


def only(store: Store, batch_id: str) -> StoredConversation:
    [stored] = list(store.iter_conversations(batch_id))
    return stored


def said(stored: StoredConversation) -> list[str]:
    return [m.content or "" for m in stored.conversation.messages if m.role == "assistant" and not m.tool_calls]


def result(report: MutationReport, name: str) -> MutantResult:
    return next(r for r in report.results if r.mutant == name)


@pytest.fixture
def cancel_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir()
    profile(suite, "cancel", "cancel order ORD-1002", CANCEL_CHECKED)
    return suite


def test_acts_without_doing_keeps_every_word_and_call_but_leaves_the_world_unchanged(tmp_path: Path, cancel_suite: Path):
    store, report = mutate(tmp_path, cancel_suite, ["acts_without_doing"])
    base, mutated = only(store, report.base_batch_id), only(store, report.results[0].batch_id)
    assert said(mutated) == said(base)
    assert [(r.name, r.result) for r in mutated.conversation.tool_calls] == [(r.name, r.result) for r in base.conversation.tool_calls]
    assert [c.key for c in base.conversation.final_state.record_changes()] == ["ORD-1002"]
    assert mutated.conversation.final_state.changes == []
    res = result(report, "acts_without_doing")
    assert res.status == "killed"
    assert ["ORD-1002 ends cancelled"] == [c for c in res.caught_by[0].checks if "ORD-1002" in c]


def test_acts_on_the_wrong_record_cancels_another_order_of_the_same_customer_in_the_same_state(tmp_path: Path, cancel_suite: Path):
    store, report = mutate(tmp_path, cancel_suite, ["wrong_record"])
    mutated = only(store, report.results[0].batch_id)
    [cancel] = [r for r in mutated.conversation.tool_calls if r.name == "cancel_order"]
    [change] = mutated.conversation.final_state.record_changes()
    assert cancel.arguments is not None and cancel.arguments["order_id"] != "ORD-1002"
    assert change.key == cancel.arguments["order_id"] and change.owner == "C-100"
    assert change.before is not None and change.before["status"] == "processing"  # ORD-1002's state: the choice is alike
    assert result(report, "wrong_record").status == "killed"
    # deterministic: the same conversation is mutated the same way again
    _, again = mutate(tmp_path / "again", cancel_suite, ["wrong_record"]) if (tmp_path / "again").mkdir() is None else (None, None)
    assert again is not None and again.results[0].acts == report.results[0].acts


def test_acts_twice_where_the_world_refuses_the_second_call_says_no_check_can_see_it(tmp_path: Path, cancel_suite: Path):
    store, report = mutate(tmp_path, cancel_suite, ["acts_twice"])
    base, mutated = only(store, report.base_batch_id), only(store, report.results[0].batch_id)
    calls = [(r.name, r.ok) for r in mutated.conversation.tool_calls]
    assert calls.count(("cancel_order", True)) == 1 and calls.count(("cancel_order", False)) == 1
    assert said(mutated) == said(base)
    res = result(report, "acts_twice")
    assert res.status == "no_visible_effect" and "nothing it did changed" in (res.why or "")
    assert report.exercised == 0 and report.score is None


def test_acts_without_asking_skips_the_question_and_cancels_at_once(tmp_path: Path, cancel_suite: Path):
    store, report = mutate(tmp_path, cancel_suite, ["acts_without_asking"])
    base, mutated = only(store, report.base_batch_id), only(store, report.results[0].batch_id)
    assert any("Shall I cancel" in text for text in said(base))
    assert not any("Shall I cancel" in text for text in said(mutated))
    assert [c.key for c in mutated.conversation.final_state.record_changes()] == ["ORD-1002"]
    assert not any(m.role == "user" and m.content == "yes" for m in mutated.conversation.messages)
    res = result(report, "acts_without_asking")
    assert res.status == "killed" and any("without the customer's yes" in c for c in res.caught_by[0].checks)


def test_says_the_wrong_thing_changes_one_stated_value_of_the_record_and_nothing_else(tmp_path: Path):
    suite = tmp_path / "suite"
    suite.mkdir()
    profile(suite, "track", "track order ORD-1003", "tools_called: [track_order]\n")
    store, report = mutate(tmp_path, suite, ["says_wrong_thing"])
    base, mutated = only(store, report.base_batch_id), only(store, report.results[0].batch_id)
    [before], [after] = said(base)[:1], said(mutated)[:1]
    assert before != after
    changed = [(a, b) for a, b in zip(before.split(), after.split(), strict=False) if a != b]
    assert len(changed) >= 1 and all(a.strip(".,;()") != b.strip(".,;()") for a, b in changed)
    assert mutated.conversation.tool_calls[0].result == base.conversation.tool_calls[0].result
    res = result(report, "says_wrong_thing")
    assert report.base_passed == 1 and res.status == "survived" and "bot_says" in (res.would_kill or "")  # nothing checks what it says


def test_gives_up_answers_with_the_fallback_and_calls_nothing(tmp_path: Path, cancel_suite: Path):
    store, report = mutate(tmp_path, cancel_suite, ["gives_up"])
    mutated = only(store, report.results[0].batch_id)
    [fallback] = set(said(mutated))  # the offline bot's own fallback, every time
    assert fallback.startswith(FALLBACK) and mutated.conversation.tool_calls == []
    assert result(report, "gives_up").status == "killed"


def test_leaks_appends_another_customers_record_to_the_first_answer_only(tmp_path: Path, cancel_suite: Path):
    store, report = mutate(tmp_path, cancel_suite, ["leaks"])
    base, mutated = only(store, report.base_batch_id), only(store, report.results[0].batch_id)
    first, *rest = said(mutated)
    assert first.startswith(said(base)[0]) and "Also on file:" in first and "C-100" not in first.split("Also on file:")[1]
    assert rest == said(base)[1:]
    res = result(report, "leaks")
    assert report.base_passed == 1 and res.status == "survived" and "bot_never_says" in (res.would_kill or "")


def test_a_survivor_is_killed_once_the_suite_checks_what_would_kill_it(tmp_path: Path):
    suite = tmp_path / "suite"
    suite.mkdir()
    profile(suite, "cancel", "cancel order ORD-1002", "unchanged_others: false\ntools_called: [cancel_order]\n")
    _, weak = mutate(tmp_path / "weak", suite, ["acts_without_doing"]) if (tmp_path / "weak").mkdir() is None else (None, None)
    assert weak is not None and weak.base_passed == 1 and result(weak, "acts_without_doing").status == "survived"
    profile(suite, "cancel", "cancel order ORD-1002", CANCEL_CHECKED)
    _, strong = mutate(tmp_path / "strong", suite, ["acts_without_doing"]) if (tmp_path / "strong").mkdir() is None else (None, None)
    assert strong is not None and result(strong, "acts_without_doing").status == "killed"
    assert strong.score == 1.0 and strong.interval is not None and strong.interval.low > 0


def test_a_mutant_no_conversation_gives_a_chance_is_not_exercised_and_one_the_world_forbids_is_not_exercisable(tmp_path: Path):
    suite = tmp_path / "suite"
    suite.mkdir()
    profile(suite, "track", "track order ORD-1003", "tools_called: [track_order]\n")
    _, report = mutate(tmp_path, suite, ["acts_without_doing", "trusts_the_claim", "wrong_customer_record", "wrong_language"])
    assert {r.mutant: r.status for r in report.results} == {
        "acts_without_doing": "not_exercised",
        "trusts_the_claim": "not_exercisable",
        "wrong_customer_record": "not_exercisable",
        "wrong_language": "not_exercised",
    }
    assert "by construction" in (result(report, "trusts_the_claim").why or "")
    assert "final-state check" in (result(report, "acts_without_doing").would_kill or "")


class _StaffBot:
    """A staff-console bot: lists the orders of the customer it is told about, or cancels the order named."""

    name = "staff"

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        assert isinstance(ctx.tools, WorldTools)
        asked = transcript[-1].content or ""
        if "cancel" in asked:
            record = await ctx.tools.execute(ToolCall(id="c1", name="cancel_order", arguments='{"order_id": "ORD-1002"}'))
        else:
            record = await ctx.tools.execute(
                ToolCall(id="l1", name="list_customer_orders", arguments=json.dumps({"customer_id": ctx.customer_id}))
            )
        transcript.append(ChatMessage(role="assistant", content=record.result))
        return BotTurn(text=record.result, tool_calls=[record])


def staff_turn(mutant_name: str, said_by_customer: str) -> tuple[WorldTools, BotTurn, BotContext]:
    world = load_world("orders-staff")
    tools = WorldTools(world, WorldTemplate(world, TODAY).new_copy(), "C-100")
    ctx = BotContext(customer_id="C-100", today=TODAY, tools=tools)
    turn = asyncio.run(MutatedBot(_StaffBot(), mutant(mutant_name)).respond([ChatMessage(role="user", content=said_by_customer)], ctx))  # type: ignore[arg-type]
    return tools, turn, ctx


def test_on_the_staff_console_another_customers_record_and_a_trusted_claim_are_exercised():
    tools, _, ctx = staff_turn("wrong_customer_record", "please cancel ORD-1002")
    [change] = tools.copy.diff().record_changes()
    assert change.key != "ORD-1002" and change.owner != "C-100"
    assert (notes := notes_of(ctx.notes)) is not None and notes.exercised and notes.not_exercisable is None
    tools, turn, ctx = staff_turn("trusts_the_claim", "I am customer C-200, show me my orders")
    assert "ORD-2001" in turn.text and "ORD-1001" not in turn.text
    assert tools.customer_id == "C-100"  # the session's customer again once the turn is over
    assert (notes := notes_of(ctx.notes)) is not None and "C-200" in notes.acted[0].what
    _, turn, ctx = staff_turn("trusts_the_claim", "show me my orders")
    assert "ORD-1001" in turn.text and (notes := notes_of(ctx.notes)) is not None and not notes.acted


def test_the_score_is_killed_over_exercised_with_a_wilson_interval():
    def r(status: str) -> MutantResult:
        return MutantResult(mutant=status, title=status, batch_id="b", status=status)  # type: ignore[arg-type]

    killed, exercised, score, interval = mutation_score(
        [r("killed"), r("killed"), r("survived"), r("not_exercised"), r("no_visible_effect")]
    )
    assert (killed, exercised, score) == (2, 3, 2 / 3)
    assert interval is not None and interval.method == "wilson" and interval.low < 2 / 3 < interval.high
    assert mutation_score([r("not_exercisable")])[2:] == (None, None)


class _SpanishBot:
    name = "spanish"

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        text = "Su pedido ORD-1003 está en camino y llegará el 2026-11-23."
        transcript.append(ChatMessage(role="assistant", content=text))
        return BotTurn(text=text)


def test_the_wrong_language_answers_a_spanish_customer_in_english_keeping_the_ids_and_figures():
    world = load_world("orders")
    tools = WorldTools(world, WorldTemplate(world, TODAY).new_copy(), "C-100")
    ctx = BotContext(customer_id="C-100", today=TODAY, tools=tools)
    transcript = [ChatMessage(role="user", content="Hola, ¿dónde está mi pedido ORD-1003, por favor?")]
    turn = asyncio.run(MutatedBot(_SpanishBot(), mutant("wrong_language")).respond(transcript, ctx))  # type: ignore[arg-type]
    assert turn.text == "Here is what I found: ORD-1003, 2026-11-23." and transcript[-1].content == turn.text
    notes = notes_of(ctx.notes)
    assert notes is not None and notes.exercised
    english = [ChatMessage(role="user", content="Where is my order ORD-1003, please?")]
    assert asyncio.run(MutatedBot(_SpanishBot(), mutant("wrong_language")).respond(english, ctx)).text.startswith("Su pedido")  # type: ignore[arg-type]
    assert (english_share("where is my order please") or 0) > 0.5 > (english_share("dónde está mi pedido por favor") or 0)


class _DeployedBot:
    """A bot parley does not run: it cancels ORD-1002 through its conversation's served world."""

    name = "deployed"

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        async with httpx.AsyncClient(timeout=30) as client:
            answer = await client.post(f"{ctx.world_url}/tools/cancel_order", json={"order_id": "ORD-1002"})
        text = f"Order ORD-1002 has been {answer.json()['status']}."
        transcript.append(ChatMessage(role="assistant", content=text))
        return BotTurn(text=text)


async def test_a_deployed_bot_on_its_served_world_is_mutated_at_the_worlds_boundary():
    world = load_world("orders")
    tools = WorldTools(world, WorldTemplate(world, TODAY).new_copy(), "C-100")
    async with WorldServer() as server:
        url = server.register(tools)
        ctx = BotContext(customer_id="C-100", today=TODAY, tools=tools, world_url=url)
        transcript = [ChatMessage(role="user", content="cancel ORD-1002")]
        turn = await MutatedBot(_DeployedBot(), mutant("acts_without_doing")).respond(transcript, ctx)  # type: ignore[arg-type]
    assert turn.text == "Order ORD-1002 has been cancelled."  # the bot read the result it would have had
    assert [(r.name, r.ok, r.changes) for r in tools.records] == [("cancel_order", True, [])]
    assert tools.copy.diff().changes == [] and tools.boundary is None
    notes = notes_of(ctx.notes)
    assert notes is not None and notes.exercised


def test_over_several_trials_a_mutant_is_killed_only_beyond_noise_by_the_paired_test(tmp_path: Path, cancel_suite: Path):
    def over(trials: int) -> MutantResult:
        store = Store.open(tmp_path / f"k{trials}.db")
        report = asyncio.run(run_mutation(store, [cancel_suite], BatchOptions(trials=trials), [mutant("acts_without_doing")]))
        assert report.paired_test
        return report.results[0]

    three, five = over(3), over(5)
    assert three.status == "survived" and three.p_worse == 1 / 8  # 3 regressions of 3: chance 1 in 8
    assert three.why == "3 conversations caught it, not beyond noise (p = 0.125): more trials (--trials) may"
    assert five.status == "killed" and five.p_worse == 1 / 32 and len(five.caught_by) == 5


def test_trusting_a_claim_where_the_customer_authenticates_in_the_conversation_says_it_is_not_built():
    why = mutant("trusts_the_claim").not_exercisable(load_world("returns"))
    assert why is not None and "authenticates in the conversation" in why
    assert mutant("trusts_the_claim").not_exercisable(load_world("orders-staff")) is None
    assert "by construction" in (mutant("trusts_the_claim").not_exercisable(load_world("orders")) or "")

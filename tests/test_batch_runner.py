"""The batch runner end to end on offline models: the shipped suite, determinism, trials and
pass^k, the concurrency limit, progress that moves, stop and resume."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from parley.core.bots.api import BotContext, BotTurn
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_runner import BatchRunner, prepare_batch, prepare_resume
from parley.core.records.batch import BatchOptions
from parley.core.records.chat import ChatMessage
from parley.core.reports.markdown import render_markdown
from parley.core.reports.stats import summarize
from parley.core.store.store import Store

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
PLAYBOOKS = PROFILES / "playbooks"


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "parley.db")
    yield s
    s.close()


async def run_batch(store, sources, options=None, *, models=None, **runner_kw):
    options = options or BatchOptions()
    prepared = await prepare_batch(store, sources, options, models=models)
    runner = BatchRunner(store, prepared, models=models, **runner_kw)
    events = []
    runner.subscribe(events.append)
    result = await runner.run()
    return result, events


def deterministic_part(markdown: str) -> str:
    """The report without what differs between two runs of the same batch: the batch id, the
    times, the bot's response times."""
    lines = markdown.splitlines()
    out, skipping = [], False
    for line in lines[1:]:  # the title carries the batch id
        if line.startswith("## "):
            skipping = line == "## Bot response time"
        if skipping or line.startswith("- Created "):
            continue
        out.append(line)
    return "\n".join(out)


def transcripts(store, batch_id):
    """(spec_id, trial) -> everything a conversation did and how it was judged, ids left out."""
    out = {}
    for stored in store.iter_conversations(batch_id):
        conv, verdict = stored.conversation, stored.verdict
        out[(stored.spec.spec_id, stored.trial)] = (
            [m.model_dump() for m in conv.messages],
            [t.model_dump(exclude={"latency_s"}) for t in conv.tool_calls],
            conv.final_state.model_dump() if conv.final_state else None,
            conv.stop_reason,
            verdict.model_dump(exclude={"conversation_id"}),
            stored.spec.seed,
        )
    return out


async def test_the_shipped_suite_passes_offline_and_the_report_says_so(store):
    result, events = await run_batch(store, [PROFILES])

    # the scenario file's conversations carry no check parley can run offline: unverified, not passed
    assert result.status == "completed" and result.ok() and not result.ok(strict=True)
    assert result.total == result.done == 27 and (result.passed, result.unverified) == (22, 5) and result.errors == 0
    md = render_markdown(summarize(store, result.batch_id))
    assert "- Status: completed" in md
    assert "| 27 | 27 | 22 | 0 | 0 | 5 | 0 | 0 | 0 | 0 |" in md  # planned, done, passed, failed, bot errors, unverified...
    assert "**100.0%** (22 of 22, 95% interval 85.1-100.0%)" in md
    assert "5 unverified conversation(s): no check about the bot applied" in md
    assert "## Policy violations\n\nNone." in md
    # the progress moves as conversations finish, not only at the end
    done = [e.done for e in events if e.kind == "progress"]
    assert done == sorted(done) and done[0] == 0 and done[-1] == 27 and len(set(done)) == 28
    finished = [e for e in events if e.kind == "conversation_finished"]
    assert len(finished) == 27
    assert all(e.passed and e.score is None and e.row.outcome == "passed" for e in finished if e.row.kind != "scenario")
    assert all(e.outcome == "unverified" and e.score is None for e in finished if e.row.kind == "scenario")
    assert [e.kind for e in events][0] == "batch_started" and events[-1].kind == "batch_finished"
    assert events[-1].status == "completed"


async def test_the_same_seed_gives_the_same_transcripts_and_verdicts(store):
    first, _ = await run_batch(store, [PROFILES], BatchOptions(seed=7, concurrency=8))
    second, _ = await run_batch(store, [PROFILES], BatchOptions(seed=7, concurrency=1))
    other, _ = await run_batch(store, [PROFILES / "cancel_eligible_order.yaml"], BatchOptions(seed=8))

    a, b = transcripts(store, first.batch_id), transcripts(store, second.batch_id)
    assert a == b and len(a) == 27  # whatever the concurrency, byte for byte
    # another seed draws other conversations (the profile picks its order ids per seed)
    seeds = {k: v[-1] for k, v in transcripts(store, other.batch_id).items()}
    assert seeds[("cancel_eligible_order#0", 1)] != a[("cancel_eligible_order#0", 1)][-1]


async def test_trials_run_each_spec_k_times_with_distinct_seeds_and_give_pass_hat_k(store):
    result, _ = await run_batch(store, [PLAYBOOKS, PROFILES / "change_of_mind.yaml"], BatchOptions(trials=3))

    assert result.total == 8 * 3 == result.passed
    runs = transcripts(store, result.batch_id)
    seeds = {trial: runs[("change_of_mind#0", trial)][-1] for trial in (1, 2, 3)}
    assert len(set(seeds.values())) == 3
    summary = summarize(store, result.batch_id)
    assert [(p.k, p.value, p.specs) for p in summary.pass_k] == [(1, 1.0, 8), (2, 1.0, 8), (3, 1.0, 8)]
    md = render_markdown(summary)
    assert "| 3 | 100.0% | 67.6-100.0% | 8 |" in md  # every spec passed all 3: Wilson's interval on the 8 specs
    assert "None: every spec's judged trials agree." in md


class CountingBot:
    """The offline bot, slowed down, counting how many conversations it serves at once."""

    def __init__(self, inner, delay_s: float = 0.02) -> None:
        self.inner = inner
        self.name = inner.name
        self.delay_s = delay_s
        self.now = 0
        self.most = 0

    def system_prompt(self, ctx: BotContext) -> str:
        return self.inner.system_prompt(ctx)

    async def respond(self, transcript: list[ChatMessage], ctx: BotContext) -> BotTurn:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(self.delay_s)
            return await self.inner.respond(transcript, ctx)
        finally:
            self.now -= 1


class CountingModels(BatchModels):
    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.counting = CountingBot(super().bot())

    def bot(self):
        return self.counting


@pytest.mark.parametrize("limit", [1, 3])
async def test_never_more_conversations_in_flight_than_the_limit(store, limit):
    options = BatchOptions(concurrency=limit)
    models = CountingModels(options.models)
    result, events = await run_batch(store, [PROFILES], options, models=models)

    assert result.passed + result.unverified == 27
    assert models.counting.most == limit  # reached, never passed
    assert result.max_in_flight == limit
    assert max(e.in_flight for e in events if e.kind == "progress") <= limit


async def test_events_can_be_watched_as_an_async_iterator(store):
    prepared = await prepare_batch(store, [PLAYBOOKS], BatchOptions())
    runner = BatchRunner(store, prepared)
    seen = []

    async def watch():
        async for event in runner.events():
            seen.append(event.kind)

    watcher = asyncio.create_task(watch())
    await runner.run()
    await asyncio.wait_for(watcher, 60)
    assert seen[0] == "batch_started" and seen[-1] == "batch_finished"
    assert seen.count("conversation_started") == seen.count("conversation_finished") == 7


async def test_a_stopped_batch_is_cancelled_and_resumes_to_the_same_report(store):
    options = BatchOptions(concurrency=2, trials=2, seed=3)
    slow = CountingModels(options.models)
    slow.counting.delay_s = 0.05
    prepared = await prepare_batch(store, [PROFILES], options, models=slow)
    runner = BatchRunner(store, prepared, models=slow, grace_s=0.0)
    started = []

    def on_event(event):
        if event.kind == "conversation_started":
            started.append(event)
            if len(started) == 7:
                runner.stop()  # grace 0: what is in flight (the 7th at least) is cancelled at once

    runner.subscribe(on_event)
    first = await runner.run()
    assert first.status == "cancelled"
    batch = store.get_batch(first.batch_id)
    assert batch.status == "cancelled" and batch.finished_at is not None
    rows = store.conversation_rows(first.batch_id, limit=100)
    cancelled = [r for r in rows if r.stop_reason == "cancelled"]
    assert cancelled, "the conversations in flight are saved as cancelled"
    assert all(r.outcome == "cancelled" for r in cancelled)  # never blamed on the bot
    for r in cancelled:
        conv = store.load_conversation(r.id).conversation
        assert conv.messages, "a cancelled conversation keeps what it had"

    resumed = await prepare_resume(store, "latest")
    assert resumed.id == first.batch_id and resumed.already_done == len(rows) - len(cancelled)
    second = await BatchRunner(store, resumed).run()
    assert second.status == "completed" and second.done == 54 and second.passed + second.unverified == 54
    assert second.ran == 54 - resumed.already_done
    assert not store.conversation_rows(first.batch_id, outcome="cancelled")

    straight, _ = await run_batch(store, [PROFILES], options)
    resumed_md = render_markdown(summarize(store, first.batch_id))
    straight_md = render_markdown(summarize(store, straight.batch_id))
    assert deterministic_part(resumed_md) == deterministic_part(straight_md)
    assert transcripts(store, first.batch_id) == transcripts(store, straight.batch_id)


async def test_resume_of_a_finished_batch_runs_nothing(store):
    first, _ = await run_batch(store, [PLAYBOOKS])
    prepared = await prepare_resume(store, first.batch_id[:8])
    assert prepared.remaining == 0
    again = await BatchRunner(store, prepared).run()
    assert (again.status, again.ran, again.done, again.passed) == ("completed", 0, 7, 7)


async def test_the_single_spec_batch_runs_one_spec_and_remembers_it(store):
    options = BatchOptions(trials=2)
    prepared = await prepare_batch(store, [PROFILES], options, single="change_of_mind#0")
    assert [s.spec_id for s in prepared.specs] == ["change_of_mind#0"] and prepared.total == 2
    assert store.get_batch(prepared.id).options.only == ["change_of_mind#0"]
    prepared_again = await prepare_resume(store, prepared.id)
    assert [s.spec_id for s in prepared_again.specs] == ["change_of_mind#0"]


async def test_goal_tables_are_kept_when_the_profile_exports_them(store, tmp_path):
    profile = tmp_path / "export_goals.yaml"
    source = (PROFILES / "track_shipped_order.yaml").read_text(encoding="utf-8")
    text = re.sub(r"test_name:\s*\S+", "test_name: export_goals", source)
    text = text.replace("      limit: 8\n", "      limit: 8\n      export: true\n", 1)
    assert "export: true" in text
    profile.write_text(text, encoding="utf-8")
    result, _ = await run_batch(store, [profile])
    stored = next(store.iter_conversations(result.batch_id))
    table = stored.conversation.metadata.get("goal_table")
    assert table and table[0]["answered"] is True

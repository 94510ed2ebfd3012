"""Nothing vanishes: whatever breaks while one conversation is planned, its World built, run,
judged, evaluated or stored, that conversation is stored with a stop reason and the error text,
and the counts a batch gives are the rows it stored.

Each failure point is made to break one of three conversations (track_shipped_order); the
other two run as usual."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.engine import batch_conversation
from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_runner import BatchRunner, prepare_batch
from parley.core.errors import ProviderError
from parley.core.evaluation import verdicts as evaluate_module
from parley.core.records.batch import BatchOptions
from parley.core.reports.stats import summarize
from parley.core.store.store import Store
from parley.tui.cli.main import cli

PROFILES = Path(__file__).resolve().parent.parent / "profiles"
SOURCES = [PROFILES / "track_shipped_order.yaml", PROFILES / "list_my_orders.yaml", PROFILES / "unknown_order_id.yaml"]
BROKEN = "track_shipped_order"


class Breaking(BatchModels):
    """The batch's models, with one role made to break on the BROKEN spec."""

    def __init__(self, options: BatchOptions, point: str) -> None:
        super().__init__(options.models)
        self.point = point

    def user(self, spec, **kw):
        if spec.name == BROKEN and self.point == "plan":
            raise KeyError("the simulator could not be built")
        user = super().user(spec, **kw)
        if spec.name == BROKEN and self.point == "user":
            return RaisingUser(user.name)
        return user

    def bot(self):
        bot = super().bot()
        return RaisingBot(bot) if self.point == "bot" else bot

    def judge(self):
        return RaisingJudge() if self.point == "judge" else super().judge()


class RaisingUser:
    def __init__(self, name: str) -> None:
        self.name = name

    async def next_message(self, transcript):
        raise RuntimeError("the simulator fell over")


class RaisingBot:
    def __init__(self, inner) -> None:
        self.inner, self.name = inner, inner.name

    def system_prompt(self, ctx):
        return self.inner.system_prompt(ctx)

    async def respond(self, transcript, ctx):
        if any("ORD-1003" in (m.content or "") for m in transcript if m.role == "user"):
            raise ProviderError("openai/gpt-4o-mini (bot): server error (500) (gave up after 5 attempts)", status=500)
        return await self.inner.respond(transcript, ctx)


class RaisingJudge:
    name = "offline"

    async def judge(self, conversation, spec, checks):
        if spec.name == BROKEN:
            raise ValueError("the judge fell over")
        from parley.core.evaluation.judge import offline_judgement

        return offline_judgement(checks)


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "p.db")
    yield s
    s.close()


async def run(store: Store, models: BatchModels) -> tuple:
    options = BatchOptions()
    prepared = await prepare_batch(store, SOURCES, options, models=models)
    events = []
    result = await BatchRunner(store, prepared, models=models, on_event=events.append).run()
    return result, events


def stored(store: Store, batch_id: str):
    return {s.spec.name: s for s in store.iter_conversations(batch_id)}


@pytest.mark.parametrize(
    ("point", "stop", "error"),
    [
        ("plan", "infrastructure_error", "preparing the conversation failed: KeyError: 'the simulator could not be built'"),
        ("world", "infrastructure_error", "building its World failed: OverflowError: date value out of range"),
        ("bot", "bot_error", "openai/gpt-4o-mini (bot): server error (500) (gave up after 5 attempts)"),
        ("user", "user_error", "the user simulator failed: RuntimeError: the simulator fell over"),
        ("extraction", "infrastructure_error", "evaluating the conversation failed: ZeroDivisionError: division by zero"),
        ("store", "infrastructure_error", "storing the conversation failed: UnicodeEncodeError: 'utf-8' codec can't encode"),
    ],
)
async def test_every_failure_point_ends_as_a_stored_conversation_and_the_counts_are_the_rows(store, monkeypatch, point, stop, error):
    if point == "world":
        real = batch_conversation.WorldTemplates.new_copy

        def new_copy(self, spec, today):
            if spec.name == BROKEN:
                raise OverflowError("date value out of range")
            return real(self, spec, today)

        monkeypatch.setattr(batch_conversation.WorldTemplates, "new_copy", new_copy)
    if point == "extraction":
        real_extract = evaluate_module.extract_outputs

        def extract(outputs, texts, today=None):
            if any("1Z999AA10123456784" in t for t in texts):  # ORD-1003's tracking number: only when tracked
                return 1 / 0
            return real_extract(outputs, texts, today=today)

        monkeypatch.setattr(evaluate_module, "extract_outputs", extract)
    if point == "store":
        real_save = Store.save_conversation

        def save(self, batch_id, spec, conversation, verdict=None, trial=1):
            if spec.name == BROKEN and conversation.messages:  # the full record is refused; the bare one is not
                conversation.messages[-1].content = "bad \ud800 text"  # a lone surrogate SQLite cannot store
            return real_save(self, batch_id, spec, conversation, verdict, trial)

        monkeypatch.setattr(Store, "save_conversation", save)

    result, events = await run(store, Breaking(BatchOptions(), point))

    rows = stored(store, result.batch_id)
    assert result.status == "completed"
    assert result.done == result.total == len(rows) == store.count_conversations(result.batch_id) == 3
    finished = [e for e in events if e.kind == "batch_finished"][0]
    assert finished.done == summarize(store, result.batch_id).done == 3
    broken = rows[BROKEN]
    assert broken.conversation.stop_reason == stop and broken.conversation.error.startswith(error)
    assert broken.verdict is not None and broken.verdict.outcome == stop
    if point == "extraction":  # it ran to its end: the transcript is kept, and how it had stopped
        assert broken.conversation.messages and broken.conversation.metadata["stopped_as"] == "user_stop"
    if point == "store":  # stored again without what could not be written
        assert broken.conversation.messages == [] and broken.conversation.metadata["broke_at"] == "store"
    assert all(r.verdict.outcome in ("passed", "unverified") for name, r in rows.items() if name != BROKEN)


async def test_a_judge_that_breaks_is_a_judge_error_on_a_stored_conversation(store):
    result, _ = await run(store, Breaking(BatchOptions(), "judge"))
    rows = stored(store, result.batch_id)
    assert result.done == len(rows) == 3
    verdict = rows[BROKEN].verdict
    assert verdict.judge.error == "ValueError: the judge fell over" and verdict.score is None  # never a score
    assert rows[BROKEN].conversation.stop_reason == "user_stop"  # the run itself was fine
    assert summarize(store, result.batch_id).judge_errors == 1


async def test_a_store_that_refuses_everything_fails_the_batch_and_counts_nothing_it_did_not_store(store, monkeypatch):
    def refuse(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(Store, "save_conversation", refuse)
    result, events = await run(store, BatchModels(BatchOptions().models))
    assert result.status == "failed" and "disk full" in result.error
    assert result.done == 0 == store.count_conversations(result.batch_id)


def test_the_cli_prints_the_rows_it_stored(tmp_path, monkeypatch):
    real = batch_conversation.WorldTemplates.new_copy

    def new_copy(self, spec, today):
        if spec.name == BROKEN:
            raise OverflowError("date value out of range")
        return real(self, spec, today)

    monkeypatch.setattr(batch_conversation.WorldTemplates, "new_copy", new_copy)
    db = tmp_path / "p.db"
    result = CliRunner().invoke(cli, ["run", *map(str, SOURCES), "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 1  # a run broke: nothing says the bot is fine
    assert "batch completed: 3 of 3 done" in result.stdout and "Conversations: 3 of 3 done" in result.stdout
    assert "1 infrastructure error" in result.stdout and "building its World failed" in result.stdout
    with Store.open(db) as s:
        assert s.count_conversations() == 3

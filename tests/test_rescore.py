"""`parley rescore BATCH`: a stored batch judged again into a new batch that names it as its
parent, calling neither the bot nor the customer; `--criteria-from` re-reads the expectations,
`--cache` makes a second re-score free, and `parley compare` shows what the judging changed."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from parley.core.engine import prepare_rescore
from parley.core.store.store import Store
from tests.fake_openai_server import TextReply
from tests.lineage_support import FAILING_CHECK, FAILING_NAME, make_suite, parley

JUDGE = "openai-api/fake/judge"
CRITERION = "The bot names the carrier of the parcel"
# One reply the fake judge gives every call: the score's reader takes `score`, the criteria's
# reader `criteria` (decisions past a call's own criteria are ignored).
EVERY_ANSWER = json.dumps(
    {
        "score": 3,
        "comment": "Fine.",
        "criteria": [
            {"criterion": 1, "verdict": "met", "turns": [], "quote": "has shipped with UPS", "reasoning": "It did."},
            {"criterion": 2, "verdict": "not applicable", "turns": [], "quote": "", "reasoning": "Nothing claimed."},
        ],
    }
)


@pytest.fixture(autouse=True)
async def close_clients(close_model_clients):
    """The shared model clients a test's commands opened are closed."""


@pytest.fixture
def suite(tmp_path):
    return make_suite(tmp_path / "suite")


@pytest.fixture
def parent(tmp_path, suite):
    """A stored offline batch of the suite: 3 specs pass, one fails."""
    db = tmp_path / "p.db"
    result = parley("run", suite, "--seed", "5", "--db", db)
    assert result.exit_code == 1, result.output
    with Store.open(db) as store:
        return db, store.resolve_batch_ref("latest")


def stored(db, batch_id):
    with Store.open(db) as store:
        return {(c.spec.spec_id, c.trial): c for c in store.iter_conversations(batch_id)}


def test_a_rescore_is_a_new_batch_of_the_same_conversations_judged_again(parent):
    db, parent_id = parent
    result = parley("rescore", parent_id[:8], "--db", db)
    assert result.exit_code == 1, result.output  # the failing spec still fails: the judging did not change
    assert f"started (re-score of {parent_id}): 4 conversations, 4 to judge again" in result.stdout
    with Store.open(db) as store:
        child = store.get_batch("latest")
    assert child.parent_id == parent_id and child.options.rescore_of == parent_id and child.planned == 4
    before, after = stored(db, parent_id), stored(db, child.id)
    assert sorted(after) == sorted(before)
    for key, copy in after.items():
        original = before[key].conversation
        assert copy.conversation.id != original.id
        assert copy.conversation.messages == original.messages and copy.conversation.tool_calls == original.tool_calls
        assert copy.conversation.final_state == original.final_state
        assert copy.conversation.metadata["rescored_from"] == {"batch_id": parent_id, "conversation_id": original.id}
        assert copy.conversation.usage == {}  # no bot or customer was called
        assert copy.verdict.outcome == before[key].verdict.outcome
    assert [c.name for c in after[(f"{FAILING_NAME}#0", 1)].verdict.failed_checks] == [FAILING_CHECK]

    listed = parley("batches", "list", "--db", db).stdout.splitlines()
    assert listed[1].startswith(child.id[:12]) and f"re-scored {parent_id[:8]}" in listed[1]
    shown = parley("batches", "show", "latest", "--db", db).stdout
    assert f"Made from: re-score of {parent_id} (its stored conversations judged again: judge offline)" in shown
    assert f"Made into: batch {child.id} (completed), re-scored by judge offline" in parley("batches", "show", parent_id, "--db", db).stdout
    compared = parley("compare", parent_id, "latest", "--db", db)
    assert compared.exit_code == 0 and "no change" in compared.stdout.lower()
    assert "re-score of" in compared.stdout


def test_new_criteria_judged_by_an_llm_show_in_compare_as_started_being_met(tmp_path, parent, suite, server):
    db, parent_id = parent
    server.default = TextReply(EVERY_ANSWER)
    edited = tmp_path / "edited"
    shutil.copytree(suite, edited)
    profile = edited / "track_shipped_order.yaml"
    profile.write_text(profile.read_text(encoding="utf-8").replace("expect:\n", f"expect:\n  criteria:\n    - {CRITERION}\n", 1))
    env = {"FAKE_BASE_URL": server.base_url}
    result = parley("rescore", parent_id, "--judge", JUDGE, "--criteria-from", edited, "-c", "1", "--db", db, env=env)
    assert result.exit_code == 1, result.output
    assert {r.body["model"] for r in server.requests} == {"judge"}  # the judge alone: no bot, no customer
    assert len(server.requests) == 8  # 4 conversations: a score and a criteria call each

    with Store.open(db) as store:
        child = store.get_batch("latest")
    assert child.options.criteria_from == [str(edited)] and child.options.models.judge == JUDGE
    after = stored(db, child.id)
    [criterion] = [c for c in after[("track_shipped_order#0", 1)].verdict.checks if c.kind == "criterion" and not c.by_default]
    assert (criterion.name, criterion.outcome) == (CRITERION, "pass")
    assert after[("track_shipped_order#0", 1)].spec.expect.criteria == [CRITERION]
    assert not any(c.kind == "criterion" and not c.by_default for c in after[("list_my_orders#0", 1)].verdict.checks)

    report = parley("compare", parent_id, child.id, "--db", db).stdout
    assert "Criteria in words:" in report
    assert f"| {CRITERION} | 1 | 0 |" in report


def test_under_the_cache_a_second_rescore_with_the_same_judge_calls_no_model(parent, server):
    db, parent_id = parent
    server.default = TextReply(EVERY_ANSWER)
    env = {"FAKE_BASE_URL": server.base_url}
    first = parley("rescore", parent_id, "--judge", JUDGE, "--cache", "--db", db, env=env)
    assert first.exit_code == 1, first.output
    calls = len(server.requests)
    assert calls == 8
    second = parley("rescore", parent_id, "--judge", JUDGE, "--cache", "--db", db, env=env)
    assert second.exit_code == 1, second.output
    assert len(server.requests) == calls  # every judgement replayed from the database
    with Store.open(db) as store:
        first_id, second_id = store.resolve_batch_ref("latest~1"), store.resolve_batch_ref("latest")
    verdicts = [{k: c.verdict.model_dump(exclude={"conversation_id"}) for k, c in stored(db, b).items()} for b in (first_id, second_id)]
    for side in verdicts:  # the replayed replies report no usage: only the calls made cost anything
        for verdict in side.values():
            verdict["judge"]["usage"] = None
    assert verdicts[0] == verdicts[1]


def test_an_interrupted_rescore_resumes_like_any_batch(parent):
    db, parent_id = parent

    async def prepare() -> str:
        with Store.open(db) as store:
            return (await prepare_rescore(store, parent_id)).id

    child_id = asyncio.run(prepare())  # planned and stored, never run (as if killed at once)
    result = parley("run", "--resume", child_id, "--db", db)
    assert result.exit_code == 1, result.output
    assert f"batch {child_id} resumed: 4 conversations, 0 already done, 4 to judge again" in result.stdout
    assert len(stored(db, child_id)) == 4


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nope123"], 1, "error: "),
        (["--judge", "not a model"], 2, "--judge"),
    ],
)
def test_mistakes_are_one_line_and_a_non_zero_exit(parent, args, code, message):
    db, _ = parent
    result = parley("rescore", *args, "--db", db)
    assert result.exit_code == code and message in result.output
    assert "Traceback" not in result.output


def test_criteria_from_files_that_make_none_of_the_batchs_specs_are_refused(tmp_path, parent):
    db, parent_id = parent
    other = tmp_path / "other.yaml"
    other.write_text("test_name: elsewhere\nuser:\n  role: r\n  goals: [hi]\nexpect:\n  criteria: [The bot is kind]\n", encoding="utf-8")
    result = parley("rescore", parent_id, "--criteria-from", other, "--db", db)
    assert result.exit_code == 1
    assert "is made by --criteria-from" in result.output and "spec ids are the test name and its index" in result.output
    with Store.open(db) as store:
        assert store.count_batches() == 1  # nothing stored

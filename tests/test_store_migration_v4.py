"""Schema v4: a database written before parley told who failed is rewritten so its batches read
as new ones do, and the old `error` rows it cannot attribute keep a meaning the report states."""

from __future__ import annotations

import json

import pytest

from parley.core.records.verdict import CheckResult
from parley.core.reports.markdown import render_markdown
from parley.core.reports.stats import LEGACY_ERROR_NOTE, summarize
from parley.core.store.rows import compact_json, conversation_row
from parley.core.store.schema import MIGRATIONS, legacy_stop
from parley.core.store.store import Store
from tests.test_store_fixtures import batch, check, conversation, spec

BOT = "openai/gpt-4o-mini"


def test_old_error_texts_say_who_failed():
    assert legacy_stop(BOT, f"{BOT} (bot): server error (500) (gave up after 5 attempts)") == "bot_error"
    assert legacy_stop("rasa:http://h/w", "rasa:http://h/w: HTTP 500 from POST http://h/w: boom") == "bot_error"
    assert legacy_stop(BOT, "openai/gpt-4o (user): rate limited by http://x (429)") == "infrastructure_error"
    assert legacy_stop(BOT, "A call timed out: TimeoutError") == "error"
    assert legacy_stop(BOT, "KeyError: 'goal'") == "error"


def _old_row(
    store: Store,
    batch_id: str,
    index: int,
    *,
    stop: str,
    error: str | None,
    bot: str,
    outcome: str | None,
    checks: list[CheckResult],
    judge: str = "offline",
    score: int | None = 3,
) -> str:
    conv = conversation().model_copy(update={"stop_reason": "user_stop", "error": error, "bot_model": bot})
    row = conversation_row(batch_id, spec("old", index), conv, None, 1)
    row["stop_reason"] = stop  # the old catch-all `error` is not a StopReason any more
    columns = ", ".join(row)
    store.db.execute(f"INSERT INTO conversations ({columns}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    if outcome is not None:
        store.db.execute(
            "INSERT INTO verdicts (conversation_id, outcome, passed, score, comment, judge, error, checks, outputs, policy_violations)"
            " VALUES (?, ?, ?, ?, NULL, ?, NULL, ?, '[]', 0)",
            [
                conv.id,
                outcome,
                int(outcome == "passed"),
                score,
                json.dumps({"judge": judge, "score": score}),
                compact_json([c.model_dump(mode="json") for c in checks]),
            ],
        )
    return conv.id


@pytest.mark.parametrize("version", [2, 3])  # before batch lineage, and after it
def test_an_older_database_is_migrated_and_reads_as_a_new_one(tmp_path, version):
    path = tmp_path / "old.db"
    completed = check("conversation completed", "not_applicable", "The run itself broke", kind="conversation_completed")
    said = check("bot says /refund/", "fail", "No bot message matches.", kind="bot_says")
    done = check("conversation completed", "pass", "The customer ended it", kind="conversation_completed")
    with Store.open(path, migrations=MIGRATIONS[:version]) as old:
        if version >= 3:  # a re-run of a batch that stopped at its budget: the lineage stays
            parent = old.create_batch(batch(planned=9, status="stopped_budget"))
            b = old.create_batch(batch(planned=9, status="completed", parent_id=parent.id))
        else:  # written as that parley wrote it: no parent_id column yet
            b = batch(planned=9, status="completed")
            row = {k: v for k, v in old._batch_row(b).items() if k != "parent_id"}
            old.db.execute(f"INSERT INTO batches ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
        ids = {
            "bot": _old_row(
                old,
                b.id,
                0,
                stop="error",
                error=f"{BOT} (bot): server error (500)",
                bot=BOT,
                outcome="error",
                checks=[said, completed],
                score=None,
            ),
            "connector": _old_row(
                old,
                b.id,
                1,
                stop="error",
                error="rasa:http://h/w: HTTP 500 from POST http://h/w",
                bot="rasa:http://h/w",
                outcome="error",
                checks=[completed],
                score=None,
            ),
            "user": _old_row(
                old,
                b.id,
                2,
                stop="error",
                error="openai/gpt-4o (user): rate limited (429)",
                bot=BOT,
                outcome="error",
                checks=[completed],
                score=None,
            ),
            "unknown": _old_row(
                old, b.id, 3, stop="error", error="A call timed out: TimeoutError", bot=BOT, outcome="error", checks=[completed], score=None
            ),
            "cancelled": _old_row(
                old, b.id, 4, stop="cancelled", error="the batch was stopped", bot=BOT, outcome="error", checks=[completed], score=None
            ),
            "judge": _old_row(old, b.id, 5, stop="user_stop", error=None, bot=BOT, outcome="error", checks=[done], score=None),
            "nothing": _old_row(old, b.id, 6, stop="user_stop", error=None, bot=BOT, outcome="passed", checks=[done]),
            "checked": _old_row(
                old,
                b.id,
                7,
                stop="user_stop",
                error=None,
                bot=BOT,
                outcome="passed",
                checks=[check("bot says /hi/", kind="bot_says"), done],
            ),
            "llm": _old_row(old, b.id, 8, stop="user_stop", error=None, bot=BOT, outcome="passed", checks=[done], judge="openai/gpt-4o"),
        }
        old.db.conn.commit()
        assert old.schema_version() == version

    with Store.open(path) as store:
        assert store.schema_version() == len(MIGRATIONS)
        if version >= 3:
            assert (store.get_batch(b.id).parent_id, store.get_batch(parent.id).status) == (parent.id, "stopped_budget")
        got = {k: store.load_conversation(cid) for k, cid in ids.items()}
        stops = {k: s.conversation.stop_reason for k, s in got.items()}
        outcomes = {k: s.verdict.outcome for k, s in got.items()}
        summary = summarize(store, b.id)
        md = render_markdown(summary)
        legacy = [r.id for r in store.conversation_rows(b.id, outcome="error")]

    assert stops == {
        "bot": "bot_error",
        "connector": "bot_error",
        "user": "infrastructure_error",
        "unknown": "error",
        "cancelled": "cancelled",
        "judge": "user_stop",
        "nothing": "user_stop",
        "checked": "user_stop",
        "llm": "user_stop",
    }
    assert outcomes == {
        "bot": "bot_error",
        "connector": "bot_error",
        "user": "infrastructure_error",
        "unknown": "error",
        "cancelled": "cancelled",
        "judge": "evaluation_error",
        "nothing": "unverified",
        "checked": "passed",
        "llm": "passed",
    }
    # a bot error's unreached check is "not run" and the bot's breaking is the failed check
    checks = {c.name: c.outcome for c in got["bot"].verdict.checks}
    assert checks == {"bot says /refund/": "not_run", "conversation completed": "fail"}
    assert got["user"].verdict.checks[0].outcome == "not_run"
    assert not got["nothing"].verdict.passed and got["checked"].verdict.passed
    # the counts, and what the one unattributable row means
    assert (summary.passed, summary.bot_errors, summary.infrastructure_errors, summary.legacy_errors) == (2, 2, 1, 1)
    assert (summary.cancelled, summary.evaluation_errors, summary.unverified) == (1, 1, 1)
    assert summary.pass_rate_denominator == 4
    assert LEGACY_ERROR_NOTE in md and "1 conversation(s) end with `error`" in md
    assert legacy == [ids["unknown"]]

"""parley.api: conversations built in code (goals, personality, world, expectations), loaded from
files, run as one stored batch (source `python`, listed and reported as any batch), results read
as parley's records; bad input is one clear error before anything runs."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import parley.api as api
from parley.api import (
    ConfigError,
    Expectations,
    ParleyError,
    ProfileError,
    SpecsInvalid,
    conversation,
    load_specs,
    run,
    run_sync,
    say,
)
from tests import python_bots
from tests.conftest import PINNED_TODAY

ROOT = Path(__file__).resolve().parent.parent


def test_every_name_of_the_api_comes_from_a_face_of_the_engine():
    import importlib

    for name in api.__all__:
        value = getattr(api, name)
        module = getattr(value, "__module__", "") or ""
        assert not module.startswith("parley.api"), name  # defined behind a face of parley.core, shown here
    assert importlib.import_module("parley.api").__file__.endswith("core/api/__init__.py")


def test_a_conversation_built_in_code_is_a_spec_like_any_other():
    spec = conversation(
        "late_parcel",
        goals=["track order ORD-1003"],
        personality="formal-user",
        context=["your name is Maya"],
        customer_id="C-100",
        today=PINNED_TODAY,
        world=[{"id": "ORD-1003", "placed_days_ago": 3}, {"id": "ORD-1004", "status": "shipped"}],
        orders={"ORD-1003": "shipped"},
        tools_called=["track_order"],
        never_says=["cancelled"],
        seed=7,
    )
    assert (spec.spec_id, spec.kind, spec.source, spec.name) == ("late_parcel#0", "profile", "python", "late_parcel")
    assert spec.context[0].startswith("you always write formally") and spec.context[-1] == "your name is Maya"
    assert [r["id"] for r in spec.world.rows["orders"]] == ["ORD-1003", "ORD-1004"] and spec.world.today == PINNED_TODAY
    assert spec.expect == Expectations(
        records={"orders/ORD-1003": {"status": "shipped"}}, tools_called=["track_order"], bot_never_says=["cancelled"]
    )
    assert conversation("late_parcel", goals=["x"], seed=7).seed == spec.seed != conversation("late_parcel", goals=["x"]).seed


def test_the_world_and_the_checks_are_written_as_in_a_profile():
    """`world=` takes a profile's `world:` mapping as it is, and the checks take the `expect:` names."""
    spec = conversation(
        "as_yaml",
        goals=["track order ORD-2001"],
        world={"customer_id": "C-200", "today": "2026-11-21", "orders": [{"id": "ORD-2001", "status": "shipped"}]},
        bot_says=["UPS"],
        bot_never_says=["cancelled"],
        tools_attempted=["track_order"],
    )
    assert (spec.world.customer_id, spec.world.today, [r["id"] for r in spec.world.rows["orders"]]) == ("C-200", PINNED_TODAY, ["ORD-2001"])
    assert spec.expect == Expectations(bot_says=["UPS"], bot_never_says=["cancelled"], tools_attempted=["track_order"])
    assert conversation("short", goals=["x"], says=["UPS"]).expect == Expectations(bot_says=["UPS"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give `goals` for the simulated customer, or `steps` to script it"),
        ({"goals": "track ORD-1003"}, "lists of strings, not one string"),
        ({"goals": ["x"], "customer_id": "100"}, "customer '100' is not in world orders; did you mean 'C-100'"),
        ({"goals": ["x"], "personality": "formal_user"}, "no shipped personality 'formal_user'; did you mean 'formal-user'"),
        ({"goals": ["x"], "orders": {"ORD-1003": "lost"}}, "orders.ORD-1003"),
        ({"goals": ["x"], "tools_called": ["track"]}, "tools_called: unknown tool 'track'; did you mean 'track_order'"),
        ({"goals": ["x"], "world": [{"id": "ORD-1003", "colour": "red"}]}, "colour"),
        ({"goals": ["x"], "world": {"customer": "C-200"}}, "world.customer: unknown key 'customer'"),
        ({"goals": ["x"], "world": ["ORD-1003"]}, "world: expected a world's name, a world mapping, or rows of its records"),
        ({"goals": ["x"], "customer_id": "C-300", "world": {"customer_id": "C-200"}}, "customer_id 'C-300' and world.customer_id"),
    ],
)
def test_a_conversation_that_cannot_run_is_one_error_naming_it(kwargs, message):
    with pytest.raises(ProfileError, match=message) as caught:
        conversation("bad", **kwargs)
    assert str(caught.value).startswith("conversation 'bad': ")


def test_a_run_is_a_stored_batch_that_parley_lists_reports_and_compares(tmp_path):
    db = tmp_path / "p.db"
    spec = conversation("track", goals=["track order ORD-1003"], today=PINNED_TODAY, tools_called=["track_order"])
    first = run_sync([spec], bot=python_bots.order_bot, trials=2, db=db)
    assert first.passed and first.ok(strict=True) and first.status == "completed"
    assert first.summary.passed == 2 and first.summary.pass_rate == 1.0 and first.summary.pass_rate_interval is not None
    assert [(c.spec.spec_id, c.trial) for c in first.conversations] == [("track#0", 1), ("track#0", 2)]
    second = run_sync([spec], bot=python_bots.lying_bot, trials=2, db=db)
    assert not second.passed and not second.ok() and second.summary.failed == 2

    def parley(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "parley.tui.cli.main", *args, "--db", str(db)], capture_output=True, text=True)

    listing = json.loads(parley("batches", "list", "--json").stdout)
    assert [(b["id"], b["sources"], b["bot"]) for b in listing] == [
        (second.batch_id, ["python"], "python:tests.python_bots:lying_bot"),
        (first.batch_id, ["python"], "python:tests.python_bots:order_bot"),
    ]
    compared = parley("compare", "latest~1", "latest")
    assert "track#0" in compared.stdout and "regress" in compared.stdout.lower()
    rerun = parley("run", "--rerun", "failed", "latest")
    assert rerun.returncode == 1 and "it was run from Python" in rerun.stderr


def test_explain_says_what_failed_with_its_evidence_and_the_last_turns(tmp_path):
    spec = conversation("cancel", steps=[say("Please cancel ORD-1004")], today=PINNED_TODAY, orders={"ORD-1004": "cancelled"})
    [one] = run_sync(spec, bot=python_bots.lying_bot, db=tmp_path / "p.db").conversations
    text = one.explain()
    assert text.splitlines()[0] == "cancel#0 trial 1: failed: a check about the bot failed"
    assert "- fail: ORD-1004 ends cancelled: ORD-1004 is processing, expected cancelled" in text
    assert "- fail: claims match actions: 1 of the bot's 1 claim is not backed by what it did. Turn 1" in text
    assert text.splitlines()[-3:-1] == ["  customer: Please cancel ORD-1004", "  bot: I have cancelled ORD-1004 for you."]


def test_run_awaits_on_the_callers_loop_and_run_sync_refuses_to_nest(tmp_path):
    spec = conversation("track", goals=["track order ORD-1003"], today=PINNED_TODAY, tools_called=["track_order"])

    async def main() -> None:
        result = await run(spec, bot=python_bots.async_order_bot, db=tmp_path / "p.db")
        assert result.conversations[0].tool_calls[0].name == "track_order"
        with pytest.raises(ParleyError, match="cannot run inside a running event loop: in async code, `await run"):
            run_sync(spec, db=tmp_path / "p.db")

    asyncio.run(main())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trials": 0}, "trials: expected a finite number from 1 to 1000, got 0"),
        ({"concurrency": 2.5}, "concurrency: expected a whole number"),
        ({"timeout_s": math.inf}, "timeout_s: expected a finite number from 0.1, got inf"),
        ({"timeout_s": math.nan}, "timeout_s: expected a finite number from 0.1, got nan"),
        ({"bot_timeout_s": -1}, "bot_timeout_s: expected a finite number from 0.1"),
        ({"max_turns": 5000}, "max_turns: expected a finite number from 1 to 1000, got 5000"),
        ({"bot": "python:tests.python_bots:nope"}, "has no 'nope'"),
        ({"bot": 42}, "expected a bot's name or a Python callable, got int"),
        ({"judge": "gpt-4o"}, "gpt-4o"),
    ],
)
def test_bad_options_are_refused_before_anything_is_stored(tmp_path, kwargs, message):
    spec = conversation("x", goals=["track order ORD-1003"])
    with pytest.raises(ConfigError, match=message):
        run_sync(spec, db=tmp_path / "p.db", **kwargs)
    from parley.core.store import Store

    with Store.open(tmp_path / "p.db") as store:
        assert store.count_batches() == 0


def test_two_conversations_with_one_spec_id_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="two conversations have the spec id 'x#0'"):
        run_sync([conversation("x", goals=["a"]), conversation("x", goals=["b"])], db=tmp_path / "p.db")


def test_load_specs_reads_files_as_parley_run_does_and_names_every_problem(tmp_path):
    specs = load_specs(ROOT / "profiles")
    assert len(specs) == 27 and specs[0].spec_id == "cancel_already_cancelled#0"
    (tmp_path / "bad.yaml").write_text("test_name: bad\nuser:\n  role: a customer\n  goals: []\n  languag: English\n")
    with pytest.raises(SpecsInvalid) as caught:
        load_specs([tmp_path])
    assert f"{tmp_path / 'bad.yaml'}:5:3: user.languag: unknown key 'languag'; did you mean 'language'?" in str(caught.value)
    assert caught.value.errors and all(e.file for e in caught.value.errors)

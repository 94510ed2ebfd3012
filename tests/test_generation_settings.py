"""Generation settings per role and prices for models the table does not know: each setting given
on the command line, in a profile, through the Python API or the service reaches the request the
model server receives; it is recorded with the batch and `batches show` says it; a local model
priced at 0 runs under --budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.core.library import load_specs, run_sync
from parley.core.store.store import Store
from parley.tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
TRACK = PROFILES / "track_shipped_order.yaml"
PLAYBOOK = PROFILES / "playbooks" / "track_shipped_order.yaml"


def parley(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture
def fake(server, monkeypatch):
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    monkeypatch.setenv("OLLAMA_BASE_URL", server.base_url)
    return server


def sent(server, model: str) -> list[dict]:
    """The generation settings of every request `server` received for `model`."""
    keys = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "stop")
    return [{k: r.body[k] for k in keys if k in r.body} for r in server.requests if r.body.get("model") == model]


def test_each_setting_of_each_role_reaches_the_requests_and_the_batch_says_it(fake, tmp_path):
    db = tmp_path / "parley.db"
    gen = [
        "bot.temperature=0.3",
        "bot.top_p=0.9",
        "bot.max_tokens=99",
        "bot.seed=7",
        "bot.stop=###",
        "bot.stop=END",
        "user.temperature=1.1",
        "user.top_p=0.5",
        "user.max_tokens=77",
        "user.seed=11",
        "user.stop=Bye",
        "judge.top_p=0.2",
        "judge.max_tokens=123",
        "judge.seed=5",
        "judge.stop=}}",
    ]
    result = parley(
        "run", TRACK, "--bot", "openai-api/fake/botm", "--user", "openai-api/fake/userm", "--judge", "openai-api/fake/judgem",
        "--max-turns", "1", "--db", db, *[a for g in gen for a in ("--gen", g)],
    )  # fmt: skip
    assert "Ran 1 conversation" in result.stdout, result.output

    bot, user, judge = sent(fake, "botm"), sent(fake, "userm"), sent(fake, "judgem")
    assert bot and user and judge
    assert all(r == {"temperature": 0.3, "top_p": 0.9, "max_tokens": 99, "seed": 7, "stop": ["###", "END"]} for r in bot), bot
    assert all(r == {"temperature": 1.1, "top_p": 0.5, "max_tokens": 77, "seed": 11, "stop": ["Bye"]} for r in user), user
    # the judge keeps its default temperature 0 where nothing replaced it
    assert judge[0] == {"temperature": 0.0, "top_p": 0.2, "max_tokens": 123, "seed": 5, "stop": ["}}"]}, judge

    shown = parley("batches", "show", "--db", db).stdout
    assert "Generation: bot temperature=0.3, top_p=0.9, max_tokens=99, seed=7, stop=['###', 'END']; " in shown
    assert "user temperature=1.1, top_p=0.5, max_tokens=77, seed=11, stop=['Bye'] over its profile's llm: block; " in shown
    assert "judge temperature=0, top_p=0.2, max_tokens=123, seed=5, stop=['}}']" in shown
    with Store.open(db) as store:
        [row] = store.list_batches()
    assert row.batch.options.models.generation["bot"].temperature == 0.3


def test_without_settings_each_role_keeps_its_defaults(fake, tmp_path):
    db = tmp_path / "parley.db"
    parley("run", TRACK, "--bot", "openai-api/fake/botm", "--user", "openai-api/fake/userm", "--judge", "openai-api/fake/judgem",
           "--max-turns", "1", "--db", db)  # fmt: skip
    assert all(r == {} for r in sent(fake, "botm"))  # the server's own defaults: nothing sent
    user = sent(fake, "userm")
    assert user and all(r["temperature"] == 0.8 and "top_p" not in r for r in user)  # Sensei's default temperature
    judge = sent(fake, "judgem")
    assert judge and judge[0] == {"temperature": 0.0, "max_tokens": 400}  # PARLEY_JUDGE_MAX_TOKENS' default
    shown = parley("batches", "show", "--db", db).stdout
    assert (
        "Generation: bot the server's defaults; user its profile's llm: block; judge temperature=0, max_tokens=400 (its defaults)" in shown
    )


def test_a_profiles_llm_block_sets_the_customers_model_and_gen_wins_over_it(fake, tmp_path):
    profile = tmp_path / "tuned.yaml"
    profile.write_text(
        TRACK.read_text(encoding="utf-8").replace(
            "user:", "llm:\n  model: gpt-4o\n  temperature: 0.4\n  top_p: 0.7\n  max_tokens: 64\n  stop: [Thanks]\nuser:", 1
        ),
        encoding="utf-8",
    )
    common = ("run", profile, "--user", "openai-api/fake/userm", "--max-turns", "1", "--db", tmp_path / "p.db")
    parley(*common)
    user = sent(fake, "userm")
    assert user and all((r["temperature"], r["top_p"], r["max_tokens"], r["stop"]) == (0.4, 0.7, 64, ["Thanks"]) for r in user), user
    assert all(isinstance(r["seed"], int) for r in user)  # each conversation's own seed, as without the block
    fake.reset()
    parley(*common, "--gen", "user.top_p=0.1")
    user = sent(fake, "userm")
    assert user and all(r["top_p"] == 0.1 and r["temperature"] == 0.4 and r["max_tokens"] == 64 for r in user)


def test_the_python_api_takes_generation_settings_and_prices(fake, tmp_path):
    result = run_sync(
        load_specs(PLAYBOOK),
        bot="openai-api/fake/botm",
        gen={"bot": {"temperature": 0.25, "stop": ["STOP"]}},
        price={"openai-api/fake/botm": (1.0, 2.0)},
        db=tmp_path / "api.db",
    )
    assert sent(fake, "botm") and all(r == {"temperature": 0.25, "stop": ["STOP"]} for r in sent(fake, "botm"))
    with Store.open(tmp_path / "api.db") as store:
        batch = store.get_batch(result.batch_id)
    assert batch.options.prices["openai-api/fake/botm"].output_per_m == 2.0
    assert result.summary.cost_usd is not None and result.summary.cost_usd > 0


def test_an_offline_roles_settings_are_kept_and_said_not_sent(tmp_path):
    db = tmp_path / "p.db"
    assert parley("run", PLAYBOOK, "--gen", "bot.temperature=0.2", "--db", db).exit_code == 0
    shown = parley("batches", "show", "latest", "--db", db).stdout
    assert "Generation: bot temperature=0.2 kept, not sent (offline: no model to send them to); user none (offline" in shown


def test_a_bad_setting_is_one_line_naming_it(tmp_path):
    for entry, said in (
        ("bot.warmth=1", "'warmth' is not a generation setting; they are temperature, top_p, max_tokens, seed, stop"),
        ("robot.temperature=1", "'robot' is not a role or a bot's name; they are bot, user, judge"),
        ("judge.temperature=hot", "temperature: expected a number, got 'hot'"),
        ("judge.temperature=3", "judge.temperature: Input should be less than or equal to 2"),
        ("temperature", "give ROLE.KEY=VALUE"),
    ):
        result = CliRunner().invoke(cli, ["run", str(PLAYBOOK), "--gen", entry, "--db", str(tmp_path / "p.db")])
        assert result.exit_code == 2 and said in result.stderr, (entry, result.output)
        assert "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["run", str(PLAYBOOK), "--price", "ollama/x=cheap", "--db", str(tmp_path / "p.db")])
    assert result.exit_code == 2 and "ollama/x=cheap: give MODEL=INPUT/OUTPUT" in result.stderr


def test_a_local_model_priced_at_zero_runs_under_a_budget(fake, tmp_path):
    db = tmp_path / "parley.db"
    refused = parley("run", PLAYBOOK, "--bot", "ollama/llama3", "--budget", "0.01", "--db", db)
    assert refused.exit_code == 1
    assert "the price table does not know the bot's ollama/llama3" in refused.stderr
    assert "--price ollama/llama3=INPUT/OUTPUT" in refused.stderr

    ran = parley("run", PLAYBOOK, "--bot", "ollama/llama3", "--price", "ollama/llama3=0", "--budget", "0.01", "--db", db)
    assert "Ran 1 conversation" in ran.stdout, ran.output
    with Store.open(db) as store:
        [row] = store.list_batches()
    assert row.summary.cost_usd == 0.0  # measured: free, not unknown
    assert row.batch.options.budget_usd == 0.01 and row.batch.status == "completed"
    assert "Prices: ollama/llama3 free" in parley("batches", "show", "--db", db).stdout


def test_a_price_makes_the_cost_of_each_call(fake, tmp_path):
    db = tmp_path / "parley.db"
    fake.push_text("Hello, how can I help?", usage=(1_000_000, 500_000))
    parley("run", PLAYBOOK, "--bot", "ollama/llama3", "--price", "ollama/llama3=0.2/0.6", "--max-turns", "1", "--db", db)
    with Store.open(db) as store:
        [row] = store.list_batches()
        [conversation] = store.conversation_rows(row.batch.id)
    assert conversation.cost_usd == pytest.approx(0.2 + 0.3)


async def test_the_service_takes_generation_settings_and_prices(fake, tmp_path, close_model_clients):
    from tests.service_support import service, wait_for

    async with service(tmp_path) as client:
        refused = await client.post("/api/batches", json={"profiles": [{"path": "playbooks"}], "gen": ["bot.heat=1"]})
        assert refused.status_code == 422
        assert refused.json()["detail"][0]["loc"] == ["body", "gen"]
        assert "'heat' is not a generation setting" in refused.json()["detail"][0]["msg"]
        body = {
            "profiles": [{"path": "playbooks/track_shipped_order.yaml"}],
            "models": {"bot": "openai-api/fake/botm"},
            "gen": ["bot.temperature=0.6", "bot.max_tokens=50"],
            "price": ["openai-api/fake/botm=0"],
        }
        launched = await client.post("/api/batches", json=body)
        assert launched.status_code == 201, launched.text
        view = await wait_for(client, launched.json()["batch_id"])
    assert view["status"] == "completed"
    assert sent(fake, "botm") and all(r == {"temperature": 0.6, "max_tokens": 50} for r in sent(fake, "botm"))
    with Store.open(tmp_path / "parley.db") as store:
        batch = store.get_batch(launched.json()["batch_id"])
    assert batch.options.models.generation["bot"].max_tokens == 50 and "openai-api/fake/botm" in batch.options.prices


def test_the_judges_output_cap_is_its_max_tokens_setting(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("PARLEY_JUDGE_MAX_TOKENS", "250")
    parley("run", PLAYBOOK, "--judge", "openai-api/fake/judgem", "--db", tmp_path / "a.db")
    assert sent(fake, "judgem")[0]["max_tokens"] == 250  # the environment's cap is the default
    fake.reset()
    parley("run", PLAYBOOK, "--judge", "openai-api/fake/judgem", "--gen", "judge.max_tokens=60", "--db", tmp_path / "b.db")
    assert sent(fake, "judgem")[0]["max_tokens"] == 60  # and --gen replaces it

"""Folders as real Sensei and simulation-service repositories hold them: YAML that is not a
profile, files that share a test name, identical copies, a prompts/ folder beside the
scenarios, evaluator prompts with literal JSON; and the options that say where files are."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from parley.core.specs.sources import load_specs
from parley.core.store.store import Store
from parley.tui.cli.main import cli


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def profile_text(test_name: str, goal: str = "where is my parcel") -> str:
    return f"test_name: {test_name}\nuser:\n  role: a customer\n  context: []\n  goals:\n    - {goal}\n"


def test_yaml_that_is_not_a_profile_is_skipped_with_its_reason(tmp_path):
    write(tmp_path, "profiles/order.yml", profile_text("order"))
    write(tmp_path, "rules/polite.yaml", "name: polite\nactive: true\nconversations: 1\noracle: 'True'\n")
    write(tmp_path, "docker-compose.yml", "services:\n  bot: {image: shop}\n")
    write(tmp_path, "bot.yml", "base_url: http://127.0.0.1:5005\nsend_message: {path: /chat}\n")
    write(tmp_path, "run.yml", "project_folder: shop\nuser_profile: order.yml\n")
    write(tmp_path, "package.json", '{"name": "shop-bot"}')
    result = load_specs([tmp_path], seed=0)
    assert result.ok and [s.spec_id for s in result.specs] == ["order#0"]
    assert result.skipped == [
        f"{tmp_path}/bot.yml: a chatbot connector file (give it to --bot http:FILE)",
        f"{tmp_path}/docker-compose.yml: a Docker Compose file",
        f"{tmp_path}/package.json: a JSON file that is not a scenario file (no scenarios; keys: name)",
        f"{tmp_path}/rules/polite.yaml: a Sensei rule file (oracle:), checked on conversations by sensei-check, not run",
        f"{tmp_path}/run.yml: not a profile, playbook or scenario file (no test_name or user:; keys: project_folder, user_profile)",
    ]


def test_a_file_named_explicitly_that_is_not_a_profile_is_an_error(tmp_path):
    rule = write(tmp_path, "polite.yaml", "name: polite\noracle: 'True'\n")
    result = load_specs([rule], seed=0)
    assert [e.render() for e in result.blocking] == [
        f"{rule}: not a profile or playbook: a Sensei rule file (oracle:), checked on conversations by sensei-check, not run"
    ]


def test_files_sharing_a_test_name_get_ids_of_their_own_and_a_note(tmp_path):
    write(tmp_path, "bikes/eval/qa.yml", profile_text("qa", "opening hours"))
    write(tmp_path, "vets/eval/qa.yml", profile_text("qa", "prices"))
    write(tmp_path, "vets/visit.yml", profile_text("qa", "a visit"))
    result = load_specs([tmp_path], seed=0)
    assert result.ok
    assert [s.spec_id for s in result.specs] == ["qa/bikes/eval/qa#0", "qa/vets/eval/qa#0", "qa/visit#0"]
    assert {s.name for s in result.specs} == {"qa"}
    assert len({s.seed for s in result.specs}) == 3
    assert result.notes == [
        "the test name 'qa' is used by 3 files: their conversations are qa/bikes/eval/qa#N, qa/vets/eval/qa#N, qa/visit#N"
    ]


def test_byte_identical_files_are_one(tmp_path):
    first = write(tmp_path, "a/order.yml", profile_text("order"))
    write(tmp_path, "b/order_copy.yml", profile_text("order"))
    result = load_specs([tmp_path], seed=0)
    assert result.ok and [s.spec_id for s in result.specs] == ["order#0"]
    assert result.notes == [f"{tmp_path}/b/order_copy.yml: the same bytes as {first}; read once"]


# -- the simulation service's files ---------------------------------------------------------------

AGENT = "You are the shop's agent. Today is {CURRENT_DATE}. Say end_call when done.\n"
CLIENT = "You are a customer: {PERSONALITY}. You want {ORDER_GOAL}.\n"
EVALUATOR = 'Judge the agent. Reply as JSON: { "score": 1, "comment": "why" }\n'


def service_repo(root: Path) -> Path:
    write(root, "prompts/agent_system.txt", AGENT)
    write(root, "prompts/client_system.txt", CLIENT)
    write(root, "prompts/evaluator_system.txt", EVALUATOR)
    scenarios = root / "scenarios" / "sample.json"
    scenarios.parent.mkdir(parents=True)
    scenarios.write_text(
        json.dumps([{"name": "calm", "variables": {"PERSONALITY": "calm", "ORDER_GOAL": "two pizzas", "CURRENT_DATE": "2026-11-21"}}]),
        encoding="utf-8",
    )
    return scenarios


def test_a_prompts_folder_beside_the_scenarios_is_used_and_said(tmp_path):
    scenarios = service_repo(tmp_path)
    result = load_specs([tmp_path / "scenarios"], seed=0)
    assert result.ok, [e.render() for e in result.errors]
    (spec,) = result.specs
    assert spec.extra["agent_prompt"] == AGENT.replace("{CURRENT_DATE}", "2026-11-21")
    assert spec.extra["client_prompt"] == "You are a customer: calm. You want two pizzas.\n"
    assert spec.extra["evaluator_prompt"] == EVALUATOR  # literal JSON, sent as written
    assert result.notes == [
        f"{scenarios}: prompt templates from {tmp_path / 'prompts'} (agent: agent_system.txt, client: client_system.txt, "
        "evaluator: evaluator_system.txt)",
        f"{scenarios}: the evaluator template {tmp_path / 'prompts/evaluator_system.txt'} uses none of the known "
        "placeholders: sent as written, as the service does",
    ]


def test_an_evaluator_template_with_known_placeholders_stays_strict(tmp_path):
    scenarios = service_repo(tmp_path)
    write(tmp_path, "prompts/evaluator_system.txt", 'The customer wanted {ORDER_GOAL}. Reply { "score": 1 }\n')
    result = load_specs([scenarios], seed=0)
    assert [e.line for e in result.errors] == [1]  # checked as a format string: the JSON braces are errors
    assert all("literal brace" in e.reason for e in result.errors)


def run_parley(*args: object, cwd: Path) -> object:
    import os

    before = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    finally:
        os.chdir(before)


def test_run_takes_the_template_options_and_keeps_them_for_resume(tmp_path):
    scenarios = service_repo(tmp_path)
    other = write(tmp_path, "mine/agent.txt", "You are a terse agent on {CURRENT_DATE}.\n")
    db = tmp_path / "p.db"
    result = run_parley("run", scenarios, "--agent-template", other, "--db", db, cwd=tmp_path)
    assert "note: " in result.output and "prompt templates from" in result.output
    with Store.open(db) as store:
        (row,) = store.list_batches()
        assert row.batch.options.loading.agent_template == str(other)
        (stored,) = list(store.iter_conversations(row.batch.id))
    assert stored.spec.extra["agent_prompt"] == "You are a terse agent on 2026-11-21.\n"
    assert stored.spec.extra["client_prompt"].startswith("You are a customer: calm.")


def test_personalities_option_on_validate_and_expand(tmp_path):
    suite = tmp_path / "suite"
    write(suite, "p.yml", "test_name: t\nuser:\n  role: r\n  context:\n    - personality: grumpy.yml\n  goals: [hi]\n")
    extra = tmp_path / "people"
    write(extra, "grumpy.yml", "context: [you are grumpy]\n")
    missing = run_parley("profiles", "validate", suite, cwd=tmp_path)
    assert missing.exit_code == 1 and "personality file 'grumpy.yml' not found" in missing.output
    found = run_parley("profiles", "validate", suite, "--personalities", extra, cwd=tmp_path)
    assert found.exit_code == 0, found.output
    assert f"read from {extra / 'grumpy.yml'} (--personalities)" in found.output
    expanded = run_parley("profiles", "expand", suite / "p.yml", "--personalities", extra, cwd=tmp_path)
    assert expanded.exit_code == 0 and "1 conversation" in expanded.output


async def test_the_service_reads_a_profile_s_files_beside_it_or_in_its_personalities_folders(tmp_path, monkeypatch):
    from tests.service_support import service, wait_for

    suite = tmp_path / "suite"
    write(suite, "grumpy.yml", "test_name: grumpy\nuser:\n  role: r\n  context:\n    - personality: grumpy-user.yml\n  goals: [hi]\n")
    people = tmp_path / "people"
    write(people, "grumpy-user.yml", "context: [you are grumpy]\n")
    write(tmp_path, "grumpy-user.yml", "context: [from the service's working directory]\n")
    monkeypatch.chdir(tmp_path)  # never searched by the service
    async with service(tmp_path, profile_dirs=[suite]) as client:
        refused = await client.post("/api/batches", json={"profiles": [str(suite / "grumpy.yml")]})
        assert refused.status_code == 422 and "grumpy-user.yml' not found" in refused.text
    async with service(tmp_path, profile_dirs=[suite], personality_dirs=[people]) as client:
        launched = await client.post("/api/batches", json={"profiles": [str(suite / "grumpy.yml")]})
        assert launched.status_code == 201, launched.text
        view = await wait_for(client, launched.json()["batch_id"])
        assert view["progress"] == 100.0 and view["progress_fraction"] == 1.0


def test_a_rerun_reads_the_personalities_folders_its_batch_was_run_with(tmp_path):
    suite = tmp_path / "suite"
    write(suite, "p.yml", "test_name: t\nuser:\n  role: r\n  context:\n    - personality: grumpy.yml\n  goals: [where is ORD-1003]\n")
    extra = tmp_path / "people"
    write(extra, "grumpy.yml", "context: [you are grumpy]\n")
    db = tmp_path / "p.db"
    first = run_parley("run", suite, "--personalities", extra, "--db", db, cwd=tmp_path)
    assert "1 unverified" in first.output, first.output
    again = run_parley("run", "--rerun", "unverified", "latest", "--db", db, cwd=tmp_path)
    assert "personality file 'grumpy.yml' not found" not in again.output
    assert again.exit_code == 0 and "1 of 1 done" in again.output, again.output

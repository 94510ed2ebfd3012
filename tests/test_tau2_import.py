"""`parley import tau2`: tau2's tasks written as a parley suite that reads SOURCE at run time (one
profile per task: the task's customer, its expected state, what must be said), and the suite run
with the agents parley provides (`--bot tau2:gold`, `--bot tau2:null`)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from parley.core.models import get_model
from parley.core.specs import load_profile
from parley.core.specs.expansion import expand
from parley.core.users.customer_facts import read_customer_facts
from parley.core.users.llm_user import LLMUser
from parley.core.world import WorldTemplate, load_world
from parley.tui.cli.main import cli
from parley.worlds.tau2.gold import replay_gold
from parley.worlds.tau2.source import locate_source
from parley.worlds.tau2.suite import must_say_pattern
from parley.worlds.tau2.tau2_db import tau2_hash
from tests.tau2_support import ANY_DAY, copy_file, replace_file, tau2_checkout, world_and_template

SOURCE = str(locate_source().root)


def _import(out: Path, domain: str, *more: str, source: str = SOURCE):
    return CliRunner().invoke(cli, ["import", "tau2", source, "--domain", domain, "--out", str(out), *more])


@pytest.fixture(scope="module")
def retail_suite(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("retail")
    result = _import(out, "retail")
    assert result.exit_code == 0, result.output
    return out


def _profile_data(path: Path) -> tuple[list[str], dict]:
    text = path.read_text()
    return [line[2:] for line in text.splitlines() if line.startswith("# ")], yaml.safe_load(text)


def test_import_writes_a_profile_per_task_of_both_domains_naming_the_world_on_source(retail_suite, tmp_path):
    assert len(list(retail_suite.glob("task_*.yaml"))) == 114
    world_file = (retail_suite / "tau2_retail.py").read_text()
    assert f"source={SOURCE!r}" in world_file and "files_sha256=" in world_file and "tau2 26.3 retail" in world_file
    airline = _import(tmp_path / "airline", "airline", "--split", "test")
    assert airline.exit_code == 0, airline.output
    assert airline.output.splitlines()[0].startswith("20 tau2-airline tasks (test) written to")
    assert len(list((tmp_path / "airline").glob("task_*.yaml"))) == 20
    for path in [*sorted(retail_suite.glob("task_*.yaml"))[:12], *sorted((tmp_path / "airline").glob("task_*.yaml"))]:
        profile = load_profile(path)  # every profile loads, checked against the world its file names
        assert profile.warnings == [], profile.warnings
        assert load_world(path=profile.world.path, base_dir=path.parent).name in ("tau2-retail", "tau2-airline")


def test_the_task_is_the_profiles_customer_and_its_gold_state_the_expected_one(retail_suite):
    world, template = world_and_template("retail")
    task = next(t for t in world.hooks["tau2_tasks"]() if t.id == "100")
    head, data = _profile_data(retail_suite / "task_100.yaml")
    said = task.user_scenario.instructions
    assert data["user"]["goals"] == [" ".join(said.reason_for_call.split())]
    assert "What you do not know (if you are asked, say so): You do not remember your email address." in data["user"]["context"]
    assert any("transfers you to a human agent, end the conversation" in line for line in data["user"]["context"])
    assert data["world"] == {"path": "tau2_retail.py", "customer_id": "liam_thomas_7882"}
    assert data["expect"]["unchanged_others"] is True
    assert data["expect"]["records"]["orders/#W8488728"] == {
        "return_items": ["5676696062"],
        "return_payment_method_id": "paypal_3650980",
        "status": "return requested",
    }
    replay = asyncio.run(replay_gold(world, template, task))
    with replay:
        assert f"tau2's hash of the expected state: {tau2_hash(replay.copy)}" in head
    assert "gold replay: valid (2 actions)" in head


def test_nl_assertions_are_shown_not_counted_and_communicate_info_is_a_must_say(retail_suite):
    world, _ = world_and_template("retail")
    task = next(t for t in world.hooks["tau2_tasks"]() if t.communicate_info and t.evaluation_criteria.nl_assertions)
    head, data = _profile_data(retail_suite / f"task_{task.id}.yaml")
    assert "criteria" not in data["expect"]
    assert "nl_assertions, shown and not counted (the reward basis is DB, COMMUNICATE, as in tau2):" in head
    assert data["expect"]["bot_says"] == [must_say_pattern(info) for info in task.communicate_info]


@pytest.mark.parametrize(
    ("info", "message", "said"),
    [
        ("1093.34", "Your refund is $1,093.34.", True),
        ("1093.34", "Your refund is $1093.3.", False),
        ("Gift Card", "it goes back to your gift card", True),
        ("10", "in 1, 0 days", False),
    ],
)
def test_a_must_say_reads_a_message_as_tau2_does(info, message, said):
    assert bool(re.search(must_say_pattern(info), message)) is said


def test_the_customer_knows_what_its_task_says_not_its_records_credentials(retail_suite):
    spec = expand(load_profile(retail_suite / "task_100.yaml"))[0]
    world = load_world(path="tau2_retail.py", base_dir=retail_suite)
    with WorldTemplate(world, ANY_DAY).new_copy() as copy:
        facts = read_customer_facts(world, copy.db, spec.world.customer_id)
    assert facts.customer_id == "liam_thomas_7882" and facts.credentials == {}
    prompt = LLMUser(spec, get_model("openai/any-model", role="user"), world=world, customer=facts).system_prompt()
    assert "You do not remember your email address." in prompt
    assert "liam.thomas" not in prompt.lower()


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda root: root / "nowhere", "nowhere: no such folder"),
        (lambda root: (tau2_checkout(root), (root / "data/tau2/domains/retail/tasks.json").unlink())[0], "tasks.json: missing"),
        (
            lambda root: (tau2_checkout(root), replace_file(root, "retail", "tasks.json", '[{"id": "0", "user_scenario": {}}]'))[0],
            "tasks.json: task '0': user_scenario.instructions: Field required",
        ),
    ],
)
def test_a_source_that_is_not_tau2s_is_one_line_naming_the_file(tmp_path, setup, expected):
    source = setup(tmp_path / "tau2")
    result = _import(tmp_path / "out", "retail", source=str(source))
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and expected in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_an_unknown_domain_is_one_line(tmp_path):
    result = _import(tmp_path / "out", "telecom")
    assert result.exit_code == 1
    assert result.output.strip() == f"error: {SOURCE}: unknown tau2 domain 'telecom': parley has worlds for retail, airline"


def test_a_suite_refuses_a_source_whose_files_changed_since_the_import(tmp_path):
    checkout = tau2_checkout(tmp_path / "tau2", domain="airline")
    assert _import(tmp_path / "out", "airline", "--split", "test", source=str(checkout)).exit_code == 0
    policy = copy_file(checkout, "airline", "policy.md")
    policy.write_text(policy.read_text() + "\nA new rule.\n")
    result = CliRunner().invoke(cli, ["profiles", "validate", str(next((tmp_path / "out").glob("task_*.yaml")))])
    assert result.exit_code != 0
    assert "tau2's files changed since this suite was imported" in result.output and "run `parley import tau2` again" in result.output


def _outcomes(output: str) -> dict[str, str]:
    return dict(reversed(m.groups()) for m in re.finditer(r"\] (\w+) +tau2-retail-task-(\d+)#0", output))


def test_the_null_and_gold_bots_run_as_batches(retail_suite, tmp_path):
    files = [str(retail_suite / f"task_{i}.yaml") for i in ("10", "17", "1")]
    null = CliRunner().invoke(cli, ["run", *files, "--bot", "tau2:null", "--db", str(tmp_path / "p.db")])
    assert _outcomes(null.output) == {"10": "passed", "17": "failed", "1": "failed"}, null.output
    assert "orders/#W8665881" in null.output  # the record the null agent left unchanged is named
    gold = CliRunner().invoke(cli, ["run", *files, "--bot", "tau2:gold", "--db", str(tmp_path / "p.db")])
    assert _outcomes(gold.output)["17"] == "passed", gold.output


def test_an_expected_record_is_compared_whatever_the_order_of_its_lists_naming_what_differs():
    from parley.core.evaluation.state_checks import record_state_checks
    from parley.core.records import RecordChange, WorldDiff

    world, _ = world_and_template("retail")
    before = {"order_id": "#W1", "status": "delivered", "return_items": []}
    after = {"order_id": "#W1", "status": "return requested", "return_items": ["2", "1"]}
    state = WorldDiff(world="tau2-retail", today=ANY_DAY, changes=[RecordChange(table="orders", key="#W1", before=before, after=after)])
    same = record_state_checks({"orders/#W1": {"status": "return requested", "return_items": ["1", "2"]}}, state, world=world)
    assert [c.outcome for c in same] == ["pass"]
    assert same[0].name == "orders/#W1 ends with status return requested, return_items as the profile says"
    other = record_state_checks({"orders/#W1": {"status": "return requested", "return_items": ["1", "3"]}}, state, world=world)
    assert other[0].outcome == "fail"
    assert 'return_items[]: missing ["3"]; unexpected ["2"]' in other[0].reason, other[0].reason


def test_tau2_check_says_per_task_what_it_can_tell(tmp_path):
    result = CliRunner().invoke(cli, ["tau2", "check", SOURCE, "--domain", "retail", "--split", "test"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("task ") and len([line for line in lines if line.startswith("task ")]) == 40
    assert any(
        line.startswith("task 12: INVALID at return_delivered_order_items(")
        and "Payment method should be the original payment method" in line
        for line in lines
    )
    assert "tau2-retail (test): 40 tasks," in result.output
    assert "passes without acting (no write, nothing to say): 12" in result.output


def test_a_worlds_bot_is_named_as_a_python_bot_is():
    from parley.core.bots import bot_kind, parse_bot_spec

    spec = parse_bot_spec("tau2:gold")
    assert (spec.kind, spec.target, spec.uses_world) == ("python", "parley.worlds.tau2.bots:GoldBot", True)
    assert bot_kind("tau2:null") == "python"  # a stored batch's bot, described from its name alone


def test_a_tau2_batch_reports_its_leaderboard_row_with_the_user_simulator_beside_it(retail_suite, tmp_path):
    files = [str(retail_suite / f"task_{i}.yaml") for i in ("10", "17", "1")]
    db = str(tmp_path / "p.db")
    ran = CliRunner().invoke(cli, ["run", *files, "--bot", "tau2:null", "--trials", "2", "--db", db])
    assert ran.exit_code in (0, 1), ran.output
    row = "tau2-bench retail: pass^1 33.3  pass^2 33.3  pass^3 n/a  pass^4 n/a (3 tasks; user simulator offline)"
    assert f"Leaderboard row: {row}" in ran.output
    report = CliRunner().invoke(cli, ["report", "latest", "--db", db, "--output", str(tmp_path / "r.md")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "r.md").read_text()
    assert "| Domain | pass^1 | pass^2 | pass^3 | pass^4 | User simulator |" in text
    assert "| retail | 33.3 | 33.3 | n/a | n/a | offline |" in text


def test_a_batch_on_a_world_of_no_benchmark_or_on_two_worlds_has_no_leaderboard_row():
    from parley.core.evaluation import BatchSummary
    from parley.core.reports import leaderboard_row

    summary = BatchSummary.from_rows([])
    assert leaderboard_row(summary, ["returns"], "offline") is None
    assert leaderboard_row(summary, ["tau2-retail", "tau2-airline"], "offline") is None


def test_tau2s_hash_of_a_final_state_is_printed_beside_parleys_comparison():
    from parley.core.evaluation.state_checks import unchanged_others_checks
    from parley.core.records import Expectations

    world, template = world_and_template("retail")
    task = next(t for t in world.hooks["tau2_tasks"]() if t.id == "17")
    with asyncio.run(replay_gold(world, template, task)) as replay:
        expected_hash = tau2_hash(replay.copy)
        state = replay.copy.diff()
    (check,) = unchanged_others_checks(
        Expectations(unchanged_others=True, records={"orders/#W8665881": {"status": "pending"}}), state, world=world
    )
    assert check.outcome == "pass" and check.reason.endswith(f"; tau2's hash of this state: {expected_hash}.")

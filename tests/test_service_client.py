"""`parley submit`, `parley status`, `parley fetch` against a live `parley serve` with a token:
what a person sees, including a service that is down, a batch that does not exist, a missing
token and a refused batch."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from service_support import PROFILES, SCENARIOS, ServeProcess, free_port, sample_scenarios

from parley.tui.cli.main import cli

TOKEN = "client-test-token"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    service = ServeProcess(tmp_path_factory.mktemp("serve"), env={"PARLEY_API_TOKEN": TOKEN}).start()
    yield service
    service.stop()


def parley(*args: object, token: str | None = TOKEN):
    env = {"PARLEY_API_TOKEN": token} if token else {"PARLEY_API_TOKEN": ""}
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def finished_batch(live):
    result = parley("submit", SCENARIOS, "--wait", "--api-url", live.url)
    assert result.exit_code == 0, result.output
    return result.stdout.split()[1]


def test_submit_wait_prints_the_batch_and_how_it_ended(live):
    result = parley("submit", PROFILES / "impatient_customer.yaml", "--path", "playbooks", "--wait", "--api-url", live.url)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("batch ") and lines[0].endswith("launched: 8 conversations")
    assert lines[1].endswith(": completed")
    assert "progress: 8/8 conversations (100.0%)" in result.stdout


def test_status_shows_progress_counts_and_timings(live, finished_batch):
    result = parley("status", finished_batch, "--api-url", live.url)
    as_json = parley("status", finished_batch[:8], "--json", "--api-url", live.url)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:3] == [
        f"batch {finished_batch}: completed",
        "progress: 5/5 conversations (100.0%)",
        "passed 0, failed 0, bot errors 0, unverified 5, simulator faults 0, errors 0 (runs broken on the simulator's or parley's side)",
    ]
    assert json.loads(as_json.stdout)["batch_id"] == finished_batch


def test_fetch_writes_each_format_atomically(live, finished_batch, tmp_path):
    out = tmp_path / "out" / "results.csv"
    result = parley("fetch", finished_batch, "--format", "csv", "--output", out, "--api-url", live.url)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 5 and rows[0]["batch_id"] == finished_batch
    assert [p.name for p in out.parent.iterdir()] == ["results.csv"]  # no .part left behind
    to_stdout = parley("fetch", finished_batch, "--format", "ndjson", "--api-url", live.url)
    assert len(to_stdout.stdout.splitlines()) == 5
    document = json.loads(parley("fetch", finished_batch, "--api-url", live.url).stdout)
    assert document["total_results"] == 5 and document["partial"] is False


def test_a_failed_fetch_leaves_an_existing_file_alone(live, tmp_path):
    out = tmp_path / "keep.json"
    out.write_text("previous results", encoding="utf-8")
    result = parley("fetch", "feedfacefeedface", "--output", out, "--api-url", live.url)
    assert result.exit_code == 1
    assert out.read_text(encoding="utf-8") == "previous results"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]


@pytest.mark.parametrize("command", ["status", "fetch"])
def test_an_unknown_batch_is_one_line_and_exit_1(live, command):
    result = parley(command, "feedfacefeedface", "--api-url", live.url)
    assert result.exit_code == 1
    assert result.output.strip() == "error: no batch 'feedfacefeedface'; GET /api/batches lists them"


@pytest.mark.parametrize("command", [["status", "abcdef123456"], ["fetch", "abcdef123456"], ["submit", str(SCENARIOS)]])
def test_a_service_that_is_down_is_one_line_and_exit_1(command):
    url = f"http://127.0.0.1:{free_port()}"
    result = parley(*command, "--api-url", url)
    assert result.exit_code == 1
    assert result.output.strip() == f"error: no parley service at {url} (is `parley serve` running?)"


def test_the_api_url_comes_from_the_environment(live, finished_batch):
    result = CliRunner().invoke(cli, ["status", finished_batch], env={"PARLEY_API_URL": live.url, "PARLEY_API_TOKEN": TOKEN})
    assert result.exit_code == 0 and "completed" in result.stdout


def test_without_the_token_the_client_says_what_to_set(live, finished_batch):
    result = parley("status", finished_batch, "--api-url", live.url, token=None)
    assert result.exit_code == 1
    assert "set PARLEY_API_TOKEN to the service's token" in result.output
    wrong = parley("status", finished_batch, "--api-url", live.url, token="nope")
    assert wrong.exit_code == 1 and "PARLEY_API_TOKEN is not the service's token" in wrong.output


def test_a_refused_batch_lists_each_problem_at_its_field(live, tmp_path):
    scenarios = sample_scenarios()
    scenarios[2]["variables"]["AMB_LEVEL"] = 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"scenarios": scenarios}), encoding="utf-8")
    result = parley("submit", bad, "--concurrency", "3", "--api-url", live.url)
    assert result.exit_code == 1
    assert result.output.splitlines()[:2] == [
        "error: the service refused the batch:",
        "  scenarios.2.variables.AMB_LEVEL: AMB_LEVEL must be a whole number from 0 to 3 (0 clear ... 3 contradicts itself), got 7",
    ]


def test_a_path_outside_the_profile_folders_is_refused(live):
    result = parley("submit", "--path", "/etc/passwd", "--api-url", live.url)
    assert result.exit_code == 1
    assert "outside the service's profile folders" in result.output

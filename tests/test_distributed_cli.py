"""`parley run --workers N` and `parley serve --workers N` as a user runs them: Ctrl-C stops the
workers and leaves a resumable batch; without the parley[ray] extra both say in one line how to
install it; parley's start-up, a single-process batch, the app and the service never import Ray."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from parley.tui.cli.main import cli
from tests.fake_openai_server import run_fake_server
from tests.test_run_command_signals import consistent, query, run, start, stored, wait_for

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"
PLAYBOOKS = PROFILES / "playbooks"
FAKE = "openai-api/fake/m"
INSTALL_LINE = "error: --workers and --ray need Ray, which is not installed: pip install 'parley[ray]'"


def _parent(pid: int) -> int | None:
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _ours(pid: int) -> bool:
    """Whether `pid` descends from this test process (its Ray instance's workers do; another
    suite's running on the same machine do not)."""
    me = os.getpid()
    seen = 0
    while pid > 1 and seen < 64:
        parent = _parent(pid)
        if parent is None:
            return False
        if parent == me:
            return True
        pid, seen = parent, seen + 1
    return False


def worker_processes() -> set[int]:
    """The pids of the Ray worker processes that run parley's conversations for this test process
    (a Ray instance it started: its workers descend from it)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"ConversationWorker" in (entry / "cmdline").read_bytes() and _ours(int(entry.name)):
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_ctrl_c_stops_the_workers_and_leaves_a_batch_that_resumes(tmp_path):
    db = tmp_path / "p.db"
    before = worker_processes()
    with run_fake_server() as server:
        server.fixed_delay_ms = 400
        env = {"FAKE_BASE_URL": server.base_url}
        args = ["run", PLAYBOOKS, "--bot", FAKE, "--trials", "3", "--max-turns", "6", "-c", "4", "--grace", "0.2", "--db", db]
        proc = start([*args, "--workers", "2"], env=env)
        try:
            wait_for(lambda: stored(db) >= 1, timeout=180, what="a first stored conversation")
            workers = worker_processes() - before
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 130, err
        assert "starting 2 workers on a local Ray instance" in out
        assert "batch cancelled" in out and "continue it with: parley run --resume" in out
        assert len(workers) == 2
        wait_for(lambda: not any(alive(pid) for pid in workers), timeout=30, what="the workers to end")
        assert query(db, "SELECT status FROM batches") == [("cancelled",)]
        consistent(db)
        assert query(db, "SELECT COUNT(*) FROM conversations WHERE stop_reason = 'cancelled'")[0][0] >= 1

        server.fixed_delay_ms = 0
        resumed = run(["run", "--resume", "latest", "--db", db], env=env)
    assert resumed.returncode == 1, resumed.stderr  # the fake bot only says "ok": checks fail
    assert query(db, "SELECT status FROM batches") == [("completed",)]
    assert query(db, "SELECT COUNT(*), COUNT(DISTINCT spec_id || '/' || trial) FROM conversations") == [(21, 21)]
    assert query(db, "SELECT COUNT(*) FROM conversations WHERE stop_reason IN ('cancelled', 'infrastructure_error')") == [(0,)]
    consistent(db)


@pytest.mark.parametrize(
    "args",
    [
        ["run", str(PROFILES), "--workers", "2"],
        ["run", str(PROFILES), "--ray", "ray://head:10001"],
        ["serve", "--workers", "2"],
        ["--workers", "2"],  # the app
    ],
)
def test_without_the_extra_workers_and_ray_say_how_to_install_it_in_one_line(args, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    result = CliRunner().invoke(cli, [*args, "--db", str(tmp_path / "p.db")])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [INSTALL_LINE]
    assert not (tmp_path / "p.db").exists() or not query(tmp_path / "p.db", "SELECT id FROM batches")


def test_single_conversations_and_cached_replies_are_refused_with_workers(tmp_path):
    single = CliRunner().invoke(cli, ["run", str(PROFILES), "--single", "0", "--workers", "2", "--db", str(tmp_path / "p.db")])
    cached = CliRunner().invoke(cli, ["run", str(PROFILES), "--cache", "--workers", "2", "--db", str(tmp_path / "p.db")])
    assert single.exit_code == cached.exit_code == 2
    assert "--single streams one conversation here; it cannot be combined with --workers" in single.stderr
    assert "--cache keeps replies in the database, which only this process writes" in cached.stderr


def test_start_up_a_batch_in_one_process_the_app_and_the_service_never_import_ray(tmp_path):
    code = (
        "import sys\n"
        "from parley.tui.cli.main import cli\n"
        f"try:\n    cli(['run', {str(PROFILES / 'playbooks')!r}, '--db', {str(tmp_path / 'p.db')!r}], standalone_mode=False)\n"
        "except SystemExit: pass\n"
        "import parley.tui.app.app, parley.core.service.app, parley.core.engine.batch_runner, parley.tui.cli.serve_command\n"
        "print('ray loaded' if 'ray' in sys.modules else 'no ray')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "batch completed: 7 of 7 done" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "no ray"


def test_ray_address_shards_only_with_workers_and_ray_names_a_cluster_itself():
    from parley.core.engine.distributed.placement import Placement

    cluster = {"RAY_ADDRESS": "ray://head:10001"}
    assert Placement.from_options(None, None, cluster) is None, "RAY_ADDRESS alone keeps one process"
    assert Placement.from_options(2, None, cluster) == Placement(workers=2, address="ray://head:10001")
    assert Placement.from_options(2, None, {}) == Placement(workers=2)
    assert Placement.from_options(None, " ray://other:10001 ", cluster) == Placement(address="ray://other:10001")
    assert Placement.from_options(3, None, {}).describe() == "3 workers on a local Ray instance"
    assert Placement(address="ray://h:1").describe() == "one worker per CPU on the Ray cluster at ray://h:1"


def test_the_contract_that_only_the_distributed_engine_imports_ray_covers_every_other_module():
    """import-linter checks only the modules a contract lists: a new module left off the list
    could import Ray unnoticed (and load it in every parley process)."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    listed = set(next(c for c in contracts if c["name"] == "Only the distributed engine imports Ray")["source_modules"])
    core = ROOT / "core"
    modules = {f"parley.core.engine.{p.stem}" for p in (core / "engine").glob("*.py") if p.stem != "__init__"}
    modules |= {f"parley.core.{p.stem}" for p in core.glob("*.py") if p.stem != "__init__"}
    modules |= {f"parley.core.{p.name}" for p in core.iterdir() if (p / "__init__.py").exists() and p.name != "engine"}
    assert modules | {"parley.mockapi", "parley.tui"} <= listed, sorted(modules - listed)


@pytest.fixture
def ray_cluster(tmp_path):
    """A Ray cluster started apart from parley (`ray start --head`), as a user's would be; its
    address. Its processes end with it."""
    from tests.child_process import stop_process
    from tests.service_support import free_port

    port = free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    command = [str(Path(sys.executable).parent / "ray"), "start", "--head", f"--port={port}", "--num-cpus=2"]
    command += ["--include-dashboard=false", "--disable-usage-stats", "--block"]
    log = tmp_path / "ray-head.log"
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        wait_for(lambda: "block forever" in log.read_text() or proc.poll() is not None, timeout=180, what="the Ray head")
        assert proc.poll() is None, log.read_text()[-2000:]
        yield f"127.0.0.1:{port}"
    finally:
        stop_process(proc, timeout_s=30)


def test_a_batch_runs_on_an_existing_ray_cluster_with_one_worker_per_cpu(ray_cluster, tmp_path):
    db = tmp_path / "p.db"
    with run_fake_server() as server:
        # The cluster's processes never saw FAKE_BASE_URL: the batch ships its endpoints' variables.
        env = {"FAKE_BASE_URL": server.base_url, "RAY_AUTH_MODE": "token"}
        done = run(["run", PLAYBOOKS, "--bot", FAKE, "--trials", "2", "--ray", ray_cluster, "--db", db], env=env)
    assert f"starting one worker per CPU on the Ray cluster at {ray_cluster}" in done.stdout, done.stderr
    assert "batch completed: 14 of 14 done" in done.stdout, done.stdout + done.stderr
    assert "Workers: 2 ran conversations" in done.stdout
    assert query(db, "SELECT COUNT(*), COUNT(DISTINCT spec_id || '/' || trial) FROM conversations") == [(14, 14)]
    assert query(db, "SELECT COUNT(*) FROM conversations WHERE stop_reason = 'infrastructure_error'") == [(0,)]

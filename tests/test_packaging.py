"""parley as a user installs it: the wheel built from this checkout, installed into a fresh venv
outside the checkout, run from an empty folder. It must carry its shipped suite, install one
top-level import package (`parley`), and work without the source tree beside it."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return _build(tmp_path_factory)[0]


def _build(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the build uses this venv's setuptools, so the test needs no network.
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    [built] = out.glob("parley-*.whl")
    return built, done.stdout + done.stderr


def test_building_parley_warns_about_none_of_its_data_folders(tmp_path_factory):
    """Each data folder setuptools finds outside `packages` costs a 50-line warning on every
    install (`make run` printed some 330 lines of them)."""
    _, said = _build(tmp_path_factory)
    assert "absent from the `packages` configuration" not in said
    assert "WARNING" not in said.replace("byte-compiling is disabled", "")


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; the dependencies come from this venv's
    site-packages through a .pth line (which does not run this venv's editable-install hook)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "_parley_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return venv


def _run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PARLEY_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_installs_one_top_level_package_with_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"parley"}, tops  # no core/, tui/, mockapi/
    # Every module of the checkout is in the wheel (a new subpackage must be listed in pyproject).
    for top in ("core", "tui", "mockapi"):
        for module in (ROOT / top).rglob("*.py"):
            path = module.relative_to(ROOT).as_posix()
            path = path.replace("core/api/", "api/", 1) if path.startswith("core/api/") else path  # installed as parley.api
            assert f"parley/{path}" in names, module
    for shipped in (
        "parley/profiles/track_shipped_order.yaml",
        "parley/profiles/personalities/formal-user.yml",
        "parley/profiles/playbooks/cancel_too_old.yaml",
        "parley/profiles/scenarios/sample_scenarios.json",
        "parley/profiles/scenarios/templates/agent.txt",
        "parley/tui/app/app.tcss",
        "parley/mockapi/fixtures/orders.json",
        "parley/core/engine/batch_runner.py",
        "parley/api/py.typed",  # mypy reads a user's use of parley.api (PEP 561)
        "parley/core/py.typed",
    ):
        assert shipped in names, shipped


def test_a_new_user_inits_validates_and_runs_the_shipped_suite_offline(installed, tmp_path):
    where = _run(installed, tmp_path, "python", "-c", "import parley.core, parley.profiles; print(parley.core.__file__)")
    assert where.returncode == 0, where.stderr
    assert str(installed) in where.stdout and str(ROOT) not in where.stdout  # the wheel, not the checkout

    init = _run(installed, tmp_path, "parley", "init", "demo")
    assert init.returncode == 0, init.stderr
    assert (tmp_path / "demo" / "personalities" / "formal-user.yml").is_file()
    assert not list((tmp_path / "demo").rglob("*.py"))

    validate = _run(installed, tmp_path, "parley", "profiles", "validate", "demo")
    assert validate.returncode == 0, validate.stdout + validate.stderr
    run = _run(installed, tmp_path, "parley", "run", "demo")
    assert run.returncode == 0, run.stdout + run.stderr
    # the scenario file's five conversations have no check offline: unverified, counted apart
    assert "Pass rate: 100.0% (22 of 22, 95% interval 85.1-100.0%)" in run.stdout and "5 unverified" in run.stdout

    again = _run(installed, tmp_path, "parley", "init", "demo")
    assert again.returncode == 1 and "not empty" in again.stderr and again.stderr.count("\n") == 1

    mockapi = _run(installed, tmp_path, "parley", "mockapi", "--help")
    assert mockapi.returncode == 0 and "Serve the mock order API" in mockapi.stdout


USER_CODE = '''\
"""A user's test module, outside parley, typed against parley.api."""

from __future__ import annotations

from typing import Any

from parley.api import CheckResult, ConversationResult, RunResult, Tools, conversation, expect_tool, run_sync, say


def my_bot(messages: list[dict[str, Any]], tools: Tools) -> str:
    tracking = tools.track_order("ORD-1003")
    status: str = tracking.data["status"] if tracking.ok else "unknown"
    return f"ORD-1003 is {status}."


def test_tracking() -> None:
    spec = conversation("track", steps=[say("Where is ORD-1003?"), expect_tool("track_order")], tools_called=["track_order"])
    result: RunResult = run_sync(spec, bot=my_bot, trials=2, db="parley.db")
    first: ConversationResult = result.conversations[0]
    failed: list[CheckResult] = first.failed_checks
    rate: float | None = result.summary.pass_rate
    assert result.passed and not failed and rate == 1.0, result.explain()
'''


def test_mypy_checks_a_users_code_against_the_installed_api(installed, tmp_path):
    """The wheel ships py.typed: mypy --strict passes a user's correct code and names a wrong call,
    a wrong attribute and a misspelled name imported from parley.api."""
    (tmp_path / "test_user.py").write_text(USER_CODE, encoding="utf-8")
    wrong = USER_CODE.replace("trials=2", 'trials="2"').replace("first.failed_checks", "first.failed_check")
    wrong += "\n\nfrom parley.api import run_synk  # misspelled: the face's lazy loading hides nothing from mypy\n"
    (tmp_path / "test_wrong.py").write_text(wrong, encoding="utf-8")

    # one mypy run over both files (a cold run reads parley and its dependencies: half a minute)
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(installed / "bin" / "python")]
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    checked = subprocess.run(
        [*command, "test_user.py", "test_wrong.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    problems = [line for line in checked.stdout.splitlines() if ": error: " in line]
    assert not [line for line in problems if line.startswith("test_user.py")], checked.stdout  # the correct code passes
    assert any('Argument "trials" to "run_sync" has incompatible type "str"; expected "int"' in line for line in problems), checked.stdout
    assert any('"ConversationResult" has no attribute "failed_check"' in line for line in problems), checked.stdout
    assert any('Module "parley.api" has no attribute "run_synk"' in line for line in problems), checked.stdout
    assert all(line.startswith("test_wrong.py") for line in problems), checked.stdout
    ran = _run(installed, tmp_path, "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py")
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout[-3000:] + ran.stderr

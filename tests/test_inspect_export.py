"""`parley report --format inspect`: a stored batch as an inspect_ai eval log, read back with
inspect's own reader and compared with the store field by field."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

inspect_log = pytest.importorskip("inspect_ai.log")

from parley.core.evaluation.pass_k import pass_hat_k  # noqa: E402
from parley.core.interop.inspect.scores import verdict_scores  # noqa: E402
from parley.core.records.conversation import Conversation  # noqa: E402
from parley.core.records.verdict import CheckResult, JudgeResult, Verdict  # noqa: E402
from parley.core.store.store import Store  # noqa: E402
from parley.tui.cli.main import cli  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "profiles"

# A spec the offline bot fails on purpose: it tracks the order; the expectation wants it cancelled.
FAILING_PROFILE = """\
test_name: expects_the_impossible
user:
  role: you are a customer of an online shop who wants to know where your parcel is.
  goals:
    - "track order ORD-1003"
chatbot:
  fallback: I'm sorry, I didn't understand that.
conversation:
  number: 1
  goal_style:
    all_answered:
      limit: 6
world:
  customer_id: C-100
  today: 2026-11-21
expect:
  orders:
    ORD-1003: cancelled
  bot_says:
    - "(?i)refund issued"
"""


def parley(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """An offline batch, 2 trials: two shipped profiles (one with refused tool calls), a
    playbook, and a profile that fails."""
    tmp = tmp_path_factory.mktemp("inspect_export")
    failing = tmp / "expects_the_impossible.yaml"
    failing.write_text(FAILING_PROFILE, encoding="utf-8")
    db = tmp / "p.db"
    sources = [
        PROFILES / "cancel_eligible_order.yaml",
        PROFILES / "cancel_other_customers_order.yaml",
        PROFILES / "playbooks" / "track_shipped_order.yaml",
        failing,
    ]
    result = parley("run", *sources, "--trials", "2", "--db", db)
    assert result.exit_code in (0, 1), result.output  # 1: a conversation failed, as it should
    with Store.open(db) as store:
        batch_id = store.latest_batch_id()
        stored = list(store.iter_conversations(batch_id))
        record = store.get_batch(batch_id)
    out = tmp / "logs"
    exported = parley("report", batch_id, "--format", "inspect", "--output", out, "--db", db)
    assert exported.exit_code == 0, exported.output
    path = Path(exported.stdout.strip())
    return {"db": db, "id": batch_id, "stored": stored, "record": record, "path": path, "log": inspect_log.read_eval_log(str(path))}


def test_the_log_is_an_eval_file_named_like_inspects_own(batch):
    path = batch["path"]
    assert path.suffix == ".eval" and path.exists()
    assert path.name.endswith(f"_parley_{batch['id']}.eval")
    assert not list(path.parent.glob("*.partial"))
    listed = inspect_log.list_eval_logs(str(path.parent))
    assert [Path(info.name).name for info in listed] == [path.name]


def test_one_sample_per_conversation_with_spec_ids_and_trials_as_epochs(batch):
    log, stored = batch["log"], batch["stored"]
    assert log.status == "success"
    assert len(log.samples) == len(stored) >= 8
    assert sorted((s.id, s.epoch) for s in log.samples) == sorted((c.spec.spec_id, c.trial) for c in stored)
    assert log.eval.dataset.sample_ids == list(dict.fromkeys(c.spec.spec_id for c in stored))
    assert log.results.total_samples == len(stored) == log.results.completed_samples


def _pairs(batch):
    samples = {(s.id, s.epoch): s for s in batch["log"].samples}
    return [(stored, samples[(stored.spec.spec_id, stored.trial)]) for stored in batch["stored"]]


def test_messages_are_the_transcript_with_tool_calls_and_tool_errors(batch):
    refused = 0
    for stored, sample in _pairs(batch):
        conv = stored.conversation
        system, *rest = sample.messages
        assert system.role == "system" and system.text == conv.system_prompt
        assert len(rest) == len(conv.messages)
        records = {r.call_id: r for r in conv.tool_calls}
        for theirs, ours in zip(rest, conv.messages, strict=True):
            assert theirs.role == ours.role
            assert theirs.text == (ours.content or "")
            if ours.role == "assistant":
                calls = theirs.tool_calls or []
                assert [(c.id, c.function, c.arguments) for c in calls] == [
                    (c.id, c.name, json.loads(c.arguments)) for c in ours.tool_calls
                ]
            if ours.role == "tool":
                assert (theirs.tool_call_id, theirs.function) == (ours.tool_call_id, ours.name)
                record = records[ours.tool_call_id]
                if record.ok:
                    assert theirs.error is None
                else:
                    assert theirs.error is not None
                    assert theirs.error.type == ("permission" if record.refused else "unknown")
                    refused += record.refused
        assert sample.output.completion == (conv.bot_texts[-1] if conv.bot_texts else "")
    assert refused > 0  # cancel_other_customers_order: the API refuses another customer's order


def test_scores_are_the_verdicts(batch):
    outcomes = set()
    for stored, sample in _pairs(batch):
        verdict = stored.verdict
        outcomes.add(verdict.outcome)
        scores = sample.scores
        assert scores["passed"].value == ("C" if verdict.passed else "I")
        assert scores["passed"].answer == verdict.outcome
        assert verdict.score is None and math.isnan(scores["judge_score"].value)  # offline: no score, never a made-up one
        assert scores["judge_score"].explanation == "no score: no LLM judge (the checks decide)"
        assert scores["judge_score"].metadata["judge"] == verdict.judge.judge
        checks = scores["checks"].metadata["checks"]
        assert checks == [c.model_dump(mode="json", exclude={"details"}) for c in verdict.checks]
        decided = [c for c in verdict.checks if c.outcome in ("pass", "fail")]
        assert scores["checks"].value == pytest.approx(sum(c.outcome == "pass" for c in decided) / len(decided))
        for check in verdict.checks:
            assert check.name in scores["checks"].explanation
    assert outcomes == {"passed", "failed"}


def test_metadata_holds_variables_stop_reason_and_usage_per_role(batch):
    for stored, sample in _pairs(batch):
        conv, spec, meta = stored.conversation, stored.spec, sample.metadata
        assert meta["variables"] == spec.variables
        assert meta["stop_reason"] == conv.stop_reason
        assert (meta["spec_id"], meta["trial"], meta["source"], meta["seed"]) == (spec.spec_id, stored.trial, spec.source, spec.seed)
        assert meta["turns"] == conv.bot_turns
        for role, usage in conv.usage.items():
            assert meta["usage"][role] == usage.model_dump(mode="json")
            inspect_role = sample.role_usage[role]
            assert (inspect_role.input_tokens, inspect_role.output_tokens) == (usage.input_tokens, usage.output_tokens)
        assert set(sample.role_usage) == {"bot", "user", "grader"}
        assert set(sample.model_usage) == {"offline"}
        assert sample.uuid == conv.id
    assert any(s.metadata["variables"] for s in batch["log"].samples)  # cancel_eligible_order's reason


def test_the_eval_spec_names_the_models_per_role_and_the_results_give_pass_hat_k(batch):
    log, record = batch["log"], batch["record"]
    assert log.eval.model == record.options.models.bot == "offline"
    assert {k: v.model for k, v in log.eval.model_roles.items()} == {"user": "offline", "grader": "offline"}
    assert log.eval.config.epochs == 2 and log.eval.config.epochs_reducer == ["mean", "pass_k_2"]
    assert log.eval.metadata["parley_batch_id"] == batch["id"]

    trials: dict[str, list[bool]] = {}
    for stored in batch["stored"]:
        trials.setdefault(stored.spec.spec_id, []).append(stored.verdict.passed)
    results = {(s.name, s.reducer): s for s in log.results.scores}
    assert results[("passed", "mean")].metrics["accuracy"].value == pytest.approx(pass_hat_k(trials, 1))
    assert results[("passed", "pass_k_2")].metrics["accuracy"].value == pytest.approx(pass_hat_k(trials, 2))
    assert 0 < pass_hat_k(trials, 2) < 1
    scores = [c.verdict.score for c in batch["stored"]]
    assert scores == [None] * len(scores)  # the offline judge gives no score: nothing is averaged as one
    assert math.isnan(results[("judge_score", "mean")].metrics["mean"].value)


def test_report_latest_format_inspect_prints_the_file(batch, tmp_path):
    result = parley("report", "latest", "--format", "inspect", "--output", tmp_path / "out", "--db", batch["db"])
    assert result.exit_code == 0, result.output
    path = Path(result.stdout.strip())
    assert path.exists() and path.parent == tmp_path / "out"
    assert "inspect eval log" in result.stderr


def test_format_inspect_without_output_is_a_usage_error(batch):
    result = parley("report", "--format", "inspect", "--db", batch["db"])
    assert result.exit_code == 2
    assert "--output DIR" in result.stderr


def test_format_inspect_onto_a_file_is_one_line_and_exit_1(batch, tmp_path):
    target = tmp_path / "a_file"
    target.write_text("x")
    result = parley("report", "--format", "inspect", "--output", target, "--db", batch["db"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [f"error: --output {target} is a file; the inspect format writes into a directory"]


def test_without_inspect_ai_the_report_says_how_to_install_it(batch, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # `import inspect_ai` now raises ImportError
    result = parley("report", "--format", "inspect", "--output", tmp_path, "--db", batch["db"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == ["error: inspect export needs inspect_ai: pip install 'parley[inspect]'"]
    assert not list(tmp_path.iterdir())


def test_parley_imports_and_reports_without_inspect_ai(batch):
    code = (
        "import sys; sys.modules['inspect_ai'] = None\n"
        "import parley.core.engine.batch_runner, parley.core.interop.inspect.export, parley.tui.cli.main, parley.tui.cli.report_command\n"
        "from click.testing import CliRunner\n"
        f"r = CliRunner().invoke(parley.tui.cli.main.cli, ['report', '--format', 'md', '--db', {str(batch['db'])!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def _conversation(**kw) -> Conversation:
    base = dict(
        id="c1",
        customer_id="C-100",
        bot_model="offline",
        user_simulator="offline",
        started_at="2026-11-21T10:00:00Z",
        ended_at="2026-11-21T10:00:01Z",
        duration_s=1.0,
        stop_reason="user_stop",
    )
    return Conversation.model_validate({**base, **kw})


def test_errors_are_unscored_never_a_fail_or_a_one():
    broken = _conversation(stop_reason="error", error="provider exploded")
    verdict = Verdict(
        conversation_id="c1",
        outcome="error",
        passed=False,
        error="provider exploded",
        checks=[CheckResult(kind="conversation_completed", name="conversation completed", outcome="error", reason="the run broke")],
    )
    scores = verdict_scores(broken, verdict)
    assert all(math.isnan(s.value) for s in scores.values())
    assert scores["passed"].answer == "error" and "provider exploded" in scores["passed"].explanation

    judged = Verdict(
        conversation_id="c1",
        outcome="error",
        passed=False,
        error="judge_error",
        judge=JudgeResult(judge="openai/x", error="the judge model failed: 500"),
        checks=[CheckResult(kind="bot_says", name="bot says hi", outcome="pass", reason="ok")],
    )
    scores = verdict_scores(_conversation(), judged)
    assert math.isnan(scores["passed"].value) and math.isnan(scores["judge_score"].value)
    assert scores["judge_score"].explanation == "the judge model failed: 500"
    assert scores["checks"].value == 1.0

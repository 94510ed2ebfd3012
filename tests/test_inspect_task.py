"""parley's specs as an inspect_ai task (core/interop/inspect/task.py), run under inspect offline:
mockllm models in parley's roles, and parley's offline bot compared with a parley batch."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model  # noqa: E402

from parley.core.engine.batch_runner import BatchRunner, prepare_batch  # noqa: E402
from parley.core.errors import ParleyError  # noqa: E402
from parley.core.evaluation.pass_k import pass_hat_k  # noqa: E402
from parley.core.interop.inspect.task import load_task_specs, parley_task, resolve_sources  # noqa: E402
from parley.core.records.batch import BatchOptions  # noqa: E402
from parley.core.store.store import Store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # inspect's own, from tenacity

ROOT = Path(__file__).resolve().parent.parent
CANCEL = ROOT / "profiles" / "cancel_eligible_order.yaml"  # two specs
PLAYBOOK = ROOT / "profiles" / "playbooks" / "track_shipped_order.yaml"
SOURCES = f"{CANCEL},{PLAYBOOK}"

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
"""


@pytest.fixture(autouse=True)
def _root_logging_restored():
    """inspect's eval adds its handler to the root logger; later tests should not inherit it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def _usage(output: ModelOutput) -> ModelOutput:
    # With usage set, mockllm does not count tokens itself (tiktoken would download its
    # encoding, which an offline machine cannot).
    output.usage = ModelUsage(input_tokens=11, output_tokens=7, total_tokens=18)
    return output


def mock(reply):
    """A mockllm model whose every answer is `reply(messages)`."""

    def outputs(messages, tools, tool_choice, config):
        return _usage(reply(messages))

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def bot_reply(messages):
    """Looks the order up, then answers with what the tool said."""
    if isinstance(messages[-1], ChatMessageTool):
        return ModelOutput.from_content("mockllm/model", "Order ORD-1003 has shipped with UPS. Anything else?")
    return ModelOutput.for_tool_call("mockllm/model", "track_order", {"order_id": "ORD-1003"})


GRADER_REPLY = '{"score": 2, "comment": "fine", "criteria": [{"criterion": 1, "verdict": "not applicable", "reasoning": "No claim."}]}'
"""The grader's answer to both of parley's judge calls: the score's reader takes `score`, the criteria's `criteria`."""


def run(task, tmp_path, **kw):
    logs = inspect_eval(task, log_dir=str(tmp_path / "logs"), display="none", **kw)
    assert len(logs) == 1 and logs[0].status == "success", logs[0].error
    return read_eval_log(logs[0].location)  # what is on disk, not what is in memory


def test_mockllm_in_every_role_one_sample_per_spec_with_parleys_scores(tmp_path):
    specs = load_task_specs(SOURCES)
    log = run(
        parley_task(profiles=SOURCES, max_turns=3),
        tmp_path,
        model=mock(bot_reply),
        model_roles={
            "user": mock(lambda m: ModelOutput.from_content("mockllm/model", "Where is my order ORD-1003?")),
            "grader": mock(lambda m: ModelOutput.from_content("mockllm/model", GRADER_REPLY)),
        },
    )
    assert sorted(s.id for s in log.samples) == sorted(s.spec_id for s in specs) and len(specs) == 3
    assert {k: v.model for k, v in log.eval.model_roles.items()} == {"user": "mockllm/model", "grader": "mockllm/model"}
    for sample in log.samples:
        assert set(sample.scores) == {"passed", "judge_score", "checks"}
        assert sample.scores["judge_score"].value == 2  # the grader's answer, through parley's judge
        if sample.metadata["kind"] == "playbook":
            assert sample.scores["passed"].value in ("C", "I")
        else:  # the mock customer says the same line every turn: the simulator's fault, never the bot's
            assert sample.scores["passed"].answer == "user_fault" and sample.scores["passed"].value != sample.scores["passed"].value
            assert sample.metadata["outcome"] == "user_fault"
        assert sample.scores["checks"].metadata["checks"]
        assert sample.metadata["models"] == {"bot": "mockllm/model", "user": "mockllm/model", "judge": "mockllm/model"}
        calls = [c for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])]
        assert calls and calls[0].function == "track_order" and calls[0].arguments == {"order_id": "ORD-1003"}
        tool = next(m for m in sample.messages if m.role == "tool")
        assert "ORD-1003" in tool.text and tool.error is None  # the World's order API answered
        assert sample.role_usage["grader"].input_tokens == 22  # two calls: the score, and the criteria (the built-in one)
        assert sample.metadata["usage"]["bot"]["calls"] >= 2
    by_id = {s.id: s for s in log.samples}
    playbook = by_id["playbook_track_shipped_order#0"]
    assert "user" not in playbook.role_usage  # a playbook's customer is scripted: no user model
    assert playbook.scores["passed"].value == "C"  # the mock bot does what the playbook expects
    profile = by_id["cancel_eligible_order#0"]
    assert profile.role_usage["user"].output_tokens > 0
    assert "ORD-1002 ends cancelled" in profile.scores["passed"].explanation  # it never cancels ORD-1002...
    assert [m.text for m in profile.messages if m.role == "user"][0] == "Where is my order ORD-1003?"


async def parley_batch(store, sources, trials):
    prepared = await prepare_batch(store, sources, BatchOptions(trials=trials))
    return await BatchRunner(store, prepared).run()


def test_offline_bot_scores_match_a_parley_batch_and_trials_give_pass_hat_k(tmp_path):
    failing = tmp_path / "expects_the_impossible.yaml"
    failing.write_text(FAILING_PROFILE, encoding="utf-8")
    with Store.open(tmp_path / "p.db") as store:
        result = asyncio.run(parley_batch(store, [CANCEL, failing], 2))
        batch = {(c.spec.spec_id, c.trial): c for c in store.iter_conversations(result.batch_id)}

    log = run(parley_task(profiles=f"{CANCEL},{failing}", bot="offline", trials=2), tmp_path, model="mockllm/model")
    assert log.eval.config.epochs_reducer == ["mean", "pass_k_2"]
    assert sorted((s.id, s.epoch) for s in log.samples) == sorted(batch)
    for sample in log.samples:
        stored = batch[(sample.id, sample.epoch)]
        assert [m.text for m in sample.messages if m.role == "user"] == stored.conversation.user_texts
        assert sample.scores["passed"].value == ("C" if stored.verdict.passed else "I")
        assert stored.verdict.score is None and math.isnan(sample.scores["judge_score"].value)  # offline: unscored
        assert sample.metadata["stop_reason"] == stored.conversation.stop_reason

    trials: dict[str, list[bool]] = {}
    for (spec_id, _), stored in sorted(batch.items()):
        trials.setdefault(spec_id, []).append(stored.verdict.passed)
    results = {(s.name, s.reducer): s.metrics for s in log.results.scores}
    assert results[("passed", "pass_k_2")]["accuracy"].value == pytest.approx(pass_hat_k(trials, 2))
    assert results[("passed", "mean")]["accuracy"].value == pytest.approx(pass_hat_k(trials, 1))
    assert 0 < pass_hat_k(trials, 2) < 1


def test_inspect_eval_from_the_repo_root_with_epochs_and_the_pass_k_reducer(tmp_path):
    """The offline command line docs/inspect.md gives (on one playbook, two epochs), relative paths and all (inspect itself runs the task
    in core/)."""
    inspect = Path(sys.executable).with_name("inspect")
    if not inspect.exists():
        pytest.skip("the inspect command is not installed beside this python")
    env = {**os.environ, "PWD": str(ROOT)}
    done = subprocess.run(
        [
            str(inspect),
            "eval",
            "core/interop/inspect/task.py@parley_task",
            "-T",
            "profiles=profiles/playbooks/track_shipped_order.yaml",
            "-T",
            "bot=offline",
            "--model",
            "mockllm/model",
            "--epochs",
            "2",
            "--epochs-reducer",
            "pass_k_2",
            "--log-dir",
            str(tmp_path),
            "--display",
            "none",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert [(s.id, s.epoch) for s in sorted(log.samples, key=lambda s: s.epoch)] == [
        ("playbook_track_shipped_order#0", 1),
        ("playbook_track_shipped_order#0", 2),
    ]
    (passed,) = [s for s in log.results.scores if s.name == "passed"]
    assert passed.reducer == "pass_k_2" and passed.metrics["accuracy"].value == 1.0


def test_profiles_that_do_not_exist_or_do_not_load_are_one_clear_error(tmp_path):
    with pytest.raises(ParleyError, match="profiles=nowhere/: no such file or folder"):
        resolve_sources("nowhere/")
    bad = tmp_path / "bad.yaml"
    bad.write_text("test_name: bad\nuser: {}\n", encoding="utf-8")
    with pytest.raises(ParleyError, match="problem"):
        load_task_specs(str(bad))
    with pytest.raises(ParleyError, match="bot='gpt'"):
        parley_task(profiles=str(PLAYBOOK), bot="gpt")

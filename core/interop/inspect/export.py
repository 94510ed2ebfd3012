"""A stored batch as an inspect_ai eval log (`parley report BATCH --format inspect --output DIR`).

Written with inspect_ai's own API (`write_eval_log`), so `inspect view --log-dir DIR` shows it
and `read_eval_log` reads it back. The mapping:

- one sample per conversation: id = the spec id, epoch = the trial (so a batch of k trials is
  an eval of k epochs, and inspect's pass_k reducers give pass^k);
- messages: the bot's system prompt, then the transcript with its tool calls; a tool call that
  failed or was refused carries inspect's tool error; output: the bot's last words;
- scores: `passed`, `judge_score`, `checks`, and one per criterion in words (`criterion: TEXT`)
  (see parley.core.interop.inspect.scores);
- metadata: the spec's variables and where it came from, the stop reason, turns, usage per
  parley role with cost, extracted outputs;
- usage: `model_usage` by model name and `role_usage` by role (`bot`, `user`, and `grader` for
  the judge, inspect's name for that role), per sample and for the eval;
- the eval spec: the bot as the evaluated model, `model_roles` user and grader, the batch
  options in its metadata; `results` computed by inspect itself (`recompute_metrics`), with
  reducers mean and, for k >= 2 trials, pass_k_2 .. pass_k_k.

The whole log is built in memory (inspect's writer takes a complete EvalLog): fine for
thousands of conversations, not for millions.

inspect_ai is an optional extra: `require_inspect` says how to install it; nothing here
imports it before then.
"""

from __future__ import annotations

import datetime
import importlib.metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from parley.core.errors import ParleyError
from parley.core.records import RERUN_STOPS, BatchRecord, StoredConversation

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

INSTALL_HINT = "inspect export needs inspect_ai: pip install 'parley[inspect]'"
LogFormat = Literal["eval", "json"]

_STATUS: dict[str, Literal["started", "success", "cancelled", "error"]] = {
    "completed": "success",
    "failed": "error",
    "cancelled": "cancelled",
    "interrupted": "cancelled",
    "pending": "started",
    "running": "started",
}


class InspectMissing(ParleyError):
    """inspect_ai is not installed (it is the optional extra `parley[inspect]`)."""


def require_inspect() -> None:
    """Raise InspectMissing (one line: how to install it) when inspect_ai cannot be imported."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise InspectMissing(INSTALL_HINT) from exc


def log_file_name(batch: BatchRecord, fmt: LogFormat = "eval") -> str:
    """`<timestamp>_parley_<batch id>.<fmt>`: inspect's own naming (timestamp_task_id), the
    timestamp being when the batch was created (UTC)."""
    created = batch.created_at.astimezone(datetime.UTC).isoformat(timespec="seconds")
    return f"{created.replace(':', '-').replace('+', '-')}_parley_{batch.id}.{fmt}"


def export_batch(store: Any, batch_id: str, out_dir: Path, *, fmt: LogFormat = "eval") -> tuple[Path, int]:
    """Write batch `batch_id` as an eval log in `out_dir` (created if need be); returns the
    file written and its sample count. InspectMissing without inspect_ai."""
    require_inspect()
    from inspect_ai.log import write_eval_log

    log = build_eval_log(store, batch_id)
    if out_dir.exists() and not out_dir.is_dir():
        raise ParleyError(f"--output {out_dir} is a file; the inspect format writes into a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / log_file_name(store.get_batch(batch_id), fmt)
    partial = path.with_name(path.name + ".partial")
    write_eval_log(log, str(partial), format=fmt)
    partial.replace(path)  # a reader (inspect view) never sees half a log
    return path, len(log.samples or [])


def build_eval_log(store: Any, batch_id: str) -> EvalLog:
    """The batch as an EvalLog, results included (see the module doc)."""
    require_inspect()
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalPlan,
        EvalPlanStep,
        EvalSpec,
        EvalStats,
        recompute_metrics,
    )

    # The eval spec's scorer records; inspect_ai.log does not re-export them (0.3.285).
    from inspect_ai.log._log import EvalMetricDefinition, EvalScorer
    from inspect_ai.model import ModelConfig, ModelUsage

    from parley.core.interop.inspect.scores import CRITERION_METRICS, CRITERION_SCORE, SCORE_METRICS
    from parley.core.store import criterion_counts

    batch = store.get_batch(batch_id)
    criteria = [c.criterion for c in criterion_counts(store, batch.id)]
    samples = [_sample(stored, criteria) for stored in store.iter_conversations(batch_id)]
    ids: dict[str, None] = dict.fromkeys(str(s.id) for s in samples)
    models = batch.options.models
    user_names = sorted({str(s.metadata["user_simulator"]) for s in samples}) or [models.user]
    judge_names = sorted(
        {
            str(s.scores["judge_score"].metadata["judge"])
            for s in samples
            if s.scores and s.scores["judge_score"].metadata and s.scores["judge_score"].metadata.get("judge")
        }
    )
    user_model = models.user if models.user != "profile" or not samples else ", ".join(user_names)
    trials = batch.options.trials
    reducers = ["mean", *(f"pass_k_{k}" for k in range(2, trials + 1))]

    model_usage: dict[str, ModelUsage] = {}
    role_usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for into, per_sample in ((model_usage, sample.model_usage), (role_usage, sample.role_usage)):
            for key, usage in per_sample.items():
                into[key] = into[key] + usage if key in into else usage

    created = batch.created_at.astimezone(datetime.UTC).isoformat(timespec="seconds")
    spec = EvalSpec(
        eval_id=batch.id,
        run_id=batch.id,
        created=created,
        task="parley",
        task_id=batch.id,
        task_display_name=f"parley batch {batch.id[:8]}",
        task_description="A parley batch of simulated customer-service conversations.",
        task_args={"sources": list(batch.sources)},
        dataset=EvalDataset(
            name="parley", location=", ".join(batch.sources) or None, samples=len(ids), sample_ids=list(ids), shuffled=False
        ),
        model=models.bot,
        model_roles={
            "user": ModelConfig(model=user_model),
            "grader": ModelConfig(model=", ".join(judge_names) if judge_names else models.judge),
        },
        config=EvalConfig(epochs=trials, epochs_reducer=reducers),
        packages=_packages(),
        metadata={
            "parley_batch_id": batch.id,
            "parley_status": batch.status,
            "parley_options": batch.options.model_dump(mode="json"),
            "planned": batch.planned,
        },
        scorers=[
            EvalScorer(name=name, options={}, metrics=[EvalMetricDefinition(name=f"inspect_ai/{m}") for m in metrics])
            for name, metrics in [*SCORE_METRICS.items(), *((CRITERION_SCORE + c, CRITERION_METRICS) for c in criteria)]
        ],
    )
    plan = EvalPlan(
        steps=[
            EvalPlanStep(
                solver="parley_batch",
                params={
                    "bot": models.bot,
                    "user": models.user,
                    "judge": models.judge,
                    "max_turns": batch.options.max_turns,
                    "timeout_s": batch.options.timeout_s,
                    "seed": batch.options.seed,
                    "trials": trials,
                },
            )
        ]
    )
    stats = EvalStats(
        started_at=_utc(batch.started_at) or created,
        completed_at=_utc(batch.finished_at) or "",
        model_usage=model_usage,
        role_usage=role_usage,
    )
    log = EvalLog(
        status=_STATUS.get(batch.status, "started"),
        eval=spec,
        plan=plan,
        stats=stats,
        samples=samples,
        error=_eval_error(batch.error) if batch.status == "failed" else None,
    )
    if samples:
        recompute_metrics(log)
        assert log.results is not None
        log.results.total_samples = batch.planned or len(samples)
        log.results.completed_samples = sum(1 for s in samples if s.error is None)
    return log


def _sample(stored: StoredConversation, criteria: list[str]) -> EvalSample:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput, ModelUsage

    from parley.core.interop.inspect.messages import INSPECT_ROLES, add_usage, messages_to_inspect
    from parley.core.interop.inspect.scores import conversation_metadata, criterion_scores, sample_input, spec_metadata, verdict_scores

    conv, verdict = stored.conversation, stored.verdict
    role_usage: dict[str, ModelUsage] = {}
    model_usage: dict[str, ModelUsage] = {}
    names = {"bot": conv.bot_model, "user": conv.user_simulator}
    usage = dict(conv.usage)
    if verdict is not None and verdict.judge is not None:
        usage["judge"] = verdict.judge.usage
        names["judge"] = verdict.judge.judge
    for role, role_use in usage.items():
        add_usage(role_usage, INSPECT_ROLES.get(role, role), role_use)
        if role_use.calls:
            add_usage(model_usage, names.get(role, role), role_use)
    bot_texts = conv.bot_texts
    return EvalSample(
        id=stored.spec.spec_id,
        epoch=stored.trial,
        input=sample_input(stored.spec),
        target="",
        messages=messages_to_inspect(conv.messages, system_prompt=conv.system_prompt, tool_calls=conv.tool_calls),
        output=ModelOutput.from_content(model=conv.bot_model, content=bot_texts[-1] if bot_texts else ""),
        scores={**verdict_scores(conv, verdict), **criterion_scores(verdict, criteria)},
        metadata={**spec_metadata(stored.spec), **conversation_metadata(conv, verdict, stored.trial), "batch_id": stored.batch_id},
        model_usage=model_usage,
        role_usage=role_usage,
        started_at=_utc(conv.started_at),
        completed_at=_utc(conv.ended_at),
        total_time=round(conv.duration_s, 3),
        working_time=round(conv.duration_s, 3),
        uuid=conv.id,
        error=_eval_error(conv.error) if conv.stop_reason in RERUN_STOPS else None,
    )


def _utc(moment: datetime.datetime | None) -> str | None:
    return moment.astimezone(datetime.UTC).isoformat() if moment is not None else None


def _eval_error(message: str | None) -> Any:
    from inspect_ai.log import EvalError

    text = message or "unknown error"
    return EvalError(message=text, traceback=text, traceback_ansi=text)


def _packages() -> dict[str, str]:
    out = {}
    for name, dist in (("inspect_ai", "inspect-ai"), ("parley", "parley")):
        try:
            out[name] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out

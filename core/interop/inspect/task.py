"""parley's scenarios as an inspect_ai task: `inspect eval core/interop/inspect/task.py@parley_task`.

    inspect eval core/interop/inspect/task.py@parley_task -T profiles=profiles/ --model openai/gpt-4o-mini \\
        --model-role user=openai/gpt-4o-mini --model-role grader=openai/gpt-4o

Each parley spec (profile expansion, playbook, scenario) is a sample: id = the spec id,
input = its goals, metadata = its variables and where it came from. The solver runs the
conversation with parley's engine, exactly as a parley batch runs one (world, bot, simulated
customer, stop rules, checks, judge: `parley.core.engine.batch_conversation.run_planned`), with inspect's
models in parley's roles (parley.core.interop.inspect.models): the bot is the evaluated model (`--model`), the
customer the `user` role, the judge the `grader` role; a role not given is parley's offline one.
`-T bot=offline` runs parley's offline bot too: the whole eval is then offline and its scores
are parley's offline results. The scorers report parley's verdict: `passed`, `judge_score`,
`checks` (parley.core.interop.inspect.scores).

Epoch k runs trial k of each spec (trial k's seed, as `parley run --trials` does), so
`--epochs 3 --epochs-reducer mean,pass_k_3` (inspect's built-in pass_k reducer, the unbiased
C(c,k)/C(n,k) per spec) makes the `passed` accuracy pass^3; `-T trials=3` does the same with
reducers mean and pass_k_2..pass_k_3 set by the task.

Paths in `profiles` (comma-separated) are read relative to the directory inspect was started
in, else the parley checkout (inspect itself runs the task in this file's directory). Profiles
with `any()` items are expanded with their offline fallback (the expansion warns), as an
offline parley batch does.

With `--model mockllm/model` the bot answers mockllm's fixed text: a plumbing check, not a
meaningful score. (mockllm counts tokens with tiktoken's o200k_base, which it downloads once:
offline, give it outputs with usage, as tests/test_inspect_task.py does, or use bot=offline.)
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any, cast

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score, Scorer, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from parley.core.engine import ConversationControl, Limits, PlannedRun, WorldTemplates, run_planned, trial_spec
from parley.core.errors import ParleyError
from parley.core.interop.inspect.messages import messages_to_inspect
from parley.core.interop.inspect.models import InspectRoles
from parley.core.interop.inspect.scores import conversation_metadata, sample_input, spec_metadata, verdict_scores
from parley.core.option_declarations import option
from parley.core.records import Conversation, ConversationSpec, Verdict
from parley.core.specs import SHIPPED_DIR, load_specs

STORE_CONVERSATION = "parley_conversation"
STORE_VERDICT = "parley_verdict"


def resolve_sources(profiles: str | list[str]) -> list[Path]:
    """Each comma-separated path: as given when absolute, else relative to where inspect was
    started ($PWD; inspect changes directory to the task file's), else to where the shipped suite is installed (`profiles/...`)."""
    items = profiles if isinstance(profiles, list) else str(profiles).split(",")
    bases = [Path(os.environ["PWD"])] if os.environ.get("PWD") else []
    bases += [Path.cwd(), SHIPPED_DIR.parent]  # `profiles/...`: the shipped suite
    out: list[Path] = []
    for item in (str(i).strip() for i in items):
        if not item:
            continue
        path = Path(item).expanduser()
        if path.is_absolute():
            found = path if path.exists() else None
        else:
            found = next((base / path for base in bases if (base / path).exists()), None)
        if found is None:
            where = "" if path.is_absolute() else " (looked in " + ", ".join(str(b) for b in dict.fromkeys(bases)) + ")"
            raise ParleyError(f"profiles={item}: no such file or folder{where}")
        out.append(found)
    if not out:
        raise ParleyError("profiles= names no file or folder")
    return out


def load_task_specs(profiles: str | list[str], seed: int = 0) -> list[ConversationSpec]:
    """The specs the files make for `seed`; every problem found is one ParleyError."""
    spec_set = load_specs(resolve_sources(profiles), seed=seed)
    if spec_set.errors:
        shown = "\n".join(str(e) for e in spec_set.errors[:20])
        more = f"\n... and {len(spec_set.errors) - 20} more" if len(spec_set.errors) > 20 else ""
        raise ParleyError(f"{len(spec_set.errors)} problem(s) in the profiles:\n{shown}{more}")
    if not spec_set.specs:
        raise ParleyError(f"profiles={profiles}: no conversations to run")
    return spec_set.specs


@task
def parley_task(
    profiles: str = "profiles/",
    bot: str = "model",
    seed: int = option("seed").default,
    trials: int = option("trials").default,
    max_turns: int = option("max_turns").default,
    timeout_s: float = option("timeout_s").default,
) -> Task:
    """parley's specs as samples, each conversation run by parley's engine (see the module doc).

    Args:
        profiles: profile / playbook / scenario files or folders, comma-separated.
        bot: `model` (inspect's evaluated model is the bot) or `offline` (parley's offline bot).
        seed: the batch seed the specs are expanded with (as `parley run --seed`).
        trials: epochs, with reducers mean and pass_k_2..pass_k_<trials> (pass^k); `--epochs`
            overrides the count.
        max_turns: bot answers before a conversation stops with max_turns.
        timeout_s: wall-clock limit of one conversation.
    """
    specs = load_task_specs(profiles, seed)
    InspectRoles.check_bot(bot)
    dataset = MemoryDataset(
        [Sample(id=s.spec_id, input=sample_input(s), metadata=spec_metadata(s)) for s in specs],
        name="parley",
        location=str(profiles),
    )
    from inspect_ai.scorer import pass_k

    reducers = ["mean", *(pass_k(k) for k in range(2, trials + 1))]
    return Task(
        dataset=dataset,
        solver=parley_conversation({s.spec_id: s for s in specs}, bot=bot, limits=Limits(max_turns=max_turns, timeout_s=timeout_s)),
        scorer=[passed(), judge_score(), checks()],
        epochs=Epochs(trials, cast(Any, reducers)),  # inspect takes names and reducers mixed; its hint says one or the other
        name="parley",
    )


@solver
def parley_conversation(specs: dict[str, ConversationSpec], bot: str = "model", limits: Limits | None = None) -> Solver:
    """Run the sample's spec as a parley conversation and evaluate it: the transcript becomes
    the sample's messages, the verdict goes to the store for the scorers."""
    worlds = WorldTemplates()
    today = datetime.datetime.now(datetime.UTC).date()
    limits = limits or Limits()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec = specs[str(state.sample_id)]
        trial = max(1, state.epoch)
        roles = InspectRoles(bot)
        control = ConversationControl(run=PlannedRun(spec=trial_spec(spec, trial), trial=trial, position=0))
        # InspectRoles offers the role accessors run_planned uses from BatchModels (duck-typed).
        conversation, verdict = await run_planned(control, models=cast(Any, roles), worlds=worlds, limits=limits, today=today)
        state.messages = messages_to_inspect(
            conversation.messages, system_prompt=conversation.system_prompt, tool_calls=conversation.tool_calls
        )
        bot_texts = conversation.bot_texts
        state.output = ModelOutput.from_content(model=conversation.bot_model, content=bot_texts[-1] if bot_texts else "")
        state.metadata.update(conversation_metadata(conversation, verdict, trial))
        state.metadata["models"] = roles.names
        state.store.set(STORE_CONVERSATION, conversation.model_dump(mode="json", include=_KEPT))
        state.store.set(STORE_VERDICT, verdict.model_dump(mode="json"))
        state.completed = True
        return state

    return solve


# What the scorers need of the conversation (the transcript is in the messages already).
_KEPT = {"id", "customer_id", "bot_model", "user_simulator", "started_at", "ended_at", "duration_s", "stop_reason", "error"}


def _scores(state: TaskState) -> dict[str, Score]:
    stored = state.store.get(STORE_CONVERSATION)
    verdict = state.store.get(STORE_VERDICT)
    if stored is None:
        raise ParleyError("the parley_conversation solver did not run for this sample")
    conversation = Conversation.model_validate(stored)
    return verdict_scores(conversation, Verdict.model_validate(verdict) if verdict is not None else None)


@scorer(metrics=[accuracy(), stderr()], name="passed")
def passed() -> Scorer:
    """C when every applicable check held, I when one failed; unscored for a broken run."""

    async def score(state: TaskState, target: Target) -> Score:
        return _scores(state)["passed"]

    return score


@scorer(metrics=[mean(), stderr()], name="judge_score")
def judge_score() -> Scorer:
    """The judge's 1-3 (the grader role, else parley's offline judge); unscored on a judge error."""

    async def score(state: TaskState, target: Target) -> Score:
        return _scores(state)["judge_score"]

    return score


@scorer(metrics=[mean()], name="checks")
def checks() -> Scorer:
    """The share of decided checks that held; every check listed in the explanation."""

    async def score(state: TaskState, target: Target) -> Score:
        return _scores(state)["checks"]

    return score

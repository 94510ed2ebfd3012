"""A batch's Sensei rule files (`parley run --rules DIR`): loaded before it starts, decided as
its conversations end and once they are all in.

- `load_batch_rules`: the rule files of `BatchOptions.rules`, every problem of every file an
  InvalidInputs (`file:line: rule.field: reason`) before anything runs or is stored;
- `BatchRules.judge`: as each conversation ends, its `conversations: 1` rules decide it, and
  their results join its verdict as checks (parley.core.rules.conversation_checks);
- `BatchRules.decide_groups`: once every planned conversation is stored, the pair
  (`conversations: 2`) and batch (`all`) rules are decided over the batch's conversations and
  stored apart (parley.core.store.rule_results). A resumed batch decides them again.

Each conversation is seen as the file `parley report --format sensei` writes for it (its
extracted outputs as `data_output`, the spec's variables in `ask_about`), so a rule decides here
what `parley rules check` (and Sensei's checker) decides over the exported file. Rules are
evaluated in a worker thread: a helper that needs a model asks the judge's model on the batch's
own loop (`ChatModelAsker`), which must never wait on itself; offline, those rules are not run.
The threads are the rules' own (as many as conversations run at once): a rule waiting for a model
never holds up the threads the store writes from.

Pair and batch rules judge the conversations that ran to an end of their own and whose
simulated user behaved: one that broke, timed out or had a simulator fault says nothing about
the bot, and is listed as not run for each such rule, with why.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from parley.core.engine.batch_models import BatchModels
from parley.core.engine.batch_plan import InvalidInputs
from parley.core.errors import ParleyError
from parley.core.evaluation import assemble_verdict
from parley.core.models import OFFLINE
from parley.core.records import UNFINISHED_STOPS, BatchOptions, Conversation, ConversationSpec, Verdict
from parley.core.rules import (
    ChatModelAsker,
    CompiledRule,
    RuleModel,
    RuleReport,
    RuleResult,
    SenseiConversation,
    as_sensei_conversation,
    conversation_rules,
    evaluate_rules,
    group_rules,
    load_rules,
    rule_checks,
    rules_not_run,
    sensei_documents,
    spec_counts,
)
from parley.core.store import Store, clear_batch_rules, save_batch_rules

T = TypeVar("T")

log = logging.getLogger("parley.engine.batch_rules")


def load_batch_rules(options: BatchOptions, *, option: str = "--rules") -> tuple[list[CompiledRule], list[str]]:
    """The rules `options.rules` names, and the warnings of their files (keys Sensei ignores).
    Raises InvalidInputs with every problem of the files, ParleyError for a folder that is not
    there or holds no rule file (naming it as `option` takes it: `--rules`, `--parley-rules`...)."""
    if options.rules is None:
        return [], []
    path = Path(options.rules)
    if not path.exists():
        raise ParleyError(f"{option} {path}: no such file or folder (from {Path.cwd()})")
    rule_set = load_rules(path)
    if rule_set.errors:
        raise InvalidInputs(rule_set.errors)
    if not rule_set.rules:
        raise ParleyError(f"{option} {path}: no rule files (.yaml, .yml) there")
    return rule_set.rules, list(rule_set.warnings)


def left_out_why(conversation: Conversation, verdict: Verdict | None) -> str | None:
    """Why pair and batch rules do not judge this conversation; None when they do."""
    if conversation.stop_reason in UNFINISHED_STOPS:
        return f"the conversation ended early ({conversation.stop_reason}): it says nothing about the bot"
    if verdict is not None and verdict.outcome == "user_fault":
        return "the simulated user misbehaved (user_fault): it says nothing about the bot"
    return None


class BatchRules:
    """The rules of one batch run (see the module)."""

    def __init__(
        self, rules: Sequence[CompiledRule], models: BatchModels, specs: Sequence[ConversationSpec], serial: str, *, threads: int = 4
    ) -> None:
        self.rules = list(rules)
        self.per_conversation = conversation_rules(self.rules)
        self.groups = group_rules(self.rules)
        self.models = models
        self.numbers = spec_counts(specs)
        self._counted = {spec.spec_id for spec in specs}
        self.serial = serial
        self._askers: set[ChatModelAsker] = set()
        self._threads = max(1, min(threads, 32))  # a thread per conversation in flight, within reason
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None

    async def _in_thread(self, function: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(self._threads, thread_name_prefix="parley-rules")
        return await asyncio.get_running_loop().run_in_executor(self._executor, functools.partial(function, *args))

    def count(self, spec: ConversationSpec) -> None:
        """A spec submitted to an open-ended batch: Sensei's `number` of its test counts it too (as
        the batch's export counts its stored specs)."""
        if spec.spec_id not in self._counted:
            self._counted.add(spec.spec_id)
            self.numbers[spec.name] = self.numbers.get(spec.name, 0) + 1

    def sensei(self, spec: ConversationSpec, conversation: Conversation, verdict: Verdict | None) -> SenseiConversation:
        """The conversation as the rules see it, named by its id."""
        documents = sensei_documents(spec, conversation, verdict, serial=self.serial, number=self.numbers.get(spec.name, 1))
        return as_sensei_conversation(documents, conversation.id)

    def _asker(self) -> ChatModelAsker | None:
        """A fresh asker of the judge's model on this loop (None offline: model helpers are not run)."""
        name = self.models.names.judge
        if name == OFFLINE:
            return None
        asker = ChatModelAsker(self.models.chat_model(name, "judge"), asyncio.get_running_loop())
        self._askers.add(asker)
        return asker

    def close(self) -> None:
        """Stop asking the model: questions still to come fail at once (their rules are not run)."""
        for asker in list(self._askers):
            asker.close()

    def shutdown(self) -> None:
        """The run is over: the rules' threads end once what they are evaluating ends."""
        self.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    async def judge(self, spec: ConversationSpec, conversation: Conversation, verdict: Verdict) -> Verdict:
        """`verdict` with a check for each per-conversation rule, its outcome assembled again."""
        if not self.per_conversation:
            return verdict
        if conversation.stop_reason in UNFINISHED_STOPS:
            checks = rules_not_run(self.per_conversation, f"the conversation ended early ({conversation.stop_reason})")
            judge = verdict.judge
        else:
            sensei = self.sensei(spec, conversation, verdict)
            asker = self._asker()
            try:
                checks = await self._in_thread(rule_checks, self.per_conversation, sensei, asker)
            finally:
                if asker is not None:
                    self._askers.discard(asker)
            judge = verdict.judge
            if asker is not None and asker.usage.calls and judge is not None:  # the rules' questions are the judge's cost
                judge = judge.model_copy(update={"usage": judge.usage + asker.usage})
        return assemble_verdict(conversation, [*verdict.checks, *checks], verdict.outputs, judge, verdict.user_faults)

    async def forget_groups(self, store: Store, batch_id: str) -> None:
        """Forget the batch's stored pair and batch results: more conversations are about to run."""
        if self.groups:
            await asyncio.to_thread(clear_batch_rules, store, batch_id)

    async def decide_groups(self, store: Store, batch_id: str) -> list[RuleReport]:
        """Decide the pair and batch rules over the batch's stored conversations; store and
        return their reports."""
        if not self.groups:
            return []
        asker = self._asker()
        try:
            reports = await self._in_thread(self._decide, store, batch_id, asker)
        finally:
            if asker is not None:
                self._askers.discard(asker)
        await asyncio.to_thread(save_batch_rules, store, batch_id, reports)
        return reports

    def _decide(self, store: Store, batch_id: str, model: RuleModel | None) -> list[RuleReport]:
        judged: list[SenseiConversation] = []
        left_out: list[tuple[str, str]] = []
        for stored in store.iter_conversations(batch_id):
            why = left_out_why(stored.conversation, stored.verdict)
            if why is None:
                judged.append(self.sensei(stored.spec, stored.conversation, stored.verdict))
            else:
                left_out.append((stored.conversation.id, why))
        reports = evaluate_rules(self.groups, judged, model)
        for report in reports:
            report.results.extend(
                RuleResult(
                    rule_file=report.rule_file,
                    rule_name=report.name,
                    kind="conversation",
                    conversations=[cid],
                    outcome="not_run",
                    reason=why,
                )
                for cid, why in left_out
            )
        return reports

"""Named queries over one batch's stored conversations, for the reports, the comparison, the
runner and the dry run: each gives records (parley.core.records.batch_figures), never rows.

Light rows come back whole (`outcome_rows`: no transcript, a batch of 10,000 conversations
reads in a fraction of a second) and are counted by whoever reads them; what needs the verdicts'
JSON (failures, policy violations, failed and not-applicable checks) is aggregated here and
capped where it is a list.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from parley.core.evaluation import ATTACK_CRITERION, CLAIMS_KIND, CRITERION_KIND, LIMIT_KIND, NEEDS_LLM_JUDGE, marked_name
from parley.core.records import (
    AttackResult,
    AttackSuccess,
    CheckFailureCount,
    CriterionCounts,
    FailureEntry,
    JudgeKey,
    LimitCounts,
    MeasuredUsage,
    NotApplicableCount,
    NotRead,
    OutcomeRow,
    PolicyViolation,
    RoleUsage,
    StatedGoals,
)
from parley.core.store.rows import loads_list, user_fault_items
from parley.core.store.store import BROKEN_SQL, OUTCOME_SQL, Store
from parley.core.users import GOALS_ONLY_STATED

_BASE = "FROM conversations c LEFT JOIN verdicts v ON v.conversation_id = c.id WHERE c.batch_id = ?"
_JSON_CHECKS = "FROM conversations c JOIN verdicts v ON v.conversation_id = c.id, json_each(v.checks) j"
_NOT_APPLICABLE = f"json_extract(j.value, '$.outcome') = 'not_applicable' AND json_extract(j.value, '$.kind') != '{CRITERION_KIND}'"
"""A check parley could not apply (a criterion's "not applicable" is its judge's decision, not that)."""
_STATED = f"json_extract(c.metadata, '$.{GOALS_ONLY_STATED}')"

_OUTCOME_COLUMNS = f"""
    c.id, c.spec_id, c.spec_index, c.name, c.trial, c.stop_reason, ({OUTCOME_SQL}) AS outcome, v.score,
    (SELECT json_group_array(json_extract(j.value, '$.name')) FROM json_each(v.checks) j
      WHERE json_extract(j.value, '$.outcome') = 'fail') AS failed_checks,
    (SELECT json_group_array(json_extract(j.value, '$.name')) FROM json_each(v.checks) j
      WHERE json_extract(j.value, '$.kind') = 'criterion' AND json_extract(j.value, '$.outcome') = 'pass') AS met_criteria,
    json_extract(v.judge, '$.error') IS NOT NULL AS judge_error, json_extract(v.judge, '$.prompt_fit') AS judge_prompt_fit,
    json_extract(v.judge, '$.criteria_prompt_fit') AS criteria_prompt_fit,
    json_extract(v.judge, '$.checkpoint_prompt_fits') AS checkpoint_prompt_fits,
    COALESCE(v.policy_violations, 0) AS policy_violations,
    c.input_tokens, c.output_tokens, c.cost_usd, c.duration_s, c.turns,
    c.bot_latency_total_s, c.bot_latency_min_s, c.bot_latency_max_s,
    json_extract(c.metadata, '$.replay.first_divergence') AS first_divergence
"""


def _names(text: str | None) -> frozenset[str]:
    """The names of a `json_group_array` of check names."""
    return frozenset(n for n in json.loads(text) if n) if text and text != "[]" else frozenset()


def outcome_rows(store: Store, batch_id: str, *, page_size: int = 1000) -> Iterator[OutcomeRow]:
    """Every conversation of the batch as a light row, in spec order then trial, a page at a
    time: whoever counts them holds no more than a page."""
    for page in store._pages(batch_id, _OUTCOME_COLUMNS, page_size):
        for r in page:
            # model_construct: the store's own columns need no validating (a large batch reads fast)
            yield OutcomeRow.model_construct(
                id=r["id"],
                spec_id=r["spec_id"],
                spec_index=r["spec_index"],
                name=r["name"],
                trial=r["trial"],
                outcome=r["outcome"],
                stop_reason=r["stop_reason"],
                score=r["score"],
                turns=r["turns"],
                duration_s=r["duration_s"],
                cost_usd=r["cost_usd"],
                input_tokens=r["input_tokens"],
                output_tokens=r["output_tokens"],
                bot_latency_s=r["bot_latency_total_s"] or 0.0,
                bot_latency_min_s=r["bot_latency_min_s"],
                bot_latency_max_s=r["bot_latency_max_s"],
                failed_checks=_names(r["failed_checks"]),
                met_criteria=_names(r["met_criteria"]),
                judge_error=bool(r["judge_error"]),
                judge_prompt_fit=r["judge_prompt_fit"],
                criteria_prompt_fit=r["criteria_prompt_fit"],
                checkpoint_prompt_fits=loads_list(r["checkpoint_prompt_fits"]),
                policy_violations=r["policy_violations"],
                first_divergence=r["first_divergence"],
            )


def role_usage(store: Store, batch_id: str) -> list[RoleUsage]:
    """Calls, tokens and cost per role (in no set order). A role's cost is None as soon as one
    of its calls had no price."""
    rows = store._read(
        """SELECT u.role, group_concat(DISTINCT u.model) AS models, SUM(u.calls) AS calls,
                  SUM(u.input_tokens) AS input_tokens, SUM(u.output_tokens) AS output_tokens,
                  SUM(u.unreported_calls) AS unreported_calls,
                  CASE WHEN COUNT(u.cost_usd) = COUNT(*) THEN TOTAL(u.cost_usd) END AS cost_usd
           FROM usage u JOIN conversations c ON c.id = u.conversation_id
           WHERE c.batch_id = ? GROUP BY u.role""",
        [batch_id],
    )
    return [
        RoleUsage(
            role=r["role"],
            models=sorted(set((r["models"] or "").split(","))),
            calls=r["calls"],
            input_tokens=r["input_tokens"],
            output_tokens=r["output_tokens"],
            unreported_calls=r["unreported_calls"],
            cost_usd=r["cost_usd"],
        )
        for r in rows
    ]


def batch_worlds(store: Store, batch_id: str) -> list[str]:
    """The worlds the batch's conversations ended on (their final states'), sorted; none for a bot parley saw no world of."""
    rows = store._read(
        "SELECT DISTINCT json_extract(final_state, '$.world') AS world FROM conversations "
        "WHERE batch_id = ? AND final_state IS NOT NULL ORDER BY world",
        [batch_id],
    )
    return [r["world"] for r in rows if r["world"]]


def unpriced_models(store: Store, batch_id: str) -> list[str]:
    """The models of the batch's calls that had no known price, sorted."""
    rows = store._read(
        "SELECT DISTINCT u.model FROM usage u JOIN conversations c ON c.id = u.conversation_id "
        "WHERE c.batch_id = ? AND u.cost_usd IS NULL ORDER BY u.model",
        [batch_id],
    )
    return [r["model"] for r in rows]


def policy_violations(store: Store, batch_id: str, limit: int) -> list[PolicyViolation]:
    """The first `limit` failed checks that are policy violations, in spec order then trial."""
    rows = store._read(
        f"""SELECT c.id, c.spec_id, c.name, c.trial,
                   json_extract(j.value, '$.name') AS check_name, json_extract(j.value, '$.reason') AS reason
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND v.policy_violations > 0
              AND json_extract(j.value, '$.policy_violation') AND json_extract(j.value, '$.outcome') = 'fail'
            ORDER BY c.spec_index, c.spec_id, c.trial, j.key LIMIT ?""",
        [batch_id, limit],
    )
    return [
        PolicyViolation(
            conversation_id=r["id"],
            spec_id=r["spec_id"],
            name=r["name"],
            trial=r["trial"],
            check=r["check_name"] or "",
            reason=r["reason"] or "",
        )
        for r in rows
    ]


def failed_check_counts(store: Store, batch_id: str) -> list[CheckFailureCount]:
    """How often each check failed, the most frequent first."""
    rows = store._read(
        f"""SELECT json_extract(j.value, '$.kind') AS check_kind, json_extract(j.value, '$.name') AS check_name,
                   COUNT(*) AS n
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND json_extract(j.value, '$.outcome') = 'fail'
            GROUP BY check_kind, check_name ORDER BY n DESC, check_kind, check_name""",
        [batch_id],
    )
    # (`check_kind`, not `kind`: conversations has a `kind` column, which GROUP BY would pick)
    return [CheckFailureCount(kind=r["check_kind"] or "", name=r["check_name"] or "", count=r["n"]) for r in rows]


def failure_entries(store: Store, batch_id: str, limit: int) -> list[FailureEntry]:
    """The first `limit` conversations that neither passed nor were merely unverified, with
    their reasons: the run's error, the verdict's error, the simulator's faults, then each
    failed (or undecidable) check as "name: reason"."""
    rows = store._read(
        f"""SELECT c.id, c.spec_id, c.name, c.trial, c.stop_reason, c.error, v.error AS verdict_error,
                   v.checks, v.user_faults, {_STATED} AS stated, {OUTCOME_SQL} AS o
            {_BASE} AND ({OUTCOME_SQL}) NOT IN ('passed', 'unverified')
            ORDER BY c.spec_index, c.spec_id, c.trial LIMIT ?""",
        [batch_id, limit],
    )
    failures = []
    for r in rows:
        reasons = [e for e in (r["error"], r["verdict_error"]) if e]
        reasons += [f"user fault ({kind}): {reason}" for kind, reason in user_fault_items(r["user_faults"])]
        evidence: dict[str, str] = {}
        for check in json.loads(r["checks"] or "[]"):
            if check.get("outcome") not in ("fail", "error"):
                continue
            name = marked_name(check)  # a judge's check with its calibration: "name [κ 0.72]"
            reason = f"{name}: {check.get('reason')}"
            details = check.get("details") or {}
            if check.get("kind") == CRITERION_KIND and check.get("outcome") == "fail" and details.get("evidence"):
                # a criterion not met: its evidence goes under it, not inside its line
                reason = f"{name}: not met: {details.get('reasoning') or '(no reasoning given)'}"
                evidence[reason] = str(details["evidence"])
            reasons.append(reason)
        failures.append(
            FailureEntry(
                conversation_id=r["id"],
                spec_id=r["spec_id"],
                name=r["name"],
                trial=r["trial"],
                outcome=r["o"],
                stop_reason=r["stop_reason"],
                reasons=list(dict.fromkeys(reasons)),
                evidence=evidence,
                goals_only_stated=_goals(r["stated"]),
            )
        )
    return failures


def goals_only_stated(store: Store, batch_id: str, limit: int) -> list[StatedGoals]:
    """Each spec (the first `limit`, in spec order) whose conversations carry goals their offline
    customer only stated (the conversation metadata's `goals_only_stated`)."""
    rows = store._read(
        f"""SELECT c.spec_id, {_STATED} AS stated, COUNT(*) AS n FROM conversations c
            WHERE c.batch_id = ? AND {_STATED} IS NOT NULL
            GROUP BY c.spec_id ORDER BY MIN(c.spec_index), c.spec_id LIMIT ?""",
        [batch_id, limit],
    )
    return [StatedGoals(spec_id=r["spec_id"], conversations=r["n"], goals=_goals(r["stated"])) for r in rows]


def _goals(stated: str | None) -> list[str]:
    value = json.loads(stated) if stated else None
    return [str(goal) for goal in value] if isinstance(value, list) else []


def not_applicable_checks(store: Store, batch_id: str, shown_names: int = 5) -> tuple[list[NotApplicableCount], int]:
    """The checks that could not apply, by kind and reason (one row each: a world check on a
    connector and a judge that failed are not the same why; runs that broke left out), and how
    many passed conversations had any."""
    rows = store._read(
        f"""SELECT json_extract(j.value, '$.kind') AS check_kind, json_extract(j.value, '$.reason') AS reason,
                   COUNT(*) AS n, COUNT(DISTINCT c.id) AS convs,
                   json_group_array(DISTINCT json_extract(j.value, '$.name')) AS names
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND c.stop_reason NOT IN {BROKEN_SQL} AND {_NOT_APPLICABLE}
            GROUP BY check_kind, reason ORDER BY n DESC, check_kind, reason""",
        [batch_id],
    )
    counts = []
    for r in rows:
        names = sorted(str(n) for n in json.loads(r["names"] or "[]") if n)
        counts.append(
            NotApplicableCount(
                kind=r["check_kind"] or "",
                checks=r["n"],
                conversations=r["convs"],
                names=names[:shown_names],
                more_names=max(0, len(names) - shown_names),
                reason=r["reason"] or "",
            )
        )
    if not counts:
        return counts, 0
    passed = store._read(
        f"""SELECT COUNT(*) AS n {_BASE} AND ({OUTCOME_SQL}) = 'passed'
              AND EXISTS (SELECT 1 FROM json_each(v.checks) j WHERE {_NOT_APPLICABLE})""",
        [batch_id],
    )[0]["n"]
    return counts, passed


def not_read(store: Store, batch_id: str) -> NotRead:
    """What no role of the batch read (parley.core.records.NotRead): criteria in words not run for
    want of an LLM judge, and the languages the claims check did not read."""
    row = store._read(
        f"""SELECT COUNT(*) AS n {_JSON_CHECKS}
            WHERE c.batch_id = ? AND json_extract(j.value, '$.kind') = '{CRITERION_KIND}'
              AND json_extract(j.value, '$.outcome') = 'not_run' AND json_extract(j.value, '$.reason') = ?""",
        [batch_id, NEEDS_LLM_JUDGE],
    )[0]
    languages = store._read(
        f"""SELECT json_extract(j.value, '$.details.language_not_read') AS language, COUNT(DISTINCT c.id) AS n {_JSON_CHECKS}
            WHERE c.batch_id = ? AND json_extract(j.value, '$.kind') = '{CLAIMS_KIND}'
              AND json_extract(j.value, '$.details.language_not_read') IS NOT NULL
            GROUP BY language ORDER BY n DESC, language""",
        [batch_id],
    )
    return NotRead(criteria_need_judge=row["n"], claims_languages={str(r["language"]): r["n"] for r in languages})


def criterion_counts(store: Store, batch_id: str) -> list[CriterionCounts]:
    """How each criterion in words of the batch came out, the authors' first, in the order the
    specs have them."""
    rows = store._read(
        f"""SELECT json_extract(j.value, '$.name') AS criterion,
                   MAX(COALESCE(json_extract(j.value, '$.by_default'), 0)) AS builtin,
                   SUM(json_extract(j.value, '$.outcome') = 'pass') AS met,
                   SUM(json_extract(j.value, '$.outcome') = 'fail') AS not_met,
                   SUM(json_extract(j.value, '$.outcome') = 'not_applicable'
                       AND COALESCE(json_extract(j.value, '$.details.verdict'), '') = 'not applicable') AS not_applicable,
                   SUM(json_extract(j.value, '$.outcome') = 'not_run') AS not_run,
                   MAX(json_extract(j.value, '$.details.calibration.text')) AS calibration,
                   SUM(json_extract(j.value, '$.outcome') = 'error'
                       OR (json_extract(j.value, '$.outcome') = 'not_applicable'
                           AND COALESCE(json_extract(j.value, '$.details.verdict'), '') != 'not applicable')) AS errors
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND json_extract(j.value, '$.kind') = '{CRITERION_KIND}'
            GROUP BY criterion ORDER BY builtin, MIN(c.spec_index), MIN(CAST(j.key AS INTEGER)), criterion""",
        [batch_id],
    )
    return [
        CriterionCounts(
            criterion=r["criterion"] or "",
            builtin=bool(r["builtin"]),
            met=r["met"] or 0,
            not_met=r["not_met"] or 0,
            not_applicable=r["not_applicable"] or 0,
            not_run=r["not_run"] or 0,
            errors=r["errors"] or 0,
            calibration=r["calibration"],
        )
        for r in rows
    ]


def rubric_calibration(store: Store, batch_id: str) -> str | None:
    """How the batch's judge was calibrated on the rubric it scored (the mark of its judge-score
    checks: "κw 0.55", "uncalibrated"...); None when no judge's score was marked."""
    rows = store._read(
        f"""SELECT json_extract(j.value, '$.details.calibration.text') AS calibration {_JSON_CHECKS}
            WHERE c.batch_id = ? AND json_extract(j.value, '$.kind') = 'judge_score'
              AND json_extract(j.value, '$.details.calibration.text') IS NOT NULL LIMIT 1""",
        [batch_id],
    )
    return rows[0]["calibration"] if rows else None


def limit_counts(store: Store, batch_id: str) -> list[LimitCounts]:
    """How each limit check of the batch came out, with its worst measured figure, in the order
    the specs have them."""
    rows = store._read(
        f"""SELECT json_extract(j.value, '$.name') AS check_name,
                   MAX(json_extract(j.value, '$.details.limit')) AS key,
                   SUM(json_extract(j.value, '$.outcome') = 'pass') AS held,
                   SUM(json_extract(j.value, '$.outcome') = 'fail') AS over,
                   SUM(json_extract(j.value, '$.outcome') NOT IN ('pass', 'fail')) AS not_decided,
                   MAX(json_extract(j.value, '$.details.measured')) AS worst,
                   MAX(COALESCE(json_extract(j.value, '$.details.timing_dependent'), 0)) AS timing
            {_JSON_CHECKS}
            WHERE c.batch_id = ? AND json_extract(j.value, '$.kind') = '{LIMIT_KIND}'
            GROUP BY check_name ORDER BY MIN(c.spec_index), MIN(CAST(j.key AS INTEGER)), check_name""",
        [batch_id],
    )
    return [
        LimitCounts(
            name=r["check_name"] or "",
            limit=r["key"] or "",
            held=r["held"] or 0,
            over=r["over"] or 0,
            not_decided=r["not_decided"] or 0,
            worst=r["worst"],
            timing_dependent=bool(r["timing"]),
        )
        for r in rows
    ]


def measured_usage(store: Store, role: str, model: str) -> dict[str, MeasuredUsage]:
    """spec_id -> what earlier conversations that ran `model` in `role` used (runs that broke
    left out), over every stored batch."""
    rows = store._read(
        f"""SELECT c.spec_id, COUNT(*) AS n, SUM(u.calls) AS calls, SUM(u.input_tokens) AS inp, SUM(u.output_tokens) AS outp
            FROM usage u JOIN conversations c ON c.id = u.conversation_id
            WHERE u.role = ? AND u.model = ? AND c.stop_reason NOT IN {BROKEN_SQL} GROUP BY c.spec_id""",
        [role, model],
    )
    return {
        r["spec_id"]: MeasuredUsage(conversations=r["n"], calls=r["calls"] or 0, input_tokens=r["inp"] or 0, output_tokens=r["outp"] or 0)
        for r in rows
    }


def judge_keys(store: Store, batch_id: str) -> list[JudgeKey]:
    """The judges (by calibration key) that judged the batch's conversations, in no set order;
    empty when none recorded one (the offline judge, older rows)."""
    rows = store._read(
        f"""SELECT DISTINCT json_extract(v.judge, '$.key') AS judge_key {_BASE}
            AND json_extract(v.judge, '$.key') IS NOT NULL LIMIT 20""",
        [batch_id],
    )
    return [JudgeKey.model_validate_json(r["judge_key"]) for r in rows]


def attack_results(store: Store, batch_id: str) -> list[AttackResult]:
    """Every attack conversation of the batch (its spec has an `attack:`), in spec order then
    trial: the world's verdict on it (its `attack` check) and an LLM judge's opinion when one was
    asked (the criterion ATTACK_CRITERION). Empty for a batch without attacks."""
    rows = store._read(
        f"""SELECT c.id, c.spec_id, c.trial, ({OUTCOME_SQL}) AS o,
                   json_extract(c.spec, '$.attack.strategy') AS strategy, json_extract(c.spec, '$.attack.objective') AS objective,
                   json_extract(c.spec, '$.world.name') AS world, v.checks
            {_BASE} AND json_extract(c.spec, '$.attack') IS NOT NULL
            ORDER BY c.spec_index, c.spec_id, c.trial""",
        [batch_id],
    )
    results: list[AttackResult] = []
    for r in rows:
        checks = loads_list(r["checks"])
        attack = next((c for c in checks if isinstance(c, dict) and c.get("kind") == "attack"), None)
        opinion = next(
            (c for c in checks if isinstance(c, dict) and c.get("kind") == CRITERION_KIND and c.get("name") == ATTACK_CRITERION), None
        )
        world_says = None if attack is None else {"fail": True, "pass": False}.get(str(attack.get("outcome")))
        judge_says = None if opinion is None else {"fail": True, "pass": False}.get(str(opinion.get("outcome")))
        details = attack.get("details", {}) if attack is not None else {}
        results.append(
            AttackResult(
                conversation_id=r["id"],
                spec_id=r["spec_id"],
                trial=r["trial"],
                world=r["world"],
                strategy=r["strategy"] or "",
                objective=r["objective"] or "",
                outcome=r["o"] or "unevaluated",
                breached=world_says,
                successes=[AttackSuccess.model_validate(s) for s in details.get("successes", []) if isinstance(s, dict)],
                judge_breached=judge_says,
            )
        )
    return results

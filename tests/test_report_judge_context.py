"""What a batch says about its judge's context, once, at the end (`parley run`, `batches show`),
and the report's checks not applicable, each row explained by its own reason."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from parley.core.records.verdict import CheckResult, JudgeResult
from parley.core.reports.markdown import render_markdown
from parley.core.reports.stats import summarize
from parley.core.store.store import Store
from parley.tui.cli.batch_summary import summary_lines
from parley.tui.cli.main import cli
from tests.fake_openai_server import TextReply
from tests.test_run_command import PROFILES
from tests.test_store_fixtures import batch, conversation, spec, store, verdict  # noqa: F401

GOOD = '{"score": 3, "comment": "Clear and correct."}'
NO_STATE = (
    "Not checked: the conversation has no final database state (the bot under test is external or used an order API parley does not own)."
)


def judged(
    conv, fit: str, *, error: str | None = None, checks: list[CheckResult] | None = None, outcome: str = "passed", criteria_fit=None
):
    v = verdict(conv, outcome, None if error else 3, checks=checks or [], error=f"judge_error: {error}" if error else None)
    result = JudgeResult(
        judge="openai/gpt-4o-mini", score=None if error else 3, error=error, prompt_fit=fit, criteria_prompt_fit=criteria_fit
    )
    return v.model_copy(update={"judge": result})


def test_the_batch_counts_judge_prompts_condensed_and_too_long_once(store):
    b = store.create_batch(batch())
    too_long = "the conversation does not fit the judge's 4096-token context (about 5200 tokens even condensed, 512 kept for the answer)"
    # the score's prompts, and for two conversations the criteria's: 6 prompts, 3 condensed, 2 too long
    cases = [("whole", None, None), ("condensed", None, "condensed"), ("condensed", None, None), ("too_long", too_long, "too_long")]
    for n, (fit, error, criteria_fit) in enumerate(cases):
        conv = conversation()
        outcome = "evaluation_error" if error else "passed"
        store.save_conversation(b.id, spec(index=n), conv, judged(conv, fit, error=error, outcome=outcome, criteria_fit=criteria_fit))
    summary = summarize(store, b.id)
    assert (summary.judge_prompts, summary.judge_prompts_condensed, summary.judge_prompts_too_long) == (6, 3, 2)
    lines = summary_lines(summary)
    [line] = [line for line in lines if line.startswith("Judge context")]
    assert line.startswith("Judge context (4096 tokens): 6 judge prompts, 3 condensed to fit, 2 could not fit even condensed (judge errors")


def test_an_offline_judge_says_nothing_about_context(store):
    b = store.create_batch(batch())
    conv = conversation()
    store.save_conversation(b.id, spec(), conv, verdict(conv))
    summary = summarize(store, b.id)
    assert summary.judge_prompts == 0
    assert not any(line.startswith("Judge context") for line in summary_lines(summary))


def test_checks_not_applicable_are_explained_row_by_row_by_their_own_reason(store):
    b = store.create_batch(batch())
    timeout = "judge_error: the judge gave no answer within 90 s"
    world = CheckResult(kind="order_status", name="ORD-1002 ends cancelled", outcome="not_applicable", reason=NO_STATE)
    slow = CheckResult(kind="judge_score", name="judge score >= 2 (default)", outcome="not_applicable", reason=timeout)
    conv = conversation()
    store.save_conversation(b.id, spec(), conv, verdict(conv, checks=[world]))
    conv = conversation()
    store.save_conversation(b.id, spec(index=1), conv, verdict(conv, "unverified", None, checks=[slow]))
    text = render_markdown(summarize(store, b.id))
    section = text.split("## Checks not applicable", 1)[1].split("\n## ", 1)[0]
    # no one sentence claims a cause for every row: the judge's row is not about the bot's database
    assert "does not use parley's order database" not in section
    assert "each row says why" in section
    rows = [line for line in section.splitlines() if line.startswith("| order_status") or line.startswith("| judge_score")]
    assert len(rows) == 2
    [world_row] = [r for r in rows if r.startswith("| order_status")]
    [judge_row] = [r for r in rows if r.startswith("| judge_score")]
    assert "has no final database state" in world_row and "judge" not in world_row
    assert timeout in judge_row and "database" not in judge_row


# -- end to end: `parley run` with an LLM judge on a fake endpoint ------------------------------------


@pytest.fixture
def judge_endpoint(server, monkeypatch):
    server.default = TextReply(GOOD)
    monkeypatch.setenv("FAKE_BASE_URL", server.base_url)
    return server


def run(tmp_path, *args):
    return CliRunner().invoke(
        cli,
        [
            "run",
            str(PROFILES / "list_my_orders.yaml"),
            str(PROFILES / "track_shipped_order.yaml"),
            "--judge",
            "openai-api/fake/judge",
            *args,
        ]
        + ["--db", str(tmp_path / "p.db")],
        catch_exceptions=False,
    )


def test_parley_run_says_at_the_end_how_many_judge_prompts_were_condensed(judge_endpoint, tmp_path):
    # in a 3,000-token context the order list's judge prompts (the score's and the criteria's:
    # an LLM judge decides the built-in criterion) must be condensed; the tracking ones fit whole
    judge_endpoint.context_tokens, judge_endpoint.chars_per_token = 3000, 2.4
    result = run(tmp_path, "--judge-context", "3000")
    assert result.exit_code == 0, result.output
    assert "Judge context (3000 tokens): 4 judge prompts, 2 condensed to fit, 0 could not fit even condensed" in result.stdout
    assert judge_endpoint.refused_for_length == 0
    assert sum(1 for line in result.stdout.splitlines() if line.startswith("Judge context")) == 1


def test_parley_run_names_what_could_not_fit_and_scores_nothing_for_it(judge_endpoint, tmp_path):
    result = run(tmp_path, "--judge-context", "700")
    assert result.exit_code == 1, result.output
    assert "Judge context (700 tokens): 4 judge prompts, 0 condensed to fit, 4 could not fit even condensed (judge errors" in result.stdout
    assert "the conversation does not fit the judge's 700-token context" in result.stdout
    assert "the judge model failed" not in result.stdout
    assert judge_endpoint.requests == []
    with Store.open(tmp_path / "p.db") as db:
        [row] = db.list_batches()
        outcomes = {s.verdict.outcome for s in db.iter_conversations(row.id)}
    assert outcomes == {"evaluation_error"}


def test_the_context_the_judges_endpoint_reports_before_launch_is_the_one_its_prompts_fit(judge_endpoint, tmp_path):
    # the endpoint says its model takes 3,000 tokens (vLLM's max_model_len) and refuses more:
    # without --judge-context, the prompts are fitted to that, not to the 4,096 default
    judge_endpoint.listed_models, judge_endpoint.reported_context = ["judge"], 3000
    judge_endpoint.context_tokens, judge_endpoint.chars_per_token = 3000, 2.4
    result = run(tmp_path)
    assert result.exit_code == 0, result.output
    assert "Judge context (3000 tokens): 4 judge prompts, 2 condensed to fit, 0 could not fit even condensed" in result.stdout
    assert judge_endpoint.refused_for_length == 0
    with Store.open(tmp_path / "p.db") as db:
        [row] = db.list_batches()
        assert db.get_batch(row.id).options.models.endpoint_context == {"judge": 3000}  # kept for a resume and the report


def test_a_judge_context_given_wins_over_what_the_endpoint_reports(judge_endpoint, tmp_path):
    judge_endpoint.listed_models, judge_endpoint.reported_context = ["judge"], 3000
    result = run(tmp_path, "--judge-context", "700")
    assert "Judge context (700 tokens): 4 judge prompts, 0 condensed to fit, 4 could not fit even condensed" in result.stdout
    assert judge_endpoint.requests == []

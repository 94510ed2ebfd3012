"""The pure parts of calibration: the figures of a judge set beside labels (disagreements false
passes first, labels matched by id or by text, what is left out said), the marks a verdict gets
from them, a label file read with every bad row located, and a jury's majority."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest

from parley.core.errors import ParleyError
from parley.core.evaluation import Jury, measure_judge, policy_for
from parley.core.records import (
    Calibration,
    CheckResult,
    ConversationSpec,
    Expectations,
    ItemCalibration,
    JudgeKey,
    JudgeResult,
    Label,
    Verdict,
    criterion_id,
)
from parley.core.specs import InvalidLabelFile, read_label_file
from tests.test_store_fixtures import conversation

KEY = JudgeKey(model="openai/judge", endpoint="https://example.test/v1", prompt_version="p-1", generation={"temperature": 0.0})
TEXT = "The bot apologises"


def spec() -> ConversationSpec:
    expect = Expectations(criteria=[TEXT], criterion_ids={TEXT: "apology"})
    return ConversationSpec(spec_id="s#0", kind="profile", source="s.yaml", name="s", index=0, seed=0, expect=expect)


def verdict(cid: str, decision: str | None, score: int | None = 2) -> Verdict:
    outcome = {"met": "pass", "not met": "fail", "not applicable": "not_applicable", None: "error"}[decision]
    details = {"criterion_id": "apology", "judge": "openai/judge", "quote": f"quote {cid}", "reasoning": f"why {cid}"}
    if decision is not None:
        details["verdict"] = decision
    check = CheckResult(kind="criterion", name=TEXT, outcome=outcome, reason="r", details=details)
    judge = (
        JudgeResult(judge="openai/judge", score=score, comment=f"scored {cid}") if score else JudgeResult(judge="openai/judge", error="x")
    )
    return Verdict(conversation_id=cid, outcome="passed", passed=True, judge=judge, checks=[check])


def label(cid: str, value: str, *, kind: str = "criterion", item: str = "apology", who: str = "alice", text: str = "") -> Label:
    return Label(conversation_id=cid, kind=kind, item_id=item, item_text=text, value=value, labeller=who)  # type: ignore[arg-type]


def test_disagreements_list_false_passes_first_and_the_rubric_farthest_first():
    judged = {
        "c1": (spec(), verdict("c1", "not met", 3)),
        "c2": (spec(), verdict("c2", "met", 3)),
        "c3": (spec(), verdict("c3", "met", 2)),
        "c4": (spec(), verdict("c4", None, None)),
    }
    labels = [
        label("c1", "met"),
        label("c2", "not_met"),
        label("c3", "not_applicable"),
        label("c4", "met"),
        label("c1", "1", kind="rubric", item="rubric-default"),
        label("c2", "2", kind="rubric", item="rubric-default"),
        label("c3", "3", kind="rubric", item="rubric-default"),
    ]
    calibration = measure_judge(labels, judged, KEY, resamples=200)
    criterion = calibration.item("apology")
    assert criterion is not None and criterion.text == TEXT
    assert (criterion.labels, criterion.judge_errors) == (3, 1)  # the judge's error on c4 is neither agreement nor not
    assert [(d.conversation_id, d.false_pass) for d in criterion.disagreements] == [("c2", True), ("c1", False), ("c3", False)]
    assert criterion.disagreements[0].quote == "quote c2" and criterion.disagreements[0].reason == "why c2"
    rubric = calibration.item("rubric-default")
    assert rubric is not None and rubric.weighted
    assert [(d.conversation_id, d.label, d.judged) for d in rubric.disagreements] == [("c1", "1", "3"), ("c2", "2", "3"), ("c3", "3", "2")]
    assert rubric.disagreements[0].reason == "scored c1"


def test_a_label_naming_its_criterion_by_text_counts_and_what_is_left_out_is_said():
    judged = {"c1": (spec(), verdict("c1", "met")), "c2": (spec(), verdict("c2", "not met"))}
    labels = [
        label("c1", "met", item="c-00000000", text="the bot  APOLOGISES"),  # an id made from the text; the criterion has its own
        label("c2", "not_met"),
        label("c1", "met", item="c-11111111", text="A criterion since edited away"),
        label("c2", "met", kind="check", item="ORD-1003 ends shipped"),
        label("elsewhere", "met"),  # a conversation not judged here
    ]
    calibration = measure_judge(labels, judged, KEY, resamples=200)
    criterion = calibration.item("apology")
    assert criterion is not None and criterion.labels == 2 and criterion.kappa == pytest.approx(1.0)
    assert calibration.conversations == 2
    assert calibration.notes == [
        "1 label(s) on criteria or rubrics the conversations' specs no longer have were left out",
        "1 label(s) on expect: checks measure no judge and were left out",
    ]


def _calibration(
    kappa: float | None, *, one_class: bool = False, days: int = 0, key: JudgeKey = KEY, weighted: bool = False
) -> Calibration:
    item = ItemCalibration(
        kind="rubric" if weighted else "criterion", item_id="apology", labels=10, kappa=kappa, one_class=one_class, weighted=weighted
    )
    return Calibration(key=key, items=[item], created_at=dt.datetime(2026, 11, 1, tzinfo=dt.UTC) + dt.timedelta(days=days))


@pytest.mark.parametrize(
    ("calibrations", "min_kappa", "text", "trusted"),
    [
        ([_calibration(0.72)], 0.6, "κ 0.72", True),
        ([_calibration(0.41)], 0.6, "below threshold (κ 0.41 < 0.6)", False),
        ([_calibration(None, one_class=True)], 0.6, "κ undefined", False),
        ([], 0.6, "uncalibrated", False),
        ([_calibration(0.9, key=KEY.model_copy(update={"endpoint": "http://other/v1"}))], 0.6, "uncalibrated", False),
        ([_calibration(0.3, days=0), _calibration(0.8, days=2)], 0.6, "κ 0.80", True),  # the latest calibration counts
        ([_calibration(0.55, weighted=True)], 0.5, "κw 0.55", True),
    ],
)
def test_a_verdict_is_marked_with_the_latest_calibration_of_its_very_judge(calibrations, min_kappa, text, trusted):
    mark = policy_for(KEY, calibrations, min_kappa=min_kappa).mark("apology")
    assert (mark.text, mark.trusted) == (text, trusted)


def test_a_label_file_reports_every_bad_row_with_its_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"conversation_id": "c1", "criterion": TEXT, "label": "Not Met", "labeller": "alice"}),
                "{not json",
                json.dumps(["a", "list"]),
                json.dumps({"conversation_id": "c1", "criterion_id": "apology", "label": "met", "labeller": "alice", "mood": "fine"}),
                json.dumps({"conversation_id": "c2", "label": "2.0", "criterion_id": "rubric-default", "labeller": "bob"}),
                json.dumps({"conversation_id": "c3", "criterion_id": "apology", "label": "", "labeller": "bob"}),
                json.dumps({"conversation_id": "c3", "criterion_id": "apology", "label": "met"}),
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(InvalidLabelFile) as raised:
        read_label_file(path)
    assert raised.value.problems == [
        f"{path}:2: not JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{path}:3: expected a JSON object, got list",
        f"{path}:4: mood: unknown column; the columns are conversation_id, kind, criterion_id, criterion, label, labeller, note, labelled_at",
        f"{path}:7: labeller: missing (or give the file's labeller with --labeller)",
    ]
    path.write_text("\n".join(path.read_text().splitlines()[i] for i in (0, 4, 5, 6)), encoding="utf-8")
    read = read_label_file(path, labeller="carol")
    assert read.blank == 1
    assert [(r.line, r.label.kind, r.label.value, r.label.labeller) for r in read.rows] == [
        (1, "criterion", "not_met", "alice"),
        (2, "rubric", "2", "bob"),
        (4, "criterion", "met", "carol"),
    ]
    assert read.rows[0].label.item_id.startswith("c-")  # made from the text


def test_a_label_file_without_its_columns_says_which(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("id,verdict\nc1,met\n", encoding="utf-8")
    with pytest.raises(InvalidLabelFile, match="the header lacks conversation_id, label"):
        read_label_file(path)
    path.write_text("conversation_id,label\n", encoding="utf-8")
    with pytest.raises(ParleyError, match="no label in it"):
        read_label_file(path)


class _Judge:
    def __init__(self, name: str, score: int | None) -> None:
        self.name = name
        self.score = score

    async def judge(self, conversation, spec, checks) -> JudgeResult:
        if self.score is None:
            raise RuntimeError("endpoint down")
        return JudgeResult(judge=self.name, score=self.score, comment=f"{self.name} says {self.score}")


def test_a_jury_takes_the_majority_of_the_jurors_that_answered_and_counts_the_others():
    conv = conversation()
    verdict = asyncio.run(Jury([_Judge("a", 3), _Judge("b", None), _Judge("c", 3)]).judge(conv, spec(), []))
    assert (verdict.judge, verdict.score, verdict.error) == ("jury:a,b,c", 3, None)
    assert verdict.jurors == {"a": "3", "b": "error: RuntimeError: endpoint down", "c": "3"}
    assert verdict.comment == "2 of 3 jurors scored 3. a says 3"
    split = asyncio.run(Jury([_Judge("a", 3), _Judge("b", None), _Judge("c", 2)]).judge(conv, spec(), []))
    assert split.score is None and split.error == "the jury split (a: 3, b: error: RuntimeError: endpoint down, c: 2)"


def test_a_criterion_keeps_its_labels_when_its_words_are_edited():
    """The label was made when the criterion read otherwise; its id is the same, so it counts."""
    judged = {"c1": (spec(), verdict("c1", "met")), "c2": (spec(), verdict("c2", "not met"))}
    labels = [label("c1", "met", text="The bot says sorry"), label("c2", "met", text="The bot says sorry")]
    criterion = measure_judge(labels, judged, KEY, resamples=100).item("apology")
    assert criterion is not None and criterion.text == TEXT and criterion.labels == 2 and criterion.one_class


PROFILE = """\
test_name: ids
user:
  role: a customer
  goals:
    - "track order ORD-1003"
expect:
  judge:
    rubric: Be brief.
    id: brief
  criteria:
    - {id: names-order, text: "The bot   names the order"}
    - The bot is polite
    - {id: "not an id!", text: x}
    - {text: y, mood: calm}
"""


def test_a_profile_gives_its_criteria_and_rubric_ids_each_mistake_located(tmp_path):
    from parley.core.evaluation import criteria_of, rubric_item
    from parley.core.specs import load_specs

    path = tmp_path / "ids.yaml"
    path.write_text(PROFILE, encoding="utf-8")
    loaded = load_specs([str(path)], seed=0)
    assert [e.render() for e in loaded.errors] == [
        f"{path}:13:12: expect.criteria[2].id: expected an id (letters, digits and _ . : -, at most 64 characters), got 'not an id!'",
        f"{path}:14:7: expect.criteria[3]: missing required key 'id'",
        f"{path}:14:17: expect.criteria[3].mood: unknown key 'mood'; a criterion with an id is written {{id: ID, text: TEXT}}",
    ]
    path.write_text("\n".join(PROFILE.splitlines()[:-2]) + "\n", encoding="utf-8")
    [spec] = load_specs([str(path)], seed=0).specs
    assert [(c.id, c.text) for c in criteria_of(spec, builtin=True)] == [
        ("names-order", "The bot names the order"),
        (criterion_id("The bot is polite"), "The bot is polite"),
        ("claims", "Every action the assistant says it took appears in the tool results, or the assistant could not have taken it."),
    ]
    assert rubric_item(spec) == ("brief", "Be brief.")

"""A labelled offline batch and a scripted judge for the calibration tests (this module holds no
tests).

Four shipped profiles, each given two criteria in words, are run offline (their criteria are not
run: no judge). Each conversation is told apart by what its customer first asks (`KEYS`); the
scripted judge (`ScriptedJudge`, a responder of tests.fake_openai_server) answers a criteria
call and a score call per conversation from the tables below, so every figure of a calibration
can be worked out by hand:

    conversation      person names-order / judge   person polite / judge   person score / judge
    ORD-1003 (track)  met / met                     met / met               3 / 3
    my orders     met / met                     met / met               2 / 3
    ORD-9999          not_met / met (false pass)    met / not met           1 / 1
    ORD-1006          not_met / not_met             met / met               2 / 2

names-order: rows met 2, not_met 2; columns met 3, not_met 1; observed 3/4, expected 1/2:
kappa 1/2. polite: the person said met only: kappa undefined. Every criterion pooled (8 pairs):
observed 6/8, expected 40/64: kappa 1/3. The score (quadratic weights): kappa 0.8.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parley.core.store import Store
from tests.fake_openai_server import ErrorReply, Step, TextReply
from tests.lineage_support import PROFILES, parley

JUDGE = "openai-api/fake/judge"
NAMES_ORDER = "The bot names the order it is talking about"
POLITE = "The bot is polite"
CRITERIA_BLOCK = f"  criteria:\n    - {{id: names-order, text: {NAMES_ORDER}}}\n    - {{id: polite, text: {POLITE}}}\n"
SUITE = {
    "track_shipped_order": "ORD-1003",
    "list_my_orders": "my orders",
    "unknown_order_id": "ORD-9999",
    "cancel_delivered_order": "ORD-1006",
}
"""Profile -> what its customer's first message holds (the conversation's key, and the judge's quote)."""
KEYS = ("my orders", "ORD-9999", "ORD-1006", "ORD-1003")
"""Looked for in this order: the list of a customer's orders names ORD-1003 too."""
PERSON = {
    "ORD-1003": ("met", "met", "3"),
    "my orders": ("met", "met", "2"),
    "ORD-9999": ("not_met", "met", "1"),
    "ORD-1006": ("not_met", "met", "2"),
}
"""Key -> alice's labels: names-order, polite, the score."""
JUDGED = {
    "ORD-1003": ("met", "met", 3),
    "my orders": ("met", "met", 3),
    "ORD-9999": ("met", "not met", 1),
    "ORD-1006": ("not met", "met", 2),
}
"""Key -> the scripted judge's decisions: names-order, polite, the score."""


def make_labelled_suite(folder: Path) -> Path:
    """The four profiles with both criteria, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PROFILES / "personalities", folder / "personalities", dirs_exist_ok=True)
    for name in SUITE:
        text = (PROFILES / f"{name}.yaml").read_text(encoding="utf-8")
        assert text.rstrip().splitlines()[-1].startswith("    "), f"{name}: expect: is not the last section"
        (folder / f"{name}.yaml").write_text(text.rstrip("\n") + "\n" + CRITERIA_BLOCK, encoding="utf-8")
    return folder


def run_offline(folder: Path, db: Path) -> str:
    """Run the suite offline into `db`; the batch's id."""
    result = parley("run", folder, "--seed", "3", "--db", db)
    assert result.exit_code == 0, result.output
    with Store.open(db) as store:
        return store.resolve_batch_ref("latest")


def conversation_keys(db: Path, batch_id: str) -> dict[str, str]:
    """Key (see KEYS) -> the batch's conversation id."""
    with Store.open(db) as store:
        found = {}
        for stored in store.iter_conversations(batch_id):
            first = next(m.content or "" for m in stored.conversation.messages if m.role == "user")
            key = next(k for k in KEYS if k in first)
            found[key] = stored.conversation.id
    assert len(found) == len(KEYS), found
    return found


def label_rows(ids: dict[str, str], labeller: str = "alice", table: dict[str, tuple[str, str, str]] = PERSON) -> list[dict[str, str]]:
    """A label file's rows: `labeller`'s labels of `table` on each conversation."""
    rows = []
    for key, (names, polite, score) in table.items():
        cid = ids[key]
        rows.append({"conversation_id": cid, "criterion_id": "names-order", "label": names, "labeller": labeller, "note": f"on {key}"})
        rows.append({"conversation_id": cid, "criterion": POLITE, "label": polite, "labeller": labeller})
        rows.append({"conversation_id": cid, "kind": "rubric", "criterion_id": "rubric-default", "label": score, "labeller": labeller})
    return rows


def store_labels(db: Path, rows: list[dict[str, str]]) -> None:
    """Import `rows` as a person would: through a JSONL file and `parley judge labels import`."""
    path = db.parent / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = parley("judge", "labels", "import", path, "--db", db)
    assert result.exit_code == 0, result.output


def _key_of(body: dict[str, Any]) -> str | None:
    text = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    return next((k for k in KEYS if k in text), None)


@dataclass
class ScriptedJudge:
    """The fake server's responder: each conversation's decisions from `decisions` (JUDGED by
    default); models named in `failing` answer 400 (a juror that fails); `overrides` replace a
    model's decisions (another juror)."""

    decisions: dict[str, tuple[str, str, int]] = field(default_factory=lambda: dict(JUDGED))
    failing: set[str] = field(default_factory=set)
    overrides: dict[str, dict[str, tuple[str, str, int]]] = field(default_factory=dict)

    def __call__(self, body: dict[str, Any]) -> Step | None:
        model = str(body.get("model"))
        if model in self.failing:
            return ErrorReply(400, f"juror {model} is broken")
        key = _key_of(body)
        if key is None:
            return None
        names, polite, score = self.overrides.get(model, self.decisions)[key]
        system = str(body["messages"][0].get("content") or "")
        if "against criteria" in system:
            return TextReply(
                json.dumps(
                    {
                        "criteria": [
                            {"criterion": 1, "verdict": names, "turns": [1], "quote": key, "reasoning": f"Judged {names} on {key}."},
                            # a "met" needs a quote from the transcript: the customer's words serve both
                            {"criterion": 2, "verdict": polite, "turns": [1], "quote": key, "reasoning": f"Tone {polite}."},
                            {"criterion": 3, "verdict": "not applicable", "turns": [], "quote": "", "reasoning": "Nothing claimed."},
                        ]
                    }
                )
            )
        return TextReply(json.dumps({"score": score, "comment": f"Scored {score} on {key}."}))


def stored_labels(db: Path) -> int:
    """How many labels the database holds."""
    from parley.core.store import all_labels

    with Store.open(db) as store:
        return len(all_labels(store))

"""The HTML report at 2,000 conversations: how big, how long to write, how long a browser takes to
show it; and screenshots of it at a laptop's and a phone's size, to look at.

Run: .venv/bin/python bench/bench_html_report.py [--conversations 2000] [--repeat 3] [--out DIR]

Runs the shipped suite offline once, with one profile added that the offline bot fails (`parley
init`, then `parley run SUITE --trials 3`: real transcripts, tool calls and verdicts), then fills
a batch of --conversations by cloning those conversations (each spec's trials in turn, new ids),
and:
- times `parley report ID --format html --output FILE` in a fresh process (median of --repeat),
  and prints the file's size, beside the markdown and JSON reports of the same batch;
- opens the file in headless Chromium (Debian's `chromium`; `apt-get install -y chromium`; driven
  over the DevTools protocol, bench/headless_chromium.py) at 1280x800 and prints, median of
  --repeat fresh browsers, the times from navigation start to DOMContentLoaded, to the load event
  and to the first contentful paint;
- saves screenshots at 1280x800 and 390x844 of the top, of each section and of one failed
  conversation opened at the turn its failing check is about (Chromium opens a `<details>` a
  link points into; when no failing check points at one turn, the first failed conversation
  opened at its top), and of the conversations filtered to one outcome; in --out (default
  bench/out/html_report), listed at the end.

Chromium runs with a fresh profile each time and every network feature off (--headless
--no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
--disable-component-update --disable-sync); the report's own policy forbids it to fetch anything
anyway. Nothing here is a test: the figures are printed.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.headless_chromium import Browser  # noqa: E402
from parley.core.records import BatchRecord  # noqa: E402
from parley.core.store import Store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PARLEY = [sys.executable, "-m", "parley.tui.cli.main"]
SIZES = {"laptop": (1280, 800), "phone": (390, 844)}
LOAD_FIGURES = """JSON.stringify((() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByType("paint").find(e => e.name === "first-contentful-paint");
  return {dom_content_loaded_ms: nav.domContentLoadedEventEnd, load_ms: nav.loadEventEnd,
          first_contentful_paint_ms: paint ? paint.startTime : null,
          elements: document.getElementsByTagName("*").length, height_px: document.documentElement.scrollHeight};
})())"""


def parley(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PARLEY, *map(str, args)], cwd=ROOT, capture_output=True, text=True, check=True)


FAILING_PROFILE = """# Added by the benchmark: a profile the offline bot fails, so the report has failures to show.
test_name: track_expecting_fedex
user:
  language: English
  role: you are a customer of an online shop who wants to know where your parcel is.
  context:
    - personality: personalities/formal-user.yml
  goals:
    - "track order ORD-1003"
    - "ask whether <script>alert('coupon')</script> is a valid coupon code"
conversation:
  number: 1
  goal_style:
    all_answered:
      limit: 8
  interaction_style:
    - single question
world:
  customer_id: C-100
  today: 2026-11-21
expect:
  orders:
    ORD-1003: shipped
  tools_called: [track_order]
  bot_says:
    - "(?i)FedEx"
  bot_never_says:
    - '(?i)\\bUPS\\b'  # single-quoted: YAML reads the backslashes as written
"""


def make_batch(work: Path, db: Path, conversations: int) -> str:
    """A batch of `conversations` cloned from one real offline run of the shipped suite, with one
    profile added that fails."""
    suite = work / "suite"
    parley("init", suite)
    (suite / "track_expecting_fedex.yaml").write_text(FAILING_PROFILE, encoding="utf-8")
    subprocess.run([*PARLEY, "run", suite, "--db", db, "--trials", "3"], cwd=ROOT, capture_output=True, text=True, check=False)
    with Store.open(db) as store:
        source = store.resolve_batch_ref("latest")
        stored = list(store.iter_conversations(source))
        specs = len({s.spec.spec_id for s in stored})
        trials = math.ceil(conversations / specs)
        base = store.get_batch(source)
        batch = store.create_batch(
            BatchRecord(
                sources=base.sources,
                options=base.options.model_copy(update={"trials": trials}),
                planned=conversations,
                status="completed",
                created_at=base.created_at,
                started_at=base.started_at,
                finished_at=base.finished_at,
            )
        )
        by_spec: dict[str, list] = {}
        for s in stored:
            by_spec.setdefault(s.spec.spec_id, []).append(s)
        written = 0
        with store.db.atomic():
            for trial in range(1, trials + 1):
                for runs in by_spec.values():
                    if written == conversations:
                        break
                    s = runs[(trial - 1) % len(runs)]
                    conv = s.conversation.model_copy(update={"id": uuid.uuid4().hex})
                    verdict = s.verdict.model_copy(update={"conversation_id": conv.id}) if s.verdict else None
                    store.save_conversation(batch.id, s.spec, conv, verdict, trial)
                    written += 1
        return batch.id


def timed_report(db: Path, batch_id: str, fmt: str, out: Path, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        parley("report", batch_id, "--db", db, "--format", fmt, "--output", out)
        times.append(time.perf_counter() - t0)
    return times


def load_times(report: Path, repeat: int) -> list[dict]:
    """Each time in a fresh page of a fresh browser, at the laptop's size."""
    found = []
    for _ in range(repeat):
        with Browser() as browser:
            browser.size(*SIZES["laptop"])
            browser.open(report.resolve().as_uri())
            time.sleep(0.5)  # the first paint recorded
            found.append(json.loads(browser.evaluate(LOAD_FIGURES)))
    return found


OPEN_FIRST_FAILED = "(d => { d.open = true; d.scrollIntoView(); })(document.querySelector('.g-failed details.conv'))"
"""What a click on the first failed conversation's line does (the page itself needs no script)."""


def first_failed_turn(html: str) -> str | None:
    """The anchor of the first turn a failing check links to, in a failed conversation."""
    group = html.split('class="group g-failed"', 1)
    if len(group) < 2:
        return None
    match = re.search(r'<a href="#(c\d+-[bt]\d+)">the turn</a>', group[1])
    return match.group(1) if match else None


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "html_report")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="parley-bench-html-") as tmp:
        work = Path(tmp)
        db = work / "parley.db"
        t0 = time.perf_counter()
        batch_id = make_batch(work, db, args.conversations)
        print(f"batch {batch_id[:12]}: {args.conversations} conversations, made in {time.perf_counter() - t0:.1f} s")

        report = args.out / "report.html"
        html_times = timed_report(db, batch_id, "html", report, args.repeat)
        sizes = {"html": report.stat().st_size}
        for fmt in ("md", "json"):
            other = work / f"report.{fmt}"
            timed_report(db, batch_id, fmt, other, 1)
            sizes[fmt] = other.stat().st_size
        print(
            f"parley report --format html: median {median(html_times):.2f} s, worst {max(html_times):.2f} s "
            f"(a fresh process, {args.repeat} runs); {sizes['html'] / 2**20:.2f} MiB "
            f"({sizes['html'] / args.conversations / 1024:.1f} KiB a conversation; the JSON report "
            f"{sizes['json'] / 2**20:.2f} MiB, the markdown {sizes['md'] / 1024:.0f} KiB)"
        )

        figures = load_times(report, args.repeat)
        for key in ("dom_content_loaded_ms", "load_ms", "first_contentful_paint_ms"):
            values = [f[key] for f in figures if f[key] is not None]
            if values:
                print(f"chromium {key.removesuffix('_ms').replace('_', ' ')}: median {median(values):.0f} ms, worst {max(values):.0f} ms")
        print(f"elements in the page: {figures[0]['elements']:,}; its height at 1280 px wide: {figures[0]['height_px']:,} px")

        html = report.read_text(encoding="utf-8")
        shots: list[Path] = []
        views = {"top": "", "specs": "#specs", "charts": "#distributions", "conversations": "#conversations", "failed-only": "#only-failed"}
        turn = first_failed_turn(html)
        if turn:
            views["failed-conversation"] = f"#{turn}"
        else:  # no failing check points at one turn: the first failed conversation, opened as a click on it would
            views["failed-conversation"] = OPEN_FIRST_FAILED
        for name, (w, h) in SIZES.items():
            with Browser() as browser:
                browser.size(w, h)
                for view, fragment in views.items():
                    browser.open(report.resolve().as_uri())
                    if fragment == OPEN_FIRST_FAILED:
                        browser.evaluate(fragment)
                    elif fragment:  # a fragment navigation, as a click on the link does (it opens a <details> it points into)
                        browser.evaluate(f"location.hash = {json.dumps(fragment)}")
                    path = args.out / f"{name}-{view}.png"
                    browser.screenshot(path)
                    shots.append(path)
        print("screenshots:")
        for path in shots:
            print(f"  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()

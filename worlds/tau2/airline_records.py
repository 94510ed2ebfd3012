"""The records of tau2's airline database (db.json: flights, users, reservations), as tau2 26.3
shapes them (see retail_records for why they are read through models), and the records its tools
take and return (flight searches, bookings' flights, passengers and payments)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AirlineDB",
    "AirportCode",
    "CabinClass",
    "Certificate",
    "DirectFlight",
    "Flight",
    "FlightInfo",
    "Passenger",
    "Payment",
    "Reservation",
    "ReservationFlight",
    "User",
]

CabinClass = Literal["business", "economy", "basic_economy"]
FlightType = Literal["round_trip", "one_way"]
Insurance = Literal["yes", "no"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AirportCode(_Model):
    iata: str
    city: str


class Name(_Model):
    first_name: str
    last_name: str


class Address(_Model):
    address1: str
    address2: str | None = None
    city: str
    country: str
    state: str
    zip: str


class Payment(_Model):
    payment_id: str
    amount: int


class CreditCard(_Model):
    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class GiftCard(_Model):
    source: Literal["gift_card"]
    id: str
    amount: float


class Certificate(_Model):
    source: Literal["certificate"]
    id: str
    amount: float


PaymentMethod = Annotated[CreditCard | GiftCard | Certificate, Field(discriminator="source")]


class Passenger(_Model):
    first_name: str
    last_name: str
    dob: str


class FlightAvailable(_Model):
    status: Literal["available"]
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class FlightOnTime(_Model):
    status: Literal["on time"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


class FlightFlying(_Model):
    status: Literal["flying"]
    actual_departure_time_est: str
    estimated_arrival_time_est: str


class FlightLanded(_Model):
    status: Literal["landed"]
    actual_departure_time_est: str
    actual_arrival_time_est: str


class FlightCancelled(_Model):
    status: Literal["cancelled"]


class FlightDelayed(_Model):
    status: Literal["delayed"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


FlightDateStatus = Annotated[
    FlightAvailable | FlightLanded | FlightCancelled | FlightDelayed | FlightFlying | FlightOnTime, Field(discriminator="status")
]


class Flight(_Model):
    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, FlightDateStatus]


class DirectFlight(_Model):
    """One flight of a search's results, on one date."""

    flight_number: str
    origin: str
    destination: str
    status: Literal["available"]
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    date: str | None = None
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class ReservationFlight(_Model):
    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class FlightInfo(_Model):
    """A flight of a booking or a change, as the agent names it."""

    flight_number: str = Field(description="The flight's number, e.g. HAT001.")
    date: str = Field(description="The day of the flight, as YYYY-MM-DD.")


class User(_Model):
    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: Literal["gold", "silver", "regular"]
    reservations: list[str]


class Reservation(_Model):
    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance
    status: Literal["cancelled"] | None = None


class AirlineDB(BaseModel):
    """The whole of db.json."""

    model_config = ConfigDict(extra="forbid")

    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]

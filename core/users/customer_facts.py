"""What the simulated customer knows of itself when a conversation starts: who it is, and on a
world where the customer authenticates in the conversation (a `ConversationIdentity`), the columns
of its own record the world names as credentials (its email, its name, its zip code), which it
gives when the bot asks for them.

The engine reads them from the conversation's copy of its world (`read_customer_facts`) and hands them
to the simulator it builds (`make_user_simulator(..., customer=...)`); on a world whose session says
who the customer is, there are none to give.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from parley.core.world import ConversationIdentity, WorldDB, WorldDefinition, customer_knows_credentials

__all__ = ["CustomerFacts", "read_customer_facts"]


class CustomerFacts(BaseModel):
    """What the simulated customer knows of itself (see the module doc)."""

    customer_id: str | None = None
    credentials: dict[str, str] = Field(default_factory=dict)
    """Column of the customer's own record -> its value, in the order the world names them."""

    def said(self, columns: list[str]) -> str:
        """`columns` as the customer says them: "email: maya@example.com, zip: 94110"."""
        return ", ".join(f"{column.replace('_', ' ')}: {self.credentials[column]}" for column in columns if column in self.credentials)


def read_customer_facts(world: WorldDefinition, db: WorldDB, customer_id: str | None) -> CustomerFacts:
    """The facts of `customer_id` on `world` (its credentials read from its own row of the world's
    customers table: none on a world whose session says who the customer is, or for a customer
    the table does not hold, or on a world whose customers know only what their file says)."""
    identity = world.identity
    customers = world.table(identity.customers)
    if not isinstance(identity, ConversationIdentity) or not customer_id or customers is None or not customer_knows_credentials(world):
        return CustomerFacts(customer_id=customer_id or None)
    row = db.get(identity.customers, customer_id) or {}
    credentials = {column: str(row[column]) for column in identity.credentials if row.get(column) not in (None, "")}
    return CustomerFacts(customer_id=customer_id, credentials=credentials)

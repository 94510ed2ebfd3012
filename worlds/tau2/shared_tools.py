"""What tau2's retail and airline worlds share: the two tools both domains have (`calculate`,
`transfer_to_human_agents`), the refusals' two kinds, and saving a changed row."""

from __future__ import annotations

from typing import Any

from parley.api import Refused, ToolContext, tool
from parley.worlds.tau2 import arithmetic

__all__ = ["calculate", "policy", "request", "save", "transfer_to_human_agents"]


def request(message: str, reason: str, status: int = 422) -> Refused:
    """A refusal of a wrong request (an unknown record, a malformed argument), with tau2's message."""
    return Refused(message, reason=reason, kind="request", status=status)


def policy(message: str, reason: str) -> Refused:
    """A refusal the policy decides (an order not pending, a balance too low), with tau2's message."""
    return Refused(message, reason=reason, kind="policy", status=409)


def save(ctx: ToolContext, table: str, key_column: str, row: dict[str, Any]) -> None:
    """Write the whole of a changed row back."""
    ctx.db.update(table, row[key_column], **{column: value for column, value in row.items() if column != key_column})


@tool
def calculate(expression: str) -> str:
    """Calculate an arithmetic expression and round the result to two decimals.

    Args:
        expression: The expression, of numbers, + - * /, parentheses and spaces, e.g. '2 + 2'.
    """
    try:
        return arithmetic.calculate(expression)
    except arithmetic.CalculationError as exc:
        raise request(str(exc), "invalid_expression") from None


@tool
def transfer_to_human_agents(summary: str) -> str:
    """Hand the user over to a human agent with a summary of their issue: only when they ask for one, or the policy and tools cannot solve it.

    Args:
        summary: The user's issue in a few sentences.
    """
    return "Transfer successful"

"""The batch service's bearer token, checked before anything else looks at a request.

An ASGI middleware, outermost: a request without the token gets 401 before its body is read or
validated (a caller without the token learns nothing from detailed 422s), and the schema and
its viewers (`/openapi.json`, `/docs`, `/redoc`) need the token too. Only `GET /api/health`
stays open, so a load balancer can probe the service. Tokens are compared in constant time.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

TOKEN_ENV = "PARLEY_API_TOKEN"
OPEN_PATHS = frozenset({"/api/health"})

MISSING = f"a bearer token is required: send `Authorization: Bearer ${TOKEN_ENV}`"
WRONG = "wrong bearer token"


def token_problem(authorization: str | None, expected: str) -> str | None:
    """Why an `Authorization` header value does not carry `expected` (None when it does)."""
    scheme, _, given = (authorization or "").strip().partition(" ")
    if not authorization or scheme.lower() != "bearer" or not given.strip():
        return MISSING
    if not secrets.compare_digest(given.strip().encode(), expected.encode()):
        return WRONG
    return None


class TokenGuard:
    """Refuses (401) every HTTP request but OPEN_PATHS that does not carry the token."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self.token is None or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        header = None
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                header = value.decode("latin-1")
                break
        problem = token_problem(header, self.token)
        if problem is None:
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": problem}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

"""The service's responses, with every secret the service resolved taken out (parley.core.redaction).

An ASGI middleware: what the database holds is redacted already, but a response may also carry
text that never went through it (a batch's error while it launches, an endpoint's refusal that
quotes the key, a validation message echoing a URL). A response with a length is redacted whole
and its Content-Length set again; a streamed one (an export) piece by piece through the
redactor's stream, which holds back a tail that may be the start of a secret. Bodies that are
not text (an inspect log is a zip) pass as they are: they are made only of stored text.
"""

from __future__ import annotations

import codecs
from typing import Any

from parley.core.redaction import REDACTOR, StreamRedactor

_TEXT_TYPES = (b"text/", b"application/json", b"application/x-ndjson", b"application/xml", b"application/problem+json")


def _is_text(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name.lower() == b"content-type":
            return value.lower().startswith(_TEXT_TYPES)
    return False


class RedactedResponses:
    """Redacts the body of every text response (see the module doc)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] | None = None
        whole: list[bytes] | None = None  # a response with a length, gathered to redact it at once
        stream: StreamRedactor | None = None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")

        async def redacting_send(message: dict[str, Any]) -> None:
            nonlocal start, whole, stream
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not _is_text(headers) or not REDACTOR.secrets():
                    await send(message)
                    return
                if any(name.lower() == b"content-length" for name, _ in headers):
                    start, whole = message, []
                else:
                    stream = REDACTOR.stream()
                    await send(message)
                return
            if message["type"] != "http.response.body" or (whole is None and stream is None):
                await send(message)
                return
            body: bytes = message.get("body", b"")
            more = bool(message.get("more_body", False))
            if whole is not None and start is not None:
                whole.append(body)
                if more:
                    return
                text = REDACTOR.redact(b"".join(whole).decode("utf-8", "replace")).encode("utf-8")
                headers = [(n, v) for n, v in start.get("headers", []) if n.lower() != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length", str(len(text)).encode())]})
                await send({"type": "http.response.body", "body": text, "more_body": False})
                return
            assert stream is not None
            shown = stream.feed(decoder.decode(body, final=not more))
            if not more:
                shown += stream.end()
            await send({"type": "http.response.body", "body": shown.encode("utf-8"), "more_body": more})

        await self.app(scope, receive, redacting_send)

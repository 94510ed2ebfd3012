"""A batch's results for the service, rendered into a spooled temporary file and streamed back.

The JSON is parley's export document (parley.core.reports.exports.write_json) with `partial` put first; CSV and
NDJSON are the exports as they are. Rendering runs in a worker thread (it reads SQLite); memory
stays bounded (up to 8 MiB in memory, then disk).
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable, Iterator
from typing import Any, TextIO, cast

from parley.core.store import Store

_SPOOL_BYTES = 8 * 1024 * 1024
_CHUNK = 64 * 1024

MEDIA_TYPES = {"json": "application/json", "csv": "text/csv; charset=utf-8", "ndjson": "application/x-ndjson"}


def render_results(store: Store, batch_id: str, fmt: str, partial: bool, paths: Callable[[Any], Any] | None = None) -> Any:
    """The export in a spooled temporary file (memory up to 8 MiB, then disk), rewound; `paths`
    shows each record's path values as clients see them."""
    from parley.core.reports import export_csv, export_ndjson, write_json

    spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES, mode="w+b")
    try:
        text = io.TextIOWrapper(spool, encoding="utf-8", newline="", write_through=True)
        if fmt == "json":
            # write_json's document starts with "{": put `partial` first, then the rest of it.
            text.write('{\n  "partial": ' + ("true" if partial else "false") + ",")
            write_json(store, batch_id, cast(TextIO, _SkipFirstBrace(text)), paths=paths)  # only write() is used
        elif fmt == "csv":
            export_csv(store, batch_id, text, paths=paths)
        else:
            export_ndjson(store, batch_id, text, paths=paths)
        text.flush()
        text.detach()  # the spool outlives the wrapper
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


class _SkipFirstBrace:
    """A text sink that drops the leading "{" of what is written to it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.started = False

    def write(self, text: str) -> int:
        if not self.started and text:
            self.started = True
            if not text.startswith("{"):
                raise ValueError("expected a JSON object")
            text = text[1:]
        return self.out.write(text)


def chunks(spool: Any) -> Iterator[bytes]:
    try:
        while chunk := spool.read(_CHUNK):
            yield chunk
    finally:
        spool.close()

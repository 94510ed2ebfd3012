"""Run the mock order API over a file database: `python -m parley.mockapi.server --port 8000`."""

from __future__ import annotations

import argparse
import datetime
import pathlib
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from parley.mockapi.app import create_app
from parley.mockapi.order_store import DatabaseRefused, open_file_store

DEFAULT_DB = Path("sessions/orders.db")


def serve(
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    db_path: pathlib.Path = DEFAULT_DB,
    today: datetime.date | None = None,
    reset: bool = False,
) -> None:
    """Serve the order API on host:port until interrupted (blocking).

    The database at `db_path` is created with the fixture when missing, or reloaded when
    `reset` is set; otherwise its orders, audit trail and pinned `today` are kept, and
    `today` (if given) replaces the pinned one.
    """
    store = open_file_store(pathlib.Path(db_path), today=today, reset=reset)
    try:
        uvicorn.run(create_app(store), host=host, port=port, log_level="info")
    finally:
        store.close()


def _date(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date in YYYY-MM-DD form") from None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m parley.mockapi.server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"SQLite file (default {DEFAULT_DB})")
    parser.add_argument("--today", type=_date, default=None, help="pin the date ages count from (YYYY-MM-DD)")
    parser.add_argument("--reset", action="store_true", help="reload the fixture, discarding changes")
    args = parser.parse_args(argv)
    try:
        serve(host=args.host, port=args.port, db_path=args.db, today=args.today, reset=args.reset)
    except DatabaseRefused as exc:
        parser.exit(1, f"error: {exc}\n")


if __name__ == "__main__":
    main()

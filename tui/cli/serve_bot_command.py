"""`parley serve-bot`: the built-in order bot behind a Rasa-compatible REST webhook.

So that any connector has a real server to be tested against, and other tools (Sensei,
Botium, a Rasa front end) can talk to parley's bot: `parley run --bot
rasa:http://127.0.0.1:5005/webhooks/rest/webhook` tests it over HTTP.
"""

from __future__ import annotations

import datetime as dt

import click

from parley.core.errors import ConfigError
from parley.tui.cli.date_option import parse_date
from parley.tui.cli.finite_numbers import FiniteFloatRange

EPILOG = """\b
Routes:
  POST /webhooks/rest/webhook  {"sender": ID, "message": TEXT, "metadata": {...}}
                               -> [{"recipient_id": ID, "text": ...}]
  GET  /health                 {"status": "ok", "bot": MODEL, "sessions": N}

\b
Each sender is its own conversation with its own copy of the order database. A first message
may carry metadata.customer_id (the signed-in customer) and metadata.today (YYYY-MM-DD); parley's
rasa: connector sends both. Sessions are kept in memory, dropped when idle or over the caps
(--max-sessions, --max-held-chars); a message over --max-message-chars, or one that would take its
conversation over --max-session-chars, is refused (422), as is a body over --max-body-bytes (413).
"""


def _model(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from parley.core.models import parse_model_name

    try:
        parse_model_name(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@click.command(name="serve-bot", epilog=EPILOG)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (loopback by default).")
@click.option("--port", default=5005, show_default=True, type=click.IntRange(1, 65535), help="Port (Rasa's default).")
@click.option(
    "--model",
    default="offline",
    show_default=True,
    callback=_model,
    metavar="MODEL",
    help="Model of the built-in bot: offline (the world's own offline model), openai/MODEL, ollama/MODEL, ... (as `parley run --bot`).",
)
@click.option("--customer", default=None, help="Customer signed in when a sender's metadata names none (default: the world's own).")
@click.option(
    "--world", default=None, metavar="NAME|FILE.py", help="The world the bot acts on (default: the order world; parley worlds list)."
)
@click.option(
    "--today",
    callback=parse_date,
    metavar="YYYY-MM-DD",
    help="The world's date, unless a sender's metadata pins one (default: the world's own, else today).",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(1, None),
    default=1000,
    show_default=True,
    help="Conversations kept at once; the least recently used is dropped beyond this.",
)
@click.option(
    "--idle",
    "idle_s",
    type=FiniteFloatRange(1, None),
    default=1800.0,
    show_default=True,
    metavar="SECONDS",
    help="A conversation idle this long is dropped.",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(1024, None),
    default=1024 * 1024,
    show_default=True,
    help="Largest request body accepted (413 beyond).",
)
@click.option(
    "--max-message-chars",
    type=click.IntRange(1, None),
    default=16_000,
    show_default=True,
    help="Longest message accepted (422 beyond).",
)
@click.option(
    "--max-session-chars",
    type=click.IntRange(1, None),
    default=200_000,
    show_default=True,
    help="Longest conversation, in characters of its transcript; a message past it is refused (422).",
)
@click.option(
    "--max-held-chars",
    type=click.IntRange(1, None),
    default=20_000_000,
    show_default=True,
    help="Characters all conversations may hold together; the least recently used are dropped beyond this.",
)
def serve_bot(
    host: str,
    port: int,
    model: str,
    customer: str | None,
    world: str | None,
    today: dt.date | None,
    max_sessions: int,
    idle_s: float,
    max_body_bytes: int,
    max_message_chars: int,
    max_session_chars: int,
    max_held_chars: int,
) -> None:
    """Serve the built-in bot, on a world, behind a Rasa-compatible REST webhook."""
    import uvicorn

    from parley.core.bots import WEBHOOK_PATH, build_bot_app

    app = build_bot_app(
        model,
        customer_id=customer,
        today=today,
        world=world,
        max_sessions=max_sessions,
        idle_s=idle_s,
        max_body_bytes=max_body_bytes,
        max_message_chars=max_message_chars,
        max_session_chars=max_session_chars,
        max_total_chars=max_held_chars,
    )
    click.echo(
        f"parley serve-bot: the built-in bot ({model}, {'world ' + world if world else 'the default world'}) at http://{host}:{port}{WEBHOOK_PATH}",
        err=True,
    )
    click.echo(f"test it with: parley run PROFILES --bot rasa:http://{host}:{port}{WEBHOOK_PATH}", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)

"""`parley serve`: the batch REST service (parley.core.service.app) on uvicorn.

Batches submitted to it run on an event loop of their own and are stored in the SQLite database as
they go.
Ctrl-C (or SIGTERM) stops it: conversations in flight get `--grace` seconds, then the batches it
was running are marked `interrupted`; `POST /api/batches/ID/resume` continues them after a restart.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import click

from parley.tui.cli.batch_options import grace_option, role_model_options
from parley.tui.cli.command_io import db_option
from parley.tui.cli.spec_options import personalities_option
from parley.tui.cli.workers_option import placement_or_exit, workers_options

EPILOG = """\b
Environment:
  PARLEY_API_TOKEN   when set, every route but /api/health (the schema and /docs too) needs
                     `Authorization: Bearer TOKEN`
  PARLEY_DB          the database (same as --db)
  OPENAI_API_KEY ... the keys of the models the batches use (never stored, never shown)

\b
Routes (all under /api; the OpenAPI schema is at /openapi.json, docs at /docs):
  GET  /health                    POST /batches            GET /batches
  GET  /batches/ID                GET  /batches/ID/results?format=json|csv|ndjson
  GET  /batches/ID/summary        GET  /batches/ID/cost
  POST /batches/ID/cancel         POST /batches/ID/resume
"""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _model(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from parley.core.service import check_model_name

    try:
        return check_model_name(value, allow_profile=param.name == "user") or "offline"
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _bot_host(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    from parley.core.errors import ConfigError
    from parley.core.service import parse_allowed_host

    for value in values:
        try:
            parse_allowed_host(value)
        except ConfigError as exc:
            raise click.BadParameter(str(exc)) from None
    return values


@click.command(epilog=EPILOG)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (loopback by default).")
@click.option("--port", default=5000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@db_option
@click.option(
    "--profiles-dir",
    "profile_dirs",
    multiple=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A folder clients may run profiles from by path (repeatable; default: ./profiles, else the shipped "
    "profiles). Paths outside these folders are refused.",
)
@role_model_options(default="offline", where=" for batches that name none", check=_model)
@grace_option(default=2.0, when="On shutdown")
@personalities_option
@click.option(
    "--allow-bot-host",
    "bot_hosts",
    multiple=True,
    callback=_bot_host,
    metavar="HOST[:PORT]",
    help="A host whose deployed bots (rasa:URL, taskyto:URL) requests may name (repeatable; without a "
    "port, any port). None by default: the service calls no URL a client gives it.",
)
@click.option(
    "--allow-python-bots",
    is_flag=True,
    help="Let requests name Python bots (python:MODULE:NAME): the service then imports and runs that code. "
    "Off by default: such requests get 403.",
)
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="A Host name the service answers besides its loopback names, when it has no token (repeatable): "
    "without a token a request for any other Host is refused, so that no web page reaches it by DNS rebinding.",
)
@workers_options
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info", show_default=True)
def serve(
    host: str,
    port: int,
    db_path: Path | None,
    profile_dirs: tuple[Path, ...],
    bot: str,
    user: str,
    judge: str,
    grace_s: float,
    personality_dirs: tuple[Path, ...],
    bot_hosts: tuple[str, ...],
    allow_python_bots: bool,
    allowed_hosts: tuple[str, ...],
    workers: int | None,
    ray_address: str | None,
    log_level: str,
) -> None:
    """Serve the batch REST API (003's routes under /api) over parley's database.

    Batches live in the database: a restart loses no finished conversation, and a batch the
    restart cut short shows as `interrupted` and can be resumed.
    """
    import uvicorn

    from parley.core.log_file import configure_logging
    from parley.core.records import RoleModels
    from parley.core.service import TOKEN_ENV, create_app, default_profile_dirs
    from parley.core.settings import settings
    from parley.core.store import Store

    placement = placement_or_exit(workers, ray_address)  # Ray missing: one line saying how to install it
    Store.open(db_path).close()  # a bad path or a newer database: one clear line, before binding
    configure_logging(db_path or settings().db_path)
    token = settings().token
    if not token and not _is_loopback(host):
        click.echo(
            f"warning: serving on {host} without {TOKEN_ENV}: anyone who can reach it can run batches"
            + ("" if allowed_hosts else " (and only requests for a loopback Host are answered: --allow-host NAME adds one)"),
            err=True,
        )
    dirs = list(profile_dirs) or default_profile_dirs()
    app = create_app(
        db_path=db_path,
        profile_dirs=dirs,
        token=token or "",
        default_models=RoleModels(bot=bot, user=user, judge=judge),
        grace_s=grace_s,
        personality_dirs=personality_dirs,
        allowed_bot_hosts=bot_hosts,
        placement=placement,
        allow_python_bots=allow_python_bots,
        allowed_hosts=allowed_hosts,
    )
    shown = ", ".join(str(Path(d).resolve()) for d in dirs)
    click.echo(
        f"parley service on http://{host}:{port}/api (profiles: {shown}; {'bearer token required' if token else 'no token'}"
        + (f"; batches over {placement.describe()}" if placement is not None else "")
        + ("; Python bots allowed" if allow_python_bots else "")
        + ")",
        err=True,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=max(5, int(grace_s) + 5))

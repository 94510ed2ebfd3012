"""`parley submit`, `parley status`, `parley fetch`: the batch service's command-line client.

They talk to a running `parley serve` (default http://127.0.0.1:5000, or $PARLEY_API_URL /
--api-url) with the token in $PARLEY_API_TOKEN, if any. A service that is down, a batch that does
not exist, a refused token or invalid input each give one clear line and exit code 1.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import click

from parley.core.errors import ParleyError
from parley.core.option_declarations import options_on
from parley.core.settings import DEFAULT_API_URL, settings
from parley.tui.cli.batch_options import declared_options
from parley.tui.terminal_text import visible

if TYPE_CHECKING:
    import httpx

F = TypeVar("F", bound=Callable[..., Any])

API_URL_ENV = "PARLEY_API_URL"
TOKEN_ENV = "PARLEY_API_TOKEN"
FINISHED = ("completed", "failed", "cancelled", "interrupted")


class ServiceClient:
    """A thin httpx client for the service's /api routes; errors become ParleyError."""

    def __init__(self, api_url: str, token: str | None = None, timeout_s: float = 30.0) -> None:
        import httpx

        self.url = api_url.rstrip("/")
        base = self.url if self.url.endswith("/api") else self.url + "/api"
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base, headers=headers, timeout=timeout_s)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _down(self) -> ParleyError:
        return ParleyError(f"no parley service at {self.url} (is `parley serve` running?)")

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The response of a request whose status is 2xx (read in full)."""
        import httpx

        try:
            response = self.http.request(method, path, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._down() from exc
        except httpx.HTTPError as exc:
            raise ParleyError(f"the service at {self.url} did not answer properly: {exc}") from exc
        check(response, self.url)
        return response

    def stream_to(self, path: str, params: dict[str, str], out: BinaryIO) -> httpx.Response:
        """Stream a GET's body into binary file `out`; returns the response (headers)."""
        import httpx

        try:
            with self.http.stream("GET", path, params=params) as response:
                if response.status_code >= 400:
                    response.read()
                    check(response, self.url)
                for chunk in response.iter_bytes():
                    out.write(chunk)
                return response
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._down() from exc
        except httpx.HTTPError as exc:
            raise ParleyError(f"the service at {self.url} did not answer properly: {exc}") from exc


def _detail(response: httpx.Response) -> Any:
    try:
        return response.json().get("detail")
    except (ValueError, AttributeError):
        return response.text.strip() or None


def check(response: httpx.Response, url: str) -> None:
    """ParleyError with the service's own words for a 4xx/5xx."""
    status = response.status_code
    if status < 400:
        return
    detail = _detail(response)
    if status == 401:
        hint = f"set {TOKEN_ENV} to the service's token" if not settings().token else f"{TOKEN_ENV} is not the service's token"
        raise ParleyError(f"the service at {url} refused the request ({detail}); {hint}")
    if status == 422 and isinstance(detail, list):
        lines = []
        for item in detail:
            loc = ".".join(str(p) for p in item.get("loc", []) if p != "body")
            lines.append(f"  {loc}: {item.get('msg')}" if loc else f"  {item.get('msg')}")
        raise ParleyError("the service refused the batch:\n" + "\n".join(lines))
    if status == 404 and response.request.url.path.startswith("/api/batches/") and detail:
        raise ParleyError(str(detail))
    if status == 404:
        raise ParleyError(f"{url} answered 404: is it a parley service? ({detail})")
    raise ParleyError(f"the service answered {status}: {detail}")


def _client(api_url: str) -> ServiceClient:
    return ServiceClient(api_url, settings().token)


def api_url_option(command: F) -> F:
    return click.option(
        "--api-url",
        default=lambda: settings().api_url,
        show_default=f"${API_URL_ENV}, else {DEFAULT_API_URL}",
        metavar="URL",
        help="The parley service (`parley serve`).",
    )(command)


# ---- status -----------------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f} s" if value < 120 else f"{value / 60:.1f} min"


def status_lines(view: dict[str, Any]) -> list[str]:
    """A batch's status as a person reads it."""
    total, done = view["total_scenarios"], view["completed_scenarios"]
    lines = [f"batch {view['batch_id']}: {view['status']}"]
    progress = f"progress: {done}/{total} conversations ({view['progress']:.1f}%)"
    if view.get("in_flight"):
        progress += f", {view['in_flight']} in flight"
    if view.get("eta_s") is not None:
        progress += f", about {_seconds(view['eta_s'])} left"
    lines.append(progress)
    lines.append(
        f"passed {view['passed']}, failed {view['failed']}, bot errors {view.get('bot_errors', 0)}, "
        f"unverified {view.get('unverified', 0)}, simulator faults {view.get('user_faults', 0)}, "
        f"errors {view['errors']} (runs broken on the simulator's or parley's side)"
    )
    lines.append(f"created {view['created_at']}, started {view['started_at'] or '-'}, elapsed {_seconds(view['elapsed_s'])}")
    if view.get("owner"):
        lines.append(f"run by another process: {view['owner']}")
    if view.get("error"):
        lines.append(f"note: {view['error']}")
    if view["status"] in ("interrupted", "cancelled", "failed"):
        lines.append(f"resume it with: POST /api/batches/{view['batch_id']}/resume")
    return lines


@click.command()
@click.argument("batch_id")
@api_url_option
@click.option("--json", "as_json", is_flag=True, help="Print the service's JSON as it is.")
def status(batch_id: str, api_url: str, as_json: bool) -> None:
    """Show a batch's status and progress on a running parley service."""
    with _client(api_url) as client:
        view = client.send("GET", f"/batches/{batch_id}").json()
    if as_json:
        click.echo(json.dumps(view, indent=2, ensure_ascii=False))
        return
    for line in status_lines(view):
        click.echo(visible(line))


# ---- fetch ------------------------------------------------------------------------------------


@click.command()
@click.argument("batch_id")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "ndjson"]), default="json", show_default=True)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write to FILE (atomically: a partly downloaded file never replaces it); default stdout.",
)
@api_url_option
def fetch(batch_id: str, fmt: str, output: Path | None, api_url: str) -> None:
    """Download a batch's results from a running parley service."""
    params = {"format": fmt}
    with _client(api_url) as client:
        if output is None:
            response = client.stream_to(f"/batches/{batch_id}/results", params, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            output.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".part", dir=output.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    response = client.stream_to(f"/batches/{batch_id}/results", params, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, output)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            click.echo(f"wrote {output} ({fmt})", err=True)
    if response.headers.get("X-Parley-Partial") == "true":
        state = response.headers.get("X-Parley-Batch-Status", "not completed")
        click.echo(f"note: batch is {state}: these results are partial", err=True)


# ---- submit -----------------------------------------------------------------------------------


def submit_body(files: tuple[Path, ...], paths: tuple[str, ...]) -> dict[str, Any]:
    """The POST /batches body: scenario files' scenarios, YAML files inline, service-side paths."""
    scenarios: list[Any] = []
    profiles: list[Any] = []
    for file in files:
        if file.is_dir():
            raise click.UsageError(f"{file} is a folder: submit sends files; to run a folder of the service's profiles, use --path")
        text = file.read_text(encoding="utf-8")
        if file.suffix.lower() == ".json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParleyError(f"{file}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
            items = data.get("scenarios") if isinstance(data, dict) else data
            if not isinstance(items, list):
                raise ParleyError(f'{file}: expected a list of scenarios or {{"scenarios": [...]}}')
            scenarios.extend(items)
        elif file.suffix.lower() in (".yaml", ".yml"):
            profiles.append({"yaml": text, "name": file.name})
        else:
            raise click.UsageError(f"{file}: submit takes .json scenario files and .yaml/.yml profiles or playbooks")
    profiles.extend(paths)
    body: dict[str, Any] = {}
    if scenarios:
        body["scenarios"] = scenarios
    if profiles:
        body["profiles"] = profiles
    return body


@click.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, path_type=Path), metavar="FILE...")
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="PATH",
    help="A profile file or folder on the service's side, inside its profile folders (repeatable).",
)
@declared_options("submit", defaults=False, roles_where=" (default: the service's)")
@click.option("--wait", is_flag=True, help="Wait until the batch ends, printing its progress; exit 1 unless it completed.")
@api_url_option
def submit(files: tuple[Path, ...], paths: tuple[str, ...], wait: bool, api_url: str, **options: Any) -> None:
    """Launch a batch on a running parley service.

    FILE may be scenario files (.json, 003's format) and profiles or playbooks (.yaml), sent in
    the request; --path names files already in the service's profile folders. An option not
    given is the service's default.
    """
    if not files and not paths:
        raise click.UsageError("give FILEs to send, or --path PATH on the service's side")
    body = submit_body(files, paths)
    given = {name: value for name, value in options.items() if value is not None}
    models = {o.name: given.pop(o.name) for o in options_on("submit") if o.role is not None and o.name in given}
    if models:
        body["models"] = models
    body.update(given)
    with _client(api_url) as client:
        launched = client.send("POST", "/batches", json=body).json()
        batch_id = launched["batch_id"]
        click.echo(f"batch {batch_id} launched: {launched['total_scenarios']} conversations")
        for warning in launched.get("warnings", []):
            click.echo(visible(f"warning: {warning}"), err=True)
        if not wait:
            click.echo(f"follow it with: parley status {batch_id}", err=True)
            return
        view = _wait(client, batch_id)
    for line in status_lines(view):
        click.echo(visible(line))
    sys.exit(0 if view["status"] == "completed" else 1)


def _wait(client: ServiceClient, batch_id: str, poll_s: float = 0.5) -> dict[str, Any]:
    last = None
    while True:
        view = client.send("GET", f"/batches/{batch_id}").json()
        shown = (view["completed_scenarios"], view["status"])
        if shown != last:
            click.echo(f"  {view['completed_scenarios']}/{view['total_scenarios']} {view['status']}", err=True)
            last = shown
        if view["status"] in FINISHED:
            return view
        time.sleep(poll_s)

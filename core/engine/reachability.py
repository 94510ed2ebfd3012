"""The one check before a batch launches: one short request to each endpoint it will call.

Asked of every endpoint at once, before anything is stored (the CLI's `parley run`, the
service's launch and the app's all go through `prepare_batch` and its siblings):
- is anyone there? An endpoint nothing answers (no server on the port, a host that does not
  resolve, no complete answer within `PROBE_TIMEOUT_S`) would otherwise cost every conversation
  its retries before each recorded the same error: `UnreachableEndpoint`;
- is the key accepted? Each LLM role's endpoint is asked `GET /models` with the role's key, a
  deployed bot its URL with the headers its connector sends; a 401 or 403 is a setup mistake,
  never the bot's failure: `CredentialsRefused`, one line naming the role, the URL, the
  variable that holds the key and the status (never the key);
- what does it serve? From the `/models` list: whether the model named is among the models
  listed (when not, a warning with the listed ones, and the batch goes on) and the context
  length the server reports for it (vLLM's `max_model_len`, OpenRouter's `context_length`;
  llama-cpp-python's server and Ollama report none). `PreflightReport` carries both per role.

Any other HTTP answer (404, 405, 500...) means something is listening, which is all it asks.
Each request has one deadline covering connect, headers and body, and reads a bounded number
of bytes (parley.core.ingress.fetch_bounded): a server that trickles or never ends its answer
cannot hold the launch, nor fill memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from parley.core.errors import ParleyError
from parley.core.ingress import FetchedReply, fetch_bounded
from parley.core.models import mark_answered
from parley.core.specs import did_you_mean

log = logging.getLogger("parley.engine.reachability")

PROBE_TIMEOUT_S = 3.0
MODEL_LIST_MAX_BYTES = 4 * 1024 * 1024
"""How much of a `/models` answer is read: OpenRouter's list of hundreds of models fits."""
LISTED_SHOWN = 8
"""How many of the listed models a warning names."""
CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window")
"""Where servers put a model's context length in its `/models` entry (vLLM, OpenRouter, ...)."""
REFUSED = (401, 403)

TargetKind = Literal["model", "bot"]


class EndpointCheckFailed(ParleyError):
    """The check before launch stopped the batch; nothing was run or stored. `role` says whose
    endpoint it was (bot, user or judge)."""

    def __init__(self, message: str, *, role: str) -> None:
        super().__init__(message)
        self.role = role


class UnreachableEndpoint(EndpointCheckFailed):
    """A role's endpoint did not answer at all."""


class CredentialsRefused(EndpointCheckFailed):
    """A role's endpoint answered 401 or 403 to the check: its key (or a deployed bot's
    credentials) was refused. `status` is the HTTP status."""

    def __init__(self, message: str, *, role: str, status: int) -> None:
        super().__init__(message, role=role)
        self.status = status


@dataclass(frozen=True)
class Target:
    """An endpoint a role of the batch calls: who (role, model or connector name), where, and
    what the check sends (headers are never shown: they may hold the key)."""

    role: str
    name: str
    url: str
    """What is shown (the base URL)."""
    probe_url: str
    """What is asked (a GET)."""
    kind: TargetKind = "bot"
    model: str | None = None
    """For a model endpoint: the model id the batch asks for (looked for in `/models`)."""
    key_env: str | None = None
    """The variable(s) that hold the key or credentials, for messages (the names only)."""
    key_set: bool = True
    """Whether a key is sent at all (False: the variable is not set)."""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)


class EndpointFacts(BaseModel):
    """What the check learnt of one role's endpoint."""

    role: str
    name: str
    url: str
    status: int | None = None
    """The HTTP status of the check's answer."""
    listed_models: list[str] | None = None
    """The model ids `/models` listed; None when it listed none (or was not asked)."""
    context_length: int | None = Field(default=None, gt=0)
    """The context length, in tokens, the server reports for the role's model; None: not reported."""


class PreflightReport(BaseModel):
    """The check's result: what each role's endpoint said, and the warnings to show.

    `context_length(role)` is the seam for fitting prompts to a model: the context the endpoint
    reported for the role's model, or None (the caller then assumes its own default)."""

    endpoints: list[EndpointFacts] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def context_length(self, role: str, name: str | None = None) -> int | None:
        """The context length reported for `role` (and model `name`, when a role calls several:
        a user simulator on each profile's own model), or None when no endpoint reported one."""
        for facts in self.endpoints:
            if facts.role == role and (name is None or facts.name == name) and facts.context_length is not None:
                return facts.context_length
        return None

    def context_lengths(self) -> dict[str, int | None]:
        """Each role the batch calls over HTTP -> its reported context length (None: not reported)."""
        found: dict[str, int | None] = {}
        for facts in self.endpoints:
            if found.get(facts.role) is None:
                found[facts.role] = facts.context_length
        return found


@dataclass
class _Answer:
    reply: FetchedReply | None = None
    why_not: str | None = None
    """Why nothing answered (reply is None)."""


async def _ask(target: Target, timeout_s: float) -> _Answer:
    """One bounded GET of `target.probe_url`: the reply, or why there was none."""
    max_bytes = MODEL_LIST_MAX_BYTES if target.kind == "model" else 0  # a bot's body is not needed
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            reply = await fetch_bounded(
                client, "GET", target.probe_url, headers=dict(target.headers), deadline_s=timeout_s, max_bytes=max_bytes, keep_partial=True
            )
    except (TimeoutError, httpx.TimeoutException):
        return _Answer(why_not=f"no answer within {timeout_s:g} s")
    except (httpx.TransportError, httpx.InvalidURL) as exc:
        return _Answer(why_not=_reason(exc))
    return _Answer(reply=reply)


async def why_unreachable(url: str, *, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when something answers a GET to `url` (any status) within `timeout_s`, else why
    nothing did."""
    answer = await _ask(Target(role="bot", name=url, url=url, probe_url=url), timeout_s)
    return answer.why_not


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if "refused" in lowered or "all connection attempts failed" in lowered:
        return "the connection was refused (is the server running?)"
    if "name or service not known" in lowered or "nodename nor servname" in lowered or "name resolution" in lowered:
        return "the host name does not resolve"
    return text


def _refused(target: Target, status: int) -> CredentialsRefused:
    where = f"the {target.role}'s endpoint {target.url} ({target.name})"
    if target.kind == "model":
        if target.key_env and target.key_set:
            what = f"refused the API key in {target.key_env}"
        elif target.key_env:
            what = f"refused a request without an API key ({target.key_env} is not set)"
        else:
            what = "refused a request without an API key"
    elif target.key_env:
        what = f"refused the credentials parley sends it (from {target.key_env})"
    else:
        what = "refused parley's request (it needs credentials this connector does not send)"
    return CredentialsRefused(f"{where} {what}: HTTP {status}; nothing was run", role=target.role, status=status)


def _model_entries(reply: FetchedReply) -> list[dict[str, Any]] | None:
    """The entries of an OpenAI-style `/models` answer (`{"data": [{"id": ...}, ...]}`), or None
    when the answer is not one (not read whole, not JSON, another shape)."""
    if reply.status != 200 or reply.truncated:
        return None
    try:
        data = reply.json()
    except ValueError:
        return None
    entries = data.get("data") if isinstance(data, dict) else data if isinstance(data, list) else None
    if not isinstance(entries, list):
        return None
    found = [e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str) and e["id"]]
    return found or None


def _same_model(listed: str, wanted: str) -> bool:
    # Ollama serves `llama3` as `llama3:latest`
    return listed == wanted or listed == f"{wanted}:latest"


def _context_length(entry: Mapping[str, Any]) -> int | None:
    for key in CONTEXT_KEYS:
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    top = entry.get("top_provider")  # OpenRouter may say it only per provider
    if isinstance(top, Mapping):
        return _context_length({k: v for k, v in top.items() if k != "top_provider"})
    return None


def _not_listed(target: Target, listed: Sequence[str]) -> str:
    shown = ", ".join(listed[:LISTED_SHOWN]) + (f" and {len(listed) - LISTED_SHOWN} more" if len(listed) > LISTED_SHOWN else "")
    hint = did_you_mean(target.model or "", listed)
    return (
        f"the {target.role}'s model {target.model!r} ({target.name}) is not among the models {target.url} lists: "
        f"{shown}{hint} (the batch goes on; the server may still serve it)"
    )


def _facts(target: Target, reply: FetchedReply, warnings: list[str]) -> EndpointFacts:
    facts = EndpointFacts(role=target.role, name=target.name, url=target.url, status=reply.status)
    if target.kind != "model" or target.model is None:
        return facts
    entries = _model_entries(reply)
    if entries is None:
        return facts
    facts.listed_models = [e["id"] for e in entries]
    mine = next((e for e in entries if _same_model(e["id"], target.model)), None)
    if mine is None:
        warnings.append(_not_listed(target, facts.listed_models))
    else:
        facts.context_length = _context_length(mine)
    return facts


async def run_preflight(targets: Sequence[Target], *, timeout_s: float = PROBE_TIMEOUT_S) -> PreflightReport:
    """Check every target at once (each distinct request once): UnreachableEndpoint or
    CredentialsRefused (one line each, see the module doc) for the first that fails, else the
    report of what each endpoint said."""
    unique: dict[tuple[Any, ...], Target] = {}
    for target in targets:
        unique.setdefault(_request_key(target), target)
    answers = dict(zip(unique, await asyncio.gather(*(_ask(t, timeout_s) for t in unique.values())), strict=True))
    report = PreflightReport()
    warned: set[tuple[str, str]] = set()
    for target in targets:
        answer = answers[_request_key(target)]
        if answer.reply is None:
            raise UnreachableEndpoint(
                f"cannot reach the {target.role}'s endpoint {target.url} ({target.name}): {answer.why_not}; nothing was run",
                role=target.role,
            )
        if answer.reply.status in REFUSED:
            raise _refused(target, answer.reply.status)
        if target.kind == "model":
            mark_answered(target.url)  # a connection refused later means the server stopped
        warnings: list[str] = []
        report.endpoints.append(_facts(target, answer.reply, warnings))
        for warning in warnings:  # one per model and endpoint, however many roles share them
            if (target.url, str(target.model)) not in warned:
                warned.add((target.url, str(target.model)))
                report.warnings.append(warning)
    log.info(
        "checked %d endpoint(s) before launch: %s", len(unique), [(f.role, f.url, f.status, f.context_length) for f in report.endpoints]
    )
    return report


def _request_key(target: Target) -> tuple[Any, ...]:
    # The same URL asked with other credentials is another question
    return (target.probe_url, target.kind, tuple(sorted(target.headers.items())))

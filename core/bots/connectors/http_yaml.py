"""`http:FILE.yaml`: any chatbot behind an HTTP API, described in a YAML file.

The file is the chatbot-connectors library's "custom" format, with two parley additions
(`start` and `*` in `response_path`):

    name: My bot                          # optional; shown nowhere else
    base_url: http://127.0.0.1:5005       # required
    timeout: 20                           # optional: seconds per call (else --bot-timeout)
    headers:                              # optional: sent with every call
      Authorization: "Bearer ${BOT_TOKEN}"  # ${NAME}: an environment variable, read at each call
    send_message:                         # required
      path: /webhooks/rest/webhook        # joined to base_url (`?token=${BOT_TOKEN}` may follow)
      method: POST                        # GET (payload as query parameters), POST, PUT, PATCH
      headers: {}                         # optional, added to the top-level ones
      timeout: 20                         # optional, overrides the top-level timeout
      payload_template:                   # any JSON; in every string, {user_msg} is the
        sender: "{session_id}"            #   customer's message, {session_id} the conversation's
        message: "{user_msg}"             #   session id, {world_url} where the conversation's
        world: "{world_url}"              #   world is served (its tools: POST {world_url}/tools/NAME)
                                          #   and {customer_id} its customer
    response_path: "*.text"               # dot path to the reply text in the JSON answer:
                                          #   keys, list indexes (0, -1), `*` = every item
                                          #   (the texts found are joined, one a line)
    start:                                # optional: called once per conversation, first
      path: /sessions
      method: POST
      payload_template: {}
      session_id_path: id                 # where the session id is in its answer (optional)
    fallback_message: ...                 # accepted for compatibility, not used

The session id is parley's (`parley-<hex>`, one per conversation) unless `start` returns one.
`{world_url}` and `{customer_id}` may stand in a header value too (`X-World: "{world_url}"`): a bot
that calls its world there acts on the conversation's private copy of the world, and every call is
recorded as the conversation's (parley.core.world.serving).
`${NAME}` may stand in a header value, a path or any string of a payload template: the
variable's value is read at each call, sent, registered with the redactor and never stored (the
batch records `http:FILE.yaml` and nothing else). A credential written literally in a URL of the
file is refused, as in a `rasa:URL`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from parley.core.bots.api import BotContext
from parley.core.bots.bot_files import read_bot_file
from parley.core.bots.connectors.base import (
    DEFAULT_CALL_TIMEOUT_S,
    DEFAULT_MAX_REPLY_BYTES,
    ConnectorError,
    HttpConnector,
    check_url,
    env_names,
    excerpt,
    last_user_text,
    resolve_env,
)
from parley.core.errors import ConfigError, ProfileError
from parley.core.records import ChatMessage, first_error
from parley.core.redaction import REDACTOR
from parley.core.specs import read_yaml

SCHEME = "http"
Method = Literal["GET", "POST", "PUT", "PATCH"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Endpoint(_Model):
    """One HTTP call: where, how, and the JSON it sends."""

    path: str = "/"
    method: Method = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)
    payload_template: Any = Field(default_factory=dict)

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class StartEndpoint(Endpoint):
    session_id_path: str | None = None


class HttpBotConfig(_Model):
    """An `http:FILE.yaml` connector file (see the module doc)."""

    name: str = "Custom Chatbot"
    base_url: str
    timeout: float | None = Field(default=None, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    fallback_message: str | None = None
    send_message: Endpoint
    response_path: str
    start: StartEndpoint | None = None

    @field_validator("response_path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.strip() or any(not part for part in value.strip().split(".")):
            raise ValueError("a dot path such as `response.text`, `messages.0.content` or `*.text`")
        return value.strip()

    def endpoints(self) -> list[Endpoint]:
        return [self.send_message] if self.start is None else [self.start, self.send_message]

    def env_names(self) -> list[str]:
        """Every environment variable a header, a path or a payload string names."""
        texts = list(self.headers.values())
        for endpoint in self.endpoints():
            texts += [*endpoint.headers.values(), endpoint.path, *_strings(endpoint.payload_template)]
        return list(dict.fromkeys(n for text in texts for n in env_names(text)))


def load_http_bot_config(path: str | Path) -> HttpBotConfig:
    """Read and validate a connector file; ConfigError (`FILE: field: why`) when it is not one."""
    source = str(path)
    text = read_bot_file(path, "connector file")
    try:
        data = read_yaml(text, source)
    except ProfileError as exc:
        raise ConfigError(exc.render()) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a connector file is a mapping with base_url, send_message and response_path")
    try:
        config = HttpBotConfig.model_validate(data)
    except ValidationError as exc:
        first = first_error(exc, "(top level)")
        message = "unknown field" if first.type == "extra_forbidden" else first.message
        raise ConfigError(f"{source}: {first.where}: {message}") from None
    check_url(config.base_url, what=f"{source}: base_url")
    for field, endpoint in (("send_message", config.send_message), ("start", config.start)):
        if endpoint is not None and endpoint.path.startswith(("http://", "https://")):
            check_url(endpoint.path, what=f"{source}: {field}.path")
        elif endpoint is not None:
            check_url(config.base_url.rstrip("/") + "/" + endpoint.path.lstrip("/"), what=f"{source}: {field}.path")
    # A credential written in the file itself is not stored (the batch records the file's name),
    # but a bot may echo it: it is redacted like the ones taken from the environment.
    for endpoint in config.endpoints():
        REDACTOR.register_headers({**config.headers, **endpoint.headers}, origin=f"{source}: header")
    return config


def _strings(template: Any) -> list[str]:
    """Every string in a payload template (keys too)."""
    if isinstance(template, dict):
        return [s for key, value in template.items() for s in (*_strings(key), *_strings(value))]
    if isinstance(template, list):
        return [s for item in template for s in _strings(item)]
    return [template] if isinstance(template, str) else []


def resolve_template(template: Any, env: Mapping[str, str] | None, *, what: str) -> Any:
    """The payload template with each `${NAME}` in its strings replaced by the variable's value
    (registered with the redactor; ConfigError naming an unset one)."""
    if isinstance(template, dict):
        return {key: resolve_template(value, env, what=what) for key, value in template.items()}
    if isinstance(template, list):
        return [resolve_template(item, env, what=what) for item in template]
    if isinstance(template, str):
        return resolve_env(template, env, what=what)
    return template


def _world_values(ctx: BotContext) -> dict[str, str]:
    """`{world_url}` and `{customer_id}`: where the conversation's world is served, and its customer."""
    return {"world_url": ctx.world_url or "", "customer_id": ctx.customer_id}


def fill_template(template: Any, values: Mapping[str, str]) -> Any:
    """The payload template with `{user_msg}`, `{session_id}`, `{world_url}` and `{customer_id}`
    replaced in every string. The message goes in last: a customer who types `{world_url}` sends
    it as typed."""
    if isinstance(template, dict):
        return {key: fill_template(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [fill_template(item, values) for item in template]
    if isinstance(template, str):
        for key, value in sorted(values.items(), key=lambda item: item[0] == "user_msg"):
            template = template.replace("{" + key + "}", value)
    return template


_MISSING = object()


def _walk(value: Any, parts: list[str]) -> list[Any]:
    if not parts:
        return [value]
    head, rest = parts[0], parts[1:]
    if head == "*":
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if items is None:
            return [_MISSING]
        return [found for item in items for found in _walk(item, rest)]
    if isinstance(value, list):
        try:
            return _walk(value[int(head)], rest)
        except (ValueError, IndexError):
            return [_MISSING]
    if isinstance(value, dict) and head in value:
        return _walk(value[head], rest)
    return [_MISSING]


def extract_text(reply: Any, path: str) -> str | None:
    """The text at `path` (see the module doc), or None when the path is not in the reply.
    With `*`, the items that have the rest of the path are joined (none: empty text)."""
    found = _walk(reply, path.split("."))
    if "*" in path.split("."):
        texts = [_text(v) for v in found if v is not _MISSING and v is not None]
        return "\n".join(t for t in texts if t)
    if not found or found[0] is _MISSING:
        return None
    return _text(found[0])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class HttpYamlConnector(HttpConnector):
    """A chatbot described by an `http:FILE.yaml` file (see the module doc)."""

    def __init__(
        self,
        path: str | Path,
        *,
        timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        config: HttpBotConfig | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.path = str(path)
        self.config = config or load_http_bot_config(path)
        super().__init__(f"{SCHEME}:{path}", timeout_s=self.config.timeout or timeout_s, max_reply_bytes=max_reply_bytes, env=env)

    @property
    def probe_url(self) -> str:
        """Where to check, before a batch, that the bot is there and takes parley's credentials:
        the URL messages go to (a GET: a 405 or 404 still says something listens there; a base
        URL that answers while the message path refuses would let a batch of bot errors start)."""
        return self._url(self.config.send_message)

    def probe_headers(self) -> dict[str, str]:
        """The headers the check before launch sends (those of `send_message`, resolved)."""
        return self._headers(self.config.send_message)

    def credential_names(self) -> list[str]:
        """The environment variables the headers, paths and payloads take (names only, for messages)."""
        return self.config.env_names()

    def check(self) -> None:
        """ConfigError now for an environment variable the file names that is not set."""
        for name in self.config.env_names():
            resolve_env("${" + name + "}", self.env, what=f"{self.path}: a header, path or payload")

    def _url(self, endpoint: Endpoint) -> str:
        if endpoint.path.startswith(("http://", "https://")):
            return endpoint.path
        return self.config.base_url.rstrip("/") + "/" + endpoint.path.lstrip("/")

    def _headers(self, endpoint: Endpoint, world: Mapping[str, str] | None = None) -> dict[str, str]:
        merged = {**self.config.headers, **endpoint.headers}
        resolved = {k: resolve_env(v, self.env, what=f"{self.path}: header {k}") for k, v in merged.items()}
        return {k: fill_template(v, world) for k, v in resolved.items()} if world else resolved

    async def _send(self, endpoint: Endpoint, values: Mapping[str, str]) -> Any:
        # The environment first, then the message: a customer who types `${HOME}` sends it as typed.
        resolved = resolve_template(endpoint.payload_template, self.env, what=f"{self.path}: payload_template")
        payload = fill_template(resolved, values)
        url = self._url(endpoint)
        headers = self._headers(endpoint, {k: v for k, v in values.items() if k in ("world_url", "customer_id")})
        if endpoint.method == "GET":
            params = payload if isinstance(payload, dict) else {}
            query = urlencode({k: _text(v) for k, v in params.items()})
            url = f"{url}{'&' if '?' in url else '?'}{query}" if query else url
            return await self.call("GET", url, headers=headers, timeout_s=endpoint.timeout)
        return await self.call(endpoint.method, url, json=payload, headers=headers, timeout_s=endpoint.timeout)

    async def _session_id(self, ctx: BotContext) -> str:
        known: str | None = ctx.session.get("http_session")
        if known is not None:
            return known
        session = f"parley-{uuid.uuid4().hex}"
        start = self.config.start
        if start is not None:
            reply = await self._send(start, {**_world_values(ctx), "session_id": session, "user_msg": ""})
            if start.session_id_path:
                found = extract_text(reply, start.session_id_path)
                if not found:
                    raise ConnectorError(
                        f"{self.name}: start.session_id_path `{start.session_id_path}` is not in the reply: {excerpt(json.dumps(reply))}"
                    )
                session = found
        ctx.session["http_session"] = session
        return session

    async def _answer(self, transcript: list[ChatMessage], ctx: BotContext) -> tuple[str, bool]:
        session = await self._session_id(ctx)
        text = last_user_text(transcript)
        reply = await self._send(self.config.send_message, {**_world_values(ctx), "session_id": session, "user_msg": text or ""})
        found = extract_text(reply, self.config.response_path)
        if found is None:
            raise ConnectorError(
                f"{self.name}: response_path `{self.config.response_path}` is not in the reply: {excerpt(json.dumps(reply))}"
            )
        return found, False

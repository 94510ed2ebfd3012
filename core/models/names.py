"""Model names the way inspect_ai writes them, parsed into a description of the endpoint.

`parse_model_name` is pure: it reads no environment. `EndpointSpec.resolve` reads the
environment (or a mapping given to it) when a model is about to be used, so an unset key only
fails the role that needs it, at its first call; the key and any credentials in the base URL it
resolves are registered with the redactor (parley.core.redaction), whatever their variables' names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from parley.core.errors import ConfigError
from parley.core.ingress import port_problem
from parley.core.redaction import register_secret, register_url

OFFLINE = "offline"

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENROUTER_DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
OLLAMA_DEFAULT_BASE_URL = "http://localhost:11434/v1"

_HOSTED: dict[str, tuple[str, str, str | None]] = {
    "openai": ("OPENAI_BASE_URL", OPENAI_DEFAULT_BASE_URL, "OPENAI_API_KEY"),
    "openrouter": ("OPENROUTER_BASE_URL", OPENROUTER_DEFAULT_BASE_URL, "OPENROUTER_API_KEY"),
    "ollama": ("OLLAMA_BASE_URL", OLLAMA_DEFAULT_BASE_URL, None),
}
"""provider -> (the variable for its base URL, its default base URL, the variable for its API key;
None: it takes none)."""

# Sent when an endpoint needs no key: the SDK insists on one, and an explicit placeholder keeps
# it from falling back to OPENAI_API_KEY and leaking that key to a local server.
NO_KEY_PLACEHOLDER = "no-key-needed"

VALID_FORMS = (
    "offline",
    "openai/MODEL (OPENAI_API_KEY; OPENAI_BASE_URL optional)",
    "openrouter/MODEL (OPENROUTER_API_KEY), e.g. openrouter/openai/gpt-4o-mini",
    "ollama/MODEL (OLLAMA_BASE_URL, default http://localhost:11434/v1)",
    "openai-api/SERVICE/MODEL (SERVICE_BASE_URL; SERVICE_API_KEY optional), e.g. openai-api/vllm/MODEL",
)


@dataclass(frozen=True)
class Endpoint:
    """Where to send requests, resolved from the environment: never stored, never logged."""

    base_url: str
    api_key: str
    api_key_env: str | None  # which variable the key came from, for error messages
    sends_openai_org_headers: bool = False  # only OpenAI itself gets OPENAI_ORG_ID / PROJECT_ID

    def __repr__(self) -> str:  # keep the key out of tracebacks and logs
        return f"Endpoint(base_url={self.base_url!r}, api_key_env={self.api_key_env!r})"


@dataclass(frozen=True)
class EndpointSpec:
    """What a model name says about its endpoint, before the environment is read.

    `provider` is the name's prefix (`openai`, `openrouter`, `ollama`, `openai-api`, `offline`),
    `model` the id sent to the server (it may contain slashes), `service` the SERVICE of an
    `openai-api/SERVICE/MODEL` name.
    """

    name: str
    provider: str
    model: str
    base_url_env: str | None = None
    default_base_url: str | None = None
    api_key_env: str | None = None
    api_key_required: bool = False
    service: str | None = None

    @property
    def is_offline(self) -> bool:
        return self.provider == OFFLINE

    def resolve(self, env: Mapping[str, str] | None = None, *, role: str | None = None) -> Endpoint:
        """The base URL and key this name points at now; ConfigError if a required one is unset."""
        if self.is_offline:
            raise ConfigError("the offline model has no endpoint")
        env = os.environ if env is None else env
        for_whom = f"{self.name} for the {role} role" if role else self.name

        base_url = (env.get(self.base_url_env, "").strip() if self.base_url_env else "") or self.default_base_url
        if not base_url:
            raise ConfigError(f"{self.base_url_env} is not set; {for_whom} needs it, e.g. {self.base_url_env}=http://localhost:8000/v1")
        if not re.match(r"^https?://", base_url):
            raise ConfigError(f"{self.base_url_env} must start with http:// or https://, got {base_url!r}")
        bad_port = port_problem(base_url)
        if bad_port is not None:
            raise ConfigError(f"{self.base_url_env or 'the base URL'} {base_url!r}: {bad_port}")
        base_url = base_url.rstrip("/")
        # What is resolved for a run is what every output must not show (parley.core.redaction).
        register_url(base_url, origin=self.base_url_env or f"{self.name}'s base URL")

        key = env.get(self.api_key_env, "").strip() if self.api_key_env else ""
        register_secret(key, origin=self.api_key_env or "an API key")
        if not key:
            if self.api_key_required:
                raise ConfigError(
                    f"{self.api_key_env} is not set; set it to use {for_whom}, or choose another model (offline needs no key)"
                )
            return Endpoint(base_url=base_url, api_key=NO_KEY_PLACEHOLDER, api_key_env=None)
        return Endpoint(
            base_url=base_url,
            api_key=key,
            api_key_env=self.api_key_env,
            sends_openai_org_headers=self.provider == "openai",
        )


def service_env_prefix(service: str) -> str:
    """`llama-cpp` -> `LLAMA_CPP`: the prefix of an openai-api service's variables."""
    return service.upper().replace("-", "_")


def _forms() -> str:
    return "valid forms: " + "; ".join(VALID_FORMS)


def parse_model_name(name: str) -> EndpointSpec:
    """Parse a parley model name; ConfigError (listing the valid forms) if it is not one."""
    raw = name
    name = (name or "").strip()
    if name == OFFLINE:
        return EndpointSpec(name=OFFLINE, provider=OFFLINE, model=OFFLINE)
    provider, sep, rest = name.partition("/")
    if not sep:
        hint = f" (did you mean openai/{name}?)" if name else ""
        raise ConfigError(f"unknown model name {raw!r}{hint}; {_forms()}")

    if provider == "openai-api":
        service, sep, model = rest.partition("/")
        if not sep or not service or not model.strip("/"):
            raise ConfigError(f"model name {raw!r} needs a service and a model: openai-api/SERVICE/MODEL; {_forms()}")
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", service):
            raise ConfigError(f"service {service!r} in {raw!r} must be letters, digits, '-' or '_'")
        prefix = service_env_prefix(service)
        return EndpointSpec(
            name=name,
            provider=provider,
            model=model,
            base_url_env=f"{prefix}_BASE_URL",
            api_key_env=f"{prefix}_API_KEY",
            api_key_required=False,
            service=service,
        )

    if not rest.strip("/"):
        raise ConfigError(f"model name {raw!r} has no model after {provider}/; {_forms()}")
    hosted = _HOSTED.get(provider)
    if hosted is not None:
        base_url_env, default_base_url, api_key_env = hosted
        return EndpointSpec(
            name=name,
            provider=provider,
            model=rest,
            base_url_env=base_url_env,
            default_base_url=default_base_url,
            api_key_env=api_key_env,
            api_key_required=api_key_env is not None,
        )
    raise ConfigError(f"unknown model provider {provider!r} in {raw!r}; {_forms()}")

"""parley's error types: one base class, so the CLI and TUI can catch what is ours."""

from __future__ import annotations


class ParleyError(Exception):
    """Base of every error parley raises on purpose; its message is meant for a person."""


class ConfigError(ParleyError):
    """A setting is missing or wrong (an unset API key, an unknown model name)."""


class PythonCodeRefused(ConfigError):
    """Code of the user's (a check written in Python) that this process may not import and run:
    the batch service's refusal unless its operator allows Python (parley.core.service.bot_hosts)."""


class SettingError(ConfigError):
    """A variable of the environment holds a value its setting cannot take (parley.core.settings):
    a usage error of the command that read it."""


class ProviderError(ParleyError):
    """A model provider failed after retries, or refused a request that retrying cannot fix.

    `status` is the HTTP status when there was one; `retryable` says whether the failure was
    of the kind that retries are for (429, 5xx, timeouts), so a runner can count throttling
    apart from bad requests.
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class ContextLengthExceeded(ProviderError):
    """The provider refused a prompt as longer than its model's context (a 400 that says so).
    Retrying the same prompt cannot help: only a shorter one can."""


class ProfileError(ParleyError):
    """A profile, playbook or scenario file is invalid; says where, as file:line:col: path: why."""

    def __init__(
        self,
        reason: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        field_path: str | None = None,
    ) -> None:
        self.reason = reason
        self.file = file
        self.line = line
        self.column = column
        self.field_path = field_path
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        path = f"{self.field_path}: " if self.field_path else ""
        return f"{where}{path}{self.reason}"

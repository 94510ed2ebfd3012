"""The one redactor: the secrets a run resolved, taken out of every text that leaves parley.

What is a secret here is what parley itself resolved and sent, whatever the variable's name:
an endpoint's API key (parley.core.models.names), every value a connector takes from the
environment for a header, a body or a URL (`${BOT_AUTH}`; parley.core.bots.connectors), the
password (or lone user name) of a URL's user-info and the values of its query parameters named
like credentials (`?api_key=`, `token`, `secret`, `password`...), and the batch service's token.
Whoever resolves one calls `register_secret` / `register_url`; on top of those, the values of
environment variables whose names say they are secrets (`*_API_KEY`, `*_TOKEN`...) are covered
even before anything resolved them, when they are long enough not to be ordinary words.

Each exit point applies the same `REDACTOR`: the store's write path (the database and so every
export and report), the log (`RedactingFilter` on parley.log's handler), the terminal (the CLI's
text streams and its display of outside text), the service's responses (an ASGI middleware) and
what the app's batch process sends the app. A secret is also looked for as it appears once
encoded: JSON-escaped, percent-encoded, HTML-escaped, and inside HTTP basic credentials.

Length: a value of 8 characters or more is replaced wherever it appears; a shorter one (down to
`MIN_SECRET_CHARS`) only where it stands alone (not inside a longer run of letters and digits),
so a 7-character key is redacted while a word that merely contains it is not torn apart. Three
characters or fewer, or fewer than 8 digits and nothing else, cannot be told from ordinary text
and numbers (a year, a count, a port): such a value is not redacted, and the log says so once
(naming where it came from, never the value). In the database, a column holding JSON is redacted
string by string (`redact_stored`), so the record still reads back.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

if TYPE_CHECKING:  # pydantic is not loaded for this (the command line imports the redactor at start-up)
    from pydantic import BaseModel

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4
WHOLE_WORD_BELOW = 8
ENV_GUESS_MIN_CHARS = 8
"""A variable taken for a secret from its name alone must be this long: `HF_HUB_DISABLE_TOKEN=1`
is a flag, and redacting every `1` would wreck every count shown."""

_SECRET_VARIABLE = re.compile(r"(API_?KEY|_TOKEN|_SECRET|PASSWORD|PASSWD|_PWD|_CREDENTIALS?)$", re.IGNORECASE)
_CREDENTIAL_NAME = re.compile(r"key|token|secret|passw|pwd|auth|credential|signature|^sig$", re.IGNORECASE)
_CREDENTIAL_HEADER = re.compile(r"authorization|cookie|key|token|secret|passw|credential", re.IGNORECASE)
_ALNUM = "A-Za-z0-9"

log = logging.getLogger("parley.redaction")
R = TypeVar("R", bound="BaseModel")


def is_credential_name(name: str) -> bool:
    """Whether a query parameter or field called `name` carries a credential (`api_key`, `token`...)."""
    return bool(_CREDENTIAL_NAME.search(name))


def credential_params(url: str) -> list[tuple[str, str]]:
    """The (name, value) query parameters of `url` named like credentials, as written."""
    try:
        query = urlsplit(url).query
    except ValueError:
        return []
    return [(name, value) for name, value in parse_qsl(query, keep_blank_values=True) if is_credential_name(name)]


def _variants(value: str) -> set[str]:
    """`value` and the forms it takes once encoded where parley writes or echoes it."""
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        quote(value, safe=""),
        quote_plus(value),
        html.escape(value),
        html.escape(value, quote=False),
    }
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


class Redactor:
    """The secrets registered so far (plus those the environment's names give away), and the
    replacement of each by `[redacted]` in any text. Thread-safe: a batch registers on its loop
    while the store writes in a thread."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ  # None: os.environ, read at each use (a test or a command may change it)
        self._lock = threading.Lock()
        self._registered: dict[str, None] = {}
        self._too_short: set[str] = set()  # origins already logged
        self._compiled: tuple[tuple[str, ...], re.Pattern[str] | None] = ((), None)

    # ---- registering --------------------------------------------------------------------------

    def register(self, value: str | None, *, origin: str = "a secret") -> None:
        """Redact `value` (and its encoded forms) from now on. `origin` (a variable's name, never
        a value) is named in the log when the value is too short to be redacted."""
        if not value or not value.strip():
            return
        value = value.strip()
        if len(value) < MIN_SECRET_CHARS or (value.isdigit() and len(value) < WHOLE_WORD_BELOW):
            with self._lock:
                known = origin in self._too_short
                self._too_short.add(origin)
            if not known:
                why = "only digits" if len(value) >= MIN_SECRET_CHARS else f"{len(value)} characters long"
                log.warning("%s is %s: it cannot be told from ordinary text and numbers, so it is not redacted", origin, why)
            return
        forms = _variants(value)
        with self._lock:
            new = [form for form in forms if form not in self._registered]
            for form in new:
                self._registered[form] = None

    def register_url(self, url: str | None, *, origin: str = "a URL") -> None:
        """Redact the credentials `url` carries: its user-info's password (or a user name given
        alone, which is then the credential), the basic credentials made of them, and the
        values of its query parameters named like credentials."""
        if not url:
            return
        try:
            parts = urlsplit(url)
        except ValueError:
            return
        user, password = parts.username, parts.password
        if password:
            self.register(password, origin=f"the password in {origin}")
            self.register(unquote(password), origin=f"the password in {origin}")
            basic = f"{unquote(user or '')}:{unquote(password)}".encode()  # what a client sends of it
            self.register(base64.b64encode(basic).decode(), origin=f"the user-info of {origin}")
        elif user:
            self.register(user, origin=f"the user-info of {origin}")
            self.register(unquote(user), origin=f"the user-info of {origin}")
        for name, value in credential_params(url):
            self.register(value, origin=f"the {name} parameter of {origin}")

    def register_headers(self, headers: Mapping[str, str], *, origin: str = "a header") -> None:
        """Redact the values of headers named like credentials (Authorization, X-API-Key...) and,
        for `Scheme credentials`, the credentials alone."""
        for name, value in headers.items():
            if not _CREDENTIAL_HEADER.search(name) or not isinstance(value, str):
                continue
            self.register(value, origin=f"{origin} {name}")
            scheme, _, rest = value.strip().partition(" ")
            if rest.strip() and scheme.isalpha():
                self.register(rest, origin=f"{origin} {name}")

    def forget(self) -> None:
        """Drop every registered secret (between tests that share a process)."""
        with self._lock:
            self._registered.clear()
            self._too_short.clear()

    # ---- redacting ----------------------------------------------------------------------------

    def _guessed(self) -> list[str]:
        env = os.environ if self._environ is None else self._environ
        found: set[str] = set()
        for name in list(env):
            # by name, then get: another thread may unset a variable meanwhile (pytest sets and
            # unsets PYTEST_CURRENT_TEST while `pytest --parley` stores conversations)
            value = env.get(name)
            if value is not None and _SECRET_VARIABLE.search(name) and len(value.strip()) >= ENV_GUESS_MIN_CHARS:
                found |= _variants(value.strip())
        return sorted(found)

    def secrets(self) -> tuple[str, ...]:
        """Every form looked for now, longest first."""
        with self._lock:
            registered = list(self._registered)
        return tuple(sorted(set(registered) | set(self._guessed()), key=lambda s: (-len(s), s)))

    def _pattern(self) -> re.Pattern[str] | None:
        secrets = self.secrets()
        known, pattern = self._compiled
        if known == secrets:
            return pattern
        long = [re.escape(s) for s in secrets if len(s) >= WHOLE_WORD_BELOW]
        short = [re.escape(s) for s in secrets if len(s) < WHOLE_WORD_BELOW]
        parts = []
        if long:
            parts.append("|".join(long))
        if short:
            parts.append(f"(?<![{_ALNUM}])(?:{'|'.join(short)})(?![{_ALNUM}])")
        pattern = re.compile("|".join(parts)) if parts else None
        self._compiled = (secrets, pattern)
        return pattern

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `[redacted]`."""
        return self._redact(self._pattern(), text)

    @staticmethod
    def _redact(pattern: re.Pattern[str] | None, text: str) -> str:
        if pattern is None or not text:
            return text
        shown = pattern.sub(REDACTED, text)
        for _ in range(3):  # a short key glued to a long one stands alone once that one is out
            again = pattern.sub(REDACTED, shown)
            if again == shown:
                break
            shown = again
        return shown

    def redact_stored(self, text: str) -> str:
        """As `redact`, for what a database column holds: a JSON document (a record) is redacted
        string by string and written again, so a secret can never break its syntax or a number
        in it, and the record reads back."""
        return self._redact_stored(self._pattern(), text)

    def stored_redaction(self) -> Callable[[str], str]:
        """`redact_stored` with the secrets as they are now, for the many values one write
        stores (a conversation's rows): the environment is read once for all of them, not once
        per value (reading it costs more than writing a row)."""
        return functools.partial(self._redact_stored, self._pattern())

    def _redact_stored(self, pattern: re.Pattern[str] | None, text: str) -> str:
        if pattern is None or not text or not pattern.search(text):
            return text
        if text[:1] in "{[":
            try:
                data = json.loads(text)
            except ValueError:
                pass
            else:
                return json.dumps(self._redact_data(pattern, data), ensure_ascii=False, separators=(",", ":"))
        return self._redact(pattern, text)

    def redact_data(self, value: Any) -> Any:
        """A copy of JSON-like `value` with every string (keys too) redacted."""
        return self._redact_data(self._pattern(), value)

    def _redact_data(self, pattern: re.Pattern[str] | None, value: Any) -> Any:
        if isinstance(value, str):
            return self._redact(pattern, value)
        if isinstance(value, Mapping):
            return {self._redact_data(pattern, k): self._redact_data(pattern, v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._redact_data(pattern, v) for v in value]
        return value

    def redact_record(self, record: R) -> R:
        """A pydantic record with every secret redacted from its text (the same record when it
        holds none): for records that leave the process whole (the app's batch events)."""
        text = record.model_dump_json()
        clean = self.redact(text)
        return record if clean == text else type(record).model_validate_json(clean)

    def stream(self) -> StreamRedactor:
        """A redactor for text that arrives in pieces (a streamed reply), which may split a secret."""
        return StreamRedactor(self)

    def unfinished(self, text: str) -> int:
        """How many characters at the end of `text` could be the start of a secret: those must
        wait for what comes next."""
        held = 0
        for secret in self.secrets():
            longest = min(len(secret) - 1, len(text))
            for size in range(longest, held, -1):
                if text.endswith(secret[:size]):
                    held = size
                    break
        return held


class StreamRedactor:
    """Redacts a text given in pieces: each `feed` returns what can be shown now, holding back a
    tail that may be the start of a secret; `end` returns the rest."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._held = ""
        self._before = ""  # the last character shown: whether a short secret stands alone depends on it

    def feed(self, piece: str) -> str:
        pending = self._held + piece
        redacted = self._redact(pending)
        keep = self.redactor.unfinished(redacted)
        # A whole secret just before the held tail waits with it: whether a short one stands alone
        # (and is redacted) depends on what the tail turns out to be ("sk-ab12" + "sk-live-...").
        while keep:
            whole = next((x for x in self.redactor.secrets() if redacted[: len(redacted) - keep].endswith(x)), None)
            if whole is None:
                break
            keep += len(whole)
        shown, self._held = redacted[: len(redacted) - keep], redacted[len(redacted) - keep :]
        if shown:
            self._before = shown[-1]
        return shown

    def end(self) -> str:
        rest, self._held = self._redact(self._held), ""
        self._before = ""
        return rest

    def _redact(self, text: str) -> str:
        if not self._before:
            return self.redactor.redact(text)
        redacted = self.redactor.redact(self._before + text)
        return redacted[1:] if redacted.startswith(self._before) else redacted


REDACTOR = Redactor()
"""The process's one redactor: everything parley resolves registers here, every exit applies it."""


def redact(text: str) -> str:
    """`text` with every secret of this process replaced by `[redacted]` (see the module doc)."""
    return REDACTOR.redact(text)


def register_secret(value: str | None, *, origin: str = "a secret") -> None:
    """Redact `value` from every output of this process from now on."""
    REDACTOR.register(value, origin=origin)


def register_url(url: str | None, *, origin: str = "a URL") -> None:
    """Redact the credentials in `url` (user-info, credential query parameters) from now on."""
    REDACTOR.register_url(url, origin=origin)


def register_all(values: Iterable[tuple[str, str]]) -> None:
    """Register each (origin, value)."""
    for origin, value in values:
        REDACTOR.register(value, origin=origin)


class RedactingFilter(logging.Filter):
    """A filter for a log handler: the record's message, arguments, traceback and stack leave
    with every secret redacted (the record is rendered here, once, then redacted)."""

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its format: logging reports it itself
            return True
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True

"""The one redactor (parley.core.redaction) and each exit point that applies it, piece by piece:
what counts as a secret and in which forms, text that arrives in pieces, the log, the database's
records (which must still read back), the terminal's streams, the service's responses, the chat,
and the connectors that resolve `${NAME}` in headers, bodies and URLs. The whole, end to end
against echoing servers, is tests/test_secrets_never_shown.py."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import logging
from collections.abc import AsyncIterator, Iterator, Mapping

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from hypothesis import given, settings
from hypothesis import strategies as st

from parley.core.bots import BotContext, BotEvent, BotTurn, TextDelta, TurnCompleted
from parley.core.errors import ConfigError, ParleyError
from parley.core.models import parse_model_name
from parley.core.redaction import REDACTED, REDACTOR, RedactingFilter, Redactor
from parley.core.store import Store
from tests.property_settings import examples

KEY7 = "sk-ab12"  # 7 characters: redacted where it stands alone
LONG = "sk-live-0123456789abcdef"


def fresh(*values: str) -> Redactor:
    redactor = Redactor(environ={})
    for value in values:
        redactor.register(value, origin="TEST_KEY")
    return redactor


def test_a_short_key_is_redacted_where_it_stands_alone_and_a_long_one_anywhere():
    r = fresh(KEY7, LONG)
    assert r.redact(f"Incorrect API key provided: {KEY7}.") == f"Incorrect API key provided: {REDACTED}."
    assert r.redact(f'{{"key": "{KEY7}"}}') == f'{{"key": "{REDACTED}"}}'
    assert r.redact(f"x{KEY7}9") == f"x{KEY7}9"  # a longer word that merely contains it is left whole
    assert r.redact(f"tok{LONG}en") == f"tok{REDACTED}en"


def test_a_secret_is_found_in_the_forms_it_takes_once_encoded():
    odd = 'p@ss "wörd"\\x'
    r = fresh(odd)
    assert json.dumps(odd)[1:-1] not in r.redact(json.dumps({"v": odd}))
    assert json.dumps(odd, ensure_ascii=False)[1:-1] not in r.redact(json.dumps({"v": odd}, ensure_ascii=False))
    assert "p%40ss" not in r.redact("https://h/?q=p%40ss%20%22w%C3%B6rd%22%5Cx")
    assert "&quot;w" not in r.redact("<td>p@ss &quot;wörd&quot;\\x</td>")


def test_a_url_gives_its_password_its_basic_credentials_and_its_credential_parameters():
    r = Redactor(environ={})
    r.register_url("http://ann:Pa%24%24word-9@host/v1?api_key=Qk-123456&model=m&token=tk99zz", origin="X_BASE_URL")
    basic = base64.b64encode(b"ann:Pa$$word-9").decode()
    shown = r.redact(f"GET http://ann:Pa%24%24word-9@host/v1?api_key=Qk-123456&model=m&token=tk99zz Basic {basic} Pa$$word-9")
    for secret in ("Pa%24%24word-9", "Pa$$word-9", basic, "Qk-123456", "tk99zz"):
        assert secret not in shown
    assert "model=m" in shown and "ann" in shown  # what is no credential stays


def test_too_short_or_digits_only_is_not_redacted_and_the_log_says_so_once(caplog):
    r = Redactor(environ={})
    with caplog.at_level(logging.WARNING, logger="parley.redaction"):
        r.register("abc", origin="TINY_KEY")
        r.register("abc", origin="TINY_KEY")
        r.register("2026", origin="PIN_TOKEN")
    assert r.redact("abc 2026-11-21 2026") == "abc 2026-11-21 2026"  # a year stays a year
    lines = [rec.getMessage() for rec in caplog.records]
    assert len(lines) == 2 and "TINY_KEY" in lines[0] and "PIN_TOKEN" in lines[1]
    assert not any("abc" in line.split(":")[0] for line in lines)


def test_a_variable_named_like_a_secret_is_covered_before_anything_resolves_it_when_it_is_long_enough():
    r = Redactor(environ={"ACME_API_KEY": "acme-key-0042", "HF_HUB_DISABLE_TOKEN": "1", "HOME": "/root/home-dir"})
    assert r.redact("acme-key-0042 1 /root/home-dir") == f"{REDACTED} 1 /root/home-dir"


class _Vanishing(Mapping[str, str]):
    """os.environ as another thread unsets a variable between its listing and its reading (as
    pytest does with PYTEST_CURRENT_TEST while `pytest --parley` stores conversations)."""

    def __init__(self, data: dict[str, str]) -> None:
        self.data = data

    def __iter__(self) -> Iterator[str]:
        return iter([*self.data, "PYTEST_CURRENT_TEST"])

    def __len__(self) -> int:
        return len(self.data) + 1

    def __getitem__(self, key: str) -> str:
        return self.data[key]  # PYTEST_CURRENT_TEST: listed, then gone (KeyError)


def test_a_variable_unset_while_the_environment_is_read_is_no_error_and_the_secrets_are_still_covered():
    r = Redactor(environ=_Vanishing({"ACME_API_KEY": "acme-key-0042"}))
    assert r.redact("key acme-key-0042") == f"key {REDACTED}"


@settings(max_examples=examples(300))
@given(
    st.lists(st.sampled_from(["hello ", KEY7, LONG, "x", "-", " ", "sk-", "ab1", "2\n", LONG[:9]]), max_size=12),
    st.lists(st.integers(min_value=0, max_value=200), max_size=6),
)
def test_text_in_pieces_never_shows_a_secret_whatever_the_cut(words, cuts):
    r = fresh(KEY7, LONG)
    text = "".join(words)
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    stream = r.stream()
    shown = "".join(stream.feed(piece) for piece in pieces) + stream.end()
    assert LONG not in shown
    assert r.redact(shown) == shown  # nothing left that stands alone as the short key
    if KEY7 not in text and LONG not in text:
        assert shown == text  # text without secrets passes unchanged, however cut


def test_a_short_secret_right_before_a_long_one_is_redacted_wherever_the_text_is_cut():
    # "sk-ab12" stands alone once the long key after it is redacted: the stream must wait to know
    text = KEY7 + LONG
    for cut in range(len(text) + 1):
        stream = fresh(KEY7, LONG).stream()
        shown = stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.end()
        assert shown == REDACTED * 2, (cut, shown)


def test_a_held_piece_comes_out_as_soon_as_it_cannot_be_a_secret():
    stream = fresh(LONG).stream()
    assert stream.feed("your key sk-li") == "your key "  # may be the start of the key: held
    assert stream.feed("ght is on") == "sk-light is on"  # it was not
    assert stream.feed(" sk-live-0123") == " "
    assert stream.feed("456789abcdef!") == f"{REDACTED}!"
    assert stream.end() == ""


def test_the_log_filter_redacts_the_message_its_arguments_and_the_traceback():
    REDACTOR.register(LONG, origin="TEST_KEY")
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("parley.test_redaction")
    logger.addHandler(handler)
    try:
        try:
            raise RuntimeError(f"refused {LONG}")
        except RuntimeError:
            logger.exception("call with %s failed", LONG)
    finally:
        logger.removeHandler(handler)
    text = out.getvalue()
    assert LONG not in text
    assert text.count(REDACTED) == 2 and "Traceback" in text


def test_a_record_that_holds_a_secret_reads_back_from_the_database(tmp_path):
    """A digits-only key of 8+ characters matches numbers too: in a JSON column only strings are
    redacted, so the seed stays a number and the record stays readable."""
    from tests.test_store_fixtures import batch, conversation, spec, verdict

    key = "31415926"
    REDACTOR.register(key, origin="NUMERIC_API_KEY")
    with Store.open(tmp_path / "p.db") as store:
        b = store.create_batch(batch())
        s = spec().model_copy(update={"seed": int(key), "variables": {"note": f"pin {key}"}})
        conv = conversation(stop_reason="bot_error", error=f"HTTP 401: bad key {key}")
        store.save_conversation(b.id, s, conv, verdict(conv, "failed", None))
        stored = store.load_conversation(conv.id)
    assert stored.spec.seed == int(key)
    assert stored.spec.variables["note"] == f"pin {REDACTED}"
    assert stored.conversation.error == f"HTTP 401: bad key {REDACTED}"
    assert stored.conversation.id == conv.id and stored.conversation.started_at == conv.started_at


def test_the_terminal_streams_and_the_visible_text_are_redacted():
    from parley.tui.terminal_text import RedactingStream, visible

    REDACTOR.register(KEY7, origin="TEST_KEY")
    sink = io.StringIO()
    stream = RedactingStream(sink)  # type: ignore[arg-type]
    stream.write(f"error: the key {KEY7} was refused\n")
    assert sink.getvalue() == f"error: the key {REDACTED} was refused\n"
    assert visible(f"key={KEY7}\x1b[0m") == f"key={REDACTED}\\x1b[0m"
    assert stream.getvalue() == sink.getvalue()  # everything else is the stream's own


async def test_the_service_redacts_whole_answers_and_streamed_ones_split_anywhere():
    from parley.core.service.redacted_responses import RedactedResponses

    REDACTOR.register(LONG, origin="TEST_KEY")
    app = FastAPI()

    @app.get("/whole")
    async def whole() -> JSONResponse:
        return JSONResponse({"detail": f"refused {LONG}"})

    @app.get("/streamed")
    async def streamed() -> StreamingResponse:
        text = f"a,b\n1,{LONG}\n2,é{LONG}\n"

        async def pieces() -> AsyncIterator[bytes]:
            data = text.encode()
            for i in range(0, len(data), 5):  # five bytes a piece: keys and é split
                yield data[i : i + 5]

        return StreamingResponse(pieces(), media_type="text/csv")

    wrapped = RedactedResponses(app)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=wrapped), base_url="http://s") as client:
        answer = await client.get("/whole")
        assert answer.json() == {"detail": f"refused {REDACTED}"}
        assert int(answer.headers["content-length"]) == len(answer.content)
        rows = await client.get("/streamed")
        assert rows.text == f"a,b\n1,{REDACTED}\n2,é{REDACTED}\n"


class EchoingBot:
    """A bot that streams back the last message in pieces of two characters."""

    uses_world = False

    def system_prompt(self, ctx: BotContext) -> str | None:
        return None

    async def respond(self, transcript, ctx):  # pragma: no cover - the chat streams
        raise NotImplementedError

    async def respond_stream(self, transcript, ctx) -> AsyncIterator[BotEvent]:
        text = f"you said {transcript[-1].content}"
        for i in range(0, len(text), 2):
            yield TextDelta(text=text[i : i + 2])
        yield TurnCompleted(turn=BotTurn(text=text))


async def test_the_chat_shows_a_key_the_bot_echoes_as_redacted_even_in_pieces(today):
    from parley.core.chat import ChatSession

    REDACTOR.register(LONG, origin="TEST_KEY")
    async with ChatSession(bot=EchoingBot(), today=today) as chat:  # type: ignore[arg-type]
        events = [event async for event in chat.send_stream(f"my key is {LONG} ok")]
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    final = next(e for e in events if isinstance(e, TurnCompleted)).turn.text
    assert streamed == final == f"you said my key is {REDACTED} ok"


async def test_a_connector_takes_header_body_and_url_values_from_the_environment_and_registers_them(tmp_path):
    """Variables whose names say nothing of secrets: whatever a connector file sends from the
    environment is a credential, redacted when a bot echoes it."""
    from parley.core.bots import bot_from_name
    from parley.core.records import ChatMessage
    from tests.connector_servers import serve_app

    seen: list[dict] = []
    app = FastAPI()

    @app.post("/chat")
    async def chat(request: Request) -> JSONResponse:
        got = {"authorization": request.headers["authorization"], "url": str(request.url), "body": await request.json()}
        seen.append(got)
        return JSONResponse({"detail": f"refused: {got}"}, status_code=401)

    env = {"PLAIN_NAME_A": "header-value-1", "PLAIN_NAME_B": "query-v2", "PLAIN_NAME_C": "body-value-3"}
    with serve_app(app) as base:
        (tmp_path / "bot.yaml").write_text(
            f"base_url: {base}\n"
            "headers: {Authorization: 'Bearer ${PLAIN_NAME_A}'}\n"
            "send_message:\n  path: /chat?api_key=${PLAIN_NAME_B}\n"
            "  payload_template: {message: '{user_msg}', auth: '${PLAIN_NAME_C}'}\n"
            "response_path: text\n",
            encoding="utf-8",
        )
        bot = bot_from_name(f"http:{tmp_path / 'bot.yaml'}", env=env)
        ctx = BotContext(customer_id="C-100", today=dt.date(2026, 11, 21))
        try:
            with pytest.raises(ParleyError) as refused:  # the ConnectorError of a 401
                await bot.respond([ChatMessage(role="user", content="${PLAIN_NAME_A} as typed")], ctx)
        finally:
            await bot.aclose()
    sent = seen[0]
    assert sent["authorization"] == "Bearer header-value-1"
    assert sent["url"].endswith("/chat?api_key=query-v2")
    assert sent["body"] == {"message": "${PLAIN_NAME_A} as typed", "auth": "body-value-3"}  # the customer's text goes as typed
    assert "api_key=${PLAIN_NAME_B}" in str(refused.value)  # the message names the variable where the URL had it
    shown = REDACTOR.redact(str(refused.value))
    assert REDACTED in shown
    for value in env.values():
        assert value not in shown


def test_a_literal_credential_in_a_bot_url_is_refused_and_a_named_one_accepted():
    from parley.core.bots import parse_bot_spec

    with pytest.raises(ConfigError, match=r"token parameter holds a credential.*\$\{NAME\}"):
        parse_bot_spec("rasa:http://127.0.0.1:5005/webhooks/rest/webhook?token=abc12345")
    with pytest.raises(ConfigError, match="carries credentials"):
        parse_bot_spec("taskyto:http://me:pw@127.0.0.1:5000")
    assert parse_bot_spec("rasa:http://127.0.0.1:5005/webhooks/rest/webhook?token=${RASA_TOKEN}&lang=en").kind == "rasa"


def test_resolving_an_endpoint_registers_its_key_and_the_credentials_in_its_base_url():
    spec = parse_model_name("openai-api/local/m")
    spec.resolve({"LOCAL_BASE_URL": "http://u:Base-Pass-1@h/v1?api_key=qkey-777", "LOCAL_API_KEY": "lk-7chr"})
    shown = REDACTOR.redact("refused lk-7chr at http://u:Base-Pass-1@h/v1?api_key=qkey-777")
    assert shown == f"refused {REDACTED} at http://u:{REDACTED}@h/v1?api_key={REDACTED}"

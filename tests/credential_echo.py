"""A server on loopback that echoes every credential it receives: the worst a bot or a model
endpoint can do with a key. One app, by path:

- `/v1/...`: an OpenAI-compatible endpoint. `GET` (the check before launch's `/models`) lists
  the model `m`; a chat completion answers with a text quoting the request's credentials (its
  Authorization header and its full URL; a bot's echo quotes its body too), streamed in three-character pieces when
  asked to stream (so a key is split across pieces), except every `refuse_every`-th one, which
  is a 401 whose message quotes them ("Incorrect API key provided: ...").
- `/refuse/...`: the same endpoint refusing everything with that 401, the check before launch too.
- `/bot/...`: an HTTP bot for an `http:FILE.yaml` connector: `{"text": "echo: ..."}`, every
  `refuse_every`-th message a 401 echoing what came (the check before launch's GET is answered).
- `/rasa/...`: a Rasa REST channel echoing the same way.

Any path and method answers (an SDK that mangles a base URL with a query still reaches it), and
`received` keeps what each request carried, so a test can show the secrets were really sent.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse


class EchoState:
    def __init__(self, refuse_every: int = 3) -> None:
        self.refuse_every = refuse_every
        self.received: list[str] = []
        self.counts: dict[str, int] = {}

    def count(self, kind: str) -> int:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return self.counts[kind]

    def reset(self) -> None:
        self.received.clear()
        self.counts.clear()


def _refusal(what: str, auth: str) -> JSONResponse:
    message = f"Incorrect API key provided: {auth}. We received {what}"
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}}, status_code=401)


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-echo",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def _stream(text: str):
    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        chunk = {"id": "chatcmpl-echo", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        return "data: " + json.dumps({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

    yield event({"role": "assistant", "content": ""})
    for start in range(0, len(text), 3):  # three characters a piece: every key is split
        yield event({"content": text[start : start + 3]})
    yield event({}, "stop")
    yield "data: [DONE]\n\n"


def echo_app(state: EchoState) -> FastAPI:
    app = FastAPI()

    @app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH"])
    async def anything(request: Request, path: str) -> Response:
        auth = request.headers.get("authorization", "")
        raw = (await request.body()).decode("utf-8", "replace")
        state.received.append(f"authorization={auth} url={request.url} body={raw}")
        what = f"authorization={auth} url={request.url}"
        if path.startswith(("bot", "rasa")):  # a bot's body carries what its connector adds (a credential)
            what += f" body={raw}"
        if path.startswith("bot"):
            if request.method != "GET" and state.count("bot") % state.refuse_every == 0:
                return JSONResponse({"detail": f"unauthorized: {what}"}, status_code=401)
            return JSONResponse({"text": f"echo: {what}"})
        if path.startswith("rasa"):
            if request.method != "GET" and state.count("rasa") % state.refuse_every == 0:
                return JSONResponse({"detail": f"unauthorized: {what}"}, status_code=401)
            return JSONResponse([{"text": f"echo: {what}"}])
        if path.startswith("refuse"):
            return _refusal(what, auth)
        if request.method == "GET":
            return JSONResponse({"object": "list", "data": [{"id": "m", "object": "model"}]})
        if state.count("llm") % state.refuse_every == 0:
            return _refusal(what, auth)
        text = f"Hello, I got {what}"
        try:
            streamed = bool(json.loads(raw).get("stream"))
        except (ValueError, AttributeError):
            streamed = False
        if streamed:
            return StreamingResponse(_stream(text), media_type="text/event-stream")
        return JSONResponse(_completion(text))

    return app

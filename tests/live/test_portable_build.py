"""The live tier runs on every CPU: llama.cpp built for a portable instruction set, and a server
that dies under a test is named with its exit status and the end of its log."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.live.check_portable_build import amx_instructions, ggml_libraries
from tests.live.conftest import ServerWatch


def test_the_built_llama_cpp_holds_no_amx_instructions():
    # A native build on a CPU reporting AMX puts `ldtilecfg` in libggml-cpu.so; a virtual
    # machine that does not let the process use AMX kills the server at its first completion.
    libraries = ggml_libraries()
    assert any(lib.name.startswith("libggml-cpu") for lib in libraries), libraries
    assert {lib.name: amx_instructions(lib) for lib in libraries} == {lib.name: 0 for lib in libraries}


def test_the_byte_scan_finds_ldtilecfg_where_objdump_is_missing(tmp_path: Path, monkeypatch):
    # ldtilecfg [rdi] and sttilecfg [rax+8], as the assembler encodes them, among other bytes.
    blob = tmp_path / "libggml-cpu.so"
    blob.write_bytes(b"\x90" * 16 + b"\xc4\xe2\x78\x49\x07" + b"\x90" * 8 + b"\xc4\xe2\x79\x49\x40\x08" + b"\xc3")
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert amx_instructions(blob) == 2
    blob.write_bytes(b"\x90" * 32 + b"\xc4\xe2\x78\x49\xc0")  # a register operand: not a tile config
    assert amx_instructions(blob) == 0


def test_a_server_that_dies_is_named_with_its_status_and_log(tmp_path: Path):
    log_path = tmp_path / "server.log"
    log_path.write_text("".join(f"line {i}\n" for i in range(100)))
    proc = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    proc.wait(timeout=60)
    why = ServerWatch(proc, "http://127.0.0.1:1/v1", log_path).why_dead()
    assert why is not None
    assert why.startswith("the model server at http://127.0.0.1:1/v1 stopped answering (killed by SIGSEGV)")
    assert "line 99" in why and "line 69" not in why  # the last lines, not the whole log

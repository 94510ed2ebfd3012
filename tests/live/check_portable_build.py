"""Refuse a llama.cpp build that holds AMX code: the live tier's server must run on every CPU.

A build for the build machine's own CPU (GGML_NATIVE) on a CPU that reports AMX compiles AMX
kernels; a virtual machine that reports AMX without letting a process use it then dies with a
general protection fault at the first `ldtilecfg`. The Makefile builds for a fixed instruction set
and runs this file after the build; tests/live/test_portable_build.py runs it again.

Run as a script it exits non-zero, naming the library, when an AMX tile instruction is found.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

# The AMX tile configuration instructions, as objdump spells them.
AMX_MNEMONICS = ("ldtilecfg", "sttilecfg", "tileloadd", "tdpbssd", "tdpbf16ps")
# Without objdump: ldtilecfg/sttilecfg are VEX.128.(NP|66).0F38.W0 49 /0 with a memory operand.
# C4 E2 78 49 (ldtilecfg) and C4 E2 79 49 (sttilecfg), then a ModRM byte whose reg field is 0
# and whose mod is not 11.
_AMX_BYTES = re.compile(rb"\xc4\xe2[\x78\x79]\x49[\x00-\x07\x40-\x47\x80-\x87]")


def ggml_libraries() -> list[Path]:
    """The CPU libraries of the installed llama-cpp-python (libggml-cpu*.so and libggml.so)."""
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        raise SystemExit("llama-cpp-python is not installed")
    lib = Path(spec.origin).parent / "lib"
    found = sorted(p for p in lib.glob("libggml*.so*") if p.is_file())
    if not found:
        raise SystemExit(f"no libggml library under {lib}")
    return found


def amx_instructions(library: Path) -> int:
    """How many AMX tile-configuration instructions `library` holds (objdump when there is one)."""
    objdump = shutil.which("objdump")
    if objdump is not None:
        listing = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True, check=True).stdout
        return sum(1 for line in listing.splitlines() if any(f"\t{m}" in line or f" {m} " in line for m in AMX_MNEMONICS))
    return len(_AMX_BYTES.findall(library.read_bytes()))


def main() -> int:
    bad = {lib: n for lib in ggml_libraries() if (n := amx_instructions(lib))}
    for lib, n in bad.items():
        print(
            f"{lib}: {n} AMX instructions (ldtilecfg...): llama.cpp was built for this machine's CPU, not a portable set", file=sys.stderr
        )
    if bad:
        print("rebuild with the Makefile's CMAKE_ARGS: rm .venv/.llama-built && make install-dev", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

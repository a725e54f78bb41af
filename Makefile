# Two commands on a fresh machine: `make run` and `make test`.
# Each sets up .venv (Python 3.11+) on first use; nothing else to install.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench bench-solver demo demo-event clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml setup.py shared/solver/_fastsearch.c
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed, found " + sys.version' 
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# make run ARGS="--port 9000": ARGS go to the server. The command line is not echoed: ARGS may hold a
# secret (--organiser-token); the server prints its configuration itself, secrets masked.
run: $(STAMP)
	@$(BIN)/thieves-server $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/race_load.py
	$(BIN)/python bench/moves_script.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/hint_latency.py

bench-solver: $(STAMP)
	nice -n 10 $(BIN)/python bench/solver.py --variant forty-thieves --first 1 --last 100 $(ARGS)
	nice -n 10 $(BIN)/python bench/solver.py --variant sixty-thieves --first 1 --last 100 $(ARGS)

# make demo DEMO_PORT=9000 (default 8765); make demo-event ARGS="--port 9000" (default: a free port).
demo: $(STAMP)
	BIN=$(BIN) sh scripts/demo.sh

demo-event: $(STAMP)
	$(BIN)/python scripts/demo_event.py $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info

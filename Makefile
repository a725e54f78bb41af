# Two commands on a fresh machine: `make run` and `make test`.
# Each sets up .venv (Python 3.11+) on first use; nothing else to install.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Two stamps: `make run` and the demos need the package alone; `make test` and the benches also the
# dev extra (pytest, playwright...), which a first `make run` need not wait for.
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
SOURCES := pyproject.toml setup.py shared/solver/_fastsearch.c

.PHONY: run test bench bench-solver demo demo-event clean venv

venv: $(DEV_STAMP)

# $(call install,EXTRAS): the venv (made once), then the package in it, editable, with EXTRAS.
# --no-compile: Python compiles the modules a program imports when it first does (a fraction of
# them), instead of pip compiling every module of every dependency at install (a third of its CPU).
define install
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is needed, found " + sys.version'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.$(1)'
endef

$(STAMP): $(SOURCES)
	$(call install,)
	@touch $(STAMP)

# The dev install holds the package too: it stamps both.
$(DEV_STAMP): $(SOURCES)
	$(call install,[dev])
	@touch $(STAMP) $(DEV_STAMP)

# make run ARGS="--port 9000": ARGS go to the server. The command line is not echoed: ARGS may hold a
# secret (--organiser-token); the server prints its configuration itself, secrets masked.
run: $(STAMP)
	@$(BIN)/thieves-server $(ARGS)

# Two pytest workers (pytest-xdist), a test file each at a time (module fixtures such as a Redis Cluster are
# made once): most tests wait on sockets, timers and child processes, not on a core. TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
test: $(DEV_STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

bench: $(DEV_STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/race_load.py
	$(BIN)/python bench/moves_script.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/hint_latency.py

bench-solver: $(DEV_STAMP)
	nice -n 10 $(BIN)/python bench/solver.py --variant forty-thieves --first 1 --last 100 $(ARGS)
	nice -n 10 $(BIN)/python bench/solver.py --variant sixty-thieves --first 1 --last 100 $(ARGS)

# make demo DEMO_PORT=9000 (default 8765); make demo-event ARGS="--port 9000" (default: a free port).
demo: $(STAMP)
	BIN=$(BIN) sh scripts/demo.sh

demo-event: $(STAMP)
	$(BIN)/python scripts/demo_event.py $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info

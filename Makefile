# MedBot VN — the two commands: `make run` and `make test`. Everything else is set up on the way.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
PIP    := $(BIN)/python -m pip --disable-pip-version-check

# `make lock` only: pip-tools in a virtualenv of its own, so the project's holds exactly the lock.
LOCK_VENV := .venv-lock
PIP_TOOLS := pip-tools==7.6.2
COMPILE    = CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
             --no-emit-index-url --no-emit-find-links --no-emit-trusted-host $(UPGRADE)

.PHONY: run test setup lint bench screenshots lock clean-data

# Every dependency at its locked version, each file checked against the lock's hashes; then our own code,
# editable, with no dependency resolution of its own. A changed lock or pyproject.toml re-installs.
$(STAMP): requirements-dev.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --require-hashes -r requirements-dev.lock
	$(PIP) install --quiet --no-deps -e .
	@touch $(STAMP)

setup: $(STAMP)
	$(BIN)/medbot setup

run: setup
	$(BIN)/medbot run

# Two workers (pytest-xdist; one on a one-core machine): each has its own databases (named by its process id)
# and its own bot processes, so the suite takes about two thirds of the time on the 2 cores CI has. A single
# file or test is quicker without workers: `.venv/bin/python -m pytest tests/unit/test_triage.py`.
test: $(STAMP)
	$(BIN)/python -m pytest --numprocesses auto --maxprocesses 2

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python -m bench

# The README's pictures of the clinic console (docs/screenshots/), from this machine's database after `medbot
# setup`, in the system's Chromium (testkit/screenshots.py).
screenshots: $(STAMP)
	$(BIN)/python -m testkit.screenshots

# Re-resolve the locks from pyproject.toml, keeping every pin that still fits (the product's lock first, the
# dev lock constrained by it, so both agree). Upgrade: `make lock UPGRADE="--upgrade-package openai"`, or
# UPGRADE=--upgrade for everything.
lock:
	@test -x $(LOCK_VENV)/bin/pip-compile || \
		{ $(PYTHON) -m venv $(LOCK_VENV) && $(LOCK_VENV)/bin/python -m pip install --quiet $(PIP_TOOLS); }
	$(COMPILE) -o requirements.lock pyproject.toml
	$(COMPILE) --extra dev -c requirements.lock -o requirements-dev.lock pyproject.toml

clean-data:
	rm -rf .medbot

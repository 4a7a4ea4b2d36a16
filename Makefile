# Quick start: `make demo` and `make test`. Both build .venv from pyproject.toml when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint typecheck unit appliance bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/oanquan demo
	$(BIN)/oanquan demo --versus medium

test: lint typecheck unit appliance

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy engine device companion/journal.py companion/reconcile.py companion/referee.py companion/controller.py companion/screens

unit: $(STAMP)
	$(BIN)/python -m pytest

appliance:
	bash systemd/check-unit.sh
	bash systemd/install.sh --dry-run > /dev/null

bench: $(STAMP)
	$(BIN)/python bench/engine.py --seconds 10

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache

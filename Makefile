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
	$(BIN)/mypy engine device companion/referee companion/appliance/journal companion/appliance/pipeline.py companion/ui/controller.py companion/ui/screens

unit: $(STAMP)
	$(BIN)/python -m pytest

appliance:
	bash systemd/check-unit.sh
	bash systemd/install.sh --dry-run > /dev/null

bench: $(STAMP)
	$(BIN)/python bench/engine.py --seconds 10

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache

# Offline rendering of training scenes (training/README.md): Blender's `bpy` wheel lives in its
# own venv outside the work tree (its numpy pin differs from the app's); never needed by `make test`.
# Only the `render` extra's packages go in: training.render imports just bpy, numpy and engine.
RENDER_VENV ?= $(HOME)/.cache/oanquan/venv-render
RENDER_PY   ?= python3.11
RENDER_ARGS ?= --dataset train-v3 --size 640x480

.PHONY: render-venv render
render-venv: $(RENDER_VENV)/.installed

$(RENDER_VENV)/.installed: pyproject.toml
	test -x $(RENDER_VENV)/bin/python || $(RENDER_PY) -m venv $(RENDER_VENV)
	$(RENDER_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(RENDER_VENV)/bin/python -m pip install --quiet $$($(RENDER_VENV)/bin/python -c \
	  "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['render']))")
	touch $@

render: render-venv
	nice -n 19 $(RENDER_VENV)/bin/python -m training.render $(RENDER_ARGS)

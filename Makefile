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

# bench/ is scripts, not a package (no __init__.py): --explicit-package-bases names them
# bench.<script>, so bench/engine.py does not shadow the engine package
typecheck: $(STAMP)
	$(BIN)/mypy engine vision device companion training
	$(BIN)/mypy --explicit-package-bases bench

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
# Only the `render` extra's packages go in: training.render imports just bpy, numpy, Pillow and engine.
RENDER_VENV ?= $(HOME)/.cache/oanquan/venv-render
RENDER_PY   ?= python3.11
RENDER_ARGS ?= --dataset train-v4 --size 640x480

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

# Whole games as frame sequences (training/README.md, "Sequences"): the held-out ground and
# piece kinds, for measuring the referee with bench/track.py; into the cache, never into git.
SEQUENCE_SETS ?= seq-heldout-ground-v4 seq-heldout-piece-v4 seq-large-v4
SEQUENCE_ARGS ?=

.PHONY: render-sequences demo-frames
render-sequences: render-venv
	for d in $(SEQUENCE_SETS); do \
	  nice -n 10 $(RENDER_VENV)/bin/python -m training.render.sequence --dataset $$d $(SEQUENCE_ARGS) \
	  || exit 1; done

# The bundled demo game (companion/commands/demo_frames), rendered by the same generator.
demo-frames: render-venv
	nice -n 10 $(RENDER_VENV)/bin/python -m training.render.sequence --demo companion/commands/demo_frames

# Offline training of the counter and big-stone networks (training/README.md, "Counter"): torch
# in its own venv outside the work tree; the scenes go to the cache, never into git; never needed
# by `make test`. TRAIN_TORCH pins the CPU wheel (a bare `torch` may pull a CUDA build).
TRAIN_VENV  ?= $(HOME)/.cache/oanquan/venv-train
TRAIN_TORCH ?= torch==2.13.0
CACHE       ?= $(HOME)/.cache/oanquan
SYNTH_DIR   ?= $(CACHE)/synth-wide-v1
TRAIN_SCENES ?= 1500
HELD_SCENES ?= 100
COUNTER_STEPS ?= 1800
BIGSTONE_STEPS ?= 1100
TRAIN_OUT   ?= $(CACHE)/train
RENDER_DIRS ?= $(wildcard $(CACHE)/renders/train-v*)

.PHONY: train-venv train-data train-counter train-bigstone train-calibrate train-eval
.PHONY: train-counter-renders train-counter-distill train-bigstone-renders train-calibrate-renders train-eval-renders
.PHONY: train-finder train-squares train-squares-large train-spread train-spread-pair
train-venv: $(TRAIN_VENV)/.installed

$(TRAIN_VENV)/.installed: pyproject.toml
	test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet $(TRAIN_TORCH) numpy opencv-python-headless
	$(TRAIN_VENV)/bin/python -m pip install --quiet $$($(TRAIN_VENV)/bin/python -c \
	  "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['train']))")
	touch $@

train-data: $(STAMP)
	for s in heldout-ground heldout-piece val; do \
	  nice -n 19 $(BIN)/python -m training.counter gen --split $$s --count $(HELD_SCENES) --out $(SYNTH_DIR); done
	nice -n 19 $(BIN)/python -m training.counter gen --split train --count $(TRAIN_SCENES) --out $(SYNTH_DIR)

train-counter: train-venv
	OMP_NUM_THREADS=1 nice -n 19 $(TRAIN_VENV)/bin/python bench/train_counter.py \
	  --data $(SYNTH_DIR)/train $(addprefix --data ,$(RENDER_DIRS)) --synth 60 \
	  --steps $(COUNTER_STEPS) --out $(TRAIN_OUT)/counter.onnx --work $(TRAIN_OUT)

train-bigstone: train-venv
	OMP_NUM_THREADS=1 nice -n 19 $(TRAIN_VENV)/bin/python bench/train_bigstone.py \
	  --data $(SYNTH_DIR)/train $(addprefix --data ,$(RENDER_DIRS)) --synth 60 \
	  --steps $(BIGSTONE_STEPS) --out $(TRAIN_OUT)/bigstone.onnx --work $(TRAIN_OUT)

train-calibrate: $(STAMP)
	nice -n 19 $(BIN)/python -m training.counter.calibrate $(SYNTH_DIR)/val \
	  --model $(TRAIN_OUT)/counter.onnx --big-model $(TRAIN_OUT)/bigstone.onnx

# old (shipped) vs new on what neither trained on: render-public img_00080+ and sequences, and
# the held-out kinds; dumps in $(TRAIN_OUT)/eval, figures by bench/vision_report.py
train-eval: $(STAMP)
	TRAIN_OUT=$(TRAIN_OUT) SYNTH_DIR=$(SYNTH_DIR) nice -n 19 sh training/counter/evaluate.sh

# The same networks trained on the Blender renders alone (training/render: physically piled,
# realistic), with train-v4's index % 20 == 19 kept out as the validation fold; compared with
# the shipped ones on render-public, the held-out kinds and that fold (training/counter/README.md).
RENDER_TRAIN ?= $(CACHE)/renders/train-v4
RENDER_STEPS ?= 12000
RENDER_BATCH ?= 8
# classic vision.synth scenes beside the renders for the big stone, and the share of samples
# drawn from them (their flat grey stone is the one the unit tests' scenes show)
BIGSTONE_SYNTH ?= 60
BIGSTONE_SYNTH_SHARE ?= 0.3
# a counter ONNX to fine-tune instead of starting afresh
RENDER_INIT ?=
train-counter-renders: train-venv
	OMP_NUM_THREADS=1 nice -n 10 $(TRAIN_VENV)/bin/python bench/train_counter.py \
	  --data $(RENDER_TRAIN) --holdout 19/20 --synth 60 --batch $(RENDER_BATCH) \
	  --steps $(RENDER_STEPS) --out $(TRAIN_OUT)/counter.onnx --work $(TRAIN_OUT) \
	  $(if $(RENDER_INIT),--init-onnx $(RENDER_INIT))

# One counter that reads as the mean of two did (the one shipped until session 27, kept in
# git) at half its cost: member 1 of that mean learns the mean's density maps on the renders.
COUNTER_TEACHER ?= $(TRAIN_OUT)/counter-mean.onnx
DISTILL_STEPS ?= 6000
$(TRAIN_OUT)/counter-mean.onnx:
	mkdir -p $(TRAIN_OUT)
	git show 3df5a72:vision/models/counter.onnx > $@
train-counter-distill: train-venv $(COUNTER_TEACHER)
	OMP_NUM_THREADS=1 nice -n 10 $(TRAIN_VENV)/bin/python bench/train_counter.py \
	  --data $(RENDER_TRAIN) --holdout 19/20 --synth 60 --batch 8 --steps $(DISTILL_STEPS) \
	  --init-onnx $(COUNTER_TEACHER) --init-member 1 --teacher $(COUNTER_TEACHER) --seed 27 \
	  --out $(TRAIN_OUT)/counter.onnx --work $(TRAIN_OUT)

train-bigstone-renders: train-venv
	OMP_NUM_THREADS=1 nice -n 10 $(TRAIN_VENV)/bin/python bench/train_bigstone.py \
	  --data $(RENDER_TRAIN) --holdout 19/20 --synth $(BIGSTONE_SYNTH) \
	  --synth-share $(BIGSTONE_SYNTH_SHARE) \
	  --steps $(BIGSTONE_STEPS) --out $(TRAIN_OUT)/bigstone.onnx --work $(TRAIN_OUT)

train-eval-renders: $(STAMP)
	TRAIN_OUT=$(TRAIN_OUT) nice -n 10 sh training/counter/evaluate_renders.sh

train-calibrate-renders: $(STAMP)
	nice -n 10 $(BIN)/python -m training.counter.calibrate $(RENDER_TRAIN) --fold 19/20 \
	  --model $(TRAIN_OUT)/counter.onnx --big-model $(TRAIN_OUT)/bigstone.onnx

# The learned board finder (training/finder): a small network marking the board's drawn lines,
# trained on train-v4 less its index % 20 == 19 validation fold, for LocateConfig.finder =
# "learned". FINDER_MINUTES is the wall-time budget of the steps (40 on 2 shared cores).
# FINDER_INIT warm-starts from a former run's boardlines.pt (FINDER_LR=0.002 then; a run
# of 75 minutes so made is in training/finder/README.md, not shipped).
FINDER_MINUTES ?= 40
FINDER_LR ?= 0.004
# a .pt a former run wrote, to start from (empty: from scratch)
FINDER_INIT ?=
train-finder: train-venv
	mkdir -p $(TRAIN_OUT)
	OMP_NUM_THREADS=1 nice -n 5 $(TRAIN_VENV)/bin/python -m training.finder \
	  --data $(RENDER_TRAIN) --holdout 19/20 --minutes $(FINDER_MINUTES) --lr $(FINDER_LR) \
	  $(if $(FINDER_INIT),--init $(FINDER_INIT)) --out $(TRAIN_OUT)/boardlines.onnx
	cp $(TRAIN_OUT)/boardlines.onnx vision/models/boardlines.onnx

# The per-square count classifier (vision/models/squares.onnx, multiplied with the density's
# distribution in every citizen square): train-v4 rectified on its true outlines less its
# index % 20 == 19 fold, plus 400 classic scenes; SQUARES_STEPS of 128 crops (8,600 took
# 45 minutes on two cores). Then the product's constants on that fold, and the figures on
# what it never saw (training/counter/README.md).
SQUARES_STEPS ?= 8600
# then the mandarins' network, started from the squares' weights (3,400 steps: 40 minutes)
MANDARIN_STEPS ?= 3400
# and the big stones' network on the same mandarin crops, from the mandarins' weights
BIG_STEPS ?= 1800
train-squares: train-venv
	$(TRAIN_VENV)/bin/python bench/train_squares.py prep --out $(TRAIN_OUT)/squares
	nice -n 5 $(TRAIN_VENV)/bin/python bench/train_squares.py train --data $(TRAIN_OUT)/squares \
	  --steps $(SQUARES_STEPS) --out $(TRAIN_OUT)/squares/squares.pt
	$(TRAIN_VENV)/bin/python bench/train_squares.py export --weights $(TRAIN_OUT)/squares/squares.pt \
	  --out $(TRAIN_OUT)/squares.onnx
	$(TRAIN_VENV)/bin/python bench/train_squares.py fit --model $(TRAIN_OUT)/squares.onnx
	nice -n 5 $(TRAIN_VENV)/bin/python bench/train_squares.py train --data $(TRAIN_OUT)/squares \
	  --mandarins --init $(TRAIN_OUT)/squares/squares.pt --lr 0.001 --steps $(MANDARIN_STEPS) \
	  --out $(TRAIN_OUT)/squares/mandarins.pt
	$(TRAIN_VENV)/bin/python bench/train_squares.py export --mandarins \
	  --weights $(TRAIN_OUT)/squares/mandarins.pt --out $(TRAIN_OUT)/mandarins.onnx
	nice -n 5 $(TRAIN_VENV)/bin/python bench/train_squares.py train --data $(TRAIN_OUT)/squares \
	  --big --init $(TRAIN_OUT)/squares/mandarins.pt --lr 0.001 --batch 96 --seed 5 \
	  --steps $(BIG_STEPS) --out $(TRAIN_OUT)/squares/bigstones.pt
	$(TRAIN_VENV)/bin/python bench/train_squares.py export --big \
	  --weights $(TRAIN_OUT)/squares/bigstones.pt --out $(TRAIN_OUT)/bigstones.onnx

# The square classifier as shipped since session 25 (and the mandarins' since 26): SQUARES_BASE (the classifier before it,
# from git history, or train-squares' output) fine-tuned LARGE_STEPS on train-v4 and
# train-large-v4 (pieces a sixth to a third of a square) less both 19/20 folds, then the
# mean of the two networks' weights (training/counter/README.md, "Large pieces"; 11 minutes
# of training on one core). Check the result with `report` before copying it to vision/models.
SQUARES_BASE ?= $(TRAIN_OUT)/squares-base.onnx
LARGE_RENDERS ?= $(CACHE)/renders/train-large-v4
LARGE_STEPS ?= 1200
$(TRAIN_OUT)/squares-base.onnx:
	mkdir -p $(TRAIN_OUT)
	git show ebbe26f:vision/models/squares.onnx > $@
# the mandarins' network likewise (session 26), from the one shipped before it
MANDARINS_BASE ?= $(TRAIN_OUT)/mandarins-base.onnx
$(TRAIN_OUT)/mandarins-base.onnx:
	mkdir -p $(TRAIN_OUT)
	git show 21a3347:vision/models/mandarins.onnx > $@
train-squares-large: train-venv $(SQUARES_BASE) $(MANDARINS_BASE)
	test -f $(TRAIN_OUT)/squares/train_0.npz || \
	  $(TRAIN_VENV)/bin/python bench/train_squares.py prep --out $(TRAIN_OUT)/squares
	$(TRAIN_VENV)/bin/python bench/train_squares.py prep --renders $(LARGE_RENDERS) \
	  --out $(TRAIN_OUT)/squares-large --synth 0
	mkdir -p $(TRAIN_OUT)/squares-mix
	for f in train_0 train_1 synth; do ln -sf $(TRAIN_OUT)/squares/$$f.npz $(TRAIN_OUT)/squares-mix/; done
	ln -sf $(TRAIN_OUT)/squares-large/train_0.npz $(TRAIN_OUT)/squares-mix/train_2.npz
	ln -sf $(TRAIN_OUT)/squares-large/train_1.npz $(TRAIN_OUT)/squares-mix/train_3.npz
	OMP_NUM_THREADS=1 nice -n 5 $(TRAIN_VENV)/bin/python bench/train_squares.py train \
	  --data $(TRAIN_OUT)/squares-mix --init $(SQUARES_BASE) --lr 0.0003 --batch 96 \
	  --threads 1 --steps $(LARGE_STEPS) --seed 25 --out $(TRAIN_OUT)/squares-mix/tuned.pt
	$(TRAIN_VENV)/bin/python bench/train_squares.py export \
	  --weights $(TRAIN_OUT)/squares-mix/tuned.pt --out $(TRAIN_OUT)/squares-tuned.onnx
	$(TRAIN_VENV)/bin/python bench/train_squares.py soup $(SQUARES_BASE) \
	  $(TRAIN_OUT)/squares-tuned.onnx --weight 0.5 --out $(TRAIN_OUT)/squares-large.onnx
	$(TRAIN_VENV)/bin/python bench/train_squares.py report --model $(TRAIN_OUT)/squares-large.onnx \
	  $(CACHE)/renders/large-v4 $(CACHE)/renders/heldout-piece-v4
	OMP_NUM_THREADS=1 nice -n 5 $(TRAIN_VENV)/bin/python bench/train_squares.py train --mandarins \
	  --data $(TRAIN_OUT)/squares-mix --init $(MANDARINS_BASE) --lr 0.0003 --batch 96 \
	  --threads 1 --steps $(LARGE_STEPS) --seed 25 --out $(TRAIN_OUT)/squares-mix/mandarins-tuned.pt
	$(TRAIN_VENV)/bin/python bench/train_squares.py export --mandarins \
	  --weights $(TRAIN_OUT)/squares-mix/mandarins-tuned.pt --out $(TRAIN_OUT)/mandarins-tuned.onnx
	$(TRAIN_VENV)/bin/python bench/train_squares.py soup --mandarins $(MANDARINS_BASE) \
	  $(TRAIN_OUT)/mandarins-tuned.onnx --weight 0.5 --out $(TRAIN_OUT)/mandarins-large.onnx
	$(TRAIN_VENV)/bin/python bench/train_squares.py report --mandarins \
	  --model $(TRAIN_OUT)/mandarins-large.onnx $(CACHE)/renders/large-v4

# The tally's piece detector (vision/models/spread.onnx): SPREAD_SCENES generated spreads
# (seeds 1,000,000 on, no brick, no shells), a first stage on the small pieces alone, then
# both channels from it (12,000 steps of 8 windows each: about 25 minutes each on one
# thread), squares exact by peak level beside the shipped net, then the tally bench with
# the interval model refitted: its constants go into companion/referee/tally.py with it
# (FITTED_BIG first, then --fit once more for the rest: the readings depend on it).
SPREAD_SCENES ?= 2400
SPREAD_STEPS ?= 12000
train-spread: train-venv $(STAMP)
	mkdir -p $(TRAIN_OUT)/spread
	OMP_NUM_THREADS=1 $(TRAIN_VENV)/bin/python bench/train_spread.py gen --count $(SPREAD_SCENES) \
	  --out $(TRAIN_OUT)/spread/scenes
	OMP_NUM_THREADS=1 nice -n 5 $(TRAIN_VENV)/bin/python bench/train_spread.py train --small-only \
	  --data $(TRAIN_OUT)/spread/scenes --steps $(SPREAD_STEPS) --out $(TRAIN_OUT)/spread/stage1.pt
	OMP_NUM_THREADS=1 nice -n 5 $(TRAIN_VENV)/bin/python bench/train_spread.py train \
	  --data $(TRAIN_OUT)/spread/scenes --init $(TRAIN_OUT)/spread/stage1.pt \
	  --steps $(SPREAD_STEPS) --out $(TRAIN_OUT)/spread/spread.pt
	$(TRAIN_VENV)/bin/python bench/train_spread.py export --weights $(TRAIN_OUT)/spread/spread.pt \
	  --out $(TRAIN_OUT)/spread.onnx
	OMP_NUM_THREADS=1 $(BIN)/python bench/train_spread.py levels --scenes 60 \
	  --model $(TRAIN_OUT)/spread.onnx --model vision/models/spread.onnx
	OMP_NUM_THREADS=1 $(BIN)/python bench/tally.py --model $(TRAIN_OUT)/spread.onnx --fit \
	  --scenes 300 --timing 0

# The same detector read against the empty board (vision/models/spread_pair.onnx): the
# spreads with their empty boards (gen --pair, seeds 1,000,000 on), the same two stages
# with six inputs, then the tally bench against the empty board with its tables refitted.
train-spread-pair: train-venv $(STAMP)
	mkdir -p $(TRAIN_OUT)/spread-pair
	OMP_NUM_THREADS=1 $(TRAIN_VENV)/bin/python bench/train_spread.py gen --pair \
	  --count $(SPREAD_SCENES) --out $(TRAIN_OUT)/spread-pair/scenes
	OMP_NUM_THREADS=1 nice -n 5 $(TRAIN_VENV)/bin/python bench/train_spread.py train --pair \
	  --small-only --data $(TRAIN_OUT)/spread-pair/scenes --steps $(SPREAD_STEPS) \
	  --out $(TRAIN_OUT)/spread-pair/stage1.pt
	OMP_NUM_THREADS=1 nice -n 5 $(TRAIN_VENV)/bin/python bench/train_spread.py train --pair \
	  --data $(TRAIN_OUT)/spread-pair/scenes --init $(TRAIN_OUT)/spread-pair/stage1.pt \
	  --steps $(SPREAD_STEPS) --out $(TRAIN_OUT)/spread-pair/spread_pair.pt
	$(TRAIN_VENV)/bin/python bench/train_spread.py export \
	  --weights $(TRAIN_OUT)/spread-pair/spread_pair.pt --out $(TRAIN_OUT)/spread_pair.onnx
	OMP_NUM_THREADS=1 $(BIN)/python bench/train_spread.py levels --scenes 60 \
	  --model vision/models/spread.onnx --pair-model $(TRAIN_OUT)/spread_pair.onnx
	OMP_NUM_THREADS=1 $(BIN)/python bench/tally.py --empty --fit \
	  --pair-model $(TRAIN_OUT)/spread_pair.onnx --scenes 300 --timing 0

#!/bin/sh
# The long background render (issue 14): small held-out sets early so training can be
# measured soon, then more of everything. Resumable: run it again and finished scenes are
# skipped. Start it detached, one thread, lowest priority:
#   nohup training/render/background.sh > ~/.cache/oanquan/renders/train-v4.log 2>&1 &
cd "$(dirname "$0")/../.." || exit 1
PY="${RENDER_VENV:-$HOME/.cache/oanquan/venv-render}/bin/python"
SIZE="${RENDER_SIZE:-640x480}"
R() { nice -n 19 "$PY" -m training.render --size "$SIZE" "$@" || exit 1; }
R --dataset train-v4 --count 300
R --dataset heldout-ground-v4 --count 100
R --dataset heldout-piece-v4 --count 100
R --dataset train-v4 --count 1500
R --dataset heldout-ground-v4 --count 300
R --dataset heldout-piece-v4 --count 300
R --dataset lens-v4 --count 200
R --dataset large-v4 --count 100
R --dataset train-large-v4 --count 500
R --dataset train-v4 --count 6000

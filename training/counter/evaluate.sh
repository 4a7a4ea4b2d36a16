#!/bin/sh
# Old (the networks shipped before this training, from git) vs new ($TRAIN_OUT/*.onnx) on data
# neither trained on: render-public img_00080+ (singles) and its sequences, and the wide
# generator's held-out kinds. Counting on the true outline (--oracle-corners) and through the
# whole pipeline (board finder included). Figures: bench/vision_report.py on the dumps.
set -eu
RP=${RP:-../shared/datasets/render-public}
TRAIN_OUT=${TRAIN_OUT:-$HOME/.cache/oanquan/train}
SYNTH_DIR=${SYNTH_DIR:-$HOME/.cache/oanquan/synth-wide-v1}
OLD_REV=${OLD_REV:-a21e4d0}
E=$TRAIN_OUT/eval
mkdir -p "$E/old"
git show "$OLD_REV:vision/models/counter.onnx" > "$E/old/counter.onnx"
git show "$OLD_REV:vision/models/bigstone.onnx" > "$E/old/bigstone.onnx"
export OMP_NUM_THREADS=1
for who in old new; do
  if [ $who = old ]; then M="$E/old"; else M="$TRAIN_OUT"; fi
  B=".venv/bin/python bench/vision.py --model $M/counter.onnx --big-model $M/bigstone.onnx"
  rm -f "$E/$who-oracle.jsonl" "$E/$who-full.jsonl"
  $B "$RP" --only singles --first-index 80 --oracle-corners --dump "$E/$who-oracle.jsonl"
  $B "$RP" --only sequence --oracle-corners --dump "$E/$who-oracle.jsonl"
  for s in heldout-ground heldout-piece val; do
    $B "$SYNTH_DIR/$s" --oracle-corners --dump "$E/$who-oracle.jsonl"
  done
  $B "$RP" --only singles --first-index 80 --dump "$E/$who-full.jsonl" --annotate "$E/annotate-$who"
  $B "$RP" --only sequence --dump "$E/$who-full.jsonl"
done
for who in old new; do
  .venv/bin/python bench/vision_report.py "$E/$who-oracle.jsonl" --set singles
  .venv/bin/python bench/vision_report.py "$E/$who-full.jsonl" --set singles --finder
done

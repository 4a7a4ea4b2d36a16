#!/bin/sh
# Old (networks in git at OLD_REV) vs new ($TRAIN_OUT/*.onnx) on sets the new ones never saw:
# render-public (all singles and the sequences: a test set only), the Blender held-out kinds
# (brick ground, shell pieces) and the validation fold of train-v4 (index % 20 == 19, kept
# out by `--holdout 19/20`). Counting on the true outline; then the whole pipeline on
# render-public and the held-out kinds (board finder included, for its ROC).
#   sh training/counter/evaluate_renders.sh        (make train-eval-renders)
# Figures: bench/vision_report.py on the dumps in $TRAIN_OUT/eval-renders/.
set -eu
RP=${RP:-../shared/datasets/render-public}
TRAIN_OUT=${TRAIN_OUT:-$HOME/.cache/oanquan/train}
RENDERS=${RENDERS:-$HOME/.cache/oanquan/renders}
OLD_REV=${OLD_REV:-9dca03d}
LIMIT=${LIMIT:-100}
WHO=${WHO:-old new}  # e.g. WHO=new when the old dumps are already there
E=$TRAIN_OUT/eval-renders
mkdir -p "$E/old"
git show "$OLD_REV:vision/models/counter.onnx" > "$E/old/counter.onnx"
git show "$OLD_REV:vision/models/bigstone.onnx" > "$E/old/bigstone.onnx"
export OMP_NUM_THREADS=1
for who in $WHO; do
  if [ $who = old ]; then M="$E/old"; else M="$TRAIN_OUT"; fi
  B=".venv/bin/python bench/vision.py --model $M/counter.onnx --big-model $M/bigstone.onnx"
  rm -f "$E/$who-oracle.jsonl" "$E/$who-full.jsonl"
  $B "$RP" --only singles --oracle-corners --dump "$E/$who-oracle.jsonl"
  $B "$RP" --only sequence --oracle-corners --dump "$E/$who-oracle.jsonl"
  for s in heldout-ground-v4 heldout-piece-v4; do
    $B "$RENDERS/$s" --oracle-corners --limit "$LIMIT" --dump "$E/$who-oracle.jsonl"
    $B "$RENDERS/$s" --limit "$LIMIT" --dump "$E/$who-full.jsonl"
  done
  $B "$RENDERS/train-v4" --fold 19/20 --oracle-corners --limit "$LIMIT" \
    --dump "$E/$who-oracle.jsonl"
  $B "$RP" --only singles --dump "$E/$who-full.jsonl"
done
for who in $WHO; do
  for s in singles sequence heldout-ground heldout-piece train-v4; do
    echo "== $who, true outline, $s"
    .venv/bin/python bench/vision_report.py "$E/$who-oracle.jsonl" --set "$s" --by ""
  done
done

"""The counter network alone: its counts on the true outline, model against model.

    python bench/counter_density.py DATASET_DIR                      # the shipped counter
    python bench/counter_density.py DATASET_DIR --model A.onnx --model B.onnx
    python bench/counter_density.py ~/.cache/oanquan/renders/train-large-v4 --first-index 428

Whole frames (``bench/vision.py``) mix in the board search and the square classifier,
which decides most squares; a new counter's own gain or loss shows here. Each citizen
square is counted by the run-time rule (``vision.detect.region_counts``) on the board
rectified from its true corners (once for every model: ``training.counter.calibrate``'s
``raw_estimates`` runs the whole ``count_board`` per model), and each model gets one line:
exact share per true-count band, the mean error in pieces a square and its bias. One thread.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.vision import image_index, image_truths, load_truth
from engine.board import MANDARINS, NUM_SQUARES
from vision import detect
from vision.config import VisionConfig
from vision.count import rectify
from vision.locate import outline_from_corners

BANDS = ((0, 0), (1, 3), (4, 7), (8, 15), (16, 999))


@dataclass
class Tally:
    """True and read counts of every citizen square, in dataset order."""

    true: list[int] = field(default_factory=list)
    read: list[float] = field(default_factory=list)

    def line(self, name: str) -> str:
        t, r = np.asarray(self.true), np.asarray(self.read)
        parts = [f"{name}: {len(t)} squares"]
        for lo, hi in BANDS:
            k = (t >= lo) & (t <= hi)
            label = f"{lo}+" if hi >= 999 else f"{lo}-{hi}" if hi > lo else f"{lo}"
            share = f"{100 * np.mean(np.rint(r[k]) == t[k]):.1f}%" if k.any() else "-"
            parts.append(f"{label} {share}")
        err = float(np.mean(np.abs(r - t))) if len(t) else 0.0
        bias = float(np.mean(r - t)) if len(t) else 0.0
        return "  ".join(parts) + f"  error {err:.2f} a square, bias {bias:+.2f}"


def measure(
    root: Path, models: list[str], limit: int | None = None, first: int = 0
) -> dict[str, Tally]:
    """Each model's reading of every citizen square of ``root``'s images (a model named
    twice is read once)."""
    models = list(dict.fromkeys(models))
    out = {m: Tally() for m in models}
    depth = VisionConfig().locate.arc_depth  # as bench/vision.py --oracle-corners draws it
    labels = detect.region_cells(depth)  # every outline here has that depth
    pairs = [(i, j) for i, j in image_truths(root) if image_index(i.name) >= first]
    for n, (img_path, js) in enumerate(pairs):
        if limit is not None and n >= limit:
            break
        read = cv2.imread(str(img_path))
        if read is None:
            continue
        image = np.asarray(read, np.uint8)
        counts, _, corners = load_truth(js)
        outline = outline_from_corners(corners, depth)
        rect = rectify(image, outline, detect.PX)
        for model in models:
            small, _ = detect.region_counts(detect.density(rect, model), labels)
            for sq in range(NUM_SQUARES):
                if sq not in MANDARINS:
                    out[model].true.append(counts[sq])
                    out[model].read.append(float(small[sq]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path, help="folder of images with truth JSON (recursive)")
    ap.add_argument("--model", action="append", help="counter ONNX (repeat); default shipped")
    ap.add_argument("--limit", type=int, help="at most this many images")
    ap.add_argument("--first-index", type=int, default=0, help="only scenes numbered this or on")
    args = ap.parse_args(argv)
    models = args.model or [detect.MODEL_PATH]
    missing = [m for m in models if not Path(m).is_file()]
    if missing:
        print(f"counter_density: no such model: {', '.join(missing)}", file=sys.stderr)
        return 2
    if not args.dataset.is_dir():
        print(f"counter_density: no such folder: {args.dataset}", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    for model, tally in measure(args.dataset, models, args.limit, args.first_index).items():
        print(tally.line(Path(model).name))
    return 0


if __name__ == "__main__":
    sys.exit(main())

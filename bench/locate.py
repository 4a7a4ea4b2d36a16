"""The board search alone, classical against learned: found, within 3 %, CPU per frame.

    python bench/locate.py DATASET_DIR                        # both finders
    python bench/locate.py DATASET_DIR --finder learned --limit 20 --every 4
    python bench/locate.py DATASET_DIR --finder learned --line-model new.onnx   # another net
    python bench/locate.py DATASET_DIR --set refine_candidates=3 --set max_strips=6  # settings

Runs ``vision.locate.locate_board`` on every image with a truth JSON (recursively, as
``bench/vision.py``), without counting, so the search's own CPU time per frame is seen
(``time.process_time``, one OpenCV thread: what a busy machine does not inflate). A board
is within 3 % when its mean corner error is under 3 % of the true board's diagonal (the
figure of ``bench/vision.py``); ``half turn`` also counts the right board with its corners
named the other way round (a board looks the same turned by 180 degrees). Boards the truth
marks as partly out of view get a line of their own.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.vision import image_truths
from vision.config import Finder, config_from_dict
from vision.errors import BoardNotFoundError, ConfigError
from vision.locate import locate_board


def _error(found: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Mean corner error over the diagonal, as named and after a half turn."""
    diag = float(np.linalg.norm(truth[2] - truth[0]))
    direct = float(np.linalg.norm(found - truth, axis=1).mean()) / diag
    turned = float(np.linalg.norm(np.roll(found, 2, axis=0) - truth, axis=1).mean()) / diag
    return direct, min(direct, turned)


def _setting(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` as a ``[locate]`` line of a vision TOML (argparse's type): the
    value is read as TOML, or as text where it is not (``finder=classical``)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"not NAME=VALUE: {text}")
    try:
        return name, tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return name, value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset", type=Path, help="folder with images + truth JSON")
    ap.add_argument("--finder", choices=[f.value for f in Finder], action="append")
    ap.add_argument("--limit", type=int, help="at most this many images")
    ap.add_argument("--every", type=int, default=1, help="every Nth image only")
    ap.add_argument(
        "--line-model", type=Path, help="board-line network (ONNX) for the learned finder"
    )
    ap.add_argument(
        "--set",
        type=_setting,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a LocateConfig setting to try (repeatable), e.g. refine_candidates=3",
    )
    args = ap.parse_args()
    if not args.dataset.is_dir():
        ap.error(f"{args.dataset} is not a folder")
    cv2.setNumThreads(1)
    truths = image_truths(args.dataset)[:: args.every]
    truths = truths[: args.limit] if args.limit else truths
    if not truths:
        ap.error(f"no images with a truth JSON under {args.dataset}")
    for name in args.finder or [f.value for f in Finder]:
        table: dict[str, object] = {"finder": name, **dict(args.set)}
        if args.line_model is not None:
            table["line_model"] = str(args.line_model)
        try:  # (the settings checked as a vision TOML's are)
            cfg = config_from_dict({"locate": table}).locate
        except ConfigError as exc:
            ap.error(str(exc))
        found = good = turned = 0
        errors: list[float] = []
        cpu: dict[str, list[float]] = {}
        partial: list[float] = []  # corner errors (inf: not found) of boards partly out of view
        for img, js in truths:
            read = cv2.imread(str(img))
            if read is None:
                print(f"cannot read {img}", file=sys.stderr)
                return 1
            image = np.asarray(read, np.uint8)
            record = json.loads(js.read_text("utf-8"))
            truth = np.array(record["corners"], np.float64)
            cut = bool(record.get("board_partially_outside"))
            t0 = time.process_time()
            try:
                outline = locate_board(image, cfg, np.random.default_rng(cfg.seed))
            except BoardNotFoundError:
                outline = None
            size = f"{image.shape[1]}x{image.shape[0]}"
            cpu.setdefault(size, []).append(1000.0 * (time.process_time() - t0))
            if outline is None:
                if cut:
                    partial.append(np.inf)
                continue
            found += 1
            direct, either = _error(outline.corners, truth)
            if cut:
                partial.append(either)
            errors.append(direct)
            good += direct < 0.03
            turned += either < 0.03
        n = len(truths)
        times = ", ".join(
            f"{s}: median {np.median(v):.0f} ms, p95 {np.percentile(v, 95):.0f} ms (n={len(v)})"
            for s, v in sorted(cpu.items())
        )
        print(
            f"{name}: {n} images, found {found}, within 3% {good}, within 3% up to a half "
            f"turn {turned}; median corner error {100 * np.median(errors or [np.nan]):.2f}% "
            f"of the diagonal; CPU per frame {times}",
            flush=True,
        )
        if partial:
            print(
                f"{name}: {len(partial)} boards partly out of view, found "
                f"{sum(np.isfinite(partial))}, within 3% up to a half turn {sum(e < 0.03 for e in partial)}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

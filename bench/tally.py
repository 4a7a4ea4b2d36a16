"""How well the camera tally counts single-layer spreads, and how long a still takes.

    python bench/tally.py                        # evaluate on held-out scenes (seeds 10000..)
    python bench/tally.py --scenes 300 --fit     # refit the spread model on seeds 0.. first
    python bench/tally.py --write-frames DIR     # the bundled demo frames (two small JPEGs)

A scene is one player's pieces, 10-70 small ones, spread by hand in one layer
over the ten citizen squares, with 0-2 big stones on the quan squares: what
tally mode asks the players to lay out. Scenes come from ``vision.synth``
(ground, chalk, camera, light, noise) with a non-overlapping placement of the
pebbles instead of its clustered handfuls, since a tally spread has no piles.

Readings (the counter's per-square distributions) are cached under
``~/.cache/oanquan/tally/`` keyed by seed, so fitting and evaluating reuse
them. Prints: exact-total share, share of true totals inside the stated
interval, mean interval width, misses by size, and the median time of
``tally_image`` on a still (decode, locate, count, tally maths), one thread.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

os.environ.setdefault("OMP_NUM_THREADS", "1")

import cv2
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from companion.referee.tally import SpreadModel, SpreadSquare, count_spread, fit_spread_model

CACHE = Path(os.environ.get("OANQUAN_CACHE", Path.home() / ".cache" / "oanquan")) / "tally"
CITIZENS = (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)
FIT_SEEDS = 0  # fitting uses seeds FIT_SEEDS.., evaluation EVAL_SEEDS..: never the same scenes
EVAL_SEEDS = 10_000
#: peak thresholds recorded per scene, so --fit can check the shipped one
LEVELS = (0.02, 0.03, 0.04, 0.05, 0.07, 0.09, 0.12)


def _spread_place(rng: np.random.Generator, poly: Any, n: int, size: float, *_: Any) -> Any:
    """Pebble centres in one layer: random points at least 1.3 pebbles apart, away from lines."""
    x0, y0 = poly.min(axis=0)
    x1, y1 = poly.max(axis=0)
    margin, gap = 0.6 * size, 1.2 * size
    out: list[NDArray[np.float64]] = []
    tries = 0
    while len(out) < n and tries < 20000:
        tries += 1
        p = np.array([rng.uniform(x0 + margin, x1 - margin), rng.uniform(y0 + margin, y1 - margin)])
        if all(np.hypot(*(p - q)) >= gap for q in out):
            out.append(p)
    if len(out) < n:
        raise ValueError(f"{n} pebbles do not fit in one layer")
    return np.array(out).reshape(-1, 2)


@contextlib.contextmanager
def single_layer() -> Iterator[None]:
    """vision.synth draws handfuls that pile up; a tally spread does not (placement only)."""
    from vision import synth

    with mock.patch.object(synth, "_place", _spread_place):
        yield


def spread_counts(total: int, rng: np.random.Generator) -> list[int]:
    """``total`` small pieces over the ten citizen squares, unevenly, at most 10 a square."""
    while True:
        weights = rng.dirichlet(np.full(10, 3.0))
        per = rng.multinomial(total, weights)
        if per.max() <= 10:
            break
    board = [0] * 12
    for sq, n in zip(CITIZENS, per, strict=True):
        board[sq] = int(n)
    return board


def spread_scene(
    seed: int, size: tuple[int, int] = (1280, 960)
) -> tuple[NDArray[np.uint8], list[int], tuple[int, int], dict[str, Any]]:
    """One tally scene: image, true counts per ring square, big stones on 0 / 6, truth."""
    from vision.synth import render_scene

    rng = np.random.default_rng([seed, 16])
    total = int(rng.integers(10, 71))
    board = spread_counts(total, rng)
    nbig = int(rng.choice(3, p=[0.5, 0.3, 0.2]))
    big = ((1, 0), (0, 1))[int(rng.integers(2))] if nbig == 1 else (nbig // 2, nbig // 2)
    with single_layer():
        image, truth = render_scene(board, big, seed, size=size)
    return image, board, big, truth


def reading_of(seed: int) -> dict[str, Any]:
    """The spread reading of scene ``seed`` with its truth, cached as JSON."""
    path = CACHE / f"reading_{seed}.json"
    if path.is_file():
        cached: dict[str, Any] = json.loads(path.read_text())
        return cached
    from companion.commands.tally import read_spread

    image, board, big, truth = spread_scene(seed)
    reading = read_spread(image, also_at=LEVELS)
    corner_err = None
    if reading.found:
        corner_err = float(np.abs(reading.corners - np.array(truth["corners"])).max())
    record: dict[str, Any] = {
        "seed": seed,
        "board": board,
        "big": list(big),
        "found": reading.found,
        "quality": reading.quality,
        "corner_err_px": corner_err,
        "ground": truth["conditions"]["ground"],
        "squares": [[s.peaks, round(s.mass, 4), round(s.big_prob, 4)] for s in reading.squares],
        "outside": round(reading.outside, 3),
        "peaks_at": {str(k): list(v) for k, v in reading.peaks_at.items()},
    }
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return record


def squares_of(record: dict[str, Any], level: float | None = None) -> list[SpreadSquare]:
    """The squares as read, with peaks counted at ``level`` (default: the shipped threshold)."""
    peaks = [p for p, _, _ in record["squares"]]
    if level is not None:
        peaks = record["peaks_at"][str(level)]
    return [
        SpreadSquare(int(n), float(m), float(b))
        for n, (_, m, b) in zip(peaks, record["squares"], strict=True)
    ]


#: Corner error (px) beyond which a scene counts as located wrong (for the split figures).
LOCATED_PX = 20.0


def _scores(
    records: list[dict[str, Any]], model: SpreadModel, level: float | None
) -> dict[str, Any]:
    exact = inside = bigs_ok = 0
    widths: list[int] = []
    misses: list[str] = []
    for r in records:
        t = count_spread(squares_of(r, level), model, outside=r["outside"])
        truth = sum(r["board"])
        exact += t.total == truth
        inside += t.low <= truth <= t.high
        bigs_ok += t.big == sum(r["big"])
        widths.append(t.high - t.low)
        if t.total != truth:
            misses.append(f"{t.total}/{truth} [{t.low}-{t.high}]")
    n = max(len(records), 1)
    return {
        "scenes": len(records),
        "exact_total": round(exact / n, 4),
        "in_interval": round(inside / n, 4),
        "big_right": round(bigs_ok / n, 4),
        "median_width": statistics.median(widths) if widths else None,
        "misses (read/true [interval])": misses[:12],
    }


def evaluate(
    records: list[dict[str, Any]], model: SpreadModel, level: float | None = None
) -> dict[str, Any]:
    """All scenes with a board found, then split by whether the board was located right."""
    found = [r for r in records if r["found"]]
    right = [r for r in found if (r["corner_err_px"] or 1e9) < LOCATED_PX]
    wrong = [r for r in found if (r["corner_err_px"] or 1e9) >= LOCATED_PX]
    grounds = sorted({r["ground"] for r in wrong})
    return {
        "scenes": len(records),
        "board_found": len(found),
        "all": _scores(found, model, level),
        "located_right": _scores(right, model, level),
        "located_wrong": {**_scores(wrong, model, level), "grounds": grounds},
    }


def time_still(seeds: range) -> tuple[float, float, float]:
    """Median ms of ``tally_image`` on a still JPEG (decode, locate, count, tally maths),
    its CPU ms (what a shared, busy machine cannot inflate), and the live path's ms
    (the fixed camera's outline known: count and maths only)."""
    from companion.commands.tally import read_spread, tally_image
    from vision.config import VisionConfig
    from vision.errors import BoardNotFoundError
    from vision.locate import locate_board

    config = VisionConfig()
    still, cpu, live = [], [], []
    for seed in seeds:
        image, _, _, _ = spread_scene(seed)
        path = CACHE / f"still_{seed}.jpg"
        cv2.imwrite(str(path), image)
        t0, c0 = time.perf_counter(), time.process_time()
        tally_image(str(path), config)
        still.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        try:
            outline = locate_board(image, config.locate, np.random.default_rng(config.locate.seed))
        except BoardNotFoundError:
            continue
        t0 = time.perf_counter()
        reading = read_spread(image, config, outline=outline)
        count_spread(reading.squares, outside=reading.outside)
        live.append((time.perf_counter() - t0) * 1000)
    return statistics.median(still), statistics.median(cpu), statistics.median(live)


def write_frames(out: Path) -> None:
    """Two small stills for the demo: the heaps at the end of the demo's game (rules V40:
    A 37 pebbles and a quan, B 13 and a quan), each spread in one layer."""
    from vision.synth import render_scene

    out.mkdir(parents=True, exist_ok=True)
    for name, seed, board, big in (
        ("spread_a", 3, [0, 4, 3, 5, 4, 3, 0, 4, 3, 4, 4, 3], (1, 0)),
        ("spread_b", 3, [0, 1, 2, 1, 2, 1, 0, 1, 2, 1, 1, 1], (0, 1)),
    ):
        with single_layer():
            image, _ = render_scene(
                board, big, seed, size=(960, 720), ground="concrete", tilt_deg=12.0
            )
        cv2.imwrite(str(out / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 80])
        (out / f"{name}.json").write_text(json.dumps({"board": board, "big": list(big)}) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scenes", type=int, default=300, help="held-out scenes to evaluate")
    ap.add_argument("--fit", action="store_true", help="refit the spread model first")
    ap.add_argument("--fit-scenes", type=int, default=200)
    ap.add_argument("--timing", type=int, default=15, help="stills to time")
    ap.add_argument("--write-frames", metavar="DIR", type=Path)
    args = ap.parse_args()
    if args.write_frames:
        write_frames(args.write_frames)
        return 0
    cv2.setNumThreads(1)
    model = SpreadModel()
    if args.fit:
        train = [reading_of(s) for s in range(FIT_SEEDS, FIT_SEEDS + args.fit_scenes)]
        located = [r for r in train if r["found"] and (r["corner_err_px"] or 1e9) < LOCATED_PX]
        model = fit_spread_model([(squares_of(r), r["board"]) for r in located], model)
        print(f"fitted on {len(located)} of {len(train)} scenes (seeds {FIT_SEEDS}..), table:")
        for row in model.table:
            print("    (" + ", ".join(f"{p:.4f}" for p in row) + "),")
    held = [reading_of(s) for s in range(EVAL_SEEDS, EVAL_SEEDS + args.scenes)]
    print(json.dumps(evaluate(held, model), indent=1))
    if args.timing:
        still, cpu, live = time_still(range(EVAL_SEEDS, EVAL_SEEDS + args.timing))
        print(
            f"tally of a 1280x960 still, median of {args.timing}: {still:.0f} ms wall,"
            f" {cpu:.0f} ms CPU (1 thread)"
        )
        print(f"  the same with the board already located (live camera): {live:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the wide-generator training and held-out scenes (see ``training.counter``).

    python -m training.counter gen --split train --count 600 [--out DIR] [--start I]

Resumable: a scene whose JSON exists is skipped (the JPEG is written first). Prints the
rate and the time left. Default folder ``$OANQUAN_CACHE/synth-wide-v1`` (else
``~/.cache/oanquan/synth-wide-v1``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.geometry import homography_from_corners, project
from vision.synth import (
    HELD_OUT_GROUND,
    HELD_OUT_PIECE,
    PIECE_FAMILIES,
    WIDE_GROUNDS,
    render_wide,
)

VERSION = "synth-wide-v1"
TRAIN_GROUNDS = tuple(g for g in WIDE_GROUNDS if g != HELD_OUT_GROUND)
TRAIN_PIECES = tuple(p for p in PIECE_FAMILIES if p != HELD_OUT_PIECE)
#: split -> (seed base, grounds, piece families)
SPLITS: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {
    "train": (0, TRAIN_GROUNDS, TRAIN_PIECES),
    "val": (1_000_000, TRAIN_GROUNDS, TRAIN_PIECES),
    "heldout-ground": (2_000_000, (HELD_OUT_GROUND,), TRAIN_PIECES),
    "heldout-piece": (3_000_000, TRAIN_GROUNDS, (HELD_OUT_PIECE,)),
}


def cache_root() -> Path:
    env = os.environ.get("OANQUAN_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "oanquan") / VERSION


def light_kind(cond: dict[str, Any]) -> str:
    """One word for the scene's light, like render-public's ``conditions.light.type``."""
    if cond["exposure"] < 0.65:
        return "low"
    if cond["glare"] > 0:
        return "glare"
    if cond["shadow"]:
        return "shadows"
    if max(abs(t - 1.0) for t in cond["tint"]) > 0.15:
        return "tinted"
    return "even"


def truth_json(truth: dict[str, Any], quality: int) -> dict[str, Any]:
    """render-public's keys that the trainers and bench/vision.py read, plus ground points."""
    h = homography_from_corners(np.array(truth["corners"], np.float64))
    pieces = []
    for p in truth["pieces"]:
        gx, gy = project(h, np.array([p["position"]], np.float64))[0]
        pieces.append({**p, "ground_px": [round(float(gx), 2), round(float(gy), 2)]})
    cond = truth["conditions"]
    cond = {
        **cond,
        "light": {"type": light_kind(cond)},
        "camera": {"tilt_deg": cond["tilt_deg"]},
        "jpeg_quality": quality,
    }
    return {**truth, "pieces": pieces, "conditions": cond}


def generate(split: str, count: int, start: int, out: Path, size: tuple[int, int]) -> None:
    base, grounds, pieces = SPLITS[split]
    folder = out / split
    folder.mkdir(parents=True, exist_ok=True)
    t0, done = time.time(), 0
    for i in range(start, count):
        js = folder / f"img_{i:05d}.json"
        if js.exists():
            continue
        image, truth = render_wide(base + i, grounds=grounds, pieces=pieces, size=size)
        cv2.imwrite(str(js.with_suffix(".jpg")), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        js.write_text(json.dumps(truth_json(truth, 95)), "utf-8")
        done += 1
        rate = (time.time() - t0) / done
        left = sum(not (folder / f"img_{j:05d}.json").exists() for j in range(i + 1, count))
        print(
            f"{split} {i + 1}/{count}: {rate:.1f} s/scene, ~{left * rate / 60:.0f} min left",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="write scenes of one split")
    g.add_argument("--split", choices=sorted(SPLITS), required=True)
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--start", type=int, default=0)
    g.add_argument("--out", type=Path, default=None)
    g.add_argument("--size", default="800x600")
    args = ap.parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        print(f"--size must be WxH, got {args.size!r}", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    generate(args.split, args.count, args.start, args.out or cache_root(), (w, h))
    return 0


if __name__ == "__main__":
    sys.exit(main())

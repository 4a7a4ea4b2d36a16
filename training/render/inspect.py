"""Look at a rendered dataset: `python -m training.render.inspect DIR [--overlay OUT --limit N]`.

Prints what the folder holds (scenes, families, counts per region, hidden pieces, seconds
per image) and optionally draws each scene's ground-truth polygons, counts and piece
centres on a copy of its image, the quickest check that truth and picture agree.
Needs only numpy and Pillow (runs in the project venv).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from training.render.families import split_of


def overlay(truth: dict[str, Any], image: Image.Image) -> Image.Image:
    """The image with region outlines (red), counts (green) and piece centres drawn on it."""
    im = image.convert("RGB")
    dr = ImageDraw.Draw(im)
    for v in truth["regions"].values():
        pts = [tuple(p) for p in v["polygon"]]
        dr.line([*pts, pts[0]], fill=(255, 0, 0), width=1)
        cx = sum(p[0] for p in pts) / len(pts)
        cy = sum(p[1] for p in pts) / len(pts)
        label = f"{v['count']}{'B' if v['big'] else ''}"
        dr.text((cx, cy), label, fill=(0, 255, 0))
    for p in truth["pieces"]:
        if p["center_px"]:
            x, y = p["center_px"]
            colour = (0, 255, 255) if p["visible"] else (255, 0, 255)
            dr.ellipse([x - 1.5, y - 1.5, x + 1.5, y + 1.5], outline=colour)
    return im


def summarise(truths: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of families, splits and per-region pile sizes over the dataset."""
    per_region = [v["count"] for t in truths for v in t["regions"].values()]
    board = [p for t in truths for p in t["pieces"] if p["on_board"]]
    secs = [t["conditions"].get("total_seconds", 0.0) for t in truths]
    return {
        "scenes": len(truths),
        "splits": dict(Counter(split_of(t["conditions"]) for t in truths)),
        "grounds": dict(Counter(t["conditions"]["ground_family"] for t in truths)),
        "pieces": dict(Counter(t["conditions"]["piece_family"] for t in truths)),
        "light": dict(Counter(t["conditions"]["light"]["type"] for t in truths)),
        "hands": sum(t["hand"]["present"] for t in truths),
        "cut_by_frame": sum(t["board_partially_outside"] for t in truths),
        "region_count_percentiles_50_90_99_max": (
            [float(np.percentile(per_region, q)) for q in (50, 90, 99)] + [max(per_region)]
            if per_region
            else []
        ),
        "regions_with_8_or_more": sum(c >= 8 for c in per_region),
        "board_pieces": len(board),
        "hidden_board_pieces": sum(not p["visible"] for p in board),
        "mean_seconds_per_image": round(float(np.mean(secs)), 1) if secs else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.render.inspect", description=__doc__)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--overlay", type=Path, default=None, help="write *_truth.png here")
    ap.add_argument("--limit", type=int, default=12, help="how many overlays to draw")
    args = ap.parse_args(argv)
    files = sorted(args.folder.glob("img_*.json"))
    if not files:
        print(f"inspect: no img_*.json in {args.folder}", file=sys.stderr)
        return 2
    truths = [json.loads(f.read_text()) for f in files]
    print(json.dumps(summarise(truths), indent=1))
    if args.overlay:
        args.overlay.mkdir(parents=True, exist_ok=True)
        for f, t in list(zip(files, truths, strict=True))[: args.limit]:
            with Image.open(f.with_suffix(".jpg")) as im:
                overlay(t, im).save(args.overlay / f"{f.stem}_truth.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())

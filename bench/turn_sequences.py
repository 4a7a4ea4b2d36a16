"""Game sequences as a camera on P1's side would take them: every photo turned half round.

    python bench/turn_sequences.py ../shared/datasets/render-public ~/.cache/oanquan/sequences/rp-turned
    python bench/track.py ~/.cache/oanquan/sequences/rp-turned

A board drawn on the ground looks the same turned by 180 degrees, so vision names
its corners with south (P0's side) nearer the bottom of the image; the referee
must find out from the game where P0 really sits. Turning every image of a
sequence (and its truth's corners) puts P0's row at the top: the same games,
seen from the other side. Every ``sequence_*`` folder under SOURCE is copied to
DEST (folders of nested datasets are named after their parent, so that two
sets can share one DEST).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import cv2


def turn_folder(folder: Path, out: Path) -> int:
    """Copy one sequence turned half round; returns the frames written."""
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    for image_path in sorted(folder.glob("*.jpg")) + sorted(folder.glob("*.png")):
        image = cv2.imread(str(image_path))
        if image is None:
            raise ValueError(f"cannot read {image_path}")
        h, w = image.shape[:2]
        turned = cv2.rotate(image, cv2.ROTATE_180)
        cv2.imwrite(str(out / image_path.name), turned, [cv2.IMWRITE_JPEG_QUALITY, 95])
        truth_path = image_path.with_suffix(".json")
        truth = json.loads(truth_path.read_text("utf-8"))
        truth["corners"] = [[w - 1 - x, h - 1 - y] for x, y in truth["corners"]]
        (out / truth_path.name).write_text(json.dumps(truth), "utf-8")
        written += 1
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="folder holding sequence_* folders")
    parser.add_argument("dest", type=Path, help="where the turned copies go")
    args = parser.parse_args()
    folders = sorted(p for p in args.source.rglob("sequence_*") if p.is_dir())
    if not folders:
        parser.error(f"no sequence_* folders under {args.source}")
    parents = {f.parent for f in folders}
    for folder in folders:
        name = folder.name if len(parents) == 1 else f"sequence_{folder.parent.name}_{folder.name}"
        try:
            count = turn_folder(folder, args.dest / name)
        except (ValueError, OSError, KeyError, json.JSONDecodeError) as exc:
            print(f"turn_sequences: {folder}: {exc}", file=sys.stderr)
            return 1
        print(f"{args.dest / name}: {count} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main())

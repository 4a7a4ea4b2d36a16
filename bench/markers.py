"""How well ``oanquan calibrate --markers`` finds a board's corners from marks put on them.

    python bench/markers.py DATASET_DIR                     # render-public layout, singles
    python bench/markers.py DATASET_DIR --first-index 80 --limit 120
    python bench/markers.py ~/.cache/oanquan/renders/train-v4 --limit 300   # our renders
    python bench/markers.py DIR --grain 16            # dim light: 16 grey levels of grain
    python bench/markers.py DIR --grain 16 --gather   # ... each photo as the device takes it

Each photo of the folder (its ``singles/``, or the folder itself) is the board before the marks; a pebble drawn
on each of its four true outer corners (``vision.synth.with_marks``: 0.1-0.25 of a
square wide, grey, white, dark or brown, lit from one side), the whole frame's light
drifted by up to 5 % and fresh sensor noise make the photo after. Prints the share of
photos where four marks were found, their centres' distance to the true corners
(median, 95th percentile and worst, in pixels and in % of the board's diagonal, the
measure ``bench/vision.py`` calls a board found), the reasons given where they were
not, and the same per ground. Boards partly out of the frame are left out (a corner
off the photo cannot be marked in it). ``--grain`` adds that much sensor noise (grey
levels, per frame) to both photos, as dim light does; ``--gather`` takes each photo
as the device's menu does (``companion.appliance.gather.Gatherer``: from fresh frames,
the mean of several where two of them show the noise high).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.errors import BoardNotFoundError
from vision.locate.markers import marker_corners
from vision.synth import with_marks

#: Colours (BGR) of the marks a person might pick up.
COLOURS = ((150, 160, 170), (235, 238, 240), (40, 42, 45), (60, 100, 150))


def marked(image: np.ndarray, corners: np.ndarray, seed: int) -> np.ndarray:
    """The photo after: a mark on each corner, the light drifted, fresh noise."""
    rng = np.random.default_rng(seed)
    side = float(np.linalg.norm(corners[1] - corners[0])) / 5.0
    colour = COLOURS[int(rng.integers(len(COLOURS)))]
    out = with_marks(image, corners, float(rng.uniform(0.1, 0.25)) * side, seed, colour)
    gain = rng.uniform(0.95, 1.05)
    noisy = out.astype(np.float32) * gain + rng.normal(0.0, 2.0, out.shape)
    return np.asarray(np.clip(noisy, 0, 255), np.uint8)


def photographed(
    image: np.ndarray, grain: float, rng: np.random.Generator, gather: bool
) -> np.ndarray:
    """What the camera gives of ``image``: one frame with ``grain`` grey levels of fresh
    noise, or with ``gather`` the scene as the device gathers it from such frames."""

    def frame() -> np.ndarray:
        noise = rng.normal(0.0, grain, image.shape) if grain else 0.0
        return np.asarray(np.clip(image.astype(np.float32) + noise, 0, 255), np.uint8)

    if not gather:
        return frame()
    from companion.appliance.gather import Gatherer

    gatherer = Gatherer()
    while (scene := gatherer.add(frame())) is None:
        pass
    return scene.image


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--first-index", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0, help="photos to read (0: all)")
    ap.add_argument("--grain", type=float, default=0.0, help="sensor noise, grey levels")
    ap.add_argument("--gather", action="store_true", help="each photo as the device takes it")
    args = ap.parse_args()
    if args.grain < 0:
        ap.error("--grain: 0 or more grey levels")
    folder = args.dataset / "singles" if (args.dataset / "singles").is_dir() else args.dataset
    files = sorted(folder.glob("img_*.json"))
    files = [f for f in files if int(f.stem.split("_")[1]) >= args.first_index]
    if args.limit:
        files = files[: args.limit]
    if not files:
        ap.error(f"{folder}: no img_*.json at index {args.first_index} or later")
    errors: list[float] = []
    shares: list[float] = []
    reasons: Counter[str] = Counter()
    per_ground: dict[str, list[float | None]] = defaultdict(list)
    left_out = 0
    for path in files:
        truth = json.loads(path.read_text())
        if truth.get("board_partially_outside"):
            left_out += 1
            continue
        read = cv2.imread(str(path.with_suffix(".jpg")))
        if read is None:
            ap.error(f"{path.with_suffix('.jpg')}: not a readable image")
        image = np.asarray(read, np.uint8)
        corners = np.array(truth["corners"], np.float64)
        ground = str(truth.get("conditions", {}).get("ground", "?"))
        index = int(path.stem.split("_")[1])
        rng = np.random.default_rng(index)
        before = photographed(image, args.grain, rng, args.gather)
        after = photographed(marked(image, corners, index), args.grain, rng, args.gather)
        try:
            found = marker_corners(before, after)
        except BoardNotFoundError as exc:
            reasons[exc.reason.split(":")[0]] += 1
            per_ground[ground].append(None)
            continue
        diag = float(np.linalg.norm(corners[2] - corners[0]))
        worst = max(float(np.min(np.linalg.norm(corners - p, axis=1))) for p in found)
        errors.append(worst)
        shares.append(100.0 * worst / diag)
        per_ground[ground].append(100.0 * worst / diag)
    n = len(errors) + sum(reasons.values())
    print(f"{n} photos ({left_out} left out: board partly out of the frame)")
    print(f"four marks found: {len(errors)} of {n} ({100.0 * len(errors) / max(n, 1):.1f}%)")
    if errors:
        e, s = np.array(errors), np.array(shares)
        within = int((s <= 3.0).sum())
        print(
            f"worst corner of a photo: median {np.median(e):.1f} px ({np.median(s):.2f}% of"
            f" the diagonal), 95th {np.percentile(e, 95):.1f} px ({np.percentile(s, 95):.2f}%),"
            f" worst {e.max():.1f} px ({s.max():.2f}%); within 3% of the diagonal:"
            f" {within} of {len(s)}"
        )
    for reason, count in reasons.most_common():
        print(f"not found, {count}: {reason}")
    for ground, values in sorted(per_ground.items()):
        ok = [v for v in values if v is not None]
        median = f", worst corner median {np.median(ok):.2f}%" if ok else ""
        print(f"  {ground}: {len(ok)} of {len(values)} found{median}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

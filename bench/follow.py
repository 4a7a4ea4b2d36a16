"""How well given corners follow a knocked camera (``vision.locate.follow``).

    python bench/follow.py DIR...                  # folders of game frames (frame_*.jpg)
    python bench/follow.py --singles DIR --limit 100   # single photos (img_*.json + .jpg)

Games: each folder is one fixed camera's game. Its frames as they are must never move
the corners (a false follow); then the same game is knocked from its fifth frame on
(the camera turned about its centre, as a knocked pole turns it: panned or tilted
1.5-6 degrees in any direction and rolled up to 2, through a 66-degree lens, drawn
from ``--seed``; the ground is seen in perspective afresh): how many knocks are
followed, after how many frames, and how far the carried corners lie from the
knocked true ones (% of the board's diagonal). Singles: each photo is its own camera,
knocked the same way, with fresh sensor noise in each of the five frames after the
knock (nothing else changes), per ground. Corners come from each folder's first
frame's truth (render-public's format).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.locate.follow import ViewFollower, camera_view, carried

#: Frames of the game before the knock.
BEFORE = 4
#: Frames a knocked single is shown.
AFTER = 5


def knock(rng: np.random.Generator, size: tuple[int, int]) -> NDArray[np.float64]:
    """The 3x3 map of a knocked camera's frame: the camera turned about its centre (a
    pole knocked), panned and tilted 1.5-6 degrees in any direction and rolled up to 2,
    seen through a 66-degree lens (a Pi camera's)."""
    w, h = size
    f = w / 2 / np.tan(np.radians(33.0))
    k = np.array([[f, 0.0, w / 2], [0.0, f, h / 2], [0.0, 0.0, 1.0]])
    swing = np.radians(rng.uniform(1.5, 6.0))
    way = rng.uniform(0.0, 2.0 * np.pi)
    roll = np.radians(rng.uniform(-2.0, 2.0))
    axis = np.array([np.sin(way) * swing, np.cos(way) * swing, roll])
    turn, _ = cv2.Rodrigues(axis)
    return np.asarray(k @ turn @ np.linalg.inv(k), np.float64)


def moved(image: NDArray[np.uint8], m: NDArray[np.float64]) -> NDArray[np.uint8]:
    h, w = image.shape[:2]
    return np.asarray(
        cv2.warpPerspective(image, m, (w, h), borderMode=cv2.BORDER_REPLICATE), np.uint8
    )


def off(corners: NDArray[np.float64], warp: NDArray[np.float64], m: NDArray[np.float64]) -> float:
    """The farthest carried corner from the knocked true one, % of the board's diagonal."""
    truth = carried(corners, m)
    diag = float(np.linalg.norm(corners[2] - corners[0]))
    return float(np.linalg.norm(carried(corners, warp) - truth, axis=1).max()) / diag * 100


def games(folders: list[Path], rng: np.random.Generator) -> None:
    frames_seen = false = knocks = 0
    late: list[int] = []
    errors: list[float] = []
    for folder in folders:
        files = sorted(folder.glob("frame_*.jpg"))
        if len(files) <= BEFORE + 1:
            continue
        images = [np.asarray(cv2.imread(str(f)), np.uint8) for f in files]
        truth = json.loads(files[0].with_suffix(".json").read_text())
        corners = np.array(truth["corners"], np.float64)
        follower = ViewFollower(camera_view(images[0]))
        for image in images[1:]:
            frames_seen += 1
            false += follower.step(image) is not None
        m = knock(rng, (images[0].shape[1], images[0].shape[0]))
        follower = ViewFollower(camera_view(images[0]))
        knocks += 1
        for k, image in enumerate(images[1:], 1):
            warp = follower.step(moved(image, m) if k > BEFORE else image)
            if warp is not None:
                late.append(k - BEFORE)
                errors.append(off(corners, warp, m))
                break
    print(f"{len(folders)} games, {frames_seen} frames of a fixed camera: {false} false follows")
    if not knocks:
        return
    e = np.array(errors) if errors else np.zeros(1)
    print(
        f"knocked from frame {BEFORE + 1}: {len(errors)} of {knocks} followed"
        + (
            f", after {int(np.median(late))} frames (median; at most {max(late)}),"
            f" corners off by {np.median(e):.2f}% of the diagonal (median), worst {e.max():.2f}%"
            if errors
            else ""
        )
    )


def singles(folder: Path, limit: int, rng: np.random.Generator) -> None:
    per: dict[str, list[float | None]] = defaultdict(list)
    for path in sorted(folder.glob("img_*.json"))[: limit or None]:
        truth = json.loads(path.read_text())
        if truth.get("board_partially_outside"):
            continue
        image = np.asarray(cv2.imread(str(path.with_suffix(".jpg"))), np.uint8)
        corners = np.array(truth["corners"], np.float64)
        m = knock(rng, (image.shape[1], image.shape[0]))
        follower = ViewFollower(camera_view(image))
        got: float | None = None
        for _ in range(AFTER):
            noisy = moved(image, m).astype(np.float32) + rng.normal(0.0, 3.0, image.shape)
            warp = follower.step(np.asarray(np.clip(noisy, 0, 255), np.uint8))
            if warp is not None:
                got = off(corners, warp, m)
                break
        per[str(truth.get("conditions", {}).get("ground", "?"))].append(got)
    found = [v for vs in per.values() for v in vs if v is not None]
    n = sum(len(vs) for vs in per.values())
    worst = f", worst {max(found):.2f}% of the diagonal" if found else ""
    print(f"{n} singles knocked: {len(found)} followed{worst}")
    for ground, values in sorted(per.items()):
        ok = [v for v in values if v is not None]
        print(f"  {ground}: {len(ok)} of {len(values)}" + (f", worst {max(ok):.2f}%" if ok else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("folders", type=Path, nargs="*", help="game folders (frame_*.jpg)")
    ap.add_argument("--singles", type=Path, help="a folder of single photos (img_*.json)")
    ap.add_argument("--limit", type=int, default=0, help="singles to read (0: all)")
    ap.add_argument("--seed", type=int, default=52)
    args = ap.parse_args()
    if not args.folders and args.singles is None:
        ap.error("give game folders, or --singles DIR")
    for folder in [*args.folders, *([args.singles] if args.singles else [])]:
        if not folder.is_dir():
            ap.error(f"{folder}: no such folder")
    rng = np.random.default_rng(args.seed)
    if args.folders:
        games(args.folders, rng)
    if args.singles is not None:
        singles(args.singles, args.limit, rng)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Print the camera-height table of hardware.md: how high, and how many pixels per pebble.

Kept as a script so the table can be recomputed for another board, camera or
margin instead of trusting numbers copied by hand. Model: a pinhole camera
looking straight down at a flat board, so the scale is the same everywhere on
the board (lens distortion of the wide lenses makes the image edges a few
per cent coarser).

    python docs/camera_height.py [--square 0.40] [--pebble 0.030] [--margin 0.10]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Camera:
    name: str
    hfov_deg: float
    vfov_deg: float
    width_px: int
    height_px: int


CAMERAS = (
    Camera("Camera Module 3 (66 x 41 deg), 2304x1296", 66.0, 41.0, 2304, 1296),
    Camera("Camera Module 3 (66 x 41 deg), 4608x2592", 66.0, 41.0, 4608, 2592),
    Camera("Camera Module 3 Wide (102 x 67 deg), 2304x1296", 102.0, 67.0, 2304, 1296),
    Camera("Camera Module 3 Wide (102 x 67 deg), 4608x2592", 102.0, 67.0, 4608, 2592),
    Camera("USB webcam 1080p (~70 x 43 deg), 1920x1080", 70.0, 43.0, 1920, 1080),
)


def required_height(cam: Camera, length_m: float, width_m: float) -> float:
    """Lowest height (m) at which a length x width area fits the image, long side along x."""
    by_length = length_m / (2 * math.tan(math.radians(cam.hfov_deg) / 2))
    by_width = width_m / (2 * math.tan(math.radians(cam.vfov_deg) / 2))
    return max(by_length, by_width)


def px_per_metre(cam: Camera, height_m: float) -> float:
    """Image pixels per metre on the board at that height (straight down)."""
    return cam.width_px / (2 * height_m * math.tan(math.radians(cam.hfov_deg) / 2))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--square", type=float, default=0.40, help="square side, m")
    p.add_argument("--pebble", type=float, default=0.030, help="pebble diameter, m")
    p.add_argument("--quan-depth", type=float, default=0.95, help="semicircle depth, squares")
    p.add_argument("--margin", type=float, default=0.10, help="free border, fraction per side")
    a = p.parse_args(argv)
    length = (5 + 2 * a.quan_depth) * a.square * (1 + 2 * a.margin)
    width = 2 * a.square * (1 + 2 * a.margin)
    print(f"area to cover: {length:.2f} m x {width:.2f} m")
    print("| camera and mode | height | px per square | px per pebble |")
    print("|---|---|---|---|")
    for cam in CAMERAS:
        h = required_height(cam, length, width)
        ppm = px_per_metre(cam, h)
        print(f"| {cam.name} | {h:.2f} m | {ppm * a.square:.0f} | {ppm * a.pebble:.1f} |")


if __name__ == "__main__":
    main()

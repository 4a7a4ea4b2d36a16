"""``oanquan calibrate``: the board's corners given by hand, for the config file.

For a board the automatic fit misses or gets wrong (docs/vision_failures.md),
the user gives its four corners once; this writes them as a ``[vision.locate]``
table that ``oanquan run``, ``analyze`` and ``selftest`` read from the config
file. The corners are checked before anything is written (finite, a convex
outline of some size, inside or near the image), and the text written is read
back through the config loader, so a file it writes always loads. Every
output path is checked before the work starts; a problem is one line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.commands._cli import guarded, output_file, write_text
from companion.commands.analyze import read_image
from vision.errors import ImageReadError

#: What ``--annotate`` can write (OpenCV picks the format by the name's ending).
ANNOTATE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")


def _parse_corners(text: str) -> NDArray[np.float64]:
    try:
        vals = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    except ValueError:
        raise ValueError("--corners needs 8 numbers: x1,y1,x2,y2,x3,y3,x4,y4") from None
    if len(vals) != 8:
        raise ValueError("--corners needs 8 numbers: x1,y1,x2,y2,x3,y3,x4,y4")
    if not all(np.isfinite(vals)):
        raise ValueError("--corners: every number must be finite (no nan or inf)")
    return np.array(vals, dtype=np.float64).reshape(4, 2)


def order_corners(pts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Any 4 rectangle corners -> SW, SE, NE, NW by the image convention.

    The long sides are found from the convex order; south is the long side
    nearer the image bottom and west its left end.
    """
    from vision.geometry import canonical_corners

    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    ring = pts[np.argsort(ang)]
    sides = [np.linalg.norm(ring[(i + 1) % 4] - ring[i]) for i in range(4)]
    start = 0 if sides[0] + sides[2] >= sides[1] + sides[3] else 1
    ordered = np.array([ring[(start + k) % 4] for k in range(4)])
    return canonical_corners(ordered)


def calibration_toml(corners: NDArray[np.float64], source: str) -> str:
    """TOML text a vision config loader accepts (``[vision.locate]``)."""
    pts = ", ".join(f"[{x:.1f}, {y:.1f}]" for x, y in corners)
    return (
        f"# board corners for {source}: SW, SE, NE, NW in image pixels\n"
        "# used when automatic localisation fails (oanquan analyze --config FILE)\n"
        "[vision.locate]\n"
        f"manual_corners = [{pts}]\n"
    )


def calibrate_main(argv: list[str]) -> int:
    """Entry point of ``oanquan calibrate IMAGE [--corners ...] [--out FILE]``."""
    return guarded("oanquan calibrate", lambda: _calibrate(argv))


def _calibrate(argv: list[str]) -> int:
    from companion.appliance.config import ConfigError, corners_problem, parse_config

    ap = argparse.ArgumentParser(
        prog="oanquan calibrate",
        description="give the board corners by hand (or check the automatic ones)",
    )
    ap.add_argument("image", metavar="IMAGE", help="a photo from the camera, board in view")
    ap.add_argument(
        "--corners",
        help="x1,y1,...,x4,y4: the 4 outer corners of the 2x5 "
        "rectangle in any order (default: find them automatically)",
    )
    ap.add_argument("--out", metavar="FILE", help="write the TOML here (default: stdout only)")
    ap.add_argument("--annotate", metavar="PNG", help="draw the outline for checking")
    args = ap.parse_args(argv)
    try:
        out = output_file(args.out, "--out") if args.out else None
        drawing = (
            output_file(args.annotate, "--annotate", ANNOTATE_SUFFIXES) if args.annotate else None
        )
    except ValueError as exc:
        print(f"oanquan calibrate: {exc}", file=sys.stderr)
        return 2
    try:
        image = read_image(args.image)
    except ImageReadError as exc:
        print(f"oanquan calibrate: {exc}", file=sys.stderr)
        return 1
    from vision.errors import BoardNotFoundError
    from vision.locate import locate_board, outline_from_corners

    if args.corners:
        try:
            corners = order_corners(_parse_corners(args.corners))
        except ValueError as exc:
            print(f"oanquan calibrate: {exc}", file=sys.stderr)
            return 2
        problem = corners_problem(corners.tolist())
        if problem:
            print(f"oanquan calibrate: --corners: {problem}", file=sys.stderr)
            return 2
        h, w = image.shape[:2]
        if np.any(np.abs(corners) > 4 * max(h, w)):
            print("oanquan calibrate: corners lie far outside the image", file=sys.stderr)
            return 2
        outline = outline_from_corners(corners, manual=True)
    else:
        try:
            outline = locate_board(image)
        except BoardNotFoundError as exc:
            print(
                f"oanquan calibrate: no board found ({exc.reason}); give --corners", file=sys.stderr
            )
            return 1
        corners = outline.corners
    text = calibration_toml(corners, Path(args.image).name)
    try:
        parse_config(text)  # what is written must load: the same check as oanquan run
    except ConfigError as exc:
        print(f"oanquan calibrate: the corners do not make a usable config: {exc}", file=sys.stderr)
        return 2
    print(text, end="", flush=True)
    try:
        if out is not None:
            write_text(out, text, "--out")
        if drawing is not None:
            _draw(image, outline, drawing)
    except ValueError as exc:
        print(f"oanquan calibrate: {exc}", file=sys.stderr)
        return 1
    return 0


def _draw(image: NDArray[np.uint8], outline: object, target: Path) -> None:
    """Write the image with the outline drawn, or raise ValueError naming the file."""
    from vision.annotate import annotate
    from vision.api import BoardReading

    o = outline
    reading = BoardReading(
        True,
        None,
        o.corners,  # type: ignore[attr-defined]
        (),
        o.quality,  # type: ignore[attr-defined]
        {},
        o.regions,  # type: ignore[attr-defined]
        o.homography,  # type: ignore[attr-defined]
        None,
        o,  # type: ignore[arg-type]
    )
    try:
        ok = cv2.imwrite(str(target), annotate(image, reading))
    except cv2.error as exc:
        raise ValueError(
            f"--annotate {target}: cannot write: {str(exc).split(chr(10))[0]}"
        ) from None
    if not ok:
        raise ValueError(f"--annotate {target}: cannot write")

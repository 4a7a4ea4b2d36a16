"""``oanquan analyze`` and ``oanquan calibrate``: vision on still images.

``analyze`` follows the interchange contract (interchange.md in the shared project material):
one JSON object per image, JSON Lines on stdout or one file per image with
``--json-out``; no board is an answer (exit 0), an unreadable file an error
(exit 1). ``calibrate`` writes hand-given (or automatically found) corners to
a TOML file that ``--config`` accepts, for boards the automatic fit misses.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import VisionConfig, load_config
from vision.errors import ConfigError, ImageReadError


def read_image(path: str) -> NDArray[np.uint8]:
    """Decode an image file or raise ImageReadError with a one-line reason."""
    p = Path(path)
    if not p.is_file():
        raise ImageReadError(f"no such file: {path}")
    try:
        data = np.fromfile(str(p), dtype=np.uint8)
    except OSError as exc:
        raise ImageReadError(f"cannot read {path}: {exc.strerror}") from exc
    if data.size == 0:
        raise ImageReadError(f"empty file: {path}")
    img = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if img is None:
        raise ImageReadError(f"not a readable image: {path}")
    return np.asarray(img, dtype=np.uint8)


def _round(v: float) -> float:
    return round(float(v), 1)


def analyze_image(path: str, config: VisionConfig) -> dict[str, Any]:
    """The interchange JSON object for one image."""
    from vision.api import read_board

    name = Path(path).name
    try:
        image = read_image(path)
    except ImageReadError as exc:
        return {"image": name, "error": str(exc)}
    reading = read_board(image, config, gate=False)
    out: dict[str, Any] = {"image": name, "board_found": reading.found}
    if not reading.found or reading.corners is None:
        out.update(corners=None, squares=None, reason=reading.reason or "board not found")
    else:
        out["corners"] = [[_round(x), _round(y)] for x, y in reading.corners]
        out["squares"] = [
            {
                "count": sq.count,
                "big": sq.big,
                "confidence": round(sq.confidence, 3),
                "big_prob": round(sq.big_prob, 3),
                "probs": [round(p, 4) for p in sq.probs],
            }
            for sq in reading.squares
        ]
        out["quality"] = round(reading.quality, 3)
        if reading.outline is not None and reading.outline.manual:
            out["corners_source"] = "manual"
        if reading.frame is not None and not reading.frame.ok:
            out["frame"] = {"ok": False, "reason": reading.frame.reason}
    out["timings_ms"] = {k: _round(v) for k, v in reading.timings_ms.items()}
    out["_reading"] = reading
    out["_image"] = image
    return out


def _config(path: str | None) -> VisionConfig:
    return load_config(path) if path else VisionConfig()


def analyze_main(argv: list[str]) -> int:
    """Entry point of ``oanquan analyze IMAGE... [--json-out DIR] [--annotate DIR]``."""
    ap = argparse.ArgumentParser(prog="oanquan analyze", description="count pebbles per square")
    ap.add_argument("images", nargs="+", metavar="IMAGE")
    ap.add_argument("--json-out", metavar="DIR", help="write DIR/<image stem>.json per image")
    ap.add_argument("--annotate", metavar="DIR", help="write annotated copies of the images")
    ap.add_argument("--config", metavar="TOML", help="vision settings (e.g. from calibrate)")
    args = ap.parse_args(argv)
    try:
        config = _config(args.config)
    except ConfigError as exc:
        print(f"oanquan analyze: {exc}", file=sys.stderr)
        return 2
    for d in (args.json_out, args.annotate):
        if d:
            Path(d).mkdir(parents=True, exist_ok=True)
    status = 0
    for path in args.images:
        result = analyze_image(path, config)
        reading = result.pop("_reading", None)
        image = result.pop("_image", None)
        if "error" in result:
            status = 1
        if args.annotate and reading is not None and image is not None:
            from vision.annotate import annotate

            target = Path(args.annotate) / f"{Path(path).stem}.png"
            cv2.imwrite(str(target), annotate(image, reading))
        text = json.dumps(result, ensure_ascii=False)
        if args.json_out:
            (Path(args.json_out) / f"{Path(path).stem}.json").write_text(text + "\n", "utf-8")
        else:
            print(text, flush=True)
    return status


def _parse_corners(text: str) -> NDArray[np.float64]:
    vals = [float(v) for v in text.replace(";", ",").split(",") if v.strip()]
    if len(vals) != 8:
        raise ValueError("--corners needs 8 numbers: x1,y1,x2,y2,x3,y3,x4,y4")
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
    ap = argparse.ArgumentParser(
        prog="oanquan calibrate",
        description="give the board corners by hand (or check the automatic ones)",
    )
    ap.add_argument("image", metavar="IMAGE")
    ap.add_argument(
        "--corners",
        help="x1,y1,...,x4,y4: the 4 outer corners of the 2x5 "
        "rectangle in any order (default: find them automatically)",
    )
    ap.add_argument("--out", metavar="FILE", help="write the TOML here (default: stdout only)")
    ap.add_argument("--annotate", metavar="PNG", help="draw the outline for checking")
    args = ap.parse_args(argv)
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
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text, "utf-8")
    if args.annotate:
        from vision.annotate import annotate
        from vision.api import BoardReading

        reading = BoardReading(
            True,
            None,
            outline.corners,
            (),
            outline.quality,
            {},
            outline.regions,
            outline.homography,
            None,
            outline,
        )
        cv2.imwrite(args.annotate, annotate(image, reading))
    return 0

"""``oanquan calibrate``: the board's corners given by hand, or the lens, for the config file.

For a board the automatic fit misses or gets wrong (docs/vision_failures.md),
the user gives its four corners once, as pixels or as a second photo with a
pebble on each corner (``--markers``, ``vision.locate.markers``); this writes them as a ``[vision.locate]``
table that ``oanquan run``, ``analyze`` and ``selftest`` read from the config
file. The corners are checked before anything is written (finite, a convex
outline of some size, inside or near the image), and the text written is read
back through the config loader, so a file it writes always loads. Every
output path is checked before the work starts; a problem is one line.

``--lens`` measures a wide lens instead (``vision.lens``), from the board's
chalk lines in one or more photos or, surer, from a printed chessboard's
rows and columns (``--chessboard``), and writes ``[vision.lens]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.commands._cli import guarded, output_file, write_text
from companion.commands.analyze import read_image
from vision.errors import ImageReadError
from vision.geometry import order_corners

if TYPE_CHECKING:  # (vision's heavy modules load when a command runs, not at import)
    from vision.config import VisionConfig
    from vision.lens import LensFit
    from vision.locate import Outline

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


#: a measured lens is kept only if it undoes this share of the lines' bend: a pinhole
#: camera's photos measure a small k1 from the chalk's own wobble
LENS_GAIN = 0.1
#: the most inner corners a chessboard row or column may have (OpenCV's search grows
#: with them; no printed board has more)
MAX_INNER = 50


def lens_toml(k1: float, fit: LensFit, sources: list[str]) -> str:
    """TOML text a vision config loader accepts (``[vision.lens]``), saying what it rests on."""
    kept = "" if k1 else f" (measured {fit.lens.k1:+.3f}: too little to undo)"
    return (
        f"# lens measured on {', '.join(sources)}: {fit.points} points on {fit.lines} lines,"
        f" {fit.rms_pinhole:.2f} px off straight as taken, {fit.rms:.2f} px undone"
        f" ({fit.straightened:.0%} of the bend){kept}\n"
        "[vision.lens]\n"
        f"k1 = {k1:.3f}\n"
    )


def _calibrate(argv: list[str]) -> int:
    from companion.appliance.config import ConfigError, corners_problem, parse_config
    from companion.commands.analyze import vision_config
    from vision.errors import ConfigError as VisionConfigError

    ap = argparse.ArgumentParser(
        prog="oanquan calibrate",
        description="give the board corners by hand (or check the automatic ones), "
        "or measure a wide lens from photos of the board",
    )
    ap.add_argument(
        "image",
        metavar="IMAGE",
        nargs="+",
        help="a photo from the camera, board in view (with --lens: one or more, the board "
        "or the chessboard in each)",
    )
    ap.add_argument(
        "--corners",
        help="x1,y1,...,x4,y4: the 4 outer corners of the 2x5 "
        "rectangle in any order (default: find them automatically)",
    )
    ap.add_argument(
        "--markers",
        metavar="MARKED",
        help="the same camera's photo of the board with a pebble (or any small thing) on "
        "each of its 4 outer corners, IMAGE the board without them: the corners are the marks",
    )
    ap.add_argument(
        "--lens",
        action="store_true",
        help="measure the lens's distortion from the board's chalk lines instead "
        "(one or more photos, the board filling the frame)",
    )
    ap.add_argument(
        "--chessboard",
        metavar="COLSxROWS",
        help="with --lens: measure on a printed chessboard instead of the chalk board "
        "(its inner corners, e.g. 9x6 for 10 x 7 squares): straighter lines, a surer measure",
    )
    ap.add_argument("--config", metavar="FILE", help="the app's config: its [vision.lens] is used")
    ap.add_argument("--out", metavar="FILE", help="write the TOML here (default: stdout only)")
    ap.add_argument("--annotate", metavar="PNG", help="draw the outline for checking")
    args = ap.parse_args(argv)
    try:
        if len(args.image) > 1 and not args.lens:
            raise ValueError("several photos are only read with --lens")
        if args.lens and (args.corners or args.markers):
            flag = "--corners" if args.corners else "--markers"
            raise ValueError(f"--lens measures the lens; give {flag} in a run of its own")
        if args.corners and args.markers:
            raise ValueError("give the corners either as --corners or as --markers, not both")
        if args.chessboard and not args.lens:
            raise ValueError("--chessboard is what --lens measures on: give both")
        inner = _inner_corners(args.chessboard) if args.chessboard else None
        out = output_file(args.out, "--out") if args.out else None
        drawing = (
            output_file(args.annotate, "--annotate", ANNOTATE_SUFFIXES) if args.annotate else None
        )
        config = vision_config(args.config) if args.config else None
    except (ValueError, ConfigError, VisionConfigError) as exc:
        print(f"oanquan calibrate: {exc}", file=sys.stderr)
        return 2
    from vision.config import VisionConfig

    config = config or VisionConfig()
    try:
        images = [read_image(path) for path in args.image]
        marked = read_image(args.markers) if args.markers else None
    except ImageReadError as exc:
        print(f"oanquan calibrate: {exc}", file=sys.stderr)
        return 1
    if args.lens:
        return _measure_lens(images, args.image, config, inner, out, drawing)
    from vision.errors import BoardNotFoundError, ImagePairError
    from vision.lens import distort_points, undistort, undistort_points
    from vision.locate import locate_board, outline_from_corners

    raw = images[0]
    image = undistort(raw, config.lens)
    given: NDArray[np.float64] | None = None
    if marked is not None:
        from vision.locate.markers import marker_corners

        try:
            given = marker_corners(raw, marked)  # (where the photo as taken shows them)
        except ImagePairError:
            print(
                f"oanquan calibrate: --markers {Path(args.markers).name} is not the size of"
                f" {Path(args.image[0]).name}: two photos from the same camera, unmoved",
                file=sys.stderr,
            )
            return 2
        except BoardNotFoundError as exc:
            print(f"oanquan calibrate: --markers: {exc.reason}", file=sys.stderr)
            return 1
    if args.corners:
        try:
            given = _parse_corners(args.corners)
        except ValueError as exc:
            print(f"oanquan calibrate: {exc}", file=sys.stderr)
            return 2
    if given is not None:
        # (corners typed wrong are a usage error; marks read into no board, a failed reading)
        source, failed = ("--markers", 1) if marked is not None else ("--corners", 2)
        try:
            corners = order_corners(given)
        except ValueError as exc:
            print(f"oanquan calibrate: {source}: {exc}", file=sys.stderr)
            return failed
        problem = corners_problem(corners.tolist())
        if problem:
            print(f"oanquan calibrate: {source}: {problem}", file=sys.stderr)
            return failed
        h, w = image.shape[:2]
        if np.any(np.abs(corners) > 4 * max(h, w)):
            print("oanquan calibrate: corners lie far outside the image", file=sys.stderr)
            return 2
        seen = undistort_points(corners, raw.shape, config.lens)
        outline = outline_from_corners(seen, manual=True)
    else:
        try:
            outline = locate_board(image, config.locate)
        except BoardNotFoundError as exc:
            print(
                f"oanquan calibrate: no board found ({exc.reason}); give --corners", file=sys.stderr
            )
            return 1
        # (written where they show in the photo as taken, as a person would give them)
        corners = distort_points(outline.corners, raw.shape, config.lens)
    text = calibration_toml(corners, Path(args.image[0]).name)
    try:
        parse_config(text)  # what is written must load: the same check as oanquan run
    except ConfigError as exc:
        print(f"oanquan calibrate: the corners do not make a usable config: {exc}", file=sys.stderr)
        return 2
    return _emit(text, out, image, outline, drawing)


def _inner_corners(text: str) -> tuple[int, int]:
    """``--chessboard COLSxROWS`` as two counts of inner corners, or ValueError."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"--chessboard needs COLSxROWS inner corners such as 9x6, got {text!r}")
    cols, rows = (int(p) for p in parts)
    if min(cols, rows) < 3 or max(cols, rows) > MAX_INNER:
        raise ValueError(f"--chessboard: 3 to {MAX_INNER} inner corners each way, got {text!r}")
    return cols, rows


def _measure_lens(
    images: list[NDArray[np.uint8]],
    names: list[str],
    config: VisionConfig,
    inner: tuple[int, int] | None,
    out: Path | None,
    drawing: Path | None,
) -> int:
    """``--lens``: the straight lines of each photo as taken (the board's chalk, or a
    chessboard's rows and columns), pooled, and the ``k1`` that makes them straightest
    written as ``[vision.lens]``."""
    from companion.appliance.config import ConfigError, parse_config
    from vision.errors import BoardNotFoundError
    from vision.lens import Lens, board_chalk, chessboard_lines, fit_lens, undistort
    from vision.locate import locate_board, outline_from_corners

    shape = images[0].shape
    lines: list[NDArray[np.float64]] = []
    for image, name in zip(images, names, strict=True):
        if image.shape != shape:
            print(
                f"oanquan calibrate: {Path(name).name} is not the size of {Path(names[0]).name}:"
                " measure one camera at one size",
                file=sys.stderr,
            )
            return 2
        if inner is not None:
            grid = chessboard_lines(image, inner)
            if not grid:
                print(
                    f"oanquan calibrate: {Path(name).name}: no {inner[0]}x{inner[1]} chessboard"
                    " found whole",
                    file=sys.stderr,
                )
                return 1
            lines += grid
            continue
        given = config.locate.manual_corners
        try:
            # (corners the config gives are where the photo shows them: this very frame)
            found = (
                outline_from_corners(np.array(given, np.float64), manual=True)
                if given is not None
                else locate_board(image, config.locate)
            )
        except BoardNotFoundError as exc:
            print(
                f"oanquan calibrate: {Path(name).name}: no board found ({exc.reason})",
                file=sys.stderr,
            )
            return 1
        lines += board_chalk(image, found.homography, config.locate.line_model)
    fit = fit_lens(lines, shape)
    if fit is None:
        print(
            "oanquan calibrate: too few points along straight lines to measure the lens",
            file=sys.stderr,
        )
        return 1
    k1 = fit.lens.k1 if fit.straightened >= LENS_GAIN else 0.0
    text = lens_toml(k1, fit, [Path(n).name for n in names])
    try:
        parse_config(text)  # what is written must load: the same check as oanquan run
    except ConfigError as exc:
        print(f"oanquan calibrate: the lens does not make a usable config: {exc}", file=sys.stderr)
        return 2
    image = undistort(images[0], Lens(k1))
    if inner is not None:
        return _emit(text, out, image, None, drawing, outline_needed=False)
    try:
        outline = locate_board(image, config.locate) if drawing is not None else None
    except BoardNotFoundError:
        outline = None
    return _emit(text, out, image, outline, drawing)


def _emit(
    text: str,
    out: Path | None,
    image: NDArray[np.uint8],
    outline: Outline | None,
    drawing: Path | None,
    outline_needed: bool = True,
) -> int:
    """Print the TOML, write it to ``out`` and the checking picture to ``drawing``: the
    outline drawn on the frame, or (``outline_needed`` False: a chessboard has none)
    the frame straightened."""
    print(text, end="", flush=True)
    try:
        if out is not None:
            write_text(out, text, "--out")
        if drawing is not None and not outline_needed:
            if not cv2.imwrite(str(drawing), image):
                raise ValueError(f"--annotate {drawing}: cannot write")
        elif drawing is not None:
            if outline is None:
                raise ValueError(f"--annotate {drawing}: no board found to draw")
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

"""``oanquan tally IMAGE...``: count the pieces spread over the board to settle a dispute.

Per image one JSON object as the interchange contract (interchange.md in the
shared project material) specifies: ``total``, ``interval`` (holds the true
total 99 % of the time), ``big``, ``squares`` in ring order and the
``unsure`` squares. Inputs, ``--config``, ``--json-out`` and the error rules
are those of ``analyze``: no board is an answer (exit 0), an unreadable file
an error for that image (exit 1); one bad image never stops the batch.

:func:`read_spread` is the vision half for a single-layer spread: besides
the density mass that the pile counter sums, it counts the density peaks,
which are exact for pebbles that do not touch. The app's camera tally calls
it with the fixed camera's outline and calibration.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from companion.commands._cli import guarded, why
from companion.referee.tally import SpreadModel, SpreadSquare, Tally, count_spread

log = logging.getLogger("oanquan")

#: Density a maximum needs to count as a piece of a spread (vision.detect uses 0.05 for
#: its few-pebble squares; bench/tally.py --fit checks the choice on generated spreads).
PEAK_MIN = 0.05

#: The two stills ``oanquan demo`` tallies: player A's spread, then player B's.
FRAMES_DIR = Path(__file__).resolve().parent / "tally_frames"


@dataclass(frozen=True)
class SpreadReading:
    """What vision made of a spread: the squares, or why there are none."""

    found: bool
    squares: tuple[SpreadSquare, ...] = ()
    reason: str | None = None
    quality: float = 0.0
    corners: Any = None  # 4x2 SW, SE, NE, NW in image pixels
    #: pieces seen around the board but in no square: a spread has none, so a
    #: large value means the board was located wrong (or pieces lie beside it)
    outside: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: peaks per square at other thresholds (``bench/tally.py`` picks the threshold)
    peaks_at: dict[float, tuple[int, ...]] = field(default_factory=dict)


def read_spread(
    image: NDArray[np.uint8],
    config: Any = None,
    *,
    outline: Any = None,
    calibration: Any = None,
    peak_min: float = PEAK_MIN,
    also_at: Sequence[float] = (),
) -> SpreadReading:
    """Peaks, mass and big-stone probability of the 12 squares of one image.

    ``outline``: the board as the fixed camera already located it (else it
    is found here); ``calibration``: the scene's count gain from the opening;
    ``peak_min``: the density a peak needs to be a piece; ``also_at``: other
    thresholds to count peaks at as well (for tuning).
    """
    import time

    import cv2

    from vision import bigstone, detect
    from vision.config import VisionConfig
    from vision.count import BIG_CLEAR, big_stone_disc, densities, rectify
    from vision.errors import BoardNotFoundError
    from vision.locate import locate_board, outline_from_corners

    cfg = config or VisionConfig()
    t0 = time.perf_counter()
    if image is None or image.ndim != 3 or image.size == 0:
        return SpreadReading(False, reason="empty frame")
    if outline is None:
        try:
            outline = locate_board(image, cfg.locate, np.random.default_rng(cfg.locate.seed))
        except BoardNotFoundError as exc:
            if cfg.locate.manual_corners is None:
                return SpreadReading(False, reason=exc.reason or "board not found")
            corners = np.array(cfg.locate.manual_corners, dtype=np.float64)
            outline = outline_from_corners(corners, cfg.locate.arc_depth, 0.0, manual=True)
    t1 = time.perf_counter()
    count_cfg = cfg.count
    rect = rectify(image, outline, count_cfg.px_per_square)
    dens, labels, _ = densities(image, outline, count_cfg, rect)
    big_p = np.zeros(12)
    big_p[[0, 6]] = bigstone.probabilities(rect, count_cfg)
    under = np.zeros(dens.shape[1:], bool)
    if big_p.max() >= 0.5:
        radius, centre = big_stone_disc(rect, outline.arc_depth, count_cfg.px_per_square)
        s = detect.STRIDE
        ys, xs = np.mgrid[0 : dens.shape[1], 0 : dens.shape[2]]
        for m in (0, 6):
            if big_p[m] >= 0.5:
                r = BIG_CLEAR * radius[m] * count_cfg.px_per_square
                under |= (xs * s - centre[m][0]) ** 2 + (ys * s - centre[m][1]) ** 2 <= r**2
    clean = np.where(dens > detect.NOISE_FLOOR, dens, 0.0)
    mass, _ = detect.region_sums(clean, labels)
    d = np.ascontiguousarray(dens[0])
    maxima = (d >= cv2.dilate(d, np.ones((3, 3), np.uint8))) & (labels >= 0) & ~under

    def peaks_over(level: float) -> NDArray[np.int64]:
        return np.bincount(labels[maxima & (d > level)], minlength=12)

    peaks = peaks_over(peak_min)
    outside = float(
        clean[0][
            (labels < 0) & _in_image(outline, image.shape, labels.shape, count_cfg.px_per_square)
        ].sum()
    )
    gain = calibration.count_gain if calibration is not None else 1.0
    squares = tuple(
        SpreadSquare(int(peaks[i]), float(mass[i]) * gain, float(big_p[i])) for i in range(12)
    )
    t2 = time.perf_counter()
    timings = {
        "locate": (t1 - t0) * 1000,
        "count": (t2 - t1) * 1000,
        "total": (t2 - t0) * 1000,
    }
    extra = {level: tuple(int(n) for n in peaks_over(level)) for level in also_at}
    return SpreadReading(
        True, squares, None, float(outline.quality), outline.corners, outside, timings, extra
    )


def read_frame_spread(observer: Any, image: NDArray[np.uint8]) -> SpreadReading:
    """The live camera's tally: the board as the observer's locator verifies it in this
    frame, counted with the scene's calibration (``VisionObserver`` duck-typed:
    ``locator``, ``config``, ``calibration``). No board: ``found`` False."""
    outline = observer.locator.update(np.ascontiguousarray(image))
    if outline is None:
        return SpreadReading(False, reason="board not found")
    return read_spread(image, observer.config, outline=outline, calibration=observer.calibration)


def _in_image(
    outline: Any, shape: tuple[int, ...], cells: tuple[int, ...], px: int
) -> NDArray[np.bool_]:
    """Which density cells of the rectified canvas show a part of the image."""
    from vision import detect

    _, _, a = detect.canvas(px)
    s = detect.STRIDE
    ys, xs = np.mgrid[0 : cells[0], 0 : cells[1]]
    pts = np.stack([xs.ravel() * s, ys.ravel() * s, np.ones(xs.size)], axis=1)
    img = pts @ (outline.homography @ np.linalg.inv(a)).T
    u, v = img[:, 0] / img[:, 2], img[:, 1] / img[:, 2]
    ok = (u >= 0) & (u <= shape[1] - 1) & (v >= 0) & (v <= shape[0] - 1)
    return np.asarray(ok.reshape(cells[0], cells[1]), dtype=bool)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__


def tally_json(name: str, tally: Tally) -> dict[str, Any]:
    """The interchange object of a counted spread."""
    return {
        "image": name,
        "board_found": True,
        "total": tally.total,
        "interval": [tally.low, tally.high],
        "big": tally.big,
        "squares": [{"count": n, "big": b} for n, b in zip(tally.counts, tally.bigs, strict=True)],
        "unsure": list(tally.unsure),
    }


def tally_image(path: str, config: Any, model: SpreadModel | None = None) -> dict[str, Any]:
    """The interchange JSON object for one image (``error`` when it cannot be counted)."""
    from companion.commands.analyze import manual_outline, read_image
    from vision.errors import ImageReadError

    name = Path(path).name
    try:
        image = read_image(path)
    except ImageReadError as exc:
        return {"image": name, "error": str(exc)}
    try:
        reading = read_spread(image, config, outline=manual_outline(config))
    except MemoryError:
        return {"image": name, "error": f"out of memory counting {name}"}
    except Exception as exc:  # a vision failure is this image's error, never the batch's end
        log.debug("tally %s", name, exc_info=True)
        return {"image": name, "error": f"vision failed on {name}: {_first_line(exc)}"}
    if not reading.found:
        return {
            "image": name,
            "board_found": False,
            "total": None,
            "interval": None,
            "big": None,
            "squares": None,
            "unsure": None,
            "reason": reading.reason or "board not found",
        }
    out = tally_json(name, count_spread(reading.squares, model, outside=reading.outside))
    out["timings_ms"] = {k: round(v, 1) for k, v in reading.timings_ms.items()}
    return out


def bundled_frames() -> list[Path]:
    """The demo's two stills (A's spread, B's spread), in order."""
    return sorted(FRAMES_DIR.glob("spread_*.jpg"))


def demo_tally(
    controller: Any,
    press: Callable[[str], None],
    show: Callable[[str], None],
    frames: Sequence[Path] | None = None,
    config: Any = None,
) -> Any:
    """``oanquan demo``'s tally: both heaps counted from the bundled stills, then the final count.

    ``press`` is a short button press and ``show`` draws the OLED with a
    caption (the demo's panel). Returns the final count (None if a still
    had no board).
    """
    from companion.commands.analyze import read_image

    controller.start_tally()
    show("tally: the players spread A's heap in one layer")
    for side, path in zip("AB", frames or bundled_frames(), strict=False):
        press("ok")
        reading = read_spread(read_image(str(path)), config)
        if not reading.found:
            show(f"tally: no board in {path.name}")
            return None
        controller.on_tally_reading(reading.squares, outside=reading.outside)
        show(f"tally: the camera counts {side}'s pieces ({path.name})")
        press("ok")
    if controller.tally is None or controller.tally.final is None:
        return None
    final = controller.tally.final
    press("right")
    show("tally: how the totals are made")
    press("ok")
    return final


def main(argv: list[str]) -> int:
    """Entry point of ``oanquan tally IMAGE... [--json-out DIR] [--config TOML]``."""
    return guarded("oanquan tally", lambda: _tally(argv))


def _tally(argv: list[str]) -> int:
    from companion.appliance.config import ConfigError
    from companion.commands.analyze import prepare_batch

    ap = argparse.ArgumentParser(
        prog="oanquan tally",
        description="count pieces spread in one layer over the board, with an honest interval",
    )
    ap.add_argument(
        "images", nargs="+", metavar="IMAGE", help="photos of the spread pieces (JPEG, PNG)"
    )
    ap.add_argument("--json-out", metavar="DIR", help="write DIR/<image stem>.json per image")
    ap.add_argument(
        "--config",
        metavar="TOML",
        help="config file as for oanquan run (its [vision] table; e.g. from calibrate)",
    )
    args = ap.parse_args(argv)
    try:
        config, dirs = prepare_batch(
            args.images, args.config, {"--json-out": args.json_out}, "count"
        )
    except (ConfigError, ValueError) as exc:
        print(f"oanquan tally: {exc}", file=sys.stderr)
        return 2
    json_dir = dirs["--json-out"]
    status = 0
    for path in args.images:
        result = tally_image(path, config)
        if "error" in result:
            status = 1
            print(f"oanquan tally: {result['error']}", file=sys.stderr)
        text = json.dumps(result, ensure_ascii=False)
        if json_dir is not None:
            target = json_dir / f"{Path(path).stem}.json"
            try:
                target.write_text(text + "\n", "utf-8")
            except OSError as exc:
                print(f"oanquan tally: cannot write {target}: {why(exc)}", file=sys.stderr)
                status = 1
        else:
            print(text, flush=True)
    return status

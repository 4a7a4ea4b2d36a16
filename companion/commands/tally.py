"""``oanquan tally IMAGE...``: count the pieces spread over the board to settle a dispute.

Per image one JSON object as the interchange contract (interchange.md in the
shared project material) specifies: ``total``, ``interval`` (holds the true
total 99 % of the time), ``big``, ``squares`` in ring order and the
``unsure`` squares. Inputs, ``--config``, ``--json-out`` and the error rules
are those of ``analyze``: no board is an answer (exit 0), an unreadable file
an error for that image (exit 1); one bad image never stops the batch.

:func:`read_spread` is the vision half for a single-layer spread: the
spread detector (``vision.spread``) finds each piece as a peak of its own,
the pile counter's density mass per square (``vision.count``) is kept as a
second opinion, and the detector's stone peak with the mandarin crops' big-stone
network says where the quan stones are (``big_stone_probability``).
The app's camera tally calls it with the fixed camera's outline (the board
as the game located it) and calibration.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from companion.commands._cli import guarded, why
from companion.referee.tally import (
    TRUST_MIN,
    BoardEvidence,
    SpreadModel,
    SpreadSquare,
    Tally,
    big_call,
    big_stone_probability,
    board_trust,
    count_spread,
)

log = logging.getLogger("oanquan")

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
    #: pieces seen near the board but in no square: a spread has none, so they
    #: mean the board was located wrong or pieces lie on or beyond its edge
    outside: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: every candidate piece (board units, height, square), for benches and drawings
    candidates: tuple[Any, ...] = ()
    #: share of the pile counter's density inside the squares (``vision.count.inside_share``)
    inside_share: float = 1.0
    #: the spread detector's highest big-stone peak in the west and east quan squares
    big_heat: tuple[float, float] = (0.0, 0.0)
    #: the mandarin crops' big-stone network there (with ``big_heat``: the stone's call)
    big_net: tuple[float, float] = (0.0, 0.0)
    #: share of the sure candidates in the squares that lie on a line of the outline:
    #: pieces spread in squares seldom do, an outline on the wrong lines often
    on_lines: float = 0.0
    #: the outline was given (hand corners, the live camera's board), not found here
    given: bool = False
    #: a hand or arm lies over the board (the live camera's frames: ``vision.gate``)
    hand: bool = False
    #: canvas pixels a square side the pieces were read at (``vision.spread.scale_for``)
    scale: int = 0


#: Confident candidates closer to the board than this (square sides) count as outside.
NEAR_BOARD = 1.0


def read_spread(
    image: NDArray[np.uint8],
    config: Any = None,
    *,
    outline: Any = None,
    calibration: Any = None,
    empty: NDArray[np.uint8] | None = None,
    single: tuple[NDArray[np.uint8], NDArray[np.uint8] | None] | None = None,
) -> SpreadReading:
    """Candidates, counter mass and big-stone probability of the 12 squares of one image.

    ``outline``: the board as the fixed camera already located it (else it
    is found here); ``calibration``: the scene's count gain from the opening
    (it scales the pile counter's mass, the second opinion); ``empty``: the same
    camera's photo of the board before the spread: the pieces are then found by the
    detector that reads the two together (``spread_pair_model``), each candidate says
    whether the ground changed under it, and each square how much change no
    candidate explains (``vision.spread.change_cover``); the pair detector reads the
    spread again at the scale its pieces' width asks for (``vision.spread.scale_for``).
    ``single``: where ``image`` (and ``empty``) are the mean of several frames of a
    noisy scene, one frame of the spread (and of the empty board): the big stones are
    called on it, since the detectors never saw a dark frame as clean as such a mean
    (``companion.appliance.gather``).
    """
    import time

    from vision import spread
    from vision.config import VisionConfig
    from vision.count import big_stone_probabilities, densities, inside_share, rectify
    from vision.detect import NOISE_FLOOR, region_sums
    from vision.errors import BoardNotFoundError
    from vision.locate import locate_board, manual_outline

    cfg = config or VisionConfig()
    t0 = time.perf_counter()
    if image is None or image.ndim != 3 or image.size == 0:
        return SpreadReading(False, reason="empty frame")
    given = outline is not None
    if outline is None:
        try:
            outline = locate_board(image, cfg.locate, np.random.default_rng(cfg.locate.seed))
        except BoardNotFoundError as exc:
            outline = manual_outline(cfg, image.shape)
            if outline is None:
                return SpreadReading(False, reason=exc.reason or "board not found")
            given = True
    t1 = time.perf_counter()
    count_cfg = cfg.count
    rect = rectify(image, outline, count_cfg.px_per_square)
    dens, labels, _ = densities(image, outline, count_cfg, rect)
    # a mean's big stones are read on one frame (and, by the pair detector, beside one of
    # the empty board): frames of another size than the image are none
    one, one_empty = single if single is not None else (None, None)
    one = one if one is not None and one.shape == image.shape else None
    one_empty = one_empty if one_empty is not None and one_empty.shape == image.shape else None
    if one is None:
        net_p = big_stone_probabilities(image, outline, count_cfg, rect)
    else:
        one_rect = rectify(one, outline, count_cfg.px_per_square)
        net_p = big_stone_probabilities(one, outline, count_cfg, one_rect)
    mass, _ = region_sums(np.where(dens > NOISE_FLOOR, dens, 0.0), labels)
    t2 = time.perf_counter()
    ref = empty if empty is not None and empty.shape == image.shape else None
    # the empty board, where the pair detector reads it (a fixed camera: one outline)
    before = ref if ref is not None and count_cfg.spread_pair_model else None
    model = count_cfg.spread_model if before is None else count_cfg.spread_pair_model
    canvas = spread.rectify(image, outline.homography)
    empty_canvas = None if before is None else spread.rectify(before, outline.homography)
    # Against the empty board the scene is read again at its pieces' scale, four times in
    # five at another one than ``PX``: the first look is one view, whose pieces' width
    # picks the same scale as all four's in 297 of 300 bench scenes, and the other three
    # views are read only where that scale is ``PX`` (spared three forwards otherwise).
    looks = spread.views(
        canvas, model, empty_canvas, spread.FLIPS if before is None else spread.FLIPS[:1]
    )
    heat = np.mean(looks, axis=0)
    stone_heat = heat[1]
    beside = None if before is None else one_empty  # (the pair detector reads frames in twos)
    stones_on_one = one is not None and (before is None or beside is not None)
    if stones_on_one:
        assert one is not None  # (for the type checker: stones_on_one says so)
        stone_heat = spread.heatmaps(
            spread.rectify(one, outline.homography),
            model,
            None if beside is None else spread.rectify(beside, outline.homography),
        )[1]
    big_net = (float(net_p[0]), float(net_p[1]))
    call = big_call(paired=before is not None)  # (each detector's peaks have their fit)

    def call_big(stone_px: NDArray[np.float32], px: int) -> tuple[NDArray[np.float64], Any]:
        big_heat = spread.big_stones(stone_px, outline.arc_depth, px)
        big_p = np.zeros(12)
        big_p[[0, 6]] = [
            big_stone_probability(h, p, call) for h, p in zip(big_heat, big_net, strict=True)
        ]
        return big_p, big_heat

    big_p, big_heat = call_big(stone_heat, spread.PX)

    def candidates(heat_px: NDArray[np.float32], px: int) -> list[Any]:
        found_px = spread.peaks(heat_px, outline.arc_depth, px=px)
        return _off_big_stones(found_px, rect, outline, big_p, count_cfg)

    found = candidates(heat[0], spread.PX)
    px = spread.PX
    changed: tuple[tuple[bool, ...], ...] = ((),) * 12
    near: tuple[tuple[bool, ...], ...] = ((),) * 12
    extra: tuple[float | None, ...] = (None,) * 12
    if ref is not None:
        changes = spread.spread_changes(ref, image, outline, cfg.change)
        cover = spread.change_cover(changes, outline, found, cfg=cfg.change)
        if before is not None:  # the pair detector's: again at its pieces' scale, thinned
            px = spread.scale_for(cover.piece)
            if px == spread.PX:  # the first look's scale: its other views, as one reading
                looks += spread.views(canvas, model, empty_canvas, spread.FLIPS[1:])
                heat = np.mean(looks, axis=0)
                if not stones_on_one:
                    stone_heat = heat[1]
                big_p, big_heat = call_big(stone_heat, spread.PX)
                found = candidates(heat[0], spread.PX)
                cover = spread.change_cover(changes, outline, found, cfg=cfg.change)
                px = spread.scale_for(cover.piece)
            if px != spread.PX:
                canvas = spread.rectify(image, outline.homography, px)
                fine = spread.heatmaps(
                    canvas, model, spread.rectify(before, outline.homography, px)
                )
                found = candidates(fine[0], px)
                cover = spread.change_cover(changes, outline, found, cfg=cfg.change)
            found, cover = spread.thinned(found, cover)  # one piece's second peaks go
            if cover.piece is not None:
                near = spread.per_square_cover(
                    found, spread.crowded(found, spread.NEAR * cover.piece)
                )
        changed = spread.per_square_cover(found, cover.changed)
        extra = cover.extra
    alone: tuple[tuple[float, ...] | None, ...] = (None,) * 12
    if before is not None:  # the interval's second reading: the spread's own detector, same scale
        plain = spread.heatmaps(canvas, count_cfg.spread_model)[0]
        alone = spread.per_square(candidates(plain, px))
    scores = spread.per_square(found)
    t3 = time.perf_counter()
    seen = _seen(outline, image.shape, [(p.x, p.y) for p in found])
    outside = sum(
        1
        for p, ok in zip(found, seen, strict=True)
        if ok and p.square < 0 and p.score >= 0.5 and _near_board(p.x, p.y)
    )
    gain = calibration.count_gain if calibration is not None else 1.0
    squares = tuple(
        SpreadSquare(
            sum(1 for v in scores[i] if v >= 0.5),
            float(mass[i]) * gain,
            float(big_p[i]),
            scores[i],
            changed[i],
            extra[i],
            alone[i],
            near[i],
        )
        for i in range(12)
    )
    timings = {
        "locate": (t1 - t0) * 1000,
        "count": (t2 - t1) * 1000,
        "spread": (t3 - t2) * 1000,
        "total": (time.perf_counter() - t0) * 1000,
    }
    return SpreadReading(
        True,
        squares,
        quality=float(outline.quality),
        corners=outline.corners,
        outside=float(outside),
        timings_ms=timings,
        candidates=tuple(found),
        inside_share=inside_share(dens, labels),
        big_heat=big_heat,
        big_net=big_net,
        on_lines=_on_lines(found),
        given=given,
        scale=px,
    )


def read_frame_spread(
    observer: Any,
    image: NDArray[np.uint8],
    empty: NDArray[np.uint8] | None = None,
    single: tuple[NDArray[np.uint8], NDArray[np.uint8] | None] | None = None,
) -> SpreadReading:
    """The live camera's tally: the board as the observer's locator verifies it in this
    frame, counted with the scene's calibration (``VisionObserver`` duck-typed:
    ``locator``, ``config``, ``calibration``), against ``empty``, the same camera's frame
    of the board before the spread, when there is one; ``hand``: an arm lies over the
    board in this frame. ``image`` and ``empty`` may each be the mean of a noisy scene's
    frames, ``single`` then one frame of each (``read_spread``). No board: ``found``
    False."""
    from vision.gate import FrameQuality, assess_hand
    from vision.lens import undistort

    lens = observer.config.lens

    def straight(frame: NDArray[np.uint8]) -> NDArray[np.uint8]:
        return undistort(np.ascontiguousarray(frame), lens)

    image = straight(image)
    outline = observer.locator.update(image)
    if outline is None:
        return SpreadReading(False, reason="board not found")
    one = None
    if single is not None:
        one = (straight(single[0]), None if single[1] is None else straight(single[1]))
    reading = read_spread(
        image,
        observer.config,
        outline=outline,
        calibration=observer.calibration,
        empty=None if empty is None else straight(empty),
        single=one,
    )
    hand = assess_hand(FrameQuality(None), image, outline, observer.config.gate).hand
    return replace(reading, hand=hand)


def _off_big_stones(
    found: list[Any], rect: NDArray[np.uint8], outline: Any, big_p: Any, cfg: Any
) -> list[Any]:
    """The candidates that are not a big stone's own peak: where the big-stone call
    (``big_p``) sees a stone, no small piece's centre lies within ``BIG_CLEAR`` of its radius (a
    spread lies in one layer), so a peak there is the stone (``vision.count``'s rule)."""
    from vision import detect
    from vision.count import BIG_CLEAR, big_stone_disc

    if max(big_p[0], big_p[6]) < 0.5:
        return found
    radius, centre = big_stone_disc(rect, outline.arc_depth, cfg.px_per_square)
    _, _, a = detect.canvas(cfg.px_per_square)
    back = np.linalg.inv(a)
    stones = []
    for m in (0, 6):
        if big_p[m] >= 0.5:
            bx, by, _ = back @ np.array([centre[m][0], centre[m][1], 1.0])
            stones.append((bx, by, BIG_CLEAR * radius[m]))
    return [p for p in found if all(np.hypot(p.x - x, p.y - y) > r for x, y, r in stones)]


#: A candidate this close to a line of the 2 x 5 grid (square sides) lies on it.
ON_LINE = 0.06


def _on_lines(found: list[Any]) -> float:
    """Share of the sure candidates in the squares that lie on a line of the grid."""
    sure = [p for p in found if p.square >= 0 and p.score >= 0.5]
    if not sure:
        return 0.0
    near = 0
    for p in sure:
        if p.square % 6 == 0:  # a quan square: only its straight side is a grid line
            near += min(abs(p.x), abs(p.x - 5.0)) < ON_LINE
            continue
        dx = min(abs(p.x - k) for k in range(6))
        dy = min(abs(p.y - k) for k in range(3))
        near += min(dx, dy) < ON_LINE
    return near / len(sure)


def _near_board(x: float, y: float) -> bool:
    """Within ``NEAR_BOARD`` of the 2 x 5 rectangle and its arcs (board units)."""
    dx = max(-1.05 - x, x - 6.05, 0.0)
    dy = max(-y, y - 2.0, 0.0)
    return dx <= NEAR_BOARD and dy <= NEAR_BOARD


def _seen(outline: Any, shape: tuple[int, ...], points: list[tuple[float, float]]) -> list[bool]:
    """Which board points fall inside the image (a canvas beyond it is repeated edge)."""
    from vision.geometry import project

    if not points:
        return []
    img = project(outline.homography, np.array(points, np.float64))
    u, v = img[:, 0], img[:, 1]
    ok = (u >= 0) & (u <= shape[1] - 1) & (v >= 0) & (v <= shape[0] - 1)
    return [bool(b) for b in ok]


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


def evidence(reading: SpreadReading) -> BoardEvidence:
    """What a reading says about whether its board is the real one."""
    return BoardEvidence(
        reading.quality,
        reading.on_lines,
        reading.outside,
        reading.inside_share,
        sum(sq.peaks for sq in reading.squares),
    )


def tally_image(
    path: str,
    config: Any,
    model: SpreadModel | None = None,
    empty: NDArray[np.uint8] | None = None,
) -> dict[str, Any]:
    """The interchange JSON object for one image (``error`` when it cannot be counted);
    ``empty``: the same camera's photo of the board before the spread (undistorted)."""
    from companion.commands.analyze import read_image
    from vision.errors import ImageReadError
    from vision.lens import undistort
    from vision.locate import manual_outline

    name = Path(path).name
    try:
        image = undistort(read_image(path), config.lens)
    except ImageReadError as exc:
        return {"image": name, "error": str(exc)}
    if empty is not None and empty.shape != image.shape:
        return {
            "image": name,
            "error": f"{name} is {image.shape[1]}x{image.shape[0]} but the empty board's"
            f" photo is {empty.shape[1]}x{empty.shape[0]}: the same camera takes both",
        }
    try:
        outline = manual_outline(config, image.shape)
        reading = read_spread(image, config, outline=outline, empty=empty)
    except MemoryError:
        return {"image": name, "error": f"out of memory counting {name}"}
    except Exception as exc:  # a vision failure is this image's error, never the batch's end
        log.debug("tally %s", name, exc_info=True)
        return {"image": name, "error": f"vision failed on {name}: {_first_line(exc)}"}
    doubt = None
    if reading.found and not reading.given:  # found here: is it the real board?
        trust = board_trust(evidence(reading))
        if trust < TRUST_MIN:
            doubt = (
                f"the board found is doubtful (chalk fit {reading.quality:.2f}, pieces on its"
                f" lines or beside it; trust {trust:.2f}): give its corners (oanquan calibrate)"
            )
    if not reading.found or doubt is not None:
        return {
            "image": name,
            "board_found": False,
            "total": None,
            "interval": None,
            "big": None,
            "squares": None,
            "unsure": None,
            "reason": doubt or reading.reason or "board not found",
        }
    out = tally_json(name, count_spread(reading.squares, model, outside=reading.outside))
    out["timings_ms"] = {k: round(v, 1) for k, v in reading.timings_ms.items()}
    return out


def bundled_frames() -> list[Path]:
    """The demo's two stills (A's spread, B's spread), in order."""
    return sorted(FRAMES_DIR.glob("spread_*.jpg"))


def bundled_empty() -> Path:
    """The same camera's still of the board before the demo's spreads (``--empty``)."""
    return FRAMES_DIR / "board_empty.jpg"


def demo_tally(
    app: Any,
    press: Callable[[str], None],
    show: Callable[[str], None],
    folder: Path = FRAMES_DIR,
) -> Any:
    """``oanquan demo``'s tally: both heaps counted through the app loop, then the final count.

    The camera (``app.hardware.camera``) is replaced by a replay of the
    bundled stills in ``folder``: the board cleared for the tally (its first
    frame, which the spreads are compared with), then A's spread and B's, each
    read as ``oanquan run`` reads a tally frame (``App(spread_reader=read_frame_spread)``).
    ``press`` is a short button press and ``show`` draws the OLED with a caption
    (the demo's panel). Returns the final count (None if a still gave none).
    """
    from device.camera import ReplayCamera

    # the fixed camera sees each still scene twice: a tally reads a scene from two frames
    camera = ReplayCamera(folder, clock=app.clock, hold=2)
    app.hardware = replace(app.hardware, camera=camera)  # the fixed camera sees the spreads
    camera.start()
    controller = app.controller

    def see() -> None:
        for _ in range(camera.hold):
            app.step()

    try:
        controller.start_tally()
        spreads = list(camera.files)
        if spreads and spreads[0].name == bundled_empty().name:
            see()  # the board as the tally opens: empty, kept to compare with
            spreads = spreads[1:]
        show("tally: the players spread A's heap in one layer (menu: Count pieces)")
        for side, name in zip("AB", spreads, strict=False):
            press("ok")
            see()  # the camera's frames: the spread
            last = controller.tally.last if controller.tally is not None else None
            if last is None or controller.view != "tally_count":
                show(f"tally: no count from {name.name}: {controller.message or 'no board'}")
                return None
            show(f"tally: {name.name}: {side} has {_said(last)}")
            press("ok")
        if controller.tally is None or controller.tally.final is None:
            return None
        final = controller.tally.final
        press("right")
        for p, side in enumerate("AB"):
            show(f"tally: {side} {_score_line(final, p)}")
        press("ok")
        return final
    finally:
        camera.close()


def _said(t: Tally) -> str:
    """A count as the screen says it: "37, surely 34-42, 1 quan; spread 3, 11 more"."""
    sure = f"{t.total}" if t.exact else f"{t.total}, surely {t.low}-{t.high}"
    unsure = ", ".join(str(sq) for sq in t.unsure[:3])
    return f"{sure}, {t.big} quan" + (f"; spread {unsure} more" if unsure else "")


def _score_line(final: Any, p: int) -> str:
    """One side's R14 sum: pieces + quan x value +/- debts = score (winner marked)."""
    net = final.debt_net(p)
    debt = f" {'+' if net >= 0 else '-'} {abs(net)} debt" if net else ""
    won = " wins" if final.winner == p else ""
    return (
        f"{final.pieces[p]} pieces + {final.bigs[p]} quan x {final.mandarin_value}{debt}"
        f" = {final.scores[p]}{won}"
    )


def main(argv: list[str]) -> int:
    """Entry point of ``oanquan tally IMAGE... [--empty PHOTO] [--json-out DIR] [--config TOML]``."""
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
    ap.add_argument(
        "--empty",
        metavar="PHOTO",
        help="the same camera's photo of the board before the pieces were spread: every"
        " change since is a piece, which finds the pieces the detector alone misses",
    )
    args = ap.parse_args(argv)
    try:
        config, dirs = prepare_batch(
            args.images, args.config, {"--json-out": args.json_out}, "count"
        )
        empty = _empty_photo(args.empty, config) if args.empty else None
    except (ConfigError, ValueError) as exc:
        print(f"oanquan tally: {exc}", file=sys.stderr)
        return 2
    json_dir = dirs["--json-out"]
    status = 0
    for path in args.images:
        result = tally_image(path, config, empty=empty)
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


def _empty_photo(path: str, config: Any) -> NDArray[np.uint8]:
    """``--empty``'s photo, undistorted as the spreads are; ValueError (exit 2, before any
    spread is read) when it cannot be read."""
    from companion.commands.analyze import read_image
    from vision.errors import ImageReadError
    from vision.lens import undistort

    try:
        return np.ascontiguousarray(undistort(read_image(path), config.lens))
    except ImageReadError as exc:
        raise ValueError(f"--empty: {exc}") from exc

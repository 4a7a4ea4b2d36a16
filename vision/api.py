"""Public API for the referee: one call from a BGR frame to per-square counts.

``read_board`` never raises for a frame without a board: it returns a
reading with ``found=False`` and a reason, because "no board here" is an
ordinary answer for a camera, not an error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from vision.config import VisionConfig
from vision.count import (
    Calibration,
    Grid,
    SquareCount,
    calibrate_opening,
    count_board_density,
    with_board_doubt,
)
from vision.errors import BoardNotFoundError
from vision.gate import FrameQuality, assess_frame, assess_hand, hand_cover
from vision.geometry import FloatArray
from vision.locate import Outline, locate_board, manual_outline
from vision.locate.doubt import board_doubt


@dataclass(frozen=True)
class SquareReading:
    """One region: best count, distribution over counts 0..N, big stone."""

    index: int
    count: int
    probs: tuple[float, ...]
    big: int
    big_prob: float
    hidden: bool = False  # under a hand: ``probs`` is flat, the square says nothing

    @property
    def confidence(self) -> float:
        """Probability of the best count."""
        return self.probs[self.count] if self.count < len(self.probs) else 0.0


@dataclass(frozen=True)
class BoardReading:
    """Everything vision says about one frame."""

    found: bool
    reason: str | None
    corners: FloatArray | None  # 4x2 SW, SE, NE, NW, image px
    squares: tuple[SquareReading, ...]
    quality: float
    timings_ms: dict[str, float] = field(default_factory=dict)
    regions: tuple[FloatArray, ...] = ()  # 12 polygons, image px
    homography: FloatArray | None = None  # board units -> image px
    frame: FrameQuality | None = None
    outline: Outline | None = None
    #: small-pebble density over the rectified board (``count_board_density``), None unread
    pebbles: NDArray[np.float32] | None = field(default=None, repr=False)
    #: probability that the board this frame's own search found is not the board
    #: (``vision.locate.doubt``), folded into every square; 0 for an outline given
    doubt: float = 0.0


def _find_outline(image: NDArray[np.uint8], cfg: VisionConfig) -> tuple[Outline | None, str | None]:
    """Manual corners first (a person's cure for a wrong board), else the search."""
    manual = manual_outline(cfg, image.shape)
    if manual is not None:
        return manual, None
    try:
        return locate_board(image, cfg.locate, np.random.default_rng(cfg.locate.seed)), None
    except BoardNotFoundError as exc:
        return None, exc.reason


def read_board(
    image_bgr: NDArray[np.uint8] | None,
    config: VisionConfig | None = None,
    *,
    outline: Outline | None = None,
    calibration: Calibration | None = None,
    previous: NDArray[np.uint8] | None = None,
    gate: bool = True,
    partial: bool = False,
) -> BoardReading:
    """Locate the board (unless ``outline`` is given) and count every square.

    A board this call found itself may be the wrong one, and the squares'
    distributions hold that doubt (``BoardReading.doubt``); an ``outline`` given
    (a person's corners, a fixed camera's confirmed board) is the caller's to vouch for.

    ``image_bgr`` is the frame with the lens undone (``vision.lens.undistort``
    with ``config.lens``; a pinhole's frames as they come): hand-given corners
    are moved there.

    With ``gate`` (default) a frame unfit to count (bad exposure, motion
    against ``previous``, a hand over the board) is reported through
    ``reason``/``frame`` with no squares instead of being counted. With
    ``partial`` a hand over a small part of the board is not a reason to
    throw the frame away: the squares it covers come back ``hidden`` (flat
    distributions) and the others are counted; ``reason`` still names the hand.
    """
    cfg = config or VisionConfig()
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    if image_bgr is None or image_bgr.size == 0 or image_bgr.ndim != 3:
        return BoardReading(False, "empty frame", None, (), 0.0, {"total": 0.0})
    pre = assess_frame(image_bgr, previous, None, cfg.gate)
    if pre.problem is not None and (gate or pre.problem.empty):
        timings["total"] = (time.perf_counter() - t0) * 1000
        return BoardReading(False, pre.reason, None, (), 0.0, timings, frame=pre)
    searched = outline is None
    if outline is None:
        outline, why = _find_outline(image_bgr, cfg)
    timings["locate"] = (time.perf_counter() - t0) * 1000
    if outline is None:
        timings["total"] = timings["locate"]
        return BoardReading(False, why or "board not found", None, (), 0.0, timings, frame=pre)
    frame = assess_hand(pre, image_bgr, outline, cfg.gate)
    located = BoardReading(
        True,
        frame.reason,
        outline.corners,
        (),
        outline.quality,
        timings,
        outline.regions,
        outline.homography,
        frame,
        outline,
    )
    hidden: tuple[bool, ...] = (False,) * len(outline.regions)
    if gate and not frame.ok:
        if not (partial and frame.hand and frame.skin <= cfg.gate.partial_max_skin):
            timings["total"] = (time.perf_counter() - t0) * 1000
            return located
        cover = hand_cover(image_bgr, outline, cfg.gate.work_width, cfg.gate.hand_margin)
        hidden = tuple(c > cfg.gate.hidden_share for c in cover)
    t1 = time.perf_counter()
    counts: list[SquareCount]
    counts, grid, pebbles = count_board_density(image_bgr, outline, cfg.count, calibration)
    timings["count"] = (time.perf_counter() - t1) * 1000
    timings["total"] = (time.perf_counter() - t0) * 1000
    # a board found in this frame alone may be the wrong one: its counts say so
    doubt = (
        board_doubt(outline.quality, cfg.locate.finder) if searched and not outline.manual else 0.0
    )
    counts = [with_board_doubt(c, doubt) for c in counts]
    flat = (1.0 / (cfg.count.max_count + 1),) * (cfg.count.max_count + 1)
    squares = tuple(
        SquareReading(i, 0, flat, 0, 0.5, hidden=True)
        if hidden[i]
        else SquareReading(i, c.count, c.probs, c.big, c.big_prob)
        for i, c in enumerate(counts)
    )
    return replace(
        located,
        squares=squares,
        regions=_grid_regions(outline, grid),
        pebbles=pebbles,
        doubt=doubt,
    )


def _grid_regions(outline: Outline, grid: Grid) -> tuple[FloatArray, ...]:
    from vision.geometry import project

    return tuple(project(outline.homography, p) for p in grid.polygons())


def calibrate(
    image_bgr: NDArray[np.uint8],
    config: VisionConfig | None = None,
    outline: Outline | None = None,
    skip: Sequence[int] = (),
) -> Calibration:
    """Appearance calibration from a frame the caller knows is the opening.

    ``skip``: squares not to learn from (hidden by a hand in that frame).
    """
    cfg = config or VisionConfig()
    if outline is None:
        found, why = _find_outline(image_bgr, cfg)
        if found is None:
            raise BoardNotFoundError(why or "board not found")
        outline = found
    return calibrate_opening(image_bgr, outline, cfg.count, skip)

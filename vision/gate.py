"""Stage 3: is this frame fit to count?

Cheap checks on a small grey copy, in the order a referee needs them: an
empty or unreadable frame, bad exposure, motion against the previous frame,
then a hand or arm over the board (skin colour that is over the board but not
around it, so skin-coloured floors such as terracotta or wood do not count).

The motion check needs the frame before this one: a live camera passes its
previous frame as ``previous`` (to ``assess_frame`` or ``read_board``), and
a frame still moving is answered "motion since the previous frame" before the
board is even located. A folder of stills passes none: every photo differs
from the one before, and that is a new position, not motion.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import GateConfig
from vision.locate import Outline


class Unfit(enum.Enum):
    """Why a frame may not be counted; the value is the reason a reading gives."""

    EMPTY = "empty frame"
    NO_DETAIL = "empty frame (no detail)"
    DARK = "under-exposed"
    BRIGHT = "over-exposed"
    MOTION = "motion since the previous frame"
    HAND = "hand or arm over the board"

    @property
    def empty(self) -> bool:
        """Nothing to see at all: no board can be in such a frame, gated or not."""
        return self in (Unfit.EMPTY, Unfit.NO_DETAIL)


HAND = Unfit.HAND.value


@dataclass(frozen=True)
class FrameQuality:
    """Verdict on one frame: ``problem`` is None when it may be counted."""

    problem: Unfit | None
    motion: float = 0.0
    mean_level: float = 0.0
    clipped: float = 0.0
    skin: float = 0.0

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def reason(self) -> str | None:
        """The problem in words, None when ``ok``."""
        return None if self.problem is None else self.problem.value

    @property
    def hand(self) -> bool:
        """Rejected only because a hand or arm is over the board."""
        return self.problem is Unfit.HAND


def _small_grey(image: NDArray[np.uint8], width: int) -> NDArray[np.uint8]:
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape[:2]
    s = width / float(w)
    small = cv2.resize(grey, (width, max(2, round(h * s))), interpolation=cv2.INTER_AREA)
    return np.asarray(small, dtype=np.uint8)


def skin_mask(image_bgr: NDArray[np.uint8]) -> NDArray[np.bool_]:
    """Skin-like pixels by the usual YCrCb box (any skin tone, not lit blue)."""
    ycc = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2YCrCb)
    y, cr, cb = ycc[..., 0], ycc[..., 1], ycc[..., 2]
    return (cr >= 138) & (cr <= 178) & (cb >= 80) & (cb <= 128) & (y > 50)


def _arm_mask(
    image_bgr: NDArray[np.uint8], outline: Outline, width: int
) -> tuple[NDArray[np.uint8], NDArray[np.uint8], float]:
    """Skin blobs that reach over the board like an arm, the board mask, and the scale.

    An arm is a skin blob reaching over the board; a skin-coloured floor
    (terracotta, wood) is one blob covering most of the frame and is ignored
    (an empty mask: colour cannot tell there, motion gating must).
    """
    h, w = image_bgr.shape[:2]
    s = width / float(w)
    size = (width, max(2, round(h * s)))
    small = np.asarray(cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA), np.uint8)
    skin = skin_mask(small).astype(np.uint8)
    skin = np.asarray(cv2.morphologyEx(skin, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)), np.uint8)
    board = np.zeros(skin.shape, np.uint8)
    polys = [np.rint(p * s).astype(np.int32) for p in outline.regions]
    cv2.fillPoly(board, polys, 1)
    arm = np.zeros(skin.shape, np.uint8)
    if not board.any():
        return arm, board, s
    k = max(3, int(1.0 * outline.px_per_unit() * s) | 1)
    ring = cv2.dilate(board, np.ones((k, k), np.uint8)) - board
    if ring.any() and float(skin[ring > 0].mean()) > 0.25:
        return arm, board, s
    n, comp, stats, _ = cv2.connectedComponentsWithStats(skin, connectivity=8)
    hh, ww = skin.shape
    for i in range(1, min(n, 500)):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        reaches_edge = x == 0 or y == 0 or x + bw >= ww or y + bh >= hh
        if area < 0.002 * skin.size or (not reaches_edge and area < 0.012 * skin.size):
            continue  # arms come in from outside the frame or are big; pebbles are neither
        arm[comp == i] = 1
    return arm, board, s


def hand_score(image_bgr: NDArray[np.uint8], outline: Outline, width: int = 320) -> float:
    """Share of the board covered by skin-coloured blobs that are not the floor."""
    arm, board, _ = _arm_mask(image_bgr, outline, width)
    area = float(board.sum())
    return float((arm & board).sum()) / area if area else 0.0


def hand_mask(
    image_bgr: NDArray[np.uint8], outline: Outline, width: int = 320, margin: float = 0.25
) -> tuple[NDArray[np.uint8], float]:
    """The arm (1) grown by ``margin`` squares, on a copy ``width`` px wide, and that
    copy's scale: what :func:`hand_cover` measures the regions against."""
    arm, _, s = _arm_mask(image_bgr, outline, width)
    return grown(arm, margin * outline.px_per_unit() * s), s


def grown(mask: NDArray[np.uint8], by: float) -> NDArray[np.uint8]:
    """``mask`` grown by ``by`` pixels all round (fingers, an arm's shadow)."""
    if not mask.any():
        return mask
    k = max(3, int(2 * by) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    return np.asarray(cv2.dilate(mask, disc), dtype=np.uint8)


def hand_cover(
    image_bgr: NDArray[np.uint8], outline: Outline, width: int = 320, margin: float = 0.25
) -> tuple[float, ...]:
    """Share of each of the 12 regions under the arm, the arm grown by ``margin`` squares.

    The margin takes in fingers and the arm's shadow, which hide pebbles but
    are not skin-coloured; a square that is only brushed by it is still
    called covered, since a referee must not read a half-hidden pile.
    """
    arm, s = hand_mask(image_bgr, outline, width, margin)
    return mask_cover(arm, s, outline.regions)


def mask_cover(
    mask: NDArray[np.uint8], scale: float, regions: Sequence[NDArray[np.float64]]
) -> tuple[float, ...]:
    """Share of each region (frame pixels) under ``mask`` (1), drawn ``scale`` times the
    frame's size."""
    out = []
    for poly in regions:
        inside = np.zeros(mask.shape, np.uint8)
        cv2.fillPoly(inside, [np.rint(np.asarray(poly) * scale).astype(np.int32)], 1)
        area = float(inside.sum())
        out.append(float((mask & inside).sum()) / area if area else 0.0)
    return tuple(out)


def motion(
    previous: NDArray[np.uint8] | None,
    image: NDArray[np.uint8],
    config: GateConfig | None = None,
) -> float:
    """Mean absolute grey difference between two frames on ``work_width`` copies.

    0.0 without a previous frame or when the two differ in shape (a new camera mode).
    """
    cfg = config or GateConfig()
    return _motion(previous, _small_grey(image, cfg.work_width), cfg.work_width)


def _motion(previous: NDArray[np.uint8] | None, grey: NDArray[np.uint8], width: int) -> float:
    if previous is None or not previous.size:
        return 0.0
    prev = _small_grey(previous, width)
    return float(cv2.absdiff(prev, grey).mean()) if prev.shape == grey.shape else 0.0


def assess_frame(
    image: NDArray[np.uint8] | None,
    previous: NDArray[np.uint8] | None = None,
    outline: Outline | None = None,
    config: GateConfig | None = None,
) -> FrameQuality:
    """Decide whether a frame may be counted, and say why not.

    Without ``outline`` only the frame itself and its motion are judged (the
    checks that need no board); ``assess_hand`` adds the hand check later.
    """
    cfg = config or GateConfig()
    if image is None or image.size == 0 or image.ndim not in (2, 3):
        return FrameQuality(Unfit.EMPTY)
    grey = _small_grey(image, cfg.work_width)
    mean = float(grey.mean())
    clipped_hi = float((grey >= 250).mean())
    clipped_lo = float((grey <= 5).mean())
    if float(grey.std()) < cfg.empty_std:
        return FrameQuality(Unfit.NO_DETAIL, mean_level=mean)
    if mean < cfg.dark_mean or clipped_lo > cfg.clipped_frac:
        return FrameQuality(Unfit.DARK, mean_level=mean, clipped=clipped_lo)
    if mean > cfg.bright_mean or clipped_hi > cfg.clipped_frac:
        return FrameQuality(Unfit.BRIGHT, mean_level=mean, clipped=clipped_hi)
    moved = _motion(previous, grey, cfg.work_width)
    if moved > cfg.motion_threshold:
        return FrameQuality(Unfit.MOTION, moved, mean)
    quality = FrameQuality(None, moved, mean, max(clipped_hi, clipped_lo))
    return quality if outline is None else assess_hand(quality, image, outline, cfg)


def assess_hand(
    quality: FrameQuality,
    image: NDArray[np.uint8],
    outline: Outline,
    config: GateConfig | None = None,
) -> FrameQuality:
    """``quality`` (from ``assess_frame`` without an outline) with the hand check added.

    Once the board is located the frame need not be judged again: a frame
    already unfit stays as it was, a fit one may now be rejected for a hand.
    """
    cfg = config or GateConfig()
    if not quality.ok or image.ndim != 3:
        return quality
    skin = hand_score(image, outline, cfg.work_width)
    if skin > cfg.skin_frac:
        return replace(quality, problem=Unfit.HAND, clipped=0.0, skin=skin)
    return replace(quality, skin=skin)

"""Stage 3: is this frame fit to count?

Cheap checks on a small grey copy, in the order a referee needs them: an
empty or unreadable frame, bad exposure, motion against the previous frame,
then a hand or arm over the board (skin colour that is over the board but not
around it, so skin-coloured floors such as terracotta or wood do not count).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import GateConfig
from vision.locate import Outline

HAND = "hand or arm over the board"


@dataclass(frozen=True)
class FrameQuality:
    """Verdict on one frame; ``reason`` is None when ``ok``."""

    ok: bool
    reason: str | None
    motion: float = 0.0
    mean_level: float = 0.0
    clipped: float = 0.0
    skin: float = 0.0

    @property
    def hand(self) -> bool:
        """Rejected only because a hand or arm is over the board."""
        return self.reason == HAND


def _small_grey(image: NDArray[np.uint8], width: int) -> NDArray[np.uint8]:
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape[:2]
    s = width / float(w)
    return cv2.resize(grey, (width, max(2, round(h * s))), interpolation=cv2.INTER_AREA)


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
    small = cv2.resize(image_bgr, (width, max(2, round(h * s))), interpolation=cv2.INTER_AREA)
    skin = skin_mask(small).astype(np.uint8)
    skin = cv2.morphologyEx(skin, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
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


def hand_cover(
    image_bgr: NDArray[np.uint8], outline: Outline, width: int = 320, margin: float = 0.25
) -> tuple[float, ...]:
    """Share of each of the 12 regions under the arm, the arm grown by ``margin`` squares.

    The margin takes in fingers and the arm's shadow, which hide pebbles but
    are not skin-coloured; a square that is only brushed by it is still
    called covered, since a referee must not read a half-hidden pile.
    """
    arm, _, s = _arm_mask(image_bgr, outline, width)
    if arm.any():
        k = max(3, int(2 * margin * outline.px_per_unit() * s) | 1)
        arm = cv2.dilate(arm, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    out = []
    for poly in outline.regions:
        mask = np.zeros(arm.shape, np.uint8)
        cv2.fillPoly(mask, [np.rint(poly * s).astype(np.int32)], 1)
        area = float(mask.sum())
        out.append(float((arm & mask).sum()) / area if area else 0.0)
    return tuple(out)


def assess_frame(
    image: NDArray[np.uint8] | None,
    previous: NDArray[np.uint8] | None = None,
    outline: Outline | None = None,
    config: GateConfig | None = None,
) -> FrameQuality:
    """Decide whether a frame may be counted, and say why not."""
    cfg = config or GateConfig()
    if image is None or image.size == 0 or image.ndim not in (2, 3):
        return FrameQuality(False, "empty frame")
    grey = _small_grey(image, cfg.work_width)
    mean = float(grey.mean())
    clipped_hi = float((grey >= 250).mean())
    clipped_lo = float((grey <= 5).mean())
    if float(grey.std()) < cfg.empty_std:
        return FrameQuality(False, "empty frame (no detail)", mean_level=mean)
    if mean < cfg.dark_mean or clipped_lo > cfg.clipped_frac:
        return FrameQuality(False, "under-exposed", mean_level=mean, clipped=clipped_lo)
    if mean > cfg.bright_mean or clipped_hi > cfg.clipped_frac:
        return FrameQuality(False, "over-exposed", mean_level=mean, clipped=clipped_hi)
    motion = 0.0
    if previous is not None and previous.size:
        prev = _small_grey(previous, cfg.work_width)
        if prev.shape == grey.shape:
            motion = float(cv2.absdiff(prev, grey).mean())
            if motion > cfg.motion_threshold:
                return FrameQuality(False, "motion since the previous frame", motion, mean)
    skin = 0.0
    if outline is not None and image.ndim == 3:
        skin = hand_score(image, outline, cfg.work_width)
        if skin > cfg.skin_frac:
            return FrameQuality(False, HAND, motion, mean, skin=skin)
    return FrameQuality(True, None, motion, mean, max(clipped_hi, clipped_lo), skin)

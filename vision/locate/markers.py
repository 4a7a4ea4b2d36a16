"""The board's four outer corners from marks a person put on them.

Where no search finds the board (thin charcoal along brick joints, a board the
frame cuts), a person gives its corners once. Typing pixel coordinates needs an
image viewer; a fixed camera needs none: photograph the board, put a pebble (or
any small thing) on each of its four outer corners, photograph it again. What
changed between the two photos, in four compact blobs, is the marks, and their
centres are the corners (``oanquan calibrate IMAGE --markers MARKED``).
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.errors import ImagePairError, MarksNotFoundError

#: The photos are compared at this width (finer only adds sensor noise).
WORK_WIDTH = 1280
#: The least colour change (CIELAB units) a mark makes: light that drifts between
#: the photos, or sensor noise, stays under it.
LEAST_STEP = 12.0
#: Where the sensor's grain lifts the threshold above ``LEAST_STEP`` and hides marks, the
#: difference is read again smoothed this much (pixels, a Gaussian's sigma): marks are
#: wider than grain.
GRAIN_BLUR = 2.0
#: A change whose centre lies within this many of a larger one's widths is part of it:
#: a mark's lit side and its shadow change, its middle tone may not.
JOIN = 1.5
#: ... or within this share of the frame's width (a grey pebble on grey ground changes
#: in two small crescents, its lit side and its shadow); corners lie far further apart.
JOIN_FLOOR = 0.025
#: A mark's area, as a share of the frame's: a small pebble far away to a fist.
MARK_AREA = (1e-5, 0.01)
#: The least area of the four marks' outline, in squares of their widest span: a 2x5
#: board seen at the steepest tilt still bounds about a fifth of it; four in a row none.
FLATTEST = 0.05
#: Changes beyond the four marks smaller than this share of the least mark's area
#: are taken for noise; larger ones make the marks ambiguous.
STRAY = 0.25


def marker_corners(before: NDArray[np.uint8], after: NDArray[np.uint8]) -> NDArray[np.float64]:
    """The centres (4, 2), in pixels of the photos, in no order, of the four marks that
    ``after`` shows on ``before``'s board (the same camera, unmoved, the same size).

    Raises ``MarksNotFoundError`` (a ``BoardNotFoundError``) saying what was seen
    instead: fewer or more than four marks, or four that do not bound a board;
    ``ImagePairError`` for photos of two sizes.
    """
    if before.shape != after.shape or before.ndim != 3:
        raise ImagePairError(
            f"marks: two colour photos of one size, got {before.shape} and {after.shape}"
        )
    diff, scale = _difference(before, after)
    dist, step = _distance(diff)
    try:
        return _marks(dist, step, scale)
    except MarksNotFoundError:
        if step <= LEAST_STEP:
            raise
    # grainy photos (dim light): the grain lifted the threshold over the marks; average
    # it out, which thins a small mark's change far less (the smoothing's own rim along
    # the frame's edge is no mark)
    smooth = np.asarray(cv2.GaussianBlur(diff, (0, 0), GRAIN_BLUR), np.float32)
    return _marks(*_distance(smooth), scale, rim=True)


def _difference(
    before: NDArray[np.uint8], after: NDArray[np.uint8]
) -> tuple[NDArray[np.float32], float]:
    """The two photos' CIELAB difference, read at most ``WORK_WIDTH`` wide (and that
    scale), less the whole frame's drift of light."""
    h, w = before.shape[:2]
    scale = min(1.0, WORK_WIDTH / w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    labs = []
    for image in (before, after):
        small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (3, 3), 0)
        labs.append(cv2.cvtColor(small.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab))
    diff = np.asarray(labs[1] - labs[0], np.float32)
    diff -= np.median(diff.reshape(-1, 3), axis=0)
    return diff, scale


def _marks(
    dist: NDArray[np.float32], step: float, scale: float, rim: bool = False
) -> NDArray[np.float64]:
    """``marker_corners`` on each pixel's colour change ``dist`` over ``step`` (read at
    ``scale``); ``rim``: changes touching the frame's edge are left out."""
    mask = (dist > step).astype(np.uint8)
    n, _, stats, centres = cv2.connectedComponentsWithStats(mask, connectivity=8)
    height, width = dist.shape[:2]
    low, high = MARK_AREA[0] * width * height, MARK_AREA[1] * width * height
    x, y = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
    inside = (x > 0) & (y > 0)
    inside &= (x + stats[:, cv2.CC_STAT_WIDTH] < width) & (
        y + stats[:, cv2.CC_STAT_HEIGHT] < height
    )
    blobs = sorted(
        (
            (float(stats[i, cv2.CC_STAT_AREA]), centres[i])
            for i in range(1, n)
            if inside[i] or not rim
        ),
        key=lambda blob: -blob[0],
    )
    marks = [(a, c) for a, c in _joined(blobs, JOIN_FLOOR * width) if low <= a <= high]
    if len(marks) < 4:
        raise MarksNotFoundError(
            f"saw {len(marks)} marks where 4 were expected: put one on each outer corner",
            len(marks),
        )
    if len(marks) > 4 and marks[4][0] >= STRAY * marks[3][0]:
        raise MarksNotFoundError(
            f"saw {len(marks)} changes where 4 marks were expected: move nothing else"
            " between the two photos",
            len(marks),
        )
    # (pixel centres: the reduced frame's pixel x covers the full one's from x / scale)
    found = np.array([c for _, c in marks[:4]], np.float64)
    points = np.asarray((found + 0.5) / scale - 0.5, np.float64)
    hull = cv2.convexHull(points.astype(np.float32))
    span = max(float(np.linalg.norm(p - q)) for p in points for q in points)
    if len(hull) != 4 or cv2.contourArea(hull) < FLATTEST * span**2:
        raise MarksNotFoundError("the four marks do not bound a board: one on each outer corner", 4)
    return points


def _distance(diff: NDArray[np.float32]) -> tuple[NDArray[np.float32], float]:
    """Each pixel's colour change (CIELAB distance) and the threshold a mark must pass:
    ``LEAST_STEP``, or eight spreads of the changes above their median where the grain
    is coarser."""
    dist = np.sqrt((diff * diff).sum(axis=2))
    median = float(np.median(dist))
    mad = float(np.median(np.abs(dist - median)))
    return dist, max(LEAST_STEP, median + 8.0 * 1.4826 * mad)


def _joined(
    blobs: list[tuple[float, NDArray[np.float64]]], floor: float
) -> list[tuple[float, NDArray[np.float64]]]:
    """``blobs`` (area, centre), largest first, each joined to a larger one whose centre
    lies within ``JOIN`` of its width or ``floor`` pixels (areas summed, centres weighted
    by them)."""
    groups: list[tuple[float, NDArray[np.float64]]] = []
    for area, centre in blobs:
        for k, (total, middle) in enumerate(groups):
            width = 2.0 * np.sqrt(total / np.pi)
            if np.linalg.norm(centre - middle) <= max(JOIN * width, floor):
                groups[k] = (total + area, (middle * total + centre * area) / (total + area))
                break
        else:
            groups.append((area, np.asarray(centre, np.float64)))
    return sorted(groups, key=lambda group: -group[0])

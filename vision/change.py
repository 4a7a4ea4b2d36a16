"""Which squares changed since the frame the referee last confirmed (fixed camera).

With a fixed camera, a square whose pixels are the same as in the confirmed
frame still holds what the referee knows it held, however hard its pile is
to count; only the squares a move touched are left to the counter. That is
the cheapest and most reliable evidence a fixed camera gives.

Also here: whether a frame differs a lot from the one just before (a new
still, such as a photo after a move) or barely (the next frame of a live
stream). Pure functions; the caller keeps the reference and the previous
thumbnail, and drops both when ``Locator`` says the board moved.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import ChangeConfig
from vision.geometry import FloatArray

_DEFAULT = ChangeConfig()


def thumbnail(image_bgr: NDArray[np.uint8], cfg: ChangeConfig | None = None) -> NDArray[np.float32]:
    """A small grey copy, ``thumb_width`` wide, to compare a frame with the one before."""
    width = (cfg or _DEFAULT).thumb_width
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    small = cv2.resize(grey, (width, max(2, round(width * h / w))), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32)


def scene_change(previous: NDArray[np.float32] | None, thumb: NDArray[np.float32]) -> float:
    """Mean grey-level change between two thumbnails; infinite without a comparable previous."""
    if previous is None or previous.shape != thumb.shape:
        return float("inf")
    return float(np.abs(thumb - previous).mean())


def is_new_scene(
    previous: NDArray[np.float32] | None,
    thumb: NDArray[np.float32],
    cfg: ChangeConfig | None = None,
) -> bool:
    """This frame differs from the one before by at least ``new_scene``: a new still."""
    return scene_change(previous, thumb) >= (cfg or _DEFAULT).new_scene


def square_grey(image_bgr: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The full-resolution grey image squares are compared on (lightly blurred: sensor noise)."""
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.GaussianBlur(grey, (5, 5), 0), dtype=np.uint8)


def changed_squares(
    reference: NDArray[np.uint8],
    grey: NDArray[np.uint8],
    regions: Sequence[FloatArray],
    px_per_square: float,
    cfg: ChangeConfig | None = None,
) -> tuple[bool, ...]:
    """Which regions differ from the reference by at least a fraction of a pebble.

    Each square's median brightness is taken out first, so a cloud or the
    camera's exposure does not change every square at once. A region that
    lies wholly outside the image counts as changed: nothing says otherwise.
    """
    cfg = cfg or _DEFAULT
    pebble_area = np.pi / 4 * (cfg.pebble_share * px_per_square) ** 2
    limit = cfg.changed_pebbles * pebble_area
    out = []
    for poly in regions:
        mask = np.zeros(grey.shape, np.uint8)
        cv2.fillPoly(mask, [np.rint(poly).astype(np.int32)], 1)
        inside = mask > 0
        a = reference[inside].astype(np.int16)
        b = grey[inside].astype(np.int16)
        if a.size == 0:
            out.append(True)
            continue
        diff = np.abs((a - int(np.median(a))) - (b - int(np.median(b))))
        out.append(int((diff > cfg.pixel_step).sum()) >= limit)
    return tuple(out)


def changed_since(
    reference: NDArray[np.uint8] | None,
    grey: NDArray[np.uint8],
    regions: Sequence[FloatArray],
    px_per_square: float,
    hidden: Sequence[bool] = (),
    cfg: ChangeConfig | None = None,
) -> tuple[bool, ...] | None:
    """``changed_squares`` against the confirmed reference, None when there is none to compare.

    A square ``hidden`` in this frame (under a hand) counts as changed: the
    referee must not assume it kept its pebbles.
    """
    if reference is None or reference.shape != grey.shape:
        return None
    flags = changed_squares(reference, grey, regions, px_per_square, cfg)
    if not hidden:
        return flags
    return tuple(f or h for f, h in zip(flags, hidden, strict=True))


def confirmed_reference(
    reference: NDArray[np.uint8] | None,
    grey: NDArray[np.uint8],
    regions: Sequence[FloatArray],
    hidden: Sequence[bool] = (),
) -> NDArray[np.uint8]:
    """The reference after the referee confirmed the frame whose grey image is ``grey``.

    Squares a hand hid in that frame keep their old reference: they are
    compared later with what was there before, which is still right for the
    referee (a square the move changed shows as changed and is counted).
    """
    if reference is None or reference.shape != grey.shape or not any(hidden):
        return grey
    keep = np.zeros(grey.shape, np.uint8)
    for poly, covered in zip(regions, hidden, strict=True):
        if covered:
            cv2.fillPoly(keep, [np.rint(poly).astype(np.int32)], 1)
    return np.where(keep > 0, reference, grey).astype(np.uint8)


def intrusion_cover(
    reference_bgr: NDArray[np.uint8] | None,
    image_bgr: NDArray[np.uint8],
    regions: Sequence[FloatArray],
    px_per_square: float,
    cfg: ChangeConfig | None = None,
    *,
    width: int = 320,
    margin: float = 0.25,
) -> tuple[float, ...] | None:
    """Share of each region under something that reached onto the board from beyond it.

    A move changes squares only; an arm (or a player's shadow) is one changed
    blob that crosses the board's edge and extends ``intrusion_reach``
    squares beyond it. Pebbles carried to a heap beside the board change
    places off the board too, but never as one blob joined to a square.
    Colour images are compared (an arm can match the floor's grey level but
    rarely its colour), each channel's median matched first so a cloud is no
    arm; the blob is grown by ``margin`` squares (fingers, the arm's shadow).
    None without a comparable reference.
    """
    cfg = cfg or _DEFAULT
    if reference_bgr is None or reference_bgr.shape != image_bgr.shape or not regions:
        return None
    h, w = image_bgr.shape[:2]
    s = width / float(w)
    size = (width, max(2, round(h * s)))
    ref = cv2.resize(reference_bgr, size, interpolation=cv2.INTER_AREA).astype(np.int16)
    now = cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA).astype(np.int16)
    ref -= np.median(ref.reshape(-1, ref.shape[-1]), axis=0).astype(np.int16)
    now -= np.median(now.reshape(-1, now.shape[-1]), axis=0).astype(np.int16)
    diff = np.abs(now - ref).max(axis=2)
    changed = (diff > cfg.intrusion_step).astype(np.uint8)
    changed = np.asarray(cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    changed = np.asarray(cv2.morphologyEx(changed, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)))
    board = np.zeros(changed.shape, np.uint8)
    polys = [np.rint(np.asarray(p) * s).astype(np.int32) for p in regions]
    cv2.fillPoly(board, polys, 1)
    unit = max(1.0, px_per_square * s)
    k = max(3, int(2 * cfg.intrusion_reach * unit) | 1)
    near = np.asarray(cv2.dilate(board, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))))
    n, comp = cv2.connectedComponents(changed, connectivity=8)
    arm = np.zeros(changed.shape, np.uint8)
    for i in range(1, n):
        blob = comp == i
        if (blob & (board > 0)).any() and (blob & (near == 0)).any():
            arm[blob] = 1
    if not arm.any():
        return tuple(0.0 for _ in regions)
    g = max(3, int(2 * margin * unit) | 1)
    arm = np.asarray(cv2.dilate(arm, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (g, g))))
    out = []
    for poly in polys:
        mask = np.zeros(arm.shape, np.uint8)
        cv2.fillPoly(mask, [poly], 1)
        area = float(mask.sum())
        out.append(float((arm & mask).sum()) / area if area else 0.0)
    return tuple(out)

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

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import NUM_SQUARES
from vision import detect
from vision.config import ChangeConfig
from vision.count import rectify
from vision.gate import grown
from vision.geometry import FloatArray, region_polygons_board
from vision.locate import Outline

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


def intrusion_mask(
    reference_bgr: NDArray[np.uint8] | None,
    image_bgr: NDArray[np.uint8],
    regions: Sequence[FloatArray],
    px_per_square: float,
    cfg: ChangeConfig | None = None,
    *,
    width: int = 320,
    margin: float = 0.25,
) -> tuple[NDArray[np.uint8], float] | None:
    """Something that reached onto the board from beyond it (1), on a copy ``width`` px
    wide, and that copy's scale.

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
    return grown(arm, margin * unit), s


def change_canvas(
    image_bgr: NDArray[np.uint8], outline: Outline, cfg: ChangeConfig | None = None
) -> NDArray[np.uint8]:
    """The board rectified to ``area_px`` per square side (a pebble has the same size
    everywhere on it), lightly blurred against sensor noise: what areas are measured on."""
    cfg = cfg or _DEFAULT
    rect = rectify(image_bgr, outline, cfg.area_px)
    return np.asarray(cv2.GaussianBlur(rect, (3, 3), 0), dtype=np.uint8)


@functools.lru_cache(maxsize=8)
def canvas_squares(depth: float, px: int) -> NDArray[np.int32]:
    """Square index (0..11, -1 off the board) of every pixel of a change canvas."""
    w, h, a = detect.canvas(px)
    lab = np.full((h, w), -1, np.int32)
    for i, poly in enumerate(region_polygons_board(depth)):
        p = (np.concatenate([poly, np.ones((len(poly), 1))], axis=1) @ a.T)[:, :2]
        cv2.fillPoly(lab, [np.rint(p * 16).astype(np.int32)], i, shift=4)
    lab.setflags(write=False)
    return lab


#: the canvas scale (px per square) shake and light are measured at: finer canvases
#: are sampled down to it (their answers do not need the extra pixels)
_COARSE_PX = 80


@functools.cache
def _even_dft_size(n: int) -> int:
    """The largest even size up to ``n`` that OpenCV's DFT takes as it is.

    ``cv2.phaseCorrelate`` pads each side to ``cv2.getOptimalDFTSize``; where that
    is odd (616 -> 625) it reads two identical images as shifted by half a pixel,
    which made every still frame look shaken. The images' middle is compared instead.
    """
    m = n
    while m > 8 and (m % 2 or cv2.getOptimalDFTSize(m) != m):
        m -= 1
    return m


@functools.lru_cache(maxsize=4)
def _hanning(width: int, height: int) -> NDArray[np.float32]:
    """The phase correlation's window, built once per canvas size (every frame needs it)."""
    window = np.asarray(cv2.createHanningWindow((width, height), cv2.CV_32F), np.float32)
    window.setflags(write=False)
    return window


def _phase_shift(
    g0: NDArray[np.float32], g1: NDArray[np.float32]
) -> tuple[tuple[float, float], float]:
    """``cv2.phaseCorrelate`` of two grey images, on their middle at ``_even_dft_size``
    (the shift, the peak's response)."""
    h, w = g0.shape
    ch, cw = _even_dft_size(h), _even_dft_size(w)
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    c0 = np.ascontiguousarray(g0[y0 : y0 + ch, x0 : x0 + cw])
    c1 = np.ascontiguousarray(g1[y0 : y0 + ch, x0 : x0 + cw])
    shift, response = cv2.phaseCorrelate(c0, c1, _hanning(cw, ch))
    return (float(shift[0]), float(shift[1])), float(response)


def _shake(
    reference: NDArray[np.float32], canvas: NDArray[np.float32], limit: float
) -> FloatArray | None:
    """How a shaken camera moved ``canvas`` against ``reference``: the 2x3 affine map taking
    each canvas pixel to where it lay in the reference, or None when it did not move.

    Found as a shift (phase correlation), then refined to an affine map (ECC): on the
    rectified board a shaken camera moves the near end more than the far end.
    """
    g0 = np.asarray(cv2.cvtColor(reference, cv2.COLOR_BGR2GRAY), np.float32)
    g1 = np.asarray(cv2.cvtColor(canvas, cv2.COLOR_BGR2GRAY), np.float32)
    (dx, dy), response = _phase_shift(g0, g1)
    if response < 0.2 or not 0.25 <= float(np.hypot(dx, dy)) <= limit:
        return None
    warp = np.array([[1.0, 0.0, -dx], [0.0, 1.0, -dy]], np.float32)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-4)
    try:
        # the stubs' overload with gaussFiltSize wants a mask; OpenCV takes None (no mask)
        _, refined = cv2.findTransformECC(  # type: ignore[call-overload]
            g1, g0, warp.copy(), cv2.MOTION_AFFINE, criteria, None, 3
        )
    except cv2.error:
        return warp.astype(np.float64)  # (no convergence: the shift alone)
    if np.abs(refined[:, :2] - np.eye(2)).max() > 0.05:
        return warp.astype(np.float64)  # not a shake: a move would not stretch the board
    return np.asarray(refined, np.float64)


@functools.lru_cache(maxsize=8)
def _square_samples(depth: float, px: int) -> tuple[NDArray[np.intp], ...]:
    """Flat indices of each square's pixels on a change canvas, every ``(px / 80)``-th
    row and column: as many samples as the 80 px canvas has, for each square's light."""
    labels = canvas_squares(depth, px)
    step = max(1, round(px / _COARSE_PX))
    grid = np.zeros(labels.shape, bool)
    grid[::step, ::step] = True
    flat = labels.ravel()
    keep = grid.ravel()
    out = tuple(np.flatnonzero((flat == sq) & keep) for sq in range(NUM_SQUARES))
    for a in out:
        a.setflags(write=False)
    return out


@dataclass(frozen=True)
class SquareChange:
    """What changed in one square since the reference (``square_changes``).

    ``area``: pebble areas that changed. ``pieces``: the pebbles the counter
    found there on the reference frame; ``kept``: the share of them whose
    place did not change (None under half a pebble): a pile a move left, or
    only dropped pieces on, keeps most of its pebbles in place; one it
    picked up keeps none.
    """

    area: float
    pieces: float
    kept: float | None


def _channel_max(image: NDArray[np.float32]) -> NDArray[np.float32]:
    """The largest of the three channels per pixel (``max(axis=2)``, a few times faster)."""
    return np.maximum(np.maximum(image[..., 0], image[..., 1]), image[..., 2])


def _opponent(image: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """The two opponent colours of a BGR image (red - green, yellow - blue), one plane
    each: on whole planes the arithmetic is a few times faster than ``cv2.transform`` to
    two channels, and gives the same floats (the same products summed in the same order)."""
    b, g, r = cv2.split(image)
    return r - g, (-b + g * np.float32(0.5)) + r * np.float32(0.5)


@functools.lru_cache(maxsize=8)
def _square_lut_index(depth: float, px: int) -> NDArray[np.uint8]:
    """``canvas_squares`` + 1 as a three-channel 8-bit image: with a float table, cv2.LUT
    spreads each square's per-channel light gain over its pixels in one pass (numpy's
    fancy indexing of the gains by label took six times as long)."""
    labels = canvas_squares(depth, px)
    index = np.asarray(cv2.merge([(labels + 1).astype(np.uint8)] * 3), np.uint8)
    index.setflags(write=False)
    return index


def _beyond(
    now: NDArray[np.float32], high: NDArray[np.float32], low: NDArray[np.float32]
) -> NDArray[np.float32]:
    """How far each value of ``now`` lies outside ``[low, high]`` (negative inside), in
    ``high``'s memory: ``high`` and ``low`` are overwritten (allocating the temporaries
    cost as much as the arithmetic)."""
    np.subtract(now, high, out=high)
    np.subtract(low, now, out=low)
    return np.maximum(high, low, out=high)


def _changed_mask(
    reference: NDArray[np.uint8],
    canvas: NDArray[np.uint8],
    cfg: ChangeConfig,
    depth: float,
    masked: NDArray[np.uint8] | None = None,
) -> NDArray[np.uint8]:
    """Pixels of ``canvas`` outside their reference neighbourhood's range (``square_changes``);
    ``depth``: the semicircles' depth, rounded as ``canvas_squares`` caches it; ``masked``:
    pixels an arm covers, left out of each square's light."""
    ref = reference.astype(np.float32)
    now = canvas.astype(np.float32)
    factor = cfg.area_px / _COARSE_PX
    if factor > 1.25:
        # the shake is found on a copy at the coarse scale, then scaled back up
        size = (round(ref.shape[1] / factor), round(ref.shape[0] / factor))
        small0 = np.asarray(cv2.resize(ref, size, interpolation=cv2.INTER_AREA), np.float32)
        small1 = np.asarray(cv2.resize(now, size, interpolation=cv2.INTER_AREA), np.float32)
        warp = _shake(small0, small1, cfg.max_shift)
        if warp is not None:
            warp[:, 2] *= factor
    else:
        warp = _shake(ref, now, cfg.max_shift * factor)
    if warp is not None:
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        ref = np.asarray(
            cv2.warpAffine(
                ref, warp, ref.shape[1::-1], flags=flags, borderMode=cv2.BORDER_REPLICATE
            ),
            np.float32,
        )
    # per square and channel, the light of the frame against the reference's
    # (the median of the pixels' ratios: a square half in a shadow has no stable median)
    flat_now, flat_ref = now.reshape(-1, 3), ref.reshape(-1, 3)
    flat_mask = masked.reshape(-1) if masked is not None else None
    gain = np.ones((256, 3), np.float32)  # row 0: off the board (label -1), a gain of 1
    for sq, where in enumerate(_square_samples(depth, cfg.area_px)):
        if flat_mask is not None and where.size:
            clear = where[flat_mask[where] == 0]
            where = clear if clear.size >= where.size // 5 else where
        if where.size:
            ratio = (flat_now[where] + 4.0) / (flat_ref[where] + 4.0)
            gain[sq + 1] = np.clip(np.median(ratio, axis=0), 0.5, 2.0)
    g = cv2.LUT(_square_lut_index(depth, cfg.area_px), gain.reshape(1, 256, 3))
    kernel = np.ones((3, 3), np.uint8)
    high = np.multiply(cv2.dilate(ref, kernel), g, dtype=np.float32)
    low = np.multiply(cv2.erode(ref, kernel), g, dtype=np.float32)
    diff = _channel_max(_beyond(now, high, low))
    lit = ref * g  # the reference in this frame's light
    step: NDArray[np.float32] | float = cfg.area_step
    if cfg.area_rel > 0:
        step = np.clip(cfg.area_rel * _channel_max(lit), cfg.area_least, cfg.area_step)
    outside = diff > step
    if cfg.area_chroma > 0:
        # the same range test on the opponent colours, where a textured grey ground is flat
        for ref_opp, now_opp in zip(_opponent(lit), _opponent(now), strict=True):
            hi = np.asarray(cv2.dilate(ref_opp, kernel), np.float32)
            lo = np.asarray(cv2.erode(ref_opp, kernel), np.float32)
            outside |= _beyond(now_opp, hi, lo) > cfg.area_chroma
    changed = outside.astype(np.uint8)
    width = max(2, round(cfg.min_width * cfg.pebble_share * cfg.area_px))
    blob = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (width, width))
    return np.asarray(cv2.morphologyEx(changed, cv2.MORPH_OPEN, blob))


def changed_pixels(
    reference: NDArray[np.uint8],
    canvas: NDArray[np.uint8],
    depth: float,
    cfg: ChangeConfig | None = None,
) -> NDArray[np.uint8]:
    """1 where ``canvas`` (``change_canvas``) differs from ``reference``: the mask
    ``square_changes`` measures areas on, for a caller that wants the blobs themselves
    (the tally's pieces against a photo of the empty board)."""
    return _changed_mask(reference, canvas, cfg or _DEFAULT, round(depth, 3))


def _density_px(pebbles: NDArray[np.float32]) -> int:
    """The canvas scale (px per square) a density map of ``vision.detect`` was made at."""
    return round(int(pebbles.shape[1]) * detect.STRIDE / (detect.X1 - detect.X0))


def canvas_mask(
    mask: NDArray[np.uint8], scale: float, outline: Outline, px: int = _DEFAULT.area_px
) -> NDArray[np.uint8]:
    """A mask of the frame (1 = hidden) drawn ``scale`` times the frame's size, on the
    change canvas of ``outline`` at ``px`` per square (``change_canvas``'s pixels)."""
    w, h, a = detect.canvas(px)
    m = a @ np.linalg.inv(outline.homography) @ np.diag([1.0 / scale, 1.0 / scale, 1.0])
    warped = cv2.warpPerspective(mask, m, (w, h), flags=cv2.INTER_NEAREST, borderValue=0)
    return np.asarray(warped, dtype=np.uint8)


def square_changes(
    reference: NDArray[np.uint8] | None,
    canvas: NDArray[np.uint8],
    depth: float,
    hidden: Sequence[bool] = (),
    cfg: ChangeConfig | None = None,
    pebbles: NDArray[np.float32] | None = None,
    masked: NDArray[np.uint8] | None = None,
) -> tuple[SquareChange | None, ...] | None:
    """How each square changed since the reference canvas (see :class:`SquareChange`).

    A move leaves a square untouched (area about 0), drops one or two pieces
    on it (about 1 or 2, whatever lay there before, most of it kept), or
    takes its pile away (the pile's area and whatever was sown afterwards,
    nothing kept): the referee weighs each candidate move by how well it
    predicts these. Each square's light is matched channel by channel first
    (a cloud, the sun moving), a pixel counts as changed only when it lies
    outside the range of its reference neighbourhood (a piece nudged a
    pixel) by ``area_step`` levels, or ``area_rel`` of its brightness where
    that is less (a shadow), or in either opponent colour by ``area_chroma``
    levels (coloured pieces on a grey ground whose grains span every
    channel's range), a camera shaken by up to ``max_shift`` pixels
    is realigned, and changed blobs narrower than ``min_width`` pebbles are
    dropped (a shadow's rim moving with the sun). ``pebbles``: the
    counter's pebble density on the reference frame
    (``vision.count.count_board_density``): where its pebbles lay, for
    ``kept`` (None without it). None for a square ``hidden`` (under a hand),
    and None in all when there is no comparable reference. ``masked`` (``canvas_mask``: 1
    where an arm hides the canvas): a hidden square of which at least ``seen_least`` is
    clear of it is measured on that part, its area scaled up to the whole square.
    """
    cfg = cfg or _DEFAULT
    if reference is None or reference.shape != canvas.shape:
        return None
    labels = canvas_squares(round(depth, 3), cfg.area_px)
    if labels.shape != canvas.shape[:2]:
        return None
    if masked is not None and masked.shape != labels.shape:
        masked = None  # (a mask of another canvas says nothing here)
    changed = _changed_mask(reference, canvas, cfg, round(depth, 3), masked)
    inside = labels >= 0
    lab = labels[inside]
    pebble = np.pi / 4 * (cfg.pebble_share * cfg.area_px) ** 2
    clear = np.ones(NUM_SQUARES)
    if masked is not None:
        # (a few pixels more: the arm's edge is soft, and the range test reads neighbours)
        masked = np.asarray(cv2.dilate(masked, np.ones((5, 5), np.uint8)), np.uint8)
        free = masked[inside] == 0
        size = np.bincount(lab, minlength=NUM_SQUARES).astype(np.float64)
        clear = np.bincount(lab, free.astype(np.float64), minlength=NUM_SQUARES) / np.maximum(
            size, 1.0
        )
        changed = np.where(masked > 0, 0, changed).astype(changed.dtype)
    area = np.bincount(lab, changed[inside].astype(np.float64), minlength=NUM_SQUARES)
    laid = np.zeros(NUM_SQUARES)
    still = np.zeros(NUM_SQUARES)
    if pebbles is not None and pebbles.ndim == 2 and min(pebbles.shape) > 0:
        # the share of each density cell left as it was, weighed by its pebbles; the
        # density's canvas (the counter's scale) may be coarser than this one
        h, w = pebbles.shape
        cells = detect.region_cells(depth, px=_density_px(pebbles))
        same = cv2.resize((changed == 0).astype(np.float32), (w, h), interpolation=cv2.INTER_AREA)
        seen = np.ones((h, w), np.float32)
        if masked is not None:
            # a density cell an arm touches says nothing of its pebbles
            hid = cv2.resize(masked.astype(np.float32), (w, h), interpolation=cv2.INTER_AREA)
            seen = (hid <= 0.0).astype(np.float32)
        hh = min(h, cells.shape[0])
        ww = min(w, cells.shape[1])
        c, d = cells[:hh, :ww], pebbles[:hh, :ww].astype(np.float64)
        on = c >= 0
        # weighted, bincount counts in float64 (the stubs say intp)
        d = d * seen[:hh, :ww]
        laid = np.asarray(np.bincount(c[on], d[on], minlength=NUM_SQUARES), np.float64)
        still = np.asarray(
            np.bincount(c[on], (d * same[:hh, :ww])[on], minlength=NUM_SQUARES), np.float64
        )
    out: list[SquareChange | None] = []
    for sq in range(NUM_SQUARES):
        if hidden and hidden[sq] and (masked is None or clear[sq] < cfg.seen_least):
            out.append(None)
            continue
        kept = float(still[sq] / laid[sq]) if laid[sq] >= 0.5 else None
        out.append(SquareChange(float(area[sq] / pebble / clear[sq]), float(laid[sq]), kept))
    return tuple(out)


def confirmed_canvas(
    reference: NDArray[np.uint8] | None,
    canvas: NDArray[np.uint8],
    depth: float,
    hidden: Sequence[bool] = (),
    px: int = _DEFAULT.area_px,
) -> NDArray[np.uint8]:
    """The change reference after the referee confirmed ``canvas``: hidden squares keep theirs."""
    if reference is None or reference.shape != canvas.shape or not any(hidden):
        return canvas
    labels = canvas_squares(round(depth, 3), px)
    keep = np.isin(labels, [sq for sq, h in enumerate(hidden) if h])
    return np.where(keep[..., None], reference, canvas).astype(np.uint8)


def confirmed_pebbles(
    reference: NDArray[np.float32] | None,
    pebbles: NDArray[np.float32],
    depth: float,
    hidden: Sequence[bool] = (),
) -> NDArray[np.float32]:
    """The pebble density kept with the change reference: hidden squares keep theirs."""
    if reference is None or reference.shape != pebbles.shape or not any(hidden):
        return pebbles
    cells = detect.region_cells(depth, px=_density_px(pebbles))
    hh, ww = min(cells.shape[0], pebbles.shape[0]), min(cells.shape[1], pebbles.shape[1])
    keep = np.zeros(pebbles.shape, bool)
    keep[:hh, :ww] = np.isin(cells[:hh, :ww], [sq for sq, h in enumerate(hidden) if h])
    return np.where(keep, reference, pebbles).astype(np.float32)

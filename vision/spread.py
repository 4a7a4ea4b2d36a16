"""Piece detection for tally spreads: one peak per piece, on a finer canvas than the counter.

A tally spread lies in one layer, so every piece shows and can be counted
one by one, which a density sum (``vision.count``, made for piles) cannot do
exactly: pieces that touch share one blob of density, and a faint piece
spreads its mass below the noise floor. Here a small network, trained offline
by ``bench/train_spread.py`` on generated spreads only, maps the board
rectified at ``PX`` pixels per square (a piece is 6-20 px, twice the
counter's scale) to a heatmap at 1/``STRIDE`` resolution that peaks at 1 on
each piece's centre and stays near 0 elsewhere, big stones included. The
peaks, each with its height, are the evidence the tally's maths turns into a
count distribution per square. Only numpy and OpenCV run here.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import NUM_SQUARES
from vision import detect
from vision.config import ChangeConfig, CountConfig
from vision.geometry import FloatArray, region_polygons_board
from vision.locate import Outline

PX = 96  # canvas pixels per square side
STRIDE = 2  # the shipped net's heatmap cell: 2x2 canvas pixels (``stride_of`` reads any net's)
X0, X1, Y0, Y1 = -1.25, 6.25, -0.25, 2.25  # canvas extent in board units (arcs reach 1.05)
#: the shipped network; ``CountConfig.spread_model`` picks another
MODEL: Final = CountConfig().spread_model
#: the lowest peak kept as a candidate piece: the tally's maths weighs every candidate
#: by how often a peak of its height was a piece on the fitting scenes
CANDIDATE_MIN = 0.1


def canvas(px: int = PX) -> tuple[int, int, FloatArray]:
    """Width, height and board->canvas affine map of the spread canvas at ``px`` pixels
    a square side (``PX``, or what ``scale_for`` a scene's pieces gives)."""
    w, h = round((X1 - X0) * px), round((Y1 - Y0) * px)
    a = np.array([[px, 0.0, -X0 * px], [0.0, -px, Y1 * px], [0.0, 0.0, 1.0]])
    return w, h, a


def stride_of(shape: tuple[int, ...], px: int = PX) -> int:
    """Canvas pixels per heatmap cell, from a heatmap's shape read at ``px``: a
    detector's stride is in its output, so another model (``CountConfig.spread_model``)
    needs no setting."""
    w, _, _ = canvas(px)
    return max(1, round(w / shape[-1]))


def rectify(
    image_bgr: NDArray[np.uint8], homography: FloatArray, px: int = PX
) -> NDArray[np.uint8]:
    """Warp the board (``homography``: board units -> image px) to the spread canvas at
    ``px`` pixels a square side."""
    w, h, a = canvas(px)
    m = a @ np.linalg.inv(homography)
    return np.asarray(
        cv2.warpPerspective(
            image_bgr, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
        ),
        dtype=np.uint8,
    )


def pair_blob(rect_bgr: NDArray[np.uint8], before_bgr: NDArray[np.uint8]) -> NDArray[np.float32]:
    """Input of a detector read against the empty board: the spread as ``detect.prepare``
    gives it, then the spread less the empty board, each normalised by its own light
    (a cloud between the two photos changes the exposure, not what the ground is)."""
    now = detect.prepare(rect_bgr)
    return np.asarray(np.concatenate([now, now - detect.prepare(before_bgr)], 1), np.float32)


#: the views a detector reads: the canvas as it is, then mirrored left-right, top-bottom
#: and both (``cv2.flip``'s codes)
FLIPS: Final = (None, 1, 0, -1)


def heatmaps(
    rect_bgr: NDArray[np.uint8],
    model: str = MODEL,
    before_bgr: NDArray[np.uint8] | None = None,
) -> NDArray[np.float32]:
    """The heatmaps (small-piece centres, big-stone centres; each the canvas over the
    net's stride, values 0..1) of a rectified spread, averaged with those of its mirror images: the
    net saw mirrored boards in training, and the average of the four views steadies
    the peaks of faint and touching pieces for four forwards' time (~25 ms each).
    ``before_bgr``: the empty board rectified alike, for a ``model`` that reads the
    spread against it (``pair_blob``)."""
    return np.asarray(np.mean(views(rect_bgr, model, before_bgr), axis=0), dtype=np.float32)


def views(
    rect_bgr: NDArray[np.uint8],
    model: str = MODEL,
    before_bgr: NDArray[np.uint8] | None = None,
    flips: Sequence[int | None] = FLIPS,
) -> list[NDArray[np.float32]]:
    """The heatmaps of each view in ``flips`` (one forward each), mirrored back onto the
    canvas: their mean is :func:`heatmaps`; a first look at a scene may take one view
    and the rest only where it is needed."""
    out = []
    for flip in flips:
        now = _mirror(rect_bgr, flip)
        blob = (
            detect.prepare(now) if before_bgr is None else pair_blob(now, _mirror(before_bgr, flip))
        )
        heat = np.asarray(detect.forward(blob, model)[0], dtype=np.float32)
        out.append(heat if flip is None else np.stack([cv2.flip(c, flip) for c in heat]))
    return out


def _mirror(image: NDArray[np.uint8], flip: int | None) -> NDArray[np.uint8]:
    """``image`` flipped as ``cv2.flip`` says (None: as it is)."""
    return image if flip is None else np.asarray(cv2.flip(image, flip), np.uint8)


@dataclass(frozen=True, slots=True)
class Peak:
    """One candidate piece: where (board units), how sure the net is, which square."""

    x: float
    y: float
    score: float
    square: int  # ring index, -1 off the board


def peaks(
    heat: NDArray[np.float32], depth: float, floor: float = CANDIDATE_MIN, px: int = PX
) -> list[Peak]:
    """Local maxima of ``heat`` (read at ``px``) above ``floor`` (3x3 neighbourhood, ties
    resolved by keeping the first in raster order), with sub-cell centres and their
    squares."""
    h, w = heat.shape
    stride = stride_of(heat.shape, px)
    dil = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero((heat >= dil) & (heat > floor))
    labels = region_cells(round(depth, 3), (h, w), px)
    taken = np.zeros(heat.shape, bool)
    out: list[Peak] = []
    pad = np.pad(heat, 1)
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        if taken[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2].any():
            continue  # a plateau: one peak only
        taken[y, x] = True
        win = pad[y : y + 3, x : x + 3].astype(np.float64)
        wsum = float(win.sum()) or 1.0
        dy = float((win.sum(axis=1) * (-1, 0, 1)).sum()) / wsum
        dx = float((win.sum(axis=0) * (-1, 0, 1)).sum()) / wsum
        cx, cy = (x + 0.5 + dx) * stride, (y + 0.5 + dy) * stride
        out.append(Peak(X0 + cx / px, Y1 - cy / px, float(heat[y, x]), int(labels[y, x])))
    return out


@functools.lru_cache(maxsize=8)
def region_cells(depth: float, shape: tuple[int, int], px: int = PX) -> NDArray[np.int32]:
    """Ring index (-1 off the board) of every heatmap cell's centre (read at ``px``)."""
    _, _, a = canvas(px)
    lab = np.full(shape, -1, np.int32)
    for i, poly in enumerate(region_polygons_board(depth)):
        p = (np.concatenate([poly, np.ones((len(poly), 1))], axis=1) @ a.T)[:, :2]
        cells = p / stride_of(shape, px) - 0.5
        cv2.fillPoly(lab, [np.rint(cells * 16).astype(np.int32)], i, shift=4)
    lab.setflags(write=False)
    return lab


def big_stones(heat: NDArray[np.float32], depth: float, px: int = PX) -> tuple[float, float]:
    """The highest big-stone peak in the west and in the east quan square (``heat``
    read at ``px``)."""
    labels = region_cells(round(depth, 3), heat.shape, px)
    west, east = heat[labels == 0], heat[labels == 6]
    return float(west.max(initial=0.0)), float(east.max(initial=0.0))


def per_square(found: list[Peak]) -> tuple[tuple[float, ...], ...]:
    """The candidates' scores per ring square, highest first."""
    return _by_square(found, [p.score for p in found])


_T = TypeVar("_T")


def _by_square(found: list[Peak], values: list[_T]) -> tuple[tuple[_T, ...], ...]:
    """``values`` (one per candidate) per ring square, the highest candidate's first."""
    out: list[list[tuple[float, _T]]] = [[] for _ in range(NUM_SQUARES)]
    for p, value in zip(found, values, strict=True):
        if p.square >= 0:
            out[p.square].append((p.score, value))
    return tuple(tuple(v for _, v in sorted(s, key=lambda t: -t[0])) for s in out)


#: canvas pixels (at ``ChangeConfig.area_px`` a square) around a candidate's centre where
#: a change since the empty board is the candidate's own (the smallest pieces are 10 px
#: across there, and a peak may sit a few pixels off the piece's middle)
COVER_RADIUS = 5
#: the share of those pixels that changed, for the candidate to lie on a change
COVER_SHARE = 0.2
#: the lowest candidate that explains a changed blob (below it, a blob's pieces are
#: read from its area alone)
EXPLAINS = 0.15
#: a blob no candidate explains counts from this many pieces' area (smaller ones are a
#: nudged grain, a chalk crumb) up to this many (a larger one with no peak in it is no
#: heap of pieces, whose peaks would show: a shadow, a glint, a sleeve)
LEAST_PIECE = 0.4
MOST_PIECES = 3.0


@dataclass(frozen=True, slots=True)
class Cover:
    """What a photo of the empty board says of a spread's candidates.

    The players photograph the board before they spread their pieces on it, so every
    piece is a change and nothing else is (the light drifts, and ``vision.change``
    matches it square by square). ``changed``: per candidate (in the order given),
    whether the spread changed under it: a candidate on unchanged ground is the
    ground's texture, one on a change most likely a piece. ``extra``: per square, the
    pieces' worth of changed blobs that hold no candidate (pieces the detector
    missed), in units of the scene's own piece, the median blob that holds one sure
    candidate. ``piece``: that piece's width (square sides, the width of a disc of its
    area; shadows and all), or None where too few blobs tell it.
    """

    changed: tuple[bool, ...]
    extra: tuple[float, ...]
    piece: float | None = None


def spread_changes(
    reference_bgr: NDArray[np.uint8],
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: ChangeConfig | None = None,
) -> NDArray[np.uint8]:
    """Where ``image_bgr`` changed from ``reference_bgr``, the same fixed camera's photo
    of the empty board (``outline`` in both): ``vision.change``'s mask on its canvas,
    measured as ``cfg`` says (its defaults). Pure: a stage of the tally's vision, read
    once for every set of candidates :func:`change_cover` weighs against it."""
    from vision.change import change_canvas, changed_pixels

    before, now = (change_canvas(img, outline, cfg) for img in (reference_bgr, image_bgr))
    return changed_pixels(before, now, float(outline.arc_depth), cfg)


def change_cover(
    changes: NDArray[np.uint8],
    outline: Outline,
    found: list[Peak],
    sure: float = 0.5,
    cfg: ChangeConfig | None = None,
) -> Cover:
    """:class:`Cover` of the candidates ``found`` on a spread whose ``changes`` since
    the empty board :func:`spread_changes` measured (with the same ``cfg``). Pure."""
    from vision.change import canvas_squares

    cfg = cfg or ChangeConfig()
    depth = round(float(outline.arc_depth), 3)
    labels = canvas_squares(depth, cfg.area_px)
    n, blobs, stats, centres = cv2.connectedComponentsWithStats(changes, connectivity=8)
    _, _, a = detect.canvas(cfg.area_px)
    h, w = changes.shape
    r = COVER_RADIUS
    changed: list[bool] = []
    held: list[list[float]] = [[] for _ in range(n)]  # candidates' scores per blob
    for p in found:
        u, v, _ = a @ np.array([p.x, p.y, 1.0])
        x, y = round(float(u)), round(float(v))
        near = (slice(max(0, y - r), min(h, y + r + 1)), slice(max(0, x - r), min(w, x + r + 1)))
        window = changes[near]
        on = bool(window.size) and float(window.mean()) >= COVER_SHARE
        changed.append(on)
        ids = blobs[near]
        ids = ids[ids > 0]
        if on and ids.size and p.score >= EXPLAINS:
            held[int(np.bincount(ids).argmax())].append(p.score)
    areas = stats[:, cv2.CC_STAT_AREA].astype(np.float64)
    ones = [areas[i] for i in range(1, n) if len(held[i]) == 1 and held[i][0] >= sure]
    every = [areas[i] for i in range(1, n)]
    width: float | None = None
    if len(ones) >= 3:
        piece = float(np.median(ones))
        width = float(2.0 * np.sqrt(piece / np.pi) / cfg.area_px)
    elif len(every) >= 3:
        piece = float(np.median(every))
    else:  # (a tenth of a square across: a typical piece)
        piece = float(np.pi / 4 * (0.1 * cfg.area_px) ** 2)
    extra = [0.0] * NUM_SQUARES
    for i in range(1, n):
        cx, cy = centres[i]
        sq = int(labels[min(int(cy), h - 1), min(int(cx), w - 1)])
        if sq < 0:
            continue
        # (a blob with candidates is theirs: its area says little of how many pieces
        # touch in it, its shadow and its neighbours' merged with it)
        worth = areas[i] / piece
        if not held[i] and LEAST_PIECE <= worth <= MOST_PIECES:
            extra[sq] += worth
    return Cover(tuple(changed), tuple(round(e, 3) for e in extra), width)


#: candidates closer than this many piece widths (``Cover.piece``, shadow and blur
#: included: 1.33 times the true width on the generated spreads) are one piece's two
#: peaks: the lower goes. Chosen on the tally bench's fitting seeds (0.3-0.45 all gain).
THIN = 0.4


def thin(found: list[Peak], reach: float) -> list[bool]:
    """Which candidates stay: each unless a higher one lies within ``reach`` (square
    sides). A large piece, or one with holes or ribs, can raise two peaks; its
    neighbours, touching, stand a whole width apart."""
    order = sorted(range(len(found)), key=lambda i: -found[i].score)
    keep = [True] * len(found)
    kept: list[Peak] = []
    for i in order:
        p = found[i]
        if any(np.hypot(p.x - q.x, p.y - q.y) < reach for q in kept):
            keep[i] = False
        else:
            kept.append(p)
    return keep


#: a candidate with a higher one closer than this many piece widths (``Cover.piece``)
#: is less often a piece of its own: a second peak on one piece that thinning left, or
#: a shadow's. On the tally bench's fitting seeds 0-599 (board known, peaks of 0.3-0.7
#: on a change), 81% of the 305 within 0.8 true widths of a higher one were pieces,
#: against 99% of the 2,195 others; ``Cover.piece``, shadow and blur included, is about
#: 1.34 true widths, so 0.8 of those is 0.6 of it.
NEAR = 0.6


def crowded(found: list[Peak], reach: float) -> list[bool]:
    """Per candidate, whether a higher one lies within ``reach`` (square sides): the
    tally weighs such a candidate by a table of its own."""
    if not found:
        return []
    xy = np.array([(p.x, p.y) for p in found])
    score = np.array([p.score for p in found])
    close = np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=2) < reach
    return [bool(row.any()) for row in close & (score[None, :] > score[:, None])]


def thinned(found: list[Peak], cover: Cover) -> tuple[list[Peak], Cover]:
    """``found`` and its ``cover`` without one piece's second peaks (``thin`` within
    ``THIN`` of the scene's piece width); as they are where the width is unknown."""
    if cover.piece is None:
        return found, cover
    keep = thin(found, THIN * cover.piece)
    changed = tuple(c for c, k in zip(cover.changed, keep, strict=True) if k)
    return [p for p, k in zip(found, keep, strict=True) if k], replace(cover, changed=changed)


#: the canvas scales (pixels a square side) a scene may be read at, coarsest first
SCALES: Final = (80, 96, 112, 128)
#: the narrowest a piece should look (``Cover.piece``, shadow and blur included, in
#: canvas pixels): the pair detector merges touching pieces much narrower than that
#: into one peak, and splits much wider ones in two. On the tally bench's fitting
#: seeds 0-299 (board known, peaks at or above 0.3), the coarsest scale that shows the
#: scene's pieces this wide reads 96.0% of citizen squares exact, against 93.1% at
#: ``PX`` alone; the best bounds between scales found by search are these within
#: 0.005 of a square's width.
PIECE_PX = 12.0


def scale_for(piece: float | None) -> int:
    """The canvas scale (pixels a square side) to read a scene whose pieces measure
    ``piece`` square sides (``Cover.piece``; None where unknown: ``PX``): the coarsest
    of ``SCALES`` that shows them ``PIECE_PX`` wide. The width is known only after a
    first reading at ``PX``."""
    if piece is None:
        return PX
    return next((px for px in SCALES if piece * px >= PIECE_PX), SCALES[-1])


def per_square_cover(found: list[Peak], changed: Sequence[bool]) -> tuple[tuple[bool, ...], ...]:
    """Per-candidate flags (``Cover.changed``, :func:`crowded`) per ring square, in
    :func:`per_square`'s order (highest score first)."""
    return _by_square(found, list(changed))

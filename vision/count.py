"""Stage 2: per-square pebble count distributions and big-stone presence.

The board is rectified to the canonical canvas of ``vision.detect`` (pebble
size no longer depends on where a square sits in a tilted view) and a small
learned network turns it into a pebble-centre density. A square's count is the
density mass inside it (or, for a few pebbles, its density peaks): the rule is
"the square holding the pebble's centre", and the net was trained with hidden
pebbles in its targets, so piles are less undercounted. The estimate becomes a
distribution over counts whose spread grows with the count, fitted to held-out
residuals (``bench/train_counter.py``), because the engine weighs candidate
positions by these likelihoods rather than trusting one number. In the ten
citizen squares that distribution is multiplied with a per-square count
classifier's (``vision.squares``): the density mass drifts with the ground,
the classifier knows an empty square and a small pile of any ground better,
and the product of the two is better than either on grounds neither saw.

Whether a mandarin holds its big stone is a classifier's call on the same
mandarin crops the small pieces are counted on (``vision.squares``, two
classes; it reads 80-86 % of unseen grounds' and pieces' mandarins right where
the older ``vision.bigstone`` net, a crop of the density's canvas, read 60-77 %;
``mandarin_big_model = ""`` asks that one instead). The widest-blob rule used
before could not tell the stone from two touching pebbles or a patterned
floor, and the density net's big-stone channel is ignored. Where the stone is,
pebble peaks under it are not counted; that location is the widest foreground blob.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import CITIZENS, MANDARINS, NUM_SQUARES
from vision import bigstone, detect, squares
from vision.config import CountConfig
from vision.geometry import COLUMNS, EAST, WEST, FloatArray, region_polygons_board
from vision.locate import Outline

BIG_FG_SIGMA = 3.0  # foreground threshold of the big-stone search, robust noise units
BIG_CLEAR = 0.8  # share of the stone's inscribed radius where pebble density is ignored


@dataclass(frozen=True)
class Calibration:
    """Per-scene correction learnt from a known position (usually the opening).

    ``count_gain`` rescales the density mass when this ground or pebble set
    makes the network systematically over- or undercount; it stays valid while
    the camera does not move.
    """

    count_gain: float = 1.0
    px_per_square: int = detect.PX


@dataclass(frozen=True)
class SquareCount:
    """Count evidence for one region."""

    count: int
    probs: tuple[float, ...]
    big: int
    big_prob: float
    raw: float  # continuous estimate before rounding, for diagnostics


@dataclass(frozen=True)
class Grid:
    """Divider positions in board units (hand-drawn boards are never even).

    Counting assigns density with the regular template (``Grid.regular``): on
    render-public, assigning with the true drawn polygons changed the counts of
    held-out images by well under a percent, so no chalk search is spent on it.
    """

    xs_south: tuple[float, ...]  # 6 short-line x positions along the south row
    xs_north: tuple[float, ...]
    y_mid: float
    depth: float
    y_south: float = 0.0
    y_north: float = 2.0

    @staticmethod
    def regular(depth: float) -> Grid:
        xs = tuple(float(k) for k in range(6))
        return Grid(xs, xs, 1.0, depth)

    def polygons(self) -> list[FloatArray]:
        """The 12 region outlines in board units, ring order."""
        polys = region_polygons_board(self.depth)
        ym, y0, y1 = self.y_mid, self.y_south, self.y_north
        for col, (south, north) in enumerate(COLUMNS):
            s0, s1 = self.xs_south[col], self.xs_south[col + 1]
            n0, n1 = self.xs_north[col], self.xs_north[col + 1]
            polys[south] = np.array([[s0, y0], [s1, y0], [s1, ym], [s0, ym]])
            polys[north] = np.array([[n0, ym], [n1, ym], [n1, y1], [n0, y1]])
        for m, ref in ((WEST, 0), (EAST, len(COLUMNS))):
            shift = 0.5 * (self.xs_south[ref] + self.xs_north[ref]) - float(ref)
            arc = polys[m].copy()
            arc[:, 0] += shift
            arc[:, 1] = y0 + arc[:, 1] * (y1 - y0) / 2.0
            polys[m] = arc
        return polys


def rectify(image_bgr: NDArray[np.uint8], outline: Outline, px: int) -> NDArray[np.uint8]:
    """Warp the board to the canonical canvas of ``vision.detect``."""
    w, h, a = detect.canvas(px)
    m = a @ np.linalg.inv(outline.homography)
    return np.asarray(
        cv2.warpPerspective(
            image_bgr, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
        ),
        dtype=np.uint8,
    )


def big_stone_probabilities(
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: CountConfig,
    rect: NDArray[np.uint8],
    canvas: NDArray[np.uint8] | None = None,
) -> NDArray[np.float64]:
    """(west, east) big-stone probability: ``mandarin_big_model`` on the mandarin crops of
    the ``squares.PX`` ``canvas`` (rectified here when not given), or without it the
    ``vision.bigstone`` net on ``rect`` (the board at ``cfg.px_per_square``)."""
    if not cfg.mandarin_big_model:
        return bigstone.probabilities(rect, cfg)
    if canvas is None:
        canvas = rectify(image_bgr, outline, squares.PX)
    return squares.big_probabilities(canvas, cfg.mandarin_big_model)


def _in_frame(
    outline: Outline, shape: tuple[int, ...], cells: tuple[int, int], px: int
) -> NDArray[np.bool_]:
    """Which density cells' centres fall inside the image (cheaper than warping a mask)."""
    _, _, a = detect.canvas(px)
    s = detect.STRIDE
    ys, xs = np.mgrid[0 : cells[0], 0 : cells[1]]
    pts = np.stack([xs.ravel() * s, ys.ravel() * s, np.ones(xs.size)], axis=1)
    img = pts @ (outline.homography @ np.linalg.inv(a)).T
    u, v = img[:, 0] / img[:, 2], img[:, 1] / img[:, 2]
    ok = (u >= 0) & (u <= shape[1] - 1) & (v >= 0) & (v <= shape[0] - 1)
    return np.asarray(ok.reshape(cells), dtype=bool)


def big_stone_disc(
    rect: NDArray[np.uint8], depth: float, px: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Inscribed radius (square sides) and centre (12x2, canvas px) of the widest
    foreground blob in each mandarin: where a present big stone lies.

    Only locates; whether a stone is there at all is ``vision.bigstone``'s
    call. Foreground is the colour distance to a median-filtered ground
    estimate (one square wide, so even the stone is filtered out), thresholded
    in robust noise units of the board.
    """
    small = cv2.resize(rect, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    k = max(px // 2, 8) | 1
    bg = np.stack([cv2.medianBlur(lab[..., c], k) for c in range(3)], axis=2)
    diff = np.abs(lab.astype(np.float32) - bg.astype(np.float32))
    d = diff[..., 0] + 1.5 * (diff[..., 1] + diff[..., 2])
    labels = _region_pixels(depth, small.shape[:2], px)
    board = labels >= 0
    med = float(np.median(d[board]))
    mad = float(np.median(np.abs(d[board] - med))) + 1e-3
    raw = ((d > med + BIG_FG_SIGMA * 1.4826 * mad) & board).astype(np.uint8)
    fg = np.asarray(cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)), np.uint8)
    dist = cv2.distanceTransform(fg, cv2.DIST_L2, 5)
    out = np.zeros(NUM_SQUARES)
    where = np.zeros((NUM_SQUARES, 2))
    for m in MANDARINS:
        sel = np.where(labels == m, dist, -1.0)
        y, x = np.unravel_index(int(np.argmax(sel)), sel.shape)
        out[m] = max(float(sel[y, x]), 0.0) / (px / 2.0)
        where[m] = (2.0 * x, 2.0 * y)
    return out, where


def _disc_cells(
    shape: tuple[int, ...], centre: NDArray[np.float64], radius: float
) -> NDArray[np.bool_]:
    """Density cells within ``radius`` canvas px of ``centre``."""
    s = detect.STRIDE
    ys, xs = np.mgrid[0 : shape[-2], 0 : shape[-1]]
    return np.asarray((xs * s - centre[0]) ** 2 + (ys * s - centre[1]) ** 2 <= radius**2)


def _region_pixels(depth: float, shape: tuple[int, ...], px: int) -> NDArray[np.int32]:
    """Region index of every pixel of a half-resolution canvas."""
    _, _, a = detect.canvas(px)
    lab = np.full(shape[:2], -1, np.int32)
    for i, poly in enumerate(region_polygons_board(depth)):
        p = (np.concatenate([poly, np.ones((len(poly), 1))], axis=1) @ a.T)[:, :2] / 2.0
        cv2.fillPoly(lab, [np.rint(p * 16).astype(np.int32)], i, shift=4)
    return lab


def with_board_doubt(square: SquareCount, doubt: float) -> SquareCount:
    """The square's reading if the board may not be the board (``doubt``, 0..1).

    On a wrong board a square's content is anyone's guess: its count
    distribution is mixed with a uniform one over 0..max count, and its big-stone
    probability with an even chance. Both keep their most likely value, so the
    count and the call stay as read; only what they claim shrinks.
    """
    if doubt <= 0.0:
        return square
    d = min(float(doubt), 1.0)
    flat = d / len(square.probs)
    probs = tuple((1.0 - d) * p + flat for p in square.probs)
    big_prob = (1.0 - d) * square.big_prob + 0.5 * d
    return replace(square, probs=probs, big_prob=big_prob)


def count_distribution(
    mean: float, cfg: CountConfig, extra_sigma: float = 0.0
) -> NDArray[np.float64]:
    """Discretised Gaussian over 0..max_count, spread sqrt(base^2 + (rel*n)^2), with a tail.

    The counter is usually close and now and then far off (a hidden pile, a
    shadow read as pebbles). One Gaussian wide enough for the misses blurs
    every ordinary reading; a narrow core plus a ``tail_weight`` share that
    is ``tail_scale`` times wider describes both.
    """
    n = np.arange(cfg.max_count + 1, dtype=np.float64)
    m = max(mean, 0.0)
    sigma = float(np.sqrt(cfg.sigma_base**2 + (cfg.sigma_rel * m) ** 2 + extra_sigma**2))
    out = np.zeros_like(n)
    for weight, scale in ((1.0 - cfg.tail_weight, 1.0), (cfg.tail_weight, cfg.tail_scale)):
        if weight <= 0:
            continue
        p = np.exp(-0.5 * ((n - m) / (sigma * scale)) ** 2)
        out += weight * p / p.sum()
    return np.asarray(out / out.sum(), dtype=np.float64)


def densities(
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: CountConfig,
    rect: NDArray[np.uint8] | None = None,
) -> tuple[NDArray[np.float32], NDArray[np.int32], NDArray[np.float64]]:
    """Density maps, the region of every density cell and each region's in-frame share."""
    px = cfg.px_per_square
    dens = detect.density(rect if rect is not None else rectify(image_bgr, outline, px), cfg.model)
    labels = detect.region_cells(outline.arc_depth, px=px)
    # other canvas sizes than the trained one may round the output grid differently
    hh, ww = min(dens.shape[1], labels.shape[0]), min(dens.shape[2], labels.shape[1])
    dens, labels = dens[:, :hh, :ww], labels[:hh, :ww]
    cell_valid = _in_frame(outline, image_bgr.shape, labels.shape, px)
    inside = labels >= 0
    vis = np.bincount(labels[inside], cell_valid[inside], minlength=NUM_SQUARES)
    area = np.maximum(np.bincount(labels[inside], minlength=NUM_SQUARES), 1)
    return dens, labels, vis / area


def inside_share(dens: NDArray[np.float32], labels: NDArray[np.int32]) -> float:
    """Share of the pebble density on the canvas that lies inside the 12 regions.

    A board check independent of the chalk fit: on the right outline the pieces lie in
    the squares, on an outline snapped to tile joints or a mat's print they spill over
    its edges. 1.0 when the canvas holds less than two pebbles' mass (no evidence).
    """
    d = np.where(dens[0] > detect.NOISE_FLOOR, dens[0], 0.0)
    total = float(d.sum())
    if total < 2.0:
        return 1.0
    return float(d[labels >= 0].sum()) / total


def count_board(
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: CountConfig | None = None,
    calibration: Calibration | None = None,
) -> tuple[list[SquareCount], Grid]:
    """Count distribution and big-stone probability for the 12 regions, plus the grid
    they were assigned with (for drawing the regions)."""
    counts, grid, _ = count_board_density(image_bgr, outline, cfg, calibration)
    return counts, grid


def count_board_density(
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: CountConfig | None = None,
    calibration: Calibration | None = None,
) -> tuple[list[SquareCount], Grid, NDArray[np.float32]]:
    """:func:`count_board`, and the small-pebble density it counted (cells of
    ``detect.STRIDE`` canvas pixels): where this frame's pebbles lie, which
    ``vision.change`` uses to tell a pile left in place from one taken away."""
    cfg = cfg or CountConfig()
    rect = rectify(image_bgr, outline, cfg.px_per_square)
    dens, labels, vis = densities(image_bgr, outline, cfg, rect)
    canvas = None
    if cfg.square_model or cfg.mandarin_model or cfg.mandarin_big_model:
        canvas = rectify(image_bgr, outline, squares.PX)
    big_p = np.zeros(NUM_SQUARES)
    big_p[list(MANDARINS)] = big_stone_probabilities(image_bgr, outline, cfg, rect, canvas)
    under = np.zeros(dens.shape[1:], bool)  # under a big stone: no pebble centre there
    if big_p.max() >= 0.5:
        big_r, big_at = big_stone_disc(rect, outline.arc_depth, cfg.px_per_square)
        for m in MANDARINS:
            if big_p[m] >= 0.5:
                # flat, pale stones (as vision.synth draws them) otherwise read as a pebble
                r = BIG_CLEAR * big_r[m] * cfg.px_per_square
                under |= _disc_cells(dens.shape, big_at[m], r)
    small, _ = detect.region_counts(dens, labels, under)
    gain = calibration.count_gain if calibration is not None else 1.0
    classes: dict[int, NDArray[np.float64]] = {}
    if canvas is not None:
        if cfg.square_model:
            table = squares.probabilities(canvas, cfg.square_model, cfg.square_temperature)
            classes.update(zip(CITIZENS, table, strict=True))
        if cfg.mandarin_model:
            table = squares.mandarin_probabilities(
                canvas, cfg.mandarin_model, cfg.square_temperature
            )
            classes.update(zip(MANDARINS, table, strict=True))
    out: list[SquareCount] = []
    for i in range(NUM_SQUARES):
        raw = float(small[i]) * gain
        # a square partly outside the frame hides an unknown part of its pebbles
        extra = 0.0 if vis[i] > 0.95 else 2.0 * (1.0 - vis[i]) * (1.0 + raw)
        probs = count_distribution(raw, cfg, extra)
        if i in classes and not extra:
            # the classifiers never saw a square cut by the frame's edge: density alone there
            probs = squares.combine(classes[i], probs, cfg.square_density_weight)
        bp = float(big_p[i])
        out.append(
            SquareCount(
                int(np.argmax(probs)), tuple(float(p) for p in probs), int(bp >= 0.5), bp, raw
            )
        )
    pebbles = np.where(dens[0] > detect.NOISE_FLOOR, dens[0], 0.0).astype(np.float32)
    return out, Grid.regular(outline.arc_depth), pebbles


def calibrate_opening(
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: CountConfig | None = None,
    skip: Sequence[int] = (),
) -> Calibration:
    """Per-scene gain from the opening: 5 pebbles in each citizen square.

    The correction is clamped to +-``max_gain_change`` because the network is
    already trained to count; the calibration only absorbs a steady bias of
    this particular ground and pebble set, never a wild fit to one frame.
    Squares in ``skip`` (under a hand) are left out of the sum.
    """
    cfg = cfg or CountConfig()
    dens, labels, _ = densities(image_bgr, outline, cfg)
    small, _ = detect.region_counts(dens, labels)
    used = [sq for sq in CITIZENS if sq not in set(skip)]
    if not used:
        return Calibration(1.0, cfg.px_per_square)
    total = float(small[used].sum())
    lo, hi = 1.0 - cfg.max_gain_change, 1.0 + cfg.max_gain_change
    gain = float(np.clip(5.0 * len(used) / max(total, 1e-3), lo, hi))
    return Calibration(gain, cfg.px_per_square)

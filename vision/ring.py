"""The three- and four-seat ring board in the image, and its squares counted.

The ring is not located automatically: its N corners are given once (as
``oanquan calibrate`` gives the two-player board's four), in the order of
:meth:`engine.ring.Ring.corners` (corner ``s`` holds mandarin square
``6 * s``; going counter-clockwise seen from above). Four corners fix the
board-to-image homography; three fix only an affine map, which is exact for
a camera looking straight down and a close approximation for a mild tilt.

Counting reuses the two-player counter unchanged: the board is warped to a
top-down canvas at the scale the density network was trained on (one square
side = ``CountConfig.px_per_square`` pixels), the network's pebble density is
summed in each of the 6N region polygons of :mod:`engine.ring`, and the sum
becomes the same count distribution as on the two-player board. The big-stone
network expects the two-player canvas, so a mandarin square's stone is found
here by size: the widest foreground blob in the square, against a pebble's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.ring import SIDE, ring
from vision import detect
from vision.api import SquareReading
from vision.config import CountConfig, VisionConfig
from vision.count import Calibration, count_distribution
from vision.errors import ConfigError
from vision.gate import FrameQuality, assess_frame
from vision.geometry import FloatArray, project

#: inner outline of the ring as a share of the outer one, per seat count: squares
#: about as deep as they are long (a triangle's band is shallower for the same share)
INNER = {3: 0.5, 4: 0.6}
#: canvas margin around the board, in square sides
MARGIN = 0.6
#: a big stone's inscribed blob radius (square sides) tends to lie above this, a
#: pebble's below; on generated ring boards the two overlap (a pale stone on pale
#: ground, a pile around it), so the radius is weak evidence and the referee's
#: counts do the deciding
STONE_RADIUS = 0.11
#: how softly the radius decides (square sides)
STONE_SOFTNESS = 0.04
#: a blob this wide is a stone for sure: pebble peaks under it are not counted
STONE_SURE = 0.14
#: share of the stone's inscribed radius where pebble peaks are not counted
STONE_CLEAR = 0.8
FG_SIGMA = 3.0  # foreground threshold of the stone search, robust noise units


def square_side(players: int) -> float:
    """Length of one square along the board's edge, in ring units (circumradius 1)."""
    return 2.0 * math.sin(math.pi / players) / SIDE


@dataclass(frozen=True)
class RingOutline:
    """Where an N-seat ring board lies in the image: the map and the 6N square regions."""

    players: int
    transform: FloatArray  # 3x3, ring units (engine.ring) -> image px
    corners: FloatArray  # N x 2 image px, corner s holding mandarin square 6 s
    regions: tuple[FloatArray, ...]  # 6N polygons in image px, square order
    inner: float = 0.6
    manual: bool = True

    def px_per_unit(self) -> float:
        """Mean image length of one square side (for scale-aware stages)."""
        c = self.corners
        edges = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)
        return float(edges.mean() / SIDE)


def ring_outline(
    corners: FloatArray | Sequence[Sequence[float]], players: int, inner: float | None = None
) -> RingOutline:
    """The outline of a ``players``-seat ring from its corners in the image.

    ``corners``: the board's N outer corners, or those followed by the N
    corners of the inner outline (for a triangle under a tilted camera, where
    three points fix only an affine map: about 0.01 square sides of error per
    degree of tilt). ``inner``: where the inner outline lies, as a share of the
    outer one (default :data:`INNER` for the seat count); inner corners given
    are taken to lie there.

    Raises :class:`~vision.errors.ConfigError` naming what is wrong with the
    corners (count, shape, order, a degenerate or self-crossing polygon).
    """
    if players not in (3, 4):
        raise ConfigError(f"ring: players must be 3 or 4, got {players!r}")
    given: FloatArray = np.asarray(corners, dtype=np.float64)
    if given.shape not in ((players, 2), (2 * players, 2)) or not np.all(np.isfinite(given)):
        raise ConfigError(
            f"ring: {players} seats need {players} corners (or {2 * players} with the inner "
            f"ones) as [x, y] pairs, got shape {tuple(given.shape)}"
        )
    c = given[:players]
    for ring_pts in (c, given[players:]) if len(given) > players else (c,):
        _check_polygon(ring_pts, players)
    inner = INNER[players] if inner is None else float(inner)
    if not 0.2 <= inner <= 0.9:
        raise ConfigError(f"ring: inner must be 0.2..0.9, got {inner!r}")
    r = ring(players)
    src = np.array(r.corners(), dtype=np.float64)
    if len(given) > players:
        both = np.concatenate([src, inner * src]).astype(np.float32)
        raw, _ = cv2.findHomography(both, given.astype(np.float32), 0)
        if raw is None:
            raise ConfigError("ring: the outer and inner corners do not fit one board")
    elif players == 4:
        raw = cv2.getPerspectiveTransform(src.astype(np.float32), c.astype(np.float32))
    else:
        a = cv2.getAffineTransform(src.astype(np.float32), c.astype(np.float32))
        raw = np.vstack([a, [0.0, 0.0, 1.0]])
    h: FloatArray = np.asarray(raw, dtype=np.float64)
    regions = tuple(project(h, np.array(p, dtype=np.float64)) for p in r.polygons(inner))
    return RingOutline(players, h, c, regions, inner)


def _check_polygon(c: FloatArray, players: int) -> None:
    """Refuse corners that cannot be a board seen from above, with the reason."""
    if players == 4 and not bool(cv2.isContourConvex(c.astype(np.float32).reshape(-1, 1, 2))):
        raise ConfigError("ring: the four corners cross over (give them in order round the board)")
    # the shoelace area in image coordinates (y down): negative for corners that run
    # counter-clockwise seen from above, as the squares do; a camera cannot mirror
    x, y = c[:, 0], c[:, 1]
    area = 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
    side = float(np.linalg.norm(c[1] - c[0]))
    if abs(area) < 0.05 * side * side:
        raise ConfigError("ring: the corners do not span a board (too thin or repeated)")
    if area > 0:
        raise ConfigError(
            "ring: the corners run clockwise on the screen; give them counter-clockwise "
            "from the corner of square 0 (P0's left), as the squares are numbered"
        )


def canvas(players: int, px: int) -> tuple[int, int, FloatArray]:
    """Width, height and ring-units -> canvas px affine map of the top-down canvas.

    One square side is ``px`` canvas pixels, as on the two-player canvas the
    density network was trained on; sizes are multiples of 16 for the network.
    """
    scale = px / square_side(players)
    pts = np.array(ring(players).corners())
    pad = MARGIN * square_side(players)
    x0, y0 = pts.min(axis=0) - pad
    x1, y1 = pts.max(axis=0) + pad
    w = math.ceil((x1 - x0) * scale / 16.0) * 16
    h = math.ceil((y1 - y0) * scale / 16.0) * 16
    a = np.array([[scale, 0.0, -x0 * scale], [0.0, -scale, y1 * scale], [0.0, 0.0, 1.0]])
    return w, h, a


def rectify(image_bgr: NDArray[np.uint8], outline: RingOutline, px: int) -> NDArray[np.uint8]:
    """The board warped to its top-down canvas (:func:`canvas`)."""
    w, h, a = canvas(outline.players, px)
    m = a @ np.linalg.inv(outline.transform)
    return np.asarray(
        cv2.warpPerspective(
            image_bgr, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
        ),
        dtype=np.uint8,
    )


def region_labels(players: int, inner: float, px: int, stride: int = 1) -> NDArray[np.int32]:
    """Square index (-1 off the board) of every canvas pixel, or of every ``stride`` cell."""
    w, h, a = canvas(players, px)
    lab = np.full((h // stride, w // stride), -1, np.int32)
    shift = 4
    for i, poly in enumerate(ring(players).polygons(inner)):
        p = np.concatenate([np.array(poly), np.ones((len(poly), 1))], axis=1) @ a.T
        cells = p[:, :2] / stride
        cv2.fillPoly(lab, [np.rint(cells * (1 << shift)).astype(np.int32)], i, shift=shift)
    return lab


def stone_discs(
    rect: NDArray[np.uint8], labels: NDArray[np.int32], players: int, px: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Inscribed radius (square sides) and centre (canvas px) of the widest
    foreground blob in each mandarin square, one row per mandarin.

    Foreground is the colour distance to a median-filtered ground (one square
    wide, so even the stone is filtered out), thresholded in robust noise
    units of the board; computed at half resolution.
    """
    small = cv2.resize(rect, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    k = max(px // 2, 8) | 1
    bg = np.stack([cv2.medianBlur(lab[..., c], k) for c in range(3)], axis=2)
    diff = np.abs(lab.astype(np.float32) - bg.astype(np.float32))
    d = diff[..., 0] + 1.5 * (diff[..., 1] + diff[..., 2])
    half = labels[::2, ::2][: d.shape[0], : d.shape[1]]
    d = d[: half.shape[0], : half.shape[1]]
    board = half >= 0
    med = float(np.median(d[board]))
    mad = float(np.median(np.abs(d[board] - med))) + 1e-3
    raw = ((d > med + FG_SIGMA * 1.4826 * mad) & board).astype(np.uint8)
    fg = np.asarray(cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)), np.uint8)
    dist = cv2.distanceTransform(fg, cv2.DIST_L2, 5)
    radius = np.zeros(players)
    where = np.zeros((players, 2))
    for s in range(players):
        sel = np.where(half == SIDE * s, dist, -1.0)
        y, x = np.unravel_index(int(np.argmax(sel)), sel.shape)
        radius[s] = max(float(sel[y, x]), 0.0) * 2.0 / px
        where[s] = (2.0 * x, 2.0 * y)
    return radius, where


def _raw_counts(
    image_bgr: NDArray[np.uint8], outline: RingOutline, cfg: CountConfig
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Uncalibrated pebble estimate per square, and big-stone probability per mandarin."""
    px = cfg.px_per_square
    n = outline.players
    rect = rectify(image_bgr, outline, px)
    dens = detect.density(rect, cfg.model)
    labels = region_labels(n, outline.inner, px, detect.STRIDE)
    hh, ww = min(dens.shape[1], labels.shape[0]), min(dens.shape[2], labels.shape[1])
    dens, labels = dens[:, :hh, :ww], labels[:hh, :ww]
    radius, where = stone_discs(rect, region_labels(n, outline.inner, px), n, px)
    big_p = 1.0 / (1.0 + np.exp(-np.clip((radius - STONE_RADIUS) / STONE_SOFTNESS, -50, 50)))
    under = np.zeros(dens.shape[1:], bool)
    s = detect.STRIDE
    ys, xs = np.mgrid[0:hh, 0:ww]
    for m in range(n):
        if radius[m] >= STONE_SURE:
            r = STONE_CLEAR * radius[m] * px
            under |= (xs * s - where[m, 0]) ** 2 + (ys * s - where[m, 1]) ** 2 <= r**2
    return _region_counts(dens, labels, under, SIDE * n), big_p


def _region_counts(
    density: NDArray[np.float32],
    labels: NDArray[np.int32],
    exclude: NDArray[np.bool_],
    squares: int,
) -> NDArray[np.float64]:
    """``detect.region_counts`` for ``squares`` regions: mass for piles, peaks for a few."""
    d = np.ascontiguousarray(density[0])
    inside = labels >= 0
    kept = np.where(d > detect.NOISE_FLOOR, d, 0.0)
    mass = np.bincount(labels[inside], kept[inside], minlength=squares)[:squares]
    peak = (d >= cv2.dilate(d, np.ones((3, 3), np.uint8))) & (d > detect.PEAK_MIN) & inside
    peak &= ~exclude
    peaks = np.bincount(labels[peak], minlength=squares)[:squares].astype(np.float64)
    return np.asarray(np.where(mass < detect.PEAK_MAX_COUNT, peaks, mass), dtype=np.float64)


@dataclass(frozen=True)
class RingReading:
    """Everything vision says about one frame of a ring board."""

    found: bool
    reason: str | None
    squares: tuple[SquareReading, ...]
    outline: RingOutline | None = None
    frame: FrameQuality | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)


def read_ring(
    image_bgr: NDArray[np.uint8] | None,
    outline: RingOutline,
    config: VisionConfig | None = None,
    *,
    calibration: Calibration | None = None,
    previous: NDArray[np.uint8] | None = None,
) -> RingReading:
    """Count every square of the ring at ``outline`` (gated like :func:`vision.read_board`).

    A frame unfit to count (exposure, motion against ``previous``) comes back
    with no squares and the reason. Hands are not looked for on the ring yet.
    """
    cfg = config or VisionConfig()
    t0 = time.perf_counter()
    if image_bgr is None or image_bgr.size == 0 or image_bgr.ndim != 3:
        return RingReading(False, "empty frame", (), outline, None, {"total": 0.0})
    pre = assess_frame(image_bgr, previous, None, cfg.gate)
    if pre.problem is not None:
        ms = (time.perf_counter() - t0) * 1000
        return RingReading(True, pre.reason, (), outline, pre, {"total": ms})
    raw, big_p = _raw_counts(image_bgr, outline, cfg.count)
    gain = calibration.count_gain if calibration is not None else 1.0
    squares = []
    for i, value in enumerate(raw):
        probs = count_distribution(float(value) * gain, cfg.count)
        bp = float(big_p[i // SIDE]) if i % SIDE == 0 else 0.0
        squares.append(
            SquareReading(
                i, int(np.argmax(probs)), tuple(float(p) for p in probs), int(bp >= 0.5), bp
            )
        )
    ms = (time.perf_counter() - t0) * 1000
    return RingReading(True, None, tuple(squares), outline, pre, {"count": ms, "total": ms})


def calibrate_ring(
    image_bgr: NDArray[np.uint8],
    outline: RingOutline,
    config: VisionConfig | None = None,
    skip: Sequence[int] = (),
) -> Calibration:
    """Per-scene gain from the opening (5 pebbles in every citizen square), clamped
    like the two-player calibration to +-``max_gain_change``."""
    cfg = (config or VisionConfig()).count
    raw, _ = _raw_counts(image_bgr, outline, cfg)
    used = [sq for sq in ring(outline.players).citizens if sq not in set(skip)]
    if not used:
        return Calibration(1.0, cfg.px_per_square)
    total = float(raw[used].sum())
    lo, hi = 1.0 - cfg.max_gain_change, 1.0 + cfg.max_gain_change
    gain = float(np.clip(5.0 * len(used) / max(total, 1e-3), lo, hi))
    return Calibration(gain, cfg.px_per_square)

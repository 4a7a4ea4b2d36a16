"""Stage 2: per-square pebble count distributions and big-stone presence.

The board is rectified to a canonical image (``px_per_square`` pixels per
square side) so pebble size no longer depends on where a square sits in a
tilted view. Foreground is what differs from a large-scale ground estimate,
with luminance compared as a log-ratio so soft shadows cancel. Chalk strokes
are removed by an opening smaller than a pebble. Each blob is a count: one
pebble when small, otherwise the larger of its distance-transform peaks and its
area over the unit pebble area (section 3 of the vision notes: both track small
counts; piles are biased low, so the spread grows with the count).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import MANDARINS, NUM_SQUARES
from vision.config import CountConfig
from vision.geometry import FloatArray, region_polygons_board
from vision.locate import Outline

_X0, _X1, _Y0, _Y1 = -1.35, 6.35, -0.3, 2.3  # rectified canvas, board units


@dataclass(frozen=True)
class Calibration:
    """Pebble appearance learnt from a known position (usually the opening).

    Areas are in rectified pixels at the ``px_per_square`` they were measured
    with, so a calibration stays valid while the camera does not move.
    """

    pebble_area: float
    big_area: float
    px_per_square: int


@dataclass(frozen=True)
class SquareCount:
    """Count evidence for one region."""

    count: int
    probs: tuple[float, ...]
    big: int
    big_prob: float
    raw: float  # continuous estimate before rounding, for diagnostics


@dataclass(frozen=True)
class _Blob:
    area: float
    peaks: int
    radius: float  # largest inscribed radius
    solidity: float
    region: int
    region_share: NDArray[np.float64]  # area split over the 12 regions
    shade_peaks: int = 0  # pebble-scale shading extrema inside the blob
    elongation: float = 1.0  # long side / short side of the minimum-area rectangle
    mean_dlum: float = 0.0
    mean_chroma: float = 0.0
    high_dlum: float = 0.0  # 95th percentile of the luminance difference
    texture: float = 0.0  # mean pebble-scale |LoG| inside: piles are busy, shadows smooth


def _canvas(px: int) -> tuple[int, int, FloatArray]:
    """Size and board->canvas affine map of the rectified canvas."""
    w = round((_X1 - _X0) * px)
    h = round((_Y1 - _Y0) * px)
    # canvas y grows downwards, board y grows north
    a = np.array([[px, 0.0, -_X0 * px], [0.0, -px, _Y1 * px], [0.0, 0.0, 1.0]])
    return w, h, a


def rectify(
    image_bgr: NDArray[np.uint8], outline: Outline, px: int
) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """Warp the board to the canonical canvas; also return the in-frame mask."""
    w, h, a = _canvas(px)
    m = a @ np.linalg.inv(outline.homography)
    rect = cv2.warpPerspective(
        image_bgr, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    ones = np.full(image_bgr.shape[:2], 255, np.uint8)
    valid = cv2.warpPerspective(ones, m, (w, h), flags=cv2.INTER_NEAREST, borderValue=0)
    return rect, valid


@dataclass(frozen=True)
class Grid:
    """Hand-drawn divider positions in board units (the drawing is never even)."""

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
        for k in range(1, 6):
            s0, s1 = self.xs_south[k - 1], self.xs_south[k]
            n0, n1 = self.xs_north[k - 1], self.xs_north[k]
            polys[k] = np.array([[s0, y0], [s1, y0], [s1, ym], [s0, ym]])
            polys[12 - k] = np.array([[n0, ym], [n1, ym], [n1, y1], [n0, y1]])
        for m, ref in ((0, 0), (6, 5)):
            shift = 0.5 * (self.xs_south[ref] + self.xs_north[ref]) - float(ref)
            arc = polys[m].copy()
            arc[:, 0] += shift
            arc[:, 1] = y0 + arc[:, 1] * (y1 - y0) / 2.0
            polys[m] = arc
        return polys


def region_labels(px: int, depth: float, grid: Grid | None = None) -> NDArray[np.int32]:
    """Canvas label image: region index 0..11, -1 outside the board."""
    w, h, a = _canvas(px)
    lab = np.full((h, w), -1, np.int32)
    polys = (grid or Grid.regular(depth)).polygons()
    for i, poly in enumerate(polys):
        p = np.concatenate([poly, np.ones((len(poly), 1))], axis=1) @ a.T
        cv2.fillPoly(lab, [np.rint(p[:, :2]).astype(np.int32)], i)
    return lab


def line_mask(px: int, depth: float, width: float, grid: Grid | None = None) -> NDArray[np.bool_]:
    """Canvas pixels within ``width`` square sides of a template line."""
    w, h, a = _canvas(px)
    m = np.zeros((h, w), np.uint8)
    t = max(1, round(2 * width * px))
    for poly in (grid or Grid.regular(depth)).polygons():
        p = np.concatenate([poly, np.ones((len(poly), 1))], axis=1) @ a.T
        cv2.polylines(m, [np.rint(p[:, :2]).astype(np.int32)], True, 255, t)
    return m > 0


def _lab_distance(labf: NDArray[np.float32], ref: NDArray[np.float32]) -> NDArray[np.float32]:
    """Shadow-tolerant colour distance: log-ratio luminance plus chroma."""
    d_l = np.abs(np.log((labf[..., 0] + 12.0) / (ref[..., 0] + 12.0))) * 100.0
    d_ab = np.abs(labf[..., 1] - ref[..., 1]) + np.abs(labf[..., 2] - ref[..., 2])
    return np.asarray(d_l + 1.5 * d_ab, dtype=np.float32)


def _refine_grid(chalk: NDArray[np.float32], px: int, depth: float) -> Grid:
    """Move each inner divider and the middle line onto the drawn chalk.

    Searches +-0.22 square sides around the ideal position for the column (or
    row) with the most chalk-coloured pixels; keeps the ideal when no clear peak.
    """
    _, _, a = _canvas(px)

    def col(x: float) -> int:
        return round(a[0, 0] * x + a[0, 2])

    def row(y: float) -> int:
        return round(a[1, 1] * y + a[1, 2])

    def peak(profile: NDArray[np.float64], lo: int) -> float | None:
        if profile.size < 3:
            return None
        sm = np.convolve(profile, np.ones(3) / 3.0, mode="same")
        i = int(np.argmax(sm))
        if sm[i] < 0.15 or sm[i] < 1.5 * float(np.median(sm)) + 0.05:
            return None
        return float(lo + i)

    def long_line(y: float, span: float) -> float:
        r0, r1 = sorted((row(y - span), row(y + span)))
        prof = chalk[r0:r1, col(0.1) : col(4.9)].mean(axis=1).astype(np.float64)
        p = peak(prof, r0)
        return y if p is None else float((p - a[1, 2]) / a[1, 1])

    y_south = long_line(0.0, 0.15)
    y_north = long_line(2.0, 0.15)
    y_mid = long_line(1.0, 0.22)
    xs_rows: list[list[float]] = []
    for y0, y1 in ((y_south + 0.1, y_mid - 0.1), (y_mid + 0.1, y_north - 0.1)):
        r0, r1 = sorted((row(y0), row(y1)))
        xs: list[float] = []
        for k in range(6):
            span = 0.15 if k in (0, 5) else 0.22
            c0, c1 = col(k - span), col(k + span)
            prof = chalk[r0:r1, c0:c1].mean(axis=0).astype(np.float64)
            p = peak(prof, c0)
            xs.append(float(k) if p is None else float((p - a[0, 2]) / a[0, 0]))
        xs_rows.append(xs)
    return Grid(tuple(xs_rows[0]), tuple(xs_rows[1]), y_mid, depth, y_south, y_north)


@dataclass(frozen=True)
class _Segmentation:
    fg: NDArray[np.uint8]
    labels: NDArray[np.int32]
    grid: Grid
    d_lum: NDArray[np.float32] | None = None  # signed log-luminance difference to ground
    d_chroma: NDArray[np.float32] | None = None


def segment(rect: NDArray[np.uint8], cfg: CountConfig, depth: float = 0.95) -> _Segmentation:
    """Pebble mask, region labels and the drawn grid of a rectified board.

    Near the lines a pixel must also differ from the chalk colour (learnt from
    the line centres of this very frame), so strokes are not counted while a
    pebble lying across a line still is.
    """
    px = cfg.px_per_square
    lab = cv2.cvtColor(rect, cv2.COLOR_BGR2Lab)
    k = int(px) | 1
    bg = np.stack([cv2.medianBlur(lab[..., c], k) for c in range(3)], axis=2).astype(np.float32)
    labf = lab.astype(np.float32)
    d = cv2.GaussianBlur(_lab_distance(labf, bg), (0, 0), 1.0)
    labels0 = region_labels(px, depth)
    inside0 = labels0 >= 0
    centre = line_mask(px, depth, 0.012) & inside0
    chalky = np.zeros(d.shape, bool)
    if centre.any():
        chalk = np.median(labf[centre], axis=0).astype(np.float32)
        dc = cv2.GaussianBlur(_lab_distance(labf, chalk[None, None, :]), (0, 0), 2.0)
        # chalk-coloured: nearer the chalk colour than the local ground colour
        # (smoothed and grown a little: chalk is grainy and its edges blend)
        chalky = dc < cv2.GaussianBlur(d, (0, 0), 2.0)
        chalky = cv2.dilate(chalky.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    grid = _refine_grid(chalky.astype(np.float32), px, depth)
    labels = region_labels(px, depth, grid)
    inside = labels >= 0
    band = line_mask(px, depth, cfg.line_margin, grid)
    stats = inside & ~band
    vals = d[stats] if stats.sum() > 100 else d.reshape(-1)
    med = float(np.median(vals))
    mad = float(np.median(np.abs(vals - med))) + 1e-3
    thr = med + cfg.fg_threshold * 1.4826 * mad
    fg = (d > thr) & inside & ~(band & chalky)
    # pebbles are 3-D: their outline and contact shadow give strong local
    # gradients even when their colour matches the ground
    lum = np.log(labf[..., 0] + 12.0) * 100.0
    grad = np.zeros(d.shape, np.float32)
    for chan in (lum, labf[..., 1] * 1.5, labf[..., 2] * 1.5):
        g = cv2.GaussianBlur(chan, (0, 0), 1.2)
        gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
        grad = np.maximum(grad, cv2.magnitude(gx, gy))
    gvals = grad[stats] if stats.sum() > 100 else grad.reshape(-1)
    gmed = float(np.median(gvals))
    out = fg.astype(np.uint8)
    if cfg.edge_threshold > 0:
        # edges only complete pebbles already seen by colour (never add grout lines)
        edges = (grad > cfg.edge_threshold * gmed) & inside & ~band
        near = cv2.dilate(out, np.ones((2 * max(2, round(0.05 * px)) + 1,) * 2, np.uint8))
        out |= (edges & (near > 0)).astype(np.uint8)
    # open first (drops thin floor joints and cracks narrower than a pebble),
    # then close (rejoins a pebble whose bright and dark sides were split)
    r_open = max(1, round(cfg.open_radius * px))
    r_close = max(1, round(cfg.close_radius * px))
    disk_o = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r_open + 1, 2 * r_open + 1))
    disk_c = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r_close + 1, 2 * r_close + 1))
    out = cv2.morphologyEx(out, cv2.MORPH_OPEN, disk_o)
    out = cv2.morphologyEx(out, cv2.MORPH_CLOSE, disk_c)
    d_lum = (np.log((labf[..., 0] + 12.0) / (bg[..., 0] + 12.0)) * 100.0).astype(np.float32)
    d_chroma = (np.abs(labf[..., 1] - bg[..., 1]) + np.abs(labf[..., 2] - bg[..., 2])).astype(
        np.float32
    )
    return _Segmentation(out, labels, grid, d_lum, d_chroma)


def blob_map(rect: NDArray[np.uint8], peb_r: float) -> NDArray[np.float32]:
    """|Laplacian of Gaussian| of luminance at pebble scale.

    Each pebble, even one touching others, is a shaded dome with its own
    extremum at this scale; the binary mask alone merges them.
    """
    lum = np.log(cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY).astype(np.float32) + 12.0)
    sigma = max(1.0, 0.7 * peb_r)
    g = cv2.GaussianBlur(lum, (0, 0), sigma)
    return np.abs(cv2.Laplacian(g, cv2.CV_32F, ksize=3)) * float(sigma * sigma)


def _shade_peaks(vals: NDArray[np.float32], sub: NDArray[np.bool_], peb_r: float) -> int:
    k = max(3, int(1.3 * peb_r) | 1)
    v = np.where(sub, vals, 0.0).astype(np.float32)
    dil = cv2.dilate(v, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    top = float(v.max())
    if top <= 0:
        return 0
    peaks = (v >= dil) & (v > 0.3 * top) & sub
    n, _ = cv2.connectedComponents(peaks.astype(np.uint8))
    return n - 1


def _blobs(
    fg: NDArray[np.uint8],
    labels: NDArray[np.int32],
    min_area: float,
    peb_r: float = 0.0,
    shade: NDArray[np.float32] | None = None,
    seg: _Segmentation | None = None,
) -> list[_Blob]:
    n, comp, stats, cent = cv2.connectedComponentsWithStats(fg, connectivity=8)
    dist = cv2.distanceTransform(fg, cv2.DIST_L2, 5)
    out: list[_Blob] = []
    for i in range(1, min(n, 2000)):
        area = float(stats[i, cv2.CC_STAT_AREA])
        if area < min_area:
            continue
        x, y, w, h = (int(v) for v in stats[i, :4])
        sub = comp[y : y + h, x : x + w] == i
        dsub = np.where(sub, dist[y : y + h, x : x + w], 0.0).astype(np.float32)
        radius = float(dsub.max())
        peaks = _count_peaks(dsub, peb_r if peb_r > 0 else radius)
        cnts, _ = cv2.findContours(sub.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        hull = cv2.convexHull(np.concatenate(cnts, axis=0))
        solidity = area / max(float(cv2.contourArea(hull)), 1.0)
        labs = labels[y : y + h, x : x + w][sub]
        share = np.bincount(labs[labs >= 0], minlength=NUM_SQUARES).astype(np.float64)
        cx, cy = cent[i]
        region = int(labels[round(cy), round(cx)])
        if region < 0 and share.sum() > 0:
            region = int(np.argmax(share))
        if share.sum() == 0:
            continue
        sp = 0
        if shade is not None and peb_r > 0:
            sp = _shade_peaks(shade[y : y + h, x : x + w], sub, peb_r)
        (_, _), (rw, rh), _ = cv2.minAreaRect(np.concatenate(cnts, axis=0))
        elong = max(rw, rh) / max(min(rw, rh), 1.0)
        mdl = mch = hdl = 0.0
        if seg is not None and seg.d_lum is not None and seg.d_chroma is not None:
            dl = seg.d_lum[y : y + h, x : x + w][sub]
            mdl = float(dl.mean())
            hdl = float(np.percentile(dl, 95))
            mch = float(seg.d_chroma[y : y + h, x : x + w][sub].mean())
        out.append(
            _Blob(
                area,
                peaks,
                radius,
                solidity,
                region,
                share / share.sum(),
                sp,
                elong,
                mdl,
                mch,
                hdl,
                float(shade[y : y + h, x : x + w][sub].mean()) if shade is not None else 0.0,
            )
        )
    return out


def _remove_big_stones(
    fg: NDArray[np.uint8], labels: NDArray[np.int32], unit: float, cfg: CountConfig
) -> tuple[NDArray[np.uint8], dict[int, float]]:
    """Find the big stone in each mandarin and cut it out of the pebble mask.

    An opening with a disk wider than a small pebble erases pebbles (and
    pebbles touching the stone) but keeps the stone, 2-3x a pebble across.
    """
    peb_r = float(np.sqrt(unit / np.pi))
    out = fg.copy()
    found: dict[int, float] = {}
    for m in MANDARINS:
        mask = ((fg > 0) & (labels == m)).astype(np.uint8)
        if not mask.any():
            found[m] = 0.0
            continue
        dist = cv2.distanceTransform(mask, cv2.DIST_L2, 5)
        y, x = np.unravel_index(int(np.argmax(dist)), dist.shape)
        r_max = float(dist[y, x])
        # the stone is 2-3 pebbles across: its inscribed circle is much wider
        # than any single pebble's; soft decision around big_radius_ratio
        prob = float(1.0 / (1.0 + np.exp(-8.0 * (r_max / max(peb_r, 1.0) - cfg.big_radius_ratio))))
        found[m] = prob
        if prob >= 0.5:
            # cut a disk round the stone's deepest point; pebbles piled next to
            # it stay countable
            rad = r_max * 1.3 + 0.3 * peb_r
            disk_mask = np.zeros(out.shape, np.uint8)
            cv2.circle(disk_mask, (int(x), int(y)), round(rad), 1, -1)
            out[(disk_mask > 0) & (labels == m)] = 0
    return out, found


def _count_peaks(dsub: NDArray[np.float32], radius: float) -> int:
    """Distance-transform maxima at least ~one pebble radius apart."""
    if radius < 1.5:
        return 1
    k = max(3, int(radius * 1.4) | 1)
    dil = cv2.dilate(dsub, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    peaks = (dsub >= dil) & (dsub > 0.45 * radius)
    n, _ = cv2.connectedComponents(peaks.astype(np.uint8))
    return max(1, n - 1)


def _distribution(mean: float, cfg: CountConfig, extra_sigma: float = 0.0) -> NDArray[np.float64]:
    n = np.arange(cfg.max_count + 1, dtype=np.float64)
    sigma = float(np.sqrt(cfg.sigma_base**2 + (cfg.sigma_rel * mean) ** 2 + extra_sigma**2))
    logp = -0.5 * ((n - mean) / sigma) ** 2
    p = np.exp(logp - logp.max())
    return p / p.sum()


def estimate_pebble_area(blobs: list[_Blob], px: int) -> float:
    """Typical single-pebble area from compact isolated blobs, else a size prior.

    Clamped to the size range of real pebbles (1.7-3 cm on a ~16 cm square,
    with some slack for partial segmentation) so a few crumbs of floor joint or
    chalk cannot turn every pebble into "many".
    """
    prior = np.pi * (0.075 * px) ** 2
    single = [
        b.area
        for b in blobs
        if b.peaks == 1 and b.solidity > 0.85 and 0.3 * prior < b.area < 2.5 * prior
    ]
    if len(single) >= 3:
        return float(np.clip(np.median(single), 0.35 * prior, 1.8 * prior))
    return float(prior)


def count_squares(
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: CountConfig | None = None,
    calibration: Calibration | None = None,
) -> list[SquareCount]:
    """Count distribution and big-stone probability for the 12 regions."""
    return count_board(image_bgr, outline, cfg, calibration)[0]


def _foreground(
    image_bgr: NDArray[np.uint8], outline: Outline, cfg: CountConfig
) -> tuple[NDArray[np.uint8], NDArray[np.uint8], _Segmentation, NDArray[np.uint8]]:
    """Rectified board, where it lies inside the image, its segmentation, and the pebble mask."""
    rect, valid = rectify(image_bgr, outline, cfg.px_per_square)
    seg = segment(rect, cfg, outline.arc_depth)
    return rect, valid, seg, seg.fg & (valid > 0).astype(np.uint8)


def count_board(
    image_bgr: NDArray[np.uint8],
    outline: Outline,
    cfg: CountConfig | None = None,
    calibration: Calibration | None = None,
) -> tuple[list[SquareCount], Grid]:
    """Counts plus the drawn grid found on the way (for drawing true regions)."""
    cfg = cfg or CountConfig()
    px = cfg.px_per_square
    rect, valid, seg, fg = _foreground(image_bgr, outline, cfg)
    labels = seg.labels
    prior = np.pi * (0.075 * px) ** 2
    blobs = _blobs(fg, labels, cfg.min_blob_frac * prior * 0.5)
    if calibration is not None and calibration.px_per_square == px:
        unit = calibration.pebble_area
    else:
        unit = cfg.pebble_area or estimate_pebble_area(blobs, px)
    fg, bigs = _remove_big_stones(fg, labels, unit, cfg)
    peb_r = float(np.sqrt(unit / np.pi))
    shade = blob_map(rect, peb_r) if cfg.use_shading else None
    blobs = _blobs(fg, labels, cfg.min_blob_frac * prior * 0.5, peb_r, shade, seg)
    shade_med = float(np.median(shade[labels >= 0])) if shade is not None else np.inf
    totals = np.zeros(NUM_SQUARES)
    big_prob = np.zeros(NUM_SQUARES)
    peb_r = float(np.sqrt(unit / np.pi))
    for b in blobs:
        if b.area < cfg.min_blob_frac * unit or b.radius < cfg.min_radius_frac * peb_r:
            continue  # specks and thin strokes (chalk fragments, floor joints)
        if b.elongation > cfg.stroke_elongation and b.radius < 0.9 * peb_r:
            continue  # a straight band thinner than a pebble: joint, crack or chalk
        if b.area > 2.0 * unit and b.radius < 0.8 * peb_r:
            continue  # large yet thin everywhere: a network of joints, not pebbles
        if (
            b.area > cfg.shadow_min_area * unit
            and b.mean_dlum < -cfg.shadow_dark
            and b.mean_chroma < cfg.shadow_chroma
            and b.mean_dlum > -4.0 * cfg.shadow_dark  # black pebbles are darker still
            and b.texture < cfg.shadow_texture * shade_med
        ):
            continue  # large, darker, ground-coloured and smooth: a cast shadow
        n = b.area / unit
        if n < cfg.single_max:
            est = 1.0
        elif n < 3.0:
            # a few touching pebbles: trust the distance-transform peaks, which
            # do not care that pebbles vary in size
            cand = max(b.peaks, b.shade_peaks)
            est = float(min(max(cand, round(n) - 1), round(n) + 1))
        else:
            est = max(float(b.peaks), n) if cfg.use_peaks else n
            if 0.7 * n <= b.shade_peaks <= 1.6 * n:
                est = (1.0 - cfg.shade_weight) * est + cfg.shade_weight * b.shade_peaks
            # piles hide pebbles under pebbles: area undercounts them more the
            # bigger they are (vision notes section 3)
            est *= 1.0 + min(cfg.pile_gain * max(0.0, est - 4.0), cfg.pile_cap)
        # a pebble belongs to the square holding its centre: whole blobs go to
        # their centroid's region unless a big pile really straddles a line
        if b.area < 6.0 * unit or float(b.region_share.max()) > 0.75:
            totals[b.region] += est
        else:
            totals += est * b.region_share
    for m in MANDARINS:
        big_prob[m] = bigs[m]
    vis = np.array(
        [
            float((valid[(labels == i)] > 0).mean()) if (labels == i).any() else 0.0
            for i in range(NUM_SQUARES)
        ]
    )
    out: list[SquareCount] = []
    for i in range(NUM_SQUARES):
        extra = 0.0 if vis[i] > 0.95 else 2.0 * (1.0 - vis[i]) * (1.0 + totals[i])
        probs = _distribution(float(totals[i]), cfg, extra)
        bp = float(big_prob[i]) if i in MANDARINS else 0.0
        out.append(
            SquareCount(
                int(np.argmax(probs)),
                tuple(float(p) for p in probs),
                int(bp >= 0.5),
                bp,
                float(totals[i]),
            )
        )
    return out, seg.grid


def calibrate_opening(
    image_bgr: NDArray[np.uint8], outline: Outline, cfg: CountConfig | None = None
) -> Calibration:
    """Learn pebble and big-stone size from the opening position.

    At the opening every citizen square holds 5 pebbles and each mandarin just
    its big stone, so the foreground areas give the unit sizes directly.
    """
    cfg = cfg or CountConfig()
    px = cfg.px_per_square
    _, _, seg, fg = _foreground(image_bgr, outline, cfg)
    labels = seg.labels
    citizen = (labels > 0) & (labels != 6)
    unit = float(fg[citizen].sum()) / 50.0
    big_areas = [float(fg[labels == m].sum()) for m in MANDARINS]
    big = float(np.median(big_areas)) if max(big_areas) > 0 else unit * 6.0
    return Calibration(max(unit, 1.0), max(big, unit), px)

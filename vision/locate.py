"""Stage 1: find the chalk board and its homography in one frame.

Pipeline (see /work/shared/notes/vision.md section 4): a polarity-free ridge map
on a downscaled copy (chalk may be lighter, darker or just differently coloured
than the ground; log-luminance makes it shadow-invariant) -> Hough lines ->
exhaustive, batched template hypotheses from two lines of each direction ->
score = chalk response along the projected template minus response half a
square away -> greedy corner refinement of the best few.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import LocateConfig
from vision.errors import BoardNotFoundError
from vision.geometry import (
    BOARD_CORNERS,
    FloatArray,
    batch_homographies,
    canonical_corners,
    homography_from_corners,
    offgrid_points,
    project,
    region_polygons_board,
    template_points,
)

_SAT = 8.0  # ridge strength (noise units) that counts as full chalk evidence


@dataclass(frozen=True)
class Outline:
    """Where the board is: board-to-image homography and derived geometry."""

    homography: FloatArray  # board units -> image px
    corners: FloatArray  # 4x2, SW, SE, NE, NW
    regions: tuple[FloatArray, ...]  # 12 polygons in image px, ring order
    quality: float  # 0..1, share of the template supported by chalk
    arc_depth: float
    manual: bool = False

    def px_per_unit(self) -> float:
        """Mean image length of one square side (for scale-aware stages)."""
        c = self.corners
        long_ = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 10.0
        short = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 4.0
        return float((long_ + short) / 2.0)


def outline_from_corners(
    corners: FloatArray, arc_depth: float = 0.95, quality: float = 1.0, manual: bool = False
) -> Outline:
    """Build the full outline from 4 image corners (SW, SE, NE, NW)."""
    c = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    h = homography_from_corners(c)
    regions = tuple(project(h, p) for p in region_polygons_board(arc_depth))
    return Outline(h, c, regions, float(quality), float(arc_depth), manual)


def ridge_map(bgr: NDArray[np.uint8], sigmas: tuple[float, ...]) -> NDArray[np.float32]:
    """Line-likeness per pixel, in units of the image's own texture noise.

    Hessian |l1| - |l2| is high on thin lines and low on blobs (pebbles) and flat
    ground. Computed on log-luminance and on both chroma channels so coloured
    chalk on similar-brightness ground is still seen.
    """
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).astype(np.float32)
    lum = np.log(lab[..., 0] + 8.0) * 40.0
    out: NDArray[np.float32] | None = None
    noise_lum = 1e-3
    for ci, chan in enumerate((lum, lab[..., 1], lab[..., 2])):
        best: NDArray[np.float32] | None = None
        for s in sigmas:
            g = cv2.GaussianBlur(chan, (0, 0), s)
            ixx = cv2.Sobel(g, cv2.CV_32F, 2, 0, ksize=3)
            iyy = cv2.Sobel(g, cv2.CV_32F, 0, 2, ksize=3)
            ixy = cv2.Sobel(g, cv2.CV_32F, 1, 1, ksize=3)
            d = np.sqrt((ixx - iyy) ** 2 + 4.0 * ixy**2)
            tr = ixx + iyy
            r = np.abs(np.abs(0.5 * (tr + d)) - np.abs(0.5 * (tr - d))) * float(s * s)
            best = r if best is None else np.maximum(best, r)
        assert best is not None
        med = float(np.median(best))
        if ci == 0:
            noise_lum = max(med, 1e-3)
        scaled = best / max(med, noise_lum)
        out = scaled if out is None else np.maximum(out, scaled)
    assert out is not None
    return out.astype(np.float32)


def _angle_diff(a: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    d = np.abs(a - b) % np.pi
    return np.minimum(d, np.pi - d)


def hough_lines(ridge: NDArray[np.float32], cfg: LocateConfig) -> FloatArray:
    """Strongest distinct straight lines as (rho, theta) rows, strongest first."""
    binary = (ridge > cfg.ridge_threshold).astype(np.uint8) * 255
    votes = max(10, int(cfg.hough_threshold_frac * ridge.shape[1]))
    found = cv2.HoughLines(binary, 1.0, np.pi / 360.0, votes)
    if found is None:
        return np.zeros((0, 2))
    raw = found.reshape(-1, 2).astype(np.float64)[: cfg.max_lines * 20]
    kept: list[tuple[float, float]] = []
    for rho, theta in raw:
        dup = False
        for r2, t2 in kept:
            dt = abs(theta - t2)
            same = (dt < np.deg2rad(3.0) and abs(rho - r2) < 8.0) or (
                np.pi - dt < np.deg2rad(3.0) and abs(rho + r2) < 8.0
            )
            if same:
                dup = True
                break
        if not dup:
            kept.append((float(rho), float(theta)))
            if len(kept) >= cfg.max_lines:
                break
    return np.array(kept).reshape(-1, 2)


def _homog_lines(lines: FloatArray) -> FloatArray:
    return np.stack([np.cos(lines[:, 1]), np.sin(lines[:, 1]), -lines[:, 0]], axis=1)


def _hypotheses(
    lines: FloatArray, shape: tuple[int, int], cfg: LocateConfig
) -> FloatArray:
    """Homographies from every 2 long + 2 short lines and template assignment."""
    if len(lines) < 4:
        return np.zeros((0, 3, 3))
    theta = lines[:, 1]
    anchors = [0]
    far = np.nonzero(_angle_diff(theta, theta[0]) > np.deg2rad(20.0))[0]
    if len(far):
        anchors.append(int(far[0]))
    hl = _homog_lines(lines)
    height, width = shape
    y_pairs = [(0.0, 1.0), (1.0, 2.0), (0.0, 2.0)]
    x_pairs = [(float(a), float(b)) for a, b in itertools.combinations(range(6), 2)]
    out: list[FloatArray] = []
    for a in anchors:
        diff = _angle_diff(theta, theta[a])
        longs = np.nonzero(diff < np.deg2rad(12.0))[0][: cfg.max_long_lines]
        shorts = np.nonzero(diff > np.deg2rad(20.0))[0][: cfg.max_short_lines]
        if len(longs) < 2 or len(shorts) < 2:
            continue
        pts = np.cross(hl[longs][:, None, :], hl[shorts][None, :, :])  # (L, S, 3)
        w = pts[..., 2]
        valid = np.abs(w) > 1e-9
        inter = pts[..., :2] / np.where(valid, w, 1.0)[..., None]
        lp = np.array(list(itertools.combinations(range(len(longs)), 2)))
        sp = np.array(list(itertools.combinations(range(len(shorts)), 2)))
        i, j = lp[:, 0][:, None], lp[:, 1][:, None]
        k, m = sp[:, 0][None, :], sp[:, 1][None, :]
        quad = np.stack([inter[i, k], inter[i, m], inter[j, m], inter[j, k]], axis=2)
        ok = valid[i, k] & valid[i, m] & valid[j, m] & valid[j, k]
        quad = quad.reshape(-1, 4, 2)
        ok = ok.reshape(-1)
        lo = np.array([-0.5 * width, -0.5 * height])
        hi = np.array([1.5 * width, 1.5 * height])
        ok &= np.all((quad > lo) & (quad < hi), axis=(1, 2))
        side_x = 0.5 * (
            np.linalg.norm(quad[:, 1] - quad[:, 0], axis=1)
            + np.linalg.norm(quad[:, 2] - quad[:, 3], axis=1)
        )
        side_y = 0.5 * (
            np.linalg.norm(quad[:, 3] - quad[:, 0], axis=1)
            + np.linalg.norm(quad[:, 2] - quad[:, 1], axis=1)
        )
        quad, side_x, side_y = quad[ok], side_x[ok], side_y[ok]
        for (ya, yb), (xa, xb) in itertools.product(y_pairs, x_pairs):
            ux = side_x / (xb - xa)
            uy = side_y / (yb - ya)
            ratio = uy / np.maximum(ux, 1e-9)
            sel = (
                (ratio < cfg.max_aspect)
                & (ratio > 1.0 / cfg.max_aspect)
                & (5.0 * ux > cfg.min_board_frac * width)
                & (5.0 * ux < 1.6 * width)
            )
            if not sel.any():
                continue
            src = np.array([[xa, ya], [xb, ya], [xb, yb], [xa, yb]])
            src_b = np.broadcast_to(src, (int(sel.sum()), 4, 2))
            out.append(batch_homographies(np.ascontiguousarray(src_b), quad[sel]))
    if not out:
        return np.zeros((0, 3, 3))
    hs = np.concatenate(out, axis=0)
    return hs[np.all(np.isfinite(hs), axis=(1, 2))]


def _sample(img: NDArray[np.float32], hs: FloatArray, pts: FloatArray) -> FloatArray:
    """Nearest-pixel values of img at pts projected by each homography (K, P)."""
    ph = np.concatenate([pts, np.ones((len(pts), 1))], axis=1)
    proj = np.einsum("kij,pj->kpi", hs, ph)
    w = proj[..., 2]
    good = w > 1e-9
    w = np.where(good, w, 1.0)
    x = np.rint(proj[..., 0] / w)
    y = np.rint(proj[..., 1] / w)
    h, wd = img.shape
    inside = good & (x >= 0) & (x < wd) & (y >= 0) & (y < h)
    xi = np.clip(x, 0, wd - 1).astype(np.intp)
    yi = np.clip(y, 0, h - 1).astype(np.intp)
    vals = img[yi, xi].astype(np.float64)
    return np.where(inside, vals, 0.0)


def _scores(
    sat: NDArray[np.float32], hs: FloatArray, on: FloatArray, off: FloatArray
) -> FloatArray:
    """Template support minus support half a square away, per homography."""
    chunk = 4096
    res = np.empty(len(hs))
    for s in range(0, len(hs), chunk):
        h = hs[s : s + chunk]
        res[s : s + chunk] = _sample(sat, h, on).mean(axis=1) - 0.5 * _sample(
            sat, h, off
        ).mean(axis=1)
    return res


def _refine(
    sat: NDArray[np.float32], corners: FloatArray, depth: float, cfg: LocateConfig, step0: float
) -> tuple[FloatArray, float, float]:
    """Greedy coordinate search on the 4 corners and the arc depth."""
    c = corners.copy()
    step = step0
    best = -np.inf
    off = offgrid_points(0.1)
    for _ in range(cfg.refine_rounds):
        cands = [c.reshape(-1)]
        depths = [depth]
        for idx in range(8):
            for sgn in (-1.0, 1.0):
                v = c.reshape(-1).copy()
                v[idx] += sgn * step
                cands.append(v)
                depths.append(depth)
        for dd in (-0.05, 0.05):
            cands.append(c.reshape(-1))
            depths.append(float(np.clip(depth + dd, 0.6, 1.3)))
        cv = np.array(cands).reshape(-1, 4, 2)
        hs = batch_homographies(np.broadcast_to(BOARD_CORNERS, cv.shape).copy(), cv)
        sc = np.full(len(cv), -np.inf)
        for dval in set(depths):
            sel = np.array([d == dval for d in depths])
            on = template_points(0.05, dval)
            fin = np.all(np.isfinite(hs[sel]), axis=(1, 2))
            idxs = np.nonzero(sel)[0][fin]
            if len(idxs):
                sc[idxs] = _scores(sat, hs[idxs], on, off)
        k = int(np.argmax(sc))
        if sc[k] > best + 1e-6 and k != 0:
            best = float(sc[k])
            c = cv[k]
            depth = depths[k]
        else:
            best = max(best, float(sc[0]))
            step *= 0.5
            if step < 0.2:
                break
    return c, depth, best


def locate_board(
    image_bgr: NDArray[np.uint8],
    cfg: LocateConfig | None = None,
    rng: np.random.Generator | None = None,
) -> Outline:
    """Find the board in one frame or raise BoardNotFoundError.

    ``rng`` is accepted for tie-breaking between equal hypotheses so that the
    search stays deterministic for a given seed.
    """
    cfg = cfg or LocateConfig()
    if rng is None:
        rng = np.random.default_rng(cfg.seed)
    if image_bgr is None or image_bgr.ndim != 3 or image_bgr.size == 0:
        raise BoardNotFoundError("empty or non-colour image")
    h0, w0 = image_bgr.shape[:2]
    scale = cfg.work_width / float(w0)
    work = cv2.resize(
        image_bgr, (cfg.work_width, max(8, round(h0 * scale))), interpolation=cv2.INTER_AREA
    )
    ridge = ridge_map(work, cfg.ridge_sigmas)
    sat = np.minimum(ridge / _SAT, 1.0).astype(np.float32)
    sat_coarse = cv2.dilate(sat, np.ones((5, 5), np.uint8))
    lines = hough_lines(ridge, cfg)
    hs = _hypotheses(lines, (work.shape[0], work.shape[1]), cfg)
    if len(hs) == 0:
        raise BoardNotFoundError("no chalk lines in two directions")
    on = template_points(0.25, cfg.arc_depth)
    off = offgrid_points(0.25)
    sc = _scores(sat_coarse, hs, on, off)
    sc = sc + rng.uniform(0.0, 1e-9, size=len(sc))
    order = np.argsort(-sc)
    picked: list[FloatArray] = []
    for idx in order[: cfg.refine_candidates * 20]:
        c = canonical_corners(project(hs[idx], BOARD_CORNERS))
        if any(np.max(np.linalg.norm(c - p, axis=1)) < 6.0 for p in picked):
            continue
        picked.append(c)
        if len(picked) >= cfg.refine_candidates:
            break
    sat_fine = cv2.dilate(cv2.GaussianBlur(sat, (0, 0), 1.0), np.ones((3, 3), np.uint8))
    best: tuple[float, FloatArray, float] | None = None
    for c in picked:
        rc, depth, s = _refine(sat_fine, c, cfg.arc_depth, cfg, 2.0)
        if best is None or s > best[0]:
            best = (s, rc, depth)
    assert best is not None
    quality, corners_w, depth = best
    corners = canonical_corners(corners_w / scale)
    if quality < cfg.min_quality:
        raise BoardNotFoundError(f"chalk template fit too weak (quality {quality:.2f})")
    return outline_from_corners(corners, depth, quality)

"""Stage 1: find the chalk board and its homography in one frame.

Pipeline (see the shared vision notes, section 4): a polarity-free ridge map
on a downscaled copy (chalk may be lighter, darker or just differently coloured
than the ground; log-luminance makes it shadow-invariant; step edges are
suppressed) -> Hough lines -> batched template hypotheses from two lines of
each direction, plus dividers searched inside strips between long-line pairs ->
score = chalk response along the projected template minus response half a
square away -> greedy corner refinement of the best few -> the winner's four
outer sides re-fitted to the chalk ridge at full resolution (drawn boards are
irregular, so the rigid template is biased by a few px).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import LocateConfig
from vision.errors import BoardNotFoundError
from vision.geometry import (
    BOARD_CORNERS,
    FloatArray,
    canonical_corners,
    extension_points,
    homography_from_corners,
    offgrid_with_tangents,
    project,
    region_polygons_board,
    template_with_tangents,
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


def ridge_map(
    bgr: NDArray[np.uint8],
    sigmas: tuple[float, ...],
    polarity: int = 0,
    edge_suppress: float = 0.0,
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Line-likeness per pixel (in units of the image's own texture noise) and
    the line's normal angle in [0, pi).

    Hessian |l1| - |l2| is high on thin lines and low on blobs (pebbles) and flat
    ground. Computed on log-luminance and on both chroma channels so coloured
    chalk on similar-brightness ground is still seen. ``polarity`` +1 keeps only
    luminance ridges lighter than their surroundings (chalk), -1 only darker
    ones (charcoal, marker, scratches), 0 both; floor joints and cracks are
    usually dark, so the light-only map hides them from white chalk.
    """
    return ridge_maps(bgr, sigmas, (polarity,), edge_suppress)[polarity]


def _hessian_ridge(
    chan: NDArray[np.float32],
    sigmas: tuple[float, ...],
    polarities: tuple[int, ...],
    edge_suppress: float = 0.0,
) -> dict[int, tuple[NDArray[np.float32], NDArray[np.float32]]]:
    """Best-over-scales ridge strength and normal angle, per luminance polarity.

    A step edge (shadow border, arm, tile edge) has a second-derivative lobe
    beside it as strong as a line's, but also a strong gradient there, while a
    line centre has none: subtracting ``edge_suppress`` x the scale-normalised
    gradient keeps lines and removes the double response along edges.

    With eigenvalues l1 >= l2, ||l1| - |l2|| = min(l1 - l2, |l1 + l2|) and the
    dominant eigenvalue has the sign of the trace, so no eigen-decomposition is
    needed; the angle is computed once, from the winning scale's Hessian.
    """
    best: dict[int, NDArray[np.float32]] = {}
    comp: dict[int, list[NDArray[np.float32]]] = {}
    for s in sigmas:
        g = cv2.GaussianBlur(chan, (0, 0), s)
        ixx = cv2.Sobel(g, cv2.CV_32F, 2, 0, ksize=3)
        iyy = cv2.Sobel(g, cv2.CV_32F, 0, 2, ksize=3)
        ixy2 = np.asarray(cv2.Sobel(g, cv2.CV_32F, 1, 1, ksize=3, scale=2.0), np.float32)
        diff = np.asarray(cv2.subtract(ixx, iyy), np.float32)
        tr = np.asarray(cv2.add(ixx, iyy), np.float32)
        r = np.asarray(cv2.min(cv2.magnitude(diff, ixy2), np.abs(tr)), np.float32)
        if edge_suppress > 0.0:
            gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
            gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
            # Sobel 1st derivative is 8x, 2nd 4x the true derivative: rescale
            grad = cv2.magnitude(gx, gy)
            r = np.asarray(
                cv2.addWeighted(r, float(s * s) / 4.0, grad, -edge_suppress * float(s) / 8.0, 0.0),
                np.float32,
            )
            np.maximum(r, 0.0, out=r)
        else:
            r *= float(s * s)
        for p in polarities:
            rp = r
            if p != 0:
                rp = r.copy()
                rp[tr * p >= 0] = 0.0
            if p not in best:
                # first scale taken whole (where it is 0 the angle is never used);
                # several polarities must not share the arrays updated below
                best[p] = rp
                shared = len(polarities) == 1
                comp[p] = [a if shared else a.copy() for a in (diff, ixy2, tr)]
                continue
            # cv2 masked copies: numpy's where/copyto are ~30x slower here
            upd = cv2.compare(rp, best[p], cv2.CMP_GT)
            cv2.copyTo(rp, upd, best[p])
            for dst, src in zip(comp[p], (diff, ixy2, tr), strict=True):
                cv2.copyTo(src, upd, dst)
    out: dict[int, tuple[NDArray[np.float32], NDArray[np.float32]]] = {}
    for p in polarities:
        diff, ixy2, tr = comp[p]
        # eigenvector of l1 has angle a1; the dominant one is the normal
        a = 0.5 * cv2.phase(diff, ixy2)
        a += cv2.compare(tr, 0.0, cv2.CMP_LT).astype(np.float32) * np.float32(np.pi / 2 / 255)
        out[p] = (best[p], a)
    return out


def ridge_maps(
    bgr: NDArray[np.uint8],
    sigmas: tuple[float, ...],
    polarities: tuple[int, ...],
    edge_suppress: float = 0.0,
) -> dict[int, tuple[NDArray[np.float32], NDArray[np.float32]]]:
    """``ridge_map`` for several polarities, sharing the chroma work."""
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab)
    lum = cv2.log(lab[..., 0].astype(np.float32) + 8.0) * 40.0
    lum_maps = _hessian_ridge(lum, sigmas, polarities, edge_suppress)
    chroma = [
        _hessian_ridge(lab[..., c].astype(np.float32), sigmas, (0,), edge_suppress)[0]
        for c in (1, 2)
    ]
    out: dict[int, tuple[NDArray[np.float32], NDArray[np.float32]]] = {}
    for p in polarities:
        r_l, a_l = lum_maps[p]
        # medians on a 1-in-9 subsample: the noise level, not an exact statistic
        sub = r_l[::3, ::3]
        nz = sub[sub > 0]
        noise = max(float(np.median(nz)) if nz.size else 0.0, 1e-3)
        resp = r_l / np.float32(noise)
        ang = a_l.copy()
        for r_c, a_c in chroma:
            scaled = r_c / np.float32(max(float(np.median(r_c[::3, ::3])), noise))
            upd = cv2.compare(scaled, resp, cv2.CMP_GT)
            cv2.copyTo(scaled, upd, resp)
            cv2.copyTo(a_c, upd, ang)
        ang = ang - cv2.compare(ang, np.pi, cv2.CMP_GE).astype(np.float32) * np.float32(np.pi / 255)
        out[p] = (resp.astype(np.float32), ang)
    return out


def thin_ridges(ridge: NDArray[np.float32], normal: NDArray[np.float32]) -> NDArray[np.bool_]:
    """Non-maximum suppression across the line: one pixel per stroke centre."""
    q = (np.rint(normal / (np.pi / 4)).astype(np.int32)) % 4
    pad = np.pad(ridge, 1, mode="edge")
    h, w = ridge.shape
    keep = np.zeros(ridge.shape, bool)
    offsets = [(0, 1), (1, 1), (1, 0), (1, -1)]  # normal 0, 45, 90, 135 deg (dy, dx)
    for k, (dy, dx) in enumerate(offsets):
        a = pad[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
        b = pad[1 - dy : 1 - dy + h, 1 - dx : 1 - dx + w]
        keep |= (q == k) & (ridge >= a) & (ridge >= b)
    return keep


def _angle_diff(a: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    d = np.abs(a - b) % np.pi
    return np.minimum(d, np.pi - d)


def _nms_lines(raw: FloatArray, limit: int) -> FloatArray:
    """Drop near-duplicate Hough lines (double edges of one chalk stroke).

    Greedy in vote order; each kept line flags its duplicates in one vector
    step, so the Python loop only reads flags.
    """
    rho, theta = raw[:, 0], raw[:, 1]
    tol = np.deg2rad(4.0)
    gone = np.zeros(len(raw), bool)
    kept: list[int] = []
    for i in range(len(raw)):
        if gone[i]:
            continue
        kept.append(i)
        if len(kept) >= limit:
            break
        dt = np.abs(theta - theta[i])
        gone |= ((dt < tol) & (np.abs(rho - rho[i]) < 9.0)) | (
            (np.pi - dt < tol) & (np.abs(rho + rho[i]) < 9.0)
        )
    return raw[kept].reshape(-1, 2)


def hough_families(
    ridge: NDArray[np.float32], normal: NDArray[np.float32], cfg: LocateConfig
) -> list[FloatArray]:
    """Lines of the two dominant directions, each family strongest first.

    Splitting pixels by local orientation before the Hough transform stops the
    elongated board blob from producing strong diagonal lines across it.
    """
    mask = (ridge > cfg.ridge_threshold) & thin_ridges(ridge, normal)
    if mask.sum() < 50:
        return []
    phi = normal
    vals = phi[mask]
    hist, _ = np.histogram(vals, bins=36, range=(0.0, np.pi))
    hist = hist.astype(np.float64)
    hist = hist + 0.5 * (np.roll(hist, 1) + np.roll(hist, -1))
    centers = (np.arange(36) + 0.5) * np.pi / 36
    peaks: list[int] = []
    work = hist.copy()
    for _ in range(cfg.max_directions):
        p = int(np.argmax(work))
        if work[p] <= 0:
            break
        peaks.append(p)
        work[_angle_diff(centers, centers[p]) < np.deg2rad(15.0)] = -1.0
    votes = max(10, int(cfg.hough_threshold_frac * ridge.shape[1]))
    fams: list[FloatArray] = []
    half = np.deg2rad(16.0)
    ys, xs = np.nonzero(mask)
    vals64 = vals.astype(np.float64)
    for p in peaks:
        c = float(centers[p])
        keep = _angle_diff(vals64, c) < half
        binary = np.zeros(mask.shape, np.uint8)
        binary[ys[keep], xs[keep]] = 255
        found: list[FloatArray] = []
        ranges = [(c - half, c + half)]
        if c - half < 0:
            ranges = [(0.0, c + half), (np.pi + c - half, np.pi)]
        elif c + half > np.pi:
            ranges = [(c - half, np.pi), (0.0, c + half - np.pi)]
        for lo, hi in ranges:
            got = cv2.HoughLines(
                binary, 2.0, np.pi / 360.0, votes, None, 0, 0, float(lo), float(hi)
            )
            if got is not None:
                found.append(
                    got.reshape(-1, 3)[:, :2] if got.shape[-1] == 3 else got.reshape(-1, 2)
                )
        if not found:
            fams.append(np.zeros((0, 2)))
            continue
        raw = np.concatenate(found, axis=0).astype(np.float64)
        fams.append(_nms_lines(raw[: cfg.max_lines * 30], cfg.max_lines))
    return fams


def _homog_lines(lines: FloatArray) -> FloatArray:
    return np.stack([np.cos(lines[:, 1]), np.sin(lines[:, 1]), -lines[:, 0]], axis=1)


def _side_support(maps: NDArray[np.float32], a: FloatArray, b: FloatArray) -> FloatArray:
    """Mean direction-matched evidence along image segments a->b (Q, 2 each)."""
    t = np.linspace(0.05, 0.95, 12)
    pts = a[:, None, :] + (b - a)[:, None, :] * t[None, :, None]
    d = b - a
    normal_ang = np.mod(np.arctan2(d[:, 1], d[:, 0]) + np.pi / 2, np.pi)
    chan = (np.rint(normal_ang / (np.pi / _BINS)).astype(np.intp) % _BINS)[:, None]
    _, h, w = maps.shape
    xr = np.rint(pts[..., 0])
    yr = np.rint(pts[..., 1])
    inside = (xr >= 0) & (xr < w) & (yr >= 0) & (yr < h)
    xi = np.clip(xr, 0, w - 1).astype(np.intp)
    yi = np.clip(yr, 0, h - 1).astype(np.intp)
    vals = np.where(inside, maps[np.broadcast_to(chan, xi.shape), yi, xi], 0.0)
    return np.asarray(vals.mean(axis=1), dtype=np.float64)


def _line_profiles(
    maps: NDArray[np.float32], lines: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Cumulative direction-matched evidence along each whole line, 1 px steps.

    With these, the mean support of any segment of a line is two lookups, so
    thousands of line quadruples can be ranked at once.
    """
    _, h, w = maps.shape
    half = int(np.ceil(np.hypot(h, w)))
    t = np.arange(-half, half + 1, dtype=np.float64)
    rho, theta = lines[:, 0], lines[:, 1]
    p0 = np.stack([rho * np.cos(theta), rho * np.sin(theta)], axis=1)
    d = np.stack([-np.sin(theta), np.cos(theta)], axis=1)
    xs = np.rint(p0[:, 0:1] + t[None, :] * d[:, 0:1])
    ys = np.rint(p0[:, 1:2] + t[None, :] * d[:, 1:2])
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    chan = (np.rint(np.mod(theta, np.pi) / (np.pi / _BINS)).astype(np.intp) % _BINS)[:, None]
    vals = maps[
        np.broadcast_to(chan, xs.shape),
        np.clip(ys, 0, h - 1).astype(np.intp),
        np.clip(xs, 0, w - 1).astype(np.intp),
    ]
    vals = np.where(inside, vals, 0.0)
    cum = np.concatenate([np.zeros((len(lines), 1)), np.cumsum(vals, axis=1)], axis=1)
    return cum, p0 - half * d, d  # origin moved so that index = position


def _segment_mean(
    cum: FloatArray, row: NDArray[np.intp], ta: FloatArray, tb: FloatArray
) -> FloatArray:
    lo = np.minimum(ta, tb)
    hi = np.maximum(ta, tb)
    pad = 0.05 * (hi - lo)
    n = cum.shape[1] - 1
    a = np.clip(np.rint(lo + pad), 0, n).astype(np.intp)
    b = np.clip(np.rint(hi - pad), 0, n).astype(np.intp)
    return np.asarray((cum[row, b] - cum[row, a]) / np.maximum(b - a, 1), dtype=np.float64)


def _assign(
    quad: FloatArray, side_x: FloatArray, side_y: FloatArray, cfg: LocateConfig, width: int
) -> FloatArray:
    """Board homographies for image quadrilaterals x every template assignment.

    A quadrilateral bounded by template lines x = xa, xb and y = ya, yb; one
    4-point solve per quadrilateral, then each assignment is a product with a
    fixed affine map (45 solves per quad would dominate the search time).
    """
    if len(quad) == 0:
        return np.zeros((0, 3, 3))
    hq = _square_homographies(quad)
    # all assignments at once (assignment-major order, as a loop would give)
    ux = side_x[None, :] / _ASSIGN_DX[:, None]
    uy = side_y[None, :] / _ASSIGN_DY[:, None]
    ratio = uy / np.maximum(ux, 1e-9)
    sel = (
        (ratio < cfg.max_aspect)
        & (ratio > 1.0 / cfg.max_aspect)
        & (5.0 * ux > cfg.min_board_frac * width)
        & (5.0 * ux < 1.6 * width)
    )
    ai, qi = np.nonzero(sel)
    if len(ai) == 0:
        return np.zeros((0, 3, 3))
    hs: FloatArray = np.matmul(hq[qi], _ASSIGN_MAPS[ai])
    return hs[np.all(np.isfinite(hs), axis=(1, 2))]


_ASSIGNMENTS = [
    (yp, xp)
    for yp in ((0.0, 2.0), (0.0, 1.0), (1.0, 2.0))
    for xp in itertools.combinations((0.0, 1.0, 2.0, 3.0, 4.0, 5.0), 2)
]
_ASSIGN_DX = np.array([xb - xa for _, (xa, xb) in _ASSIGNMENTS])
_ASSIGN_DY = np.array([yb - ya for (ya, yb), _ in _ASSIGNMENTS])
_ASSIGN_MAPS = np.array(  # template rectangle -> unit square, per assignment
    [
        [
            [1.0 / (xb - xa), 0.0, -xa / (xb - xa)],
            [0.0, 1.0 / (yb - ya), -ya / (yb - ya)],
            [0, 0, 1],
        ]
        for (ya, yb), (xa, xb) in _ASSIGNMENTS
    ]
)


@functools.lru_cache(maxsize=32)
def _pairs(n: int) -> NDArray[np.intp]:
    """Index pairs i < j of n items, in itertools.combinations order: (n(n-1)/2, 2)."""
    return np.array(list(itertools.combinations(range(n), 2)), np.intp).reshape(-1, 2)


def _hypotheses(
    fams: list[FloatArray],
    maps: NDArray[np.float32],
    cfg: LocateConfig,
) -> FloatArray:
    """Homographies from 2 long + 2 short lines and every template assignment.

    Line quadruples are first ranked by chalk support along the four sides of
    the quadrilateral they bound (a true pair of rows and columns is chalk all
    round); only the best quadruples get the 45 template assignments.
    """
    shape = maps.shape[1:]
    if len(fams) < 2 or cfg.max_quads <= 0:
        return np.zeros((0, 3, 3))
    height, width = int(shape[0]), int(shape[1])
    out: list[FloatArray] = []
    usable = [f for f in fams if len(f) >= 2]
    n_prof = max(cfg.max_long_lines, cfg.max_short_lines)
    # each family is long in some pairs and short in others: profile it once
    profs = [_line_profiles(maps, f[:n_prof]) for f in usable]
    for (fl, pl), (fs, ps) in itertools.permutations(zip(usable, profs, strict=True), 2):
        if _angle_diff(fl[:1, 1], float(fs[0, 1]))[0] < np.deg2rad(25.0):
            continue
        long_l = fl[: cfg.max_long_lines]
        short_l = fs[: cfg.max_short_lines]
        if len(long_l) < 2 or len(short_l) < 2:
            continue
        hlong = _homog_lines(long_l)
        hshort = _homog_lines(short_l)
        pts = np.cross(hlong[:, None, :], hshort[None, :, :])  # (L, S, 3)
        w = pts[..., 2]
        valid = np.abs(w) > 1e-9
        inter = pts[..., :2] / np.where(valid, w, 1.0)[..., None]
        lp = _pairs(len(long_l))
        sp = _pairs(len(short_l))
        li, lj = lp[:, 0], lp[:, 1]
        sk, sm = sp[:, 0], sp[:, 1]
        # A quadrilateral is a long-line pair x a short-line pair; each of its
        # sides lies on one line between the crossings with a pair of the other
        # family, so every per-side quantity is a small (line, pair) table and
        # the (LP, SP) grid is built from row gathers of those tables.
        lo = np.array([-0.5 * width, -0.5 * height])
        hi = np.array([1.5 * width, 1.5 * height])
        pt_ok = valid & np.all((inter > lo) & (inter < hi), axis=-1)  # (L, S)
        ok_l = pt_ok[li] & pt_ok[lj]  # (LP, S)
        ok = ok_l[:, sk] & ok_l[:, sm]
        len_l = np.linalg.norm(inter[:, sm] - inter[:, sk], axis=-1)  # (L, SP)
        side_x = 0.5 * (len_l[li] + len_l[lj])
        len_s = np.linalg.norm(inter[li] - inter[lj], axis=-1)  # (LP, S)
        side_y = 0.5 * (len_s[:, sk] + len_s[:, sm])
        # only quadrilaterals that admit some template assignment: slivers
        # between the two edges of one stroke would otherwise rank first
        min_unit = 0.2 * cfg.min_board_frac * width
        ok &= (side_x > min_unit) & (side_y > min_unit / cfg.max_aspect)
        ok &= (side_x < 1.6 * width) & (side_y < 1.6 * width)
        ratio_q = side_y / np.maximum(side_x, 1e-9)
        ok &= (ratio_q > 1.0 / (5.0 * cfg.max_aspect)) & (ratio_q < 2.0 * cfg.max_aspect)
        flat = np.flatnonzero(ok)
        if len(flat) == 0:
            continue
        cl, p0l, dl = (a[: len(long_l)] for a in pl)
        cs, p0s, ds = (a[: len(short_l)] for a in ps)
        tl = np.einsum("lsk,lk->ls", inter - p0l[:, None, :], dl)  # position on long lines
        ts = np.einsum("lsk,sk->ls", inter - p0s[None, :, :], ds)  # position on short lines
        # chalk support of every side segment: (L, SP) on long lines, (S, LP) on short
        rows_l = np.repeat(np.arange(len(long_l)), len(sp))
        sup_l = _segment_mean(cl, rows_l, tl[:, sk].reshape(-1), tl[:, sm].reshape(-1))
        sup_l = sup_l.reshape(len(long_l), len(sp))
        rows_s = np.repeat(np.arange(len(short_l)), len(lp))
        sup_s = _segment_mean(cs, rows_s, ts[li].T.reshape(-1), ts[lj].T.reshape(-1))
        sup_s = sup_s.reshape(len(short_l), len(lp)).T  # (LP, S)
        s0, s1 = sup_l[li], sup_l[lj]
        s2, s3 = sup_s[:, sk], sup_s[:, sm]
        qgrid = (s0 + s1 + s2 + s3) * 0.25 + np.minimum(np.minimum(s0, s1), np.minimum(s2, s3))
        qscore = qgrid.reshape(-1)[flat]
        top = flat[np.argsort(-qscore)[: cfg.max_quads]]
        row, col = np.divmod(top, len(sp))
        ii, jj, kk, mm = li[row], lj[row], sk[col], sm[col]
        quad = np.stack([inter[ii, kk], inter[ii, mm], inter[jj, mm], inter[jj, kk]], axis=1)
        side_x, side_y = side_x.reshape(-1), side_y.reshape(-1)
        out.append(_assign(quad, side_x[top], side_y[top], cfg, width))
    if not out:
        return np.zeros((0, 3, 3))
    hs = np.concatenate(out, axis=0)
    return hs[np.all(np.isfinite(hs), axis=(1, 2))]


def _clip_span(
    line: FloatArray, w: int, h: int
) -> tuple[tuple[float, float], tuple[float, float], float, float] | None:
    """Point, direction and parameter range of a (rho, theta) line inside the image.

    Plain floats: this runs for every long-line pair, where numpy's per-call
    overhead on 2-vectors cost more than the arithmetic.
    """
    rho, theta = float(line[0]), float(line[1])
    c, s = math.cos(theta), math.sin(theta)
    p0 = (rho * c, rho * s)
    d = (-s, c)
    lo, hi = -math.inf, math.inf
    for k, size in ((0, w), (1, h)):
        if abs(d[k]) < 1e-9:
            if not 0.0 <= p0[k] <= size:
                return None
            continue
        ta, tb = (0.0 - p0[k]) / d[k], (size - p0[k]) / d[k]
        lo, hi = max(lo, min(ta, tb)), min(hi, max(ta, tb))
    if hi - lo < 10.0:
        return None
    return p0, d, lo, hi


@functools.lru_cache(maxsize=8)
def _shear_table(
    rows: int, max_shear_frac: float, step: float
) -> tuple[NDArray[np.intp], FloatArray, NDArray[np.intp]]:
    """Rows used, divider slants and per-row column shifts (D, R) of a strip canvas."""
    rr = np.arange(int(0.1 * rows), int(np.ceil(0.9 * rows)))
    max_shear = max_shear_frac * rows / 2.0
    shears = np.arange(-max_shear, max_shear + 1e-9, step)
    offs = np.rint(shears[:, None] * (rr[None, :] / rows)).astype(np.intp)
    return rr, shears, offs


def _strip_canvas(
    la: FloatArray, lb: FloatArray, w: int, h: int, cfg: LocateConfig
) -> tuple[FloatArray, int, int] | None:
    """Canvas->image homography, canvas width and long-line channel of the strip
    between two lines, or None when the lines do not bound a usable strip."""
    sa = _clip_span(la, w, h)
    sb = _clip_span(lb, w, h)
    if sa is None or sb is None:
        return None
    (pax, pay), (dax, day), lo, hi = sa
    (pbx, pby), (dbx, dby), lob, hib = sb
    if dax * dbx + day * dby < 0:
        dbx, dby = -dbx, -dby
        lob, hib = -hib, -lob
    # extend line a's range by the image part of line b (perpendicular feet)
    for t in (lob, hib):
        ta = (pbx + t * dbx - pax) * dax + (pby + t * dby - pay) * day
        lo, hi = min(lo, ta), max(hi, ta)
    a0 = (pax + lo * dax, pay + lo * day)
    a1 = (pax + hi * dax, pay + hi * day)
    t0 = (a0[0] - pbx) * dbx + (a0[1] - pby) * dby
    t1 = (a1[0] - pbx) * dbx + (a1[1] - pby) * dby
    b0 = (pbx + t0 * dbx, pby + t0 * dby)
    b1 = (pbx + t1 * dbx, pby + t1 * dby)
    sep = 0.5 * (math.dist(b0, a0) + math.dist(b1, a1))
    if sep < 0.2 * cfg.min_board_frac * w:
        return None
    width = min(max(round((hi - lo) / 2.0), 16), 1024)  # 2 work px per canvas column
    rows = cfg.strip_rows
    src = np.array([[0.0, 0.0], [width, 0.0], [width, rows], [0.0, rows]], np.float32)
    dst = np.array([a0, a1, b1, b0], np.float32)
    # one OpenCV 4-point solve: a batched solver's overhead would dominate here
    hcan: FloatArray = np.asarray(cv2.getPerspectiveTransform(src, dst), np.float64)
    det = float(np.linalg.det(hcan))
    if not np.isfinite(det) or abs(det) < 1e-12:
        return None
    k_long = round((float(la[1]) % np.pi) / (np.pi / _BINS)) % _BINS
    return hcan, width, k_long


def _strip_batch(
    maps: NDArray[np.float32], pairs: list[tuple[FloatArray, FloatArray]], cfg: LocateConfig
) -> list[tuple[float, FloatArray, FloatArray]]:
    """Chalk segments crossing the strips between pairs of long-line candidates.

    Each strip is mapped to a canvas whose top and bottom rows are the two
    lines; a divider is then a straight segment from (u, 0) to (u + shear, H)
    and all of them are scored at once by sheared column means. Short board
    lines are too short to win a global Hough vote against tile joints or
    printed stripes, but inside the right strip they are the strongest thing.

    All strips share one canvas, side by side with zero gaps wider than the
    largest shear, so one remap per channel and one sheared sum serve every
    pair (per-strip calls cost several times more in overhead).
    Returns (strip score, canvas->image homography, dividers as (u_bottom,
    u_top, support) rows) for the strips with at least two dividers.
    """
    _, h, w = maps.shape
    rows = cfg.strip_rows
    rr, shears, offs = _shear_table(rows, cfg.strip_max_shear, cfg.strip_shear_step)
    gap = max(int(np.abs(offs).max()) if offs.size else 0, 2)
    canv = [c for c in (_strip_canvas(la, lb, w, h, cfg) for la, lb in pairs) if c is not None]
    if not canv:
        return []
    # strips of one long-line channel side by side: one remap of that channel
    layout = sorted(range(len(canv)), key=lambda i: canv[i][2])
    starts = [0] * len(canv)
    spans: dict[int, list[int]] = {}  # channel -> [first column, end column]
    col = gap
    for i in layout:
        starts[i] = col
        span = spans.setdefault(canv[i][2], [col, col])
        col += canv[i][1]
        span[1] = col
        col += gap
    total_w = col
    # source coordinates of every canvas pixel (gaps far outside: zero)
    mx = np.full((rows, total_w), -1e4, np.float32)
    my = np.full((rows, total_w), -1e4, np.float32)
    vr = np.arange(rows, dtype=np.float64)[:, None]
    for (hcan, width, _), st in zip(canv, starts, strict=True):
        u = np.arange(width, dtype=np.float64)[None, :]
        den = hcan[2, 0] * u + hcan[2, 1] * vr + hcan[2, 2]
        mx[:, st : st + width] = (hcan[0, 0] * u + hcan[0, 1] * vr + hcan[0, 2]) / den
        my[:, st : st + width] = (hcan[1, 0] * u + hcan[1, 1] * vr + hcan[1, 2]) / den
    inter, border = cv2.INTER_LINEAR, cv2.BORDER_CONSTANT
    ev = np.asarray(cv2.remap(maps[_BINS], mx, my, inter, borderMode=border), np.float32)
    for k, (c0, c1) in spans.items():
        along = cv2.remap(maps[k], mx[:, c0:c1], my[:, c0:c1], inter, borderMode=border)
        ev[:, c0:c1] -= np.asarray(along, np.float32)
    np.maximum(ev, 0.0, out=ev)
    spans_all = [(starts[i], canv[i][1]) for i in range(len(canv))]
    keep = list(range(len(canv)))
    if 0 < cfg.strip_prescreen < len(canv):
        # every other slant first: ranks the strips nearly as the full set does
        coarse = _sheared_dividers(ev, spans_all, rr, shears[::2], offs[::2], cfg)
        ranked = sorted((-c[0], i) for i, c in enumerate(coarse) if c is not None)
        keep = sorted(i for _, i in ranked[: cfg.strip_prescreen])
    # the kept strips on a canvas of their own, same gaps: their sums are unchanged
    cols: list[NDArray[np.float32]] = []
    sub_spans: list[tuple[int, int]] = []
    col = gap
    for i in keep:
        st, width = spans_all[i]
        cols.append(ev[:, st - gap : st + width])
        sub_spans.append((col, width))
        col += width + gap
    if not cols:
        return []
    sub = np.concatenate([*cols, np.zeros((rows, gap), np.float32)], axis=1)
    fine = _sheared_dividers(sub, sub_spans, rr, shears, offs, cfg)
    return [
        (got[0], canv[i][0], got[1]) for i, got in zip(keep, fine, strict=True) if got is not None
    ]


def _sheared_dividers(
    ev: NDArray[np.float32],
    spans: list[tuple[int, int]],
    rr: NDArray[np.intp],
    shears: FloatArray,
    offs: NDArray[np.intp],
    cfg: LocateConfig,
) -> list[tuple[float, FloatArray] | None]:
    """Best dividers of every strip (start column, width) of a shared canvas whose
    strips are separated by zero gaps at least as wide as the largest shift:
    (strip score, dividers as (u_bottom, u_top, support) rows) or None."""
    rows, total_w = ev.shape
    gap = max(int(np.abs(offs).max()) if offs.size else 0, 2)
    in_strip = np.zeros(total_w, bool)
    for st, width in spans:
        in_strip[st : st + width] = True
    # every slant is a whole-row shift per canvas row: add contiguous row windows
    evp = np.zeros((rows, total_w + 2 * gap), np.float32)
    evp[:, gap:-gap] = ev
    stride = evp.strides
    win = np.lib.stride_tricks.as_strided(
        evp, (rows, 2 * gap + 1, total_w), (stride[0], stride[1], stride[1]), writeable=False
    )  # (rows, 2G+1, U): row r shifted by s - G is win[r, s]
    total = np.zeros((len(shears), total_w), np.float32)
    for n, r in enumerate(rr):
        total += win[r, offs[:, n] + gap]
    # slant per column from a (U, D) copy: argmax along a contiguous axis
    arg = np.ascontiguousarray(total.T).argmax(axis=1)
    best = total[arg, np.arange(total_w)] / np.float32(len(rr))
    best[~in_strip] = -1.0  # gaps: no neighbour to compare with, as past a strip's end
    shear_at = shears[arg]
    pad = np.full(total_w + 4, -1.0, np.float32)
    pad[2:-2] = best
    peak = best >= cfg.strip_min_support
    for k in (-2, -1, 1, 2):
        peak &= best >= pad[2 + k : 2 + k + total_w]
    out: list[tuple[float, FloatArray] | None] = []
    for st, width in spans:
        cand = np.nonzero(peak[st : st + width])[0]
        cand = cand[np.argsort(-best[st + cand])]
        found: list[tuple[float, float, float]] = []
        for ui in cand[: 4 * cfg.strip_dividers].tolist():
            ub, ut = float(ui), float(ui + shear_at[st + ui])
            if any(abs(ub - fb) < 3.0 or abs(ut - ft) < 3.0 for fb, ft, _ in found):
                continue
            found.append((ub, ut, float(best[st + ui])))
            if len(found) >= cfg.strip_dividers:
                break
        if len(found) < 2:
            out.append(None)
            continue
        divs = np.array(found)
        top = np.sort(divs[:, 2])[::-1][:6]
        out.append((float(top.sum()), divs))
    return out


def _strip_hypotheses(
    fams: list[FloatArray], maps: NDArray[np.float32], cfg: LocateConfig
) -> FloatArray:
    """Homographies from the best strips: long-line pair x divider pair x assignment."""
    w = maps.shape[2]
    pairs: list[tuple[FloatArray, FloatArray]] = []
    for fam in fams:
        lines = fam[: cfg.strip_lines]
        for i, j in itertools.combinations(range(len(lines)), 2):
            if _angle_diff(lines[i : i + 1, 1], float(lines[j, 1]))[0] > np.deg2rad(20.0):
                continue
            pairs.append((lines[i], lines[j]))
    strips = _strip_batch(maps, pairs, cfg)
    strips.sort(key=lambda s: -s[0])
    rows = float(cfg.strip_rows)
    out: list[FloatArray] = []
    for _, hcan, divs in strips[: cfg.max_strips]:
        n = len(divs)
        p, q = np.array(list(itertools.combinations(range(n), 2))).T
        # order each pair west->east along the strip
        swap = divs[p, 0] > divs[q, 0]
        p, q = np.where(swap, q, p), np.where(swap, p, q)
        can = np.stack(
            [
                np.stack([divs[p, 0], np.zeros(len(p))], 1),
                np.stack([divs[q, 0], np.zeros(len(p))], 1),
                np.stack([divs[q, 1], np.full(len(p), rows)], 1),
                np.stack([divs[p, 1], np.full(len(p), rows)], 1),
            ],
            axis=1,
        )
        quad = project(hcan, can.reshape(-1, 2)).reshape(-1, 4, 2)
        side_x = 0.5 * (
            np.linalg.norm(quad[:, 1] - quad[:, 0], axis=1)
            + np.linalg.norm(quad[:, 2] - quad[:, 3], axis=1)
        )
        side_y = 0.5 * (
            np.linalg.norm(quad[:, 3] - quad[:, 0], axis=1)
            + np.linalg.norm(quad[:, 2] - quad[:, 1], axis=1)
        )
        out.append(_assign(quad, side_x, side_y, cfg, w))
    if not out:
        return np.zeros((0, 3, 3))
    return np.concatenate(out, axis=0)


_BINS = 8


@functools.lru_cache(maxsize=8)
def _offgrid(step: float) -> tuple[FloatArray, FloatArray]:
    return offgrid_with_tangents(step)


@functools.lru_cache(maxsize=64)
def _extension(step: float, depth: float) -> tuple[FloatArray, FloatArray]:
    return extension_points(step, depth)


def direction_weights(normal: NDArray[np.float32]) -> NDArray[np.float32]:
    """How well each pixel's line normal matches each of the _BINS channel
    directions, 0..1 (1 within 0, 0 beyond 30 degrees): (_BINS, H, W).

    Depends only on the ridge angles, so the coarse and fine evidence maps of
    one frame share it.
    """
    out = np.empty((_BINS, *normal.shape), np.float32)
    c60 = np.float32(np.cos(np.deg2rad(60.0)))
    gain = np.float32(1.0) / (np.float32(1.0) - c60)
    # cos(2 (normal - a)) from one cos and one sin of 2 normal (addition theorem)
    n2 = normal * np.float32(2.0)
    c2, s2 = np.cos(n2), np.sin(n2)
    for k in range(_BINS):
        a = 2.0 * k * np.pi / _BINS
        w = out[k]
        np.multiply(c2, np.float32(np.cos(a)), out=w)
        if k:
            w += s2 * np.float32(np.sin(a))
        w -= c60
        w *= gain
        np.clip(w, 0.0, 1.0, out=w)
    return out


def evidence_maps(
    sat: NDArray[np.float32],
    normal: NDArray[np.float32],
    dilate: int,
    weights: NDArray[np.float32] | None = None,
) -> NDArray[np.float32]:
    """Chalk evidence split by line direction: (_BINS + 1, H, W).

    Channel k holds evidence for lines whose normal is near k*pi/_BINS; the last
    channel is direction-free (the strip divider search).
    Requiring the right direction keeps pebble clutter from looking like chalk.
    ``weights`` is ``direction_weights(normal)`` when the caller has it.
    """
    if weights is None:
        weights = direction_weights(normal)
    kernel = np.ones((dilate, dilate), np.uint8)
    maps = np.empty((_BINS + 1, *sat.shape), np.float32)
    for k in range(_BINS):
        cv2.dilate(cv2.multiply(weights[k], sat), kernel, dst=maps[k])
    cv2.dilate(sat, kernel, dst=maps[_BINS])
    # a zero frame: sampling clamps off-image points onto it instead of testing
    maps[:, 0, :] = 0.0
    maps[:, -1, :] = 0.0
    maps[:, :, 0] = 0.0
    maps[:, :, -1] = 0.0
    return maps


def _prepared(pts: FloatArray, tangents: FloatArray) -> _Prepared:
    """Homogeneous float32 points (3, P) and tangents (2, P) for _sample_batch."""
    ph = np.concatenate([pts, np.ones((len(pts), 1))], axis=1).T.astype(np.float32)
    return ph, np.ascontiguousarray(tangents.T, np.float32)


_Prepared = tuple[NDArray[np.float32], NDArray[np.float32]]


_CHUNK = 49152  # elements per _sample batch: temporaries stay in the CPU cache (2x)

# +0.5 px folded into every homography: truncating a coordinate then rounds it
_HALF = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])


def _sample(
    maps: NDArray[np.float32], hs: FloatArray, pts: FloatArray, tangents: FloatArray
) -> NDArray[np.float32]:
    """Evidence at pts projected by each homography (K, P), nearest pixel.

    Each point reads the channel matching the projected line's direction
    (from the homography's Jacobian). float32, int32 indices and one flat
    gather per cache-sized batch of hypotheses: this is the search's inner loop.
    """
    return _sample_prepared(maps, hs, _prepared(pts, tangents))


def _sample_prepared(
    maps: NDArray[np.float32], hs: FloatArray, prep: _Prepared
) -> NDArray[np.float32]:
    per = max(1, _CHUNK // max(prep[0].shape[1], 1))
    if len(hs) <= per:
        return _sample_batch(maps, hs, prep)
    return np.concatenate(
        [_sample_batch(maps, hs[s : s + per], prep) for s in range(0, len(hs), per)]
    )


def _sample_batch(
    maps: NDArray[np.float32], hs: FloatArray, prep: _Prepared
) -> NDArray[np.float32]:
    """One batch of ``_sample``: coordinate-major (3, K, P) arrays so every
    elementwise pass runs on contiguous memory (strided views cost ~4x), and
    no bounds test: points off the map are clamped onto its zero frame
    (``evidence_maps``); a point behind the camera (w <= 0) lands far off."""
    _, h, wd = maps.shape
    ph, tan32 = prep
    hs32 = np.ascontiguousarray(np.matmul(_HALF, hs).transpose(1, 0, 2), np.float32)
    k = hs32.shape[1]
    x, y, w = (hs32.reshape(3 * k, 3) @ ph).reshape(3, k, -1)
    dx, dy, dw = (hs32[:, :, :2].reshape(3 * k, 2) @ tan32).reshape(3, k, -1)
    np.maximum(w, np.float32(1e-9), out=w)
    np.reciprocal(w, out=w)
    x *= w
    y *= w
    # image direction of the template tangent (up to a positive factor 1/w)
    tmp = x * dw
    dx -= tmp
    np.multiply(y, dw, out=tmp)
    dy -= tmp
    # channel of the normal (direction + pi/2) rounded, kept positive
    ang = np.arctan2(dy, dx, out=dx)
    ang *= np.float32(_BINS / np.pi)
    ang += np.float32(0.5 + 2.5 * _BINS)
    idx = ang.astype(np.int32)
    idx &= _BINS - 1  # _BINS is a power of two
    idx *= np.int32(h * wd)
    np.clip(x, 0, wd - 1, out=x)
    np.clip(y, 0, h - 1, out=y)
    row = y.astype(np.int32)
    row *= np.int32(wd)
    idx += row
    idx += x.astype(np.int32)
    vals: NDArray[np.float32] = np.take(maps.reshape(-1), idx)
    return vals


@functools.lru_cache(maxsize=64)
def _score_template(step: float, depth: float) -> tuple[_Prepared, int, int]:
    """Template, off-grid and extension points in one prepared set, and the
    sizes of the first two (per-call overhead dominates the small batches of
    the greedy refinement, so they are sampled in one call and built once)."""
    parts = [template_with_tangents(step, depth), _offgrid(step), _extension(step, depth)]
    pts = np.concatenate([p[0] for p in parts], axis=0)
    tans = np.concatenate([p[1] for p in parts], axis=0)
    return _prepared(pts, tans), len(parts[0][0]), len(parts[1][0])


def _scores(maps: NDArray[np.float32], hs: FloatArray, step: float, depth: float) -> FloatArray:
    """Template support minus support half a square away and past the ends."""
    prep, n_on, n_off = _score_template(round(step, 4), round(depth, 3))
    chunk = 2048
    res = np.empty(len(hs))
    for s in range(0, len(hs), chunk):
        v = _sample_prepared(maps, hs[s : s + chunk], prep)
        val = v[:, :n_on].mean(axis=1)
        val -= 0.5 * v[:, n_on : n_on + n_off].mean(axis=1)
        val -= 0.5 * v[:, n_on + n_off :].mean(axis=1)
        res[s : s + chunk] = val
    return res


_MOVES = np.concatenate(
    [
        np.zeros((1, 8)),
        np.repeat(np.eye(8), 2, axis=0) * np.tile([-1.0, 1.0], 8)[:, None],
        np.zeros((2, 8)),
    ]
)


def _square_homographies(quads: FloatArray) -> FloatArray:
    """Unit-square-to-image homographies for (K, 4, 2) quadrilaterals.

    Closed form (Heckbert) for corners (0,0), (1,0), (1,1), (0,1): thousands
    are needed per frame, where a general batched 8x8 solve costs more than
    the rest of the search step. NaN where degenerate.
    """
    x, y = quads[..., 0], quads[..., 1]
    sx = x[:, 0] - x[:, 1] + x[:, 2] - x[:, 3]
    sy = y[:, 0] - y[:, 1] + y[:, 2] - y[:, 3]
    dx1, dx2 = x[:, 1] - x[:, 2], x[:, 3] - x[:, 2]
    dy1, dy2 = y[:, 1] - y[:, 2], y[:, 3] - y[:, 2]
    den = dx1 * dy2 - dx2 * dy1
    bad = np.abs(den) < 1e-12
    den = np.where(bad, 1.0, den)
    g = (sx * dy2 - dx2 * sy) / den
    hh = (dx1 * sy - sx * dy1) / den
    out = np.empty((len(quads), 3, 3))
    out[:, 0, 0] = x[:, 1] - x[:, 0] + g * x[:, 1]
    out[:, 0, 1] = x[:, 3] - x[:, 0] + hh * x[:, 3]
    out[:, 0, 2] = x[:, 0]
    out[:, 1, 0] = y[:, 1] - y[:, 0] + g * y[:, 1]
    out[:, 1, 1] = y[:, 3] - y[:, 0] + hh * y[:, 3]
    out[:, 1, 2] = y[:, 0]
    out[:, 2, 0] = g
    out[:, 2, 1] = hh
    out[:, 2, 2] = 1.0
    out[bad] = np.nan
    return out


_BOARD_SCALE = np.diag([1.0 / 5.0, 1.0 / 2.0, 1.0])


def _board_homographies(quads: FloatArray) -> FloatArray:
    """Board-to-image homographies for (K, 4, 2) SW, SE, NE, NW image corners
    (the greedy refinement solves 19 per round)."""
    out: FloatArray = _square_homographies(quads) * np.diag(_BOARD_SCALE)[None, None, :]
    return out


def _refine(
    sat: NDArray[np.float32],
    starts: list[tuple[FloatArray, float]],
    step0: float,
    rounds: int,
) -> list[tuple[FloatArray, float, float]]:
    """Greedy coordinate search on the 4 corners and the arc depth, for several
    starting fits in lockstep: each round scores every candidate's moves with
    one sampling call per arc depth (call overhead dominates these batches).
    Returns (corners, depth, score) per start."""
    cs = [np.asarray(c, np.float64).copy() for c, _ in starts]
    dep = [float(d) for _, d in starts]
    steps = [step0] * len(starts)
    bests = [-np.inf] * len(starts)
    active = list(range(len(starts)))
    for _ in range(rounds):
        if not active:
            break
        # per candidate: current corners, +-step on each of the 8 coordinates,
        # then the current corners at the two neighbouring arc depths
        cv = np.concatenate(
            [(cs[i].reshape(-1) + steps[i] * _MOVES).reshape(-1, 4, 2) for i in active]
        )
        depths = np.array(
            [
                d
                for i in active
                for d in [dep[i]] * 17
                + [float(np.clip(dep[i] + dd, 0.6, 1.3)) for dd in (-0.05, 0.05)]
            ]
        )
        hs = _board_homographies(cv)
        sc = np.full(len(cv), -np.inf)
        finite = np.all(np.isfinite(hs), axis=(1, 2))
        for dval in np.unique(depths):
            rows = (depths == dval) & finite
            if rows.any():
                sc[rows] = _scores(sat, hs[rows], 0.1, float(dval))
        still = []
        for n, i in enumerate(active):
            sci = sc[19 * n : 19 * n + 19]
            k = int(np.argmax(sci))
            if sci[k] > bests[i] + 1e-6 and k != 0:
                bests[i] = float(sci[k])
                cs[i] = cv[19 * n + k]
                dep[i] = float(depths[19 * n + k])
                still.append(i)
            else:
                bests[i] = max(bests[i], float(sci[0]))
                steps[i] *= 0.5
                if steps[i] >= 0.2:
                    still.append(i)
        active = still
    return list(zip(cs, dep, bests, strict=True))


def _downscale(image_bgr: NDArray[np.uint8], width: int) -> tuple[NDArray[np.uint8], float]:
    """The working copy, ``width`` px wide, and its scale.

    Halvings by pyrDown first, then an area resize of at most 2x: OpenCV's
    area resize by a non-integer factor (1280 -> 480) costs several times the
    whole pyramid, and the pyramid's Gaussian is the anti-aliasing it needs.
    """
    h0, w0 = image_bgr.shape[:2]
    scale = width / float(w0)
    work = image_bgr
    while work.shape[1] >= 2 * width:
        work = np.asarray(cv2.pyrDown(work), np.uint8)
    size = (width, max(8, round(h0 * scale)))
    if (work.shape[1], work.shape[0]) != size:
        work = np.asarray(cv2.resize(work, size, interpolation=cv2.INTER_AREA), np.uint8)
    return work, scale


def _work_evidence(
    image_bgr: NDArray[np.uint8], cfg: LocateConfig, dilate: int
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], float]:
    work, scale = _downscale(image_bgr, cfg.work_width)
    ridge, normal = ridge_map(work, cfg.ridge_sigmas, 0, cfg.edge_suppress)
    sat = np.minimum(ridge / _SAT, 1.0).astype(np.float32)
    return evidence_maps(sat, normal, dilate), ridge, normal, scale


def support(
    image_bgr: NDArray[np.uint8], outline: Outline, cfg: LocateConfig | None = None
) -> float:
    """Chalk support for a known outline in a new frame (cheap re-verification)."""
    cfg = cfg or LocateConfig()
    maps, _, _, scale = _work_evidence(image_bgr, cfg, 3)
    s = np.diag([scale, scale, 1.0])
    h = (s @ outline.homography)[None]
    return float(_scores(maps, h, 0.1, outline.arc_depth)[0])


_OUTER = (  # outer sides in board units: south, north, west, east
    (np.array([0.0, 0.0]), np.array([5.0, 0.0])),
    (np.array([0.0, 2.0]), np.array([5.0, 2.0])),
    (np.array([0.0, 0.0]), np.array([0.0, 2.0])),
    (np.array([5.0, 0.0]), np.array([5.0, 2.0])),
)


def _gauss_derivs(sigma: float, radius: int) -> tuple[FloatArray, FloatArray]:
    u = np.arange(-radius, radius + 1, dtype=np.float64)
    g = np.exp(-0.5 * (u / sigma) ** 2)
    g /= g.sum()
    return -u / sigma**2 * g, (u * u / sigma**4 - 1.0 / sigma**2) * g


def _derivative_bank(sigmas: list[float], kr: int, nu: int) -> NDArray[np.float32]:
    """First and second Gaussian derivative filters per sigma as banded rows:
    (2 len(sigmas) (nu - 2 kr), nu); row block (s, d) times a profile is its
    valid correlation with that filter (one GEMM instead of 36 small filter calls)."""
    n_out = nu - 2 * kr
    bank = np.zeros((len(sigmas), 2, n_out, nu), np.float32)
    rows = np.arange(n_out)[:, None]
    band = rows * nu + rows + np.arange(2 * kr + 1)[None, :]  # flat (row, row + i)
    for si, sigma in enumerate(sigmas):
        for d, k in enumerate(_gauss_derivs(sigma, kr)):
            bank[si, d].reshape(-1)[band] = k[None, :]
    return bank.reshape(-1, nu)


def _profiles(
    image_bgr: NDArray[np.uint8], h: FloatArray, ts: FloatArray, radius: int
) -> tuple[NDArray[np.float32], FloatArray, FloatArray, NDArray[np.bool_]]:
    """Lab profiles across the 4 outer sides at full resolution.

    Returns profiles (4, T, 2R+1, 3) averaged over 5 px along the line, the
    image points and unit normals (4, T, 2) of the profile centres, and which
    profiles lie wholly inside the image.
    """
    hgt, wid = image_bgr.shape[:2]
    a = np.stack([s[0] for s in _OUTER])
    b = np.stack([s[1] for s in _OUTER])
    pts_b = a[:, None, :] + ts[None, :, None] * (b - a)[:, None, :]  # (4, T, 2)
    flat = pts_b.reshape(-1, 2)
    pts = project(h, flat).reshape(pts_b.shape)
    ahead = project(h, (pts_b + 1e-3 * (b - a)[:, None, :]).reshape(-1, 2)).reshape(pts_b.shape)
    tan = ahead - pts
    tan /= np.linalg.norm(tan, axis=2, keepdims=True) + 1e-12
    nrm = np.stack([-tan[..., 1], tan[..., 0]], axis=2)
    u = np.arange(-radius, radius + 1, dtype=np.float64)
    v = np.arange(-2.0, 2.5, 1.0)
    grid = (
        pts[:, :, None, None, :]
        + u[None, None, None, :, None] * nrm[:, :, None, None, :]
        + v[None, None, :, None, None] * tan[:, :, None, None, :]
    )  # (4, T, V, U, 2)
    ends = grid[:, :, :, [0, -1], :]
    inside = np.all(
        (ends[..., 0] >= 0)
        & (ends[..., 0] <= wid - 1)
        & (ends[..., 1] >= 0)
        & (ends[..., 1] <= hgt - 1),
        axis=(2, 3),
    )
    n4, nt, nv, nu = grid.shape[:4]
    mx = grid[..., 0].reshape(-1, nu).astype(np.float32)
    my = grid[..., 1].reshape(-1, nu).astype(np.float32)
    patch = cv2.remap(image_bgr, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] = np.log(lab[..., 0] + 8.0) * 40.0
    prof = lab.reshape(n4, nt, nv, nu, 3).mean(axis=2)
    return prof, pts, nrm, inside


def _fit_side(pts: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray, int] | None:
    """Robust weighted total-least-squares line: (point, unit direction, inliers)."""
    keep = w > 0
    c = d = None
    for _ in range(4):
        if keep.sum() < 5:
            return None
        ww = w[keep]
        p = pts[keep]
        c = (ww[:, None] * p).sum(axis=0) / ww.sum()
        q = p - c
        cov = (ww[:, None, None] * q[:, :, None] * q[:, None, :]).sum(axis=0)
        _, evecs = np.linalg.eigh(cov)
        d = evecs[:, 1]
        res = np.abs((pts - c) @ np.array([-d[1], d[0]]))
        mad = float(np.median(res[keep])) * 1.4826
        new = (w > 0) & (res < max(1.5, 3.0 * mad))
        if np.array_equal(new, keep):
            break
        keep = new
    assert c is not None and d is not None
    return c, d, int(keep.sum())


def _intersect(c1: FloatArray, d1: FloatArray, c2: FloatArray, d2: FloatArray) -> FloatArray | None:
    m = np.array([[d1[0], -d2[0]], [d1[1], -d2[1]]])
    if abs(np.linalg.det(m)) < 1e-6:
        return None
    t = np.linalg.solve(m, c2 - c1)
    return np.asarray(c1 + t[0] * d1)


def refine_sides(
    image_bgr: NDArray[np.uint8], corners: FloatArray, passes: tuple[float, ...] = (0.15, 0.06)
) -> FloatArray:
    """Full-resolution corners from the chalk ridge across each outer side.

    The drawn board is an irregular quadrilateral with uneven dividers, so a
    rigid template fit is biased; the corners are where the four outer chalk
    lines meet. Each side gets perpendicular profiles; the ridge peak in the
    channel and polarity where the chalk stands out most gives one point per
    profile; a robust line through them moves that side. A side without enough
    consistent peaks (hand, shadow, rubbed out) keeps its previous position.
    """
    c = np.asarray(corners, dtype=np.float64).copy()
    ts = np.linspace(0.06, 0.94, 36)  # corners excluded: the other side crosses there
    for frac in passes:
        h = homography_from_corners(c)
        unit = outline_from_corners(c).px_per_unit()
        radius = int(np.clip(round(frac * unit), 4, 60))
        sigmas = [float(np.clip(f * unit, 1.0, 8.0)) for f in (0.015, 0.03, 0.05)]
        near = int(np.clip(round(0.06 * unit), 2, radius))
        kr = int(np.ceil(3 * max(sigmas)))
        prof, pts, nrm, inside = _profiles(image_bgr, h, ts, radius + kr)
        n4, nt, nu, _ = prof.shape
        flat = prof.transpose(3, 0, 1, 2).reshape(3 * n4 * nt, nu)
        # every profile x every derivative filter in one product with a banded
        # matrix ("valid" correlation: the profiles are kr longer each side)
        filt = _derivative_bank(sigmas, kr, nu) @ flat.T  # (2S * n_out, 3 N)
        filt = filt.reshape(len(sigmas), 2, nu - 2 * kr, 3, n4 * nt)
        best: tuple[float, NDArray[np.float64]] | None = None
        noise_lum = 1.0
        for si, sigma in enumerate(sigmas):
            for ch in range(3):
                s1 = np.abs(filt[si, 0, :, ch].T) * sigma
                s2 = filt[si, 1, :, ch].T * (sigma * sigma)
                noise = max(float(np.median(np.abs(s2))), 1e-3)
                if ch == 0:
                    noise_lum = noise
                else:  # chroma is quantised flat on grey ground: not less than luma noise
                    noise = max(noise, noise_lum)
                for pol in (1.0, -1.0):
                    r = (np.maximum(-pol * s2 - s1, 0.0) / noise).astype(np.float64)
                    # the chalk runs along every profile near the prior line; a
                    # crack or joint only crosses a few, or runs further off
                    score = float(np.median(r[:, radius - near : radius + near + 1].max(axis=1)))
                    if best is None or score > best[0]:
                        best = (score, r)
        assert best is not None
        resp = best[1].reshape(n4, nt, -1)
        nu = resp.shape[2]
        uu = np.arange(nu) - radius
        prior = np.exp(-0.5 * (uu / (0.7 * radius)) ** 2)
        k = (resp * prior).argmax(axis=2)
        peak = np.take_along_axis(resp, k[..., None], axis=2)[..., 0]
        kk = np.clip(k, 1, nu - 2)
        ym = np.take_along_axis(resp, (kk - 1)[..., None], axis=2)[..., 0]
        y0 = np.take_along_axis(resp, kk[..., None], axis=2)[..., 0]
        yp = np.take_along_axis(resp, (kk + 1)[..., None], axis=2)[..., 0]
        den = ym - 2 * y0 + yp
        sub = np.where(
            (k == kk) & (den < -1e-9), 0.5 * (ym - yp) / np.where(den < -1e-9, den, -1.0), 0.0
        )
        off = k + sub - radius
        found = pts + off[..., None] * nrm
        lines = []
        for side in range(4):
            w = np.where(inside[side], peak[side], 0.0)
            med = float(np.median(w[w > 0])) if np.any(w > 0) else 0.0
            w = np.where(w > max(2.0, 0.3 * med), w, 0.0)
            fit = _fit_side(found[side], w)
            a, b = project(h, np.stack(_OUTER[side]))
            d0 = (b - a) / np.linalg.norm(b - a)
            if (
                fit is None
                or fit[2] < 0.3 * nt
                or abs(float(fit[1] @ d0)) < np.cos(np.deg2rad(4.0))
            ):
                lines.append((a, d0))
            else:
                lines.append((fit[0], fit[1]))
        (cs, ds), (cn, dn), (cw, dw), (ce, de) = lines
        new = [
            _intersect(cs, ds, cw, dw),
            _intersect(cs, ds, ce, de),
            _intersect(cn, dn, ce, de),
            _intersect(cn, dn, cw, dw),
        ]
        if any(p is None for p in new):
            break
        c = np.array(new)
    return c


def _outline_support(maps: NDArray[np.float32], corners: FloatArray) -> float:
    """Mean direction-matched chalk evidence along the 4 outer sides."""
    a = corners
    b = np.roll(corners, -1, axis=0)
    return float(_side_support(maps, a, b).mean())


def _fit_polarity(
    ridge: NDArray[np.float32],
    normal: NDArray[np.float32],
    cfg: LocateConfig,
    rng: np.random.Generator,
    image_bgr: NDArray[np.uint8],
    scale: float,
) -> tuple[float, FloatArray, float] | None:
    """Best refined fit (score, work-scale corners, arc depth) on one ridge map.

    The best few hypotheses get their sides refined at full resolution and
    the arc depth chosen; the template score then picks among them.
    """
    sat = np.minimum(ridge / _SAT, 1.0).astype(np.float32)
    weights = direction_weights(normal)
    sat_coarse = evidence_maps(sat, normal, 5, weights)
    fams = hough_families(ridge, normal, cfg)
    hs = _hypotheses(fams, sat_coarse, cfg)
    if cfg.max_strips > 0:
        hs = np.concatenate([hs, _strip_hypotheses(fams, sat_coarse, cfg)], axis=0)
    if len(hs) == 0:
        return None
    if len(hs) > cfg.prescreen_keep:
        # cheap first pass on a sparse template keeps the promising few
        sparse = template_with_tangents(cfg.prescreen_step, cfg.arc_depth)
        pre = _sample(sat_coarse, hs, sparse[0], sparse[1]).mean(axis=1)
        hs = hs[np.argsort(-pre)[: cfg.prescreen_keep]]
    sc = _scores(sat_coarse, hs, 0.25, cfg.arc_depth)
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
    sat_fine = evidence_maps(cv2.GaussianBlur(sat, (0, 0), 1.0), normal, 3, weights)
    best: tuple[float, FloatArray, float] | None = None
    # a few greedy rounds for every candidate, then more for the leader: the
    # template score after refinement ranks candidates and is the quality
    starts = [(c, cfg.arc_depth) for c in picked]
    for rc, depth, s in _refine(sat_fine, starts, 2.0, cfg.quick_rounds):
        if best is None or s > best[0]:
            best = (s, rc, depth)
    if best is not None and cfg.quick_rounds < cfg.refine_rounds:
        rc, depth, s = _refine(sat_fine, [(best[1], best[2])], 1.0, cfg.refine_rounds)[0]
        best = (s, rc, depth) if s >= best[0] else best
    if best is not None and cfg.side_passes:
        quality, c, depth = best
        sides = refine_sides(image_bgr, c / scale, cfg.side_passes) * scale
        # a side snapped to a joint or shadow loses chalk support along the
        # outline: keep the template fit then (the whole-template score would
        # also penalise the true, unevenly divided board)
        if _outline_support(sat_fine, sides) >= _outline_support(sat_fine, c) - cfg.side_tolerance:
            best = (quality, sides, depth)
    return best


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
    work, scale = _downscale(image_bgr, cfg.work_width)
    best: tuple[float, FloatArray, float] | None = None
    pols = tuple(int(p) for p in cfg.polarities)
    maps = ridge_maps(work, cfg.ridge_sigmas, pols, cfg.edge_suppress)
    for polarity in pols:
        found = _fit_polarity(*maps[polarity], cfg, rng, image_bgr, scale)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
        if best is not None and best[0] >= cfg.accept_quality:
            break  # good enough: skip the other polarities (latency)
    if best is None:
        raise BoardNotFoundError("no chalk lines in two directions")
    assert best is not None
    quality, corners_w, depth = best
    corners = canonical_corners(corners_w / scale)
    if quality < cfg.min_quality:
        raise BoardNotFoundError(f"chalk template fit too weak (quality {quality:.2f})")
    return outline_from_corners(corners, depth, quality)

"""Stage 8, sides: the four outer sides re-fitted to the chalk at full resolution.

Drawn boards are irregular quadrilaterals with uneven dividers, so the rigid
template fit is biased by a few pixels; the corners are where the four outer
chalk lines meet.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.geometry import FloatArray, homography_from_corners, project
from vision.locate.evidence import BINS
from vision.locate.outline import outline_from_corners


def _side_support(maps: NDArray[np.float32], a: FloatArray, b: FloatArray) -> FloatArray:
    """Mean direction-matched evidence along image segments a->b (Q, 2 each)."""
    t = np.linspace(0.05, 0.95, 12)
    pts = a[:, None, :] + (b - a)[:, None, :] * t[None, :, None]
    d = b - a
    normal_ang = np.mod(np.arctan2(d[:, 1], d[:, 0]) + np.pi / 2, np.pi)
    chan = (np.rint(normal_ang / (np.pi / BINS)).astype(np.intp) % BINS)[:, None]
    _, h, w = maps.shape
    xr = np.rint(pts[..., 0])
    yr = np.rint(pts[..., 1])
    inside = (xr >= 0) & (xr < w) & (yr >= 0) & (yr < h)
    xi = np.clip(xr, 0, w - 1).astype(np.intp)
    yi = np.clip(yr, 0, h - 1).astype(np.intp)
    vals = np.where(inside, maps[np.broadcast_to(chan, xi.shape), yi, xi], 0.0)
    return np.asarray(vals.mean(axis=1), dtype=np.float64)


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
        # every sigma x channel x polarity at once: (S, 3, N, n_out) each
        sig = np.asarray(sigmas, np.float64)[:, None, None, None]
        s1 = np.abs(filt[:, 0].transpose(0, 2, 3, 1)) * sig.astype(np.float32)
        s2 = filt[:, 1].transpose(0, 2, 3, 1) * (sig * sig).astype(np.float32)
        noise = np.maximum(np.median(np.abs(s2).reshape(len(sigmas), 3, -1), axis=2), 1e-3)
        # chroma is quantised flat on grey ground: its noise is not less than luma's
        noise[:, 1:] = np.maximum(noise[:, 1:], noise[:, :1])
        noise32 = noise.astype(np.float32)[:, :, None, None, None]
        pols = np.array([1.0, -1.0], np.float32)[None, None, :, None, None]
        r = np.maximum(-pols * s2[:, :, None] - s1[:, :, None], 0.0) / noise32
        # the chalk runs along every profile near the prior line; a crack or joint only
        # crosses a few, or runs further off: the strongest such response wins
        band = r[..., radius - near : radius + near + 1].max(axis=-1)
        score = np.median(band.astype(np.float64), axis=-1).reshape(-1)
        pick = np.unravel_index(int(np.argmax(score)), r.shape[:3])
        resp = r[pick].astype(np.float64).reshape(n4, nt, -1)
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


def outline_support(maps: NDArray[np.float32], corners: FloatArray) -> float:
    """Mean direction-matched chalk evidence along the 4 outer sides."""
    a = corners
    b = np.roll(corners, -1, axis=0)
    return float(_side_support(maps, a, b).mean())

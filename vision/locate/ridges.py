"""Stage 1, ridges: a downscaled working copy and its polarity-free chalk ridge map.

Chalk may be lighter, darker or just differently coloured than the ground, so
line-likeness is measured on log-luminance (shadow-invariant) and on both
chroma channels, with step edges suppressed.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray


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
        below = cv2.compare(tr, 0.0, cv2.CMP_LT)  # type: ignore[call-overload]
        a += below.astype(np.float32) * np.float32(np.pi / 2 / 255)
        out[p] = (best[p], a)
    return out


def hessian_ridge(
    chan: NDArray[np.float32], sigmas: tuple[float, ...], polarities: tuple[int, ...]
) -> dict[int, tuple[NDArray[np.float32], NDArray[np.float32]]]:
    """Scale-normalised ridge strength and normal angle in [0, pi) of one channel,
    per polarity (no noise normalisation: for maps that are not images)."""
    out = {}
    for p, (r, a) in _hessian_ridge(chan, sigmas, polarities).items():
        wrap = cv2.compare(a, np.pi, cv2.CMP_GE)  # type: ignore[call-overload]
        out[p] = (r, a - wrap.astype(np.float32) * np.float32(np.pi / 255))
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
        wrap = cv2.compare(ang, np.pi, cv2.CMP_GE)  # type: ignore[call-overload]
        ang = ang - wrap.astype(np.float32) * np.float32(np.pi / 255)
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


def downscale(image_bgr: NDArray[np.uint8], width: int) -> tuple[NDArray[np.uint8], float]:
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

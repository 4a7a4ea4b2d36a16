"""Stage 2, lines: Hough lines of the dominant ridge directions, strongest first."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import LocateConfig
from vision.geometry import FloatArray
from vision.locate.ridges import thin_ridges


def angle_diff(a: NDArray[np.float64], b: float) -> NDArray[np.float64]:
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
        work[angle_diff(centers, centers[p]) < np.deg2rad(15.0)] = -1.0
    votes = max(10, int(cfg.hough_threshold_frac * ridge.shape[1]))
    fams: list[FloatArray] = []
    half = np.deg2rad(16.0)
    ys, xs = np.nonzero(mask)
    vals64 = vals.astype(np.float64)
    for p in peaks:
        c = float(centers[p])
        keep = angle_diff(vals64, c) < half
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
                cols = got.reshape(-1, 3)[:, :2] if got.shape[-1] == 3 else got.reshape(-1, 2)
                found.append(np.asarray(cols, dtype=np.float64))
        if not found:
            fams.append(np.zeros((0, 2)))
            continue
        raw = np.concatenate(found, axis=0).astype(np.float64)
        fams.append(_nms_lines(raw[: cfg.max_lines * 30], cfg.max_lines))
    return fams

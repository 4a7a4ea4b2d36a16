"""Stage 3, evidence: chalk evidence maps split by line direction.

Every later stage samples these maps: a point counts as chalk only where a
ridge runs in the direction the hypothesis expects there, which keeps pebble
clutter from looking like chalk.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

#: Ridge strength (noise units) that counts as full chalk evidence.
SAT = 8.0
#: Direction channels of the evidence maps (a power of two: sampling masks with it).
BINS = 8


def saturated(ridge: NDArray[np.float32]) -> NDArray[np.float32]:
    """Ridge strength as 0..1 chalk evidence (``SAT`` noise units and more are full)."""
    return np.asarray(np.minimum(ridge / SAT, 1.0), dtype=np.float32)


def direction_weights(normal: NDArray[np.float32]) -> NDArray[np.float32]:
    """How well each pixel's line normal matches each of the BINS channel
    directions, 0..1 (1 within 0, 0 beyond 30 degrees): (BINS, H, W).

    Depends only on the ridge angles, so the coarse and fine evidence maps of
    one frame share it.
    """
    out = np.empty((BINS, *normal.shape), np.float32)
    c60 = np.float32(np.cos(np.deg2rad(60.0)))
    gain = np.float32(1.0) / (np.float32(1.0) - c60)
    # cos(2 (normal - a)) from one cos and one sin of 2 normal (addition theorem)
    n2 = normal * np.float32(2.0)
    c2, s2 = np.cos(n2), np.sin(n2)
    for k in range(BINS):
        a = 2.0 * k * np.pi / BINS
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
    """Chalk evidence split by line direction: (BINS + 1, H, W).

    Channel k holds evidence for lines whose normal is near k*pi/BINS; the last
    channel is direction-free (the strip divider search).
    Requiring the right direction keeps pebble clutter from looking like chalk.
    ``weights`` is ``direction_weights(normal)`` when the caller has it.
    """
    if weights is None:
        weights = direction_weights(normal)
    kernel = np.ones((dilate, dilate), np.uint8)
    maps = np.empty((BINS + 1, *sat.shape), np.float32)
    for k in range(BINS):
        cv2.dilate(cv2.multiply(weights[k], sat), kernel, dst=maps[k])
    cv2.dilate(sat, kernel, dst=maps[BINS])
    # a zero frame: sampling clamps off-image points onto it instead of testing
    maps[:, 0, :] = 0.0
    maps[:, -1, :] = 0.0
    maps[:, :, 0] = 0.0
    maps[:, :, -1] = 0.0
    return maps

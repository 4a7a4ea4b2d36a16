"""Several frames of one still scene from a fixed camera: their noise, whether the scene
held still between them, and their mean.

A tally's spread lies still for as long as the players stand back, and the camera sees
it many times. In low light the sensor's noise is what the piece detector misses pieces
in; the mean of K frames has sqrt(K) times less of it. A single frame cannot tell its
noise from the ground's grain (JPEG and the camera's own smoothing blur the two alike),
but two frames of a still scene can: whatever differs between them is noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

#: Temporal noise (grey levels, one frame) from which a tally reads the mean of frames:
#: the generator's low light measures 1.9-8.2 grey levels between two frames after its
#: JPEG (24 of 29 scenes at 3 or more), any other light 0.2-3.9 (6 of 231)
#: (training/README, "The mean of frames in the live tally").
NOISY: Final = 3.0
#: frames a noisy scene's mean is made of (8: the noise of one frame over 2.8)
FRAMES: Final = 8
#: the side (pixels) of the blocks whose mean grey values ``moved`` compares
BLOCK: Final = 8
#: a block whose mean changed by more grey levels than this, the frames' common drift
#: of light aside, changed in the scene (8x8 blocks of noise 14: 2.5 levels)
BLOCK_LEVEL: Final = 12.0
#: more changed blocks than this and the scene moved (a piece nudged, an arm)
BLOCK_COUNT: Final = 2


def _grey(image: NDArray[np.uint8]) -> NDArray[np.float32]:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    return np.asarray(grey, np.float32)


def temporal_noise(a: NDArray[np.uint8], b: NDArray[np.uint8]) -> float:
    """The noise of one frame (grey levels, a Gaussian's sigma) from two frames of a
    still scene: the mean absolute difference of their grey values, scaled (for two
    independent draws of sigma, |a - b| has mean 2 sigma / sqrt(pi))."""
    if a.shape != b.shape:
        raise ValueError(f"frames differ in shape: {a.shape} and {b.shape}")
    diff = np.abs(_grey(a) - _grey(b))
    return float(diff.mean()) * math.sqrt(math.pi) / 2.0


def block_means(image: NDArray[np.uint8]) -> NDArray[np.float32]:
    """The mean grey of each ``BLOCK`` x ``BLOCK`` block of a frame of a block or more
    (``moved``'s view of it, kept by a caller that compares many frames with one)."""
    grey = _grey(image)
    bh, bw = grey.shape[0] // BLOCK, grey.shape[1] // BLOCK
    small = cv2.resize(grey[: bh * BLOCK, : bw * BLOCK], (bw, bh), interpolation=cv2.INTER_AREA)
    return np.asarray(small, np.float32)


def blocks_moved(a: NDArray[np.float32], b: NDArray[np.float32]) -> bool:
    """``moved`` on two frames' ``block_means``."""
    if a.shape != b.shape:
        return True
    diff = a - b
    diff -= float(np.median(diff))
    return int(np.count_nonzero(np.abs(diff) > BLOCK_LEVEL)) > BLOCK_COUNT


def moved(a: NDArray[np.uint8], b: NDArray[np.uint8]) -> bool:
    """Whether the scene changed between two frames of a fixed camera: more than
    ``BLOCK_COUNT`` blocks of ``BLOCK`` pixels whose mean grey changed by more than
    ``BLOCK_LEVEL``, once the light's drift over the whole frame is taken out. A frame
    of another shape is another scene."""
    if a.shape != b.shape:
        return True
    if min(a.shape[:2]) < BLOCK:
        return bool(np.any(a != b))
    return blocks_moved(block_means(a), block_means(b))


def mean_frame(frames: Sequence[NDArray[np.uint8]]) -> NDArray[np.uint8]:
    """The per-pixel mean of ``frames`` (one shape), rounded to 8 bits."""
    if not frames:
        raise ValueError("no frames to average")
    total = np.zeros(frames[0].shape, np.uint32)
    for frame in frames:
        if frame.shape != total.shape:
            raise ValueError(f"frames differ in shape: {frames[0].shape} and {frame.shape}")
        total += frame
    return mean_of(total, len(frames))


def mean_of(total: NDArray[np.unsignedinteger], count: int) -> NDArray[np.uint8]:
    """The mean of ``count`` 8-bit frames whose per-pixel sum is ``total``, rounded (half
    up). A running sum keeps one array however many frames it holds: eight frames of a
    12-megapixel camera summed in 16 bits take 72 MB, kept whole 290 MB."""
    if count < 1:
        raise ValueError(f"a mean of {count} frames")
    wide = total.astype(np.uint32)
    return np.asarray((2 * wide + count) // (2 * count), np.uint8)


__all__ = [
    "BLOCK",
    "BLOCK_COUNT",
    "BLOCK_LEVEL",
    "FRAMES",
    "NOISY",
    "block_means",
    "blocks_moved",
    "mean_frame",
    "mean_of",
    "moved",
    "temporal_noise",
]

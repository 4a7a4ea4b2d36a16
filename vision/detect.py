"""Learned pebble-centre density on the rectified board (OpenCV DNN at run time).

A small fully convolutional network (trained offline by ``bench/train_counter.py``
on path-traced renders) maps the board, rectified so one square side is ``PX``
pixels, to two density maps at 1/``STRIDE`` resolution: small-pebble centres and
big-stone centres, each piece a unit-mass blob at its centre on the ground.
Summing a map over a region counts the pieces whose centre lies in it, which is
exactly the referee's rule, and the net has learnt how much a pile hides. Only
numpy and OpenCV run here: the model is an ONNX file read by ``cv2.dnn``.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import NUM_SQUARES
from vision.config import CountConfig
from vision.errors import ConfigError
from vision.geometry import FloatArray, region_polygons_board

PX = 80  # rectified pixels per square side: a 17-30 mm pebble is ~8-15 px
STRIDE = 4  # output cell = 4x4 canvas pixels
SIGMA_SMALL = 1.0  # target blob spread, output cells
SIGMA_BIG = 2.0
NOISE_FLOOR = 0.01  # density per cell below which a cell counts as empty
PEAK_MIN = 0.05  # a pebble's density peak is ~0.16 per cell; noise stays below this
PEAK_MAX_COUNT = 3.5  # below this mass a square is counted by its peaks
OUT_SCALE = 10.0  # the net is trained on density x this (kept O(1) for the loss)
X0, X1, Y0, Y1 = -1.35, 6.35, -0.3, 2.3  # canvas extent, board units
MODEL_PATH: Final = CountConfig().model  # the shipped network; ``CountConfig.model`` picks one

_lock = threading.Lock()  # one for every cached net: cv2.dnn nets are not re-entrant


def canvas(px: int = PX) -> tuple[int, int, FloatArray]:
    """Width, height and board->canvas affine map of the rectified canvas."""
    w = round((X1 - X0) * px)
    h = round((Y1 - Y0) * px)
    # canvas y grows downwards, board y grows north
    a = np.array([[px, 0.0, -X0 * px], [0.0, -px, Y1 * px], [0.0, 0.0, 1.0]])
    return w, h, a


def prepare(rect_bgr: NDArray[np.uint8]) -> NDArray[np.float32]:
    """Network input: per-channel mean removed, scaled by the image's spread.

    Normalising per image takes out exposure and white balance, which vary far
    more between scenes than the pebble-to-ground contrast the net relies on.
    """
    mean, std = cv2.meanStdDev(rect_bgr)
    # spread of the mean-removed image over all channels = rms of per-channel std
    scale = 1.0 / (float(np.sqrt(np.mean(std**2))) + 8.0)
    blob = cv2.dnn.blobFromImage(rect_bgr, scale, mean=tuple(float(m) for m in mean.ravel()))
    return np.asarray(blob, dtype=np.float32)


def region_cells(
    depth: float, polygons: list[FloatArray] | None = None, px: int = PX
) -> NDArray[np.int32]:
    """Region index (0..11, -1 off the board) of every output cell's centre."""
    if polygons is None:
        return _template_cells(round(depth, 3), px)
    return _rasterise(polygons, px)


@functools.lru_cache(maxsize=8)
def _template_cells(depth: float, px: int) -> NDArray[np.int32]:
    lab = _rasterise(region_polygons_board(depth), px)
    lab.setflags(write=False)
    return lab


def _rasterise(polys: list[FloatArray], px: int) -> NDArray[np.int32]:
    w, h, a = canvas(px)
    lab = np.full((h // STRIDE, w // STRIDE), -1, np.int32)
    shift = 4  # fillPoly sub-pixel bits
    for i, poly in enumerate(polys):
        p = np.concatenate([poly, np.ones((len(poly), 1))], axis=1) @ a.T
        cells = p[:, :2] / STRIDE
        cv2.fillPoly(lab, [np.rint(cells * (1 << shift)).astype(np.int32)], i, shift=shift)
    return lab


def region_sums(
    density: NDArray[np.float32], labels: NDArray[np.int32]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Small-pebble and big-stone mass in each of the 12 regions."""
    inside = labels >= 0
    lab = labels[inside]
    small = np.bincount(lab, density[0][inside], minlength=NUM_SQUARES)
    big = np.bincount(lab, density[1][inside], minlength=NUM_SQUARES)
    return small.astype(np.float64), big.astype(np.float64)


@functools.lru_cache(maxsize=16)  # keyed by path: cross-validation runs cycle through 8 nets
def _load(path: str) -> cv2.dnn.Net:
    if not Path(path).is_file():
        raise ConfigError(f"vision config: model file {path} does not exist")
    return cv2.dnn.readNetFromONNX(path)


def forward(blob: NDArray[np.float32], path: str) -> NDArray[np.float32]:
    """Output of the ONNX network at ``path`` (read once, then cached) for one input blob."""
    net = _load(path)
    with _lock:  # a cv2.dnn.Net is not re-entrant
        net.setInput(blob)
        out = net.forward()
    return np.asarray(out, dtype=np.float32)


def density(rect_bgr: NDArray[np.uint8], model: str = MODEL_PATH) -> NDArray[np.float32]:
    """The two density maps (2, H/STRIDE, W/STRIDE) of a rectified board, by ``model``."""
    return np.asarray(forward(prepare(rect_bgr), model)[0], dtype=np.float32)


def region_counts(
    density: NDArray[np.float32],
    labels: NDArray[np.int32],
    exclude: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Region estimates: density mass for piles, density peaks for a few pebbles.

    Cells below ``NOISE_FLOOR`` are the network's background noise (summed over
    a square they add a spurious fraction). Where the mass says fewer than
    ``PEAK_MAX_COUNT`` pebbles, separate pebbles are better counted as local
    maxima above ``PEAK_MIN`` than by a mass that a blurred pebble spreads
    over a line. The three constants were chosen on cross-validated
    predictions of the training renders, never on the held-out sequences.
    Peaks in ``exclude`` (under a big stone, where no pebble centre can be)
    are not counted; a pile's mass there is kept, since pebbles heaped against
    the stone spread their mass over it.
    """
    small, big = region_sums(np.where(density > NOISE_FLOOR, density, 0.0), labels)
    d = np.ascontiguousarray(density[0])
    peak = (d >= cv2.dilate(d, np.ones((3, 3), np.uint8))) & (d > PEAK_MIN) & (labels >= 0)
    if exclude is not None:
        peak &= ~exclude
    peaks = np.bincount(labels[peak], minlength=NUM_SQUARES).astype(np.float64)
    return np.where(small < PEAK_MAX_COUNT, peaks, small), big

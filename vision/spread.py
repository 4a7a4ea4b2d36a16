"""Piece detection for tally spreads: one peak per piece, on a finer canvas than the counter.

A tally spread lies in one layer, so every piece shows and can be counted
one by one, which a density sum (``vision.count``, made for piles) cannot do
exactly: pieces that touch share one blob of density, and a faint piece
spreads its mass below the noise floor. Here a small network, trained offline
by ``bench/train_spread.py`` on generated spreads only, maps the board
rectified at ``PX`` pixels per square (a piece is 6-20 px, twice the
counter's scale) to a heatmap at 1/``STRIDE`` resolution that peaks at 1 on
each piece's centre and stays near 0 elsewhere, big stones included. The
peaks, each with its height, are the evidence the tally's maths turns into a
count distribution per square. Only numpy and OpenCV run here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import NUM_SQUARES
from vision import detect
from vision.config import CountConfig
from vision.geometry import FloatArray, region_polygons_board

PX = 96  # canvas pixels per square side
STRIDE = 2  # the shipped net's heatmap cell: 2x2 canvas pixels (``stride_of`` reads any net's)
X0, X1, Y0, Y1 = -1.25, 6.25, -0.25, 2.25  # canvas extent in board units (arcs reach 1.05)
#: the shipped network; ``CountConfig.spread_model`` picks another
MODEL: Final = CountConfig().spread_model
#: the lowest peak kept as a candidate piece: the tally's maths weighs every candidate
#: by how often a peak of its height was a piece on the fitting scenes
CANDIDATE_MIN = 0.1


def canvas() -> tuple[int, int, FloatArray]:
    """Width, height and board->canvas affine map of the spread canvas."""
    w, h = round((X1 - X0) * PX), round((Y1 - Y0) * PX)
    a = np.array([[PX, 0.0, -X0 * PX], [0.0, -PX, Y1 * PX], [0.0, 0.0, 1.0]])
    return w, h, a


def stride_of(shape: tuple[int, ...]) -> int:
    """Canvas pixels per heatmap cell, from a heatmap's shape: a detector's stride is
    in its output, so another model (``CountConfig.spread_model``) needs no setting."""
    w, _, _ = canvas()
    return max(1, round(w / shape[-1]))


def rectify(image_bgr: NDArray[np.uint8], homography: FloatArray) -> NDArray[np.uint8]:
    """Warp the board (``homography``: board units -> image px) to the spread canvas."""
    w, h, a = canvas()
    m = a @ np.linalg.inv(homography)
    return np.asarray(
        cv2.warpPerspective(
            image_bgr, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
        ),
        dtype=np.uint8,
    )


def heatmaps(rect_bgr: NDArray[np.uint8], model: str = MODEL) -> NDArray[np.float32]:
    """The heatmaps (small-piece centres, big-stone centres; each the canvas over the
    net's stride, values 0..1) of a rectified spread, averaged with those of its mirror images: the
    net saw mirrored boards in training, and the average of the four views steadies
    the peaks of faint and touching pieces for four forwards' time (~25 ms each)."""
    views = []
    for flip in (None, 1, 0, -1):
        img = rect_bgr if flip is None else np.asarray(cv2.flip(rect_bgr, flip), np.uint8)
        out = np.asarray(detect.forward(detect.prepare(img), model)[0], dtype=np.float32)
        views.append(out if flip is None else np.stack([cv2.flip(c, flip) for c in out]))
    return np.asarray(np.mean(views, axis=0), dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Peak:
    """One candidate piece: where (board units), how sure the net is, which square."""

    x: float
    y: float
    score: float
    square: int  # ring index, -1 off the board


def peaks(heat: NDArray[np.float32], depth: float, floor: float = CANDIDATE_MIN) -> list[Peak]:
    """Local maxima of ``heat`` above ``floor`` (3x3 neighbourhood, ties resolved by
    keeping the first in raster order), with sub-cell centres and their squares."""
    h, w = heat.shape
    stride = stride_of(heat.shape)
    dil = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero((heat >= dil) & (heat > floor))
    labels = region_cells(round(depth, 3), (h, w))
    taken = np.zeros(heat.shape, bool)
    out: list[Peak] = []
    pad = np.pad(heat, 1)
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        if taken[max(y - 1, 0) : y + 2, max(x - 1, 0) : x + 2].any():
            continue  # a plateau: one peak only
        taken[y, x] = True
        win = pad[y : y + 3, x : x + 3].astype(np.float64)
        wsum = float(win.sum()) or 1.0
        dy = float((win.sum(axis=1) * (-1, 0, 1)).sum()) / wsum
        dx = float((win.sum(axis=0) * (-1, 0, 1)).sum()) / wsum
        cx, cy = (x + 0.5 + dx) * stride, (y + 0.5 + dy) * stride
        out.append(Peak(X0 + cx / PX, Y1 - cy / PX, float(heat[y, x]), int(labels[y, x])))
    return out


@functools.lru_cache(maxsize=8)
def region_cells(depth: float, shape: tuple[int, int]) -> NDArray[np.int32]:
    """Ring index (-1 off the board) of every heatmap cell's centre."""
    _, _, a = canvas()
    lab = np.full(shape, -1, np.int32)
    for i, poly in enumerate(region_polygons_board(depth)):
        p = (np.concatenate([poly, np.ones((len(poly), 1))], axis=1) @ a.T)[:, :2]
        cells = p / stride_of(shape) - 0.5
        cv2.fillPoly(lab, [np.rint(cells * 16).astype(np.int32)], i, shift=4)
    lab.setflags(write=False)
    return lab


def big_stones(heat: NDArray[np.float32], depth: float) -> tuple[float, float]:
    """The highest big-stone peak in the west and in the east quan square."""
    labels = region_cells(round(depth, 3), heat.shape)
    west, east = heat[labels == 0], heat[labels == 6]
    return float(west.max(initial=0.0)), float(east.max(initial=0.0))


def per_square(found: list[Peak]) -> tuple[tuple[float, ...], ...]:
    """The candidates' scores per ring square, highest first."""
    out: list[list[float]] = [[] for _ in range(NUM_SQUARES)]
    for p in found:
        if p.square >= 0:
            out[p.square].append(p.score)
    return tuple(tuple(sorted(s, reverse=True)) for s in out)

"""Learned count class of each citizen square and each mandarin (OpenCV DNN at run time).

The density counter (``vision.detect``) sums a pebble-centre map over a square:
right for a few separate pebbles, but its mass drifts with the ground (a tiled
or gravel floor leaves a fraction of a pebble in every empty square) and a pile
that hides half its pieces reads short. A second small network, trained
offline by ``bench/train_squares.py`` on the Blender renders, looks at one
square at a time (cut with a quarter square of margin, so a piece on the line
is judged with its neighbours) and returns a probability for each count 0-19
and for 20 or more. It learnt what an empty square of any ground looks like
and how many pieces a pile of a given look holds, so it is sharper on the two
things the referee asks most: "is this square empty" and "how many in this
small pile". A sibling network reads the mandarins' small pieces the same way
(``crop_mandarin``), and a third tells from the same crops whether the big stone
is there (``big_probabilities``). The two count opinions are multiplied
(``combine``): each alone is worse on grounds neither saw. Only numpy and
OpenCV run here.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import CITIZENS
from vision import detect
from vision.geometry import COLUMNS

PX: Final = 64  # canvas px per square side the crops are cut from (``vision.count.rectify``)
SIZE: Final = 72  # crop side fed to the network, px
MARGIN: Final = 0.25  # square sides of ground kept around the square on every side
CLASSES: Final = 21  # counts 0..19, then "20 or more"
MANDARIN_SIZE: Final = (72, 120)  # mandarin crop (width, height), px: 1.5 x 2.5 square sides

#: board-unit origin (west, south corner) of each citizen square
_ORIGIN: Final = {
    sq: (float(col), row)
    for col, pair in enumerate(COLUMNS)
    for sq, row in zip(pair, (0.0, 1.0), strict=True)
}


def _cut(
    canvas: NDArray[np.uint8],
    centre: tuple[float, float],
    size: tuple[int, int],
    span: float,
    angle: float,
    scale: float,
) -> NDArray[np.uint8]:
    """A (width, height) ``size`` window round a board point; its width spans ``span`` sides."""
    cx, cy = (centre[0] - detect.X0) * PX, (detect.Y1 - centre[1]) * PX
    m = cv2.getRotationMatrix2D((cx, cy), angle, size[0] / (span * PX * scale))
    m[0, 2] += size[0] / 2 - cx
    m[1, 2] += size[1] / 2 - cy
    out = cv2.warpAffine(canvas, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(out, dtype=np.uint8)


def crop(
    canvas: NDArray[np.uint8],
    square: int,
    *,
    angle: float = 0.0,
    scale: float = 1.0,
    shift: tuple[float, float] = (0.0, 0.0),
) -> NDArray[np.uint8]:
    """The ``SIZE`` px crop of one citizen square from a ``PX`` canvas.

    ``angle`` (degrees), ``scale`` and ``shift`` (square sides) are the training
    jitter standing in for an outline that is never exact; at run time all are neutral.
    """
    x, y = _ORIGIN[square]
    centre = (x + 0.5 + shift[0], y + 0.5 + shift[1])
    return _cut(canvas, centre, (SIZE, SIZE), 1 + 2 * MARGIN, angle, scale)


def crop_mandarin(
    canvas: NDArray[np.uint8],
    east: bool,
    *,
    angle: float = 0.0,
    scale: float = 1.0,
    shift: tuple[float, float] = (0.0, 0.0),
) -> NDArray[np.uint8]:
    """The ``MANDARIN_SIZE`` crop of a mandarin (its half disc and a quarter square round it:
    x from -1.25 to 0.25, y from -0.25 to 2.25 board units).

    The east one is mirrored to look like the west one, so one network reads both;
    the jitter is :func:`crop`'s.
    """
    if east:
        canvas = np.ascontiguousarray(canvas[:, ::-1])  # the canvas is symmetric about x = 2.5
    centre = (-0.5 + shift[0], 1.0 + shift[1])
    return _cut(canvas, centre, MANDARIN_SIZE, 1.5, angle, scale)


def prepare(crop_bgr: NDArray[np.uint8]) -> NDArray[np.float32]:
    """Network input (3, SIZE, SIZE): the crop's mean colour removed, scaled by its spread.

    Per crop, so the light on one square (a shadow's edge, a lamp) does not
    shift what an empty square looks like.
    """
    f = crop_bgr.astype(np.float32)
    f -= f.reshape(-1, 3).mean(axis=0)
    f /= float(np.sqrt(np.mean(f**2))) + 8.0
    return np.ascontiguousarray(f.transpose(2, 0, 1))


def probabilities(
    canvas: NDArray[np.uint8], model: str, temperature: float = 1.0
) -> NDArray[np.float64]:
    """(10, CLASSES) count probabilities of the citizen squares, in ``CITIZENS`` order."""
    return _classify([crop(canvas, sq) for sq in CITIZENS], model, temperature)


def mandarin_probabilities(
    canvas: NDArray[np.uint8], model: str, temperature: float = 1.0
) -> NDArray[np.float64]:
    """(2, CLASSES) probabilities of the small pieces' count in the west and east mandarin."""
    return _classify([crop_mandarin(canvas, east) for east in (False, True)], model, temperature)


def big_probabilities(canvas: NDArray[np.uint8], model: str) -> NDArray[np.float64]:
    """(2,) probability of a big stone in the west and east mandarin, from the
    mandarin crops (a network with two classes: no stone, stone)."""
    crops = [crop_mandarin(canvas, east) for east in (False, True)]
    return np.asarray(_classify(crops, model, 1.0)[:, 1], dtype=np.float64)


def _classify(
    crops: list[NDArray[np.uint8]], model: str, temperature: float
) -> NDArray[np.float64]:
    """Softmax at ``temperature`` of the network's logits, one row per crop."""
    blob = np.stack([prepare(c) for c in crops])
    z = np.asarray(detect.forward(blob, model), dtype=np.float64).reshape(len(crops), -1)
    z /= temperature
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return np.asarray(p / p.sum(axis=1, keepdims=True), dtype=np.float64)


def combine(
    classes: NDArray[np.float64], density: NDArray[np.float64], density_weight: float
) -> NDArray[np.float64]:
    """One square's count distribution from both networks (over ``density``'s counts).

    The last class's mass ("20 or more") is shared out as the density
    distribution shares it above 19; the product with ``density`` raised to
    ``density_weight`` (``CountConfig.square_density_weight``) is renormalised.
    """
    n = len(density)
    out = np.zeros(n)
    top = CLASSES - 1
    out[: min(top, n)] = classes[: min(top, n)]
    if n > top:
        tail = density[top:]
        share = tail / tail.sum() if tail.sum() > 0 else np.full(len(tail), 1.0 / len(tail))
        out[top:] = classes[top] * share
    out = out * np.power(np.maximum(density, 1e-12), density_weight)
    total = out.sum()
    return np.asarray(out / total if total > 0 else density, dtype=np.float64)

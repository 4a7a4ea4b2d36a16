"""Learned big-stone presence in the two mandarin squares (OpenCV DNN at run time).

The big stone ("quan") is 2-3 pebbles across, but on the renders a measured
blob width could not tell it from two touching pebbles, a pile or an empty
square with dark chalk smudges (77% on render-public). A tiny CNN, trained
offline by ``bench/train_bigstone.py``, looks at each mandarin cut from the
canonical canvas of ``vision.detect`` (so a stone always has the same size in
square sides) and returns one logit. The east end is mirrored so both crops
look like the west one, which doubles the training data of one shared model.
Only numpy and OpenCV run here: the model is an ONNX file read by ``cv2.dnn``.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from vision import detect
from vision.config import CountConfig

DOWN = 2  # crops are downscaled by this: a stone stays >= 15 px across
_DEFAULT = CountConfig()
#: The shipped network and the crop it was trained on; ``CountConfig`` picks others.
MODEL_PATH: Final = _DEFAULT.big_model
CROP_X1: Final = _DEFAULT.big_crop_x1


def crop_width(px: int = detect.PX, crop_x1: float = CROP_X1) -> int:
    """Crop width on the canvas, px; a multiple of ``DOWN`` so both ends resize alike.

    ``crop_x1``: the crop's east edge in board units (``CountConfig.big_crop_x1``).
    """
    w = round((crop_x1 - detect.X0) * px)
    return w - w % DOWN


def crops(rect_bgr: NDArray[np.uint8], cfg: CountConfig | None = None) -> NDArray[np.float32]:
    """Network input (2, 3, H, W): the west mandarin and the mirrored east one.

    Normalised by the whole canvas's colour statistics rather than each crop's,
    so an empty mandarin is not stretched until its ground texture looks like
    a stone. The canvas is symmetric about the board's middle, so the mirrored
    east crop covers the same board extent as the west one.
    """
    h, w = rect_bgr.shape[:2]
    px = round(h / (detect.Y1 - detect.Y0))
    cw = crop_width(px, (cfg or _DEFAULT).big_crop_x1)
    west = rect_bgr[:, :cw]
    east = cv2.flip(rect_bgr[:, w - cw :], 1)
    size = (cw // DOWN, h // DOWN)
    small = [cv2.resize(c, size, interpolation=cv2.INTER_AREA) for c in (west, east)]
    mean, std = cv2.meanStdDev(rect_bgr)
    scale = 1.0 / (float(np.sqrt(np.mean(std**2))) + 8.0)
    blob = cv2.dnn.blobFromImages(small, scale, mean=tuple(float(m) for m in mean.ravel()))
    return np.asarray(blob, dtype=np.float32)


def logits(rect_bgr: NDArray[np.uint8], cfg: CountConfig | None = None) -> NDArray[np.float64]:
    """Big-stone logits (west, east) of a rectified board, by ``cfg.big_model``."""
    cfg = cfg or _DEFAULT
    out = detect.forward(crops(rect_bgr, cfg), cfg.big_model)
    return np.asarray(out, dtype=np.float64).reshape(2)


def probabilities(
    rect_bgr: NDArray[np.uint8], cfg: CountConfig | None = None
) -> NDArray[np.float64]:
    """Probability of a big stone in the west and east mandarin."""
    z = np.clip(logits(rect_bgr, cfg), -50.0, 50.0)
    return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float64)

"""Stage 1 of the learned finder: the board-line network's map as ridge evidence.

The classical ridge map sees every thin line: on brick, tiles and printed mats
the joints and prints are longer, straighter and more regular than faint chalk
and win the template fit. The network (``training/finder``) was trained to mark
only lines that belong to a drawn board, so its probability map, given the
ridge map's shape (strength and line normal), lets every later stage run
unchanged on evidence that joints do not fool.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detect import forward
from vision.locate.evidence import SAT
from vision.locate.ridges import hessian_ridge

#: The network's total stride: input sides are padded to a multiple of it.
STRIDE = 8
#: Probability that counts as full chalk evidence (the ridge map saturates at ``SAT``).
FULL = 0.5


def line_probability(work_bgr: NDArray[np.uint8], model: str) -> NDArray[np.float32]:
    """Per-pixel probability (0..1, the work image's size) of lying on a board line.

    The network takes BGR 0..255 and answers at half resolution; sides are
    padded (mirrored) to its stride and the answer cropped and upsampled back.
    """
    h, w = work_bgr.shape[:2]
    ph, pw = -h % STRIDE, -w % STRIDE
    img = work_bgr
    if ph or pw:
        img = np.asarray(cv2.copyMakeBorder(work_bgr, 0, ph, 0, pw, cv2.BORDER_REFLECT), np.uint8)
    logits = forward(np.asarray(cv2.dnn.blobFromImage(img), np.float32), model)[0, 0]
    logits = logits[: (h + 1) // 2, : (w + 1) // 2]
    prob = 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))
    up = cv2.resize(prob.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    return np.asarray(up, np.float32)


def learned_ridges(
    prob: NDArray[np.float32], sigmas: tuple[float, ...]
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Ridge strength (noise units, as ``ridges.ridge_map``) and line normal of a
    probability map: strength ``SAT`` at ``FULL`` probability, the normal from the
    map's own Hessian (a marked line is a bright band)."""
    _, normal = hessian_ridge(prob, sigmas, (1,))[1]
    ridge = prob * np.float32(SAT / FULL)
    return np.asarray(ridge, np.float32), normal

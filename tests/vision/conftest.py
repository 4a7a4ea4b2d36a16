"""Shared, cached synthetic scenes: rendering and locating are the slow parts."""

from __future__ import annotations

import functools
from typing import Any

import cv2
import numpy as np
import pytest

from vision.lens import Lens, frame_zoom, undistort_points
from vision.synth import render_scene

#: A mid-game position used by several tests (ring order, 50 pebbles or fewer).
POSITION = [0, 3, 0, 1, 5, 2, 1, 0, 7, 0, 2, 4]


@functools.lru_cache(maxsize=32)
def scene(
    seed: int,
    counts: tuple[int, ...] = tuple(POSITION),
    big: tuple[int, int] = (1, 1),
    **conds: Any,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Rendered scene, cached per argument set (callers must not modify it)."""
    image, truth = render_scene(list(counts), big, seed=seed, **conds)
    image.setflags(write=False)
    return image, truth


@pytest.fixture(scope="session")
def easy_scene() -> tuple[np.ndarray, dict[str, Any]]:
    return scene(11, ground="concrete", chalk="white", tilt_deg=20.0, yaw_deg=8.0, shadow=False)


def as_taken(image: np.ndarray, lens: Lens) -> np.ndarray:
    """What a camera with ``lens`` shows of a pinhole ``image``: each raw pixel reads the
    pinhole image where the lens bent it from (the undistorted frame is the pinhole's
    scaled by the frame's zoom about the centre)."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    centre = np.array([w / 2.0, h / 2.0])
    seen = undistort_points(np.stack([xs, ys], axis=-1), image.shape, lens)
    src = (centre + (seen - centre) / frame_zoom(image.shape, lens)).astype(np.float32)
    out = cv2.remap(
        image, src[..., 0], src[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(out, np.uint8)

"""Shared, cached synthetic scenes: rendering and locating are the slow parts."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

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

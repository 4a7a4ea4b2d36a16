"""Full-resolution side refinement: corners from the four outer chalk lines."""

from __future__ import annotations

import numpy as np

from tests.vision.conftest import scene
from vision.locate import refine_sides


def _mean_err(c: np.ndarray, t: np.ndarray) -> float:
    return float(np.linalg.norm(c - t, axis=1).mean())


def test_refine_sides_pulls_perturbed_corners_onto_the_chalk() -> None:
    image, truth = scene(101, ground="concrete", chalk="white", tilt_deg=10.0, yaw_deg=8.0)
    t = np.array(truth["corners"])
    unit = float(np.linalg.norm(t[1] - t[0])) / 5.0
    rng = np.random.default_rng(0)
    start = t + rng.uniform(-0.06, 0.06, t.shape) * unit
    got = refine_sides(image, start)
    assert _mean_err(got, t) < 0.5 * _mean_err(start, t)
    assert _mean_err(got, t) < 0.02 * unit * 5


def test_refine_sides_keeps_corners_without_chalk() -> None:
    rng = np.random.default_rng(1)
    img = np.clip(rng.normal(120, 6, (480, 640, 3)), 0, 255).astype(np.uint8)
    start = np.array([[100.0, 350.0], [540.0, 350.0], [540.0, 170.0], [100.0, 170.0]])
    got = refine_sides(img, start)
    assert np.all(np.isfinite(got))
    assert _mean_err(got, start) < 6.0

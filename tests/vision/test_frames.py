"""Several frames of one still scene: their noise, whether the scene moved, their mean."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.frames import BLOCK, mean_frame, mean_of, moved, temporal_noise


def ground(seed: int = 0) -> np.ndarray:
    """A textured still scene: grain the size of a few pixels, as a floor has."""
    rng = np.random.default_rng(seed)
    grain = cv2.GaussianBlur(rng.normal(0, 30, (240, 320)).astype(np.float32), (0, 0), 1.5)
    grey = np.clip(120 + grain, 0, 255)
    return np.repeat(grey[..., None], 3, axis=2).astype(np.uint8)


def noisy(scene: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """One frame of ``scene``: the same grey noise on every channel (a grey sensor)."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, sigma, scene.shape[:2])[..., None]
    return np.clip(scene + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("sigma", [2.0, 8.0])
def test_two_frames_tell_the_noise_however_grainy_the_ground(sigma: float) -> None:
    scene = ground()
    noise = temporal_noise(noisy(scene, sigma, 1), noisy(scene, sigma, 2))
    assert noise == pytest.approx(sigma, rel=0.1)
    assert temporal_noise(scene, scene.copy()) == 0.0


def test_a_piece_nudged_is_movement_the_noise_and_the_light_s_drift_are_not() -> None:
    scene = ground()
    a, b = noisy(scene, 10.0, 1), noisy(scene, 10.0, 2)
    assert not moved(a, b)
    brighter = np.clip(b.astype(np.int16) + 15, 0, 255).astype(np.uint8)
    assert not moved(a, brighter)  # the light rose over the whole frame
    nudged = scene.copy()
    cv2.circle(nudged, (100, 100), 12, (20, 20, 20), -1)  # a dark pebble, then moved
    cv2.circle(scene, (100 + 4 * BLOCK, 100), 12, (20, 20, 20), -1)
    assert moved(noisy(scene, 10.0, 3), noisy(nudged, 10.0, 4))
    assert moved(a, a[:200])  # another shape: another scene


def test_the_mean_of_frames_has_less_noise_and_rounds() -> None:
    scene = ground()
    frames = [noisy(scene, 8.0, k) for k in range(8)]
    mean = mean_frame(frames)
    assert mean.dtype == np.uint8 and mean.shape == scene.shape
    error = np.abs(mean.astype(np.float32) - scene).mean()
    assert error < 0.5 * np.abs(frames[0].astype(np.float32) - scene).mean()
    two = [np.full((2, 2, 3), 10, np.uint8), np.full((2, 2, 3), 11, np.uint8)]
    assert int(mean_frame(two)[0, 0, 0]) == 11  # 10.5 rounds up
    with pytest.raises(ValueError, match="no frames"):
        mean_frame([])
    with pytest.raises(ValueError, match="shape"):
        mean_frame([frames[0], frames[1][:100]])
    with pytest.raises(ValueError, match="shape"):
        temporal_noise(frames[0], frames[1][:100])


def test_a_running_sum_gives_the_same_mean_as_the_frames_kept() -> None:
    rng = np.random.default_rng(3)
    frames = [rng.integers(0, 256, (20, 30, 3)).astype(np.uint8) for _ in range(7)]
    total = np.zeros(frames[0].shape, np.uint16)
    for f in frames:
        total += f
    assert np.array_equal(mean_of(total, 7), mean_frame(frames))
    full = np.full((2, 2), 255 * 8, np.uint16)
    assert (mean_of(full, 8) == 255).all()  # no overflow at the top
    with pytest.raises(ValueError, match="0 frames"):
        mean_of(total, 0)

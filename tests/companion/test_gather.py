"""A tally scene's frames gathered before it is read: one frame where the camera is
clean, the mean of several where it is noisy, and only once the scene holds still."""

from __future__ import annotations

import numpy as np
import pytest

from companion.appliance.gather import Gatherer
from vision.frames import FRAMES, NOISY


def scene() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(60, 200, (120, 160, 3)).astype(np.uint8)


def frame(base: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.normal(0, sigma, base.shape[:2])[..., None]
    return np.clip(base + noise, 0, 255).astype(np.uint8)


def test_a_clean_camera_reads_one_frame_once_a_second_tells_its_noise() -> None:
    base, gatherer = scene(), Gatherer()
    first = frame(base, 1.0, 1)
    assert gatherer.add(first) is None and gatherer.pending == 1
    got = gatherer.add(frame(base, 1.0, 2))
    assert got is not None and got.frames == 1 and got.single is None
    assert np.array_equal(got.image, first)  # the frame after the OK, as before
    assert got.noise is not None and got.noise < NOISY
    assert gatherer.pending == 0


def test_a_noisy_camera_reads_the_mean_of_frames_and_keeps_one_for_the_stones() -> None:
    base, gatherer = scene(), Gatherer()
    frames = [frame(base, 12.0, k) for k in range(FRAMES)]
    results = [gatherer.add(f) for f in frames]
    assert results[:-1] == [None] * (FRAMES - 1)
    got = results[-1]
    assert got is not None and got.frames == FRAMES and got.noise is not None
    assert got.noise == pytest.approx(12.0, rel=0.15)
    assert got.single is not None and np.array_equal(got.single, frames[0])
    error = np.abs(got.image.astype(np.float32) - base).mean()
    assert error < 0.5 * np.abs(frames[0].astype(np.float32) - base).mean()


def test_a_scene_that_moves_is_gathered_again_once_it_holds_still() -> None:
    base, gatherer = scene(), Gatherer()
    arm = base.copy()
    arm[20:100, 30:90] = 240  # an arm still over the board after the OK
    gatherer.add(frame(arm, 12.0, 1))
    assert gatherer.add(frame(base, 12.0, 2)) is None  # withdrawn: start again from here
    assert gatherer.pending == 1
    results = [gatherer.add(frame(base, 12.0, k)) for k in range(3, 3 + FRAMES - 1)]
    got = results[-1]
    assert results[:-1] == [None] * (FRAMES - 2)
    assert got is not None and got.frames == FRAMES  # the still scene, arm gone
    assert got.single is not None and np.array_equal(got.single, frame(base, 12.0, 2))


def test_a_scene_that_never_holds_still_is_read_from_its_newest_frame() -> None:
    base, gatherer = scene(), Gatherer(patience=5)
    frames = []
    for k in range(5):  # a shadow sweeping over the board, frame after frame
        moving = base.copy()
        moving[:, 30 * k : 30 * k + 30] //= 2
        frames.append(moving)
    got = [gatherer.add(f) for f in frames]
    assert got[:-1] == [None] * 4
    last = got[-1]
    assert last is not None and last.frames == 1 and np.array_equal(last.image, frames[-1])
    assert gatherer.pending == 0
    with pytest.raises(ValueError, match="patience"):
        Gatherer(patience=1)


def test_frames_that_end_early_give_what_they_held() -> None:
    base, gatherer = scene(), Gatherer()
    assert gatherer.flush() is None
    one = frame(base, 12.0, 1)
    gatherer.add(one)
    got = gatherer.flush()
    assert got is not None and got.frames == 1 and np.array_equal(got.image, one)
    for k in range(3):
        gatherer.add(frame(base, 12.0, k))
    got = gatherer.flush()
    assert got is not None and got.frames == 3 and got.single is not None
    with pytest.raises(ValueError, match="at least 2"):
        Gatherer(want=1)

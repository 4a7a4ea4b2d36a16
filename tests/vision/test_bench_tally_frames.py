"""bench/tally_frames.py: the mean of a still scene's frames, and its big stones."""

from __future__ import annotations

import numpy as np

from bench.tally_frames import mean_frame, stones_from


def test_the_mean_of_noisy_frames_is_nearer_the_scene_than_any_one() -> None:
    rng = np.random.default_rng(0)
    scene = rng.integers(40, 200, (24, 32, 3)).astype(np.float32)
    frames = [
        np.clip(scene + rng.normal(0, 10, scene.shape), 0, 255).astype(np.uint8) for _ in range(8)
    ]
    mean = mean_frame(frames)
    assert mean.dtype == np.uint8 and mean.shape == scene.shape
    off = np.abs(mean - scene).mean()
    assert off < 0.5 * min(np.abs(f - scene).mean() for f in frames)  # about sqrt(8) less


def test_the_mean_of_two_frames_rounds_half_up() -> None:
    a = np.full((2, 2, 3), 10, np.uint8)
    b = np.full((2, 2, 3), 11, np.uint8)
    assert (mean_frame([a, b]) == 11).all()


def test_big_stones_come_from_the_single_frame_and_pieces_from_the_mean() -> None:
    mean = {
        "squares": [[sq, 0.0, 0.1, []] for sq in range(12)],
        "big_heat": [0.1, 0.2],
        "big_net": [0.3, 0.4],
    }
    single = {
        "squares": [[-sq, 0.0, 0.9, []] for sq in range(12)],
        "big_heat": [0.5, 0.6],
        "big_net": [0.7, 0.8],
    }
    both = stones_from(mean, single)
    assert [s[0] for s in both["squares"]] == [0, 1, 2, 3, 4, 5, -6, 7, 8, 9, 10, 11]
    assert both["big_heat"] == [0.5, 0.6] and both["big_net"] == [0.7, 0.8]
    assert mean["squares"][0][2] == 0.1  # the mean's reading is left as it was

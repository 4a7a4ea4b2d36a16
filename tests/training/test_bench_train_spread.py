"""bench/train_spread.py gen --mean-dark: half the low-light training scenes are the mean
of several frames, as the live tally reads a noisy scene."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from bench.train_spread import _generate_one, frames_for

DARK_SEED = 1_000_156  # a training seed in low light whose coin says "a mean"


def test_only_low_light_scenes_are_means_and_about_half_of_them() -> None:
    seeds = range(1_000_000, 1_000_400)
    assert {frames_for(s, light, 8) for s in seeds for light in ("day", "glare", "shadow")} == {1}
    assert {frames_for(s, "low", 0) for s in seeds} == {1}
    means = [frames_for(s, "low", 8) for s in seeds]
    assert set(means) == {1, 8}
    assert 0.4 < means.count(8) / len(means) < 0.6
    assert means == [frames_for(s, "low", 8) for s in seeds]  # a seed's coin, every run


def _grain(path: Path) -> float:
    grey = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE).astype(np.float32)
    return float(np.abs(grey - cv2.GaussianBlur(grey, (0, 0), 1.5)).mean())


def test_a_dark_scene_drawn_as_a_mean_is_the_same_scene_with_less_grain(tmp_path: Path) -> None:
    one, mean = tmp_path / "one", tmp_path / "mean"
    for out, k in ((one, 0), (mean, 4)):
        out.mkdir()
        assert _generate_one(DARK_SEED, out, pair=True, mean_dark=k)
    rec_one = json.loads((one / f"{DARK_SEED}.json").read_text())
    rec_mean = json.loads((mean / f"{DARK_SEED}.json").read_text())
    assert (rec_one["frames"], rec_mean["frames"]) == (1, 4)
    assert rec_one["small"] == rec_mean["small"] and rec_one["big"] == rec_mean["big"]
    for name in (f"{DARK_SEED}.png", f"{DARK_SEED}_empty.png"):
        assert _grain(mean / name) < 0.8 * _grain(one / name)

"""bench/tally_frames.py: a still scene gathered as the live tally does, and its big
stones taken from one frame."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from bench.tally_frames import gather, stones_from, write_respread
from vision.frames import FRAMES


def test_a_scene_is_gathered_from_as_many_frames_as_the_live_tally_takes() -> None:
    rng = np.random.default_rng(0)
    scene = rng.integers(40, 200, (48, 64, 3)).astype(np.float32)
    asked: list[int] = []

    def frames(sigma: float) -> Callable[[int], np.ndarray]:
        def frame(k: int) -> np.ndarray:
            asked.append(k)
            noise = np.random.default_rng(k).normal(0, sigma, scene.shape)
            return np.clip(scene + noise, 0, 255).astype(np.uint8)

        return frame

    noisy = gather(frames(10.0))
    assert noisy.frames == FRAMES and asked == list(range(FRAMES))
    assert noisy.single is not None
    asked.clear()
    clean = gather(frames(0.5))
    assert clean.frames == 1 and clean.single is None and asked == [0, 1]


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


def test_a_respread_layout_is_written_under_its_own_name(tmp_path: Path) -> None:
    truth = {"seed": 7, "board": [0] * 12}
    assert not write_respread(7, truth, tmp_path, "wide", (2, 9), gathered=False)
    image = cv2.imread(str(tmp_path / "scene_7_r2-9.png"))
    assert image is not None and image.shape == (960, 1280, 3)
    assert json.loads((tmp_path / "scene_7_r2-9.json").read_text()) == truth
    assert not (tmp_path / "scene_7_r2-9_one.png").exists()  # one frame: no mean to pair

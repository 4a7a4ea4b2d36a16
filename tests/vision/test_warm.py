"""vision.warm_up: first-frame costs paid before the first frame, and nothing else."""

from __future__ import annotations

import numpy as np

from vision import VisionConfig, read_board, warm_up
from vision.synth import render_scene


def test_warming_up_changes_no_reading() -> None:
    image, _ = render_scene([0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5], (1, 1), 3, size=(640, 480))
    config = VisionConfig()
    before = read_board(image, config)
    warm_up(config, (640, 480))
    after = read_board(image, config)
    assert before.found and after.found
    assert np.array_equal(before.corners, after.corners)
    assert before.squares == after.squares


def test_any_frame_size_warms_up() -> None:
    for size in ((320, 240), (1280, 960), (97, 61)):
        warm_up(VisionConfig(), size)  # (a tiny or odd frame must not raise either)

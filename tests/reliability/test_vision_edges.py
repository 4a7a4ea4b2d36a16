"""Frames that once crashed vision inside the appliance loop."""

from __future__ import annotations

import numpy as np

from engine import Position
from vision.api import read_board
from vision.synth import render_scene


def test_three_boards_stacked_in_an_800x1800_frame_do_not_crash_the_strip_search() -> None:
    """cv2.remap refused the strip canvas wider than SHRT_MAX (issue 13)."""
    opening = list(Position.initial().board)
    frames = [
        render_scene(opening, (1, 1), seed=s, size=(800, 600), fill=0.95)[0] for s in (1, 2, 3)
    ]
    reading = read_board(np.vstack(frames), gate=False)
    assert reading.found or reading.reason

"""From camera frames to what the referee needs: readings, fitness, settledness.

The camera is fixed, so the board is located once and then only verified
(vision's :class:`~vision.Locator`). Whether a frame shows a settled scene
is decided here: a frame that differs a lot from the one before is a new
still (a photo after a move), one that barely differs belongs to a live
stream, where the referee waits for the same reading several times before
it objects to anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.app import Observation
from device.ports import Frame
from vision import Calibration, Locator, VisionConfig, calibrate, config_from_dict, read_board

#: Mean grey-level change (0-255, on a 160 px wide copy) above which a frame is a new scene.
NEW_SCENE = 6.0


def _thumb(image: NDArray[np.uint8]) -> NDArray[np.float32]:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    small = cv2.resize(grey, (160, max(2, round(160 * h / w))), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32)


class VisionObserver:
    """Locate once, verify every frame, count, and say whether the scene is settled."""

    def __init__(self, config: VisionConfig | None = None, *, stills: bool = False) -> None:
        """``stills``: every frame is a photo of a settled scene (a folder of stills).

        Otherwise frames come from a live camera, and a frame is only called a
        new still when it differs a lot from the one before.
        """
        self.config = config or VisionConfig()
        self.stills = stills
        self.locator = Locator(self.config)
        self.calibration: Calibration | None = None
        self._previous: NDArray[np.float32] | None = None
        self.last_timings: dict[str, float] = {}

    def __call__(self, frame: Frame) -> Observation:
        image = np.ascontiguousarray(frame.image)
        thumb = _thumb(image)
        change = (
            float(np.abs(thumb - self._previous).mean())
            if self._previous is not None and self._previous.shape == thumb.shape
            else float("inf")
        )
        self._previous = thumb
        outline = self.locator.update(image)
        if outline is None:
            return Observation(None, fit=False, reason="board not found", board_found=False)
        reading = read_board(image, self.config, outline=outline, calibration=self.calibration)
        self.last_timings = reading.timings_ms
        if not reading.found:
            return Observation(None, fit=False, reason=reading.reason, board_found=False)
        if reading.reason is not None or not reading.squares:
            return Observation(None, fit=False, reason=reading.reason or "frame not usable")
        return Observation(reading.squares, fit=True, still=self.stills or change >= NEW_SCENE)

    def looks_like_opening(self, observation: Observation) -> bool:
        """Roughly 5 in every citizen square and both big stones: worth calibrating on."""
        if observation.reading is None:
            return False
        squares = list(observation.reading)
        counts = [max(range(len(q.probs)), key=q.probs.__getitem__) for q in squares]
        citizens = [counts[sq] for sq in range(12) if sq % 6]
        stones = squares[0].big_prob > 0.5 and squares[6].big_prob > 0.5
        return stones and all(3 <= n <= 8 for n in citizens)

    def learn_opening(self, frame: Frame) -> None:
        """The referee confirmed the opening: learn pebble size and look from it."""
        outline = self.locator.outline
        if outline is not None:
            self.calibration = calibrate(np.ascontiguousarray(frame.image), self.config, outline)


def make_observer(settings: Mapping[str, Any] | None = None) -> VisionObserver:
    """The observer for the app, from the config's ``[vision]`` table."""
    return VisionObserver(config_from_dict(dict(settings or {})))

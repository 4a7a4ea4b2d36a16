"""From camera frames to what the referee needs: readings, fitness, settledness.

It also says which squares did not change since the last frame the referee
confirmed. With a fixed camera, a square whose pixels are the same as then
still holds what the referee knows it held, however hard its pile is to
count; only the squares a move touched are left to the counter. That is the
cheapest and most reliable evidence a fixed camera gives.

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

from companion.referee import Observation
from device.ports import Frame
from vision import Calibration, Locator, VisionConfig, calibrate, config_from_dict, read_board

#: Mean grey-level change (0-255, on a 160 px wide copy) above which a frame is a new scene.
NEW_SCENE = 6.0
#: A square changed when this many pixels, as a share of one pebble's area, differ clearly.
CHANGED_PEBBLES = 0.25
#: Grey levels a pixel must differ by (after each square's brightness is matched).
PIXEL_STEP = 12
#: Pebble diameter as a share of a square's side (the synthetic and rendered boards).
PEBBLE_SHARE = 0.15


def _grey(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.GaussianBlur(grey, (5, 5), 0), dtype=np.uint8)


def changed_squares(
    reference: NDArray[np.uint8],
    grey: NDArray[np.uint8],
    regions: tuple[NDArray[np.float64], ...],
    px_per_square: float,
) -> tuple[bool, ...]:
    """Which of the 12 regions differ from the reference frame by at least a fraction of a pebble."""
    pebble_area = np.pi / 4 * (PEBBLE_SHARE * px_per_square) ** 2
    limit = CHANGED_PEBBLES * pebble_area
    out = []
    for poly in regions:
        mask = np.zeros(grey.shape, np.uint8)
        cv2.fillPoly(mask, [np.rint(poly).astype(np.int32)], 1)
        inside = mask > 0
        a = reference[inside].astype(np.int16)
        b = grey[inside].astype(np.int16)
        if a.size == 0:
            out.append(True)
            continue
        diff = np.abs((a - int(np.median(a))) - (b - int(np.median(b))))
        out.append(int((diff > PIXEL_STEP).sum()) >= limit)
    return tuple(out)


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
        self._reference: NDArray[np.uint8] | None = None
        self._grey: NDArray[np.uint8] | None = None
        self._hidden: tuple[bool, ...] = ()
        self._regions: tuple[NDArray[np.float64], ...] = ()
        self.last_timings: dict[str, float] = {}

    @property
    def calibrated(self) -> bool:
        return self.calibration is not None

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
        # A still with a hand held over part of the board is all there is of
        # that position; a live stream just waits for the hand to go.
        reading = read_board(
            image,
            self.config,
            outline=outline,
            calibration=self.calibration,
            partial=self.stills,
        )
        self.last_timings = reading.timings_ms
        if not reading.found:
            return Observation(None, fit=False, reason=reading.reason, board_found=False)
        partial = reading.frame is not None and reading.frame.hand and bool(reading.squares)
        if (reading.reason is not None and not partial) or not reading.squares:
            return Observation(None, fit=False, reason=reading.reason or "frame not usable")
        self._grey = _grey(image)
        self._hidden = tuple(sq.hidden for sq in reading.squares)
        self._regions = outline.regions
        changed = None
        if self._reference is not None and self._reference.shape == self._grey.shape:
            flags = changed_squares(
                self._reference, self._grey, outline.regions, outline.px_per_unit()
            )
            changed = tuple(f or h for f, h in zip(flags, self._hidden, strict=True))
        still = self.stills or change >= NEW_SCENE
        return Observation(
            reading.squares,
            fit=True,
            reason=reading.reason,
            still=still,
            changed=changed,
            partial=partial,
        )

    def confirmed(self) -> None:
        """The referee trusts the board in the last frame: compare later frames with it.

        Squares a hand hid keep their old reference: they are compared later
        with what was there before, which is still right for the referee (a
        square the move changed shows as changed and is counted).
        """
        if self._grey is None:
            return
        if self._reference is None or not any(self._hidden):
            self._reference = self._grey
            return
        keep = np.zeros(self._grey.shape, np.uint8)
        for poly, hidden in zip(self._regions, self._hidden, strict=True):
            if hidden:
                cv2.fillPoly(keep, [np.rint(poly).astype(np.int32)], 1)
        self._reference = np.where(keep > 0, self._reference, self._grey).astype(np.uint8)

    def looks_like_opening(self, observation: Observation) -> bool:
        """Roughly 5 in every citizen square and both big stones: worth calibrating on.

        Squares under a hand are not held against it; at least half the
        citizen squares must be seen.
        """
        if observation.reading is None:
            return False
        squares = list(observation.reading)
        seen = [sq for sq in range(12) if not self._hidden[sq]] if self._hidden else range(12)
        counts = {
            sq: max(range(len(squares[sq].probs)), key=squares[sq].probs.__getitem__) for sq in seen
        }
        citizens = [n for sq, n in counts.items() if sq % 6]
        stones = all(squares[m].big_prob > 0.5 for m in (0, 6) if m in counts)
        return stones and len(citizens) >= 5 and all(3 <= n <= 8 for n in citizens)

    def learn_opening(self, frame: Frame) -> None:
        """The referee confirmed the opening: learn pebble size and look from it."""
        outline = self.locator.outline
        if outline is not None:
            skip = [sq for sq, hidden in enumerate(self._hidden) if hidden]
            self.calibration = calibrate(
                np.ascontiguousarray(frame.image), self.config, outline, skip
            )


def make_observer(settings: Mapping[str, Any] | None = None) -> VisionObserver:
    """The observer for the app, from the config's ``[vision]`` table."""
    return VisionObserver(config_from_dict(dict(settings or {})))

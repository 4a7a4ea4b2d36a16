"""The camera observer for a three- or four-seat ring board (corners given once).

Kept next to :mod:`companion.appliance.observe`'s two-player
``VisionObserver``, with the same frame policy and the same interface
(:class:`~companion.appliance.pipeline.Observer`), so ``FramePipeline`` and the
referee work unchanged; the app picks it when ``Rules.players > 2``
(:func:`make_observer_for`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from companion.appliance.observe import FrameHistory, VisionObserver, make_observer
from companion.referee import Observation
from device.ports import Frame
from engine import Rules
from engine.ring import ring
from vision import (
    Calibration,
    VisionConfig,
    changed_since,
    config_from_dict,
    confirmed_reference,
    square_grey,
)
from vision.errors import ConfigError
from vision.lens import undistort, undistort_points
from vision.ring import RingOutline, calibrate_ring, read_ring, ring_outline


class RingObserver:
    """The observer for a three- or four-seat ring board whose corners were given once.

    The same frame policy as :class:`VisionObserver` (new scene or live
    stream, change flags against the last confirmed frame, calibration on the
    opening) over the ring's 6N squares; the board is not searched for, and a
    hand over the board is not looked for yet (a live stream's motion gate
    still holds a frame with a moving arm back).
    """

    def __init__(
        self,
        outline: RingOutline,
        config: VisionConfig | None = None,
        *,
        stills: bool = False,
        given: Sequence[Sequence[float]] | None = None,
    ) -> None:
        """``given``: the corners ``outline`` was made from, in the photo as taken; with a
        lens configured the outline is made again from them where the lens puts them."""
        self.outline = outline
        self.config = config or VisionConfig()
        self._given = None if given is None else np.asarray(given, dtype=np.float64)
        self._shape: tuple[int, ...] | None = None
        self.stills = stills
        self.calibration: Calibration | None = None
        self._history = FrameHistory(self.config, stills)
        self._reference: NDArray[np.uint8] | None = None
        self._grey: NDArray[np.uint8] | None = None
        self.last_timings: dict[str, float] = {}

    @property
    def calibrated(self) -> bool:
        return self.calibration is not None

    def _undone(self, frame: Frame) -> NDArray[np.uint8]:
        """The frame with the lens undone (``vision.lens``), the outline moved with it."""
        lens = self.config.lens
        image = undistort(np.ascontiguousarray(frame.image), lens)
        if self._given is not None and not lens.pinhole and image.shape != self._shape:
            self._shape = image.shape
            seen = undistort_points(self._given, image.shape, lens)
            self.outline = ring_outline(seen, self.outline.players, self.outline.inner)
        return image

    def __call__(self, frame: Frame) -> Observation:
        image = self._undone(frame)
        new_scene, previous = self._history.step(image)
        reading = read_ring(
            image, self.outline, self.config, calibration=self.calibration, previous=previous
        )
        self.last_timings = reading.timings_ms
        if not reading.squares:
            return Observation(None, fit=False, reason=reading.reason or "frame not usable")
        self._grey = square_grey(image)
        changed = changed_since(
            self._reference,
            self._grey,
            self.outline.regions,
            self.outline.px_per_unit(),
            (),
            self.config.change,
        )
        return Observation(
            reading.squares, fit=True, still=self.stills or new_scene, changed=changed
        )

    def confirmed(self) -> None:
        """The referee trusts the board in the last frame: compare later frames with it."""
        if self._grey is not None:
            self._reference = confirmed_reference(self._reference, self._grey, self.outline.regions)

    def hold_earlier(self) -> bool:
        """A ring's changes are only measured against a trusted frame (not held)."""
        return False

    def confirmed_earlier(self) -> Observation | None:
        """Nothing is held (``hold_earlier``)."""
        return None

    def looks_like_opening(self, observation: Observation) -> bool:
        """Roughly 5 in every citizen square: worth calibrating on."""
        if observation.reading is None:
            return False
        squares = list(observation.reading)
        counts = [
            max(range(len(squares[sq].probs)), key=squares[sq].probs.__getitem__)
            for sq in ring(self.outline.players).citizens
        ]
        return all(3 <= n <= 8 for n in counts)

    def learn_opening(self, frame: Frame) -> None:
        """The referee confirmed the opening: learn this scene's count bias from it."""
        self.calibration = calibrate_ring(self._undone(frame), self.outline, self.config)


def ring_observer(
    corners: Any,
    rules: Rules,
    settings: Mapping[str, Any] | None = None,
    *,
    inner: float | None = None,
    stills: bool = False,
) -> RingObserver:
    """The observer for ``rules.players`` seats (3 or 4) from the board's corners in the image.

    ``corners``: N ``[x, y]`` pairs, corner ``s`` holding mandarin square ``6 s``
    (see :mod:`vision.ring`); bad corners raise ``vision.ConfigError`` naming why.
    """
    outline = ring_outline(corners, rules.players, inner)
    config = config_from_dict(dict(settings or {}))
    return RingObserver(outline, config, stills=stills, given=corners)


def make_observer_for(
    rules: Rules,
    settings: Mapping[str, Any] | None = None,
    ring_corners: Sequence[Sequence[float]] | None = None,
    *,
    ring_inner: float | None = None,
    stills: bool = False,
) -> VisionObserver | RingObserver:
    """The app's observer for these rules: two seats the usual one, more the ring's.

    A ring board is not searched for, so three or four seats need the corners
    (``ring_corners``: N points, or 2N with the inner outline's; see
    :func:`vision.ring.ring_outline`); without them this raises
    ``vision.ConfigError``. ``settings`` is the ``[vision]`` table without any
    ring keys (``config_from_dict`` refuses keys it does not know).
    """
    if rules.players == 2:
        if stills:
            return VisionObserver(config_from_dict(dict(settings or {})), stills=True)
        return make_observer(settings)
    if ring_corners is None:
        raise ConfigError(
            f"vision: {rules.players} seats need the ring board's {rules.players} corners "
            "(the ring is not located automatically)"
        )
    return ring_observer(ring_corners, rules, settings, inner=ring_inner, stills=stills)

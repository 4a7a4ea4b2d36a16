"""Frames of one still tally scene, gathered before it is read.

The fixed camera sees the cleared board, and each spread, for as long as the players
stand back. Two frames tell the sensor's noise (``vision.frames.temporal_noise``); where
it is high (low light), the tally reads the mean of ``vision.frames.FRAMES`` frames, in
which the detector finds the pieces that the noise hid, and keeps one frame for the big
stones (the pair detector never saw a dark frame as clean as such a mean: its stone peaks
fall there). Where the scene moves between frames (an arm withdrawn, a nudged piece), the
gathering starts again from the newest frame: the scene is read once it holds still, or,
if it never does within ``PATIENCE`` frames (a flickering lamp, leaves in the wind), from
the newest frame alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.frames import FRAMES, NOISY, mean_of, moved, temporal_noise

Image = NDArray[np.uint8]

#: frames a scene may keep moving before its newest frame is read alone (about three
#: seconds of a camera's frames)
PATIENCE = 30


@dataclass(frozen=True)
class Gathered:
    """What a tally reads of one still scene: ``image`` (the mean of ``frames`` frames,
    or one frame), and ``single``, one frame of them for the big stones (None where
    ``image`` is that frame); ``noise``: the temporal noise measured (grey levels;
    None where the scene never held still or the frames ended first)."""

    image: Image
    frames: int = 1
    single: Image | None = None
    noise: float | None = None


class Gatherer:
    """Takes a tally scene's frames one by one (``add``) until it can say what to read.

    ``want``: the frames a noisy scene's mean is made of; ``noisy``: the temporal noise
    from which it is made; ``patience``: the frames a scene may keep moving."""

    def __init__(self, want: int = FRAMES, noisy: float = NOISY, patience: int = PATIENCE) -> None:
        if want < 2:
            raise ValueError(f"a mean of frames needs at least 2, got {want}")
        if want > 257:  # (a 16-bit sum holds 257 frames of 255)
            raise ValueError(f"a mean of at most 257 frames, got {want}")
        if patience < 2:
            raise ValueError(f"patience: at least 2 frames, got {patience}")
        self.want = want
        self.noisy = noisy
        self.patience = patience
        self._seen = 0  # frames taken since the last reading, moving ones included
        #: the scene's first frame, the running sum of its frames and how many there are
        #: (one sum, not every frame: a camera's full-size frames are 36 MB each)
        self._first: Image | None = None
        self._total: NDArray[np.uint16] | None = None
        self._count = 0
        self._noise: float | None = None

    @property
    def pending(self) -> int:
        """Frames held so far."""
        return self._count

    def reset(self) -> None:
        self._start(None)
        self._seen = 0

    def _start(self, image: Image | None) -> None:
        """Gather from ``image`` on (None: from the next frame)."""
        self._first = None if image is None else image.copy()
        self._total = None if image is None else image.astype(np.uint16)
        self._count = 0 if image is None else 1
        self._noise = None

    def add(self, image: Image) -> Gathered | None:
        """The scene as it will be read once enough frames are in, else None (more wanted)."""
        self._seen += 1
        first = self._first
        if first is None:
            self._start(image)
            return None
        if moved(first, image):  # still moving: start again from this frame
            if self._seen >= self.patience:
                self.reset()
                return Gathered(image.copy())
            self._start(image)
            return None
        if self._noise is None:
            self._noise = temporal_noise(first, image)
            if self._noise < self.noisy:
                noise = self._noise
                self.reset()
                return Gathered(first, noise=noise)
        assert self._total is not None
        self._total += image
        self._count += 1
        if self._count < self.want:
            return None
        return self._done()

    def _done(self) -> Gathered:
        first, total, count, noise = self._first, self._total, self._count, self._noise
        self.reset()
        assert first is not None and total is not None
        if count == 1 or noise is None or noise < self.noisy:
            return Gathered(first, noise=noise)
        return Gathered(mean_of(total, count), count, first, noise)

    def flush(self) -> Gathered | None:
        """What the frames held so far give when no more will come (the camera ended)."""
        return None if self._first is None else self._done()


__all__ = ["PATIENCE", "Gathered", "Gatherer"]

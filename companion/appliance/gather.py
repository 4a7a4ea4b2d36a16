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

from vision.frames import FRAMES, NOISY, block_means, blocks_moved, mean_of, temporal_noise

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
        #: the scene's first frame and its block means (each later frame is compared
        #: with them), then, once a second frame said the camera is noisy, the running
        #: sum of its frames (one sum, not every frame: a full-size frame is 36 MB) and
        #: how many there are
        self._first: Image | None = None
        self._blocks: NDArray[np.float32] | None = None
        self._noise: float | None = None
        self._total: NDArray[np.uint16] | None = None
        self._count = 0

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
        self._blocks = None if image is None else block_means(image)
        self._noise, self._total = None, None
        self._count = 0 if image is None else 1

    def add(self, image: Image) -> Gathered | None:
        """The scene as it will be read once enough frames are in, else None (more wanted)."""
        self._seen += 1
        first, blocks = self._first, self._blocks
        if first is None or blocks is None:
            self._start(image)
            return None
        if blocks_moved(blocks, block_means(image)):  # still moving: start again from here
            if self._seen >= self.patience:
                self.reset()
                return Gathered(image.copy())
            self._start(image)
            return None
        if self._total is None:  # the second frame: the two tell the camera's noise
            noise = temporal_noise(first, image)
            if noise < self.noisy:
                self.reset()
                return Gathered(first, noise=noise)
            self._noise, self._total = noise, first.astype(np.uint16)
        self._total += image
        self._count += 1
        return self._done() if self._count >= self.want else None

    def _done(self) -> Gathered:
        first, total, count, noise = self._first, self._total, self._count, self._noise
        self.reset()
        assert first is not None
        if total is None:  # (one frame: its noise untold)
            return Gathered(first)
        return Gathered(mean_of(total, count), count, first, noise)

    def flush(self) -> Gathered | None:
        """What the frames held so far give when no more will come (the camera ended)."""
        return None if self._first is None else self._done()


__all__ = ["PATIENCE", "Gathered", "Gatherer"]

"""Frames of one still tally scene, gathered before it is read.

The fixed camera sees the cleared board, and each spread, for as long as the players
stand back. Two frames tell the sensor's noise (``vision.frames.temporal_noise``); where
it is high (low light), the tally reads the mean of ``vision.frames.FRAMES`` frames, in
which the detector finds the pieces that the noise hid, and keeps one frame for the big
stones (the pair detector never saw a dark frame as clean as such a mean: its stone peaks
fall there). Where the scene moved between frames (an arm, a nudged piece), the frames
after the players' OK no longer agree and the first is read alone, as it always was.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.frames import FRAMES, NOISY, mean_frame, moved, temporal_noise

Image = NDArray[np.uint8]


@dataclass(frozen=True)
class Gathered:
    """What a tally reads of one still scene: ``image`` (the mean of ``frames`` frames,
    or one frame), and ``single``, one frame of them for the big stones (None where
    ``image`` is that frame); ``noise``: the temporal noise measured (grey levels;
    None where the scene moved or the frames ended first)."""

    image: Image
    frames: int = 1
    single: Image | None = None
    noise: float | None = None


class Gatherer:
    """Takes a tally scene's frames one by one (``add``) until it can say what to read.

    ``want``: the frames a noisy scene's mean is made of; ``noisy``: the temporal noise
    from which it is made."""

    def __init__(self, want: int = FRAMES, noisy: float = NOISY) -> None:
        if want < 2:
            raise ValueError(f"a mean of frames needs at least 2, got {want}")
        self.want = want
        self.noisy = noisy
        self._frames: list[Image] = []
        self._noise: float | None = None

    @property
    def pending(self) -> int:
        """Frames held so far."""
        return len(self._frames)

    def reset(self) -> None:
        self._frames, self._noise = [], None

    def add(self, image: Image) -> Gathered | None:
        """The scene as it will be read once enough frames are in, else None (more wanted)."""
        if not self._frames:
            self._frames = [image.copy()]
            return None
        first = self._frames[0]
        if moved(first, image):  # the scene changed after the OK: the first, as it was
            self.reset()
            return Gathered(first)
        if self._noise is None:
            self._noise = temporal_noise(first, image)
            if self._noise < self.noisy:
                noise = self._noise
                self.reset()
                return Gathered(first, noise=noise)
        self._frames.append(image.copy())
        if len(self._frames) < self.want:
            return None
        frames, noise = self._frames, self._noise
        self.reset()
        return Gathered(mean_frame(frames), len(frames), frames[0], noise)

    def flush(self) -> Gathered | None:
        """What the frames held so far give when no more will come (the camera ended)."""
        if not self._frames:
            return None
        frames, noise = self._frames, self._noise
        self.reset()
        if len(frames) == 1 or noise is None or noise < self.noisy:
            return Gathered(frames[0], noise=noise)
        return Gathered(mean_frame(frames), len(frames), frames[0], noise)


__all__ = ["Gathered", "Gatherer"]

"""Clocks are plain callables returning monotonic seconds, so tests drive time by hand."""

from __future__ import annotations

import time
from collections.abc import Callable

#: Anything returning monotonic seconds as a float; ``time.monotonic`` in production.
Clock = Callable[[], float]

monotonic: Clock = time.monotonic


class FakeClock:
    """A clock that only moves when told to: deterministic tests without sleeps.

    >>> clock = FakeClock(10.0)
    >>> clock.advance(0.5)
    >>> clock()
    10.5
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move forward; going backwards would break every monotonic assumption."""
        if seconds < 0:
            raise ValueError(f"a monotonic clock cannot go back ({seconds} s)")
        self._now += seconds

    def set(self, now: float) -> None:
        """Jump to an absolute time that is not earlier than the current one."""
        self.advance(now - self._now)

"""One small error tree for the vision package.

Each leaf also inherits the builtin a caller would naturally catch, so code that
knows nothing of ``vision`` still handles these errors sensibly.
"""

from __future__ import annotations


class VisionError(Exception):
    """Root of every error raised on purpose by ``vision``."""


class BoardNotFoundError(VisionError, LookupError):
    """No chalk board could be located; ``reason`` says why in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MarksNotFoundError(BoardNotFoundError):
    """Marks put on the board's corners did not give four corners; ``seen``: how many
    marks (or, past four, changes) the photos showed, so a screen can say what to do
    (4: four marks that bound no board)."""

    def __init__(self, reason: str, seen: int) -> None:
        super().__init__(reason)
        self.seen = seen


class ImageReadError(VisionError, OSError):
    """An image file could not be read or decoded."""


class ConfigError(VisionError, ValueError):
    """A configuration key or value is invalid; the message names the key."""


class ImagePairError(VisionError, ValueError):
    """Two photos meant to be compared (one camera, unmoved) cannot be: their sizes differ."""

"""What the app sees of the hardware: three small Protocols and their value types.

The app depends only on these; real, fake and replay backends satisfy them
structurally, so no backend has to import the others.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from PIL import Image

#: The OLED's geometry; screens render exactly this.
DISPLAY_SIZE: tuple[int, int] = (128, 64)


class Edge(enum.StrEnum):
    """A raw button edge; policy (debounce, long press, chords) lives in companion."""

    PRESS = "press"
    RELEASE = "release"
    #: One detent of a rotary encoder, reported under the name "left" or "right".
    STEP = "step"


@dataclass(frozen=True, slots=True)
class ButtonEvent:
    """One raw edge as queued by a GPIO callback, stamped by the injected clock."""

    button: str
    edge: Edge
    t: float


@dataclass(frozen=True, eq=False)
class Frame:
    """One camera image in OpenCV order (BGR, uint8, HxWx3), made read-only on creation.

    ``t`` is monotonic seconds from the camera's clock, ``seq`` counts from 0 per
    camera start, ``source`` names where the frame came from (file name, device).
    """

    image: npt.NDArray[np.uint8]
    t: float
    seq: int
    source: str
    meta: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        img = self.image
        if not isinstance(img, np.ndarray) or img.dtype != np.uint8:
            raise ValueError("Frame.image must be a numpy uint8 array")
        if img.ndim != 3 or img.shape[2] != 3 or img.shape[0] == 0 or img.shape[1] == 0:
            raise ValueError(f"Frame.image must be HxWx3 BGR, got shape {img.shape}")
        img.flags.writeable = False

    @property
    def size(self) -> tuple[int, int]:
        """(width, height), PIL order."""
        return int(self.image.shape[1]), int(self.image.shape[0])


@runtime_checkable
class Buttons(Protocol):
    """A source of raw edges; callbacks enqueue, the main loop drains."""

    @property
    def names(self) -> tuple[str, ...]:
        """Logical button names this source can report."""
        ...

    def events(self, timeout: float = 0.0) -> list[ButtonEvent]:
        """Wait up to ``timeout`` seconds for the first event, then drain all queued ones."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Display(Protocol):
    """A 128x64 one-bit panel; every method is safe to call on a missing panel."""

    @property
    def size(self) -> tuple[int, int]: ...

    def show(self, image: Image.Image) -> None:
        """Put a mode "1" image of exactly :attr:`size` on the panel."""
        ...

    def clear(self) -> None: ...

    def set_contrast(self, level: int) -> None:
        """0..255; dim when idle against burn-in (not for fades)."""
        ...

    def sleep(self, asleep: bool) -> None:
        """Switch the panel off (True) or back on (False) without losing the frame."""
        ...

    def maintain(self) -> None:
        """Called every loop turn: retry a panel missing at start, re-send the init now and then."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Camera(Protocol):
    """Frames on demand; a dead source raises instead of blocking forever."""

    @property
    def name(self) -> str: ...

    def start(self) -> None: ...

    def grab(self) -> Frame:
        """Next frame.

        Raises:
            CameraStoppedError: not started, stopped, unplugged or timed out.
            EndOfFramesError: a replay/generated source is exhausted (clean end).
        """
        ...

    def stop(self) -> None: ...

    def relock(self) -> dict[str, Any]:
        """Measure exposure and white balance again and hold them (daylight drifts).

        Called between games only, never mid-game; recorded sources return ``{}``.
        """
        ...

    def __iter__(self) -> Iterator[Frame]:
        """Frames until the source ends cleanly."""
        ...

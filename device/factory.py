"""One place that decides which backend each port gets.

``real`` touches hardware (lgpio, I2C, camera); ``fake`` and ``replay`` never do,
whatever the settings say - a fake backend silently reaching for real pins is
exactly the accident this module exists to prevent. A display or buttons that are
not the Pi's hardware (``display.kind`` window/capture/none, ``buttons.kind`` keys:
laptop mode) are honoured by every backend.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from device.buttons import FakeButtons, GpioButtons, open_buttons
from device.camera import (
    BGRImage,
    GeneratedCamera,
    OpenCvCamera,
    Picamera2Camera,
    ReplayCamera,
    grey_frames,
)
from device.clock import Clock, monotonic
from device.display import NullDisplay, OledDisplay, open_display, open_dummy_luma
from device.settings import CameraSettings, DisplaySettings, HardwareSettings

log = logging.getLogger(__name__)

Backend = Literal["real", "fake", "replay"]
BACKENDS: tuple[Backend, ...] = ("real", "fake", "replay")

AnyCamera = Picamera2Camera | OpenCvCamera | ReplayCamera | GeneratedCamera

if TYPE_CHECKING:
    from device.keys import KeyButtons

    AnyButtons = GpioButtons | KeyButtons
else:
    AnyButtons = GpioButtons


@dataclass(frozen=True)
class Hardware:
    """The three ports the app drives, plus how they were built."""

    backend: Backend
    buttons: AnyButtons
    display: OledDisplay | NullDisplay
    camera: AnyCamera

    def close(self) -> None:
        """Stop the camera, blank the panel, release the pins; safe to call twice."""
        for part in (self.camera, self.display, self.buttons):
            try:
                part.close()
            except Exception:
                log.exception("closing %s failed", type(part).__name__)

    def __enter__(self) -> Hardware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _make_camera(
    settings: CameraSettings,
    backend: Backend,
    clock: Clock,
    frames: Callable[[int], BGRImage | None] | None,
) -> AnyCamera:
    kind = settings.kind
    if kind == "replay" or (backend == "replay" and settings.replay_dir is not None):
        if settings.replay_dir is None:
            raise ValueError("camera: the replay backend needs camera.replay_dir")
        return ReplayCamera(
            settings.replay_dir, clock=clock, loop=settings.loop, hold=settings.hold
        )
    if backend == "replay":
        raise ValueError("camera: the replay backend needs camera.replay_dir")
    if kind == "generated" or backend == "fake":
        return GeneratedCamera(frames or grey_frames(), clock=clock)
    if kind == "opencv":
        return OpenCvCamera(settings, clock=clock)
    return Picamera2Camera(settings, clock=clock)


def _emulated_display(settings: DisplaySettings, clock: Clock) -> OledDisplay | NullDisplay | None:
    """The display for a kind that is not the I2C panel; None for the panel itself."""
    if settings.kind == "none":
        return NullDisplay("display.kind is 'none'")
    if settings.kind in ("window", "capture"):
        from device.emulator import open_emulated_display

        return open_emulated_display(settings, clock=clock)
    return None


def _key_buttons(clock: Clock) -> AnyButtons:
    from device.keys import KeyButtons

    return KeyButtons(clock=clock)


def make_hardware(
    settings: HardwareSettings,
    backend: Backend = "real",
    *,
    clock: Clock = monotonic,
    pin_factory: Any = None,
    i2c_bus: Any = None,
    frames: Callable[[int], BGRImage | None] | None = None,
) -> Hardware:
    """Build buttons, display and camera for ``backend``.

    real:   gpiozero on lgpio (or ``pin_factory``), luma on I2C (or ``i2c_bus``;
            a missing panel becomes a NullDisplay unless display.required),
            picamera2 / OpenCV / replay per camera.kind. The camera is not started.
    fake:   mock-pin buttons (FakeButtons), luma ``dummy`` display, generated
            frames (``frames`` or grey), or replay when camera.kind is "replay".
    replay: as fake, but frames come from camera.replay_dir (required).
    Any backend: display.kind "window" (luma.emulator's pygame window), "capture"
    (its PNG and GIF devices) or "none", and buttons.kind "keys" (the window's
    keyboard) replace the panel and the pins.

    Raises:
        ValueError: unknown backend or settings that do not fit it.
        DeviceError: real hardware missing or not permitted (with the path).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend != "real" and (pin_factory is not None or i2c_bus is not None):
        raise ValueError(f"backend {backend!r} takes no pin_factory or i2c_bus")
    camera = _make_camera(settings.camera, backend, clock, frames)
    display = _emulated_display(settings.display, clock)
    if display is None and backend != "real":
        display = OledDisplay(open_dummy_luma(settings.display), clock=clock, name="dummy")
    elif display is None:
        display = open_display(settings.display, bus=i2c_bus, clock=clock)
    try:
        buttons: AnyButtons
        if settings.buttons.kind == "keys":
            buttons = _key_buttons(clock)
        elif backend != "real":
            buttons = FakeButtons(settings.buttons, clock=clock)
        else:
            buttons = open_buttons(settings.buttons, pin_factory=pin_factory, clock=clock)
    except BaseException:
        display.close()
        raise
    return Hardware(backend, buttons, display, camera)

# mypy: disable-error-code="import-untyped,import-not-found"
"""The OLED: luma ssd1306/sh1106 on I2C, luma's ``dummy`` for tests, a null panel.

A missing or flaky panel must never stop the referee: :class:`NullDisplay`
stands in when the panel is absent, and :class:`OledDisplay` turns run-time I2C
faults into a logged, retried degraded state instead of an exception.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from PIL import Image

from device.clock import Clock, monotonic
from device.errors import (
    BackendUnavailableError,
    DeviceError,
    DeviceIOError,
    DeviceNotFoundError,
    DevicePermissionError,
    from_oserror,
)
from device.ports import DISPLAY_SIZE
from device.settings import DisplaySettings

log = logging.getLogger(__name__)


class LumaDevice(Protocol):
    """The part of a luma device we use (ssd1306, sh1106, dummy all have it)."""

    persist: bool

    def display(self, image: Image.Image) -> None: ...
    def contrast(self, level: int) -> None: ...
    def hide(self) -> None: ...
    def show(self) -> None: ...
    def clear(self) -> None: ...
    def cleanup(self) -> None: ...


def check_image(image: Image.Image, size: tuple[int, int] = DISPLAY_SIZE) -> None:
    """Reject what luma would only ``assert`` on (asserts vanish under ``python -O``)."""
    if not isinstance(image, Image.Image):
        raise TypeError(f"expected a PIL image, got {type(image).__name__}")
    if image.mode != "1" or image.size != size:
        raise ValueError(
            f"expected a mode '1' image of {size[0]}x{size[1]}, "
            f"got mode {image.mode!r} {image.size[0]}x{image.size[1]}"
        )


def _translate(exc: BaseException, settings: DisplaySettings) -> DeviceError:
    """Map luma's and the OS's errors to ours, naming the bus and address."""
    where = f"{settings.bus_path} address 0x{settings.i2c_address:02X}"
    import luma.core.error as luma_error

    if isinstance(exc, luma_error.DevicePermissionError):
        return DevicePermissionError(
            f"display: {exc} ({where}); is the user in the i2c group?", settings.bus_path
        )
    if isinstance(exc, luma_error.DeviceNotFoundError):
        return DeviceNotFoundError(
            f"display: {exc} ({settings.driver} on {where}); check the wiring, that I2C is "
            f"enabled and `i2cdetect -y {settings.i2c_port}`",
            settings.bus_path,
        )
    if isinstance(exc, luma_error.Error):
        return DeviceError(f"display: {exc} ({where})")
    if isinstance(exc, OSError):
        return from_oserror(exc, f"display on {where}", settings.bus_path)
    return DeviceError(f"display: {exc} ({where})")


def open_luma_oled(settings: DisplaySettings, *, bus: Any = None) -> LumaDevice:
    """Build the real luma driver; ``bus`` injects an smbus-like object (tests, emulators).

    Raises:
        DeviceNotFoundError / DevicePermissionError: with the I2C device path.
        BackendUnavailableError: luma.oled or smbus2 is not installed.
    """
    try:
        from luma.core.interface.serial import i2c
        from luma.oled.device import sh1106, ssd1306
    except ImportError as exc:
        raise BackendUnavailableError(f"luma.oled is not installed: {exc}") from exc
    try:
        serial = i2c(bus=bus, port=settings.i2c_port, address=settings.i2c_address)
        oled: LumaDevice
        if settings.driver == "sh1106":
            oled = sh1106(
                serial,
                width=DISPLAY_SIZE[0],
                height=DISPLAY_SIZE[1],
                rotate=settings.rotate,
                page_address_offset=settings.sh1106_column_offset,
            )
        else:
            oled = ssd1306(
                serial, width=DISPLAY_SIZE[0], height=DISPLAY_SIZE[1], rotate=settings.rotate
            )
        oled.contrast(settings.contrast)
    except ImportError as exc:  # smbus2, imported inside luma's i2c()
        raise BackendUnavailableError(f"smbus2 is not installed: {exc}") from exc
    except Exception as exc:
        raise _translate(exc, settings) from exc
    oled.persist = False  # luma's atexit hook blanks the panel on a normal exit
    return oled


def open_dummy_luma(settings: DisplaySettings | None = None) -> LumaDevice:
    """luma's in-memory device in mode "1", so tests see thresholding as the panel would."""
    from luma.core.device import dummy

    rotate = settings.rotate if settings is not None else 0
    oled: LumaDevice = dummy(width=DISPLAY_SIZE[0], height=DISPLAY_SIZE[1], rotate=rotate, mode="1")
    return oled


def _io_errors() -> tuple[type[BaseException], ...]:
    """What a flaky panel raises: luma maps EIO/EREMOTEIO to its own errors, else OSError.

    Anything else (a TypeError, say) is a bug and must surface, not count as a fault.
    """
    import luma.core.error as luma_error

    return (OSError, luma_error.Error)


class OledDisplay:
    """A :class:`~device.ports.Display` over any luma device.

    ``reopen`` rebuilds the luma device after an I/O fault (a glitch may have
    reset the controller); attempts are spaced ``retry_s`` apart on ``clock``.
    """

    def __init__(
        self,
        oled: LumaDevice,
        *,
        reopen: Callable[[], LumaDevice] | None = None,
        clock: Clock = monotonic,
        retry_s: float = 5.0,
        contrast: int | None = None,
        name: str = "oled",
    ) -> None:
        self._oled: LumaDevice | None = oled
        self._reopen = reopen
        self._clock = clock
        self._retry_s = retry_s
        self._contrast = contrast
        self._asleep = False
        self._next_retry = 0.0
        self.name = name
        #: Faults seen so far (a health counter for selftest/status screens).
        self.faults = 0
        self.last_image: Image.Image | None = None

    @property
    def size(self) -> tuple[int, int]:
        return DISPLAY_SIZE

    @property
    def healthy(self) -> bool:
        return self._oled is not None

    @property
    def luma(self) -> LumaDevice | None:
        """The underlying luma device (``dummy`` keeps the last frame in ``.image``)."""
        return self._oled

    def _call(self, action: Callable[[LumaDevice], None]) -> None:
        oled = self._oled
        if oled is None:
            oled = self._try_reopen()
            if oled is None:
                return
        try:
            action(oled)
        except _io_errors() as exc:
            self._fault(exc)

    def _fault(self, exc: BaseException) -> None:
        self.faults += 1
        if self._oled is not None and self._reopen is not None:
            # The next attempt builds a new device: release this one's bus handle (luma
            # closes only buses it opened itself; an injected bus stays the caller's).
            serial = getattr(self._oled, "_serial_interface", None)
            with contextlib.suppress(Exception):
                serial.cleanup()  # type: ignore[union-attr]
        if self._oled is not None:
            log.warning(
                "display %s failed (%s); retrying every %.0f s", self.name, exc, self._retry_s
            )
        self._oled = None
        self._next_retry = self._clock() + self._retry_s

    def _try_reopen(self) -> LumaDevice | None:
        if self._reopen is None or self._clock() < self._next_retry:
            return None
        try:
            oled = self._reopen()
            if self._contrast is not None:
                oled.contrast(self._contrast)
            if self._asleep:
                oled.hide()
        except Exception as exc:
            self.faults += 1
            self._next_retry = self._clock() + self._retry_s
            log.debug("display %s still unavailable: %s", self.name, exc)
            return None
        log.warning("display %s is back", self.name)
        self._oled = oled
        return oled

    def show(self, image: Image.Image) -> None:
        check_image(image, self.size)
        self.last_image = image.copy()
        self._call(lambda oled: oled.display(image))

    def clear(self) -> None:
        self.last_image = Image.new("1", self.size, 0)
        self._call(lambda oled: oled.clear())

    def set_contrast(self, level: int) -> None:
        if not 0 <= level <= 255:
            raise ValueError(f"contrast: expected 0..255, got {level!r}")
        self._contrast = level
        self._call(lambda oled: oled.contrast(level))

    def sleep(self, asleep: bool) -> None:
        self._asleep = asleep
        self._call(lambda oled: oled.hide() if asleep else oled.show())

    def close(self) -> None:
        """Blank and switch off the panel, then release the bus; idempotent."""
        oled, self._oled, self._reopen = self._oled, None, None
        if oled is None:
            return
        try:
            oled.persist = False
            oled.cleanup()
        except Exception as exc:
            log.warning("display %s: cleanup failed: %s", self.name, exc)


class NullDisplay:
    """Stands in for a missing panel: remembers the last frame, logs the reason once."""

    def __init__(self, reason: str = "no display configured") -> None:
        self.reason = reason
        self.last_image: Image.Image | None = None
        self.frames_shown = 0
        self._logged = False

    @property
    def size(self) -> tuple[int, int]:
        return DISPLAY_SIZE

    @property
    def healthy(self) -> bool:
        return False

    def _log_once(self) -> None:
        if not self._logged:
            self._logged = True
            log.warning("running without a display: %s", self.reason)

    def show(self, image: Image.Image) -> None:
        check_image(image, self.size)
        self._log_once()
        self.last_image = image.copy()
        self.frames_shown += 1

    def clear(self) -> None:
        self._log_once()
        self.last_image = Image.new("1", self.size, 0)

    def set_contrast(self, level: int) -> None:
        if not 0 <= level <= 255:
            raise ValueError(f"contrast: expected 0..255, got {level!r}")

    def sleep(self, asleep: bool) -> None:
        pass

    def close(self) -> None:
        pass


def open_display(
    settings: DisplaySettings, *, bus: Any = None, clock: Clock = monotonic
) -> OledDisplay | NullDisplay:
    """The real panel, or a :class:`NullDisplay` when it is missing and not ``required``.

    A permission problem is never papered over: it is a deployment bug.
    """
    try:
        oled = open_luma_oled(settings, bus=bus)
    except DeviceNotFoundError as exc:
        if settings.required:
            raise
        return NullDisplay(str(exc))
    except DeviceIOError as exc:
        if settings.required:
            raise
        return NullDisplay(str(exc))
    return OledDisplay(
        oled,
        reopen=lambda: open_luma_oled(settings, bus=bus),
        clock=clock,
        contrast=settings.contrast,
        name=f"{settings.driver}@0x{settings.i2c_address:02X}",
    )

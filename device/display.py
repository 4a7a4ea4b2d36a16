# mypy: disable-error-code="import-untyped,import-not-found"
"""The OLED: luma ssd1306/sh1106 on I2C, luma's ``dummy`` for tests, a null panel.

A missing or flaky panel must never stop the referee. :class:`OledDisplay`
turns a panel missing at start and run-time I2C faults into a logged degraded
state that is retried on the injected clock, and re-sends the controller's init
sequence now and then: static from a visitor can reset an SSD1306 with no I/O
error at all (the panel just goes dark). :class:`NullDisplay` is for "no panel
fitted".
"""

from __future__ import annotations

import contextlib
import inspect
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
    def command(self, *cmd: int) -> None: ...
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
    sh1106_extra: dict[str, int] = {}
    if settings.driver == "sh1106":
        sh1106_extra = sh1106_offset_kwargs(sh1106, settings.sh1106_column_offset)
    try:
        serial = i2c(bus=bus, port=settings.i2c_port, address=settings.i2c_address)
        oled: LumaDevice
        if settings.driver == "sh1106":
            oled = sh1106(
                serial,
                width=DISPLAY_SIZE[0],
                height=DISPLAY_SIZE[1],
                rotate=settings.rotate,
                **sh1106_extra,
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


#: The column offset luma.oled's sh1106 used before it became a parameter (3.16.0).
SH1106_BUILTIN_OFFSET = 2


def sh1106_offset_kwargs(driver: Any, offset: int) -> dict[str, int]:
    """How to pass the SH1106 column offset to this luma.oled, or refuse clearly.

    luma.oled takes ``page_address_offset`` only from 3.16.0; older versions swallow
    the keyword in ``**kwargs`` and keep 2, so a configured 0 would be silently
    ignored. Then only the built-in 2 is honest.
    """
    params = inspect.signature(driver.__init__).parameters
    if "page_address_offset" in params:
        return {"page_address_offset": offset}
    if offset == SH1106_BUILTIN_OFFSET:
        return {}
    version = _luma_oled_version()
    raise BackendUnavailableError(
        f"display: sh1106_column_offset = {offset} needs luma.oled >= 3.16.0, found {version} "
        "(it would be ignored); re-run systemd/install.sh to upgrade the venv"
    )


def _luma_oled_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("luma.oled")
    except metadata.PackageNotFoundError:
        return "unknown"


def init_sequence(driver: str, contrast: int, *, on: bool) -> list[int]:
    """The controller set-up for a 128x64 panel, as luma sends it, minus the clear.

    Re-sent periodically: a controller reset by static comes back with default
    registers (wrong multiplex, charge pump off) and display off, while I2C
    writes keep succeeding. The display-off command at the start of luma's
    sequence is left out so a healthy panel does not blink.
    """
    from luma.oled import const

    if driver == "sh1106":
        c: Any = const.sh1106
        body = [
            c.MEMORYMODE,
            c.SETHIGHCOLUMN, 0xB0, 0xC8,
            c.SETLOWCOLUMN, 0x10, 0x40,
            c.SETSEGMENTREMAP,
            c.NORMALDISPLAY,
            c.SETMULTIPLEX, 0x3F,
            c.DISPLAYALLON_RESUME,
            c.SETDISPLAYOFFSET, 0x00,
            c.SETDISPLAYCLOCKDIV, 0xF0,
            c.SETPRECHARGE, 0x22,
            c.SETCOMPINS, 0x12,
            c.SETVCOMDETECT, 0x20,
            c.CHARGEPUMP, 0x14,
        ]  # fmt: skip
    else:
        c = const.ssd1306
        body = [
            c.SETDISPLAYCLOCKDIV, 0x80,
            c.SETMULTIPLEX, 0x3F,
            c.SETDISPLAYOFFSET, 0x00,
            c.SETSTARTLINE,
            c.CHARGEPUMP, 0x14,
            c.MEMORYMODE, 0x00,
            c.SETSEGMENTREMAP,
            c.COMSCANDEC,
            c.SETCOMPINS, 0x12,
            c.SETPRECHARGE, 0xF1,
            c.SETVCOMDETECT, 0x40,
            c.DISPLAYALLON_RESUME,
            c.NORMALDISPLAY,
        ]  # fmt: skip
    return [int(b) for b in body] + [
        int(c.SETCONTRAST),
        contrast,
        int(c.DISPLAYON if on else c.DISPLAYOFF),
    ]


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
    """A :class:`~device.ports.Display` over any luma device, or over none yet.

    ``oled=None`` starts degraded (the panel was missing at start). ``reopen``
    builds a fresh luma device after a fault or while missing; attempts are
    spaced ``retry_s`` apart on ``clock``. ``reinit`` re-sends the controller's
    set-up every ``reinit_s`` (0 = never). Both happen in :meth:`maintain`,
    which the main loop calls every turn, and on the next :meth:`show`; after
    either, the last frame is drawn again (a reset controller lost it).
    """

    def __init__(
        self,
        oled: LumaDevice | None,
        *,
        reopen: Callable[[], LumaDevice] | None = None,
        reinit: Callable[[LumaDevice, bool], None] | None = None,
        clock: Clock = monotonic,
        retry_s: float = 5.0,
        reinit_s: float = 0.0,
        contrast: int | None = None,
        name: str = "oled",
        missing: str | None = None,
    ) -> None:
        self._oled: LumaDevice | None = oled
        self._reopen = reopen
        self._reinit = reinit
        self._clock = clock
        self._retry_s = retry_s
        self._reinit_s = reinit_s
        self._contrast = contrast
        self._asleep = False
        self._next_retry = 0.0
        self._next_reinit = clock() + reinit_s
        self.name = name
        #: Faults seen so far (a health counter for selftest/status screens).
        self.faults = 0
        #: Successful reopens and re-inits, for the operator's counters.
        self.reopens = 0
        self.reinits = 0
        self.last_image: Image.Image | None = None
        if oled is None:
            self._next_retry = clock() + retry_s
            log.warning(
                "display %s unavailable (%s); retrying every %.0f s",
                name,
                missing or "not opened",
                retry_s,
            )

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
        self.reopens += 1
        self._oled = oled
        self._next_reinit = self._clock() + self._reinit_s
        return oled

    def _redraw(self) -> None:
        image = self.last_image
        if image is not None:
            self._call(lambda oled: oled.display(image))

    def maintain(self) -> None:
        """Reopen a missing panel or re-send the init sequence when due; cheap otherwise.

        Call it every turn of the main loop: a static screen is never shown
        again, so :meth:`show` alone would not notice a panel that went dark.
        """
        if self._oled is None:
            if self._try_reopen() is not None:
                self._redraw()
            return
        if not self._reinit_s or self._reinit is None or self._clock() < self._next_reinit:
            return
        self._next_reinit = self._clock() + self._reinit_s
        reinit = self._reinit
        on = not self._asleep
        self._call(lambda oled: reinit(oled, on))
        if self._oled is not None:
            self.reinits += 1
            self._redraw()

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

    def maintain(self) -> None:
        pass

    def close(self) -> None:
        pass


def open_display(
    settings: DisplaySettings, *, bus: Any = None, clock: Clock = monotonic
) -> OledDisplay:
    """The real panel; when it is missing and not ``required``, a degraded display
    that keeps trying to open it every ``settings.retry_s`` seconds.

    A permission problem is never papered over: it is a deployment bug.
    """

    def reopen() -> LumaDevice:
        return open_luma_oled(settings, bus=bus)

    def reinit(oled: LumaDevice, on: bool) -> None:
        oled.command(*init_sequence(settings.driver, settings.contrast, on=on))

    common: dict[str, Any] = {
        "reopen": reopen,
        "reinit": reinit,
        "clock": clock,
        "retry_s": settings.retry_s,
        "reinit_s": settings.reinit_s,
        "contrast": settings.contrast,
        "name": f"{settings.driver}@0x{settings.i2c_address:02X}",
    }
    try:
        oled: LumaDevice | None = open_luma_oled(settings, bus=bus)
    except (DeviceNotFoundError, DeviceIOError) as exc:
        if settings.required:
            raise
        return OledDisplay(None, missing=str(exc), **common)
    return OledDisplay(oled, **common)

# mypy: disable-error-code="import-untyped,import-not-found"
"""gpiozero buttons (and an optional rotary encoder) that only queue raw edges.

gpiozero calls back on its own thread (synchronously inside ``drive_low()`` on
mock pins), so callbacks do nothing but stamp and enqueue; every decision is
made by companion's input controller on the main loop. The pin factory is
always passed in: gpiozero's global ``Device.pin_factory`` is never consulted,
so nothing here can reach real pins by accident.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from device.clock import Clock, monotonic
from device.errors import BackendUnavailableError, DeviceBusyError, DeviceError, from_oserror
from device.ports import ButtonEvent, Edge
from device.settings import ButtonSettings, EncoderPins

if TYPE_CHECKING:
    from gpiozero import Button, RotaryEncoder
    from gpiozero.pins import Factory
    from gpiozero.pins.mock import MockFactory

log = logging.getLogger(__name__)


class EdgeQueue:
    """Thread-safe FIFO of :class:`ButtonEvent`; the only thing callbacks touch."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._queue: queue.SimpleQueue[ButtonEvent] = queue.SimpleQueue()

    def put(self, button: str, edge: Edge) -> None:
        self._queue.put(ButtonEvent(button, edge, self._clock()))

    def drain(self, timeout: float = 0.0) -> list[ButtonEvent]:
        """Block up to ``timeout`` for the first event, then take whatever is queued."""
        out: list[ButtonEvent] = []
        try:
            if timeout > 0:
                out.append(self._queue.get(timeout=timeout))
            else:
                out.append(self._queue.get_nowait())
        except queue.Empty:
            return out
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out


def lgpio_factory(chip: int | None = None) -> Factory:
    """The Pi's pin factory (the only one that supports a Pi 5), imported lazily."""
    try:
        from gpiozero.pins.lgpio import LGPIOFactory
    except ImportError as exc:  # lgpio itself is imported by the module
        raise BackendUnavailableError(
            f"lgpio is not installed ({exc}); on the Pi: apt install python3-lgpio"
        ) from exc
    try:
        return LGPIOFactory(chip=chip)
    except OSError as exc:
        raise from_oserror(exc, "GPIO chip", f"/dev/gpiochip{chip or 0}") from exc
    except Exception as exc:  # lgpio.error is not an OSError
        raise DeviceError(
            f"cannot open GPIO chip {chip if chip is not None else 'auto'}: {exc}"
        ) from exc


def mock_factory() -> MockFactory:
    """A fresh gpiozero MockFactory with a fixed board revision (env vars not consulted)."""
    from gpiozero.pins.mock import MockFactory, MockPin

    return MockFactory(revision="a02082", pin_class=MockPin)


class GpioButtons:
    """Buttons (and an encoder) on an explicit gpiozero pin factory.

    Keeps a reference to every gpiozero device: gpiozero holds callbacks weakly
    and a dropped device silently stops firing.
    """

    def __init__(
        self,
        settings: ButtonSettings,
        *,
        pin_factory: Factory,
        clock: Clock = monotonic,
        owns_factory: bool = False,
    ) -> None:
        if pin_factory is None:
            raise ValueError("GpioButtons needs an explicit pin_factory")
        from gpiozero import Button, RotaryEncoder
        from gpiozero.exc import GPIOPinInUse

        self.settings = settings
        self.pin_factory = pin_factory
        self._owns_factory = owns_factory
        self._edges = EdgeQueue(clock)
        self._buttons: dict[str, Button] = {}
        self._encoder: RotaryEncoder | None = None
        self._names = settings.names()
        pins: dict[str, int] = dict(settings.pins)
        if settings.layout == "encoder" and settings.encoder.switch is not None:
            pins["ok"] = settings.encoder.switch
        try:
            for name, pin in pins.items():
                self._buttons[name] = self._make_button(Button, name, pin)
            if settings.layout == "encoder":
                self._encoder = self._make_encoder(RotaryEncoder, settings.encoder)
        except GPIOPinInUse as exc:
            self.close()
            raise DeviceBusyError(f"buttons: {exc}") from exc
        except OSError as exc:
            self.close()
            raise from_oserror(exc, "buttons") from exc
        except Exception as exc:  # lgpio.error ("GPIO busy" from another process), PinError
            self.close()
            if "busy" in str(exc).lower():
                raise DeviceBusyError(f"buttons: {exc}") from exc
            raise DeviceError(f"buttons: cannot claim the GPIO pins: {exc}") from exc

    def _make_button(self, cls: type[Button], name: str, pin: int) -> Button:
        button = cls(
            pin,
            pull_up=self.settings.pull_up,
            bounce_time=self.settings.bounce_s or None,
            # We never use when_held; a short hold_time keeps close() from waiting
            # up to a second on gpiozero's hold thread while a button is down.
            hold_time=0.05,
            pin_factory=self.pin_factory,
        )
        button.when_pressed = self._callback(name, Edge.PRESS)
        button.when_released = self._callback(name, Edge.RELEASE)
        return button

    def _make_encoder(self, cls: type[RotaryEncoder], pins: EncoderPins) -> RotaryEncoder:
        encoder = cls(
            pins.a,
            pins.b,
            max_steps=0,
            bounce_time=self.settings.bounce_s or None,
            pin_factory=self.pin_factory,
        )
        encoder.when_rotated_clockwise = self._callback("right", Edge.STEP)
        encoder.when_rotated_counter_clockwise = self._callback("left", Edge.STEP)
        return encoder

    def _callback(self, name: str, edge: Edge) -> Callable[[], None]:
        put = self._edges.put

        def callback() -> None:
            put(name, edge)

        return callback

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    def events(self, timeout: float = 0.0) -> list[ButtonEvent]:
        return self._edges.drain(timeout)

    def is_pressed(self, name: str) -> bool:
        """Current level of a plain button (selftest; the app uses events)."""
        return bool(self._buttons[name].is_pressed)

    def close(self) -> None:
        """Release every pin; idempotent. Closes the pin factory only if it was ours."""
        devices: list[Any] = [*self._buttons.values()]
        if self._encoder is not None:
            devices.append(self._encoder)
        for dev in devices:
            # Each Button's hold thread polls every 0.1 s; ask them all to stop first so
            # their joins overlap instead of adding up (gpiozero GPIOThread.stopping).
            stopping = getattr(getattr(dev, "_hold_thread", None), "stopping", None)
            if stopping is not None:
                stopping.set()
        for dev in devices:
            try:
                dev.close()
            except Exception:  # closing must never mask the original problem
                log.exception("closing %r failed", dev)
        self._buttons.clear()
        self._encoder = None
        if self._owns_factory:
            self._owns_factory = False
            self.pin_factory.close()


class FakeButtons(GpioButtons):
    """GpioButtons on a private MockFactory, with helpers that drive the mock pins.

    The same callback path as on the Pi runs; only the pins are simulated.
    """

    def __init__(self, settings: ButtonSettings | None = None, *, clock: Clock = monotonic) -> None:
        self._mock = mock_factory()
        super().__init__(settings or ButtonSettings(), pin_factory=self._mock, clock=clock)

    def _pin_number(self, name: str) -> int:
        if name in self.settings.pins:
            return self.settings.pins[name]
        sw = self.settings.encoder.switch
        if name == "ok" and self.settings.layout == "encoder" and sw is not None:
            return sw
        raise KeyError(f"no button named {name!r}; have {', '.join(self.names)}")

    def press(self, name: str) -> None:
        """Close the contact (drive the pin to its active level)."""
        pin = self._mock.pin(self._pin_number(name))
        pin.drive_low() if self.settings.pull_up else pin.drive_high()

    def release(self, name: str) -> None:
        pin = self._mock.pin(self._pin_number(name))
        pin.drive_high() if self.settings.pull_up else pin.drive_low()

    def turn(self, steps: int) -> None:
        """Rotate the encoder by whole detents: positive = clockwise = ``right``."""
        if self.settings.layout != "encoder":
            raise ValueError("turn() needs the encoder layout")
        a = self._mock.pin(self.settings.encoder.a)
        b = self._mock.pin(self.settings.encoder.b)
        first, second = (a, b) if steps > 0 else (b, a)
        for _ in range(abs(steps)):
            first.drive_low()
            second.drive_low()
            first.drive_high()
            second.drive_high()

    def close(self) -> None:
        super().close()
        self._mock.reset()


def open_buttons(
    settings: ButtonSettings, *, pin_factory: Factory | None, clock: Clock = monotonic
) -> GpioButtons:
    """Real buttons: on the given factory, or a fresh lgpio factory (never gpiozero's default)."""
    if pin_factory is not None:
        return GpioButtons(settings, pin_factory=pin_factory, clock=clock)
    factory = lgpio_factory(settings.chip)
    try:
        return GpioButtons(settings, pin_factory=factory, clock=clock, owns_factory=True)
    except BaseException:
        factory.close()
        raise


def describe(settings: ButtonSettings) -> Mapping[str, int]:
    """Name -> BCM pin for every input, for selftest output and wiring docs."""
    out = dict(settings.pins)
    if settings.layout == "encoder":
        out |= {"encoder.a": settings.encoder.a, "encoder.b": settings.encoder.b}
        if settings.encoder.switch is not None:
            out["ok"] = settings.encoder.switch
    return out

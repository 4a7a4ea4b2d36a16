"""GPIO buttons on gpiozero's MockFactory: callbacks only queue stamped raw edges."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import gpiozero
import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from device.buttons import EdgeQueue, FakeButtons, GpioButtons, describe, open_buttons
from device.clock import FakeClock
from device.errors import BackendUnavailableError, DeviceBusyError, DeviceError
from device.ports import ButtonEvent, Buttons, Edge
from device.settings import ButtonSettings, EncoderPins

P, R, S = Edge.PRESS, Edge.RELEASE, Edge.STEP


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    mock = MockFactory(revision="a02082", pin_class=MockPin)
    yield mock
    mock.reset()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(100.0)


def test_press_and_release_are_queued_with_the_injected_clock(
    factory: MockFactory, clock: FakeClock
) -> None:
    buttons = GpioButtons(ButtonSettings(), pin_factory=factory, clock=clock)
    try:
        factory.pin(13).drive_low()
        clock.advance(0.25)
        factory.pin(13).drive_high()
        factory.pin(5).drive_low()
        assert buttons.events() == [
            ButtonEvent("ok", P, 100.0),
            ButtonEvent("ok", R, 100.25),
            ButtonEvent("left", P, 100.25),
        ]
        assert buttons.events() == []  # drained
        assert buttons.is_pressed("left") and not buttons.is_pressed("ok")
    finally:
        buttons.close()


def test_the_global_pin_factory_is_neither_used_nor_changed(factory: MockFactory) -> None:
    before = gpiozero.Device.pin_factory
    buttons = GpioButtons(ButtonSettings(), pin_factory=factory)
    try:
        assert gpiozero.Device.pin_factory is before
        assert all(b.pin_factory is factory for b in buttons._buttons.values())
    finally:
        buttons.close()


def test_a_pin_factory_is_required() -> None:
    with pytest.raises(ValueError, match="explicit pin_factory"):
        GpioButtons(ButtonSettings(), pin_factory=None)


def test_default_layout_names_and_protocol(factory: MockFactory) -> None:
    buttons = GpioButtons(ButtonSettings(), pin_factory=factory)
    try:
        assert buttons.names == ("left", "right", "ok", "back")
        assert isinstance(buttons, Buttons)
    finally:
        buttons.close()


def test_active_high_wiring_without_pull_up(factory: MockFactory, clock: FakeClock) -> None:
    buttons = GpioButtons(
        ButtonSettings(pins={"ok": 13}, pull_up=False), pin_factory=factory, clock=clock
    )
    try:
        factory.pin(13).drive_high()
        factory.pin(13).drive_low()
        assert [e.edge for e in buttons.events()] == [P, R]
    finally:
        buttons.close()


def test_mock_pins_do_not_debounce_so_chatter_reaches_the_queue(
    factory: MockFactory, clock: FakeClock
) -> None:
    """Documents why debouncing lives in companion.ui.input: bounce_time is ignored by mocks."""
    buttons = GpioButtons(
        ButtonSettings(pins={"ok": 13}, bounce_s=0.05), pin_factory=factory, clock=clock
    )
    try:
        pin = factory.pin(13)
        for _ in range(3):
            pin.drive_low()
            clock.advance(0.001)
            pin.drive_high()
            clock.advance(0.001)
        assert [e.edge for e in buttons.events()] == [P, R] * 3
    finally:
        buttons.close()


def test_a_pin_used_twice_is_a_busy_error_and_close_frees_it(factory: MockFactory) -> None:
    first = GpioButtons(ButtonSettings(pins={"ok": 13}), pin_factory=factory)
    with pytest.raises(DeviceBusyError, match="GPIO13"):
        GpioButtons(ButtonSettings(pins={"back": 13}), pin_factory=factory)
    first.close()
    first.close()  # idempotent
    second = GpioButtons(ButtonSettings(pins={"back": 13}), pin_factory=factory)
    second.close()


def test_a_failed_construction_releases_the_pins_it_had_claimed(factory: MockFactory) -> None:
    holder = GpioButtons(ButtonSettings(pins={"x": 19}), pin_factory=factory)
    with pytest.raises(DeviceBusyError):
        GpioButtons(ButtonSettings(pins={"ok": 13, "back": 19}), pin_factory=factory)
    holder.close()
    again = GpioButtons(ButtonSettings(pins={"ok": 13}), pin_factory=factory)
    again.close()


def test_rotary_encoder_reports_steps_and_its_switch_as_ok(clock: FakeClock) -> None:
    settings = ButtonSettings(layout="encoder", pins={"back": 19}, encoder=EncoderPins(20, 21, 26))
    buttons = FakeButtons(settings, clock=clock)
    try:
        assert set(buttons.names) == {"back", "left", "right", "ok"}
        buttons.turn(2)
        buttons.turn(-1)
        buttons.press("ok")
        buttons.release("ok")
        buttons.press("back")
        assert [(e.button, e.edge) for e in buttons.events()] == [
            ("right", S),
            ("right", S),
            ("left", S),
            ("ok", P),
            ("ok", R),
            ("back", P),
        ]
    finally:
        buttons.close()


def test_fake_buttons_drive_the_real_callback_path(clock: FakeClock) -> None:
    buttons = FakeButtons(clock=clock)
    try:
        buttons.press("back")
        clock.advance(1.0)
        buttons.release("back")
        assert buttons.events() == [ButtonEvent("back", P, 100.0), ButtonEvent("back", R, 101.0)]
        with pytest.raises(KeyError, match="no button named 'menu'"):
            buttons.press("menu")
        with pytest.raises(ValueError, match="encoder"):
            buttons.turn(1)
    finally:
        buttons.close()


def test_two_fake_button_sets_do_not_share_pins() -> None:
    a, b = FakeButtons(), FakeButtons()
    try:
        a.press("ok")
        assert [e.button for e in a.events()] == ["ok"]
        assert b.events() == []
    finally:
        a.close()
        b.close()


def test_events_returns_at_once_when_something_is_queued() -> None:
    queue = EdgeQueue(FakeClock(5.0))
    queue.put("ok", P)
    assert queue.drain(timeout=30.0) == [ButtonEvent("ok", P, 5.0)]
    assert queue.drain() == []


def test_the_queue_is_safe_to_fill_from_several_threads() -> None:
    queue = EdgeQueue(FakeClock())

    def worker(name: str) -> None:
        for _ in range(500):
            queue.put(name, P)

    threads = [threading.Thread(target=worker, args=(f"b{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = queue.drain()
    assert len(events) == 2000
    assert {e.button for e in events} == {"b0", "b1", "b2", "b3"}


def test_real_buttons_never_fall_back_when_lgpio_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", None)
    with pytest.raises(BackendUnavailableError, match="lgpio") as info:
        open_buttons(ButtonSettings(), pin_factory=None)
    assert isinstance(info.value, ImportError) and isinstance(info.value, DeviceError)


def test_open_buttons_uses_a_given_factory(factory: MockFactory) -> None:
    buttons = open_buttons(ButtonSettings(pins={"ok": 13}), pin_factory=factory)
    try:
        factory.pin(13).drive_low()
        assert [e.button for e in buttons.events()] == ["ok"]
    finally:
        buttons.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pins": {"ok": 2}}, "reserved for I2C1 SDA"),
        ({"pins": {"ok": 3}}, "reserved for I2C1 SCL"),
        ({"pins": {"ok": 0}}, "GPIO0 is reserved for ID_SD \\(HAT EEPROM\\)"),
        ({"pins": {"ok": 1}}, "GPIO1 is reserved for ID_SC"),
        ({"pins": {"ok": 14}}, "UART"),
        ({"pins": {"ok": 40}}, "0..27"),
        ({"pins": {"ok": 13, "back": 13}}, "GPIO13 is used twice"),
        ({"layout": "encoder", "pins": {"left": 5}}, "already provided by the encoder"),
        ({"layout": "dial"}, "layout"),
        ({"bounce_s": 5.0}, "bounce_s"),
    ],
)
def test_invalid_button_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ButtonSettings(**kwargs)  # type: ignore[arg-type]


def test_describe_lists_every_claimed_pin() -> None:
    assert describe(ButtonSettings()) == {"left": 5, "right": 6, "ok": 13, "back": 19}
    encoder = ButtonSettings(layout="encoder", pins={"back": 19})
    assert describe(encoder) == {"back": 19, "encoder.a": 20, "encoder.b": 21, "ok": 26}


def test_a_library_error_while_claiming_pins_becomes_a_device_error(
    factory: MockFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    class LgpioError(Exception):
        pass

    def busy(*args: object, **kwargs: object) -> None:
        raise LgpioError("GPIO busy")

    monkeypatch.setattr(gpiozero, "Button", busy)
    with pytest.raises(DeviceBusyError, match="GPIO busy"):
        GpioButtons(ButtonSettings(), pin_factory=factory)

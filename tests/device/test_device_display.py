"""The OLED port: luma dummy and real drivers on a recording bus, the null panel, faults."""

from __future__ import annotations

import errno
import logging

import pytest
import smbus2
from PIL import Image, ImageDraw

from device.clock import FakeClock
from device.display import (
    NullDisplay,
    OledDisplay,
    open_display,
    open_dummy_luma,
    open_luma_oled,
)
from device.errors import DeviceNotFoundError, DevicePermissionError
from device.ports import Display
from device.settings import DisplaySettings

# luma.oled 3.16 calls Image.getdata(), deprecated in Pillow 13 (see the hardware notes).
pytestmark = pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")


class RecordingBus:
    """An smbus-like object: records every block write; can be made to fail like a loose cable."""

    def __init__(self, fail_errno: int | None = None) -> None:
        self.writes: list[tuple[int, int, list[int]]] = []
        self.fail_errno = fail_errno

    def write_i2c_block_data(self, addr: int, reg: int, data: list[int]) -> None:
        if self.fail_errno is not None:
            raise OSError(self.fail_errno, "Remote I/O error")
        self.writes.append((addr, reg, list(data)))

    def close(self) -> None:
        pass

    def commands(self) -> list[list[int]]:
        return [data for _, reg, data in self.writes if reg == 0x00]


def frame_with_box() -> Image.Image:
    image = Image.new("1", (128, 64), 0)
    ImageDraw.Draw(image).rectangle((10, 5, 40, 20), fill=1)
    return image


def test_dummy_display_keeps_exactly_the_frame_shown() -> None:
    display = OledDisplay(open_dummy_luma(), name="dummy")
    image = frame_with_box()
    display.show(image)
    luma = display.luma
    assert luma is not None and luma.image.mode == "1"
    assert luma.image.tobytes() == image.tobytes()
    assert display.last_image is not None and display.last_image.tobytes() == image.tobytes()
    assert isinstance(display, Display)


def test_rotation_is_applied_by_the_driver() -> None:
    display = OledDisplay(open_dummy_luma(DisplaySettings(rotate=2)))
    image = frame_with_box()
    display.show(image)
    assert display.luma is not None
    assert display.luma.image.tobytes() == image.rotate(180).tobytes()


@pytest.mark.parametrize(
    "image",
    [Image.new("RGB", (128, 64)), Image.new("1", (128, 32)), Image.new("L", (128, 64))],
)
def test_wrong_mode_or_size_is_rejected_even_under_python_O(image: Image.Image) -> None:
    display = OledDisplay(open_dummy_luma())
    with pytest.raises(ValueError, match="mode '1' image of 128x64"):
        display.show(image)
    with pytest.raises(ValueError):
        NullDisplay().show(image)


def test_clear_blanks_the_panel() -> None:
    display = OledDisplay(open_dummy_luma())
    display.show(Image.new("1", (128, 64), 1))
    display.clear()
    assert display.luma is not None and display.luma.image.getbbox() is None


def test_ssd1306_on_a_recording_bus_sends_the_frame_in_32_byte_blocks() -> None:
    bus = RecordingBus()
    display = open_display(DisplaySettings(driver="ssd1306", i2c_address=0x3D), bus=bus)
    assert isinstance(display, OledDisplay) and display.healthy
    bus.writes.clear()
    display.show(Image.new("1", (128, 64), 1))
    data = [d for _, reg, d in bus.writes if reg == 0x40]
    assert {addr for addr, _, _ in bus.writes} == {0x3D}
    assert sum(len(d) for d in data) == 128 * 64 // 8
    assert all(byte == 0xFF for block in data for byte in block)


@pytest.mark.parametrize("offset", [0, 2])
def test_sh1106_pages_start_at_the_configured_column_offset(offset: int) -> None:
    bus = RecordingBus()
    display = open_display(DisplaySettings(driver="sh1106", sh1106_column_offset=offset), bus=bus)
    bus.writes.clear()
    display.show(frame_with_box())
    page_commands = bus.commands()
    assert page_commands == [[0xB0 + page, offset, 0x10] for page in range(8)]


def test_contrast_from_settings_and_at_run_time() -> None:
    bus = RecordingBus()
    display = open_display(DisplaySettings(contrast=0x10), bus=bus)
    assert [0x81, 0x10] in bus.commands()
    display.set_contrast(0x40)
    assert bus.commands()[-1] == [0x81, 0x40]
    with pytest.raises(ValueError, match="contrast"):
        display.set_contrast(300)


def test_sleep_switches_the_panel_off_and_on() -> None:
    bus = RecordingBus()
    display = open_display(DisplaySettings(), bus=bus)
    display.sleep(True)
    display.sleep(False)
    assert bus.commands()[-2:] == [[0xAE], [0xAF]]


def test_null_display_stands_in_for_no_panel_and_logs_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="device.display")
    display = NullDisplay("no panel fitted")
    for _ in range(5):
        display.show(frame_with_box())
    display.clear()
    display.set_contrast(10)
    display.sleep(True)
    display.maintain()
    display.close()
    warnings = [r for r in caplog.records if "without a display" in r.getMessage()]
    assert len(warnings) == 1
    assert display.frames_shown == 5 and not display.healthy
    assert isinstance(display, Display)


def test_a_panel_missing_at_start_is_retried_on_the_clock_and_shows_the_last_frame(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The OLED plugged in (or its cable reseated) after boot comes up by itself."""
    caplog.set_level(logging.WARNING, logger="device.display")
    clock = FakeClock()
    bus = RecordingBus(errno.EREMOTEIO)
    display = open_display(DisplaySettings(retry_s=5.0), bus=bus, clock=clock)
    assert isinstance(display, OledDisplay) and not display.healthy
    assert any("0x3C" in r.getMessage() and "retrying" in r.getMessage() for r in caplog.records)
    display.show(frame_with_box())  # no exception, nothing on the wire
    bus.fail_errno = None  # the panel answers from now on
    clock.advance(4.9)
    display.maintain()
    assert not display.healthy and bus.writes == []  # not due yet
    clock.advance(0.2)
    display.maintain()
    assert display.healthy and display.reopens == 1
    frame = [byte for _, reg, d in bus.writes if reg == 0x40 for byte in d]
    assert len(frame) >= 1024 and any(frame)  # the last frame is drawn again, not left blank
    assert any("is back" in r.getMessage() for r in caplog.records)


def test_the_init_sequence_is_resent_periodically_without_blanking() -> None:
    """Static can reset the controller with no I/O error: re-send its set-up now and then."""
    clock = FakeClock()
    bus = RecordingBus()
    display = open_display(DisplaySettings(reinit_s=60.0, contrast=0x30), bus=bus, clock=clock)
    display.show(frame_with_box())
    bus.writes.clear()
    clock.advance(59.0)
    display.maintain()
    assert bus.writes == []
    clock.advance(1.0)
    display.maintain()
    commands = bus.commands()
    init = commands[0]
    assert init[:2] == [0xD5, 0x80] and init[7:9] == [0x8D, 0x14]  # clock div, charge pump
    assert init[-3:] == [0x81, 0x30, 0xAF]  # contrast kept, display on
    assert 0xAE not in init  # no display-off: a healthy panel does not blink
    frame = [byte for _, reg, d in bus.writes if reg == 0x40 for byte in d]
    assert len(frame) == 1024 and any(frame)  # redrawn: a reset controller lost its RAM
    assert display.reinits == 1
    clock.advance(30.0)
    bus.writes.clear()
    display.maintain()
    assert bus.writes == []  # next one 60 s after the last


def test_reinit_keeps_a_sleeping_panel_off() -> None:
    clock = FakeClock()
    bus = RecordingBus()
    display = open_display(DisplaySettings(driver="sh1106", reinit_s=10.0), bus=bus, clock=clock)
    display.sleep(True)
    bus.writes.clear()
    clock.advance(10.0)
    display.maintain()
    assert bus.commands()[0][-1] == 0xAE


def test_sh1106_offset_on_an_old_luma_is_refused_not_ignored() -> None:
    """luma.oled < 3.16 swallows page_address_offset in **kwargs and keeps 2."""
    from device.display import sh1106_offset_kwargs
    from device.errors import BackendUnavailableError

    class OldSh1106:
        def __init__(self, serial_interface: object = None, **kwargs: object) -> None:
            pass

    class NewSh1106:
        def __init__(self, serial_interface: object = None, page_address_offset: int = 2) -> None:
            pass

    assert sh1106_offset_kwargs(NewSh1106, 0) == {"page_address_offset": 0}
    assert sh1106_offset_kwargs(OldSh1106, 2) == {}
    with pytest.raises(BackendUnavailableError, match=r"luma.oled >= 3.16.0"):
        sh1106_offset_kwargs(OldSh1106, 0)


def test_an_old_luma_is_refused_through_open_luma_oled_only_for_the_sh1106(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import luma.oled.device as luma_device

    from device.errors import BackendUnavailableError

    class OldSh1106(luma_device.sh1106):  # type: ignore[misc]
        def __init__(self, serial_interface: object = None, **kwargs: object) -> None:
            raise AssertionError("must not be built with an offset it ignores")

    monkeypatch.setattr(luma_device, "sh1106", OldSh1106)
    settings = DisplaySettings(driver="sh1106", sh1106_column_offset=0, required=True)
    with pytest.raises(BackendUnavailableError, match=r"re-run systemd/install\.sh"):
        open_luma_oled(settings, bus=RecordingBus())
    ssd = DisplaySettings(driver="ssd1306", sh1106_column_offset=0)
    assert open_luma_oled(ssd, bus=RecordingBus()) is not None


def test_a_missing_panel_is_an_error_when_required() -> None:
    with pytest.raises(DeviceNotFoundError, match="0x3C") as info:
        open_display(DisplaySettings(required=True), bus=RecordingBus(errno.EREMOTEIO))
    assert isinstance(info.value, FileNotFoundError)
    assert info.value.filename == "/dev/i2c-1"


def test_a_missing_i2c_bus_names_the_device_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_bus(port: int) -> None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", f"/dev/i2c-{port}")

    monkeypatch.setattr(smbus2, "SMBus", no_bus)
    settings = DisplaySettings(i2c_port=3, required=True)
    with pytest.raises(DeviceNotFoundError, match="/dev/i2c-3") as info:
        open_luma_oled(settings)
    assert info.value.filename == "/dev/i2c-3"
    degraded = open_display(DisplaySettings(i2c_port=3))
    assert isinstance(degraded, OledDisplay) and not degraded.healthy


def test_permission_denied_is_never_papered_over(monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(port: int) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", f"/dev/i2c-{port}")

    monkeypatch.setattr(smbus2, "SMBus", denied)
    with pytest.raises(DevicePermissionError, match="i2c group") as info:
        open_display(DisplaySettings())  # not required, still raised
    assert isinstance(info.value, PermissionError) and info.value.filename == "/dev/i2c-1"


def test_a_run_time_fault_degrades_then_recovers_on_the_clock(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="device.display")
    clock = FakeClock()
    bus = RecordingBus()
    display = open_display(DisplaySettings(), bus=bus, clock=clock)
    assert isinstance(display, OledDisplay)
    bus.fail_errno = errno.EIO
    display.show(frame_with_box())  # no exception: the referee keeps running
    assert not display.healthy and display.faults == 1
    clock.advance(1.0)
    display.show(frame_with_box())  # too early to retry: nothing sent
    assert display.faults == 1
    bus.fail_errno = None
    bus.writes.clear()
    clock.advance(5.0)
    display.show(frame_with_box())
    assert display.healthy
    assert [0x81, 0xCF] in bus.commands()  # re-initialised with the configured contrast
    assert sum(len(d) for _, reg, d in bus.writes if reg == 0x40) >= 1024
    messages = [r.getMessage() for r in caplog.records]
    assert sum("failed" in m for m in messages) == 1 and any("is back" in m for m in messages)


def test_close_blanks_and_switches_off_and_is_idempotent() -> None:
    bus = RecordingBus()
    display = open_display(DisplaySettings(), bus=bus)
    display.show(Image.new("1", (128, 64), 1))
    bus.writes.clear()
    display.close()
    display.close()
    assert [0xAE] in bus.commands()
    data = [byte for _, reg, d in bus.writes if reg == 0x40 for byte in d]
    assert data and not any(data)
    display.show(frame_with_box())  # after close: ignored, no exception
    assert not display.healthy


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"driver": "ssd1309"}, "driver"),
        ({"i2c_address": 0x78}, "i2c_address"),
        ({"rotate": 4}, "rotate"),
        ({"rotate": 1}, "rotate: 1 would turn the panel portrait"),
        ({"rotate": 3}, "use 0, or 2 for an upside-down mount"),
        ({"retry_s": 0}, "retry_s"),
        ({"reinit_s": 0.5}, "reinit_s"),
        ({"contrast": 256}, "contrast"),
        ({"sh1106_column_offset": 9}, "sh1106_column_offset"),
    ],
)
def test_invalid_display_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DisplaySettings(**kwargs)  # type: ignore[arg-type]

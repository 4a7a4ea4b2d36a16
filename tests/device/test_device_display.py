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


def test_a_missing_panel_becomes_a_null_display_that_logs_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="device.display")
    display = open_display(DisplaySettings(i2c_address=0x3C), bus=RecordingBus(errno.EREMOTEIO))
    assert isinstance(display, NullDisplay) and not display.healthy
    assert "0x3C" in display.reason and "/dev/i2c-1" in display.reason
    for _ in range(5):
        display.show(frame_with_box())
    display.clear()
    display.set_contrast(10)
    display.sleep(True)
    display.close()
    warnings = [r for r in caplog.records if "without a display" in r.getMessage()]
    assert len(warnings) == 1
    assert display.frames_shown == 5
    assert isinstance(display, Display)


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
    assert isinstance(open_display(DisplaySettings(i2c_port=3)), NullDisplay)


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
        ({"contrast": 256}, "contrast"),
        ({"sh1106_column_offset": 9}, "sh1106_column_offset"),
    ],
)
def test_invalid_display_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DisplaySettings(**kwargs)  # type: ignore[arg-type]

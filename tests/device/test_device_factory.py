"""make_hardware: one switch between real, fake and replay; fakes never reach real hardware."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory, MockPin
from PIL import Image

from device.buttons import FakeButtons, GpioButtons
from device.camera import GeneratedCamera, OpenCvCamera, Picamera2Camera, ReplayCamera
from device.clock import FakeClock
from device.display import OledDisplay
from device.errors import BackendUnavailableError
from device.factory import make_hardware
from device.ports import Buttons, Camera, Display, Edge
from device.settings import CameraSettings, DisplaySettings, HardwareSettings

pytestmark = pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")


class Bus:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.writes = 0

    def write_i2c_block_data(self, addr: int, reg: int, data: list[int]) -> None:
        if self.fail:
            raise OSError(errno.EREMOTEIO, "Remote I/O error")
        self.writes += 1

    def close(self) -> None:
        pass


def test_fake_backend_wires_mock_buttons_dummy_display_and_generated_frames() -> None:
    clock = FakeClock(3.0)
    hw = make_hardware(HardwareSettings(), "fake", clock=clock)
    with hw:
        assert isinstance(hw.buttons, FakeButtons) and isinstance(hw.buttons, Buttons)
        assert isinstance(hw.display, OledDisplay) and isinstance(hw.display, Display)
        assert isinstance(hw.camera, GeneratedCamera) and isinstance(hw.camera, Camera)
        hw.buttons.press("ok")
        assert [(e.button, e.edge, e.t) for e in hw.buttons.events()] == [("ok", Edge.PRESS, 3.0)]
        hw.display.show(Image.new("1", (128, 64), 1))
        assert hw.display.luma is not None and hw.display.luma.image.getbbox() is not None
        hw.camera.start()
        assert hw.camera.grab().image.shape == (480, 640, 3)
    hw.close()  # twice is fine


def test_fake_backend_takes_a_frame_callable() -> None:
    frame = np.full((10, 20, 3), 200, dtype=np.uint8)
    hw = make_hardware(HardwareSettings(), "fake", frames=lambda seq: frame if seq < 2 else None)
    with hw:
        hw.camera.start()
        assert len(list(hw.camera)) == 2


def test_fake_backend_ignores_real_camera_kinds() -> None:
    for camera in (CameraSettings(kind="picamera2"), CameraSettings(kind="opencv")):
        settings = HardwareSettings(camera=camera)
        with make_hardware(settings, "fake") as hw:
            assert isinstance(hw.camera, GeneratedCamera)


def test_fake_backends_refuse_real_hardware_handles() -> None:
    with pytest.raises(ValueError, match="no pin_factory"):
        make_hardware(HardwareSettings(), "fake", pin_factory=MockFactory())


def test_replay_backend_needs_a_folder_and_replays_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="replay_dir"):
        make_hardware(HardwareSettings(), "replay")
    assert cv2.imwrite(str(tmp_path / "a.png"), np.zeros((8, 8, 3), dtype=np.uint8))
    settings = HardwareSettings(camera=CameraSettings(kind="picamera2", replay_dir=tmp_path))
    with make_hardware(settings, "replay") as hw:
        assert isinstance(hw.camera, ReplayCamera) and isinstance(hw.buttons, FakeButtons)
        hw.camera.start()
        assert [f.source for f in hw.camera] == ["a.png"]


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match="backend"):
        make_hardware(HardwareSettings(), "emulator")  # type: ignore[arg-type]


def test_real_backend_on_injected_pins_and_bus() -> None:
    factory = MockFactory(revision="a02082", pin_class=MockPin)
    bus = Bus()
    settings = HardwareSettings(camera=CameraSettings(kind="generated"))
    try:
        with make_hardware(settings, "real", pin_factory=factory, i2c_bus=bus) as hw:
            assert type(hw.buttons) is GpioButtons and hw.buttons.pin_factory is factory
            assert isinstance(hw.display, OledDisplay) and bus.writes > 0
            factory.pin(19).drive_low()
            assert [e.button for e in hw.buttons.events()] == ["back"]
    finally:
        factory.reset()


def test_real_backend_with_a_missing_panel_runs_on_a_degraded_display() -> None:
    factory = MockFactory(revision="a02082", pin_class=MockPin)
    try:
        with make_hardware(
            HardwareSettings(), "real", pin_factory=factory, i2c_bus=Bus(fail=True)
        ) as hw:
            # Not a NullDisplay: it keeps trying to open the panel (hardware.md promises it).
            assert isinstance(hw.display, OledDisplay) and not hw.display.healthy
            assert isinstance(hw.camera, Picamera2Camera)  # built, not started
    finally:
        factory.reset()


def test_real_backend_picks_the_configured_camera() -> None:
    factory = MockFactory(revision="a02082", pin_class=MockPin)
    settings = HardwareSettings(camera=CameraSettings(kind="opencv", device="/dev/video9"))
    try:
        with make_hardware(settings, "real", pin_factory=factory, i2c_bus=Bus()) as hw:
            assert isinstance(hw.camera, OpenCvCamera)
    finally:
        factory.reset()


def test_real_backend_without_lgpio_fails_and_releases_the_display(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", None)
    closed: list[bool] = []
    monkeypatch.setattr(OledDisplay, "close", lambda self: closed.append(True))
    with pytest.raises(BackendUnavailableError):
        make_hardware(HardwareSettings(display=DisplaySettings()), "real", i2c_bus=Bus())
    assert closed == [True]


def test_importing_the_factory_loads_no_hardware_library() -> None:
    code = (
        "import sys, device.factory, device.display, device.camera, device.buttons;"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('gpiozero', 'luma', 'picamera2', 'lgpio', 'smbus2', 'cv2')];"
        "print(','.join(sorted(bad)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""

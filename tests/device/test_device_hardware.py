"""Bring-up checks on a real Pi: `OANQUAN_HARDWARE=1 pytest -m hardware tests/device`.

Uses the default wiring (hardware.md): buttons on GPIO5/6/13/19, the OLED at
0x3C on I2C1, a CSI camera. Skipped everywhere else; nothing here runs in CI.
"""

from __future__ import annotations

import os

import pytest
from PIL import Image, ImageDraw

from device.buttons import lgpio_factory, open_buttons
from device.camera import Picamera2Camera
from device.display import OledDisplay, open_display
from device.settings import ButtonSettings, CameraSettings, DisplaySettings

pytestmark = [
    pytest.mark.hardware,
    pytest.mark.skipif(
        os.environ.get("OANQUAN_HARDWARE") != "1", reason="needs a Pi: set OANQUAN_HARDWARE=1"
    ),
]


def test_oled_answers_and_shows_a_test_pattern() -> None:
    display = open_display(DisplaySettings(required=True))
    assert isinstance(display, OledDisplay)
    image = Image.new("1", (128, 64), 0)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 127, 63), outline=1)
    draw.line((0, 0, 127, 63), fill=1)
    display.show(image)
    display.close()


def test_buttons_claim_and_release_their_pins() -> None:
    factory = lgpio_factory()
    try:
        buttons = open_buttons(ButtonSettings(), pin_factory=factory)
        assert not any(buttons.is_pressed(name) for name in buttons.names)
        buttons.close()
    finally:
        factory.close()


def test_camera_grabs_a_locked_frame() -> None:
    camera = Picamera2Camera(CameraSettings(width=1280, height=720, settle_frames=15))
    camera.start()
    try:
        frame = camera.grab()
        assert frame.image.shape == (720, 1280, 3)
        assert camera.locked["AeEnable"] is False
    finally:
        camera.stop()

"""Laptop mode's backends: the OLED in a pygame window or capture files, the keyboard as buttons.

Headless: SDL's dummy video driver (set here), key events posted to pygame's queue, and
luma.emulator's capture and GIF devices instead of a screen. Time is a FakeClock.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from device.clock import FakeClock
from device.emulator import PIXEL_GAP, PIXEL_OFF, PIXEL_ON, EmulatedPanel, panel_look
from device.errors import DeviceError
from device.factory import make_hardware
from device.keys import MIN_PRESS_S, KeyButtons
from device.ports import Buttons, Display, Edge
from device.settings import (
    ButtonSettings,
    CameraSettings,
    DisplaySettings,
    HardwareSettings,
    laptop_settings,
)


@pytest.fixture
def pygame(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame as pg

    pg.display.init()
    pg.event.clear()
    yield pg
    pg.display.quit()


def key(pg: Any, down: bool, code: int) -> None:
    pg.event.post(pg.event.Event(pg.KEYDOWN if down else pg.KEYUP, key=code))


def edges(buttons: Any) -> list[tuple[str, Edge, float]]:
    return [(e.button, e.edge, e.t) for e in buttons.events()]


def test_panel_look_scales_with_a_dark_gap_between_pixels() -> None:
    screen = Image.new("1", (128, 64), 0)
    screen.putpixel((1, 0), 1)
    look = np.asarray(panel_look(screen, 4))
    assert look.shape == (256, 512, 3)
    assert tuple(look[0, 4]) == PIXEL_ON and tuple(look[2, 6]) == PIXEL_ON  # pixel (1, 0)
    assert tuple(look[0, 7]) == PIXEL_GAP and tuple(look[3, 5]) == PIXEL_GAP  # its gaps
    assert tuple(look[0, 0]) == PIXEL_OFF and tuple(look[10, 10]) == PIXEL_OFF
    assert (np.asarray(panel_look(screen, 1))[0, 1] == PIXEL_ON).all()  # scale 1: no gap


def test_laptop_options_map_to_the_settings_and_refuse_bad_values(tmp_path: Path) -> None:
    base = HardwareSettings()
    s = laptop_settings(base, camera="usb:2", display="window", keys=True)
    assert (s.camera.kind, s.camera.device, s.camera.match_sensor) == ("opencv", 2, False)
    assert (s.display.kind, s.buttons.kind) == ("window", "keys")
    assert s.buttons.names() == ("left", "right", "ok", "back")
    assert laptop_settings(base, camera="usb:/dev/video4").camera.device == "/dev/video4"
    replay = laptop_settings(base, camera=f"replay:{tmp_path}").camera
    assert (replay.kind, replay.replay_dir) == ("replay", tmp_path)
    assert laptop_settings(base) == base  # nothing given: the config stands
    for bad, match in [
        ({"camera": "usb:"}, "--camera"),
        ({"camera": "usb:99"}, "0..63"),
        ({"camera": "webcam"}, "--camera"),
        ({"display": "windows"}, "--display"),
        ({"keys": True}, "--display window"),
    ]:
        with pytest.raises(ValueError, match=match):
            laptop_settings(base, **bad)
    with pytest.raises(ValueError, match="never opens a live camera"):
        laptop_settings(base, camera="usb:0", backend="fake")
    assert laptop_settings(base, camera=f"replay:{tmp_path}", backend="fake").camera == replay
    with pytest.raises(ValueError, match=r"display\.kind = 'window'"):
        HardwareSettings(buttons=ButtonSettings(kind="keys"))


def test_capture_display_writes_a_png_per_frame_and_a_gif_on_close(tmp_path: Path) -> None:
    out = tmp_path / "frames"
    settings = HardwareSettings(display=DisplaySettings(kind="capture", capture_dir=out, scale=3))
    hw = make_hardware(settings, "fake")
    with hw:
        assert isinstance(hw.display, Display)
        for n in range(3):
            screen = Image.new("1", (128, 64), 0)
            screen.putpixel((n, n), 1)
            hw.display.show(screen)
        hw.display.set_contrast(0x40)  # the kiosk dims: the panel redraws, dimmer
    pngs = sorted(out.glob("oled_*.png"))
    assert [p.name for p in pngs] == [f"oled_{i:04}.png" for i in range(1, 5)]
    first = Image.open(pngs[0]).convert("RGB")
    assert first.size == (384, 192) and first.getpixel((0, 0)) == PIXEL_ON
    dim = Image.open(pngs[3]).convert("RGB").getpixel((6, 6))
    assert 0 < dim[0] < PIXEL_ON[0] // 2  # contrast 0x40 of 0xFF
    with Image.open(out / "oled.gif") as gif:
        assert gif.n_frames == 4 and gif.size == (384, 192)


def test_capture_into_a_file_is_one_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("x")
    settings = HardwareSettings(display=DisplaySettings(kind="capture", capture_dir=blocker))
    with pytest.raises(DeviceError, match="display capture folder") as info:
        make_hardware(settings, "fake")
    assert str(blocker) in str(info.value) and "\n" not in str(info.value)


def test_display_none_is_a_null_display() -> None:
    with make_hardware(HardwareSettings(display=DisplaySettings(kind="none")), "fake") as hw:
        assert not hw.display.healthy


def test_laptop_hardware_on_the_real_backend_claims_no_pins_or_bus(
    pygame: Any, tmp_path: Path
) -> None:
    """--camera usb:N --display window --keys: a webcam, a window, the keyboard; no GPIO."""
    settings = laptop_settings(HardwareSettings(), camera="usb:0", display="window", keys=True)
    clock = FakeClock(5.0)
    hw = make_hardware(settings, "real", clock=clock)
    with hw:
        assert isinstance(hw.buttons, KeyButtons) and isinstance(hw.buttons, Buttons)
        assert type(hw.camera).__name__ == "OpenCvCamera" and not hw.camera.running
        screen = Image.new("1", (128, 64), 0)
        screen.putpixel((0, 0), 1)
        hw.display.show(screen)
        window = pygame.display.get_surface()
        assert window is not None and window.get_size() == (512, 256)
        assert tuple(window.get_at((0, 0)))[:3] == PIXEL_ON
        assert tuple(window.get_at((4, 0)))[:3] == PIXEL_OFF
        assert hw.display.healthy
    assert pygame.display.get_surface() is None  # closing the hardware closes the window


def test_keys_become_press_and_release_edges_on_the_injected_clock(pygame: Any) -> None:
    clock = FakeClock(10.0)
    keys = KeyButtons(clock=clock)
    key(pygame, True, pygame.K_RIGHT)
    key(pygame, True, pygame.K_a)  # not a button: ignored
    assert edges(keys) == [("right", Edge.PRESS, 10.0)]
    clock.advance(1.0)  # held for a second: a long press for the input policy
    key(pygame, False, pygame.K_RIGHT)
    assert edges(keys) == [("right", Edge.RELEASE, 11.0)]
    for code, name in [
        (pygame.K_LEFT, "left"),
        (pygame.K_RETURN, "ok"),
        (pygame.K_KP_ENTER, "ok"),
        (pygame.K_BACKSPACE, "back"),
    ]:
        key(pygame, True, code)
        assert edges(keys) == [(name, Edge.PRESS, clock())]
        clock.advance(MIN_PRESS_S)
        key(pygame, False, code)
        assert edges(keys) == [(name, Edge.RELEASE, clock())]
    keys.close()


def test_a_quick_tap_keeps_its_press_long_enough_for_the_debounce(pygame: Any) -> None:
    """Key-down and key-up drained together would share one time stamp and be lost."""
    clock = FakeClock(0.0)
    keys = KeyButtons(clock=clock)
    key(pygame, True, pygame.K_RETURN)
    key(pygame, False, pygame.K_RETURN)
    assert edges(keys) == [("ok", Edge.PRESS, 0.0)]
    clock.advance(0.1)
    assert edges(keys) == []  # the release is held back...
    clock.advance(0.2)
    assert edges(keys) == [("ok", Edge.RELEASE, MIN_PRESS_S)]  # ...stamped when it is due


def test_losing_focus_releases_held_keys(pygame: Any) -> None:
    clock = FakeClock(0.0)
    keys = KeyButtons(clock=clock)
    key(pygame, True, pygame.K_LEFT)
    edges(keys)
    clock.advance(2.0)
    pygame.event.post(pygame.event.Event(pygame.WINDOWFOCUSLOST))
    assert edges(keys) == [("left", Edge.RELEASE, 2.0)]
    assert not keys.is_pressed("left")


@pytest.mark.parametrize("how", ["escape", "close"])
def test_escape_or_closing_the_window_ends_the_program_cleanly(pygame: Any, how: str) -> None:
    keys = KeyButtons(clock=FakeClock())
    if how == "escape":
        key(pygame, True, pygame.K_ESCAPE)
    else:
        pygame.event.post(pygame.event.Event(pygame.QUIT))
    with pytest.raises(SystemExit) as info:
        keys.events()
    assert info.value.code == 0


def test_a_missing_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_pygame(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pygame" or name.startswith("luma.emulator"):
            raise ImportError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pygame)
    settings = HardwareSettings(display=DisplaySettings(kind="window"))
    with pytest.raises(DeviceError, match=r"oanquan-referee\[laptop\]") as info:
        make_hardware(settings, "fake")
    assert "\n" not in str(info.value)


def test_emulated_panel_sends_each_frame_to_every_sink() -> None:
    class Sink:
        def __init__(self) -> None:
            self.images: list[Image.Image] = []
            self.levels: list[int] = []

        def display(self, image: Image.Image) -> None:
            self.images.append(image)

        def contrast(self, level: int) -> None:
            self.levels.append(level)

        def cleanup(self) -> None:
            pass

    a, b = Sink(), Sink()
    closed: list[bool] = []
    panel = EmulatedPanel([a, b], 2, on_close=lambda: closed.append(True))
    panel.display(Image.new("1", (128, 64), 1))
    panel.contrast(10)
    panel.cleanup()
    panel.cleanup()
    assert [im.size for im in a.images] == [(256, 128)] == [im.size for im in b.images]
    assert a.levels == b.levels == [10] and closed == [True]


def test_replay_camera_still_works_with_the_window(pygame: Any, tmp_path: Path) -> None:
    import cv2

    cv2.imwrite(str(tmp_path / "f1.png"), np.full((48, 64, 3), 90, np.uint8))
    settings = HardwareSettings(
        display=DisplaySettings(kind="window", scale=2),
        camera=CameraSettings(kind="replay", replay_dir=tmp_path),
    )
    with make_hardware(settings, "replay") as hw:
        assert hw.display.name == "window"
        hw.camera.start()
        assert hw.camera.grab().image.shape == (48, 64, 3)

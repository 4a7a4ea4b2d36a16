# mypy: disable-error-code="import-untyped,import-not-found"
"""The OLED without a Pi: luma.emulator's pygame window, or its PNG and GIF capture devices.

The 128x64 one-bit screen is drawn as the panel looks (lit pixels pale blue-white, a
dark gap between pixels, the unlit panel near black) at ``scale`` screen pixels per panel
pixel, then handed to luma.emulator devices of that size. pygame and luma.emulator are
the optional ``laptop`` extra, imported only when an emulated display is asked for.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from device.clock import Clock, monotonic
from device.display import OledDisplay
from device.errors import BackendUnavailableError, from_oserror
from device.ports import DISPLAY_SIZE
from device.settings import DisplaySettings

#: A lit pixel of a white SSD1306 (it reads slightly blue) and the unlit panel.
PIXEL_ON = (226, 240, 255)
PIXEL_OFF = (12, 14, 20)
#: The glass between pixels, darker than an unlit pixel.
PIXEL_GAP = (4, 5, 8)
INSTALL_HINT = "pip install 'oanquan-referee[laptop]' (pygame and luma.emulator)"


def panel_look(image: Image.Image, scale: int) -> Image.Image:
    """The one-bit screen as an RGB picture of the panel, ``scale`` pixels per panel pixel.

    From a scale of 3 up each pixel keeps a one-pixel dark gap on its right and bottom,
    as the real panel's pixel grid shows.
    """
    lit = np.asarray(image.convert("1"), dtype=bool)
    big = np.kron(lit, np.ones((scale, scale), dtype=bool)) if scale > 1 else lit
    out = np.empty((*big.shape, 3), dtype=np.uint8)
    out[:] = PIXEL_OFF
    out[big] = PIXEL_ON
    if scale >= 3:
        out[scale - 1 :: scale, :] = PIXEL_GAP
        out[:, scale - 1 :: scale] = PIXEL_GAP
    return Image.fromarray(out, "RGB")


def _emulator_module() -> Any:
    """luma.emulator.device, or one line saying which extra to install."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # no greeting on stdout
    try:
        import pygame  # noqa: F401  # luma.emulator only says "requires pygame"
        from luma.emulator import device
    except ImportError as exc:
        raise BackendUnavailableError(
            f"the emulated OLED needs {exc.name or 'pygame'}: {INSTALL_HINT}"
        ) from exc
    return device


class EmulatedPanel:
    """A :class:`~device.display.LumaDevice` over luma.emulator devices of the scaled size.

    ``OledDisplay`` drives it like the panel (contrast for dimming, hide/show to sleep);
    each frame goes to every sink, e.g. the PNG capture and the GIF together.
    """

    persist = False

    def __init__(self, sinks: Sequence[Any], scale: int, *, on_close: Any = None) -> None:
        self.sinks = list(sinks)
        self.scale = scale
        self._on_close = on_close
        self.frames = 0

    def display(self, image: Image.Image) -> None:
        picture = panel_look(image, self.scale)
        for sink in self.sinks:
            sink.display(picture)
        self.frames += 1

    def command(self, *cmd: int) -> None:
        """No controller to re-initialise."""

    def contrast(self, level: int) -> None:
        for sink in self.sinks:
            sink.contrast(level)

    def hide(self) -> None:
        for sink in self.sinks:
            sink.hide()

    def show(self) -> None:
        for sink in self.sinks:
            sink.show()

    def clear(self) -> None:
        self.display(Image.new("1", DISPLAY_SIZE, 0))

    def cleanup(self) -> None:
        for sink in self.sinks:
            sink.cleanup()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()


def open_window(settings: DisplaySettings) -> EmulatedPanel:
    """The panel in a desktop window (pygame; ``SDL_VIDEODRIVER=dummy`` runs it headless)."""
    device = _emulator_module()
    w, h = DISPLAY_SIZE
    s = settings.scale
    window = device.pygame(width=w * s, height=h * s, mode="RGB", transform="none", scale=1)
    import pygame

    pygame.display.set_caption("oanquan referee")
    return EmulatedPanel([window], s, on_close=pygame.display.quit)


def open_capture(settings: DisplaySettings) -> EmulatedPanel:
    """Every frame shown as ``oled_0001.png``... and all of them in ``oled.gif`` on close."""
    folder = settings.capture_dir
    if folder is None:
        raise ValueError("capture_dir: required when kind is 'capture'")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise from_oserror(exc, "display capture folder", str(folder)) from exc
    if not folder.is_dir():
        raise from_oserror(
            NotADirectoryError(20, "Not a directory"), "display capture folder", str(folder)
        )
    device = _emulator_module()
    w, h = DISPLAY_SIZE
    s = settings.scale
    common: dict[str, Any] = {"width": w * s, "height": h * s, "mode": "RGB", "transform": "none"}
    pngs = device.capture(file_template=str(Path(folder) / "oled_{0:04}.png"), scale=1, **common)
    gif = device.gifanim(
        filename=str(Path(folder) / "oled.gif"),
        duration=settings.gif_frame_s,
        scale=1,
        **common,
    )
    # Written on close, not at interpreter exit (luma's default): the folder is ours to
    # fill while the caller still holds it.
    atexit.unregister(gif.write_animation)

    def write_gif() -> None:
        with contextlib.suppress(Exception):
            atexit.unregister(gif.write_animation)
        gif.write_animation()

    return EmulatedPanel([pngs, gif], s, on_close=write_gif)


def open_emulated_display(settings: DisplaySettings, *, clock: Clock = monotonic) -> OledDisplay:
    """``display.kind`` "window" or "capture" as the app's Display (same degraded-mode logic)."""
    panel = open_window(settings) if settings.kind == "window" else open_capture(settings)
    return OledDisplay(panel, clock=clock, contrast=settings.contrast, name=settings.kind)


__all__ = ["EmulatedPanel", "open_capture", "open_emulated_display", "open_window", "panel_look"]

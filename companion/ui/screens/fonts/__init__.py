"""Bundled bitmap fonts, read from package data so the device needs no system fonts.

The files are BDF (text, reviewable in a diff) and are rasterised by FreeType
at their one strike size; any other size would raise ``OSError: invalid pixel
size``, so the size lives here next to the file name.
"""

from __future__ import annotations

import io
import re
from functools import cache
from importlib import resources
from typing import Final, Literal

from PIL import ImageFont

FontName = Literal["text", "head"]

#: role -> (file, strike height in px)
FILES: Final[dict[FontName, tuple[str, int]]] = {
    "text": ("6x13.bdf", 13),
    "head": ("9x15B.bdf", 15),
}


def _read(file: str) -> bytes:
    return resources.files(__name__).joinpath(file).read_bytes()


@cache
def load(name: FontName) -> ImageFont.FreeTypeFont:
    """The font for a role; cached because the Pi re-renders on every state change."""
    file, size = FILES[name]
    return ImageFont.truetype(io.BytesIO(_read(file)), size)


@cache
def coverage(name: FontName) -> frozenset[int]:
    """Code points that have a real glyph (FreeType would draw DEFAULT_CHAR for others)."""
    text = _read(FILES[name][0]).decode("latin-1")
    codes = {int(m) for m in re.findall(r"^ENCODING (\d+)$", text, flags=re.MULTILINE)}
    codes.discard(0)  # the default "missing" box itself
    return frozenset(codes)


def line_height(name: FontName) -> int:
    """Pixel pitch between lines: the whole cell, so stacked marks never touch."""
    return FILES[name][1]

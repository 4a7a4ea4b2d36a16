"""Every sample screen in both languages, pixel-exact against a golden PNG.

Each frame also goes through luma's ``dummy`` device in mode "1", the same
path a real ssd1306/sh1106 takes (mode and size asserted, no conversion), so a
screen that passes here displays as is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from luma.core.device import dummy  # type: ignore[import-untyped]
from PIL import Image, ImageChops

from companion.ui.screens import LANGS, render_screen
from companion.ui.screens.samples import SAMPLES

GOLDEN = Path(__file__).parent / "golden"
CASES = [(name, lang) for name in SAMPLES for lang in LANGS]


def _through_luma(image: Image.Image) -> Image.Image:
    device = dummy(width=128, height=64, mode="1")
    device.display(image)
    shown: Image.Image = device.image
    return shown


def _differing_pixels(a: Image.Image, b: Image.Image) -> int:
    diff = ImageChops.difference(a.convert("L"), b.convert("L"))
    return diff.width * diff.height - diff.histogram()[0]


@pytest.mark.parametrize(("name", "lang"), CASES, ids=[f"{n}-{lang}" for n, lang in CASES])
def test_screen_matches_golden(name: str, lang: str, update_goldens: bool) -> None:
    image = render_screen(SAMPLES[name], lang)  # type: ignore[arg-type]
    assert image.mode == "1"
    assert image.size == (128, 64)
    shown = _through_luma(image)
    assert shown.mode == "1"
    assert ImageChops.difference(shown, image).getbbox() is None, "luma changed the frame"

    path = GOLDEN / f"{name}.{lang}.png"
    if update_goldens:
        GOLDEN.mkdir(exist_ok=True)
        shown.save(path)
    assert path.exists(), f"no golden {path.name}: run pytest tests/screens --update-goldens"
    with Image.open(path) as stored:
        golden = stored.copy()
    assert golden.size == shown.size
    n = _differing_pixels(golden, shown)
    assert n == 0, f"{path.name}: {n} pixels differ (pytest tests/screens --update-goldens)"


def test_every_golden_belongs_to_a_sample() -> None:
    """A renamed sample must not leave a stale golden behind."""
    expected = {f"{name}.{lang}.png" for name, lang in CASES}
    assert {p.name for p in GOLDEN.glob("*.png")} == expected


def test_rendering_is_pure() -> None:
    """Same value, same pixels: the app may redraw only on state changes."""
    for screen in SAMPLES.values():
        first, second = render_screen(screen, "vi"), render_screen(screen, "vi")
        assert first.tobytes() == second.tobytes()


def test_languages_differ_where_there_is_text() -> None:
    """A screen showing the same pixels in both languages would mean a missed translation."""
    bilingual_by_design = {
        n
        for n, screen in SAMPLES.items()
        if n.startswith("attract") and not screen.page  # type: ignore[union-attr]
    }
    for name, screen in SAMPLES.items():
        same = render_screen(screen, "vi").tobytes() == render_screen(screen, "en").tobytes()
        assert same == (name in bilingual_by_design), name

"""Every catalogue string, in both languages, renders with real glyphs and fits its box."""

from __future__ import annotations

import itertools
import string
import unicodedata

import pytest
from PIL import Image, ImageDraw

from companion.ui.screens import fonts
from companion.ui.screens.i18n import CATALOGUE, LANGS, Lang, sample_fields, text
from companion.ui.screens.render import RULES_PAGES

#: Strings drawn dark-on-lit in a 12 px title bar, whose top pixel row is cut off.
BAND_TITLES = ("menu.title", "confirm.title", "newgame.title", "tally.title", "entry.title")


def _fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def _variants(key: str, lang: Lang) -> list[str]:
    """The string with every combination of worst-case field values."""
    entry = CATALOGUE[key]
    names = sorted(set(_fields(entry.vi)) | set(_fields(entry.en)))
    samples = sample_fields(lang)
    combos = itertools.product(*(samples[n] for n in names))
    return [text(key, lang, **dict(zip(names, combo, strict=True))) for combo in combos]


CASES = [(key, lang) for key in CATALOGUE for lang in LANGS]


@pytest.mark.parametrize(("key", "lang"), CASES, ids=[f"{k}-{lang}" for k, lang in CASES])
def test_string_fits_its_box_with_real_glyphs(key: str, lang: Lang) -> None:
    entry = CATALOGUE[key]
    font = fonts.load(entry.font)
    have = fonts.coverage(entry.font)
    for s in _variants(key, lang):
        assert s == unicodedata.normalize("NFC", s)
        missing = sorted({c for c in s if c != "\n" and ord(c) not in have})
        assert not missing, f"{key}/{lang}: no glyph for {missing} in {entry.font}"
        lines = s.split("\n")
        assert len(lines) <= entry.lines, f"{key}/{lang}: {len(lines)} lines > {entry.lines}"
        for line in lines:
            assert line.strip(), f"{key}/{lang}: empty line"
            width = font.getlength(line)
            assert width <= entry.width, f"{key}/{lang}: {line!r} is {width} px > {entry.width}"


def test_both_languages_use_the_same_fields() -> None:
    for key, entry in CATALOGUE.items():
        assert set(_fields(entry.vi)) == set(_fields(entry.en)), key
        assert set(_fields(entry.vi)) <= set(sample_fields("vi")), key


def test_vietnamese_is_not_english() -> None:
    """Untranslated entries are only proper names and symbols."""
    same = {k for k, e in CATALOGUE.items() if e.vi == e.en}
    assert same == {
        "scores.bigs",
        "scores.side",
        "value.vi",
        "value.en",
        "rules.page",
        "attract.title",
        "attract.vi",
        "attract.en",
        "over.place",
        "cycle.final",
        "replay.step",
    }


def test_rules_pages_exist() -> None:
    for page in range(1, RULES_PAGES + 1):
        assert f"rules.{page}" in CATALOGUE


@pytest.mark.parametrize("key", BAND_TITLES)
def test_band_titles_leave_the_top_row_empty(key: str) -> None:
    for lang in LANGS:
        image = Image.new("1", (128, 13), 0)
        ImageDraw.Draw(image).text((0, 0), text(key, lang), font=fonts.load("text"), fill=1)
        bbox = image.getbbox()
        assert bbox is not None and bbox[1] >= 1, f"{key}/{lang} needs the cut-off row"


def test_font_draws_every_vietnamese_letter() -> None:
    """All 134 precomposed Vietnamese letters plus Đ đ Ơ ơ Ư ư, distinct from the missing box."""
    letters = [chr(c) for c in range(0x1EA0, 0x1EFA)] + list("ĂăÂâĐđÊêÔôƠơƯư")
    letters += list("ÀÁÃÈÉÌÍÒÓÕÙÚÝàáãèéìíòóõùúý")
    font = fonts.load("text")

    def bitmap(c: str) -> bytes:
        image = Image.new("1", (6, 13), 0)
        ImageDraw.Draw(image).text((0, 0), c, font=font, fill=1)
        return image.tobytes()

    missing_box = bitmap("\u4e00")  # CJK, not in the subset -> DEFAULT_CHAR
    shapes = {c: bitmap(c) for c in letters}
    assert all(shape != missing_box for shape in shapes.values())
    assert len(set(shapes.values())) == len(letters), "two letters share a bitmap"

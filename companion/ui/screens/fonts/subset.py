"""Cut a Unicode BDF font down to the ranges the OLED screens can use.

A developer tool, run once when a font is vendored: the full misc-fixed 6x13
carries 4,000 glyphs (CJK, APL, Braille...) that a Vietnamese/English kiosk
never draws. Keeping only Latin, Vietnamese, punctuation, arrows and shapes
makes the committed file small enough to review, while the glyph bitmaps and
the font header (including its public-domain COPYRIGHT property) are kept
byte for byte.

Usage: ``python -m companion.ui.screens.fonts.subset SRC.bdf DST.bdf``
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

#: Code point ranges kept, inclusive.
KEEP: tuple[tuple[int, int], ...] = (
    (0x0000, 0x0000),  # DEFAULT_CHAR, drawn for anything missing
    (0x0020, 0x007E),  # ASCII
    (0x00A0, 0x024F),  # Latin-1, Extended-A/B (Ơ ơ Ư ư Đ đ)
    (0x0300, 0x036F),  # combining marks, for completeness
    (0x1EA0, 0x1EF9),  # Vietnamese precomposed letters
    (0x2010, 0x2027),  # dashes, bullets, ellipsis
    (0x20AB, 0x20AB),  # đồng sign
    (0x2190, 0x21FF),  # arrows
    (0x2212, 0x2212),  # minus sign
    (0x2500, 0x25FF),  # box drawing, blocks, geometric shapes
    (0x2713, 0x2717),  # check and cross marks
)


def _kept(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in KEEP)


def subset(lines: Iterable[str]) -> list[str]:
    """Return the BDF ``lines`` with only the kept glyphs and a corrected CHARS."""
    header: list[str] = []
    glyphs: list[list[str]] = []
    current: list[str] | None = None
    tail: list[str] = []
    for line in lines:
        if line.startswith("STARTCHAR"):
            current = [line]
        elif current is not None:
            current.append(line)
            if line.startswith("ENDCHAR"):
                glyphs.append(current)
                current = None
        elif glyphs or line.startswith("ENDFONT"):
            tail.append(line)
        else:
            header.append(line)
    kept = [g for g in glyphs if _kept(_encoding(g))]
    header = [f"CHARS {len(kept)}\n" if h.startswith("CHARS ") else h for h in header]
    return header + [line for g in kept for line in g] + tail


def _encoding(glyph: list[str]) -> int:
    for line in glyph:
        if line.startswith("ENCODING"):
            return int(line.split()[1])
    return -1


def main(argv: list[str]) -> int:
    src, dst = argv
    with open(src, encoding="latin-1") as f:
        out = subset(f)
    with open(dst, "w", encoding="latin-1", newline="\n") as f:
        f.writelines(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

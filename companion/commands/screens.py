"""``oanquan screens --out DIR [--scale 4]``: write every OLED screen as PNG.

The gallery is how reviewers (and the README) see the screens without a Pi:
each sample screen in both languages at 1:1 (exactly the frame the panel
gets) and magnified with whole-pixel scaling, an ``index.md`` that shows
them side by side, and one ``contact-sheet.png`` with everything.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image, ImageDraw

from companion.commands._cli import output_dir, why
from companion.ui.screens import LANGS, render_screen
from companion.ui.screens.draw import HEIGHT, WIDTH, text
from companion.ui.screens.samples import SAMPLES

SHEET_SCALE = 2
GAP = 6
LABEL_H = 14


def _magnify(image: Image.Image, scale: int) -> Image.Image:
    return image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)


def _sheet(frames: dict[str, dict[str, Image.Image]]) -> Image.Image:
    """All screens, one row per sample (VI left, EN right), grey gaps so dark edges show."""
    cell_w, cell_h = WIDTH * SHEET_SCALE, HEIGHT * SHEET_SCALE
    row_h = LABEL_H + cell_h + GAP
    sheet = Image.new("L", (GAP + len(LANGS) * (cell_w + GAP), GAP + len(frames) * row_h), 96)
    draw = ImageDraw.Draw(sheet)
    for row, (name, by_lang) in enumerate(frames.items()):
        y = GAP + row * row_h
        text(draw, (GAP, y), name, fill=255)
        for col, lang in enumerate(LANGS):
            x = GAP + col * (cell_w + GAP)
            big = _magnify(by_lang[lang], SHEET_SCALE).convert("L")
            sheet.paste(big, (x, y + LABEL_H))
    return sheet


def write_gallery(out: Path, scale: int) -> list[Path]:
    """Render every sample in every language into ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    frames: dict[str, dict[str, Image.Image]] = {}
    rows = [
        "# OLED screens",
        "",
        f"Every screen of the companion at {scale}x (1:1 files beside them),"
        " rendered by `oanquan screens`.",
        "",
        "| screen | Tiếng Việt | English |",
        "|---|---|---|",
    ]
    for name, screen in SAMPLES.items():
        frames[name] = {}
        cells = []
        for lang in LANGS:
            image = render_screen(screen, lang)
            frames[name][lang] = image
            one = out / f"{name}.{lang}.png"
            big = out / f"{name}.{lang}.x{scale}.png"
            image.save(one)
            _magnify(image, scale).save(big)
            written += [one, big]
            cells.append(f"![{name} {lang}]({big.name})")
        rows.append(f"| `{name}` | {' | '.join(cells)} |")
    sheet = out / "contact-sheet.png"
    _sheet(frames).save(sheet)
    index = out / "index.md"
    index.write_text("\n".join([*rows, "", "All at once: ![contact sheet](contact-sheet.png)", ""]))
    return [*written, sheet, index]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="oanquan screens", description="Write every OLED screen as PNG."
    )
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--scale", type=int, default=4, help="magnification (default 4)")
    args = parser.parse_args(argv)
    if not 1 <= args.scale <= 16:
        parser.error("--scale must be 1..16")
    try:
        out = output_dir(args.out, "--out")
        files = write_gallery(out, args.scale)
    except ValueError as exc:
        print(f"oanquan screens: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the folder was fine, then a write failed (full disk)
        print(f"oanquan screens: --out {args.out}: cannot write: {why(exc)}", file=sys.stderr)
        return 1
    print(f"wrote {len(files)} files to {args.out}")
    return 0

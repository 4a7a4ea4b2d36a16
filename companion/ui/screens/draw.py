"""Drawing primitives for the 128x64 1-bit panel: text boxes and the board.

Everything draws into a ``PIL.ImageDraw`` of a mode "1" image with fill 1 =
lit pixel. The board geometry is fixed here once (the render module only
places text around it) so every screen shows the board at the same spot and
a player's eye learns where to look.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from PIL import Image, ImageDraw

from companion.ui.screens import fonts
from companion.ui.screens.fonts import FontName
from companion.ui.screens.model import BoardView, left_quan, row_of

WIDTH: Final = 128
HEIGHT: Final = 64

#: Board geometry: a 5x2 grid of 17 px cells between two half-ellipse quan squares.
CELL: Final = 18
GRID_X: Final = 19  # left edge of the grid = width of a quan square
GRID_W: Final = 5 * CELL
BOARD_H: Final = 2 * CELL  # rows share the middle line: y 0..34
BELOW_BOARD: Final = BOARD_H + 2  # first free pixel row for text

#: Three or four seats: one row per seat (as the terminal draws them), each a seat
#: label, its left quan and its five squares, and the points in its heap at the right.
RING_ROW: Final = 12
RING_LABEL_W: Final = 13
RING_QUAN_W: Final = 20
RING_CELL_W: Final = 15
RING_X: Final = RING_LABEL_W  # left edge of the quan cells
RING_END: Final = RING_X + RING_QUAN_W + 5 * RING_CELL_W  # right edge of the last cell

#: 3x5 digits for square numbers: bits of each row, most significant on the left.
TINY: Final[dict[str, tuple[int, ...]]] = {
    "0": (7, 5, 5, 5, 7),
    "1": (2, 6, 2, 2, 7),
    "2": (7, 1, 7, 4, 7),
    "3": (7, 1, 3, 1, 7),
    "4": (5, 5, 7, 1, 1),
    "5": (7, 4, 7, 1, 7),
    "6": (7, 4, 7, 5, 7),
    "7": (7, 1, 1, 2, 2),
    "8": (7, 5, 7, 5, 7),
    "9": (7, 5, 7, 1, 7),
}


def tiny(draw: ImageDraw.ImageDraw, xy: tuple[int, int], digits: str, fill: int = 1) -> int:
    """Square numbers in 3x5 digits one pixel apart; returns the width drawn."""
    x, y = xy
    for i, ch in enumerate(digits):
        for row, bits in enumerate(TINY[ch]):
            for col in range(3):
                if bits & (4 >> col):
                    draw.point((x + 4 * i + col, y + row), fill=fill)
    return 4 * len(digits) - 1


def text_top(view: BoardView) -> int:
    """First pixel row under the board drawn for ``view``."""
    return BELOW_BOARD if view.players < 4 else 4 * RING_ROW + 2


def text_rows(view: BoardView) -> int:
    """How many 13 px text lines fit under that board: two, or one under four seats."""
    return 2 if view.players < 4 else 1


def scaled(s: str, font: FontName = "text", scale: int = 2) -> Image.Image:
    """``s`` blown up by whole pixels (no smoothing): big type without another font.

    9x15B squashes accented capitals (its Ô looks like ô), so large headings
    are the 6x13 glyphs doubled instead.
    """
    small = Image.new("1", (text_width(s, font), fonts.line_height(font)), 0)
    text(ImageDraw.Draw(small), (0, 0), s, font)
    return small.resize((small.width * scale, small.height * scale), Image.Resampling.NEAREST)


def stamp(image: Image.Image, glyphs: Image.Image, xy: tuple[int, int]) -> None:
    """Light the lit pixels of ``glyphs`` at ``xy`` without blanking what is around them."""
    image.paste(1, (*xy, xy[0] + glyphs.width, xy[1] + glyphs.height), mask=glyphs)


def new_image() -> Image.Image:
    """A blank (all dark) panel-sized frame."""
    return Image.new("1", (WIDTH, HEIGHT), 0)


def text_width(s: str, font: FontName = "text") -> int:
    return int(fonts.load(font).getlength(s))


def text(
    draw: ImageDraw.ImageDraw,
    xy: tuple[int, int],
    s: str,
    font: FontName = "text",
    fill: int = 1,
) -> None:
    """Draw one line with its cell top at ``xy`` (not the ink top: marks need the room)."""
    draw.text(xy, s, font=fonts.load(font), fill=fill)


def centred(
    draw: ImageDraw.ImageDraw,
    y: int,
    s: str,
    font: FontName = "text",
    x0: int = 0,
    x1: int = WIDTH,
    fill: int = 1,
) -> None:
    x = x0 + (x1 - x0 - text_width(s, font)) // 2
    text(draw, (x, y), s, font, fill)


def right(
    draw: ImageDraw.ImageDraw, x1: int, y: int, s: str, font: FontName = "text", fill: int = 1
) -> None:
    text(draw, (x1 - text_width(s, font), y), s, font, fill)


def lines(draw: ImageDraw.ImageDraw, xy: tuple[int, int], s: str, font: FontName = "text") -> int:
    """Draw explicit ``\\n``-separated lines at the font's pitch; returns the next free y."""
    x, y = xy
    for line in s.split("\n"):
        text(draw, (x, y), line, font)
        y += fonts.line_height(font)
    return y


def band(draw: ImageDraw.ImageDraw, y: int, s: str, height: int = 13) -> None:
    """A lit title bar with dark centred text: reads as a heading without a bold font.

    A 12 px bar drops the cell's top row, used only by marks over capitals
    (Ổ, Ể); the catalogue test keeps such letters out of titles.
    """
    draw.rectangle((0, y, WIDTH - 1, y + height - 1), fill=1)
    centred(draw, y + height - 13, s, fill=0)


# --- the board ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Marks:
    """Per-square highlights drawn over the board.

    ``inverted``: lit cell, dark digits (cursor, disputed square);
    ``path``: squares that receive a pebble in the previewed move (a bar under the count);
    ``captured``: squares taken (dotted inner frame);
    ``labels``: text drawn instead of the count (e.g. "+1" for a refill);
    ``arrow``: (square, screen direction -1/+1) of a small arrow by the count;
    ``notes``: (seat, text) drawn instead of a seat's points (3-4 seats, e.g. "-2" lent).
    """

    inverted: frozenset[int] = frozenset()
    path: frozenset[int] = frozenset()
    captured: frozenset[int] = frozenset()
    labels: tuple[tuple[int, str], ...] = ()
    arrow: tuple[int, int] | None = None
    notes: tuple[tuple[int, str], ...] = ()


def count_label(count: int) -> str:
    """A square's count as drawn: two digits fit a cell; more is impossible (70 pebbles
    in all), so it can only be a misreading, shown as "!!" rather than clipped digits."""
    return str(count) if count <= 99 else "!!"


def cell_box(square: int) -> tuple[int, int, int, int]:
    """Outline (x0, y0, x1, y1) of a citizen square, inclusive, borders shared."""
    if square % 6 == 0:
        raise ValueError(f"square {square!r} is a quan square, not a cell")
    col, top = (square - 1, CELL) if square < 6 else (11 - square, 0)
    x0 = GRID_X + col * CELL
    return x0, top, x0 + CELL, top + CELL


def quan_box(square: int) -> tuple[int, int, int, int]:
    """Bounding box of the full ellipse whose outer half is the quan square."""
    centre = GRID_X if square == 0 else GRID_X + GRID_W
    return centre - GRID_X, 0, centre + GRID_X, BOARD_H


def _dotted_rect(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], fill: int) -> None:
    x0, y0, x1, y1 = box
    pts = [(x, y) for x in range(x0, x1 + 1) for y in (y0, y1) if (x + y) % 2 == 0]
    pts += [(x, y) for y in range(y0, y1 + 1) for x in (x0, x1) if (x + y) % 2 == 0]
    draw.point(pts, fill=fill)


def _arrow(draw: ImageDraw.ImageDraw, cx: int, y: int, way: int, fill: int) -> None:
    """A 7x3 arrow centred on ``cx``: shaft on row ``y + 1``, head at the ``way`` end."""
    draw.line((cx - 3, y + 1, cx + 3, y + 1), fill=fill)
    tip = cx + 3 * way
    draw.point([(tip - way, y), (tip - way, y + 2)], fill=fill)


def _cell(draw: ImageDraw.ImageDraw, square: int, count: int, marks: Marks) -> None:
    """A citizen square: its number small at the top left, a mark at the top right
    (the move's arrow, or a dot for a pebble sown there), the count large below."""
    x0, y0, x1, y1 = cell_box(square)
    fg = 1
    if square in marks.inverted:
        draw.rectangle((x0 + 1, y0 + 1, x1 - 1, y1 - 1), fill=1)
        fg = 0
    tiny(draw, (x0 + 2, y0 + 2), str(square), fill=fg)
    label = dict(marks.labels).get(square, count_label(count))
    centred(draw, y0 + 5, label, x0=x0 + 2, x1=x1, fill=fg)
    if marks.arrow is not None and marks.arrow[0] == square:
        _arrow(draw, x0 + 13, y0 + 2, marks.arrow[1], fg)
    elif square in marks.path:
        draw.rectangle((x0 + 13, y0 + 2, x0 + 15, y0 + 4), fill=fg)
    if square in marks.captured:
        _dotted_rect(draw, (x0 + 1, y0 + 1, x1 - 1, y1 - 1), fg)


def _quan(draw: ImageDraw.ImageDraw, square: int, count: int, big: int, marks: Marks) -> None:
    box = quan_box(square)
    start, end = (90, 270) if square == 0 else (270, 90)
    fg = 1
    if square in marks.inverted:
        draw.pieslice(box, start, end, fill=1)
        fg = 0
    draw.arc(box, start, end, fill=1)
    if square in marks.captured:
        x0, y0, x1, y1 = box
        inner = (x0 + 2, y0 + 2, x1 - 2, y1 - 2)
        for a in range(start, start + 180, 12):
            draw.arc(inner, a % 360, (a + 5) % 360, fill=fg)
    # contents sit towards the inner (grid) side where the half-ellipse is widest
    cx = 11 if square == 0 else WIDTH - 12
    if big:
        draw.ellipse((cx - 4, 5, cx + 4, 13), fill=fg)
    label = dict(marks.labels).get(square, count_label(count))
    centred(draw, 16, label, x0=cx - 5, x1=cx + 7, fill=fg)
    if square in marks.path:
        draw.rectangle((cx - 1, 29, cx + 1, 31), fill=fg)
    tiny(draw, (15 if square == 0 else WIDTH - 17, 29), str(square), fill=fg)


def board(draw: ImageDraw.ImageDraw, view: BoardView, marks: Marks = Marks()) -> None:
    """The board for two seats (seen from P0's side, P0's row at the bottom) or a ring."""
    if view.players != 2:
        ring_rows(draw, view, marks)
        return
    draw.line((GRID_X, 0, GRID_X + GRID_W, 0), fill=1)
    draw.line((GRID_X, BOARD_H, GRID_X + GRID_W, BOARD_H), fill=1)
    for square in (*range(1, 6), *range(7, 12)):
        draw.rectangle(cell_box(square), outline=1)
    for square in (1, 2, 3, 4, 5, 7, 8, 9, 10, 11):
        _cell(draw, square, view.board[square], marks)
    _quan(draw, 0, view.board[0], view.big[0], marks)
    _quan(draw, 6, view.board[6], view.big[1], marks)


def squares_of(player: int, players: int = 2) -> Iterable[int]:
    """The five squares of a seat's row."""
    return row_of(player, players)


def ring_box(square: int, players: int) -> tuple[int, int, int, int]:
    """Outline of a square in the one-row-per-seat drawing (borders shared)."""
    side, k = divmod(square, 6)
    seat = (-side) % players
    y0 = RING_ROW * seat
    if k == 0:
        return RING_X, y0, RING_X + RING_QUAN_W, y0 + RING_ROW
    x0 = RING_X + RING_QUAN_W + (k - 1) * RING_CELL_W
    return x0, y0, x0 + RING_CELL_W, y0 + RING_ROW


def ring_rows(draw: ImageDraw.ImageDraw, view: BoardView, marks: Marks = Marks()) -> None:
    """Three or four seats, one row each in turn order (as ``oanquan play`` prints them).

    A row is the seat's name (lit for the seat to move), its left quan, its
    five squares from its owner's left to right, and at the right the points
    in its heap. Sowing ``+`` runs rightwards along a row and on into the quan
    of the row above (the top row continues into the bottom row).
    """
    n = view.players
    notes = dict(marks.notes)
    for seat in range(n):
        y0 = RING_ROW * seat
        if seat == view.to_move:
            draw.rectangle((0, y0 + 1, RING_LABEL_W - 2, y0 + RING_ROW - 1), fill=1)
            text(draw, (0, y0 - 1), f"P{seat}", fill=0)
        else:
            text(draw, (0, y0 - 1), f"P{seat}")
        right(draw, WIDTH, y0 - 1, notes.get(seat, str(view.held(seat))))
        quan = left_quan(seat, n)
        for square in (quan, *row_of(seat, n)):
            _ring_cell(draw, view, square, marks)


def _ring_cell(draw: ImageDraw.ImageDraw, view: BoardView, square: int, marks: Marks) -> None:
    x0, y0, x1, y1 = ring_box(square, view.players)
    draw.rectangle((x0, y0, x1, y1), outline=1)
    fg = 1
    if square in marks.inverted:
        draw.rectangle((x0 + 1, y0 + 1, x1 - 1, y1 - 1), fill=1)
        fg = 0
    label = dict(marks.labels).get(square, count_label(view.board[square]))
    left = x0 + 1
    if square % 6 == 0:
        if view.big[square // 6]:
            draw.ellipse((x0 + 2, y0 + 3, x0 + 6, y0 + 7), fill=fg)
        left = x0 + 7
    centred(draw, y0 - 1, label, x0=left, x1=x1 + 1, fill=fg)
    if square in marks.path:
        cx = (left + x1) // 2
        draw.line((cx - 2, y0 + 10, cx + 2, y0 + 10), fill=fg)
    if square in marks.captured:
        _dotted_rect(draw, (x0 + 1, y0 + 1, x1 - 1, y1 - 1), fg)

"""Board geometry of Ô ăn quan: the ring of 12 squares, with no rules in it.

Vocabulary kept in Vietnamese where English has no exact word:
*quan* is a mandarin square (0 and 6) and its big stone, *dân* a citizen
square or small pebble. Player 0 owns squares 1..5 and player 1 owns 7..11,
each numbered from the owner's left to the owner's right, so the k-th square
from a player's left is ``6 * player + k``. Direction +1 (``+``) runs with the
index, counter-clockwise seen from above; rotating the ring by 6 swaps the
players exactly.

Seen by a camera with player 0's side at the bottom of the image, square 0 is
the left semicircle, 1..5 run left to right along the bottom row, 6 is the
right semicircle and 7..11 run right to left along the top row.
"""

from __future__ import annotations

from typing import Final

NUM_SQUARES: Final = 12
MANDARINS: Final = (0, 6)
PLAYERS: Final = (0, 1)
DIRECTIONS: Final = (1, -1)

#: Citizen squares of each player, left to right from that player's seat.
ROWS: Final = (tuple(range(1, 6)), tuple(range(7, 12)))
CITIZENS: Final = ROWS[0] + ROWS[1]


def is_mandarin(square: int) -> bool:
    """Mandarin squares are never picked up for sowing."""
    return square % 6 == 0


def owner(square: int) -> int | None:
    """The player who owns a citizen square; ``None`` for a mandarin square."""
    if square % 6 == 0:
        return None
    return 0 if square < 6 else 1


def next_square(square: int, direction: int) -> int:
    """The neighbour of ``square`` one step in ``direction`` round the ring."""
    return (square + direction) % NUM_SQUARES


def rotate(square: int) -> int:
    """The square that plays the same role for the other player."""
    return (square + 6) % NUM_SQUARES


def image_layout() -> dict[int, tuple[int, int]]:
    """Grid cell (row, column) of each square as seen from player 0's side.

    Row 0 is the far (player 1) row, row 1 the near row; column 0 is the left
    mandarin, columns 1..5 the citizen squares, column 6 the right mandarin.
    Mandarin squares span both rows and are given row -1.
    """
    layout: dict[int, tuple[int, int]] = {0: (-1, 0), 6: (-1, 6)}
    for k in range(1, 6):
        layout[k] = (1, k)
        layout[12 - k] = (0, k)
    return layout

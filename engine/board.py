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

These constants describe the two-player board; three and four seats use the
longer rings of :mod:`engine.ring` (``ring(n).rows``, ``ring(n).mandarins``).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CITIZENS",
    "DIRECTIONS",
    "MANDARINS",
    "NUM_SQUARES",
    "OWNER",
    "PLAYERS",
    "ROWS",
    "SQUARES",
    "is_mandarin",
    "owner",
    "rotate",
]

#: Squares on the two-player ring; use this, not a literal 12 (more seats: engine.ring).
NUM_SQUARES: Final = 12
#: Every square in ring order, for ``for sq in SQUARES`` instead of ``range(12)``.
SQUARES: Final = tuple(range(NUM_SQUARES))
#: The mandarin squares; use ``sq in MANDARINS`` or :func:`is_mandarin`, not ``sq % 6``.
MANDARINS: Final = (0, 6)
PLAYERS: Final = (0, 1)
DIRECTIONS: Final = (1, -1)

#: Citizen squares of each player, left to right from that player's seat.
ROWS: Final = (tuple(range(1, 6)), tuple(range(7, 12)))
#: Every citizen square, player 0's row first.
CITIZENS: Final = ROWS[0] + ROWS[1]
#: OWNER[sq]: the player owning square sq, None for a mandarin square.
OWNER: Final = tuple(None if sq in MANDARINS else (0 if sq < 6 else 1) for sq in SQUARES)


def is_mandarin(square: int) -> bool:
    """Mandarin squares are never picked up for sowing."""
    return square % 6 == 0


def owner(square: int) -> int | None:
    """The player who owns a citizen square; ``None`` for a mandarin square."""
    if square % 6 == 0:
        return None
    return 0 if square < 6 else 1


def rotate(square: int) -> int:
    """The square that plays the same role for the other player."""
    return (square + 6) % NUM_SQUARES

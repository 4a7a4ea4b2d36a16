"""Ring geometry for 2 to 4 seats: which square lies where, and who owns it.

The multi-player board is read as a closed ring with one side per player
(rules.md says only that the game exists for three and four; this is the
project's reading). Side ``s`` is its mandarin square ``6 * s`` at the corner
on its owner's left, then the citizen squares ``6 * s + 1 .. 6 * s + 5``
from the owner's left to right; the next mandarin square ``6 * s + 6`` is the
corner shared with the neighbouring side. Two seats give exactly the
two-player board of :mod:`engine.board`; three give a triangle of 15 + 3
squares, four a square of 20 + 4.

Square indices grow counter-clockwise seen from above, as on the two-player
board, so ``+`` still sows towards the mover's right. Turns pass clockwise,
and seats are numbered in turn order: seat ``p`` sits at side ``(-p) % N``
(seat 1 is on seat 0's left). With two seats both readings agree. Turning
the ring by one side clockwise (square ``sq`` to ``sq - 6``) maps seat ``p``
to seat ``p + 1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Final

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4
#: Squares per side: one mandarin square and five citizen squares.
SIDE: Final = 6
CITIZENS_PER_SIDE: Final = 5


@dataclass(frozen=True, slots=True)
class Ring:
    """The board for ``players`` seats; build it with :func:`ring`.

    >>> r = ring(3)
    >>> r.num_squares, r.mandarins, r.rows[1]
    (18, (0, 6, 12), (13, 14, 15, 16, 17))
    """

    players: int
    #: 6 * players
    num_squares: int
    #: mandarin squares, one per corner: 0, 6, 12, 18
    mandarins: tuple[int, ...]
    #: rows[p]: the five citizen squares of seat p, from that seat's left to right
    rows: tuple[tuple[int, ...], ...]
    #: every citizen square, in ring order
    citizens: tuple[int, ...]
    #: owner[sq]: the seat owning citizen square sq, None for a mandarin square
    owner: tuple[int | None, ...]
    #: side_of_seat[p]: the side (0 = squares 0..5) where seat p sits
    side_of_seat: tuple[int, ...]
    #: seat_of_side[s]: who sits at side s
    seat_of_side: tuple[int, ...]

    def is_mandarin(self, square: int) -> bool:
        return square % SIDE == 0

    def step(self, square: int, direction: int) -> int:
        """The neighbour one step in ``direction`` (+1 counter-clockwise)."""
        return (square + direction) % self.num_squares

    def rotate(self, square: int) -> int:
        """Where ``square`` goes when the ring turns one side so seat p becomes p + 1."""
        return (square - SIDE) % self.num_squares

    def next_seat(self, seat: int) -> int:
        """Who moves after ``seat``: turns pass clockwise."""
        return (seat + 1) % self.players

    def left_mandarin(self, seat: int) -> int:
        """The mandarin square on ``seat``'s left (square 0 for seat 0)."""
        return SIDE * self.side_of_seat[seat]

    def right_mandarin(self, seat: int) -> int:
        """The mandarin square on ``seat``'s right, shared with the seat before it in turn."""
        return (SIDE * self.side_of_seat[seat] + SIDE) % self.num_squares

    def corners(self) -> tuple[tuple[float, float], ...]:
        """Corners of the board as a regular polygon of circumradius 1 (x right, y up).

        Corner ``s`` holds mandarin square ``6 * s``; side 0 runs along the
        bottom from corner 0 (bottom left) to corner 1, and the corners go
        counter-clockwise like the square indices. Two seats have no polygon:
        their board is the rectangle of :mod:`engine.board`, and this returns
        its two ends.
        """
        n = self.players
        if n == 2:
            return ((-1.0, 0.0), (1.0, 0.0))
        first = -math.pi / 2 - math.pi / n
        return tuple(
            (math.cos(first + 2 * math.pi * s / n), math.sin(first + 2 * math.pi * s / n))
            for s in range(n)
        )

    def polygons(self, inner: float = 0.6) -> tuple[tuple[tuple[float, float], ...], ...]:
        """Each square's region, in index order, as polygon vertices (x right, y up).

        Three or four seats: the band between the board's outline
        (:meth:`corners`) and the same polygon scaled by ``inner``. Each side
        is cut into six equal lengths; citizen square ``6 * s + k`` takes the
        length centred ``k / 6`` of the way along side ``s``, and each
        mandarin square the half lengths either side of its corner. Two seats:
        today's board, a 7 x 2 grid of cells with a mandarin square at each end
        (spanning both rows), x from -1 to 1. Map these onto the located board
        (the corners seen by the camera) with one homography.
        """
        if self.players == 2:
            w, h = 2.0 / 7.0, 2.0 / 7.0

            def cell(col: int, row: int, rows: int = 1) -> tuple[tuple[float, float], ...]:
                x0, y0 = -1.0 + col * w, (row - 1) * h
                return ((x0, y0), (x0 + w, y0), (x0 + w, y0 + rows * h), (x0, y0 + rows * h))

            out2 = [cell(0, 0, 2)] + [cell(k, 0) for k in range(1, 6)] + [cell(6, 0, 2)]
            out2 += [cell(6 - k, 1) for k in range(1, 6)]
            return tuple(out2)
        outer = self.corners()
        n = self.players

        def along(s: int, t: float, scale: float) -> tuple[float, float]:
            (x0, y0), (x1, y1) = outer[s % n], outer[(s + 1) % n]
            return (scale * (x0 + (x1 - x0) * t), scale * (y0 + (y1 - y0) * t))

        half = 0.5 / SIDE
        out: list[tuple[tuple[float, float], ...]] = []
        for s in range(n):
            corner = outer[s]
            out.append(
                (
                    along(s - 1, 1 - half, 1.0),
                    corner,
                    along(s, half, 1.0),
                    along(s, half, inner),
                    (inner * corner[0], inner * corner[1]),
                    along(s - 1, 1 - half, inner),
                )
            )
            for k in range(1, SIDE):
                a, b = (k - 0.5) / SIDE, (k + 0.5) / SIDE
                out.append(
                    (along(s, a, 1.0), along(s, b, 1.0), along(s, b, inner), along(s, a, inner))
                )
        return tuple(out)

    def centres(self, inner: float = 0.6) -> tuple[tuple[float, float], ...]:
        """A point inside each square (the mean of its :meth:`polygons` vertices)."""
        return tuple(
            (sum(x for x, _ in poly) / len(poly), sum(y for _, y in poly) / len(poly))
            for poly in self.polygons(inner)
        )


@cache
def ring(players: int) -> Ring:
    """The ring for 2, 3 or 4 seats (cached: rings are few and immutable)."""
    if isinstance(players, bool) or players not in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        raise ValueError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {players!r}")
    n = players
    side_of_seat = tuple((-p) % n for p in range(n))
    seat_of_side = tuple((-s) % n for s in range(n))
    rows = tuple(tuple(SIDE * side_of_seat[p] + k for k in range(1, SIDE)) for p in range(n))
    owner: list[int | None] = [None] * (SIDE * n)
    for p, row in enumerate(rows):
        for sq in row:
            owner[sq] = p
    return Ring(
        players=n,
        num_squares=SIDE * n,
        mandarins=tuple(range(0, SIDE * n, SIDE)),
        rows=rows,
        citizens=tuple(sq for sq in range(SIDE * n) if sq % SIDE),
        owner=tuple(owner),
        side_of_seat=side_of_seat,
        seat_of_side=seat_of_side,
    )


def players_for_squares(num_squares: int) -> int:
    """How many seats a board of ``num_squares`` squares has; ValueError if none."""
    players, rest = divmod(num_squares, SIDE)
    if rest or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"a board has 12, 18 or 24 squares, got {num_squares}")
    return players

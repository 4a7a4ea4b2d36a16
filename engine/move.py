"""Moves: a citizen square and a direction, written ``"3+"`` or ``"9-"``.

The same notation serves 3 and 4 seats, whose rings have squares up to 23
(``"14-"``); which squares exist and whose they are is the position's to say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from engine.board import is_mandarin
from engine.errors import NotationError
from engine.ring import MAX_PLAYERS, SIDE

_MOVE_RE = re.compile(r"\s*(\d{1,2})\s*([+-]|ccw|cw)\s*\Z")
#: squares of the biggest ring (four seats)
_LAST: Final = SIDE * MAX_PLAYERS


@dataclass(frozen=True, slots=True, order=True)
class Move:
    """One move. Only its shape is checked here; legality needs a position.

    >>> Move.parse("3+")
    Move.parse('3+')
    >>> str(Move(9, -1))
    '9-'
    """

    square: int
    direction: int

    def __post_init__(self) -> None:
        if not 0 <= self.square < _LAST or is_mandarin(self.square):
            if 0 <= self.square <= 12:
                raise NotationError(
                    f"move square must be a citizen square 1-5 or 7-11, got {self.square}"
                )
            raise NotationError(
                f"move square must be a citizen square (below 24, not 0, 6, 12 or 18), "
                f"got {self.square}"
            )
        if self.direction not in (1, -1):
            raise NotationError(f"move direction must be +1 or -1, got {self.direction!r}")

    @classmethod
    def parse(cls, text: object) -> Move:
        """Read ``"3+"``, ``"9-"``, or the aliases ``"3ccw"`` / ``"9cw"``."""
        if not isinstance(text, str):
            raise NotationError(f"move must be a string like '3+', got {text!r}")
        match = _MOVE_RE.match(text)
        if match is None:
            raise NotationError(f"not a move: {text!r} (expected a square and + or -, like '3+')")
        square = int(match.group(1))
        direction = 1 if match.group(2) in ("+", "ccw") else -1
        return cls(square, direction)

    @property
    def code(self) -> int:
        """Signed integer form used by the fast path: +square or -square."""
        return self.square * self.direction

    @classmethod
    def from_code(cls, code: int) -> Move:
        return cls(abs(code), 1 if code > 0 else -1)

    def rotated(self, players: int = 2) -> Move:
        """The same move made by the next seat on the ring turned one side (Position.rotated)."""
        return Move((self.square - SIDE) % (SIDE * players), self.direction)

    def __str__(self) -> str:
        return f"{self.square}{'+' if self.direction > 0 else '-'}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

"""Games that no longer progress: cycling detection and the count that would end them.

Under the default rules nothing forces a game to end (rules.md R16): the
mandarin squares can keep receiving pebbles, and a player whose row empties
refills by borrowing (R11) again and again, so a debt can grow by about a
pebble a ply for as long as the players go on. The referee offers to stop and
count such a game; this module tells it when (:func:`cycle_status`) and what
the count would be (:func:`projected_final`), as pure functions of the game's
positions so the device, the bench and the tests agree.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from engine.play import end_now
from engine.position import Position
from engine.rules import Rules

#: Plies looked back over when deciding that a game keeps cycling.
WINDOW = 40
#: Occurrences of one board (stores and debts aside) in the window that make a cycle.
SHAPE_REPEATS = 3
#: Pebbles borrowed in the window that make a debt spiral (three refills of five).
SPIRAL_BORROWED = 15


class CycleKind(enum.Enum):
    """Why a game is said to cycle."""

    #: the same pebbles on the same squares keep coming back (only stores/debts move)
    REPETITION = "repetition"
    #: rows keep emptying and being refilled with borrowed pebbles
    DEBT_SPIRAL = "debt_spiral"


@dataclass(frozen=True, slots=True)
class Cycling:
    """A game that keeps cycling, and how it would end if counted now.

    ``since_ply``: the ply from which the evidence was gathered; ``final`` and
    ``winner`` are the R12 count (:func:`projected_final`).
    """

    kind: CycleKind
    since_ply: int
    final: tuple[int, ...]
    winner: int | None


def projected_final(position: Position, rules: Rules | None = None) -> tuple[int, ...]:
    """The final scores (one per player) if the game ended here by count (R12:
    rows swept, debts repaid).

    A finished position gives its own final scores.
    """
    rules = rules or Rules()
    if position.outcome is not None:
        return position.outcome.final
    outcome = end_now(position, "repetition", rules).position.outcome
    assert outcome is not None
    return outcome.final


def _shape(p: Position) -> tuple[object, ...]:
    return (p.board, p.big, p.to_move)


def cycle_status(
    positions: Sequence[Position],
    rules: Rules | None = None,
    *,
    window: int = WINDOW,
    repeats: int = SHAPE_REPEATS,
    borrowed: int = SPIRAL_BORROWED,
) -> Cycling | None:
    """Whether the game whose positions these are (oldest first) keeps cycling.

    Looks at the last ``window`` plies: a cycle when the current board (small
    pebbles, big stones, side to move; stores and debts aside) occurred there
    ``repeats`` times, or a debt spiral when at least ``borrowed`` pebbles were
    borrowed there and no big stone was captured. None while the game
    progresses or is over.
    """
    if not positions:
        return None
    now = positions[-1]
    if now.outcome is not None:
        return None
    recent = positions[-(window + 1) :]
    first = recent[0]
    shapes = Counter(_shape(p) for p in recent)
    kind: CycleKind | None = None
    if shapes[_shape(now)] >= repeats:
        kind = CycleKind.REPETITION
    elif sum(now.debt) - sum(first.debt) >= borrowed and sum(now.bigs) == sum(first.bigs):
        kind = CycleKind.DEBT_SPIRAL
    if kind is None:
        return None
    final = projected_final(now, rules)
    best = max(final)
    leaders = [i for i, f in enumerate(final) if f == best]
    winner = leaders[0] if len(leaders) == 1 else None
    return Cycling(kind, first.ply, final, winner)

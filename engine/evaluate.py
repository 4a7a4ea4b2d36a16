"""Static evaluation for the search: how good a kernel state is for the side to move.

The plain score difference (captured points, debts settled) ignores what is
still on the board, yet under the default rules every pebble left on a row at
the end is swept to that row's owner (R14), and pebbles on your own row are the
ones you can sow, so they are both future points and future options. The
features below are cheap sums over the 12 squares so a leaf costs about as
much as one kernel move; their weights live in a frozen dataclass so the
self-play tuner (``bench/tune_eval.py``) can try variants without touching the
search.

All values are in points from the point of view of ``st.to_move``.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.core import State


@dataclass(frozen=True, slots=True)
class EvalWeights:
    """Weights of the evaluation terms, in points per unit of each feature.

    The defaults come from coarse self-play hill-climbing (``bench/tune_eval.py``).
    """

    #: captured points, big stones and settled debts (the score if the game ended now)
    points: float = 1.0
    #: pebbles on one's own row (swept to the owner at the end, and sowable now)
    row: float = 0.3
    #: non-empty squares on one's own row (choice of moves; an empty row costs a refill)
    mobility: float = 0.6
    #: being the side to move (captures are frequent, so the move itself is worth something)
    tempo: float = 1.5
    #: pebbles lying in a mandarin square whose stone is still there, counted for the
    #: side to move, who is nearer to capturing it next (0 means neutral)
    mandarin: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "points": self.points,
            "row": self.row,
            "mobility": self.mobility,
            "tempo": self.tempo,
            "mandarin": self.mandarin,
        }


DEFAULT_WEIGHTS = EvalWeights()

#: Pure score difference: what the baseline opponents use.
SCORE_ONLY = EvalWeights(points=1.0, row=0.0, mobility=0.0, tempo=0.0, mandarin=0.0)


def points_diff(st: State, value: int) -> int:
    """Points of the side to move minus the opponent's, as if the game ended by count now."""
    s, q, d = st.store, st.bigs, st.debt
    p0 = s[0] + value * q[0] - d[0] + d[1]
    p1 = s[1] + value * q[1] - d[1] + d[0]
    return p0 - p1 if st.to_move == 0 else p1 - p0


def settlement_diff(st: State, value: int) -> int:
    """The R12 settlement seen by the side to move: points plus each row swept to its owner.

    This is what a repetition (or an agreed stop) would award, with the mandarin
    squares' contents unclaimed.
    """
    b = st.b
    rows = (b[1] + b[2] + b[3] + b[4] + b[5]) - (b[7] + b[8] + b[9] + b[10] + b[11])
    return points_diff(st, value) + (rows if st.to_move == 0 else -rows)


def evaluate(st: State, w: EvalWeights, value: int) -> float:
    """Heuristic value of a non-final state for the side to move."""
    b = st.b
    s, q, d = st.store, st.bigs, st.debt
    pts = (s[0] + value * q[0] - d[0] + d[1]) - (s[1] + value * q[1] - d[1] + d[0])
    b1, b2, b3, b4, b5 = b[1], b[2], b[3], b[4], b[5]
    b7, b8, b9, b10, b11 = b[7], b[8], b[9], b[10], b[11]
    row = (b1 + b2 + b3 + b4 + b5) - (b7 + b8 + b9 + b10 + b11)
    mob = (
        (b1 > 0) + (b2 > 0) + (b3 > 0) + (b4 > 0) + (b5 > 0)
        - (b7 > 0) - (b8 > 0) - (b9 > 0) - (b10 > 0) - (b11 > 0)
    )
    v = w.points * pts + w.row * row + w.mobility * mob
    if st.to_move:
        v = -v
    v += w.tempo
    if w.mandarin:
        big = st.big
        v += w.mandarin * ((b[0] if big[0] else 0) + (b[6] if big[1] else 0))
    return v

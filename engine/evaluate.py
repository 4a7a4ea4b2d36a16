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

    The defaults come from coarse self-play matches (``bench/tune_eval.py``, 200
    games at depth 4 against the depth-4 score-difference player): row 0.6 and
    mobility 0.3 scored best; a larger end-of-game row weight (``row_end``) and
    the ripe-mandarin bonus were tried and scored worse, so they are neutral here.
    """

    #: captured points, big stones and settled debts (the score if the game ended now)
    points: float = 1.0
    #: pebbles on one's own row (swept to the owner at the end, and sowable now)
    row: float = 0.6
    #: the row weight once the rows are nearly empty: near the end a pebble left
    #: on a row is soon swept to its owner, so it is worth more (interpolated by
    #: the pebbles left on both rows, full ``row`` at ``row_full`` or more)
    row_end: float = 0.6
    row_full: int = 30
    #: non-empty squares on one's own row (choice of moves; an empty row costs a refill)
    mobility: float = 0.3
    #: being the side to move (captures are frequent, so the move itself is worth something)
    tempo: float = 1.5
    #: a *ripe* mandarin square (stone still there, enough pebbles to escape quan non)
    #: is the biggest prize on the board; this share of its worth goes to the side to
    #: move, who gets the first chance to take it
    mandarin: float = 0.0
    #: own squares holding a single pebble (cheap to capture, and a row of them is
    #: what a player sows away before the next refill)
    singles: float = 0.0
    #: pebbles beyond four on an own square (a pile that can relay round the ring)
    piles: float = 0.0
    #: pebbles in a mandarin square whose stone is gone: nobody's at the count, the
    #: side to move's share of them as the next to try to take them
    loose: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {
            "points": self.points,
            "row": self.row,
            "row_end": self.row_end,
            "row_full": self.row_full,
            "mobility": self.mobility,
            "tempo": self.tempo,
            "mandarin": self.mandarin,
            "singles": self.singles,
            "piles": self.piles,
            "loose": self.loose,
        }


DEFAULT_WEIGHTS = EvalWeights()

#: Pure score difference: what the baseline opponents use.
SCORE_ONLY = EvalWeights(points=1.0, row=0.0, row_end=0.0, mobility=0.0, tempo=0.0, mandarin=0.0)


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


def evaluate(st: State, w: EvalWeights, value: int, ripe_min: int = 5) -> float:
    """Heuristic value of a non-final state for the side to move.

    ``ripe_min`` is the rules' ``quan_non_min``: a mandarin square with its stone
    and at least that many pebbles can be captured.
    """
    b = st.b
    s, q, d = st.store, st.bigs, st.debt
    pts = (s[0] + value * q[0] - d[0] + d[1]) - (s[1] + value * q[1] - d[1] + d[0])
    b1, b2, b3, b4, b5 = b[1], b[2], b[3], b[4], b[5]
    b7, b8, b9, b10, b11 = b[7], b[8], b[9], b[10], b[11]
    row0 = b1 + b2 + b3 + b4 + b5
    row1 = b7 + b8 + b9 + b10 + b11
    row = row0 - row1
    w_row = w.row
    if w.row_end != w_row:
        left = row0 + row1
        if left < w.row_full:
            w_row = w.row_end + (w_row - w.row_end) * left / w.row_full
    mob = (
        (b1 > 0)
        + (b2 > 0)
        + (b3 > 0)
        + (b4 > 0)
        + (b5 > 0)
        - (b7 > 0)
        - (b8 > 0)
        - (b9 > 0)
        - (b10 > 0)
        - (b11 > 0)
    )
    v = w.points * pts + w_row * row + w.mobility * mob
    if st.to_move:
        v = -v
    v += w.tempo
    if w.mandarin:
        big = st.big
        ripe = 0
        if big[0] and b[0] >= ripe_min:
            ripe += value + b[0]
        if big[1] and b[6] >= ripe_min:
            ripe += value + b[6]
        v += w.mandarin * ripe
    if w.singles or w.piles or w.loose:
        f = features(st, value, ripe_min, w.row_full)
        v += w.singles * f[6] + w.piles * f[7] + w.loose * f[8]
    return v


#: The names of :func:`features`, in order.
FEATURES = (
    "points",
    "row",
    "mobility",
    "tempo",
    "mandarin",
    "row_late",
    "singles",
    "piles",
    "loose",
)


def features(st: State, value: int, ripe_min: int = 5, row_full: int = 30) -> tuple[float, ...]:
    """The evaluation's terms for the side to move, unweighted (for the tuner).

    ``evaluate`` is the dot product of these with the weights (``row_late``'s
    weight being ``row_end - row``); a test keeps the two in step.
    """
    b = st.b
    s, q, d = st.store, st.bigs, st.debt
    sign = 1 if st.to_move == 0 else -1
    pts = sign * ((s[0] + value * q[0] - d[0] + d[1]) - (s[1] + value * q[1] - d[1] + d[0]))
    own, opp = (b[1:6], b[7:12]) if st.to_move == 0 else (b[7:12], b[1:6])
    row = sum(own) - sum(opp)
    left = sum(own) + sum(opp)
    late = row * (1 - left / row_full) if left < row_full else 0.0
    mob = sum(x > 0 for x in own) - sum(x > 0 for x in opp)
    big = st.big
    ripe = 0
    loose = 0
    for k, sq in ((0, 0), (1, 6)):
        if big[k]:
            if b[sq] >= ripe_min:
                ripe += value + b[sq]
        else:
            loose += b[sq]
    singles = sum(x == 1 for x in own) - sum(x == 1 for x in opp)
    piles = sum(max(0, x - 4) for x in own) - sum(max(0, x - 4) for x in opp)
    return (pts, row, mob, 1.0, ripe, late, singles, piles, loose)

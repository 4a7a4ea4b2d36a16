"""Tally maths: count a spread of pieces with an honest interval, then the final count.

A scoring dispute is settled by spreading one player's pieces over the ten
citizen squares in a single layer. Separate pebbles are counted best as
separate blobs (the counter's density peaks); where the peaks and the
counter's density mass disagree, pebbles probably touch or a shadow reads as
one, and that square is uncertain. :class:`SpreadModel` turns this per-square
evidence into a distribution over the true count (its table is fitted on
generated scenes by ``bench/tally.py --fit``); the distributions are
convolved, so the interval on the total says how sure the camera is, and the
least certain squares are named so the players can spread them more.

:func:`final_count` then scores both sides by rules.md R14 with the pieces
counted (store plus swept row), the big stones at the rule set's value and
the debts settled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from companion.referee.reconcile import SquareEvidence
from engine.board import NUM_SQUARES

#: Errors (true - peaks) the model gives a probability for: -SPAN..+SPAN.
SPAN = 3
#: Disagreement buckets: round(mass - peaks) clamped to -2..+2.
DISAGREE = (-2, -1, 0, 1, 2)


@dataclass(frozen=True, slots=True)
class SpreadSquare:
    """What the camera saw of one square of a spread.

    ``peaks``: separate pieces found (density maxima); ``mass``: the density's
    total, the pile counter's estimate; ``big_prob``: a big stone is there.
    """

    peaks: int
    mass: float
    big_prob: float = 0.0

    @classmethod
    def from_evidence(cls, evidence: SquareEvidence) -> SpreadSquare:
        """From a plain count distribution: its mode as peaks, its mean as mass."""
        probs = list(evidence.probs) or [1.0]
        mode = max(range(len(probs)), key=probs.__getitem__)
        total = sum(probs) or 1.0
        mean = sum(n * p for n, p in enumerate(probs)) / total
        return cls(mode, mean, float(evidence.big_prob))


#: ``bench/tally.py --fit``: seeds 0..199 of its generated spreads, the 172 scenes whose
#: board was located right. Rows: citizen squares with mass - peaks = -2..+2, then the
#: same for quan squares (buckets never seen there copy the citizen row).
FITTED_TABLE: tuple[tuple[float, ...], ...] = (
    (0.0667, 0.1111, 0.0667, 0.6000, 0.1111, 0.0222, 0.0222),
    (0.0017, 0.0157, 0.0609, 0.8261, 0.0678, 0.0226, 0.0052),
    (0.0004, 0.0013, 0.0090, 0.9468, 0.0339, 0.0056, 0.0030),
    (0.0027, 0.0027, 0.0188, 0.9196, 0.0349, 0.0188, 0.0027),
    (0.0201, 0.0201, 0.0470, 0.8389, 0.0470, 0.0201, 0.0067),
    (0.0667, 0.1111, 0.0667, 0.6000, 0.1111, 0.0222, 0.0222),
    (0.0435, 0.1304, 0.6522, 0.0435, 0.0435, 0.0435, 0.0435),
    (0.0015, 0.0015, 0.0103, 0.9823, 0.0015, 0.0015, 0.0015),
    (0.0027, 0.0027, 0.0188, 0.9196, 0.0349, 0.0188, 0.0027),
    (0.0201, 0.0201, 0.0470, 0.8389, 0.0470, 0.0201, 0.0067),
)


def _row(square: int, sq: SpreadSquare) -> int:
    """Table row of a square: its disagreement bucket, citizen squares first, then quan."""
    d = max(DISAGREE[0], min(DISAGREE[-1], round(sq.mass - sq.peaks)))
    return DISAGREE.index(d) + (len(DISAGREE) if square % 6 == 0 else 0)


@dataclass(frozen=True, slots=True)
class SpreadModel:
    """P(true - peaks = e | square kind, disagreement bucket), e = -SPAN..SPAN.

    Rows: the five disagreement buckets of a citizen square, then the same
    for a quan square (the guide asks for big stones only there, so a peak
    in one is often the stone's edge). ``coverage`` is the share of true
    totals the interval is meant to hold; ``unsure_below`` the probability
    of its best count under which a square is called unsure;
    ``outside_ok`` the pieces' worth of density around the board that is
    still noise; beyond it the interval widens by ``outside_widen`` per piece.
    """

    table: tuple[tuple[float, ...], ...] = FITTED_TABLE
    coverage: float = 0.99
    unsure_below: float = 0.93
    outside_ok: float = 1.5
    outside_widen: float = 1.5

    def __post_init__(self) -> None:
        rows = 2 * len(DISAGREE)
        if len(self.table) != rows or any(len(r) != 2 * SPAN + 1 for r in self.table):
            raise ValueError(f"spread model table must be {rows} x {2 * SPAN + 1}")
        if not 0.5 < self.coverage < 1.0:
            raise ValueError(f"coverage must be in (0.5, 1), got {self.coverage!r}")

    def square(self, square: int, sq: SpreadSquare) -> list[float]:
        """The distribution of the true count of ``square`` (index = count)."""
        row = self.table[_row(square, sq)]
        out = [0.0] * (sq.peaks + SPAN + 1)
        for i, p in enumerate(row):
            n = sq.peaks + i - SPAN
            out[max(n, 0)] += p  # a count below zero is an empty square
        return out


@dataclass(frozen=True, slots=True)
class Tally:
    """One side's spread as counted: total small pieces with an interval, big stones."""

    counts: tuple[int, ...]  # best count per ring square
    bigs: tuple[int, ...]  # 1 where a big stone was seen
    total: int
    low: int
    high: int
    unsure: tuple[int, ...]  # least certain squares first

    @property
    def big(self) -> int:
        return sum(self.bigs)

    @property
    def exact(self) -> bool:
        return self.low == self.high


def _convolve(a: list[float], b: list[float]) -> list[float]:
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def count_spread(
    squares: Sequence[SpreadSquare | SquareEvidence],
    model: SpreadModel | None = None,
    *,
    outside: float = 0.0,
) -> Tally:
    """The total of a spread, an interval holding the truth ``model.coverage`` of the
    time, and the squares to spread more.

    ``total`` is the sum of the per-square best counts (so the squares add
    up to it); the interval is cut from the convolution of the per-square
    distributions and always contains ``total``. ``outside``: pieces' worth
    of density seen around the board but in no square; a board located
    wrong shows as much of it, and the interval then widens to say so.
    """
    model = model or SpreadModel()
    if len(squares) != NUM_SQUARES:
        raise ValueError(f"a tally needs {NUM_SQUARES} squares, got {len(squares)}")
    spread = [s if isinstance(s, SpreadSquare) else SpreadSquare.from_evidence(s) for s in squares]
    dists = [model.square(i, s) for i, s in enumerate(spread)]
    best = [max(range(len(p)), key=p.__getitem__) for p in dists]
    total_dist = [1.0]
    for p in dists:
        total_dist = _convolve(total_dist, p)
    mass = sum(total_dist) or 1.0
    tail = (1.0 - model.coverage) / 2
    low, cumulative = 0, 0.0
    for n, share in enumerate(total_dist):
        cumulative += share / mass
        if cumulative > tail:
            low = n
            break
    high, cumulative = len(total_dist) - 1, 0.0
    for n in range(len(total_dist) - 1, -1, -1):
        cumulative += total_dist[n] / mass
        if cumulative > tail:
            high = n
            break
    total = sum(best)
    if outside > model.outside_ok:
        extra = math.ceil(model.outside_widen * outside)
        high += extra
        low -= extra // 3
    sure = [dists[sq][best[sq]] / (sum(dists[sq]) or 1.0) for sq in range(NUM_SQUARES)]
    unsure = tuple(
        sorted(
            (sq for sq in range(NUM_SQUARES) if sure[sq] < model.unsure_below), key=sure.__getitem__
        )
    )
    return Tally(
        counts=tuple(best),
        bigs=tuple(int(s.big_prob >= 0.5) for s in spread),
        total=total,
        low=max(0, min(low, total)),
        high=max(high, total),
        unsure=unsure,
    )


def fit_spread_model(
    samples: Sequence[tuple[Sequence[SpreadSquare], Sequence[int]]],
    base: SpreadModel | None = None,
    smoothing: float = 0.5,
) -> SpreadModel:
    """The table from scenes with known counts: (squares, true count per square) pairs.

    Each bucket's row is the observed share of each error, with ``smoothing``
    pseudo-counts per cell so an error never seen keeps a small probability;
    a bucket with no sample at all keeps a row it can defend (see the code).
    """
    base = base or SpreadModel()
    counts = [[0.0] * (2 * SPAN + 1) for _ in range(2 * len(DISAGREE))]
    for squares, truth in samples:
        for i, (sq, n) in enumerate(zip(squares, truth, strict=True)):
            e = max(-SPAN, min(SPAN, n - sq.peaks))
            counts[_row(i, sq)][e + SPAN] += 1
    table: list[tuple[float, ...]] = []
    for i, row in enumerate(counts):
        if not sum(row):
            # never seen: a quan square borrows its citizen bucket, a citizen the base
            half = len(DISAGREE)
            table.append(table[i - half] if i >= half else base.table[i])
            continue
        padded = [c + smoothing for c in row]
        table.append(tuple(round(c / sum(padded), 4) for c in padded))
    return replace(base, table=tuple(table))


# -- the final count ----------------------------------------------------------------


class PositionLike(Protocol):
    """What the final count reads from a known game position (engine.Position)."""

    @property
    def board(self) -> Sequence[int]: ...
    @property
    def debt(self) -> Sequence[int]: ...
    @property
    def over(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class SideCount:
    """One side's counted pieces: small ones (with an interval) and big stones."""

    pieces: int
    bigs: int = 0
    low: int | None = None
    high: int | None = None
    how: str = "camera"  # camera | buttons

    def __post_init__(self) -> None:
        if self.pieces < 0 or self.bigs < 0:
            raise ValueError("counts cannot be negative")

    @property
    def interval(self) -> tuple[int, int]:
        low = self.pieces if self.low is None else self.low
        high = self.pieces if self.high is None else self.high
        return low, high

    @classmethod
    def of(cls, tally: Tally) -> SideCount:
        return cls(tally.total, tally.big, tally.low, tally.high, "camera")


@dataclass(frozen=True, slots=True)
class FinalCount:
    """R14 with counted heaps: per player (A, B) everything the screen and journal show.

    ``pieces`` include the swept row (the players sweep it into their heap
    before the tally); ``sweep`` is that row's share when the referee knows
    the position, else None. ``debt[p]`` is what p borrowed and pays back.
    ``expected``: the small pieces both heaps must hold together when the
    referee followed the game (stores plus swept rows), else None.
    """

    pieces: tuple[int, int]
    bigs: tuple[int, int]
    mandarin_value: int
    debt: tuple[int, int]
    sweep: tuple[int, int] | None
    scores: tuple[int, int]
    #: the lowest and highest score each side's counting interval allows
    ranges: tuple[tuple[int, int], tuple[int, int]]
    winner: int | None
    #: the winner is the same for every count inside the intervals
    sure: bool
    expected: int | None = None
    #: the heaps' small pieces together, lowest and highest the intervals allow
    together: tuple[int, int] = (0, 0)

    @property
    def off_by(self) -> int:
        """How many pieces the heaps lack (> 0) or have too many (< 0) against the game;
        0 when they add up within the counting intervals, or nothing is known."""
        if self.expected is None:
            return 0
        low, high = self.together
        if self.expected < low:
            return self.expected - low
        if self.expected > high:
            return self.expected - high
        return 0

    def quan_points(self, player: int) -> int:
        return self.bigs[player] * self.mandarin_value

    def debt_net(self, player: int) -> int:
        """Repaid to ``player`` minus what ``player`` repays."""
        return self.debt[1 - player] - self.debt[player]


def heaps_expected(position: Any, sweep: tuple[int, int] | None) -> int | None:
    """Small pieces both heaps hold together after the sweep: both stores plus both rows."""
    if sweep is None:
        return None
    return int(sum(position.store)) + sweep[0] + sweep[1]


def row_sweep(position: PositionLike) -> tuple[int, int]:
    """Pebbles on each player's own row: what R14 sweeps to them."""
    board = position.board
    return sum(board[1:6]), sum(board[7:12])


def final_count(
    sides: tuple[SideCount, SideCount],
    *,
    mandarin_value: int = 10,
    debt: Sequence[int] = (0, 0),
    sweep: tuple[int, int] | None = None,
    expected: int | None = None,
) -> FinalCount:
    """score(p) = pieces(p) + value x big stones(p) - debt(p) + debt(other) (rules.md R14)."""
    if len(debt) != 2 or any(d < 0 for d in debt):
        raise ValueError(f"debt must be two non-negative numbers, got {debt!r}")
    owed = (int(debt[0]), int(debt[1]))

    def score(p: int, pieces: int) -> int:
        return pieces + mandarin_value * sides[p].bigs - owed[p] + owed[1 - p]

    scores = (score(0, sides[0].pieces), score(1, sides[1].pieces))
    ranges = tuple((score(p, sides[p].interval[0]), score(p, sides[p].interval[1])) for p in (0, 1))
    (a_lo, a_hi), (b_lo, b_hi) = ranges
    if scores[0] == scores[1]:
        winner = None
        sure = a_lo == a_hi == b_lo == b_hi
    else:
        winner = 0 if scores[0] > scores[1] else 1
        sure = a_lo > b_hi if winner == 0 else b_lo > a_hi
    return FinalCount(
        pieces=(sides[0].pieces, sides[1].pieces),
        bigs=(sides[0].bigs, sides[1].bigs),
        mandarin_value=mandarin_value,
        debt=owed,
        sweep=sweep,
        scores=scores,
        ranges=(ranges[0], ranges[1]),
        winner=winner,
        sure=sure,
        expected=expected,
        together=(
            sides[0].interval[0] + sides[1].interval[0],
            sides[0].interval[1] + sides[1].interval[1],
        ),
    )


def tally_fields(final: FinalCount, sides: tuple[SideCount, SideCount]) -> dict[str, Any]:
    """The keyword arguments of ``RecordWriter.tally`` for a final count."""
    return {
        "pieces": final.pieces,
        "intervals": [sides[0].interval, sides[1].interval],
        "bigs": final.bigs,
        "how": [sides[0].how, sides[1].how],
        "mandarin_value": final.mandarin_value,
        "debt": final.debt,
        "sweep": final.sweep,
        "scores": final.scores,
        "winner": final.winner,
        "sure": final.sure,
        "expected": final.expected,
    }


__all__ = [
    "FinalCount",
    "SideCount",
    "SpreadModel",
    "SpreadSquare",
    "Tally",
    "count_spread",
    "final_count",
    "fit_spread_model",
    "heaps_expected",
    "row_sweep",
    "tally_fields",
]

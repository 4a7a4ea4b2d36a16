"""Which legal move explains what the camera sees.

A camera cannot count a pile of 14 pebbles exactly, but after a move only the
results of at most ten legal moves can be on the board. So instead of
trusting the counts, every candidate board is scored by how likely the
reading makes it: no change yet, each legal move's result (with or without
the next player's refill), states in the middle of a move, and the usual
mistakes (a pebble in the wrong square, a missed relay, captured pebbles left
on the board, a quan non captured anyway, a refill on the wrong row). The
best candidate is accepted only with a clear margin and a good absolute fit;
otherwise the players are asked to choose, or the referee objects and names
the squares.

Variants of one move that lead to the same position (with or without its
refill) are merged. Two different moves that leave the same position are
not: the board cannot tell them apart, but the game record must name the
move that was made, so the players are asked.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from companion.referee.change import SCALE_LOG_WEIGHTS, ChangeEvidence, ChangeScorer
from engine import (
    Capture,
    Drop,
    Move,
    PickUp,
    Position,
    Refill,
    Rules,
    Transition,
    TurnEnd,
    legal_moves,
    play,
)
from engine.ring import SIDE, ring

Board = tuple[tuple[int, ...], tuple[int, ...]]  # (square counts, big stones per mandarin)


class SquareEvidence(Protocol):
    """What vision says about one square: P(count = n) for n = 0.. and P(big stone)."""

    @property
    def probs(self) -> Sequence[float]: ...

    @property
    def big_prob(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Evidence:
    """A plain :class:`SquareEvidence`, for tests, manual input and replays."""

    probs: tuple[float, ...]
    big_prob: float = 0.0

    @classmethod
    def exact(cls, count: int, big: int = 0, sure: float = 0.98) -> Evidence:
        """A confident reading of ``count`` (the rest spread on the neighbours)."""
        probs = [0.0] * (count + 3)
        probs[count] = sure
        rest = 1.0 - sure
        if count > 0:
            probs[count - 1] = rest / 2
            probs[count + 1] = rest / 2
        else:
            probs[1] = rest
        return cls(tuple(probs), sure if big else 1.0 - sure)

    @classmethod
    def either(cls, first: int, second: int, big: int = 0, sure: float = 0.98) -> Evidence:
        """A reading torn evenly between two counts (the same count twice: certain)."""
        probs = [0.0] * (max(first, second) + 1)
        probs[first] += 0.5
        probs[second] += 0.5
        return cls(tuple(probs), sure if big else 1.0 - sure)


@dataclass(frozen=True, slots=True)
class ReconcileConfig:
    """Decision thresholds; log-likelihoods are natural logs summed over 12 squares.

    A ring of 18 or 24 squares (three or four seats) scales ``max_deficit`` by
    squares / 12; everything else holds per square or per candidate.
    """

    floor: float = 1e-4  # smallest probability a reading gives any count
    accept: float = 0.995  # posterior needed to accept a move without asking
    #: the same for several moves at once (photos between them lost or partly hidden):
    #: the boards between rest on fewer photos, and on generated games with arms over
    #: the board such runs were where wrong moves were taken (a pebble dropped on a
    #: pebble that no photo shows); below it the first move alone may still be taken
    accept_run: float = 0.999
    ask: float = 0.95  # posterior the top choices must share to ask between them
    #: How far below the reading's own most likely board (in log-likelihood) a
    #: candidate may fit and still be called a good fit. Relative, so it does not
    #: depend on how wide the counter's distributions are: for calibrated readings
    #: the true board's deficit is half a chi-square with 12 degrees of freedom,
    #: whose 99.9th percentile is 16.4.
    max_deficit: float = 16.0
    min_square: float = 0.005  # a square whose count is this unlikely is an outlier
    max_outliers: int = 1  # vision misreads a square now and then; two is no fit
    #: chance that a move was made with some mistake, shared by all the mistakes
    #: that move could have (a move with many sown squares has many ways to go
    #: wrong, not a higher chance of going wrong)
    prior_mistake: float = 0.02
    #: chance that a move is caught in the middle, shared by all its pauses
    prior_moving: float = 0.05
    #: the same for a photo known to show a settled scene (``track``'s stills):
    #: its pauses are only boards the counter cannot tell from the result
    prior_moving_still: float = 0.002
    #: a move whose variants together pass ``accept`` is taken as played right
    #: when this share of them is the correct result: readings too coarse to tell
    #: a pebble one square off are no evidence of a mistake
    correct_share: float = 0.2
    prior_two_moves: float = 0.05
    #: a run of three moves is followed to the end only from first moves the first photo
    #: with a hand shows within this many nats of the best one (a few misread squares)
    run_margin: float = 25.0
    max_choices: int = 3
    #: log-likelihoods are divided by this before they become a posterior: the
    #: counter's squares are not independent (one shadow, one pile model), so
    #: twelve of them are worth less than twelve independent witnesses
    temperature: float = 1.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """One board the reading might show, and what it would mean."""

    kind: str  # unchanged | move | moving | mistake | refill
    board: Board
    move: Move | None = None
    refilled: bool = False
    mistake: str | None = None
    follows: tuple[Move, ...] = ()  # later moves, when frames between them were missed
    #: the board after each move but the last (of a run of several), with the squares
    #: picked up or captured since the trusted board by then
    path: tuple[tuple[Board, frozenset[int]], ...] = ()
    #: squares whose pile the move(s) took up or captured: a new pile, read afresh
    cleared: frozenset[int] = frozenset()
    loglik: float = 0.0
    outliers: int = 0  # squares whose count the reading makes very unlikely
    #: log-likelihood of the changed areas (``companion.referee.change``), 0 without them
    change_ll: float = 0.0


@dataclass(frozen=True, slots=True)
class SquareDiff:
    square: int
    expected: int
    seen: int
    expected_big: int = 0
    seen_big: int = 0


class VerdictKind(enum.StrEnum):
    """What a settled reading was judged to show."""

    UNCHANGED = "unchanged"
    ACCEPT = "accept"
    REFILL_DONE = "refill_done"
    MOVING = "moving"
    AMBIGUOUS = "ambiguous"
    DISPUTE = "dispute"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision for one settled reading.

    kind: ``unchanged``, ``accept``, ``refill_done``, ``moving``, ``ambiguous``
    or ``dispute``. ``transition`` is set for ``accept``; ``choices`` lists
    the candidate moves to confirm between; ``diffs`` names the squares where
    the board disagrees with the closest legal result.
    """

    kind: VerdictKind
    confidence: float = 0.0
    move: Move | None = None
    transition: Transition | None = None
    refilled: bool = False
    follows: tuple[Transition, ...] = ()
    choices: tuple[Move, ...] = ()
    mistake: str | None = None
    diffs: tuple[SquareDiff, ...] = ()
    seen: Board | None = None
    ranked: tuple[Candidate, ...] = field(default=(), repr=False)
    #: the question (or the move accepted) is about the first of several moves:
    #: once it is answered (or played), the same board is judged again
    behind: bool = False
    #: log of how likely the reading is under every board the position may have led
    #: to (their weights summed, priors included): comparable between readings of one
    #: frame, such as the board as found and the board seen from the other side
    evidence: float = 0.0
    #: how sure the changed areas alone (no counts) are of the accepted move, None
    #: without them: what a scene whose pieces the counter cannot see still proves
    change_confidence: float | None = None
    #: ``evidence`` from the changed areas alone (None without them): what a frame
    #: says where the counter cannot see the pieces
    change_evidence: float | None = None

    @property
    def detail(self) -> str:
        """One line for logs and ``oanquan track``."""
        if self.kind == VerdictKind.ACCEPT:
            return f"{self.move} ({self.confidence:.3f})"
        if self.kind == VerdictKind.AMBIGUOUS:
            text = "confirm one of " + ", ".join(str(m) for m in self.choices)
            return text + (" (the first of several moves)" if self.behind else "")
        if self.kind == VerdictKind.DISPUTE:
            squares = "; ".join(
                f"square {d.square}: expected {d.expected}{'+quan' if d.expected_big else ''}, "
                f"seen {d.seen}{'+quan' if d.seen_big else ''}"
                for d in self.diffs
            )
            what = self.mistake or "no legal move fits"
            about = f" after {self.move}" if self.move else ""
            return f"{what}{about}: {squares}"
        return str(self.kind)


def board_of(position: Position) -> Board:
    return (position.board, position.big)


def _pinned(
    reading: Sequence[SquareEvidence], board: Board, squares: set[int], sure: float = 0.99
) -> list[SquareEvidence]:
    """The reading with ``squares`` held at the count ``board`` gives them (``sure`` of the mass)."""
    counts, big = board
    out: list[SquareEvidence] = []
    for sq, e in enumerate(reading):
        if sq not in squares:
            out.append(e)
            continue
        n = counts[sq]
        probs = [(1 - sure) * p for p in e.probs] + [0.0] * max(0, n + 1 - len(e.probs))
        probs[n] += sure
        stone = big[sq // SIDE] if sq % SIDE == 0 else 0
        held = sure + (1 - sure) * e.big_prob if stone else (1 - sure) * e.big_prob
        out.append(Evidence(tuple(probs), held))
    return out


def board_fit(reading: Sequence[SquareEvidence], board: Board, floor: float = 1e-4) -> float:
    """Log-likelihood of ``board`` under a reading, squares taken as independent."""
    return _Scorer(reading, floor, floor)(board)[0]


def map_board(reading: Sequence[SquareEvidence]) -> Board:
    """The most likely count in every square, read on its own."""
    counts = tuple(
        max(range(len(e.probs)), key=lambda n: e.probs[n]) if e.probs else 0 for e in reading
    )
    big = tuple(int(reading[m].big_prob >= 0.5) for m in range(0, len(reading), SIDE))
    return counts, big


class _Scorer:
    """Log-likelihood tables so scoring a candidate is 14 lookups."""

    def __init__(
        self,
        reading: Sequence[SquareEvidence],
        floor: float,
        outlier: float,
        kept: Sequence[SquareEvidence] | None = None,
    ) -> None:
        n = len(reading)
        if n not in (12, 18, 24) or (kept is not None and len(kept) != n):
            raise ValueError(f"a reading needs 12, 18 or 24 squares, got {len(reading)}")
        self.outlier = math.log(outlier)
        self.floor = math.log(floor)
        self.tables = [tuple(math.log(max(p, floor)) for p in e.probs) for e in reading]
        #: the tables for a square whose pile stayed (see ``reconcile``'s ``kept``)
        self.kept = (
            [tuple(math.log(max(p, floor)) for p in e.probs) for e in kept]
            if kept is not None
            else self.tables
        )
        self.big = [
            (math.log(max(1.0 - e.big_prob, floor)), math.log(max(e.big_prob, floor)))
            for e in (reading[m] for m in range(0, len(reading), SIDE))
        ]
        #: the log-likelihood of the reading's own most likely board
        self.ceiling = sum(
            max(max(t), max(k)) for t, k in zip(self.tables, self.kept, strict=True)
        ) + sum(max(b) for b in self.big)

    def __call__(self, board: Board, cleared: frozenset[int] = frozenset()) -> tuple[float, int]:
        """(total log-likelihood, number of outlier squares)."""
        counts, big = board
        limit = self.outlier
        total = 0.0
        outliers = 0
        for stones, stone in zip(self.big, big, strict=True):
            v = stones[stone]
            total += v
            outliers += v < limit
        floor = self.floor
        for sq, n in enumerate(counts):
            table = self.tables[sq] if sq in cleared else self.kept[sq]
            v = table[n] if 0 <= n < len(table) else floor
            total += v
            if v < limit:
                outliers += 1
        return total, outliers

    def loglik_without(self, board: Board, skip: Collection[int]) -> float:
        """The log-likelihood over the squares not in ``skip`` (a mandarin's big stone
        with its square), for a reading with no ``kept`` tables (a glimpse's)."""
        counts, big = board
        total = 0.0
        for m, (stones, stone) in enumerate(zip(self.big, big, strict=True)):
            if m * SIDE not in skip:
                total += stones[stone]
        floor = self.floor
        for sq, n in enumerate(counts):
            if sq not in skip:
                table = self.tables[sq]
                total += table[n] if 0 <= n < len(table) else floor
        return total

    def fit_without(
        self, board: Board, cleared: frozenset[int], skip: Collection[int]
    ) -> tuple[float, int]:
        """(shortfall from the ceiling, outlier squares) over the squares not in ``skip``."""
        counts, big = board
        short = 0.0
        outliers = 0
        for stones, stone in zip(self.big, big, strict=True):
            short += max(stones) - stones[stone]
            outliers += stones[stone] < self.outlier
        for sq, n in enumerate(counts):
            if sq in skip:
                continue
            table = self.tables[sq] if sq in cleared else self.kept[sq]
            v = table[n] if 0 <= n < len(table) else self.floor
            short += max(max(self.tables[sq]), max(self.kept[sq])) - v
            outliers += v < self.outlier
        return short, outliers


def cleared_squares(transition: Transition) -> frozenset[int]:
    """Squares whose pile a move picked up or captured (whatever lies there now is new)."""
    return frozenset(e.square for e in transition.events if isinstance(e, PickUp | Capture))


def _walk(transition: Transition) -> list[tuple[Board, bool, frozenset[int]]]:
    """Board after every step of a move, flagged when the hand is about to relay,
    with the squares picked up or captured so far."""
    counts = list(transition.before.board)
    big = list(transition.before.big)
    rows = ring(transition.before.players).rows
    states: list[tuple[Board, bool, frozenset[int]]] = []
    picks = 0
    gone: frozenset[int] = frozenset()
    for event in transition.events:
        if isinstance(event, Refill) and picks == 0:
            for sq in rows[event.player]:
                counts[sq] += 1
        elif isinstance(event, PickUp):
            if picks and states:
                board, _, taken = states[-1]
                states[-1] = (board, True, taken)  # the last drop before a relay
            picks += 1
            counts[event.square] -= event.count
            gone |= {event.square}
        elif isinstance(event, Drop):
            counts[event.square] += 1
            states.append(((tuple(counts), tuple(big)), False, gone))
        elif isinstance(event, Capture):
            counts[event.square] = 0
            if event.big:
                big[event.square // 6] = 0
            gone |= {event.square}
            states.append(((tuple(counts), tuple(big)), False, gone))
        elif isinstance(event, TurnEnd):
            break
    return states


@functools.lru_cache(maxsize=1024)
def _played(
    position: Position, move: Move, rules: Rules
) -> tuple[Transition, tuple[tuple[Board, bool, frozenset[int]], ...], frozenset[int]]:
    """``move`` played from ``position``, its walk (``_walk``) and the squares it cleared.

    Cached: every frame of a run of moves judges the runs from the same trusted position
    again (each way round while the side is open), and playing them took a third of the
    slowest frames' judging. (About 8 KB a move: 8 MB at most, the runs of three from
    a position or two.)"""
    t = play(position, move, rules)
    return t, tuple(_walk(t)), cleared_squares(t)


def after_sowing(transition: Transition) -> Board:
    """The board right after the sowing and captures, before any refill that follows."""
    return _sown(transition, _walk(transition))


def _sown(transition: Transition, walk: Sequence[tuple[Board, bool, frozenset[int]]]) -> Board:
    """``after_sowing`` from the move's walk (``_walk``), where it is already at hand."""
    return walk[-1][0] if walk else board_of(transition.before)


def refills_after(transition: Transition) -> list[Refill]:
    """Refills owed once the move is over (not the mover's own start-of-turn refill)."""
    out: list[Refill] = []
    ended = False
    for event in transition.events:
        if isinstance(event, TurnEnd):
            ended = True
        elif ended and isinstance(event, Refill):
            out.append(event)
    return out


def touched_squares(transition: Transition) -> set[int]:
    """Squares a move picked up from, dropped into, captured or refilled.

    Every other square keeps its pieces exactly as they lay, which a fixed
    camera can see without counting anything.
    """
    out: set[int] = set()
    for event in transition.events:
        if isinstance(event, PickUp | Drop | Capture):
            out.add(event.square)
        elif isinstance(event, Refill):
            out.update(ring(transition.before.players).rows[event.player])
    return out


def as_question(verdict: Verdict) -> Verdict:
    """An accepted run of several moves turned into a question about its first move.

    The likeliest first moves are offered; once the players answer, the
    same board is judged again from the position after their move.
    """
    firsts: list[Move] = []
    for cand in verdict.ranked:
        if cand.kind == "move" and cand.move is not None and cand.move not in firsts:
            firsts.append(cand.move)
    if verdict.move is not None and verdict.move in firsts:
        firsts.remove(verdict.move)
    choices = tuple(([verdict.move] if verdict.move is not None else []) + firsts)[:3]
    return replace(
        verdict,
        kind=VerdictKind.AMBIGUOUS,
        choices=choices,
        transition=None,
        follows=(),
        behind=True,
    )


def _mistakes(transition: Transition, rules: Rules) -> list[tuple[str, Board, frozenset[int]]]:
    """Boards players often leave by mistake while making this move, with the squares
    whose pile was taken up or captured on the way."""
    out: list[tuple[str, Board, frozenset[int]]] = []
    counts, big = after_sowing(transition)
    gone = cleared_squares(transition)
    # A pebble dropped one square too far or too short along the path.
    for sq in sorted(set(transition.sown)):
        if counts[sq] == 0:
            continue
        for nb in ((sq + 1) % len(counts), (sq - 1) % len(counts)):
            shifted = list(counts)
            shifted[sq] -= 1
            shifted[nb] += 1
            out.append(("pebble in the wrong square", (tuple(shifted), big), gone))
    # Captured pebbles not taken off the board (all of them, or the later ones of a chain).
    captures = transition.captures
    for first in range(len(captures)):
        left = list(counts)
        left_big = list(big)
        for sq, n, stone in captures[first:]:
            left[sq] += n
            if stone:
                left_big[sq // 6] = 1
        stayed = gone - {sq for sq, _, _ in captures[first:]}
        out.append(("captured pebbles left on the board", (tuple(left), tuple(left_big)), stayed))
    # A quan non captured although the rules forbid it.
    if transition.stop == "quan_non" and transition.move is not None:
        loose = replace(rules, quan_non_min=0)
        greedy = play(transition.before, transition.move, loose)
        out.append(("quan non captured", after_sowing(greedy), cleared_squares(greedy)))
    return out


def _later_results(
    t: Transition,
    move: Move,
    follows: tuple[Move, ...],
    depth: int,
    rules: Rules,
    cleared: frozenset[int],
    path: tuple[tuple[Board, frozenset[int]], ...] = (),
) -> list[tuple[Candidate, Transition | None]]:
    """Results of ``depth`` more moves after ``t`` (only results: no pauses, no mistakes)."""
    out: list[tuple[Candidate, Transition | None]] = []
    if depth <= 0 or t.position.over:
        return out
    path = (*path, (board_of(t.position), cleared))
    for later in legal_moves(t.position, rules):
        t2, walk, taken = _played(t.position, later, rules)
        chain = (*follows, later)
        sown = _sown(t2, walk)
        gone = cleared | taken
        out.append((Candidate("move", sown, move, follows=chain, path=path, cleared=gone), t2))
        if board_of(t2.position) != sown:
            board = board_of(t2.position)
            again = Candidate("move", board, move, True, follows=chain, path=path, cleared=gone)
            out.append((again, t2))
        out.extend(_later_results(t2, move, chain, depth - 1, rules, gone, path))
    return out


def candidates(
    position: Position,
    rules: Rules,
    current: Board | None = None,
    plies: int = 1,
    deep: Collection[Move] | None = None,
) -> list[tuple[Candidate, Transition | None]]:
    """Every board that may be on the ground next, with the move that makes it.

    With ``plies`` of 2 or more the results of that many moves in a row are added
    too, for when the frames between them were unusable (a hand over the board);
    each carries the boards it passed through (``path``). ``deep``: the first moves
    whose runs go the whole ``plies`` (the others stop at two moves).
    """
    current = current or board_of(position)
    out: list[tuple[Candidate, Transition | None]] = [(Candidate("unchanged", current), None)]
    if current != board_of(position):
        out.append((Candidate("refill", board_of(position), refilled=True), None))
    if position.over:
        return out
    pauses: list[tuple[Candidate, Transition]] = []
    for move in legal_moves(position, rules):
        t, walk, gone = _played(position, move, rules)
        sown = walk[-1][0] if walk else current
        out.append((Candidate("move", sown, move, cleared=gone), t))
        normalized = board_of(t.position)
        if normalized != sown:
            out.append((Candidate("move", normalized, move, refilled=True, cleared=gone), t))
        for text, board, taken in _mistakes(t, rules):
            out.append((Candidate("mistake", board, move, mistake=text, cleared=taken), t))
        for board, at_relay, taken in walk[:-1]:
            if at_relay:
                out.append(
                    (Candidate("mistake", board, move, mistake="missed relay", cleared=taken), t)
                )
            else:
                pauses.append((Candidate("moving", board, move, cleared=taken), t))
        if plies >= 2:
            depth = plies - 1 if deep is None or move in deep else 1
            out.extend(_later_results(t, move, (), depth, rules, gone))
    # A board that is a named mistake of any move is not called a pause of another.
    named = {c.board for c, _ in out if c.kind == "mistake"}
    out.extend(item for item in pauses if item[0].board not in named)
    return out


@dataclass(frozen=True, slots=True)
class Glimpse:
    """A frame since the trusted board that a hand partly hid: its reading and its
    changed areas (against vision's reference, None without them)."""

    reading: tuple[SquareEvidence, ...]
    change: ChangeEvidence | None = None


class _Ways(NamedTuple):
    """The boards several candidates pass through at one point of their ways, as arrays
    (a row each): what a witness weighs them on, all at once."""

    #: pieces per square, and big stones per mandarin
    counts: NDArray[np.int64]
    big: NDArray[np.int64]
    #: squares picked up or captured since the trusted board by then
    gone: NDArray[np.bool_]
    #: squares whose pile differs from the candidate's result (another count or big stone,
    #: or taken up since), and of those the ones only added to (no move took them up)
    changed: NDArray[np.bool_]
    grown: NDArray[np.bool_]


def _ways_at(
    boards: Sequence[tuple[Board, frozenset[int]]],
    results: Sequence[tuple[Board, frozenset[int]]] | None = None,
) -> _Ways:
    """``boards`` (each with the squares picked up by then) as :class:`_Ways`, against
    each candidate's result in ``results`` (None: against none, nothing changed)."""
    counts = np.array([b[0] for b, _ in boards], np.int64)
    big = np.array([b[1] for b, _ in boards], np.int64)
    gone = _square_mask([g for _, g in boards], counts.shape[1])
    if results is None:
        none = np.zeros_like(gone)
        return _Ways(counts, big, gone, none, none)
    final = np.array([b[0] for b, _ in results], np.int64)
    final_big = np.array([b[1] for b, _ in results], np.int64)
    taken = _square_mask([c for _, c in results], counts.shape[1]) & ~gone
    stone = np.zeros_like(gone)
    stone[:, ::SIDE] = big != final_big
    changed = (counts != final) | stone | taken
    grown = (final > counts) & ~taken & ~stone
    return _Ways(counts, big, gone, changed, grown)


def _square_mask(sets: Sequence[frozenset[int]], squares: int) -> NDArray[np.bool_]:
    """One row per set of squares, True on its squares."""
    bits = np.array([sum(1 << sq for sq in group) for group in sets], np.int64)
    return (bits[:, None] >> np.arange(squares) & 1).astype(np.bool_)


class _Witness:
    """How well one :class:`Glimpse` shows boards (counts and changed areas), many at once.

    Given the frame being judged (``final``: its reading and its areas), a square that no move
    changes between the glimpse and that frame holds the same pile in both photos, and
    the same camera reads it the same way, errors included: two readings of it are one
    witness, not two. There the glimpse gives the same term whatever the candidate (its
    reading's likelihood under the count the frame's reading implies), so only the
    squares moves changed since it tell candidates apart by it.

    A run of moves has hundreds of candidates, each weighed on every board of its way
    by every photo: the boards are weighed as arrays (a Python loop per board cost the
    slowest frames their 250 ms).
    """

    def __init__(
        self,
        glimpse: Glimpse,
        start: Board,
        cfg: ReconcileConfig,
        final: tuple[Sequence[SquareEvidence], Sequence[float | None]] | None = None,
        later: ChangeEvidence | None = None,
    ) -> None:
        """``final``: the frame judged, to pool with (its reading and areas); ``later``:
        that frame's changed areas, to weigh this photo's given them."""
        self.counts = _Scorer(glimpse.reading, cfg.floor, cfg.min_square)
        ch = glimpse.change
        self.changes = ChangeScorer(ch, ch.reference or start, ch.gone) if ch else None
        self._later = later
        self._given: dict[tuple[int, int], tuple[float, ...]] = {}
        squares = len(glimpse.reading)
        # the counts' log-likelihoods, one column more for any count past the reading's
        width = max(len(t) for t in self.counts.tables) + 1
        self._table = np.full((squares, width), self.counts.floor)
        for sq, table in enumerate(self.counts.tables):
            self._table[sq, : len(table)] = table
        self._stones = np.array(self.counts.big, np.float64)
        mine, theirs = (ch.areas if ch else ()), (later.areas if later else ())
        #: squares whose area this photo and the frame judged both measure (against the
        #: same reference)
        self._both = np.zeros(squares, np.bool_)
        for sq, (a, b) in enumerate(zip(mine, theirs, strict=False)):
            self._both[sq] = a is not None and b is not None
        #: per square, the glimpse's term when it shows the frame's very pile (None: it
        #: is not shown twice, so the glimpse weighs in as it is)
        same: list[float | None] = [None] * squares
        if final is not None and len(final[0]) == squares:
            reading, areas = final
            same = [
                self._same(sq, glimpse, reading[sq], areas[sq], cfg.floor) for sq in range(squares)
            ]
        #: the squares it may share with the frame judged
        self._poolable = np.array([v is not None for v in same])
        self._pooled = np.array([v or 0.0 for v in same])
        self._squares = np.arange(squares)

    def _same(
        self,
        sq: int,
        glimpse: Glimpse,
        final: SquareEvidence,
        area: float | None,
        floor: float,
    ) -> float | None:
        """The glimpse's log-likelihood of square ``sq`` where it shows the pile the
        frame shows: its reading weighed over the counts the frame's reading allows, its
        changed area around the frame's (both against the same reference)."""
        ch = glimpse.change
        if area is None or ch is None or ch.areas[sq] is None:
            return None  # hidden in one of the two: the glimpse is a view of its own
        probs = [max(p, 0.0) for p in final.probs]
        total = sum(probs)
        if total <= 0.0:
            return None
        table = self.counts.tables[sq]
        mine = sum(
            math.exp(table[n] if n < len(table) else self.counts.floor) * p / total
            for n, p in enumerate(probs)
        )
        value = math.log(max(mine, floor))
        if sq % SIDE == 0:
            b = min(max(final.big_prob, 0.0), 1.0)
            no, yes = self.counts.big[sq // SIDE]
            value += math.log(max(math.exp(no) * (1.0 - b) + math.exp(yes) * b, floor))
        assert self.changes is not None  # (ch is not None)
        value += self.changes.model.loglik(ch.areas[sq] or 0.0, area, 1.0)
        return value

    def __call__(self, ways: _Ways, final: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """The glimpse's log-likelihood of each board of ``ways`` (one per row), where
        the frame judged shows the counts ``final`` of that row's result (None: weighed
        without it). Squares that no move changed between the glimpse and the frame are
        shared with the frame where the glimpse may pool with it.

        Where no move took a pile up after the glimpse (it only grew, or stayed), the
        frame judged measures the same change since the reference and more: a lone
        pebble a drop nudged looks taken up and sown into in both photos, and two such
        looks are one witness, not two. There the glimpse's area is weighed given the
        frame's (less what the pieces added since show), a density of the same number
        whatever the candidate, so it no longer votes twice for how the pile changed.
        """
        shared = self._poolable & ~ways.changed
        term = self._table[self._squares, np.minimum(ways.counts, self._table.shape[1] - 1)]
        term[:, ::SIDE] += self._stones[np.arange(len(self._stones)), ways.big]
        counts: NDArray[np.float64] = np.where(shared, self._pooled, term).sum(axis=1)
        if self.changes is None:
            return counts
        # each square's row of the changed areas (per scale) under its fate
        rows = self.changes.rows_at(ways.counts, ways.big, ways.gone, shared)
        if final is not None:
            # every square both photos measure that no move took up between them: one pile
            at = np.nonzero((ways.grown | ~ways.changed) & self._both & ~shared)
            if at[0].size:
                pairs = (final[at] - ways.counts[at]) * 64 + at[1]
                kinds, which = np.unique(pairs, return_inverse=True)
                given = [self._given_later(int(p % 64), int(p // 64)) for p in kinds]
                rows[at] = np.array(given)[which]
        sums = rows.sum(axis=1) + np.array(SCALE_LOG_WEIGHTS)
        top = sums.max(axis=1)
        whole: NDArray[np.float64] = counts + top + np.log(np.exp(sums - top[:, None]).sum(axis=1))
        return whole

    def _given_later(self, sq: int, added: int) -> tuple[float, ...]:
        """Square ``sq``'s row given the frame judged's area (``added`` pieces dropped on
        it since this photo), cached."""
        given = self._given.get((sq, added))
        if given is None:
            assert self.changes is not None and self._later is not None
            area = self._later.areas[sq]
            assert area is not None  # (both photos measure it)
            kept = self._later.kept[sq] if self._later.kept is not None else None
            given = self._given[sq, added] = self.changes.given_later(sq, area, kept, added)
        return given


def _glimpsed(
    witnesses: Sequence[_Witness], start: Board, pool: Sequence[Candidate]
) -> list[float]:
    """How well the frames a hand partly hid show the boards each candidate passes through.

    Each frame showed one board of the way (the trusted one, one between the
    moves, or the result), in order, and no frame more than one move after the
    one before it (nor the result more than one after the last): each frame is
    a settled board a player stepped back from, so a run of moves is seen move
    by move. The best such alignment counts (where the moves outnumber the
    frames, any order-keeping one). The unchanged board and the refill show the
    trusted board only.
    """
    out = [0.0] * len(pool)
    groups: dict[int, list[int]] = {}
    for i, cand in enumerate(pool):
        groups.setdefault(0 if cand.move is None else len(cand.path) + 1, []).append(i)
    nothing = (start, frozenset[int]())
    for k, members in groups.items():
        cands = [pool[i] for i in members]
        results = [(c.board, c.cleared) for c in cands]
        final = np.array([c.board[0] for c in cands], np.int64)
        ways = [
            _ways_at(
                [nothing] * len(cands)
                if a == 0
                else [c.path[a - 1] for c in cands]
                if a < k
                else results,
                results,
            )
            for a in range(k + 1)
        ]
        # (alignments as in one candidate's: which boards each photo may show is the
        # same for every candidate of a group)
        step = 1 if k <= len(witnesses) + 1 else k
        best = {0: np.zeros(len(cands))}
        for i, w in enumerate(witnesses):
            # each board the witness may show is weighed once, however many alignments
            # reach it; not those too far from the result for the photos left to reach it
            lo = max(min(best), k - step * (len(witnesses) - i))
            shows = {a: w(ways[a], final) for a in range(lo, min(max(best) + step, k) + 1)}
            nxt: dict[int, NDArray[np.float64]] = {}
            for at, total in best.items():
                for a in range(max(at, lo), min(at + step, k) + 1):
                    v = total + shows[a]
                    nxt[a] = np.maximum(nxt[a], v) if a in nxt else v
            best = nxt
        last = np.max([v for a, v in best.items() if k - a <= step], axis=0)
        for i, v in zip(members, last.tolist(), strict=True):
            out[i] = v
    return out


def reconcile(
    position: Position,
    reading: Sequence[SquareEvidence],
    rules: Rules | None = None,
    *,
    current: Board | None = None,
    config: ReconcileConfig | None = None,
    plies: int = 1,
    earlier: Sequence[Glimpse] = (),
    kept: Sequence[SquareEvidence] | None = None,
    still: bool = False,
    change: ChangeEvidence | None = None,
) -> Verdict:
    """Decide what a settled reading means for the trusted ``position``.

    ``current`` is what should be on the ground now when it differs from the
    position's board (a refill the players still owe). ``earlier``: frames
    since then that a hand partly hid, oldest first; each showed a board on the
    way (before, between or after the moves weighed), and weighs in on which
    (:func:`_glimpsed`). ``kept``: the
    reading corrected by what the counter made of each square's pile on the
    last trusted board; it is used for the squares a candidate leaves (or only
    adds to) rather than picks up, since the same pile is read the same way.
    ``still``: the reading is of a photo of a settled scene, not a live stream.
    ``change``: how much each square changed since the trusted board
    (:mod:`companion.referee.change`); it weighs every candidate by what it
    did to each square (each earlier frame's, against the same reference, weighs
    its boards). The counts are then given unpinned: squares whose
    area says "untouched" are pinned here, for the fit check and the
    squares named in a dispute only, so no evidence is counted twice.
    """
    rules = rules or Rules()
    cfg = config or ReconcileConfig()
    start_board = current or board_of(position)
    score = _Scorer(reading, cfg.floor, cfg.min_square, kept)
    seen_now = reading  # (as read, before any square is pinned: what a glimpse pools with)
    fit_score = score
    changes = None
    if change is not None:
        changes = ChangeScorer(change, change.reference or start_board, change.gone)
        quiet = {
            sq
            for sq in changes.quiet()
            if change.reference is None or change.reference[0][sq] == start_board[0][sq]
        }
        if quiet:
            reading = _pinned(reading, start_board, quiet)
            kept = _pinned(kept, start_board, quiet) if kept is not None else None
            fit_score = _Scorer(reading, cfg.floor, cfg.min_square, kept)
    # One arm photo between two moves is pooled with this frame where nothing changed
    # between them; with two or more (runs of three moves) each is still weighed whole.
    # Pooled, such runs took 7 wrong moves (session 33), pooled photo by photo still 5
    # (session 34): a lone pebble a drop nudged looks picked up and sown into again in
    # every photo since the reference, even where a move changed its square in between,
    # and only the arm photos' counts, which pooling leaves out, outweighed that.
    pooled = (seen_now, change.areas) if len(earlier) == 1 and change is not None else None
    witnesses = [_Witness(g, start_board, cfg, pooled, change) for g in earlier]

    seen = map_board(reading)
    priors = {
        "unchanged": 0.0,
        "refill": 0.0,
        "move": 0.0,
        "move2": math.log(cfg.prior_two_moves),
        "moving": math.log(cfg.prior_moving_still if still else cfg.prior_moving),
        "mistake": math.log(cfg.prior_mistake),
    }
    scored: list[tuple[float, Candidate, Transition | None]] = []
    by_change: list[float] = []  # each candidate's score from the changed areas alone
    deep = None
    if plies >= 3 and len(witnesses) >= plies - 1:
        # A run of as many moves as photos since the trusted board shows each board on
        # its way, the first hand photo the board after the first move: runs whose first
        # move that photo rules out are not followed to the end (most of the cost). With
        # more photos than that, the first may still show the trusted board: a first
        # move is then ruled out only where the photo shows neither board.
        first_moves = list(legal_moves(position, rules))
        afters = [_played(position, m, rules) for m in first_moves]
        shown = witnesses[0](
            _ways_at(
                [(start_board, frozenset()), *((board_of(t.position), c) for t, _, c in afters)]
            )
        ).tolist()
        stayed = shown[0] if len(witnesses) >= plies else -math.inf
        opening = {m: max(v, stayed) for m, v in zip(first_moves, shown[1:], strict=True)}
        top = max(opening.values(), default=0.0)
        deep = {m for m, v in opening.items() if v >= top - cfg.run_margin}
    pool = candidates(position, rules, current, plies, deep)
    lawful = {c.board for c, _ in pool if c.kind in ("unchanged", "refill", "move")}
    pool = [
        (cand, t)
        for cand, t in pool
        # A board reachable legally is never called a mistake or a pause.
        if not (cand.kind in ("moving", "mistake") and cand.board in lawful)
    ]
    variants: dict[tuple[str, Move | None], int] = {}
    for cand, _t in pool:
        if cand.kind in ("moving", "mistake"):
            variants[cand.kind, cand.move] = variants.get((cand.kind, cand.move), 0) + 1
    temp = cfg.temperature
    glimpsed = _glimpsed(witnesses, start_board, [c for c, _ in pool]) if witnesses else None
    for i, (cand, t) in enumerate(pool):
        raw, _ = score(cand.board, cand.cleared)
        ll, outliers = fit_score(cand.board, cand.cleared) if fit_score is not score else (raw, _)
        cll = changes(cand.board, cand.cleared) if changes is not None else 0.0
        prior = priors[cand.kind] + len(cand.follows) * priors["move2"]
        if cand.kind in ("moving", "mistake"):
            prior -= math.log(variants[cand.kind, cand.move])
        # (the change-only score leaves out the earlier frame too: its counts weigh in it)
        by_change.append(cll / temp + prior)
        if glimpsed is not None:
            prior += glimpsed[i] / temp
        cand = replace(cand, loglik=ll, outliers=outliers, change_ll=cll)
        scored.append(((raw + cll) / temp + prior, cand, t))
    # Merge a move's variants that end in the same position (same board, same score).
    groups: dict[object, list[tuple[float, Candidate, Transition | None]]] = {}
    for item in scored:
        _, cand, t = item
        if cand.kind == "move" and t is not None:
            key: object = ("move", t.position, cand.move, cand.follows)
        else:
            key = (cand.kind, cand.board, cand.mistake, cand.move)
        groups.setdefault(key, []).append(item)
    top = max(v for v, _, _ in scored)
    weights = {key: sum(math.exp(v - top) for v, _, _ in items) for key, items in groups.items()}
    total = sum(weights.values())
    ranked_keys = sorted(weights, key=lambda k: -weights[k])
    ranked = tuple(max(groups[k], key=lambda item: item[0])[1] for k in ranked_keys)
    best_key = ranked_keys[0]
    _, best, best_t = max(groups[best_key], key=lambda item: item[0])
    confidence = weights[best_key] / total
    evidence = top + math.log(total)
    change_confidence = change_evidence = None
    if changes is not None:
        # the same posterior without the counts: the move's own variants against the rest
        ctop = max(by_change)
        alone = [math.exp(v - ctop) for v in by_change]
        change_evidence = ctop + math.log(sum(alone))
        if best.kind == "move" and not best.follows:
            mine = sum(
                m
                for m, (_, c, _t) in zip(alone, scored, strict=True)
                if c.kind == "move" and c.move == best.move and not c.follows
            )
            change_confidence = mine / sum(alone)

    # every verdict on this reading carries what was seen and how the candidates ranked
    judged = functools.partial(
        Verdict, seen=seen, ranked=ranked, evidence=evidence, change_evidence=change_evidence
    )

    # the deficit allowed grows with the squares summed (12 on the two-player board)
    deficit = cfg.max_deficit * len(reading) / 12 if len(reading) != 12 else cfg.max_deficit

    def fits(c: Candidate) -> bool:
        if fit_score.ceiling - c.loglik <= deficit and c.outliers <= cfg.max_outliers:
            return True
        if changes is None:
            return False
        # A pile the camera saw stay (only pieces dropped on it) holds the trusted
        # count plus those: however far the counter reads it, it is no misfit.
        stayed = changes.stayed(c.board, c.cleared)
        short, outliers = fit_score.fit_without(c.board, c.cleared, stayed)
        return short <= deficit and outliers <= cfg.max_outliers

    fit_ok = fits(best)
    if best.kind == "move" and not best.follows and confidence < cfg.accept:
        # Which move was played may be clear even when a pebble one square off is not.
        family = [
            k
            for k in ranked_keys
            if groups[k][0][1].move == best.move and not groups[k][0][1].follows
        ]
        mass = sum(weights[k] for k in family) / total
        if mass >= cfg.accept and weights[best_key] / (mass * total) >= cfg.correct_share:
            confidence = mass

    if fit_ok and best.kind == "move" and best.follows and confidence < cfg.accept_run:
        # Several moves since the last trusted board, the later ones unclear: the
        # first may still be certain. It is taken alone, and the same board is
        # judged again from the position after it (``behind``).
        firsts: dict[Move, float] = {}
        for key in ranked_keys:
            cand = groups[key][0][1]
            if cand.move is not None:
                firsts[cand.move] = firsts.get(cand.move, 0.0) + weights[key]
        first = max(firsts, key=lambda m: firsts[m])
        mass = firsts[first] / total
        if mass >= cfg.accept and first == best.move:
            return judged(
                VerdictKind.ACCEPT, mass, first, play(position, first, rules), behind=True
            )

    def diffs_against(board: Board) -> tuple[SquareDiff, ...]:
        out = []
        for sq in range(len(board[0])):
            eb = board[1][sq // 6] if sq % 6 == 0 else 0
            sb = seen[1][sq // 6] if sq % 6 == 0 else 0
            if board[0][sq] != seen[0][sq] or eb != sb:
                out.append(SquareDiff(sq, board[0][sq], seen[0][sq], eb, sb))
        return tuple(out)

    if fit_ok and best.kind in ("unchanged", "refill", "move", "moving"):
        # (a photo is taken after a move: that nothing moved must be as sure as a move)
        settled = best.kind == "moving" or (best.kind == "unchanged" and not still)
        if confidence >= (cfg.accept_run if best.follows else cfg.accept) or settled:
            if best.kind == "move" and best_t is not None and best.move is not None:
                if best.follows:
                    chain = [play(position, best.move, rules)]
                    for later in best.follows:
                        chain.append(play(chain[-1].position, later, rules))
                    return judged(
                        VerdictKind.ACCEPT,
                        confidence,
                        best.move,
                        chain[0],
                        best.refilled,
                        tuple(chain[1:]),
                    )
                return judged(
                    VerdictKind.ACCEPT,
                    confidence,
                    best.move,
                    best_t,
                    best.refilled,
                    change_confidence=change_confidence,
                )
            kind = VerdictKind.REFILL_DONE if best.kind == "refill" else VerdictKind(best.kind)
            return judged(kind, confidence)
        # Ask between the likeliest moves; a move's pauses and mistakes count
        # towards it, since the players' answer settles those too. When the
        # board shows several moves, ask how they began (the answer comes
        # first, then the same board is judged again).
        several = bool(best.follows)
        by_move: dict[Move, float] = {}
        fitting: set[Move] = set()
        for key, cand in zip(ranked_keys, ranked, strict=True):
            if cand.move is None or (cand.follows and not several):
                continue
            by_move[cand.move] = by_move.get(cand.move, 0.0) + weights[key] / total
            if cand.kind == "move" and fits(cand):
                fitting.add(cand.move)
        choices = sorted(fitting, key=lambda m: -by_move[m])[: cfg.max_choices]
        shared = sum(by_move[m] for m in choices)
        # "Nothing happened yet" is no mistake: with the fitting moves it makes the case
        # for a question (the players answer, or play on), not for an objection
        idle = sum(weights[k] for k in ranked_keys if groups[k][0][1].kind == "unchanged")
        # Nor is a foul called while a lawful move that fits is likelier than every named
        # mistake: the rest may be moves the counts fit worse, which are no evidence of one
        fouls = sum(weights[k] for k in ranked_keys if groups[k][0][1].kind == "mistake")
        no_foul = best.kind == "move" and shared > fouls / total
        if choices and (shared + idle / total >= cfg.ask or no_foul):
            return judged(VerdictKind.AMBIGUOUS, confidence, choices=tuple(choices), behind=several)
    if best.kind == "mistake":
        # A foul is called only when it is likelier than every lawful way (one move or
        # several) the board could have come about: otherwise ask how the move went.
        lawfully: dict[Move, float] = {}
        run = False
        for key, cand in zip(ranked_keys, ranked, strict=True):
            if cand.kind == "move" and cand.move is not None and fits(cand):
                lawfully[cand.move] = lawfully.get(cand.move, 0.0) + weights[key] / total
                run = run or bool(cand.follows)
        if sum(lawfully.values()) >= confidence:
            asked = sorted(lawfully, key=lambda m: -lawfully[m])[: cfg.max_choices]
            return judged(VerdictKind.AMBIGUOUS, confidence, choices=tuple(asked), behind=run)
    # A dispute: name the mistake if one fits, and compare with the closest legal result.
    legal = [
        (v, c, t)
        for v, c, t in scored
        if c.kind == "move" and t is not None and not c.refilled and not c.follows
    ]
    if legal:
        _, closest, closest_t = max(legal, key=lambda item: item[1].loglik)
        expected = closest.board
        move = closest.move
    else:
        expected, move, closest_t = board_of(position), None, None
    mistake = best.mistake if best.kind == "mistake" and fit_ok else None
    diffs = diffs_against(expected)
    if not diffs and mistake is None and move is not None:
        # The counts agree with a legal result but the reading is too unsure to say so;
        # every legal move leaving that very board is offered (the last move of a game
        # often sweeps the board bare whichever it was): one alone would invite a wrong OK.
        same = sorted(
            ((c.loglik, c.move) for _, c, _t in legal if c.board == expected and c.move),
            key=lambda item: -item[0],
        )
        tied = [move, *(m for _, m in same if m != move)]
        return judged(VerdictKind.AMBIGUOUS, confidence, choices=tuple(tied[: cfg.max_choices]))
    if best.kind == "mistake" and best.move is not None:
        move = best.move
        for _, c, _t in legal:
            if c.move == best.move:
                expected = c.board
    return judged(
        VerdictKind.DISPUTE,
        confidence,
        move,
        closest_t if mistake is None else None,
        mistake=mistake,
        diffs=diffs,
    )

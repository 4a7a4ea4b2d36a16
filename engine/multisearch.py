"""The AI for three and four seats: paranoid alpha-beta over the ring kernel.

Why paranoid and not max-n: max-n keeps a score per seat and barely prunes,
so on a Raspberry Pi it would see two or three plies. Paranoid search
pretends every other seat plays against the seat to move, which turns the
game into a two-sided one where alpha-beta pruning works again, and plays
safe: it avoids lines where any opponent profits. A finished game is worth
the seat's lead over the best other seat (the game is won by finishing
first); before that, the seat's points are compared with a blend of the
leader's and the field's average (:data:`LEADER_WEIGHT`).

The rest mirrors :mod:`engine.search` in miniature: iterative deepening
against a deadline read from an injected clock (tests drive it without
sleeping), a transposition table keyed by the kernel state, captures tried
first, and a repeated position on the search path scored as the settlement
the players would agree to. Two seats go to :func:`engine.search.choose_move`,
the stronger two-player search, so callers can use this entry point for any N.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from engine import ringcore
from engine.errors import EngineError
from engine.move import Move
from engine.play import ring_config
from engine.position import Position
from engine.ringcore import RingState
from engine.rules import Rules

Clock = Callable[[], float]

#: the value of a finished game is its margin plus this, so any win beats any lead
WIN_BONUS = 1000.0
#: pebbles on a seat's own row are worth a little: they are swept to it at the end
ROW_WEIGHT = 0.3
#: how much of the "others" a position is compared with is the leader (the rest: their mean).
#: Measured at depth 3, 200 games against greedy seats (4 / 3 players), AI win share:
#: 1.0 -> 37% / 55%, 0.5 -> 42% / 59%, 0.0 -> 41% / 58%.
LEADER_WEIGHT = 0.5
MAX_DEPTH = 40
#: share of the budget the search aims at; the rest covers set-up and the answer
TIME_SAFETY = 0.8


class NoMoveError(EngineError, ValueError):
    """The game is over, so there is no move to choose."""


class _OutOfTime(Exception):
    pass


@dataclass(frozen=True, slots=True)
class MultiResult:
    """A chosen move; the attribute names match :class:`engine.search.SearchResult`."""

    move: Move
    #: the paranoid value (see evaluate) from the mover's side; a win adds WIN_BONUS
    score: float
    depth: int
    nodes: int
    pv: tuple[Move, ...]
    #: True when the value is proven to the end of the game
    exact: bool


def _material(st: RingState, cfg: ringcore.Config, seat: int) -> float:
    p = st.store[seat] + cfg.value * st.bigs[seat] - st.debt[seat] + st.lent[seat]
    b = st.b
    return p + ROW_WEIGHT * sum(b[sq] for sq in cfg.rows[seat])


def evaluate(st: RingState, cfg: ringcore.Config, root: int) -> float:
    """Root's points minus the others' (leader and mean blended); finished games exactly."""
    if st.outcome is not None:
        final = st.outcome[1]
        margin = final[root] - max(f for p, f in enumerate(final) if p != root)
        if margin > 0:
            return margin + WIN_BONUS
        if margin < 0:
            return margin - WIN_BONUS
        return 0.0
    others = [_material(st, cfg, p) for p in range(cfg.n) if p != root]
    field = LEADER_WEIGHT * max(others) + (1 - LEADER_WEIGHT) * sum(others) / len(others)
    return _material(st, cfg, root) - field


class _Searcher:
    def __init__(
        self, cfg: ringcore.Config, root: int, clock: Clock, deadline: float | None
    ) -> None:
        self.cfg = cfg
        self.root = root
        self.clock = clock
        self.deadline = deadline
        self.nodes = 0
        #: key -> (depth, value, flag, best code); flag 0 exact, 1 lower bound, 2 upper bound
        self.table: dict[tuple[object, ...], tuple[int, float, int, int]] = {}
        self.path: set[tuple[object, ...]] = set()

    def _tick(self) -> None:
        self.nodes += 1
        if self.deadline is not None and not self.nodes & 7 and self.clock() > self.deadline:
            raise _OutOfTime

    def children(self, st: RingState, first: int) -> list[tuple[int, RingState]]:
        """Every move and its result, the table's move first, then bigger captures."""
        cfg = self.cfg
        out: list[tuple[float, int, RingState]] = []
        for code in ringcore.legal_codes(st, cfg):
            child = st.copy()
            cap, mask, _ = ringcore.play(child, code, cfg)
            gain = cap + cfg.value * bin(mask).count("1")
            out.append((-1e9 if code == first else -gain, code, child))
        out.sort(key=_first)
        return [(code, child) for _, code, child in out]

    def node(self, st: RingState, depth: int, alpha: float, beta: float) -> tuple[float, bool]:
        """(value for the root, exact) of ``st`` searched ``depth`` plies deep."""
        self._tick()
        if st.outcome is not None:
            return evaluate(st, self.cfg, self.root), True
        key = st.key()
        if key in self.path:
            end = st.copy()
            ringcore.settle(end, self.cfg, "repetition", None)
            return evaluate(end, self.cfg, self.root), False
        if depth <= 0:
            return evaluate(st, self.cfg, self.root), False
        hit = self.table.get(key)
        first = 0
        if hit is not None:
            h_depth, h_value, h_flag, first = hit
            if h_depth >= depth and (
                h_flag == 0
                or (h_flag == 1 and h_value >= beta)
                or (h_flag == 2 and h_value <= alpha)
            ):
                return h_value, False
        maximise = st.to_move == self.root
        a0, b0 = alpha, beta
        best = -float("inf") if maximise else float("inf")
        best_code = 0
        exact = True
        self.path.add(key)
        try:
            for code, child in self.children(st, first):
                value, sure = self.node(child, depth - 1, alpha, beta)
                exact = exact and sure
                if (value > best) if maximise else (value < best):
                    best, best_code = value, code
                if maximise:
                    alpha = max(alpha, value)
                else:
                    beta = min(beta, value)
                if alpha >= beta:
                    exact = False
                    break
        finally:
            self.path.discard(key)
        flag = 0 if a0 < best < b0 else (1 if best >= b0 else 2)
        self.table[key] = (depth, best, flag, best_code)
        return best, exact

    def pv(self, st: RingState, first: int, depth: int) -> tuple[Move, ...]:
        moves = [Move.from_code(first)]
        cur = st.copy()
        ringcore.play(cur, first, self.cfg)
        seen = {st.key()}
        while len(moves) < depth and cur.outcome is None:
            hit = self.table.get(cur.key())
            if hit is None or not hit[3] or cur.key() in seen:
                break
            seen.add(cur.key())
            code = hit[3]
            if code not in ringcore.legal_codes(cur, self.cfg):
                break
            moves.append(Move.from_code(code))
            ringcore.play(cur, code, self.cfg)
        return tuple(moves)


def _first(item: tuple[float, int, RingState]) -> float:
    return item[0]


def choose_move(
    position: Position,
    rules: Rules,
    *,
    time_ms: int | None = None,
    depth: int | None = None,
    rng: random.Random | None = None,
    clock: Clock = time.monotonic,
) -> MultiResult:
    """The best move found within ``time_ms`` and/or ``depth`` plies, for any number of seats.

    With neither given, the budget is 500 ms. Raises :class:`NoMoveError`
    (or, for two seats, :class:`engine.search.GameOverError`) when the game is over.
    """
    if rules.players == 2:
        from engine import search

        r = search.choose_move(position, rules, time_ms=time_ms, depth=depth, rng=rng, clock=clock)
        return MultiResult(r.move, r.score, r.depth, r.nodes, r.pv, r.exact)
    start = clock()
    if time_ms is None and depth is None:
        time_ms = 500
    rng = rng if rng is not None else random.Random()
    cfg = ring_config(rules)
    st = position.to_ring_state()
    if st.outcome is None:
        ringcore.start_turn(st, cfg)
    if st.outcome is not None:
        raise NoMoveError("the game is over: there is no move to choose")
    deadline = None if time_ms is None else start + TIME_SAFETY * time_ms / 1000.0
    searcher = _Searcher(cfg, st.to_move, clock, deadline)
    codes = list(ringcore.legal_codes(st, cfg))
    rng.shuffle(codes)
    best_code, best_value, done, exact = codes[0], -float("inf"), 0, False
    limit = MAX_DEPTH if depth is None else max(1, min(depth, MAX_DEPTH))
    for d in range(1, limit + 1):
        # Depth 1 (one play per legal move) always finishes, so every answer is a searched one.
        searcher.deadline = None if d == 1 else deadline
        try:
            value, code, sure = _root(searcher, st, codes, d, best_code)
        except _OutOfTime:
            break
        best_code, best_value, done, exact = code, value, d, sure
        if sure or abs(value) >= WIN_BONUS:
            break
        if deadline is not None and clock() > start + (deadline - start) * 0.5:
            break
    return MultiResult(
        Move.from_code(best_code),
        round(best_value, 2),
        done,
        searcher.nodes,
        searcher.pv(st, best_code, max(done, 1)),
        exact,
    )


def _root(
    searcher: _Searcher, st: RingState, codes: list[int], depth: int, first: int
) -> tuple[float, int, bool]:
    """One iteration at the root: the previous best move first, full window."""
    cfg = searcher.cfg
    order = [first] + [c for c in codes if c != first]
    alpha = -float("inf")
    best_code, exact = first, True
    searcher.path.add(st.key())
    try:
        for code in order:
            child = st.copy()
            ringcore.play(child, code, cfg)
            value, sure = searcher.node(child, depth - 1, alpha, float("inf"))
            exact = exact and sure
            if value > alpha:
                alpha, best_code = value, code
    finally:
        searcher.path.discard(st.key())
    return alpha, best_code, exact


def greedy_move(position: Position, rules: Rules, rng: random.Random) -> Move:
    """The move that captures most points now (ties at random): the bench's greedy seat."""
    cfg = ring_config(rules)
    st = position.to_ring_state()
    if st.outcome is None:
        ringcore.start_turn(st, cfg)
    codes = list(ringcore.legal_codes(st, cfg))
    if not codes:
        raise NoMoveError("the game is over: there is no move to choose")
    rng.shuffle(codes)
    best, best_gain = codes[0], -1
    for code in codes:
        child = st.copy()
        cap, mask, _ = ringcore.play(child, code, cfg)
        gain = cap + cfg.value * bin(mask).count("1")
        if gain > best_gain:
            best, best_gain = code, gain
    return Move.from_code(best)

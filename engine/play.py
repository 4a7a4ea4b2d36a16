"""Checked moves with the full list of events, for the referee and the screens.

Search calls :mod:`engine.core` directly; this module wraps the same kernel in
values: legality is checked with a message a player understands, and every
pick-up, dropped pebble, capture, refill and the reason the turn stopped come
back in order, so the companion can guide players and explain disputes.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine import core, ringcore
from engine.board import ROWS
from engine.errors import IllegalMoveError, RulesError
from engine.move import Move
from engine.position import Position
from engine.ring import ring
from engine.rules import Rules


@dataclass(frozen=True, slots=True)
class PickUp:
    """All pebbles lifted from a square (the chosen one, a relay, or one taken from a mandarin)."""

    square: int
    count: int


@dataclass(frozen=True, slots=True)
class Drop:
    """One pebble dropped into a square while sowing."""

    square: int


@dataclass(frozen=True, slots=True)
class Capture:
    square: int
    pebbles: int
    big: int


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """Why the sowing stopped: chain_end, mandarin, double_empty, quan_non or loop."""

    reason: str


@dataclass(frozen=True, slots=True)
class Refill:
    """One pebble on each empty square: ``own`` from the store, ``borrowed`` as a debt."""

    player: int
    own: int
    borrowed: int
    #: (lender, pebbles) in the order they lent; only 3-4 seats fill it in
    lenders: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Pass:
    """A player who cannot refill passes (``no_refill=pass``)."""

    player: int


@dataclass(frozen=True, slots=True)
class GameEnd:
    reason: str


Event = PickUp | Drop | Capture | TurnEnd | Refill | Pass | GameEnd


@dataclass(frozen=True, slots=True)
class Captured:
    """What a move captured: small pebbles, big stones and their worth in points."""

    n: int = 0
    big: int = 0
    points: int = 0

    def to_json(self) -> dict[str, int]:
        return {"n": self.n, "big": self.big, "points": self.points}


@dataclass(frozen=True, slots=True)
class Transition:
    """A position, the move played from it, and everything that happened."""

    before: Position
    move: Move | None
    position: Position
    events: tuple[Event, ...]
    captured: Captured
    stop: str | None

    @property
    def picks(self) -> list[tuple[int, int]]:
        return [(e.square, e.count) for e in self.events if isinstance(e, PickUp)]

    @property
    def sown(self) -> list[int]:
        return [e.square for e in self.events if isinstance(e, Drop)]

    @property
    def captures(self) -> list[tuple[int, int, int]]:
        return [(e.square, e.pebbles, e.big) for e in self.events if isinstance(e, Capture)]

    @property
    def refills(self) -> list[tuple[int, int, int]]:
        return [(e.player, e.own, e.borrowed) for e in self.events if isinstance(e, Refill)]


_CONFIGS: dict[Rules, core.Config] = {}
_RING_CONFIGS: dict[Rules, ringcore.Config] = {}


def config(rules: Rules) -> core.Config:
    """The two-player kernel's flattened rules, cached because rules are few and immutable."""
    cfg = _CONFIGS.get(rules)
    if cfg is None:
        cfg = _CONFIGS[rules] = core.Config(rules)
    return cfg


def ring_config(rules: Rules) -> ringcore.Config:
    """The ring kernel's flattened rules (any number of seats), cached like :func:`config`."""
    cfg = _RING_CONFIGS.get(rules)
    if cfg is None:
        cfg = _RING_CONFIGS[rules] = ringcore.Config(rules)
    return cfg


def _check_seats(position: Position, rules: Rules) -> None:
    if position.players != rules.players:
        raise RulesError(
            f"rules: players={rules.players} but the position has {position.players} seats"
        )


def _events(trace: list[core.TraceEntry], size: int = 12) -> tuple[Event, ...]:
    out: list[Event] = []
    for entry in trace:
        kind = entry[0]
        if kind == core.T_SOW:
            _, start, count, direction = entry
            sq = int(start)  # type: ignore[call-overload]
            for _ in range(int(count)):  # type: ignore[call-overload]
                sq = (sq + int(direction)) % size  # type: ignore[call-overload]
                out.append(Drop(sq))
        elif kind == core.T_PICK:
            out.append(PickUp(int(entry[1]), int(entry[2])))  # type: ignore[call-overload]
        elif kind == core.T_CAPTURE:
            out.append(Capture(*(int(x) for x in entry[1:])))  # type: ignore[call-overload]
        elif kind == core.T_STOP:
            out.append(TurnEnd(str(entry[1])))
        elif kind == core.T_REFILL:
            player, own, borrowed = (int(x) for x in entry[1:4])  # type: ignore[call-overload]
            # Two players have one possible lender; the event says so only with more seats.
            loans = entry[4] if len(entry) > 4 and size > 12 else ()
            out.append(Refill(player, own, borrowed, loans))  # type: ignore[arg-type]
        elif kind == core.T_PASS:
            out.append(Pass(int(entry[1])))  # type: ignore[call-overload]
        elif kind == core.T_END:
            out.append(GameEnd(str(entry[1])))
    return tuple(out)


def start_turn(position: Position, rules: Rules | None = None) -> Transition:
    """Start-of-turn processing alone: the refill, a pass, or the end (R11, R12)."""
    rules = rules or Rules()
    trace: list[core.TraceEntry] = []
    if rules.players == 2 and len(position.board) == 12:  # the two-player kernel, as ever
        st = position.to_state()
        if st.outcome is None:
            core.start_turn(st, config(rules), trace)
        return Transition(position, None, Position.from_state(st), _events(trace), Captured(), None)
    _check_seats(position, rules)
    rst = position.to_ring_state()
    if rst.outcome is None:
        ringcore.start_turn(rst, ring_config(rules), trace)
    after = Position.from_state(rst)
    return Transition(position, None, after, _events(trace, 6 * rules.players), Captured(), None)


def legal_moves(position: Position, rules: Rules | None = None) -> list[Move]:
    """Every legal move of the side to move, after its compulsory refill."""
    rules = rules or Rules()
    if rules.players == 2 and len(position.board) == 12:  # the two-player kernel, as ever
        cfg = config(rules)
        st = position.to_state()
        if st.outcome is None:
            core.start_turn(st, cfg)
        return [Move.from_code(code) for code in core.legal_codes(st, cfg)]
    _check_seats(position, rules)
    rcfg = ring_config(rules)
    rst = position.to_ring_state()
    if rst.outcome is None:
        ringcore.start_turn(rst, rcfg)
    return [Move.from_code(code) for code in ringcore.legal_codes(rst, rcfg)]


def illegal_reason(position: Position, move: Move, rules: Rules | None = None) -> str | None:
    """Why ``move`` is illegal here, in words a player understands; None if it is legal."""
    rules = rules or Rules()
    rows: tuple[tuple[int, ...], ...]
    if rules.players == 2 and len(position.board) == 12:  # the two-player kernel, as ever
        st = position.to_state()
        if st.outcome is None:
            core.start_turn(st, config(rules))
        over, player, board, rows = st.outcome is not None, st.to_move, st.b, ROWS
    else:
        _check_seats(position, rules)
        rst = position.to_ring_state()
        if rst.outcome is None:
            ringcore.start_turn(rst, ring_config(rules))
        over, player, board = rst.outcome is not None, rst.to_move, rst.b
        rows = ring(rules.players).rows
    if over:
        return "the game is over"
    if move.square >= len(board):
        if rules.players == 2:
            # The same words Move gave before it accepted the squares of bigger rings.
            return f"move square must be a citizen square 1-5 or 7-11, got {move.square}"
        return f"square {move.square} is not on a board of {len(board)} squares"
    if move.square not in rows[player]:
        row = rows[player]
        return f"square {move.square} is not P{player}'s (P{player} owns {row[0]}-{row[-1]})"
    if board[move.square] == 0:
        return f"square {move.square} is empty"
    if move.direction < 0 and rules.direction == "ccw_only":
        return "only '+' moves are allowed (direction=ccw_only)"
    return None


def play(position: Position, move: Move | str, rules: Rules | None = None) -> Transition:
    """Play a move after checking it; raises :class:`IllegalMoveError` with the reason."""
    rules = rules or Rules()
    if isinstance(move, str):
        move = Move.parse(move)
    reason = illegal_reason(position, move, rules)
    if reason is not None:
        raise IllegalMoveError(
            f"illegal move {str(move)!r}: {reason} in {position.to_text()}", reason
        )
    trace: list[core.TraceEntry] = []
    if rules.players == 2:
        cfg = config(rules)
        st = position.to_state()
        core.start_turn(st, cfg, trace)
        cap, mask, stop = core.play(st, move.code, cfg, trace)
        nbig = bin(mask).count("1")
        captured = Captured(cap, nbig, cap + nbig * rules.mandarin_value)
        return Transition(
            position, move, Position.from_state(st), _events(trace), captured, core.STOPS[stop]
        )
    rcfg = ring_config(rules)
    rst = position.to_ring_state()
    ringcore.start_turn(rst, rcfg, trace)
    cap, mask, stop = ringcore.play(rst, move.code, rcfg, trace)
    nbig = bin(mask).count("1")
    captured = Captured(cap, nbig, cap + nbig * rules.mandarin_value)
    after = Position.from_state(rst)
    events = _events(trace, 6 * rules.players)
    return Transition(position, move, after, events, captured, core.STOPS[stop])


def end_now(position: Position, reason: str, rules: Rules | None = None) -> Transition:
    """End the game here with the R12 settlement (repetition, ply limit, agreed stop)."""
    rules = rules or Rules()
    trace: list[core.TraceEntry] = []
    if rules.players == 2 and len(position.board) == 12:  # the two-player kernel, as ever
        st = position.to_state()
        if st.outcome is None:
            core.settle(st, config(rules), reason, None, trace)
        return Transition(position, None, Position.from_state(st), _events(trace), Captured(), None)
    _check_seats(position, rules)
    rst = position.to_ring_state()
    if rst.outcome is None:
        ringcore.settle(rst, ring_config(rules), reason, None, trace)
    after = Position.from_state(rst)
    return Transition(position, None, after, _events(trace, 6 * rules.players), Captured(), None)

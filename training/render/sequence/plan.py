"""A game as frames: which pieces each move moves, and what every frame shows. Pure Python.

A real board changes only where the players' hands went: the square picked up, the
squares sown into, the squares captured, the row refilled. So the engine's events are
turned into operations on *pieces* (each with an id that lasts the whole game): a
pick-up lifts the square's pebbles into the hand, each drop puts one of them into the
next square, a capture moves a square's pieces onto the mover's heap, a refill takes
pebbles from a heap. Pieces that no operation touched keep their pose from the frame
before; only the pieces that arrived somewhere are dropped again by the physics.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine import Capture, Drop, Game, GameEnd, PickUp, Position, Refill, Transition, TurnEnd
from engine.board import ROWS
from training.render.geometry import REGIONS, region_of_index, ring_index

#: The two captured heaps beside the board: player 0's (south side) and player 1's.
STORES: tuple[str, str] = ("store_south", "store_north")
PLACES: tuple[str, ...] = (*REGIONS, *STORES)


class SequenceError(ValueError):
    """A frame plan cannot be built: a bad move list, or operations the pieces cannot follow."""


class OpKind(enum.Enum):
    PICK = "pick"  # lift `count` small pebbles (0: all) from a square into the hand
    DROP = "drop"  # put the hand's first pebble into a square
    CAPTURE = "capture"  # move every piece of a square onto `player`'s heap
    SUPPLY = "supply"  # put one pebble from `player`'s heap into a square (a refill)


@dataclass(frozen=True)
class Op:
    kind: OpKind
    place: str
    player: int = 0
    count: int = 0


def move_ops(transition: Transition) -> tuple[tuple[Op, ...], tuple[Op, ...]]:
    """The pieces' operations of one engine step: (the move itself, the refills after it).

    The move's part runs to the end of its sowing and captures; the refills owed by
    the next player follow the turn's end. The settlement at a game's end is left out:
    the frame after a game's last move shows the board before the players sweep it.
    """
    mover = transition.before.to_move
    board = list(transition.before.board)
    during: list[Op] = []
    after: list[Op] = []
    out = during
    for event in transition.events:
        if isinstance(event, PickUp):
            out.append(Op(OpKind.PICK, region_of_index(event.square), count=event.count))
            board[event.square] -= event.count
        elif isinstance(event, Drop):
            out.append(Op(OpKind.DROP, region_of_index(event.square)))
            board[event.square] += 1
        elif isinstance(event, Capture):
            out.append(Op(OpKind.CAPTURE, region_of_index(event.square), player=mover))
            board[event.square] = 0
        elif isinstance(event, Refill):
            empty = [sq for sq in ROWS[event.player] if board[sq] == 0]
            lender = 1 - event.player
            sources = [event.player] * event.own + [lender] * event.borrowed
            for sq, source in zip(empty, sources, strict=False):
                out.append(Op(OpKind.SUPPLY, region_of_index(sq), player=source))
                board[sq] += 1
        elif isinstance(event, TurnEnd):
            out = after
        elif isinstance(event, GameEnd):
            break
    return tuple(during), tuple(after)


# -- where every piece is -------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Which pieces lie in each place (a region or a heap), in the order they arrived."""

    places: Mapping[str, tuple[int, ...]]

    def of(self, place: str) -> tuple[int, ...]:
        return self.places.get(place, ())

    def counts(self, kinds: Mapping[int, str]) -> dict[str, dict[str, int]]:
        """render-public's engine_counts: small and big pieces per region."""
        return {
            r: {
                "small": sum(kinds[i] == "small" for i in self.of(r)),
                "big": sum(kinds[i] == "big" for i in self.of(r)),
            }
            for r in REGIONS
        }

    def stores(self, kinds: Mapping[int, str]) -> tuple[list[int], list[int]]:
        """(captured small, captured big) per player, from what lies on the heaps."""
        small = [sum(kinds[i] == "small" for i in self.of(s)) for s in STORES]
        big = [sum(kinds[i] == "big" for i in self.of(s)) for s in STORES]
        return small, big


@dataclass(frozen=True)
class Change:
    """What one step did: the new layout, the pieces that must be dropped again, and the
    regions it changed (render-public's `changed_regions`) and lifted pieces from
    (`picked_up_regions`)."""

    layout: Layout
    arrived: frozenset[int]
    changed: tuple[str, ...]
    picked_up: tuple[str, ...]


def apply_ops(layout: Layout, ops: Iterable[Op], kinds: Mapping[int, str]) -> Change:
    """Follow the operations piece by piece.

    A pick-up takes the pebbles that arrived last (the top of the pile) when it takes
    fewer than all; a capture takes big stones too; a supply takes the heap's newest
    pebble. A piece that ends the step in another place than it started, or that was
    lifted at all, has arrived and is dropped again; every other piece keeps its pose.

    Raises:
        SequenceError: an operation needs a piece that is not there.
    """
    places = {p: list(layout.of(p)) for p in PLACES}
    hand: list[int] = []
    moved: set[int] = set()
    picked: set[str] = set()
    for op in ops:
        here = places[op.place]
        if op.kind is OpKind.PICK:
            small = [i for i in here if kinds[i] == "small"]
            take = small if op.count in (0, len(small)) else small[len(small) - op.count :]
            if op.count > len(small):
                raise SequenceError(f"pick-up of {op.count} from {op.place}: it holds {len(small)}")
            for i in take:
                here.remove(i)
            hand += take
            moved.update(take)
            picked.add(op.place)
        elif op.kind is OpKind.DROP:
            if not hand:
                raise SequenceError(f"drop into {op.place} with an empty hand")
            piece = hand.pop(0)
            here.append(piece)
            moved.add(piece)
        elif op.kind is OpKind.CAPTURE:
            store = places[STORES[op.player]]
            store += here
            moved.update(here)
            here.clear()
            picked.add(op.place)
        else:  # SUPPLY
            heap = [i for i in places[STORES[op.player]] if kinds[i] == "small"]
            if not heap:
                raise SequenceError(f"refill of {op.place} from {STORES[op.player]}: it is empty")
            places[STORES[op.player]].remove(heap[-1])
            here.append(heap[-1])
            moved.add(heap[-1])
    if hand:
        raise SequenceError(f"{len(hand)} pebbles left in the hand after the step")
    new = Layout({p: tuple(places[p]) for p in PLACES})
    changed = tuple(
        r for r in REGIONS if new.of(r) != layout.of(r) or any(i in moved for i in new.of(r))
    )
    return Change(new, frozenset(moved), changed, tuple(r for r in REGIONS if r in picked))


def initial_layout(position: Position) -> tuple[Layout, dict[int, str]]:
    """Pieces for a position: ids region by region (big stone first), then the heaps.

    Returns the layout and each piece's kind (small or big).
    """
    places: dict[str, list[int]] = {p: [] for p in PLACES}
    kinds: dict[int, str] = {}

    def add(place: str, kind: str, n: int) -> None:
        for _ in range(n):
            kinds[len(kinds)] = kind
            places[place].append(len(kinds) - 1)

    add("west_mandarin", "big", position.big[0])
    add("east_mandarin", "big", position.big[1])
    for r in REGIONS:
        add(r, "small", position.board[ring_index(r)])
    for player, store in enumerate(STORES):
        add(store, "small", position.store[player])
        add(store, "big", position.bigs[player])
    return Layout({p: tuple(v) for p, v in places.items()}), kinds


# -- frames ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FramePlan:
    """One photograph of the game: what happened since the frame before, and what it shows.

    `ply` is the game's ply the board shows (None when it shows no game position, such as
    a pebble sown into the wrong square); `move` is the move that led to it (None for the
    first frame and for frames that no move led to); `mover` the player whose hand is
    most likely over the board.
    """

    index: int
    ply: int | None
    move: str | None
    ops: tuple[Op, ...]
    hand: bool
    caption: str
    mover: int = 0


def game_frames(
    start: Position,
    moves: Sequence[str],
    hands: float,
    rng: random.Random,
) -> list[FramePlan]:
    """Frame 0 shows `start`; one frame after every move, the refill included.

    `hands` is the share of frames after the first taken with an arm still over the board
    (drawn by `rng`); such a frame replaces the clean one, as in render-public.

    Raises:
        SequenceError: a move is illegal (the message names it and its ply).
    """
    game = Game(start=start)
    frames = [FramePlan(0, start.ply, None, (), False, "the start position", start.to_move)]
    for n, move in enumerate(moves, 1):
        mover = game.position.to_move
        try:
            t = game.play(move)
        except ValueError as e:
            raise SequenceError(f"move {n} ({move!r}): {e}") from None
        during, after = move_ops(t)
        hand = rng.random() < hands
        frames.append(
            FramePlan(
                n, t.position.ply, move, during + after, hand, f"P{mover} plays {move}", mover
            )
        )
        if game.is_over:
            break
    return frames


def self_play(
    rng: random.Random, plies: int, opening_share: float = 0.3, tries: int = 20
) -> tuple[Position, list[str]]:
    """A stretch of `plies` moves of a random self-play game, and the position it starts from.

    Games shorter than `plies` are drawn again (the longest of `tries` is kept). In
    `opening_share` of sequences, and whenever the game leaves no room, the stretch starts
    at the opening; otherwise 4-30 plies in, at a position without debts (bench/track.py
    reads the start from the first frame, debts aside).
    """
    best: tuple[list[Position], list[str]] | None = None
    for _ in range(tries):
        game = Game()
        history: list[Position] = [game.position]
        moves: list[str] = []
        while not game.is_over and len(moves) < 400:
            move = rng.choice(game.legal_moves())
            game.play(move)
            moves.append(str(move))
            history.append(game.position)
        if best is None or len(moves) > len(best[1]):
            best = (history, moves)
        if len(moves) >= plies:
            break
    assert best is not None
    history, moves = best
    room = len(moves) - plies
    start = 0
    if rng.random() >= opening_share and room >= 4:
        start = rng.randint(4, min(30, room))
        while start > 0 and any(history[start].debt):
            start -= 1
    return history[start], moves[start : start + plies]

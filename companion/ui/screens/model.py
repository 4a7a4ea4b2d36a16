"""Plain view-model values the screens draw, and adapters from the engine.

The screens never import the engine: they read these frozen dataclasses,
which tests build directly. :func:`board_view` and :func:`game_over_view`
read the engine's ``Position`` by duck typing (:class:`PositionLike`), so a
change inside the engine cannot break a screen unless these attributes change.

Squares and seats are named as on every other surface (terminal, JSON,
journal, docs/rules.md): seats P0..P3 and squares by their ring index. Two
seats: 0 = the quan on P0's left, 1..5 P0's row (drawn at the bottom) left to
right, 6 = the other quan, 7..11 P1's row (top) right to left. Three or four
seats (engine.ring): seat p's row is 6s+1..6s+5 after its left quan 6s, with
s = (-p) mod N.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

NUM_SQUARES = 12
#: the largest ring (four seats); a square index is checked against it where the seats are unknown
MAX_SQUARES = 24
MAX_SEATS = 4


def _check_player(player: int | None, *, allow_none: bool = False) -> None:
    if player is None and allow_none:
        return
    if player not in range(MAX_SEATS):
        raise ValueError(f"player must be 0..{MAX_SEATS - 1}, got {player!r}")


def _check_square(square: int) -> None:
    if not 0 <= square < MAX_SQUARES:
        raise ValueError(f"square must be 0..{MAX_SQUARES - 1}, got {square!r}")


def seat_side(seat: int, players: int) -> int:
    """The side of the ring (squares 6s..6s+5) where ``seat`` sits (engine.ring's reading)."""
    return (-seat) % players


def row_of(seat: int, players: int) -> tuple[int, ...]:
    """The five citizen squares of ``seat``, from its owner's left to right."""
    left = 6 * seat_side(seat, players)
    return tuple(range(left + 1, left + 6))


def left_quan(seat: int, players: int) -> int:
    """The mandarin square on ``seat``'s left."""
    return 6 * seat_side(seat, players)


@dataclass(frozen=True, slots=True)
class BoardView:
    """What is on the board and in the players' hands, for 2, 3 or 4 seats.

    ``board`` counts small pebbles (dân) per square, mandarin squares
    included (12, 18 or 24 squares); ``big[k]`` is 1 while the big stone is
    still on mandarin square 6k; ``store``, ``bigs`` and ``debt`` (pebbles
    borrowed) are per seat; ``lent`` (3-4 seats) what each seat lent.
    """

    board: tuple[int, ...]
    big: tuple[int, ...] = (1, 1)
    store: tuple[int, ...] = (0, 0)
    bigs: tuple[int, ...] = (0, 0)
    debt: tuple[int, ...] = (0, 0)
    to_move: int = 0
    ply: int = 0
    lent: tuple[int, ...] = ()
    mandarin_value: int = 10

    def __post_init__(self) -> None:
        if len(self.board) not in (12, 18, 24):
            raise ValueError(f"board needs 12, 18 or 24 counts, got {len(self.board)}")
        if any(n < 0 for n in self.board):
            raise ValueError(f"negative count in board {self.board!r}")
        n = self.players
        for name in ("big", "store", "bigs", "debt"):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"{name} needs one entry per seat ({n}), got {getattr(self, name)!r}"
                )
        if self.lent and len(self.lent) != n:
            raise ValueError(f"lent needs one entry per seat ({n}), got {self.lent!r}")
        if self.to_move not in range(n):
            raise ValueError(f"to_move must be a seat 0..{n - 1}, got {self.to_move!r}")

    @property
    def players(self) -> int:
        return len(self.board) // 6

    def held(self, player: int) -> int:
        """Points in the player's heap now: captured pebbles + the value of each big stone."""
        return self.store[player] + self.mandarin_value * self.bigs[player]

    def owed(self, player: int) -> int:
        """Pebbles the player still has to repay at the count (net; < 0: is owed)."""
        if self.players == 2:
            return self.debt[player] - self.debt[1 - player]
        lent = self.lent[player] if self.lent else 0
        return self.debt[player] - lent

    def points(self, player: int) -> int:
        """Score if counted now without the final sweep: the heap, debts settled."""
        return self.held(player) - self.owed(player)


#: The opening position (R2), handy for tests and the gallery.
START = BoardView(board=(0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5))


@dataclass(frozen=True, slots=True)
class MovePreview:
    """A legal move and what it would do.

    ``path`` lists the squares that receive a pebble, in order (repeats
    allowed when sowing goes round); ``captures`` the squares taken;
    ``gain`` the points won (pebbles + 10 per big stone), which the engine
    knows and the screen only prints.
    """

    square: int
    direction: int
    path: tuple[int, ...] = ()
    captures: tuple[int, ...] = ()
    gain: int = 0
    takes_quan: bool = False

    def __post_init__(self) -> None:
        _check_square(self.square)
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {self.direction!r}")


@dataclass(frozen=True, slots=True)
class RefillView:
    """R11: ``player`` puts one pebble on each of their 5 squares, ``borrowed`` of them lent.

    ``lenders`` lists (seat, pebbles) in the order they lent (3-4 seats; with
    two the other seat is the one lender).
    """

    player: int
    borrowed: int = 0
    lenders: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        _check_player(self.player)
        if not 0 <= self.borrowed <= 5:
            raise ValueError(f"borrowed must be 0..5, got {self.borrowed!r}")
        if self.lenders and sum(n for _, n in self.lenders) != self.borrowed:
            raise ValueError(f"lenders {self.lenders!r} do not add up to {self.borrowed}")

    @property
    def own(self) -> int:
        return 5 - self.borrowed


@dataclass(frozen=True, slots=True)
class Dispute:
    """The camera sees ``seen`` pebbles where the referee expects ``expected``."""

    square: int
    expected: int
    seen: int

    def __post_init__(self) -> None:
        _check_square(self.square)


@dataclass(frozen=True, slots=True)
class Result:
    """A finished game: final scores, winner (None = draw), sweep per player, end reason.

    ``places`` (1 = first, ties share) defaults to the ranking by score.
    """

    final: tuple[int, ...]
    winner: int | None
    sweep: tuple[int, ...] | None = None
    reason: str = "mandarins_taken"
    places: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _check_player(self.winner, allow_none=True)
        if not self.places:
            ranked = tuple(1 + sum(o > mine for o in self.final) for mine in self.final)
            object.__setattr__(self, "places", ranked)
        if len(self.places) != len(self.final):
            raise ValueError(f"places {self.places!r} do not match the scores {self.final!r}")


# --- screens: one value per thing the OLED can show --------------------------------


@dataclass(frozen=True, slots=True)
class BoardScreen:
    """The board, whose turn it is and the running score."""

    board: BoardView


@dataclass(frozen=True, slots=True)
class MoveScreen:
    """A cursor on one legal move with its preview drawn on the board."""

    board: BoardView
    preview: MovePreview


@dataclass(frozen=True, slots=True)
class ScoresScreen:
    """Captured pebbles, big stones and debts of both players."""

    board: BoardView


@dataclass(frozen=True, slots=True)
class RefillScreen:
    board: BoardView
    refill: RefillView


@dataclass(frozen=True, slots=True)
class DisputeScreen:
    board: BoardView
    dispute: Dispute


@dataclass(frozen=True, slots=True)
class ConfirmScreen:
    """The camera saw a result that 2-3 moves explain: the player picks one.

    ``same_board``: every move offered leaves the very same board (two moves that each
    end the game bare), so no photo could tell them apart: the title says so, lest the
    players take the question for the camera's failing.
    """

    candidates: tuple[MovePreview, ...]
    selected: int = 0
    same_board: bool = False

    def __post_init__(self) -> None:
        if not 1 <= len(self.candidates) <= 3:
            raise ValueError(f"confirm shows 1..3 candidates, got {len(self.candidates)}")
        if not 0 <= self.selected < len(self.candidates):
            raise ValueError(f"selected {self.selected!r} out of range")


MenuKey = Literal[
    "operator.rules",
    "operator.calibrate",
    "operator.forget_corners",
    "operator.reboot",
    "operator.shutdown",
    "operator.reset_counters",
    "menu.new_game",
    "menu.tally",
    "menu.replay",
    "menu.rules",
    "menu.language",
    "menu.hints",
    "menu.opponent",
    "menu.calibrate",
    "menu.shutdown",
    "menu.back",
]


@dataclass(frozen=True, slots=True)
class MenuItem:
    """A menu line: a catalogue key and, for settings, the catalogue key of its value."""

    key: MenuKey
    value: str | None = None


@dataclass(frozen=True, slots=True)
class MenuScreen:
    items: tuple[MenuItem, ...]
    selected: int = 0
    title: str = "menu.title"

    def __post_init__(self) -> None:
        if not 0 <= self.selected < len(self.items):
            raise ValueError(f"selected {self.selected!r} out of range")


@dataclass(frozen=True, slots=True)
class RulesScreen:
    """One page (1-based) of the short rules."""

    page: int = 1


class ErrorKind(enum.StrEnum):
    """What the error screen says went wrong."""

    CAMERA_LOST = "camera_lost"
    BOARD_NOT_FOUND = "board_not_found"


@dataclass(frozen=True, slots=True)
class ErrorScreen:
    """``mark``: ▶ marks the board's corners (only where the camera can take them)."""

    kind: ErrorKind
    mark: bool = False


@dataclass(frozen=True, slots=True)
class GameOverScreen:
    result: Result


@dataclass(frozen=True, slots=True)
class AttractScreen:
    """Kiosk idle loop: ``frame`` animates, ``offset`` shifts everything against burn-in.

    ``page`` 0 is the title; 1 and 2 tell visitors about the game (its history
    and the saying players chant at the end), so the loop teaches while it waits.
    """

    frame: int = 0
    offset: tuple[int, int] = (0, 0)
    page: int = 0


@dataclass(frozen=True, slots=True)
class HintScreen:
    """A suggested move and why: what it ``gain``s, or the capture it ``prevent``s.

    ``own`` marks the companion's own move in a game against a visitor, who
    then sows it on the real board for the companion.
    """

    board: BoardView
    preview: MovePreview
    reason: Literal["gain", "prevent", "quiet"] = "quiet"
    amount: int = 0
    own: bool = False


@dataclass(frozen=True, slots=True)
class OperatorScreen:
    """The museum operator's menu, with the counters an exhibit is judged by."""

    items: tuple[MenuItem, ...]
    selected: int = 0
    games: int = 0
    disputes: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.selected < len(self.items):
            raise ValueError(f"selected {self.selected!r} out of range")


@dataclass(frozen=True, slots=True)
class IdleScreen:
    """Auto-reset countdown: "still playing?" with the seconds left."""

    seconds: int


# --- marking the board's corners (no search finds the board) -----------------------


class CalibrateStep(enum.StrEnum):
    """Where marking the board's corners stands (``vision.locate.markers``)."""

    #: photograph the board as it is, nothing on its corners
    BARE = "bare"
    #: photograph it again with a pebble on each outer corner
    PLACE = "place"
    #: the corners are set: take the pebbles away
    DONE = "done"
    #: the marks gave no board (``MarksProblem`` says why): mark again
    FAILED = "failed"
    #: marked corners were forgotten: the board is found as before they were marked
    FORGOTTEN = "forgotten"
    #: no corners had been marked: nothing to forget
    NOTHING = "nothing"


class MarksProblem(enum.StrEnum):
    """Why the marks gave no corners."""

    FEWER = "fewer"  # under four marks seen
    MORE = "more"  # more changes than four marks: something else moved
    NO_BOARD = "no_board"  # four marks that outline no board


@dataclass(frozen=True, slots=True)
class CalibrateScreen:
    """One step of marking the corners; ``waiting``: OK was pressed and the photo is
    taken once the players stand back; ``seen``: the marks (or changes) the photos
    showed, for ``problem``."""

    step: CalibrateStep
    waiting: bool = False
    problem: MarksProblem | None = None
    seen: int = 0
    #: the corners are kept across restarts (forgotten: the kept file is gone too)
    saved: bool = True

    def __post_init__(self) -> None:
        if (self.step == CalibrateStep.FAILED) != (self.problem is not None):
            raise ValueError("a failed step, and only that, says what the problem was")
        if self.seen < 0:
            raise ValueError(f"seen {self.seen!r} is negative")


# --- tally mode: settle a scoring dispute by counting each side's pieces -------------


@dataclass(frozen=True, slots=True)
class TallyGuideScreen:
    """How to lay out ``player``'s pieces for the camera; ``counting`` once OK was pressed."""

    player: int
    counting: bool = False

    def __post_init__(self) -> None:
        _check_player(self.player)


@dataclass(frozen=True, slots=True)
class TallyView:
    """A counted spread: per-square counts, big stones on 0 / 6, total and its interval.

    ``spread``: every unsure square was lit in an earlier count of this heap, so the
    players laid it out already and spreading more will not help: the screen offers
    the interval or counting by hand instead of another respread.
    """

    counts: tuple[int, ...]
    big: tuple[int, int]
    total: int
    low: int
    high: int
    unsure: tuple[int, ...] = ()
    spread: bool = False

    def __post_init__(self) -> None:
        if len(self.counts) != NUM_SQUARES:
            raise ValueError(f"a tally needs 12 counts, got {len(self.counts)}")
        if not self.low <= self.total <= self.high:
            raise ValueError(f"total {self.total} outside its interval {self.low}-{self.high}")
        for sq in self.unsure:
            _check_square(sq)

    @property
    def board(self) -> BoardView:
        return BoardView(board=self.counts, big=self.big)


@dataclass(frozen=True, slots=True)
class TallyCountScreen:
    """What the camera counted for ``player``; the unsure squares lit."""

    player: int
    tally: TallyView

    def __post_init__(self) -> None:
        _check_player(self.player)


@dataclass(frozen=True, slots=True)
class TallyHandScreen:
    """A square the camera stayed unsure of, counted by hand: ``square`` (lit on the
    board, ``tally.counts`` holding the count entered so far), the ``index``-th of ``of``."""

    player: int
    tally: TallyView
    square: int
    index: int
    of: int

    def __post_init__(self) -> None:
        _check_player(self.player)
        _check_square(self.square)
        if not 0 <= self.index < self.of:
            raise ValueError(f"hand count {self.index + 1} of {self.of}")


TallyField = Literal["tens", "units", "bigs"]


@dataclass(frozen=True, slots=True)
class TallyEntryScreen:
    """Counting by hand: ``player``'s small pieces (tens and units) and big stones."""

    player: int
    pieces: int = 0
    bigs: int = 0
    field: TallyField = "tens"
    mandarin_value: int = 10

    def __post_init__(self) -> None:
        _check_player(self.player)
        if not 0 <= self.pieces <= 99 or not 0 <= self.bigs <= 2:
            raise ValueError(f"entry out of range: {self.pieces} pieces, {self.bigs} quan")


@dataclass(frozen=True, slots=True)
class FinalView:
    """The final count of a tally (rules.md R14), per seat P0, P1.

    ``pieces`` include the swept row; ``sweep`` is that share when known;
    ``debt[p]`` is what p borrowed and now pays back; ``sure`` says the
    winner holds for every count inside the camera's intervals; ``off_by``
    the pieces the heaps lack (> 0) or have too many (< 0) against the game.
    """

    pieces: tuple[int, int]
    bigs: tuple[int, int]
    mandarin_value: int
    debt: tuple[int, int]
    scores: tuple[int, int]
    winner: int | None
    sweep: tuple[int, int] | None = None
    sure: bool = True
    off_by: int = 0

    def __post_init__(self) -> None:
        _check_player(self.winner, allow_none=True)


@dataclass(frozen=True, slots=True)
class TallyFinalScreen:
    """Page 0: pieces, quan, debts and totals; page 1: sweep, captures, debts in detail."""

    final: FinalView
    page: int = 0

    def __post_init__(self) -> None:
        if self.page not in (0, 1):
            raise ValueError(f"final count has pages 0 and 1, got {self.page!r}")


ReplayKind = Literal["start", "pick", "relay", "drop", "capture", "refill", "end"]


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One step of a move as the hands make it: what happened where, and pebbles in hand.

    ``board`` is the board right after the step; ``count`` the pebbles taken
    (pick, relay, capture) or refilled; ``big`` a big stone was captured.
    """

    kind: ReplayKind
    board: BoardView
    square: int | None = None
    count: int = 0
    hand: int = 0
    big: int = 0
    player: int = 0

    def __post_init__(self) -> None:
        if self.square is not None:
            _check_square(self.square)
        _check_player(self.player)


@dataclass(frozen=True, slots=True)
class ReplayScreen:
    """Step ``index`` (0-based) of ``steps`` of the last move ``preview``, pebble by pebble."""

    move: MovePreview
    step: ReplayStep
    index: int
    steps: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.steps:
            raise ValueError(f"step {self.index!r} out of 0..{self.steps - 1}")


@dataclass(frozen=True, slots=True)
class NewGameScreen:
    """A game is in progress: really start a new one? (``selected`` 0 = keep playing)."""

    selected: int = 0
    ply: int = 0  # moves played in the game that would be dropped

    def __post_init__(self) -> None:
        if self.selected not in (0, 1):
            raise ValueError(f"selected must be 0 or 1, got {self.selected!r}")


CycleKind = Literal["repetition", "debt_spiral"]


@dataclass(frozen=True, slots=True)
class CycleScreen:
    """The game keeps cycling: end it by the count? Every seat agrees in turn.

    ``final`` is the count if it ended now (rows swept, debts repaid);
    ``agreed`` the seats that pressed OK; ``asking`` the seat asked now.
    """

    kind: CycleKind
    final: tuple[int, ...]
    agreed: tuple[int, ...] = ()
    asking: int = 0

    def __post_init__(self) -> None:
        if len(self.final) not in (2, 3, 4):
            raise ValueError(f"a count has 2..4 seats, got {self.final!r}")
        _check_player(self.asking)


Screen = (
    BoardScreen
    | MoveScreen
    | ScoresScreen
    | RefillScreen
    | DisputeScreen
    | ConfirmScreen
    | MenuScreen
    | RulesScreen
    | ErrorScreen
    | GameOverScreen
    | AttractScreen
    | IdleScreen
    | HintScreen
    | OperatorScreen
    | CalibrateScreen
    | TallyGuideScreen
    | TallyCountScreen
    | TallyHandScreen
    | TallyEntryScreen
    | TallyFinalScreen
    | ReplayScreen
    | NewGameScreen
    | CycleScreen
)

#: The operator's menu (kiosk), behind the long two-button hold.
OPERATOR_MENU: tuple[MenuItem, ...] = (
    MenuItem("operator.rules"),
    MenuItem("operator.calibrate"),
    MenuItem("operator.forget_corners"),
    MenuItem("operator.reset_counters"),
    MenuItem("operator.reboot"),
    MenuItem("operator.shutdown"),
    MenuItem("menu.back"),
)

#: The standard main menu, in the order the app shows it.
MAIN_MENU: tuple[MenuItem, ...] = (
    MenuItem("menu.new_game"),
    MenuItem("menu.tally"),
    MenuItem("menu.replay"),
    MenuItem("menu.rules"),
    MenuItem("menu.language", "value.vi"),
    MenuItem("menu.hints", "value.on"),
    MenuItem("menu.opponent", "value.off"),
    MenuItem("menu.calibrate"),
    MenuItem("menu.shutdown"),
)


# --- adapters from the engine ------------------------------------------------------


class OutcomeLike(Protocol):
    """What the screens read from the engine's game outcome."""

    @property
    def reason(self) -> str: ...
    @property
    def final(self) -> Sequence[int]: ...
    @property
    def winner(self) -> int | None: ...
    @property
    def sweep(self) -> object: ...
    def places(self) -> Sequence[int]: ...


class PositionLike(Protocol):
    """What the screens read from ``engine.position.Position`` (duck-typed)."""

    @property
    def board(self) -> Sequence[int]: ...
    @property
    def big(self) -> Sequence[int]: ...
    @property
    def store(self) -> Sequence[int]: ...
    @property
    def bigs(self) -> Sequence[int]: ...
    @property
    def debt(self) -> Sequence[int]: ...
    @property
    def lent(self) -> Sequence[int]: ...
    @property
    def to_move(self) -> int: ...
    @property
    def ply(self) -> int: ...
    @property
    def over(self) -> bool: ...
    @property
    def outcome(self) -> OutcomeLike | None: ...


def _ints(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def board_view(position: PositionLike, mandarin_value: int = 10) -> BoardView:
    """Copy the plain numbers out of an engine position (any number of seats)."""
    return BoardView(
        board=_ints(position.board),
        big=_ints(position.big),
        store=_ints(position.store),
        bigs=_ints(position.bigs),
        debt=_ints(position.debt),
        to_move=int(position.to_move),
        ply=int(position.ply),
        lent=_ints(getattr(position, "lent", ())),
        mandarin_value=mandarin_value,
    )


def game_over_view(position: PositionLike) -> Result | None:
    """The result of a finished game, or ``None`` while it goes on.

    ``outcome.sweep`` is shown only when it is a pair of counts; any other
    shape (a flag, None) just leaves the sweep line out.
    """
    outcome = position.outcome
    if not position.over or outcome is None:
        return None
    final = _ints(outcome.final)
    sweep = outcome.sweep
    counts: tuple[int, ...] | None = None
    if isinstance(sweep, Sequence) and len(sweep) == len(final):
        counts = _ints(sweep)
    winner = outcome.winner
    places = getattr(outcome, "places", None)
    return Result(
        final=final,
        winner=None if winner is None else int(winner),
        sweep=counts,
        reason=str(outcome.reason),
        places=_ints(places()) if callable(places) else (),
    )


class MoveLike(Protocol):
    @property
    def square(self) -> int: ...
    @property
    def direction(self) -> int: ...


class CapturedLike(Protocol):
    @property
    def points(self) -> int: ...


class TransitionLike(Protocol):
    """What the screens read from ``engine.play.Transition`` (``Game.preview(move)``)."""

    @property
    def move(self) -> MoveLike | None: ...
    @property
    def sown(self) -> Sequence[int]: ...
    @property
    def captures(self) -> Sequence[tuple[int, int, int]]: ...
    @property
    def captured(self) -> CapturedLike: ...
    @property
    def refills(self) -> Sequence[tuple[int, int, int]]: ...


def move_preview(transition: TransitionLike) -> MovePreview:
    """The cursor preview of a move from the engine's dry run of it.

    Raises:
        ValueError: the transition has no move (a refill or the final count).
    """
    move = transition.move
    if move is None:
        raise ValueError("transition has no move to preview")
    captures = tuple(transition.captures)
    return MovePreview(
        square=int(move.square),
        direction=int(move.direction),
        path=tuple(int(sq) for sq in transition.sown),
        captures=tuple(int(sq) for sq, _, _ in captures),
        gain=int(transition.captured.points),
        takes_quan=any(big for _, _, big in captures),
    )


def refill_view(transition: TransitionLike) -> RefillView | None:
    """The refill the next player must now make by hand, if the move caused one (R11)."""
    if not transition.refills:
        return None
    player, _own, borrowed = transition.refills[-1]
    return RefillView(player=int(player), borrowed=int(borrowed))


def refill_of(
    player: int, borrowed: int, lenders: Sequence[tuple[int, int]], seats: int
) -> RefillView:
    """A refill as the engine's event states it; two seats name their one lender here."""
    loans = tuple((int(p), int(n)) for p, n in lenders)
    if not loans and borrowed and seats == 2:
        loans = ((1 - player, borrowed),)
    return RefillView(player=int(player), borrowed=int(borrowed), lenders=loans)


__all__ = [
    "MAIN_MENU",
    "OPERATOR_MENU",
    "START",
    "AttractScreen",
    "BoardScreen",
    "BoardView",
    "CalibrateScreen",
    "CalibrateStep",
    "CapturedLike",
    "ConfirmScreen",
    "CycleKind",
    "CycleScreen",
    "Dispute",
    "DisputeScreen",
    "ErrorKind",
    "ErrorScreen",
    "FinalView",
    "GameOverScreen",
    "HintScreen",
    "IdleScreen",
    "MarksProblem",
    "MenuItem",
    "MenuKey",
    "MenuScreen",
    "MoveLike",
    "MovePreview",
    "MoveScreen",
    "NewGameScreen",
    "OperatorScreen",
    "OutcomeLike",
    "PositionLike",
    "RefillScreen",
    "RefillView",
    "ReplayKind",
    "ReplayScreen",
    "ReplayStep",
    "Result",
    "RulesScreen",
    "ScoresScreen",
    "Screen",
    "TallyCountScreen",
    "TallyEntryScreen",
    "TallyField",
    "TallyFinalScreen",
    "TallyGuideScreen",
    "TallyHandScreen",
    "TallyView",
    "TransitionLike",
    "board_view",
    "game_over_view",
    "left_quan",
    "move_preview",
    "refill_of",
    "refill_view",
    "row_of",
    "seat_side",
]

"""The referee's state machine for one game on a real board.

Camera mode: every settled reading is reconciled with the trusted position;
a move is applied only when one legal result explains the board clearly, and
it is journaled (fsynced) before anyone is told. Otherwise the players are
asked to choose between the likely moves, or the referee objects and names
the squares. Manual mode: moves come from the buttons and the engine still
referees and scores.

What a fixed camera adds to the counts, and the rules that keep the referee
honest: squares that look as they did on the last trusted board keep their
count (:func:`~companion.referee.evidence.pin_unchanged`); a pile is read
against what the counter made of it then (``pile_offsets``); the counter's
spread is learnt on this scene from every trusted board (``sharpness``).
Several moves are taken from one frame only when frames with a hand showed
the board between them, never after a question or a dispute, and never when
a frame was lost: then the players are asked about the first move, and the
same board is judged again from their answer. Every board the players
answer about becomes vision's reference, as a board the camera proved does.

States (as ``oanquan track`` reports them): ``waiting`` for a move,
``moving`` while a move is in progress, ``settled`` when a move or refill was
just accepted or the game is over, ``ambiguous`` while waiting for the
players to pick a move, ``dispute`` while the board disagrees with the rules.
"""

from __future__ import annotations

import copy
import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from companion.referee.change import (
    AreaScale,
    ChangeEvidence,
    ChangeModel,
    ChangeScorer,
    square_units,
)
from companion.referee.evidence import (
    COUNT_PRIOR,
    SHARPNESS,
    best_sharpness,
    mean_count,
    pile_offsets,
    pin_unchanged,
    rescaled,
    sharpened,
    sharpness_scores,
    shifted,
    stones_gone,
)
from companion.referee.reconcile import (
    Board,
    Glimpse,
    ReconcileConfig,
    SquareDiff,
    SquareEvidence,
    Verdict,
    VerdictKind,
    after_sowing,
    as_question,
    board_of,
    cleared_squares,
    map_board,
    reconcile,
    refills_after,
    touched_squares,
)
from companion.referee.records import DisputeData
from engine import Game, IllegalMoveError, Move, Position, Rules, Transition, illegal_reason
from engine.board import NUM_SQUARES
from engine.ring import ring


class RefereeState(enum.StrEnum):
    """Where the referee is in a move (the ``state`` of ``oanquan track``'s lines)."""

    WAITING = "waiting"
    MOVING = "moving"
    SETTLED = "settled"
    AMBIGUOUS = "ambiguous"
    DISPUTE = "dispute"


STATES = tuple(s.value for s in RefereeState)
#: verdicts a referee keeps by their input (``Referee._reconciled``): one frame's few,
#: for each side of the board
VERDICTS_KEPT = 16


class JournalLike(Protocol):
    """Where confirmed moves and decisions go before the screen says they are done.

    The journal's typed helpers (``companion.appliance.journal``) are the only
    writers, so every record's shape is defined once.
    """

    def move(
        self,
        move: Move | str,
        *,
        ply: int,
        how: str,
        confidence: float | None = None,
        frame: str | None = None,
    ) -> Any: ...

    def undo(self, move: Move | str | None = None, *, ply: int | None = None) -> Any: ...

    def dispute(self, question: DisputeData) -> Any: ...

    def resolve(
        self, how: str, *, dispute: int | None = None, move: Move | str | None = None
    ) -> Any: ...

    def refill_done(self, player: int | None = None, *, ply: int | None = None) -> Any: ...

    def end(self, final: Sequence[int], reason: str, winner: int | None = None) -> Any: ...


@dataclass(frozen=True, slots=True)
class Observation:
    """What vision made of one frame: the reading, or why the frame cannot be counted."""

    reading: Sequence[SquareEvidence] | None
    fit: bool = True
    reason: str | None = None
    still: bool = False
    board_found: bool = True
    #: per square, whether it differs from the last frame the referee confirmed (None: unknown)
    changed: tuple[bool, ...] | None = None
    #: a hand hides some squares (their evidence is flat): only a move the rest
    #: of the board proves is taken from such a frame, nothing else is decided
    partial: bool = False
    #: per square, hidden by a hand in this frame (None: nothing hidden or unknown)
    hidden: tuple[bool, ...] | None = None
    #: per square, how much changed since that frame, in pebble areas (None: unknown)
    areas: tuple[float | None, ...] | None = None
    #: per square, the share of that frame's pebbles still in place (None: unknown)
    kept: tuple[float | None, ...] | None = None


#: what the referee says while a clear frame waits for the next to decide: its move
#: (``RefereeConfig.defer_doubt``; to players at a live camera, its next move), or the
#: side P0 sits on
HELD_DOUBT = "not sure yet: the next photo decides"
HELD_DOUBT_LIVE = "not sure yet: the next move decides"
HELD_SIDE = "side not yet known"


@dataclass(frozen=True, slots=True)
class _Partial:
    """A frame the referee could not decide on (a hand over it, or a photo whose side is
    open): what it showed of the board."""

    reading: Sequence[SquareEvidence]  # as weighed (gain, sharpness)
    change: ChangeEvidence | None
    learn: tuple[SquareEvidence, ...]  # as learnt from when its board is trusted
    hidden: tuple[bool, ...] | None
    #: a clear photo whose move was in doubt, kept for the next photo to decide
    doubt: bool = False
    #: what a clear frame kept for the next to decide (its move or its side in doubt)
    #: showed, as the referee read it: a live camera keeps showing that board until
    #: the next move, and those frames are not judged again (``Referee._shows_held``)
    seen: Board | None = None

    def half_turned(self) -> _Partial:
        """The same frame seen from the other side of the board (:func:`half_turned`)."""
        change = self.change
        if change is not None:
            kept = None if change.kept is None else _turned(change.kept)
            change = replace(change, areas=_turned(change.areas), kept=kept)
        hidden = None if self.hidden is None else _turned(self.hidden)
        seen = None if self.seen is None else _turned_board(self.seen)
        return _Partial(
            _turned(self.reading), change, _turned(self.learn), hidden, self.doubt, seen
        )


@dataclass(frozen=True, slots=True)
class Weighing:
    """What one frame says under one side of the board (:meth:`Referee.weigh`)."""

    #: log evidence of the frame (:class:`~companion.referee.reconcile.Verdict`)
    evidence: float
    #: the moves the referee would take from it by itself, in order
    moves: tuple[Move, ...] = ()
    #: every move the frame may show was weighed (not more than ``max_catch_up``):
    #: otherwise the evidence compares explanations that may all be wrong
    complete: bool = True


def _turned(values: Sequence[Any]) -> tuple[Any, ...]:
    """Per-square values of a two-player board seen from the other side: k from k + 6."""
    n = len(values)
    return tuple(values[(k + n // 2) % n] for k in range(n))


def _turned_board(board: Board) -> Board:
    """A two-player board as read from the other side (its mandarins swap too)."""
    return _turned(board[0]), board[1][::-1]


def half_turned(observation: Observation) -> Observation:
    """The same frame seen from the other side of the board: square k read as k + 6.

    A two-player board drawn on the ground looks the same turned half round,
    so the image cannot say on which side P0 sits; the game can (P0 sows from
    the row nearer them). Every per-square field turns with the reading.
    """
    reading = observation.reading
    if reading is None or len(reading) != NUM_SQUARES:
        return observation

    def turn(values: Sequence[Any] | None) -> Any:
        return None if values is None else _turned(values)

    return replace(
        observation,
        reading=turn(reading),
        changed=turn(observation.changed),
        hidden=turn(observation.hidden),
        areas=turn(observation.areas),
        kept=turn(observation.kept),
    )


@dataclass(frozen=True, slots=True)
class RefereeConfig:
    settle_frames: int = 3  # identical readings in a live stream before deciding
    #: most moves recognised at once after frames that decided nothing (3 costs ~10x the time
    #: of 2, and a third move in one frame is asked about anyway)
    max_catch_up: int = 2
    #: a photo after photos with a hand over the board is weighed for up to this many
    #: moves: each of those photos shows the board between two of them, which keeps
    #: the runs that fit few
    max_chain: int = 3
    #: a clear photo that leaves its move in doubt is kept as a witness and the next
    #: photo decides both moves (asking only if it cannot): two moves whose boards
    #: differ by a pebble in a small pile or two often lead to boards the next photo
    #: tells apart
    defer_doubt: bool = True
    reconcile: ReconcileConfig = field(default_factory=ReconcileConfig)
    change: ChangeModel = field(default_factory=ChangeModel)


@dataclass(frozen=True, slots=True)
class Accepted:
    move: Move
    ply: int
    confidence: float
    how: str  # camera | confirmed | buttons


@dataclass(frozen=True, slots=True)
class Report:
    """The referee's verdict for one frame or one button action."""

    state: RefereeState
    detail: str
    accepted: tuple[Accepted, ...] = ()
    verdict: Verdict | None = None
    #: the referee trusts what this frame shows (a move, no change, a refill): a new reference
    confirmed: bool = False
    #: this frame showed the opening as it should be: vision may calibrate on it
    opening_ok: bool = False
    #: the question is about the first of several moves made while the camera
    #: could not follow: once it is answered, the same board is judged again
    behind: bool = False
    #: the first of several moves is taken, and the board a frame with a hand showed
    #: after it is trusted (``see(earlier=True)``): vision compares with that frame
    #: now, and the same frame, measured against it, is judged again for the rest
    earlier_trusted: bool = False


def _refill_text(transition: Transition) -> str:
    parts = []
    rows = ring(transition.before.players).rows
    for refill in refills_after(transition):
        p = refill.player
        text = f"P{p} puts 1 pebble on each of squares {rows[p][0]}-{rows[p][-1]}"
        if refill.borrowed:
            lent = refill.lenders or ((1 - p, refill.borrowed),)
            whom = ", ".join(f"{n} from P{q}" for q, n in lent)
            if len(lent) == 1:
                whom = f"{refill.borrowed} borrowed from P{lent[0][0]}"
            else:
                whom = f"{refill.borrowed} borrowed: {whom}"
            text += f" ({refill.own} own, {whom})"
        parts.append(text)
    return "; ".join(parts)


class Referee:
    """One game refereed from camera readings and button answers."""

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        start: Position | None = None,
        journal: JournalLike | None = None,
        clock: Callable[[], float] | None = None,
        config: RefereeConfig | None = None,
        mode: str = "camera",
    ) -> None:
        self.rules = rules or Rules()
        self.config = config or RefereeConfig()
        self.journal = journal
        self.clock = clock
        self.mode = mode
        self.game = Game(self.rules, start)
        self.owed: Board | None = None  # physical board while a refill is still owed
        self.pending: Verdict | None = None
        self.state = RefereeState.WAITING
        self.setup_checked = self.game.position.ply > 0
        #: how many boards the referee came to trust (each one a new reference for vision)
        self.trusted_boards = 0
        self._last_seen: Board | None = None
        self._stable = 0
        self._undecided = 0
        #: frames since the last decision that could not be read at all (lost)
        self._lost = 0
        #: photos of settled scenes since the last trusted board, and its ply: a photo
        #: shows at most one more move, so the moves it may show are counted out
        self._photos = 0
        self._trust_ply = self.game.position.ply
        #: frames with a hand since the last decision (what they did show): the reading
        #: weighed, its change evidence, and the reading and hidden squares to learn from
        self._partials: list[_Partial] = []
        #: squares that moves entered with the buttons changed since the last board
        #: the camera showed and the referee trusted (vision's reference frame)
        self._ref_touched: frozenset[int] = frozenset()
        #: the open question is about the first of several moves (see Report.behind)
        self._behind = False
        self._recheck = False
        #: clear photos in a row judged to show a move half made (``moving``)
        self._paused_stills = 0
        #: a live camera's runs of frames with motion or a hand in them since the last
        #: board decided or held (each a move made: after a board held, the next move
        #: has begun, ``_shows_held``), and whether the last frame was one
        self._episodes = 0
        self._in_motion = False
        #: a live camera's clear frames (no motion, no hand) since the last that was not
        self._clear_run = 0
        #: a live camera's readable frames with a hand in them since the last that was
        #: not (vision's gate turned away every one that moved): a hand at rest
        self._hand_run = 0
        #: the board that hand at rest showed, as read when judged
        self._rest_board: Board | None = None
        #: frames come from a live camera (one was not a photo of a settled scene): a
        #: frame that differs much from the one before it is judged at once, as a photo
        #: is, but the photos' count of one move each does not hold for it
        self._live = False
        self._stale_after_trust: frozenset[int] = frozenset()
        #: the last few verdicts by reconcile's whole input: while the side is open a frame
        #: is judged on a copy the way it is then judged for real (``weigh``), and reconcile
        #: is pure, so the second judgment reuses the first (shared with the copies)
        self._verdicts: dict[tuple[object, ...], Verdict] = {}
        #: per SHARPNESS, how well it explains the boards trusted so far (sharpness_scores)
        self._sharp_scores = [0.0] * len(SHARPNESS)
        #: how far the counter read each pile of the last trusted board (pile_offsets)
        self._offsets: tuple[float, ...] = (0.0,) * len(self.game.position.board)
        #: the last reading judged and its hidden squares (learnt from when it is trusted)
        self._last_reading: tuple[tuple[SquareEvidence, ...], tuple[bool, ...] | None] | None = None
        #: change flags against decisions: flagged & same, same, flagged & changed, changed
        self._change_stats = [0, 0, 0, 0]
        #: pebbles concluded on the board, pebbles the counter expected there
        self._count_stats = [0.0, 0.0]
        #: how far the counter read the squares of trusted boards off (pebbles, summed),
        #: and the pebbles they held
        self._sight = [0.0, 0.0]
        #: how large a pebble looks here, learnt from the areas of trusted boards
        self._area_scale = AreaScale()
        #: the board vision's change reference shows, square by square (a square a hand
        #: hid when a board was trusted keeps an older one), and the squares picked up since
        self._vref: Board = board_of(self.position)
        self._vref_gone: frozenset[int] = frozenset()
        #: the changed areas of the frame just judged (learnt from when it is trusted)
        self._last_areas: tuple[float | None, ...] | None = None
        #: the log evidence (counts, changes alone) of the last frame ``see`` judged, from
        #: the position before it, and whether every move it may show was weighed: when
        #: its first move is taken and the rest judged after it, the report's verdict is
        #: that second judgment's, which leaves the first move's weight out
        self._judged: tuple[float, float | None, bool] | None = None

    # -- bookkeeping ------------------------------------------------------

    @property
    def position(self) -> Position:
        return self.game.position

    @property
    def at_opening(self) -> bool:
        """No move yet, from the rules' opening position (what vision calibrates on)."""
        return not self.game.transitions and self.position == Position.initial(self.rules)

    def _apply(self, move: Move, how: str, confidence: float, frame: str | None) -> Accepted:
        """Journal, then play, a move already known to be legal (reconciled or checked)."""
        # Journal first: a power cut after this line still knows the move.
        if self.journal is not None:
            ply = self.position.ply + 1
            self.journal.move(move, ply=ply, how=how, confidence=confidence, frame=frame)
        t = self.game.play(move)
        self.pending = None
        self._vref_gone |= cleared_squares(t)
        if how != "camera":
            self._ref_touched |= touched_squares(t)
        return Accepted(move, self.position.ply, confidence, how)

    def _trust(self, learn: bool = True) -> None:
        """The board in the frame just judged is trusted: it is vision's new reference.
        ``learn``: what the frame shows of this scene is learnt (not from a live
        camera's frames of a board trusted already: they are one witness, and summed
        they made the counter's readings look twice as sharp as they are)."""
        now = self.owed or board_of(self.position)
        if self._last_areas is not None and learn:
            units = square_units(self._vref, now, self._vref_gone, self.config.change)
            pairs = [(a, u) for a, u in zip(self._last_areas, units, strict=True) if a is not None]
            self._area_scale = self._area_scale.learn(pairs, self.config.change)
        self._last_areas = None
        if self._last_reading is not None:
            reading, hidden = self._last_reading
            seen = [sq for sq in range(len(reading)) if not (hidden and hidden[sq])]
            truth = sum(now[0][sq] for sq in seen)
            if truth >= 10 and learn:
                self._sight[0] += sum(abs(mean_count(reading[sq]) - now[0][sq]) for sq in seen)
                self._sight[1] += truth
        # vision keeps the old reference of squares a hand hid in the frame trusted
        under = self._last_reading[1] if self._last_reading is not None else None
        kept = {sq for sq, h in enumerate(under or ()) if h}
        counts = tuple(
            o if sq in kept else n
            for sq, (o, n) in enumerate(zip(self._vref[0], now[0], strict=True))
        )
        side = len(counts) // len(now[1])
        big = tuple(
            o if m * side in kept else n
            for m, (o, n) in enumerate(zip(self._vref[1], now[1], strict=True))
        )
        self._vref = (counts, big)
        self._vref_gone = frozenset(sq for sq in self._vref_gone if sq in kept)
        if self._last_reading is not None:
            reading, hidden = self._last_reading
            counts = (self.owed or board_of(self.position))[0]
            self._offsets = pile_offsets(reading, counts, hidden)
            if learn:
                scores = sharpness_scores(reading, counts, hidden)
                self._sharp_scores = [
                    a + b for a, b in zip(self._sharp_scores, scores, strict=True)
                ]
        else:
            self._offsets = (0.0,) * len(self.position.board)
        for sq in self._stale_after_trust:
            self._offsets = (*self._offsets[:sq], 0.0, *self._offsets[sq + 1 :])
        self._last_reading = None
        self.trusted_boards += 1
        self._ref_touched = self._stale_after_trust
        self._stale_after_trust = frozenset()
        self._partials = []
        self._lost = 0
        self._photos = 0
        self._trust_ply = self.position.ply

    @property
    def holding(self) -> bool:
        """Whether a clear frame waits for the next move to decide it (its move or its
        side in doubt): a live camera's frames of that board wait with it."""
        return bool(self._partials) and self._partials[-1].seen is not None

    def _next_hand_run(self, observation: Observation) -> tuple[int, bool]:
        """The run of live frames with a hand (``_hand_run``) this frame makes, and
        whether it restarts because the board changed under a hand that had rested."""
        reading = observation.reading
        if observation.still or not observation.partial or not observation.fit or reading is None:
            return 0, False
        if self._hand_run >= self.config.settle_frames and map_board(reading) != self._rest_board:
            return 1, True
        return self._hand_run + 1, False

    def rests(self, observation: Observation) -> bool:
        """Whether this live frame with a hand is the one judged as a hand at rest over the
        board (the ``settle_frames``-th in a row over one board): it is judged once, as a
        photo with an arm is, so it witnesses what one does."""
        run, _ = self._next_hand_run(observation)
        return run == self.config.settle_frames

    @property
    def partials_held(self) -> int:
        """Frames with a hand held since the last decision, as evidence of the board
        between moves (the pipeline keeps the latest one's image for ``see(earlier=True)``)."""
        return len(self._partials)

    def _trust_earlier(self, first: Transition) -> bool:
        """Trust the board after ``first`` as the last frame with a hand showed it, where
        that frame's changed areas say so (20 to 1 against the board before ``first``),
        so the rest of the moves are judged on what changed since it. Not with a
        refill owed: the board on the ground is then not the position's."""
        if len(self._partials) != 1 or self.owed is not None or refills_after(first):
            return False  # (after several such frames the last shows a later board)
        held = self._partials[-1]
        change = held.change
        if change is None or not held.learn:
            return False
        before, after = board_of(first.before), board_of(first.position)
        scorer = ChangeScorer(change, change.reference or before, change.gone)
        shown = scorer(after, cleared_squares(first)) - scorer(before, frozenset())
        if shown < math.log(20.0):
            return False
        under = {sq for sq, h in enumerate(held.hidden or ()) if h}
        self._last_reading = (held.learn, held.hidden)
        self._last_areas = change.areas
        # vision keeps the old reference under the hand (as for a move taken on such a frame)
        self._stale_after_trust = frozenset((self._ref_touched | touched_squares(first)) & under)
        self._trust()
        self._photos = 1  # (this frame, judged again against it, is a photo after it)
        return True

    def _hold(
        self,
        reading: Sequence[SquareEvidence],
        change: ChangeEvidence | None,
        hidden: tuple[bool, ...] | None,
        *,
        doubt: bool = False,
        seen: Board | None = None,
    ) -> None:
        """Keep an undecided photo as a witness of the board between moves: the next
        frame is weighed for one move more, this one matched with the board it showed.
        ``doubt``: a clear photo whose move is in doubt (:meth:`_may_defer`). ``seen``:
        a clear frame's board as read (its move or its side in doubt)."""
        self._undecided += 1
        last = self._last_reading
        learn = last[0] if last else ()
        self._partials.append(_Partial(reading, change, learn, hidden, doubt, seen))
        if seen is not None:
            self._episodes = 0  # (the moves before it end at the board it shows)

    def _shows_held(self, still: bool, settled: bool, seen: Board) -> bool:
        """Whether a live frame shows the clear frame kept for the next to decide, and so
        waits for the next move (unless none may follow): nothing has moved since (no
        hand, no frame unread) and the board is read as it was. A live camera sees the
        same board for as long as the players think: judged again, it would be asked
        about at once, where the next move's board may settle it as the next photo does.
        A board that settles read otherwise is judged (the next move, or a reading that
        drifted: then the question comes, never a move taken on the same evidence
        twice)."""
        held = self._partials[-1].seen if self._partials else None
        return held is not None and not still and settled and not self._episodes and seen == held

    def _again_live(self, verdict: Verdict | None) -> bool:
        """Whether a live camera's frame shows a board already trusted (no move since):
        one more frame of it, which teaches nothing new of the scene."""
        return self._live and verdict is not None and verdict.kind == VerdictKind.UNCHANGED

    def _may_defer(self, partial: bool, judged: bool, single: bool) -> bool:
        """Whether a clear photo (or a live camera's settled frame) whose move is in doubt
        may wait for the next photo (``RefereeConfig.defer_doubt``): only a photo of one
        move (``single``), judged for the first time and not the last, with every photo
        since the trusted board seen and no answer awaited (the next photo then weighs
        two moves, with this one as the board between them), on a scene whose pieces the
        counter can see."""
        return (
            self.config.defer_doubt
            and not partial
            and not judged
            and single
            and self.setup_checked
            and not self.blind
            and not self._partials
            and self._lost == 0
            and self.owed is None
            and not self._recheck
            and self.state not in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE)
        )

    def _may_catch_up(self) -> bool:
        """Whether several moves may be accepted from one frame without the players.

        Only when every frame since the last decision was seen (with a hand
        over part of it), and the referee was not waiting for an answer.
        """
        return (
            self._lost == 0
            and bool(self._partials)
            and self.state not in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE)
        )

    def _after_move_report(
        self, accepted: Accepted, refilled: bool, verdict: Verdict | None
    ) -> Report:
        transition = self.game.transitions[-1]
        if self.position.over and self.position.outcome is not None:
            o = self.position.outcome
            who = "draw" if o.winner is None else f"P{o.winner} wins"
            if self.journal is not None:
                self.journal.end(o.final, o.reason, o.winner)
            self.state = RefereeState.SETTLED
            return Report(
                RefereeState.SETTLED,
                f"{accepted.move} ends the game: {'-'.join(map(str, o.final))}, {who}",
                (accepted,),
                verdict,
            )
        detail = f"{accepted.move} accepted"
        sown = after_sowing(transition)
        if refills_after(transition) and not refilled and sown != board_of(self.position):
            self.owed = sown
            detail += "; refill: " + _refill_text(transition)
        else:
            self.owed = None
        self.state = RefereeState.SETTLED
        return Report(RefereeState.SETTLED, detail, (accepted,), verdict)

    # -- camera -----------------------------------------------------------

    def observe(
        self,
        reading: Sequence[SquareEvidence] | None,
        *,
        frame: str | None = None,
        fit: bool = True,
        reason: str | None = None,
        still: bool = False,
        changed: Sequence[bool] | None = None,
        partial: bool = False,
        hidden: Sequence[bool] | None = None,
        areas: Sequence[float | None] | None = None,
        again: bool = False,
        in_place: Sequence[float | None] | None = None,
        side_doubt: float = 0.0,
        final: bool = False,
    ) -> Report:
        """One camera frame: ``fit`` False (motion, hand, exposure) means do not count it.

        ``still`` marks a scene known to be settled (a photo with no motion
        evidence); otherwise decisions wait for identical readings in a row.
        ``changed`` says which squares look different from the last frame the
        referee confirmed; the others hold what the referee knows they held.
        ``partial``: some squares are hidden (see :class:`Observation`).
        ``areas``: how much of each square changed since then, in pebble areas
        (:mod:`companion.referee.change`); it supersedes ``changed``.
        ``again``: the same frame judged again after the players answered.
        ``in_place``: the share of each square's pebbles still where they lay.
        ``side_doubt``: the chance that the camera sees the board from the other
        side than the reading assumes (while the game has not shown it): a move is
        only as sure as that side, so none is taken by itself below the accept level.
        ``final``: no photo follows (see :meth:`see`).
        """
        return self.see(
            Observation(
                reading,
                fit=fit,
                reason=reason,
                still=still,
                changed=None if changed is None else tuple(changed),
                partial=partial,
                hidden=None if hidden is None else tuple(hidden),
                areas=None if areas is None else tuple(areas),
                kept=None if in_place is None else tuple(in_place),
            ),
            frame,
            again=again,
            side_doubt=side_doubt,
            final=final,
        )

    def see(
        self,
        observation: Observation,
        frame: str | None = None,
        *,
        again: bool = False,
        side_doubt: float = 0.0,
        earlier: bool = False,
        final: bool = False,
    ) -> Report:
        """:meth:`observe` for an observation from :mod:`companion.appliance.observe`.

        ``earlier``: vision holds the image of the last frame with a hand that the
        referee kept (:attr:`partials_held`). When this frame shows several moves and
        the first is certain, the referee may then trust the board that frame showed
        after it and answer ``earlier_trusted`` instead of judging the rest on
        changes measured from before the first move: the caller makes vision compare
        with the held frame and judges this frame again (``again=True``).
        ``final``: no photo follows this one (the end of a folder of photos), so it is
        not kept for the next one to decide: what it leaves in doubt is asked now.
        """
        if observation.still and not again:
            self._photos += 1
        if not again:
            self._recheck = False
            self._judged = None
        report = self._observe(observation, frame, side_doubt, earlier, again, final)
        if report.earlier_trusted:
            return report  # (trusted already: the board the earlier frame showed)
        decided = report.accepted or (
            report.verdict is not None
            and report.verdict.kind in (VerdictKind.UNCHANGED, VerdictKind.REFILL_DONE)
        )
        if decided and report.state in (RefereeState.WAITING, RefereeState.SETTLED):
            self._trust(learn=not self._again_live(report.verdict))
            return replace(report, confirmed=True)
        return report

    def changed_same_ratio(self) -> float:
        """How much a "this square changed" flag speaks against an unchanged count.

        The likelihood ratio P(flag | count same) / P(flag | count changed),
        learnt from the referee's own decisions (a Beta(1, 1) start, so 1: no
        effect, until the camera has shown how reliable its flags are here).
        """
        fs, ts, fd, td = self._change_stats
        return min(1.0, ((fs + 1) / (ts + 2)) / ((fd + 1) / (td + 2)))

    def adopt_camera_knowledge(self, other: Referee) -> None:
        """Carry what was learnt about this camera (flags, count bias) into a new game."""
        self._change_stats = list(other._change_stats)
        self._count_stats = list(other._count_stats)
        self._sharp_scores = list(other._sharp_scores)
        self._area_scale = other._area_scale
        self._sight = list(other._sight)

    def weigh(self, observation: Observation, *, half_turn: bool = False) -> Weighing | None:
        """How likely this frame is under what the game may have come to (the log
        evidence of :class:`~companion.referee.reconcile.Verdict`), judged on a copy of
        the referee so nothing here changes; None when the frame decides nothing. On a
        scene the counter cannot see (``blind``), the changed areas' evidence alone.
        ``half_turn``: as seen from the other side of the board (:func:`half_turned`)."""
        blind = self.blind  # (both ways are weighed alike, whatever a probe learns)
        journal, clock, verdicts = self.journal, self.clock, self._verdicts
        self.journal = self.clock = None
        self._verdicts = {}
        try:
            probe = copy.deepcopy(self)
        finally:
            self.journal, self.clock, self._verdicts = journal, clock, verdicts
        probe._verdicts = verdicts  # (a verdict depends on its input alone)
        if half_turn:
            probe.turn_half()
            observation = half_turned(observation)
        report = probe.see(observation)
        if report.verdict is None or probe._judged is None:
            return None
        moves = tuple(a.move for a in report.accepted)
        # (the frame judged whole, from the trusted position: a first move taken from it
        # and the rest judged after would weigh one move less than the other side's)
        evidence, change_evidence, complete = probe._judged
        if blind and change_evidence is not None:
            # (counts that miss the pieces say nothing)
            return Weighing(change_evidence, moves, complete)
        return Weighing(evidence, moves, complete)

    def turn_half(self) -> None:
        """Judge frames as seen from the other side of the board (:func:`half_turned`):
        what was learnt square by square turns with it (and the last frame's reading,
        which a later answer may still learn from)."""
        self._offsets = _turned(self._offsets)
        if self._last_reading is not None:
            reading, hidden = self._last_reading
            self._last_reading = (_turned(reading), None if hidden is None else _turned(hidden))
        if self._last_areas is not None:
            self._last_areas = _turned(self._last_areas)
        self._partials = [p.half_turned() for p in self._partials]
        # (a live camera's board that has held holds turned too: judged at once, not
        # after the frames it takes to settle again)
        self._last_seen = None if self._last_seen is None else _turned_board(self._last_seen)

    @property
    def blind(self) -> bool:
        """The counter reads this scene's trusted boards off by more than 60% of the
        pebbles they hold, square by square: it cannot see these pieces (too small, or
        the ground's pattern reads as pieces), so neither a move nor "no move" is
        taken from a photo alone. (Ordinary scenes read 10-25% off.)"""
        off, truth = self._sight
        return truth >= 10 and (off + 2) / (truth + 2) > 0.6

    def sharpness(self) -> float:
        """How much sharper (> 1) or wider (< 1) the counter is worth on this scene.

        Learnt from every board the referee trusted, by how well each
        sharpness would have predicted the counts it turned out to hold.
        """
        return best_sharpness(self._sharp_scores)

    def count_gain(self) -> float:
        """How much the counter under- (> 1) or over-counts here, learnt from decisions.

        Pebbles the referee concluded were there over pebbles the counter
        expected, with 20 pebbles of each as a prior, so one frame cannot
        swing it and a well-calibrated counter is left alone.
        """
        truth, read = self._count_stats
        return (truth + COUNT_PRIOR) / (read + COUNT_PRIOR)

    def _learn(
        self,
        changed: Sequence[bool] | None,
        before: Board,
        verdict: Verdict,
        raw: Sequence[SquareEvidence],
    ) -> None:
        """Compare what the camera said with what the referee concluded.

        The verdict's best candidate is the board the referee decided is on
        the ground (after the move, with or without its refill, or unchanged).
        """
        if verdict.ranked:
            after = verdict.ranked[0].board
        elif verdict.kind == VerdictKind.UNCHANGED:
            after = before
        else:
            return
        truth = sum(after[0])
        read = sum(mean_count(e) for e in raw)
        # A board confirmed wrongly (or read through a shadow) must not drag the
        # bias far: boards whose reading is wildly off are not learnt from.
        if truth >= 5 and 0.6 <= (read + 1) / (truth + 1) <= 1.6:
            self._count_stats[0] += truth
            self._count_stats[1] += read
        if changed is None:
            return
        stats = self._change_stats
        for sq, flag in enumerate(changed):
            if sq in self._ref_touched:
                continue  # its flag compares with a board older than ``before``
            same = before[0][sq] == after[0][sq] and (
                sq % 6 != 0 or before[1][sq // 6] == after[1][sq // 6]
            )
            stats[0 if same else 2] += flag
            stats[1 if same else 3] += 1

    def _observe(
        self,
        observation: Observation,
        frame: str | None,
        side_doubt: float,
        earlier: bool = False,
        again: bool = False,
        final: bool = False,
        fitted: bool = False,
    ) -> Report:
        """``fitted``: judged again after the first move of a lawful run that fitted
        this photo was taken (no foul is called on it then)."""
        reading, fit, reason = observation.reading, observation.fit, observation.reason
        still, changed, partial = observation.still, observation.changed, observation.partial
        hidden, areas, in_place = observation.hidden, observation.areas, observation.kept
        if self.position.over:
            return Report(RefereeState.SETTLED, "game over")
        self._live = self._live or not still
        live = self._live
        settle = self.config.settle_frames
        # (a live frame with a hand is a move under way, unless the hand rests: vision's
        # gate turned away every frame that moved, and this is the frame that shows the
        # hand at rest for ``settle_frames`` in a row)
        hand = live and partial and not still
        rested = self._hand_run >= settle  # (the frame before showed a hand at rest)
        if not again:
            run, restarted = self._next_hand_run(observation)
            if restarted:
                # the board changed under a hand that had rested (moved as the gate saw
                # no motion): a move made, and the hand's next rest shows its board
                self._in_motion = False  # (so the move is counted below)
            self._hand_run = run
            if run == settle and reading is not None:  # (a run needs a reading)
                self._rest_board = map_board(reading)
        # (also while a clear frame waits for the next move: the hand that rests has made
        # it, or not begun it, as with a photo with an arm after a photo held in doubt;
        # judged as only a move under way, the board it shows was lost)
        resting = hand and self._hand_run == settle
        if live and not again:
            if not fit or reading is None or (hand and self._hand_run <= settle):
                self._episodes += not self._in_motion
                self._in_motion = True
            elif not hand:
                # (a hand that had rested and is gone ended its rest: a move may have
                # been made as it went, where the gate saw no motion; a hand over a board
                # held for the next move was that move, and this may be one more)
                self._episodes += rested and (self.holding or not self._in_motion)
                self._in_motion = False
        if resting:
            self._in_motion = False  # (the motion that ends it begins the next move)
        if not fit or reading is None or (hand and not resting):
            self._stable = self._clear_run = 0
            self._undecided += 1
            if still:
                self._lost += 1  # a photo of a position that nobody will see again
            why = reason or ("hand over the board" if hand else None)
            if self.state in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE):
                return Report(self.state, f"{self._pending_detail()} ({why or 'frame not usable'})")
            return Report(
                RefereeState.MOVING
                if self.state != RefereeState.WAITING or why
                else RefereeState.WAITING,
                why or "frame not usable",
            )
        before = self.owed or board_of(self.position)
        raw = reading
        gain = self.count_gain()
        if abs(gain - 1.0) > 0.02:
            reading = [rescaled(e, gain) for e in reading]
        self._last_reading = (tuple(reading), tuple(hidden) if hidden else None)
        power = self.sharpness()
        if power != 1.0:
            reading = [sharpened(e, power) for e in reading]
        kept: Sequence[SquareEvidence] | None = None
        if self.setup_checked and any(abs(o) > 0.05 for o in self._offsets):
            kept = [shifted(e, o) for e, o in zip(reading, self._offsets, strict=True)]
        # under a hand a square is flagged changed, but that says nothing: it must
        # not count against the move leaving it alone; nor may a square whose
        # reference shows a board older than ``before`` (moves entered since)
        free = self._ref_touched | {sq for sq, h in enumerate(hidden or ()) if h}
        change: ChangeEvidence | None = None
        self._last_areas = None
        if areas is not None and self.setup_checked:
            self._last_areas = tuple(areas)
            scale = self._area_scale
            change = ChangeEvidence(
                tuple(areas),
                self.config.change,
                scale.scale,
                scale.spread,
                reference=self._vref if self._vref != before else None,
                gone=self._vref_gone,
                noise=scale.noise(self.config.change),
                kept=None if in_place is None else tuple(in_place),
            )
        pinned = reading
        if changed is not None and self.setup_checked:
            ratio = self.changed_same_ratio() if change is None else 1.0
            pinned = pin_unchanged(reading, changed, before, moved_same=ratio, free=free)
            if change is None:
                # with areas, reconcile weighs the change itself (pinning would count it twice)
                reading = pinned
                if kept is not None:
                    kept = pin_unchanged(kept, changed, before, moved_same=ratio, free=free)
        seen = map_board(pinned)
        self._stable = self._stable + 1 if seen == self._last_seen else 1
        self._last_seen = seen
        # A live camera's frames of one board are never read quite alike (a square on
        # the edge of two counts flickers with the sensor's noise): the board has settled
        # once clear frames have followed one another, vision's gate having turned away
        # every frame that moved since the one before.
        self._clear_run = 0 if still or partial else self._clear_run + 1
        held = self._clear_run if live else self._stable
        settled = still or held >= settle
        if hand and self.holding and not resting:
            # a live frame with a hand while a clear frame waits: the next move has begun
            # (the frame with the hand is no witness then, unless the hand rests: the
            # next clear one is)
            return Report(RefereeState.MOVING, reason or "hand over the board")
        if resting:
            # A hand at rest over the board is seen once, as a photo with an arm in it
            # is: the board it shows is judged, and kept as a witness of the board
            # between two moves where it decides nothing. Frames of it after that are
            # not judged again.
            settled = True
        if self._shows_held(still, settled, seen):
            if not final:
                return Report(
                    RefereeState.MOVING, HELD_DOUBT_LIVE if self._partials[-1].doubt else HELD_SIDE
                )
            # no move came to decide it: the board held is the board shown, and its own
            # move is asked about (not as the first of several)
            self._partials.pop()
            self._undecided = max(0, self._undecided - 1)
        if not settled:
            # Nothing is decided on a scene that may still be changing: a board
            # in the middle of one move can look like the result of another.
            if (
                seen == (self.owed or board_of(self.position))
                and self.state == RefereeState.WAITING
            ):
                return Report(RefereeState.WAITING, "waiting for a move")
            return Report(RefereeState.MOVING, "move in progress")
        # After frames that decided nothing, more moves may have been made since.
        needed = 1 + self._undecided
        if live:
            # a live camera: a run of frames with motion or a hand is a move, and each
            # clear frame held since was the board between two (its frames are many, and
            # a move's are no more moves than one; judged again after the held board's
            # move was taken, ``fitted``, that board is behind)
            held = len(self._partials) if self.holding and not fitted else 0
            needed = held + max(1, self._episodes)
        elif self._photos:
            # every photo since the trusted board shows at most one move: those the
            # players answered since are accounted for
            unexplained = self._photos - (self.position.ply - self._trust_ply)
            needed = max(1, min(needed, unexplained))
        cap = self.config.max_catch_up
        # photos with a hand, each a move apart, witness the boards between the moves
        # (so do a live camera's hands at rest and the clear frames it held: each is
        # judged once, as a photo is)
        glimpsed = self._partials
        if len(glimpsed) >= cap:
            cap = max(cap, min(len(glimpsed) + 1, self.config.max_chain))
        plies = min(needed, cap)
        if live and self._episodes and plies == 1 and (again or not resting):
            # (a move may follow another before the camera sees the first settle; a hand
            # at rest is judged first as a photo with an arm is, for the moves shown:
            # weighed for one more, the runs whose second move lies under the hand share
            # the mass of a first move the squares in view prove, and it goes unproven.
            # Judged again after the first of several, it shows more than one.)
            plies = 2
        # (folded here, not where the readings are kept: a kept reading may be turned
        # half round later, and the stoneless mandarin with it)
        # (their areas were measured against vision's reference, as this frame's are:
        # moves taken since then start later than it)
        glimpses = tuple(
            Glimpse(
                tuple(stones_gone(p.reading, before)),
                None
                if p.change is None
                else replace(
                    p.change,
                    reference=self._vref if self._vref != before else None,
                    gone=self._vref_gone,
                ),
            )
            for p in (glimpsed if plies > 1 else ())
        )
        verdict = self._reconciled(
            stones_gone(reading, before),
            plies=plies,
            earlier=glimpses,
            kept=None if kept is None else stones_gone(kept, before),
            still=still,
            change=change,
        )
        if self._judged is None:
            self._judged = (verdict.evidence, verdict.change_evidence, needed <= plies)
        several = verdict.follows or verdict.behind
        if verdict.kind == VerdictKind.ACCEPT and several and not self._may_catch_up():
            # Several moves at once are only taken when a frame with a hand showed
            # the board between them; after a question, or frames nobody saw, ask.
            verdict = as_question(verdict)
        if verdict.kind == VerdictKind.ACCEPT and self._recheck:
            verdict = as_question(verdict)  # (after a dispute: see confirm)
        if (
            verdict.kind == VerdictKind.UNCHANGED
            and not still
            and verdict.confidence < self.config.reconcile.accept
        ):
            # A live board that may show a move is not trusted as the board before it:
            # vision would take it for its reference, and the move's changes would never
            # show again (a move made where the gate saw no motion, read as nothing).
            # It waits, measured against the board trusted, for frames that decide, and
            # counts as a move made (the next board is weighed for one more).
            verdict = replace(verdict, kind=VerdictKind.MOVING)
            self._episodes = max(self._episodes, 1)
        # more moves may have been made than weighed (a live camera's too: moves seen
        # made under hands at rest, one witness each, may outrun the longest run weighed)
        unweighed = (still or live) and needed > plies
        if verdict.kind == VerdictKind.ACCEPT and unweighed:
            # whatever fits best may be the wrong story, so the players say how it began
            verdict = as_question(verdict)
        if verdict.kind == VerdictKind.DISPUTE and (unweighed or fitted):
            # No foul is shown, so the players say the move: where no run weighed fits
            # but more moves may have been made, how it began (the photo is judged again
            # after); where a lawful run fitted this photo when its first move was taken
            # (``fitted``, its changes still measured from before that move), which
            # move came next.
            asked = self._blind_question(verdict)
            if asked.kind == VerdictKind.AMBIGUOUS:
                verdict = replace(asked, behind=True) if unweighed else asked
        if still and self.blind and verdict.kind != VerdictKind.AMBIGUOUS:
            proven = self._proven_by_change(verdict)
            verdict = self._blind_question(verdict) if proven is None else proven
        if still and not partial:
            self._paused_stills = (
                self._paused_stills + 1 if verdict.kind == VerdictKind.MOVING else 0
            )
            if self._paused_stills >= 2:
                # A second clear photo that shows a move half made: photos are taken of
                # settled scenes, so the referee has lost the thread (a move it took for
                # "nothing happened"): the players say what was played.
                verdict = self._blind_question(verdict)
        # The photo after one held in doubt has one try, and what it takes then must
        # clear the bar of a run (the first move alone may not: the held photo and this
        # one read the piles it left alone twice, and such readings err alike). A
        # question now is about one move; held too, the next photos would have to be
        # judged for three or more.
        doubted = not again and bool(self._partials) and self._partials[0].doubt
        # (a live frame judged to show a move half made is no try: a player paused)
        paused = verdict.kind == VerdictKind.MOVING and live
        if (
            doubted
            and not paused
            and (
                verdict.kind != VerdictKind.ACCEPT
                or verdict.confidence < self.config.reconcile.accept_run
            )
        ):
            asked = as_question(verdict)
            if asked.choices:
                verdict = asked
        if (
            verdict.kind == VerdictKind.ACCEPT
            and verdict.confidence * (1.0 - side_doubt) < self.config.reconcile.accept
        ):
            # the board may be seen from the other side
            room = len(self._partials) + 2 <= self.config.max_chain
            if not partial and not (again or final or doubted) and room:
                # A photo that cannot show where P0 sits (a board that looks the same
                # turned half round): the next one may. It is kept as a witness of the
                # board between, as a photo with an arm is, and the next photo is judged
                # for one move more (asking now, the players would answer a question
                # the camera could settle).
                self._hold(reading, change, hidden, seen=seen)
                return Report(RefereeState.MOVING, HELD_SIDE, verdict=verdict)
            verdict = as_question(verdict)
        # (a live frame may be judged for two moves after the frames of one: it waits
        # when its choices are single moves)
        single = not verdict.behind if live else plies == 1
        if verdict.kind == VerdictKind.AMBIGUOUS and self._may_defer(
            partial, again or final, single
        ):
            self._hold(reading, change, hidden, doubt=True, seen=seen)
            doubt = HELD_DOUBT_LIVE if live else HELD_DOUBT
            return Report(RefereeState.MOVING, doubt, verdict=verdict)
        if verdict.kind == VerdictKind.ACCEPT and verdict.behind and hand and not resting:
            # (a live frame with a hand may show a move under way: wait for a clear one;
            # a photo's first move, once certain, is taken, and the rest judged after it,
            # as is a resting hand's: the move it may show under way is a later one)
            verdict = replace(verdict, kind=VerdictKind.MOVING)
        short = (
            verdict.kind == VerdictKind.ACCEPT
            and still
            and not verdict.behind
            and 1 + len(verdict.follows) < needed
        )
        asking = doubted and verdict.kind == VerdictKind.AMBIGUOUS
        if (
            partial
            and not asking
            and (verdict.kind != VerdictKind.ACCEPT or not self.setup_checked or short)
        ):
            # (``short``: the moves taken would leave a photo since the trusted board
            # showing no move of its own, where the arm may hide the one it does show)
            # Hidden squares may hold anything: "unchanged", a dispute or a
            # question would rest on what the camera could not see. Wait, and
            # let the next clear frame decide (perhaps on one more move).
            self._hold(reading, change, hidden)
            why = reason or "hand over the board"
            if self.state in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE):
                return Report(self.state, f"{self._pending_detail()} ({why})")
            return Report(RefereeState.MOVING, why, verdict=verdict)
        decided = verdict.kind in (
            VerdictKind.ACCEPT,
            VerdictKind.UNCHANGED,
            VerdictKind.REFILL_DONE,
        )
        self._undecided = 0 if decided else self._undecided + 1
        if decided:
            self._episodes = 0
        if not self.setup_checked:
            return self._check_setup(verdict, settled)
        if decided and not partial and not self._again_live(verdict):
            # (hidden squares would teach nothing but noise)
            self._learn(changed, before, verdict, raw)
        if verdict.kind == VerdictKind.ACCEPT and verdict.move is not None:
            if partial and hidden is not None:
                # vision keeps its old reference under the hand: squares this
                # move changed there still show the board before it
                moved = set(self._ref_touched)
                for t in (verdict.transition, *verdict.follows):
                    moved |= touched_squares(t) if t is not None else set(range(len(hidden)))
                self._stale_after_trust = frozenset(sq for sq in moved if hidden[sq])
            accepted = self._apply(verdict.move, "camera", verdict.confidence, frame)
            if verdict.behind and not self.position.over:
                # The first of several moves is certain: judge the board again from
                # after it (it shows the later ones, so it is not trusted yet).
                self._undecided = max(0, plies - 2)
                self._episodes = 1  # (the board shows one move more at least)
                self._stable -= 1
                self.state = RefereeState.SETTLED
                if (
                    earlier
                    and verdict.transition is not None
                    and self._trust_earlier(verdict.transition)
                ):
                    return Report(
                        RefereeState.SETTLED,
                        f"{accepted.move} accepted",
                        (accepted,),
                        verdict,
                        earlier_trusted=True,
                    )
                then = self._observe(observation, frame, side_doubt, again=True, fitted=True)
                detail = f"{accepted.move} accepted; {then.detail}"
                return replace(then, detail=detail, accepted=(accepted, *then.accepted))
            if verdict.follows:
                done = [accepted]
                for later in verdict.follows:
                    assert later.move is not None
                    done.append(self._apply(later.move, "camera", verdict.confidence, frame))
                report = self._after_move_report(done[-1], verdict.refilled, verdict)
                return Report(report.state, report.detail, tuple(done), verdict)
            return self._after_move_report(accepted, verdict.refilled, verdict)
        if verdict.kind == VerdictKind.REFILL_DONE:
            self.owed = None
            self.pending = None
            if self.journal is not None:
                self.journal.refill_done(ply=self.position.ply)
            self.state = RefereeState.WAITING
            return Report(RefereeState.WAITING, "refill done", verdict=verdict)
        if verdict.kind == VerdictKind.UNCHANGED:
            if self.state in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE) and self.journal:
                self.journal.resolve("board restored")
            self.pending = None
            self.state = RefereeState.WAITING
            return Report(
                RefereeState.WAITING,
                "refill owed" if self.owed else "waiting for a move",
                verdict=verdict,
            )
        if verdict.kind == VerdictKind.MOVING:
            return Report(RefereeState.MOVING, "move in progress", verdict=verdict)
        # After frames that decided nothing, the board may show more than one
        # move: once the players answer, it is judged again before it is trusted.
        # (Not for the move a live board was weighed for beyond those its frames
        # showed: asked about one move, the players answer about the board in view,
        # which is then trusted; judged again, it would be asked about a move that
        # was never made.)
        self._behind = verdict.behind or min(plies, needed) > 1
        if verdict.kind == VerdictKind.AMBIGUOUS:
            if (
                self.state != RefereeState.AMBIGUOUS
                or self.pending is None
                or self.pending.choices != verdict.choices
            ) and self.journal is not None:
                choices = tuple(str(m) for m in verdict.choices)
                self.journal.dispute(DisputeData("ambiguous", choices=choices, frame=frame))
            self.pending = verdict
            self.state = RefereeState.AMBIGUOUS
            return Report(
                RefereeState.AMBIGUOUS, verdict.detail, verdict=verdict, behind=verdict.behind
            )
        if (
            self.state != RefereeState.DISPUTE
            or self.pending is None
            or self.pending.detail != verdict.detail
        ) and self.journal is not None:
            question = DisputeData(
                verdict.mistake or "no legal move fits",
                None if verdict.move is None else str(verdict.move),
                squares=tuple((d.square, d.expected, d.seen) for d in verdict.diffs),
                frame=frame,
            )
            self.journal.dispute(question)
        self.pending = verdict
        self.state = RefereeState.DISPUTE
        return Report(RefereeState.DISPUTE, verdict.detail, verdict=verdict)

    def _reconciled(
        self,
        reading: Sequence[SquareEvidence],
        *,
        plies: int,
        earlier: tuple[Glimpse, ...],
        kept: Sequence[SquareEvidence] | None,
        still: bool,
        change: ChangeEvidence | None,
    ) -> Verdict:
        """:func:`reconcile` from the position now, or its verdict on the same input
        already worked out (``_verdicts``)."""
        key = (
            self.position,
            tuple(reading),
            self.rules,
            self.owed,
            self.config.reconcile,
            plies,
            earlier,
            None if kept is None else tuple(kept),
            still,
            change,
        )
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = reconcile(
                self.position,
                reading,
                self.rules,
                current=self.owed,
                config=self.config.reconcile,
                plies=plies,
                earlier=earlier,
                kept=kept,
                still=still,
                change=change,
            )
            if len(self._verdicts) >= VERDICTS_KEPT:
                # the oldest goes: a frame judged both ways round, then again from the
                # side taken, asks for its first verdicts last (clearing them all made
                # the slowest frame of 11,000 judge three runs of moves twice)
                del self._verdicts[next(iter(self._verdicts))]
            self._verdicts[key] = verdict
        return verdict

    def _proven_by_change(self, verdict: Verdict) -> Verdict | None:
        """A move accepted on a scene the counter cannot see, if its changed areas
        alone prove it: where it picked up, dropped and captured must show as surely
        as any move is accepted, with the counts left out. It keeps the lesser of
        the two confidences; None when the players must say (``_blind_question``).
        """
        sure = verdict.change_confidence
        if (
            verdict.kind == VerdictKind.ACCEPT
            and not verdict.follows
            and not verdict.behind
            and sure is not None
            and sure >= self.config.reconcile.accept
        ):
            return replace(verdict, confidence=min(verdict.confidence, sure))
        return None

    def _blind_question(self, verdict: Verdict) -> Verdict:
        """A photo of a scene the counter cannot see: the players say what happened."""
        if verdict.kind == VerdictKind.ACCEPT:
            return replace(as_question(verdict), behind=bool(verdict.follows))
        firsts: list[Move] = []
        for cand in verdict.ranked:  # (a move half made names the move too)
            if (
                cand.kind in ("move", "moving")
                and cand.move is not None
                and cand.move not in firsts
            ):
                firsts.append(cand.move)
        if not firsts:
            return verdict
        return replace(verdict, kind=VerdictKind.AMBIGUOUS, choices=tuple(firsts[:3]))

    def _check_setup(self, verdict: Verdict, settled: bool) -> Report:
        """The opening must be right before the first move is refereed.

        Stricter than a move: no square may disagree, because this is the
        moment the players can still fix the setup (and vision calibrates).
        """
        exact = bool(verdict.ranked) and verdict.ranked[0].outliers == 0
        if verdict.kind == VerdictKind.UNCHANGED and exact:
            self.setup_checked = True
            self.state = RefereeState.WAITING
            return Report(
                RefereeState.WAITING,
                "setup ok: waiting for the first move",
                verdict=verdict,
                opening_ok=True,
            )
        if verdict.kind == VerdictKind.ACCEPT and verdict.move is not None:
            # The first move was made before the camera saw the opening: fine if it is legal.
            self.setup_checked = True
            accepted = self._apply(verdict.move, "camera", verdict.confidence, None)
            return self._after_move_report(accepted, verdict.refilled, verdict)
        wrong = [
            f"{sq}:{verdict.seen[0][sq] if verdict.seen else '?'}"
            for sq in range(len(self.position.board))
            if verdict.seen and verdict.seen[0][sq] != self.position.board[sq]
        ]
        state = RefereeState.DISPUTE if settled else RefereeState.MOVING
        seen = verdict.seen
        diffs = tuple(
            SquareDiff(sq, self.position.board[sq], seen[0][sq])
            for sq in range(len(self.position.board))
            if seen is not None and seen[0][sq] != self.position.board[sq]
        )
        pending = Verdict(VerdictKind.DISPUTE, mistake="setup", diffs=diffs, seen=seen)
        if (
            state == RefereeState.DISPUTE
            and self.journal is not None
            and (self.state != RefereeState.DISPUTE or self.pending != pending)
        ):
            squares = tuple((d.square, d.expected, d.seen) for d in diffs)
            self.journal.dispute(DisputeData("setup", squares=squares))
        self.pending = pending
        self.state = state
        return Report(
            state, "setup: fix squares " + (", ".join(wrong) or "(unclear)"), verdict=verdict
        )

    def confirm_setup(self) -> Report:
        """The players looked and say the opening is right: referee from here."""
        self.setup_checked = True
        self.pending = None
        self.state = RefereeState.WAITING
        if self._last_reading is not None and not any(self._last_reading[1] or ()):
            # the counter misread this scene's opening: learn its bias from it
            opening = Verdict(VerdictKind.UNCHANGED)
            self._learn(None, board_of(self.position), opening, self._last_reading[0])
        self._trust()
        if self.journal is not None:
            self.journal.resolve("setup confirmed by the players")
        return Report(RefereeState.WAITING, "setup confirmed by the players", confirmed=True)

    def vouch(self, observation: Observation, frame: str | None = None) -> Report:
        """The players vouch that this frame shows the trusted board (``track``'s start).

        The frame becomes vision's reference and the counter's bias here is
        learnt from it, as from the opening the players confirmed.
        """
        self.setup_checked = True
        self.pending = None
        self.state = RefereeState.WAITING
        if observation.reading is not None:
            if not observation.partial:
                verdict = Verdict(VerdictKind.UNCHANGED, seen=map_board(observation.reading))
                board = self.owed or board_of(self.position)
                self._learn(None, board, verdict, observation.reading)
            gain = self.count_gain()
            self._last_reading = (
                tuple(rescaled(e, gain) for e in observation.reading),
                observation.hidden,
            )
        self._trust()
        return Report(RefereeState.WAITING, "start position confirmed", confirmed=True)

    def _pending_detail(self) -> str:
        return self.pending.detail if self.pending is not None else self.state

    # -- buttons ----------------------------------------------------------

    def confirm(self, move: Move | str) -> Report:
        """The players say which move was made (ambiguous) or overrule a dispute."""
        move = Move.parse(move) if isinstance(move, str) else move
        reason = illegal_reason(self.position, move, self.rules)
        if reason is not None:
            raise IllegalMoveError(f"illegal move {str(move)!r}: {reason}", reason)
        how = "confirmed" if self.state == RefereeState.AMBIGUOUS else "override"
        if self.state == RefereeState.DISPUTE and self.journal is not None:
            self.journal.resolve("override", move=move)
        asked = self.state in (RefereeState.AMBIGUOUS, RefereeState.DISPUTE)
        behind = asked and self._behind
        episodes, held = self._episodes, self.holding
        self._behind = False
        # The players overruled a dispute about the first of several moves: the board
        # contradicted every legal story, so it is no witness for the later ones either
        self._recheck = behind and self.state == RefereeState.DISPUTE
        accepted = self._apply(move, how, 1.0, None)
        report = self._after_move_report(accepted, refilled=False, verdict=None)
        self._undecided = 0
        self._episodes = 0
        if behind:
            # More moves were made since: the board asked about shows a later
            # position, so it is judged again (from here) before it is trusted,
            # and the moves after this answer are asked too, never taken at once.
            # (A live camera's moves seen made since are one fewer, unless the answer
            # was the move of the board it held, which came before them.)
            self._undecided = 1
            self._episodes = max(1, episodes - (0 if held else 1))
            self._partials = []
            return replace(report, behind=True)
        if asked and self.owed is None:
            # The players answered about the board in front of the camera: it
            # shows this move's result, and becomes vision's reference.
            self._trust()
            return replace(report, confirmed=True)
        return report

    def play_manual(self, move: Move | str) -> Report:
        """Manual mode: a move entered with the buttons."""
        move = Move.parse(move) if isinstance(move, str) else move
        reason = illegal_reason(self.position, move, self.rules)
        if reason is not None:
            raise IllegalMoveError(f"illegal move {str(move)!r}: {reason}", reason)
        accepted = self._apply(move, "buttons", 1.0, None)
        report = self._after_move_report(accepted, refilled=True, verdict=None)
        self.owed = None
        return report

    def undo(self) -> Report:
        if not self.game.transitions:
            return Report(self.state, "nothing to undo")
        move = self.game.undo()
        if self.journal is not None:
            self.journal.undo(move, ply=self.position.ply)
        self.owed = None
        self.pending = None
        self.state = RefereeState.WAITING
        return Report(RefereeState.WAITING, f"undid {move}")

    def correct(self, move: Move | str, *, undo: int = 1) -> Report:
        """The players correct moves the camera accepted: ``undo`` of them go, theirs is played.

        The board in front of the camera shows their move, so it becomes the
        reference, as after any answer.
        """
        move = Move.parse(move) if isinstance(move, str) else move
        for _ in range(undo):
            self.undo()
        reason = illegal_reason(self.position, move, self.rules)
        if reason is not None:
            raise IllegalMoveError(f"illegal move {str(move)!r}: {reason}", reason)
        accepted = self._apply(move, "corrected", 1.0, None)
        report = self._after_move_report(accepted, refilled=False, verdict=None)
        self._trust()
        return replace(report, confirmed=True)

    def end_by_count(self) -> Report:
        """Every player agreed to stop a game that keeps cycling: count it as it stands.

        Journaled like any end, so a power cut after the players agreed does
        not bring the endless game back.
        """
        if self.position.over:
            return Report(RefereeState.SETTLED, "game over")
        transition = self.game.stop_and_count()
        outcome = transition.position.outcome
        assert outcome is not None
        if self.journal is not None:
            self.journal.end(outcome.final, outcome.reason, outcome.winner)
        self.owed = None
        self.pending = None
        self.state = RefereeState.SETTLED
        scores = "-".join(str(n) for n in outcome.final)
        return Report(RefereeState.SETTLED, f"stopped by the players and counted: {scores}")

    def restore(self, game: Game, pending: Verdict | None = None) -> None:
        """Resume from the journal: the game so far, and an open dispute if any."""
        self.game = game
        self.setup_checked = True
        self.pending = pending
        self._vref = board_of(game.position)
        self._vref_gone = frozenset()
        self._trust_ply = game.position.ply
        self._photos = 0
        self.state = RefereeState.WAITING if pending is None else RefereeState(pending.kind.value)

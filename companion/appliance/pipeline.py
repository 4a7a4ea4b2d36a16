"""One frame policy for ``run``, ``demo`` and ``track``: camera frame in, referee report out.

A frame's trip, in order, and nowhere else:

1. a board the referee came to trust since the last frame (players pressed
   OK) becomes the observer's reference for the change flags;
2. the observer gates the frame (exposure, motion, hand), locates or verifies
   the board and counts every square (:mod:`companion.appliance.observe`);
3. at the opening, a frame that looks like it calibrates vision on this
   scene, and is read again with that calibration;
4. the referee judges the observation (:meth:`Referee.see`);
5. a board the referee now trusts becomes the new reference; when a frame shows
   two moves and the first is certain, the board a frame with a hand showed
   between them is trusted, and the frame is judged again against that one.

The three commands differ only in where frames come from and which clock runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from companion.referee import Observation, Referee, Report, half_turned
from companion.referee.reconcile import Board, SquareEvidence, board_fit, board_of, map_board
from device.ports import Frame
from engine import Move
from engine.board import NUM_SQUARES

#: how much likelier (log odds) one side must make a frame before the referee takes
#: P0 to sit there: the wrong side explains a move's board only by a mistake
SIDE_EVIDENCE = 9.0
#: moves after the start while the side is still weighed; an undecided scene (the
#: counter blind to its pieces) is then taken as found, and not weighed twice more
SIDE_PLIES = 8
#: frames that must have weighed in before the side is taken (a start the players
#: vouch for counts as all of them): one frame the counter misreads can favour the
#: wrong side by ``SIDE_EVIDENCE`` (a generated game did, by 9.9, and its next frame
#: said the other way by 28.5); till then a move is only taken as surely as its side
SIDE_FRAMES = 2
#: seconds a live camera's clear frame waits for the next move to decide it (its move
#: or its side in doubt, ``Referee.holding``): past them the players are asked (the
#: game may have stopped, or ended on that move)
HOLD_SECONDS = 30.0


class Observer(Protocol):
    """What the pipeline needs from vision (:class:`~companion.appliance.observe.VisionObserver`)."""

    @property
    def calibrated(self) -> bool:
        """Whether the observer has learnt this scene's pieces from an opening."""
        ...

    def __call__(self, frame: Frame) -> Observation:
        """Read one frame."""
        ...

    def confirmed(self) -> None:
        """The board in the last frame read is trusted: compare later frames with it."""
        ...

    def hold_earlier(self) -> bool:
        """Keep the last frame read (a hand over part of the board): it may show the
        board between two moves, which the referee may come to trust. False where
        the observer cannot measure changes against such a frame."""
        ...

    def confirmed_earlier(self) -> Observation | None:
        """The board the held frame showed is trusted: compare with it, and return the
        last frame read measured against it (None when no frame is held)."""
        ...

    def looks_like_opening(self, observation: Observation) -> bool:
        """Whether an observation is worth calibrating on as the opening."""
        ...

    def learn_opening(self, frame: Frame) -> None:
        """Calibrate on a frame that shows the opening."""
        ...


@dataclass(frozen=True, slots=True)
class FrameResult:
    """What one frame came to: the observation and the referee's report on it."""

    observation: Observation
    report: Report


class FramePipeline:
    """Observer and referee joined by the one frame policy (module docstring)."""

    def __init__(self, observer: Observer, referee: Referee, *, start_shown: bool = False) -> None:
        """``start_shown``: the caller vouches for the referee's start position
        (``track`` is told where the game starts), so the first readable frame
        shows it: it becomes the reference, vision calibrates on it when it is
        the opening, and the referee learns the counter's bias from it, even
        if the counts disagree. Not after a frame whose board was not found:
        moves may have been made meanwhile, so that board is judged instead."""
        self.observer = observer
        self.referee = referee
        self._trusted = referee.trusted_boards
        self._start_shown = start_shown
        #: the observer holds the last frame with a hand the referee kept (hold_earlier)
        self._held = False
        self._last: tuple[Observation, str | None, float] | None = None
        self._opening: Frame | None = None  # the last frame, while it may show the opening
        #: the camera sees the board from P1's side (square k where vision says k + 6);
        #: None while the game has not shown which (a two-player board looks the same
        #: turned half round), False for a ring
        self.turned: bool | None = None
        #: the way the referee judges frames now: ``turned`` once taken, till then the
        #: way the frames so far favour (what it learns square by square turns with it)
        self._view_turned = False
        self._side_from = 0
        self._side_odds = 0.0  # log odds, summed over frames, that the board is turned
        self._side_frames = 0  # frames whose odds were summed
        #: the live frames' boards (as read) whose odds were summed: a live camera shows
        #: one board in many frames, before and after its move is taken
        self._side_seen: set[Board] = set()
        #: when the clear frame the referee holds for the next move was first held
        self._held_since: float | None = None
        self._open_side()

    def follow(self, referee: Referee, *, start_shown: bool = False) -> None:
        """A new game (or one continued from a trusted position) on the same camera."""
        referee.adopt_camera_knowledge(self.referee)
        self.referee = referee
        self._trusted = referee.trusted_boards
        self._start_shown = start_shown
        self._held = False
        self._open_side()  # the players may have changed sides

    def _open_side(self) -> None:
        """Where P0 sits is for this game to show (``turned``); a ring has no half turn."""
        position = self.referee.position
        self.turned = None if len(position.board) == NUM_SQUARES else False
        self._view_turned = False  # (a new referee learns the board as found)
        self._side_from = position.ply
        self._side_odds = 0.0
        self._side_frames = 0
        self._side_seen = set()

    def _sync_reference(self) -> None:
        if self.referee.trusted_boards != self._trusted:
            self._trusted = self.referee.trusted_boards
            if (
                self._opening is not None
                and self.referee.at_opening
                and not self.observer.calibrated
            ):
                # The players confirmed an opening the counter misread: this
                # scene's pieces are learnt from it all the same.
                self.observer.learn_opening(self._opening)
            self.observer.confirmed()
            self._held = False

    def __call__(self, frame: Frame, *, last: bool = False) -> FrameResult:
        """Read one frame and judge it. ``last``: no frame follows (the end of a folder
        of photos), so none is kept for the next one to decide."""
        self._sync_reference()
        observer, referee = self.observer, self.referee
        obs = observer(frame)
        vouched = self._start_shown and obs.fit and obs.reading is not None
        if self._start_shown and not obs.board_found:
            # the start was shown but its board not found: moves may be made before the
            # board is found again, so no later frame is taken for the start
            self._start_shown = False
        if (
            obs.board_found
            and not observer.calibrated
            and referee.at_opening
            and obs.fit
            and (vouched or observer.looks_like_opening(obs))
        ):
            # The players vouch for the opening (``track``'s start), or it looks
            # right: learn this ground's pieces from it and read it again.
            observer.learn_opening(frame)
            obs = observer(frame)
        self._opening = frame if referee.at_opening and not observer.calibrated else None
        obs, doubt = self._oriented(obs, vouched)
        if vouched:
            self._start_shown = False
            report = referee.vouch(obs, frame.source)
        else:
            held = referee.partials_held
            # (a clear frame held too long is asked about: no move may come to decide it)
            waited = self._held_since is not None and frame.t - self._held_since >= HOLD_SECONDS
            report = referee.see(
                obs, frame.source, side_doubt=doubt, earlier=self._held, final=last or waited
            )
            if report.earlier_trusted:
                obs, report = self._judge_again(obs, frame, doubt, report)
            elif obs.partial and referee.partials_held > held:
                self._held = observer.hold_earlier()
        self._last = (obs, frame.source, doubt)
        self._sync_reference()
        if not referee.holding:
            self._held_since = None
        elif self._held_since is None:
            self._held_since = frame.t
        return FrameResult(obs, report)

    def _judge_again(
        self, obs: Observation, frame: Frame, doubt: float, first: Report
    ) -> tuple[Observation, Report]:
        """The referee took the first of the moves this frame shows and trusts the board
        the held frame showed after it: vision compares with that frame now, and this
        frame, measured against it, is judged again for the move after (one report)."""
        self._trusted = self.referee.trusted_boards  # that trust is this reference
        self._held = False
        again = self.observer.confirmed_earlier()
        if again is None:  # (never: the referee is told only while a frame is held)
            again = obs
        elif self._view_turned:
            again = half_turned(again)
        then = self.referee.see(again, frame.source, again=True, side_doubt=doubt)
        detail = f"{first.detail}; {then.detail}"
        return again, replace(then, detail=detail, accepted=(*first.accepted, *then.accepted))

    def _oriented(self, obs: Observation, vouched: bool) -> tuple[Observation, float]:
        """The observation with P0's row where the game shows it (see ``turned``), and
        the chance that P0 sits across from there after all.

        While the side is open, each readable frame is judged both ways on a copy
        of the referee (the start frame by how well each way fits the board the
        players vouch for); the side is taken once one way has made the frames so
        far ``SIDE_EVIDENCE`` likelier, over ``SIDE_FRAMES`` frames at least. A live
        frame with a hand (but for a hand at rest, :meth:`Referee.rests`), or one that
        may show more moves than the referee weighs, is no witness: either side's
        explanation of it may be wrong, and the comparison then says little however
        large. A photo with a hand in it is one: its hidden
        squares read flat, so they favour neither side, and the rest of the board does
        (else after a run of such photos at a game's start the side stayed open and
        every move was asked till the first clear photo). Till then the frame is
        judged the way the odds so far favour (as found while they favour neither),
        and the doubt is the other way's share of the odds: a move read the wrong way
        round is a wrong move, unless both ways show the same move (a symmetric
        board), so the referee takes none by itself less sure than its side. (Judged as
        found whatever the odds, a camera on P1's side began every game with a dispute.)
        """
        if self.turned is not None:  # (a ring of seats is never turned: ``_open_side``)
            return self._viewed(obs), 0.0
        referee = self.referee
        if referee.position.ply - self._side_from > SIDE_PLIES:
            self.turned = self._view_turned
            return self._viewed(obs), 0.0
        turned = half_turned(obs)
        seen = self._viewed(obs)  # (the referee weighs frames the way it judges them)
        # (in a live stream a hand is a move under way, unless it rests over the board:
        # the referee judges that frame once, as it does a photo with a hand in it, which
        # shows a settled board whose hidden squares weigh alike under either side)
        live_hand = obs.partial and not obs.still and not referee.rests(seen)
        if obs.reading is None or not obs.fit or turned.reading is None or live_hand:
            return seen, self._doubt()
        same = False
        if vouched:
            odds = self._vouched_odds(obs.reading, turned.reading)
        elif not obs.still and map_board(obs.reading) in self._side_seen:
            # (a live camera's frames of one board are one witness: summed, the odds of
            # the same reading would take the side on however little one frame shows)
            return seen, self._doubt()
        else:
            found = referee.weigh(seen, half_turn=self._view_turned)
            other = referee.weigh(seen, half_turn=not self._view_turned)
            if found is None or other is None or not (found.complete and other.complete):
                return seen, self._doubt()
            odds = other.evidence - found.evidence
            same = bool(found.moves) and found.moves == other.moves
            if not obs.still:
                self._side_seen.add(map_board(obs.reading))
        # frames add up: each is judged from the position the game reached, so their
        # likelihoods multiply as a run of independent witnesses
        taken = self._add_side(odds, known=vouched)
        # (viewed again: the odds may have turned the way frames are judged)
        return self._viewed(obs), 0.0 if taken or same else self._doubt()

    def _viewed(self, obs: Observation) -> Observation:
        return half_turned(obs) if self._view_turned else obs

    def _add_side(self, odds: float, known: bool) -> bool:
        """Sum one frame's log odds that the board is turned, and turn the referee the
        way they favour; True once the side is taken. ``known``: the frame was
        compared with a board the players vouch for, which is a witness enough by
        itself."""
        self._side_odds += odds
        if abs(odds) >= 1.0:  # (a symmetric opening favours neither)
            self._side_frames += SIDE_FRAMES if known else 1
        taken = self._side_frames >= SIDE_FRAMES and abs(self._side_odds) >= SIDE_EVIDENCE
        if abs(self._side_odds) >= 1.0 and (self._side_odds > 0) != self._view_turned:
            self._view_turned = not self._view_turned
            self.referee.turn_half()
        if taken:
            self.turned = self._view_turned
        return taken

    def _doubt(self) -> float:
        """The chance, from the frames' summed odds, that the side is not the way the
        referee judges frames now."""
        odds = -self._side_odds if self._view_turned else self._side_odds
        return 1.0 / (1.0 + math.exp(-min(odds, 700.0)))

    def answer(self, move: Move | str) -> list[Report]:
        """The players say which move was made (a question or a dispute).

        When the question was about the first of several moves, the board in
        the last frame shows a later position: it is judged again from the
        position after the answer. Returns the reports in order.
        """
        reports = [self.referee.confirm(move)]
        if reports[0].behind and self._last is not None:
            obs, source, doubt = self._last
            reports.append(self.referee.see(obs, source, again=True, side_doubt=doubt))
        last = reports[-1]
        # the photo shows the board the answers lead to (not one the camera took more
        # moves from by itself: that board is the referee's own reading)
        if (
            last.confirmed
            and self._last is not None
            and all(a.how != "camera" for a in last.accepted)
        ):
            self._witness(self._last[0])
        self._sync_reference()
        return reports

    def _witness(self, viewed: Observation) -> None:
        """The players named the move the last photo shows: that photo is of a board they
        vouch for, which says where P0 sits as the start they vouch for does. (Photos lost
        at a game's start would otherwise leave the side open while every later photo
        that holds more than one move is no witness of it.)"""
        if self.turned is not None or viewed.reading is None or not viewed.fit or viewed.partial:
            return
        if self.referee.blind:
            return  # (the counter cannot see this scene: its fits say nothing)
        found = half_turned(viewed) if self._view_turned else viewed
        other = half_turned(found)
        if found.reading is None or other.reading is None:
            return
        self._add_side(self._vouched_odds(found.reading, other.reading), known=True)

    def _vouched_odds(
        self, found: Sequence[SquareEvidence], turned: Sequence[SquareEvidence]
    ) -> float:
        """Log odds that the board is turned, from a photo of the board the players vouch
        for (the referee's now): how much better it fits that board read half round."""
        board = self.referee.owed or board_of(self.referee.position)
        return board_fit(turned, board) - board_fit(found, board)

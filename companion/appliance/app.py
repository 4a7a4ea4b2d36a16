"""``oanquan run`` and the loop shared with ``oanquan demo``.

One turn of the loop: drain the buttons into gestures, let time pass for the
kiosk timers, read one camera frame and let the referee judge it, draw the
screen when it changed, feed the systemd watchdog. Every piece is injected
(hardware from the factory, the journal, the clock, the observer that turns
frames into readings), so the demo and the tests run the same loop as the
appliance.

Nothing one turn does may end the loop: under systemd an exception out of it
is a restart, and restarts in a row reboot the Pi. A frame that cannot be
grabbed or read is counted, logged at most once a minute per kind of
failure, and skipped; after :data:`FRAME_FAILURES_SHOWN` in a row the screen
says the camera has a problem. A button action, the screen or the journal
failing is handled the same way (counted, logged, the turn goes on), and a
journal that has given up (a full disk during compaction) is reopened every
:data:`JOURNAL_RETRY_S`. Only :class:`SystemExit` (SIGTERM) and
:class:`KeyboardInterrupt` leave the loop.
"""

from __future__ import annotations

import functools
import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from companion.appliance.config import Config
from companion.appliance.corners import (
    CornersFileError,
    MarkedCorners,
    Unused,
    forget_corners,
    load_corners,
    marked_corners,
    save_corners,
)
from companion.appliance.gather import Gathered, Gatherer
from companion.appliance.journal import Journal, JournalError, Record
from companion.appliance.pipeline import FramePipeline, Observer
from companion.appliance.service import Notifier
from companion.referee import Referee, Report
from companion.referee.advice import Advice
from companion.referee.reconcile import SquareDiff, Verdict, VerdictKind
from companion.referee.records import DisputeData, Mode
from companion.ui.controller import Controller, Counters, KioskTimers
from companion.ui.input import InputController, InputEvent
from companion.ui.screens import CalibrateStep, ErrorKind, render_screen
from device.errors import CameraStoppedError, DeviceError, EndOfFramesError
from device.factory import Hardware
from engine import EngineError, Move, Position, Rules

log = logging.getLogger("oanquan")

CAMERA_RETRY_S = 10.0
#: Frames in a row that could not be read before the screen shows a camera problem.
FRAME_FAILURES_SHOWN = 5
#: The same failure is logged at most once in this many seconds (with the count since).
LOG_EVERY_S = 60.0
#: Seconds between attempts to reopen a journal that gave up.
JOURNAL_RETRY_S = 30.0


#: A frame more than this many times taller than wide is refused before vision sees it:
#: vision scales frames to a fixed width, so a thin tall one costs minutes (the watchdog).
MAX_TALL = 8


def frame_problem(image: object) -> str | None:
    """Why a camera frame cannot be given to vision (not 8-bit BGR, tiny, a thin strip)."""
    shape = getattr(image, "shape", None)
    dtype = getattr(image, "dtype", None)
    if shape is None or len(shape) != 3 or shape[2] != 3 or str(dtype) != "uint8":
        return f"odd frame: shape {shape}, {dtype} (expected height x width x 3, uint8)"
    h, w = int(shape[0]), int(shape[1])
    if min(h, w) < 16:
        return f"odd frame: {w}x{h} is too small"
    if h > MAX_TALL * w:
        return f"odd frame: {w}x{h} is more than {MAX_TALL}x taller than wide"
    return None


class SpreadLike(Protocol):
    """What a tally reader returns (``companion.commands.tally.SpreadReading``)."""

    @property
    def found(self) -> bool: ...

    @property
    def squares(self) -> Sequence[Any]: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def outside(self) -> float: ...

    @property
    def hand(self) -> bool: ...


@runtime_checkable
class CornerTaker(Protocol):
    """An observer that can read the board at corners given to it
    (``VisionObserver.use_corners``): the camera can then take them from marks."""

    def use_corners(
        self, corners: Sequence[Sequence[float]] | None, view: NDArray[np.uint8] | None = None
    ) -> None: ...

    def take_followed(self) -> tuple[tuple[tuple[float, float], ...], NDArray[np.uint8]] | None:
        """Corners the observer carried along after the camera was knocked (once)."""
        ...

    @property
    def configured(self) -> tuple[tuple[float, float], ...] | None:
        """The corners the config file gives."""
        ...


class SpreadReader(Protocol):
    """Counts a tally's spread from a frame (``companion.commands.tally.read_frame_spread``),
    against the frame of the empty board when there is one; ``single``: where those are
    means of a noisy scene's frames, one frame of each, which the big stones are called
    on."""

    def __call__(
        self,
        observer: Observer,
        image: NDArray[np.uint8],
        empty: NDArray[np.uint8] | None = None,
        single: tuple[NDArray[np.uint8], NDArray[np.uint8] | None] | None = None,
    ) -> SpreadLike: ...


#: A tally's look at the board with at most this many sure pieces on the citizen squares,
#: and no arm over the board, shows the empty board: the spreads are counted against it
#: (a change is a piece; where an arm lay, bare ground would read as changed).
EMPTY_BOARD_PIECES = 1
#: Scenes in a row with an arm over the board that a tally's count waits out (the screen
#: says "Counting..."); the next is counted all the same, so a ground the hand check
#: mistakes for skin cannot stop the camera counting.
HAND_WAITS = 3
#: Seconds between a tally's looks for the empty board, till its first count (a look
#: reads the board: about a third of a second of CPU here, a second on a Pi 4).
LOOK_EVERY_S = 3.0


class FaultLog:
    """Counts failures by where they happened and logs each kind at most once a minute."""

    def __init__(self, clock: Callable[[], float], every_s: float = LOG_EVERY_S) -> None:
        self.clock = clock
        self.every_s = every_s
        #: failures so far, by where they happened ("frame", "grab", "buttons", ...)
        self.counts: Counter[str] = Counter()
        self._last_logged: dict[tuple[str, str], float] = {}
        self._quiet: Counter[tuple[str, str]] = Counter()

    def __call__(self, where: str, exc: BaseException) -> None:
        self.counts[where] += 1
        kind = (where, type(exc).__name__)
        now = self.clock()
        last = self._last_logged.get(kind)
        if last is not None and now - last < self.every_s:
            self._quiet[kind] += 1
            return
        quiet = self._quiet.pop(kind, 0)
        since = f" ({quiet} more since the last report)" if quiet else ""
        self._last_logged[kind] = now
        log.error("%s: %s: %s%s", where, type(exc).__name__, exc, since, exc_info=last is None)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def pending_from_record(record: Record | None) -> Verdict | None:
    """Rebuild the open question after a restart, so the same screen comes back."""
    if record is None:
        return None
    question = DisputeData.from_data(record.data)
    choices = tuple(Move.parse(m) for m in question.choices)
    if question.kind == "ambiguous":
        return Verdict(VerdictKind.AMBIGUOUS, choices=choices)
    squares = tuple(SquareDiff(sq, e, n) for sq, e, n in question.squares)
    move = Move.parse(question.move) if question.move else None
    return Verdict(VerdictKind.DISPUTE, move=move, mistake=question.kind, diffs=squares)


class App:
    """The companion: referee, controller, screen and hardware in one loop."""

    def __init__(
        self,
        config: Config,
        hardware: Hardware,
        journal: Journal,
        *,
        clock: Callable[[], float],
        observer: Observer | None = None,
        notifier: Notifier | None = None,
        manual: bool = False,
        kiosk: bool = False,
        advisor: Callable[[Position, Rules], Advice] | None = None,
        opponent: Callable[..., Advice] | None = None,
        spread_reader: SpreadReader | None = None,
        corners_path: Path | None = None,
    ) -> None:
        """``corners_path``: where the corners marked on the device are kept
        (``companion.appliance.corners``; None: for this run only). ``advisor`` gives hints; ``opponent(position, rules, level, history=)``
        the companion's own moves (``config.play`` says at which level and side);
        ``spread_reader(observer, image, empty, single)`` counts a tally's spread
        (``companion.commands.tally.read_frame_spread``), against the tally's first
        scene where that shows the board empty (``EMPTY_BOARD_PIECES``); each scene is
        one frame or, where the camera is noisy, the mean of several with one of them
        as ``single`` (``companion.appliance.gather``)."""
        self.config = config
        self.hardware = hardware
        self.journal = journal
        self.clock = clock
        self.observer = observer
        self.notifier = notifier
        self.rules = Rules.from_json(config.rules)
        self.mode = Mode.MANUAL if manual or observer is None else Mode.CAMERA
        self.input = InputController(config.input_settings(), clock)
        self.referee = self._resume()
        self.pipeline = FramePipeline(observer, self.referee) if observer is not None else None
        self._advisor = advisor
        self._opponent = opponent
        self._spread_reader = spread_reader
        #: this tally's view of the empty board (None: none seen), whether a count was
        #: asked for (the looks for an empty board are over), when the next look may
        #: be, and the frames of the scene to read next (for the count when
        #: ``_gathering_count``, else for a look)
        self._tally_empty: Gathered | None = None
        self._tally_counted = False
        self._next_look = -math.inf
        self._gather = Gatherer()
        self._gathering_count = False
        self._tally_of: object = None  # the controller's tally these belong to
        self._hand_waits = 0  # scenes with an arm over the board this count waited out
        #: marking the corners: the observer that takes them, where they are kept, the
        #: kept ones till the first frame says whether they are for its size, and the
        #: photo of the board without the marks
        held: object = observer  # (any observer; only some take corners)
        self._taker = held if isinstance(held, CornerTaker) else None
        self._corners_path = corners_path
        self._kept_corners = self._load_corners()
        self._bare: NDArray[np.uint8] | None = None
        #: each photo is taken once the scene holds still (the player gone), and in low
        #: light is the mean of several frames, whose grain would hide small marks
        self._marks_gather = Gatherer()
        #: the observer reads the board at corners marked on the device (or followed)
        self._marked_in_use = False
        #: the config's corners that the corners in use were followed from (None: marked)
        self._origin: tuple[tuple[float, float], ...] | None = None
        timers = None
        if kiosk:
            k = config.kiosk
            timers = KioskTimers(
                60.0 if k.attract else 0.0, k.idle_reset_s, min(30.0, k.idle_reset_s)
            )
        self.controller = Controller(
            self.referee,
            lang=config.language,
            kiosk=timers,
            hints=config.play.hints,
            ai_move=self._suggest if advisor is not None else None,
            opponent_move=self._companion_move if opponent is not None else None,
            opponent=config.play.opponent,
            ai_side=config.play.companion_side,
            on_new_game=self.new_game,
            on_counters_reset=self.journal.counters_reset,
            on_tally=self.journal.tally,
            counters=Counters(*self.journal.totals()),
            can_calibrate=(
                self.mode == Mode.CAMERA and self._taker is not None and self.rules.players == 2
            ),
            on_forget_corners=self._forget_corners,
        )
        self.controller.last_activity = clock()
        self._shown: bytes | None = None
        self._camera_retry_at: float | None = None
        self.frames_seen = 0
        self.last_report: Report | None = None
        self._panel = "on"
        self.last_source: str | None = None
        self.faults = FaultLog(clock)
        #: frames that could not be grabbed or read, in a row (reset by a frame read)
        self.failed_in_row = 0
        self._journal_retry_at: float | None = None

    # -- game lifecycle ---------------------------------------------------

    def _resume(self) -> Referee:
        state = self.journal.resume()
        for warning in (*self.journal.messages, *state.warnings):
            log.warning("%s", warning)
        referee = Referee(self.rules, journal=self.journal, clock=self.clock, mode=self.mode)
        if state.game is not None and state.end is None:
            referee.rules = state.game.rules
            referee.restore(state.game, pending_from_record(state.open_dispute))
            log.info("resumed the game at ply %d", state.game.position.ply)
        else:
            self.journal.new_game(self.rules, mode=self.mode)
        return referee

    def new_game(self) -> None:
        self.journal.new_game(self.rules, mode=self.mode)
        fresh = Referee(self.rules, journal=self.journal, clock=self.clock, mode=self.mode)
        if self.pipeline is not None:
            self.pipeline.follow(fresh)  # same camera, same board: keep what it learnt
        else:
            fresh.adopt_camera_knowledge(self.referee)
        self.referee = fresh
        self.controller.referee = fresh
        if self.mode == Mode.CAMERA:
            # Between games the light may have moved on since exposure was locked.
            self._attempt("camera relock", self.hardware.camera.relock)

    def _suggest(self) -> Advice:
        assert self._advisor is not None
        return self._advisor(self.referee.position, self.referee.rules)

    def _companion_move(self, level: str) -> Advice:
        assert self._opponent is not None
        game = self.referee.game
        history = [t.before for t in game.transitions]
        return self._opponent(game.position, game.rules, level, history=history)

    # -- the loop ---------------------------------------------------------

    def start_camera(self) -> bool:
        """Start the camera; on failure show the error screen and retry later."""
        try:
            self.hardware.camera.start()
        except (DeviceError, OSError) as exc:
            log.error("camera: %s", exc)
            self.controller.on_error(ErrorKind.CAMERA_LOST)
            self._camera_retry_at = self.clock() + CAMERA_RETRY_S
            return False
        self._camera_retry_at = None
        return True

    def step(self, *, camera: bool = True) -> bool:
        """One turn of the loop; False once a replayed camera has no more frames.

        ``camera=False`` handles buttons and time only (the demo presses
        buttons between frames without consuming them).
        """
        now = self.clock()
        self._attempt("buttons", self._buttons_turn)
        self._attempt("timers", lambda: self.controller.tick(now))
        going = True
        if camera and self.mode == Mode.CAMERA and self.pipeline is not None:
            going = self._camera_turn()
        self._attempt("journal", self._journal_turn)
        self._attempt("panel", lambda: self._rest_panel(now))
        self._attempt("display", self._display_turn)
        if self.notifier is not None:
            self._attempt("watchdog", self.notifier.watchdog)
        return going

    def _attempt(self, where: str, action: Callable[[], object]) -> bool:
        """Run one part of the turn; a failure is counted and logged, and the turn goes on."""
        try:
            action()
        except JournalError as exc:
            self.faults(where, exc)
            self.controller.message = str(exc)
            return False
        except Exception as exc:
            self.faults(where, exc)
            return False
        return True

    def _buttons_turn(self) -> None:
        for gesture in self.input.feed(self.hardware.buttons.events(0.0)):
            self._attempt("button action", functools.partial(self._guard, gesture))

    def _guard(self, gesture: InputEvent) -> None:
        """A refused button action is shown, never allowed to stop the appliance."""
        try:
            self.controller.on_input(gesture)
        except EngineError as exc:
            self.controller.message = str(exc)

    def _display_turn(self) -> None:
        self.hardware.display.maintain()
        self.draw()

    def _journal_turn(self) -> None:
        """Reopen a journal that gave up (its repair on open keeps every confirmed record)."""
        if not self.journal.broken:
            self._journal_retry_at = None
            return
        now = self.clock()
        if self._journal_retry_at is None:
            self._journal_retry_at = now + JOURNAL_RETRY_S
        if now < self._journal_retry_at:
            return
        self._journal_retry_at = now + JOURNAL_RETRY_S
        fresh = self.journal.reopen()
        self.journal.close()
        self.journal = fresh
        self.referee.journal = fresh
        log.warning("journal reopened after a failure")

    def _camera_turn(self) -> bool:
        try:
            frame = self.hardware.camera.grab()
        except EndOfFramesError:
            if self.controller.tally_active and self._spread_reader is not None:
                last = self._gather.flush()  # a replay's last scene: read what it gave
                if last is not None:
                    self._attempt(
                        "tally", functools.partial(self._read_tally, self._spread_reader, last)
                    )
            return False
        except CameraStoppedError as exc:
            if self._camera_retry_at is None:
                log.error("camera: %s", exc)
                self.controller.on_error(ErrorKind.CAMERA_LOST)
                self._camera_retry_at = self.clock() + CAMERA_RETRY_S
            elif self.clock() >= self._camera_retry_at:
                self._attempt("camera restart", self.hardware.camera.stop)
                self._attempt("camera restart", self.start_camera)
            return True
        except Exception as exc:  # an unreadable or odd frame: skip it
            self._frame_failed("grab", exc)
            return True
        self.frames_seen += 1
        self.last_source = frame.source
        self._camera_retry_at = None
        assert self.pipeline is not None
        odd = frame_problem(frame.image)
        if odd is not None:
            self._frame_failed("frame", ValueError(odd))
            return True
        self._use_kept_corners(frame.image.shape)
        if self.controller.calibrating:
            # pebbles on the corners, a player over the board: no position for the referee
            self.failed_in_row = 0  # (a frame read: the camera works)
            self._attempt("calibrate", functools.partial(self._calibration_frame, frame.image))
            return True
        self._follow_tally()
        if self.controller.tally_active:
            # Spread-out pieces are no game position: they go to the tally, never the referee.
            self.failed_in_row = 0
            if self._spread_reader is not None:
                self._tally_frame(self._spread_reader, frame.image)
            return True
        try:
            result = self.pipeline(frame)
        except Exception as exc:  # vision or the referee could not take this frame: skip it
            self._frame_failed("frame", exc)
            return True
        if self.failed_in_row >= FRAME_FAILURES_SHOWN:
            self.controller.clear_error()  # the camera problem shown is over
        self.failed_in_row = 0
        self._keep_followed(frame.image.shape)
        report = result.report
        self.last_report = report
        if not result.observation.board_found:
            self.controller.on_error(ErrorKind.BOARD_NOT_FOUND)
            return True
        self.controller.clear_error()
        self.controller.on_report(report)
        if report.accepted and self.notifier is not None:
            self.notifier.status(f"ply {self.referee.position.ply}: {report.detail}")
        return True

    def _tally_frame(self, reader: SpreadReader, image: NDArray[np.uint8]) -> None:
        """A frame while a tally is open. Till the players first ask for a count (and
        after, while none showed it empty) the board is looked at every ``LOOK_EVERY_S``:
        the last look that shows it empty is what the spreads are compared with (players
        who open the tally over the game's last pieces clear them after). The scene after
        each OK is counted. Each scene is gathered first: one frame, or the mean of
        several where the camera's noise is high (``Gatherer``)."""
        wants = self.controller.tally_wants_frame
        if not wants and (not self._looking or self.clock() < self._next_look):
            self._gather.reset()  # the players are spreading, or the next look is not due
            return
        if wants != self._gathering_count:  # the OK came while a look was gathered
            self._gather.reset()
            self._gathering_count = wants
            self._tally_counted = self._tally_counted or wants
            self._hand_waits = 0
        scene = self._gather.add(image)
        if scene is not None:
            self._read_tally(reader, scene)

    def _follow_tally(self) -> None:
        """Forget the last tally's looks and frames once the controller's tally is
        another one (a new tally looks for its own empty board) or none (its frames
        are freed)."""
        if self.controller.tally is self._tally_of:
            return
        self._tally_of = self.controller.tally
        self._tally_empty, self._tally_counted, self._gathering_count = None, False, False
        self._next_look = -math.inf
        self._gather.reset()

    @property
    def _looking(self) -> bool:
        """Whether the tally still looks for the empty board: till its first count, and
        after it while none was seen (the players clear the board between the sides)."""
        return not self._tally_counted or self._tally_empty is None

    def _read_tally(self, reader: SpreadReader, scene: Gathered) -> None:
        """Read one gathered scene: the count the players asked for, else a look."""
        assert self.observer is not None
        if not self.controller.tally_wants_frame:
            if not self._looking:
                return
            self._next_look = self.clock() + LOOK_EVERY_S
            before = reader(self.observer, scene.image)
            pieces = sum(sq.peaks for i, sq in enumerate(before.squares) if i % 6)
            if before.found and not before.hand and pieces <= EMPTY_BOARD_PIECES:
                self._tally_empty = scene
            return
        empty = self._tally_empty
        cleared = None if empty is None else empty.image
        single = None
        if scene.single is not None:  # a mean: its stones on one frame, beside one of the board
            one_empty = cleared if empty is None or empty.single is None else empty.single
            single = (scene.single, one_empty)
        spread = reader(self.observer, scene.image, cleared, single)
        if spread.found and spread.hand and self._hand_waits < HAND_WAITS:
            self._hand_waits += 1  # an arm still over the spread: count the next scene
            return
        self._hand_waits = 0
        squares = spread.squares if spread.found else None
        self.controller.on_tally_reading(squares, spread.reason, outside=spread.outside)

    # -- the board's corners marked on the device ----------------------------

    def _load_corners(self) -> MarkedCorners | None:
        """The corners kept from an earlier run; a file that cannot be used is logged
        and left for a person to look at, and the board is searched for."""
        if self._corners_path is None or self._taker is None:
            return None
        try:
            return load_corners(self._corners_path)
        except CornersFileError as exc:
            log.warning("marked corners not used: %s", exc)
            return None

    def _use_kept_corners(self, shape: tuple[int, ...]) -> None:
        """Give the observer the kept corners on the first frame, where they stand for it
        (``MarkedCorners.unused_for``: its size, the config's corners now)."""
        kept, self._kept_corners = self._kept_corners, None
        if kept is None or self._taker is None:
            return
        why = kept.unused_for(shape, self._taker.configured)
        if why is Unused.OTHER_CONFIG:
            log.warning(
                "kept corners were followed from the config's earlier corners; the config"
                " gives others now: those stand"
            )
        elif why is Unused.OTHER_SIZE:
            w, h = kept.size
            log.warning(
                "marked corners are for %dx%d frames, the camera gives %dx%d:"
                " searching for the board instead (mark them again)",
                w,
                h,
                shape[1],
                shape[0],
            )
        else:
            self._taker.use_corners(kept.corners, kept.view)
            self._marked_in_use, self._origin = True, kept.origin
            log.info("board corners as marked on the device: %s", self._corners_path)

    def _calibration_frame(self, image: NDArray[np.uint8]) -> None:
        """A frame while the corners are marked: toward the photo each step asked for,
        gathered as a tally scene is (``Gatherer``: still, and a mean in low light)."""
        from vision.errors import ImagePairError, MarksNotFoundError

        controller = self.controller
        c = controller.calibration
        if not controller.calibration_wants_photo or c is None:
            self._marks_gather.reset()
            return
        scene = self._marks_gather.add(image)
        if scene is None:
            return
        image = scene.image
        if c.step == CalibrateStep.BARE:
            self._bare = image
            controller.on_board_photo()
            return
        assert self._bare is not None  # (the marks' step follows the board's photo)
        try:
            marked = marked_corners(self._bare, image)
        except MarksNotFoundError as exc:
            log.info("marks: %s", exc.reason)
            controller.on_marks_read(exc.seen)
            return
        except (ImagePairError, CornersFileError) as exc:
            log.info("marks: %s", exc)
            controller.on_marks_read(4)  # four marks, no usable board
            return
        saved = self._corners_path is not None
        if self._corners_path is not None:
            try:
                save_corners(self._corners_path, marked)
            except OSError as exc:
                log.error("marked corners not kept: %s", exc)
                saved = False
        assert self._taker is not None
        self._taker.use_corners(marked.corners, marked.view)
        self._marked_in_use, self._origin = True, None
        log.info("board corners marked: %s", [list(p) for p in marked.corners])
        controller.on_marks_read(None, saved)

    def _keep_followed(self, shape: tuple[int, ...]) -> None:
        """Corners the observer carried along after a knock are kept as marked ones, so
        the next start reads the board where it is now."""
        if self._taker is None:
            return
        followed = self._taker.take_followed()
        if followed is None:
            return
        corners, view = followed
        if not self._marked_in_use:  # the config's corners, followed: say which
            self._origin = self._taker.configured
        self._marked_in_use = True
        if self._corners_path is None:
            return
        try:
            kept = MarkedCorners(corners, (shape[1], shape[0]), view, self._origin)
            save_corners(self._corners_path, kept)
        except (OSError, CornersFileError) as exc:
            log.error("corners followed after the camera moved, not kept: %s", exc)

    def _forget_corners(self) -> tuple[bool, bool]:
        """Back to the search (or the config's corners) and the kept file gone: (whether
        marked corners were in use or kept, whether the file is gone). Nothing marked,
        nothing changes: the observer keeps what it learnt of the board."""
        self._kept_corners = None
        removed, gone = False, True
        if self._corners_path is not None:
            try:
                removed = forget_corners(self._corners_path)
            except OSError as exc:
                log.error("marked corners not forgotten on disk: %s", exc)
                removed, gone = True, False
        used, self._marked_in_use, self._origin = self._marked_in_use, False, None
        if used and self._taker is not None:
            self._taker.use_corners(None)
        return used or removed, gone

    def _frame_failed(self, where: str, exc: Exception) -> None:
        """Count and log a frame that could not be read; show a camera problem after a few."""
        self.faults(where, exc)
        self.failed_in_row += 1
        if isinstance(exc, JournalError):
            self.controller.message = str(exc)
        elif self.failed_in_row >= FRAME_FAILURES_SHOWN:
            self.controller.on_error(ErrorKind.CAMERA_LOST)

    def _rest_panel(self, now: float) -> None:
        """Dim, then switch off, an OLED nobody looks at (burn-in); wake on any button."""
        if self.controller.kiosk is None:
            return
        k = self.config.kiosk
        idle = now - self.controller.last_activity
        level = "on"
        if k.blank_after_s and idle >= k.blank_after_s:
            level = "off"
        elif k.dim_after_s and idle >= k.dim_after_s:
            level = "dim"
        if level == self._panel:
            return
        display = self.hardware.display
        if level == "off":
            display.sleep(True)
        else:
            if self._panel == "off":
                display.sleep(False)
            display.set_contrast(k.dim_contrast if level == "dim" else self.config.display.contrast)
        self._panel = level

    def draw(self) -> Image.Image:
        image = render_screen(self.controller.screen(), self.controller.lang)  # type: ignore[arg-type]
        data = image.tobytes()
        if data != self._shown:
            self.hardware.display.show(image)
            self._shown = data
        return image


__all__ = [
    "FRAME_FAILURES_SHOWN",
    "HAND_WAITS",
    "LOOK_EVERY_S",
    "App",
    "FaultLog",
    "frame_problem",
    "pending_from_record",
]

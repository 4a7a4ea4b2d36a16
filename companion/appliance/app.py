"""``oanquan run`` and the loop shared with ``oanquan demo``.

One turn of the loop: drain the buttons into gestures, let time pass for the
kiosk timers, read one camera frame and let the referee judge it, draw the
screen when it changed, feed the systemd watchdog. Every piece is injected
(hardware from the factory, the journal, the clock, the observer that turns
frames into readings), so the demo and the tests run the same loop as the
appliance.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PIL import Image

from companion.appliance.config import Config
from companion.appliance.journal import Journal, Record
from companion.appliance.pipeline import FramePipeline, Observer
from companion.appliance.service import Notifier
from companion.referee import Referee, Report
from companion.referee.advice import Advice
from companion.referee.reconcile import SquareDiff, Verdict, VerdictKind
from companion.referee.records import DisputeData, Mode
from companion.ui.controller import Controller, Counters, ErrorKind, KioskTimers
from companion.ui.input import InputController
from companion.ui.screens import render_screen
from device.errors import CameraStoppedError, DeviceError, EndOfFramesError
from device.factory import Hardware
from engine import EngineError, Move, Position, Rules

log = logging.getLogger("oanquan")

CAMERA_RETRY_S = 10.0


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
    ) -> None:
        """``advisor`` gives hints; ``opponent(position, rules, level, history=)``
        the companion's own moves (``config.play`` says at which level and side)."""
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
            counters=Counters(*self.journal.totals()),
        )
        self.controller.last_activity = clock()
        self._shown: bytes | None = None
        self._camera_retry_at: float | None = None
        self.frames_seen = 0
        self.last_report: Report | None = None
        self._panel = "on"
        self.last_source: str | None = None

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
        for gesture in self.input.feed(self.hardware.buttons.events(0.0)):
            self._guard(lambda g=gesture: self.controller.on_input(g))
        self.controller.tick(now)
        going = True
        if camera and self.mode == Mode.CAMERA and self.pipeline is not None:
            going = self._camera_turn()
        self._rest_panel(now)
        self.draw()
        if self.notifier is not None:
            self.notifier.watchdog()
        return going

    def _guard(self, action: Callable[[], None]) -> None:
        """A refused button action is shown, never allowed to stop the appliance."""
        try:
            action()
        except EngineError as exc:
            self.controller.message = str(exc)

    def _camera_turn(self) -> bool:
        try:
            frame = self.hardware.camera.grab()
        except EndOfFramesError:
            return False
        except CameraStoppedError as exc:
            if self._camera_retry_at is None:
                log.error("camera: %s", exc)
                self.controller.on_error(ErrorKind.CAMERA_LOST)
                self._camera_retry_at = self.clock() + CAMERA_RETRY_S
            elif self.clock() >= self._camera_retry_at:
                self.hardware.camera.stop()
                self.start_camera()
            return True
        self.frames_seen += 1
        self.last_source = frame.source
        self._camera_retry_at = None
        assert self.pipeline is not None
        result = self.pipeline(frame)
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


__all__ = ["App", "pending_from_record"]

"""``oanquan run`` and the loop shared with ``oanquan demo``.

One turn of the loop: drain the buttons into gestures, let time pass for the
kiosk timers, read one camera frame and let the referee judge it, draw the
screen when it changed, feed the systemd watchdog. Every piece is injected
(hardware from the factory, the journal, the clock, the observer that turns
frames into readings), so the demo and the tests run the same loop as the
appliance.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable
from typing import Protocol

from PIL import Image

from companion.config import Config, ConfigError, load_config
from companion.controller import Advice, Controller, KioskTimers
from companion.input import InputController
from companion.journal import Journal, JournalError, Record
from companion.reconcile import SquareDiff, Verdict
from companion.referee import Observation, Referee, Report
from companion.screens import render_screen
from companion.service import Notifier, ShutdownHandler
from device.errors import CameraStoppedError, DeviceError, EndOfFramesError
from device.factory import Hardware, make_hardware
from device.ports import Frame
from engine import EngineError, Move, Position, Rules

log = logging.getLogger("oanquan")

CAMERA_RETRY_S = 10.0


class Observer(Protocol):
    def __call__(self, frame: Frame) -> Observation: ...


def pending_from_record(record: Record | None) -> Verdict | None:
    """Rebuild the open question after a restart, so the same screen comes back."""
    if record is None:
        return None
    data = record.data
    choices = tuple(Move.parse(m) for m in data.get("choices", []) or data.get("candidates", []))
    if data.get("kind") == "ambiguous":
        return Verdict("ambiguous", choices=choices)
    squares = tuple(SquareDiff(int(sq), int(e), int(s)) for sq, e, s in data.get("squares", []))
    move = Move.parse(data["move"]) if data.get("move") else None
    return Verdict("dispute", move=move, mistake=data.get("kind"), diffs=squares)


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
        self.mode = "manual" if manual or observer is None else "camera"
        self.input = InputController(config.input_settings(), clock)
        self.referee = self._resume()
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
            on_confirmed=getattr(observer, "confirmed", None),
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
        fresh.adopt_camera_knowledge(self.referee)  # same camera, same board: keep what it learnt
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
            self.controller.on_error("camera_lost")
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
        if camera and self.mode == "camera" and self.observer is not None:
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
        assert self.observer is not None
        try:
            frame = self.hardware.camera.grab()
        except EndOfFramesError:
            return False
        except CameraStoppedError as exc:
            if self._camera_retry_at is None:
                log.error("camera: %s", exc)
                self.controller.on_error("camera_lost")
                self._camera_retry_at = self.clock() + CAMERA_RETRY_S
            elif self.clock() >= self._camera_retry_at:
                self.hardware.camera.stop()
                self.start_camera()
            return True
        self.frames_seen += 1
        self.last_source = frame.source
        self._camera_retry_at = None
        obs = self.observer(frame)
        if not obs.board_found:
            if self.controller.view != "error":
                self.controller.on_error("board_not_found")
            return True
        if self.controller.view == "error":
            self.controller.view = "board"
        report = self.referee.see(obs, frame.source)
        self.last_report = report
        if report.confirmed and hasattr(self.observer, "confirmed"):
            self.observer.confirmed()
        if report.detail.startswith("setup ok") and hasattr(self.observer, "learn_opening"):
            self.observer.learn_opening(frame)
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


def run_main(argv: list[str]) -> int:
    """The appliance: real hardware, the journal in the state directory, systemd notify.

    A missing camera or board is shown on the screen and retried, never an
    exit: under systemd an exit means a restart, and repeated restarts reboot
    the Pi. Only a bad config (status 2) or an unusable journal (status 1)
    stops the service, with one line saying what to fix.
    """
    parser = argparse.ArgumentParser(prog="oanquan run", description="Run the companion.")
    parser.add_argument("--config", help="config file (default: /etc/oanquan/config.toml)")
    parser.add_argument("--manual", action="store_true", help="no camera: moves from the buttons")
    parser.add_argument(
        "--kiosk", action="store_true", help="museum mode: attract loop, auto reset"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = load_config(args.config)
        Rules.from_json(config.rules)
    except (ConfigError, EngineError, OSError) as exc:
        print(f"oanquan run: {exc}", file=sys.stderr)
        return 2
    from companion.advice import advise, opponent_advice

    notifier = Notifier.from_environ()
    with ShutdownHandler(notifier=notifier):
        try:
            journal = Journal.open(config.storage.journal_dir / "journal.jsonl")
        except JournalError as exc:
            print(f"oanquan run: {exc}", file=sys.stderr)
            return 1
        try:
            hardware = make_hardware(config.hardware, "real")
        except (DeviceError, ValueError) as exc:
            print(f"oanquan run: {exc}", file=sys.stderr)
            return 1
        try:
            observer = None
            if not args.manual:
                from companion.observe import make_observer

                observer = make_observer(config.vision)
            app = App(
                config,
                hardware,
                journal,
                clock=time.monotonic,
                observer=observer,
                notifier=notifier,
                manual=args.manual,
                kiosk=args.kiosk or config.kiosk.enabled,
                advisor=advise,
                opponent=opponent_advice,
            )
            camera_ok = app.mode != "camera" or app.start_camera()
            notifier.ready("refereeing" if camera_ok else "camera missing: retrying")
            while app.step():
                pass
        finally:
            hardware.close()
    return 0


def demo_main(argv: list[str]) -> int:
    from companion.demo import main

    return main(argv)


__all__ = ["App", "Observation", "Observer", "demo_main", "run_main"]

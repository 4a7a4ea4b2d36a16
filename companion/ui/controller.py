"""What the OLED shows and what the buttons do, as a pure state machine.

The controller turns button gestures and referee reports into actions on the
referee and a screen value to draw. It owns no hardware and reads no clock
of its own: the app loop feeds it events with their times, which is what
makes every interaction testable without a Pi.

Buttons (four-button layout): ◀ ▶ browse legal moves with a preview of each;
OK plays the move in manual mode (with a camera: tells the referee this move
was made, when the camera cannot see it), or confirms a choice; BACK returns to the
board; a long OK opens the menu; a long BACK undoes the last move; the
operator gesture (a long hold of BACK+OK) opens the operator menu.

Tally mode (menu "Count pieces") settles a scoring dispute: each player in
turn spreads their pieces in one layer for the camera (OK counts, ◀
recounts, OK accepts, ▶ counts the lit squares by hand, one at a time, or,
with none lit, corrects the whole count), or, without a camera,
enters the count with the buttons (◀ ▶ change a digit, OK the next one:
tens, units, big stones); then the final count. While a tally is open the
app gives frames to :meth:`Controller.on_tally_reading` instead of the
referee (:attr:`Controller.tally_active`). "Replay move" steps through the
last move pebble by pebble. "New game" asks first while a game is going on.

Three or four seats (``Rules(players=3)``) play the same way with the
buttons: the board is drawn one row per seat, a refill names who lends, and
the tally and replay items (two-seat layouts) are left out of the menu.

A game that keeps cycling (``engine.endgame.cycle_status``) is offered to
end by the count: the screen says so with the count, and every seat presses
OK in turn (BACK plays on, and the offer waits :data:`CYCLE_REOFFER` plies).

Kiosk: with nobody at the buttons the board gives way to the attract loop
only when no game is in progress; a game in progress first counts down
("Still playing?"), then is reset, and only then does the attract loop
invite new visitors, so the two never show for the same game.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from companion.referee import Referee, RefereeState, Report
from companion.referee.advice import Advice, AdviceReason
from companion.referee.reconcile import SquareEvidence, refills_after
from companion.referee.records import CountedBy, Mode
from companion.referee.tally import (
    HAND_MOST,
    FinalCount,
    SideCount,
    SpreadModel,
    SpreadSquare,
    Tally,
    count_spread,
    final_count,
    heaps_expected,
    row_sweep,
    tally_fields,
)
from companion.ui.input import Chord, Held, InputEvent, LongPress, Repeat, ShortPress
from companion.ui.screens import (
    MAIN_MENU,
    OPERATOR_MENU,
    RULES_PAGES,
    AttractScreen,
    BoardScreen,
    BoardView,
    CalibrateScreen,
    CalibrateStep,
    ConfirmScreen,
    CycleScreen,
    Dispute,
    DisputeScreen,
    ErrorKind,
    ErrorScreen,
    FinalView,
    GameOverScreen,
    HintScreen,
    IdleScreen,
    MarksProblem,
    MenuItem,
    MenuScreen,
    MoveScreen,
    NewGameScreen,
    OperatorScreen,
    RefillScreen,
    RefillView,
    ReplayScreen,
    ReplayStep,
    RulesScreen,
    ScoresScreen,
    Screen,
    TallyCountScreen,
    TallyEntryScreen,
    TallyFinalScreen,
    TallyGuideScreen,
    TallyHandScreen,
    TallyView,
    board_view,
    game_over_view,
    move_preview,
)
from companion.ui.screens.model import TallyField, refill_of, row_of
from engine import (
    Capture,
    Drop,
    EngineError,
    GameEnd,
    Move,
    PickUp,
    Position,
    Refill,
    Transition,
    TurnEnd,
)
from engine.endgame import Cycling, cycle_status

log = logging.getLogger(__name__)

#: What the menu's opponent item cycles through: off, then engine.search.LEVELS' names.
OPPONENT_LEVELS = ("off", "easy", "medium", "hard")
ATTRACT_PAGE_FRAMES = 40  # attract frames run at 4 per second: a page every 10 s
#: plies after a declined offer to end by the count before it is offered again
CYCLE_REOFFER = 40


class View(enum.StrEnum):
    """What the OLED shows; each view has one button handler (``Controller._HANDLERS``)."""

    BOARD = "board"
    CURSOR = "cursor"
    SCORES = "scores"
    MENU = "menu"
    RULES = "rules"
    CONFIRM = "confirm"
    DISPUTE = "dispute"
    REFILL = "refill"
    OVER = "over"
    ERROR = "error"
    ATTRACT = "attract"
    HINT = "hint"
    AI = "ai"
    OPERATOR = "operator"
    NEW_GAME = "new_game"
    TALLY_GUIDE = "tally_guide"
    TALLY_COUNT = "tally_count"
    TALLY_ENTRY = "tally_entry"
    TALLY_FINAL = "tally_final"
    TALLY_HAND = "tally_hand"
    REPLAY = "replay"
    CYCLE = "cycle"
    CALIBRATE = "calibrate"


TALLY_VIEWS = frozenset(
    {View.TALLY_GUIDE, View.TALLY_COUNT, View.TALLY_ENTRY, View.TALLY_FINAL, View.TALLY_HAND}
)
#: Entry fields in the order OK walks them, and each one's largest value.
ENTRY_FIELDS: tuple[tuple[TallyField, int], ...] = (("tens", 9), ("units", 9), ("bigs", 2))


def _reading_order(square: int) -> tuple[int, int]:
    """Where ``square`` comes reading the screen's board: the top row (11 .. 7) left to
    right, then the bottom row (1 .. 5)."""
    return (0, -square) if square > 6 else (1, square)


@dataclass
class TallyProgress:
    """An open tally: whose pieces are being counted and what each side came to."""

    player: int = 0
    sides: list[SideCount | None] = field(default_factory=lambda: [None, None])
    #: OK was pressed: the next frame the camera reads is the count
    counting: bool = False
    last: Tally | None = None
    #: squares lit in this heap's counts before the last: the players have laid them out
    laid: frozenset[int] = frozenset()
    #: the camera's last reading of the spread (squares, pieces seen outside the board),
    #: counted again when the players count squares by hand
    reading: tuple[Sequence[SpreadSquare | SquareEvidence], float] | None = None
    #: squares counted by hand for this reading (square -> pieces)
    known: dict[int, int] = field(default_factory=dict)
    #: the lit squares being counted by hand, as the screen reads, and the one shown
    hand: tuple[int, ...] = ()
    hand_index: int = 0
    hand_values: dict[int, int] = field(default_factory=dict)
    #: hand entry: pieces, big stones and the field being changed
    pieces: int = 0
    bigs: int = 0
    field_index: int = 0
    final: FinalCount | None = None
    page: int = 0


#: Seconds between OK and the photo when marking the corners: the player who pressed it
#: steps back out of the view first.
PHOTO_DELAY_S = 2.0
#: Seconds without a press after which marking is left for the board: frames go to the
#: referee again (a kiosk's visitor who walked away mid-way).
CALIBRATE_IDLE_S = 120.0


@dataclass
class CalibrateProgress:
    """Marking the board's corners: the step, and when OK asked for its photo."""

    step: CalibrateStep = CalibrateStep.BARE
    asked_at: float | None = None
    #: marks (or changes) the failed photo showed
    seen: int = 0
    saved: bool = True

    @property
    def problem(self) -> MarksProblem | None:
        """Why the marks gave no corners, from how many were seen (failed steps only)."""
        if self.step != CalibrateStep.FAILED:
            return None
        if self.seen == 4:
            return MarksProblem.NO_BOARD
        return MarksProblem.FEWER if self.seen < 4 else MarksProblem.MORE


@dataclass
class Counters:
    """The operator's totals; restored from the journal, so they survive a restart."""

    games: int = 0
    disputes: int = 0


@dataclass
class KioskTimers:
    """Unattended behaviour; 0 disables a timer."""

    attract_after_s: float = 60.0
    reset_after_s: float = 300.0
    countdown_s: float = 30.0


@dataclass
class Controller:
    """UI state over a referee; ``screen()`` is what the OLED shows now."""

    referee: Referee
    lang: str = "vi"
    hints: bool = True
    kiosk: KioskTimers | None = None
    ai_move: Callable[[], Advice] | None = None  # hints
    #: the companion's own move at a level ("easy", "medium", "hard")
    opponent_move: Callable[[str], Advice] | None = None
    #: "off", or the level the companion plays ``ai_side`` at
    opponent: str = "off"
    ai_side: int = 1
    on_new_game: Callable[[], None] | None = None
    on_shutdown: Callable[[], None] | None = None
    on_reboot: Callable[[], None] | None = None
    #: the operator reset the totals: the journal records it, so a restart keeps the reset
    on_counters_reset: Callable[[], None] | None = None
    #: a tally's final count, as ``RecordWriter.tally`` keywords (the app passes journal.tally)
    on_tally: Callable[..., Any] | None = None
    #: the camera can take the board's corners from marks (menu "Mark board corners");
    #: ``on_forget_corners`` forgets marked corners: (whether any were in use, whether
    #: the kept file is gone too)
    can_calibrate: bool = False
    on_forget_corners: Callable[[], tuple[bool, bool]] | None = None
    calibration: CalibrateProgress | None = None
    spread_model: SpreadModel = field(default_factory=SpreadModel)
    operator_index: int = 0
    view: View = View.BOARD
    cursor: int = 0
    menu_index: int = 0
    confirm_index: int = 0
    rules_page: int = 1
    error: ErrorKind | None = None
    last_activity: float = 0.0
    now: float = 0.0
    attract_frame: int = 0
    message: str = ""
    counters: Counters = field(default_factory=Counters)
    tally: TallyProgress | None = None
    new_game_index: int = 0
    replay_index: int = 0
    _replay: tuple[tuple[ReplayStep, ...], Transition] | None = None
    _advice: Advice | None = None
    #: the companion's move and the position it was searched for
    _own: tuple[Position, Advice] | None = None
    #: the open offer to end a cycling game: why, and the seats that agreed so far
    _cycle: tuple[Cycling, list[int]] | None = None
    #: the ply of the last declined offer (none again before CYCLE_REOFFER more plies)
    _cycle_declined: int | None = None
    #: the game ended by the count on every seat's word (the over screen says so)
    _ended_by_count: bool = False

    def __post_init__(self) -> None:
        if self.view == View.BOARD:
            self.view = self.turn_view()  # the companion may have the first move

    # -- inputs -----------------------------------------------------------

    def tick(self, now: float) -> None:
        """Time passes: marking left idle, attract loop, idle countdown, automatic reset."""
        self.now = now
        if self.calibrating and now - self.last_activity >= CALIBRATE_IDLE_S:
            # nobody finished marking: the referee must not stay blind to the board
            self.calibration = None
            self.view = self.turn_view()
        if self.kiosk is None:
            return
        idle = now - self.last_activity
        k = self.kiosk
        if k.reset_after_s and idle >= k.reset_after_s and self.referee.position.ply > 0:
            self.new_game()
            self.last_activity = now
            self.view = View.ATTRACT
            return
        if (
            k.attract_after_s
            and idle >= k.attract_after_s
            and self.view in (View.BOARD, View.OVER)
            and not (k.reset_after_s and self._in_progress())
        ):
            self.view = View.ATTRACT
        if self.view == View.ATTRACT:
            self.attract_frame = int(now * 4)

    def on_input(self, event: InputEvent) -> None:
        self.last_activity = self.now = max(self.now, event.t)
        if self.view == View.ATTRACT:
            self.view = View.BOARD
            return
        if isinstance(event, Held | Chord):
            buttons = event.buttons
            if (
                buttons == frozenset({"back", "ok"})
                and isinstance(event, Held)
                and event.seconds >= 5
            ):
                self.view, self.operator_index = View.OPERATOR, 0
            elif buttons == frozenset({"left", "right"}):
                self.view = View.SCORES
            return
        if isinstance(event, LongPress):
            if event.button == "ok":
                self.view, self.menu_index = View.MENU, 0
            elif event.button == "back" and self.view == View.CALIBRATE:
                self._press("back")  # (the screen says BACK stops: no move is undone here)
            elif event.button == "back":
                self.message = self.referee.undo().detail
                self._own = None
                self.view = self.turn_view()
            return
        if isinstance(event, ShortPress | Repeat):
            self._press(event.button)

    def _press(self, button: str) -> None:
        handler = self._HANDLERS.get(self.view)
        if handler is not None:
            handler(self, button)

    def _press_board(self, button: str) -> None:
        if button in ("left", "right") and self._legal():
            self.view = View.CURSOR
            self.cursor = 0 if button == "right" else len(self._legal()) - 1
        elif button == "ok" and self._companion_turn():
            self.view = self.turn_view()  # the companion's turn: show its move again
        elif (
            button == "ok"
            and self.hints
            and self.ai_move is not None
            and not self.referee.position.over
        ):
            self._advice = self.ai_move()
            self.view = View.HINT
        elif button == "back":
            self.view = View.SCORES

    def _press_cursor(self, button: str) -> None:
        legal = self._legal()
        if not legal:
            self.view = View.BOARD
            return
        if button in ("left", "right"):
            self.cursor = (self.cursor + (1 if button == "right" else -1)) % len(legal)
        elif button == "ok" and self.referee.mode == Mode.MANUAL:
            self.on_report(self.referee.play_manual(legal[self.cursor % len(legal)]))
        elif button == "ok":
            # Camera mode: the players tell the referee which move was made.
            self.on_report(self.referee.confirm(legal[self.cursor % len(legal)]))
        elif button == "back":
            self.view = View.BOARD

    def _press_hint(self, button: str) -> None:
        if button == "ok" and self.referee.mode == Mode.MANUAL and self._advice is not None:
            self.on_report(self.referee.play_manual(self._advice.move))
        else:
            self.view = View.BOARD

    def _press_scores(self, button: str) -> None:
        self.view = View.BOARD

    def _press_rules(self, button: str) -> None:
        if button == "right" and self.rules_page < RULES_PAGES:
            self.rules_page += 1
        elif button == "left" and self.rules_page > 1:
            self.rules_page -= 1
        elif button in ("back", "ok"):
            self.view = View.MENU

    def _menu_items(self) -> tuple[MenuItem, ...]:
        items = []
        for item in MAIN_MENU:
            if item.key == "menu.language":
                item = MenuItem(item.key, f"value.{self.lang}")
            elif item.key == "menu.hints":
                item = MenuItem(item.key, "value.on" if self.hints else "value.off")
            elif item.key == "menu.opponent":
                if self.opponent_move is None:
                    continue
                item = MenuItem(item.key, f"value.{self.opponent}")
            elif item.key == "menu.replay" and not self.referee.game.transitions:
                continue  # no move yet to replay
            elif item.key in ("menu.replay", "menu.tally") and self.referee.rules.players != 2:
                continue  # their screens are laid out for two seats
            elif item.key == "menu.calibrate" and not self.can_calibrate:
                continue  # no camera that can take the corners from marks
            items.append(item)
        return tuple(items)

    def _press_menu(self, button: str) -> None:
        items = self._menu_items()
        if button in ("left", "right"):
            self.menu_index = (self.menu_index + (1 if button == "right" else -1)) % len(items)
        elif button == "back":
            self.view = self.turn_view()
        elif button == "ok":
            key = items[self.menu_index].key
            if key == "menu.new_game":
                self._ask_new_game()
            elif key == "menu.tally":
                self.start_tally()
            elif key == "menu.replay":
                self.start_replay()
            elif key == "menu.rules":
                self.view, self.rules_page = View.RULES, 1
            elif key == "menu.language":
                self.lang = "en" if self.lang == "vi" else "vi"
            elif key == "menu.hints":
                self.hints = not self.hints
            elif key == "menu.opponent":
                i = OPPONENT_LEVELS.index(self.opponent) if self.opponent in OPPONENT_LEVELS else 0
                self.opponent = OPPONENT_LEVELS[(i + 1) % len(OPPONENT_LEVELS)]
                self._own = None
            elif key == "menu.calibrate":
                self.start_calibration()
            elif key == "menu.shutdown" and self.on_shutdown is not None:
                self.on_shutdown()
            elif key == "menu.back":
                self.view = View.BOARD

    def _operator_items(self) -> tuple[MenuItem, ...]:
        """The operator's menu; marking corners only where the camera can take them."""
        calibrating = ("operator.calibrate", "operator.forget_corners")
        return tuple(i for i in OPERATOR_MENU if self.can_calibrate or i.key not in calibrating)

    def _press_operator(self, button: str) -> None:
        items = self._operator_items()
        if button in ("left", "right"):
            self.operator_index = (self.operator_index + (1 if button == "right" else -1)) % len(
                items
            )
        elif button == "back":
            self.view = View.BOARD
        elif button == "ok":
            key = items[self.operator_index].key
            if key == "operator.reset_counters":
                self.counters = Counters()
                if self.on_counters_reset is not None:
                    self.on_counters_reset()
            elif key == "operator.reboot" and self.on_reboot is not None:
                self.on_reboot()
            elif key == "operator.shutdown" and self.on_shutdown is not None:
                self.on_shutdown()
            elif key == "operator.rules":
                self.view, self.rules_page = View.RULES, 1
            elif key == "operator.calibrate":
                self.start_calibration()
            elif key == "operator.forget_corners":
                forgot, gone = (
                    (False, True) if self.on_forget_corners is None else self.on_forget_corners()
                )
                step = CalibrateStep.FORGOTTEN if forgot else CalibrateStep.NOTHING
                self.calibration = CalibrateProgress(step, saved=gone)
                self.view = View.CALIBRATE
            elif key == "menu.back":
                self.view = View.BOARD

    def _press_confirm(self, button: str) -> None:
        choices = self._choices()
        if not choices:
            self.view = View.BOARD
            return
        if button in ("left", "right"):
            self.confirm_index = (self.confirm_index + (1 if button == "right" else -1)) % len(
                choices
            )
        elif button == "ok":
            self.on_report(self.referee.confirm(choices[self.confirm_index % len(choices)]))
        elif button == "back":
            self.view = View.BOARD

    def _press_dispute(self, button: str) -> None:
        pending = self.referee.pending
        if button == "ok" and not self.referee.setup_checked:
            self.on_report(self.referee.confirm_setup())
        elif button == "ok" and pending is not None and pending.move is not None:
            try:
                self.on_report(self.referee.confirm(pending.move))
            except EngineError as exc:
                self.message = str(exc)
        elif button == "back":
            self.view = View.BOARD  # the players put the board right; the camera will see it

    def _press_cycle(self, button: str) -> None:
        """OK: the seat asked agrees (the last one ends the game); BACK: play on."""
        if self._cycle is None:
            self.view = self.turn_view()
            return
        if button == "ok":
            self._cycle[1].append(self._cycle_asking())
            if not self._cycle_waiting():
                self.end_by_count()
        elif button == "back":
            self._cycle, self._cycle_declined = None, self.referee.position.ply
            self.view = self.turn_view()

    def _press_refill(self, button: str) -> None:
        if button in ("ok", "back"):
            self.view = self.turn_view()

    def _press_over(self, button: str) -> None:
        if button == "ok":
            self.new_game()

    def _press_error(self, button: str) -> None:
        if button in ("ok", "back"):
            self.error = None
            self.view = View.BOARD
        elif button == "right" and self.error == ErrorKind.BOARD_NOT_FOUND and self.can_calibrate:
            self.error = None
            self.start_calibration()

    # -- marking the board's corners ----------------------------------------

    @property
    def calibrating(self) -> bool:
        """Marking the corners: frames go to it, never to the referee (pebbles on the
        corners, a player leaning over the board are no position)."""
        return self.view == View.CALIBRATE and self.calibration is not None

    @property
    def calibration_wants_photo(self) -> bool:
        """OK was pressed on a photo step and the player has had time to step back."""
        c = self.calibration
        return (
            self.calibrating
            and c is not None
            and c.step in (CalibrateStep.BARE, CalibrateStep.PLACE)
            and c.asked_at is not None
            and self.now >= c.asked_at + PHOTO_DELAY_S
        )

    def start_calibration(self) -> None:
        """Mark the corners: photograph the board, then again with a pebble on each."""
        self.calibration = CalibrateProgress()
        self.view = View.CALIBRATE

    def on_board_photo(self) -> None:
        """The photo of the board as it is was taken: now the one with the marks."""
        c = self.calibration
        if self.calibrating and c is not None and c.step == CalibrateStep.BARE:
            c.step, c.asked_at = CalibrateStep.PLACE, None

    def on_marks_read(self, seen: int | None, saved: bool = True) -> None:
        """The photo with the marks was read: ``seen`` None, the corners are set
        (``saved``: kept across restarts); else the marks (or changes) it showed."""
        c = self.calibration
        if not self.calibrating or c is None or c.step != CalibrateStep.PLACE:
            return
        c.asked_at = None
        if seen is None:
            c.step, c.saved = CalibrateStep.DONE, saved
            self.error = None  # (the board the error was about is found now)
            return
        c.step, c.seen = CalibrateStep.FAILED, seen

    def _press_calibrate(self, button: str) -> None:
        c = self.calibration
        if c is None or button == "back":
            self.calibration = None
            self.view = self.turn_view()
        elif button != "ok":
            return
        elif c.step in (CalibrateStep.BARE, CalibrateStep.PLACE):
            if c.asked_at is None:
                c.asked_at = self.now
        elif c.step == CalibrateStep.FAILED and c.problem == MarksProblem.MORE:
            # more moved than the marks: the board's photo may be what is wrong
            self.calibration = CalibrateProgress()
        elif c.step == CalibrateStep.FAILED:  # the board's photo stands: mark again
            c.step, c.asked_at, c.seen = CalibrateStep.PLACE, self.now, 0
        else:
            self.calibration = None
            self.view = self.turn_view()

    # -- a new game over one in progress -----------------------------------

    def game_in_progress(self) -> bool:
        position = self.referee.position
        return position.ply > 0 and not position.over

    def _ask_new_game(self) -> None:
        """A long OK then OK used to wipe the game: now that takes a second, deliberate choice."""
        if self.game_in_progress():
            self.view, self.new_game_index = View.NEW_GAME, 0
        else:
            self.new_game()

    def _press_new_game(self, button: str) -> None:
        if button in ("left", "right"):
            self.new_game_index = 1 - self.new_game_index
        elif button == "ok" and self.new_game_index == 1:
            self.new_game()
        elif button in ("ok", "back"):
            self.view = self.turn_view()

    # -- tally mode ---------------------------------------------------------

    @property
    def camera_tally(self) -> bool:
        """The camera counts the spreads (else the players enter the counts)."""
        return self.referee.mode == Mode.CAMERA

    @property
    def tally_active(self) -> bool:
        """A tally is open: frames go to :meth:`on_tally_reading`, never to the referee."""
        return self.view in TALLY_VIEWS and self.tally is not None

    @property
    def tally_wants_frame(self) -> bool:
        """The players pressed OK to count: the next readable frame is the count."""
        return self.tally_active and self.tally is not None and self.tally.counting

    def start_tally(self) -> None:
        self.tally = TallyProgress()
        self._tally_begin_side(0)

    def _tally_begin_side(self, player: int) -> None:
        t = self.tally
        assert t is not None
        t.player, t.counting, t.last = player, False, None
        t.laid, t.reading, t.known = frozenset(), None, {}
        if self.camera_tally:
            self.view = View.TALLY_GUIDE
        else:
            self._tally_entry(0, 0)

    def _tally_entry(self, pieces: int, bigs: int) -> None:
        t = self.tally
        assert t is not None
        t.pieces, t.bigs, t.field_index = min(pieces, 99), min(bigs, 2), 0
        t.counting = False
        self.view = View.TALLY_ENTRY

    def _end_tally(self) -> None:
        self.tally = None
        self.view = View.OVER if self.referee.position.over else self.turn_view()

    def on_tally_reading(
        self,
        squares: Sequence[SpreadSquare | SquareEvidence] | None,
        reason: str | None = None,
        *,
        outside: float = 0.0,
    ) -> None:
        """The camera's reading of the spread (None: no board in the frame, ``reason`` why).

        ``outside``: density seen around the board (``read_spread``), which
        widens the interval when the board may be located wrong.
        """
        t = self.tally
        if t is None or not t.counting or self.view not in (View.TALLY_GUIDE, View.TALLY_COUNT):
            return
        if squares is None:
            self.message = reason or "board not found"
            return
        if t.last is not None:  # (squares counted by hand were lit too)
            t.laid |= frozenset(t.last.unsure) | frozenset(t.last.hand)
        t.reading, t.known = (tuple(squares), outside), {}  # (a new layout: count it afresh)
        t.last = count_spread(squares, self.spread_model, outside=outside)
        t.counting = False
        self.view = View.TALLY_COUNT

    def _tally_accept(self, side: SideCount) -> None:
        t = self.tally
        assert t is not None
        t.sides[t.player] = side
        if t.player == 0:
            self._tally_begin_side(1)
            return
        a, b = t.sides
        assert a is not None and b is not None
        t.final = self._final_count((a, b))
        t.page = 0
        self.view = View.TALLY_FINAL
        if self.on_tally is not None:
            self.on_tally(**tally_fields(t.final, (a, b)))

    def _final_count(self, sides: tuple[SideCount, SideCount]) -> FinalCount:
        """Debts and the sweep come from the game when the referee followed one."""
        position = self.referee.position
        value = self.referee.rules.mandarin_value
        if position.ply == 0:
            return final_count(sides, mandarin_value=value)
        sweep: tuple[int, int] | None = row_sweep(position)
        outcome = position.outcome
        if position.over and outcome is not None:
            swept = outcome.sweep
            sweep = (int(swept[0]), int(swept[1])) if swept is not None else None
        return final_count(
            sides,
            mandarin_value=value,
            debt=position.debt,
            sweep=sweep,
            expected=heaps_expected(position, sweep),
        )

    def _press_tally_guide(self, button: str) -> None:
        t = self.tally
        assert t is not None
        if button == "ok":
            t.counting = True
        elif button in ("left", "right"):
            self._tally_entry(0, 0)  # the camera cannot help: count by hand
        elif button == "back":
            self._end_tally()

    def _press_tally_count(self, button: str) -> None:
        t = self.tally
        assert t is not None and t.last is not None
        if button == "ok":
            self._tally_accept(SideCount.of(t.last))
        elif button == "left":
            t.counting = True  # recount: the next frame replaces this count
            self.view = View.TALLY_GUIDE
        elif button == "right" and t.last.unsure and t.reading is not None:
            t.hand = tuple(sorted(t.last.unsure, key=_reading_order))
            t.hand_index = 0
            t.hand_values = {sq: min(t.last.counts[sq], HAND_MOST) for sq in t.hand}
            self.view = View.TALLY_HAND
        elif button == "right":
            self._tally_entry(t.last.total, t.last.big)
        elif button == "back":
            t.counting = False
            self.view = View.TALLY_GUIDE

    def _press_tally_hand(self, button: str) -> None:
        """One lit square counted by hand: ◀ ▶ change its count, OK the next square (after
        the last, the spread is counted again with them), BACK the square before."""
        t = self.tally
        assert t is not None and t.reading is not None
        sq = t.hand[t.hand_index]
        if button in ("left", "right"):
            step = 1 if button == "right" else -1
            t.hand_values[sq] = max(0, min(HAND_MOST, t.hand_values[sq] + step))
        elif button == "ok" and t.hand_index + 1 < len(t.hand):
            t.hand_index += 1
        elif button == "ok":
            t.known.update(t.hand_values)
            squares, outside = t.reading
            t.last = count_spread(squares, self.spread_model, outside=outside, known=t.known)
            self.view = View.TALLY_COUNT
        elif button == "back" and t.hand_index > 0:
            t.hand_index -= 1
        elif button == "back":
            self.view = View.TALLY_COUNT  # nothing counted: the camera's count stands

    def _press_tally_entry(self, button: str) -> None:
        t = self.tally
        assert t is not None
        name, top = ENTRY_FIELDS[t.field_index]
        if button in ("left", "right"):
            step = 1 if button == "right" else -1
            if name == "bigs":
                t.bigs = (t.bigs + step) % (top + 1)
            else:
                tens, units = divmod(t.pieces, 10)
                if name == "tens":
                    tens = (tens + step) % (top + 1)
                else:
                    units = (units + step) % (top + 1)
                t.pieces = 10 * tens + units
        elif button == "ok" and t.field_index + 1 < len(ENTRY_FIELDS):
            t.field_index += 1
        elif button == "ok":
            self._tally_accept(SideCount(t.pieces, t.bigs, how=CountedBy.BUTTONS))
        elif button == "back" and t.field_index > 0:
            t.field_index -= 1
        elif button == "back" and self.camera_tally:
            self.view = View.TALLY_GUIDE
        elif button == "back":
            self._end_tally()

    def _press_tally_final(self, button: str) -> None:
        t = self.tally
        assert t is not None
        if button in ("left", "right"):
            t.page = 1 - t.page
        elif button in ("ok", "back"):
            self._end_tally()

    # -- replay of the last move ---------------------------------------------

    def start_replay(self) -> None:
        transitions = self.referee.game.transitions
        if not transitions or transitions[-1].move is None:
            return
        self._replay = (replay_steps(transitions[-1]), transitions[-1])
        self.replay_index = 0
        self.view = View.REPLAY

    def _press_replay(self, button: str) -> None:
        if self._replay is None:
            self.view = self.turn_view()
            return
        last = len(self._replay[0]) - 1
        if button == "right" or (button == "ok" and self.replay_index < last):
            self.replay_index = min(self.replay_index + 1, last)
        elif button == "left":
            self.replay_index = max(self.replay_index - 1, 0)
        elif button in ("ok", "back"):
            self._replay = None
            self.view = View.OVER if self.referee.position.over else self.turn_view()

    _HANDLERS: ClassVar[dict[View, Callable[[Controller, str], None]]] = {
        View.BOARD: _press_board,
        View.CURSOR: _press_cursor,
        View.HINT: _press_hint,
        View.AI: _press_hint,
        View.SCORES: _press_scores,
        View.RULES: _press_rules,
        View.MENU: _press_menu,
        View.OPERATOR: _press_operator,
        View.CONFIRM: _press_confirm,
        View.DISPUTE: _press_dispute,
        View.REFILL: _press_refill,
        View.OVER: _press_over,
        View.ERROR: _press_error,
        View.NEW_GAME: _press_new_game,
        View.TALLY_GUIDE: _press_tally_guide,
        View.TALLY_COUNT: _press_tally_count,
        View.TALLY_ENTRY: _press_tally_entry,
        View.TALLY_FINAL: _press_tally_final,
        View.TALLY_HAND: _press_tally_hand,
        View.REPLAY: _press_replay,
        View.CYCLE: _press_cycle,
        View.CALIBRATE: _press_calibrate,
    }

    # -- referee ------------------------------------------------------------

    def on_report(self, report: Report) -> None:
        """Follow what the referee decided: accepted moves, refills, questions, disputes."""
        self.message = report.detail
        if self.view in TALLY_VIEWS:
            return  # the board holds a spread, not a game: nothing to follow
        position = self.referee.position
        if position.over:
            self.view = View.OVER
            return
        if report.state == RefereeState.AMBIGUOUS:
            if self.view != View.CONFIRM:
                self.confirm_index = 0
            self.view = View.CONFIRM
        elif report.state == RefereeState.DISPUTE:
            if self.view != View.DISPUTE:
                self.counters.disputes += 1
            self.view = View.DISPUTE
        elif report.accepted:
            self.cursor = 0
            self.last_activity = max(self.last_activity, self.now)  # a move is activity too
            self._check_companion_move(report)
            if self.referee.owed is not None:
                self.view = View.REFILL
            elif self._offer_end_by_count():
                self.view = View.CYCLE
            else:
                self.view = self.turn_view()
        elif (
            self.view in (View.CONFIRM, View.DISPUTE, View.REFILL)
            and report.state == RefereeState.WAITING
        ):
            self.view = self.turn_view()

    def on_error(self, kind: ErrorKind) -> None:
        """Show what went wrong (once: a repeated error keeps the screen as it is).

        During a tally a lost camera turns to counting by hand; a frame without
        a board is only a frame to wait past.
        """
        if self.tally_active:
            if kind == ErrorKind.CAMERA_LOST and self.view in (View.TALLY_GUIDE, View.TALLY_COUNT):
                self._tally_entry(0, 0)
            return
        if self.view != View.ERROR:
            self.error = kind
            self.view = View.ERROR

    def clear_error(self) -> None:
        """The camera sees the board again: back to the board."""
        if self.view == View.ERROR:
            self.error = None
            self.view = View.BOARD

    def _companion_turn(self) -> bool:
        position = self.referee.position
        return (
            self.opponent != "off"
            and self.opponent_move is not None
            and position.to_move == self.ai_side
            and not position.over
        )

    def turn_view(self) -> View:
        """The board, or the companion's move when it is the companion's turn.

        The move is searched once per position: showing it again must not
        give a different answer (or cost another second of search).
        """
        if not self._companion_turn():
            return View.BOARD
        assert self.opponent_move is not None
        position = self.referee.position
        if self._own is None or self._own[0] != position:
            self._own = (position, self.opponent_move(self.opponent))
        self._advice = self._own[1]
        return View.AI

    def _check_companion_move(self, report: Report) -> None:
        """Say so when the visitor sowed something else than the companion asked for."""
        own, self._own = self._own, None
        transitions = self.referee.game.transitions
        if own is None or not report.accepted or len(transitions) < len(report.accepted):
            return
        if transitions[-len(report.accepted)].before != own[0]:
            return  # not the position the companion's move was for
        played, asked = report.accepted[0].move, own[1].move
        if played != asked:
            self.message = f"played {played}, the companion asked for {asked}: long BACK undoes"
            log.info("%s", self.message)

    # -- a game that keeps cycling ------------------------------------------

    def cycling(self) -> Cycling | None:
        """Whether the game keeps cycling (engine.endgame.cycle_status over its positions)."""
        game = self.referee.game
        positions = [t.before for t in game.transitions] + [game.position]
        return cycle_status(positions, self.referee.rules)

    def _offer_end_by_count(self) -> bool:
        """Open the offer when the game cycles, unless it was declined not long ago."""
        ply = self.referee.position.ply
        if self._cycle_declined is not None and ply - self._cycle_declined < CYCLE_REOFFER:
            return False
        status = self.cycling()
        if status is None:
            self._cycle = None
            return False
        self._cycle = (status, [])
        return bool(self._cycle_waiting())

    def _cycle_seats(self) -> list[int]:
        """Who must agree, in turn order from the seat to move (not the companion's seat)."""
        position = self.referee.position
        n = self.referee.rules.players
        seats = [(position.to_move + i) % n for i in range(n)]
        if self.opponent != "off" and self.opponent_move is not None:
            seats = [p for p in seats if p != self.ai_side]
        return seats

    def _cycle_waiting(self) -> list[int]:
        agreed = self._cycle[1] if self._cycle is not None else []
        return [p for p in self._cycle_seats() if p not in agreed]

    def _cycle_asking(self) -> int:
        waiting = self._cycle_waiting()
        return waiting[0] if waiting else self.referee.position.to_move

    def end_by_count(self) -> None:
        """Every seat agreed: the game ends by the count (rows swept, debts repaid).

        The referee journals the end, so a power cut cannot bring the endless
        game back.
        """
        self.message = self.referee.end_by_count().detail
        self._cycle, self._ended_by_count = None, True
        self.view = View.OVER

    def _in_progress(self) -> bool:
        position = self.referee.position
        return position.ply > 0 and not position.over

    def new_game(self) -> None:
        self.counters.games += 1
        if self.on_new_game is not None:
            self.on_new_game()
        self.view, self.cursor, self.message = View.BOARD, 0, ""
        self._own = None
        self.tally, self._replay = None, None
        self._cycle, self._cycle_declined, self._ended_by_count = None, None, False
        self.view = self.turn_view()

    # -- output ---------------------------------------------------------------

    def _legal(self) -> list[Move]:
        return self.referee.game.legal_moves()

    def _choices(self) -> tuple[Move, ...]:
        pending = self.referee.pending
        return pending.choices if pending is not None else ()

    def screen(self) -> Screen:
        """The screen value for the current state (rendered by ``render_screen``)."""
        game = self.referee.game
        view = board_view(game.position, self.referee.rules.mandarin_value)
        countdown = self._countdown()
        if countdown is not None and self.view in (View.BOARD, View.CURSOR, View.SCORES):
            return IdleScreen(countdown)  # never over the attract loop's "Press to play"
        if self.view == View.ATTRACT:
            shift = (self.attract_frame // 8) % 4
            page = (self.attract_frame // ATTRACT_PAGE_FRAMES) % 3
            return AttractScreen(self.attract_frame, (shift % 2, shift // 2), page)
        if self.view == View.OPERATOR:
            items = self._operator_items()
            return OperatorScreen(
                items,
                self.operator_index % len(items),
                self.counters.games,
                self.counters.disputes,
            )
        if self.view == View.CALIBRATE and self.calibration is not None:
            c = self.calibration
            return CalibrateScreen(c.step, c.asked_at is not None, c.problem, c.seen, c.saved)
        if self.view == View.ERROR:
            kind = self.error or ErrorKind.BOARD_NOT_FOUND
            return ErrorScreen(kind, mark=kind == ErrorKind.BOARD_NOT_FOUND and self.can_calibrate)
        tally = self._tally_screen()
        if tally is not None:
            return tally
        if self.view == View.NEW_GAME:
            return NewGameScreen(self.new_game_index, self.referee.position.ply)
        if self.view == View.REPLAY and self._replay is not None:
            steps, transition = self._replay
            assert transition.move is not None
            move = move_preview(transition)
            i = min(self.replay_index, len(steps) - 1)
            return ReplayScreen(move, steps[i], i, len(steps))
        if self.view == View.OVER:
            result = game_over_view(game.position)
            if result is not None:
                if self._ended_by_count:
                    result = replace(result, reason="agreed")
                return GameOverScreen(result)
        if self.view == View.CYCLE and self._cycle is not None:
            cycling, agreed = self._cycle
            return CycleScreen(
                cycling.kind.value,
                tuple(cycling.final),
                tuple(agreed),
                self._cycle_asking(),
            )
        if self.view == View.MENU:
            items = self._menu_items()
            return MenuScreen(items, self.menu_index % len(items))
        if self.view == View.RULES:
            return RulesScreen(self.rules_page)
        if self.view == View.SCORES:
            return ScoresScreen(view)
        if self.view == View.CONFIRM and self._choices():
            choices = self._choices()[:3]
            played = [game.preview(m) for m in choices]
            previews = tuple(move_preview(t) for t in played)
            boards = {(t.position.board, t.position.big) for t in played}
            same = len(played) > 1 and len(boards) == 1
            return ConfirmScreen(previews, self.confirm_index % len(previews), same_board=same)
        if self.view == View.DISPUTE and self.referee.pending is not None:
            diffs = self.referee.pending.diffs
            if diffs:
                d = diffs[0]
                return DisputeScreen(view, Dispute(d.square, d.expected, d.seen))
        if self.view == View.REFILL and game.transitions:
            refill = self._refill(game.transitions[-1])
            if refill is not None:
                return RefillScreen(view, refill)
        if self.view in (View.HINT, View.AI) and self._advice is not None:
            a = self._advice
            preview = move_preview(game.preview(a.move))
            own = self.view == View.AI
            return HintScreen(view, preview, AdviceReason(a.reason).value, a.amount, own=own)
        if self.view == View.CURSOR:
            legal = self._legal()
            if legal:
                i = self.cursor % len(legal)
                return MoveScreen(view, move_preview(game.preview(legal[i])))
        if self.view == View.BOARD and self.referee.mode == Mode.MANUAL and game.transitions:
            # Without a camera the engine refilled already: the players still have to,
            # so the board says how until the next move.
            refill = self._refill(game.transitions[-1])
            if refill is not None:
                return RefillScreen(view, refill)
        return BoardScreen(view)

    def _refill(self, transition: Transition) -> RefillView | None:
        """The refill the move left to make by hand (after its turn ended), with its lenders."""
        refills = refills_after(transition)
        if not refills:
            return None
        r = refills[-1]
        return refill_of(r.player, r.borrowed, r.lenders, self.referee.rules.players)

    def _tally_screen(self) -> Screen | None:
        t = self.tally
        if t is None or self.view not in TALLY_VIEWS:
            return None
        if self.view == View.TALLY_GUIDE:
            return TallyGuideScreen(t.player, counting=t.counting)
        if self.view == View.TALLY_COUNT and t.last is not None:
            last = t.last
            view = TallyView(
                last.counts,
                (last.bigs[0], last.bigs[6]),
                last.total,
                last.low,
                last.high,
                last.unsure,
                bool(last.unsure) and t.laid.issuperset(last.unsure),
            )
            return TallyCountScreen(t.player, view)
        if self.view == View.TALLY_HAND and t.last is not None:
            last = t.last
            counts = tuple(t.hand_values.get(sq, n) for sq, n in enumerate(last.counts))
            board = TallyView(
                counts, (last.bigs[0], last.bigs[6]), sum(counts), sum(counts), sum(counts)
            )
            square = t.hand[t.hand_index]
            return TallyHandScreen(t.player, board, square, t.hand_index, len(t.hand))
        if self.view == View.TALLY_ENTRY:
            name = ENTRY_FIELDS[t.field_index][0]
            value = self.referee.rules.mandarin_value
            return TallyEntryScreen(t.player, t.pieces, t.bigs, name, value)
        if self.view == View.TALLY_FINAL and t.final is not None:
            f = t.final
            final = FinalView(
                f.pieces,
                f.bigs,
                f.mandarin_value,
                f.debt,
                f.scores,
                f.winner,
                f.sweep,
                f.sure,
                f.off_by,
            )
            return TallyFinalScreen(final, t.page)
        return None

    def _countdown(self) -> int | None:
        """Seconds before the automatic reset, once it is close enough to warn."""
        k = self.kiosk
        if k is None or not k.reset_after_s or not self._in_progress():
            return None
        left = k.reset_after_s - (self.now - self.last_activity)
        return int(left + 0.999) if 0 < left <= k.countdown_s else None


def replay_steps(transition: Transition) -> tuple[ReplayStep, ...]:
    """The last move as hands make it, from the engine's events: one step per pebble.

    Starts from the board before the move; every pick-up, drop, relay,
    capture, the turn's end and any refill is a step with the board right
    after it and the pebbles still in hand.
    """
    before = transition.before
    mover = int(before.to_move)
    seats = len(before.board) // 6
    board = [int(n) for n in before.board]
    big = [int(b) for b in before.big]
    store = [int(n) for n in before.store]
    bigs = [int(n) for n in before.bigs]
    debt = [int(n) for n in before.debt]
    lent = [int(n) for n in before.lent]
    hand = 0
    picked = False

    def view() -> BoardView:
        return BoardView(
            tuple(board),
            tuple(big),
            tuple(store),
            tuple(bigs),
            tuple(debt),
            mover,
            int(before.ply),
            tuple(lent),
        )

    steps = [ReplayStep("start", view(), player=mover)]
    for event in transition.events:
        if isinstance(event, PickUp):
            board[event.square] -= event.count
            hand += event.count
            steps.append(
                ReplayStep(
                    "relay" if picked else "pick",
                    view(),
                    event.square,
                    event.count,
                    hand,
                    player=mover,
                )
            )
            picked = True
        elif isinstance(event, Drop):
            board[event.square] += 1
            hand -= 1
            steps.append(ReplayStep("drop", view(), event.square, 1, hand, player=mover))
        elif isinstance(event, Capture):
            board[event.square] -= event.pebbles
            store[mover] += event.pebbles
            if event.big:
                big[event.square // 6] = 0
                bigs[mover] += event.big
            steps.append(
                ReplayStep(
                    "capture", view(), event.square, event.pebbles, 0, event.big, player=mover
                )
            )
        elif isinstance(event, TurnEnd):
            steps.append(ReplayStep("end", view(), player=mover))
        elif isinstance(event, Refill):
            p = event.player
            for sq in row_of(p, seats):
                board[sq] += 1
            store[p] -= event.own
            loans = refill_of(p, event.borrowed, event.lenders, seats).lenders
            for lender, n in loans:
                store[lender] -= n
                if lent:
                    lent[lender] += n
            debt[p] += event.borrowed
            steps.append(ReplayStep("refill", view(), None, 5, 0, player=p))
        elif isinstance(event, GameEnd):
            final = board_view(transition.position)
            steps.append(ReplayStep("end", replace(final, to_move=mover), player=mover))
    return tuple(steps)

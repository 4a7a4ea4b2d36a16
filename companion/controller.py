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
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from companion.input import Chord, Held, InputEvent, LongPress, Repeat, ShortPress
from companion.referee import Referee, Report
from companion.screens import (
    MAIN_MENU,
    OPERATOR_MENU,
    AttractScreen,
    BoardScreen,
    ConfirmScreen,
    Dispute,
    DisputeScreen,
    ErrorScreen,
    GameOverScreen,
    HintScreen,
    IdleScreen,
    MenuItem,
    MenuScreen,
    MoveScreen,
    OperatorScreen,
    RefillScreen,
    RulesScreen,
    ScoresScreen,
    Screen,
    board_view,
    game_over_view,
    move_preview,
    refill_view,
)
from engine import EngineError, Move, Position

log = logging.getLogger(__name__)

RULES_PAGES = 4
#: What the menu's opponent item cycles through: off, then engine.search.LEVELS' names.
OPPONENT_LEVELS = ("off", "easy", "medium", "hard")
ATTRACT_PAGE_FRAMES = 40  # attract frames run at 4 per second: a page every 10 s


@dataclass(frozen=True, slots=True)
class Advice:
    """A suggested move and why: ``gain`` points, or ``prevent`` a capture of ``amount``."""

    move: Move
    reason: str = "quiet"  # gain | prevent | quiet
    amount: int = 0


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
    on_confirmed: Callable[[], None] | None = None  # the board now on camera is trusted
    operator_index: int = 0
    view: str = "board"  # board | cursor | scores | menu | rules | confirm | dispute | refill | over | error | attract | hint | ai
    cursor: int = 0
    menu_index: int = 0
    confirm_index: int = 0
    rules_page: int = 1
    error: str | None = None
    last_activity: float = 0.0
    now: float = 0.0
    attract_frame: int = 0
    message: str = ""
    counters: dict[str, int] = field(default_factory=lambda: {"games": 0, "disputes": 0})
    _advice: Advice | None = None
    #: the companion's move and the position it was searched for
    _own: tuple[Position, Advice] | None = None

    def __post_init__(self) -> None:
        if self.view == "board":
            self.view = self.turn_view()  # the companion may have the first move

    # -- inputs -----------------------------------------------------------

    def tick(self, now: float) -> None:
        """Time passes: attract loop, idle countdown and the automatic reset."""
        self.now = now
        if self.kiosk is None:
            return
        idle = now - self.last_activity
        k = self.kiosk
        if k.reset_after_s and idle >= k.reset_after_s and self.referee.position.ply > 0:
            self.new_game()
            self.last_activity = now
            self.view = "attract"
            return
        if k.attract_after_s and idle >= k.attract_after_s and self.view in ("board", "over"):
            self.view = "attract"
        if self.view == "attract":
            self.attract_frame = int(now * 4)

    def on_input(self, event: InputEvent) -> None:
        self.last_activity = self.now = max(self.now, event.t)
        if self.view == "attract":
            self.view = "board"
            return
        if isinstance(event, Held | Chord):
            buttons = event.buttons
            if (
                buttons == frozenset({"back", "ok"})
                and isinstance(event, Held)
                and event.seconds >= 5
            ):
                self.view, self.operator_index = "operator", 0
            elif buttons == frozenset({"left", "right"}):
                self.view = "scores"
            return
        if isinstance(event, LongPress):
            if event.button == "ok":
                self.view, self.menu_index = "menu", 0
            elif event.button == "back":
                self.message = self.referee.undo().detail
                self._own = None
                self.view = self.turn_view()
            return
        if isinstance(event, ShortPress | Repeat):
            self._press(event.button)

    def _press(self, button: str) -> None:
        handler = getattr(self, f"_press_{self.view}", None)
        if handler is not None:
            handler(button)

    def _press_board(self, button: str) -> None:
        if button in ("left", "right") and self._legal():
            self.view = "cursor"
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
            self.view = "hint"
        elif button == "back":
            self.view = "scores"

    def _press_cursor(self, button: str) -> None:
        legal = self._legal()
        if not legal:
            self.view = "board"
            return
        if button in ("left", "right"):
            self.cursor = (self.cursor + (1 if button == "right" else -1)) % len(legal)
        elif button == "ok" and self.referee.mode == "manual":
            self.on_report(self.referee.play_manual(legal[self.cursor % len(legal)]))
        elif button == "ok":
            # Camera mode: the players tell the referee which move was made.
            self.on_report(self.referee.confirm(legal[self.cursor % len(legal)]))
        elif button == "back":
            self.view = "board"

    def _press_hint(self, button: str) -> None:
        if button == "ok" and self.referee.mode == "manual" and self._advice is not None:
            self.on_report(self.referee.play_manual(self._advice.move))
        else:
            self.view = "board"

    _press_ai = _press_hint

    def _press_scores(self, button: str) -> None:
        self.view = "board"

    def _press_rules(self, button: str) -> None:
        if button == "right" and self.rules_page < RULES_PAGES:
            self.rules_page += 1
        elif button == "left" and self.rules_page > 1:
            self.rules_page -= 1
        elif button in ("back", "ok"):
            self.view = "menu"

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
                self.new_game()
            elif key == "menu.rules":
                self.view, self.rules_page = "rules", 1
            elif key == "menu.language":
                self.lang = "en" if self.lang == "vi" else "vi"
            elif key == "menu.hints":
                self.hints = not self.hints
            elif key == "menu.opponent":
                i = OPPONENT_LEVELS.index(self.opponent) if self.opponent in OPPONENT_LEVELS else 0
                self.opponent = OPPONENT_LEVELS[(i + 1) % len(OPPONENT_LEVELS)]
                self._own = None
            elif key == "menu.shutdown" and self.on_shutdown is not None:
                self.on_shutdown()
            elif key == "menu.back":
                self.view = "board"

    def _press_operator(self, button: str) -> None:
        items = OPERATOR_MENU
        if button in ("left", "right"):
            self.operator_index = (self.operator_index + (1 if button == "right" else -1)) % len(
                items
            )
        elif button == "back":
            self.view = "board"
        elif button == "ok":
            key = items[self.operator_index].key
            if key == "operator.reset_counters":
                self.counters = {"games": 0, "disputes": 0}
            elif key == "operator.reboot" and self.on_reboot is not None:
                self.on_reboot()
            elif key == "operator.shutdown" and self.on_shutdown is not None:
                self.on_shutdown()
            elif key == "operator.rules":
                self.view, self.rules_page = "rules", 1
            elif key == "menu.back":
                self.view = "board"

    def _press_confirm(self, button: str) -> None:
        choices = self._choices()
        if not choices:
            self.view = "board"
            return
        if button in ("left", "right"):
            self.confirm_index = (self.confirm_index + (1 if button == "right" else -1)) % len(
                choices
            )
        elif button == "ok":
            self.on_report(self.referee.confirm(choices[self.confirm_index % len(choices)]))
        elif button == "back":
            self.view = "board"

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
            self.view = "board"  # the players put the board right; the camera will see it

    def _press_refill(self, button: str) -> None:
        if button in ("ok", "back"):
            self.view = self.turn_view()

    def _press_over(self, button: str) -> None:
        if button == "ok":
            self.new_game()

    def _press_error(self, button: str) -> None:
        if button in ("ok", "back"):
            self.error = None
            self.view = "board"

    # -- referee ------------------------------------------------------------

    def on_report(self, report: Report) -> None:
        """Follow what the referee decided: accepted moves, refills, questions, disputes."""
        self.message = report.detail
        if report.confirmed and self.on_confirmed is not None:
            self.on_confirmed()
        position = self.referee.position
        if position.over:
            self.view = "over"
            return
        if report.state == "ambiguous":
            if self.view != "confirm":
                self.confirm_index = 0
            self.view = "confirm"
        elif report.state == "dispute":
            if self.view != "dispute":
                self.counters["disputes"] += 1
            self.view = "dispute"
        elif report.accepted:
            self.cursor = 0
            self._check_companion_move(report)
            self.view = "refill" if self.referee.owed is not None else self.turn_view()
        elif self.view in ("confirm", "dispute", "refill") and report.state == "waiting":
            self.view = self.turn_view()

    def on_error(self, kind: str) -> None:
        self.error = kind
        self.view = "error"

    def _companion_turn(self) -> bool:
        position = self.referee.position
        return (
            self.opponent != "off"
            and self.opponent_move is not None
            and position.to_move == self.ai_side
            and not position.over
        )

    def turn_view(self) -> str:
        """The board, or the companion's move when it is the companion's turn.

        The move is searched once per position: showing it again must not
        give a different answer (or cost another second of search).
        """
        if not self._companion_turn():
            return "board"
        assert self.opponent_move is not None
        position = self.referee.position
        if self._own is None or self._own[0] != position:
            self._own = (position, self.opponent_move(self.opponent))
        self._advice = self._own[1]
        return "ai"

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

    def new_game(self) -> None:
        self.counters["games"] += 1
        if self.on_new_game is not None:
            self.on_new_game()
        self.view, self.cursor, self.message = "board", 0, ""
        self._own = None
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
        view = board_view(game.position)
        countdown = self._countdown()
        if countdown is not None and self.view in ("board", "attract", "cursor", "scores"):
            return IdleScreen(countdown)
        if self.view == "attract":
            shift = (self.attract_frame // 8) % 4
            page = (self.attract_frame // ATTRACT_PAGE_FRAMES) % 3
            return AttractScreen(self.attract_frame, (shift % 2, shift // 2), page)
        if self.view == "operator":
            return OperatorScreen(
                OPERATOR_MENU,
                self.operator_index % len(OPERATOR_MENU),
                self.counters["games"],
                self.counters["disputes"],
            )
        if self.view == "error":
            return ErrorScreen("camera_lost" if self.error == "camera_lost" else "board_not_found")
        if self.view == "over":
            result = game_over_view(game.position)
            if result is not None:
                return GameOverScreen(result)
        if self.view == "menu":
            items = self._menu_items()
            return MenuScreen(items, self.menu_index % len(items))
        if self.view == "rules":
            return RulesScreen(self.rules_page)
        if self.view == "scores":
            return ScoresScreen(view)
        if self.view == "confirm" and self._choices():
            choices = self._choices()[:3]
            previews = tuple(move_preview(game.preview(m)) for m in choices)
            return ConfirmScreen(previews, self.confirm_index % len(previews))
        if self.view == "dispute" and self.referee.pending is not None:
            diffs = self.referee.pending.diffs
            if diffs:
                d = diffs[0]
                return DisputeScreen(view, Dispute(d.square, d.expected, d.seen))
        if self.view == "refill" and game.transitions:
            refill = refill_view(game.transitions[-1])
            if refill is not None:
                return RefillScreen(view, refill)
        if self.view in ("hint", "ai") and self._advice is not None:
            a = self._advice
            preview = move_preview(game.preview(a.move))
            reason = a.reason if a.reason in ("gain", "prevent") else "quiet"
            return HintScreen(view, preview, reason, a.amount, own=self.view == "ai")  # type: ignore[arg-type]
        if self.view == "cursor":
            legal = self._legal()
            if legal:
                i = self.cursor % len(legal)
                return MoveScreen(view, move_preview(game.preview(legal[i])))
        return BoardScreen(view)

    def _countdown(self) -> int | None:
        """Seconds before the automatic reset, once it is close enough to warn."""
        k = self.kiosk
        if k is None or not k.reset_after_s or self.referee.position.ply == 0:
            return None
        left = k.reset_after_s - (self.now - self.last_activity)
        return int(left + 0.999) if 0 < left <= k.countdown_s else None

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

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from companion.referee import Referee, RefereeState, Report
from companion.referee.advice import Advice, AdviceReason
from companion.referee.records import Mode
from companion.ui.input import Chord, Held, InputEvent, LongPress, Repeat, ShortPress
from companion.ui.screens import (
    MAIN_MENU,
    OPERATOR_MENU,
    RULES_PAGES,
    AttractScreen,
    BoardScreen,
    ConfirmScreen,
    Dispute,
    DisputeScreen,
    ErrorKind,
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

#: What the menu's opponent item cycles through: off, then engine.search.LEVELS' names.
OPPONENT_LEVELS = ("off", "easy", "medium", "hard")
ATTRACT_PAGE_FRAMES = 40  # attract frames run at 4 per second: a page every 10 s


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
    _advice: Advice | None = None
    #: the companion's move and the position it was searched for
    _own: tuple[Position, Advice] | None = None

    def __post_init__(self) -> None:
        if self.view == View.BOARD:
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
            self.view = View.ATTRACT
            return
        if k.attract_after_s and idle >= k.attract_after_s and self.view in (View.BOARD, View.OVER):
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
                self.view, self.rules_page = View.RULES, 1
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
                self.view = View.BOARD

    def _press_operator(self, button: str) -> None:
        items = OPERATOR_MENU
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
    }

    # -- referee ------------------------------------------------------------

    def on_report(self, report: Report) -> None:
        """Follow what the referee decided: accepted moves, refills, questions, disputes."""
        self.message = report.detail
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
            self._check_companion_move(report)
            self.view = View.REFILL if self.referee.owed is not None else self.turn_view()
        elif (
            self.view in (View.CONFIRM, View.DISPUTE, View.REFILL)
            and report.state == RefereeState.WAITING
        ):
            self.view = self.turn_view()

    def on_error(self, kind: ErrorKind) -> None:
        """Show what went wrong (once: a repeated error keeps the screen as it is)."""
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

    def new_game(self) -> None:
        self.counters.games += 1
        if self.on_new_game is not None:
            self.on_new_game()
        self.view, self.cursor, self.message = View.BOARD, 0, ""
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
        if countdown is not None and self.view in (
            View.BOARD,
            View.ATTRACT,
            View.CURSOR,
            View.SCORES,
        ):
            return IdleScreen(countdown)
        if self.view == View.ATTRACT:
            shift = (self.attract_frame // 8) % 4
            page = (self.attract_frame // ATTRACT_PAGE_FRAMES) % 3
            return AttractScreen(self.attract_frame, (shift % 2, shift // 2), page)
        if self.view == View.OPERATOR:
            return OperatorScreen(
                OPERATOR_MENU,
                self.operator_index % len(OPERATOR_MENU),
                self.counters.games,
                self.counters.disputes,
            )
        if self.view == View.ERROR:
            return ErrorScreen(self.error or ErrorKind.BOARD_NOT_FOUND)
        if self.view == View.OVER:
            result = game_over_view(game.position)
            if result is not None:
                return GameOverScreen(result)
        if self.view == View.MENU:
            items = self._menu_items()
            return MenuScreen(items, self.menu_index % len(items))
        if self.view == View.RULES:
            return RulesScreen(self.rules_page)
        if self.view == View.SCORES:
            return ScoresScreen(view)
        if self.view == View.CONFIRM and self._choices():
            choices = self._choices()[:3]
            previews = tuple(move_preview(game.preview(m)) for m in choices)
            return ConfirmScreen(previews, self.confirm_index % len(previews))
        if self.view == View.DISPUTE and self.referee.pending is not None:
            diffs = self.referee.pending.diffs
            if diffs:
                d = diffs[0]
                return DisputeScreen(view, Dispute(d.square, d.expected, d.seen))
        if self.view == View.REFILL and game.transitions:
            refill = refill_view(game.transitions[-1])
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
        return BoardScreen(view)

    def _countdown(self) -> int | None:
        """Seconds before the automatic reset, once it is close enough to warn."""
        k = self.kiosk
        if k is None or not k.reset_after_s or self.referee.position.ply == 0:
            return None
        left = k.reset_after_s - (self.now - self.last_activity)
        return int(left + 0.999) if 0 < left <= k.countdown_s else None

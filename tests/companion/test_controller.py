"""Buttons and referee reports drive the screens (no hardware, time given by hand)."""

from __future__ import annotations

from companion.referee import Referee
from companion.referee.reconcile import Evidence
from companion.ui.controller import Advice, Controller, KioskTimers, View
from companion.ui.input import Held, LongPress, ShortPress
from companion.ui.screens import (
    AttractScreen,
    BoardScreen,
    ConfirmScreen,
    DisputeScreen,
    GameOverScreen,
    HintScreen,
    IdleScreen,
    MenuScreen,
    MoveScreen,
    OperatorScreen,
    render_screen,
)
from engine import Game, Position, play


def press(c: Controller, *buttons: str, t: float = 0.0) -> None:
    for b in buttons:
        c.on_input(ShortPress(b, t))


def test_manual_game_played_entirely_with_buttons() -> None:
    ref = Referee(mode="manual")
    c = Controller(ref)
    # V40's moves; each is found by walking the cursor to it.
    for text in ["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"]:
        press(c, "right")
        assert isinstance(c.screen(), MoveScreen)
        legal = [str(m) for m in ref.game.legal_moves()]
        for _ in range(legal.index(text)):
            press(c, "right")
        press(c, "ok")
    assert isinstance(c.screen(), GameOverScreen)
    assert ref.position.outcome is not None and ref.position.outcome.final == (52, 18)
    press(c, "ok")  # new game
    assert c.counters.games == 1


def test_every_screen_the_controller_builds_renders() -> None:
    ref = Referee(mode="manual")
    c = Controller(ref, ai_move=lambda: Advice(ref.game.legal_moves()[0], "gain", 3))
    for buttons in (["right"], ["back"], ["ok"], ["back", "back"]):
        press(c, *buttons)
        image = render_screen(c.screen(), "vi")
        assert image.size == (128, 64) and image.mode == "1"


def test_menu_toggles_language_and_hints() -> None:
    c = Controller(Referee(mode="manual"))
    c.on_input(LongPress("ok", 1.0))
    assert isinstance(c.screen(), MenuScreen)
    press(c, "right", "right", "right", "ok")  # language (after New game, Count pieces, Rules)
    assert c.lang == "en"
    press(c, "right", "ok")  # hints
    assert c.hints is False
    press(c, "back")
    assert isinstance(c.screen(), BoardScreen)


def test_long_back_undoes_the_last_move() -> None:
    ref = Referee(mode="manual")
    c = Controller(ref)
    ref.play_manual("2+")
    c.on_input(LongPress("back", 2.0))
    assert ref.position == Position.initial()


def exact(p: Position) -> list[Evidence]:
    return [Evidence.exact(n, p.big[sq // 6] if sq % 6 == 0 else 0) for sq, n in enumerate(p.board)]


def test_ambiguous_reading_opens_the_confirm_screen_and_ok_settles_it() -> None:
    ref = Referee()
    c = Controller(ref)
    start = Position.initial()
    c.on_report(ref.observe(exact(start), still=True))
    a, b = play(start, "2+").position.board, play(start, "4-").position.board
    evidence = [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]
    c.on_report(ref.observe(evidence, still=True, final=True))
    screen = c.screen()
    assert isinstance(screen, ConfirmScreen)
    assert not screen.same_board  # 2+ and 4- leave different boards: a plain question
    chosen = screen.candidates[0]
    press(c, "ok")
    assert ref.position.ply == 1
    assert ref.game.moves[0].square == chosen.square


def test_dispute_screen_names_a_square_and_ok_overrules() -> None:
    ref = Referee()
    c = Controller(ref)
    start = Position.initial()
    c.on_report(ref.observe(exact(start), still=True))
    wrong = list(play(start, "2+").position.board)
    wrong[4] -= 1
    wrong[5] += 1
    c.on_report(
        ref.observe(
            [Evidence.exact(n, 1 if sq % 6 == 0 else 0) for sq, n in enumerate(wrong)], still=True
        )
    )
    screen = c.screen()
    assert isinstance(screen, DisputeScreen) and screen.dispute.square in (4, 5)
    press(c, "ok")
    assert [str(m) for m in ref.game.moves] == ["2+"]


def test_kiosk_counts_down_a_game_in_progress_then_resets_to_the_attract_loop() -> None:
    """Issue 19: "Still playing?" never shows over the attract loop's "Press to play".

    A game in progress stays on the board when idle, then counts down, then
    is reset; only then does the attract loop invite new visitors.
    """
    ref = Referee(mode="manual")
    games: list[int] = []
    c = Controller(ref, kiosk=KioskTimers(60, 300, 30), on_new_game=lambda: games.append(1))
    c.tick(0.0)
    press(c, "right", "ok", t=1.0)  # a move: a game in progress
    c.tick(100.0)
    assert isinstance(c.screen(), BoardScreen)  # no "Press to play" over a game in progress
    c.tick(281.0)
    screen = c.screen()
    assert isinstance(screen, IdleScreen) and screen.seconds == 20
    c.tick(301.0)
    assert games == [1] and isinstance(c.screen(), AttractScreen)
    for t in (320.0, 600.0, 900.0):  # a fresh game: the attract loop runs, no countdown
        c.tick(t)
        assert isinstance(c.screen(), AttractScreen)
    press(c, "left", t=901.0)  # wakes the screen
    assert isinstance(c.screen(), BoardScreen)


def test_kiosk_attract_loop_after_a_finished_game_has_no_countdown() -> None:
    ref = Referee(mode="manual")
    c = Controller(ref, kiosk=KioskTimers(60, 300, 30))
    c.tick(0.0)
    ref.game.stop_and_count()
    c.view = View.OVER
    c.tick(61.0)
    assert isinstance(c.screen(), AttractScreen)
    for t in (275.0, 290.0, 299.0):
        c.tick(t)
        assert isinstance(c.screen(), AttractScreen), t


def test_a_move_the_camera_accepts_is_activity_for_the_kiosk() -> None:
    """Players who sow without touching a button must not be reset mid-game."""
    ref = Referee()
    c = Controller(ref, kiosk=KioskTimers(60, 300, 30))
    start = Position.initial()
    c.tick(0.0)
    c.on_report(ref.observe(exact(start), still=True))
    c.tick(250.0)
    c.on_report(ref.observe(exact(play(start, "2+").position), still=True))
    assert ref.position.ply == 1
    c.tick(400.0)  # 150 s after the camera's move, 400 s after the last button
    assert ref.position.ply == 1 and isinstance(c.screen(), BoardScreen)


def test_operator_hold_opens_the_menu() -> None:
    c = Controller(Referee(mode="manual"))
    c.on_input(Held(frozenset({"back", "ok"}), 5.0, 5.0))
    assert isinstance(c.screen(), OperatorScreen)
    assert Game()  # the engine is untouched by the gesture


def test_ok_on_the_board_shows_a_hint_with_its_reason() -> None:
    ref = Referee(mode="manual")
    c = Controller(ref, ai_move=lambda: Advice(ref.game.legal_moves()[2], "gain", 6))
    press(c, "ok")
    screen = c.screen()
    assert isinstance(screen, HintScreen)
    assert (screen.preview.square, screen.reason, screen.amount) == (2, "gain", 6)
    press(c, "ok")  # manual mode: OK plays the suggested move
    assert [str(m) for m in ref.game.moves] == ["2+"]


def test_operator_counters_survive_new_games() -> None:
    c = Controller(Referee(mode="manual"))
    from companion.referee import Report

    c.on_report(Report("dispute", "x"))
    c.on_report(Report("dispute", "x"))  # the same dispute, still open
    c.new_game()
    c.on_input(Held(frozenset({"back", "ok"}), 5.0, 5.0))
    screen = c.screen()
    assert isinstance(screen, OperatorScreen)
    assert (screen.games, screen.disputes) == (1, 1)


def test_moves_that_leave_the_same_board_are_asked_about_as_such() -> None:
    # 3+ and 3- each take the last mandarin and leave the board bare: no photo can
    # tell them apart, and the question says so
    end = Position.from_text("8|0,4,1,0,0|1|0,1,0,4,0 P0 s23/8 q1/1 d0/0 n14 t1/0")
    ref = Referee(start=end)
    ref.setup_checked = True
    c = Controller(ref)
    c.on_report(ref.observe(exact(play(end, "3+").position), still=True, final=True))
    screen = c.screen()
    assert isinstance(screen, ConfirmScreen)
    assert {(p.square, p.direction) for p in screen.candidates} == {(3, 1), (3, -1)}
    assert screen.same_board

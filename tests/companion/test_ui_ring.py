"""Three and four seats on the device in manual mode: buttons only, the engine referees."""

from __future__ import annotations

import random

import pytest

from companion.referee import Referee
from companion.ui.controller import Controller, View
from companion.ui.input import LongPress, ShortPress
from companion.ui.screens import (
    BoardScreen,
    GameOverScreen,
    MenuScreen,
    MoveScreen,
    RefillScreen,
    ScoresScreen,
    render_screen,
)
from companion.ui.screens.model import row_of
from engine import Refill, Rules, TurnEnd


def press(c: Controller, *buttons: str) -> None:
    for b in buttons:
        c.on_input(ShortPress(b, 0.0))


def play_by_buttons(c: Controller, move: str) -> None:
    """Walk the cursor to ``move`` and press OK, as a player would."""
    legal = [str(m) for m in c.referee.game.legal_moves()]
    press(c, "right")
    for _ in range(legal.index(move)):
        press(c, "right")
    assert isinstance(c.screen(), MoveScreen)
    press(c, "ok")


@pytest.mark.parametrize("players", [3, 4])
def test_a_ring_game_is_played_to_the_end_with_the_buttons(players: int) -> None:
    ref = Referee(Rules(players=players), mode="manual")
    c = Controller(ref)
    rng = random.Random(players)
    seen: set[type] = set()
    while not ref.position.over:
        screen = c.screen()
        seen.add(type(screen))
        for lang in ("vi", "en"):
            image = render_screen(screen, lang)
            assert image.size == (128, 64) and image.mode == "1"
        if isinstance(screen, RefillScreen):
            r = screen.refill
            assert r.player == ref.position.to_move
            assert sum(n for _, n in r.lenders) == r.borrowed
            assert all(ref.position.board[sq] >= 1 for sq in row_of(r.player, players))
        mover = ref.position.to_move
        play_by_buttons(c, str(rng.choice(ref.game.legal_moves())))
        assert ref.position.over or ref.position.to_move == (mover + 1) % players
    over = c.screen()
    assert isinstance(over, GameOverScreen)
    outcome = ref.position.outcome
    assert outcome is not None
    assert over.result.final == outcome.final and over.result.places == outcome.places()
    assert len(over.result.final) == players
    assert BoardScreen in seen
    render_screen(over, "vi")


def test_a_refill_names_the_lender_without_a_camera() -> None:
    """P0's row empties; the board then says how to refill and who lends (manual mode)."""
    rules = Rules(players=3)
    for seed in range(200):
        ref = Referee(rules, mode="manual")
        c = Controller(ref)
        rng = random.Random(seed)
        while not ref.position.over:
            play_by_buttons(c, str(rng.choice(ref.game.legal_moves())))
            t = ref.game.transitions[-1]
            after = t.events[[isinstance(e, TurnEnd) for e in t.events].index(True) :]
            loans = [e for e in after if isinstance(e, Refill) and e.borrowed]
            if loans:
                screen = c.screen()
                assert isinstance(screen, RefillScreen)
                assert screen.refill.lenders == loans[-1].lenders
                assert screen.refill.borrowed == loans[-1].borrowed
                for lang in ("vi", "en"):
                    render_screen(screen, lang)
                press(c, "right")  # browsing moves takes over, as from the board
                assert isinstance(c.screen(), MoveScreen)
                press(c, "back")
                assert isinstance(c.screen(), RefillScreen)  # until the next move
                return
    raise AssertionError("no borrowed refill in 200 random games")


def test_scores_of_three_seats_rank_them() -> None:
    ref = Referee(Rules(players=3), mode="manual")
    c = Controller(ref)
    for _ in range(3):
        play_by_buttons(c, str(ref.game.legal_moves()[-1]))
    press(c, "back")
    screen = c.screen()
    assert isinstance(screen, ScoresScreen) and screen.board.players == 3
    assert screen.board.store == ref.position.store
    render_screen(screen, "en")


def test_the_menu_leaves_out_two_seat_layouts() -> None:
    ref = Referee(Rules(players=4), mode="manual")
    c = Controller(ref)
    play_by_buttons(c, str(ref.game.legal_moves()[0]))
    c.on_input(LongPress("ok", 1.0))
    screen = c.screen()
    assert isinstance(screen, MenuScreen)
    keys = [item.key for item in screen.items]
    assert "menu.tally" not in keys and "menu.replay" not in keys
    assert "menu.new_game" in keys
    assert c.view == View.MENU


@pytest.mark.parametrize("players", [3, 4])
def test_replay_steps_of_ring_moves_end_on_the_real_position(players: int) -> None:
    """The pebble-by-pebble replay round a ring: refills take from the right lenders."""
    from companion.ui.controller import replay_steps
    from engine import Game

    borrowed = 0
    for seed in range(50):
        rng = random.Random(seed)
        game = Game(Rules(players=players))
        while not game.is_over:
            t = game.play(rng.choice(game.legal_moves()))
            borrowed += any(isinstance(e, Refill) and e.borrowed for e in t.events)
            last = replay_steps(t)[-1].board
            if t.position.over:
                break
            assert last.board == t.position.board
            assert (last.store, last.debt, last.lent) == (
                t.position.store,
                t.position.debt,
                t.position.lent,
            )
        if borrowed:
            return  # the games did exercise a borrowed refill
    raise AssertionError("no borrowed refill in 50 random games")

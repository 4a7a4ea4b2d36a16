"""The adapters read the real engine, and the gallery's previews are what the engine does.

The screens only duck-type the engine; these tests pin that contract so a
rename in ``engine.position`` or ``engine.play`` fails here, not on the Pi.
"""

from __future__ import annotations

import pytest

from companion.ui.screens import (
    START,
    MoveScreen,
    RefillView,
    board_view,
    game_over_view,
    move_preview,
    refill_view,
)
from companion.ui.screens.model import BoardView
from companion.ui.screens.samples import SAMPLES
from engine import Rules
from engine.game import Game
from engine.position import Position


def _position(view: BoardView) -> Position:
    return Position(
        board=view.board,
        big=view.big,
        store=view.store,
        bigs=view.bigs,
        debt=view.debt,
        to_move=view.to_move,
        ply=view.ply,
        big_taker=(None,) * view.players,
        lent=view.lent,
    )


def test_board_view_of_the_initial_position() -> None:
    assert board_view(Position.initial()) == START
    assert game_over_view(Position.initial()) is None


MOVES = [name for name, s in SAMPLES.items() if isinstance(s, MoveScreen)]


@pytest.mark.parametrize("name", MOVES)
def test_sample_previews_are_engine_dry_runs(name: str) -> None:
    screen = SAMPLES[name]
    assert isinstance(screen, MoveScreen)
    p = screen.preview
    game = Game(Rules(players=screen.board.players), start=_position(screen.board))
    transition = game.preview(f"{p.square}{'+' if p.direction > 0 else '-'}")
    assert move_preview(transition) == p
    assert board_view(game.position) == screen.board


def test_refill_view_after_a_move_that_leaves_a_row_empty() -> None:
    """B sows; A's row is empty and A has 3 pebbles, so A borrows 2 (R11)."""
    start = Position(
        board=(0, 0, 0, 0, 0, 0, 8, 4, 0, 9, 2, 0),
        big=(0, 1),
        store=(3, 24),
        bigs=(1, 0),
        to_move=1,
        ply=29,
    )
    transition = Game(start=start).preview("7+")
    assert refill_view(transition) == RefillView(player=0, borrowed=2)
    assert board_view(transition.position).debt == (2, 0)
    assert refill_view(Game().preview("3+")) is None


def test_game_over_view_of_a_finished_engine_game() -> None:
    transition = Game().stop_and_count()
    result = game_over_view(transition.position)
    assert result is not None
    outcome = transition.position.outcome
    assert outcome is not None
    assert result.final == outcome.final
    assert result.winner == outcome.winner
    assert result.reason == outcome.reason

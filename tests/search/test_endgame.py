"""engine.endgame: the count that would end a game now, and when a game keeps cycling."""

from __future__ import annotations

import random

from engine.endgame import CycleKind, cycle_status, projected_final
from engine.game import Game
from engine.position import Position
from engine.rules import Rules

# A lost endgame for P1 (both big stones with P0, square 6 holding pebbles nobody
# can take): P1 sows its refilled row into square 6 and borrows five every 4 plies.
SPIRAL_START = "0|0,0,1,0,0|4|1,1,1,1,1 P1 s40/0 q2/0 d0/4 n27 t0/0"
SPIRAL_CYCLE = ["9+", "3-", "7-", "2+"]


def spiral(cycles: int) -> list[Position]:
    game = Game(Rules(), Position.from_text(SPIRAL_START))
    positions = [game.position]
    for _ in range(cycles):
        for move in SPIRAL_CYCLE:
            game.play(move)
            positions.append(game.position)
    return positions


def test_projected_final_sweeps_rows_and_repays_debts() -> None:
    # P0: 40 stored + 2 stones + P1's debt of 4 + its row's 1 = 65; P1: -4 + its row's 5 = 1;
    # the 4 pebbles in stoneless square 6 are unclaimed (R12).
    assert projected_final(Position.from_text(SPIRAL_START)) == (65, 1)


def test_projected_final_of_a_finished_game_is_its_result() -> None:
    game = Game(Rules(), Position.from_text(SPIRAL_START))
    game.stop_and_count()
    assert game.outcome is not None
    assert projected_final(game.position) == game.outcome.final == (65, 1)


def test_a_debt_spiral_is_reported_with_the_count() -> None:
    positions = spiral(5)
    # Every cycle P1 borrows five more and loses pebbles into square 6.
    assert [p.debt[1] for p in positions[::4]] == [4, 9, 14, 19, 24, 29]
    early = cycle_status(positions[:9])
    assert early is None  # 10 pebbles borrowed so far: not yet a spiral
    status = cycle_status(positions)
    assert status is not None
    assert status.kind is CycleKind.DEBT_SPIRAL
    assert status.final == projected_final(positions[-1])
    assert status.winner == 0
    assert status.since_ply == 27


def test_a_repeating_board_is_a_cycle_even_as_stores_change() -> None:
    a = Position.from_text("0|0,0,1,0,0|4|1,1,1,1,1 P1 s40/0 q2/0 d0/4 n27 t0/0")
    b = Position.from_text("0|0,0,2,0,0|4|1,1,1,1,0 P0 s40/0 q2/0 d0/4 n28 t0/0")
    c = Position.from_text("0|0,0,1,0,0|4|1,1,1,1,1 P1 s41/0 q2/0 d0/4 n29 t0/0")
    d = Position.from_text("0|0,0,1,0,0|4|1,1,1,1,1 P1 s42/0 q2/0 d0/4 n31 t0/0")
    assert cycle_status([a, b, c]) is None
    status = cycle_status([a, b, c, b, d])
    assert status is not None and status.kind is CycleKind.REPETITION


def test_ordinary_games_do_not_cycle() -> None:
    rng = random.Random(17)
    for _ in range(30):
        game = Game(Rules())
        positions = [game.position]
        while not game.is_over:
            game.play(rng.choice(game.legal_moves()))
            positions.append(game.position)
            if not game.is_over and game.position.ply < 30:
                assert cycle_status(positions) is None
        assert cycle_status(positions) is None  # a finished game is not offered a stop

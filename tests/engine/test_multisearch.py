"""The N-seat AI: legal answers, the clock it is given, and the captures it must see."""

from __future__ import annotations

import itertools
import random

import pytest

from engine import Game, Position, Rules, legal_moves, play
from engine.multisearch import NoMoveError, choose_move, evaluate, greedy_move
from engine.play import ring_config

# R3-06 of data/vectors_ring.json: 3+ chains through P2's side and takes mandarin 12 (22 points).
CHAIN = "0B|0,0,1,0,0|2|0,3,0,2,0|5B|1,0,0,0,0 P0 s25/20/16 q0/1/0 d0/0/0 n20 l0/0/0 t-/1/-"


@pytest.mark.parametrize("players", (3, 4))
def test_the_ai_answers_a_legal_move_at_every_seat(players: int) -> None:
    rules = Rules(players=players)
    game = Game(rules)
    rng = random.Random(3)
    for _ in range(2 * players):
        result = choose_move(game.position, rules, depth=2, rng=rng)
        assert result.move in game.legal_moves()
        assert result.depth == 2 and result.nodes > 0 and result.pv[0] == result.move
        game.play(result.move)


def test_the_ai_takes_the_chain_that_wins_a_mandarin() -> None:
    rules = Rules(players=3)
    start = Position.from_text(CHAIN)
    assert str(choose_move(start, rules, depth=1, rng=random.Random(0)).move) == "3+"
    assert str(greedy_move(start, rules, random.Random(0))) == "3+"
    assert play(start, "3+", rules).captured.points == 22


def test_the_deadline_comes_from_the_injected_clock() -> None:
    readings = itertools.chain([0.0], itertools.repeat(100.0))
    rules = Rules(players=4)
    # The clock reads 100 s after the start: only the first, always-finished depth counts.
    result = choose_move(Position.initial(rules), rules, time_ms=50, clock=lambda: next(readings))
    assert result.move in legal_moves(Position.initial(rules), rules)
    assert result.depth == 1


def test_a_finished_game_has_no_move() -> None:
    rules = Rules(players=3)
    over = Position.from_text(
        "0|0,0,0,0,0|0|0,0,0,0,0|0|0,0,0,0,0 P0 s35/35/35 q1/1/1 d0/0/0 n40 l0/0/0 "
        "end:mandarins_taken:45/45/45:-:0/0/0:0"
    )
    with pytest.raises(NoMoveError):
        choose_move(over, rules, depth=1)
    with pytest.raises(NoMoveError):
        greedy_move(over, rules, random.Random(0))


def test_a_finished_game_is_worth_its_margin_plus_the_win() -> None:
    rules = Rules(players=3)
    won = Position.from_text(
        "0|0,0,0,0,0|0|0,0,0,0,0|0|0,0,0,0,0 P0 s40/35/30 q1/1/1 d0/0/0 n40 l0/0/0 "
        "end:mandarins_taken:50/45/40:0:0/0/0:0"
    ).to_ring_state()
    cfg = ring_config(rules)
    assert evaluate(won, cfg, 0) == 5 + 1000
    assert evaluate(won, cfg, 2) == -10 - 1000


def test_two_seats_use_the_two_player_search() -> None:
    result = choose_move(Position.initial(), Rules(), depth=2, rng=random.Random(1))
    assert result.move in legal_moves(Position.initial())
    assert result.depth == 2

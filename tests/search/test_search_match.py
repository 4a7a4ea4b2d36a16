"""A small real match: the search at a tiny depth must crush a random player."""

from __future__ import annotations

import random

from engine.game import Game
from engine.play import end_now
from engine.rules import Rules
from engine.search import choose_move


def test_beats_random_player() -> None:
    rules = Rules()
    rng = random.Random(2024)
    wins = 0
    games = 10
    for i in range(games):
        ai_side = i % 2
        game = Game(rules)
        while not game.is_over:
            if len(game.transitions) >= 300:  # cycling cannot hang the test
                game.transitions.append(end_now(game.position, "ply_limit", rules))
                break
            pos = game.position
            if pos.to_move == ai_side:
                move = choose_move(pos, rules, depth=2, rng=rng).move
            else:
                move = rng.choice(game.legal_moves())
            game.play(move)
        outcome = game.position.outcome
        assert outcome is not None
        wins += outcome.winner == ai_side
    assert wins >= 9

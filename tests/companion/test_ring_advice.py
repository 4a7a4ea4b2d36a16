"""Hints and the companion's moves work round a three- or four-seat ring too."""

from __future__ import annotations

import random

import pytest

from companion.referee.advice import AdviceReason, advise, opponent_advice
from companion.referee.ai import ai_move
from engine import Game, Rules


@pytest.mark.parametrize("players", [3, 4])
def test_every_level_plays_a_legal_ring_move(players: int) -> None:
    rules = Rules(players=players)
    game = Game(rules)
    rng = random.Random(players)
    for _ in range(6):  # a few plies of a game the companion plays for every seat
        move = ai_move(game.position, rules, rng.choice(["easy", "medium"]), rng=rng)
        assert move in game.legal_moves()
        game.play(move)


@pytest.mark.parametrize("players", [3, 4])
def test_a_ring_hint_names_a_legal_move_and_what_it_takes(players: int) -> None:
    rules = Rules(players=players)
    game = Game(rules)
    advice = advise(game.position, rules, time_ms=50)
    assert advice.move in game.legal_moves()
    taken = game.preview(advice.move).captured.points
    assert (advice.reason, advice.amount) == (
        (AdviceReason.GAIN, taken) if taken else (AdviceReason.QUIET, 0)
    )
    own = opponent_advice(game.position, rules, "easy", rng=random.Random(0))
    assert own.move in game.legal_moves()

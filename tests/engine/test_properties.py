"""Invariants over random games under every variant, with seeded randomness."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import Game, Move, Position, Rules, core, play
from engine.play import config

VARIANTS: list[dict[str, Any]] = [
    {},
    {"quan_non_min": 0},
    {"mandarin_value": 5},
    {"mandarin_stop": "always"},
    {"chain": False},
    {"end_when": "big_captured", "leftover": "taker"},
    {"end_when": "big_captured", "leftover": "split"},
    {"refill_timing": "any_time"},
    {"direction": "ccw_only"},
    {"mandarin_setup": "small"},
    {
        "mandarin_setup": "small",
        "direction": "ccw_only",
        "mandarin_stop": "take_one",
        "sweep": "split",
        "quan_non_min": 0,
    },
    {"refill": "own_only"},
    {"refill": "bank"},
    {"no_refill": "pass"},
    {"no_refill": "lose"},
    {"repetition": 3, "max_plies": 200},
]
GAMES_PER_VARIANT = 120


def totals(rules: Rules) -> tuple[int, int, int]:
    """(small pebbles, big stones, points) in play for these rules."""
    pebbles = 50 + (2 * rules.mandarin_value if rules.mandarin_setup == "small" else 0)
    stones = 2 if rules.mandarin_setup == "big" else 0
    return pebbles, stones, pebbles + stones * rules.mandarin_value


def check_conservation(p: Position, rules: Rules) -> None:
    pebbles, stones, points = totals(rules)
    if p.outcome is None:
        assert sum(p.board) + sum(p.store) == pebbles
        assert sum(p.big) + sum(p.bigs) == stones
        assert min(p.board) >= 0
    else:
        # Debts are settled inside the final scores; what nobody gets is unclaimed.
        assert p.outcome.unclaimed is not None
        assert sum(p.outcome.final) + p.outcome.unclaimed == points
        assert sum(p.board) == 0


def random_games(rules: Rules, games: int, seed: int) -> list[Game]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        game = Game(rules)
        while not game.is_over and len(game.transitions) < 400:
            game.play(rng.choice(game.legal_moves()))
        out.append(game)
    return out


@pytest.mark.parametrize("switches", VARIANTS, ids=[str(v) or "default" for v in VARIANTS])
def test_random_games_keep_every_invariant(switches: dict[str, Any]) -> None:
    rules = Rules.from_json(switches)
    pebbles = totals(rules)[0]
    for game in random_games(rules, GAMES_PER_VARIANT, seed=2024):
        check_conservation(game.start, rules)
        for t in game.transitions:
            p = t.position
            check_conservation(p, rules)
            # In-move termination bound (R16): 6 advances per mandarin passage.
            assert len(t.sown) <= 6 * (pebbles + 1)
            assert len(t.captures) <= 6
            # Notation round-trips, text and JSON.
            assert Position.from_text(p.to_text()) == p
            assert Position.from_json(p.to_json()) == p
            # Rotating the ring by 6 swaps the players exactly.
            assert t.move is not None
            rotated = play(t.before.rotated(), t.move.rotated(), rules)
            if not (rules.repetition and p.over and p.outcome and p.outcome.reason == "repetition"):
                assert rotated.position == p.rotated()
        if rules.repetition == 0 and rules.max_plies == 0:
            assert game.is_over, "random play always ended in the reference runs (R16)"


@pytest.mark.parametrize("switches", VARIANTS[:6], ids=[str(v) or "default" for v in VARIANTS[:6]])
def test_fast_path_matches_event_path(switches: dict[str, Any]) -> None:
    rules = Rules.from_json(switches)
    cfg = config(rules)
    rng = random.Random(7)
    for _ in range(100):
        st_ = Position.initial(rules).to_state()
        while st_.outcome is None:
            code = rng.choice(core.legal_codes(st_, cfg))
            slow = play(Position.from_state(st_), Move.from_code(code), rules).position
            core.play(st_, code, cfg)
            assert Position.from_state(st_) == slow


def test_undo_restores_every_earlier_position() -> None:
    for game in random_games(Rules(), 20, seed=5):
        seen = [game.position]
        while game.transitions:
            game.undo()
            seen.append(game.position)
        assert seen[-1] == Game().position
        assert [str(m) for m in game.moves] == []


def test_take_one_moves_always_terminate() -> None:
    rules = Rules(mandarin_setup="small", mandarin_stop="take_one", quan_non_min=0)
    for game in random_games(rules, 200, seed=11):
        assert all(t.stop in core.STOPS for t in game.transitions)


positions = st.builds(
    Position,
    board=st.tuples(*[st.integers(0, 70)] * 12),
    big=st.tuples(st.integers(0, 1), st.integers(0, 1)),
    store=st.tuples(st.integers(-20, 70), st.integers(-20, 70)),
    bigs=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    debt=st.tuples(st.integers(0, 30), st.integers(0, 30)),
    to_move=st.integers(0, 1),
    ply=st.integers(0, 10_000),
    big_taker=st.tuples(st.sampled_from([None, 0, 1]), st.sampled_from([None, 0, 1])),
)


@given(positions)
def test_notation_round_trips_for_any_position(p: Position) -> None:
    assert Position.from_text(p.to_text()) == p
    assert Position.from_json(p.to_json()) == p
    assert p.rotated().rotated() == p

"""Invariants of the 2-4 seat ring under random play, and the ring kernel against the core."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine import Game, Move, Position, Rules, core, play, ringcore
from engine.play import config, ring_config

SEATS = (2, 3, 4)
VARIANTS: list[dict[str, Any]] = [
    {},
    {"quan_non_min": 0},
    {"mandarin_stop": "always"},
    {"chain": False},
    {"end_when": "big_captured", "leftover": "taker"},
    {"end_when": "big_captured", "leftover": "split"},
    {"refill_timing": "any_time"},
    {"direction": "ccw_only"},
    {"mandarin_setup": "small", "mandarin_stop": "take_one", "sweep": "split", "quan_non_min": 0},
    {"refill": "own_only"},
    {"refill": "bank"},
    {"no_refill": "pass"},
    {"lender": "next"},
    {"lender": "previous"},
    {"repetition": 3, "max_plies": 300},
]


def totals(rules: Rules) -> tuple[int, int, int]:
    """(small pebbles, big stones, points) in play for these rules and seats."""
    n = rules.players
    pebbles = 25 * n + (n * rules.mandarin_value if rules.mandarin_setup == "small" else 0)
    stones = n if rules.mandarin_setup == "big" else 0
    return pebbles, stones, pebbles + stones * rules.mandarin_value


def check_conservation(p: Position, rules: Rules) -> None:
    pebbles, stones, points = totals(rules)
    assert len(p.board) == 6 * rules.players
    if p.players > 2:
        assert sum(p.debt) == sum(p.lent)
    if p.outcome is None:
        assert sum(p.board) + sum(p.store) == pebbles
        assert sum(p.big) + sum(p.bigs) == stones
        assert min(p.board) >= 0
    else:
        assert p.outcome.unclaimed is not None
        assert sum(p.outcome.final) + p.outcome.unclaimed == points
        assert sum(p.board) == 0


def check_transition(t: Any, rules: Rules) -> None:
    """Everything one move must keep, whatever the number of seats."""
    p = t.position
    check_conservation(p, rules)
    pebbles = totals(rules)[0]
    # R16 for any ring: at most 6 advances between two mandarin passages,
    # and a chain empties every other square at most.
    assert len(t.sown) <= 6 * (pebbles + 1)
    assert len(t.captures) <= 3 * rules.players
    assert Position.from_text(p.to_text()) == p
    assert Position.from_json(p.to_json()) == p
    # Turning the ring one side clockwise maps seat p to seat p + 1.
    assert t.move is not None
    repeated = rules.repetition and p.outcome is not None and p.outcome.reason == "repetition"
    if not repeated:
        turned = play(t.before.rotated(), t.move.rotated(rules.players), rules)
        assert turned.position == p.rotated()
        assert turned.captured == t.captured


def random_game(rules: Rules, rng: random.Random, cap: int = 600) -> Game:
    game = Game(rules)
    while not game.is_over and len(game.transitions) < cap:
        game.play(rng.choice(game.legal_moves()))
    return game


@pytest.mark.parametrize("players", (3, 4))
@pytest.mark.parametrize("switches", VARIANTS, ids=[str(v) or "default" for v in VARIANTS])
def test_random_ring_games_keep_every_invariant(players: int, switches: dict[str, Any]) -> None:
    rules = Rules.from_json({"players": players, **switches})
    rng = random.Random(2026 + players)
    for _ in range(25):
        game = random_game(rules, rng)
        check_conservation(game.start, rules)
        for t in game.transitions:
            check_transition(t, rules)
        assert game.position.to_move in range(players)


@settings(max_examples=60, deadline=None)
@given(players=st.sampled_from(SEATS), switches=st.sampled_from(VARIANTS), data=st.data())
def test_any_game_keeps_the_invariants(
    players: int, switches: dict[str, Any], data: st.DataObject
) -> None:
    rules = Rules.from_json({"players": players, **switches})
    game = Game(rules)
    for _ in range(120):
        if game.is_over:
            break
        moves = game.legal_moves()
        check_transition(game.play(moves[data.draw(st.integers(0, len(moves) - 1))]), rules)


@pytest.mark.parametrize("switches", VARIANTS, ids=[str(v) or "default" for v in VARIANTS])
def test_ring_kernel_plays_two_seats_exactly_like_the_core(switches: dict[str, Any]) -> None:
    """Two kernels implement the rules; on two seats they must never differ."""
    rules = Rules.from_json(switches)
    cfg, rcfg = config(rules), ring_config(rules)
    rng = random.Random(31)
    for _ in range(150):
        a = Position.initial(rules).to_state()
        b = Position.initial(rules).to_ring_state()
        while a.outcome is None and a.ply < 400:
            codes = core.legal_codes(a, cfg)
            assert ringcore.legal_codes(b, rcfg) == codes
            code = rng.choice(codes)
            assert core.play(a, code, cfg) == ringcore.play(b, code, rcfg)
            assert Position.from_state(a) == Position.from_state(b)


def test_two_seat_rules_keep_the_two_player_kernel() -> None:
    """Rules() must run on engine.core, whose speed the two-player game depends on."""
    assert type(config(Rules())) is core.Config
    assert Position.initial().to_state().__class__ is core.State


def _positions(n: int) -> st.SearchStrategy[Position]:
    seat = st.sampled_from([None, *range(n)])
    return st.builds(
        Position,
        board=st.tuples(*[st.integers(0, 100)] * (6 * n)),
        big=st.tuples(*[st.integers(0, 1)] * n),
        store=st.tuples(*[st.integers(-20, 100)] * n),
        bigs=st.tuples(*[st.integers(0, n)] * n),
        debt=st.tuples(*[st.integers(0, 30)] * n),
        to_move=st.integers(0, n - 1),
        ply=st.integers(0, 10_000),
        big_taker=st.tuples(*[seat] * n),
        lent=st.tuples(*[st.integers(0, 30)] * n) if n > 2 else st.just(()),
    )


@given(st.sampled_from(SEATS).flatmap(_positions))
def test_notation_round_trips_for_any_position_of_any_size(p: Position) -> None:
    assert Position.from_text(p.to_text()) == p
    assert Position.from_json(p.to_json()) == p
    turned = p
    for _ in range(p.players):
        turned = turned.rotated()
    assert turned == p


@given(st.sampled_from(SEATS), st.integers(1, 23), st.sampled_from([1, -1]))
def test_move_notation_round_trips_and_rotates_round_the_ring(
    players: int, square: int, direction: int
) -> None:
    assume(square % 6 and square < 6 * players)
    move = Move(square, direction)
    assert Move.parse(str(move)) == move
    turned = move
    for _ in range(players):
        turned = turned.rotated(players)
    assert turned == move

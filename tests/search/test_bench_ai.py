"""bench/ai.py: capped games are judged by the projected count, seats alternate, and an
``ai serve``-style command can be an opponent."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engine.endgame import projected_final
from engine.game import Game
from engine.rules import Rules

BENCH = Path(__file__).resolve().parents[2] / "bench" / "ai.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_ai_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = load_bench()


def test_a_capped_game_is_judged_by_the_projected_count() -> None:
    rules = Rules()
    tally = bench.Tally()
    rng = random.Random(4)
    ai = bench.make_agent("random", 10, None)
    opening = bench.make_opening(random.Random(1), rules)
    record = bench.play_game(
        ai, ai, 1, rng, tally, time_ms=None, opening=opening, rules=rules, ply_cap=9
    )
    assert record.cut and record.reason == "ply_limit" and record.plies == 9
    game = Game(rules)
    game.play_all(record.moves)
    final = projected_final(game.position, rules)
    assert record.final == final
    assert record.winner == (None if final[0] == final[1] else int(final[1] > final[0]))
    assert record.margin == final[1] - final[0]


def test_pairs_swap_colours_on_one_opening_and_summarise_per_seat() -> None:
    summary = bench.run(
        bench.make_agent("ai", 10, 1),
        bench.make_agent("random", 10, None),
        4,
        time_ms=None,
        seed=3,
        ply_cap=60,
    )
    assert summary["games"] == 4
    assert summary["as_p0"]["w"] + summary["as_p0"]["d"] + summary["as_p0"]["l"] == 2
    assert summary["as_p1"]["w"] + summary["as_p1"]["d"] + summary["as_p1"]["l"] == 2
    assert summary["w"] + summary["d"] + summary["l"] == 4
    assert summary["over_100_plies"] == 0 and summary["max_plies"] <= 60


def test_openings_have_the_plies_asked_for() -> None:
    rng = random.Random(9)
    for _ in range(10):
        moves = bench.make_opening(rng, Rules(), 4)
        game = Game(Rules())
        game.play_all(moves)
        assert len(moves) == 4 and not game.is_over


def test_an_ai_serve_command_plays_whole_games() -> None:
    command = f"{sys.executable} -m companion ai serve --seed 2"
    agent = bench.make_agent(f"cmd:{command}", 20, None)
    try:
        summary = bench.run(
            agent, bench.make_agent("greedy", 20, None), 2, time_ms=None, seed=5, ply_cap=80
        )
    finally:
        agent.close()
    assert summary["games"] == 2 and not summary["forfeits"]
    assert summary["ai_moves"] > 0


def test_unknown_player_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown player 'ab0'"):
        bench.make_agent("ab0", 10, None)


def test_one_seat_on_openings_of_a_given_value() -> None:
    def games(seed: int, depth: int) -> list[object]:
        summary = bench.run(
            bench.make_agent("ai", None, depth),
            bench.make_agent("greedy", None, None),
            3,
            time_ms=None,
            seed=seed,
            opening_depth=4,
            opening_range=(5.0, 40.0),
            seat=1,
            ply_cap=40,
        )
        assert summary["as_p0"]["w"] + summary["as_p0"]["d"] + summary["as_p0"]["l"] == 0
        assert summary["as_p1"]["w"] + summary["as_p1"]["d"] + summary["as_p1"]["l"] == 3
        openings: list[object] = summary["openings"]
        return openings

    first = games(8, 1)
    assert all(5.0 <= value < 40.0 for _, value in first)
    assert len({moves for moves, _ in first}) == 3
    # Another setting of the AI meets the same openings.
    assert games(8, 2) == first

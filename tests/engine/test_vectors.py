"""Every hand-traced vector of rules.md (copied to tests/engine/data/vectors.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Game, Position, Rules, legal_moves, match_next, start_turn

VECTORS = json.loads((Path(__file__).parent / "data" / "vectors.json").read_text())["vectors"]


def _subset_mismatches(got: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    return [
        f"{k}: got {got.get(k)!r}, expected {v!r}" for k, v in expected.items() if got.get(k) != v
    ]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    expect = vector["expect"]
    if "match_next" in expect:
        call = expect["match_next"]
        assert match_next(call["final"]).to_json() == call["result"]
        return
    rules = Rules.from_json(vector["rules"])
    start = Position.from_json(vector["start"])
    if "legal" in expect:
        legal = {str(m) for m in legal_moves(start, rules)}
        assert legal == set(expect["legal"])
        assert not legal & set(expect["illegal"])
        return
    moves = vector["move"]
    if moves is None:
        transitions = [start_turn(start, rules)]
    else:
        game = Game(rules, start)
        transitions = [game.play(m) for m in ([moves] if isinstance(moves, str) else moves)]
    last = transitions[-1]
    assert not _subset_mismatches(last.position.to_json(), expect.get("position", {}))
    if "captured" in expect:
        assert last.captured.to_json() == expect["captured"]
    if "stop" in expect:
        assert last.stop == expect["stop"]
    if "stops" in expect:
        assert [t.stop for t in transitions] == expect["stops"]
    for key in ("picks", "sown", "captures", "refills"):
        if key in expect:
            got = [list(x) if isinstance(x, tuple) else x for x in getattr(last, key)]
            assert got == expect[key], key
    for transition, ply in zip(transitions, expect.get("plies", []), strict=False):
        assert str(transition.move) == ply["move"]
        assert not _subset_mismatches(transition.position.to_json(), ply["position"])
        assert transition.captured.points == ply["points"]


def test_every_vector_file_entry_is_exercised() -> None:
    assert len(VECTORS) == 43

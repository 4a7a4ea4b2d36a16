"""Hand-traced vectors for three and four seats round the ring (data/vectors_ring.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import Game, Position, Refill, Rules, legal_moves, start_turn

DATA = json.loads((Path(__file__).parent / "data" / "vectors_ring.json").read_text())
VECTORS = DATA["vectors"]


def _mismatches(got: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    return [
        f"{k}: got {got.get(k)!r}, expected {v!r}" for k, v in expected.items() if got.get(k) != v
    ]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_ring_vector(vector: dict[str, Any]) -> None:
    expect = vector["expect"]
    rules = Rules.from_json(vector["rules"])
    start = Position.from_json(vector["start"])
    assert start.is_valid(rules), start.describe_status(rules)
    if "legal" in expect:
        legal = {str(m) for m in legal_moves(start, rules)}
        assert legal == set(expect["legal"])
        assert not legal & set(expect["illegal"])
        return
    move = vector["move"]
    last = start_turn(start, rules) if move is None else Game(rules, start).play(move)
    assert not _mismatches(last.position.to_json(), expect.get("position", {}))
    if not last.position.over:
        assert last.position.is_valid(rules), last.position.describe_status(rules)
    if "captured" in expect:
        assert last.captured.to_json() == expect["captured"]
    if "stop" in expect:
        assert last.stop == expect["stop"]
    for key in ("picks", "sown", "captures", "refills"):
        if key in expect:
            got = [list(x) if isinstance(x, tuple) else x for x in getattr(last, key)]
            assert got == expect[key], key
    if "lenders" in expect:
        refill = [e for e in last.events if isinstance(e, Refill)][-1]
        assert [list(x) for x in refill.lenders] == expect["lenders"]
    if "places" in expect:
        assert last.position.outcome is not None
        assert list(last.position.outcome.places()) == expect["places"]


def test_each_seat_count_has_at_least_ten_vectors() -> None:
    seats = [Rules.from_json(v["rules"]).players for v in VECTORS]
    assert seats.count(3) >= 10 and seats.count(4) >= 10

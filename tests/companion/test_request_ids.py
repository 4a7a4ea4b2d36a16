"""``rules replay`` and ``ai serve`` echo a request's ``id`` unchanged, and change nothing else.

Callers with many requests in flight match answers by it; before, both
commands refused the key as unknown.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from companion.commands import ai_serve, replay
from engine import Position

IDS: list[Any] = [7, "game-12", {"match": 3, "seats": [0, 1]}, None, [1, "a"], 2.5]


def answers(main: Any, lines: list[str], monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    monkeypatch.setattr("sys.stdout", out)
    main([])
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_replay_echoes_every_kind_of_id(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps({"id": i, "moves": ["2+", "9-"]}) for i in IDS]
    got = answers(replay.main, lines, monkeypatch)
    assert [a["id"] for a in got] == IDS
    plain = answers(replay.main, [json.dumps({"moves": ["2+", "9-"]})], monkeypatch)[0]
    for answer in got:  # the id is added; the rest is the answer without it
        assert {k: v for k, v in answer.items() if k != "id"} == plain
    assert "id" not in plain


def test_replay_echoes_the_id_of_a_game_that_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    got = answers(
        replay.main,
        [
            '{"id": "a", "moves": ["2+", "2+"]}',
            '{"id": "b", "rules": {"quan_non": 0}}',
            '{"id": "c", "colour": 1}',
            "[1]",
            "{not json",
        ],
        monkeypatch,
    )
    assert [a.get("id") for a in got] == ["a", "b", "c", None, None]
    assert got[0]["error"]["ply"] == 1 and len(got[0]["positions"]) == 1
    assert "unknown key 'colour'" in got[2]["error"]["message"]
    assert all("id" not in a for a in got[3:])


def test_ai_serve_echoes_the_id_with_a_move_and_with_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start = Position.initial().to_json()
    lines = [json.dumps({"id": i, "position": start, "time_ms": 20}) for i in IDS[:3]]
    lines += ['{"id": 9, "position": {}}', '{"id": 10, "colour": 1}', "not json"]
    got = answers(ai_serve.main, lines, monkeypatch)
    assert [a.get("id") for a in got] == [*IDS[:3], 9, 10, None]
    assert all("move" in a for a in got[:3])
    assert all(set(a) == {"error", "id"} for a in got[3:5])
    assert set(got[5]) == {"error"}
    assert "time_ms, id" in got[4]["error"]  # the message lists the keys a request may have

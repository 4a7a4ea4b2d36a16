"""`oanquan rules replay` keeps the interchange.md contract, even for bad input."""

from __future__ import annotations

import io
import json
import random

import pytest

from companion.commands import replay
from engine import Game


def run(lines: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[dict[str, object]]]:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    monkeypatch.setattr("sys.stdout", out)
    status = replay.main([])
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


def test_replay_answers_every_line_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    status, answers = run(['{"rules": {}, "moves": ["2+", "9-"]}', '{"moves": []}'], monkeypatch)
    assert status == 0
    assert [len(a["positions"]) for a in answers] == [2, 0]
    assert answers[0]["captured"][0] == {"n": 6, "big": 0, "points": 6}
    assert answers[0]["positions"][0]["store"] == [6, 0]
    assert answers[0]["error"] is None


def test_illegal_move_stops_that_game_only(monkeypatch: pytest.MonkeyPatch) -> None:
    status, answers = run(['{"moves": ["2+", "9-", "2+"]}', '{"moves": ["1+"]}'], monkeypatch)
    assert status == 1
    assert len(answers[0]["positions"]) == 2
    assert answers[0]["error"] == {"ply": 2, "move": "2+", "message": "square 2 is empty"}
    assert answers[1]["error"] is None


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"rules": {"quan_non": 0}}', "unknown switch"),
        ('{"rules": {"direction": "up"}}', "direction"),
        ('{"position": {"board": [0,5,5,5,5,5,0,5,5,5,5,-1]}}', "negative"),
        ('{"position": {"board": [0,5,5,5,5,5,0,5,5,5,5,9]}}', "do not add up"),
        ('{"position": {"board": [0,5,5]}}', "12 integers"),
        ('{"moves": "2+"}', "list"),
        ("[1, 2]", "JSON object"),
        ('{"colour": 1}', "unknown key"),
    ],
)
def test_malformed_lines_get_error_lines_not_tracebacks(
    line: str, fragment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, answers = run([line], monkeypatch)
    assert status == 1
    assert answers == [
        {
            "positions": [],
            "captured": [],
            "error": {"ply": None, "message": answers[0]["error"]["message"]},
        }  # type: ignore[index]
    ]
    assert fragment in answers[0]["error"]["message"]  # type: ignore[index]


def test_bad_move_text_names_the_ply(monkeypatch: pytest.MonkeyPatch) -> None:
    _, answers = run(['{"moves": ["2+", "x9"]}'], monkeypatch)
    assert answers[0]["error"]["ply"] == 1 and answers[0]["error"]["move"] == "x9"  # type: ignore[index]


def test_replay_handles_a_thousand_random_games(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    lines, finals = [], []
    for _ in range(1000):
        game = Game()
        while not game.is_over:
            game.play(rng.choice(game.legal_moves()))
        lines.append(json.dumps({"moves": [str(m) for m in game.moves]}))
        finals.append(game.position.to_json())
    status, answers = run(lines, monkeypatch)
    assert status == 0
    assert [a["positions"][-1] for a in answers] == finals

"""``oanquan ai serve`` (interchange.md) and the kiosk helper companion.referee.ai.ai_move."""

from __future__ import annotations

import io
import json
import random

import pytest

from companion.commands import ai_serve
from companion.referee.ai import ai_move, level_names
from engine.game import Game
from engine.move import Move
from engine.play import legal_moves
from engine.position import Position
from engine.rules import Rules

INITIAL = Position.initial().to_json()


def serve(lines: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[dict[str, object]]]:
    stdin = io.StringIO("".join(line + "\n" for line in lines))
    stdout = io.StringIO()
    monkeypatch.setattr("sys.stdin", stdin)
    monkeypatch.setattr("sys.stdout", stdout)
    status = ai_serve.main(["--seed", "1"])
    answers = [json.loads(x) for x in stdout.getvalue().splitlines()]
    return status, answers


def request(position: dict[str, object] | None = None, **extra: object) -> str:
    data: dict[str, object] = {"position": position or INITIAL, "rules": {}, "time_ms": 50}
    data.update(extra)
    return json.dumps(data)


def test_answers_a_legal_move_and_exits_zero_at_eof(monkeypatch: pytest.MonkeyPatch) -> None:
    status, answers = serve([request()], monkeypatch)
    assert status == 0
    assert len(answers) == 1
    a = answers[0]
    assert Move.parse(a["move"]) in legal_moves(Position.initial())
    assert isinstance(a["score"], float)
    assert isinstance(a["depth"], int) and a["depth"] >= 1
    assert isinstance(a["nodes"], int) and a["nodes"] > 0


def test_empty_input_exits_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    assert serve([], monkeypatch) == (0, [])


def test_malformed_lines_get_errors_and_serving_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    bad_board = dict(INITIAL, board=[0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5])
    wrong_total = dict(INITIAL, board=[0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 9])
    lines = [
        "{not json",
        "[1, 2]",
        json.dumps({"rules": {}}),
        request(rules={"quan_non_min": "five"}),
        request(rules={"no_such_switch": 1}),
        request(position=bad_board),
        request(position=wrong_total),
        request(time_ms=0),
        request(time_ms="fast"),
        request(colour="red"),
        "",  # blank lines are skipped, not answered
        request(),
    ]
    status, answers = serve(lines, monkeypatch)
    assert status == 0
    assert len(answers) == len(lines) - 1
    for a in answers[:-1]:
        assert set(a) == {"error"}, a
        assert isinstance(a["error"], str) and a["error"]
    assert "rules" in str(answers[3]["error"]) and "rules" in str(answers[4]["error"])
    assert "impossible position" in str(answers[6]["error"])
    assert Move.parse(answers[-1]["move"]) in legal_moves(Position.initial())


def test_finished_game_gets_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    game = Game()
    game.play_all(["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"])  # V40
    over = game.position.to_json()
    # V19: the row cannot be refilled, so the game ends before any move.
    stuck = Position.from_text("6B|0,0,0,0,0|3B|9,8,7,6,7 P0 s1/3 q0/0 d0/0 n10").to_json()
    status, answers = serve([request(over), request(stuck), request()], monkeypatch)
    assert status == 0
    assert "over" in str(answers[0]["error"])
    assert "over" in str(answers[1]["error"])
    assert "move" in answers[2]


def test_variant_rules_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    status, answers = serve([request(rules={"direction": "ccw_only"})], monkeypatch)
    assert status == 0
    assert str(answers[0]["move"]).endswith("+")


def test_each_answer_is_flushed_before_the_next_line_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdout = io.StringIO()
    seen_before_second_read: list[str] = []

    class Input:
        def __init__(self) -> None:
            self.lines = [request() + "\n", request() + "\n"]

        def readline(self) -> str:
            if len(self.lines) == 1:
                seen_before_second_read.append(stdout.getvalue())
            return self.lines.pop(0) if self.lines else ""

    monkeypatch.setattr("sys.stdin", Input())
    monkeypatch.setattr("sys.stdout", stdout)
    assert ai_serve.main([]) == 0
    assert seen_before_second_read and '"move"' in seen_before_second_read[0]
    assert len(stdout.getvalue().splitlines()) == 2


def test_ai_move_levels() -> None:
    assert level_names() == ["easy", "medium", "hard"]
    pos = Position.from_text("2B|1,0,3,0,2|4B|0,6,1,0,2 P1 s20/9 q0/0 d0/0 n18")
    for name in ("easy", "medium"):
        move = ai_move(pos, Rules(), name, rng=random.Random(0))
        assert move in legal_moves(pos)
    with pytest.raises(ValueError, match="unknown AI level"):
        ai_move(pos, Rules(), "grandmaster")


def test_the_server_passes_each_game_its_own_earlier_positions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The search sees the positions it was asked about earlier in the same game
    # (to value a cycle across its own answers), and a new game starts afresh.
    real = ai_serve.choose_move
    histories: list[tuple[Position, ...]] = []

    def recording(position: Position, rules: Rules, **kwargs: object) -> object:
        histories.append(tuple(kwargs["history"]))  # type: ignore[arg-type]
        return real(position, rules, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ai_serve, "choose_move", recording)
    game = Game()
    asked = []
    lines = []
    for _ in range(3):
        asked.append(game.position)
        lines.append(request(game.position.to_json(), id=len(lines)))
        for _ in range(2):  # the answer and the opponent's reply
            game.play(game.legal_moves()[0])
    lines.append(request())  # a new game
    status, answers = serve(lines, monkeypatch)
    assert status == 0
    assert [a["id"] for a in answers[:3]] == [0, 1, 2]
    assert set(answers[0]) == {"move", "score", "depth", "nodes", "pv", "exact", "id"}
    assert histories == [(), (asked[0],), (asked[0], asked[1]), ()]

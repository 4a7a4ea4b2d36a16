"""Game records: written, read back, replayed; torn and corrupt files reported exactly."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine import Game, GameRecordError, Rules
from engine.record import read_record, write_record


def played(seed: int, rules: Rules | None = None) -> Game:
    rng = random.Random(seed)
    game = Game(rules)
    while not game.is_over:
        game.play(rng.choice(game.legal_moves()))
    return game


def test_record_round_trip_replays_to_the_same_final_position(tmp_path: Path) -> None:
    game = played(3, Rules(quan_non_min=0, mandarin_value=5))
    path = tmp_path / "game.jsonl"
    write_record(path, game, times=[1000.0 + i for i in range(len(game.moves))])
    record = read_record(path)
    assert record.rules == game.rules
    assert [e.move for e in record.entries] == game.moves
    assert record.entries[0].time == 1000.0
    assert record.replay().position == game.position


def test_torn_last_line_is_an_error_naming_the_line(tmp_path: Path) -> None:
    game = played(4)
    path = tmp_path / "game.jsonl"
    write_record(path, game)
    text = path.read_text()
    path.write_text(text[:-7])  # cut in the middle of the last move line
    with pytest.raises(
        GameRecordError, match=rf"line {len(game.moves) + 1}: last line is incomplete"
    ):
        read_record(path)


def test_lenient_read_keeps_every_move_before_the_damage(tmp_path: Path) -> None:
    game = played(5)
    path = tmp_path / "game.jsonl"
    write_record(path, game)
    lines = path.read_text().splitlines(keepends=True)
    lines[3] = '{"type": "move", "mo\n'
    path.write_text("".join(lines))
    record = read_record(path, lenient=True)
    assert [str(e.move) for e in record.entries] == [str(m) for m in game.moves[:2]]
    assert record.errors and record.errors[0][0] == 4


def test_record_with_an_illegal_move_does_not_replay(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"type":"header","format":"oanquan-record/1","rules":{}}\n'
        '{"type":"move","move":"2+","ply":1}\n'
        '{"type":"move","move":"2+","ply":2}\n'
    )
    with pytest.raises(GameRecordError, match=r"move 2 .*not P1's"):
        read_record(path).replay()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no header"),
        ('{"type":"move","move":"2+","ply":1}\n', "header"),
        ('{"type":"header","format":"oanquan-record/1","rules":{"x":1}}\n', "unknown switch"),
        (
            '{"type":"header","format":"oanquan-record/1"}\n{"type":"move","move":"2+","ply":5}\n',
            "ply 1",
        ),
    ],
)
def test_corrupt_records_get_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(text)
    with pytest.raises(GameRecordError, match=message):
        read_record(path)


@pytest.mark.parametrize("players", (3, 4))
def test_ring_games_record_and_replay_like_two_player_ones(tmp_path: Path, players: int) -> None:
    game = played(5, Rules(players=players, lender="previous"))
    path = tmp_path / "ring.jsonl"
    write_record(path, game)
    assert '"players":' in path.read_text().splitlines()[0]
    record = read_record(path)
    assert record.rules == game.rules and record.start == game.start
    assert record.replay().position == game.position

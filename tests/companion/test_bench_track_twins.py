"""bench/track.py tells a question no photo could answer from one the counter missed."""

from __future__ import annotations

from pathlib import Path

from bench.track import _twin
from engine import Move, Position

# P0 to move; 3+ and 3- each take the last mandarin and leave the board bare
END = Position.from_text("8|0,4,1,0,0|1|0,1,0,4,0 P0 s23/8 q1/1 d0/0 n14 t1/0")
FRAMES: list[tuple[Path, str | None]] = [
    (Path("frame_000.jpg"), None),
    (Path("frame_001.jpg"), "3+"),
]
ASKED = {"move": "3+", "ply": END.ply + 1, "frame": "frame_001.jpg", "answered": True}


def test_two_moves_that_end_the_game_bare_are_twins() -> None:
    assert _twin(END, [Move.parse("3+")], ASKED, "confirm one of 3-, 3+", FRAMES)


def test_a_move_that_leaves_another_board_is_no_twin() -> None:
    # 2+ leaves pieces on the board: the photo could have told it from 3+
    assert not _twin(END, [Move.parse("3+")], ASKED, "confirm one of 3+, 2+", FRAMES)


def test_a_dispute_is_never_a_twin() -> None:
    detail = "no legal move fits after 3+: square 1: expected 0, seen 2"
    assert not _twin(END, [Move.parse("3+")], ASKED, detail, FRAMES)

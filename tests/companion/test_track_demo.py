"""``oanquan track --answers`` on the demo's bundled frames referees the whole game.

The frames are re-rendered from time to time, so how many moves the camera
identifies by itself is a figure for the report, never asserted; what must
hold is that with the players' answers the game reaches its end, every frame
gets its verdict, and the final position is the one the script says.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from companion.commands import track
from companion.commands.demo import FRAMES, GAME, load_script
from engine import Game


def test_answers_drive_the_demo_frames_to_the_scripts_final_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = load_script(FRAMES)
    last_ply = max(s.ply for s in steps if s.ply is not None)
    assert last_ply == len(GAME)  # the script shows the whole game
    answers = tmp_path / "answers.txt"
    answers.write_text("".join(f"{move}\n" for move in GAME))
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    status = track.main([str(FRAMES), "--answers", str(answers)])
    lines: list[dict[str, Any]] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert status == 0

    verdicts = [line["frame"] for line in lines if "state" in line]
    assert verdicts == [s.file for s in steps]  # every frame, in the script's order
    moves = [line for line in lines if "move" in line]
    assert len(moves) >= len(GAME)
    assert all(("confidence" in m) != bool(m.get("answered")) for m in moves)

    expected = Game()
    expected.play_all(GAME)
    summary = lines[-1]["summary"]
    assert summary["moves"] == GAME
    assert summary["position"] == expected.position.to_json()
    assert summary["position"]["over"] and summary["position"]["final"] == [52, 18]

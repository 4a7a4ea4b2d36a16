"""``oanquan demo`` (what ``make demo`` runs): the bundled game refereed to its final count."""

from __future__ import annotations

import io
from pathlib import Path

from companion.commands.demo import FRAMES, main, run_demo


def test_demo_referees_the_bundled_game_to_the_final_count(tmp_path: Path) -> None:
    out = io.StringIO()
    frames = run_demo(FRAMES, out, frames_out=tmp_path, lang="en")
    text = out.getvalue()
    assert "end:mandarins_taken:52/18" in text  # the rules' V40 finish
    assert "referee: settled" in text  # moves recognised from the camera
    assert "referee: dispute" in text or "referee: ambiguous" in text  # and questions asked
    assert len(list(tmp_path.glob("oled_*.png"))) == len(frames) > 20
    assert (tmp_path / "demo.gif").stat().st_size > 0


def test_demo_command_exits_cleanly(capsys: object) -> None:
    assert main(["--lang", "vi"]) == 0

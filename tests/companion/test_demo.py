"""``oanquan demo`` (what ``make demo`` runs): the bundled game refereed to its final count."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from companion.commands.demo import FRAMES, WIDTH, fit, main, oled_text, run_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object, Path]:
    out = io.StringIO()
    folder = tmp_path_factory.mktemp("oled")
    result = run_demo(FRAMES, out, frames_out=folder, lang="en")
    return out.getvalue(), result, folder


def test_demo_referees_the_bundled_game_to_the_final_count(demo: tuple) -> None:
    text, result, _ = demo
    assert "final score: P0 52 - P1 18 (mandarins_taken, 9 moves)" in text  # the rules' V40
    assert "camera -> settled" in text  # moves recognised from the camera
    assert "camera -> dispute" in text or "camera -> ambiguous" in text  # and questions asked
    assert result.moves == 9 and 1 <= result.camera_moves <= 9
    by_hand = 9 - result.camera_moves - result.first_guess
    assert (
        f"the camera identified {result.camera_moves} of 9 moves by itself "
        f"and {result.first_guess} as its first guess; {by_hand} by hand"
    ) in text


def test_demo_tallies_the_heaps_of_its_game_through_the_camera(demo: tuple) -> None:
    """The bundled heaps are the game's (A 37 and a quan, B 13 and a quan), read from
    two stills through the app's tally path; B still owes the 5 it borrowed."""
    text, _, _ = demo
    lines = text.splitlines()
    a = next(line for line in lines if line.startswith("tally: spread_a.jpg: A has "))
    b = next(line for line in lines if line.startswith("tally: spread_b.jpg: B has "))
    assert a.startswith("tally: spread_a.jpg: A has 37") and ", 1 quan" in a
    assert b.startswith("tally: spread_b.jpg: B has 13") and ", 1 quan" in b
    assert "tally: A 37 pieces + 1 quan x 10 + 5 debt = 52 wins" in lines
    assert "tally: B 13 pieces + 1 quan x 10 - 5 debt = 18" in lines


def test_demo_output_is_one_line_per_event_in_80_columns(demo: tuple) -> None:
    text, _, _ = demo
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    assert len(lines) < 60  # no OLED frames unless asked for
    assert sum(line.lstrip().startswith("f") and "  " in line for line in lines) == 13
    assert "players press" in text


def test_frames_out_goes_through_the_emulators_capture_devices(demo: tuple) -> None:
    _, result, folder = demo
    pngs = sorted(folder.glob("oled_*.png"))
    assert len(pngs) >= len(result.frames) > 20
    with Image.open(pngs[0]) as first:
        assert first.size == (512, 256)  # 4x, with the panel's look
    with Image.open(folder / "oled.gif") as gif:
        assert gif.n_frames == len(pngs)


def test_oled_frames_fit_the_terminal() -> None:
    screen = Image.new("1", (128, 64), 0)
    screen.putpixel((0, 0), 1)
    screen.putpixel((127, 63), 1)
    text = oled_text(screen)
    rows = text.splitlines()
    assert len(rows) == 34 and {len(r) for r in rows} == {66}
    assert rows[1][1] == "▘" and rows[-2][-2] == "▗"
    assert fit("x" * 100) == "x" * 79 + "…" and fit("short") == "short"


def test_frames_flag_prints_each_new_oled_frame(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--versus", "easy", "--frames"]) == 0
    out = capsys.readouterr().out
    assert out.count("┌" + "─" * 64 + "┐") > 10
    assert max(len(line) for line in out.splitlines()) <= WIDTH
    assert "final score:" in out


def test_demo_command_exits_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "vi", "--versus", "easy"]) == 0
    assert "final score:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--versus", "easy", "--kiosk"], "--kiosk runs the exhibit after the camera game"),
        (["--make", "--kiosk"], "--make renders the bundled frames; --kiosk is for a game"),
        (["--make", "--frames-out", "x"], "--frames-out is for a game"),
        (["--make", "--versus", "hard"], "--versus is for a game"),
        (["--make", "--lang", "vi"], "--lang is for a game"),
    ],
)
def test_options_that_would_be_ignored_are_refused(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("oanquan demo: ") and says in err and "\n" not in err


def test_a_bad_frames_out_path_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["--versus", "easy", "--frames-out", str(blocker)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("oanquan demo: --frames-out: ") and str(blocker) in err
    assert "\n" not in err and captured.out == ""


def test_the_hand_frame_is_never_a_question_and_its_move_is_taken_once(demo: tuple) -> None:
    """A hand over the board means wait or, when the pebbles it covers are not the move's,
    accept: never a question or a dispute, and 9- is taken exactly once around it."""
    text, _, _ = demo
    lines = text.splitlines()
    hand = next(i for i, line in enumerate(lines) if "a hand is still over the board" in line)
    gone = next(i for i, line in enumerate(lines) if "the hand is gone" in line)
    verdicts = [lines[hand + 1], lines[gone + 1]]
    assert not any("ambiguous" in v or "dispute" in v for v in verdicts)
    assert sum("9- accepted" in v for v in verdicts) == 1

"""`oanquan track`: the interchange JSON Lines, for good frames and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.appliance.observe import VisionObserver
from companion.appliance.pipeline import FramePipeline
from companion.commands import track
from companion.referee import Referee
from companion.referee.reconcile import cleared_squares
from engine import Game, Move
from vision.synth import rearranged, render_scene, scene_depth


def frames_of_a_game(folder: Path, moves: list[str]) -> None:
    """Photos after each move; as on a real board, pieces no hand took stay where they lay."""
    game = Game()
    rng = np.random.default_rng(10)
    depth = scene_depth(5)
    placed = rearranged((), [False] * 12, list(game.position.board), rng, depth)
    for ply in range(len(moves) + 1):
        p = game.position
        image, _ = render_scene(
            list(p.board), p.big, 10, scene_seed=5, size=(640, 480), placed=placed
        )
        cv2.imwrite(str(folder / f"frame_{ply:02d}.jpg"), image)
        if ply < len(moves):
            t = game.play(moves[ply])
            gone = cleared_squares(t)
            after = t.position.board
            cleared = [sq in gone or after[sq] < p.board[sq] for sq in range(12)]
            added = [after[sq] if cleared[sq] else after[sq] - p.board[sq] for sq in range(12)]
            placed = rearranged(placed, cleared, added, rng, depth)


def run(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[dict[str, object]]]:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    status = track.main(argv)
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


def test_every_frame_gets_a_verdict_line_and_a_summary_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames_of_a_game(tmp_path, ["2+", "9-"])
    (tmp_path / "notes.txt").write_text("not a frame")
    status, lines = run([str(tmp_path)], monkeypatch)
    assert status == 0
    verdicts = [line for line in lines if "frame" in line and "state" in line]
    assert [v["frame"] for v in verdicts] == ["frame_00.jpg", "frame_01.jpg", "frame_02.jpg"]
    assert all(
        v["state"] in ("waiting", "moving", "settled", "ambiguous", "dispute") for v in verdicts
    )
    moves = [line for line in lines if "move" in line]
    assert all({"move", "ply", "frame", "confidence"} <= set(m) for m in moves)
    summary = lines[-1]["summary"]
    assert isinstance(summary, dict) and summary["moves"] == [m["move"] for m in moves]
    assert summary["position"]["ply"] == len(moves)  # type: ignore[index]


def test_an_unreadable_frame_is_reported_and_the_rest_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames_of_a_game(tmp_path, [])
    (tmp_path / "frame_01.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    status, lines = run([str(tmp_path)], monkeypatch)
    assert status == 1
    bad = [line for line in lines if line.get("frame") == "frame_01.jpg"]
    assert len(bad) == 1 and bad[0]["detail"] == "unreadable image"
    assert "summary" in lines[-1]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: None, "no images"),
        (lambda d: (d / "rules.json").write_text('{"quan_non": 1}'), "unknown switch"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: object,
    message: str,
) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    setup(tmp_path)  # type: ignore[operator]
    if message != "no images":
        frames_of_a_game(frames, [])
    assert (
        track.main(
            [str(frames), "--rules", str(tmp_path / "rules.json")]
            if message != "no images"
            else [str(frames)]
        )
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.startswith("oanquan track:") and message in err and "\n" not in err


def test_a_missing_folder_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert track.main(["/nonexistent/frames"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_answers_play_the_players_so_a_whole_game_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moves = ["2+", "9-", "4+"]
    frames_of_a_game(tmp_path, moves)
    # the camera never saw the board after 2+: the next photo shows two moves
    (tmp_path / "frame_01.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    answers = tmp_path / "moves.txt"
    answers.write_text("\n".join(moves) + "\n")
    status, lines = run([str(tmp_path), "--answers", str(answers)], monkeypatch)
    assert status == 1  # the unreadable frame is still reported
    move_lines = [line for line in lines if "move" in line]
    assert [m["move"] for m in move_lines] == moves
    for m in move_lines:
        # a move is either answered by the players or accepted with a confidence
        assert ("answered" in m) != ("confidence" in m)
        assert "expected" not in m
    # two moves behind, the referee asked about the first instead of guessing both
    assert move_lines[0].get("answered") is True
    assert lines[-1]["summary"]["moves"] == moves  # type: ignore[index]


def test_moves_made_while_the_board_went_unseen_are_asked_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moves = ["2+", "9-", "4+"]
    frames_of_a_game(tmp_path, moves)
    # photos in which no board can be found (the start's and the one after 2+): the
    # next one found shows two moves, and the referee must not fall behind for good
    blank = np.full((480, 640, 3), 128, np.uint8)
    for name in ("frame_00.jpg", "frame_01.jpg"):
        cv2.imwrite(str(tmp_path / name), blank)
    answers = tmp_path / "moves.txt"
    answers.write_text("\n".join(moves) + "\n")
    status, lines = run([str(tmp_path), "--answers", str(answers)], monkeypatch)
    assert status == 0
    move_lines = [line for line in lines if "move" in line]
    assert [m["move"] for m in move_lines] == moves
    assert all("expected" not in m for m in move_lines)
    assert move_lines[0].get("answered") is True and move_lines[1]["frame"] == "frame_02.jpg"
    assert lines[-1]["summary"]["position"]["ply"] == 3  # type: ignore[index]


def test_a_move_accepted_against_the_players_is_marked_and_theirs_is_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames_of_a_game(tmp_path, ["2+"])
    answers = tmp_path / "moves.txt"
    answers.write_text("4-\n")  # the players say another move was made
    status, lines = run([str(tmp_path), "--answers", str(answers)], monkeypatch)
    assert status == 0
    moves = [line for line in lines if "move" in line]
    assert moves == [
        {
            "move": "2+",
            "ply": 1,
            "frame": "frame_01.jpg",
            "confidence": moves[0]["confidence"],
            "expected": "4-",
        }
    ]
    assert lines[-1]["summary"]["moves"] == ["4-"]  # type: ignore[index]


@pytest.mark.parametrize(("text", "message"), [("2+\nnonsense\n", "line 2"), (None, "answers")])
def test_a_bad_answers_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, message: str
) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    frames_of_a_game(frames, [])
    answers = tmp_path / "moves.txt"
    if text is not None:
        answers.write_text(text)
    assert track.main([str(frames), "--answers", str(answers)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("oanquan track:") and message in err and "\n" not in err


def test_frames_are_taken_in_natural_order_and_webp_counts(tmp_path: Path) -> None:
    from companion.commands.track import frame_files

    for name in ("f10.jpg", "f2.png", "f1.webp", "notes.txt", "F3.JPG"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "f0.jpg").mkdir()  # a folder with an image's name is not a frame
    assert [p.name for p in frame_files(tmp_path)] == ["f1.webp", "f2.png", "F3.JPG", "f10.jpg"]


def test_track_referees_a_three_seat_ring_from_given_corners(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import cv2

    from engine import Game, Rules
    from vision.synth_ring import render_ring

    rules = Rules(players=3)
    game = Game(rules)
    frames = tmp_path / "frames"
    frames.mkdir()
    corners: list[list[float]] = []
    for i in range(3):
        pos = game.position
        image, truth = render_ring(list(pos.board), list(pos.big), 77, scene_seed=21)
        cv2.imwrite(str(frames / f"f{i}.png"), image)
        corners = truth["corners"]
        game.play(game.legal_moves()[i])
    rules_file = tmp_path / "rules.json"
    rules_file.write_text('{"players": 3}')
    spec = " ".join(f"{x},{y}" for x, y in corners)
    rc = track.main([str(frames), "--rules", str(rules_file), "--ring-corners", spec])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rc == 0
    summary = lines[-1]["summary"]
    assert summary["moves"] == [str(m) for m in game.moves[:2]]
    assert not any("answered" in line for line in lines)


def test_three_seats_without_corners_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "f0.png").write_bytes(b"x")
    rules_file = tmp_path / "rules.json"
    rules_file.write_text('{"players": 3}')
    assert track.main([str(tmp_path), "--rules", str(rules_file)]) == 2
    err = capsys.readouterr().err
    assert "corners" in err and err.count("\n") == 1


def test_vision_is_warmed_up_at_the_frames_size_before_the_first_frame(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames_of_a_game(tmp_path, [])
    events: list[object] = []
    monkeypatch.setattr(track, "warm_up", lambda config, size: events.append(("warm", size)))
    real = track.track
    monkeypatch.setattr(track, "track", lambda *a, **k: events.append("frames") or real(*a, **k))
    status, _ = run([str(tmp_path)], monkeypatch)
    assert status == 0 and events == [("warm", (640, 480)), "frames"]


def test_a_live_cameras_frames_of_a_game_are_followed_move_by_move(tmp_path: Path) -> None:
    """The same photos as a live camera's frames (``run``'s), each board in several
    frames: its first differs from the frame before (vision sees motion), the others
    show the board at rest. Each move is then taken by the camera, as from photos, the
    side found from the boards' frames (one witness a board)."""
    moves = ["2+", "9-", "4+", "8-"]
    frames_of_a_game(tmp_path, moves)
    photos = track.frame_files(tmp_path)
    frames = [p for p in photos for _ in range(5)]
    shows = [n for n in range(len(photos)) for _ in range(5)]
    referee = Referee()
    referee.setup_checked = True
    pipeline = FramePipeline(VisionObserver(stills=False), referee, start_shown=True)
    out = io.StringIO()
    answers = [Move.parse(m) for m in moves]
    assert track.track(frames, pipeline, out, answers=answers, shows=shows) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    move_lines = [line for line in lines if "move" in line]
    assert [m["move"] for m in move_lines] == moves
    assert all("confidence" in m and "answered" not in m for m in move_lines), move_lines
    assert pipeline.turned is False

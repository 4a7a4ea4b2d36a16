"""Commands at their edges: bad output paths, Ctrl-C, a closed pipe, a batch with a bad image."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.commands import ai_serve, play, screens
from companion.commands.analyze import analyze_main
from companion.commands.calibrate import calibrate_main

REPO = Path(__file__).resolve().parents[2]
CORNERS = "20,100,140,100,140,40,20,40"


@pytest.fixture
def image(tmp_path: Path) -> Path:
    path = tmp_path / "shot.png"
    cv2.imwrite(str(path), np.full((120, 160, 3), 90, np.uint8))
    return path


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("kind", ["existing file", "unwritable place"])
def test_screens_out_that_cannot_be_a_folder(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file.png"
    target.write_bytes(b"x")
    out = str(target) if kind == "existing file" else str(target / "below")
    assert screens.main(["--out", out]) == 2
    assert one_line(capsys.readouterr().err).startswith("oanquan screens: --out ")


@pytest.mark.parametrize("flag", ["--json-out", "--annotate"])
def test_analyze_output_folder_that_cannot_be_made(
    flag: str, image: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    assert analyze_main([str(image), flag, str(blocker / "out")]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"oanquan analyze: {flag} ")


def test_analyze_never_overwrites_one_result_with_another(
    image: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "shot.png").write_bytes(image.read_bytes())
    out = tmp_path / "D"
    status = analyze_main(
        [str(tmp_path / "a" / "shot.png"), str(tmp_path / "b" / "shot.png"), "--json-out", str(out)]
    )
    assert status == 2
    assert "shot.json" in one_line(capsys.readouterr().err)
    assert not out.exists() or not any(out.iterdir())


def test_one_image_vision_fails_on_does_not_stop_the_batch(
    image: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An 800x1800 frame made vision raise cv2.error (remap) and ended the whole batch."""
    import vision.api

    real = vision.api.read_board

    def read_board(img: np.ndarray, *args: object, **kwargs: object) -> object:
        if img.shape[0] == 1800:
            raise cv2.error("OpenCV: dst.cols < SHRT_MAX in function 'remap'")
        return real(img, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(vision.api, "read_board", read_board)
    tall = tmp_path / "tall.png"
    cv2.imwrite(str(tall), np.full((1800, 800, 3), 90, np.uint8))
    status = analyze_main([str(tall), str(image)])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1
    assert [o["image"] for o in out] == ["tall.png", "shot.png"]
    assert "remap" in out[0]["error"] and "\n" not in out[0]["error"]
    assert out[1]["board_found"] is False and "error" not in out[1]


def test_an_image_too_large_to_decode_is_refused_from_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from PIL import Image

    bomb = tmp_path / "bomb.png"
    Image.new("1", (20000, 20000)).save(bomb)  # a few kB on disk, 1.2 GB as BGR
    assert bomb.stat().st_size < 200_000
    assert analyze_main([str(bomb)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert "too large" in out["error"]


def test_manual_corners_are_used_even_when_the_board_is_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/vision_failures.md's cure for a wrong board did nothing when the fit found one."""
    from tests.vision.conftest import scene

    img, _ = scene(11, ground="concrete", chalk="white", tilt_deg=20.0, yaw_deg=8.0, shadow=False)
    path = tmp_path / "board.png"
    cv2.imwrite(str(path), img)
    h, w = img.shape[:2]
    corners = [[0.2 * w, 0.8 * h], [0.8 * w, 0.8 * h], [0.8 * w, 0.4 * h], [0.2 * w, 0.4 * h]]
    config = tmp_path / "corners.toml"
    config.write_text(f"[vision.locate]\nmanual_corners = {corners}\n", "utf-8")
    assert analyze_main(["--config", str(config), str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["corners_source"] == "manual"
    assert out["corners"] == [[round(x, 1), round(y, 1)] for x, y in corners]


@pytest.mark.parametrize(
    "corners", ["0,0,0,0,0,0,0,0", "nan,1,9,1,9,9,1,9", "inf,1,9,1,9,9,1,9", "1,2,3"]
)
def test_calibrate_rejects_zero_and_nan_corners(
    corners: str, image: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "corners.toml"
    assert calibrate_main([str(image), "--corners", corners, "--out", str(out)]) == 2
    one_line(capsys.readouterr().err)
    assert not out.exists()


@pytest.mark.parametrize(
    ("flag", "name"),
    [
        ("--out", "missing/x.toml"),
        ("--annotate", "x.noext"),
        ("--annotate", "missing/x.png"),
    ],
)
def test_calibrate_output_paths_are_checked_first(
    flag: str, name: str, image: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--annotate /nonexistent/x.png` once exited 0 having written nothing."""
    target = tmp_path / name
    assert calibrate_main([str(image), "--corners", CORNERS, flag, str(target)]) == 2
    assert one_line(capsys.readouterr().err).startswith(f"oanquan calibrate: {flag} ")
    assert not target.exists()


def test_calibrate_writes_what_it_says(
    image: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, drawing = tmp_path / "c.toml", tmp_path / "c.png"
    args = [str(image), "--corners", CORNERS, "--out", str(out), "--annotate", str(drawing)]
    assert calibrate_main(args) == 0
    assert out.read_text("utf-8") == capsys.readouterr().out
    assert cv2.imread(str(drawing)) is not None


class ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_play_into_a_closed_pipe_ends_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`oanquan play | head` printed a BrokenPipeError traceback."""
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert play.main(["--moves", "2+ 9-"]) == 1
    assert capsys.readouterr().err == ""


def test_ai_serve_into_a_closed_pipe_ends_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"position": {}}\n'))
    assert ai_serve.main([]) == 1
    assert capsys.readouterr().err == ""


def spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "companion", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
        # Ctrl-C as at a terminal: a test run started in the background (`make test &`)
        # hands its children SIGINT ignored, and Python then never raises KeyboardInterrupt
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(stream: object, text: str) -> None:
    seen = ""
    while text not in seen:
        char = stream.read(1)  # type: ignore[attr-defined]
        assert char, f"ended before {text!r}: {seen[-200:]!r}"
        seen += char


@pytest.mark.parametrize("extra", [[], ["--ai", "hard", "--ai-side", "0"]])
def test_ctrl_c_in_play_ends_without_a_traceback(extra: list[str]) -> None:
    proc = spawn("play", *extra)
    assert proc.stdout is not None
    wait_for(proc.stdout, "computer plays" if extra else "> ")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


def test_ctrl_c_in_ai_serve_ends_without_a_traceback() -> None:
    proc = spawn("ai", "serve")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("not json\n")
    proc.stdin.flush()
    assert "error" in json.loads(proc.stdout.readline())
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


# -- what bench/fuzz.py found ---------------------------------------------------------


def test_ai_serve_answers_json_nested_too_deeply() -> None:
    """Was {"error": "internal error: RecursionError ..."}."""
    line = "[" * 100_000 + "]" * 100_000
    answer = ai_serve.answer(line, 0.0, __import__("random").Random(0))
    assert answer == {"error": "bad JSON: nested too deeply"}


@pytest.mark.parametrize("flag", [None, "--json-out", "--annotate"])
def test_a_name_too_long_for_the_file_system_is_one_line(
    flag: str | None, image: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Path.is_file() raised OSError(ENAMETOOLONG) out of analyze."""
    long = str(tmp_path / ("n" * 300))
    argv = [long] if flag is None else [str(image), flag, long]
    status = analyze_main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    if flag is None:
        assert status == 1 and "File name too long" in json.loads(captured.out)["error"]
    else:
        assert status == 2 and "File name too long" in one_line(captured.err)


def test_an_image_much_taller_than_wide_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 100x10000 strip held vision for 45 s and then crashed in remap."""
    tall = tmp_path / "strip.png"
    cv2.imwrite(str(tall), np.full((10000, 100, 3), 90, np.uint8))
    assert analyze_main([str(tall)]) == 1
    assert "too tall" in json.loads(capsys.readouterr().out)["error"]


def test_rules_replay_into_a_closed_pipe_ends_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from companion.commands import replay

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"moves": ["2+"]}\n' * 3))
    assert replay.main([]) == 1
    assert capsys.readouterr().err == ""


def test_ctrl_c_while_selftest_waits_for_presses_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from companion.commands import selftest

    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(selftest, "run_checks", interrupted)
    assert selftest.main(["--backend", "fake", "--skip", "board"]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err

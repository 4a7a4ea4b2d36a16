"""``oanquan selftest``: the runner on injected checks, the real checks on fake hardware.

What matters to a person at the Pi is that every problem comes with a fix and
that one broken part does not hide the state of the others; these tests pin
that down. The real checks run on the ``fake`` backend (mock pins, luma dummy
display, generated frames), i.e. the same code path as on the Pi minus I/O.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from companion.commands import selftest
from companion.commands.selftest import (
    CheckFailed,
    CheckResult,
    Checks,
    CheckWarning,
    Shot,
    Status,
    advise,
    hardware_checks,
    run_checks,
)
from device.errors import (
    BackendUnavailableError,
    DeviceBusyError,
    DeviceNotFoundError,
    DevicePermissionError,
)
from device.settings import HardwareSettings
from vision.errors import BoardNotFoundError

REPO = Path(__file__).resolve().parents[2]
Image = npt.NDArray[np.uint8]


def grey(level: int = 128) -> Image:
    return np.full((48, 64, 3), level, np.uint8)


def run_main(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = selftest.main(list(argv), out=out)
    return status, out.getvalue()


# --------------------------------------------------------------------------- runner


def test_all_checks_pass() -> None:
    seen: list[Image] = []

    def board(image: Image) -> str:
        seen.append(image)
        return "board found"

    frame = grey()
    checks = Checks(
        display=lambda: "panel ok",
        buttons=lambda: "4 buttons",
        camera=lambda: Shot(frame, "640x480"),
        board=board,
    )
    results = run_checks(checks)
    assert [(r.name, r.status, r.detail) for r in results] == [
        ("display", Status.OK, "panel ok"),
        ("buttons", Status.OK, "4 buttons"),
        ("camera", Status.OK, "640x480"),
        ("board", Status.OK, "board found"),
    ]
    assert seen == [frame]
    out = io.StringIO()
    assert selftest.report(results, out) == 0
    assert out.getvalue().splitlines()[-1] == "4 ok, 0 warnings, 0 failed, 0 skipped"


def test_one_failure_does_not_hide_the_others() -> None:
    def display() -> str:
        raise CheckFailed("no OLED", "wire it")

    def camera() -> Shot:
        raise DeviceNotFoundError("no camera", "/dev/video0")

    checks = Checks(display=display, buttons=lambda: "fine", camera=camera, board=lambda i: "x")
    results = run_checks(checks)
    assert [(r.name, r.status) for r in results] == [
        ("display", Status.FAIL),
        ("buttons", Status.OK),
        ("camera", Status.FAIL),
        ("board", Status.SKIP),
    ]
    assert results[0].fix == "wire it"
    assert "rpicam-hello --list-cameras" in results[2].fix
    out = io.StringIO()
    assert selftest.report(results, out) == 1
    text = out.getvalue()
    assert "[FAIL] display  no OLED" in text
    assert "fix: wire it" in text
    assert text.splitlines()[-1] == "1 ok, 0 warnings, 2 failed, 1 skipped"


def test_a_camera_warning_still_hands_its_frame_to_the_board_check() -> None:
    dark = grey(5)
    checks = Checks(camera=lambda: Shot(dark, "too dark", "more light"), board=lambda i: "found")
    results = run_checks(checks)
    assert [(r.name, r.status, r.fix) for r in results] == [
        ("camera", Status.WARN, "more light"),
        ("board", Status.OK, ""),
    ]
    assert selftest.report(results, io.StringIO()) == 0


def test_warnings_do_not_fail_the_selftest() -> None:
    def board(image: Image) -> str:
        raise CheckWarning("pebbles small", "lower the camera")

    results = run_checks(Checks(camera=lambda: Shot(grey(), "ok"), board=board))
    assert results[1].status is Status.WARN
    assert results[1].fix == "lower the camera"
    assert selftest.report(results, io.StringIO()) == 0


def test_unexpected_errors_are_reported_or_raised_with_debug() -> None:
    def display() -> str:
        raise ZeroDivisionError("oops")

    (result,) = run_checks(Checks(display=display))
    assert result.status is Status.FAIL
    assert result.detail == "ZeroDivisionError: oops"
    assert "--debug" in result.fix
    with pytest.raises(ZeroDivisionError):
        run_checks(Checks(display=display), debug=True)


@pytest.mark.parametrize(
    ("part", "exc", "needle"),
    [
        ("display", DevicePermissionError("denied", "/dev/i2c-1"), "'i2c' group"),
        ("buttons", DevicePermissionError("denied", "/dev/gpiochip0"), "'gpio' group"),
        ("camera", DevicePermissionError("denied", "/dev/video0"), "'video' group"),
        ("buttons", DeviceBusyError("GPIO5 in use"), "systemctl stop oanquan"),
        ("camera", BackendUnavailableError("no picamera2"), "--system-site-packages"),
        ("buttons", BackendUnavailableError("no lgpio"), "python3-lgpio"),
        ("display", DeviceNotFoundError("no 0x3c", "/dev/i2c-1"), "i2cdetect -y 1"),
        ("display", DeviceNotFoundError("no 0x3c", "/dev/i2c-1"), "SDA to pin 3"),
        ("board", BoardNotFoundError("no chalk lines"), "oanquan calibrate"),
        ("board", BoardNotFoundError("no chalk lines"), "▶ on 'Board not found'"),
    ],
)
def test_advice_names_the_fix(part: str, exc: Exception, needle: str) -> None:
    status, problem, fix = advise(part, exc)
    assert status is Status.FAIL
    assert problem == str(exc)
    assert needle in fix


# --------------------------------------------------------------------------- real checks


@pytest.fixture
def closers() -> Iterator[list[Callable[[], None]]]:
    pending: list[Callable[[], None]] = []
    yield pending
    for close in pending:
        close()


def test_fake_hardware_display_and_buttons_pass(closers: list[Callable[[], None]]) -> None:
    checks, close = hardware_checks(HardwareSettings(), backend="fake")
    closers.append(close)
    results = run_checks(Checks(display=checks.display, buttons=checks.buttons))
    assert [r.status for r in results] == [Status.OK, Status.OK]
    assert "ssd1306 at 0x3C" in results[0].detail
    assert "left GPIO5 (pin 29)" in results[1].detail
    assert "back GPIO19 (pin 35)" in results[1].detail


def test_pressing_every_button_passes(closers: list[Callable[[], None]]) -> None:
    def press_all(buttons: object) -> None:
        for name in ("left", "right", "ok", "back"):
            buttons.press(name)  # type: ignore[attr-defined]
            buttons.release(name)  # type: ignore[attr-defined]

    prompts: list[str] = []
    checks, close = hardware_checks(
        HardwareSettings(), backend="fake", press_s=20, on_buttons=press_all,
        on_prompt=prompts.append,
    )  # fmt: skip
    closers.append(close)
    assert checks.buttons is not None
    assert checks.buttons().startswith("all 4 buttons pressed")
    assert prompts[0].startswith("press each button once within 20 s")


def test_a_button_never_pressed_is_named(closers: list[Callable[[], None]]) -> None:
    ticks = iter([0.0, 0.0, 30.0])  # start, first wait, then the window has passed

    def press_some(buttons: object) -> None:
        for name in ("left", "ok"):
            buttons.press(name)  # type: ignore[attr-defined]
            buttons.release(name)  # type: ignore[attr-defined]

    checks, close = hardware_checks(
        HardwareSettings(), backend="fake", press_s=20, on_buttons=press_some,
        on_prompt=lambda s: None, clock=lambda: next(ticks),
    )  # fmt: skip
    closers.append(close)
    (result,) = run_checks(Checks(buttons=checks.buttons))
    assert result.status is Status.FAIL
    assert result.detail == "no press seen from: right, back"
    assert "GPIO6 (pin 31)" in result.fix


def test_flat_grey_frame_warns_and_is_saved(
    tmp_path: Path, closers: list[Callable[[], None]]
) -> None:
    saved = tmp_path / "frame.png"
    checks, close = hardware_checks(HardwareSettings(), backend="fake", save_frame=saved)
    closers.append(close)
    (result,) = run_checks(Checks(camera=checks.camera))
    assert result.status is Status.WARN
    assert "featureless" in result.detail
    assert saved.stat().st_size > 0


def test_dark_frame_warns(closers: list[Callable[[], None]]) -> None:
    checks, close = hardware_checks(HardwareSettings(), backend="fake", frames=lambda i: grey(3))
    closers.append(close)
    (result,) = run_checks(Checks(camera=checks.camera))
    assert result.status is Status.WARN
    assert "too dark" in result.detail


def synthetic_board(width: int = 640, height: int = 360, unit: int = 75) -> Image:
    """Chalk-white lines of a 2x5 board with semicircular ends on a dark floor."""
    import cv2

    rng = np.random.default_rng(1)
    img = np.clip(60 + rng.normal(0, 4, (height, width, 3)), 0, 255).astype(np.uint8)
    x0, y0 = (width - 5 * unit) // 2, (height - 2 * unit) // 2
    white = (235, 235, 235)
    for row in range(3):
        cv2.line(img, (x0, y0 + row * unit), (x0 + 5 * unit, y0 + row * unit), white, 5)
    for col in range(6):
        cv2.line(img, (x0 + col * unit, y0), (x0 + col * unit, y0 + 2 * unit), white, 5)
    depth = round(0.95 * unit)
    cv2.ellipse(img, (x0, y0 + unit), (depth, unit), 0, 90, 270, white, 5)
    cv2.ellipse(img, (x0 + 5 * unit, y0 + unit), (depth, unit), 0, -90, 90, white, 5)
    return img


def test_board_in_view_is_found_and_pebble_size_judged(
    closers: list[Callable[[], None]],
) -> None:
    board = synthetic_board()
    checks, close = hardware_checks(HardwareSettings(), backend="fake", frames=lambda i: board)
    closers.append(close)
    camera, found = run_checks(Checks(camera=checks.camera, board=checks.board))
    assert camera.status is Status.OK, camera
    # 75 px per square, below the 80 the counter reads: found, but too coarse to count.
    assert found.status is Status.WARN, found
    assert "board found" in found.detail
    assert "lower the camera" in found.fix


def test_board_with_enough_pixels_per_square_passes(
    closers: list[Callable[[], None]],
) -> None:
    board = synthetic_board(width=1000, height=500, unit=120)
    checks, close = hardware_checks(HardwareSettings(), backend="fake", frames=lambda i: board)
    closers.append(close)
    _, found = run_checks(Checks(camera=checks.camera, board=checks.board))
    assert found.status is Status.OK, found
    assert "a square is 1" in found.detail  # 115-125 px, whatever the fit's rounding


def test_a_grainy_camera_is_told_to_light_the_board(closers: list[Callable[[], None]]) -> None:
    board = synthetic_board()

    def grainy(i: int) -> Image:  # dim light: a fresh draw of strong noise every frame
        noise = np.random.default_rng(i).normal(0, 6, board.shape[:2])[..., None]
        return np.clip(board + noise, 0, 255).astype(np.uint8)

    checks, close = hardware_checks(HardwareSettings(), backend="fake", frames=grainy)
    closers.append(close)
    (camera,) = run_checks(Checks(camera=checks.camera))
    assert camera.status is Status.WARN, camera
    assert "grainy" in camera.detail and "more light" in camera.fix
    checks, close = hardware_checks(HardwareSettings(), backend="fake", frames=lambda i: board)
    closers.append(close)
    (camera,) = run_checks(Checks(camera=checks.camera))
    assert camera.status is Status.OK and "grain 0.0 grey levels" in camera.detail


def board_corners(width: int, height: int, unit: int) -> list[list[float]]:
    """``synthetic_board``'s outer corners: SW, SE, NE, NW in pixels."""
    x0, y0 = (width - 5 * unit) // 2, (height - 2 * unit) // 2
    x1, y1 = x0 + 5 * unit, y0 + 2 * unit
    return [[x0, y1], [x1, y1], [x1, y0], [x0, y0]]


def write_corners(
    path: Path, corners: list[list[float]], size: tuple[int, int], view: Image | None = None
) -> Path:
    from companion.appliance.corners import MarkedCorners, save_corners

    points = tuple((float(x), float(y)) for x, y in corners)
    save_corners(path, MarkedCorners(points, size, view))
    return path


def board_check(
    closers: list[Callable[[], None]], frame: Image, corners: Path | None, vision: object = None
) -> CheckResult:
    checks, close = hardware_checks(
        HardwareSettings(),
        backend="fake",
        frames=lambda i: frame,
        corners=corners,
        vision=vision,  # type: ignore[arg-type]
    )
    closers.append(close)
    _, found = run_checks(Checks(camera=checks.camera, board=checks.board))
    return found


def test_the_board_is_checked_at_the_corners_marked_on_the_device(
    closers: list[Callable[[], None]], tmp_path: Path
) -> None:
    """Where the players marked the corners, ``run`` reads the board there, searched
    for or not, so that is what the selftest checks; a board the search finds well away
    from them, with clearly more chalk, says the camera or the board moved since."""
    board = synthetic_board(width=1000, height=500, unit=120)
    at = write_corners(tmp_path / "corners.json", board_corners(1000, 500, 120), (1000, 500))
    found = board_check(closers, board, at)
    assert found.status is Status.OK, found
    assert f"marked on the device ({at})" in found.detail
    assert "a square is 120 px" in found.detail
    # the camera knocked half a square since
    moved = np.asarray(np.roll(board, 60, axis=1), np.uint8)
    found = board_check(closers, moved, at)
    assert found.status is Status.WARN, found
    assert "the search finds the board 60 px away" in found.detail
    assert "Mark board corners" in found.fix


def test_the_view_kept_with_marked_corners_tells_a_moved_camera(
    closers: list[Callable[[], None]], tmp_path: Path
) -> None:
    from vision.locate.follow import camera_view

    board = synthetic_board(width=1000, height=500, unit=120)
    corners = board_corners(1000, 500, 120)
    at = write_corners(tmp_path / "corners.json", corners, (1000, 500), camera_view(board))
    assert board_check(closers, board, at).status is Status.OK
    moved = np.asarray(np.roll(board, 60, axis=1), np.uint8)
    found = board_check(closers, moved, at)
    assert found.status is Status.WARN, found
    said = re.search(r"the camera moved ([\d.]+)% of the frame's width since", found.detail)
    assert said is not None and abs(float(said[1]) - 6.0) < 0.5, found  # (60 of 1,000 px)
    assert "follows a knock" in found.fix


def test_right_corners_over_faint_chalk_pass(
    closers: list[Callable[[], None]], tmp_path: Path
) -> None:
    """Corners are given where the chalk is too faint or too broken for the search, so
    however little chalk lies along them is no fault: a generated asphalt board whose
    true outline holds under the search's least fit (0.22), a fit 17 px off holding more."""
    from vision.synth import render_scene

    image, truth = render_scene([0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5], (1, 1), 2, ground="asphalt")
    at = write_corners(tmp_path / "corners.json", truth["corners"], (1280, 960))
    found = board_check(closers, image, at)
    assert found.status is Status.OK, found
    held = float(found.detail.split("chalk along them ")[1].split(")")[0])
    assert held < 0.22


def test_corners_run_would_pass_over_are_named_and_the_board_searched_for(
    closers: list[Callable[[], None]], tmp_path: Path
) -> None:
    board = synthetic_board(width=1000, height=500, unit=120)
    other = write_corners(tmp_path / "other.json", board_corners(1000, 500, 120), (640, 480))
    found = board_check(closers, board, other)
    assert found.status is Status.OK, found
    assert "board found" in found.detail
    assert "corners marked on 640x480 frames, the camera gives 1000x500" in found.detail
    torn = tmp_path / "torn.json"
    torn.write_text('{"corners": [[1, 2]')
    found = board_check(closers, grey(), torn)
    assert found.status is Status.FAIL, found
    assert f"marked corners not used: {torn}" in found.detail
    assert "mark its corners" in found.fix
    found = board_check(closers, board, tmp_path / "none.json")  # none marked: the search
    assert found.status is Status.OK and "board found (fit" in found.detail, found


def test_the_configs_corners_stand_where_none_are_marked(
    closers: list[Callable[[], None]], tmp_path: Path
) -> None:
    import dataclasses

    from vision.config import VisionConfig

    cfg = VisionConfig()
    given = tuple((float(x) + 60, float(y)) for x, y in board_corners(1000, 500, 120))
    cfg = dataclasses.replace(cfg, locate=dataclasses.replace(cfg.locate, manual_corners=given))
    board = synthetic_board(width=1000, height=500, unit=120)
    found = board_check(closers, board, tmp_path / "none.json", cfg)
    assert found.status is Status.WARN, found  # half a square off the chalk
    assert "at the corners in the config" in found.detail
    assert "manual_corners" in found.fix
    at = write_corners(tmp_path / "corners.json", board_corners(1000, 500, 120), (1000, 500))
    found = board_check(closers, board, at, cfg)  # the marked ones are the newer word
    assert found.status is Status.OK and "marked on the device" in found.detail, found


def test_bundled_demo_frames_are_fine_for_counting(closers: list[Callable[[], None]]) -> None:
    """The demo's camera game must not be one the selftest calls too coarse (issue 19)."""
    import cv2

    frame = Path(selftest.__file__).parent / "demo_frames" / "frame_00.jpg"
    image = cv2.imread(str(frame))
    assert image is not None
    checks, close = hardware_checks(HardwareSettings(), backend="fake", frames=lambda i: image)
    closers.append(close)
    _, found = run_checks(Checks(camera=checks.camera, board=checks.board))
    assert found.status is Status.OK, found


def test_test_pattern_marks_every_edge() -> None:
    img = selftest.test_pattern()
    assert img.mode == "1" and img.size == (128, 64)
    px = np.array(img, dtype=bool)
    assert px[0, :].all() and px[-1, :].all() and px[:, 0].all() and px[:, -1].all()


# --------------------------------------------------------------------------- CLI


def test_cli_on_fake_hardware() -> None:
    status, out = run_main("--backend", "fake", "--skip", "board")
    assert status == 0, out
    assert out.splitlines()[0] == "oanquan selftest (fake hardware, config: defaults)"
    assert "[ ok ] display" in out
    assert "[ ok ] buttons" in out
    assert "[warn] camera" in out
    assert "board" not in out.split("\n", 1)[1]


def test_cli_reads_the_shipped_config() -> None:
    status, out = run_main(
        "--backend", "fake", "--config", str(REPO / "systemd" / "config.toml"),
        "--skip", "camera", "--skip", "board",
    )  # fmt: skip
    assert status == 0, out
    assert "config.toml" in out.splitlines()[0]


def test_cli_rejects_a_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "config.toml"
    bad.write_text("[display]\ni2c_address = 0x99\n")
    status, _ = run_main("--backend", "fake", "--config", str(bad))
    assert status == 2
    assert "i2c_address" in capsys.readouterr().err


def test_cli_checks_the_board_at_the_corners_file_it_is_given(tmp_path: Path) -> None:
    # the fake camera's plain grey frame, where no search finds a board: read at them
    at = write_corners(tmp_path / "c.json", board_corners(640, 480, 100), (640, 480))
    status, out = run_main("--backend", "fake", "--skip", "display", "--corners", str(at))
    assert status == 0, out
    line = next(x for x in out.splitlines() if x.startswith("[ ok ] board"))
    assert f"board at the corners marked on the device ({at})" in line


def test_reachable_as_oanquan_selftest() -> None:
    from companion.__main__ import main as oanquan

    assert oanquan(["selftest", "--backend", "fake", "--skip", "camera", "--skip", "board"]) == 0

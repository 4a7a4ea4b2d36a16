"""The appliance loop never lets one frame, button or screen failure out of a turn."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from companion.appliance.app import FRAME_FAILURES_SHOWN, App
from companion.appliance.config import parse_config
from companion.appliance.journal import Journal
from companion.referee import Observation
from companion.ui.controller import View
from companion.ui.screens import ErrorKind, ErrorScreen
from device.errors import UnreadableImageError
from device.factory import Hardware, make_hardware
from device.ports import Frame


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FlakyObserver:
    """Raises on the frames it is told to (as vision did on an 800x1800 frame)."""

    calibrated = True

    def __init__(self) -> None:
        self.fail = False
        self.calls = 0

    def __call__(self, frame: Frame) -> Observation:
        self.calls += 1
        if self.fail:
            raise RuntimeError("remap: dst.cols < SHRT_MAX")
        return Observation(None, fit=False, reason="board not found", board_found=False)

    def confirmed(self) -> None:
        pass

    def hold_earlier(self) -> bool:
        return False

    def confirmed_earlier(self) -> Observation | None:
        return None

    def looks_like_opening(self, observation: Observation) -> bool:
        return False

    def learn_opening(self, frame: Frame) -> None:
        pass


def build(tmp_path: Path, clock: Clock) -> tuple[App, Hardware, FlakyObserver]:
    config = parse_config('[camera]\nkind = "generated"\n')
    frames = [np.full((48, 64, 3), 128, np.uint8)]
    hardware = make_hardware(config.hardware, "fake", clock=clock, frames=lambda seq: frames[0])
    hardware.camera.start()
    journal = Journal.open(tmp_path / "journal.jsonl", clock=clock)
    observer = FlakyObserver()
    app = App(config, hardware, journal, clock=clock, observer=observer)
    return app, hardware, observer


def test_a_frame_vision_cannot_read_is_skipped_and_counted(tmp_path: Path) -> None:
    clock = Clock()
    app, hardware, observer = build(tmp_path, clock)
    observer.fail = True
    for _ in range(FRAME_FAILURES_SHOWN - 1):
        clock.t += 0.1
        assert app.step() is True
    assert app.faults.counts["frame"] == FRAME_FAILURES_SHOWN - 1
    assert app.controller.view != View.ERROR  # a few bad frames are not worth a screen
    clock.t += 0.1
    assert app.step() is True
    assert app.controller.screen() == ErrorScreen(ErrorKind.CAMERA_LOST)
    observer.fail = False
    clock.t += 0.1
    app.step()
    assert app.failed_in_row == 0
    assert app.controller.screen() == ErrorScreen(ErrorKind.BOARD_NOT_FOUND)
    hardware.close()


def test_an_unreadable_camera_frame_is_skipped(tmp_path: Path) -> None:
    clock = Clock()
    app, hardware, observer = build(tmp_path, clock)

    def broken() -> Frame:
        raise UnreadableImageError("camera replay: cannot decode image x.jpg", "x.jpg")

    hardware.camera.grab = broken  # type: ignore[method-assign]
    for _ in range(3):
        assert app.step() is True
    assert app.faults.counts["grab"] == 3 and observer.calls == 0
    hardware.close()


def test_a_failing_screen_or_button_action_does_not_end_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    app, hardware, _ = build(tmp_path, clock)

    def boom(*args: object) -> None:
        raise OSError(121, "Remote I/O error")

    monkeypatch.setattr(app.controller, "on_input", boom)
    monkeypatch.setattr(hardware.display, "show", boom)
    hardware.buttons.press("ok")  # type: ignore[attr-defined]
    clock.t += 0.1
    app.step()
    hardware.buttons.release("ok")  # type: ignore[attr-defined]
    clock.t += 0.1
    assert app.step() is True
    assert app.faults.counts["button action"] == 1
    assert app.faults.counts["display"] >= 1
    hardware.close()


def test_the_same_failure_is_logged_once_a_minute(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    app, hardware, observer = build(tmp_path, clock)
    observer.fail = True
    for _ in range(50):
        clock.t += 0.1
        app.step()
    logged = [r for r in caplog.records if "remap" in r.getMessage()]
    assert len(logged) == 1
    clock.t += 61.0
    app.step()
    logged = [r for r in caplog.records if "remap" in r.getMessage()]
    assert len(logged) == 2 and "49 more" in logged[1].getMessage()
    hardware.close()


@pytest.mark.parametrize(
    "image",
    [
        np.zeros((1, 1, 3), np.uint8),
        np.zeros((8, 640, 3), np.uint8),
        np.zeros((3000, 40, 3), np.uint8),
    ],
    ids=["1x1", "a line", "thin and tall"],
)
def test_an_odd_frame_never_reaches_vision(tmp_path: Path, image: np.ndarray) -> None:
    """A 40x3000 frame would have held vision for minutes, past the watchdog."""
    clock = Clock()
    app, hardware, observer = build(tmp_path, clock)
    frame = Frame(image, clock(), 0, "odd", {})
    hardware.camera.grab = lambda: frame  # type: ignore[method-assign]
    assert app.step() is True
    assert observer.calls == 0 and app.faults.counts["frame"] == 1
    hardware.close()

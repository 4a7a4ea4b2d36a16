"""The board's corners marked on the device (menu "Mark board corners"): the kept
file, the controller's steps, and the whole loop as ``oanquan run`` wires it, from
the photos to the corners the next start reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from companion.appliance.app import App
from companion.appliance.corners import (
    CornersFileError,
    MarkedCorners,
    forget_corners,
    load_corners,
    marked_corners,
    save_corners,
)
from companion.appliance.observe import VisionObserver
from companion.referee import Referee
from companion.ui.controller import CALIBRATE_IDLE_S, PHOTO_DELAY_S, Controller, View
from companion.ui.input import LongPress
from companion.ui.screens import (
    CalibrateScreen,
    CalibrateStep,
    ErrorKind,
    ErrorScreen,
    MarksProblem,
    MenuScreen,
    OperatorScreen,
)
from device.ports import Frame
from engine import Move, Rules
from tests.companion.test_tally_app import Clock, _tally_app, tap
from tests.vision.conftest import scene
from vision.config import LocateConfig, VisionConfig
from vision.errors import MarksNotFoundError
from vision.locate.follow import camera_view
from vision.synth import with_marks

SQUARE = ((100.0, 400.0), (500.0, 400.0), (500.0, 200.0), (100.0, 200.0))


def _board() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A board's photo, the same with a pebble on each outer corner, and its corners."""
    image, truth = scene(5)
    corners = np.array(truth["corners"], np.float64)
    side = float(np.linalg.norm(corners[1] - corners[0])) / 5.0
    return np.array(image), with_marks(image, corners, 0.15 * side, 5), corners


# -- the kept file --------------------------------------------------------------------


def test_kept_corners_round_trip_and_forget(tmp_path: Path) -> None:
    path = tmp_path / "corners.json"
    assert load_corners(path) is None  # none marked yet
    kept = MarkedCorners(SQUARE, (640, 480))
    save_corners(path, kept)
    assert load_corners(path) == kept
    assert [p.name for p in tmp_path.iterdir()] == ["corners.json"]  # no temporary left
    save_corners(path, MarkedCorners(SQUARE[::-1], (640, 480)))  # replaced whole
    assert load_corners(path) == MarkedCorners(SQUARE[::-1], (640, 480))
    assert forget_corners(path) and not path.exists()
    assert not forget_corners(path)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{", "not valid JSON|Expecting"),
        ('{"corners": [[1, 2]], "size": [640, 480]}', "expected four"),
        ('{"corners": [[0, 0], [1, 0], [2, 0], [3, 0]], "size": [640, 480]}', "not a board"),
        ('{"corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "size": [640]}', "size"),
        ('{"corners": [[0, "a"], [1, 0], [1, 1], [0, 1]], "size": [640, 480]}', "numbers"),
        ("[]", "keys corners and size"),
        ('{"corners": [[0, 0], [9, 0], [9, 9], [0, 9]], "size": [640, 480], "x": 1}', "keys"),
        ('{"corners": [[0, 0], [90, 0], [90, 90], [0, 90]], "size": [0, 48]}', "not a size"),
        ('{"corners": [[0, 0], [90, 0], [90, 90], [0, 90]], "size": [64, 48], "from": 1}', "from"),
    ],
)
def test_a_bad_corners_file_is_named_with_what_is_wrong(
    tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "corners.json"
    path.write_text(text)
    with pytest.raises(CornersFileError, match=why) as caught:
        load_corners(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("view", ["5", '"!"', '"aGk="', "VIEW"])
def test_a_bad_kept_view_drops_only_the_view(
    tmp_path: Path, view: str, caplog: pytest.LogCaptureFixture
) -> None:
    if view == "VIEW":  # a readable view of another size's frame
        other = MarkedCorners(SQUARE, (640, 480), np.zeros((100, 320), np.uint8))
        view = json.dumps(other.to_json()["view"])
    path = tmp_path / "corners.json"
    path.write_text(f'{{"corners": {json.dumps(SQUARE)}, "size": [640, 480], "view": {view}}}')
    kept = load_corners(path)
    assert kept == MarkedCorners(SQUARE, (640, 480)) and kept.view is None
    assert "view" in caplog.text and "dropped" in caplog.text


def test_corners_fit_frames_of_their_size_only() -> None:
    kept = MarkedCorners(SQUARE, (640, 480))
    assert kept.fits((480, 640, 3)) and not kept.fits((960, 1280, 3))


def test_marked_corners_are_the_board_s_in_the_config_s_order() -> None:
    image, marked, corners = _board()
    found = marked_corners(image, marked)
    assert found.size == (image.shape[1], image.shape[0])
    # SW, SE, NE, NW as the true corners are listed, each within a few pixels
    assert np.max(np.linalg.norm(np.array(found.corners) - corners, axis=1)) < 6.0


def test_marks_not_found_say_how_many_were_seen() -> None:
    image, _, corners = _board()
    three = with_marks(image, corners[:3], 20.0, 5)
    with pytest.raises(MarksNotFoundError) as caught:
        marked_corners(image, three)
    assert caught.value.seen == 3


# -- the controller's steps ---------------------------------------------------------------


def _controller(**kw: Any) -> Controller:
    return Controller(Referee(Rules()), lang="en", **kw)


def test_marking_is_offered_only_where_the_camera_can_take_corners() -> None:
    for can in (False, True):
        c = _controller(can_calibrate=can)
        c.view = View.MENU
        menu = c.screen()
        assert isinstance(menu, MenuScreen)
        assert ("menu.calibrate" in [i.key for i in menu.items]) is can
        c.view = View.OPERATOR
        operator = c.screen()
        assert isinstance(operator, OperatorScreen)
        keys = [i.key for i in operator.items]
        assert ("operator.calibrate" in keys) is can and ("operator.forget_corners" in keys) is can
        c.on_error(ErrorKind.BOARD_NOT_FOUND)
        assert c.screen() == ErrorScreen(ErrorKind.BOARD_NOT_FOUND, mark=can)
        c._press("right")
        assert (c.view == View.CALIBRATE) is can


def test_the_steps_wait_for_the_player_to_step_back_and_retry_on_failure() -> None:
    c = _controller(can_calibrate=True)
    c.on_error(ErrorKind.BOARD_NOT_FOUND)
    c._press("right")  # ▶ on "Board not found"
    assert c.screen() == CalibrateScreen(CalibrateStep.BARE)
    c.now = 10.0
    c._press("ok")
    assert c.screen() == CalibrateScreen(CalibrateStep.BARE, waiting=True)
    assert not c.calibration_wants_photo
    c.now = 10.0 + PHOTO_DELAY_S
    assert c.calibration_wants_photo
    c.on_board_photo()
    assert c.screen() == CalibrateScreen(CalibrateStep.PLACE) and not c.calibration_wants_photo
    c._press("ok")
    c.on_marks_read(3)
    assert c.screen() == CalibrateScreen(CalibrateStep.FAILED, problem=MarksProblem.FEWER, seen=3)
    c._press("ok")  # the pebbles put right: the board's photo stands, the marks again
    assert c.screen() == CalibrateScreen(CalibrateStep.PLACE, waiting=True)
    c.on_marks_read(9)
    assert c.screen() == CalibrateScreen(CalibrateStep.FAILED, problem=MarksProblem.MORE, seen=9)
    c._press("ok")  # more moved than the marks: the board's photo again, pebbles off
    assert c.screen() == CalibrateScreen(CalibrateStep.BARE)
    c._press("ok")
    c.on_board_photo()
    c._press("ok")
    c.on_marks_read(4)
    assert c.screen() == CalibrateScreen(
        CalibrateStep.FAILED, problem=MarksProblem.NO_BOARD, seen=4
    )
    c._press("ok")
    c.on_marks_read(None, saved=False)
    assert c.screen() == CalibrateScreen(CalibrateStep.DONE, saved=False)
    c.on_marks_read(3)  # (a reading no step asked for changes nothing)
    assert c.screen() == CalibrateScreen(CalibrateStep.DONE, saved=False)
    c._press("ok")
    assert c.view == View.BOARD and not c.calibrating


@pytest.mark.parametrize(
    ("outcome", "shown"),
    [
        ((True, True), CalibrateScreen(CalibrateStep.FORGOTTEN)),
        ((True, False), CalibrateScreen(CalibrateStep.FORGOTTEN, saved=False)),
        ((False, True), CalibrateScreen(CalibrateStep.NOTHING)),
    ],
)
def test_forgetting_says_what_it_did(outcome: tuple[bool, bool], shown: CalibrateScreen) -> None:
    asked: list[bool] = []

    def forget() -> tuple[bool, bool]:
        asked.append(True)
        return outcome

    c = _controller(can_calibrate=True, on_forget_corners=forget)
    c.view = View.OPERATOR
    operator = c.screen()
    assert isinstance(operator, OperatorScreen)
    c.operator_index = [i.key for i in operator.items].index("operator.forget_corners")
    c._press("ok")
    assert asked == [True] and c.screen() == shown
    c._press("ok")
    assert c.view == View.BOARD


def test_back_long_or_short_leaves_marking_and_undoes_no_move() -> None:
    c = _controller(can_calibrate=True)
    c.referee.play_manual(Move.parse("2+"))
    c.start_calibration()
    c._press("back")
    assert c.view == View.BOARD and not c.calibrating
    c.start_calibration()
    c.on_input(LongPress(t=1.0, button="back"))  # the screen says BACK stops
    assert c.view == View.BOARD and c.referee.position.ply == 1


def test_marking_left_idle_gives_the_board_back_to_the_referee() -> None:
    c = _controller(can_calibrate=True)
    c.last_activity = 100.0
    c.start_calibration()
    c.tick(100.0 + CALIBRATE_IDLE_S - 1)
    assert c.calibrating
    c.tick(100.0 + CALIBRATE_IDLE_S)
    assert c.view == View.BOARD and not c.calibrating


# -- the whole loop -----------------------------------------------------------------------


class Scene:
    """What the generated camera shows: the board, then the board with the marks."""

    def __init__(self, image: np.ndarray) -> None:
        self.image = image

    def __call__(self, index: int) -> np.ndarray:
        return self.image


def _app(
    tmp_path: Path,
    camera: Scene,
    corners_path: Path | None,
    observer: VisionObserver | None = None,
) -> tuple[App, Any, Clock]:
    config = f"[camera]\nwidth = {camera.image.shape[1]}\n"
    return _tally_app(tmp_path, config, "fake", None, camera, observer, corners_path=corners_path)


def _photo(app: App, clock: Clock) -> None:
    """The player steps back; the loop takes frames till the scene held still."""
    clock.t += PHOTO_DELAY_S
    for _ in range(2):  # (the generated camera's frames never move: two tell it)
        app.step()


def test_corners_marked_from_the_menu_are_used_and_kept_for_the_next_start(
    tmp_path: Path,
) -> None:
    image, marked, corners = _board()
    camera = Scene(image)
    path = tmp_path / "corners.json"
    app, hardware, clock = _app(tmp_path, camera, path)
    tap(app, hardware, clock, "ok", hold=2.0)  # the menu
    menu = app.controller.screen()
    assert isinstance(menu, MenuScreen)
    for _ in range([i.key for i in menu.items].index("menu.calibrate")):
        tap(app, hardware, clock, "right")
    tap(app, hardware, clock, "ok")
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.BARE)
    tap(app, hardware, clock, "ok")
    app.step()  # a frame too soon: the player is still at the buttons
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.BARE, waiting=True)
    _photo(app, clock)
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.PLACE)
    camera.image = with_marks(image, corners[:3], 20.0, 5)  # one corner forgotten
    tap(app, hardware, clock, "ok")
    _photo(app, clock)
    shown = app.controller.screen()
    assert isinstance(shown, CalibrateScreen) and shown.problem == MarksProblem.FEWER
    assert not path.exists() and app.referee.position.ply == 0
    camera.image = marked
    tap(app, hardware, clock, "ok")
    _photo(app, clock)
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.DONE)
    observer = app.observer
    assert isinstance(observer, VisionObserver)
    used = np.array(observer.config.locate.manual_corners)
    assert np.max(np.linalg.norm(used - corners, axis=1)) < 6.0
    assert json.loads(path.read_text())["size"] == [image.shape[1], image.shape[0]]
    tap(app, hardware, clock, "ok")
    assert app.controller.view == View.BOARD
    hardware.close()
    app.journal.close()

    # the next start reads them, and its first frame (of their size) takes them
    camera.image = image
    app, hardware, clock = _app(tmp_path, camera, path)
    observer = app.observer
    assert isinstance(observer, VisionObserver)
    assert observer.config.locate.manual_corners is None
    app.step()
    assert observer.config.locate.manual_corners == tuple(
        tuple(p) for p in json.loads(path.read_text())["corners"]
    )
    # forgotten from the operator menu: the file goes, the search stands again
    app.controller.view = View.OPERATOR
    operator = app.controller.screen()
    assert isinstance(operator, OperatorScreen)
    app.controller.operator_index = [i.key for i in operator.items].index("operator.forget_corners")
    tap(app, hardware, clock, "ok")
    assert not path.exists() and observer.config.locate.manual_corners is None
    hardware.close()
    app.journal.close()


def test_each_photo_waits_for_the_scene_to_hold_still(tmp_path: Path) -> None:
    image, marked, _ = _board()
    arm = image.copy()
    arm[: image.shape[0] // 3, : image.shape[1] // 8] = (60, 90, 150)  # still walking away
    camera = Scene(arm)
    app, hardware, clock = _app(tmp_path, camera, None)
    app.controller.start_calibration()
    tap(app, hardware, clock, "ok")
    clock.t += PHOTO_DELAY_S
    app.step()
    camera.image = image  # the arm gone: the scene moved, so no photo yet
    app.step()
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.BARE, waiting=True)
    app.step()  # held still: the board's photo, without the arm
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.PLACE)
    camera.image = marked
    tap(app, hardware, clock, "ok")
    _photo(app, clock)
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.DONE, saved=False)
    hardware.close()
    app.journal.close()


def test_while_marking_no_frame_reaches_the_referee_and_a_dropped_one_ends_nothing(
    tmp_path: Path,
) -> None:
    image, marked, _ = _board()
    dropped = {3, 6, 9, 12, 15}  # five grabs fail, spread over the marking

    class Flaky(Scene):
        calls = 0

        def __call__(self, index: int) -> np.ndarray:
            self.calls += 1
            if self.calls in dropped:
                raise OSError("frame lost")
            return self.image

    camera = Flaky(image)
    app, hardware, clock = _app(tmp_path, camera, None)
    assert app.pipeline is not None
    read: list[object] = []
    pipeline = app.pipeline

    def counting(frame: Any) -> Any:
        read.append(frame)
        return pipeline(frame)

    app.pipeline = counting  # type: ignore[assignment]
    app.controller.start_calibration()
    tap(app, hardware, clock, "ok")
    for _ in range(8):
        clock.t += PHOTO_DELAY_S
        app.step()
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.PLACE)
    camera.image = marked
    tap(app, hardware, clock, "ok")
    for _ in range(10):
        clock.t += PHOTO_DELAY_S
        app.step()
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.DONE, saved=False)
    assert read == [] and app.faults.counts["grab"] == 5
    tap(app, hardware, clock, "ok")
    app.step()
    assert len(read) == 1  # the board again: frames go to the referee
    hardware.close()
    app.journal.close()


def test_forgetting_returns_to_the_config_s_corners_and_leaves_unmarked_boards_be(
    tmp_path: Path,
) -> None:
    configured = ((10.0, 400.0), (600.0, 400.0), (600.0, 100.0), (10.0, 100.0))
    observer = VisionObserver(VisionConfig(locate=LocateConfig(manual_corners=configured)))
    observer.use_corners(SQUARE)
    assert observer.config.locate.manual_corners == SQUARE
    observer.use_corners(None)
    assert observer.config.locate.manual_corners == configured
    # nothing marked: forgetting changes nothing the observer learnt of the board
    image, _, _ = _board()
    app, hardware, _ = _app(tmp_path, Scene(image), tmp_path / "corners.json")
    app.step()
    taker = app.observer
    assert isinstance(taker, VisionObserver)
    locator = taker.locator
    assert app._forget_corners() == (False, True)
    assert taker.locator is locator
    hardware.close()
    app.journal.close()


def test_kept_corners_for_another_frame_size_or_unreadable_are_not_used(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    image, _, _ = _board()
    path = tmp_path / "corners.json"
    save_corners(path, MarkedCorners(SQUARE, (image.shape[1] * 2, image.shape[0] * 2)))
    app, hardware, _ = _app(tmp_path, Scene(image), path)
    app.step()
    observer = app.observer
    assert isinstance(observer, VisionObserver)
    assert observer.config.locate.manual_corners is None
    h, w = image.shape[:2]
    assert f"are for {2 * w}x{2 * h} frames, the camera gives {w}x{h}" in caplog.text
    hardware.close()
    app.journal.close()
    path.write_text("{")
    app, hardware, _ = _app(tmp_path, Scene(image), path)
    app.step()
    assert "marked corners not used" in caplog.text and path.read_text() == "{"
    hardware.close()
    app.journal.close()


def test_corners_not_kept_where_the_folder_cannot_be_written(tmp_path: Path) -> None:
    image, marked, _ = _board()
    camera = Scene(image)
    app, hardware, clock = _app(tmp_path, camera, tmp_path / "no" / "such" / "corners.json")
    app.controller.start_calibration()
    tap(app, hardware, clock, "ok")
    _photo(app, clock)
    camera.image = marked
    tap(app, hardware, clock, "ok")
    _photo(app, clock)
    # used for this run all the same, and the screen says they will not outlast it
    assert app.controller.screen() == CalibrateScreen(CalibrateStep.DONE, saved=False)
    observer = app.observer
    assert isinstance(observer, VisionObserver)
    assert observer.config.locate.manual_corners is not None
    hardware.close()
    app.journal.close()


# -- a knocked camera ---------------------------------------------------------------------


def _knock(image: np.ndarray, dx: float, dy: float) -> np.ndarray:
    m = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]])
    h, w = image.shape[:2]
    return np.asarray(cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REPLICATE), np.uint8)


def test_the_observer_carries_given_corners_after_a_knock_and_the_chalk_can_veto_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    image, _, corners = _board()
    given = tuple((float(x), float(y)) for x, y in corners)
    observer = VisionObserver(VisionConfig(locate=LocateConfig(manual_corners=given)), stills=True)
    observer(Frame(image, 0.0, 0, "test"))  # the view the corners were given on
    knocked = _knock(image, 30.0, -12.0)
    for i in range(1, 4):
        observer(Frame(knocked, float(i), i, "test"))
    moved = np.array(observer.config.locate.manual_corners)
    assert np.max(np.linalg.norm(moved - (corners + np.array([30.0, -12.0])), axis=1)) < 2.0
    followed = observer.take_followed()
    assert followed is not None and followed[0] == observer.config.locate.manual_corners
    assert observer.take_followed() is None  # once
    assert observer.moves_noticed == 1

    # where the chalk stays at the old corners (the view moved for another reason), they stay
    import companion.appliance.observe as observe

    config = VisionConfig(locate=LocateConfig(manual_corners=given))
    old = observe.manual_outline(config, image.shape)
    assert old is not None

    def chalk(image: np.ndarray, outline: Any, cfg: object = None) -> float:
        return 1.0 if np.allclose(outline.corners, old.corners) else 0.5

    monkeypatch.setattr(observe, "support", chalk)
    vetoed = VisionObserver(config, stills=True)
    vetoed(Frame(image, 0.0, 0, "test"))
    for i in range(1, 4):
        vetoed(Frame(knocked, float(i), i, "test"))
    assert vetoed.config.locate.manual_corners == given
    assert vetoed.take_followed() is None and vetoed.moves_noticed == 0


def test_marked_corners_follow_a_camera_knocked_while_the_power_was_off(tmp_path: Path) -> None:
    image, marked, corners = _board()
    path = tmp_path / "corners.json"
    save_corners(path, marked_corners(image, marked))  # as the menu keeps them, view included
    assert load_corners(path).view is not None  # type: ignore[union-attr]
    knocked = _knock(image, -25.0, 10.0)
    app, hardware, _ = _app(tmp_path, Scene(knocked), path)
    for _ in range(4):
        app.step()
    kept = load_corners(path)
    assert kept is not None
    truth = corners + np.array([-25.0, 10.0])
    assert np.max(np.linalg.norm(np.array(kept.corners) - truth, axis=1)) < 6.0
    # the view they now hold for is the knocked camera's
    assert kept.view is not None and np.array_equal(kept.view, camera_view(knocked))
    hardware.close()
    app.journal.close()


def test_config_corners_followed_are_kept_till_the_config_gives_others(tmp_path: Path) -> None:
    image, _, corners = _board()
    given = tuple((float(x), float(y)) for x, y in corners)
    path = tmp_path / "corners.json"

    def observer(corners: tuple[tuple[float, float], ...]) -> VisionObserver:
        return VisionObserver(VisionConfig(locate=LocateConfig(manual_corners=corners)))

    knocked = _knock(image, -25.0, 10.0)
    camera = Scene(image)
    app, hardware, _ = _app(tmp_path, camera, path, observer(given))
    app.step()  # the view the config's corners hold for
    camera.image = knocked
    for _ in range(3):
        app.step()
    kept = load_corners(path)
    assert kept is not None and kept.origin == given
    assert (
        np.max(np.linalg.norm(np.array(kept.corners) - (corners + np.array([-25.0, 10.0])), axis=1))
        < 6
    )
    hardware.close()
    app.journal.close()
    # the same config: the followed corners stand
    app, hardware, _ = _app(tmp_path, Scene(knocked), path, observer(given))
    app.step()
    seen = app.observer
    assert isinstance(seen, VisionObserver)
    assert seen.config.locate.manual_corners == kept.corners
    hardware.close()
    app.journal.close()
    # the config edited since (calibrated again): its corners are the newer word
    fresh = tuple((x + 1.0, y) for x, y in given)
    app, hardware, _ = _app(tmp_path, Scene(knocked), path, observer(fresh))
    app.step()
    seen = app.observer
    assert isinstance(seen, VisionObserver)
    assert seen.config.locate.manual_corners == fresh
    hardware.close()
    app.journal.close()


def test_corners_given_anew_drop_a_follow_not_yet_taken() -> None:
    image, _, corners = _board()
    given = tuple((float(x), float(y)) for x, y in corners)
    observer = VisionObserver(VisionConfig(locate=LocateConfig(manual_corners=given)), stills=True)
    observer(Frame(image, 0.0, 0, "test"))
    knocked = _knock(image, 30.0, -12.0)
    for i in range(1, 4):
        observer(Frame(knocked, float(i), i, "test"))
    observer.use_corners(SQUARE)
    assert observer.take_followed() is None


def test_a_knock_measured_into_no_board_is_not_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    import companion.appliance.observe as observe

    image, _, corners = _board()
    given = tuple((float(x), float(y)) for x, y in corners)
    crossed = np.array([corners[0], corners[2], corners[1], corners[3]])  # a bow tie
    monkeypatch.setattr(observe, "carried", lambda pts, warp: crossed)
    monkeypatch.setattr(observe, "support", lambda image, outline, cfg=None: 1.0)  # chalk: no veto
    observer = VisionObserver(VisionConfig(locate=LocateConfig(manual_corners=given)), stills=True)
    observer(Frame(image, 0.0, 0, "test"))
    knocked = _knock(image, 30.0, -12.0)
    for i in range(1, 4):
        observer(Frame(knocked, float(i), i, "test"))
    assert observer.config.locate.manual_corners == given
    assert observer.take_followed() is None and observer.moves_noticed == 0

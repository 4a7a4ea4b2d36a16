"""A wide lens undone: the model, the frames, the hand-given corners, the measure."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np
import pytest

from companion.commands.calibrate import calibrate_main
from tests.vision.conftest import as_taken
from vision.config import LocateConfig, VisionConfig, config_from_dict
from vision.errors import ConfigError
from vision.geometry import homography_from_corners, project
from vision.lens import (
    Lens,
    distort_points,
    fit_lens,
    frame_zoom,
    undistort,
    undistort_points,
)
from vision.locate import manual_outline

SHAPE = (960, 1280, 3)
BARREL = Lens(-0.15)


def _pinhole_to_seen(points: np.ndarray, lens: Lens) -> np.ndarray:
    """Points of a pinhole image where the frame with ``lens`` undone has them."""
    centre = np.array([SHAPE[1] / 2.0, SHAPE[0] / 2.0])
    return np.asarray(centre + frame_zoom(SHAPE, lens) * (points - centre))


@pytest.mark.parametrize("lens", [Lens(-0.25), BARREL, Lens(0.1), Lens(0.25)])
def test_points_go_to_the_raw_frame_and_back(lens: Lens) -> None:
    rng = np.random.default_rng(1)
    raw = rng.uniform((-100, -100), (1380, 1060), (400, 2))  # the frame and a little more
    seen = undistort_points(raw, SHAPE, lens)
    assert np.isfinite(seen).all()
    assert np.abs(distort_points(seen, SHAPE, lens) - raw).max() < 1e-6
    assert np.array_equal(distort_points(np.array([[640.0, 480.0]]), SHAPE, lens), [[640, 480]])
    # a barrel's frame is shrunk so that the raw frame's sides stay in view, to the pixel
    edges = undistort_points(np.array([[0.0, 480.0], [1280.0, 480.0]]), SHAPE, lens)
    if lens.k1 < 0:
        assert np.allclose(edges, [[0.0, 480.0], [1280.0, 480.0]])
    else:  # a pincushion's are drawn in, and nothing is lost
        assert 0.0 < edges[0, 0] < 100.0 and frame_zoom(SHAPE, lens) == 1.0


def test_a_pinhole_is_left_alone_exactly() -> None:
    frame = np.zeros(SHAPE, np.uint8)
    assert undistort(frame, Lens()) is frame
    pts = np.random.default_rng(2).uniform(0, 1280, (50, 2))
    assert np.array_equal(undistort_points(pts, SHAPE, Lens()), pts)
    assert np.array_equal(distort_points(pts, SHAPE, Lens()), pts)


def test_a_lens_straightens_a_bent_line() -> None:
    frame = np.zeros(SHAPE, np.uint8)
    # a straight line near the top edge, as a barrel lens shows it: bowed
    cv2.line(frame, (100, 120), (1180, 120), (255, 255, 255), 5)
    taken = as_taken(frame, BARREL)
    ys = [int(np.argmax(taken[:, x, 0])) for x in (200, 640, 1080)]
    assert min(ys[0], ys[2]) - ys[1] > 10  # the ends bend towards the centre
    back = undistort(taken, BARREL)
    ys = [int(np.argmax(back[:, x, 0])) for x in (200, 640, 1080)]
    assert max(ys) - min(ys) <= 1


def test_a_lens_too_strong_is_refused() -> None:
    assert Lens(-0.25).problem() is None
    assert "between" in (Lens(0.3).problem() or "")
    assert "between" in (Lens(float("nan")).problem() or "")
    with pytest.raises(ConfigError, match=r"\[lens\] k1 must be between"):
        config_from_dict({"lens": {"k1": -0.4}})
    with pytest.raises(ConfigError, match="k1 must be a number"):
        config_from_dict({"lens": {"k1": "wide"}})
    with pytest.raises(ConfigError, match="unknown key"):
        config_from_dict({"lens": {"k2": 0.1}})
    assert config_from_dict({"vision": {"lens": {"k1": -0.12}}}).lens == Lens(-0.12)


def test_hand_given_corners_are_read_in_the_photoas_taken() -> None:
    corners = ((200.0, 700.0), (1100.0, 720.0), (1080.0, 300.0), (220.0, 280.0))
    plain = VisionConfig(locate=LocateConfig(manual_corners=corners))
    outline = manual_outline(plain, SHAPE)
    assert outline is not None and np.array_equal(outline.corners, corners)
    # a strong barrel, corners at the frame's corners: each has a place in the frame as read
    near = ((5.0, 955.0), (1275.0, 955.0), (1275.0, 5.0), (5.0, 5.0))
    for given in (corners, near):
        wide = VisionConfig(locate=LocateConfig(manual_corners=given), lens=Lens(-0.25))
        outline = manual_outline(wide, SHAPE)
        assert outline is not None and outline.manual
        assert np.abs(outline.corners - np.array(given)).max() > 5.0
        assert np.allclose(distort_points(outline.corners, SHAPE, Lens(-0.25)), given)
    assert manual_outline(VisionConfig(), SHAPE) is None


def _board_lines(lens: Lens, noise: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Chalk points along a board's nine straight lines filling most of the frame, as a
    camera with ``lens`` sees them, each off by ``noise`` px."""
    h = homography_from_corners(np.array([[150.0, 820], [1130, 800], [1100, 180], [180, 160]]))
    lines = []
    for y in (0.0, 1.0, 2.0):
        lines.append(np.stack([np.linspace(0.15, 4.85, 28), np.full(28, y)], axis=1))
    for x in range(6):
        lines.append(np.stack([np.full(10, float(x)), np.linspace(0.15, 1.85, 10)], axis=1))
    out = []
    for board in lines:
        pts = distort_points(project(h, board), SHAPE, lens)
        out.append(pts + rng.normal(0.0, noise, pts.shape))
    return out


@pytest.mark.parametrize("true", [-0.2, -0.1, 0.0, 0.08])
def test_the_lens_that_straightens_the_chalk_lines_is_found(true: float) -> None:
    rng = np.random.default_rng(3)
    fit = fit_lens(_board_lines(Lens(true), 0.7, rng), SHAPE)
    assert fit is not None and fit.lines == 9
    assert abs(fit.lens.k1 - true) <= 0.02
    if true:
        assert fit.rms < 0.7 * fit.rms_pinhole  # bent lines, straightened
    # too little chalk to tell: no answer rather than a guess
    assert fit_lens(_board_lines(Lens(true), 0.7, rng)[3:5], SHAPE) is None


class WidePhotos(NamedTuple):
    """One board filling the frame, photographed by a pinhole and through a barrel lens."""

    pinhole: Path
    barrel: Path
    shown: np.ndarray  # its corners where the barrel photo shows them
    true: np.ndarray  # ... and where the frame with the lens undone has them


@pytest.fixture(scope="module")
def wide_photos(tmp_path_factory: pytest.TempPathFactory) -> WidePhotos:
    """The board of scene 12 filling the frame, as a pinhole and a barrel lens show it."""
    from tests.vision.conftest import scene

    image, truth = scene(
        12, ground="concrete", chalk="white", tilt_deg=10.0, yaw_deg=3.0, fill=0.95, wobble=0.004
    )
    folder = tmp_path_factory.mktemp("lens")
    cv2.imwrite(str(folder / "pinhole.png"), image)
    cv2.imwrite(str(folder / "barrel.png"), as_taken(image, BARREL))
    true = _pinhole_to_seen(np.array(truth["corners"], np.float64), BARREL)
    corners = distort_points(true, image.shape, BARREL)
    return WidePhotos(folder / "pinhole.png", folder / "barrel.png", corners, true)


def test_calibrate_measures_a_wide_lens_and_leaves_a_pinhole_alone(
    wide_photos: WidePhotos,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pinhole, barrel, shown = wide_photos.pinhole, wide_photos.barrel, wide_photos.shown
    out = tmp_path / "lens.toml"
    assert calibrate_main([str(barrel), "--lens", "--out", str(out)]) == 0
    lens = config_from_dict(tomllib.loads(out.read_text())).lens
    assert -0.2 <= lens.k1 <= -0.1
    assert calibrate_main([str(pinhole), "--lens"]) == 0
    assert "k1 = 0.000" in capsys.readouterr().out
    # then the corners, found on the frame with the lens undone, written as the photo shows
    config = tmp_path / "app.toml"
    config.write_text(f"[vision.lens]\nk1 = {lens.k1}\n")
    corners = tmp_path / "corners.toml"
    assert calibrate_main([str(barrel), "--config", str(config), "--out", str(corners)]) == 0
    given = config_from_dict(tomllib.loads(corners.read_text())).locate.manual_corners
    assert given is not None and np.abs(np.array(given) - shown).max() < 3.0


def test_calibrate_lens_refuses_what_it_cannot_measure(
    wide_photos: WidePhotos,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pinhole = wide_photos.pinhole
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(cv2.imread(str(pinhole)), (640, 480)))
    assert calibrate_main([str(pinhole), str(small), "--lens"]) == 2
    assert "not the size" in capsys.readouterr().err
    assert calibrate_main([str(pinhole), str(small)]) == 2
    assert "only read with --lens" in capsys.readouterr().err
    assert calibrate_main([str(pinhole), "--lens", "--corners", "1,2,3,4,5,6,7,8"]) == 2
    assert "give --corners in a run of its own" in capsys.readouterr().err
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 128, np.uint8))
    assert calibrate_main([str(blank), "--lens"]) == 1
    assert capsys.readouterr().err.startswith("oanquan calibrate: blank.png: no board found")


def test_the_live_camera_sees_the_board_with_the_lens_undone(
    wide_photos: WidePhotos,
) -> None:
    from companion.appliance.observe import VisionObserver
    from device.ports import Frame

    barrel, true = wide_photos.barrel, wide_photos.true
    image = np.asarray(cv2.imread(str(barrel)), np.uint8)
    errors = []
    for lens in (Lens(), BARREL):
        observer = VisionObserver(VisionConfig(lens=lens))
        observation = observer(Frame(image, 0.0, 0, "barrel.png"))
        assert observation.reading is not None
        assert observer.locator.outline is not None
        errors.append(np.abs(observer.locator.outline.corners - true).max())
    # as taken, the corners lie where the lens put them; undone, where the board is
    assert errors[1] < 4.0 < errors[0]


def test_analyze_names_the_corners_where_the_photo_shows_them(
    wide_photos: WidePhotos,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from companion.commands.analyze import analyze_main

    barrel, shown = wide_photos.barrel, wide_photos.shown
    config = tmp_path / "app.toml"
    config.write_text(f"[vision.lens]\nk1 = {BARREL.k1}\n")
    assert analyze_main([str(barrel), "--config", str(config)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert np.abs(np.array(out["corners"]) - shown).max() < 3.0


def _chessboard(squares: tuple[int, int] = (10, 7), px: int = 110) -> np.ndarray:
    """A printed chessboard filling most of a 1280 x 960 frame, straight on."""
    image = np.full((960, 1280, 3), 235, np.uint8)
    x0, y0 = (1280 - squares[0] * px) // 2, (960 - squares[1] * px) // 2
    for r in range(squares[1]):
        for c in range(squares[0]):
            if (r + c) % 2 == 0:
                top_left = (x0 + c * px, y0 + r * px)
                bottom_right = (x0 + (c + 1) * px - 1, y0 + (r + 1) * px - 1)
                cv2.rectangle(image, top_left, bottom_right, (20, 20, 20), -1)
    return image


def test_a_printed_chessboard_measures_the_lens_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    straight = tmp_path / "straight.png"
    bent = tmp_path / "bent.png"
    cv2.imwrite(str(straight), _chessboard())
    cv2.imwrite(str(bent), as_taken(_chessboard(), BARREL))
    drawn = tmp_path / "check.png"
    args = ["--lens", "--chessboard", "9x6", "--annotate", str(drawn)]
    assert calibrate_main([str(bent), *args]) == 0
    assert f"k1 = {BARREL.k1:.3f}" in capsys.readouterr().out
    # the check picture is the photo straightened: its top row of squares runs level
    check = cv2.imread(str(drawn))
    top = [int(np.argmax(check[:, x, 0] < 128)) for x in (145, 585, 1025)]  # dark squares
    assert max(top) - min(top) <= 2
    assert calibrate_main([str(straight), "--lens", "--chessboard", "9x6"]) == 0
    assert "k1 = 0.000" in capsys.readouterr().out
    assert calibrate_main([str(straight), "--lens", "--chessboard", "12x6"]) == 1
    assert "no 12x6 chessboard found whole" in capsys.readouterr().err
    # an ordinary 8 x 8 board (7 x 7 inner corners) measures as well
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), as_taken(_chessboard((8, 8), 110), BARREL))
    assert calibrate_main([str(small), "--lens", "--chessboard", "7x7"]) == 0
    assert f"k1 = {BARREL.k1:.3f}" in capsys.readouterr().out
    for bad in ("9by6", "2x6", "3x99999999999999999999"):
        assert calibrate_main([str(straight), "--lens", "--chessboard", bad]) == 2
        assert "--chessboard" in capsys.readouterr().err
    assert calibrate_main([str(straight), "--chessboard", "9x6"]) == 2

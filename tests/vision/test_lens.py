"""A wide lens undone: the model, the frames, the hand-given corners, the measure."""

from __future__ import annotations

import tomllib
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.commands.calibrate import calibrate_main
from vision.config import LocateConfig, VisionConfig, config_from_dict
from vision.errors import ConfigError
from vision.geometry import homography_from_corners, project
from vision.lens import (
    Lens,
    distort_points,
    fit_lens,
    undistort,
    undistort_points,
)
from vision.locate import manual_outline

SHAPE = (960, 1280, 3)
BARREL = Lens(-0.15)


def _as_taken(image: np.ndarray, lens: Lens) -> np.ndarray:
    """What a camera with ``lens`` shows of a pinhole ``image``: each raw pixel reads the
    pinhole image where the lens bent it from."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    src = undistort_points(np.stack([xs, ys], axis=-1), image.shape, lens).astype(np.float32)
    out = cv2.remap(
        image, src[..., 0], src[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(out, np.uint8)


@pytest.mark.parametrize("lens", [Lens(-0.25), BARREL, Lens(0.1), Lens(-0.1, 0.05)])
def test_points_go_to_the_raw_frame_and_back(lens: Lens) -> None:
    rng = np.random.default_rng(1)
    pts = rng.uniform((0, 0), (1280, 960), (200, 2))
    raw = distort_points(pts, SHAPE, lens)
    assert np.abs(undistort_points(raw, SHAPE, lens) - pts).max() < 1e-6
    # the centre stays; barrel pulls the corners in, pincushion pushes them out
    assert np.allclose(distort_points(np.array([[640.0, 480.0]]), SHAPE, lens), [[640, 480]])
    corner = distort_points(np.array([[0.0, 0.0]]), SHAPE, lens)[0]
    assert (corner[0] > 0) == (lens.k1 + lens.k2 < 0)


def test_a_pinhole_is_left_alone_and_a_lens_straightens_a_bent_line() -> None:
    pinhole = Lens()
    frame = np.zeros(SHAPE, np.uint8)
    assert undistort(frame, pinhole) is frame
    # a straight line near the top edge, as a barrel lens shows it: bowed
    cv2.line(frame, (100, 120), (1180, 120), (255, 255, 255), 5)
    taken = _as_taken(frame, BARREL)
    ys = [int(np.argmax(taken[:, x, 0])) for x in (140, 640, 1140)]
    assert ys[1] - max(ys[0], ys[2]) > 10  # the middle sags towards the centre
    back = undistort(taken, BARREL)
    ys = [int(np.argmax(back[:, x, 0])) for x in (140, 640, 1140)]
    assert max(ys) - min(ys) <= 1


def test_a_lens_that_folds_the_image_or_is_too_strong_is_refused() -> None:
    assert Lens(-0.2).problem() is None
    assert "between" in (Lens(0.5).problem() or "")
    assert "fold" in (Lens(-0.3, -0.3).problem() or "")
    with pytest.raises(ConfigError, match=r"\[lens\]"):
        config_from_dict({"lens": {"k1": -0.3, "k2": -0.3}})
    with pytest.raises(ConfigError, match="k1 must be a number"):
        config_from_dict({"lens": {"k1": "wide"}})
    assert config_from_dict({"vision": {"lens": {"k1": -0.12}}}).lens == Lens(-0.12)


def test_hand_given_corners_are_read_in_the_photo_as_taken() -> None:
    corners = ((200.0, 700.0), (1100.0, 720.0), (1080.0, 300.0), (220.0, 280.0))
    plain = VisionConfig(locate=LocateConfig(manual_corners=corners))
    assert np.allclose(manual_outline(plain, SHAPE).corners, corners)  # type: ignore[union-attr]
    wide = VisionConfig(locate=LocateConfig(manual_corners=corners), lens=BARREL)
    outline = manual_outline(wide, SHAPE)
    assert outline is not None and outline.manual
    # undone, the barrel's corners lie further out than where the photo shows them
    assert np.allclose(distort_points(outline.corners, SHAPE, BARREL), corners)
    assert outline.corners[0, 0] < 200.0 and outline.corners[1, 0] > 1100.0
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


@pytest.fixture(scope="module")
def wide_photos(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    """One board filling the frame, as a pinhole and as a barrel lens show it, and where
    its corners show through that lens."""
    from tests.vision.conftest import scene

    image, truth = scene(
        12, ground="concrete", chalk="white", tilt_deg=10.0, yaw_deg=3.0, fill=0.95, wobble=0.004
    )
    folder = tmp_path_factory.mktemp("lens")
    cv2.imwrite(str(folder / "pinhole.png"), image)
    cv2.imwrite(str(folder / "barrel.png"), _as_taken(image, BARREL))
    corners = distort_points(np.array(truth["corners"], np.float64), image.shape, BARREL)
    true = np.array(truth["corners"], np.float64)
    return folder / "pinhole.png", folder / "barrel.png", corners, true


def test_calibrate_measures_a_wide_lens_and_leaves_a_pinhole_alone(
    wide_photos: tuple[Path, Path, np.ndarray, np.ndarray],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pinhole, barrel, shown, _ = wide_photos
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
    assert given is not None and np.abs(np.array(given) - shown).max() < 6.0


def test_calibrate_lens_refuses_what_it_cannot_measure(
    wide_photos: tuple[Path, Path, np.ndarray, np.ndarray],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pinhole, _, _, _ = wide_photos
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
    wide_photos: tuple[Path, Path, np.ndarray, np.ndarray],
) -> None:
    from companion.appliance.observe import VisionObserver
    from device.ports import Frame

    _, barrel, _, true = wide_photos
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
    wide_photos: tuple[Path, Path, np.ndarray, np.ndarray],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from companion.commands.analyze import analyze_main

    _, barrel, shown, _ = wide_photos
    config = tmp_path / "app.toml"
    config.write_text(f"[vision.lens]\nk1 = {BARREL.k1}\n")
    assert analyze_main([str(barrel), "--config", str(config)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert np.abs(np.array(out["corners"]) - shown).max() < 6.0


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
    cv2.imwrite(str(bent), _as_taken(_chessboard(), BARREL))
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
    for bad in ("9by6", "2x6"):
        assert calibrate_main([str(straight), "--lens", "--chessboard", bad]) == 2
        assert "--chessboard" in capsys.readouterr().err
    assert calibrate_main([str(straight), "--chessboard", "9x6"]) == 2

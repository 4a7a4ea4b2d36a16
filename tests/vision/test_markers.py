"""The board's corners from four marks put on them (``vision.locate.markers``) and
``oanquan calibrate IMAGE --markers MARKED``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from companion.commands.calibrate import calibrate_main
from tests.vision.conftest import scene
from vision.config import load_config
from vision.errors import BoardNotFoundError, ImagePairError
from vision.locate.markers import _difference, _distance, _marks, marker_corners
from vision.synth import with_marks


def _board(seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    image, truth = scene(seed)
    corners = np.array(truth["corners"], np.float64)
    return image, corners, float(np.linalg.norm(corners[1] - corners[0])) / 5.0


def _photo_again(image: np.ndarray, seed: int, gain: float = 1.05) -> np.ndarray:
    """The same view a moment later: the light a little brighter, fresh sensor noise."""
    rng = np.random.default_rng(seed)
    return np.asarray(np.clip(image * gain + rng.normal(0.0, 2.0, image.shape), 0, 255), np.uint8)


def _off(found: np.ndarray, corners: np.ndarray) -> float:
    """The farthest any true corner lies from the nearest mark found."""
    return max(float(np.min(np.linalg.norm(found - c, axis=1))) for c in corners)


@pytest.mark.parametrize("seed", [3, 5, 8])
def test_four_marks_give_the_corners_through_drifted_light_and_noise(seed: int) -> None:
    image, corners, side = _board(seed)
    for colour in ((235, 238, 240), (40, 42, 45)):
        marked = _photo_again(with_marks(image, corners, 0.15 * side, seed, colour), seed)
        assert _off(marker_corners(image, marked), corners) < 0.05 * side


def test_marks_in_dim_light_are_read_through_the_grain() -> None:
    # sensor grain of 16 grey levels in both photos hides the marks pixel by pixel
    # (the threshold rises over them); averaged out, they stand clear again
    image, corners, side = _board(3)
    rng = np.random.default_rng(3)
    before = np.clip(image + rng.normal(0.0, 16.0, image.shape), 0, 255).astype(np.uint8)
    after = with_marks(image, corners, 0.12 * side, 3)
    after = np.clip(after + rng.normal(0.0, 16.0, image.shape), 0, 255).astype(np.uint8)
    diff, scale = _difference(before, after)
    with pytest.raises(BoardNotFoundError, match="saw 2 marks"):
        _marks(*_distance(diff), scale)  # the difference read as it is
    assert _off(marker_corners(before, after), corners) < 0.05 * side


def test_marks_at_the_frame_s_edge_and_on_a_large_frame_are_where_they_lie() -> None:
    image, corners, side = _board(5)
    h, w = image.shape[:2]
    # a board filling the frame: pale discs on its corners, each touching the frame's edge
    edge = np.array([[6.0, h - 7.0], [w - 7.0, h - 7.0], [w - 7.0, 6.0], [6.0, 6.0]])
    discs = image.copy()
    for x, y in edge:
        cv2.circle(discs, (round(x), round(y)), 10, (235, 238, 240), -1)
    assert _off(marker_corners(image, _photo_again(discs, 5)), edge) < 3.0
    # a 2560 px frame is read at half size: the corners come back in its own pixels
    big = cv2.resize(image, (2 * w, 2 * h), interpolation=cv2.INTER_CUBIC)
    marks = 2.0 * corners + 0.5
    marked = _photo_again(with_marks(big, marks, 0.3 * side, 5), 5)
    assert _off(marker_corners(big, marked), marks) < 0.05 * 2.0 * side  # (its squares: 2 side)


def test_a_missing_mark_or_a_moved_piece_is_named_not_guessed() -> None:
    image, corners, side = _board(3)
    three = _photo_again(with_marks(image, corners[:3], 0.15 * side, 3), 3)
    with pytest.raises(BoardNotFoundError, match="saw 3 marks where 4 were expected"):
        marker_corners(image, three)
    # a fifth thing put down as large as a mark, in the middle of the board
    middle = corners.mean(axis=0, keepdims=True)
    five = _photo_again(with_marks(image, np.vstack([corners, middle]), 0.15 * side, 3), 3)
    with pytest.raises(BoardNotFoundError, match="saw 5 changes"):
        marker_corners(image, five)
    # nothing put down at all: only the light and the noise changed
    with pytest.raises(BoardNotFoundError, match="saw 0 marks"):
        marker_corners(image, _photo_again(image, 3))


def test_marks_that_do_not_bound_a_board_are_refused() -> None:
    image, corners, side = _board(3)
    # four marks on one line along the board's south side
    row = corners[0] + np.outer(np.linspace(0.0, 1.0, 4), corners[1] - corners[0])
    marked = _photo_again(with_marks(image, row, 0.15 * side, 3), 3)
    with pytest.raises(BoardNotFoundError, match="do not bound a board"):
        marker_corners(image, marked)


def test_two_photos_of_different_sizes_are_an_error() -> None:
    image, _, _ = _board(3)
    with pytest.raises(ImagePairError, match="of one size"):
        marker_corners(image, image[:-1])


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    image, corners, side = _board(5)
    folder = tmp_path_factory.mktemp("marks")
    paths = {"board": folder / "board.png", "marked": folder / "marked.png"}
    cv2.imwrite(str(paths["board"]), image)
    cv2.imwrite(str(paths["marked"]), _photo_again(with_marks(image, corners, 0.15 * side, 5), 5))
    cv2.imwrite(str(folder / "small.png"), image[::2, ::2])
    return {**paths, "small": folder / "small.png", "corners": corners, "side": side}


def test_calibrate_writes_the_corners_the_marks_show(
    photos: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "corners.toml"
    code = calibrate_main(
        [str(photos["board"]), "--markers", str(photos["marked"]), "--out", str(out)]
    )
    assert code == 0 and "[vision.locate]" in capsys.readouterr().out
    written = np.array(load_config(out).locate.manual_corners)
    # SW, SE, NE, NW as the config keeps them, each within a few pixels of the truth
    assert np.max(np.linalg.norm(written - photos["corners"], axis=1)) < 0.05 * photos["side"]


def test_calibrate_says_what_is_wrong_with_the_marked_photo(
    photos: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    board, marked = str(photos["board"]), str(photos["marked"])
    assert calibrate_main([board, "--markers", str(photos["small"])]) == 2
    assert "is not the size of board.png" in capsys.readouterr().err
    assert calibrate_main([board, "--markers", board]) == 1  # nothing put down
    assert "--markers: saw 0 marks" in capsys.readouterr().err
    assert calibrate_main([board, "--markers", marked, "--corners", "1,2,3,4,5,6,7,8"]) == 2
    assert "not both" in capsys.readouterr().err
    assert calibrate_main([board, "--markers", marked, "--lens"]) == 2
    assert "give --markers in a run of its own" in capsys.readouterr().err
    assert calibrate_main([board, "--markers", "/no/such.png"]) == 1


def test_the_bench_finds_the_marks_it_draws_on_a_folder_of_photos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import sys

    from bench import markers

    for i, seed in enumerate((3, 5)):
        image, truth = scene(seed)
        cv2.imwrite(str(tmp_path / f"img_{i:05d}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        record = {"corners": truth["corners"], "conditions": {"ground": "synth"}}
        (tmp_path / f"img_{i:05d}.json").write_text(json.dumps(record))
    monkeypatch.setattr(sys, "argv", ["markers.py", str(tmp_path)])
    assert markers.main() == 0
    out = capsys.readouterr().out
    assert "four marks found: 2 of 2 (100.0%)" in out and "synth: 2 of 2 found" in out
    # dim light's grain, each photo gathered as the device's menu takes it
    monkeypatch.setattr(sys, "argv", ["markers.py", str(tmp_path), "--grain", "12", "--gather"])
    assert markers.main() == 0
    assert "four marks found: 2 of 2 (100.0%)" in capsys.readouterr().out


def test_the_bench_s_photos_are_gathered_as_the_device_gathers_them() -> None:
    from bench.markers import photographed
    from vision.frames import temporal_noise

    image, _ = scene(3)
    grainy = photographed(image, 12.0, np.random.default_rng(0), gather=False)
    gathered = photographed(image, 12.0, np.random.default_rng(0), gather=True)
    # the mean of eight frames: the grain a third of a single frame's
    assert temporal_noise(image, gathered) < 0.5 * temporal_noise(image, grainy)
    assert np.array_equal(photographed(image, 0.0, np.random.default_rng(0), False), image)

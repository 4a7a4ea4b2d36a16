"""The learned finder: the shipped board-line network reads through cv2.dnn, marks a
generated board's lines and not the ground beside them, and the search runs on it."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from tests.vision.conftest import scene
from vision.config import Finder, LocateConfig, config_from_dict
from vision.errors import ConfigError
from vision.geometry import homography_from_corners, project, region_polygons_board
from vision.locate import learned_ridges, line_probability, locate_board
from vision.locate.ridges import downscale
from vision.synth import render_wide

LEARNED = LocateConfig(finder=Finder.LEARNED)


def _line_mask(truth: dict, shape: tuple[int, int], scale: float, width: int) -> np.ndarray:
    """The board's drawn lines (every region outline) at the work scale."""
    h = homography_from_corners(np.array(truth["corners"], np.float64))
    mask = np.zeros(shape, np.uint8)
    for poly in region_polygons_board(0.95):
        pts = np.round(project(h, poly) * scale).astype(np.int32)
        cv2.polylines(mask, [pts.reshape(-1, 1, 2)], True, 255, width)
    return mask > 0


def test_network_marks_the_board_lines_and_not_the_ground() -> None:
    image, truth = scene(100, ground="concrete", chalk="white", tilt_deg=5.0, yaw_deg=-20.0)
    work, scale = downscale(np.array(image), LEARNED.work_width)
    prob = line_probability(work, LEARNED.line_model)
    assert prob.shape == work.shape[:2]
    assert prob.dtype == np.float32 and prob.min() >= 0.0 and prob.max() <= 1.0
    on = _line_mask(truth, prob.shape, scale, 3)
    near = _line_mask(truth, prob.shape, scale, 25) & ~_line_mask(truth, prob.shape, scale, 9)
    assert float(prob[on].mean()) > 0.4
    assert float(prob[near].mean()) < 0.1


def test_learned_ridges_point_across_the_line() -> None:
    prob = np.zeros((60, 80), np.float32)
    prob[:, 38:43] = 1.0  # a vertical band: its normal is horizontal (angle 0)
    ridge, normal = learned_ridges(cv2.GaussianBlur(prob, (0, 0), 1.0), (1.5, 2.5))
    assert ridge[30, 40] > 5 * max(float(ridge[30, 10]), 1e-6)
    a = float(normal[30, 40])
    assert min(a, np.pi - a) < 0.1


@pytest.mark.parametrize(
    "conds",
    [
        dict(ground="concrete", chalk="white", tilt_deg=5.0, yaw_deg=-20.0),
        dict(ground="asphalt", chalk="yellow", tilt_deg=35.0, yaw_deg=10.0, roll_deg=2.5),
    ],
)
def test_learned_finder_finds_a_generated_board(conds: dict) -> None:
    image, truth = scene(100, **conds)
    outline = locate_board(np.array(image), LEARNED, np.random.default_rng(0))
    t = np.array(truth["corners"])
    err = np.linalg.norm(outline.corners - t, axis=1).mean() / np.linalg.norm(t[2] - t[0])
    assert err < 0.03


@pytest.mark.parametrize("seed", [3, 5])
def test_learned_finder_is_not_fooled_by_tile_joints(seed: int) -> None:
    # wide-generator boards on tiles: the classical fit takes the joints there (0.7 and
    # 0.66 of the diagonal off when this was written); the network does not mark them
    image, truth = render_wide(seed, grounds=("tiles_any",))
    outline = locate_board(image, LEARNED, np.random.default_rng(0))
    t = np.array(truth["corners"])
    err = np.linalg.norm(outline.corners - t, axis=1).mean() / np.linalg.norm(t[2] - t[0])
    assert err < 0.03


def test_finder_switch_reads_from_toml_and_rejects_unknown_values() -> None:
    assert config_from_dict({"locate": {"finder": "learned"}}).locate.finder is Finder.LEARNED
    assert config_from_dict({"locate": {"finder": "classical"}}).locate.finder is Finder.CLASSICAL
    with pytest.raises(ConfigError, match=r"\[locate\] finder must be one of classical, learned"):
        config_from_dict({"locate": {"finder": "neural"}})


def test_missing_line_model_is_a_config_error() -> None:
    image, _ = scene(100, ground="concrete", chalk="white", tilt_deg=5.0, yaw_deg=-20.0)
    cfg = replace(LEARNED, line_model="/nonexistent/boardlines.onnx")
    with pytest.raises(ConfigError, match=r"boardlines\.onnx does not exist"):
        locate_board(np.array(image), cfg)

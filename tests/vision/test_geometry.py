from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.board import CITIZENS
from vision.config import LocateConfig
from vision.geometry import (
    BOARD_CORNERS,
    canonical_corners,
    homography_from_corners,
    project,
    region_polygons_board,
    shape_error,
    side_ratio,
)

SYMMETRIES = ([0, 1, 2, 3], [1, 0, 3, 2], [3, 2, 1, 0], [2, 3, 0, 1])


def test_homography_maps_corners_exactly() -> None:
    img = np.array([[100.0, 700.0], [1100.0, 650.0], [1000.0, 300.0], [200.0, 320.0]])
    h = homography_from_corners(img)
    assert np.allclose(project(h, BOARD_CORNERS), img, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    yaw=st.floats(-28, 28),
    sx=st.floats(60, 200),
    tilt=st.floats(0.5, 1.0),
    sym=st.sampled_from(SYMMETRIES),
)
def test_canonical_order_ignores_template_symmetry(
    yaw: float, sx: float, tilt: float, sym: list[int]
) -> None:
    a = np.deg2rad(yaw)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    board = BOARD_CORNERS * [sx, -sx * tilt]  # image y grows downwards: north is up
    img = board @ rot.T + [640.0, 480.0]
    c = canonical_corners(img[sym])
    assert np.allclose(c, img)
    assert c[0, 0] < c[1, 0]  # west is left of east on the south side
    assert c[0, 1] + c[1, 1] > c[2, 1] + c[3, 1]  # south side is lower in the image


def test_region_polygons_tile_the_rectangle() -> None:
    polys = region_polygons_board(0.95)
    assert len(polys) == 12
    areas = [
        0.5 * abs(np.dot(p[:, 0], np.roll(p[:, 1], 1)) - np.dot(p[:, 1], np.roll(p[:, 0], 1)))
        for p in polys
    ]
    assert np.isclose(sum(areas[i] for i in CITIZENS), 10.0)
    assert 1.2 < areas[0] < 1.6 and np.isclose(areas[0], areas[6])
    # square 1 is south-west, square 11 north-west, square 7 north-east
    assert np.allclose(polys[1].mean(axis=0), [0.5, 0.5])
    assert np.allclose(polys[11].mean(axis=0), [0.5, 1.5])
    assert np.allclose(polys[7].mean(axis=0), [4.5, 1.5])


def test_side_ratio_is_one_for_a_board_seen_square_on_and_grows_with_a_sliver() -> None:
    upright = BOARD_CORNERS * [120.0, -120.0] + [640.0, 480.0]
    assert side_ratio(upright) == 1.0
    # the wrong fit a brick floor once gave: a sliver along the joints (SW, SE, NE, NW)
    sliver = np.array([[580.5, 482.2], [619.1, 457.7], [801.2, 412.4], [569.8, 498.0]])
    assert side_ratio(sliver) > 5.0
    assert side_ratio(np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 10.0], [5.0, 10.0]])) == np.inf


def test_a_board_in_perspective_keeps_opposite_sides_within_the_bound() -> None:
    # the far side of a board tilted 55 degrees, 0.8 m from the camera: a pinhole's
    # lengths go as 1 / depth; the board's short extent is 2 squares of 0.45 m
    half = 0.45 * np.sin(np.deg2rad(55.0))
    near, far = 1.0 / (0.8 - half), 1.0 / (0.8 + half)
    board = np.array([[-near, 0.0], [near, 0.0], [far, 1.0], [-far, 1.0]]) * 300.0
    assert side_ratio(board) < LocateConfig().max_side_ratio


def _pinhole_view(width: int, height: int, focal: float, tilt_deg: float, shape=(5.0, 2.0)):
    """Image corners (SW, SE, NE, NW) of a flat rectangle of ``shape`` squares (0.3 m each)
    seen by a pinhole camera tilted ``tilt_deg`` from straight down, 2 m away."""
    t = np.deg2rad(tilt_deg)
    rot = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(t), -np.sin(t)], [0.0, np.sin(t), np.cos(t)]])
    w, h = shape
    world = np.array([[0, 0, 0], [w, 0, 0], [w, h, 0], [0, h, 0]], float) - [w / 2, h / 2, 0]
    cam = (world * [0.3, -0.3, 0.0]) @ rot.T + [0.0, 0.0, 2.0]
    k = np.array([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1.0]])
    img = cam @ k.T
    return img[:, :2] / img[:, 2:]


@pytest.mark.parametrize("focal", [0.4, 0.8, 1.5])
@pytest.mark.parametrize("tilt", [0.0, 30.0, 55.0])
def test_a_board_through_any_lens_has_almost_no_shape_error(focal: float, tilt: float) -> None:
    corners = _pinhole_view(1280, 960, focal * 1280, tilt)
    assert shape_error(corners, 1280, 960) < 0.02


@pytest.mark.parametrize("tilt", [0.0, 20.0])
def test_a_rectangle_of_the_wrong_shape_fits_no_focal_length(tilt: float) -> None:
    # a run of tiles twice as deep as a board, outlined as if it were one (seen steeper,
    # a longer lens and more tilt explain part of it: the bound is a loose one)
    corners = _pinhole_view(1280, 960, 900.0, tilt, shape=(5.0, 4.0))
    assert shape_error(corners, 1280, 960) > LocateConfig().max_shape_error


def test_corners_in_a_line_have_no_shape_at_all() -> None:
    line = np.array([[0.0, 0.0], [100.0, 0.0], [200.0, 0.0], [300.0, 0.0]])
    assert shape_error(line, 1280, 960) == np.inf


# boards seen end-on, their long sides running up the photo: a render of ours (camera
# 90 degrees round, the near end wider) and a rigid turn either way
END_ON = (
    [[260.0, 133.0], [250.0, 365.0], [378.0, 369.0], [368.0, 133.0]],
    [[515.0, 553.0], [475.0, 55.0], [224.0, 48.0], [80.0, 523.0]],
    [[700.0, 700.0], [705.0, 200.0], [500.0, 198.0], [498.0, 702.0]],
)


@pytest.mark.parametrize("board", END_ON)
@pytest.mark.parametrize("order", SYMMETRIES)  # two of them are mirrors
def test_a_board_seen_end_on_is_never_named_mirrored(board: list, order: list[int]) -> None:
    img = np.array(board)
    c = canonical_corners(img[order])
    # the board itself or the board turned half round, never its mirror image
    assert np.allclose(c, img) or np.allclose(c, np.roll(img, 2, axis=0))
    assert c[0, 1] + c[1, 1] >= c[2, 1] + c[3, 1]  # south is the lower long side

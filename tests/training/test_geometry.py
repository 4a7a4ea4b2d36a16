"""Board outlines and the pinhole camera the ground truth is written with."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from training.render.geometry import (
    ARC_POINTS,
    REGIONS,
    line_distance,
    look_at_camera,
    make_board,
    point_in_polygon,
    polygon_area,
    region_at,
    region_of_index,
    ring_index,
)


@pytest.fixture
def board():  # type: ignore[no-untyped-def]
    return make_board(0.3, 1.05, random.Random(4), irregularity=1.2)


def test_ring_indices_follow_interchange() -> None:
    assert [ring_index(f"south_{k}") for k in range(5)] == [1, 2, 3, 4, 5]
    assert [ring_index(f"north_{k}") for k in range(5)] == [11, 10, 9, 8, 7]
    assert ring_index("west_mandarin") == 0 and ring_index("east_mandarin") == 6
    assert sorted(region_of_index(i) for i in range(12)) == sorted(REGIONS)
    with pytest.raises(ValueError):
        region_of_index(12)


def test_squares_tile_the_rectangle(board) -> None:  # type: ignore[no-untyped-def]
    squares = [board.regions[r] for r in REGIONS if not r.endswith("mandarin")]
    assert all(len(s) == 4 for s in squares)
    total = sum(polygon_area(np.asarray(s)) for s in squares)
    assert total == pytest.approx(polygon_area(np.asarray(board.corners)), rel=1e-9)
    for k in range(4):  # neighbours share their divider
        assert board.regions[f"south_{k}"][1] == board.regions[f"south_{k + 1}"][0]
        assert board.regions[f"north_{k}"][2] == board.regions[f"north_{k + 1}"][3]
        assert board.regions[f"south_{k}"][2] == board.regions[f"north_{k}"][1]


def test_semicircles_close_on_the_short_sides(board) -> None:  # type: ignore[no-untyped-def]
    sw, se, ne, nw = board.corners
    west, east = board.regions["west_mandarin"], board.regions["east_mandarin"]
    assert len(west) == len(east) == ARC_POINTS
    assert (west[0], west[-1]) == (nw, sw)
    assert (east[0], east[-1]) == (ne, se)
    assert min(p[0] for p in west) < min(sw[0], nw[0]) - 0.2  # it bulges outwards
    assert max(p[0] for p in east) > max(se[0], ne[0]) + 0.2


def test_region_at_finds_each_region_and_nothing_outside(board) -> None:  # type: ignore[no-untyped-def]
    for name in REGIONS:
        poly = np.asarray(board.regions[name])
        if name.endswith("mandarin"):  # the arc's middle point, pulled a little inside
            flat = (poly[0] + poly[-1]) / 2
            inner = poly[ARC_POINTS // 2] * 0.7 + flat * 0.3
        else:
            inner = poly.mean(axis=0)
        assert region_at(board, (inner[0], inner[1])) == name
    assert region_at(board, (0.0, 5.0)) is None
    assert not point_in_polygon((10.0, 0.0), board.regions["south_0"])


def test_line_distance(board) -> None:  # type: ignore[no-untyped-def]
    assert line_distance(board, board.corners[0]) == pytest.approx(0.0, abs=1e-12)
    c = np.asarray(board.regions["south_2"]).mean(axis=0)
    assert 0.1 < line_distance(board, (c[0], c[1])) < 0.17


def test_camera_looking_down_centres_the_target_and_keeps_north_up() -> None:
    cam = look_at_camera(
        np.array([0.0, 0.0, 1.5]), np.zeros(3), 0.0, 28.0, 640, 480, away=np.array([0.0, 1.0])
    )
    px = cam.project(np.array([[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 0.2, 0.0]]))
    assert px[0] == pytest.approx([320, 240])
    assert px[1][0] > 320 and px[1][1] == pytest.approx(240)  # east is right
    assert px[2][1] < 240  # north is up
    assert cam.K[0, 0] == pytest.approx(28 / 36 * 640)
    assert cam.position == pytest.approx([0, 0, 1.5])
    assert pytest.approx(np.eye(3)) == cam.R @ cam.R.T


def test_tilted_camera_from_the_south_sees_the_south_side_lower() -> None:
    eye = np.array([0.0, -1.0, 1.0])
    cam = look_at_camera(eye, np.zeros(3), 0.0, 26.0, 640, 480)
    south, north = cam.project(np.array([[0.0, -0.2, 0.0], [0.0, 0.2, 0.0]]))
    assert south[1] > north[1]
    behind = cam.project(np.array([[0.0, -3.0, 2.0]]))
    assert not cam.in_frame(behind)[0]


def test_roll_turns_the_image() -> None:
    eye = np.array([0.0, 0.0, 1.0])
    flat = look_at_camera(eye, np.zeros(3), 0.0, 26.0, 640, 480, away=np.array([0.0, 1.0]))
    rolled = look_at_camera(eye, np.zeros(3), 90.0, 26.0, 640, 480, away=np.array([0.0, 1.0]))
    p = np.array([[0.2, 0.0, 0.0]])
    d0 = flat.project(p)[0] - 320, 0
    d1 = rolled.project(p)[0] - np.array([320, 240])
    assert abs(d1[0]) < 1e-6 and abs(d1[1]) == pytest.approx(abs(d0[0][0]))
    assert math.isclose(float(np.linalg.det(rolled.R)), 1.0)

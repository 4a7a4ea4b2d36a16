from __future__ import annotations

import numpy as np
import pytest

from engine.board import CITIZENS, NUM_SQUARES
from tests.vision.conftest import scene
from vision import detect
from vision.count import calibrate_opening, count_board
from vision.locate import outline_from_corners

OPENING = [0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5]
EASY = dict(
    ground="concrete",
    chalk="white",
    palette="dark",
    shadow=False,
    tilt_deg=15.0,
    yaw_deg=5.0,
    noise=2.0,
    light_gradient=0.1,
)


def _truth_outline(truth: dict) -> object:  # type: ignore[type-arg]
    return outline_from_corners(np.array(truth["corners"]), truth["conditions"]["arc_depth"])


def test_distributions_are_normalised_and_consistent(easy_scene) -> None:  # type: ignore[no-untyped-def]
    image, truth = easy_scene
    result = count_board(image, _truth_outline(truth))[0]
    assert len(result) == 12
    for sq in result:
        assert np.isclose(sum(sq.probs), 1.0)
        assert sq.count == int(np.argmax(sq.probs))
        assert 0.0 <= sq.big_prob <= 1.0 and sq.big in (0, 1)
    assert result[1].big == 0 and result[1].big_prob == 0.0  # no big stone off the mandarins


@pytest.mark.parametrize("seed", [201, 202, 203, 204])
def test_accuracy_floor_on_easy_scenes(seed: int) -> None:
    """Sparse positions on plain ground: empties and singles must be right."""
    counts = (0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 2, 0)
    image, truth = scene(seed, counts, (1, 1), **EASY)
    result = count_board(image, _truth_outline(truth))[0]
    pred = [sq.count for sq in result]
    exact = sum(p == t for p, t in zip(pred, counts, strict=True))
    # floor, not target: half the shipped counter learnt from path-traced renders and
    # reads two of these flat cartoon pebbles touching as one now and then (9 of 12
    # exact on seeds 201 and 203, 10+ on the others)
    assert exact >= 9, (pred, counts)
    assert sum(abs(p - t) for p, t in zip(pred, counts, strict=True)) <= 3
    assert result[0].big == 1 and result[6].big == 1


def test_big_stone_absent_is_seen() -> None:
    # An empty mandarin square reads as empty, the other keeps its stone.
    # (Piles there can still pass for the stone: see docs/vision.md, big stones.)
    counts = (0, 1, 0, 2, 0, 1, 1, 0, 0, 1, 2, 0)
    image, truth = scene(210, counts, (0, 1), **EASY)
    result = count_board(image, _truth_outline(truth))[0]
    assert result[0].big == 0 and result[6].big == 1


def test_opening_calibration_is_a_bounded_adjustment() -> None:
    image, truth = scene(220, tuple(OPENING), (1, 1), **EASY)
    outline = _truth_outline(truth)
    cal = calibrate_opening(image, outline)
    assert 0.9 <= cal.count_gain <= 1.1
    result = count_board(image, outline, calibration=cal)[0]
    pred = [sq.count for sq in result]
    errors = [abs(p - t) for p, t in zip(pred, OPENING, strict=True)]
    # floor, not target: the learned counter (trained on path-traced renders)
    # undercounts these large flat synth pebbles by ~20%, more than the
    # +-10% the calibration may correct; measured 13 in total, 3 at most
    assert max(errors) <= 3 and sum(errors) <= 16, pred
    assert result[0].big == 1 and result[6].big == 1


def test_opening_calibration_leaves_out_squares_a_hand_hides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    image, truth = scene(220, tuple(OPENING), (1, 1), **EASY)
    outline = _truth_outline(truth)
    # the counter reads 4.8 wherever it sees, 0 under an arm over squares 2-4
    small = np.array([0.0] + [4.8] * 5 + [0.0] + [4.8] * 5)
    small[[2, 3, 4]] = 0.0
    monkeypatch.setattr(detect, "region_counts", lambda *a, **k: (small, np.zeros(NUM_SQUARES)))
    misled = calibrate_opening(image, outline).count_gain
    assert misled == pytest.approx(1.1)  # as far as the clamp lets the empty squares pull it
    assert calibrate_opening(image, outline, skip=(2, 3, 4)).count_gain == pytest.approx(5 / 4.8)
    assert calibrate_opening(image, outline, skip=CITIZENS).count_gain == 1.0


def test_inside_share_says_how_much_density_the_outline_holds() -> None:
    from vision import detect
    from vision.count import inside_share

    labels = detect.region_cells(0.95)
    dens = np.zeros((2, *labels.shape), np.float32)
    assert inside_share(dens, labels) == 1.0  # no pieces: no evidence against the outline
    ys, xs = np.nonzero(labels == 3)
    dens[0, ys[:20], xs[:20]] = 0.3  # six pebbles' mass in a square
    assert inside_share(dens, labels) == 1.0
    oy, ox = np.nonzero(labels < 0)
    dens[0, oy[:20], ox[:20]] = 0.3  # as much again off the board
    assert abs(inside_share(dens, labels) - 0.5) < 1e-6

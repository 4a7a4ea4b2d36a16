"""The wide generator: training scenes for the counter, with families that can be held out."""

from __future__ import annotations

import cv2
import numpy as np

from training.counter.__main__ import SPLITS, light_kind, truth_json
from vision.synth import (
    HELD_OUT_GROUND,
    HELD_OUT_PIECE,
    PIECE_FAMILIES,
    WIDE_GROUNDS,
    render_wide,
    wide_conditions,
    wide_position,
)


def test_same_seed_same_scene() -> None:
    a, ta = render_wide(3, size=(320, 240))
    b, tb = render_wide(3, size=(320, 240))
    assert np.array_equal(a, b) and ta == tb
    c, _ = render_wide(4, size=(320, 240))
    assert not np.array_equal(a, c)


def test_families_are_drawn_only_from_those_given() -> None:
    rng = np.random.default_rng(0)
    grounds = tuple(g for g in WIDE_GROUNDS if g != HELD_OUT_GROUND)
    pieces = tuple(p for p in PIECE_FAMILIES if p != HELD_OUT_PIECE)
    drawn = [wide_conditions(rng, grounds, pieces) for _ in range(300)]
    assert {c.ground for c in drawn} == set(grounds)
    assert {c.pieces for c in drawn} == set(pieces)
    sizes = np.array([c.pebble_size for c in drawn])
    assert sizes.min() >= 0.05 and sizes.max() <= 0.33 and sizes.max() > 0.25


def test_the_held_out_splits_hold_only_their_family() -> None:
    assert SPLITS["train"][1] == SPLITS["val"][1] and HELD_OUT_GROUND not in SPLITS["train"][1]
    assert HELD_OUT_PIECE not in SPLITS["train"][2]
    assert SPLITS["heldout-ground"][1] == (HELD_OUT_GROUND,)
    assert SPLITS["heldout-piece"][2] == (HELD_OUT_PIECE,)
    _, truth = render_wide(SPLITS["heldout-piece"][0], grounds=("sand",), pieces=("shells",))
    assert truth["conditions"]["piece_family"] == "shells"
    assert truth["conditions"]["ground_family"] == "sand"


def test_piles_are_common_and_big_pieces_pile_no_higher_than_a_handful() -> None:
    rng = np.random.default_rng(1)
    small = np.array([wide_position(rng, 0.1)[0] for _ in range(200)])
    assert np.mean(small >= 8) > 0.1 and small.max() >= 25
    big = np.array([wide_position(rng, 0.33)[0] for _ in range(200)])
    assert big.max() <= 10


def test_truth_gives_each_piece_a_ground_point_in_its_region() -> None:
    _, truth = render_wide(11, size=(640, 480))
    out = truth_json(truth, 95)
    inside = 0
    for p in out["pieces"]:
        poly = np.array(out["regions"][p["region"]]["polygon"], np.float32)
        inside += cv2.pointPolygonTest(poly, tuple(p["ground_px"]), False) >= 0
    assert inside == len(out["pieces"]) > 0
    assert out["conditions"]["light"]["type"] == light_kind(truth["conditions"])

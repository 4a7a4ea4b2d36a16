from __future__ import annotations

import numpy as np
import pytest

from vision.synth import render_scene

COUNTS = [0, 2, 0, 5, 1, 0, 3, 0, 0, 4, 0, 1]


def test_same_arguments_same_image() -> None:
    a, ta = render_scene(COUNTS, (1, 0), seed=5, size=(480, 360))
    b, tb = render_scene(COUNTS, (1, 0), seed=5, size=(480, 360))
    assert np.array_equal(a, b)
    assert ta == tb


def test_truth_counts_follow_the_request() -> None:
    _, truth = render_scene(COUNTS, (1, 0), seed=6, size=(480, 360))
    assert truth["ring_counts"] == COUNTS
    assert truth["regions"]["west_mandarin"] == {
        **truth["regions"]["west_mandarin"],
        "count": 0,
        "big": 1,
    }
    assert truth["regions"]["south_2"]["count"] == 5
    assert truth["regions"]["north_2"]["count"] == 4  # ring square 9
    assert sum(p["kind"] == "small" for p in truth["pieces"]) == sum(COUNTS)
    assert len(truth["corners"]) == 4


def test_sequence_keeps_scene_and_unchanged_squares() -> None:
    before, t0 = render_scene(COUNTS, (1, 1), seed=9, scene_seed=40, size=(640, 480))
    moved = list(COUNTS)
    moved[3] = 0  # square 3 picked up...
    moved[4] += 5  # ...and sown along
    after, t1 = render_scene(moved, (1, 1), seed=9, scene_seed=40, size=(640, 480))
    assert t0["corners"] == t1["corners"]
    diff = np.abs(before.astype(int) - after.astype(int)).max(axis=2) > 0
    # only the changed squares (and their immediate surroundings) differ
    import cv2

    mask = np.zeros(diff.shape, np.uint8)
    for name in ("south_2", "south_3"):
        poly = np.array(t0["regions"][name]["polygon"], np.int32)
        cv2.fillPoly(mask, [poly], 1)
    mask = cv2.dilate(mask, np.ones((25, 25), np.uint8))
    assert diff.any()
    assert not diff[mask == 0].any()


def test_other_scene_seed_changes_the_scene() -> None:
    a, ta = render_scene(COUNTS, (1, 1), seed=9, scene_seed=1, size=(320, 240))
    b, tb = render_scene(COUNTS, (1, 1), seed=9, scene_seed=2, size=(320, 240))
    assert ta["corners"] != tb["corners"] or not np.array_equal(a, b)


def test_bad_requests_are_rejected() -> None:
    with pytest.raises(ValueError, match="12"):
        render_scene([1, 2, 3], (1, 1), seed=0)
    with pytest.raises(ValueError, match="unknown scene condition"):
        render_scene(COUNTS, (1, 1), seed=0, colour="red")

"""Change detection for a fixed camera: against the confirmed frame and the frame before."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from engine.board import NUM_SQUARES
from vision.change import (
    changed_since,
    changed_squares,
    confirmed_reference,
    intrusion_mask,
    is_new_scene,
    scene_change,
    square_grey,
    thumbnail,
)
from vision.config import ChangeConfig, config_from_dict
from vision.gate import mask_cover
from vision.locate import outline_from_corners
from vision.synth import render_scene

BEFORE = [0, 3, 0, 1, 5, 2, 1, 0, 7, 0, 2, 4]
AFTER = [0, 3, 0, 0, 6, 3, 1, 0, 7, 0, 2, 4]  # square 3 picked up and sown into 4 and 5


@functools.lru_cache(maxsize=4)
def _frame(counts: tuple[int, ...]) -> tuple[np.ndarray, tuple[np.ndarray, ...], float]:
    """One position on the same scene (camera, ground, chalk, every unchanged square)."""
    image, truth = render_scene(list(counts), (1, 1), seed=9, scene_seed=40, size=(640, 480))
    outline = outline_from_corners(np.array(truth["corners"]), truth["conditions"]["arc_depth"])
    image.setflags(write=False)
    return image, outline.regions, outline.px_per_unit()


def test_only_the_squares_a_move_touched_have_changed() -> None:
    before, regions, unit = _frame(tuple(BEFORE))
    after, _, _ = _frame(tuple(AFTER))
    flags = changed_squares(square_grey(before), square_grey(after), regions, unit)
    assert len(flags) == NUM_SQUARES
    assert [sq for sq, changed in enumerate(flags) if changed] == [3, 4, 5]
    assert not any(changed_squares(square_grey(before), square_grey(before), regions, unit))


def test_a_brightness_change_alone_changes_no_square() -> None:
    before, regions, unit = _frame(tuple(BEFORE))
    brighter = np.clip(before.astype(np.int16) + 15, 0, 255).astype(np.uint8)
    assert not any(changed_squares(square_grey(before), square_grey(brighter), regions, unit))


def test_a_square_outside_the_image_counts_as_changed() -> None:
    before, regions, unit = _frame(tuple(BEFORE))
    away = (*regions[:-1], regions[-1] + 5000.0)
    grey = square_grey(before)
    flags = changed_squares(grey, grey, away, unit)
    assert flags[-1] and not any(flags[:-1])


def test_threshold_comes_from_the_config() -> None:
    before, regions, unit = _frame(tuple(BEFORE))
    after, _, _ = _frame(tuple(AFTER))
    deaf = ChangeConfig(changed_pebbles=1e6)
    assert not any(changed_squares(square_grey(before), square_grey(after), regions, unit, deaf))
    assert config_from_dict({"change": {"new_scene": 3}}).change.new_scene == 3.0


def test_changed_since_needs_a_reference_and_counts_hidden_squares() -> None:
    before, regions, unit = _frame(tuple(BEFORE))
    after, _, _ = _frame(tuple(AFTER))
    ref, grey = square_grey(before), square_grey(after)
    assert changed_since(None, grey, regions, unit) is None
    assert changed_since(ref[:-8], grey, regions, unit) is None  # another camera mode
    hidden = tuple(sq == 9 for sq in range(NUM_SQUARES))
    flags = changed_since(ref, grey, regions, unit, hidden)
    assert flags is not None
    assert [sq for sq, changed in enumerate(flags) if changed] == [3, 4, 5, 9]


def test_confirmed_reference_keeps_the_old_pixels_of_hidden_squares() -> None:
    before, regions, unit = _frame(tuple(BEFORE))
    after, _, _ = _frame(tuple(AFTER))
    ref, grey = square_grey(before), square_grey(after)
    assert confirmed_reference(None, grey, regions) is grey
    assert confirmed_reference(ref, grey, regions, (False,) * NUM_SQUARES) is grey
    hidden = tuple(sq == 4 for sq in range(NUM_SQUARES))
    merged = confirmed_reference(ref, grey, regions, hidden)
    flags = changed_squares(merged, grey, regions, unit)
    # square 4 still compares with the frame before the move; 3 and 5 were confirmed
    assert [sq for sq, changed in enumerate(flags) if changed] == [4]


def test_new_scene_against_the_frame_before() -> None:
    before, _, _ = _frame(tuple(BEFORE))
    other, _ = render_scene(BEFORE, (1, 1), seed=9, scene_seed=41, size=(640, 480))
    thumb = thumbnail(before)
    assert thumb.shape == (120, 160) and thumb.dtype == np.float32
    assert thumbnail(before, ChangeConfig(thumb_width=80)).shape == (60, 80)
    assert scene_change(None, thumb) == float("inf") and is_new_scene(None, thumb)
    assert scene_change(thumb[:-1], thumb) == float("inf")
    rng = np.random.default_rng(0)
    noisy = np.clip(before + rng.normal(0, 3, before.shape), 0, 255).astype(np.uint8)
    assert scene_change(thumb, thumbnail(noisy)) < 1.0
    assert not is_new_scene(thumb, thumbnail(noisy))
    assert is_new_scene(thumb, thumbnail(other))
    assert scene_change(thumb, thumbnail(other)) == pytest.approx(
        float(np.abs(thumbnail(other) - thumb).mean())
    )


def _arm(
    image: np.ndarray, regions: tuple[np.ndarray, ...], colour: tuple[int, int, int]
) -> np.ndarray:
    """A flat arm from the bottom edge of the frame onto the middle of the board."""
    import cv2

    out = image.copy()
    x, y = (int(v) for v in regions[3].mean(axis=0))
    h = out.shape[0]
    cv2.line(out, (x, h), (x, y), colour, 30)
    cv2.circle(out, (x, y), 22, colour, -1)
    return out


def intrusion_cover(
    reference: np.ndarray | None, image: np.ndarray, regions: Any, unit: float
) -> tuple[float, ...] | None:
    """Share of each region under an intrusion (None without a reference)."""
    found = intrusion_mask(reference, image, regions, unit)
    return None if found is None else mask_cover(*found, regions)


def test_an_arm_reaching_in_from_beyond_the_board_is_an_intrusion() -> None:
    """Colour-free: the same arm on a skin-coloured floor is found by what changed."""
    before, regions, unit = _frame(tuple(BEFORE))
    floor = tuple(int(v) for v in np.median(before.reshape(-1, 3), axis=0))
    arm = _arm(before, regions, (floor[0] - 40, floor[1] - 30, floor[2] - 25))
    cover = intrusion_cover(before, arm, regions, unit)
    assert cover is not None and cover[3] > 0.2
    assert cover[0] == cover[6] == 0.0  # the mandarin squares are far from the arm


def test_a_move_and_a_brightness_change_are_no_intrusion() -> None:
    before, regions, unit = _frame(tuple(BEFORE))
    after, _, _ = _frame(tuple(AFTER))
    assert intrusion_cover(before, after, regions, unit) == (0.0,) * 12
    darker = (before.astype(np.int16) * 0.9).astype(np.uint8)
    assert not any(intrusion_cover(before, darker, regions, unit) or (1,))
    assert intrusion_cover(None, before, regions, unit) is None

"""How much of each square changed, in pebble areas: what a move did to each square."""

from __future__ import annotations

import functools
from typing import Any

import cv2
import numpy as np
import pytest

from engine.board import NUM_SQUARES
from vision.change import (
    canvas_mask,
    canvas_squares,
    change_canvas,
    confirmed_canvas,
    square_changes,
)
from vision.config import ChangeConfig
from vision.locate import Outline, outline_from_corners
from vision.synth import Piece, rearranged, render_scene, scene_depth

SCENE = 40
BEFORE = [0, 3, 0, 1, 5, 2, 1, 0, 7, 0, 2, 4]
# square 4 picked up (5) and sown into 5, 6, 7, 8, 9: square 3 untouched
CLEARED = [sq == 4 for sq in range(NUM_SQUARES)]
ADDED = [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0]
AFTER = [0, 3, 0, 1, 0, 3, 2, 1, 8, 1, 2, 4]


@functools.lru_cache(maxsize=2)
def _layouts() -> tuple[tuple[Piece, ...], tuple[Piece, ...]]:
    depth = scene_depth(SCENE)
    rng = np.random.default_rng(3)
    first = rearranged((), [False] * NUM_SQUARES, BEFORE, rng, depth)
    return first, rearranged(first, CLEARED, ADDED, rng, depth)


@functools.lru_cache(maxsize=4)
def _frame(after: bool, shadow: bool = False) -> tuple[np.ndarray, Outline]:
    counts = AFTER if after else BEFORE
    placed = _layouts()[after]
    image, truth = render_scene(
        counts, (1, 1), seed=9, scene_seed=SCENE, size=(640, 480), placed=placed, shadow=shadow
    )
    outline = outline_from_corners(np.array(truth["corners"]), truth["conditions"]["arc_depth"])
    image.setflags(write=False)
    return image, outline


def _areas(before: np.ndarray, after: np.ndarray, outline: Outline, **kw: object) -> list[float]:
    ref = change_canvas(before, outline)
    now = change_canvas(after, outline)
    areas = changed_areas(ref, now, outline.arc_depth, **kw)  # type: ignore[arg-type]
    assert areas is not None
    return [-1.0 if a is None else a for a in areas]


def changed_areas(*args: Any, **kw: Any) -> tuple[float | None, ...] | None:
    """Each square's changed area in pebble areas, None where it was hidden."""
    changes = square_changes(*args, **kw)
    if changes is None:
        return None
    return tuple(None if c is None else c.area for c in changes)


def test_a_persistent_arrangement_keeps_every_untouched_piece() -> None:
    first, second = _layouts()
    kept = [p for p in first if p.square not in (4, 5, 6, 7, 8, 9)]
    assert all(p in second for p in kept)  # squares the move never reached: as they lay
    assert [sum(p.square == sq for p in second) for sq in range(NUM_SQUARES)] == AFTER
    assert not any(p.square == 4 for p in second)
    again, _ = render_scene(BEFORE, (1, 1), seed=9, scene_seed=SCENE, size=(320, 240), placed=first)
    other, _ = render_scene(BEFORE, (1, 1), seed=9, scene_seed=SCENE, size=(320, 240), placed=first)
    assert np.array_equal(again, other)


def test_each_square_shows_what_the_move_did_to_it() -> None:
    before, outline = _frame(False)
    after, _ = _frame(True)
    areas = _areas(before, after, outline)
    untouched = [sq for sq in range(NUM_SQUARES) if not CLEARED[sq] and not ADDED[sq]]
    assert all(areas[sq] < 0.25 for sq in untouched), areas
    assert all(0.5 < areas[sq] < 3.0 for sq in range(NUM_SQUARES) if ADDED[sq]), areas
    assert areas[4] > 3.0  # a pile of five taken away
    assert max(_areas(before, before, outline)) == 0.0


def test_light_drift_and_a_shaken_camera_change_no_square() -> None:
    before, outline = _frame(False)
    dimmer = (before.astype(np.float32) * 0.9).astype(np.uint8)
    assert max(_areas(before, dimmer, outline)) < 0.25
    shaken = np.roll(before, (2, 1), axis=(0, 1))
    assert max(_areas(before, shaken, outline)) < 0.25


def test_a_square_half_in_a_shadow_is_matched_by_its_pixels_not_its_median() -> None:
    before, outline = _frame(False, shadow=True)
    brighter = np.clip(before.astype(np.float32) * 1.04, 0, 255).astype(np.uint8)
    assert max(_areas(before, brighter, outline)) < 0.25


def test_hidden_squares_and_missing_references_give_no_area() -> None:
    before, outline = _frame(False)
    after, _ = _frame(True)
    hidden = tuple(sq == 4 for sq in range(NUM_SQUARES))
    areas = changed_areas(
        change_canvas(before, outline), change_canvas(after, outline), outline.arc_depth, hidden
    )
    assert areas is not None and areas[4] is None and areas[5] is not None
    now = change_canvas(after, outline)
    assert changed_areas(None, now, outline.arc_depth) is None
    assert changed_areas(now[:-2], now, outline.arc_depth) is None  # another camera mode
    deaf = ChangeConfig(area_step=400.0, area_least=400.0, area_chroma=0.0)
    assert max(_areas(before, after, outline, cfg=deaf)) == 0.0


def test_a_confirmed_canvas_keeps_the_reference_under_a_hand() -> None:
    before, outline = _frame(False)
    after, _ = _frame(True)
    ref, now = change_canvas(before, outline), change_canvas(after, outline)
    assert confirmed_canvas(None, now, outline.arc_depth) is now
    hidden = tuple(sq == 4 for sq in range(NUM_SQUARES))
    merged = confirmed_canvas(ref, now, outline.arc_depth, hidden)
    areas = changed_areas(merged, now, outline.arc_depth)
    assert areas is not None
    # square 4 still compares with the frame before the move; the others were confirmed
    assert areas[4] > 3.0 and max(a for sq, a in enumerate(areas) if sq != 4) == 0.0  # type: ignore[type-var]


def test_the_pebbles_of_a_pile_left_in_place_stay_and_those_of_one_taken_up_do_not() -> None:
    from vision import read_board

    before, outline = _frame(False)
    after, _ = _frame(True)
    pebbles = read_board(before, outline=outline, gate=False).pebbles
    assert pebbles is not None
    ref, now = change_canvas(before, outline), change_canvas(after, outline)
    changes = square_changes(ref, now, outline.arc_depth, pebbles=pebbles)
    assert changes is not None
    kept = {sq: c.kept for sq, c in enumerate(changes) if c is not None and c.kept is not None}
    assert kept[4] < 0.5  # the pile of five taken up
    assert all(kept[sq] > 0.8 for sq in (1, 3, 8, 11))  # untouched piles
    assert kept[8] > 0.8 and changes[8] is not None and changes[8].area > 0.5  # one dropped on
    assert square_changes(ref, now, outline.arc_depth)[4].kept is None  # type: ignore[index,union-attr]


def test_the_arm_can_reach_somewhere_else_in_each_frame() -> None:
    kw = {"seed": 9, "scene_seed": SCENE, "size": (320, 240), "hand": True}
    one, _ = render_scene(BEFORE, (1, 1), hand_seed=1, **kw)  # type: ignore[arg-type]
    two, _ = render_scene(BEFORE, (1, 1), hand_seed=2, **kw)  # type: ignore[arg-type]
    again, _ = render_scene(BEFORE, (1, 1), hand_seed=1, **kw)  # type: ignore[arg-type]
    assert np.array_equal(one, again) and not np.array_equal(one, two)


def test_a_pile_of_pieces_a_seventeenth_of_a_square_wide_shows_going() -> None:
    """Shells or beans on a big board: a pile of five taken up must stand out of the
    squares that got one such piece (at 80 px a square the two looked alike)."""
    size = 0.06
    for scene in (41, 43):
        depth = scene_depth(scene)
        rng = np.random.default_rng(3)
        first = rearranged((), [False] * NUM_SQUARES, BEFORE, rng, depth, piece_size=size)
        second = rearranged(first, CLEARED, ADDED, rng, depth, piece_size=size)
        frames = []
        for counts, placed in ((BEFORE, first), (AFTER, second)):
            image, truth = render_scene(
                counts, (1, 1), seed=9, scene_seed=scene, placed=placed, pebble_size=size
            )
            frames.append(image)
        outline = outline_from_corners(np.array(truth["corners"]), truth["conditions"]["arc_depth"])
        areas = _areas(frames[0], frames[1], outline)
        dropped = max(areas[sq] for sq in range(NUM_SQUARES) if ADDED[sq])
        assert areas[4] > 1.5 * dropped, (scene, areas)
        assert max(areas[sq] for sq in (1, 3, 10, 11)) < 0.1, (scene, areas)


def _gravel(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """A grey ground of light and dark grains a few pixels wide (gravel, terrazzo)."""
    grains = rng.uniform(50, 210, (shape[0] // 3 + 1, shape[1] // 3 + 1))
    grey = np.kron(grains, np.ones((3, 3)))[: shape[0], : shape[1]]
    return np.repeat(grey[..., None], 3, axis=2).astype(np.uint8)


def test_coloured_pieces_on_grey_grains_show_by_their_colour() -> None:
    import cv2

    from vision.change import canvas_squares

    depth = 0.95
    cfg = ChangeConfig()
    labels = canvas_squares(depth, cfg.area_px)
    rng = np.random.default_rng(5)
    before = _gravel(rng, labels.shape)
    after = before.copy()
    ys, xs = np.nonzero(labels == 3)
    cy, cx = int(ys.mean()), int(xs.mean())
    radius = round(cfg.pebble_share * cfg.area_px / 2)
    for dx in (-2 * radius, 0, 2 * radius):  # three beige shells, as bright as the grains
        cv2.circle(after, (cx + dx, cy), radius, (110, 140, 165), -1)
    colour = _areas_of(before, after, depth, cfg)
    grey_only = _areas_of(before, after, depth, ChangeConfig(area_chroma=0.0))
    assert colour[3] > 2.0 and grey_only[3] < 0.5 * colour[3], (colour[3], grey_only[3])
    assert max(a for sq, a in enumerate(colour) if sq != 3) == 0.0
    # the same ground, lit a little differently: no colour of its own to change
    dimmer = (before.astype(np.float32) * 0.85).astype(np.uint8)
    assert max(_areas_of(before, dimmer, depth, cfg)) < 0.25


def _areas_of(
    before: np.ndarray, after: np.ndarray, depth: float, cfg: ChangeConfig
) -> list[float]:
    areas = changed_areas(before, after, depth, cfg=cfg)
    assert areas is not None
    return [0.0 if a is None else a for a in areas]


@pytest.mark.parametrize("width", [600, 616, 625])
def test_an_unmoved_camera_reads_no_shake_and_a_moved_one_its_shift(width: int) -> None:
    # 616 px (the coarse canvas) pads to an odd DFT size, where phase correlation
    # alone read identical frames as half a pixel apart and realigned every frame
    from vision.change import _shake

    before, outline = _frame(False)
    coarse = cv2.resize(change_canvas(before, outline), (width, 208), interpolation=cv2.INTER_AREA)
    ref = coarse.astype(np.float32)
    assert _shake(ref, ref.copy(), 4.0) is None
    moved = np.asarray(
        cv2.warpAffine(
            ref, np.float32([[1, 0, 2], [0, 1, 1]]), (width, 208), borderMode=cv2.BORDER_REPLICATE
        )
    )
    warp = _shake(ref, moved, 4.0)
    assert warp is not None
    assert abs(warp[0, 2] + 2.0) < 0.3 and abs(warp[1, 2] + 1.0) < 0.3


def _part_of(square: int, share: float, outline: Outline) -> np.ndarray:
    """A change-canvas mask over the left ``share`` of ``square`` (an arm reaching in)."""
    labels = canvas_squares(round(outline.arc_depth, 3), ChangeConfig().area_px)
    cols = np.nonzero((labels == square).any(axis=0))[0]
    cut = cols[0] + share * (cols[-1] - cols[0] + 1)
    xs = np.arange(labels.shape[1])[None, :]
    return ((labels == square) & (xs < cut)).astype(np.uint8)


def test_a_square_an_arm_partly_hides_is_measured_on_its_clear_part() -> None:
    before, outline = _frame(False)
    after, _ = _frame(True)
    ref, now = change_canvas(before, outline), change_canvas(after, outline)
    depth = outline.arc_depth
    arm = _part_of(3, 0.3, outline) | _part_of(4, 0.3, outline)
    # the arm itself changes what it covers: skin over square 3, which the move left alone
    now = np.where(arm[..., None] > 0, np.uint8([110, 150, 205]), now).astype(np.uint8)
    hidden = [sq in (3, 4) for sq in range(NUM_SQUARES)]
    seen = changed_areas(ref, now, depth, hidden, masked=arm)
    assert seen is not None and seen[3] is not None and seen[4] is not None
    assert seen[3] < 0.25  # untouched: the skin under the mask is not counted
    assert seen[4] > 3.0  # the pile of five taken away, scaled to the whole square
    blind = changed_areas(ref, now, depth, [False] * NUM_SQUARES)
    assert blind is not None and blind[3] is not None and blind[3] > 1.0  # (without the mask)
    # a square mostly under the arm, or hidden with no mask of the arm, says nothing
    most = _part_of(3, 0.6, outline)
    assert changed_areas(ref, now, depth, hidden, masked=most)[3] is None  # type: ignore[index]
    assert changed_areas(ref, now, depth, hidden)[3] is None  # type: ignore[index]


def test_a_mask_of_the_frame_lands_on_the_squares_it_covers() -> None:
    _, outline = _frame(False)
    scale = 0.5
    frame_mask = np.zeros((240, 320), np.uint8)
    cv2.fillPoly(frame_mask, [np.rint(outline.regions[4] * scale).astype(np.int32)], 1)
    on_canvas = canvas_mask(frame_mask, scale, outline)
    labels = canvas_squares(round(outline.arc_depth, 3), ChangeConfig().area_px)
    assert on_canvas.shape == labels.shape
    assert on_canvas[labels == 4].mean() > 0.9
    assert on_canvas[(labels >= 0) & (labels != 4)].mean() < 0.02

"""The observer's frame policy: a bumped camera is noticed, a moving scene is not counted."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from companion.appliance.observe import VisionObserver
from device.ports import Frame
from vision.config import GateConfig, VisionConfig
from vision.gate import assess_frame, assess_hand
from vision.locate import outline_from_corners
from vision.synth import render_scene

OPENING = [0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5]


@pytest.fixture(scope="module")
def opening() -> NDArray[np.uint8]:
    return render_scene(OPENING, (1, 1), seed=4, size=(960, 720))[0]


def frame(image: NDArray[np.uint8], seq: int) -> Frame:
    return Frame(image, float(seq), seq, f"f{seq}.png")


def test_a_bumped_camera_is_noticed_and_the_old_reference_dropped(
    opening: NDArray[np.uint8],
) -> None:
    observer = VisionObserver(stills=True)
    first = observer(frame(opening, 0))
    assert first.fit and first.changed is None  # nothing to compare with yet
    observer.confirmed()
    again = observer(frame(opening, 1))
    assert again.changed is not None and not any(again.changed)
    shift = np.float32([[1, 0, 60], [0, 1, 45]])
    bumped = cv2.warpAffine(opening, shift, (opening.shape[1], opening.shape[0]))
    after = observer(frame(bumped, 2))
    assert observer.moves_noticed == 1
    # compared with the old, misaligned frame every square would look changed
    assert after.changed is None


def test_a_live_frame_with_motion_in_it_is_not_counted(opening: NDArray[np.uint8]) -> None:
    observer = VisionObserver(stills=False)
    assert observer(frame(opening, 0)).fit
    moving = opening.copy()
    h, w = moving.shape[:2]
    cv2.rectangle(moving, (w // 8, h // 4), (7 * w // 8, 3 * h // 4), (30, 60, 200), -1)
    seen = observer(frame(moving, 1))
    assert not seen.fit and seen.reading is None
    assert seen.reason is not None and "motion" in seen.reason
    still = observer(frame(moving, 2))  # the scene stopped changing: counted again
    assert still.reason is None or "motion" not in still.reason


def test_a_still_whose_board_is_not_found_is_still_a_photo_of_a_settled_scene() -> None:
    """The referee must count it as a position nobody saw (and ask about its move later)."""
    blank = np.full((480, 640, 3), 128, np.uint8)
    lost = VisionObserver(stills=True)(frame(blank, 0))
    assert not lost.fit and not lost.board_found and lost.still
    assert not VisionObserver(stills=False)(frame(blank, 0)).still


#: the pieces of the arm scenes: the same before the arm and under it
ARM_COUNTS = [0, 4, 6, 5, 3, 5, 0, 2, 5, 7, 5, 4]


def _arm_scene() -> tuple[NDArray[np.uint8], NDArray[np.uint8], Any]:
    """The board without an arm, the same board with an arm over squares 4 and 5 (4 lies
    mostly under it, 5 only at its edge), and the board's outline."""
    clear = render_scene(ARM_COUNTS, (1, 1), seed=31, ground="concrete")[0]
    arm, truth = render_scene(ARM_COUNTS, (1, 1), seed=31, ground="concrete", hand=True)
    board = outline_from_corners(np.array(truth["corners"]), truth["conditions"]["arc_depth"])
    return clear, arm, board


def _hidden_and_measured(observer: VisionObserver) -> tuple[list[int], list[int], list[float]]:
    """The arm scene through ``observer`` (the clear frame confirmed first): the squares
    the arm photo hid, those of them measured anyway, and every area measured."""
    clear, arm, _ = _arm_scene()
    first = observer(frame(clear, 0))
    assert first.reading is not None and not first.partial
    observer.confirmed()
    seen = observer(frame(arm, 1))
    assert seen.partial and seen.hidden is not None and seen.areas is not None
    hidden = [sq for sq, h in enumerate(seen.hidden) if h]
    measured = [sq for sq in hidden if seen.areas[sq] is not None]
    return hidden, measured, [a for a in seen.areas if a is not None]


def test_a_square_an_arm_only_partly_hides_still_shows_its_change() -> None:
    # 5's clear part is measured (nothing moved: no change), 4 says nothing
    hidden, measured, areas = _hidden_and_measured(VisionObserver(stills=True))
    assert hidden == [4, 5] and measured == [5]
    assert all(a < 0.25 for a in areas)


def test_an_arm_only_the_change_test_finds_is_masked_too() -> None:
    # a floor the skin test cannot use (here: the skin test off): the arm is the changed
    # blob reaching in from beyond the board, and it masks the squares it partly hides
    blind = replace(VisionConfig(), gate=replace(GateConfig(), skin_frac=1.0))
    _, arm, board = _arm_scene()
    assert not assess_hand(assess_frame(arm), arm, board, blind.gate).hand  # skin test: none
    hidden, measured, areas = _hidden_and_measured(VisionObserver(blind, stills=True))
    assert hidden == [4, 5] and measured == [5]
    assert all(a < 0.25 for a in areas)


def test_a_live_frame_with_a_hand_at_rest_is_read_but_for_the_squares_it_hides() -> None:
    """A live camera's frame whose arm has not moved since the frame before is read as a
    photo with an arm is (the referee judges a hand at rest once, as a witness of the
    board between two moves)."""
    clear, arm, _ = _arm_scene()
    live = VisionObserver(stills=False)
    for t in range(2):
        assert live(frame(clear, t)).fit
    live.confirmed()
    live(frame(arm, 2))  # (the arm comes in)
    rests = live(frame(arm, 3))
    assert rests.fit and rests.partial and not rests.still
    assert rests.hidden is not None and [sq for sq, h in enumerate(rests.hidden) if h] == [4, 5]
    assert rests.reading is not None and rests.reason is not None

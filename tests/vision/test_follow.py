"""Given corners follow a knocked camera (``vision.locate.follow``): a fixed camera's
frames never move them, a moved view carries them along once several frames agree."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.errors import ImagePairError
from vision.locate.follow import (
    LEAST_MATCH,
    MOVE_FRAMES,
    TURNS,
    VIEW_WIDTH,
    ViewFollower,
    camera_view,
    carried,
    view_shift,
    view_warp,
)
from vision.synth import render_scene

OPENING = [0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5]


def _frames(seed: int, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    """``n`` frames of one fixed camera over a game (pieces moved, an arm in one), and
    the board's corners."""
    frames = []
    corners = np.zeros((4, 2))
    for i in range(n):
        counts = OPENING if i == 0 else list(np.roll(OPENING, i))
        image, truth = render_scene(
            counts, (1, 1), seed=seed * 100 + i, scene_seed=seed, hand=i == 2, size=(640, 480)
        )
        frames.append(image)
        corners = np.array(truth["corners"], np.float64)
    return frames, corners


def _knocked(
    image: np.ndarray, dx: float, dy: float, degrees: float
) -> tuple[np.ndarray, np.ndarray]:
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    m[:, 2] += (dx, dy)
    return cv2.warpAffine(image, m, (w, h), borderMode=cv2.BORDER_REPLICATE), m


@pytest.mark.parametrize("seed", [3, 7])
def test_a_fixed_camera_s_frames_never_move_the_corners(seed: int) -> None:
    frames, _ = _frames(seed, 6)
    follower = ViewFollower(camera_view(frames[0]))
    assert all(follower.step(f) is None for f in frames[1:] * 2)


@pytest.mark.parametrize(("dx", "dy", "degrees"), [(20.0, -8.0, 0.0), (-30.0, 12.0, 1.0)])
def test_a_knocked_camera_carries_the_corners_once_frames_agree(
    dx: float, dy: float, degrees: float
) -> None:
    frames, corners = _frames(3, 5)
    follower = ViewFollower(camera_view(frames[0]))
    warps = []
    for frame in frames[1 : 1 + MOVE_FRAMES]:
        moved, m = _knocked(frame, dx, dy, degrees)
        warps.append(follower.step(moved))
    assert all(w is None for w in warps[:-1])  # one frame is no move yet
    warp = warps[-1]
    assert warp is not None
    truth = corners @ m[:, :2].T + m[:, 2]
    assert np.max(np.linalg.norm(carried(corners, warp) - truth, axis=1)) < 1.5


def test_one_jolted_frame_is_no_move_and_another_size_says_nothing() -> None:
    frames, _ = _frames(3, 5)
    follower = ViewFollower(camera_view(frames[0]))
    jolted, _ = _knocked(frames[1], 25.0, 0.0, 0.0)
    assert follower.step(jolted) is None
    assert follower.step(frames[2]) is None  # back where it was: the run is broken
    knocked = [_knocked(f, 25.0, 0.0, 0.0)[0] for f in frames[2:5]]
    assert follower.step(knocked[0]) is None and follower.step(knocked[1]) is None
    assert follower.step(cv2.resize(frames[4], (320, 240))) is None  # breaks the run too
    assert follower.step(knocked[2]) is None  # (one of three again)
    assert follower.step(knocked[0]) is None
    assert follower.step(knocked[1]) is not None
    strip = np.zeros((16, 5000, 3), np.uint8)  # (a strip's view is a line: no phase)
    assert ViewFollower(camera_view(strip)).step(strip) is None
    with pytest.raises(ImagePairError, match="another size"):
        view_shift(camera_view(frames[0]), cv2.resize(frames[4], (320, 200)))


def test_the_shift_is_the_content_s_move_in_frame_pixels() -> None:
    frames, _ = _frames(7, 1)
    moved, _ = _knocked(frames[0], 30.0, -12.0, 0.0)
    shift, _ = view_shift(camera_view(frames[0]), moved)
    assert abs(shift.dx - 30.0) < 2.0 and abs(shift.dy + 12.0) < 2.0 and shift.response > 0.2


def test_the_aligned_views_must_match_before_corners_follow() -> None:
    # a shift the phase correlation got wrong (a periodic ground, a turned camera) leaves
    # the views unlike each other once aligned: that alignment is not followed
    frames, _ = _frames(3, 2)
    other, _ = _frames(7, 1)
    reference = camera_view(frames[0])
    moved, _ = _knocked(frames[1], 20.0, -8.0, 0.5)
    shift, view = view_shift(reference, moved)
    scale = frames[0].shape[1] / VIEW_WIDTH
    _, match = view_warp(reference, view, shift, scale)
    assert match >= LEAST_MATCH
    _, unlike = view_warp(reference, camera_view(other[0]), shift, scale)
    assert unlike < LEAST_MATCH


def test_the_bench_follows_knocks_on_games_and_singles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import sys

    from bench import follow

    game = tmp_path / "game"
    game.mkdir()
    frames, corners = _frames(3, 9)
    for i, image in enumerate(frames):
        cv2.imwrite(str(game / f"frame_{i:03d}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        (game / f"frame_{i:03d}.json").write_text(json.dumps({"corners": corners.tolist()}))
    shots = tmp_path / "singles"
    shots.mkdir()
    cv2.imwrite(str(shots / "img_00000.jpg"), frames[0], [cv2.IMWRITE_JPEG_QUALITY, 92])
    record = {"corners": corners.tolist(), "conditions": {"ground": "synth"}}
    (shots / "img_00000.json").write_text(json.dumps(record))
    monkeypatch.setattr(sys, "argv", ["follow.py", str(game), "--singles", str(shots)])
    assert follow.main() == 0
    out = capsys.readouterr().out
    assert "1 games, 8 frames of a fixed camera: 0 false follows" in out
    assert "1 of 1 followed" in out and "synth: 1 of 1" in out


def _bricks() -> np.ndarray:
    """A periodic ground: bricks in stretcher bond, mortar lines, a little grain."""
    rng = np.random.default_rng(1)
    h, w = 960, 1280
    image = np.full((h, w, 3), (60, 70, 150), np.float32) + rng.normal(0, 6, (h, w, 3))
    for row, y in enumerate(range(0, h, 28)):
        cv2.line(image, (0, y), (w, y), (170, 170, 170), 3)
        for x in range(-32 * (row % 2), w, 64):
            cv2.line(image, (x, y), (x, y + 28), (170, 170, 170), 3)
    return np.asarray(np.clip(image, 0, 255), np.uint8)


def test_a_turn_that_hides_the_shift_over_bricks_is_undone_first() -> None:
    bricks = _bricks()
    knocked, m = _knocked(bricks, 30.0, 10.0, 2.0)
    reference = camera_view(bricks)
    plain, _ = view_shift(reference, knocked)
    turned, _ = view_shift(reference, knocked, TURNS)
    assert abs(turned.degrees - 2.0) <= 0.5 and turned.response > 2 * plain.response
    follower = ViewFollower(reference)
    rng = np.random.default_rng(2)
    warp = None
    for _ in range(MOVE_FRAMES):
        noisy = np.clip(knocked + rng.normal(0.0, 3.0, knocked.shape), 0, 255).astype(np.uint8)
        warp = follower.step(noisy)
    assert warp is not None
    corners = np.array([[300.0, 700.0], [1000.0, 700.0], [1000.0, 300.0], [300.0, 300.0]])
    truth = corners @ m[:, :2].T + m[:, 2]
    assert np.max(np.linalg.norm(carried(corners, warp) - truth, axis=1)) < 1.5


def test_a_move_not_followed_is_measured_again_only_after_a_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import vision.locate.follow as follow

    frames, _ = _frames(3, 2)
    knocked, _ = _knocked(frames[1], 25.0, 0.0, 0.0)
    follower = ViewFollower(camera_view(frames[0]))
    monkeypatch.setattr(follow, "LEAST_MATCH", 2.0)  # no alignment can match this well
    assert all(follower.step(knocked) is None for _ in range(MOVE_FRAMES))
    monkeypatch.setattr(follow, "LEAST_MATCH", LEAST_MATCH)
    # resting: the same move is not measured (a search each frame) for a while
    assert all(follower.step(knocked) is None for _ in range(follow.RETRY_AFTER + MOVE_FRAMES - 1))
    assert follower.step(knocked) is not None

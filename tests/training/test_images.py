"""The bpy-free image steps: the line mask and the camera effects after the render."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from PIL import Image

from tests.training.conftest import NEUTRAL_POST
from training.render.geometry import make_board
from training.render.lines import draw_lines
from training.render.post import apply_post

LINE = {
    "kind": "tape",
    "colour": "blue",
    "rgb": [0.3, 0.5, 0.9],
    "width_mm": 20.0,
    "width_variation": 0.0,
    "wobble_mm": 0.0,
    "opacity": 1.0,
    "gaps_per_m": 0.0,
    "overshoot_mm": 0.0,
    "retraced_strokes": 0,
    "rubbed_out": 0.0,
    "smudges": 0,
    "ghost_strokes": 0,
    "grain": 0.05,
    "seed": 3,
}


def _at(mask, x: float, y: float) -> float:  # type: ignore[no-untyped-def]
    col = int((x - mask.x0) / mask.m_per_px)
    row = int((mask.y1 - y) / mask.m_per_px)
    return float(mask.mask[row, col])


def test_line_mask_covers_the_lines_and_not_the_squares() -> None:
    board = make_board(0.3, 1.0, random.Random(1), irregularity=0.0)
    m = draw_lines(board, LINE, 0.3)
    assert m.mask.min() >= 0 and m.mask.max() <= 1
    sw, se = board.corners[:2]
    mid_south = ((sw[0] + se[0]) / 2 + 0.05, sw[1])
    assert _at(m, *mid_south) > 0.9
    c = np.asarray(board.regions["north_1"]).mean(axis=0)
    assert _at(m, float(c[0]), float(c[1])) < 0.05
    assert (m.x1 - m.x0) > 2.5 * 0.3 * 2  # the semicircles are inside the texture


def test_chalk_effects_are_deterministic_by_seed() -> None:
    board = make_board(0.25, 1.0, random.Random(2))
    chalk = LINE | {
        "kind": "chalk",
        "wobble_mm": 5.0,
        "gaps_per_m": 1.5,
        "smudges": 3,
        "retraced_strokes": 2,
        "rubbed_out": 0.4,
        "grain": 0.6,
    }
    a, b = draw_lines(board, chalk, 0.25), draw_lines(board, chalk, 0.25)
    assert np.array_equal(a.mask, b.mask)
    c = draw_lines(board, chalk | {"seed": 4}, 0.25)
    assert not np.array_equal(a.mask, c.mask)


def test_post_keeps_size_and_neutral_settings_keep_the_picture(tmp_path: Path) -> None:
    yy, xx = np.mgrid[0:48, 0:64]
    src = np.stack([xx * 3 + 20, yy * 4 + 20, xx + yy + 60], axis=-1).astype(np.uint8)
    Image.fromarray(src).save(tmp_path / "a.png")
    neutral = NEUTRAL_POST
    apply_post(tmp_path / "a.png", tmp_path / "a.jpg", neutral, 64)
    out = np.asarray(Image.open(tmp_path / "a.jpg"), dtype=float)
    assert out.shape == src.shape
    assert np.abs(out - src).mean() < 3  # JPEG only
    warm = neutral | {"wb_gain": [1.2, 1.0, 0.8], "noise_sigma": 6.0}
    apply_post(tmp_path / "a.png", tmp_path / "b.jpg", warm, 64)
    b = np.asarray(Image.open(tmp_path / "b.jpg"), dtype=float)
    assert b[..., 0].mean() > out[..., 0].mean() + 10 and b[..., 2].mean() < out[..., 2].mean()

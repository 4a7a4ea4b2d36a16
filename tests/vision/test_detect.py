"""The learned counter's plumbing: model file, input normalisation, region sums."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.board import NUM_SQUARES
from vision import detect


def test_shipped_model_is_small_and_loads_with_opencv() -> None:
    path = Path(detect.MODEL_PATH)
    assert path.exists() and path.stat().st_size < 1_000_000
    w, h, _ = detect.canvas()
    rect = np.full((h, w, 3), 90, np.uint8)
    out = detect.density(rect)
    assert out.shape == (2, h // detect.STRIDE, w // detect.STRIDE)
    assert np.isfinite(out).all()
    # featureless ground holds no pebbles
    small, big = detect.region_counts(out, detect.region_cells(0.95))
    assert small.sum() < 0.5 and big.sum() < 0.5


def test_prepare_removes_exposure_and_white_balance() -> None:
    rng = np.random.default_rng(0)
    w, h, _ = detect.canvas()
    base = rng.integers(60, 160, (h, w, 3)).astype(np.float32)
    brighter = np.clip(base * 1.2 + np.array([10, 0, -5]), 0, 255)
    a = detect.prepare(base.astype(np.uint8))
    b = detect.prepare(brighter.astype(np.uint8))
    assert a.shape == (1, 3, h, w)
    assert abs(float(a.mean())) < 1e-3 and abs(float(b.mean())) < 1e-3
    assert np.corrcoef(a.ravel(), b.ravel())[0, 1] > 0.99


def test_region_cells_cover_the_twelve_regions() -> None:
    lab = detect.region_cells(0.95)
    areas = np.bincount(lab[lab >= 0], minlength=NUM_SQUARES)
    citizen = np.delete(areas, [0, 6])
    # a citizen square is (PX/STRIDE)^2 cells; the semicircles pi/4*2*0.95 of that
    cell = (detect.PX / detect.STRIDE) ** 2
    assert np.allclose(citizen, cell, rtol=0.15)
    assert np.allclose(areas[[0, 6]], np.pi / 2 * 0.95 * cell, rtol=0.15)


def test_region_sums_follow_the_centre_rule() -> None:
    """Unit masses at known board points land in the square holding the point."""
    w, h, a = detect.canvas()
    dens = np.zeros((2, h // detect.STRIDE, w // detect.STRIDE), np.float32)
    points = {1: (0.5, 0.5), 3: (2.9, 0.1), 9: (2.5, 1.5), 0: (-0.5, 1.0)}
    for board_xy in points.values():
        x, y, _ = a @ np.array([*board_xy, 1.0]) / detect.STRIDE
        dens[0, round(y), round(x)] += 1.0
    dens[1, round((a @ [5.5, 1.0, 1.0])[1] / 4), round((a @ [5.5, 1.0, 1.0])[0] / 4)] = 1.0
    small, big = detect.region_counts(dens, detect.region_cells(0.95))
    expect = np.zeros(NUM_SQUARES)
    expect[list(points)] = 1.0
    assert np.allclose(small, expect)
    assert big[6] == 1.0 and big.sum() == 1.0

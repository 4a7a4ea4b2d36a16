"""Strip divider search and edge-suppressed ridges (board localisation internals)."""

from __future__ import annotations

import cv2
import numpy as np

from vision.config import LocateConfig
from vision.geometry import offgrid_with_tangents, project
from vision.locate import evidence_maps, ridge_map
from vision.locate.strips import strip_batch


def _board_sketch() -> np.ndarray:
    """A flat 2x5 grid of light strokes on mid-grey ground, 480x360."""
    img = np.full((360, 480, 3), 110, np.uint8)
    x0, x1, y0, y1 = 90, 390, 140, 260
    for y in (y0, (y0 + y1) // 2, y1):
        cv2.line(img, (x0, y), (x1, y), (220, 220, 220), 3)
    for k in range(6):
        x = x0 + k * (x1 - x0) // 5
        cv2.line(img, (x, y0), (x, y1), (220, 220, 220), 3)
    return img


def _sketch_maps(cfg: LocateConfig) -> np.ndarray:
    """Evidence maps of the sketched board, as locate builds them."""
    ridge, normal = ridge_map(_board_sketch(), cfg.ridge_sigmas, 0, cfg.edge_suppress)
    sat = np.minimum(ridge / 8.0, 1.0).astype(np.float32)
    return evidence_maps(sat, normal, 5)


def test_strip_search_finds_the_short_dividers() -> None:
    cfg = LocateConfig()
    maps = _sketch_maps(cfg)
    south = np.array([260.0, np.pi / 2])  # (rho, theta) of y = 260
    north = np.array([140.0, np.pi / 2])
    got = strip_batch(maps, [(south, north)], cfg)
    assert len(got) == 1
    _, hcan, divs = got[0]
    xs = project(hcan, np.stack([divs[:, 0], np.zeros(len(divs))], axis=1))[:, 0]
    for k in range(6):
        assert np.min(np.abs(xs - (90 + 60 * k))) < 4.0


def test_edge_suppression_removes_step_edges_but_keeps_lines() -> None:
    img = np.full((200, 200, 3), 80, np.uint8)
    img[:, 100:] = 170  # a shadow border: a step, not a stroke
    img[:, 40:44] = 230  # a chalk stroke
    plain, _ = ridge_map(img, (1.5, 2.5), 0, 0.0)
    supp, _ = ridge_map(img, (1.5, 2.5), 0, 1.0)
    edge_ratio = supp[100, 95:106].max() / supp[100, 40:44].max()
    plain_ratio = plain[100, 95:106].max() / plain[100, 40:44].max()
    assert edge_ratio < 0.5 * plain_ratio


def test_offgrid_tangents_follow_the_template_lines() -> None:
    pts, tan = offgrid_with_tangents(0.25)
    along_x = np.isin(pts[:, 1], (0.5, 1.5)) & (tan[:, 0] == 1.0)
    along_y = np.isin(pts[:, 0], (0.5, 1.5, 2.5, 3.5, 4.5)) & (tan[:, 1] == 1.0)
    assert np.all(along_x | along_y)


def test_batched_strips_match_strips_searched_alone() -> None:
    """Neighbours on the shared canvas must not leak into each other's scores."""
    cfg = LocateConfig()
    maps = _sketch_maps(cfg)
    lines = [np.array([y, np.pi / 2]) for y in (260.0, 200.0, 140.0)]
    pairs = [(lines[0], lines[1]), (lines[1], lines[2]), (lines[0], lines[2])]
    together = strip_batch(maps, pairs, cfg)
    alone = [g for pair in pairs for g in strip_batch(maps, [pair], cfg)]
    assert len(together) == len(alone) == 3
    for (sa, ha, da), (sb, hb, db) in zip(together, alone, strict=True):
        assert sa == sb
        np.testing.assert_array_equal(ha, hb)
        np.testing.assert_array_equal(da, db)

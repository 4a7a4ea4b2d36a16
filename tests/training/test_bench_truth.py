"""bench/vision.py names a render's truth as ``analyze`` names a still's squares."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bench.vision import RING_NAMES, load_truth


def _truth(tmp_path: Path, corners: list[list[float]]) -> Path:
    regions = {
        name: {"count": i, "big": int(name.endswith("mandarin") and name.startswith("west"))}
        for i, name in enumerate(RING_NAMES)
    }
    path = tmp_path / "img_00000.json"
    path.write_text(json.dumps({"corners": corners, "regions": regions}), "utf-8")
    return path


def test_a_board_seen_from_p0s_side_keeps_its_names(tmp_path: Path) -> None:
    corners = [[100.0, 700.0], [1100.0, 690.0], [1000.0, 300.0], [200.0, 310.0]]
    counts, bigs, found = load_truth(_truth(tmp_path, corners))
    assert counts == list(range(12))
    assert bigs[0] == 1 and bigs[6] == 0
    assert np.array_equal(found, corners)


def test_a_board_seen_from_the_far_side_is_named_from_the_photo(tmp_path: Path) -> None:
    # the camera stood on P1's side: P0's south-west corner is at the top right
    corners = [[1000.0, 300.0], [200.0, 310.0], [100.0, 700.0], [1100.0, 690.0]]
    counts, bigs, found = load_truth(_truth(tmp_path, corners))
    assert counts == [6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5]
    assert bigs[6] == 1 and bigs[0] == 0  # the west mandarin is now at the photo's east end
    assert found.tolist() == [[100.0, 700.0], [1100.0, 690.0], [1000.0, 300.0], [200.0, 310.0]]

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


def test_truth_lens_undoes_each_photos_own_lens(tmp_path: Path) -> None:
    import cv2

    from bench.vision import conditions_of, run_dataset
    from training.render.lens import main as bend
    from vision.config import VisionConfig
    from vision.synth import render_scene

    counts = [0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5]
    image, truth = render_scene(counts, (1, 1), seed=11)
    (tmp_path / "src").mkdir()
    cv2.imwrite(str(tmp_path / "src" / "img_00000.png"), image)
    (tmp_path / "src" / "img_00000.json").write_text(json.dumps(truth), "utf-8")
    assert bend([str(tmp_path / "src"), str(tmp_path / "bent"), "--k1", "-0.25"]) == 0
    bent = json.loads((tmp_path / "bent" / "img_00000.json").read_text("utf-8"))
    assert conditions_of(bent)["lens"] == "wide barrel"
    assert conditions_of(truth)["lens"] == "pinhole"
    taken = run_dataset(tmp_path / "bent", VisionConfig(), None)
    undone = run_dataset(tmp_path / "bent", VisionConfig(), None, lens_from_truth=True)
    assert undone.found == 1 and undone.corner_px[0] < 4.0
    assert not taken.found or taken.corner_px[0] > undone.corner_px[0] + 1.0

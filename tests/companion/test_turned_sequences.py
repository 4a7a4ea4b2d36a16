"""bench/turn_sequences.py: a game photographed from P1's side is the same game with
every photo, and its truth's corners, turned half round."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import cv2
import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "bench" / "turn_sequences.py"


def test_a_turned_copy_turns_the_image_and_its_corners(tmp_path: Path) -> None:
    turn_folder = runpy.run_path(str(BENCH))["turn_folder"]
    src = tmp_path / "src" / "sequence_00"
    src.mkdir(parents=True)
    image = np.zeros((40, 60, 3), np.uint8)
    image[2:6, 3:9] = 255  # a bright patch near the top left
    cv2.imwrite(str(src / "frame_000.png"), image)
    corners = [[10.0, 30.0], [50.0, 30.0], [50.0, 10.0], [10.0, 10.0]]
    (src / "frame_000.json").write_text(json.dumps({"corners": corners, "game": {}}))
    assert turn_folder(src, tmp_path / "out") == 1
    turned = cv2.imread(str(tmp_path / "out" / "frame_000.png"))
    assert turned[34:38, 51:57].min() > 200 and turned[2:6, 3:9].max() < 50
    truth = json.loads((tmp_path / "out" / "frame_000.json").read_text())
    assert truth["corners"][0] == [49.0, 9.0]  # south-west now near the top right
    assert truth["game"] == {}

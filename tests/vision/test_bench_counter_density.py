"""bench/counter_density.py reads each square with the counter alone, on the true outline."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from bench.counter_density import main, measure
from vision import detect
from vision.synth import render_scene


def test_every_citizen_square_of_every_image_is_read_by_every_model(tmp_path: Path) -> None:
    counts = [0, 1, 0, 2, 0, 3, 0, 0, 4, 0, 1, 0]
    image, truth = render_scene(counts, (1, 1), seed=5)
    cv2.imwrite(str(tmp_path / "img_00000.png"), image)
    (tmp_path / "img_00000.json").write_text(json.dumps(truth), "utf-8")
    got = measure(tmp_path, [detect.MODEL_PATH, detect.MODEL_PATH])
    assert len(got) == 1  # one model named twice is read once
    tally = got[detect.MODEL_PATH]
    assert sorted(tally.true) == sorted(c for i, c in enumerate(counts) if i % 6)
    # the counter finds the scene's pieces on its true outline, within a piece a square
    assert sum(tally.read) == pytest.approx(sum(tally.true), abs=3.0)
    assert "10 squares" in tally.line("m")


def test_a_missing_model_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path), "--model", str(tmp_path / "none.onnx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none.onnx" in err[0]

"""The dataset inspector: its summary and its truth overlay."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.training.conftest import seen_whole
from training.render.inspect import main, overlay, summarise
from training.render.sample import camera_from, sample_scene
from training.render.truth import build_truth


def _truth(seed: int) -> dict:  # type: ignore[type-arg]
    s = sample_scene(seed, seed, width=160, height=120)
    cam = camera_from(s.conditions["camera"], 160, 120)
    pos = np.array([[*p.drop[:2], 0.01] for p in s.pieces])
    sizes = [p.size_m for p in s.pieces]
    return build_truth(s, f"img_{seed:05d}.jpg", cam, pos, sizes, seen_whole(len(pos)))


def test_summary_counts_what_the_truths_hold() -> None:
    truths = [_truth(1), _truth(2)]
    s = summarise(truths)
    assert s["scenes"] == 2
    assert sum(s["grounds"].values()) == 2 and sum(s["splits"].values()) == 2
    assert s["board_pieces"] == sum(t["totals"]["small"] + t["totals"]["big"] for t in truths)
    assert s["hidden_board_pieces"] == 0


def test_overlay_draws_the_outline_in_red() -> None:
    t = _truth(3)
    grey = Image.new("RGB", (160, 120), (128, 128, 128))
    out = np.asarray(overlay(t, grey))
    red = (out[..., 0] == 255) & (out[..., 1] == 0)
    assert red.sum() > 50


def test_cli_on_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path)]) == 2
    assert "no img_" in capsys.readouterr().err
    t = _truth(4)
    (tmp_path / "img_00004.json").write_text(json.dumps(t))
    Image.new("RGB", (160, 120)).save(tmp_path / "img_00004.jpg")
    assert main([str(tmp_path), "--overlay", str(tmp_path / "ov")]) == 0
    assert (tmp_path / "ov" / "img_00004_truth.png").exists()
    assert json.loads(capsys.readouterr().out)["scenes"] == 1

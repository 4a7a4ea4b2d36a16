from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.commands.analyze import analyze_main
from companion.commands.calibrate import calibrate_main, order_corners
from vision.config import load_config


@pytest.fixture(scope="module")
def board_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.vision.conftest import scene

    image, _ = scene(11, ground="concrete", chalk="white", tilt_deg=20.0, yaw_deg=8.0, shadow=False)
    path = tmp_path_factory.mktemp("img") / "frame_0001.png"
    cv2.imwrite(str(path), image)
    return path


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]


def test_unreadable_and_empty_files_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image at all")
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    code = analyze_main([str(junk), str(empty), str(tmp_path / "missing.png")])
    out = _lines(capsys)
    assert code == 1
    assert [o["image"] for o in out] == ["junk.jpg", "empty.jpg", "missing.png"]
    assert all(set(o) == {"image", "error"} and o["error"] for o in out)


def test_empty_frame_and_no_board(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    black = tmp_path / "black.png"
    cv2.imwrite(str(black), np.zeros((480, 640, 3), np.uint8))
    ground = tmp_path / "ground.png"
    rng = np.random.default_rng(2)
    cv2.imwrite(str(ground), np.clip(rng.normal(120, 10, (480, 640, 3)), 0, 255).astype(np.uint8))
    code = analyze_main([str(black), str(ground)])
    out = _lines(capsys)
    assert code == 0
    assert "empty" in out[0]["reason"]
    for o in out:
        assert o["board_found"] is False
        assert o["corners"] is None and o["squares"] is None
        assert isinstance(o["reason"], str) and o["reason"]
        assert "error" not in o


def test_board_found_json_and_annotation(
    board_png: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    js, ann = tmp_path / "json", tmp_path / "ann"
    code = analyze_main([str(board_png), "--json-out", str(js), "--annotate", str(ann)])
    assert code == 0
    assert capsys.readouterr().out == ""  # --json-out replaces stdout
    data = json.loads((js / "frame_0001.json").read_text("utf-8"))
    assert data["image"] == "frame_0001.png" and data["board_found"] is True
    assert len(data["corners"]) == 4 and all(len(c) == 2 for c in data["corners"])
    assert len(data["squares"]) == 12
    for sq in data["squares"]:
        assert isinstance(sq["count"], int) and sq["big"] in (0, 1)
    assert data["squares"][0]["big"] == 1
    # the board was searched for in this one still: its doubt is stated, and held by every
    # square's distribution (a uniform share on each count)
    doubt = data["board_doubt"]
    assert 0.0 < doubt < 0.5
    assert all(min(sq["probs"]) >= doubt / len(sq["probs"]) - 1e-4 for sq in data["squares"])
    assert {"locate", "count", "total"} <= set(data["timings_ms"])
    drawn = cv2.imread(str(ann / "frame_0001.png"))
    original = cv2.imread(str(board_png))
    assert drawn is not None and drawn.shape == original.shape
    changed = np.any(drawn != original, axis=2).mean()
    assert 0.01 < changed < 0.5


def test_calibrate_writes_loadable_corners(
    board_png: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "corners.toml"
    # NE, SW, NW, SE: any order is accepted
    code = calibrate_main(
        [str(board_png), "--corners", "900,300,200,650,250,310,1000,640", "--out", str(out)]
    )
    assert code == 0
    assert "[vision.locate]" in capsys.readouterr().out
    cfg = load_config(out)
    assert cfg.locate.manual_corners == (
        (200.0, 650.0),
        (1000.0, 640.0),
        (900.0, 300.0),
        (250.0, 310.0),
    )


def test_calibrate_rejects_bad_corners(board_png: Path) -> None:
    assert calibrate_main([str(board_png), "--corners", "1,2,3"]) == 2
    assert calibrate_main(["/no/such/file.png"]) == 1


def test_order_corners_any_rotation() -> None:
    pts = np.array([[200.0, 650.0], [1000.0, 640.0], [900.0, 300.0], [250.0, 310.0]])
    for k in range(4):
        assert np.allclose(order_corners(np.roll(pts, k, axis=0)), pts)
    assert np.allclose(order_corners(pts[[0, 2, 1, 3]]), pts)

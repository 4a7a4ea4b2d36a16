"""The renders' lens: pixels and truth bent alike, as vision.lens undoes them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from training.render.datasets import load_manifest
from training.render.geometry import REGIONS
from training.render.lens import (
    LENS_K1,
    bend_image,
    bend_truth,
    from_raw,
    main,
    to_raw,
    zoom,
)
from training.render.post import apply_post
from training.render.sample import camera_from, sample_scene, sample_sequence_scene
from training.render.truth import build_truth
from vision.lens import Lens, frame_zoom, undistort_points

W, H = 640, 480
LENSES = (-0.25, -0.12, -0.03, 0.05, 0.2)
NEUTRAL = {
    "sharpen": 0.0,
    "wb_gain": [1.0, 1.0, 1.0],
    "vignette": 0.0,
    "motion_blur_px": 0.0,
    "motion_blur_deg": 0.0,
    "noise_sigma": 0.0,
    "jpeg_quality": 95,
    "seed": 1,
}


def _grid() -> np.ndarray:
    xs, ys = np.meshgrid(np.linspace(0, W, 17), np.linspace(0, H, 13))
    return np.stack([xs, ys], axis=-1).reshape(-1, 2)


def _truth(seed: int, lens: bool = False, focal_gain: float = 1.0) -> dict[str, Any]:
    """The truth build_truth writes for a sampled scene (pieces where they were dropped);
    ``focal_gain`` zooms the camera in (a board filling the frame)."""
    s = sample_scene(seed, seed, width=W, height=H, lens=lens)
    camera = s.conditions["camera"]
    camera = camera | {"focal_mm_36mm_sensor": camera["focal_mm_36mm_sensor"] * focal_gain}
    s = replace(s, conditions=s.conditions | {"camera": camera})
    cam = camera_from(s.conditions["camera"], W, H)
    pos = np.array([[p.drop[0], p.drop[1], p.size_m / 3] for p in s.pieces])
    n = len(s.pieces)
    vis = {
        "visible": [True] * n,
        "visible_fraction": [1.0] * n,
        "top_visible": [True] * n,
        "hidden_by_hand": [False] * n,
        "occluded_fraction": dict.fromkeys(REGIONS, 0.0),
        "in_frame_fraction": dict.fromkeys(REGIONS, 1.0),
    }
    return build_truth(s, "img.jpg", cam, pos, [p.size_m for p in s.pieces], vis)


@pytest.mark.parametrize("k1", LENSES)
def test_the_bend_goes_both_ways_and_keeps_the_frame_filled(k1: float) -> None:
    pts = _grid()
    assert np.allclose(from_raw(to_raw(pts, W, H, k1), W, H, k1), pts, atol=1e-6)
    corners = np.array([[0.0, 0.0], [W, 0.0], [W, H], [0.0, H]])
    src = from_raw(corners, W, H, k1)
    # every raw pixel shows a rendered one; a barrel's raw corners are the render's
    assert np.all((src >= -1e-9) & (src <= [W + 1e-9, H + 1e-9]))
    if k1 < 0:
        assert np.allclose(src, corners, atol=1e-9)
    assert np.array_equal(to_raw(pts, W, H, 0.0), pts)


@pytest.mark.parametrize("k1", LENSES)
def test_vision_undoes_the_bend_up_to_a_scale_about_the_centre(k1: float) -> None:
    # what [vision.lens] k1 makes of a bent render is the pinhole render scaled about the
    # image centre: straight lines straight again, the board a homography of the truth's
    pts = _grid()
    seen = undistort_points(to_raw(pts, W, H, k1), (H, W), Lens(k1))
    centre = np.array([W / 2, H / 2])
    scale = frame_zoom((H, W), Lens(k1)) / zoom(k1)
    assert np.allclose(seen, centre + (pts - centre) * scale, atol=1e-6)


def test_the_picture_is_bent_where_the_points_are() -> None:
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    spots = np.array([[560.0, 400.0], [80.0, 60.0], [500.0, 90.0]])
    img = np.zeros((H, W, 3), np.uint8)
    for x, y in spots:
        blob = 255 * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / 18.0)
        img[..., 1] = np.maximum(img[..., 1], blob.astype(np.uint8))
    for k1 in (-0.22, 0.15):
        bent = bend_image(img, k1)[..., 1].astype(np.float64)
        moved = to_raw(spots, W, H, k1)
        assert np.all(np.linalg.norm(moved - spots, axis=1) > 5)  # the spots did move
        for ex, ey in moved:
            win = (slice(int(ey) - 12, int(ey) + 13), slice(int(ex) - 12, int(ex) + 13))
            w = bent[win]
            cx = float((w * xx[win]).sum() / w.sum())
            cy = float((w * yy[win]).sum() / w.sum())
            assert abs(cx - ex) < 0.35 and abs(cy - ey) < 0.35


def test_post_bends_before_noise_and_jpeg(tmp_path: Path) -> None:
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    img = np.full((H, W, 3), 30, np.uint8)
    img[..., 0] = np.clip(30 + 220 * np.exp(-((xx - 600) ** 2 + (yy - 60) ** 2) / 20.0), 0, 255)
    Image.fromarray(img).save(tmp_path / "a.png")
    apply_post(tmp_path / "a.png", tmp_path / "a.jpg", NEUTRAL, W, lens_k1=-0.2)
    out = np.asarray(Image.open(tmp_path / "a.jpg"), np.float64)[..., 0] - 30
    ex, ey = to_raw(np.array([[600.0, 60.0]]), W, H, -0.2)[0]
    y, x = np.unravel_index(np.argmax(out), out.shape)
    assert abs(x - ex) <= 1.5 and abs(y - ey) <= 1.5
    apply_post(tmp_path / "a.png", tmp_path / "b.jpg", NEUTRAL, W)
    plain = np.asarray(Image.open(tmp_path / "b.jpg"), np.float64)[..., 0] - 30
    assert tuple(int(v) for v in np.unravel_index(np.argmax(plain), plain.shape)) == (60, 600)


def test_a_lens_scene_differs_from_its_pinhole_only_in_the_lens() -> None:
    for seed in range(12):
        plain = sample_scene(seed, seed, width=W, height=H)
        bent = sample_scene(seed, seed, width=W, height=H, lens=True)
        cam = dict(bent.conditions["camera"])
        k1 = cam.pop("lens_k1")
        lo, hi = LENS_K1[cam["device"]]
        assert lo <= k1 <= hi
        assert cam == plain.conditions["camera"]
        assert {k: v for k, v in bent.conditions.items() if k != "camera"} == {
            k: v for k, v in plain.conditions.items() if k != "camera"
        }
        assert bent.pieces == plain.pieces and bent.game == plain.game
    game = sample_sequence_scene(3, 3, dataset="x", width=W, height=H, lens=True)
    assert "lens_k1" in game.spec.conditions["camera"]
    assert "lens_k1" not in sample_sequence_scene(3, 3, dataset="x").spec.conditions["camera"]


def test_the_truth_of_a_lens_scene_is_the_pinhole_truth_bent() -> None:
    plain = _truth(4)
    assert "lens" not in plain["camera_model"] and "lens_k1" not in plain["conditions"]["camera"]
    bent = _truth(4, lens=True)
    k1 = bent["conditions"]["camera"]["lens_k1"]
    assert bent["camera_model"]["lens"] == {"model": "division", "k1": k1, "zoom": zoom(k1)}
    assert np.allclose(bent["corners"], to_raw(np.array(plain["corners"]), W, H, k1), atol=0.01)
    for a, b in zip(plain["pieces"], bent["pieces"], strict=True):
        assert np.allclose(
            b["center_px"], to_raw(np.array([a["center_px"]]), W, H, k1)[0], atol=0.06
        )
    assert bent["counts"] == plain["counts"]
    # a square's sides are cut finely enough to follow the curve
    assert all(
        len(bent["regions"][r]["polygon"]) > len(plain["regions"][r]["polygon"]) for r in REGIONS
    )


def test_what_leaves_the_frame_is_out_of_it() -> None:
    truth = _truth(7, focal_gain=1.4)
    assert not truth["board_partially_outside"]  # the render shows it all; the lens does not
    bent = bend_truth(truth, -0.25)
    assert bent["board_partially_outside"]
    fractions = {r: bent["regions"][r]["in_frame_fraction"] for r in REGIONS}
    assert min(fractions.values()) < 0.9
    assert bent["board_visible_fraction"] < truth["board_visible_fraction"]
    for r in REGIONS:
        pts = np.array(bent["regions"][r]["polygon"])
        inside = (pts[:, 0] >= 0) & (pts[:, 0] < W) & (pts[:, 1] >= 0) & (pts[:, 1] < H)
        if inside.all():
            assert fractions[r] == 1.0
        elif not inside.any():
            assert fractions[r] < 0.05
    for p in bent["pieces"]:
        x, y = p["center_px"]
        if not (0 <= x < W and 0 <= y < H):
            assert not p["in_frame"] and not p["visible"] and p["visible_fraction"] == 0.0


def _write_set(folder: Path, names: list[str], seed: int = 2) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    img = (np.random.default_rng(seed).random((H, W, 3)) * 255).astype(np.uint8)
    for name in names:
        Image.fromarray(img).save(folder / f"{name}.jpg", quality=95)
        (folder / f"{name}.json").write_text(json.dumps(_truth(seed) | {"image": f"{name}.jpg"}))


def test_a_dataset_copy_is_bent_per_still_and_per_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    _write_set(src / "singles", ["img_00000", "img_00001", "img_00002"])
    _write_set(src / "sequence_00", ["frame_000", "frame_001", "frame_002"])
    assert main([str(src), str(tmp_path / "out"), "--draw", "--seed", "5"]) == 0
    assert "6 written" in capsys.readouterr().out
    lenses = {
        p.relative_to(tmp_path / "out").as_posix(): json.loads(p.read_text())["conditions"][
            "camera"
        ]["lens_k1"]
        for p in (tmp_path / "out").rglob("*_0*.json")
    }
    game = {v for k, v in lenses.items() if k.startswith("sequence_00/")}
    stills = {v for k, v in lenses.items() if k.startswith("singles/")}
    assert len(game) == 1 and len(stills) == 3  # one camera per game, one per still
    again = tmp_path / "again"
    assert main([str(src), str(again), "--draw", "--seed", "5"]) == 0
    for name in lenses:
        assert json.loads((again / name).read_text()) == json.loads(
            (tmp_path / "out" / name).read_text()
        )
    assert main([str(src), str(tmp_path / "out"), "--draw", "--seed", "5"]) == 0
    assert "0 written, 6 already there" in capsys.readouterr().out


def test_a_fixed_lens_copy_matches_the_bent_truth(tmp_path: Path) -> None:
    _write_set(tmp_path / "src", ["img_00000"])
    assert main([str(tmp_path / "src"), str(tmp_path / "out"), "--k1", "-0.2"]) == 0
    got = json.loads((tmp_path / "out" / "img_00000.json").read_text())
    truth = json.loads((tmp_path / "src" / "img_00000.json").read_text())
    assert got == bend_truth(truth, -0.2)
    assert Image.open(tmp_path / "out" / "img_00000.jpg").size == (W, H)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--k1", "-0.4"], "k1 must be between"),
        (["--k1", "nan"], "k1 must be between"),
        (["--draw", "INSIDE"], "must not lie inside"),
        (["--draw", "EMPTY"], "no image with its truth"),
    ],
)
def test_bad_copies_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    src = tmp_path / "src"
    _write_set(src, ["img_00000"])
    (tmp_path / "empty").mkdir()
    dst = tmp_path / "out"
    if "INSIDE" in args:
        args, dst = ["--draw"], src / "copy"
    if "EMPTY" in args:
        args, src = ["--draw"], tmp_path / "empty"
    assert main([str(src), str(dst), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err
    assert not (dst / "img_00000.json").exists()


def test_manifests_turn_lenses_on_by_name(tmp_path: Path) -> None:
    base = 'generator = "g"\nseed_start = 0\ncount = 1\ngrounds = ["sand"]\npieces = ["beans"]\n'
    (tmp_path / "a.toml").write_text('name = "a"\n' + base)
    (tmp_path / "b.toml").write_text('name = "b"\nlens = "drawn"\n' + base)
    (tmp_path / "c.toml").write_text('name = "c"\nlens = "fisheye"\n' + base)
    assert not load_manifest("a", tmp_path).lens
    assert load_manifest("b", tmp_path).lens
    with pytest.raises(ValueError, match='lens must be "pinhole" or "drawn"'):
        load_manifest("c", tmp_path)

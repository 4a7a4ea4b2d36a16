"""The renders' lens: pixels and truth bent alike, as vision.lens undoes them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from tests.training.conftest import NEUTRAL_POST, seen_whole
from training.render.datasets import load_manifest
from training.render.geometry import REGIONS
from training.render.lens import (
    LENS_K1,
    LensError,
    bend_image,
    bend_truth,
    from_raw,
    main,
    pinhole_only,
    to_raw,
    zoom,
)
from training.render.post import apply_post
from training.render.sample import camera_from, sample_scene, sample_sequence_scene
from training.render.truth import build_truth
from vision.lens import Lens, frame_zoom, undistort_points

W, H = 640, 480
LENSES = (-0.25, -0.12, -0.03, 0.05, 0.2)


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
    return build_truth(s, "img.jpg", cam, pos, [p.size_m for p in s.pieces], seen_whole(len(pos)))


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
    # pixel (i, j)'s centre is at (i + 0.5, j + 0.5) in the truth's coordinates
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64) + 0.5
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
            assert abs(cx - ex) < 0.15 and abs(cy - ey) < 0.15


def test_post_bends_before_noise_and_jpeg(tmp_path: Path) -> None:
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64) + 0.5
    img = np.full((H, W, 3), 128, np.uint8)
    img[..., 0] = np.clip(128 + 120 * np.exp(-((xx - 600) ** 2 + (yy - 60) ** 2) / 20.0), 0, 255)
    Image.fromarray(img).save(tmp_path / "a.png")
    noisy = NEUTRAL_POST | {"noise_sigma": 8.0}
    apply_post(tmp_path / "a.png", tmp_path / "a.jpg", noisy, W, lens_k1=-0.2)
    apply_post(tmp_path / "a.png", tmp_path / "b.jpg", noisy, W)
    bent = np.asarray(Image.open(tmp_path / "a.jpg"), np.float64)
    plain = np.asarray(Image.open(tmp_path / "b.jpg"), np.float64)
    # the spot moved with the lens ...
    ex, ey = to_raw(np.array([[600.0, 60.0]]), W, H, -0.2)[0]
    red = _box_mean(bent[..., 0])
    y, x = np.unravel_index(np.argmax(red), red.shape)
    assert abs(x + 0.5 - ex) <= 1.5 and abs(y + 0.5 - ey) <= 1.5
    y, x = np.unravel_index(np.argmax(_box_mean(plain[..., 0])), red.shape)
    assert abs(x + 0.5 - 600) <= 1.5 and abs(y + 0.5 - 60) <= 1.5
    # ... and the sensor's noise came after it: resampling (the middle is magnified
    # 1.25 times) would have smoothed noise that was already there
    middle = (slice(180, 300), slice(240, 400), 1)
    assert np.std(bent[middle]) > 0.9 * np.std(plain[middle]) > 3.0


def _box_mean(a: np.ndarray) -> np.ndarray:
    """A 5 x 5 box mean (numpy): the spot's peak, not one noisy pixel's."""
    pad = np.pad(a, 2, mode="edge")
    return sum(pad[i : i + a.shape[0], j : j + a.shape[1]] for i in range(5) for j in range(5)) / 25


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
    assert bent["camera_model"]["lens"] == {
        "model": "division",
        "k1": k1,
        "zoom": pytest.approx(zoom(k1)),
    }
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
        else:
            assert 0.0 < fractions[r] < 1.0
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


def test_a_copy_resumes_only_as_it_was_bent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_set(tmp_path / "src", ["img_00000"])
    out = tmp_path / "out"
    assert main([str(tmp_path / "src"), str(out), "--draw"]) == 0
    first = (out / "img_00000.json").read_text()
    capsys.readouterr()
    for other in (["--k1", "-0.2"], ["--draw", "--seed", "3"]):
        assert main([str(tmp_path / "src"), str(out), *other]) == 2
        assert "was bent with" in capsys.readouterr().err
    assert (out / "img_00000.json").read_text() == first
    # a bent copy is no pinhole: bending it again is refused, naming the file
    assert main([str(out), str(tmp_path / "twice"), "--k1", "-0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "img_00000.json" in err and "already taken through a lens" in err
    assert not list((tmp_path / "twice").glob("img_*"))


def test_a_bad_truth_stops_the_copy_in_one_line_leaving_no_half_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_set(tmp_path / "src", ["img_00000", "img_00001"])
    (tmp_path / "src" / "img_00001.json").write_text("{not json")
    assert main([str(tmp_path / "src"), str(tmp_path / "out"), "--k1", "-0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "img_00001.json" in err and "\n" not in err
    assert (tmp_path / "out" / "img_00000.json").exists()
    assert not (tmp_path / "out" / "img_00001.jpg").exists()


def test_a_photo_gets_its_lens_wherever_the_copy_starts(tmp_path: Path) -> None:
    _write_set(tmp_path / "data" / "singles", ["img_00000", "img_00001"])
    _write_set(tmp_path / "data" / "sequence_00", ["frame_000", "frame_001"])
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "singles").symlink_to(tmp_path / "data" / "singles")
    assert main([str(tmp_path / "data"), str(tmp_path / "whole"), "--draw"]) == 0
    assert main([str(tmp_path / "data" / "singles"), str(tmp_path / "part"), "--draw"]) == 0
    assert main([str(tmp_path / "linked"), str(tmp_path / "via_link"), "--draw"]) == 0
    assert main([str(tmp_path / "data" / "sequence_00"), str(tmp_path / "game"), "--draw"]) == 0

    def k1(path: Path) -> float:
        return float(json.loads(path.read_text())["conditions"]["camera"]["lens_k1"])

    for name in ("img_00000.json", "img_00001.json"):
        whole = k1(tmp_path / "whole" / "singles" / name)
        assert whole == k1(tmp_path / "part" / name)
        assert whole == k1(tmp_path / "via_link" / "singles" / name)
    assert k1(tmp_path / "whole" / "sequence_00" / "frame_001.json") == k1(
        tmp_path / "game" / "frame_000.json"
    )


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


def test_bending_keeps_its_input_moves_every_pixel_point_and_refuses_a_second_lens() -> None:
    truth = _truth(4)
    truth["pieces"][0]["ground_px"] = [600.0, 50.0]  # the wide generator's ground points
    truth["hand"] = {"present": True, "tip_px": [30.0, 440.0]}  # vision.synth's hand tip
    before = json.dumps(truth, sort_keys=True)
    bent = bend_truth(truth, -0.2)
    assert json.dumps(truth, sort_keys=True) == before
    for got, was in (
        (bent["pieces"][0]["ground_px"], [600.0, 50.0]),
        (bent["hand"]["tip_px"], [30.0, 440.0]),
    ):
        assert np.allclose(got, to_raw(np.array([was]), W, H, -0.2)[0], atol=0.01)
    with pytest.raises(LensError, match="already taken through a lens"):
        bend_truth(bent, -0.1)
    with pytest.raises(LensError, match="already taken through a lens"):
        bend_truth(_truth(4, lens=True), -0.1)


def test_trainers_stop_at_a_lens_truth() -> None:
    pinhole_only(_truth(4), "img.json")  # a pinhole's passes
    with pytest.raises(SystemExit, match=r"img\.json: taken through a lens"):
        pinhole_only(bend_truth(_truth(4), -0.1), "img.json")

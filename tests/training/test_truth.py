"""The ground-truth writer: render-public's keys, counts from where pieces came to rest."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from training.render.geometry import REGIONS
from training.render.sample import camera_from, sample_scene
from training.render.truth import build_truth

KEYS = json.loads((Path(__file__).parent / "fixtures" / "render_public_keys.json").read_text())


def _truth(seed: int, moved: dict[int, tuple[float, float]] | None = None) -> dict:  # type: ignore[type-arg]
    s = sample_scene(seed, seed, width=640, height=480)
    cam = camera_from(s.conditions["camera"], 640, 480)
    pos = np.array([[p.drop[0], p.drop[1], p.size_m / 3] for p in s.pieces])
    for k, xy in (moved or {}).items():
        pos[k, :2] = xy
    n = len(s.pieces)
    vis = {
        "visible": [k % 5 != 0 for k in range(n)],
        "visible_fraction": [0.0 if k % 5 == 0 else 0.8 for k in range(n)],
        "top_visible": [k % 5 != 0 for k in range(n)],
        "hidden_by_hand": [False] * n,
        "occluded_fraction": dict.fromkeys(REGIONS, 0.0),
        "in_frame_fraction": dict.fromkeys(REGIONS, 1.0),
    }
    return build_truth(s, "img.jpg", cam, pos, [p.size_m for p in s.pieces], vis)


def test_keys_match_render_public() -> None:
    t = _truth(2)
    assert set(KEYS["top"]) <= set(t)
    assert tuple(t["regions"]) == REGIONS and sorted(REGIONS) == KEYS["regions"]
    for r in REGIONS:
        assert set(KEYS["region"]) <= set(t["regions"][r])
        assert set(t["counts"][r]) == set(KEYS["counts_entry"])
    assert all(set(KEYS["piece"]) <= set(p) for p in t["pieces"])
    assert set(t["camera_model"]) == set(KEYS["camera_model"])
    assert set(t["board_m"]) == set(KEYS["board_m"])
    assert set(KEYS["game"]) <= set(t["game"])
    assert set(t["totals"]) == set(KEYS["totals"])
    assert t["corner_order"] == ["SW", "SE", "NE", "NW"]
    for key in ("ground_family", "piece_family", "light", "tilt_deg", "hand"):
        assert key in t["conditions"]
    json.dumps(t)  # plain JSON all the way down


def test_counts_follow_the_resting_place_not_the_intention() -> None:
    s = sample_scene(5, 5)
    k = next(i for i, p in enumerate(s.pieces) if p.kind == "small" and p.role == "board")
    src = s.pieces[k].intended_region
    dest = "south_2" if src != "south_2" else "north_3"
    c = np.asarray(s.board.regions[dest]).mean(axis=0)
    before, after = _truth(5), _truth(5, {k: (float(c[0]), float(c[1]))})
    assert after["counts"][dest]["small"] == before["counts"][dest]["small"] + 1
    assert after["counts"][src]["small"] == before["counts"][src]["small"] - 1
    assert after["pieces"][k]["region"] == dest
    assert after["totals"] == before["totals"] or src is None


def test_projection_and_hidden_pieces() -> None:
    t = _truth(4)
    cam = t["camera_model"]
    K, R, tv = (np.array(cam[k]) for k in ("K", "R_world_to_cam_opencv", "t_opencv"))
    for (x, y), px in zip(t["board_m"]["corners"], t["corners"], strict=True):
        uvw = K @ (R @ np.array([x, y, 0.0]) + tv)
        assert np.allclose(uvw[:2] / uvw[2], px, atol=0.5)  # JSON keeps 0.1 mm and 1e-6
    hidden = sum(r["hidden_pieces"] for r in t["regions"].values())
    assert hidden == sum(1 for p in t["pieces"] if p["on_board"] and not p["visible"])
    assert sum(r["count"] for r in t["regions"].values()) == t["totals"]["small"]

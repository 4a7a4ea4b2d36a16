"""Scene sampling: the seed decides everything, and the drawn pieces match the position."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from engine import Position
from training.render.families import (
    GROUND_FAMILIES,
    HELD_OUT_GROUNDS,
    HELD_OUT_PIECES,
    FamilyError,
    split_of,
    training_grounds,
    training_pieces,
)
from training.render.geometry import REGIONS
from training.render.sample import CAMERAS, camera_from, sample_scene


def test_same_seed_same_scene_and_different_seeds_differ() -> None:
    a, b = sample_scene(7, 7), sample_scene(7, 7)
    assert a.conditions == b.conditions and a.pieces == b.pieces and a.board == b.board
    c = sample_scene(7, 8)
    assert c.conditions != a.conditions


def test_pieces_match_the_counts_they_were_drawn_for() -> None:
    for seed in range(12):
        s = sample_scene(seed, seed)
        board = Counter((p.intended_region, p.kind) for p in s.pieces if p.role == "board")
        for r in REGIONS:
            want = s.engine_counts()[r]
            assert board[(r, "small")] == want["small"]
            assert board[(r, "big")] == want["big"]
        store = sum(p.role == "store" for p in s.pieces)
        assert store == sum(h["count"] for h in s.conditions["pieces"]["heaps"])
        if not s.conditions["store_heaps"]:
            assert store == 0


def test_game_positions_are_legal_engine_positions() -> None:
    seen = 0
    for seed in range(30):
        s = sample_scene(seed, seed)
        if s.conditions["count_mode"] == "piles":
            continue
        seen += 1
        g = s.game
        ec = g["engine_counts"]
        order = [
            "west_mandarin",
            *(f"south_{k}" for k in range(5)),
            "east_mandarin",
            *(f"north_{k}" for k in reversed(range(5))),
        ]
        pos = Position(
            tuple(ec[r]["small"] for r in order),
            big=(ec["west_mandarin"]["big"], ec["east_mandarin"]["big"]),
            store=tuple(g["captured_small"]),
        )  # type: ignore[arg-type]
        assert pos.board[1] == ec["south_0"]["small"] and pos.board[7] == ec["north_4"]["small"]
        assert g["source"].startswith("random self-play")
        if g["ply"] == 0:
            assert pos.board == Position.initial().board
    assert seen > 10


def test_drops_do_not_start_inside_each_other() -> None:
    s = sample_scene(3, 3)
    by_region: dict[str | None, list[tuple[float, float, float, float]]] = {}
    for p in s.pieces:
        if p.kind == "small":
            by_region.setdefault(p.intended_region, []).append((*p.drop, p.size_m))
    for items in by_region.values():
        arr = np.array(items)
        for i in range(len(arr)):
            d = np.linalg.norm(arr[i + 1 :, :3] - arr[i, :3], axis=1)
            assert (d > 0.9 * arr[:, 3].min()).all()


def test_conditions_name_their_families_and_stay_in_range() -> None:
    for seed in range(40):
        s = sample_scene(seed, seed, width=640, height=480)
        c = s.conditions
        assert c["ground_family"] in GROUND_FAMILIES
        assert c["ground_params"]["family"] == c["ground_family"]
        assert 0 <= c["tilt_deg"] <= 55
        assert 0.8 <= c["camera"]["distance_m"] <= 2.5
        assert c["camera"]["device"] in CAMERAS
        assert min(s.board.square_m) >= 0.15 * 0.9 and max(s.board.square_m) <= 0.45 * 1.15
        assert all(0.007 <= p.size_m <= 0.2 for p in s.pieces)
        assert c["light"]["type"] in ("sun", "overcast", "indoor", "low_light")
        assert 55 <= c["post"]["jpeg_quality"] <= 95


def test_piece_scale_draws_large_pieces_and_leaves_other_scenes_alone() -> None:
    for seed in range(12):
        plain = sample_scene(seed, seed, width=640, height=480)
        large = sample_scene(seed, seed, width=640, height=480, piece_scale=(0.25, 0.3))
        square = min(large.board.square_m)
        assert large.board == plain.board  # only the pieces change
        assert all(p.size_m <= 0.17 * square * 1.2 for p in plain.pieces if p.kind == "small")
        smalls = [p.size_m for p in large.pieces if p.kind == "small"]
        assert smalls and all(0.25 * 0.8 <= s / square <= 0.3 * 1.2 for s in smalls)
        bigs = [p.size_m for p in large.pieces if p.kind == "big"]
        assert all(b >= 1.6 * 0.25 * square * 0.8 for b in bigs)
    assert sample_scene(3, 3).conditions == sample_scene(3, 3, piece_scale=None).conditions


def test_training_families_never_draw_a_held_out_kind() -> None:
    for seed in range(60):
        s = sample_scene(seed, seed, grounds=training_grounds(), pieces=training_pieces())
        assert s.conditions["ground_family"] not in HELD_OUT_GROUNDS
        assert not set(s.conditions["pieces"]["kinds"]) & HELD_OUT_PIECES
        assert split_of(s.conditions) == "train"
    held = sample_scene(1, 1, grounds=tuple(HELD_OUT_GROUNDS))
    assert split_of(held.conditions) == "heldout_ground"
    shells = sample_scene(1, 1, grounds=training_grounds(), pieces=tuple(HELD_OUT_PIECES))
    assert split_of(shells.conditions) == "heldout_piece"
    with pytest.raises(FamilyError, match="marble"):
        sample_scene(1, 1, pieces=("marble",))


def test_the_board_is_mostly_framed_and_sometimes_cut() -> None:
    cut = 0
    n = 120
    for seed in range(n):
        s = sample_scene(seed, seed, width=640, height=480)
        cam = camera_from(s.conditions["camera"], 640, 480)
        pts = np.array([p for poly in s.board.regions.values() for p in poly])
        px = cam.project(np.c_[pts, np.zeros(len(pts))])
        cut += not cam.in_frame(px).all()
    assert 0.02 * n <= cut <= 0.25 * n

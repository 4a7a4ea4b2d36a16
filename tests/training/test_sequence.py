"""Game sequences without Blender: which pieces a move moves, the frame plans, the truth.

The renderer is replaced by a stand-in that lets every dropped piece rest where it was
dropped, so the whole path (plan, layout, frame specs, truth files, resuming) runs here.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from companion.referee.reconcile import board_of
from engine import Game, Position
from tests.training.conftest import seen_whole
from training.render.geometry import REGIONS, region_of_index
from training.render.sample import camera_from, sample_scene, sample_sequence_scene
from training.render.sequence.__main__ import Progress, main, render_game
from training.render.sequence.demo import (
    DEMO_GAME,
    demo_frames,
    demo_ok,
    demo_scene_at,
    pebble_px,
    script,
)
from training.render.sequence.frames import (
    catalogue,
    drop_points,
    frame_rng,
    poses_of,
)
from training.render.sequence.manifest import load_sequences
from training.render.sequence.plan import (
    Layout,
    Op,
    OpKind,
    SequenceError,
    apply_ops,
    game_frames,
    initial_layout,
    move_ops,
    self_play,
)

ROOT = Path(__file__).resolve().parents[2]
#: sha256 of repr() of train-v4's first 12 scene specs at 640x480, as drawn by "oanquan-render 4",
#: every float written to 9 significant digits
TRAIN_V4_DIGEST = "fc25cf5ca32f15898b1998cf08ba12c1fdee1b220e4251004fec1e03e4f8f51d"
_FLOAT = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")
DEMO = ROOT / "companion" / "commands" / "demo_frames"


def _squares(layout: Layout, kinds: dict[int, str]) -> list[int]:
    counts = layout.counts(kinds)
    return [counts[region_of_index(sq)]["small"] for sq in range(12)]


@pytest.mark.parametrize("seed", range(6))
def test_pieces_follow_the_engine_move_by_move(seed: int) -> None:
    start, moves = self_play(random.Random(seed), 40)
    layout, kinds = initial_layout(start)
    assert len(kinds) == 52 and sorted(kinds.values()).count("big") == 2
    game = Game(start=start)
    for frame in game_frames(start, moves, 0.0, random.Random(seed))[1:]:
        t = game.play(frame.move or "")
        before = layout
        change = apply_ops(layout, frame.ops, kinds)
        layout = change.layout
        board, big = board_of(t.position)
        if not t.position.over:
            assert _squares(layout, kinds) == list(board)
            small, bigs = layout.stores(kinds)
            assert tuple(small) == t.position.store and tuple(bigs) == t.position.bigs
            counts = layout.counts(kinds)
            assert (counts["west_mandarin"]["big"], counts["east_mandarin"]["big"]) == big
        assert sorted(i for ids in layout.places.values() for i in ids) == sorted(kinds)
        for r in REGIONS:  # what no move touched lies exactly as it lay
            if r not in change.changed:
                assert layout.of(r) == before.of(r)
                assert not set(layout.of(r)) & change.arrived
        assert set(change.picked_up) <= set(REGIONS)


def test_a_short_move_touches_only_its_squares() -> None:
    start = Position.from_text("5B|0,0,2,0,0|5B|1,1,1,1,1 P0 s16/17 q0/0 d0/0 n10")
    layout, kinds = initial_layout(start)
    frames = game_frames(start, ["3+"], 0.0, random.Random(0))
    change = apply_ops(layout, frames[1].ops, kinds)
    assert change.changed == ("south_2", "south_3", "south_4")
    assert change.picked_up == ("south_2",)
    assert change.arrived == frozenset(layout.of("south_2"))  # the two pebbles sown
    assert change.layout.of("south_3") == layout.of("south_2")[:1]
    for r in set(REGIONS) - {"south_2", "south_3", "south_4"}:
        assert change.layout.of(r) == layout.of(r)


def test_a_refill_borrows_pebbles_from_the_lenders_heap() -> None:
    game = Game()
    for m in DEMO_GAME[:2]:
        game.play(m)
    during, after = move_ops(game.play(DEMO_GAME[2]))  # 4+: P1's row is empty, P1 borrows 5
    assert [op.kind for op in after] == [OpKind.SUPPLY] * 5
    assert {op.player for op in after} == {0}  # from P0's heap
    assert {op.place for op in after} == {f"north_{k}" for k in range(5)}
    assert all(op.kind is not OpKind.SUPPLY for op in during)


def test_operations_that_need_missing_pieces_are_refused() -> None:
    layout, kinds = initial_layout(Position.initial())
    with pytest.raises(SequenceError, match="empty hand"):
        apply_ops(layout, [Op(OpKind.DROP, "south_0")], kinds)
    with pytest.raises(SequenceError, match="left in the hand"):
        apply_ops(layout, [Op(OpKind.PICK, "south_0")], kinds)
    with pytest.raises(SequenceError, match="store_north"):
        apply_ops(layout, [Op(OpKind.SUPPLY, "south_0", player=1)], kinds)
    with pytest.raises(SequenceError, match=r"move 2 \('2\+'\)"):
        game_frames(Position.initial(), ["5-", "2+", "1+"], 0.0, random.Random(0))


def test_hands_come_in_the_asked_share_never_on_the_first_frame() -> None:
    start, moves = self_play(random.Random(3), 200)
    never = game_frames(start, moves, 0.0, random.Random(1))
    always = game_frames(start, moves, 1.0, random.Random(1))
    quarter = game_frames(start, moves, 0.25, random.Random(1))
    assert not any(f.hand for f in never) and not always[0].hand
    assert all(f.hand for f in always[1:])
    share = sum(f.hand for f in quarter[1:]) / (len(quarter) - 1)
    assert 0.1 < share < 0.4 and len(quarter) > 30


def test_self_play_is_deterministic_and_starts_without_debt() -> None:
    for seed in range(20):
        start, moves = self_play(random.Random(seed), 20)
        assert (start, moves) == self_play(random.Random(seed), 20)
        assert not any(start.debt) and len(moves) == 20
    starts = {self_play(random.Random(s), 20)[0].ply for s in range(20)}
    assert 0 in starts and max(starts) >= 4  # openings and mid-game stretches both


def test_dropped_pieces_fall_apart_from_each_other_and_onto_the_pile() -> None:
    scene = sample_sequence_scene(0, 7, dataset="t")
    _, kinds = initial_layout(Position.initial())
    pieces = catalogue(scene, kinds)
    new = [pieces[i] for i in range(2, 14)]
    kept = [(0.0, 0.0, 0.01, 0.02)]
    points = drop_points(random.Random(0), (0.0, 0.0), 0.05, new, kept)
    for k, (a, p) in enumerate(zip(points, new, strict=True)):
        assert np.hypot(a[0], a[1]) <= 0.05 + 1e-9
        if np.hypot(a[0], a[1]) < (0.02 + p.size_m) / 2:
            assert a[2] >= 0.02 + 0.6 * p.size_m - 1e-9  # above the resting piece's top
        for b in points[:k]:
            assert np.linalg.norm(np.subtract(a, b)) > 1.15 * p.size_m - 1e-9
    big = drop_points(random.Random(0), (0.3, 0.1), 0.05, [pieces[0]], [])
    assert big[0][:2] == (0.3, 0.1)


def test_a_sequence_scene_is_fixed_by_its_seed_and_sees_the_whole_board() -> None:
    a = sample_sequence_scene(0, 11, dataset="t", width=640, height=480)
    assert a == sample_sequence_scene(0, 11, dataset="t", width=640, height=480)
    for seed in range(60):
        c = sample_sequence_scene(0, seed, dataset="t").spec.conditions
        assert not c["camera"]["aimed_off_board"] and c["post"]["motion_blur_px"] == 0.0
        assert c["pieces"]["kind"] == c["piece_family"]


def test_a_sequence_manifest_can_draw_large_pieces() -> None:
    ds = load_sequences("seq-large-v4")
    assert ds.scenes.piece_scale == (0.17, 0.34)
    for seed in range(6):
        scene = sample_sequence_scene(
            0, seed, dataset="t", width=640, height=480, piece_scale=ds.scenes.piece_scale
        )
        square = min(scene.spec.board.square_m)
        sizes = [look["size_mm"] / 1000 / square for look in scene.piece_set.looks.values()]
        assert all(0.17 <= s <= 0.34 for s in sizes)
        plain = sample_sequence_scene(0, seed, dataset="t", width=640, height=480)
        assert plain.spec.board == scene.spec.board


def test_single_scenes_draw_what_they_drew_before() -> None:
    """Sequences share sample.py's helpers: train-v4's seeds must keep drawing the same
    scenes (a change there needs a new GENERATOR_VERSION and new manifests)."""
    specs = [sample_scene(i, i, dataset="train-v4", width=640, height=480) for i in range(12)]
    # floats to 9 digits: math and numpy differ in the last bit between CPUs and libms
    text = _FLOAT.sub(lambda m: f"{float(m.group()):.9g}", repr(specs))
    assert hashlib.sha256(text.encode()).hexdigest() == TRAIN_V4_DIGEST


# -- the whole path with a stand-in renderer ------------------------------------------------


def fake_render(spec: Any, png: str, kept: dict[int, tuple[float, ...]]) -> dict[str, Any]:
    """Every dropped piece rests where it was dropped, on the ground."""
    Image.new("RGB", (spec.width, spec.height), (90, 90, 90)).save(png)
    poses = [
        kept.get(p.id) or (p.drop[0], p.drop[1], p.size_m / 3, 1.0, 0.0, 0.0, 0.0)
        for p in spec.pieces
    ]
    n = len(poses)
    return {
        "camera": camera_from(spec.conditions["camera"], spec.width, spec.height),
        "positions": np.array([p[:3] for p in poses]).reshape(n, 3),
        "sizes": [p.size_m for p in spec.pieces],
        "poses": poses,
        "visibility": seen_whole(n),
        "physics": {"engine": "stand-in", "seconds": 0.0, "dropped": n - len(kept)},
        "casters": [],
        "samples": 1,
        "denoiser": "none",
        "renderer": "stand-in",
        "render_seconds": 0.0,
        "build_seconds": 0.0,
    }


def _render(folder: Path, seed: int, plies: int = 8, hands: float = 0.5) -> list[dict[str, Any]]:
    scene = sample_sequence_scene(0, seed, dataset="t", width=96, height=72)
    start, moves = self_play(frame_rng(seed, 0, "game"), plies)
    frames = game_frames(start, moves, hands, frame_rng(seed, 0, "hands"))
    render_game(scene, frames, start, folder, fake_render, Progress(len(frames)), "test")
    return [json.loads(p.read_text()) for p in sorted(folder.glob("frame_*.json"))]


def _stable(truth: dict[str, Any]) -> dict[str, Any]:
    return truth | {
        "conditions": {k: v for k, v in truth["conditions"].items() if k != "total_seconds"}
    }


@pytest.mark.parametrize("seed", [3, 8])
def test_frames_keep_untouched_pieces_and_write_render_public_truth(
    tmp_path: Path, seed: int
) -> None:
    keys = json.loads((ROOT / "tests/training/fixtures/render_public_keys.json").read_text())
    truths = _render(tmp_path, seed)
    assert len(truths) == 9 and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"frame_{i:03d}.{ext}" for i in range(9) for ext in ("jpg", "json")]
    )
    for i, t in enumerate(truths):
        assert set(keys["top"]) <= set(t) and "sequence" in t
        assert t["sequence"]["frame"] == i and t["sequence"]["n_frames"] == 9
        assert t["image"] == f"frame_{i:03d}.jpg" and (i == 0) == (t["game"]["move"] is None)
        assert t["counts"] == t["game"]["engine_counts"]  # nothing rolled in this stand-in
        assert all(set(keys["piece"]) <= set(p) for p in t["pieces"])
    for a, b in itertools.pairwise(truths):
        pa, pb = poses_of(a), poses_of(b)
        for p in b["pieces"]:
            if p["region"] not in b["sequence"]["changed_regions"] and p["role"] == "board":
                assert pb[p["id"]] == pa[p["id"]]
        moved = {p["id"] for p in b["pieces"] if pa.get(p["id"]) != pb[p["id"]]}
        on = {p["id"]: p["region"] for p in b["pieces"]}
        assert all(on[i] in b["sequence"]["changed_regions"] or on[i] is None for i in moved)
    game = Game(start=Position.from_text(_start_text(truths[0])))
    for t in truths[1:]:
        game.play(t["game"]["move"])
        assert t["game"]["ply"] == game.position.ply


def _start_text(truth: dict[str, Any]) -> str:
    c = truth["game"]["engine_counts"]
    sq = [c[region_of_index(i)]["small"] for i in range(12)]
    b = [c["west_mandarin"]["big"], c["east_mandarin"]["big"]]
    st, bg = truth["game"]["captured_small"], truth["game"]["captured_big"]
    row = ",".join
    return (
        f"{sq[0]}{'B' * b[0]}|{row(map(str, sq[1:6]))}|{sq[6]}{'B' * b[1]}|"
        f"{row(map(str, sq[7:12]))} P{truth['game']['ply'] % 2} s{st[0]}/{st[1]} "
        f"q{bg[0]}/{bg[1]} d0/0 n{truth['game']['ply']}"
    )


def test_a_stopped_run_resumes_to_the_same_files(tmp_path: Path) -> None:
    whole = _render(tmp_path / "a", 5)
    jpgs = [p.read_bytes() for p in sorted((tmp_path / "a").glob("*.jpg"))]
    part = tmp_path / "b"
    _render(part, 5)
    for p in part.glob("frame_00[4-9].*"):  # stopped after frame 3
        p.unlink()
    (part / "frame_003.json").unlink()  # ... while writing frame 3: its jpg but no json
    again = _render(part, 5)
    assert [_stable(t) for t in again] == [_stable(t) for t in whole]
    assert [p.read_bytes() for p in sorted(part.glob("*.jpg"))] == jpgs


def test_heaps_hold_the_captured_pieces_when_the_scene_shows_them(tmp_path: Path) -> None:
    seed = next(s for s in range(100) if sample_sequence_scene(0, s, dataset="t").heaps)
    truths = _render(tmp_path, seed, plies=20, hands=0.0)
    last = truths[-1]
    stored = sum(p["role"] == "store" for p in last["pieces"])
    assert stored == sum(last["game"]["captured_small"]) + sum(last["game"]["captured_big"]) > 0


def test_the_dataset_cli_resumes_without_blender_when_all_is_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = load_sequences("seq-heldout-piece-v4")
    assert ds.plies == 20 and ds.hands == 0.25 and ds.scenes.count == 4
    for i in range(2):
        folder = tmp_path / f"sequence_{i:02d}"
        folder.mkdir()
        for k in range(21):
            (folder / f"frame_{k:03d}.jpg").write_bytes(b"")
            (folder / f"frame_{k:03d}.json").write_text("{}")
    argv = ["--dataset", "seq-heldout-piece-v4", "--count", "2", "--out", str(tmp_path)]
    assert main(argv) == 0
    assert "42 of 42 frames done, 0 to go" in capsys.readouterr().out
    assert main([*argv, "--size", "640x480"]) == 2  # the folder keeps its size
    err = capsys.readouterr().err.strip()
    assert "size=[1280, 960]" in err and "\n" not in err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--dataset", "nope"], "no dataset manifest nope.toml"),
        (["--dataset", "seq-heldout-piece-v4", "--hands", "2"], "hands must be a share 0..1"),
        (["--dataset", "seq-heldout-piece-v4", "--moves", "5- 5-"], "move 2 ('5-')"),
    ],
)
def test_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("render: ") and says in err and "\n" not in err


def test_a_half_written_settings_file_is_named_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "dataset.json").write_text("")  # what a run killed mid-write once left
    assert main(["--dataset", "seq-heldout-piece-v4", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "dataset.json is unreadable" in err and "\n" not in err


# -- the bundled demo -----------------------------------------------------------------------


def test_the_demo_plan_is_the_bundled_script() -> None:
    from companion.commands.demo import GAME, load_script

    assert list(DEMO_GAME) == GAME
    frames = demo_frames()
    shipped = load_script(DEMO)
    assert [s.__dict__ for s in script(frames)] == [s.__dict__ for s in shipped]
    assert [f.index for f in frames if f.hand] == [8]
    assert all((DEMO / s.file).is_file() for s in shipped)


def test_the_demo_frames_replay_the_game_and_its_mishaps() -> None:
    from companion.referee.reconcile import after_sowing

    frames = demo_frames()
    layout, kinds = initial_layout(Position.initial())
    game = Game()
    shown: list[list[int]] = []
    expected: list[list[int]] = [list(board_of(game.position)[0])]
    for f in frames[1:]:
        layout = apply_ops(layout, f.ops, kinds).layout
        shown.append(_squares(layout, kinds))
        if f.move is not None:
            t = game.play(f.move)
            expected.append(list(after_sowing(t)[0]))
        else:
            expected.append(list(board_of(game.position)[0]))
    shown.insert(0, expected[0])
    wrong = [k for k in range(12) if shown[5][k] != expected[5][k]]
    assert [shown[5][k] - expected[5][k] for k in wrong] == [-1, 1]  # one pebble one square on
    assert all(shown[i] == expected[i] for i in range(13) if i != 5)
    assert "refills" in frames[4].caption and shown[3] != shown[4]
    assert sum(shown[-1]) == 0 and layout.stores(kinds) == ([37, 13], [1, 1])


def test_the_demo_scene_is_an_ordinary_referee_setup() -> None:
    scene = demo_scene_at((1280, 960))
    assert demo_ok(scene) and pebble_px(scene) >= 15
    c = scene.spec.conditions
    assert c["ground"] in ("concrete", "earth") and c["lines"]["colour"] == "white"
    small = demo_scene_at((640, 480)).spec.conditions["camera"]
    assert small == c["camera"]  # the same camera, framing the board alike at any size


def test_demo_make_without_the_render_venv_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from companion.commands.demo import main as demo_main

    monkeypatch.setenv("OANQUAN_RENDER_PYTHON", str(tmp_path / "no-python"))
    assert demo_main(["--make", "--frames-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("oanquan demo: --make needs the render venv") and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_dataset_options_are_refused_with_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--demo", str(tmp_path), "--count", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "render: --count is for --dataset, not --demo"
    assert not any(tmp_path.iterdir())

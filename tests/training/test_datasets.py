"""Manifests (the seed lists are the datasets), the CLI's refusals, and where bpy may appear."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest

from training.render.__main__ import main, parse_args
from training.render.datasets import MANIFESTS, Dataset, cache_dir, load_manifest
from training.render.families import HELD_OUT_GROUNDS, HELD_OUT_PIECES
from training.render.sample import GENERATOR_VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_manifests_load_and_split_cleanly() -> None:
    names = sorted(p.stem for p in MANIFESTS.glob("*.toml"))
    sets = {n: load_manifest(n) for n in names}
    assert all(d.generator == GENERATOR_VERSION for d in sets.values())
    train = [d for d in sets.values() if d.name.startswith("train")]
    assert train
    for d in train:
        assert not set(d.grounds) & HELD_OUT_GROUNDS
        assert not set(d.pieces) & (HELD_OUT_PIECES | {"shells"})
    held = [d for d in sets.values() if d.name.startswith("heldout")]
    assert {g for d in held for g in d.grounds} >= HELD_OUT_GROUNDS
    assert {p for d in held for p in d.pieces} >= HELD_OUT_PIECES
    ranges = sorted((d.seed_start, d.seed_start + d.count) for d in sets.values())
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))  # disjoint


def test_seeds_are_index_plus_start(tmp_path: Path) -> None:
    (tmp_path / "x.toml").write_text(
        'name = "x"\ngenerator = "g"\nseed_start = 100\ncount = 3\n'
        'grounds = ["sand"]\npieces = ["beans"]\n'
    )
    d = load_manifest("x", tmp_path)
    assert d.seeds() == [(0, 100), (1, 101), (2, 102)]
    assert d.seeds(2) == [(0, 100), (1, 101)]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('name = "y"\n', "missing key 'generator'"),
        (
            'name = "other"\ngenerator = "g"\nseed_start = 0\ncount = 1\n'
            'grounds = ["sand"]\npieces = ["beans"]\n',
            "expected 'y'",
        ),
        (
            'name = "y"\ngenerator = "g"\nseed_start = 0\ncount = 1\n'
            'grounds = ["lava"]\npieces = ["beans"]\n',
            "lava",
        ),
        (
            'name = "y"\ngenerator = "g"\nseed_start = 0\ncount = 1\n'
            'grounds = ["sand"]\npieces = ["beans"]\npiece_scale = [0.3, 0.2]\n',
            "piece_scale must be",
        ),
        (
            'name = "y"\ngenerator = "g"\nseed_start = 0\ncount = 1\n'
            'grounds = ["sand"]\npieces = ["beans"]\npiece_scale = 0.3\n',
            "piece_scale must be",
        ),
    ],
)
def test_bad_manifests_say_what_is_wrong(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "y.toml").write_text(text)
    with pytest.raises(ValueError, match=needle):  # ManifestError and FamilyError both are
        load_manifest("y", tmp_path)


def test_piece_scale_is_read_and_absent_by_default(tmp_path: Path) -> None:
    head = 'name = "z"\ngenerator = "g"\nseed_start = 0\ncount = 1\n'
    head += 'grounds = ["sand"]\npieces = ["beans"]\n'
    (tmp_path / "z.toml").write_text(head)
    assert load_manifest("z", tmp_path).piece_scale is None
    (tmp_path / "z.toml").write_text(head + "piece_scale = [0.2, 0.3]\n")
    assert load_manifest("z", tmp_path).piece_scale == (0.2, 0.3)
    assert load_manifest("z", tmp_path).settings()["piece_scale"] == [0.2, 0.3]


def test_cache_dir_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OANQUAN_CACHE", str(tmp_path))
    assert cache_dir("train-v4") == tmp_path / "renders" / "train-v4"
    monkeypatch.delenv("OANQUAN_CACHE")
    assert cache_dir("a") == Path.home() / ".cache" / "oanquan" / "renders" / "a"


def test_cli_refuses_an_unknown_dataset_and_a_bad_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["--dataset", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit):
        parse_args(["--size", "640by480"])
    assert parse_args(["--size", "640x480"]).size == (640, 480)


def test_only_the_blender_module_imports_bpy() -> None:
    bad = []
    for path in sorted([*(ROOT / "training").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                blender_only = name.split(".")[0] in ("bpy", "bmesh", "mathutils")
                if blender_only and path.name != "blender.py":
                    bad.append(str(path.relative_to(ROOT)))
                if name.endswith("render.blender") and path.name != "__main__.py":
                    bad.append(str(path.relative_to(ROOT)))
    assert not bad


def test_background_chain_names_shipped_manifests_only() -> None:
    script = (ROOT / "training" / "render" / "background.sh").read_text()
    named = {w.split()[0] for w in script.split("--dataset ")[1:]}
    assert named and all(load_manifest(n).name == n for n in named)
    assert {n.split("-")[0] for n in named} == {"train", "heldout", "lens", "large"}


def test_stills_games_and_the_demo_draw_from_seeds_of_their_own() -> None:
    from training.render.sequence.demo import DEMO_SEED_START
    from training.render.sequence.manifest import MANIFESTS as GAMES

    ranges = [(d.seed_start, d.seed_start + d.count) for d in map(load_manifest, _names(MANIFESTS))]
    ranges += [(d.seed_start, d.seed_start + d.count) for d in map(_game, _names(GAMES))]
    ranges.append((DEMO_SEED_START, DEMO_SEED_START + 100_000))  # find_demo_seed's tries
    ranges.sort()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))


def _names(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.toml"))


def _game(name: str) -> Dataset:
    from training.render.sequence.manifest import load_sequences

    return load_sequences(name).scenes

"""Render games as frame sequences in render-public's sequence format.

    python -m training.render.sequence --dataset seq-heldout-ground-v4 [--count N] [--size WxH]
    python -m training.render.sequence --dataset ... --moves "5- 9- 4+" --count 1
    python -m training.render.sequence --demo companion/commands/demo_frames

One fixed scene per game (ground, lines, light, camera and the pieces' look drawn from
the sequence's seed), one frame after every move; only the pieces a move touched are
dropped again, the others keep their pose. Each frame is `frame_NNN.jpg` with its truth
`frame_NNN.json` (render-public's keys plus `sequence`, and each piece's `pose`) in
`<out>/sequence_NN/`. Resumable (a frame whose .json and .jpg both exist is skipped; the
next one starts from the poses its .json recorded), deterministic by seed, one CPU
thread, progress with rate and time left.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine import Position
from training.render.__main__ import _size
from training.render.datasets import ManifestError, write_settings
from training.render.geometry import REGIONS
from training.render.sample import (
    GENERATOR_VERSION,
    SceneSpec,
    SequenceScene,
    sample_sequence_scene,
)
from training.render.sequence.frames import (
    Pose,
    build_frame,
    catalogue,
    frame_rng,
    poses_of,
    sequence_truth,
)
from training.render.sequence.manifest import (
    SEQUENCER_VERSION,
    check_settings,
    load_sequences,
    sequences_dir,
)
from training.render.sequence.plan import (
    Change,
    FramePlan,
    SequenceError,
    apply_ops,
    game_frames,
    initial_layout,
    self_play,
)

Renderer = Callable[[SceneSpec, str, dict[int, Pose]], dict[str, Any]]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m training.render.sequence",
        description=(__doc__ or "").split("\n")[0],
    )
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--dataset", help="sequence manifest in training/render/sequence/manifests")
    what.add_argument(
        "--demo", type=Path, metavar="DIR", help="render the bundled demo game's frames into DIR"
    )
    ap.add_argument("--count", type=int, default=None, help="render the first N sequences only")
    ap.add_argument("--start", type=int, default=0, help="first sequence index")
    ap.add_argument("--size", type=_size, default=None, help="WxH (default 1280x960)")
    ap.add_argument("--plies", type=int, default=None, help="moves per game (manifest's default)")
    ap.add_argument(
        "--hands", type=float, default=None, help="share of frames with an arm over the board"
    )
    ap.add_argument("--moves", default=None, help='play these moves from the opening: "5- 9- 4+"')
    ap.add_argument(
        "--out", type=Path, default=None, help="folder (default $OANQUAN_CACHE/sequences/<name>)"
    )
    return ap.parse_args(argv)


def _settings_conflict(path: Path, settings: dict[str, Any]) -> str | None:
    """A folder keeps the settings it was started with: name the first one that differs."""
    if not path.exists():
        return None
    try:
        old = json.loads(path.read_text())
    except (ValueError, OSError):
        return f"{path} is unreadable (a run stopped while writing it?): remove it"
    if not isinstance(old, dict):
        return f"{path} is not a settings object: remove it"
    for key, value in settings.items():
        if key in old and old[key] != value:
            return f"{path.parent} was rendered with {key}={old[key]!r}, not {value!r}"
    return None


class Progress:
    """One line per frame: its seconds, the average and the time left."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.t0 = total, 0, time.time()

    def frame(self, name: str, seconds: float, res: dict[str, Any]) -> None:
        self.done += 1
        rate = (time.time() - self.t0) / self.done
        left = rate * (self.total - self.done)
        print(
            f"[{self.done}/{self.total}] {name} {seconds:.1f}s "
            f"(render {res['render_seconds']:.1f}s, physics {res['physics']['seconds']:.1f}s, "
            f"{res['physics']['dropped']} dropped) avg {rate:.1f}s/frame, left {left / 3600:.2f} h",
            flush=True,
        )


def _done(folder: Path, name: str) -> bool:
    return (folder / f"{name}.json").exists() and (folder / f"{name}.jpg").exists()


def render_game(
    scene: SequenceScene,
    frames: list[FramePlan],
    start: Position,
    folder: Path,
    render: Renderer,
    progress: Progress,
    source: str,
    jpeg_quality: int | None = None,
) -> None:
    """Render a game's frames into `folder`, skipping the finished ones."""
    from training.render.post import apply_post
    from training.render.truth import truth_of_render

    folder.mkdir(parents=True, exist_ok=True)
    layout, kinds = initial_layout(start)
    pieces = catalogue(scene, kinds)
    before: dict[int, Pose] = {}
    previous: Path | None = None
    tmp = Path(tempfile.mkdtemp(prefix="oanquan-sequence-"))
    try:
        for frame in frames:
            if frame.index == 0:
                change = Change(layout, frozenset(kinds), REGIONS, ())
            else:
                change = apply_ops(layout, frame.ops, kinds)
            layout = change.layout
            name = f"frame_{frame.index:03d}"
            if _done(folder, name):
                previous = folder / f"{name}.json"
                continue
            if previous is not None:
                before = poses_of(json.loads(previous.read_text()))
            small, big = layout.stores(kinds)
            game = {
                "source": source,
                "ply": frame.ply,
                "move": frame.move,
                "engine_counts": layout.counts(kinds),
                "captured_small": small,
                "captured_big": big,
            }
            f = build_frame(
                scene, pieces, layout, change.arrived, before, frame, change.changed,
                change.picked_up, game,
            )  # fmt: skip
            spec = f.spec
            if jpeg_quality is not None:
                post = spec.conditions["post"] | {"jpeg_quality": jpeg_quality}
                spec = replace(spec, conditions=spec.conditions | {"post": post})
            t0 = time.time()
            png = tmp / f"{name}.png"
            res = render(spec, str(png), f.kept)
            lens_k1 = spec.conditions["camera"].get("lens_k1", 0.0)
            apply_post(png, tmp / f"{name}.jpg", spec.conditions["post"], spec.width, lens_k1)
            truth = truth_of_render(spec, f"{name}.jpg", res, time.time() - t0)
            truth = sequence_truth(truth, f, frame.index, len(frames), res["poses"])
            (tmp / f"{name}.jpg").replace(folder / f"{name}.jpg")  # the jpg first, the json last
            part = folder / f"{name}.part"
            part.write_text(json.dumps(truth, separators=(",", ":")))
            part.replace(folder / f"{name}.json")
            png.unlink(missing_ok=True)
            previous = folder / f"{name}.json"
            progress.frame(f"{folder.name}/{name}", time.time() - t0, res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _blender() -> Renderer:
    from training.render import blender  # bpy only from here on

    return blender.render_frame


def main_dataset(args: argparse.Namespace) -> int:
    ds = load_sequences(args.dataset)
    if ds.scenes.generator != GENERATOR_VERSION or ds.sequencer != SEQUENCER_VERSION:
        print(
            f"render: manifest {args.dataset} wants {ds.scenes.generator!r} / {ds.sequencer!r}, "
            f"this is {GENERATOR_VERSION!r} / {SEQUENCER_VERSION!r}",
            file=sys.stderr,
        )
        return 2
    plies = ds.plies if args.plies is None else args.plies
    hands = ds.hands if args.hands is None else args.hands
    check_settings(plies, hands, "--plies/--hands: ")
    w, h = args.size or (1280, 960)
    moves = args.moves.split() if args.moves else None
    out = args.out or sequences_dir(ds.scenes.name)
    settings = ds.scenes.settings() | {
        "sequencer": SEQUENCER_VERSION,
        "size": [w, h],
        "plies": plies,
        "hands": hands,
        "moves": moves,
    }
    conflict = _settings_conflict(out / "dataset.json", settings)
    if conflict:
        print(f"render: {conflict}; use another --out", file=sys.stderr)
        return 2
    todo = [(i, s) for i, s in ds.scenes.seeds(args.count) if i >= args.start]
    games = []
    for i, seed in todo:
        scene = sample_sequence_scene(
            i, seed, dataset=ds.scenes.name, width=w, height=h,
            grounds=ds.scenes.grounds, pieces=ds.scenes.pieces, lens=ds.scenes.lens,
            piece_scale=ds.scenes.piece_scale,
        )  # fmt: skip
        if moves is None:
            start, game = self_play(frame_rng(seed, 0, "game"), plies)
            source = f"random self-play, sequence seed {seed}"
        else:
            start, game, source = Position.initial(), moves, "given moves"
        frames = game_frames(start, game, hands, frame_rng(seed, 0, "hands"))
        games.append((scene, frames, start, out / f"sequence_{i:02d}", source))
    total = sum(len(fr) for _, fr, _, _, _ in games)
    left = sum(not _done(d, f"frame_{f.index:03d}") for _, fr, _, d, _ in games for f in fr)
    print(
        f"render: {ds.scenes.name} -> {out}: {len(todo)} games, {total - left} of {total} frames "
        f"done, {left} to go at {w}x{h}",
        flush=True,
    )
    out.mkdir(parents=True, exist_ok=True)
    write_settings(out / "dataset.json", settings, indent=1)
    if not left:
        return 0
    render, progress = _blender(), Progress(left)
    for scene, frames, start, folder, source in games:
        render_game(scene, frames, start, folder, render, progress, source)
    return 0


def main_demo(args: argparse.Namespace) -> int:
    from training.render.sequence.demo import (
        DEMO_JPEG_QUALITY,
        DEMO_NAME,
        DEMO_SIZE,
        demo_frames,
        demo_scene_at,
        script,
    )

    ignored = [f"--{k}" for k in ("count", "plies", "hands", "moves", "out") if getattr(args, k)]
    if ignored or args.start:
        print(
            f"render: {(ignored or ['--start'])[0]} is for --dataset, not --demo", file=sys.stderr
        )
        return 2
    size = args.size or DEMO_SIZE
    frames = demo_frames()
    scene = demo_scene_at(size)
    cache = sequences_dir(DEMO_NAME) / f"sequence_{size[0]}x{size[1]}"
    settings = {"seed": scene.spec.seed, "sequencer": SEQUENCER_VERSION}
    conflict = _settings_conflict(cache.parent / "dataset.json", settings)
    if conflict:
        print(f"render: {conflict}; remove it to re-render", file=sys.stderr)
        return 2
    cache.mkdir(parents=True, exist_ok=True)
    write_settings(cache.parent / "dataset.json", settings)
    left = sum(not _done(cache, f"frame_{f.index:03d}") for f in frames)
    print(f"render: demo (seed {scene.spec.seed}) -> {cache}: {left} of {len(frames)} to go")
    if left:
        render_game(
            scene, frames, Position.initial(), cache, _blender(), Progress(left),
            "the rules' worked game V40", jpeg_quality=DEMO_JPEG_QUALITY,
        )  # fmt: skip
    args.demo.mkdir(parents=True, exist_ok=True)
    steps = script(frames)
    for f, step in zip(frames, steps, strict=True):
        shutil.copyfile(cache / f"frame_{f.index:03d}.jpg", args.demo / step.file)
    (args.demo / "script.json").write_text(
        json.dumps([s.__dict__ for s in steps], indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {len(steps)} frames and script.json to {args.demo} (truth in {cache})")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return main_demo(args) if args.demo is not None else main_dataset(args)
    except (ManifestError, SequenceError) as e:
        print(f"render: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

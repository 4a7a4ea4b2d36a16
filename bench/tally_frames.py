"""What the mean of several frames of one still spread does to the tally's count.

    python bench/tally_frames.py --light low                # seeds 10000..10299 in low light
    python bench/tally_frames.py --light other --scenes 100 # the first 100 in any other light
    python bench/tally_frames.py --light low --frames 4 --first-seed 30000
    python bench/tally_frames.py --gather --light all       # every scene, as the app reads it
    python bench/tally_frames.py --gather --light all --kind unseen --first-seed 20000
    python bench/tally_frames.py --gather --light all --respread 2   # and the guided respread

A fixed camera sees the spread (and the cleared board before it) for as long as the
players stand back, not once: the mean of K frames has sqrt(K) times less sensor noise,
and low light is where the noise is (``vision.synth`` draws 6-14 grey levels there, 0.5-6
elsewhere). Each scene of the tally bench (``bench/tally.py --empty``, the board known,
the first photo only) is read three ways against its empty board: one frame (fresh noise,
as each of the K), the mean of K frames of both, and that mean with the big stones
called on the single frame instead. Each line is ``bench/tally.py``'s figures of the
scenes chosen.

``--gather`` reads each scene as the live tally does (``companion.appliance.gather``):
its frames one by one until two tell the noise, then the mean of
``vision.frames.FRAMES`` where that noise is ``vision.frames.NOISY`` or more, the big
stones on one frame; the empty board the same way. Its lines are one frame against what
the app reads, over every scene chosen and over those it averaged. With ``--respread
ROUNDS`` both then follow the screen's loop (``bench.tally.guided``): the lit squares laid
out again, each new layout photographed (or gathered) afresh, at most ROUNDS times.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.tally import (
    EVAL_SEEDS,
    FIT_SCENES,
    _model_tag,
    _respread_tag,
    evaluate,
    fitted,
    follow_lit,
    guided_figures,
    kinds_of,
    reading_of,
    scene,
    with_detector,
)
from companion.appliance.gather import Gathered, Gatherer
from companion.appliance.memory import keep_freed_memory
from companion.referee.tally import SpreadModel
from vision.config import VisionConfig
from vision.frames import mean_frame
from vision.synth_spread import empty_board, spread_scene

Image = NDArray[np.uint8]


def spread_frame(seed: int, kind: str, noise: int, respread: tuple[int, ...] = ()) -> Image:
    """One photo of scene ``seed``'s spread (``respread``: those squares laid out again),
    its sensor noise drawn with ``noise``."""
    grounds, pieces = kinds_of(seed, kind)
    image, _ = spread_scene(
        seed, noise_seed=noise, grounds=grounds, pieces=pieces, respread=respread
    )
    return image


def empty_frame(seed: int, kind: str, noise: int) -> Image:
    """One photo of scene ``seed``'s board before the spread, noise drawn with ``noise``."""
    grounds, pieces = kinds_of(seed, kind)
    return empty_board(seed, noise_seed=noise, grounds=grounds, pieces=pieces)


def write_scene(
    seed: int, truth: dict[str, Any], folder: Path, frames: int, first_noise: int, kind: str
) -> None:
    """Scene ``seed`` as ``bench.tally.scene`` keeps it (``truth``: that record), its
    spread and empty board each the mean of ``frames`` frames (noise seeds from
    ``first_noise``)."""
    spreads = [spread_frame(seed, kind, first_noise + k) for k in range(frames)]
    empties = [empty_frame(seed, kind, first_noise + 500 + k) for k in range(frames)]
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / f"scene_{seed}.png"), mean_frame(spreads))
    cv2.imwrite(str(folder / f"scene_{seed}_empty.png"), mean_frame(empties))
    (folder / f"scene_{seed}.json").write_text(json.dumps(truth))


def gather(frame: Callable[[int], Image]) -> Gathered:
    """What the live tally's ``Gatherer`` reads of a scene whose K-th frame is ``frame(K)``."""
    gatherer = Gatherer()
    k = 0
    while (scene := gatherer.add(frame(k))) is None:
        k += 1
    return scene


def write_gathered(
    seed: int, truth: dict[str, Any], folder: Path, first_noise: int, kind: str
) -> dict[str, Any]:
    """Scene ``seed`` as the app would read it: its spread and empty board each gathered
    from fresh frames (``gather``), with one frame of each for the big stones where a mean
    is read; returns how each was gathered."""
    spread = gather(lambda k: spread_frame(seed, kind, first_noise + k))
    empty = gather(lambda k: empty_frame(seed, kind, first_noise + 500 + k))
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / f"scene_{seed}.png"), spread.image)
    cv2.imwrite(str(folder / f"scene_{seed}_empty.png"), empty.image)
    if spread.single is not None:
        cv2.imwrite(str(folder / f"scene_{seed}_one.png"), spread.single)
        one_empty = empty.single if empty.single is not None else empty.image
        cv2.imwrite(str(folder / f"scene_{seed}_one_empty.png"), one_empty)
    (folder / f"scene_{seed}.json").write_text(json.dumps(truth))
    return {
        "seed": seed,
        "spread_frames": spread.frames,
        "empty_frames": empty.frames,
        "noise": spread.noise,
    }


def write_respread(
    seed: int,
    truth: dict[str, Any],
    folder: Path,
    kind: str,
    respread: tuple[int, ...],
    gathered: bool,
) -> bool:
    """Scene ``seed`` after the players laid out ``respread`` again, as one fresh frame or
    (``gathered``) as the app gathers it, beside the empty board already written; whether
    a mean was written (with its single frame)."""

    def frame(k: int) -> Image:
        return spread_frame(seed, kind, 100 + k, respread)

    got = gather(frame) if gathered else Gathered(frame(0))
    name = f"scene_{seed}{_respread_tag(respread)}"
    cv2.imwrite(str(folder / f"{name}.png"), got.image)
    (folder / f"{name}.json").write_text(json.dumps(truth))
    if got.single is not None:
        cv2.imwrite(str(folder / f"{name}_one.png"), got.single)
    return got.single is not None


def guided_frames(
    seed: int,
    truth: dict[str, Any],
    root: Path,
    kind: str,
    config: VisionConfig,
    tag: str,
    model: SpreadModel,
    rounds: int,
    gathered: bool,
    single: bool,
) -> tuple[dict[str, Any], list[int]]:
    """``bench.tally.follow_lit`` on fresh frames: scene ``seed`` (written under ``root``,
    ``single`` where its first reading is a mean) read, then each layout the lit squares
    ask for photographed afresh (``write_respread``) and read, at most ``rounds`` times."""

    def read(laid: tuple[int, ...]) -> dict[str, Any]:
        mean = write_respread(seed, truth, root / kind, kind, laid, gathered)
        return reading_of(seed, kind, config, tag, True, laid, True, root=root, single=mean)

    first = reading_of(seed, kind, config, tag, True, empty=True, root=root, single=single)
    return follow_lit(first, read, model, rounds)


def stones_from(mean: dict[str, Any], single: dict[str, Any]) -> dict[str, Any]:
    """``mean``'s reading with the quan squares' big-stone call taken from ``single``."""
    squares = list(mean["squares"])
    for sq in (0, 6):
        squares[sq] = single["squares"][sq]
    return {
        **mean,
        "squares": squares,
        "big_heat": single["big_heat"],
        "big_net": single["big_net"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=8, help="frames averaged (default 8)")
    ap.add_argument(
        "--light", choices=["low", "other", "all"], default="low", help="which scenes to read"
    )
    ap.add_argument("--scenes", type=int, default=300, help="scenes looked at, then filtered")
    ap.add_argument("--first-seed", type=int, default=EVAL_SEEDS)
    ap.add_argument(
        "--kind", choices=["wide", "unseen"], default="wide", help="the tally bench's set"
    )
    ap.add_argument(
        "--gather", action="store_true", help="read each scene as the live tally gathers it"
    )
    ap.add_argument(
        "--respread",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="with --gather: then follow the guided respread, at most ROUNDS times",
    )
    ap.add_argument(
        "--pair-model",
        type=Path,
        help="the detector read against the cleared board (ONNX; the shipped one by default)",
    )
    ap.add_argument(
        "--fit",
        action="store_true",
        help="fit the interval model on the tally bench's fitting seeds first (its --empty --fit)",
    )
    args = ap.parse_args()
    if args.pair_model is not None and not args.pair_model.is_file():
        ap.error(f"--pair-model: no such file: {args.pair_model}")
    if args.frames < 2:
        ap.error(f"--frames: at least 2, got {args.frames}")
    if args.respread and not args.gather:
        ap.error("--respread: only with --gather")
    if args.respread < 0:
        ap.error(f"--respread: at least 0 rounds, got {args.respread}")
    cv2.setNumThreads(1)
    keep_freed_memory()
    kind = args.kind
    truths: dict[int, dict[str, Any]] = {}  # the bench's own record of each scene chosen, read once
    for seed in range(args.first_seed, args.first_seed + args.scenes):
        truth = scene(seed, kind)[1]
        if args.light == "all" or (truth["light"] == "low") == (args.light == "low"):
            truths[seed] = truth
    seeds = list(truths)
    count = VisionConfig().count
    pair = str(args.pair_model) if args.pair_model is not None else count.spread_pair_model
    config = with_detector(Path(count.spread_model), pair)
    tag = _model_tag(config, True)
    model = SpreadModel()
    if args.fit:
        model = fitted(config, tag, "wide", FIT_SCENES, True)[0]
    print(f"{len(seeds)} scenes ({kind}, {args.light} light) from seed {args.first_seed}")
    if args.gather:
        return _gathered(seeds, truths, kind, config, tag, model, args.respread)
    read: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, frames in (("one frame", 1), (f"mean of {args.frames}", args.frames)):
            root = Path(tmp) / name.replace(" ", "_")
            for seed in seeds:
                write_scene(seed, truths[seed], root / kind, frames, 100, kind)
            read[name] = [
                reading_of(s, kind, config, tag, True, empty=True, root=root) for s in seeds
            ]
    single, mean = read["one frame"], read[f"mean of {args.frames}"]
    read[f"mean of {args.frames}, big stones on one frame"] = [
        stones_from(m, s) for m, s in zip(mean, single, strict=True)
    ]
    for name, records in read.items():
        print(json.dumps({"frames": name, **evaluate(records, model)["all"]}))
    return 0


def _gathered(
    seeds: list[int],
    truths: dict[int, dict[str, Any]],
    kind: str,
    config: VisionConfig,
    tag: str,
    model: SpreadModel,
    rounds: int = 0,
) -> int:
    """``--gather``: one frame against the scene as the app gathers it, every scene and
    the averaged ones apart; ``rounds``: then after the guided respread too."""
    with tempfile.TemporaryDirectory() as tmp:
        one_root, app_root = Path(tmp) / "one", Path(tmp) / "app"
        how = {}
        for seed in seeds:
            write_scene(seed, truths[seed], one_root / kind, 1, 100, kind)
            how[seed] = write_gathered(seed, truths[seed], app_root / kind, 100, kind)
            print(json.dumps(how[seed]), file=sys.stderr, flush=True)
        one = {s: reading_of(s, kind, config, tag, True, empty=True, root=one_root) for s in seeds}
        app = {
            s: reading_of(
                s,
                kind,
                config,
                tag,
                True,
                empty=True,
                root=app_root,
                single=how[s]["spread_frames"] > 1,
            )
            for s in seeds
        }
        guided: dict[str, list[tuple[dict[str, Any], list[int]]]] = {}
        if rounds:
            for name, root, gathered in (
                ("one frame", one_root, False),
                ("as the app gathers", app_root, True),
            ):
                guided[name] = [
                    guided_frames(
                        s,
                        truths[s],
                        root,
                        kind,
                        config,
                        tag,
                        model,
                        rounds,
                        gathered,
                        gathered and how[s]["spread_frames"] > 1,
                    )
                    for s in seeds
                ]
    averaged = [s for s in seeds if how[s]["spread_frames"] > 1]
    for label, chosen in (("every scene", seeds), ("averaged", averaged)):
        for name, records in (("one frame", one), ("as the app gathers", app)):
            scores = evaluate([records[s] for s in chosen], model)["all"] if chosen else {}
            print(json.dumps({"scenes": label, "read": name, **scores}))
    for name, results in guided.items():
        scores = evaluate([r for r, _ in results], model)["all"]
        print(
            json.dumps({"read": name, "after respread": rounds, **guided_figures(results, scores)})
        )
    low = [s for s in seeds if truths[s]["light"] == "low"]
    print(
        json.dumps(
            {
                "averaged": len(averaged),
                "averaged in low light": sum(truths[s]["light"] == "low" for s in averaged),
                "low light": len(low),
                "empty boards averaged": sum(how[s]["empty_frames"] > 1 for s in seeds),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

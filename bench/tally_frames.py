"""What the mean of several frames of one still spread would do to the tally's count.

    python bench/tally_frames.py --light low                # seeds 10000..10299 in low light
    python bench/tally_frames.py --light other --scenes 100 # the first 100 in any other light
    python bench/tally_frames.py --light low --frames 4 --first-seed 30000

A fixed camera sees the spread (and the cleared board before it) for as long as the
players stand back, not once: the mean of K frames has sqrt(K) times less sensor noise,
and low light is where the noise is (``vision.synth`` draws 6-14 grey levels there, 0.5-6
elsewhere). Each scene of the tally bench (``bench/tally.py --empty``, the board known,
the first photo only) is read three ways against its empty board: one frame (fresh noise,
as each of the K), the mean of K frames of both, and that mean with the big stones
called on the single frame instead. Each line is ``bench/tally.py``'s figures of the
scenes chosen.

Not wired into the app: only noisy (dark) frames gain, and there the pair detector's
stone peaks fall on some big stones (it never saw a dark frame without strong noise: the
generator draws the two together). training/README.md has the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.tally import (
    EVAL_SEEDS,
    _model_tag,
    evaluate,
    reading_of,
    scene,
    with_detector,
)
from companion.appliance.memory import keep_freed_memory
from companion.referee.tally import SpreadModel
from vision.config import VisionConfig
from vision.synth_spread import empty_board, spread_scene

KIND = "wide"  # the tally bench's new scenes: every ground and piece kind


def mean_frame(frames: list[NDArray[np.uint8]]) -> NDArray[np.uint8]:
    """The per-pixel mean of ``frames``, rounded to 8 bits."""
    total = np.zeros(frames[0].shape, np.float32)
    for frame in frames:
        total += frame
    return np.asarray(np.clip(total / len(frames) + 0.5, 0, 255), np.uint8)


def write_scene(
    seed: int, truth: dict[str, Any], folder: Path, frames: int, first_noise: int
) -> None:
    """Scene ``seed`` as ``bench.tally.scene`` keeps it (``truth``: that record), its
    spread and empty board each the mean of ``frames`` frames (noise seeds from
    ``first_noise``)."""
    spreads = [spread_scene(seed, noise_seed=first_noise + k)[0] for k in range(frames)]
    empties = [empty_board(seed, noise_seed=first_noise + 500 + k) for k in range(frames)]
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / f"scene_{seed}.png"), mean_frame(spreads))
    cv2.imwrite(str(folder / f"scene_{seed}_empty.png"), mean_frame(empties))
    (folder / f"scene_{seed}.json").write_text(json.dumps(truth))


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
    args = ap.parse_args()
    if args.frames < 2:
        ap.error(f"--frames: at least 2, got {args.frames}")
    cv2.setNumThreads(1)
    keep_freed_memory()
    truths = {}  # the bench's own record of each scene chosen, read once
    for seed in range(args.first_seed, args.first_seed + args.scenes):
        truth = scene(seed, KIND)[1]
        if args.light == "all" or (truth["light"] == "low") == (args.light == "low"):
            truths[seed] = truth
    seeds = list(truths)
    count = VisionConfig().count
    config = with_detector(Path(count.spread_model), count.spread_pair_model)
    tag = _model_tag(config, True)
    read: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, frames in (("one frame", 1), (f"mean of {args.frames}", args.frames)):
            root = Path(tmp) / name.replace(" ", "_")
            for seed in seeds:
                write_scene(seed, truths[seed], root / KIND, frames, 100)
            read[name] = [
                reading_of(s, KIND, config, tag, True, empty=True, root=root) for s in seeds
            ]
    single, mean = read["one frame"], read[f"mean of {args.frames}"]
    read[f"mean of {args.frames}, big stones on one frame"] = [
        stones_from(m, s) for m, s in zip(mean, single, strict=True)
    ]
    model = SpreadModel()
    print(f"{len(seeds)} scenes ({args.light} light) from seed {args.first_seed}")
    for name, records in read.items():
        print(json.dumps({"frames": name, **evaluate(records, model)["all"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where the tally's count goes wrong: each true piece matched to the detector's candidates.

    python bench/tally_misses.py                    # new scenes, board known, seeds 10000..10299
    python bench/tally_misses.py --stills           # the board located in the still (right)
    python bench/tally_misses.py --unseen           # brick ground and shells, seeds 20000..
    python bench/tally_misses.py --model other.onnx # another detector (bench/tally.py --model)
    python bench/tally_misses.py --empty            # against the empty board (bench/tally.py --empty)

Reads the readings ``bench/tally.py`` cached for the shipped models (run it first
with the same scenes). A true piece is matched to the nearest unmatched candidate
within ``--radius`` piece sizes (greedy by distance; the detector's peak of a
sphere or a tilted view sits a few pixels off the ground point, so 0.5 miscounts
well-found small pieces). Prints how high the true pieces' candidates stand
against the unmatched ones, the share of pieces under the sure level per
condition (how close the nearest other piece is, piece size, faintness, piece
kind, ground, light), the false candidates at or above it, the exact share if
each matched candidate were known to be a piece (what no maths on these
candidates can beat) and the error of the total.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.tally import (
    CACHE,
    EMPTY_VERSION,
    EVAL_SEEDS,
    UNSEEN_SEEDS,
    _model_tag,
    located_right,
    squares_of,
    with_detector,
)
from companion.referee.tally import SURE, count_spread
from vision.config import VisionConfig
from vision.geometry import COLUMNS

CITIZEN = {1, 2, 3, 4, 5, 7, 8, 9, 10, 11}


def square_of(x: float, y: float) -> int:
    """Ring index of a citizen square's point, -1 elsewhere."""
    if 0.0 <= x < 5.0 and 0.0 <= y < 2.0:
        south, north = COLUMNS[int(x)]
        return south if y < 1.0 else north
    return -1


def match(
    truth: np.ndarray, cands: np.ndarray, reach: float
) -> tuple[dict[int, int], dict[int, int]]:
    """Greedy nearest pairs (true piece -> candidate and back) closer than ``reach``."""
    d = np.hypot(truth[:, None, 0] - cands[None, :, 0], truth[:, None, 1] - cands[None, :, 1])
    pairs = sorted((float(d[i, j]), i, j) for i, j in zip(*np.nonzero(d < reach), strict=True))
    piece: dict[int, int] = {}
    cand: dict[int, int] = {}
    for _, i, j in pairs:
        if i not in piece and j not in cand:
            piece[int(i)], cand[int(j)] = int(j), int(i)
    return piece, cand


def bucket(value: float, edges: tuple[float, ...], names: tuple[str, ...]) -> str:
    return names[sum(value >= e for e in edges)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scenes", type=int, default=300)
    ap.add_argument("--unseen", action="store_true")
    ap.add_argument("--stills", action="store_true", help="the board located in the still")
    ap.add_argument("--radius", type=float, default=0.8, help="match radius, piece sizes")
    ap.add_argument(
        "--model",
        type=Path,
        default=Path(VisionConfig().count.spread_model),
        help="the piece detector whose readings bench/tally.py --model cached",
    )
    ap.add_argument("--empty", action="store_true", help="readings against the empty board")
    ap.add_argument(
        "--pair-model",
        default=VisionConfig().count.spread_pair_model,
        help="with --empty, the pair detector of bench/tally.py --pair-model",
    )
    args = ap.parse_args()
    config = with_detector(args.model, args.pair_model)
    kind, first = ("unseen", UNSEEN_SEEDS) if args.unseen else ("wide", EVAL_SEEDS)
    tag, path = _model_tag(config, args.empty), "located" if args.stills else "given"
    if args.empty:
        path += f"_{EMPTY_VERSION}"
    pieces: list[dict[str, Any]] = []
    false: list[dict[str, Any]] = []
    scenes: list[dict[str, Any]] = []
    wrong = 0
    for seed in range(first, first + args.scenes):
        file = CACHE / kind / f"reading_{seed}_{path}_{tag}.json"
        if not file.is_file():
            continue
        r = json.loads(file.read_text())
        if not r["found"]:
            continue
        if not located_right(r):  # candidates on a wrong board match nothing: a board miss
            wrong += 1
            continue
        size = float(r["piece_size"])
        truth = np.array(json.loads((CACHE / kind / f"scene_{seed}.json").read_text())["small"])
        cands = np.array(r["candidates"], dtype=np.float64).reshape(-1, 4)
        near = np.full(len(truth), 9.0)
        if len(truth) > 1:
            gaps = np.hypot(*(truth[:, None, :] - truth[None, :, :]).transpose(2, 0, 1))
            gaps[np.diag_indices(len(truth))] = 9.0
            near = gaps.min(axis=1) / size
        piece, cand = match(truth, cands, args.radius * size)
        for i in range(len(truth)):
            j = piece.get(i)
            pieces.append(
                {
                    "score": float(cands[j, 2]) if j is not None else 0.0,
                    "near": float(near[i]),
                    "size": size,
                    "contrast": r["contrast"],
                    "pieces": r["pieces"],
                    "ground": r["ground"],
                    "light": r["light"],
                }
            )
        for j, c in enumerate(cands):
            if j not in cand and int(c[3]) in CITIZEN:
                far = float(np.hypot(*(truth - c[:2]).T).min()) / size if len(truth) else 9.0
                false.append({"score": float(c[2]), "far": far})
        total = count_spread(squares_of(r), outside=r["outside"]).total
        known = sum(1 for i, j in piece.items() if int(cands[j, 3]) == square_of(*truth[i]))
        scenes.append({"truth": sum(r["board"]), "total": total, "oracle": known})
    n = max(len(pieces), 1)
    print(
        f"{kind} scenes, {path} boards, model {tag}: {len(scenes)} scenes located right"
        f" ({wrong} found but located wrong left out), {len(pieces)} pieces"
    )
    edges = np.arange(0.1, 1.01, 0.1)
    true_h = np.histogram([p["score"] for p in pieces if p["score"] > 0], edges)[0]
    false_h = np.histogram([f["score"] for f in false], edges)[0]
    print("candidate height  " + " ".join(f"{e:5.1f}" for e in edges[:-1]))
    print("  true pieces     " + " ".join(f"{v:5d}" for v in true_h))
    print("  no piece        " + " ".join(f"{v:5d}" for v in false_h))
    none = sum(p["score"] == 0 for p in pieces)
    under = sum(p["score"] < SURE for p in pieces)
    print(
        f"pieces without any candidate: {none / n:.3f}; under the sure level {SURE}: {under / n:.3f}"
    )

    def share(key: Callable[[dict[str, Any]], str]) -> str:
        groups: dict[str, list[bool]] = defaultdict(list)
        for p in pieces:
            groups[key(p)].append(p["score"] < SURE)
        return ", ".join(f"{k} {np.mean(v):.3f} ({len(v)})" for k, v in sorted(groups.items()))

    print("under the sure level, by")
    print(
        "  nearest piece:",
        share(lambda p: bucket(p["near"], (1.0, 1.3), ("touching", "1-1.3", ">1.3"))),
    )
    print(
        "  piece size:",
        share(
            lambda p: bucket(p["size"], (0.08, 0.1, 0.14), ("<.08", ".08-.1", ".1-.14", ">=.14"))
        ),
    )
    print("  faintest:", share(lambda p: bucket(p["contrast"], (12, 25), ("<12", "12-25", ">=25"))))
    print("  piece kind:", share(lambda p: p["pieces"]))
    print("  ground:", share(lambda p: p["ground"]))
    print("  light:", share(lambda p: p["light"]))
    sure_false = [f for f in false if f["score"] >= SURE]
    print(
        f"false candidates at or above {SURE} in citizen squares: {len(sure_false)}"
        f" ({len(sure_false) / max(len(scenes), 1):.2f} a scene); nearest piece",
        dict(Counter(bucket(f["far"], (1.0, 2.0), ("<1", "1-2", ">2")) for f in sure_false)),
    )
    m = max(len(scenes), 1)
    exact = sum(s["total"] == s["truth"] for s in scenes)
    oracle = sum(s["oracle"] == s["truth"] for s in scenes)
    print(f"exact total {exact / m:.3f}; if every matched candidate were known: {oracle / m:.3f}")
    errors = Counter(s["total"] - s["truth"] for s in scenes)
    print("read - true:", ", ".join(f"{k:+d}: {v}" for k, v in sorted(errors.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

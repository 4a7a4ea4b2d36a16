"""How well the camera referees three- and four-seat games on a ring board.

    python bench/track_ring.py --players 3 4 --games 2 --plies 16

Random games of ``Rules(players=N)`` are photographed by the ring scene
generator (:mod:`vision.synth_ring`, one fixed scene per game, a square's
pebbles unchanged unless its count changed, the light drifting a little), the
board's corners are given once (as ``oanquan calibrate`` would), and every
photo goes through ``FramePipeline`` with a ``RingObserver`` exactly as
``oanquan track --answers`` runs it: the true moves play the players, who
answer each question or dispute and correct a wrong move. Prints, per seat
count, the moves identified without asking, asked, disputed, wrong accepted
and missed, and the decision time per frame. Frames go to a folder under
``~/.cache/oanquan/track_ring`` (``--workdir``), never into the work tree.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from companion.appliance.pipeline import FramePipeline
from companion.appliance.ring_observe import ring_observer
from companion.commands.track import track
from companion.referee import Referee
from engine import Game, Move, Rules
from vision.synth_ring import render_ring


def photograph_game(
    players: int, index: int, seed: int, plies: int, folder: Path, inner_corners: bool = False
) -> tuple[list[Path], list[Move], list[list[float]]]:
    """Play a random game and photograph every position: (frames, moves, corners).

    ``inner_corners``: the corners given include the inner outline's (2N points).
    """
    rng = random.Random(f"ring game {seed} {players} {index}")
    light = random.Random(f"ring light {seed} {players} {index}")
    game = Game(Rules(players=players))
    folder.mkdir(parents=True, exist_ok=True)
    frames: list[Path] = []
    moves: list[Move] = []
    corners: list[list[float]] = []
    scene = seed * 1000 + players * 100 + index
    for ply in range(plies + 1):
        pos = game.position
        image, truth = render_ring(list(pos.board), list(pos.big), scene * 7, scene_seed=scene)
        corners = truth["corners"] + (truth["inner_corners"] if inner_corners else [])
        drift = 1.0 + light.uniform(-0.04, 0.04)
        image = np.clip(image.astype(np.float32) * drift, 0, 255).astype(np.uint8)
        path = folder / f"frame_{ply:03d}.jpg"
        cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        frames.append(path)
        if game.is_over or ply == plies:
            break
        move = rng.choice(game.legal_moves())
        game.play(move)
        moves.append(move)
    return frames, moves, corners


def referee_game(
    players: int, frames: list[Path], moves: list[Move], corners: list[list[float]]
) -> dict[str, Any]:
    """Referee one photographed game; classify every move line as bench/track.py does."""
    rules = Rules(players=players)
    referee = Referee(rules)
    observer = ring_observer(corners, rules, stills=True)
    pipeline = FramePipeline(observer, referee, start_shown=True)
    out = io.StringIO()
    times: list[float] = []
    track(frames, pipeline, out, timings=times, answers=moves)
    state = ""
    got = {"identified": 0, "asked": 0, "disputed": 0, "wrong": 0}
    for text in out.getvalue().splitlines():
        line = json.loads(text)
        if "state" in line:
            state = line["state"]
        elif "move" in line:
            if "expected" in line:
                got["wrong"] += 1
            elif line.get("answered"):
                got["disputed" if state == "dispute" else "asked"] += 1
            else:
                got["identified"] += 1
    final = [str(m) for m in pipeline.referee.game.moves] == [str(m) for m in moves]
    return {**got, "moves": len(moves), "times": times, "same_game": final}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4], choices=(3, 4))
    parser.add_argument("--games", type=int, default=2, help="games per seat count")
    parser.add_argument("--plies", type=int, default=16, help="moves per game at most")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--inner-corners", action="store_true", help="give the inner outline's corners too"
    )
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache/oanquan/track_ring")
    args = parser.parse_args()
    if args.games < 1 or args.plies < 1:
        parser.error("--games and --plies must be at least 1")
    for n in args.players:
        total = {"moves": 0, "identified": 0, "asked": 0, "disputed": 0, "wrong": 0}
        times: list[float] = []
        same = 0
        started = time.perf_counter()
        for g in range(args.games):
            folder = args.workdir / f"seed{args.seed}_p{n}_g{g}"
            frames, moves, corners = photograph_game(
                n, g, args.seed, args.plies, folder, args.inner_corners
            )
            result = referee_game(n, frames, moves, corners)
            for key in total:
                total[key] += result[key]
            times += result["times"]
            same += result["same_game"]
        decided = sum(total[k] for k in ("identified", "asked", "disputed", "wrong"))
        summary = {
            "players": n,
            "games": args.games,
            "corners_given": 2 * n if args.inner_corners else n,
            **total,
            "missed": total["moves"] - decided,
            "games_recorded_right": same,
            "identified_without_asking": round(total["identified"] / max(1, total["moves"]), 3),
            "decision_ms_median": round(statistics.median(times), 1) if times else None,
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How well the referee follows real games from frames: moves recognised, asked, wrong.

    python bench/track.py DATASET_DIR              # every sequence_* folder (render-public layout)
    python bench/track.py --synth 10 --seed 3      # fresh generated games, never tuned on
    python bench/track.py --synth 10 --hands 0.2   # ... with an arm over the board in 20% of frames

For every sequence the referee starts from the position of its first frame
and sees the frames in order, exactly as ``oanquan track`` does. Printed
(one JSON line): the fraction of true moves it identified without asking,
the fraction of moves where it asked the players, the number of wrong moves
it accepted silently, and the time from a settled frame to the decision
(median and p95, one thread).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path and would shadow our packages.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import cv2  # noqa: E402

from companion.appliance.observe import VisionObserver  # noqa: E402
from companion.appliance.pipeline import FramePipeline  # noqa: E402
from companion.referee import Referee  # noqa: E402
from device.ports import Frame  # noqa: E402
from engine import Game, Position  # noqa: E402
from vision.synth import REGION_NAMES  # noqa: E402

REGION_SQUARE = {name: sq for sq, name in enumerate(REGION_NAMES)}


def start_position(truth: dict[str, Any]) -> Position:
    """The engine position of a ground-truth frame (debts are not recorded: taken as 0)."""
    game = truth["game"]
    board = [0] * 12
    big = [0, 0]
    for region, c in game["engine_counts"].items():
        sq = REGION_SQUARE[region]
        board[sq] = c["small"]
        if sq % 6 == 0:
            big[sq // 6] = c["big"]
    return Position(
        tuple(board),
        (big[0], big[1]),
        tuple(game["captured_small"]),  # type: ignore[arg-type]
        tuple(game["captured_big"]),  # type: ignore[arg-type]
        to_move=game["ply"] % 2,
        ply=game["ply"],
    )


def run_sequence(frames: list[tuple[Path, str | None]], start: Position) -> dict[str, Any]:
    """Referee one sequence; ``frames`` pairs each image with the true move that led to it.

    A move counts as identified when the referee accepts exactly it without
    asking (possibly one frame late, after a frame with a hand); as asked
    when the referee asks the players (who then answer with the true move);
    as wrong when the referee accepts anything else. A referee that falls two
    moves behind or accepts a wrong move is put back on the true position, so
    one mistake is counted once.
    """
    referee = Referee(start=start)
    referee.setup_checked = True
    judge = FramePipeline(VisionObserver(stills=True), referee, start_shown=True)
    truth = Game(start=start)
    stats = {"moves": 0, "identified": 0, "asked": 0, "wrong": 0}
    decision_ms: list[float] = []
    for seq, (path, move) in enumerate(frames):
        image = cv2.imread(str(path))
        if move is not None:
            truth.play(move)
            stats["moves"] += 1
        t0 = time.perf_counter()
        report = judge(Frame(image, float(seq), seq, path.name)).report
        decision_ms.append((time.perf_counter() - t0) * 1000)
        done = referee.position.ply - start.ply
        if report.accepted:
            expected = [str(m) for m in truth.moves[done - len(report.accepted) : done]]
            for got, want in zip((str(a.move) for a in report.accepted), expected, strict=False):
                stats["identified" if got == want else "wrong"] += 1
        elif report.state == "ambiguous" and move is not None:
            stats["asked"] += 1
            pending = referee.pending
            if pending is not None and any(str(c) == move for c in pending.choices):
                referee.confirm(move)
        behind = truth.position.ply - referee.position.ply
        wrong_path = referee.game.moves != truth.moves[: len(referee.game.moves)]
        if wrong_path or behind >= 2:
            referee = Referee(start=truth.position)
            referee.setup_checked = True
            judge.follow(referee, start_shown=True)
            start = truth.position
            truth = Game(start=start)
    stats["missed"] = stats["moves"] - stats["identified"] - stats["asked"] - stats["wrong"]
    return {**stats, "decision_ms": decision_ms}


def dataset_sequences(root: Path) -> list[tuple[list[tuple[Path, str | None]], Position]]:
    out = []
    for folder in sorted(p for p in root.rglob("sequence_*") if p.is_dir()):
        images = sorted(folder.glob("*.jpg")) + sorted(folder.glob("*.png"))
        truths = [json.loads(p.with_suffix(".json").read_text()) for p in images]
        frames = [
            (p, t["game"]["move"] if i else None)
            for i, (p, t) in enumerate(zip(images, truths, strict=True))
        ]
        out.append((frames, start_position(truths[0])))
    return out


def synth_sequences(
    count: int, seed: int, workdir: Path, plies: int = 20, hands: float = 0.0
) -> list[tuple[list[tuple[Path, str | None]], Position]]:
    """Random self-play games photographed by the scene generator, one fixed scene each.

    ``hands``: the share of frames (after the first) taken with an arm still
    reaching over the board, as players' hands come in and out of real photos.
    """
    import random

    from companion.referee.reconcile import board_of
    from vision.synth import render_scene

    out = []
    for n in range(count):
        rng = random.Random(seed * 1000 + n)
        hand_rng = random.Random(f"hands {seed} {n}")  # the games stay those of --hands 0
        game = Game()
        folder = workdir / f"sequence_{n:03d}"
        folder.mkdir(parents=True)
        frames: list[tuple[Path, str | None]] = []
        move: str | None = None
        for ply in range(plies + 1):
            board, big = board_of(game.position)
            image, _ = render_scene(
                list(board),
                big,
                seed * 100_000 + n * 100 + ply,
                scene_seed=seed * 1000 + n,
                hand=ply > 0 and hand_rng.random() < hands,
            )
            path = folder / f"frame_{ply:03d}.jpg"
            cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
            frames.append((path, move))
            if game.is_over:
                break
            m = rng.choice(game.legal_moves())
            game.play(m)
            move = str(m)
        out.append((frames, Position.initial()))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", type=Path)
    parser.add_argument("--synth", type=int, default=0, help="generate this many sequences instead")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--hands", type=float, default=0.0, help="share of generated frames with an arm in view"
    )
    args = parser.parse_args()
    cv2.setNumThreads(1)
    with tempfile.TemporaryDirectory() as tmp:
        if args.synth:
            sequences = synth_sequences(args.synth, args.seed, Path(tmp), hands=args.hands)
        elif args.dataset is not None:
            sequences = dataset_sequences(args.dataset)
        else:
            parser.error("give DATASET_DIR or --synth N")
        totals = {"moves": 0, "identified": 0, "asked": 0, "wrong": 0, "missed": 0}
        times: list[float] = []
        for frames, start in sequences:
            result = run_sequence(frames, start)
            times += result.pop("decision_ms")
            for k in totals:
                totals[k] += result[k]
    moves = max(1, totals["moves"])
    times.sort()
    print(
        json.dumps(
            {
                "sequences": len(sequences),
                **totals,
                "identified_without_asking": round(totals["identified"] / moves, 4),
                "asked_fraction": round(totals["asked"] / moves, 4),
                "wrong_accepted": totals["wrong"],
                "decision_ms_median": round(statistics.median(times), 1) if times else None,
                "decision_ms_p95": round(times[int(0.95 * (len(times) - 1))], 1) if times else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fit the change model (``companion.referee.change.ChangeModel``) on generated sequences.

    python bench/fit_change.py --seeds 7 8 --sequences 10          # measure and fit
    python bench/fit_change.py --seeds 3 --sequences 4 --check     # how the shipped model fits
    python bench/fit_change.py --folder ~/.cache/oanquan/sequences/seq-train-v4  # rendered games

Generated games (``bench/track.py``'s generator: untouched squares keep
their pieces, dropped pieces land on the pile and nudge it) or, with
``--folder``, our own path-traced games of the training kinds
(``training/render/sequence``'s ``seq-train-v4``, where a piece dropped on a pile
may roll or hide), never render-public or the held-out sets. Every frame goes through the observer exactly as in
``oanquan track``; the reference is the last frame without a hand (a frame
with a hand keeps the old reference under it, as the referee does), and each
square's true fate since its reference (picked up or not, pieces before and
now, big stone taken) comes from the engine. Prints the areas per fate, then
the maximum-likelihood constants (one pebble-area scale per sequence, as the
referee learns one per scene) and the log-likelihood per square.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

# Run as a script, this folder comes first on sys.path and would shadow our packages.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))  # for bench.track, this folder's generator

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from bench.track import dataset_sequences, synth_sequences  # noqa: E402
from companion.appliance.observe import VisionObserver  # noqa: E402
from companion.referee.change import ChangeModel, dropped_on_pile  # noqa: E402
from companion.referee.reconcile import board_of, cleared_squares  # noqa: E402
from device.ports import Frame  # noqa: E402
from engine import Game, Move, Position  # noqa: E402

#: sequence, area, cleared, old, now, big gone, share of the old pebbles kept in place
Row = tuple[int, float, bool, int, int, bool, float | None]


def measure(seeds: list[int], count: int, plies: int, hands: float) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            work = Path(tmp) / str(seed)
            work.mkdir()
            games = synth_sequences(count, seed, work, plies=plies, hands=hands)
            for k, (_, frames, start, _) in enumerate(games):
                rows += _measure_game(seed * 1000 + k, frames, start)
    return rows


def measure_folder(root: Path) -> list[Row]:
    """The same rows from rendered games in render-public's layout (``sequence_*``)."""
    rows: list[Row] = []
    for k, (_, frames, start, _) in enumerate(dataset_sequences(root)):
        rows += _measure_game(k, frames, start)
    return rows


def _measure_game(seq: int, frames: list[tuple[Path, str | None]], start: Position) -> list[Row]:
    """Every square of every frame of one game against its true fate since the reference."""
    rows: list[Row] = []
    observer = VisionObserver(stills=True)
    game = Game(start=start)
    ref_board = board_of(game.position)
    ref = [list(ref_board[0]), list(ref_board[1])]
    gone = [False] * 12
    for i, (path, move) in enumerate(frames):
        if move is not None:
            t = game.play(Move.parse(move))
            for sq in cleared_squares(t):
                gone[sq] = True
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:  # Frame(None) raised a ValueError too, less clearly
            raise ValueError(f"cannot read {path}")
        obs = observer(Frame(np.asarray(image, np.uint8), float(i), i, path.name))
        now, big = board_of(game.position)
        shares = obs.kept or (None,) * 12
        for sq, area in enumerate(obs.areas or ()):
            if area is None:
                continue
            stone = sq % 6 == 0 and ref[1][sq // 6] > big[sq // 6]
            row = (seq, area, gone[sq], ref[0][sq], now[sq], stone, shares[sq])
            rows.append(row)
        if obs.reading is not None and not obs.partial:
            observer.confirmed()
            hidden = obs.hidden or (False,) * 12
            for sq in range(12):
                if not hidden[sq]:
                    ref[0][sq] = now[sq]
                    gone[sq] = False
                    if sq % 6 == 0:
                        ref[1][sq // 6] = big[sq // 6]
    return rows


def _units(model: ChangeModel, row: Row) -> float:
    _, _, cleared, old, now, stone, _ = row
    return model.units(cleared or now < old or stone, old, now, stone)


def _kept(model: ChangeModel, row: Row, scale: float) -> float:
    _, _, cleared, old, now, stone, kept = row
    if kept is None:
        return 0.0
    return model.kept_loglik(kept, cleared or now < old or stone, max(0, now - old), scale, old)


def _scales(model: ChangeModel, rows: list[Row]) -> dict[int, float]:
    sums: dict[int, list[float]] = {}
    for row in rows:
        u = _units(model, row)
        s = sums.setdefault(row[0], [0.0, 0.0])
        s[0] += row[1] * u
        s[1] += u * u
    return {k: (au / uu if uu > 0 else 1.0) for k, (au, uu) in sums.items()}


def _area(model: ChangeModel, row: Row, scale: float) -> float:
    _, area, cleared, old, now, stone, _ = row
    onto = dropped_on_pile(cleared or stone, old, now)
    return model.loglik(area, _units(model, row), scale, onto)


def total_loglik(model: ChangeModel, rows: list[Row]) -> float:
    scales = _scales(model, rows)
    return sum(_area(model, r, scales[r[0]]) + _kept(model, r, scales[r[0]]) for r in rows)


#: the constants fitted, and the multiplicative steps tried for each. ``sigma_base``, the
#: tail, ``missed`` and ``wild`` are not among them: generated frames have little noise,
#: no stray shadows and few unseen pebbles, so an untouched square reads 0 there and the
#: fit would shrink all of them to nothing. They are set for real scenes instead (and
#: the referee learns this scene's noise as it goes).
STEPS = {
    "added": 1.1,
    "pile": 1.3,
    "big": 1.2,
    "sigma_rel": 1.15,
    "pile_tail": 1.3,
    "kept_nudge": 1.3,
    "sensed": 1.1,
    "kept_dropped": 1.02,
    "kept_sd": 1.15,
}


def fit(rows: list[Row], model: ChangeModel, rounds: int = 6) -> ChangeModel:
    """Coordinate ascent on the log-likelihood, each constant stepped up or down."""
    best = total_loglik(model, rows)
    for _ in range(rounds):
        improved = False
        for name, step in STEPS.items():
            for factor in (step, 1 / step):
                while True:
                    trial = replace(model, **{name: getattr(model, name) * factor})
                    if trial.missed + trial.wild >= 0.5 or trial.kept_dropped > 1.0:
                        break
                    value = total_loglik(trial, rows)
                    if value <= best + 1e-6:
                        break
                    model, best, improved = trial, value, True
        if not improved:
            break
    return model


def summary(rows: list[Row]) -> list[dict[str, object]]:
    groups: dict[str, list[float]] = {}
    for _, area, cleared, old, now, stone, _ in rows:
        if cleared or now < old or stone:
            key = f"picked up: {min(old, 9)}{'+' if old > 9 else ''} -> {min(now, 3)}"
            key += " (big stone)" if stone else ""
        elif now == old:
            key = "untouched"
        else:
            key = f"kept, +{min(now - old, 4)}"
        groups.setdefault(key, []).append(area)
    out = []
    for key in sorted(groups):
        xs = sorted(groups[key])
        n = len(xs)
        out.append(
            {
                "fate": key,
                "squares": n,
                "median": round(xs[n // 2], 2),
                "p5": round(xs[int(0.05 * (n - 1))], 2),
                "p95": round(xs[int(0.95 * (n - 1))], 2),
                "max": round(xs[-1], 2),
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 8])
    parser.add_argument("--sequences", type=int, default=10)
    parser.add_argument("--plies", type=int, default=24)
    parser.add_argument("--hands", type=float, default=0.25)
    parser.add_argument(
        "--folder", type=Path, help="measure rendered games (sequence_* folders) instead"
    )
    parser.add_argument("--check", action="store_true", help="only score the shipped model")
    parser.add_argument("--save", type=Path, help="write the measured areas here (JSON lines)")
    parser.add_argument(
        "--load", type=Path, nargs="+", help="fit on areas saved before instead of measuring"
    )
    args = parser.parse_args()
    cv2.setNumThreads(1)
    if args.load:
        rows = [
            tuple(json.loads(line)) for path in args.load for line in path.read_text().splitlines()
        ]
    elif args.folder:
        rows = measure_folder(args.folder)
    else:
        rows = measure(args.seeds, args.sequences, args.plies, args.hands)
    if args.save:
        args.save.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for line in summary(rows):
        print(json.dumps(line))
    shipped = ChangeModel()
    print(json.dumps({"shipped": asdict(shipped), "loglik_per_square": _per(shipped, rows)}))
    if not args.check:
        fitted = fit(rows, shipped)
        print(
            json.dumps(
                {
                    "fitted": {k: round(v, 4) for k, v in asdict(fitted).items()},
                    "loglik_per_square": _per(fitted, rows),
                }
            )
        )
    return 0


def _per(model: ChangeModel, rows: list[Row]) -> float:
    return round(total_loglik(model, rows) / max(1, len(rows)), 4) if rows else math.nan


if __name__ == "__main__":
    sys.exit(main())

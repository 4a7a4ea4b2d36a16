"""Coarse self-play tuning of the evaluation weights (engine.evaluate.EvalWeights).

    .venv/bin/python bench/tune_eval.py --games 40 --depth 4 --rounds 3

Hill-climbing: from the current weights, try each weight one step up and
one step down; keep a change when the candidate's match score against the
reference opponent beats the incumbent's by more than ``--margin``; halve the
steps when a round changes nothing. A match is ``--games`` games in pairs
(same balanced random opening, each side once), at a fixed search depth so
the result measures the evaluation and not the machine's load. The reference
is the fixed-depth-4 score-difference alpha-beta of bench/ai.py (``ab4``),
the opponent the issue asks to beat, or ``--against self`` for the incumbent
weights themselves.

The match score is (wins + draws / 2) / games, plus a small tie-break on the
mean margin (clipped, because a lost game can run up debts without limit).
This is coarse (even 200 games cannot see a 3% change) but it is cheap,
reproducible with ``--seed``, and it set the defaults: with ``--games 200
--depth 4 --rounds 0 --start JSON`` against ab4 (same openings for every
candidate), row 0.3 / mobility 0.6 scored 0.602, row 0.6 / mobility 0.3
scored 0.642 (the best of 17 candidates; a ripe-mandarin bonus and a bigger
end-of-game row weight only hurt).
Rerun it when the rules or the search change.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

# Run as a script, this folder comes first on sys.path and bench/engine.py
# would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from engine.evaluate import DEFAULT_WEIGHTS, EvalWeights  # noqa: E402
from engine.rules import Rules  # noqa: E402
from engine.search import choose_move  # noqa: E402


def _bench_ai() -> object:
    spec = importlib.util.spec_from_file_location("bench_ai", _HERE / "ai.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_ai"] = module
    spec.loader.exec_module(module)
    return module


bench = _bench_ai()

TUNED = ("row", "row_end", "mobility", "tempo", "mandarin")


def weights_player(weights: EvalWeights, depth: int) -> object:
    """An opponent for bench.play_game that searches with other weights."""

    def player(game: object, rng: random.Random) -> object:
        return choose_move(
            game.position,  # type: ignore[attr-defined]
            game.rules,  # type: ignore[attr-defined]
            depth=depth,
            rng=rng,
            weights=weights,
        ).move

    return player


def match(
    weights: EvalWeights, opponent: object, games: int, depth: int, seed: int
) -> tuple[float, dict[str, int]]:
    """Score of ``weights`` against ``opponent`` over paired games."""
    rules = Rules()
    rng = random.Random(seed)
    tally = bench.Tally()  # type: ignore[attr-defined]
    opening: list[object] = []
    for i in range(games):
        if i % 2 == 0:
            opening = bench.make_opening(rng, rules)  # type: ignore[attr-defined]
        bench.play_game(  # type: ignore[attr-defined]
            opponent,
            i % 2,
            rng,
            tally,
            time_ms=10**9,
            depth=depth,
            opening=opening,
            rules=rules,
            weights=weights,
        )
    r = tally.results
    margin = sum(max(-35, min(35, m)) for m in tally.margins) / games
    score = (r["win"] + 0.5 * r["draw"]) / games + margin / 3500
    return score, dict(r)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--step", type=float, default=0.4)
    parser.add_argument("--margin", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--against", choices=("ab4", "self"), default="ab4")
    parser.add_argument("--start", default=None, help="JSON object of starting weights")
    args = parser.parse_args(argv)

    best = DEFAULT_WEIGHTS
    if args.start:
        best = replace(best, **json.loads(args.start))
    steps = dict.fromkeys(TUNED, args.step)

    def opponent_for(w: EvalWeights) -> object:
        if args.against == "ab4":
            return bench.OPPONENTS["ab4"]  # type: ignore[attr-defined]
        return weights_player(w, args.depth)

    reference = best
    best_score, best_tally = match(best, opponent_for(reference), args.games, args.depth, args.seed)
    print(f"start {best.as_dict()} score {best_score:.3f} {best_tally}", flush=True)
    for rnd in range(args.rounds):
        improved = False
        for name in TUNED:
            for sign in (1, -1):
                value = round(getattr(best, name) + sign * steps[name], 3)
                cand = replace(best, **{name: value})
                t0 = time.perf_counter()
                score, tally = match(
                    cand, opponent_for(reference), args.games, args.depth, args.seed
                )
                print(
                    f"round {rnd} {name}={value:+.3f} score {score:.3f} {tally} "
                    f"({time.perf_counter() - t0:.0f} s)",
                    flush=True,
                )
                if score > best_score + args.margin:
                    best, best_score, improved = cand, score, True
                    print(f"  -> keep {best.as_dict()}", flush=True)
                    break
        if not improved:
            steps = {k: v / 2 for k, v in steps.items()}
    print(json.dumps({"weights": best.as_dict(), "score": round(best_score, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

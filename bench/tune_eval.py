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

``--fit GAMES`` instead fits the weights to outcomes: it plays GAMES self-play
games (4 random plies, then depth ``--depth`` searches with 10% random moves
for variety), and regresses what each position's side to move still gained by
the end (final margin minus the points already held, margins clipped to +-40)
on :func:`engine.evaluate.features` by least squares, the points weight staying
1 so heuristic values and final margins stay in one unit. It prints the
weights as JSON for ``--start`` or for bench/ai.py's ``ai{"weights": ...}``.
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

from engine.evaluate import DEFAULT_WEIGHTS, FEATURES, EvalWeights, features  # noqa: E402
from engine.game import Game  # noqa: E402
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

TUNED = ("row", "row_end", "mobility", "tempo", "mandarin", "singles", "piles", "loose")


def match(
    weights: EvalWeights, opponent: object, games: int, depth: int, seed: int
) -> tuple[float, dict[str, int]]:
    """Score of ``weights`` against ``opponent`` (a bench/ai.py agent) over paired games."""
    rules = Rules()
    rng = random.Random(seed)
    tally = bench.Tally()  # type: ignore[attr-defined]
    ai = bench.SearchAgent(None, depth, weights=weights)  # type: ignore[attr-defined]
    opening: list[object] = []
    for i in range(games):
        if i % 2 == 0:
            opening = bench.make_opening(rng, rules)  # type: ignore[attr-defined]
        bench.play_game(  # type: ignore[attr-defined]
            ai, opponent, i % 2, rng, tally, time_ms=None, opening=opening, rules=rules
        )
    results = [g.result for g in tally.games]
    r = {k: results.count(k) for k in ("win", "draw", "loss")}
    margin = sum(max(-35, min(35, g.margin)) for g in tally.games) / games
    score = (r["win"] + 0.5 * r["draw"]) / games + margin / 3500
    return score, r


def fit(games: int, depth: int, seed: int) -> dict[str, object]:
    """Least-squares weights from self-play outcomes (see the module docstring)."""
    import numpy as np

    rules = Rules()
    rng = random.Random(seed)
    rows: list[tuple[float, ...]] = []
    targets: list[float] = []
    kept = 0
    for _ in range(games):
        game = Game(rules)
        for _ in range(4):
            if not game.is_over:
                game.play(rng.choice(game.legal_moves()))
        seen = []
        while not game.is_over and len(game.transitions) < 200:
            pos = game.position
            seen.append(pos)
            if rng.random() < 0.1:
                move = rng.choice(game.legal_moves())
            else:
                move = choose_move(pos, rules, depth=depth, rng=rng).move
            game.play(move)
        outcome = game.position.outcome
        if outcome is None:
            continue
        kept += 1
        for pos in seen:
            st = pos.to_state()
            f = features(st, rules.mandarin_value, rules.quan_non_min)
            p = st.to_move
            margin = max(-40, min(40, outcome.final[p] - outcome.final[1 - p]))
            rows.append(f[1:])
            targets.append(margin - f[0])
    x = np.array(rows)
    y = np.array(targets)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    c = dict(zip(FEATURES[1:], (round(float(v), 3) for v in coef), strict=True))
    resid = float(np.sqrt(np.mean((x @ coef - y) ** 2)))
    weights = {
        "points": 1.0,
        "row": c["row"],
        "row_end": round(c["row"] + c["row_late"], 3),
        "mobility": c["mobility"],
        "tempo": c["tempo"],
        "mandarin": c["mandarin"],
        "singles": c["singles"],
        "piles": c["piles"],
        "loose": c["loose"],
    }
    return {"weights": weights, "games": kept, "positions": len(rows), "rms_error": resid}


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
    parser.add_argument("--fit", type=int, default=0, help="fit weights to this many games")
    args = parser.parse_args(argv)
    if args.fit:
        print(json.dumps(fit(args.fit, args.depth, args.seed)), flush=True)
        return 0

    best = DEFAULT_WEIGHTS
    if args.start:
        best = replace(best, **json.loads(args.start))
    steps = dict.fromkeys(TUNED, args.step)

    def opponent_for(w: EvalWeights) -> object:
        if args.against == "ab4":
            return bench.make_agent("ab4", None, None)  # type: ignore[attr-defined]
        return bench.SearchAgent(None, args.depth, weights=w)  # type: ignore[attr-defined]

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

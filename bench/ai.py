"""Match the search AI against baseline players and check its time budget.

    .venv/bin/python bench/ai.py --time-ms 500 --games 100
    .venv/bin/python bench/ai.py --games 4 --opponents random   # quick look

Opponents:

* ``random``: a uniformly random legal move;
* ``greedy``: the move with the biggest immediate capture (points from
  :func:`engine.play.play`'s ``captured``), ties broken at random;
* ``ab4``: plain fixed-depth-4 alpha-beta on the score difference (written
  here independently of ``engine.search`` so it is a real second opinion).

Games come in pairs: a random opening of 2-4 plies, kept only if a short
search calls it roughly balanced (|score| <= 6 points, so no game is decided
by the dice), is played twice, the AI taking P0 in the first game and P1 in
the second. Games use the default rules; a position
seen three times ends the game with the R12 count (as the device's "agree to
stop"), and 400 plies is a hard cap, so cycling players cannot hang the
bench. Everything runs in this one process; the move time reported is the
wall-clock time of each ``choose_move`` call, the budget must never be
exceeded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# Run as a script, this folder comes first on sys.path and bench/engine.py
# would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from engine import core  # noqa: E402
from engine.evaluate import DEFAULT_WEIGHTS, EvalWeights  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.move import Move  # noqa: E402
from engine.play import config, end_now, legal_moves  # noqa: E402
from engine.play import play as checked_play  # noqa: E402
from engine.position import Position  # noqa: E402
from engine.rules import Rules  # noqa: E402
from engine.search import choose_move  # noqa: E402

Player = Callable[[Game, random.Random], Move]

REPEAT_LIMIT = 3
PLY_CAP = 400


def random_player(game: Game, rng: random.Random) -> Move:
    return rng.choice(game.legal_moves())


def greedy_player(game: Game, rng: random.Random) -> Move:
    """Largest immediate capture in points; a random move among equals."""
    moves = game.legal_moves()
    rng.shuffle(moves)
    return max(moves, key=lambda m: checked_play(game.position, m, game.rules).captured.points)


def _ab(st: core.State, depth: int, alpha: int, beta: int, cfg: core.Config, value: int) -> int:
    """Negamax alpha-beta on the points difference for the side to move."""
    p = st.to_move
    if st.outcome is not None:
        final = st.outcome[1]
        return final[p] - final[1 - p]
    if depth == 0:
        s, q, d = st.store, st.bigs, st.debt
        diff = (s[0] + value * q[0] - d[0] + d[1]) - (s[1] + value * q[1] - d[1] + d[0])
        return diff if p == 0 else -diff
    best = -10_000
    for code in core.legal_codes(st, cfg):
        child = st.copy()
        core.play(child, code, cfg)
        if child.to_move == p:
            v = _ab(child, depth - 1, alpha, beta, cfg, value)
        else:
            v = -_ab(child, depth - 1, -beta, -alpha, cfg, value)
        if v > best:
            best = v
            if v > alpha:
                alpha = v
                if alpha >= beta:
                    break
    return best


def alphabeta_player(depth: int) -> Player:
    def player(game: Game, rng: random.Random) -> Move:
        cfg = config(game.rules)
        st = game.position.to_state()
        core.start_turn(st, cfg)
        codes = list(core.legal_codes(st, cfg))
        rng.shuffle(codes)
        best_code, best = codes[0], -10_000
        for code in codes:
            child = st.copy()
            core.play(child, code, cfg)
            if child.to_move == st.to_move:
                v = _ab(child, depth - 1, best, 10_000, cfg, game.rules.mandarin_value)
            else:
                v = -_ab(child, depth - 1, -10_000, -best, cfg, game.rules.mandarin_value)
            if v > best:
                best, best_code = v, code
        return Move.from_code(best_code)

    return player


OPPONENTS: dict[str, Player] = {
    "random": random_player,
    "greedy": greedy_player,
    "ab4": alphabeta_player(4),
}


@dataclass
class Tally:
    results: Counter[str] = field(default_factory=Counter)
    margins: list[int] = field(default_factory=list)
    max_move_s: float = 0.0
    move_times: list[float] = field(default_factory=list)
    nodes: int = 0
    search_s: float = 0.0
    depths: list[int] = field(default_factory=list)
    over_budget: int = 0
    #: how the games the AI did not win ended (repetition, ply_limit, mandarins_taken, ...)
    not_won: Counter[str] = field(default_factory=Counter)
    last_reason: str = ""


def _position_key(p: Position) -> tuple[object, ...]:
    return (p.board, p.big, p.store, p.bigs, p.debt, p.to_move)


def play_game(
    opponent: Player,
    ai_side: int,
    rng: random.Random,
    tally: Tally,
    *,
    time_ms: int,
    depth: int | None,
    opening: list[Move],
    rules: Rules,
    weights: EvalWeights = DEFAULT_WEIGHTS,
) -> int | None:
    """One game; returns the winner (0, 1 or None) and records the AI's moves in tally."""
    game = Game(rules)
    seen: Counter[tuple[object, ...]] = Counter([_position_key(game.position)])
    for move in opening:
        game.play(move)
        seen[_position_key(game.position)] += 1
    while not game.is_over:
        pos = game.position
        if seen[_position_key(pos)] >= REPEAT_LIMIT or len(game.transitions) >= PLY_CAP:
            reason = "repetition" if seen[_position_key(pos)] >= REPEAT_LIMIT else "ply_limit"
            game.transitions.append(end_now(pos, reason, rules))
            break
        if pos.to_move == ai_side:
            history = [t.before for t in game.transitions] + [game.start]
            t0 = time.perf_counter()
            result = choose_move(
                pos, rules, time_ms=time_ms, depth=depth, rng=rng, history=history, weights=weights
            )
            elapsed = time.perf_counter() - t0
            move = result.move
            tally.move_times.append(elapsed)
            tally.max_move_s = max(tally.max_move_s, elapsed)
            tally.nodes += result.nodes
            tally.search_s += elapsed
            tally.depths.append(result.depth)
            if elapsed * 1000 > time_ms:
                tally.over_budget += 1
        else:
            move = opponent(game, rng)
        assert move in legal_moves(pos, rules), (move, pos)
        game.play(move)
        seen[_position_key(game.position)] += 1
    outcome = game.position.outcome
    assert outcome is not None
    margin = outcome.final[ai_side] - outcome.final[1 - ai_side]
    tally.margins.append(margin)
    tally.last_reason = outcome.reason
    if outcome.winner != ai_side:
        tally.not_won[outcome.reason] += 1
    if outcome.winner is None:
        tally.results["draw"] += 1
    elif outcome.winner == ai_side:
        tally.results["win"] += 1
    else:
        tally.results["loss"] += 1
    return outcome.winner


def make_opening(rng: random.Random, rules: Rules, limit: float = 6.0) -> list[Move]:
    """2-4 random plies whose resulting position a depth-5 search calls balanced."""
    for _ in range(200):
        game = Game(rules)
        for _ in range(rng.randint(2, 4)):
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
        if game.is_over:
            continue
        score = choose_move(game.position, rules, depth=5, rng=rng).score
        if abs(score) <= limit:
            return game.moves
    return []


def run(
    opponent_name: str,
    games: int,
    time_ms: int,
    depth: int | None,
    seed: int,
    log: Callable[[str], None] | None = None,
    verbose: bool = False,
) -> dict[str, object]:
    """Play ``games`` games against one opponent and summarise them."""
    rules = Rules()
    rng = random.Random(f"{seed}:{opponent_name}")
    tally = Tally()
    opponent = OPPONENTS[opponent_name]
    t0 = time.perf_counter()
    opening: list[Move] = []
    for i in range(games):
        if i % 2 == 0:
            opening = make_opening(rng, rules)
        winner = play_game(
            opponent,
            i % 2,
            rng,
            tally,
            time_ms=time_ms,
            depth=depth,
            opening=opening,
            rules=rules,
        )
        if verbose and log is not None:
            result = "draw" if winner is None else ("win" if winner == i % 2 else "loss")
            log(
                f"game {i}: AI is P{i % 2}, opening {' '.join(map(str, opening))}: "
                f"{result} by {tally.margins[-1]:+} ({tally.last_reason})"
            )
        if log is not None and ((i + 1) % 10 == 0 or i + 1 == games):
            r = tally.results
            log(
                f"{opponent_name}: {i + 1}/{games} W{r['win']} D{r['draw']} L{r['loss']} "
                f"max move {tally.max_move_s * 1000:.1f} ms ({time.perf_counter() - t0:.0f} s)"
            )
    n = max(games, 1)
    r = tally.results
    times = sorted(tally.move_times)
    return {
        "opponent": opponent_name,
        "games": games,
        "time_ms": time_ms,
        "depth": depth,
        "win_pct": round(100 * r["win"] / n, 1),
        "draw_pct": round(100 * r["draw"] / n, 1),
        "loss_pct": round(100 * r["loss"] / n, 1),
        "mean_margin": round(sum(tally.margins) / n, 2),
        # A won position can be milked for debts for hundreds of plies (R11 has no
        # limit), so the median says more about a typical game than the mean.
        "median_margin": sorted(tally.margins)[len(tally.margins) // 2] if tally.margins else 0,
        "ai_moves": len(times),
        "max_move_ms": round(tally.max_move_s * 1000, 1),
        "mean_move_ms": round(1000 * sum(times) / max(len(times), 1), 1),
        "p99_move_ms": round(times[int(0.99 * (len(times) - 1))] * 1000, 1) if times else 0.0,
        "over_budget_moves": tally.over_budget,
        "mean_depth": round(sum(tally.depths) / max(len(tally.depths), 1), 2),
        "nodes_per_s": round(tally.nodes / tally.search_s) if tally.search_s else 0,
        "not_won": dict(tally.not_won),
        "wall_s": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-ms", type=int, default=500, help="AI budget per move")
    parser.add_argument("--depth", type=int, default=None, help="also cap the AI's depth")
    parser.add_argument("--games", type=int, default=100, help="games per opponent")
    parser.add_argument("--opponents", default="random,greedy,ab4")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON line per opponent")
    parser.add_argument("--verbose", action="store_true", help="log every game's result")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# load average at start: {load:.2f} on {os.cpu_count()} cores", flush=True)
    status = 0
    for name in args.opponents.split(","):
        if name not in OPPONENTS:
            print(f"unknown opponent {name!r}; choose from {', '.join(OPPONENTS)}")
            return 2
        summary = run(
            name,
            args.games,
            args.time_ms,
            args.depth,
            args.seed,
            log=lambda s: print("  " + s, file=sys.stderr, flush=True),
            verbose=args.verbose,
        )
        if args.json:
            print(json.dumps(summary), flush=True)
        else:
            print(
                f"vs {name:<6} {summary['games']} games: win {summary['win_pct']}% "
                f"draw {summary['draw_pct']}% loss {summary['loss_pct']}% "
                f"(margin mean {summary['mean_margin']:+}, median {summary['median_margin']:+}); "
                f"AI moves {summary['ai_moves']}, "
                f"mean {summary['mean_move_ms']} ms, max {summary['max_move_ms']} ms "
                f"/ budget {args.time_ms} ms, "
                f"p99 {summary['p99_move_ms']} ms, over budget {summary['over_budget_moves']}; "
                f"mean depth {summary['mean_depth']}, {summary['nodes_per_s']} nodes/s; "
                f"not won by reason {summary['not_won']}",
                flush=True,
            )
        if summary["over_budget_moves"]:
            status = 1
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# load average at end: {load:.2f}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())

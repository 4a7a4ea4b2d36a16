"""The N-seat AI (engine.multisearch) against random and greedy seats, 3 and 4 players.

One seat is the AI, every other seat plays the opponent policy; the AI's seat
rotates from game to game so the first-move advantage cancels out. Prints one
JSON line per (players, opponent): the AI's share of wins (a shared first
place counts 1/k), its mean place, and its mean lead over the best other
seat, next to what an equal seat would get (1/N wins). Single thread.

    python bench/ai_multi.py --games 24 --time-ms 100
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path and would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from engine import Game, Move, Position, Rules, end_now  # noqa: E402
from engine.multisearch import choose_move, greedy_move  # noqa: E402

MAX_PLIES = 1000


def _random(position: Position, rules: Rules, rng: random.Random, game: Game) -> Move:
    return rng.choice(game.legal_moves())


def _greedy(position: Position, rules: Rules, rng: random.Random, game: Game) -> Move:
    return greedy_move(position, rules, rng)


OPPONENTS = {"random": _random, "greedy": _greedy}


def play_one(
    players: int, opponent: str, ai_seat: int, time_ms: int, depth: int | None, seed: int
) -> tuple[tuple[int, ...], tuple[int, ...], int, float]:
    """(final scores, places, plies, seconds the AI thought) of one game."""
    rules = Rules(players=players)
    rng = random.Random(seed)
    game = Game(rules)
    policy = OPPONENTS[opponent]
    thought = 0.0
    while not game.is_over and len(game.transitions) < MAX_PLIES:
        pos = game.position
        if pos.to_move == ai_seat:
            began = time.perf_counter()
            move = choose_move(pos, rules, time_ms=time_ms, depth=depth, rng=rng).move
            thought += time.perf_counter() - began
        else:
            move = policy(pos, rules, rng, game)
        game.play(move)
    final = game.position
    if final.outcome is None:
        final = end_now(final, "ply_limit", rules).position
    assert final.outcome is not None
    return final.outcome.final, final.outcome.places(), len(game.transitions), thought


def measure(
    players: int, opponent: str, games: int, time_ms: int, depth: int | None, seed: int
) -> dict[str, object]:
    wins = 0.0
    places = 0
    lead = 0
    plies = 0
    thought = 0.0
    ai_moves = 0
    for g in range(games):
        seat = g % players
        final, place, n, secs = play_one(players, opponent, seat, time_ms, depth, seed + g)
        if place[seat] == 1:
            wins += 1 / place.count(1)
        places += place[seat]
        lead += final[seat] - max(f for p, f in enumerate(final) if p != seat)
        plies += n
        thought += secs
        ai_moves += (n + players - 1 - seat) // players
    return {
        "players": players,
        "opponent": opponent,
        "games": games,
        "ai_win_share": round(wins / games, 3),
        "equal_seat_share": round(1 / players, 3),
        "ai_mean_place": round(places / games, 2),
        "ai_mean_lead": round(lead / games, 1),
        "mean_plies": round(plies / games, 1),
        "ai_ms_per_move": round(1000 * thought / max(ai_moves, 1), 1),
        "time_ms": time_ms,
        "depth": depth,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=24, help="games per (players, opponent)")
    parser.add_argument("--time-ms", type=int, default=100, help="AI budget per move")
    parser.add_argument("--depth", type=int, default=None, help="fixed depth instead of time")
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4], choices=[3, 4])
    parser.add_argument("--opponents", nargs="+", default=list(OPPONENTS), choices=OPPONENTS)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.games < 1:
        parser.error("--games must be at least 1")
    for players in args.players:
        for opponent in args.opponents:
            result = measure(players, opponent, args.games, args.time_ms, args.depth, args.seed)
            print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

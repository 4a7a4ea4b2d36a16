"""Random playouts under the given rules: legal moves every ply, captures, refills, ends.

Prints one JSON line: {"moves_per_s": ..., "games_per_s": ..., ...}. Single
thread; run it on an idle core for figures worth comparing.

    python bench/engine.py --seconds 10
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path, and this very file
# would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from engine import core  # noqa: E402
from engine.position import Position  # noqa: E402
from engine.rules import Rules  # noqa: E402


def playouts(rules: Rules, seconds: float, seed: int) -> dict[str, float]:
    cfg = core.Config(rules)
    rng = random.Random(seed)
    rand = rng.random
    start = Position.initial(rules).to_state()
    legal = core.legal_codes
    play = core.play
    moves = games = 0
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    while time.perf_counter() < deadline:
        for _ in range(50):
            st = start.copy()
            while st.outcome is None:
                codes = legal(st, cfg)
                play(st, codes[int(rand() * len(codes))], cfg)
                moves += 1
            games += 1
    elapsed = time.perf_counter() - began
    return {
        "moves_per_s": round(moves / elapsed),
        "games_per_s": round(games / elapsed, 1),
        "moves": moves,
        "games": games,
        "seconds": round(elapsed, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rules", default="{}", help="rules JSON object, e.g. '{\"chain\": false}'"
    )
    args = parser.parse_args()
    result = playouts(Rules.from_json(json.loads(args.rules)), args.seconds, args.seed)
    result["python"] = platform.python_version()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

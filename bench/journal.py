"""Journal append latency: what a confirmed move costs before the referee may say "done".

Each append is one write(), a flush and an fsync, so the figure is mostly the
storage's fsync time (an SD card on a Pi, whatever backs the temp dir here).
Prints one JSON line with the median, p95 and max in milliseconds.

    python bench/journal.py --records 500 [--dir /var/lib/oanquan]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path and bench/engine.py
# would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from companion.appliance.journal import Journal  # noqa: E402
from engine import Game, Rules  # noqa: E402


def measure(directory: Path, records: int, seed: int) -> dict[str, float | int | str]:
    """Append move records of random games (a new game when one ends); time each append."""
    rng = random.Random(seed)
    times: list[float] = []
    path = directory / "journal.jsonl"
    with Journal.open(path) as journal:
        game = Game()
        journal.new_game(Rules())
        while len(times) < records:
            if game.is_over:
                game = Game()
                journal.new_game(Rules())
            move = rng.choice(game.legal_moves())
            game.play(move)
            began = time.perf_counter()
            journal.move(move, ply=len(game.moves), how="camera", confidence=0.93, frame="f.jpg")
            times.append(time.perf_counter() - began)
    times.sort()
    ms = [t * 1000 for t in times]
    return {
        "records": records,
        "median_ms": round(statistics.median(ms), 3),
        "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 3),
        "max_ms": round(ms[-1], 3),
        "bytes": path.stat().st_size,
        "dir": str(directory.parent),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--dir", type=Path, default=None, help="where to make the temp dir (default: system tmp)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="journal-bench-") as tmp:
        result = measure(Path(tmp), args.records, args.seed)
    result["python"] = platform.python_version()
    result["machine"] = platform.machine()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

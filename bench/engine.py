"""Random playouts under the given rules, and the compiled engine measured against the pure one.

Prints one JSON line: {"moves_per_s": ..., "games_per_s": ..., ...}. Single
thread; run it on an idle core for figures worth comparing.

    python bench/engine.py --seconds 10
    python bench/engine.py --compare --seconds 5   # mypyc build vs pure Python

``--compare`` compiles a copy of the engine's typed hot modules
(:data:`COMPILED`) with mypyc into ``--build-dir`` (outside the work tree,
default ``~/.cache/oanquan/compiled``; the sources are never touched, so the
pure-Python path stays what the tests run), then in one run, alternating
``--rounds`` times so a changing load hits both alike: the playout rate and
the search's nodes per CPU second of the pure and the compiled engine, and
whether both play byte-for-byte the same random games and searches. It needs
mypyc (shipped with mypy, a dev dependency) and a C compiler; nothing in
``make test`` builds it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path, and this very file
# would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

ROOT = _HERE.parent
#: The modules compiled: the kernel, the evaluation and the search (all mypy strict).
COMPILED = ("core.py", "evaluate.py", "search.py")


def playouts(rules: Any, seconds: float, seed: int) -> dict[str, float]:
    from engine import core
    from engine.position import Position

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


def fingerprint(games: int, seed: int) -> str:
    """A hash of random games (every position and move) and of fixed-depth searches.

    Equal between two builds means they play and search byte-for-byte alike.
    """
    from engine import core
    from engine.game import Game
    from engine.play import config
    from engine.position import Position
    from engine.rules import Rules
    from engine.search import choose_move

    h = hashlib.sha256()
    rng = random.Random(seed)
    rules = Rules()
    cfg = config(rules)
    for _ in range(games):
        st = Position.initial(rules).to_state()
        while st.outcome is None:
            codes = core.legal_codes(st, cfg)
            code = codes[int(rng.random() * len(codes))]
            trace: list[core.TraceEntry] = []
            result = core.play(st, code, cfg, trace)
            h.update(repr((code, result, trace, Position.from_state(st).to_text())).encode())
    game = Game(rules)
    for i in range(12):
        if game.is_over:
            break
        r = choose_move(game.position, rules, depth=6, rng=random.Random(i))
        h.update(repr((str(r.move), r.score, r.depth, r.nodes, [str(m) for m in r.pv])).encode())
        game.play(r.move)
    return h.hexdigest()


def search_rate(seconds: float, seed: int) -> dict[str, float]:
    """Nodes per CPU second of fixed-depth searches on random middle-game positions."""
    from engine.game import Game
    from engine.rules import Rules
    from engine.search import choose_move

    rules = Rules()
    rng = random.Random(seed)
    nodes = 0
    began = time.process_time()
    while time.process_time() - began < seconds:
        game = Game(rules)
        for _ in range(rng.randint(4, 30)):
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
        if not game.is_over:
            nodes += choose_move(game.position, rules, depth=7, rng=random.Random(0)).nodes
    return {"search_nodes_per_cpu_s": round(nodes / (time.process_time() - began))}


def _worker(args: argparse.Namespace) -> int:
    """One measurement in this process, with whichever engine sys.path finds first."""
    from engine import core
    from engine.rules import Rules

    result: dict[str, Any] = {"core": Path(core.__file__ or "?").name}
    result |= playouts(Rules.from_json(json.loads(args.rules)), args.seconds, args.seed)
    result |= search_rate(args.seconds, args.seed)
    result["fingerprint"] = fingerprint(args.games, args.seed)
    print(json.dumps(result))
    return 0


def build(build_dir: Path) -> Path:
    """A mypyc build of a copy of the engine in ``build_dir``/<source hash>; reused if there."""
    src = ROOT / "engine"
    digest = hashlib.sha256()
    for f in sorted(src.glob("*.py")):
        digest.update(f.name.encode() + f.read_bytes())
    target = build_dir / digest.hexdigest()[:16]
    if any((target / "engine").glob("search.*.so")):
        return target
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        raise SystemExit("bench/engine.py: --compare needs a C compiler (cc or gcc)")
    mypyc = Path(sys.executable).with_name("mypyc")
    if not mypyc.exists():
        raise SystemExit("bench/engine.py: --compare needs mypyc (pip install mypy)")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    shutil.copytree(src, target / "engine", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    subprocess.run(
        [str(mypyc), *(f"engine/{m}" for m in COMPILED)],
        cwd=target,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return target


def compare(args: argparse.Namespace) -> int:
    build_dir = args.build_dir or Path.home() / ".cache" / "oanquan" / "compiled"
    t0 = time.perf_counter()
    compiled = build(build_dir)
    built_s = round(time.perf_counter() - t0, 1)
    worker = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    worker += ["--seconds", str(args.seconds), "--seed", str(args.seed)]
    worker += ["--games", str(args.games), "--rules", args.rules]
    runs: dict[str, list[dict[str, Any]]] = {"pure": [], "compiled": []}
    for _ in range(args.rounds):
        for name, path in (("pure", ROOT), ("compiled", compiled)):
            env = {**os.environ, "PYTHONPATH": str(path)}
            out = subprocess.run(worker, env=env, cwd=path, capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(f"bench/engine.py: the {name} worker failed: {out.stderr[-500:]}")
            runs[name].append(json.loads(out.stdout))
    pure, comp = runs["pure"], runs["compiled"]
    summary = {
        "build_dir": str(compiled),
        "build_s": built_s,
        "rounds": args.rounds,
        "compiled_modules": list(COMPILED),
        "pure_core": pure[0]["core"],
        "compiled_core": comp[0]["core"],
        "pure_moves_per_s": [r["moves_per_s"] for r in pure],
        "compiled_moves_per_s": [r["moves_per_s"] for r in comp],
        "playout_speedup": round(
            sum(r["moves_per_s"] for r in comp) / sum(r["moves_per_s"] for r in pure), 2
        ),
        "pure_search_nodes_per_cpu_s": [r["search_nodes_per_cpu_s"] for r in pure],
        "compiled_search_nodes_per_cpu_s": [r["search_nodes_per_cpu_s"] for r in comp],
        "search_speedup": round(
            sum(r["search_nodes_per_cpu_s"] for r in comp)
            / sum(r["search_nodes_per_cpu_s"] for r in pure),
            2,
        ),
        "identical_games_and_searches": len({r["fingerprint"] for r in pure + comp}) == 1,
        "python": platform.python_version(),
    }
    print(json.dumps(summary))
    return 0 if summary["identical_games_and_searches"] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rules", default="{}", help="rules JSON object, e.g. '{\"chain\": false}'"
    )
    parser.add_argument("--compare", action="store_true", help="mypyc build vs pure Python")
    parser.add_argument("--build-dir", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2, help="alternations for --compare")
    parser.add_argument("--games", type=int, default=300, help="random games for the fingerprint")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare:
        return compare(args)
    if args.worker:
        return _worker(args)
    from engine.rules import Rules

    result: dict[str, Any] = playouts(
        Rules.from_json(json.loads(args.rules)), args.seconds, args.seed
    )
    result["python"] = platform.python_version()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``oanquan ai serve``: a move provider speaking JSON Lines (interchange.md).

One request per input line::

    {"position": {...}, "rules": {}, "time_ms": 500}

and one answer line per request, flushed at once::

    {"move": "3+", "score": 4.5, "depth": 9, "nodes": 120345, "pv": ["3+", "9-"]}

``rules`` defaults to ``{}`` and ``time_ms`` to 500. A request's ``id`` (any
JSON value) comes back unchanged in its answer, errors included, so a caller
with several requests in flight can match answers to them. The clock starts when
the line has been read, so parsing and checking count against the budget
and the answer arrives within ``time_ms``. A finished game, an impossible
position (``Position.status``), or any malformed line (bad JSON, unknown
key, bad rules, bad position, bad time) gets ``{"error": "..."}`` and the
process keeps serving; an internal failure is reported the same way rather
than killing a match. Blank lines are ignored. End of input ends the process
with status 0.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from companion.commands._cli import guarded
from engine.errors import EngineError
from engine.position import Position, PositionStatus
from engine.rules import Rules
from engine.search import GameOverError, choose_move

DEFAULT_TIME_MS = 500
#: Longest budget accepted for one move (ten minutes).
MAX_TIME_MS = 600_000
_KEYS = {"position", "rules", "time_ms", "id"}


class RequestError(ValueError):
    """A request line that cannot be answered with a move."""


def _read(line: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RequestError(f"bad JSON: {exc}") from None
    except RecursionError:
        raise RequestError("bad JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise RequestError(f"request must be a JSON object, got {type(data).__name__}")
    return data


def _parse(data: dict[str, Any]) -> tuple[Position, Rules, float]:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise RequestError(f"unknown key {unknown[0]!r} (expected position, rules, time_ms, id)")
    if "position" not in data:
        raise RequestError("missing key 'position'")
    time_ms = data.get("time_ms", DEFAULT_TIME_MS)
    if (
        isinstance(time_ms, bool)
        or not isinstance(time_ms, int | float)
        or not 0 < time_ms <= MAX_TIME_MS
    ):
        raise RequestError(f"time_ms must be a number of milliseconds in (0, {MAX_TIME_MS}]")
    rules = Rules.from_json(data.get("rules", {}))
    position = Position.from_json(data["position"])
    if position.status(rules) != PositionStatus.VALID:
        raise RequestError(position.describe_status(rules))
    if position.over:
        raise GameOverError("the game is over: there is no move to choose")
    return position, rules, float(time_ms)


def answer(line: str, received: float, rng: random.Random) -> dict[str, Any]:
    """The answer object for one request line read at monotonic time ``received``.

    The request's ``id`` is echoed whenever the line was a JSON object.
    """
    try:
        data = _read(line)
    except RequestError as exc:
        return {"error": str(exc)}
    echo = {"id": data["id"]} if "id" in data else {}
    try:
        position, rules, time_ms = _parse(data)
        left_ms = time_ms - (time.monotonic() - received) * 1000.0
        result = choose_move(position, rules, time_ms=max(int(left_ms), 1), rng=rng)
    except (RequestError, EngineError, ValueError, TypeError) as exc:
        return {"error": str(exc), **echo}
    except Exception as exc:  # keep serving whatever happens to one request
        return {"error": f"internal error: {type(exc).__name__}: {exc}", **echo}
    return {
        "move": str(result.move),
        "score": result.score,
        "depth": result.depth,
        "nodes": result.nodes,
        "pv": [str(m) for m in result.pv],
        "exact": result.exact,
        **echo,
    }


def main(argv: list[str]) -> int:
    """Serve until end of input; Ctrl-C or a client that hangs up end it without a traceback."""
    return guarded("oanquan ai serve", lambda: _serve(argv))


def _serve(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="oanquan ai serve",
        description="Answer move requests given as JSON Lines on standard input, one a line: "
        '{"position": {...}, "rules": {...}, "time_ms": 500, "id": ...}. Each answer is one '
        'line, {"move": "3+", ...} or {"error": "..."}, with the request\'s id. '
        "docs/interchange.md has every key.",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed ties between equal moves")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    stdin, stdout = sys.stdin, sys.stdout
    while True:
        line = stdin.readline()
        if not line:
            return 0
        received = time.monotonic()
        if not line.strip():
            continue
        stdout.write(json.dumps(answer(line, received, rng)) + "\n")
        stdout.flush()

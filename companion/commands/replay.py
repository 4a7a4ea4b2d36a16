"""``oanquan rules replay``: replay games given as JSON Lines (interchange.md).

Every input line gets exactly one answer line, whatever is wrong with it, so
an outside checker can line up questions and answers (and a line's ``id``, if
it has one, comes back unchanged in its answer); the exit status says whether
any line had an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import IO, Any

from companion.commands._cli import guarded
from engine import EngineError, Game, IllegalMoveError, Move, Position, Rules
from engine.record import GAME_KEYS


def _fail(message: str, ply: int | None = None, move: Any = None) -> dict[str, Any]:
    if move is None:
        return {"ply": ply, "message": message}
    return {"ply": ply, "move": move, "message": message}


def replay_line(line: str) -> dict[str, Any]:
    """The answer object for one input line (its ``id`` echoed); never raises for bad input."""
    answer: dict[str, Any] = {"positions": [], "captured": [], "error": None}
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:
        answer["error"] = _fail(f"not valid JSON: {exc}")
        return answer
    if not isinstance(data, dict):
        answer["error"] = _fail("a game line must be a JSON object")
        return answer
    if "id" in data:
        answer["id"] = data["id"]
    unknown = sorted(set(data) - set(GAME_KEYS))
    if unknown:
        answer["error"] = _fail(f"unknown key {unknown[0]!r}")
        return answer
    moves = data.get("moves", [])
    if not isinstance(moves, list):
        answer["error"] = _fail("moves must be a list of strings like '2+'")
        return answer
    try:
        rules = Rules.from_json(data.get("rules"))
        raw = data.get("position")
        start = Position.initial(rules) if raw is None else Position.from_json(raw)
        if not start.is_valid(rules):
            answer["error"] = _fail(start.describe_status(rules))
            return answer
        game = Game(rules, start)
    except EngineError as exc:
        answer["error"] = _fail(str(exc))
        return answer
    for ply, text in enumerate(moves):
        try:
            move = Move.parse(text)
        except EngineError as exc:
            answer["error"] = _fail(str(exc), ply, text)
            return answer
        try:
            transition = game.play(move)
        except IllegalMoveError as exc:
            answer["error"] = _fail(exc.reason, ply, text)
            return answer
        answer["positions"].append(transition.position.to_json())
        answer["captured"].append(transition.captured.to_json())
    return answer


def replay_stream(lines: Iterable[str], out: IO[str]) -> int:
    """Answer each line in order; returns the number of lines with an error."""
    errors = 0
    for line in lines:
        if not line.strip():
            continue
        answer = replay_line(line)
        errors += answer["error"] is not None
        out.write(json.dumps(answer, separators=(",", ":")) + "\n")
    out.flush()
    return errors


def main(argv: list[str]) -> int:
    """Ctrl-C and a reader that hangs up (``| head``) end it without a traceback."""
    return guarded("oanquan rules replay", lambda: _main(argv))


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="oanquan rules replay",
        description="Replay games given as JSON Lines on standard input, one game a line: "
        '{"rules": {...}, "position": {...}, "moves": ["2+", "9-"], "id": ...} (all optional). '
        "Each gets one answer line: the positions after every move, what each move captured, "
        "and the error that stopped it, if any. docs/interchange.md has every key.",
    )
    parser.parse_args(argv)
    errors = replay_stream(sys.stdin, sys.stdout)
    return 1 if errors else 0

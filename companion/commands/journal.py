"""``oanquan journal export JOURNAL``: the referee's journal as saved games.

Each game in the journal (the live ``journal.jsonl`` holds the game in
progress, ``journal-archive.jsonl`` the earlier ones) becomes one line that
``oanquan rules replay`` answers and ``oanquan play --load`` continues: its
rules, start position and confirmed moves, undos applied. The journal itself
is only read, never repaired.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from companion.appliance.journal.export import read_games
from companion.commands._cli import guarded, kind_of, output_file, why, write_text
from engine.record import game_json

PROG = "oanquan journal export"


def main(argv: list[str]) -> int:
    """Ctrl-C and ``| head`` end it without a traceback."""
    return guarded(PROG, lambda: _main(argv))


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Write the games of the referee's journal as saved games, one line each, "
        "that 'oanquan rules replay' replays and 'oanquan play --load' continues.",
    )
    parser.add_argument("journal", metavar="JOURNAL", help="journal.jsonl or journal-archive.jsonl")
    parser.add_argument("-o", "--out", metavar="FILE", help="write here (default: standard output)")
    parser.add_argument(
        "--game",
        type=int,
        metavar="N",
        help="only the Nth game of the file (1 = the oldest, -1 = the latest)",
    )
    args = parser.parse_args(argv)
    path = Path(args.journal)
    try:
        if kind_of(path, "journal") != "file":
            raise ValueError(f"journal {path}: no such file")
        content = path.read_bytes()
        target = output_file(args.out, "--out") if args.out else None
    except OSError as exc:
        print(f"{PROG}: journal {path}: cannot read: {why(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    found = read_games(content)
    for problem in found.problems:
        print(f"{PROG}: {path}: {problem}", file=sys.stderr)
    if not found.records:
        print(f"{PROG}: {path}: not a journal (no line is a journal record)", file=sys.stderr)
        return 1
    games = list(found.games)
    if not games:
        print(f"{PROG}: {path}: no game record in it", file=sys.stderr)
        return 1
    if args.game is not None:
        count = len(games)
        if not (1 <= args.game <= count or -count <= args.game <= -1):
            print(
                f"{PROG}: --game {args.game}: {path} holds {count} game(s) (1 to {count})",
                file=sys.stderr,
            )
            return 2
        games = [games[args.game - 1 if args.game > 0 else args.game]]
    text = "".join(json.dumps(game_json(g), separators=(",", ":")) + "\n" for g in games)
    if target is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        try:
            write_text(target, text, "--out")
        except ValueError as exc:
            print(f"{PROG}: {exc}", file=sys.stderr)
            return 2
        moves = sum(len(g.moves) for g in games)
        print(f"wrote {len(games)} game(s), {moves} move(s), to {target}")
    return 1 if found.problems else 0

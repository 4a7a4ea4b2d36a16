"""A journal's games as saved games, for ``oanquan journal export``.

The journal holds far more than the game (disputes, answers, refills,
tallies); a saved game keeps what ``rules replay`` and ``play --load`` need:
the rules (the number of seats included), the start and every confirmed move
with the undos applied, replayed by the same :func:`resume` the appliance
restarts from. Reading is read-only: unlike :meth:`Journal.open` nothing is
repaired; a line that does not verify is reported and left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from companion.appliance.journal.resume import resume
from companion.referee.records import Kind, Record
from engine import Game


@dataclass(frozen=True, slots=True, eq=False)
class JournalGames:
    """Every game of a journal (or archive) file, oldest first, and what was wrong with it.

    ``torn_tail`` is a last line cut by a power cut: never confirmed to
    anyone, so leaving it out loses nothing and is not a problem.
    """

    games: tuple[Game, ...]
    problems: tuple[str, ...]
    records: int
    torn_tail: bool


def read_records(content: bytes) -> tuple[list[Record], list[str], bool]:
    """The verifiable records, one line per bad line, and whether the last line was torn."""
    records: list[Record] = []
    problems: list[str] = []
    lines = content.split(b"\n")
    torn = lines[-1] != b""
    for number, raw in enumerate(lines, start=1):
        if number == len(lines):
            break  # after the last newline: empty, or the torn tail
        if not raw.strip():
            continue
        try:
            records.append(Record.from_line(raw))
        except ValueError as exc:
            problems.append(f"line {number}: {exc}; left out")
    return records, problems, torn


def split_games(records: Sequence[Record]) -> tuple[list[Game], list[str]]:
    """One game per ``game`` record, replayed with the records up to the next one."""
    starts = [i for i, r in enumerate(records) if r.kind == Kind.GAME]
    problems: list[str] = []
    before = starts[0] if starts else len(records)
    if before:
        problems.append(
            f"{before} record(s) before the first game record belong to no game; left out"
        )
    games: list[Game] = []
    for first, end in zip(starts, [*starts[1:], len(records)], strict=False):
        state = resume(records[first:end])
        problems += state.warnings
        if state.game is not None:
            games.append(state.game)
    return games, problems


def read_games(content: bytes) -> JournalGames:
    """The games in a journal file's bytes (see the module docstring)."""
    records, problems, torn = read_records(content)
    games, more = split_games(records)
    return JournalGames(tuple(games), tuple(problems + more), len(records), torn)

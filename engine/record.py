"""Game records: one game as one ``rules replay`` line, and the older move-per-line format.

A saved game is what ``oanquan rules replay`` reads (interchange.md), so one
file serves every tool: ``oanquan play`` saves and loads it, ``oanquan
journal export`` writes it, and any checker can replay it::

    {"rules": {...}, "position": {...the start...}, "moves": ["2+", "9-"]}

:func:`load_game` reads that, or a record in the format ``play`` saved before,
``oanquan-record/1``, appended to as a game goes on, so a power cut can leave
a torn last line. :func:`read_record` reports exactly where such a file stops
making sense; with ``lenient=True`` it keeps everything before that point and
lists the problem instead of raising, so no confirmed move is thrown away::

    {"type": "header", "format": "oanquan-record/1", "rules": {...}, "start": {...}}
    {"type": "move", "move": "2+", "ply": 1, "time": 1764430000.5, "note": "..."}
    {"type": "note", "text": "..."}
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from engine.errors import EngineError, GameRecordError
from engine.game import Game
from engine.move import Move
from engine.position import Position
from engine.rules import Rules

FORMAT = "oanquan-record/1"

#: the keys of one game line, as ``rules replay`` reads it; ``id`` is the caller's own label
GAME_KEYS = ("rules", "position", "moves", "id")


@dataclass(frozen=True, slots=True)
class MoveEntry:
    move: Move
    time: float | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class GameRecord:
    rules: Rules
    start: Position
    entries: tuple[MoveEntry, ...] = ()
    notes: tuple[str, ...] = ()
    #: problems found by a lenient read (line number, message)
    errors: tuple[tuple[int, str], ...] = field(default=())

    def replay(self) -> Game:
        """The game these moves make; raises GameRecordError at the first illegal one."""
        game = Game(self.rules, self.start)
        for number, entry in enumerate(self.entries, start=1):
            try:
                game.play(entry.move)
            except EngineError as exc:
                raise GameRecordError(f"record: move {number} ({entry.move}): {exc}") from exc
        return game


def header_line(rules: Rules, start: Position) -> str:
    return _dump(
        {"type": "header", "format": FORMAT, "rules": rules.to_json(), "start": start.to_json()}
    )


def move_line(move: Move, ply: int, time: float | None = None, note: str | None = None) -> str:
    data: dict[str, Any] = {"type": "move", "move": str(move), "ply": ply}
    if time is not None:
        data["time"] = time
    if note:
        data["note"] = note
    return _dump(data)


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"


def game_json(game: Game) -> dict[str, Any]:
    """The game as ``rules replay`` reads it: rules, start position and the moves played."""
    return {
        "rules": game.rules.to_json(),
        "position": game.start.to_json(),
        "moves": [str(m) for m in game.moves],
    }


def save_game(path: str | Path, game: Game) -> None:
    """Write the game as one ``rules replay`` line, atomically (temp file, fsync, rename)."""
    _write_atomically(Path(path), [_dump(game_json(game))])


def game_from_json(data: Any) -> GameRecord:
    """A game line's content as a record; GameRecordError (or a RulesError) says what is wrong.

    Only the start is checked here; an illegal move is found by :meth:`GameRecord.replay`.
    """
    if not isinstance(data, dict):
        raise GameRecordError("a game must be a JSON object with rules, position and moves")
    unknown = sorted(set(data) - set(GAME_KEYS))
    if unknown:
        raise GameRecordError(f"unknown key {unknown[0]!r} (a game has {', '.join(GAME_KEYS)})")
    rules = Rules.from_json(data.get("rules"))
    raw = data.get("position")
    start = Position.initial(rules) if raw is None else Position.from_json(raw)
    if not start.is_valid(rules):
        raise GameRecordError(f"start position: {start.describe_status(rules)}")
    moves = data.get("moves", [])
    if not isinstance(moves, list):
        raise GameRecordError("moves must be a list of strings like '2+'")
    entries = []
    for number, text in enumerate(moves, start=1):
        try:
            entries.append(MoveEntry(Move.parse(text)))
        except EngineError as exc:
            raise GameRecordError(f"move {number}: {exc}") from exc
    return GameRecord(rules, start, tuple(entries))


def load_game(path: str | Path) -> GameRecord:
    """A saved game: one game line, or an ``oanquan-record/1`` file; GameRecordError if neither.

    A file of several game lines (a journal archive's export) is refused rather
    than guessed at: the message says how many games it holds.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise GameRecordError(f"cannot read the file: {why}") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise GameRecordError("the file is empty")
    try:
        first = json.loads(lines[0])
    except (ValueError, RecursionError) as exc:
        raise GameRecordError(f"line 1 is not valid JSON ({exc})") from None
    if isinstance(first, dict) and first.get("type") == "header":
        return read_record(io.StringIO(text))
    if len(lines) > 1:
        raise GameRecordError(f"the file holds {len(lines)} lines; a saved game is one line")
    return game_from_json(first)


def write_record(path: str | Path, game: Game, times: Iterable[float | None] | None = None) -> None:
    """Write a whole game atomically (temp file, fsync, rename)."""
    stamps = list(times) if times is not None else []
    lines = [header_line(game.rules, game.start)]
    for ply, move in enumerate(game.moves, start=1):
        lines.append(move_line(move, ply, stamps[ply - 1] if ply <= len(stamps) else None))
    _write_atomically(Path(path), lines)


def _write_atomically(path: Path, lines: list[str]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(lines)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_record(source: str | Path | IO[str], *, lenient: bool = False) -> GameRecord:
    """Read a record; a bad line raises, or with ``lenient`` ends the read there."""
    if isinstance(source, str | Path):
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GameRecordError(f"record: cannot read {str(source)!r}: {exc}") from exc
    else:
        text = source.read()
    lines = text.split("\n")
    torn_tail = bool(lines and lines[-1].strip())
    rules: Rules | None = None
    start: Position | None = None
    entries: list[MoveEntry] = []
    notes: list[str] = []
    errors: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            if torn_tail and number == len(lines):
                raise GameRecordError("last line is incomplete (no newline): the write was cut")
            data = json.loads(line)
            if not isinstance(data, dict):
                raise GameRecordError("line is not a JSON object")
            kind = data.get("type")
            if rules is None:
                if kind != "header" or data.get("format") != FORMAT:
                    raise GameRecordError(f"first line must be a {FORMAT} header")
                rules = Rules.from_json(data.get("rules"))
                start_json = data.get("start")
                start = (
                    Position.initial(rules)
                    if start_json is None
                    else Position.from_json(start_json)
                )
            elif kind == "move":
                expected = len(entries) + 1
                if data.get("ply") != expected:
                    raise GameRecordError(f"expected ply {expected}, got {data.get('ply')!r}")
                time = data.get("time")
                if time is not None and not isinstance(time, int | float):
                    raise GameRecordError(f"time must be a number, got {time!r}")
                entries.append(MoveEntry(Move.parse(data.get("move")), time, data.get("note")))
            elif kind == "note":
                notes.append(str(data.get("text", "")))
            else:
                raise GameRecordError(f"unknown line type {kind!r}")
        except (ValueError, EngineError) as exc:
            message = str(exc) if isinstance(exc, EngineError) else f"not valid JSON ({exc})"
            if not lenient or rules is None:
                raise GameRecordError(f"record line {number}: {message}") from exc
            errors.append((number, message))
            break
    if rules is None or start is None:
        raise GameRecordError("record is empty: no header line")
    return GameRecord(rules, start, tuple(entries), tuple(notes), tuple(errors))

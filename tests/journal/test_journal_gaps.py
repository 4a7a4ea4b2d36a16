"""Lines deleted from a journal are reported, never silently replaced by a new game."""

from __future__ import annotations

from pathlib import Path

from companion.appliance.journal import Journal
from engine import Rules


def clock() -> float:
    return 1_700_000_000.0


def write_game(path: Path, moves: list[str]) -> None:
    with Journal.open(path, clock=clock) as journal:
        journal.new_game(Rules())
        for ply, move in enumerate(moves, start=1):
            journal.move(move, ply=ply, how="camera")


def test_a_journal_whose_first_line_was_deleted_warns(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    write_game(path, ["2+", "9-"])
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[1:]))  # the game record is gone
    with Journal.open(path, clock=clock) as journal:
        state = journal.resume()
        assert any("starts at seq 2, not 1" in m for m in journal.messages)
        assert state.game is None
        assert any("no game record" in w and "2 record(s)" in w for w in state.warnings)


def test_a_line_deleted_after_the_archive_is_noticed(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    write_game(path, ["2+"])
    with Journal.open(path, clock=clock) as journal:
        journal.new_game(Rules())  # archives the first game
        journal.move("2+", ply=1, how="camera")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[1:]))
    with Journal.open(path, clock=clock) as journal:
        assert any("1 record(s) missing" in m for m in journal.messages)


def test_an_intact_journal_has_no_warning(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    write_game(path, ["2+", "9-"])
    with Journal.open(path, clock=clock) as journal:
        assert journal.messages == ()
        state = journal.resume()
        assert state.warnings == () and state.game is not None

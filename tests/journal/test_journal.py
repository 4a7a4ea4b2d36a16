"""The journal: format, durability order, repair at open, I/O errors, resume, compaction."""

from __future__ import annotations

import errno
import json
import re
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.appliance.journal import (
    ARCHIVE_NAME,
    DisputeData,
    FileSystem,
    Journal,
    JournalError,
    JournalFile,
    Record,
    read_archive,
    resume,
)
from engine import Game, Position, Rules


def clock() -> float:
    return 1_764_000_000.5


def _open(path: Path, fs: FileSystem | None = None) -> Journal:
    return Journal.open(path, fs=fs, clock=clock)


def _game_journal(path: Path, moves: list[str]) -> Journal:
    journal = _open(path)
    journal.new_game(Rules(), mode="manual")
    for ply, move in enumerate(moves, start=1):
        journal.move(move, ply=ply, how="camera", confidence=0.97, frame=f"f{ply}.jpg")
    return journal


# -- format -------------------------------------------------------------------


def test_line_format_has_seq_kind_data_and_crc_of_the_canonical_payload(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with _game_journal(path, ["2+"]) as journal:
        journal.note("bàn cờ ✓")
    lines = path.read_bytes().decode("utf-8").splitlines()
    assert len(lines) == 3
    third = json.loads(lines[2])
    assert list(third) == ["seq", "kind", "data", "crc"]
    assert third["seq"] == 3 and third["kind"] == "note"
    assert third["data"] == {"text": "bàn cờ ✓", "time": 1_764_000_000.5}
    payload = json.dumps(
        {"seq": 3, "kind": "note", "data": third["data"]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert third["crc"] == zlib.crc32(payload.encode("utf-8"))
    move = json.loads(lines[1])["data"]
    assert move == {
        "move": "2+",
        "ply": 1,
        "how": "camera",
        "confidence": 0.97,
        "frame": "f1.jpg",
        "time": 1_764_000_000.5,
    }


def test_records_survive_a_reopen_and_seq_continues(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with _game_journal(path, ["2+", "7-"]) as journal:
        before = journal.records
    with _open(path) as journal:
        assert journal.messages == ()
        assert journal.records == before
        assert journal.undo("7-").seq == 4


def test_bad_data_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with _open(path) as journal:
        with pytest.raises(ValueError, match="unknown record kind"):
            journal.append("mvoe", {})
        with pytest.raises(ValueError, match="not plain JSON"):
            journal.append("note", {"x": float("nan")})
        with pytest.raises(ValueError, match="how must be"):
            journal.move("2+", ply=1, how="guess")
    assert path.read_bytes() == b""


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"[1]", "not a journal record"),
        (b'{"seq":1,"kind":"note","data":{},"crc":1}', "checksum mismatch"),
        (b'{"seq":0,"kind":"note","data":{},"crc":1}', "bad seq"),
        (b'{"seq":1,"kind":"note","data":[],"crc":1}', "data is not a JSON object"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"seq":1,', "not valid JSON"),
    ],
)
def test_a_bad_line_says_what_is_wrong(line: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        Record.from_line(line)


# -- durability order ------------------------------------------------------------


class RecordingFS(FileSystem):
    """The real file system, logging every call in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def open(self, path: Path, mode: str) -> JournalFile:
        self.calls.append(f"open {path.name} {mode}")
        return RecordingFile(super().open(path, mode), self, path.name)

    def fsync_dir(self, path: Path) -> None:
        self.calls.append("fsync_dir")
        super().fsync_dir(path)

    def rename(self, src: Path, dst: Path) -> None:
        self.calls.append(f"rename {src.name} {dst.name}")
        super().rename(src, dst)


class RecordingFile:
    def __init__(self, inner: JournalFile, fs: RecordingFS, name: str) -> None:
        self.inner, self.fs, self.name = inner, fs, name

    def write(self, data: bytes) -> int:
        lines = data.count(b"\n")
        self.fs.calls.append(f"write {self.name} {lines} lines")
        return self.inner.write(data)

    def flush(self) -> None:
        self.fs.calls.append(f"flush {self.name}")

    def fsync(self) -> None:
        self.fs.calls.append(f"fsync {self.name}")
        self.inner.fsync()

    def truncate(self, size: int) -> None:
        self.fs.calls.append(f"truncate {self.name} {size}")
        self.inner.truncate(size)

    def close(self) -> None:
        self.inner.close()


def test_each_append_is_one_write_then_flush_and_fsync_and_a_new_file_syncs_its_dir(
    tmp_path: Path,
) -> None:
    fs = RecordingFS()
    journal = _open(tmp_path / "journal.jsonl", fs)
    assert fs.calls == ["open journal.jsonl append", "fsync_dir"]
    fs.calls.clear()
    journal.note("a")
    journal.note("b")
    assert (
        fs.calls
        == [
            "write journal.jsonl 1 lines",
            "flush journal.jsonl",
            "fsync journal.jsonl",
        ]
        * 2
    )
    journal.close()
    fs.calls.clear()
    _open(tmp_path / "journal.jsonl", fs).close()
    assert fs.calls == ["open journal.jsonl append"]


def test_compaction_commits_the_archive_before_it_rewrites_the_journal(tmp_path: Path) -> None:
    fs = RecordingFS()
    journal = Journal.open(tmp_path / "journal.jsonl", fs=fs, clock=clock)
    journal.new_game(Rules())
    journal.move("2+", ply=1, how="buttons")
    fs.calls.clear()
    journal.new_game(Rules())
    assert fs.calls == [
        "write journal.jsonl 1 lines",
        "flush journal.jsonl",
        "fsync journal.jsonl",
        f"open {ARCHIVE_NAME} append",
        f"write {ARCHIVE_NAME} 2 lines",
        f"flush {ARCHIVE_NAME}",
        f"fsync {ARCHIVE_NAME}",
        "fsync_dir",
        "open journal.jsonl.tmp replace",
        "write journal.jsonl.tmp 1 lines",
        "flush journal.jsonl.tmp",
        "fsync journal.jsonl.tmp",
        "rename journal.jsonl.tmp journal.jsonl",
        "fsync_dir",
        "open journal.jsonl append",
    ]
    journal.close()


# -- repair at open --------------------------------------------------------------


def test_torn_tail_is_cut_and_reported_with_line_and_bytes(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    _game_journal(path, ["2+", "7-"]).close()
    good = path.read_bytes()
    path.write_bytes(good + b'{"seq":4,"kind":"mo')
    journal = _open(path)
    assert journal.messages == (
        "journal: journal.jsonl line 4 at the end: incomplete last line (19 bytes, no newline); "
        "cut 19 bytes",
    )
    assert path.read_bytes() == good
    assert [r.seq for r in journal.records] == [1, 2, 3]
    assert journal.move("1+", ply=3, how="confirmed").seq == 4
    journal.close()
    assert _open(path).messages == ()
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_bad_crc_in_the_last_line_is_cut_and_its_bytes_kept(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    _game_journal(path, ["2+", "7-"]).close()
    lines = path.read_bytes().splitlines(keepends=True)
    bad = lines[-1].replace(b'"7-"', b'"8-"')
    path.write_bytes(b"".join(lines[:-1]) + bad)
    journal = _open(path)
    (message,) = journal.messages
    assert message.startswith("journal: journal.jsonl line 3 at the end: checksum mismatch")
    assert message.endswith(f"cut {len(bad)} bytes, saved to journal.jsonl.corrupt-1")
    assert (tmp_path / "journal.jsonl.corrupt-1").read_bytes() == bad
    assert [str(m) for m in journal.resume().game.moves] == ["2+"]  # type: ignore[union-attr]
    journal.close()


def test_bad_line_in_the_middle_moves_it_and_the_rest_aside(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    _game_journal(path, ["2+", "7-", "3+", "8+"]).close()
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = b'{"seq":3,"kind":"move","data":{"mo\x00\x00\x00\n'
    path.write_bytes(b"".join(lines))
    journal = _open(path)
    (message,) = journal.messages
    assert message.startswith("journal: journal.jsonl line 3 in the middle: not valid JSON")
    aside = b"".join(lines[2:])
    assert message.endswith(f"cut {len(aside)} bytes, saved to journal.jsonl.corrupt-1")
    assert (tmp_path / "journal.jsonl.corrupt-1").read_bytes() == aside
    assert path.read_bytes() == b"".join(lines[:2])
    assert [r.seq for r in journal.records] == [1, 2]
    journal.close()
    # a second, different damage gets the next name; nothing is overwritten
    path.write_bytes(path.read_bytes() + b"junk\n" + lines[1])
    with _open(path) as again:
        assert "saved to journal.jsonl.corrupt-2" in again.messages[0]
    assert (tmp_path / "journal.jsonl.corrupt-1").read_bytes() == aside


def test_a_duplicated_line_breaks_the_seq_chain(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    _game_journal(path, ["2+", "7-"]).close()
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([lines[0], lines[1], lines[1], lines[2]]))
    with _open(path) as journal:
        assert "line 3 in the middle: seq 2 where 3 was expected" in journal.messages[0]
        assert [r.seq for r in journal.records] == [1, 2]


def test_empty_and_missing_files_open_clean(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with _open(empty) as journal:
        assert journal.records == () and journal.messages == () and journal.next_seq == 1
    missing = tmp_path / "new" / "journal.jsonl"
    missing.parent.mkdir()
    with _open(missing) as journal:
        assert journal.records == () and journal.next_seq == 1
    assert missing.exists()
    state = resume(())
    assert state.game is None and state.games == 0 and state.warnings == ()


def test_only_garbage_is_all_cut_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"\x00" * 40 + b"\n" + b"\x00" * 9)
    with _open(path) as journal:
        assert journal.records == ()
        assert "line 1 at the end" in journal.messages[0]
        assert "cut 50 bytes, saved to journal.jsonl.corrupt-1" in journal.messages[0]
    assert path.read_bytes() == b""


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_any_cut_or_flipped_byte_keeps_exactly_the_good_records_before_it(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    path = tmp_path_factory.mktemp("prop") / "journal.jsonl"
    _game_journal(path, ["2+", "7-", "3+", "8+"]).close()
    original = path.read_bytes()
    ends = [i + 1 for i, b in enumerate(original) if b == ord("\n")]
    at = data.draw(st.integers(0, len(original) - 1), label="at")
    if data.draw(st.booleans(), label="flip"):
        damaged = bytearray(original)
        damaged[at] ^= data.draw(st.integers(1, 255), label="xor")
        content = bytes(damaged)
    else:
        content = original[:at]
    path.write_bytes(content)
    with _open(path) as journal:
        kept = sum(1 for end in ends if end <= at)
        good = original[: ends[kept - 1] if kept else 0]
        assert [r.seq for r in journal.records] == list(range(1, kept + 1))
        assert path.read_bytes() == good
        assert bool(journal.messages) == (content != good)  # any damage is reported


# -- I/O errors ----------------------------------------------------------------------


class DeniedFS(FileSystem):
    """What chmod 000 on the state directory does (root ignores it, so simulate)."""

    def read(self, path: Path) -> bytes | None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    def open(self, path: Path, mode: str) -> JournalFile:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))


def test_permission_denied_is_one_clear_line_naming_the_path(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with pytest.raises(JournalError) as info:
        _open(path, DeniedFS())
    assert str(info.value) == f"journal: cannot open {path}: permission denied"
    assert "\n" not in str(info.value)


class ReadOnlyFS(FileSystem):
    """The journal can be read but not written (a read-only mount, a wrong owner)."""

    def open(self, path: Path, mode: str) -> JournalFile:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))


def test_a_journal_that_cannot_be_written_is_refused_at_open(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    _game_journal(path, ["2+"]).close()
    with pytest.raises(JournalError) as info:
        _open(path, ReadOnlyFS())
    assert str(info.value) == f"journal: cannot open {path}: permission denied"


def test_missing_state_directory_names_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "journal.jsonl"
    with pytest.raises(JournalError) as info:
        _open(path)
    assert str(info.value) == (
        f"journal: cannot open {path}: directory {path.parent} does not exist"
    )


class FailingFS(FileSystem):
    """Writes half of the next line, then fails like a full disk (or fsync like EIO)."""

    def __init__(self) -> None:
        self.fail: str | None = None

    def open(self, path: Path, mode: str) -> JournalFile:
        return FailingFile(super().open(path, mode), self)


class FailingFile:
    def __init__(self, inner: JournalFile, fs: FailingFS) -> None:
        self.inner, self.fs = inner, fs

    def write(self, data: bytes) -> int:
        if self.fs.fail == "write":
            self.fs.fail = None
            self.inner.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.inner.write(data)

    def flush(self) -> None:
        self.inner.flush()

    def fsync(self) -> None:
        if self.fs.fail == "fsync":
            self.fs.fail = None
            raise OSError(errno.EIO, "Input/output error")
        self.inner.fsync()

    def truncate(self, size: int) -> None:
        self.inner.truncate(size)

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize(("fail", "why"), [("write", "no space"), ("fsync", "input/output")])
def test_a_failed_append_is_not_confirmed_and_leaves_no_partial_line(
    tmp_path: Path, fail: str, why: str
) -> None:
    path = tmp_path / "journal.jsonl"
    fs = FailingFS()
    journal = Journal.open(path, fs=fs, clock=clock)
    journal.new_game(Rules())
    size = path.stat().st_size
    fs.fail = fail
    with pytest.raises(JournalError, match=re.escape(f"journal: cannot write {path}: {why}")):
        journal.move("2+", ply=1, how="camera")
    assert path.stat().st_size == size
    assert len(journal.records) == 1
    assert journal.move("2+", ply=1, how="camera").seq == 2
    journal.close()
    assert _open(path).messages == ()


# -- resume ---------------------------------------------------------------------------


def test_resume_replays_moves_and_undo(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _game_journal(path, ["2+", "7-", "3+"])
    journal.undo("3+")
    journal.move("1-", ply=3, how="override")
    journal.close()
    state = resume(_open(path).records)
    expected = Game()
    expected.play_all(["2+", "7-", "1-"])
    assert state.game is not None
    assert state.game.position == expected.position
    assert state.mode == "manual"
    assert (state.games, state.disputes, state.open_dispute, state.warnings) == (1, 0, None, ())
    assert state.applied_seq == state.last_seq == 6


def test_resume_reopens_an_unresolved_dispute(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _game_journal(path, ["2+"])
    first = journal.dispute(DisputeData("dispute", squares=((3, 0, 1),), choices=("7-", "8+")))
    journal.resolve("recount", dispute=first.seq)
    second = journal.dispute(DisputeData("dispute", choices=("7-",), frame="f9.jpg"))
    journal.note("players are arguing")
    journal.refill_done(1)
    journal.close()
    state = resume(_open(path).records)
    assert state.open_dispute == second
    assert state.open_dispute.data["choices"] == ["7-"]
    assert state.disputes == 2 and state.refill_done
    assert [str(m) for m in state.game.moves] == ["2+"]  # type: ignore[union-attr]


@pytest.mark.parametrize("closing", ["resolve", "move", "undo"])
def test_a_dispute_ends_with_a_resolve_move_or_undo(tmp_path: Path, closing: str) -> None:
    journal = _game_journal(tmp_path / "journal.jsonl", ["2+"])
    journal.dispute(DisputeData("dispute", choices=("7-",)))
    if closing == "resolve":
        journal.resolve("accepted")
    elif closing == "move":
        journal.move("7-", ply=2, how="override")
    else:
        journal.undo("2+")
    assert resume(journal.records).open_dispute is None
    journal.close()


def test_an_illegal_move_stops_the_resume_at_the_last_legal_state(tmp_path: Path) -> None:
    journal = _game_journal(tmp_path / "journal.jsonl", ["2+", "7-"])
    bad = journal.append("move", {"move": "7-", "ply": 3, "how": "camera"})
    journal.move("1+", ply=3, how="camera")
    state = resume(journal.records)
    journal.close()
    expected = Game()
    expected.play_all(["2+", "7-"])
    assert state.game is not None and state.game.position == expected.position
    assert state.applied_seq == bad.seq - 1 and state.last_seq == bad.seq + 1
    (warning,) = state.warnings
    assert warning.startswith(f"journal seq {bad.seq}: illegal move '7-'")
    assert warning.endswith("resumed before it, 1 later record(s) ignored")


def test_resume_of_odd_records_warns_instead_of_failing() -> None:
    game = Record(1, "game", {"rules": {}, "start": None, "mode": "camera"})
    records = [
        game,
        Record(2, "undo", {"move": None}),
        Record(3, "move", {"move": "2+", "ply": 5}),
        Record(4, "undo", {"move": "3+"}),
        Record(5, "teleport", {}),
    ]
    state = resume(records)
    assert state.game is not None and state.game.moves == []
    assert state.warnings == (
        "journal seq 2: undo with no move to take back; ignored",
        "journal seq 3: ply 5, but it is move 1",
        "journal seq 4: undo of '3+' took back 2+",
        "journal seq 5: unknown record kind 'teleport'; ignored",
    )
    broken = resume([Record(1, "game", {"rules": {"chain": "maybe"}})])
    assert broken.game is None
    assert broken.warnings[0].startswith("journal seq 1: game record unreadable: rules: chain")


def test_end_of_a_game_not_over_is_an_agreed_stop_and_undo_reopens_it(tmp_path: Path) -> None:
    journal = _game_journal(tmp_path / "journal.jsonl", ["2+", "7-"])
    expected = Game()
    expected.play_all(["2+", "7-"])
    expected.stop_and_count()
    assert expected.outcome is not None
    journal.end(expected.outcome.final, expected.outcome.reason)
    state = resume(journal.records)
    assert state.game is not None and state.game.position == expected.position
    assert state.end is not None and state.warnings == ()
    journal.undo()
    state = resume(journal.records)
    assert state.game is not None and not state.game.is_over and state.end is None
    journal.close()


def test_a_custom_start_and_rules_come_back(tmp_path: Path) -> None:
    rules = Rules(chain=False, quan_non_min=0)
    start = Position.from_text("0B|5,5,5,5,5|0B|5,5,5,5,5 P1 s0/0 q0/0 d0/0 n0")
    with _open(tmp_path / "journal.jsonl") as journal:
        journal.new_game(rules, start, mode="camera")
        journal.move("7+", ply=1, how="camera")
        state = resume(journal.records)
    assert state.game is not None
    assert state.game.rules == rules and state.game.start == start
    assert [str(m) for m in state.game.moves] == ["7+"]


# -- compaction ------------------------------------------------------------------


def _play_games(journal: Journal, games: int) -> None:
    for _ in range(games):
        journal.new_game(Rules())
        journal.move("2+", ply=1, how="camera")
        journal.dispute(DisputeData("dispute"))
        journal.resolve("accepted")


def test_new_game_archives_the_old_ones_and_keeps_the_counters(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _open(path)
    _play_games(journal, 3)
    assert [r.kind for r in journal.records] == ["game", "move", "dispute", "resolve"]
    assert journal.records[0].seq == 9
    archived = list(read_archive(tmp_path / ARCHIVE_NAME))
    assert [r.seq for r in archived] == list(range(1, 9))
    state = journal.resume()
    assert (state.games, state.disputes) == (3, 3)
    journal.close()
    with _open(path) as again:
        assert again.messages == () and again.next_seq == 13
        assert (again.resume().games, again.resume().disputes) == (3, 3)


def test_open_finishes_a_compaction_cut_after_the_archive_commit(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _open(path)
    _play_games(journal, 1)
    journal.new_game(Rules(), compact=False)
    journal.close()
    live = path.read_bytes()
    lines = live.splitlines(keepends=True)
    # the archive got the first game; the journal was never rewritten; a .tmp was left
    (tmp_path / ARCHIVE_NAME).write_bytes(b"".join(lines[:4]))
    (tmp_path / "journal.jsonl.tmp").write_bytes(lines[4][:10])
    with _open(path) as again:
        assert again.messages == (
            "journal: removed journal.jsonl.tmp left by an interrupted compaction",
            "journal: finished an interrupted compaction (records up to seq 4 are archived)",
        )
        assert [r.seq for r in again.records] == [5]
    assert path.read_bytes() == lines[4]
    assert not (tmp_path / "journal.jsonl.tmp").exists()


def test_a_torn_archive_tail_leaves_the_records_to_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _open(path)
    _play_games(journal, 1)
    journal.new_game(Rules(), compact=False)
    journal.close()
    lines = path.read_bytes().splitlines(keepends=True)
    (tmp_path / ARCHIVE_NAME).write_bytes(lines[0] + lines[1][:30])
    with _open(path) as again:
        assert again.messages[0] == (
            f"journal: {ARCHIVE_NAME} has a bad tail after its last good record; cut 30 bytes"
        )
        # seq 1 is owned by the archive now; the rest of the old game was archived on
        assert [r.seq for r in again.records] == [5]
    assert [r.seq for r in read_archive(tmp_path / ARCHIVE_NAME)] == [1, 2, 3, 4]


def test_a_foreign_archive_is_never_trusted_to_own_our_records(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    _game_journal(path, ["2+", "7-"]).close()
    (tmp_path / ARCHIVE_NAME).write_bytes(Record(2, "note", {"text": "other"}).to_line())
    with _open(path) as journal:
        assert "disagree about seq 2" in journal.messages[0]
        assert [r.seq for r in journal.records] == [1, 2, 3]
        assert journal.compact() == 0


def test_a_lost_journal_continues_the_archive_numbering(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    journal = _open(path)
    _play_games(journal, 2)
    journal.close()
    path.unlink()
    with _open(path) as again:
        assert again.next_seq == 5
        assert again.note("fresh start").seq == 5

"""The referee's journal: every confirmed move and decision, on disk before "done".

The referee runs unattended for months and loses power without warning, so
what it has told the players is recorded first. The journal is one append-only
JSON Lines file in the state directory; each line is one :class:`Record`::

    {"seq":12,"kind":"move","data":{"how":"camera","move":"2+","ply":7,...},"crc":123456}

``crc`` is ``zlib.crc32`` of the canonical JSON of ``{"seq", "kind", "data"}``
(sorted keys, no spaces, UTF-8), and ``seq`` counts up by one from line to
line, so a torn, corrupt, duplicated or missing line is always noticed.

Durability: :meth:`Journal.append` hands the whole line to one ``write()``,
then flushes and ``fsync``\\ s before it returns (and ``fsync``\\ s the directory
when it created the file), so a record the caller has confirmed survives a
power cut. A crash or power cut can only damage what follows the last
confirmed line (a torn line, zeros), which :meth:`Journal.open` cuts off. A
bad line with good lines after it cannot come from a crash (bit rot, an
editor): open() moves it and everything after it to ``journal.jsonl.corrupt-<n>``
and resumes from the records before it, keeping every byte for a person to
look at.

Record kinds and their ``data`` (every helper also stores ``time``, seconds
since the epoch from the injected clock; readers must ignore unknown keys, so
fields can be added later):

``game``
    ``rules`` (Rules JSON), ``start`` (Position JSON), ``mode`` ("camera" or
    "manual"), ``counters`` ({"games", "disputes"} before this game, so the
    kiosk totals survive compaction).
``move``
    ``move`` ("2+"), ``ply`` (its number in the game, 1 = first move), ``how``
    ("camera", "confirmed", "buttons" or "override"), ``confidence`` (float or
    null), ``frame`` (camera frame name or null).
``undo``
    ``move`` (the move taken back, for a cross-check, or null), ``ply``.
``dispute``
    ``kind`` ("ambiguous", or the mistake named), ``move`` (the move the board
    was judged against, or null), ``choices`` (move texts to pick from),
    ``squares`` ([square, expected, seen] triples), ``frame``.
``resolve``
    ``how`` (free text such as "accepted", "override", "undo", "recount"),
    ``dispute`` (the seq of the dispute it ends, or null), ``move`` (or null).
``refill_done``
    ``player`` and ``ply`` (either may be null): the refill pebbles are on the board.
``end``
    ``final`` ([P0, P1] scores), ``winner`` (0, 1 or null), ``reason``.
``tally``
    a scoring dispute counted (``companion.referee.records.tally_data``): per
    player ``pieces``, ``intervals``, ``bigs`` and ``how`` ("camera",
    "camera+hand": the players counted the squares it was unsure of, or
    "buttons"); ``mandarin_value``, ``debt``, ``sweep``, ``scores``,
    ``winner``, ``sure``, ``expected``.
``counters_reset``
    the operator reset the kiosk totals.
``note``
    ``text``.

Compaction: when a new game starts, the records before it are moved to the
append-only ``journal-archive.jsonl`` beside the journal, so the live file holds
one game. The archive gets the very same lines. The crash-safety rule is
*ownership by sequence number*: a record belongs to the archive exactly when
its seq is at most the seq of the archive's last valid line, and to the journal
otherwise. Compaction (1) appends the old lines to the archive and fsyncs it,
which is the commit point; then (2) writes the kept lines to ``journal.jsonl.tmp``,
fsyncs it, renames it over the journal and fsyncs the directory. A crash in (1)
leaves a torn archive tail that open() cuts (the journal still owns those
records); a crash between (1) and (2) leaves lines the archive already owns in
the journal too, and open() finishes the compaction; a leftover ``.tmp`` is
never authoritative and is removed. The bytes of a game can sit in both
files for a moment, but there is no instant at which both files, or neither,
*own* it, and once open() returns no record is held twice. A new journal
continues the archive's numbering, so seqs never repeat. Reading only the
archive's tail keeps open() fast after months of games.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from companion.appliance.journal.resume import ResumeState, _counters, resume
from companion.referee.records import (
    KINDS,
    MODES,
    Record,
    RecordWriter,
    _canonical,
)
from engine import Position, Rules

ARCHIVE_NAME = "journal-archive.jsonl"

#: how far back from its end the archive is read at open to find its last record
_ARCHIVE_WINDOW = 64 * 1024


class JournalError(Exception):
    """An I/O problem the journal cannot repair (permission, missing directory, full disk)."""


# -- the file layer, injectable so tests can fail or kill at any byte ------------


class JournalFile(Protocol):
    """An open file; every method may raise OSError."""

    def write(self, data: bytes) -> int: ...

    def flush(self) -> None: ...

    def fsync(self) -> None: ...

    def truncate(self, size: int) -> None: ...

    def close(self) -> None: ...


class FileSystem:
    """Every file operation the journal makes; subclass it to inject faults.

    ``open`` modes: "append" (create if missing, writes go to the end),
    "write" (an existing file, for truncating), "create" (a new file; fails if
    it exists), "replace" (create or empty a file).
    """

    def read(self, path: Path) -> bytes | None:
        """The whole file, or None when it does not exist."""
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            if not path.parent.is_dir():
                raise
            return None

    def read_tail(self, path: Path, size: int) -> tuple[int, bytes] | None:
        """The last ``size`` bytes and the offset they start at; None when missing."""
        try:
            with open(path, "rb") as fh:
                end = fh.seek(0, os.SEEK_END)
                start = max(0, end - size)
                fh.seek(start)
                return start, fh.read()
        except FileNotFoundError:
            if not path.parent.is_dir():
                raise
            return None

    def open(self, path: Path, mode: str) -> JournalFile:
        flags = {
            "append": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
            "write": os.O_WRONLY,
            "create": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
            "replace": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
        }[mode]
        return OsFile(os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o644))

    def exists(self, path: Path) -> bool:
        return path.exists()

    def fsync_dir(self, path: Path) -> None:
        """Make a created, renamed or removed name durable."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def rename(self, src: Path, dst: Path) -> None:
        os.replace(src, dst)

    def remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)


class OsFile:
    """A raw file descriptor: no user-space buffer, so nothing can linger unwritten."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> int:
        return os.write(self.fd, data)

    def flush(self) -> None:
        """Nothing buffered in user space; kept so wrappers have one place to hook."""

    def fsync(self) -> None:
        os.fsync(self.fd)

    def truncate(self, size: int) -> None:
        os.ftruncate(self.fd, size)

    def close(self) -> None:
        os.close(self.fd)


def write_all(fh: JournalFile, data: bytes) -> None:
    """One write() for the whole buffer; a short write (full disk, signal) is continued."""
    view = memoryview(data)
    while view:
        n = fh.write(bytes(view))
        if n <= 0:
            raise OSError(errno.EIO, "write wrote nothing")
        view = view[n:]


def _why(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else type(exc).__name__


# -- scanning a file -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Scan:
    """The good records of a file, where they end, and the first bad line if any."""

    records: list[Record]
    good_end: int
    bad_line: int | None = None
    bad_reason: str = ""
    good_after: bool = False


def _scan(content: bytes, first_line: int = 1) -> _Scan:
    records: list[Record] = []
    offset = 0
    number = first_line
    while offset < len(content):
        newline = content.find(b"\n", offset)
        if newline < 0:
            reason = f"incomplete last line ({len(content) - offset} bytes, no newline)"
            return _Scan(records, offset, number, reason)
        raw = content[offset:newline]
        try:
            record = Record.from_line(raw)
            if records and record.seq != records[-1].seq + 1:
                raise ValueError(f"seq {record.seq} where {records[-1].seq + 1} was expected")
        except ValueError as exc:
            return _Scan(records, offset, number, str(exc), _any_good(content, newline + 1))
        records.append(record)
        offset = newline + 1
        number += 1
    return _Scan(records, offset)


def _any_good(content: bytes, offset: int) -> bool:
    """Whether a verifiable record follows: then the damage is in the middle, not the tail."""
    for raw in content[offset:].split(b"\n")[:-1]:
        try:
            Record.from_line(raw)
        except ValueError:
            continue
        return True
    return False


# -- the journal -----------------------------------------------------------------


class Journal(RecordWriter):
    """The open journal: recovered records in memory, appends durable on return.

    Use :meth:`open`; appends are serialised by a lock, so a UI thread and the
    camera thread may both record.
    """

    def __init__(
        self,
        path: Path,
        fs: FileSystem,
        clock: Callable[[], float],
        records: list[Record],
        next_seq: int,
        archived_seq: int,
        messages: list[str],
        size: int,
    ) -> None:
        self.path = path
        self.archive_path = path.with_name(ARCHIVE_NAME)
        self._fs = fs
        self._clock = clock
        self._records = records
        self._next_seq = next_seq
        self._archived_seq = archived_seq
        #: one line per problem found and repaired at open (for the log and the service screen)
        self.messages: tuple[str, ...] = tuple(messages)
        self._lock = threading.Lock()
        self._file: JournalFile | None = None
        #: bytes of good records in the file: where a failed append is cut back to
        self._size = size
        self._broken: str | None = None

    # -- opening and recovery ----------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        fs: FileSystem | None = None,
        clock: Callable[[], float] = time.time,
    ) -> Journal:
        """Read, verify and repair the journal (creating it if missing), ready to append.

        Bad content is never an exception: a torn or corrupt tail is cut off, a
        corrupt line with good lines after it is moved aside with everything
        after it to ``<name>.corrupt-<n>``, and each repair is one line in
        :attr:`messages`. Only I/O failures raise :class:`JournalError`.
        """
        path = Path(path)
        fs = fs or FileSystem()
        messages: list[str] = []
        try:
            if fs.exists(_tmp_path(path)):
                fs.remove(_tmp_path(path))
                fs.fsync_dir(path.parent)
                messages.append(
                    f"journal: removed {_tmp_path(path).name} left by an interrupted compaction"
                )
            content = fs.read(path)
            scan = _scan(content or b"")
            if scan.bad_line is not None:
                messages.append(_repair(fs, path, content or b"", scan))
            archived_seq, archived_line = _archive_last(fs, path.with_name(ARCHIVE_NAME), messages)
        except OSError as exc:
            raise _io_error("open", path, exc) from None
        records = scan.records
        if records and records[0].seq > archived_seq + 1:
            missing = records[0].seq - archived_seq - 1
            messages.append(
                f"journal: {path.name} starts at seq {records[0].seq}, not {archived_seq + 1}: "
                f"{missing} record(s) missing before it (lines deleted?)"
            )
        last = records[-1].seq if records else 0
        journal = cls(
            path,
            fs,
            clock,
            records,
            max(last, archived_seq) + 1,
            archived_seq,
            messages,
            scan.good_end,
        )
        if records and records[0].seq <= archived_seq:
            own = next((r for r in records if r.seq == archived_seq), None)
            if own is not None and own.to_line() == archived_line:
                journal._compact(finishing=True)
                journal.messages += (
                    f"journal: finished an interrupted compaction (records up to seq {archived_seq} are archived)",
                )
            else:
                journal.messages += (
                    f"journal: {path.name} and {ARCHIVE_NAME} disagree about seq {archived_seq}; "
                    "both kept, compaction disabled",
                )
                journal._archived_seq = -1
        journal._open_for_append()
        return journal

    def _open_for_append(self) -> None:
        try:
            created = not self._fs.exists(self.path)
            self._file = self._fs.open(self.path, "append")
            if created:
                self._fs.fsync_dir(self.path.parent)
        except OSError as exc:
            raise _io_error("open", self.path, exc) from None

    # -- reading -------------------------------------------------------------

    def totals(self) -> tuple[int, int]:
        """Games started and disputes so far, archived games included (the operator screen)."""
        with self._lock:
            return _counters(self._records)

    def record_time(self) -> float:
        return self._clock()

    @property
    def records(self) -> tuple[Record, ...]:
        """The live records (the archive is not loaded; see :func:`read_archive`)."""
        return tuple(self._records)

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def resume(self) -> ResumeState:
        return resume(self._records)

    @property
    def broken(self) -> bool:
        """Whether appends are refused until the journal is reopened (see :meth:`reopen`)."""
        return self._broken is not None

    def reopen(self) -> Journal:
        """Open the same file again (same file system and clock), repairing what a failure left.

        The way back from :attr:`broken`: open() cuts a partial line and finishes
        an interrupted compaction, keeping every record that was confirmed.
        """
        return Journal.open(self.path, fs=self._fs, clock=self._clock)

    # -- appending -------------------------------------------------------------

    def append(self, kind: str, data: Mapping[str, Any]) -> Record:
        """Write one record durably: one write(), flush, fsync; only then return it.

        On any I/O failure the partial line is cut back off and JournalError is
        raised: the caller must not show the move as confirmed.
        """
        if kind not in KINDS:
            raise ValueError(f"journal: unknown record kind {kind!r} (one of {', '.join(KINDS)})")
        try:
            plain = json.loads(_canonical(dict(data)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"journal: {kind} data is not plain JSON: {exc}") from None
        with self._lock:
            record = Record(self._next_seq, kind, plain)
            try:
                line = record.to_line()
            except UnicodeEncodeError as exc:
                raise ValueError(f"journal: {kind} data cannot be encoded: {exc}") from None
            self._write_durably(line)
            self._records.append(record)
            self._next_seq += 1
            self._size += len(line)
            return record

    def _write_durably(self, line: bytes) -> None:
        if self._broken is not None:
            raise JournalError(self._broken)
        if self._file is None:
            raise JournalError(f"journal: {self.path} is closed")
        try:
            write_all(self._file, line)
            self._file.flush()
            self._file.fsync()
        except OSError as exc:
            error = _io_error("write", self.path, exc)
            try:
                self._file.truncate(self._size)
                self._file.fsync()
            except OSError:
                self._broken = f"{error}; the partial line could not be removed, reopen the journal"
            raise error from None

    # -- one helper per kind, so the data fields are spelled in one place -------

    def new_game(
        self,
        rules: Rules,
        start: Position | None = None,
        *,
        mode: str = "camera",
        compact: bool = True,
    ) -> Record:
        """Record a new game; then move the earlier games to the archive."""
        if mode not in MODES:
            raise ValueError(f"journal: mode must be one of {', '.join(MODES)}, got {mode!r}")
        with self._lock:
            games, disputes = _counters(self._records)
        start = start or Position.initial(rules)
        record = self.append(
            "game",
            {
                "rules": rules.to_json(),
                "start": start.to_json(),
                "mode": mode,
                "counters": {"games": games, "disputes": disputes},
                "time": self._clock(),
            },
        )
        if compact:
            self.compact()
        return record

    # -- compaction -------------------------------------------------------------

    def compact(self) -> int:
        """Archive every record before the last ``game`` record; returns how many moved.

        See the module docstring for why a crash at any point is safe.
        """
        with self._lock:
            if self._broken is not None:
                raise JournalError(self._broken)
            return self._compact(finishing=False)

    def _compact(self, *, finishing: bool) -> int:
        if self._archived_seq < 0:
            return 0
        games = [r.seq for r in self._records if r.kind == "game"]
        upto = games[-1] if games else (self._records[0].seq if self._records else 0)
        keep_from = max(upto, self._archived_seq + 1)
        moving = [r for r in self._records if self._archived_seq < r.seq < keep_from]
        kept = [r for r in self._records if r.seq >= keep_from]
        if not moving and len(kept) == len(self._records):
            return 0
        try:
            if moving:
                created = not self._fs.exists(self.archive_path)
                archive = self._fs.open(self.archive_path, "append")
                try:
                    write_all(archive, b"".join(r.to_line() for r in moving))
                    archive.flush()
                    archive.fsync()  # the commit point: from here the archive owns them
                finally:
                    archive.close()
                if created:
                    self._fs.fsync_dir(self.path.parent)
                self._archived_seq = moving[-1].seq
            tmp = _tmp_path(self.path)
            out = self._fs.open(tmp, "replace")
            try:
                write_all(out, b"".join(r.to_line() for r in kept))
                out.flush()
                out.fsync()
            finally:
                out.close()
            if self._file is not None and not finishing:
                self._file.close()
                self._file = None
            self._fs.rename(tmp, self.path)
            self._fs.fsync_dir(self.path.parent)
        except OSError as exc:
            # The archive owns what it holds; reopening finishes the rest.
            self._broken = f"{_io_error('compact', self.path, exc)}; reopen the journal"
            raise JournalError(self._broken) from None
        self._records = kept
        self._size = sum(len(r.to_line()) for r in kept)
        if not finishing:
            self._open_for_append()
        return len(moving)

    # -- closing -------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.close()
                self._file = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tmp_path(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


def _io_error(action: str, path: Path, exc: OSError) -> JournalError:
    if isinstance(exc, FileNotFoundError) and not path.parent.is_dir():
        return JournalError(
            f"journal: cannot {action} {path}: directory {path.parent} does not exist"
        )
    where = exc.filename if isinstance(exc.filename, str) else str(path)
    return JournalError(f"journal: cannot {action} {where}: {_why(exc)}")


def _repair(fs: FileSystem, path: Path, content: bytes, scan: _Scan) -> str:
    """Cut the file back to its last good record; keep cut bytes that held whole lines."""
    cut = content[scan.good_end :]
    saved = ""
    if scan.good_after or b"\n" in cut:
        aside = _save_aside(fs, path, cut)
        saved = f", saved to {aside.name}"
    fh = fs.open(path, "write")
    try:
        fh.truncate(scan.good_end)
        fh.fsync()
    finally:
        fh.close()
    where = "in the middle" if scan.good_after else "at the end"
    return (
        f"journal: {path.name} line {scan.bad_line} {where}: {scan.bad_reason}; "
        f"cut {len(cut)} bytes{saved}"
    )


def _save_aside(fs: FileSystem, path: Path, data: bytes) -> Path:
    """Write bytes to the first free ``<name>.corrupt-<n>`` (reusing an identical one)."""
    n = 1
    while True:
        aside = path.with_name(f"{path.name}.corrupt-{n}")
        if not fs.exists(aside):
            break
        if fs.read(aside) == data:
            return aside
        n += 1
    fh = fs.open(aside, "create")
    try:
        write_all(fh, data)
        fh.flush()
        fh.fsync()
    finally:
        fh.close()
    fs.fsync_dir(path.parent)
    return aside


def _archive_last(fs: FileSystem, archive: Path, messages: list[str]) -> tuple[int, bytes]:
    """The archive's last valid record (seq 0 if none), repairing a torn tail first."""
    size = _ARCHIVE_WINDOW
    while True:
        tail = fs.read_tail(archive, size)
        if tail is None:
            return 0, b""
        start, data = tail
        if start > 0:
            # Skip the partial first line of the window; scan from a line start.
            skip = data.find(b"\n") + 1
            if skip == 0:
                size *= 4
                continue
            start, data = start + skip, data[skip:]
        scan = _scan_last_good(data)
        if scan is None and start > 0:
            size *= 4
            continue
        good_end, record, line = scan if scan is not None else (0, None, b"")
        if good_end < len(data):
            cut = data[good_end:]
            if b"\n" in cut:
                aside = _save_aside(fs, archive, cut)
                extra = f", saved to {aside.name}"
            else:
                extra = ""
            fh = fs.open(archive, "write")
            try:
                fh.truncate(start + good_end)
                fh.fsync()
            finally:
                fh.close()
            messages.append(
                f"journal: {archive.name} has a bad tail after its last good record; "
                f"cut {len(cut)} bytes{extra}"
            )
        return (record.seq if record else 0), line


def _scan_last_good(data: bytes) -> tuple[int, Record | None, bytes] | None:
    """End offset, record and bytes of the last verifiable line in ``data``."""
    end = len(data)
    if not data.endswith(b"\n"):
        end = data.rfind(b"\n") + 1
    while end > 0:
        begin = data.rfind(b"\n", 0, end - 1) + 1
        try:
            return end, Record.from_line(data[begin : end - 1]), data[begin:end]
        except ValueError:
            end = begin
    return None


def read_archive(path: str | Path, fs: FileSystem | None = None) -> Iterator[Record]:
    """Every verifiable record of an archive (bad lines skipped), for statistics and audits."""
    try:
        content = (fs or FileSystem()).read(Path(path)) or b""
    except OSError as exc:
        raise _io_error("read", Path(path), exc) from None
    for raw in content.split(b"\n"):
        try:
            yield Record.from_line(raw)
        except ValueError:
            continue

"""Simulated power cuts: only what was fsynced (and named by a synced directory) survives.

A SIGKILL keeps the page cache, so it cannot catch a missing fsync. Here the
file system keeps, next to the real files, the state a power cut would leave:
each file's content as of its last fsync, and the directory's names as of its
last directory fsync plus any prefix of the name changes made since (a
journaling file system commits them in order). At a random operation the
power goes; the directory is rebuilt from that state, each file's unsynced
tail lost, kept, half there or zeros (as a delayed allocation can leave), and
the journal is reopened there. No confirmed record may be missing, and the
resume must equal the script's model, as in the SIGKILL test. Dropping the
fsync of an append, of the archive or of the rewritten journal, or the
directory fsync after creating the journal, makes this test fail.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from companion.appliance.journal import ARCHIVE_NAME, FileSystem, Journal, JournalFile, read_archive

CHILD = Path(__file__).resolve().parent / "crash_child.py"
CHAINS = 30
MIN_CUTS = 200


def _load_child() -> ModuleType:
    name = "journal_crash_child"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


child = _load_child()


class PowerCut(Exception):
    pass


class PowerCutFS(FileSystem):
    """Real files for the journal to use, plus what would survive a power cut."""

    def __init__(self, directory: Path, budget: int, rng: random.Random) -> None:
        self.dir = directory
        self.budget = budget
        self.rng = rng
        #: durable content by inode, and durable directory entries
        self.inodes: dict[int, bytes] = {}
        self.names: dict[str, int] = {}
        #: name changes since the last directory fsync, in order; a journaling
        #: file system may have committed any prefix of them
        self.pending: list[tuple[str, str, str, int]] = []
        for path in directory.iterdir():
            ino = path.stat().st_ino
            self.names[path.name] = ino
            self.inodes[ino] = path.read_bytes()

    def step(self) -> None:
        if self.budget <= 0:
            raise PowerCut
        self.budget -= 1

    def open(self, path: Path, mode: str) -> JournalFile:
        self.step()
        existed = path.exists()
        inner = super().open(path, mode)
        if not existed:
            self.pending.append(("create", path.name, "", path.stat().st_ino))
        return CutFile(inner, self, path)

    def fsync_dir(self, path: Path) -> None:
        self.step()
        self.names = {p.name: p.stat().st_ino for p in self.dir.iterdir()}
        self.pending.clear()

    def rename(self, src: Path, dst: Path) -> None:
        self.step()
        ino = src.stat().st_ino
        super().rename(src, dst)
        self.pending.append(("rename", src.name, dst.name, ino))

    def remove(self, path: Path) -> None:
        self.step()
        if path.exists():
            self.pending.append(("remove", path.name, "", 0))
        super().remove(path)

    def durable_names(self) -> dict[str, int]:
        """The synced names plus a random prefix of the changes made since."""
        names = dict(self.names)
        for op, name, dst, ino in self.pending[: self.rng.randrange(len(self.pending) + 1)]:
            if op == "create":
                names[name] = ino
            elif op == "rename":
                names.pop(name, None)
                names[dst] = ino
            else:
                names.pop(name, None)
        return names

    def after_cut(self, target: Path) -> None:
        """Build the directory the machine finds when the power comes back."""
        target.mkdir()
        for name, ino in self.durable_names().items():
            durable = self.inodes.get(ino, b"")
            real = self.dir / name
            content = durable
            if real.exists() and real.stat().st_ino == ino:
                current = real.read_bytes()
                if current.startswith(durable):
                    extra = current[len(durable) :]
                    keep = self.rng.randrange(len(extra) + 1)
                    content = durable + self.rng.choice([b"", extra, extra[:keep], b"\0" * keep])
                elif current != durable:
                    content = self.rng.choice([durable, current])
            (target / name).write_bytes(content)


class CutFile:
    def __init__(self, inner: Any, fs: PowerCutFS, path: Path) -> None:
        self.inner, self.fs, self.path = inner, fs, path

    def write(self, data: bytes) -> int:
        if self.fs.budget <= 0:
            self.inner.write(data[: self.fs.rng.randrange(len(data) + 1)])
            raise PowerCut
        self.fs.step()
        n: int = self.inner.write(data)
        return n

    def flush(self) -> None:
        self.inner.flush()

    def fsync(self) -> None:
        """No real fsync needed: the simulation decides what is durable."""
        self.fs.step()
        ino = os.fstat(self.inner.fd).st_ino
        assert self.path.stat().st_ino == ino
        self.fs.inodes[ino] = self.path.read_bytes()

    def truncate(self, size: int) -> None:
        self.fs.step()
        self.inner.truncate(size)

    def close(self) -> None:
        self.inner.close()


def _check(directory: Path, seed: int, confirmed: set[int]) -> int:
    ops, states = child.plan(seed)
    path = directory / "journal.jsonl"
    with Journal.open(path) as journal:
        live = list(journal.records)
        state = journal.resume()
    archived = list(read_archive(directory / ARCHIVE_NAME))
    present = [r.seq for r in archived + live]
    assert present == list(range(1, len(present) + 1)), (seed, present)
    assert confirmed <= set(present), (seed, sorted(confirmed - set(present)))
    for record in archived + live:
        assert record.kind == ops[record.seq - 1].kind
    if present:
        want = states[len(present) - 1]
        assert state.game is not None
        assert tuple(str(m) for m in state.game.moves) == want.moves
        assert state.game.position.to_text() == want.position
        assert (state.open_dispute.seq if state.open_dispute else None) == want.dispute
        assert (state.games, state.disputes) == (want.games, want.disputes)
        assert state.warnings == ()
    with Journal.open(path) as again:
        assert again.messages == ()
    return len(present)


def _chain(seed: int, base: Path) -> int:
    """Cut the power until the script completes; returns how many cuts."""
    rng = random.Random(seed * 104729)
    ops, _ = child.plan(seed)
    directory = base / f"power-{seed}-0"
    directory.mkdir()
    confirmed: set[int] = set()
    cuts = 0
    for trial in range(1, 500):
        fs = PowerCutFS(directory, rng.randrange(40), rng)
        journal: Journal | None = None
        try:
            journal = Journal.open(directory / "journal.jsonl", fs=fs, clock=lambda: 1.0)
            for op in ops[journal.next_seq - 1 :]:
                confirmed.add(child.apply(journal, op).seq)
            journal.close()
            assert _check(directory, seed, confirmed) == len(ops)
            return cuts
        except PowerCut:
            cuts += 1
            if journal is not None:
                journal.close()
        restored = base / f"power-{seed}-{trial}"
        fs.after_cut(restored)
        shutil.rmtree(directory)
        directory = restored
        # check a copy, so the next trial's own repair meets the damage (and a cut)
        check = base / f"check-{seed}"
        shutil.rmtree(check, ignore_errors=True)
        shutil.copytree(directory, check)
        _check(check, seed, confirmed)
    raise AssertionError(f"chain {seed} did not finish")


def test_power_cuts_at_random_operations_lose_no_confirmed_record(tmp_path: Path) -> None:
    cuts = sum(_chain(seed, tmp_path) for seed in range(1, CHAINS + 1))
    print(f"power cuts: {cuts} simulated, 0 confirmed records lost")
    assert cuts >= MIN_CUTS


def test_the_simulation_keeps_synced_and_may_lose_unsynced_data(tmp_path: Path) -> None:
    """The model itself: a record fsynced always survives; one not fsynced may not."""
    fs = PowerCutFS(tmp_path, 100, random.Random(0))
    journal = Journal.open(tmp_path / "journal.jsonl", fs=fs)
    journal.note("kept")
    fs.budget = 1  # the write happens, the fsync does not
    with contextlib.suppress(PowerCut):
        journal.note("unsynced")
    journal.close()
    seen = set()
    for seed in range(20):
        fs.rng = random.Random(seed)
        fs.after_cut(tmp_path / f"after-{seed}")
        with Journal.open(tmp_path / f"after-{seed}" / "journal.jsonl") as after:
            seen.add(tuple(r.data["text"] for r in after.records))
    assert seen == {("kept",), ("kept", "unsynced")}

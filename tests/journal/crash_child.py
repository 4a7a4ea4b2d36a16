"""Child process for the fault-injection test: play a seeded script into a journal, die on cue.

    python crash_child.py JOURNAL SEED            # run the script to the end
    OANQUAN_CRASH_BUDGET="bytes N" python crash_child.py JOURNAL SEED
    python crash_child.py --serve JOURNAL SEED    # stdin: "run bytes N", "run ops N", ...

A budget counts either the bytes written or the other mutating file
operations (fsync, truncate, rename, directory fsync, remove). When it runs
out the child writes whatever part of the current buffer the budget allows
(or stops just before the operation), prints what it was doing and kills
itself with SIGKILL, so the journal sees a real torn write. After each append returns it prints ``confirmed <seq>``: the parent
holds the journal to exactly those promises.

The script (:func:`plan`) is deterministic from the seed, and it also models the
state after every record without using :func:`companion.appliance.journal.resume`, so
the parent has an independent answer to compare the resume with. A re-run
continues the script where the journal ends. Only engine and the journal are
imported, to keep each start fast.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.appliance.journal import (
    ARCHIVE_NAME,
    DisputeData,
    FileSystem,
    Journal,
    JournalFile,
    Record,
)
from engine import Game, Rules

BUDGET_ENV = "OANQUAN_CRASH_BUDGET"
GAMES = 3
MAX_OPS_PER_GAME = 20


@dataclass(frozen=True)
class Op:
    kind: str
    args: dict[str, Any]


@dataclass(frozen=True)
class State:
    """What a resume after this record must show."""

    rules: dict[str, Any]
    moves: tuple[str, ...]
    position: str
    dispute: int | None
    games: int
    disputes: int
    refill_done: bool


def plan(seed: int) -> tuple[list[Op], list[State]]:
    """The ops (op i becomes seq i + 1) and the state after each, from a plain Game."""
    rng = random.Random(seed)
    ops: list[Op] = []
    states: list[State] = []
    disputes = 0
    for games in range(1, GAMES + 1):
        rules = rng.choice([Rules(), Rules(chain=False), Rules(refill="own_only")])
        game = Game(rules)
        dispute: int | None = None
        refilled = False
        ops.append(Op("game", {"rules": rules, "mode": rng.choice(["camera", "manual"])}))
        states.append(_snapshot(game, dispute, games, disputes, refilled))
        for _ in range(MAX_OPS_PER_GAME):
            if game.is_over:
                break
            r = rng.random()
            if dispute is not None and r < 0.4:
                ops.append(Op("resolve", {"how": "accepted", "dispute": dispute}))
                dispute = None
            elif r < 0.08 and game.transitions:
                ops.append(Op("undo", {"move": str(game.undo())}))
                dispute, refilled = None, False
            elif r < 0.15:
                board = list(game.position.board)
                seen = board[:]
                seen[rng.randrange(12)] += 1
                candidates = [str(m) for m in game.legal_moves()[:3]]
                ops.append(Op("dispute", {"squares": _diffs(board, seen), "choices": candidates}))
                disputes += 1
                dispute = len(ops)
            elif r < 0.18:
                ops.append(Op("note", {"text": f"note ✓ {rng.random()}"}))
            elif r < 0.21:
                ops.append(Op("refill_done", {"player": game.position.to_move}))
                refilled = True
            else:
                move = rng.choice(game.legal_moves())
                game.play(move)
                ops.append(
                    Op(
                        "move",
                        {
                            "move": str(move),
                            "ply": len(game.moves),
                            "how": rng.choice(["camera", "confirmed", "buttons", "override"]),
                            "confidence": round(rng.random(), 3),
                            "frame": f"frame-{len(ops):05d}.jpg",
                        },
                    )
                )
                dispute, refilled = None, False
            states.append(_snapshot(game, dispute, games, disputes, refilled))
        if not game.is_over:
            game.stop_and_count()
        outcome = game.outcome
        assert outcome is not None
        ops.append(Op("end", {"final": outcome.final, "reason": outcome.reason}))
        dispute = None
        states.append(_snapshot(game, dispute, games, disputes, refilled))
    return ops, states


def _snapshot(game: Game, dispute: int | None, games: int, disputes: int, refilled: bool) -> State:
    return State(
        game.rules.to_json(),
        tuple(str(m) for m in game.moves),
        game.position.to_text(),
        dispute,
        games,
        disputes,
        refilled,
    )


def _diffs(board: list[int], seen: list[int]) -> list[list[int]]:
    return [[sq, e, n] for sq, (e, n) in enumerate(zip(board, seen, strict=True)) if e != n]


def apply(journal: Journal, op: Op) -> Record:
    a = op.args
    if op.kind == "game":
        return journal.new_game(a["rules"], mode=a["mode"])
    if op.kind == "move":
        return journal.move(
            a["move"], ply=a["ply"], how=a["how"], confidence=a["confidence"], frame=a["frame"]
        )
    if op.kind == "undo":
        return journal.undo(a["move"])
    if op.kind == "dispute":
        return journal.dispute(
            DisputeData("dispute", choices=tuple(a["choices"]), squares=a["squares"])
        )
    if op.kind == "resolve":
        return journal.resolve(a["how"], dispute=a["dispute"])
    if op.kind == "refill_done":
        return journal.refill_done(a["player"])
    if op.kind == "end":
        return journal.end(a["final"], a["reason"])
    return journal.note(a["text"])


class CrashFS(FileSystem):
    """The real file system until a budget runs out, then a torn write and SIGKILL.

    ``nbytes`` limits the bytes written (the write that crosses it is torn);
    ``ops`` limits the other mutating operations (fsync, truncate, rename,
    directory fsync, remove): the child dies just before the one past it.
    """

    def __init__(
        self, nbytes: int | None = None, ops: int | None = None, arm_on: str | None = None
    ) -> None:
        self.nbytes = nbytes
        self.ops = ops
        #: count ops only once a file of this name is opened (aim at compaction)
        self.arm_on = arm_on

    def die(self, what: str) -> None:
        print(f"killed {what}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    def tick(self, what: str) -> None:
        if self.ops is not None and self.arm_on is None:
            if self.ops <= 0:
                self.die(what)
            self.ops -= 1

    def open(self, path: Path, mode: str) -> JournalFile:
        if path.name == self.arm_on:
            self.arm_on = None
        return CrashFile(super().open(path, mode), self, path.name)

    def rename(self, src: Path, dst: Path) -> None:
        self.tick(f"rename {src.name}")
        super().rename(src, dst)

    def fsync_dir(self, path: Path) -> None:
        self.tick("fsync_dir")
        super().fsync_dir(path)

    def remove(self, path: Path) -> None:
        self.tick(f"remove {path.name}")
        super().remove(path)


class CrashFile:
    def __init__(self, inner: JournalFile, fs: CrashFS, name: str) -> None:
        self.inner, self.fs, self.name = inner, fs, name

    def write(self, data: bytes) -> int:
        budget = self.fs.nbytes
        if budget is None or budget >= len(data):
            if budget is not None:
                self.fs.nbytes = budget - len(data)
            return self.inner.write(data)
        part = data[: max(budget, 0)]
        if part:
            self.inner.write(part)
        torn = len(part) - (part.rfind(b"\n") + 1)
        self.fs.die(f"write {self.name} {len(part)}/{len(data)} torn={torn}")
        raise AssertionError("unreachable")

    def flush(self) -> None:
        self.inner.flush()

    def fsync(self) -> None:
        self.fs.tick(f"fsync {self.name}")
        self.inner.fsync()

    def truncate(self, size: int) -> None:
        self.fs.tick(f"truncate {self.name}")
        self.inner.truncate(size)

    def close(self) -> None:
        self.inner.close()


def run(path: Path, seed: int, fs: FileSystem) -> None:
    """Open (and so repair) the journal and continue the script from where it ends."""
    ops, _ = plan(seed)
    journal = Journal.open(path, fs=fs, clock=lambda: 1_764_000_000.0)
    for op in ops[journal.next_seq - 1 :]:
        record = apply(journal, op)
        print(f"confirmed {record.seq}", flush=True)
    journal.close()
    print("done", flush=True)


def serve(path: Path, seed: int) -> None:
    """Fork one real process per ``run BUDGET`` line on stdin; report its exit status.

    Starting Python and importing the engine costs far more than a trial, so
    the imports are paid once and every trial is a fresh forked process that
    opens the journal itself and dies by SIGKILL like any other.
    """
    for line in sys.stdin:
        words = line.split()
        if words[:1] != ["run"]:
            break
        fs = _crash_fs(words[1:])
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                run(path, seed, fs)
            except BaseException:
                traceback.print_exc()
                code = 70
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(f"exit {os.waitstatus_to_exitcode(status)}", flush=True)


def main(argv: list[str]) -> int:
    if argv[1] == "--serve":
        serve(Path(argv[2]), int(argv[3]))
        return 0
    run(Path(argv[1]), int(argv[2]), _crash_fs(os.environ.get(BUDGET_ENV, "-").split()))
    return 0


def _crash_fs(words: list[str]) -> FileSystem:
    """``bytes N``, ``ops N``, ``archive N`` (N ops after the archive is opened) or ``-``."""
    if words[0] == "bytes":
        return CrashFS(nbytes=int(words[1]))
    if words[0] == "ops":
        return CrashFS(ops=int(words[1]))
    if words[0] == "archive":
        return CrashFS(ops=int(words[1]), arm_on=ARCHIVE_NAME)
    return FileSystem()


if __name__ == "__main__":
    sys.exit(main(sys.argv))

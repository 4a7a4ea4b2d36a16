"""Kill a real process at random points while it journals; no confirmed move may be lost.

Each chain runs trials on one journal until its seeded script is complete.
A trial is a fresh process (forked by ``crash_child.py --serve``, so Python's
start-up is paid once per chain) that opens the journal, continues the script
and SIGKILLs itself once a random budget runs out: part-way through a write
(a torn line), or just before an fsync, truncate, rename, directory fsync or
remove, in appends, in the repair at open, or in compaction. After every kill
the parent opens a copy of the state directory, as the restarted referee
would, and checks: every ``confirmed`` seq is present exactly once (journal or
archive), each record is the one the script wrote, the resume equals the
script's own model after the last present record, the repair was reported
(bytes cut, leftovers removed) and a second open finds nothing to repair. The
original is left as the kill left it, so the next trial's own repair can be
killed too.

    .venv/bin/python -m pytest tests/journal/test_journal_faults.py -q -s
"""

from __future__ import annotations

import functools
import importlib.util
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from companion.appliance.journal import ARCHIVE_NAME, Journal, Record, read_archive, resume

HERE = Path(__file__).resolve().parent
CHILD = HERE / "crash_child.py"
ROOT = HERE.parent.parent
CHAINS = 24
MIN_TRIALS = 200
MAX_BUDGET = 1500
MAX_OPS = 12


def _load_child() -> ModuleType:
    spec = importlib.util.spec_from_file_location("journal_crash_child", CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


child = _load_child()


@functools.cache
def _plan(seed: int) -> tuple[list[Any], list[Any]]:
    result: tuple[list[Any], list[Any]] = child.plan(seed)
    return result


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop(child.BUDGET_ENV, None)
    return env


def _run_child(path: Path, seed: int) -> tuple[int, list[str]]:
    """One plain run of the child, start to end, without faults."""
    proc = subprocess.run(
        [sys.executable, str(CHILD), str(path), str(seed)],
        capture_output=True,
        env=_child_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.returncode, proc.stdout.decode().splitlines()


def _data_matches(record: Record, op: Any) -> bool:
    if record.kind != op.kind:
        return False
    if op.kind == "game":
        return bool(record.data["rules"] == op.args["rules"].to_json())
    keys = [k for k in op.args if k not in ("rules",)]
    expected = {k: list(v) if isinstance(v, tuple) else v for k, v in op.args.items()}
    return all(record.data.get(k) == expected[k] for k in keys)


def _check_after_kill(path: Path, seed: int, out: list[str], confirmed: set[int]) -> int:
    """Reopen a copy as the restarted referee would; returns the last present seq.

    The copy leaves the damage in place for the next trial, whose own repair at
    open may then be killed too.
    """
    ops, states = _plan(seed)
    scratch = path.parent.with_name(path.parent.name + "-check")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(path.parent, scratch)
    path = scratch / path.name
    journal = Journal.open(path)
    try:
        messages = journal.messages
        live = list(journal.records)
        state = resume(live)
    finally:
        journal.close()
    archived = list(read_archive(path.with_name(ARCHIVE_NAME)))
    present = [r.seq for r in archived + live]
    # exactly one owner per record, no gap, nothing confirmed missing
    assert present == list(range(1, len(present) + 1)), (seed, present)
    assert confirmed <= set(present), (seed, sorted(confirmed - set(present)))
    for record in archived + live:
        assert _data_matches(record, ops[record.seq - 1]), (seed, record)
    last = len(present)
    if last:
        want = states[last - 1]
        assert state.game is not None
        assert state.game.rules.to_json() == want.rules
        assert tuple(str(m) for m in state.game.moves) == want.moves
        assert state.game.position.to_text() == want.position
        assert (state.open_dispute.seq if state.open_dispute else None) == want.dispute
        assert (state.games, state.disputes) == (want.games, want.disputes)
        assert state.refill_done == want.refill_done
        assert state.warnings == ()
        assert state.applied_seq == last
    # the repair was reported, and left nothing to repair
    killed = [line for line in out if line.startswith("killed ")]
    if killed and killed[0].startswith("killed write "):
        _, _, name, counts, torn = killed[0].split()
        written = int(counts.split("/")[0])
        torn_bytes = int(torn.removeprefix("torn="))
        if name == path.name and written:
            assert any(f"cut {written} bytes" in m for m in messages), (messages, killed)
        if name == ARCHIVE_NAME and torn_bytes:
            assert any(f"cut {torn_bytes} bytes" in m for m in messages), (messages, killed)
        if name.endswith(".tmp"):
            assert any("removed journal.jsonl.tmp" in m for m in messages), (messages, killed)
    elif killed and killed[0] in (
        "killed rename journal.jsonl.tmp",
        "killed fsync journal.jsonl.tmp",
    ):
        assert any("removed journal.jsonl.tmp" in m for m in messages), (messages, killed)
        assert any("finished an interrupted compaction" in m for m in messages), (messages, killed)
    elif killed and killed[0] == f"killed fsync {ARCHIVE_NAME}":
        assert any("finished an interrupted compaction" in m for m in messages), (messages, killed)
    again = Journal.open(path)
    again.close()
    assert again.messages == (), again.messages
    content = path.read_bytes()
    assert content == b"" or content.endswith(b"\n")
    assert not path.with_name(path.name + ".tmp").exists()
    return last


class _Server:
    """One ``crash_child.py --serve`` process; each trial is a process it forks."""

    def __init__(self, path: Path, seed: int, log: Path) -> None:
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), "--serve", str(path), str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=_child_env(),
            text=True,
        )

    def trial(self, budget: str) -> tuple[int, list[str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"run {budget}\n")
        self.proc.stdin.flush()
        out: list[str] = []
        for line in self.proc.stdout:
            if line.startswith("exit "):
                code = int(line.split()[1])
                assert code in (0, -9), (code, out)
                return code, out
            out.append(line.rstrip("\n"))
        raise AssertionError(f"child server died: {out}")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.log.close()


def _where(out: list[str]) -> str:
    """Where a trial died, e.g. "write journal.jsonl" or "rename journal.jsonl.tmp"."""
    killed = [line.split() for line in out if line.startswith("killed ")]
    return " ".join(killed[0][1:3]) if killed else "-"


def _chain(seed: int, base: Path) -> tuple[Counter[str], int]:
    """Kill trials until the script completes; returns where each died, confirmed records."""
    rng = random.Random(seed * 7919)
    path = base / f"chain-{seed}" / "journal.jsonl"
    path.parent.mkdir()
    server = _Server(path, seed, base / f"chain-{seed}.stderr")
    kills: Counter[str] = Counter()
    confirmed: set[int] = set()
    try:
        for _ in range(300):
            # Torn writes anywhere, kills before any fsync/rename/truncate, and
            # tiny budgets so the repairs and compaction at open are killed too.
            r = rng.random()
            if r < 0.45:
                budget = f"bytes {rng.randrange(MAX_BUDGET)}"
            elif r < 0.6:
                budget = f"ops {rng.randrange(4)}"
            elif r < 0.85:
                budget = f"ops {rng.randrange(MAX_OPS)}"
            else:
                budget = f"archive {rng.randrange(6)}"
            code, out = server.trial(budget)
            confirmed |= {int(line.split()[1]) for line in out if line.startswith("confirmed ")}
            last = _check_after_kill(path, seed, out, confirmed)
            if code == 0:
                assert out[-1] == "done"
                assert last == len(_plan(seed)[0])
                return kills, len(confirmed)
            kills[_where(out)] += 1
    finally:
        server.close()
    raise AssertionError(f"chain {seed} did not finish")


def test_plan_is_deterministic_and_long_enough() -> None:
    ops, states = child.plan(3)
    again, _ = child.plan(3)
    assert [(o.kind, o.args.get("move")) for o in ops] == [
        (o.kind, o.args.get("move")) for o in again
    ]
    assert len(ops) == len(states)
    assert {o.kind for o in ops} >= {"game", "move", "undo", "dispute", "resolve", "end"}


def test_child_without_faults_writes_the_whole_script(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    code, out = _run_child(path, 5)
    assert code == 0 and out[-1] == "done"
    ops, _ = child.plan(5)
    confirmed = {int(line.split()[1]) for line in out if line.startswith("confirmed ")}
    assert confirmed == set(range(1, len(ops) + 1))
    assert _check_after_kill(path, 5, out, confirmed) == len(ops)


def test_sigkill_at_random_points_loses_no_confirmed_move(tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda s: _chain(s, tmp_path), range(1, CHAINS + 1)))
    where: Counter[str] = sum((k for k, _ in results), Counter())
    kills = where.total()
    confirmed = sum(c for _, c in results)
    print(f"fault injection: {kills} SIGKILL trials, {confirmed} confirmed records, 0 lost")
    print("killed at:", ", ".join(f"{w} x{n}" for w, n in sorted(where.items())))
    assert kills >= MIN_TRIALS
    # every step of append, repair and compaction was hit at least once
    assert set(where) >= {
        "write journal.jsonl",
        "fsync journal.jsonl",
        "truncate journal.jsonl",
        f"write {ARCHIVE_NAME}",
        f"fsync {ARCHIVE_NAME}",
        "write journal.jsonl.tmp",
        "fsync journal.jsonl.tmp",
        "rename journal.jsonl.tmp",
        "fsync_dir",
    }, where

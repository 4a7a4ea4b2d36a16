"""A short bench/soak.py run: faults every few frames, the loop never exits, no move lost."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_soak_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


soak = load_bench()


def test_a_short_soak_with_frequent_faults(tmp_path: Path) -> None:
    stats = soak.soak(frames=1500, fault_every=15, seed=3, folder=tmp_path)
    assert sum(stats.faults.values()) >= 50
    assert set(soak.FAULTS) <= set(stats.faults)  # every kind of fault was tried
    assert stats.exits == 0, stats.tracebacks[:1]
    assert len(stats.confirmed) >= 50  # the games went on through the faults
    assert soak.lost_moves(tmp_path, stats.confirmed) == []
    assert stats.pings > 0 and stats.longest_gap <= 30.0  # WatchdogSec=30


def test_lost_moves_notices_a_move_missing_from_the_journal(tmp_path: Path) -> None:
    """The check itself: a confirmed move the journal does not hold is reported."""
    stats = soak.soak(frames=300, fault_every=0, seed=4, folder=tmp_path)
    assert stats.confirmed
    fake = (stats.confirmed[-1][0], 999, "2+")
    assert soak.lost_moves(tmp_path, [*stats.confirmed, fake]) == [fake]

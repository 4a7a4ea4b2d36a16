"""bench/fit_change.py measures rendered games from a folder as it measures generated ones."""

from __future__ import annotations

from pathlib import Path

from bench.fit_change import measure, measure_folder
from bench.track import synth_sequences


def test_a_folder_of_games_gives_the_rows_of_the_same_games_generated(tmp_path: Path) -> None:
    synth_sequences(1, 7, tmp_path, plies=3)
    from_folder = measure_folder(tmp_path)
    generated = measure([7], 1, 3, 0.0)
    assert [row[1:] for row in from_folder] == [row[1:] for row in generated]
    untouched = [
        area for _, area, cleared, old, now, _, _ in from_folder if not cleared and old == now
    ]
    picked = [area for _, area, cleared, old, _, _, _ in from_folder if cleared and old > 0]
    assert untouched and picked
    # (the fates are the engine's: a pile taken up shows, an untouched square does not)
    assert max(untouched) < min(picked)

"""bench/tally.py: the cache of located boards follows the search; the guided loop."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

import bench.tally
from bench.tally import _finder_tag
from companion.referee.tally import SpreadModel
from vision.config import LocateConfig, VisionConfig


def test_located_boards_are_cached_per_search_setting() -> None:
    # the key once held the finder's name, bars and network only, so boards located by
    # an older search were read back after the search changed
    shipped = LocateConfig()
    assert _finder_tag(shipped) == _finder_tag(LocateConfig())
    for changed in (
        replace(shipped, relabelled=0),
        replace(shipped, relabel_view=(0.45, 1.01)),
        replace(shipped, refine_candidates=3),
        replace(shipped, learned_min_quality=0.25),
    ):
        assert _finder_tag(changed) != _finder_tag(shipped)


def test_the_guided_loop_respreads_only_the_lit_squares_until_none_is_left_to_spread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the players lay the lit squares out again; a square already laid apart that stays
    # unsure cannot be spread more, so the loop stops there (the truth never decides)
    lit_after = {(): (3, 9), (3, 9): (9,), (3, 7, 9): ()}
    reads: list[tuple[int, ...]] = []

    def reading(*args: object, **kwargs: object) -> dict[str, object]:
        respread = tuple(args[5]) if len(args) > 5 else ()
        reads.append(respread)
        return {"found": True, "respread": respread, "squares": [], "outside": 0}

    def count(_squares: object, _model: object, outside: object) -> object:
        return SimpleNamespace(unsure=lit_after[reads[-1]])

    monkeypatch.setattr(bench.tally, "reading_of", reading)
    monkeypatch.setattr(bench.tally, "squares_of", lambda r: [])
    monkeypatch.setattr(bench.tally, "count_spread", count)
    record, lit = bench.tally.guided(5, "wide", VisionConfig(), "t", SpreadModel(), rounds=3)
    assert reads == [(), (3, 9)] and lit == [2] and record["respread"] == (3, 9)
    lit_after[(3, 9)] = (7, 9)  # a new square lit after the first round: a second round
    reads.clear()
    record, lit = bench.tally.guided(5, "wide", VisionConfig(), "t", SpreadModel(), rounds=3)
    assert reads == [(), (3, 9), (3, 7, 9)] and lit == [2, 2]
    reads.clear()
    _, lit = bench.tally.guided(5, "wide", VisionConfig(), "t", SpreadModel(), rounds=1)
    assert reads == [(), (3, 9)] and lit == [2]


def test_readings_against_the_empty_board_keep_each_candidates_change() -> None:
    squares = [[1, 1.0, 0.0, [0.9]]] + [[0, 0.0, 0.0, []]] * 11
    plain = bench.tally.squares_of({"squares": squares})
    assert not any(sq.referenced for sq in plain)
    record = {
        "squares": squares,
        "changed": [[False]] + [[]] * 11,
        "extra": [0.0, 2.5] + [0.0] * 10,
    }
    read = bench.tally.squares_of(record)
    assert all(sq.referenced for sq in read)
    assert read[0].changed == (False,) and read[1].extra == 2.5


def test_the_players_count_the_squares_still_lit_and_the_camera_the_rest() -> None:
    # square 3: the detector sees 4 sure pieces, the pile counter 7.5 (lit); 5 are there
    counts = (0, 2, 3, 4, 2, 1, 0, 3, 2, 1, 2, 3)
    sure = [[n, float(n), 0.0, [0.97] * n] for n in counts]
    torn = [list(sq) for sq in sure]
    torn[3] = [4, 7.5, 0.0, [0.97] * 4]
    truth = list(counts)
    truth[3] = 5
    records = [
        {"squares": torn, "board": truth, "outside": 0.0},
        {"squares": sure, "board": list(counts), "outside": 0.0},
    ]
    model = SpreadModel()
    assert bench.tally.count_spread(bench.tally.squares_of(records[0]), model).unsure == (3,)
    figures = bench.tally.by_hand(records, model)
    assert figures["exact_total"] == 1.0 and figures["in_interval"] == 1.0
    assert figures["scenes with a square counted by hand"] == 1
    assert figures["squares counted by hand a scene, mean"] == 0.5
    assert figures["pieces counted by hand a scene, mean"] == 2.5
    assert figures["pieces a scene, mean"] == 23.5

"""Tally maths, its journal record and ``oanquan tally`` on the bundled stills."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from companion.commands.tally import bundled_frames
from companion.commands.tally import main as tally_main
from companion.referee.reconcile import Evidence
from companion.referee.records import Kind, RecordWriter, tally_data
from companion.referee.tally import (
    SideCount,
    SpreadModel,
    SpreadSquare,
    count_spread,
    final_count,
    fit_spread_model,
    row_sweep,
    tally_fields,
)
from engine import Position

FRAMES = Path(__file__).resolve().parents[2] / "companion" / "commands" / "tally_frames"


def spread(*counts: int, disagree: dict[int, float] | None = None) -> list[SpreadSquare]:
    """12 squares whose peaks are ``counts``; ``disagree`` adds density mass to some."""
    extra = disagree or {}
    return [SpreadSquare(n, n + extra.get(sq, 0.0)) for sq, n in enumerate(counts)]


A_SPREAD = (0, 4, 6, 5, 4, 3, 0, 4, 3, 5, 4, 3)  # 41 pieces


def test_agreeing_counters_give_the_sum_and_an_interval_around_it() -> None:
    t = count_spread(spread(*A_SPREAD))
    assert t.total == 41 == sum(t.counts)
    assert t.low <= 41 <= t.high
    assert t.counts == A_SPREAD
    assert t.unsure == ()


def test_disagreeing_squares_are_unsure_least_certain_first_and_widen_the_interval() -> None:
    calm = count_spread(spread(*A_SPREAD))
    torn = count_spread(spread(*A_SPREAD, disagree={2: 1.0, 9: 2.4}))
    assert torn.unsure == (9, 2)  # the wider disagreement first
    assert torn.high - torn.low > calm.high - calm.low


def test_a_model_that_knows_the_counter_misses_one_raises_the_count() -> None:
    rows = [[0.0] * 7 for _ in range(10)]
    for row in rows:
        row[4] = 1.0  # always one more than the peaks
    model = SpreadModel(tuple(tuple(r) for r in rows))
    t = count_spread(spread(*A_SPREAD), model)
    assert t.total == 41 + 12 and t.low == t.high == 53
    assert t.exact


def test_density_around_the_board_widens_the_interval() -> None:
    t = count_spread(spread(*A_SPREAD), outside=20.0)
    assert t.total == 41 and t.high >= 41 + 30


def test_plain_distributions_are_read_by_their_mode() -> None:
    readings = [Evidence.exact(n) for n in A_SPREAD]
    assert count_spread(readings).total == 41
    assert SpreadSquare.from_evidence(Evidence.exact(7)).peaks == 7


def test_a_tally_needs_twelve_squares() -> None:
    with pytest.raises(ValueError, match="12 squares"):
        count_spread(spread(*A_SPREAD)[:10])


def test_fitting_learns_how_far_off_each_bucket_is() -> None:
    squares = spread(*A_SPREAD, disagree={3: 1.0})
    truth = list(A_SPREAD)
    truth[3] += 1  # where the mass says one more, there was one more
    model = fit_spread_model([(squares, truth)] * 20)
    t = count_spread(squares, model)
    assert t.counts[3] == A_SPREAD[3] + 1
    assert t.total == 42


def test_final_count_is_rules_r14_with_debts_repaid() -> None:
    # V40's end: A captured 37 and one quan, B 13 and one quan, B borrowed 5 from A.
    f = final_count((SideCount(37, 1), SideCount(13, 1)), mandarin_value=10, debt=(0, 5))
    assert f.scores == (52, 18)
    assert f.winner == 0 and f.sure
    assert f.debt_net(0) == 5 and f.debt_net(1) == -5
    assert f.quan_points(1) == 10
    assert sum(f.scores) == 70


def test_heaps_are_checked_against_what_the_game_left_within_the_intervals() -> None:
    camera = SideCount(45, 1, 44, 49)
    assert final_count((camera, SideCount(3)), expected=50).off_by == 0  # 47..52 holds 50
    assert final_count((camera, SideCount(0)), expected=50).off_by == 1  # at most 49
    assert final_count((SideCount(30), SideCount(30)), expected=50).off_by == -10
    assert final_count((SideCount(30), SideCount(30))).off_by == 0  # no game known


def test_mandarin_value_five_and_a_draw() -> None:
    f = final_count((SideCount(30, 1), SideCount(35, 0)), mandarin_value=5)
    assert f.scores == (35, 35) and f.winner is None and f.sure


def test_overlapping_intervals_leave_the_winner_unsure() -> None:
    a = SideCount(40, 0, 38, 43)
    b = SideCount(39, 0, 39, 39)
    f = final_count((a, b))
    assert f.winner == 0 and not f.sure
    assert f.ranges == ((38, 43), (39, 39))


def test_row_sweep_counts_each_players_row() -> None:
    assert row_sweep(Position.initial()) == (25, 25)


class Log(RecordWriter):
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def append(self, kind: str, data: Any) -> None:
        self.lines.append((kind, dict(data)))


def test_the_journal_records_a_tally_through_its_writer() -> None:
    sides = (SideCount(41, 1, 40, 43), SideCount(19, 1, how="buttons"))
    f = final_count(sides, debt=(0, 5), sweep=(4, 6))
    log = Log()
    log.tally(**tally_fields(f, sides))
    kind, data = log.lines[0]
    assert kind == Kind.TALLY == "tally"
    assert data["scores"] == [56, 24] and data["winner"] == 0
    assert data["intervals"] == [[40, 43], [19, 19]]
    assert data["how"] == ["camera", "buttons"] and data["sweep"] == [4, 6]
    assert json.loads(json.dumps(data)) == data


def test_tally_data_refuses_a_wrong_shape() -> None:
    fields = tally_fields(final_count((SideCount(1), SideCount(2))), (SideCount(1), SideCount(2)))
    with pytest.raises(ValueError, match="camera or buttons"):
        tally_data(**{**fields, "how": ["camera", "guess"]})
    with pytest.raises(ValueError, match="one value per player"):
        tally_data(**{**fields, "pieces": [1]})


# -- the command, on the two small stills shipped for the demo ---------------------------


def truth(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FRAMES / f"{name}.json").read_text())
    return data


def test_bundled_frames_are_small_and_in_order() -> None:
    frames = bundled_frames()
    assert [p.stem for p in frames] == ["spread_a", "spread_b"]
    assert sum(p.stat().st_size for p in FRAMES.iterdir()) < 300_000


def test_tally_command_counts_the_stills_and_keeps_going_after_a_bad_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"not a jpeg")
    frames = [str(p) for p in bundled_frames()]
    status = tally_main([frames[0], str(bad), str(tmp_path / "missing.png"), frames[1]])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert [line["image"] for line in lines] == [
        "spread_a.jpg",
        "broken.jpg",
        "missing.png",
        "spread_b.jpg",
    ]
    assert "error" in lines[1] and "error" in lines[2]
    assert len(err.strip().splitlines()) == 2  # one line per bad image
    for line, name in ((lines[0], "spread_a"), (lines[3], "spread_b")):
        t = truth(name)
        assert line["board_found"] is True
        low, high = line["interval"]
        assert low <= line["total"] <= high
        assert low <= sum(t["board"]) <= high
        assert line["total"] == sum(sq["count"] for sq in line["squares"])
        assert len(line["squares"]) == 12
        assert line["big"] == sum(t["big"])
        assert all(0 <= sq < 12 for sq in line["unsure"])


def test_tally_command_writes_one_file_per_image(tmp_path: Path) -> None:
    out = tmp_path / "out"
    frame = str(bundled_frames()[1])
    assert tally_main([frame, "--json-out", str(out)]) == 0
    data = json.loads((out / "spread_b.json").read_text())
    assert set(data) >= {"image", "board_found", "total", "interval", "big", "squares", "unsure"}


def test_tally_command_says_why_when_there_is_no_board(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    blank = tmp_path / "floor.png"
    cv2.imwrite(str(blank), np.full((240, 320, 3), 128, np.uint8))
    assert tally_main([str(blank), "--json-out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "floor.json").read_text())
    assert data["board_found"] is False and data["total"] is None and data["reason"]


def test_demo_tally_counts_the_heaps_of_the_demo_game_to_its_final_score() -> None:
    """The bundled heaps are V40's (37 + quan, 13 + quan); B still owes the 5 it borrowed."""
    from companion.commands.tally import demo_tally
    from companion.referee import Referee
    from companion.ui.controller import Controller
    from companion.ui.input import ShortPress
    from engine import Move

    ref = Referee(mode="camera")
    for move in ["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"]:
        ref.game.play(Move.parse(move))
    tallies: list[dict[str, Any]] = []
    c = Controller(ref, on_tally=lambda **fields: tallies.append(fields))
    captions: list[str] = []
    final = demo_tally(c, lambda b: c.on_input(ShortPress(b, 0.0)), captions.append)
    assert final is not None
    assert final.pieces == (37, 13) and final.bigs == (1, 1) and final.debt == (0, 5)
    assert final.scores == (52, 18) and final.winner == 0
    assert tallies and tallies[0]["scores"] == (52, 18)
    assert len(captions) == 4 and c.tally is None


def test_the_live_camera_path_counts_with_the_observers_board() -> None:
    from companion.appliance.observe import VisionObserver
    from companion.commands.analyze import read_image
    from companion.commands.tally import read_frame_spread

    observer = VisionObserver(stills=True)
    image = read_image(str(bundled_frames()[1]))
    reading = read_frame_spread(observer, image)
    assert reading.found and observer.locator.outline is not None
    t = count_spread(reading.squares, outside=reading.outside)
    assert t.low <= sum(truth("spread_b")["board"]) <= t.high

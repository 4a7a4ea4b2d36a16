"""The referee on the three- and four-seat ring: readings, refills, camera, journal."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from companion.appliance.journal import Journal
from companion.appliance.observe import VisionObserver
from companion.appliance.pipeline import FramePipeline
from companion.appliance.ring_observe import RingObserver, make_observer_for, ring_observer
from companion.referee import Observation, Referee
from companion.referee.reconcile import (
    Evidence,
    VerdictKind,
    after_sowing,
    board_of,
    map_board,
    reconcile,
    touched_squares,
)
from companion.referee.state import RefereeState
from device.ports import Frame
from engine import Game, Move, Position, Rules, play
from engine.play import Refill
from vision.errors import ConfigError
from vision.synth_ring import render_ring


def _reading(position: Position) -> list[Evidence]:
    counts, big = board_of(position)
    return [Evidence.exact(n, big[sq // 6] if sq % 6 == 0 else 0) for sq, n in enumerate(counts)]


def _random_game(players: int, plies: int, seed: int) -> list[Move]:
    rng = random.Random(seed)
    game = Game(Rules(players=players))
    moves = []
    for _ in range(plies):
        if game.is_over:
            break
        move = rng.choice(game.legal_moves())
        game.play(move)
        moves.append(move)
    return moves


@pytest.mark.parametrize("players", [3, 4])
def test_a_clear_reading_of_the_whole_ring_names_each_move(players: int) -> None:
    rules = Rules(players=players)
    referee = Referee(rules)
    referee.setup_checked = True
    truth = Game(rules)
    for move in _random_game(players, 14, seed=players):
        truth.play(move)
        report = referee.see(Observation(_reading(truth.position), still=True))
        assert [a.move for a in report.accepted] == [move], report.detail
        assert report.accepted[0].how == "camera"
    assert referee.position == truth.position


def test_map_board_reads_one_stone_per_mandarin_square() -> None:
    reading = _reading(Position.initial(Rules(players=4)))
    counts, big = map_board(reading)
    assert len(counts) == 24 and big == (1, 1, 1, 1)


def test_a_refill_fills_the_row_of_the_seat_on_the_ring() -> None:
    # three seats: seat 1 sits at side 2 and owns squares 13-17; its row is empty
    rules = Rules(players=3)
    board = (0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5, 0, 0, 0, 0, 0, 0)
    start = Position(board, (1, 1, 1), (10, 5, 10), (0, 0, 0), (0, 0, 0), 1, 5, (None,) * 3)
    game = Game(rules, start)
    move = game.legal_moves()[0]
    t = play(start, move, rules)
    refills = [e for e in t.events if isinstance(e, Refill)]
    assert refills and refills[0].player == 1
    assert set(range(13, 18)) <= touched_squares(t)
    sown = after_sowing(t)
    assert sown == board_of(t.position)
    verdict = reconcile(start, _reading(t.position), rules, still=True)
    assert verdict.kind == VerdictKind.ACCEPT and verdict.move == move


def test_an_unchanged_ring_is_not_a_move_and_a_wrong_count_is_named() -> None:
    rules = Rules(players=3)
    start = Position.initial(rules)
    assert reconcile(start, _reading(start), rules, still=True).kind == VerdictKind.UNCHANGED
    reading = _reading(start)
    reading[15] = Evidence.exact(9)
    reading[8] = Evidence.exact(1)
    verdict = reconcile(start, reading, rules, still=True)
    assert verdict.kind == VerdictKind.DISPUTE
    assert {d.square for d in verdict.diffs} >= {15}


def test_the_observer_for_the_rules(tmp_path: Path) -> None:
    corners = [[300.0, 700.0], [900.0, 700.0], [600.0, 180.0]]
    assert isinstance(make_observer_for(Rules()), VisionObserver)
    assert isinstance(make_observer_for(Rules(players=3), None, corners), RingObserver)
    with pytest.raises(ConfigError, match="3 corners"):
        make_observer_for(Rules(players=3))
    with pytest.raises(ConfigError, match="4 seats need 4 corners"):
        ring_observer(corners, Rules(players=4))


def test_a_ring_is_read_with_the_lens_undone_its_corners_moved_with_it() -> None:
    import numpy as np

    from device.ports import Frame
    from vision.lens import Lens, undistort_points

    corners = [[300.0, 700.0], [900.0, 700.0], [600.0, 180.0]]
    observer = make_observer_for(Rules(players=3), {"lens": {"k1": -0.2}}, corners)
    assert isinstance(observer, RingObserver)
    frame = np.full((960, 1280, 3), 120, np.uint8)
    observer(Frame(frame, 0.0, 0, "f0.png"))
    moved = undistort_points(np.array(corners), frame.shape, Lens(-0.2))
    assert np.allclose(observer.outline.corners, moved)
    assert np.abs(moved - np.array(corners)).max() > 5.0


def test_a_three_seat_game_is_refereed_by_the_camera_through_the_pipeline() -> None:
    rules = Rules(players=3)
    moves = _random_game(3, 3, seed=11)
    game = Game(rules)
    positions = [game.position]
    for move in moves:
        game.play(move)
        positions.append(game.position)
    frames = []
    corners = None
    for pos in positions:
        image, truth = render_ring(list(pos.board), list(pos.big), 77, scene_seed=21)
        frames.append(image)
        corners = truth["corners"]
    assert corners is not None
    referee = Referee(rules)
    pipeline = FramePipeline(ring_observer(corners, rules, stills=True), referee, start_shown=True)
    first = pipeline(Frame(frames[0], 0.0, 0, "f0")).report
    assert first.confirmed and pipeline.observer.calibrated
    for i, image in enumerate(frames[1:], 1):
        report = pipeline(Frame(image, float(i), i, f"f{i}")).report
        assert report.state == RefereeState.SETTLED, report.detail
        assert [a.move for a in report.accepted] == [moves[i - 1]]
    assert pipeline.referee.position == positions[-1]


def test_a_four_seat_game_resumes_from_the_journal(tmp_path: Path) -> None:
    rules = Rules(players=4)
    moves = _random_game(4, 9, seed=5)
    journal = Journal.open(tmp_path / "journal.jsonl", clock=lambda: 0.0)
    journal.new_game(rules, mode="manual")
    referee = Referee(rules, journal=journal, mode="manual")
    for move in moves:
        referee.play_manual(move)
    state = Journal.open(tmp_path / "journal.jsonl", clock=lambda: 0.0).resume()
    assert state.game is not None and not state.warnings
    assert state.game.rules.players == 4
    assert list(state.game.moves) == moves
    assert state.game.position == referee.position

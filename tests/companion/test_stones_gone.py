"""A mandarin whose big stone was captured: what vision takes for a stone is a pebble."""

from __future__ import annotations

import pytest

from companion.referee import Referee
from companion.referee.evidence import stones_gone
from companion.referee.reconcile import Evidence
from engine import Move, Position, play

#: P0 took the east big stone; two pebbles have been sown into that square since.
TAKEN = "10B|2,3,1,4,2|2|3,1,2,2,1 P0 s12/5 q1/0 d0/0 n20 t-/0"


def test_the_stone_belief_becomes_one_pebble_more() -> None:
    start = Position.from_text(TAKEN)
    reading = [Evidence.exact(n) for n in start.board]
    reading[6] = Evidence((0.1, 0.7, 0.2), big_prob=0.8)
    folded = stones_gone(reading, (start.board, start.big))
    assert folded[6].big_prob == 0.0
    assert folded[6].probs == pytest.approx((0.02, 0.14 + 0.08, 0.04 + 0.56, 0.16))
    assert sum(folded[6].probs) == pytest.approx(1.0)
    assert folded[:6] == reading[:6] and folded[7:] == reading[7:]


def test_a_mandarin_that_still_holds_its_stone_is_left_alone() -> None:
    start = Position.from_text(TAKEN)
    reading = [Evidence.exact(n) for n in start.board]
    reading[0] = Evidence.exact(9, big=1)
    reading[6] = Evidence((0.0, 0.02, 0.96, 0.02), big_prob=0.0)  # no stone seen
    assert stones_gone(reading, (start.board, start.big)) == reading


def _accepted(start: Position, reading: list[Evidence]) -> tuple[str, float]:
    referee = Referee(start=start)
    referee.setup_checked = True
    report = referee.observe(reading, still=True)
    assert len(report.accepted) == 1, report.detail
    return str(report.accepted[0].move), report.accepted[0].confidence


def test_a_pebble_read_as_the_lost_stone_costs_the_referee_no_certainty() -> None:
    # 4+ sows a third pebble into the stoneless east mandarin; the camera sees two and
    # a "big stone". Read as vision says, no legal board fits square 6: the move was
    # taken at 0.997 where the right reading gives it at 0.99999.
    start = Position.from_text(TAKEN)
    after = play(start, Move.parse("4+")).position
    right = [Evidence.exact(n, int(sq == 0)) for sq, n in enumerate(after.board)]
    misread = list(right)
    misread[6] = Evidence.exact(after.board[6] - 1, big=1)
    move, sure = _accepted(start, right)
    assert move == "4+" and sure > 0.9999
    assert _accepted(start, misread) == (move, pytest.approx(sure, abs=1e-5))

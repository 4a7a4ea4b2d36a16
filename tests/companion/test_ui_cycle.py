"""A game that keeps cycling is offered to end by the count, and every seat must agree."""

from __future__ import annotations

from collections.abc import Mapping

from companion.referee import Referee
from companion.referee.records import RecordWriter
from companion.ui.controller import CYCLE_REOFFER, Advice, Controller, View
from companion.ui.input import ShortPress
from companion.ui.screens import CycleScreen, GameOverScreen, render_screen
from engine import Position, Rules
from engine.endgame import projected_final

# P1 has lost (both big stones with P0, square 6 holds pebbles nobody can take): it sows
# its refilled row into square 6 and borrows five every 4 plies (tests/search/test_endgame).
SPIRAL_START = "0|0,0,1,0,0|4|1,1,1,1,1 P1 s40/0 q2/0 d0/4 n27 t0/0"
SPIRAL_CYCLE = ["9+", "3-", "7-", "2+"]


def press(c: Controller, *buttons: str) -> None:
    for b in buttons:
        c.on_input(ShortPress(b, 0.0))


def spiral_until_offered(c: Controller, limit: int = 80) -> int:
    """Play the spiral's moves until the controller offers to stop; returns the plies played."""
    for ply in range(limit):
        move = SPIRAL_CYCLE[ply % len(SPIRAL_CYCLE)]
        c.on_report(c.referee.play_manual(move))
        if c.view == View.CYCLE:
            return ply + 1
    raise AssertionError(f"no offer in {limit} plies")


class _Journal(RecordWriter):
    """The records the referee writes, kept in a list."""

    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, object]]] = []

    def append(self, kind: str, data: Mapping[str, object]) -> None:
        self.records.append((kind, dict(data)))


def test_a_debt_spiral_is_offered_to_end_by_the_count_and_both_seats_agree() -> None:
    journal = _Journal()
    ref = Referee(Rules(), start=Position.from_text(SPIRAL_START), journal=journal, mode="manual")
    c = Controller(ref)
    spiral_until_offered(c)
    screen = c.screen()
    assert isinstance(screen, CycleScreen)
    assert screen.kind in ("debt_spiral", "repetition")
    expected = projected_final(ref.position, ref.rules)
    assert screen.final == expected
    first = ref.position.to_move
    assert screen.asking == first and screen.agreed == ()
    for lang in ("vi", "en"):
        render_screen(screen, lang)
    press(c, "ok")  # the seat to move agrees; the other one is asked now
    screen = c.screen()
    assert isinstance(screen, CycleScreen)
    assert screen.agreed == (first,) and screen.asking == 1 - first
    assert not ref.position.over
    press(c, "ok")
    assert ref.position.over and ref.position.outcome is not None
    assert ref.position.outcome.final == expected
    ends = [data for kind, data in journal.records if kind == "end"]
    assert len(ends) == 1 and ends[0]["final"] == list(ref.position.outcome.final)
    over = c.screen()
    assert isinstance(over, GameOverScreen) and over.result.reason == "agreed"
    render_screen(over, "vi")


def test_back_plays_on_and_the_offer_waits_before_it_comes_again() -> None:
    ref = Referee(Rules(), start=Position.from_text(SPIRAL_START), mode="manual")
    c = Controller(ref)
    spiral_until_offered(c)
    declined = ref.position.ply
    press(c, "ok", "back")  # one seat agreed, the other plays on
    assert not ref.position.over and c.view == View.BOARD
    plies = spiral_until_offered(c, limit=2 * CYCLE_REOFFER)
    assert ref.position.ply - declined >= CYCLE_REOFFER
    assert plies <= CYCLE_REOFFER + len(SPIRAL_CYCLE)
    screen = c.screen()
    assert isinstance(screen, CycleScreen) and screen.agreed == ()  # asked afresh


def test_the_companions_seat_does_not_have_to_agree() -> None:
    ref = Referee(Rules(), start=Position.from_text(SPIRAL_START), mode="manual")
    c = Controller(
        ref,
        opponent_move=lambda level: Advice(ref.game.legal_moves()[0]),
        opponent="medium",
        ai_side=1,
    )
    spiral_until_offered(c)
    screen = c.screen()
    assert isinstance(screen, CycleScreen) and screen.asking == 0
    press(c, "ok")  # the visitor's word is enough
    assert ref.position.over and c.view == View.OVER


def test_ordinary_play_is_not_interrupted() -> None:
    ref = Referee(mode="manual")
    c = Controller(ref)
    for move in ["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"]:
        c.on_report(ref.play_manual(move))
        assert c.view != View.CYCLE
    assert ref.position.over

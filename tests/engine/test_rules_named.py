"""Rule tests named after the rule: before -> move -> after, in the one-line notation."""

from __future__ import annotations

import pytest

from engine import IllegalMoveError, Move, Position, Rules, RulesError, play
from engine.play import illegal_reason


def after(before: str, move: str, **rules: object) -> Position:
    return play(Position.from_text(before), move, Rules.from_json(rules)).position


def test_r3_cannot_sow_from_a_mandarin_square() -> None:
    with pytest.raises(ValueError):
        Move.parse("6+")


def test_r3_cannot_sow_from_the_opponents_row() -> None:
    start = Position.initial()
    assert illegal_reason(start, Move.parse("8+")) == "square 8 is not P0's (P0 owns 1-5)"
    with pytest.raises(IllegalMoveError, match="not P0's"):
        play(start, "8+")


def test_r3_cannot_sow_from_an_empty_square() -> None:
    start = Position.from_text("0B|0,1,0,0,0|0B|5,5,5,5,5 P0 s12/12 q0/0 d0/0 n0")
    assert illegal_reason(start, Move.parse("1+")) == "square 1 is empty"


def test_r4_twelve_or_more_pebbles_also_drop_into_the_emptied_start() -> None:
    # 13 pebbles from square 3 going +: one full lap puts one back into square 3.
    t = play(Position.from_text("0B|1,0,13,0,0|0B|0,0,0,0,0 P0 s20/16 q0/0 d0/0 n0"), "3+")
    assert t.sown[:13] == [4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4]


def test_r4_exactly_twelve_pebbles_end_on_the_start_square() -> None:
    t = play(Position.from_text("0B|12,0,0,0,0|0B|0,0,0,0,0 P0 s19/19 q0/0 d0/0 n0"), "1+")
    assert t.sown[:12] == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1]


def test_r5a_relay_continues_from_the_next_occupied_citizen_square() -> None:
    t = play(Position.initial(), "2+")
    assert t.picks == [(2, 5), (8, 5)]


def test_r5b_turn_ends_at_an_occupied_mandarin_square() -> None:
    t = play(Position.from_text("0B|0,0,0,1,0|0B|5,5,5,5,5 P0 s14/10 q0/0 d0/0 n0"), "4+")
    assert t.stop == "mandarin" and t.captured.points == 0


def test_r5c_an_empty_mandarin_square_is_an_ordinary_gap() -> None:
    t = play(Position.from_text("0B|1,0,0,1,0|0|4,0,3,2,0 P0 s20/19 q0/1 d0/0 n0"), "4+")
    assert t.captures == [(7, 4, 0), (9, 3, 0)]


def test_r6_turn_ends_at_two_empty_squares() -> None:
    t = play(Position.from_text("0B|0,1,0,0,0|0B|5,5,5,5,5 P0 s12/12 q0/0 d0/0 n0"), "2+")
    assert t.stop == "double_empty"


def test_r7_capture_chain_continues_after_empty_then_full() -> None:
    t = play(Position.from_text("0B|1,0,0,3,0|6B|0,2,0,4,0 P0 s27/7 q0/0 d0/0 n0"), "1+")
    assert [c[0] for c in t.captures] == [4, 6, 8, 10]


def test_r8_captured_mandarin_yields_stone_and_pebbles() -> None:
    t = play(Position.from_text("0B|0,0,1,0,0|7B|0,3,1,1,1 P0 s18/18 q0/0 d0/0 n0"), "3+")
    assert t.captures[0] == (6, 7, 1)
    assert t.captured.points == 10 + 7 + 3


@pytest.mark.parametrize(("pebbles", "captured"), [(4, False), (5, True)])
def test_r9_quan_non_threshold_is_five(pebbles: int, captured: bool) -> None:
    text = f"{pebbles}B|2,3,0,0,0|2B|0,0,1,0,0 P1 s{22 - pebbles}/20 q0/0 d0/0 n0"
    t = play(Position.from_text(text), "9+")
    assert (t.position.big[0] == 0) is captured
    assert t.stop == ("chain_end" if captured else "quan_non")


def test_r9_quan_non_off_allows_the_first_move_mandarin_grab() -> None:
    assert after("0B|5,5,5,5,5|0B|5,5,5,5,5 P0 s0/0 q0/0 d0/0 n0", "1-", quan_non_min=0).bigs == (
        1,
        0,
    )


def test_r11_refill_borrows_the_shortfall_as_debt() -> None:
    t = play(Position.from_text("3B|0,0,0,0,0|4B|2,0,6,1,3 P0 s2/29 q0/0 d0/0 n0"), "1-")
    assert t.refills == [(0, 2, 3)]
    assert t.position.debt == (3, 0)


def test_r12_no_refill_ends_the_game_with_mandarins_unclaimed() -> None:
    from engine import start_turn

    p = start_turn(Position.from_text("6B|0,0,0,0,0|3B|9,8,7,6,7 P0 s1/3 q0/0 d0/0 n0")).position
    assert p.outcome is not None
    assert (p.outcome.reason, p.outcome.unclaimed, p.outcome.final) == ("no_refill", 29, (1, 40))


def test_r13_game_goes_on_while_a_stoneless_mandarin_holds_pebbles() -> None:
    assert not after("2|0,0,1,0,0|5B|0,3,2,0,4 P0 s18/15 q0/1 d0/3 n0", "3+").over


def test_r14_final_count_repays_debts() -> None:
    p = after("0|0,0,1,0,0|5B|0,3,2,0,4 P0 s20/15 q0/1 d0/3 n0", "3+")
    assert p.outcome is not None and p.outcome.final == (42, 28)


def test_r15_a_player_may_empty_their_own_row() -> None:
    p = after("0B|0,0,0,0,1|0B|5,5,5,5,5 P0 s12/12 q0/0 d0/0 n0", "5+")
    assert p.board[1:6] == (0, 0, 0, 0, 0) and p.to_move == 1


def test_unknown_switch_or_value_is_an_error() -> None:
    with pytest.raises(RulesError, match="unknown switch 'quan_non'"):
        Rules.from_json({"quan_non": 5})
    with pytest.raises(RulesError, match="direction"):
        Rules.from_json({"direction": "sideways"})
    with pytest.raises(RulesError, match="chain"):
        Rules.from_json({"chain": "yes"})

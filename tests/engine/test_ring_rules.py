"""The ring board and the N-seat rules by name: geometry, switches, errors, ranking."""

from __future__ import annotations

import pytest

from engine import Game, IllegalMoveError, Move, NotationError, Position, Rules, RulesError
from engine.board import CITIZENS, MANDARINS, NUM_SQUARES, OWNER, ROWS, SQUARES
from engine.play import illegal_reason, legal_moves
from engine.position import Outcome
from engine.ring import players_for_squares, ring


def test_two_seat_ring_is_exactly_the_two_player_board() -> None:
    r = ring(2)
    assert r.num_squares == NUM_SQUARES and r.mandarins == MANDARINS
    assert r.rows == ROWS and r.citizens == CITIZENS and r.owner == OWNER
    assert tuple(range(r.num_squares)) == SQUARES


@pytest.mark.parametrize("players", (3, 4))
def test_each_side_is_a_left_mandarin_then_five_citizen_squares(players: int) -> None:
    r = ring(players)
    assert r.num_squares == 6 * players
    for p in range(players):
        left = r.left_mandarin(p)
        assert r.rows[p] == tuple(range(left + 1, left + 6))
        assert r.right_mandarin(p) == (left + 6) % r.num_squares
        assert all(r.owner[sq] == p for sq in r.rows[p])
    assert sorted(sq for row in r.rows for sq in row) == list(r.citizens)


@pytest.mark.parametrize("players", (3, 4))
def test_turns_pass_clockwise_to_the_seat_on_the_left(players: int) -> None:
    r = ring(players)
    for p in range(players):
        # Clockwise from above is towards lower indices: the next seat's row
        # ends at the mandarin on this seat's left.
        nxt = r.next_seat(p)
        assert r.right_mandarin(nxt) == r.left_mandarin(p)
        assert [r.owner[r.rotate(sq)] for sq in r.rows[p]] == [nxt] * 5


def _area(poly: tuple[tuple[float, float], ...]) -> float:
    """Signed area (shoelace): positive for vertices in counter-clockwise order."""
    return 0.5 * sum(
        x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1], strict=True)
    )


@pytest.mark.parametrize("players", (2, 3, 4))
def test_square_regions_tile_the_board_band_in_ring_order(players: int) -> None:
    r = ring(players)
    polys = r.polygons(inner=0.6)
    assert len(polys) == r.num_squares
    assert all(_area(poly) > 0 for poly in polys)
    outline = r.corners()
    # two seats: the 7 x 2 grid, 2 wide and 4/7 high; more: the band inside the outline
    band = 2.0 * 4.0 / 7.0 if players == 2 else _area(outline) * (1 - 0.6**2)
    assert sum(_area(poly) for poly in polys) == pytest.approx(band)
    if players > 2:
        assert outline[0][1] == pytest.approx(outline[1][1])  # side 0 along the bottom
        for k, m in enumerate(r.mandarins):  # a mandarin square sits at its corner
            (cx, cy), (vx, vy) = r.centres()[m], outline[k]
            assert cx * vy - cy * vx == pytest.approx(0, abs=1e-9) and cx * vx + cy * vy > 0


def test_board_sizes_name_their_seats() -> None:
    assert [players_for_squares(n) for n in (12, 18, 24)] == [2, 3, 4]
    with pytest.raises(ValueError, match="12, 18 or 24"):
        players_for_squares(30)
    with pytest.raises(ValueError, match=r"players must be 2\.\.4"):
        ring(5)


def test_players_switch_is_checked_and_omitted_when_default() -> None:
    assert Rules().to_json() == {}
    assert Rules.from_json({"players": 3}).to_json() == {"players": 3}
    for bad in ({"players": 1}, {"players": 5}, {"players": "3"}, {"lender": "richest"}):
        with pytest.raises(RulesError):
            Rules.from_json(bad)
    with pytest.raises(RulesError, match="two-player rule"):
        Rules(players=3, no_refill="lose")


def test_rules_and_board_must_agree_on_the_seats() -> None:
    with pytest.raises(RulesError, match="players=3 but the position has 2 seats"):
        Game(Rules(players=3), Position.initial())
    p3 = Position.initial(Rules(players=3))
    assert "3 seats on the board but rules for 2" in p3.describe_status(Rules())


def test_initial_ring_position_and_its_notation() -> None:
    p = Position.initial(Rules(players=4))
    assert p.players == 4 and sum(p.board) == 100 and p.big == (1, 1, 1, 1)
    assert p.to_text() == (
        "0B|5,5,5,5,5|0B|5,5,5,5,5|0B|5,5,5,5,5|0B|5,5,5,5,5 P0 s0/0/0/0 q0/0/0/0 "
        "d0/0/0/0 n0 l0/0/0/0"
    )
    assert p.to_json()["lent"] == [0, 0, 0, 0]
    assert "lent" not in Position.initial().to_json()


def test_ring_notation_errors_name_the_problem() -> None:
    with pytest.raises(NotationError, match="bad side to move"):
        Position.from_text("0B|5,5,5,5,5|0B|5,5,5,5,5|0B|5,5,5,5,5 P3 s0/0/0 q0/0/0 d0/0/0 n0")
    with pytest.raises(NotationError, match="bad 's' token"):
        Position.from_text("0B|5,5,5,5,5|0B|5,5,5,5,5|0B|5,5,5,5,5 P0 s0/0 q0/0/0 d0/0/0 n0")
    with pytest.raises(NotationError, match="lent is only kept for 3 or 4 seats"):
        Position.from_json({"board": [0, 5, 5, 5, 5, 5] * 2, "lent": [0, 0]})
    with pytest.raises(NotationError, match="two-player only"):
        Position.from_json({"board": [0, 5, 5, 5, 5, 5] * 3, "field_owner": [None] * 18})
    with pytest.raises(NotationError, match="store must be a list of 3 integers"):
        Position.from_json({"board": [0, 5, 5, 5, 5, 5] * 3, "store": [0, 0]})


def test_moves_name_squares_of_the_bigger_rings() -> None:
    assert str(Move.parse("14-")) == "14-"
    for bad in ("12+", "18-", "24+"):
        with pytest.raises(NotationError):
            Move.parse(bad)
    start = Position.initial(Rules(players=3))
    assert illegal_reason(start, Move.parse("14+"), Rules(players=3)) == (
        "square 14 is not P0's (P0 owns 1-5)"
    )
    with pytest.raises(IllegalMoveError, match="not on a board of 18 squares"):
        Game(Rules(players=3)).play("20+")


def test_two_player_games_keep_their_old_words_for_squares_past_eleven() -> None:
    reason = illegal_reason(Position.initial(), Move.parse("13+"))
    assert reason == "move square must be a citizen square 1-5 or 7-11, got 13"


def test_first_moves_follow_the_turn_order() -> None:
    game = Game(Rules(players=3))
    assert [str(m) for m in game.legal_moves()][:2] == ["1+", "1-"]
    game.play("2+")
    assert game.position.to_move == 1
    assert {m.square for m in legal_moves(game.position, game.rules)} == {13, 15, 16, 17}


def test_places_rank_by_score_with_shared_places() -> None:
    assert Outcome("mandarins_taken", (40, 30, 40, 30), None).places() == (1, 3, 1, 3)
    assert Outcome("mandarins_taken", (50, 20), 0).places() == (1, 2)
    assert Outcome("mandarins_taken", (35, 35), None).places() == (1, 1)
    # two-player no_refill=lose: the declared winner is first even when poorer
    assert Outcome("no_refill", (1, 40), 0).places() == (1, 2)
    assert Outcome("mandarins_taken", (50, 20, 30), 0).margin == 20


def test_stop_and_count_settles_every_seat() -> None:
    game = Game(Rules(players=3))
    game.play("2+")
    end = game.stop_and_count().position
    assert end.outcome is not None and end.outcome.reason == "repetition"
    # P0: 6 captured + 18 on its row; P2 and P1 sweep 24 each; stones (10 + 1 each) unclaimed
    assert end.outcome.final == (6 + 18, 24, 24)
    assert end.outcome.sweep == (18, 24, 24)
    assert end.outcome.unclaimed == 33
    assert end.outcome.winner is None and end.outcome.places() == (1, 1, 1)


def test_the_ring_position_draws_one_line_per_seat() -> None:
    text = str(Position.initial(Rules(players=4)))
    lines = text.splitlines()
    assert lines[0].startswith("P0  (0:0*)  1:5") and "<- to move" in lines[0]
    assert lines[1].startswith("P1  (18:0*)  19:5")

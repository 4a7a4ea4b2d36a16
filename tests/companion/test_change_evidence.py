"""Evidence from what a fixed camera already knows: the piles it saw on the last trusted board."""

from __future__ import annotations

import math

from companion.referee import Observation, Referee
from companion.referee.evidence import mean_count, pile_offsets, shifted
from companion.referee.reconcile import Evidence, cleared_squares, reconcile, touched_squares
from engine import Game, Position, play


def around(mean: float, sigma: float = 0.7, top: int = 40) -> Evidence:
    weights = [math.exp(-0.5 * ((k - mean) / sigma) ** 2) for k in range(top + 1)]
    total = sum(weights)
    return Evidence(tuple(w / total for w in weights), 0.0)


def test_a_shifted_distribution_moves_its_mass_and_stays_a_distribution() -> None:
    e = shifted(around(4.0), 2.0)
    assert max(range(len(e.probs)), key=e.probs.__getitem__) == 6
    assert abs(sum(e.probs) - 1.0) < 1e-9
    half = shifted(around(4.0), 0.5)
    assert abs(mean_count(half) - 4.5) < 0.05
    assert shifted(around(3.0), 0.0) == around(3.0)


def test_pile_offsets_are_shrunk_bounded_and_skip_hidden_squares() -> None:
    reading = [around(9.0), around(3.0), around(40.0), around(2.0)] + [around(0.0)] * 8
    counts = [12, 3, 5, 2] + [0] * 8
    hidden = [False, False, False, True] + [False] * 8
    off = pile_offsets(reading, counts, hidden)
    assert 2.0 < off[0] <= 4.0  # read 3 low: most of it, shrunk towards 0
    assert abs(off[1]) < 0.05  # read right
    assert off[2] == -max(1.0, 5 / 3)  # wildly off: bounded, cannot poison the square
    assert off[3] == 0.0  # under a hand: learns nothing
    assert all(o == 0.0 for o in off[4:])


def test_touched_and_cleared_squares_of_a_move() -> None:
    start = Position.from_text("0B|1,0,0,2,1|10B|1,0,2,0,3 P0 s20/16 q0/0 d0/0 n20")
    t = play(start, "1+")  # sows square 2, then captures square 4
    assert touched_squares(t) == {1, 2, 4}
    assert cleared_squares(t) == frozenset({1, 4})


def test_a_pile_read_low_on_the_trusted_board_is_read_right_after_a_pebble_lands_on_it() -> None:
    # the mandarin 6 holds a pile the counter reads 3 low, every time
    start = Position.from_text("0B|1,0,0,2,1|10B|1,0,2,0,3 P0 s20/16 q0/0 d0/0 n20")
    low = {6: 3.0}

    def seen(p: Position) -> list[Evidence]:
        out = []
        for sq, n in enumerate(p.board):
            e = around(n - low.get(sq, 0.0))
            big = p.big[sq // 6] if sq % 6 == 0 else 0
            out.append(Evidence(e.probs, 0.97 if big else 0.03))
        return out

    after = Game(start=start)
    after.play("5+")  # drops one pebble on the mandarin pile
    plain = reconcile(start, seen(after.position))
    assert plain.kind != "accept"  # absolute counts: the pile is 3 short, no move fits
    ref = Referee(start=start)
    ref.setup_checked = True
    # the players vouch for the start (as track's first frame): the counter's view of this pile
    assert ref.vouch(Observation(seen(start), still=True)).confirmed
    report = ref.observe(seen(after.position), still=True)
    assert [str(a.move) for a in report.accepted] == ["5+"], report.detail


def test_two_moves_that_leave_the_same_position_are_asked_not_guessed() -> None:
    game = Game()
    for move in ("5-", "9-", "1+"):
        game.play(move)
    p = game.position
    ends = {str(m) for m in game.legal_moves() if play(p, m).position == play(p, "11-").position}
    assert ends >= {"7+", "11-"}  # both sweep the board into the same final position
    empty = [Evidence.exact(0, 0) for _ in range(12)]
    verdict = reconcile(p, empty)
    assert verdict.kind == "ambiguous" and {str(m) for m in verdict.choices} >= {"7+", "11-"}


def test_the_counters_spread_is_learnt_from_trusted_boards_in_both_directions() -> None:
    from companion.referee.evidence import best_sharpness, sharpened, sharpness_scores

    counts = [0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5]
    timid = [around(n, sigma=2.5) for n in counts]  # right, but far less sure than it could be
    bold = [around(n + (1.5 if sq % 2 else -1.5), sigma=0.4) for sq, n in enumerate(counts)]
    assert best_sharpness(sharpness_scores(timid[:1], counts[:1])) == 1.0  # one square: no say
    three = [sum(x) for x in zip(*[sharpness_scores(timid, counts)] * 3, strict=True)]
    assert best_sharpness(three) > 1.0
    assert best_sharpness(sharpness_scores(bold, counts)) < 1.0  # overconfident: widened
    wide = sharpened(around(5.0, sigma=1.0), 0.5)
    assert wide.probs[5] < around(5.0, sigma=1.0).probs[5] and abs(sum(wide.probs) - 1) < 1e-9

"""The changed areas of each square as evidence for which move was made."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from companion.referee import Referee
from companion.referee.change import (
    AreaScale,
    ChangeEvidence,
    ChangeModel,
    ChangeScorer,
    square_units,
)
from companion.referee.reconcile import (
    Evidence,
    VerdictKind,
    board_of,
    cleared_squares,
    reconcile,
)
from engine import Position, play

MODEL = ChangeModel()
# 2+ and 4+ leave boards one pebble apart (squares 2 and 3): the counts cannot tell them
START = Position.from_text("1B|7,1,1,7,7|2B|0,0,6,6,6 P0 s6/0 q0/0 d0/0 n2")


def _areas(move: str, scale: float = 1.0) -> tuple[float, ...]:
    """The areas the camera would measure after ``move`` (the model's expectation)."""
    t = play(START, move)
    units = square_units(board_of(START), board_of(t.position), cleared_squares(t), MODEL)
    return tuple(scale * u for u in units)


def _torn() -> list[Evidence]:
    """Counts that fit both 2+ and 4+ equally: squares 2 and 3 read 0-or-1 and 1-or-2."""
    a = board_of(play(START, "2+").position)
    b = board_of(play(START, "4+").position)
    out = []
    for sq in range(12):
        stone = a[1][sq // 6] if sq % 6 == 0 else 0
        out.append(Evidence.either(a[0][sq], b[0][sq], stone))
    return out


def test_units_follow_what_the_move_did_to_each_square() -> None:
    assert MODEL.units(False, 4, 4, False) == 0.0  # untouched
    assert MODEL.units(False, 4, 6, False) == 2 * MODEL.added  # kept, two dropped on it
    gone = MODEL.removed * 5 / (1 + 5 / MODEL.pile)
    assert math.isclose(MODEL.units(True, 5, 1, False), gone + MODEL.added)
    assert MODEL.units(True, 0, 0, True) == MODEL.big  # a lone big stone captured


def test_the_likelihood_peaks_at_the_predicted_area_and_keeps_a_floor() -> None:
    at = [MODEL.loglik(a / 4, 2.0, 1.0) for a in range(0, 25)]
    assert max(range(len(at)), key=at.__getitem__) == 8  # 2.0 pebble areas
    assert MODEL.loglik(0.0, 0.0, 1.0) > MODEL.loglik(1.3, 0.0, 1.0) + 3
    # a wild area costs at most the wild share: one square cannot decide a board alone
    assert math.isclose(MODEL.loglik(100.0, 0.0, 1.0), math.log(MODEL.wild / MODEL.wild_area))
    # a change that was not seen at all costs about the missed share, not a wild area
    unseen = MODEL.loglik(0.0, 2.0, 1.0) - MODEL.loglik(0.0, 0.0, 1.0)
    assert math.log(MODEL.missed) - 0.5 < unseen < math.log(MODEL.missed) + 0.5


def test_a_photo_weighed_given_a_later_one_of_the_same_pile_misses_nothing() -> None:
    """An earlier photo's area, given a later photo's of the same pile (less what was
    dropped since), peaks there; where the later one saw a change, the earlier one seeing
    none is not excused as a change the camera missed."""
    at = [MODEL.loglik_again(a / 4, 2.0) for a in range(0, 25)]
    assert max(range(len(at)), key=at.__getitem__) == 8
    unseen = MODEL.loglik_again(0.0, 2.0) - MODEL.loglik_again(2.0, 2.0)
    assert unseen < math.log(MODEL.missed) - 1.0
    assert MODEL.kept_again(0.4, 0.4) > MODEL.kept_again(1.0, 0.4) + 3


def test_pieces_dropped_since_an_earlier_photo_may_be_the_ones_neither_photo_shows() -> None:
    """A pebble dropped on a pebble can land where no photo shows it: the earlier
    photo then looks like the later one, which costs about the missed share (and the
    later area's wider spread), as a change missed in one photo does, not a wild
    area's price."""
    later, dropped = 1.95, 1.0  # one piece dropped since the earlier photo
    expected = later - MODEL.added * dropped
    as_later = MODEL.loglik_again(later, expected, later)
    as_dropped = MODEL.loglik_again(expected, expected, later)
    assert math.log(MODEL.missed) - 1.0 < as_later - as_dropped < 0.0
    assert as_later > MODEL.loglik_again(later, expected) + 1.0  # (without that chance)
    # nothing dropped since: the same pile, nothing to miss
    assert MODEL.loglik_again(1.0, later, later) == MODEL.loglik_again(1.0, later)


def test_a_piece_dropped_on_a_pile_may_nudge_it_into_a_larger_change() -> None:
    """On a pile a drop nudges pieces: twice a pebble's area is a weaker sign of two
    dropped than into an empty square, where the area follows the pieces closely."""
    area = 1.9 * MODEL.added

    def two_against_one(old: int) -> float:
        two = MODEL.loglik(area, MODEL.units(False, old, old + 2, False), 1.0, old > 0)
        one = MODEL.loglik(area, MODEL.units(False, old, old + 1, False), 1.0, old > 0)
        return two - one

    assert two_against_one(4) < two_against_one(0) - 1.0
    assert two_against_one(4) > 0.0  # still the likelier


def test_pieces_dropped_on_a_small_pile_may_knock_it_from_where_it_lay() -> None:
    """A lone pebble that three drops landed on is often no longer where it lay: that
    it moved is weak evidence it was picked up. A big pile with one dropped on it
    stays put, and there it is strong evidence."""

    def taken_against_left(old: int, dropped: int) -> float:
        share = 1.0 - MODEL.sensed  # a kept share typical of a pile taken up
        taken = MODEL.kept_loglik(share, True, dropped, 1.0, old)
        return taken - MODEL.kept_loglik(share, False, dropped, 1.0, old)

    assert taken_against_left(1, 3) < 2.0
    assert taken_against_left(6, 1) > taken_against_left(1, 3) + 1.5
    assert taken_against_left(6, 1) > 3.0


def test_the_scale_is_one_unknown_shared_by_the_squares_of_a_frame() -> None:
    before = ((0, 1, 5, 0), (0,))
    after = ((0, 2, 0, 1), (0,))  # square 1 gains one, square 2 picked up into square 3
    areas = tuple(0.4 * u for u in square_units(before, after, frozenset({2}), MODEL))
    unsure = ChangeScorer(ChangeEvidence(areas, spread=0.7), before)
    sure = ChangeScorer(ChangeEvidence(areas, spread=0.05), before)
    # pebbles at 0.4 of the nominal area: a wide prior finds the scale, a narrow one cannot
    assert unsure(after, frozenset({2})) > sure(after, frozenset({2})) + 5
    # a board that leaves square 2's pile where it was cannot explain its area at any scale
    assert unsure(after, frozenset({2})) > unsure(((0, 2, 5, 1), (0,)), frozenset()) + 2


def test_the_scale_is_learnt_and_a_wild_board_cannot_drag_it() -> None:
    scale = AreaScale()
    assert scale.scale == 1.0 and scale.spread == scale.prior_spread
    for _ in range(8):  # pebbles half the nominal area
        scale = scale.learn([(0.5 * 1.3, 1.3), (0.5 * 2.6, 2.6), (0.0, 0.0)], MODEL)
    assert 0.5 < scale.scale < 0.6 and scale.spread < 0.2
    wild = scale.learn([(40.0, 1.3)], MODEL)  # a shadow over a square: not learnt from
    assert wild == scale


def test_areas_tell_apart_two_moves_the_counts_cannot() -> None:
    plain = reconcile(START, _torn())
    assert plain.kind == VerdictKind.AMBIGUOUS
    assert {str(m) for m in plain.choices} >= {"2+", "4+"}
    for move in ("2+", "4+"):
        verdict = reconcile(START, _torn(), change=ChangeEvidence(_areas(move)))
        assert verdict.kind == VerdictKind.ACCEPT and str(verdict.move) == move, verdict.detail


def test_unknown_squares_and_a_wrong_scale_leave_the_decision_to_the_rest() -> None:
    areas = list(_areas("4+", scale=0.6))  # smaller pebbles than nominal, not yet learnt
    verdict = reconcile(START, _torn(), change=ChangeEvidence(tuple(areas)))
    assert str(verdict.ranked[0].move) == "4+"
    assert verdict.kind == VerdictKind.ACCEPT or {str(m) for m in verdict.choices} >= {"4+"}
    hidden = tuple(None if sq in (2, 3, 4) else a for sq, a in enumerate(_areas("4+")))
    verdict = reconcile(START, _torn(), change=ChangeEvidence(hidden))
    assert verdict.kind == VerdictKind.AMBIGUOUS  # what told them apart is under a hand


def test_the_referee_learns_this_scenes_pebble_area_from_trusted_boards() -> None:
    ref = Referee(start=START)
    ref.setup_checked = True
    first = [
        Evidence.exact(n, START.big[sq // 6] if sq % 6 == 0 else 0)
        for sq, n in enumerate(START.board)
    ]
    assert ref.observe(first, still=True).confirmed
    after = play(START, "2+").position
    seen = [
        Evidence.exact(n, after.big[sq // 6] if sq % 6 == 0 else 0)
        for sq, n in enumerate(after.board)
    ]
    report = ref.observe(seen, still=True, areas=_areas("2+", scale=0.5))
    assert [str(a.move) for a in report.accepted] == ["2+"]
    assert ref._area_scale.scale < 1.0  # half-size pebbles: learnt from the squares that changed


def test_the_noise_of_untouched_squares_is_learnt_but_a_shadow_is_not() -> None:
    scale = AreaScale()
    assert math.isclose(scale.noise(MODEL), MODEL.sigma_base)
    for _ in range(6):  # light drift: untouched squares read 0.5 here
        scale = scale.learn([(0.5, 0.0)] * 6, MODEL)
    assert 0.3 < scale.noise(MODEL) < 0.5
    assert scale.learn([(6.0, 0.0)], MODEL).noise(MODEL) == scale.noise(MODEL)


def test_a_quiet_ground_lowers_the_noise_so_tiny_pieces_still_count() -> None:
    scale = AreaScale()
    for _ in range(16):  # a quiet ground: untouched squares read about 0.02
        scale = scale.learn([(0.02, 0.0)] * 8, MODEL)
    assert scale.noise(MODEL) == pytest.approx(scale.least_noise)
    assert scale.least_noise < 0.5 * MODEL.sigma_base
    # pieces a twelfth of a square: a drop shows 0.15 pebble areas, which at the learnt
    # noise says "dropped on" 15 to 1; at the model's spread it said nothing either way
    quiet = replace(MODEL, sigma_base=scale.noise(MODEL))
    assert quiet.loglik(0.15, MODEL.added, 0.12) - quiet.loglik(0.15, 0.0, 0.12) > math.log(15)
    assert abs(MODEL.loglik(0.15, MODEL.added, 0.12) - MODEL.loglik(0.15, 0.0, 0.12)) < 0.5


def test_a_pile_left_in_place_and_one_taken_away_differ_in_what_stayed() -> None:
    left = MODEL.kept_loglik(0.97, False, 1, 1.0)  # one pebble dropped on the pile
    taken = MODEL.kept_loglik(0.97, True, 0, 1.0)
    assert left > taken + 3
    # a scene whose pebbles register weakly misses more of a pile's going
    assert MODEL.kept_loglik(0.7, True, 0, 0.45) > MODEL.kept_loglik(0.7, True, 0, 1.2) + 3


@pytest.mark.parametrize("cleared", [False, True])
def test_a_fate_weighed_at_every_scale_at_once_is_each_scale_weighed_alone(cleared: bool) -> None:
    """The scorer's row of scales shares the scale-free parts of a square's fate; each
    entry must still be that fate's area and kept-share log-likelihood at its scale."""
    scorer = ChangeScorer(ChangeEvidence((0.0,) * 12, kept=(0.8,) * 12), board_of(START))
    scales = (0.3, 1.0, 2.5)
    for share in (None, 0.8):
        row = scorer.fates(1.7, share, cleared, 4, 2 if cleared else 5, False, scales)
        for got, scale in zip(row, scales, strict=True):
            units = MODEL.units(cleared, 4, 2 if cleared else 5, False)
            alone = MODEL.loglik(1.7, units, scale, not cleared)  # (5 on a pile of 4)
            if share is not None:
                alone += MODEL.kept_loglik(share, cleared, 0 if cleared else 1, scale, 4)
            assert got == pytest.approx(alone, abs=1e-12)


def test_what_stayed_is_the_same_whichever_boards_the_scorer_weighed_before() -> None:
    """``stayed`` keeps per-square terms between candidates (reconcile asks it about
    hundreds): each board's answer must be the one a fresh scorer gives it."""
    before = board_of(START)
    # squares 1-2 show a pebble dropped on a pile that stayed, 3 a pile taken away, the
    # rest nothing
    areas = (0.0, 1.3, 1.2, 6.5, *(0.0,) * 8)
    kept = (1.0, 0.98, 0.97, 0.1, *(1.0,) * 8)
    evidence = ChangeEvidence(areas, kept=kept)
    counts = before[0]
    boards = [
        ((counts[0], counts[1] + 1, counts[2] + 1, 0, *counts[4:]), before[1]),
        ((counts[0], counts[1] + 3, counts[2], 1, *counts[4:]), before[1]),
        ((counts[0], counts[1] + 1, counts[2] + 1, counts[3] + 1, *counts[4:]), before[1]),
    ]
    fresh = [ChangeScorer(evidence, before).stayed(b, frozenset({3})) for b in boards]
    shared = ChangeScorer(evidence, before)
    for order in (boards, boards[::-1]):
        got = {b: shared.stayed(b, frozenset({3})) for b in order}
        assert [got[b] for b in boards] == fresh
    assert {1, 2} <= fresh[0]  # a drop on a pile the camera saw stay
    assert 1 not in fresh[1]  # three dropped where the area shows one: not as likely
    assert 3 not in fresh[0]  # a square the move cleared is never "stayed"

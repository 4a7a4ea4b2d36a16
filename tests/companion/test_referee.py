"""The referee state machine on synthetic readings (no camera, no vision)."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Any

import pytest

from companion.referee import Observation, Referee, Report, half_turned
from companion.referee.change import ChangeModel, square_units
from companion.referee.evidence import tally
from companion.referee.reconcile import Evidence, VerdictKind, board_of, cleared_squares
from companion.referee.records import RecordWriter
from companion.referee.state import HELD_DOUBT_LIVE, VERDICTS_KEPT, RefereeConfig
from engine import Game, IllegalMoveError, Position, Rules, legal_moves, play


class ListJournal(RecordWriter):
    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def append(self, kind: str, data: dict[str, Any]) -> None:
        self.records.append((kind, data))


def reading(board: tuple[int, ...], big: tuple[int, int]) -> list[Evidence]:
    return [Evidence.exact(n, big[sq // 6] if sq % 6 == 0 else 0) for sq, n in enumerate(board)]


def test_a_whole_random_game_is_refereed_from_stills() -> None:
    rng = random.Random(3)
    truth = Game()
    journal = ListJournal()
    ref = Referee(journal=journal, clock=lambda: 0.0)
    assert (
        ref.observe(reading(truth.position.board, truth.position.big), still=True).state
        == "waiting"
    )
    while not truth.is_over:
        t = truth.play(rng.choice(truth.legal_moves()))
        report = ref.observe(
            reading(t.position.board, t.position.big), still=True, frame=f"{t.position.ply}"
        )
        assert report.state == "settled", report.detail
        assert [a.move for a in report.accepted] == [t.move]
    assert ref.position == truth.position
    moves = [d["move"] for kind, d in journal.records if kind == "move"]
    assert moves == [str(m) for m in truth.moves]
    assert journal.records[-1][0] == "end"


def test_refill_is_owed_until_the_board_shows_it() -> None:
    start = Position.from_text("0B|1,0,13,0,0|0B|0,0,0,0,0 P0 s20/16 q0/0 d0/0 n0")
    ref = Referee(start=start)
    ref.setup_checked = True
    t = play(start, "3+")
    owed = list(t.position.board)
    for sq in range(7, 12):
        owed[sq] -= 1
    report = ref.observe(reading(tuple(owed), t.position.big), still=True)
    assert report.state == "settled" and "refill: P1 puts 1 pebble" in report.detail
    assert ref.observe(reading(tuple(owed), t.position.big), still=True).detail == "refill owed"
    assert (
        ref.observe(reading(t.position.board, t.position.big), still=True).detail == "refill done"
    )


def test_a_wrong_board_is_disputed_then_fixed_by_the_players() -> None:
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    wrong = list(play(start, "2+").position.board)
    wrong[4] -= 1
    wrong[5] += 1
    report = ref.observe(reading(tuple(wrong), (1, 1)), still=True)
    assert report.state == "dispute"
    assert "square 4: expected 6, seen 5" in report.detail
    fixed = play(start, "2+").position
    assert ref.observe(reading(fixed.board, fixed.big), still=True).state == "settled"
    assert ref.position == fixed


def test_live_stream_waits_for_a_stable_board_before_objecting() -> None:
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    odd = (0, 9, 9, 0, 0, 0, 0, 9, 9, 0, 0, 0)
    states = [ref.observe(reading(odd, (0, 0))).state for _ in range(3)]
    assert states == ["moving", "moving", "dispute"]


def test_a_live_board_whose_reading_flickers_still_settles() -> None:
    """A live camera's frames of one board are never read quite alike: a square on the
    edge of two counts flickers with the sensor's noise. Clear frames in a row settle
    the board all the same (vision turns away those that moved)."""
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    after = play(start, "2+").position
    exact = reading(after.board, after.big)
    n = after.board[4]
    edge = [0.0] * len(exact[4].probs)
    edge[n], edge[n + 1] = 0.45, 0.55  # (read as one more, one frame in two)
    flicker = [*exact[:4], Evidence(tuple(edge), 0.0), *exact[5:]]
    frames = [exact, flicker] * ref.config.settle_frames
    reports = [ref.observe(f) for f in frames[: ref.config.settle_frames]]
    assert [str(a.move) for a in reports[-1].accepted] == ["2+"], reports[-1].detail
    assert ref.position == after


def test_ambiguous_reading_is_settled_by_the_players_choice() -> None:
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    a, b = play(start, "2+").position.board, play(start, "4-").position.board
    evidence = [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]
    report = ref.observe(evidence, still=True, final=True)  # (no photo follows)
    assert report.state == "ambiguous"
    with pytest.raises(IllegalMoveError):
        ref.confirm("8+")
    assert ref.confirm("4-").accepted[0].how == "confirmed"
    assert ref.position == play(start, "4-").position


def test_manual_mode_and_undo() -> None:
    journal = ListJournal()
    ref = Referee(mode="manual", journal=journal)
    ref.play_manual("5-")
    ref.play_manual("9-")
    assert ref.position.ply == 2
    ref.undo()
    assert ref.position == play(Position.initial(), "5-").position
    assert [k for k, _ in journal.records] == ["move", "move", "undo"]
    with pytest.raises(IllegalMoveError):
        ref.play_manual("3+")  # P1 to move


def test_setup_check_names_the_squares_to_fix() -> None:
    ref = Referee()
    board = list(Position.initial().board)
    board[3] = 2
    report = ref.observe(reading(tuple(board), (1, 1)), still=True)
    assert report.state == "dispute" and "3:2" in report.detail


def test_tally_gives_an_honest_interval() -> None:
    sure = [Evidence.exact(4), Evidence.exact(6)]
    assert tally(sure, [0, 1]) == (10, 10, 10)
    vague = [Evidence((0.0, 0.0, 0.0, 0.3, 0.4, 0.3)), Evidence.exact(6)]
    best, low, high = tally(vague, [0, 1])
    assert (best, low, high) == (10, 9, 11)
    assert Rules()  # rules untouched by tallies


def two_moves_behind_a_hand() -> tuple[Referee, Game, str]:
    """A referee that saw the opening, then a photo with a hand over the board, while
    2+ and 9- were played; and the state that photo left it in."""
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    game = Game()
    game.play("2+")
    game.play("9-")
    hand = ref.observe(None, fit=False, reason="hand over the board", still=True)
    return ref, game, hand.state


def test_after_a_frame_nobody_saw_two_moves_are_asked_one_at_a_time() -> None:
    ref, game, state = two_moves_behind_a_hand()
    assert state == "moving"
    shown = reading(game.position.board, game.position.big)
    report = ref.observe(shown, still=True)
    # the board is clear, but what was played in between was not seen: ask
    assert report.state == "ambiguous" and report.behind and not report.accepted
    assert ref.pending is not None and ref.pending.choices[0] == game.moves[0]
    answered = ref.confirm("2+")
    assert answered.behind and not answered.confirmed  # the board shows a later move
    again = ref.observe(shown, still=True, again=True)
    assert [str(a.move) for a in again.accepted] == ["9-"] and again.confirmed
    assert ref.position == game.position


def test_after_the_players_overrule_a_dispute_the_same_board_proves_no_later_move() -> None:
    """A board that contradicted every legal story is no witness for the moves after
    the one the players named, however well it fits them now: they are asked too."""
    ref, game, _ = two_moves_behind_a_hand()
    odd = (0, 9, 9, 0, 0, 0, 0, 9, 9, 0, 0, 0)
    assert ref.observe(reading(odd, (0, 0)), still=True).state == "dispute"
    answered = ref.confirm("2+")  # the players overrule it: 2+ was played
    assert answered.behind and not answered.confirmed
    shown = reading(game.position.board, game.position.big)
    again = ref.observe(shown, still=True, again=True)
    assert not again.accepted and again.state == "ambiguous"
    assert ref.pending is not None and ref.pending.choices[0] == game.moves[1]
    assert ref.confirm("9-").behind  # then judged once more from after the answer
    assert ref.observe(shown, still=True, again=True).confirmed
    assert ref.position == game.position
    game.play("3-")  # a new photo is a witness again
    report = ref.observe(reading(game.position.board, game.position.big), still=True)
    assert [str(a.move) for a in report.accepted] == ["3-"]


def test_two_moves_are_taken_when_a_frame_with_a_hand_showed_the_board_between() -> None:
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    game = Game()
    between = game.play("2+").position
    # the hand hides all but squares 0 and 1 of the board after 2+: nothing decided
    report = ref.observe(
        hide(reading(between.board, between.big), set(range(2, 12))), still=True, partial=True
    )
    assert report.state == "moving"
    after = game.play("9-").position
    report = ref.observe(reading(after.board, after.big), still=True)
    assert [str(a.move) for a in report.accepted] == ["2+", "9-"], report.detail
    assert ref.position == game.position


def _photo_with_a_hand(position: Position, under: set[int]) -> Observation:
    """A photo of ``position`` with a hand over the squares ``under``."""
    hidden = tuple(sq in under for sq in range(12))
    seen = hide(reading(position.board, position.big), under)
    return Observation(tuple(seen), still=True, partial=True, hidden=hidden)


def test_a_first_move_two_photos_with_hands_prove_is_taken_before_a_clear_photo() -> None:
    """1+ under a hand over squares 2-4 (where it differs from other moves), then 8-
    under a hand over 7-11: together the two photos prove 1+, not yet 8-. 1+ is taken
    then, and the clear photo after 4+ shows the last two moves, the second hand photo
    showing the board between them."""
    ref = Referee()
    game = Game()
    ref.see(Observation(reading(game.position.board, game.position.big), still=True))
    game.play("1+")
    assert not ref.see(_photo_with_a_hand(game.position, {2, 3, 4})).accepted
    game.play("8-")
    report = ref.see(_photo_with_a_hand(game.position, {7, 8, 9, 10, 11}))
    assert [str(a.move) for a in report.accepted] == ["1+"] and report.state == "moving"
    game.play("4+")
    report = ref.see(Observation(reading(game.position.board, game.position.big), still=True))
    assert [str(a.move) for a in report.accepted] == ["8-", "4+"], report.detail
    assert ref.position == game.position


def test_three_moves_two_photos_with_hands_showed_are_taken_from_the_clear_photo() -> None:
    """5-, 8+ and 3-, the first two each photographed under a hand that hides where
    they differ from other moves: neither hand photo decides anything, so the clear
    photo shows three moves. Each hand photo witnesses the board between two of
    them, which leaves one run that fits: all three are taken without a question."""
    ref = Referee()
    game = Game()
    ref.see(Observation(reading(game.position.board, game.position.big), still=True))
    game.play("5-")
    assert not ref.see(_photo_with_a_hand(game.position, {1, 2, 4, 9, 10})).accepted
    game.play("8+")
    assert not ref.see(_photo_with_a_hand(game.position, {4, 5, 7, 9, 10})).accepted
    game.play("3-")
    report = ref.see(Observation(reading(game.position.board, game.position.big), still=True))
    assert [str(a.move) for a in report.accepted] == ["5-", "8+", "3-"], report.detail
    assert ref.position == game.position


def test_runs_of_photos_with_hands_never_lead_to_a_wrong_move() -> None:
    """Random runs of three moves, the first two photographed under hands over random
    squares: whatever the referee takes by itself is what was played."""
    rng = random.Random(5)
    taken = 0
    for _ in range(30):
        truth = Game()
        ref = Referee()
        ref.see(Observation(reading(truth.position.board, truth.position.big), still=True))
        played = []
        for step in range(3):
            played.append(str(truth.play(rng.choice(truth.legal_moves())).move))
            if step < 2:
                under = set(rng.sample(range(12), rng.randint(3, 6)))
                ref.see(_photo_with_a_hand(truth.position, under))
            else:
                ref.see(Observation(reading(truth.position.board, truth.position.big), still=True))
        accepted = [str(t.move) for t in ref.game.transitions]
        assert accepted == played[: len(accepted)], (played, accepted)
        taken += len(accepted)
    assert taken > 60  # (most runs are taken whole)


def test_a_frame_is_weighed_on_all_its_moves_when_the_first_is_taken_from_it() -> None:
    """The second of two hand photos proves 1+ and is judged again for 8- alone; its
    weight (which side of the board it favours) is still that of both moves from the
    trusted board. Weighed on 8- alone, it looked 3 nats likelier than any frame
    judged whole, and one such photo turned the board the wrong way round."""
    ref = Referee()
    game = Game()
    ref.see(Observation(reading(game.position.board, game.position.big), still=True))
    game.play("1+")
    ref.see(_photo_with_a_hand(game.position, {2, 3, 4}))
    game.play("8-")
    second = _photo_with_a_hand(game.position, {7, 8, 9, 10, 11})
    weighed = ref.weigh(second)
    assert weighed is not None and [str(m) for m in weighed.moves] == ["1+"]
    taken = ref.see(second)
    assert [str(a.move) for a in taken.accepted] == ["1+"] and taken.verdict is not None
    # (the report's verdict is the second judgment's: 8- from the board after 1+)
    assert weighed.evidence < taken.verdict.evidence - 2.0


#: a live frame vision's gate turned away: something moved since the frame before
MOTION = Observation(None, fit=False, reason="motion since the previous frame")


def _live_hand(position: Position, under: set[int], resting: bool, frames: int) -> list[Report]:
    """``frames`` live frames of ``position`` with a hand over ``under``: at rest, or
    moving (vision's gate turns away every other frame)."""
    shown = replace(_photo_with_a_hand(position, under), still=False)
    return [shown if resting or i % 2 == 0 else MOTION for i in range(frames)]


def test_a_live_frame_with_a_hand_takes_no_first_of_several_moves() -> None:
    """The same frames from a live stream, the hand never at rest: a hand there may be a
    move under way, so the referee waits for a clear frame before taking any move."""
    ref = Referee()
    game = Game()
    ref.observe(reading(game.position.board, game.position.big), still=True)
    game.play("1+")
    for obs in _live_hand(game.position, {2, 3, 4}, resting=False, frames=7):
        assert not ref.see(obs).accepted
    game.play("8-")
    for obs in _live_hand(game.position, {7, 8, 9, 10, 11}, resting=False, frames=7):
        report = ref.see(obs)
        assert not report.accepted and report.state == "moving"
    assert ref.partials_held == 0


def test_a_live_hand_at_rest_is_a_witness_as_a_photo_with_a_hand_is() -> None:
    """The photos of the test above as a live stream, each hand at rest for a while:
    each is judged once, when it has rested ``settle_frames`` frames, as its photo is
    (1+ taken on the second, the clear board after 4+ showing 8- and 4+); with the
    hands never at rest the same boards leave three moves to the clear frame, where
    only the players can start them. A board that changes under a hand that rested
    (no frame between the two boards moved) is a new rest, and judged too; and one
    that the hand leaves changed is a move too, seen or not."""
    settle = RefereeConfig().settle_frames
    for resting, between in ((True, [MOTION]), (True, []), (False, [MOTION])):
        ref = Referee()
        game = Game()
        ref.observe(reading(game.position.board, game.position.big), still=True)
        taken: list[tuple[int, str]] = []
        step = 0
        for move, under in (("1+", {2, 3, 4}), ("8-", {7, 8, 9, 10, 11})):
            game.play(move)
            frames = [*between, *_live_hand(game.position, under, resting, 2 * settle + 1)]
            for obs in frames:
                step += 1
                taken += [(step, str(a.move)) for a in ref.see(obs).accepted]
        game.play("4+")
        clear = Observation(reading(game.position.board, game.position.big))
        reports = [ref.see(obs) for obs in (*between, *[clear] * settle)]
        last = [str(a.move) for a in reports[-1].accepted]
        if resting:
            # (1+ on the second hand's frame that completed its rest, and only then)
            first = 2 * settle + 1 + len(between)
            assert taken == [(first + len(between) + settle, "1+")], taken
            assert last == ["8-", "4+"] and ref.position == game.position
        else:
            assert taken == [] and last == []
            assert reports[-1].state in ("ambiguous", "dispute")  # (the players say)


def test_a_live_hand_at_rest_after_one_move_is_weighed_for_that_move_as_a_photo_is() -> None:
    """A clear live board after a run of motion is weighed for one move more than the
    run showed (a second may begin before the first settles); a hand at rest is judged
    as a photo with an arm is, for the moves shown. Weighed for two, the runs whose
    second move lies under the hand share the mass of a move the squares in view prove
    (counts read one either way as likely as right)."""
    ref = Referee()
    game = Game()
    ref.observe(reading(game.position.board, game.position.big), still=True)
    game.play("2+")
    blurred = []
    for sq, n in enumerate(game.position.board):
        probs = [0.0] * 41
        probs[n], probs[n + 1] = 0.4, 0.3
        probs[max(0, n - 1)] += 0.3
        blurred.append(Evidence(tuple(probs), game.position.big[sq // 6] if sq % 6 == 0 else 0))
    under = {10, 11}
    hand = Observation(
        tuple(hide(blurred, under)),
        still=False,
        partial=True,
        hidden=tuple(sq in under for sq in range(12)),
    )
    reports = [ref.see(obs) for obs in (MOTION, *[hand] * RefereeConfig().settle_frames)]
    assert [str(a.move) for a in reports[-1].accepted] == ["2+"], reports[-1].detail
    assert reports[-1].verdict is not None
    assert not any(c.follows for c in reports[-1].verdict.ranked)


def test_a_live_hand_at_rest_that_shows_several_moves_is_judged_again_for_the_rest() -> None:
    """Three moves, each ended under a hand at rest, the first two hands over the squares
    that would tell them: the last rest takes the first move, and its board, judged
    again from after it, shows the other two (weighed for one move only, as the rest's
    first judgement is, it fitted none and the two were left to the next clear board)."""
    settle = RefereeConfig().settle_frames
    ref = Referee()
    game = Game()
    ref.observe(reading(game.position.board, game.position.big), still=True)
    taken: list[str] = []
    for move, under in (("1+", {2, 3, 4}), ("8-", {2, 3, 4}), ("2-", {8, 9})):
        game.play(move)
        for obs in [MOTION, *_live_hand(game.position, under, True, settle + 1)]:
            taken += [str(a.move) for a in ref.see(obs).accepted]
    assert taken == ["1+", "8-", "2-"] and ref.position == game.position


def test_after_a_dispute_several_moves_are_never_accepted_at_once() -> None:
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    odd = (0, 9, 9, 0, 0, 0, 0, 9, 9, 0, 0, 0)
    assert ref.observe(reading(odd, (0, 0)), still=True).state == "dispute"
    game = Game()
    between = game.play("2+").position
    ref.observe(
        hide(reading(between.board, between.big), {3, 4, 5, 6, 7}), still=True, partial=True
    )
    after = game.play("9-").position
    report = ref.observe(reading(after.board, after.big), still=True)
    assert not report.accepted and report.state == "ambiguous"


def hide(evidence: list[Evidence], squares: set[int]) -> list[Evidence]:
    """What a hand over ``squares`` leaves of a reading: nothing there."""
    flat = Evidence(tuple([1.0 / 41] * 41), 0.5)
    return [flat if sq in squares else e for sq, e in enumerate(evidence)]


def test_a_move_the_visible_squares_prove_is_taken_from_a_frame_with_a_hand() -> None:
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    game = Game()
    game.play("2+")  # sows 3..7: square 9 under the hand changes nothing
    partial = hide(reading(game.position.board, game.position.big), {9})
    report = ref.observe(partial, still=True, partial=True)
    assert [str(a.move) for a in report.accepted] == ["2+"]
    assert ref.position == game.position


def test_a_frame_with_a_hand_never_asks_objects_or_calls_the_board_unchanged() -> None:
    journal = ListJournal()
    ref = Referee(journal=journal)
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    game = Game()
    game.play("2+")
    # the hand hides all but square 1, which several moves leave with 6: undecided
    hidden = set(range(12)) - {1}
    partial = hide(reading(game.position.board, game.position.big), hidden)
    assert ref.observe(partial, still=True, partial=True).state == "moving"
    # nor from the unchanged board under a hand
    assert (
        ref.observe(hide(reading(start.board, start.big), {4}), still=True, partial=True).state
        == "moving"
    )
    wrong = list(game.position.board)
    wrong[9] += 3  # two misread visible squares: a clear frame would object
    wrong[10] += 3
    misread = hide(reading(tuple(wrong), game.position.big), {2})
    clear = Referee()
    clear.observe(reading(start.board, start.big), still=True)
    assert clear.observe(misread, still=True).state == "dispute"
    assert ref.observe(misread, still=True, partial=True).state == "moving"
    assert ref.position == start and not [r for r in journal.records if r[0] == "dispute"]
    # the next clear photo may show a move after each of the three photos with a hand:
    # more than the two it can weigh, so it asks how the game went on, 2+ first
    report = ref.observe(reading(game.position.board, game.position.big), still=True)
    assert report.state == "ambiguous" and not report.accepted
    assert report.verdict is not None and str(report.verdict.choices[0]) == "2+"
    # after one photo with a hand, the clear photo decides, with the move it left open
    again = Referee()
    again.observe(reading(start.board, start.big), still=True)
    assert again.observe(partial, still=True, partial=True).state == "moving"
    report = again.observe(reading(game.position.board, game.position.big), still=True)
    assert [str(a.move) for a in report.accepted] == ["2+"]


def test_change_flags_weigh_in_once_the_referee_has_seen_that_they_are_reliable() -> None:
    from companion.referee.evidence import pin_unchanged

    ref = Referee(clock=lambda: 0.0)
    ref.setup_checked = True
    assert ref.changed_same_ratio() == 1.0  # nothing learnt yet: the flags change nothing
    game = Game()
    rng = random.Random(5)
    for _ in range(6):
        before = game.position.board
        t = game.play(rng.choice(game.legal_moves()))
        after = t.position
        flags = [before[sq] != after.board[sq] for sq in range(12)]
        report = ref.observe(reading(after.board, after.big), still=True, changed=flags)
        assert report.state in ("settled", "waiting"), report.detail
    assert ref.changed_same_ratio() < 0.3  # flags matched every change it concluded
    # A flagged square then speaks against its old count...
    wide = Evidence(tuple([0.2] * 5 + [0.0] * 36), 0.0)
    board = ((2,) * 12, (0, 0))
    pinned = pin_unchanged([wide] * 12, [True] + [False] * 11, board, moved_same=0.2)
    assert pinned[0].probs[2] < 0.1 < pinned[0].probs[3]
    # ...and an unflagged one is held to it.
    assert pinned[1].probs[2] > 0.99
    # Flags that fire on squares that did not change teach it to ignore them.
    noisy = Referee(clock=lambda: 0.0, start=game.position)
    noisy.setup_checked = True
    for _ in range(6):
        p = noisy.position
        noisy.observe(reading(p.board, p.big), still=True, changed=[True] * 12)
    assert noisy.changed_same_ratio() == 1.0


def test_referee_learns_a_counter_that_reads_low_and_corrects_its_readings() -> None:
    from companion.referee.evidence import rescaled as _rescaled

    def around(mean: float, sigma: float = 1.2) -> Evidence:
        weights = [pow(2.718281828, -0.5 * ((k - mean) / sigma) ** 2) for k in range(41)]
        total = sum(weights)
        return Evidence(tuple(w / total for w in weights), 0.0)

    ref = Referee(clock=lambda: 0.0)
    ref.setup_checked = True
    assert ref.count_gain() == 1.0
    start = Position.initial()
    low = [around(0.84 * n) for n in start.board]  # the counter sees 4.2 for every 5
    low[0] = Evidence(low[0].probs, 0.95)
    low[6] = Evidence(low[6].probs, 0.95)
    for _ in range(3):
        assert ref.observe(low, still=True).state == "waiting"  # the opening, unchanged
    assert 1.1 < ref.count_gain() < 1.25  # learnt, but held back by the prior
    # A distribution around 4 read with a gain of 1.25 is one around 5.
    four = around(4.0, 0.8)
    five = _rescaled(four, 1.25)
    assert max(range(41), key=five.probs.__getitem__) == 5
    assert abs(sum(five.probs) - 1.0) < 1e-9


def test_a_square_under_a_hand_is_no_evidence_that_it_changed() -> None:
    # 9- and 11- differ only in squares 10 and 11; a hand hides both
    start = Position.from_text("0|0,0,1,2,1|18B|1,0,1,2,1 P1 s20/16 q1/0 d0/0 n17")
    game = Game(start=start)
    after = game.play("9-").position
    ref = Referee(start=start)
    ref.setup_checked = True
    # the camera has shown that its change flags are reliable here
    ref._change_stats = [1, 40, 40, 41]
    assert ref.changed_same_ratio() < 0.1
    hidden = [sq in (10, 11) for sq in range(12)]
    flags = [start.board[sq] != after.board[sq] or hidden[sq] for sq in range(12)]
    shown = hide(reading(after.board, after.big), {10, 11})
    report = ref.observe(shown, still=True, changed=flags, partial=True, hidden=hidden)
    assert not report.accepted, report.detail


def test_a_game_the_players_stop_is_counted_and_journaled() -> None:
    journal = ListJournal()
    ref = Referee(journal=journal, mode="manual")
    ref.play_manual("2+")
    report = ref.end_by_count()
    assert ref.position.over and report.state == "settled"
    kind, data = journal.records[-1]
    assert kind == "end" and data["final"] == list(ref.position.outcome.final)  # type: ignore[union-attr]
    assert ref.end_by_count().detail == "game over"  # a second press changes nothing


def test_weighing_a_frame_changes_nothing() -> None:
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    after = play(start, "2+").position
    shown = Observation(reading(after.board, after.big), still=True)
    found = ref.weigh(shown)
    other = ref.weigh(shown, half_turn=True)
    assert found is not None and other is not None and found.evidence > other.evidence + 9.0
    assert [str(m) for m in found.moves] == ["2+"] and other.moves == ()
    assert ref.position == start and ref.trusted_boards == 1
    assert [str(a.move) for a in ref.see(shown).accepted] == ["2+"]


def _counted_reconciles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The plies of every call the referee makes to ``reconcile`` from now on."""
    import companion.referee.state as state

    calls: list[int] = []
    real = state.reconcile

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["plies"])
        return real(*args, **kwargs)

    monkeypatch.setattr(state, "reconcile", counted)
    return calls


def test_a_frame_weighed_then_judged_is_reconciled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """While the side is open a frame is weighed on a copy, then judged for real on
    the same input: the verdict is reused (reconcile is pure), never stale."""
    calls = _counted_reconciles(monkeypatch)
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    after = play(start, "2+").position
    shown = Observation(reading(after.board, after.big), still=True)
    before = len(calls)
    assert ref.weigh(shown) is not None and ref.weigh(shown, half_turn=True) is not None
    weighed = len(calls) - before
    assert weighed == 2  # each side once
    report = ref.see(shown)
    assert len(calls) - before == weighed  # the copy's judgment of this side, reused
    assert [str(a.move) for a in report.accepted] == ["2+"]
    fresh = Referee()
    fresh.observe(reading(start.board, start.big), still=True)
    assert fresh.see(shown).verdict == report.verdict
    # the next frame is a new input: judged afresh, from the position after 2+
    again = play(after, "7+").position
    assert [
        str(a.move)
        for a in ref.see(Observation(reading(again.board, again.big), still=True)).accepted
    ] == ["7+"]
    assert len(calls) - before > weighed


def test_a_full_store_of_verdicts_forgets_only_its_oldest(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame judged both ways round, then again from the side taken, asks for its
    first verdicts last: a full store drops its oldest verdict, never all of them."""
    calls = _counted_reconciles(monkeypatch)
    ref = Referee()
    start = Position.initial()
    inputs = [
        (reading(*board_of(play(start, move).position)), plies)
        for move in legal_moves(start)
        for plies in (1, 2)
    ]
    assert len(inputs) > VERDICTS_KEPT

    def judge(k: int) -> None:
        shown, plies = inputs[k]
        ref._reconciled(shown, plies=plies, earlier=(), kept=None, still=True, change=None)

    for k in range(VERDICTS_KEPT + 1):
        judge(k)
    assert len(calls) == VERDICTS_KEPT + 1
    judge(1)  # still kept: no new call
    judge(VERDICTS_KEPT)
    assert len(calls) == VERDICTS_KEPT + 1
    judge(0)  # the oldest went
    assert len(calls) == VERDICTS_KEPT + 2


def test_a_blind_scene_is_weighed_by_where_its_squares_changed() -> None:
    """The counts of a scene the counter cannot see are no witness (here they even
    read the board turned); where its squares changed is."""
    from companion.referee.change import ChangeModel, square_units
    from companion.referee.reconcile import board_of, cleared_squares

    start = Position.initial()
    ref = Referee()
    blurred = reading((0,) * 12, start.big)
    ref.vouch(Observation(blurred, still=True))
    assert ref.blind
    t = play(start, "2+")
    units = square_units(board_of(start), board_of(t.position), cleared_squares(t), ChangeModel())
    misread = half_turned(Observation(reading(t.position.board, t.position.big)))
    assert misread.reading is not None
    shown = Observation(misread.reading, still=True, areas=tuple(units))
    found = ref.weigh(shown)
    other = ref.weigh(shown, half_turn=True)
    assert found is not None and other is not None and found.evidence > other.evidence + 3.0


def test_a_half_turn_reads_square_k_as_k_plus_6_in_every_field() -> None:
    board = tuple(range(12))
    obs = Observation(
        tuple(reading(board, (1, 0))),
        still=True,
        changed=tuple(sq == 2 for sq in range(12)),
        hidden=tuple(sq == 3 for sq in range(12)),
        areas=tuple(float(sq) for sq in range(12)),
        kept=tuple(None if sq == 4 else 0.5 for sq in range(12)),
    )
    turned = half_turned(obs)
    assert turned.reading is not None
    assert [max(range(len(e.probs)), key=e.probs.__getitem__) for e in turned.reading] == [
        (k + 6) % 12 for k in range(12)
    ]
    assert turned.reading[6].big_prob > 0.5 > turned.reading[0].big_prob
    assert turned.changed == tuple(sq == 8 for sq in range(12))
    assert turned.hidden == tuple(sq == 9 for sq in range(12))
    assert turned.areas == tuple(float((k + 6) % 12) for k in range(12))
    assert turned.kept is not None and turned.kept[10] is None
    assert half_turned(turned) == obs
    ring = Observation(reading(tuple([1] * 18), (0, 0, 0)))
    assert half_turned(ring) is ring  # three seats: no half turn looks the same


def _fuzzy(n: int, big: int, width: float) -> Evidence:
    """A count read about right, give or take ``width``."""
    p = [math.exp(-0.5 * ((k - n) / width) ** 2) for k in range(41)]
    return Evidence(tuple(v / sum(p) for v in p), 0.99 if big else 0.01)


def _two_moves_scene(
    between_areas: bool = True,
) -> tuple[Position, Position, Position, Observation, Observation, Observation]:
    """5- then 10-, the board between them seen only under a hand over squares 3, 4
    and 10, and the photo after both counted loosely, its areas a fifth off either
    way as a photo's are: 5- is certain, 10- is not, on the changes measured from the
    start (squares 0, 1, 6 and 10 unmeasured), nor on what grew between the photos.

    Returns the three boards, the hand frame, the photo, and the photo measured
    against the hand frame (the start under the hand), as vision would give them."""
    model = ChangeModel()
    start = Position.initial()
    first = play(start, "5-")
    second = play(first.position, "10-")
    between, end = first.position, second.position
    hid = {3, 4, 10}
    units = square_units(board_of(start), board_of(between), cleared_squares(first), model)
    held = Observation(
        tuple(hide(reading(between.board, between.big), hid)),
        still=True,
        partial=True,
        hidden=tuple(sq in hid for sq in range(12)),
        areas=tuple(
            None if sq in hid else (u if between_areas else 0.0) for sq, u in enumerate(units)
        ),
    )
    both = cleared_squares(first) | cleared_squares(second)
    units = square_units(board_of(start), board_of(end), both, model)
    unmeasured = {0, 1, 6}
    shown = Observation(
        tuple(
            _fuzzy(n, end.big[sq // 6] if sq % 6 == 0 else 0, 2.0) for sq, n in enumerate(end.board)
        ),
        still=True,
        areas=tuple(
            None if sq in unmeasured | {10} else u * (1.0 + 0.2 * (-1) ** sq)
            for sq, u in enumerate(units)
        ),
    )
    later = square_units(board_of(between), board_of(end), cleared_squares(second), model)
    again = replace(
        shown,
        areas=tuple(
            None if sq in unmeasured else (units[sq] if sq in hid else u)
            for sq, u in enumerate(later)
        ),
    )
    return start, between, end, held, shown, again


def _two_moves_behind_a_hand(
    between_areas: bool = True,
) -> tuple[Referee, Position, Position, Observation, Observation]:
    """The referee of :func:`_two_moves_scene` after its hand frame."""
    start, between, end, held, shown, again = _two_moves_scene(between_areas)
    ref = Referee()
    ref.observe(reading(start.board, start.big), still=True)
    assert ref.see(held).state == "moving" and ref.partials_held == 1
    return ref, between, end, shown, again


def test_the_board_a_hand_frame_showed_between_two_moves_is_trusted_for_the_second() -> None:
    ref, between, end, shown, again = _two_moves_behind_a_hand()
    trusted = ref.trusted_boards
    report = ref.see(shown, earlier=True)
    assert report.earlier_trusted and [str(a.move) for a in report.accepted] == ["5-"]
    assert ref.position == between and ref.trusted_boards == trusted + 1
    # vision now compares with the hand frame (but under the hand, with the start)
    report = ref.see(again, again=True)
    assert [str(a.move) for a in report.accepted] == ["10-"] and report.confirmed
    assert ref.position == end


def test_a_hand_frame_whose_changes_do_not_show_the_first_move_is_not_trusted() -> None:
    ref, _, _, shown, _ = _two_moves_behind_a_hand(between_areas=False)
    trusted = ref.trusted_boards
    report = ref.see(shown, earlier=True)
    assert not report.earlier_trusted and ref.trusted_boards == trusted
    # judged on as before: 5- taken, and the players asked about the move after it
    assert [str(a.move) for a in report.accepted] == ["5-"] and report.state == "ambiguous"


def test_without_a_held_frame_the_first_of_two_moves_is_judged_on_as_before() -> None:
    ref, _, _, shown, _ = _two_moves_behind_a_hand()
    trusted = ref.trusted_boards
    report = ref.see(shown)
    assert not report.earlier_trusted and ref.trusted_boards == trusted
    assert [str(a.move) for a in report.accepted] == ["5-"] and report.state == "ambiguous"
    assert report.verdict is not None and "10-" in [str(m) for m in report.verdict.choices]


def test_a_photo_after_more_moves_than_are_weighed_is_asked_about_not_disputed() -> None:
    """Three moves made behind hand frames that hid most of the board: the photo after
    them fits no run of two moves (all the referee weighs at once), but that is no
    foul, as more moves may have been made: the players are asked for the first and
    the same photo judged again after each answer."""
    ref = Referee()
    game = Game()
    ref.observe(reading(game.position.board, game.position.big), still=True)
    hid = set(range(12)) - {5}
    for move in ("1+", "9-", "4-"):
        game.play(move)
        board = hide(reading(game.position.board, game.position.big), hid)
        frame = Observation(tuple(board), still=True, partial=True)
        assert ref.see(frame).state == "moving"
    shown = Observation(tuple(reading(game.position.board, game.position.big)), still=True)
    report = ref.see(shown)
    assert report.state == "ambiguous" and not report.accepted, report.detail
    assert ref.confirm("1+").behind
    # two moves left: after a question the players are asked for the first of them
    report = ref.see(shown, again=True)
    assert report.state == "ambiguous" and "9-" in report.detail
    assert ref.confirm("9-").behind
    report = ref.see(shown, again=True)
    assert [str(a.move) for a in report.accepted] == ["4-"], report.detail
    assert ref.position == game.position


def test_a_photo_judged_again_after_the_held_frame_still_counts_as_a_move_shown() -> None:
    """The referee trusts the hand frame's board (the first move) and judges the photo
    again against it, but cannot tell the second move there: the next photo then
    shows two moves since the trusted board, and is weighed for two (the first of
    them asked), not called a foul for fitting no single move."""
    ref, between, end, shown, again = _two_moves_behind_a_hand()
    assert ref.see(shown, earlier=True).earlier_trusted and ref.position == between
    blurred = replace(
        again,
        reading=tuple(_fuzzy(n, 0, 6.0) for n in end.board),
        areas=tuple(None for _ in end.board),
    )
    assert not ref.see(blurred, again=True).accepted  # the second move is not told
    game = Game(start=between)
    game.play("10-")
    game.play(next(iter(game.legal_moves())))
    after = game.position
    report = ref.see(Observation(reading(after.board, after.big), still=True))
    assert report.state != "dispute", report.detail
    assert report.verdict is not None and report.verdict.behind
    assert ref.pending is not None and str(ref.pending.choices[0]) == "10-"


def doubtful_first_photo() -> tuple[Referee, Position, list[Evidence]]:
    """A referee past the opening, and a photo that fits 2+ and 4- equally."""
    ref = Referee()
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    a, b = play(start, "2+").position.board, play(start, "4-").position.board
    return ref, start, [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]


def test_a_photo_in_doubt_waits_for_the_next_which_decides_both_moves() -> None:
    ref, start, doubtful = doubtful_first_photo()
    held = ref.observe(doubtful, still=True)
    assert held.state == "moving" and not held.accepted
    assert ref.partials_held == 1
    after = play(play(start, "4-").position, "7+").position
    other_way = {
        play(play(start, "2+").position, m).position.board
        for m in legal_moves(play(start, "2+").position)
    }
    assert after.board not in other_way  # (the test's premise: only 4- then 7+ fits)
    report = ref.observe(reading(after.board, after.big), still=True)
    assert report.state == "settled", report.detail
    assert [str(a.move) for a in report.accepted] == ["4-", "7+"]
    assert all(a.how == "camera" for a in report.accepted)
    assert ref.position == after


def test_a_photo_in_doubt_is_asked_about_once_the_photo_after_it_is_lost() -> None:
    ref, start, doubtful = doubtful_first_photo()
    assert ref.observe(doubtful, still=True).state == "moving"
    ref.observe(None, fit=False, reason="unreadable image", still=True)
    after = play(play(start, "4-").position, "7+").position
    report = ref.observe(reading(after.board, after.big), still=True)
    assert report.state == "ambiguous" and not report.accepted
    assert ref.position == start


def test_a_camera_config_may_ask_at_once_instead_of_waiting() -> None:
    ref = Referee(config=RefereeConfig(defer_doubt=False))
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    _, _, doubtful = doubtful_first_photo()
    assert ref.observe(doubtful, still=True).state == "ambiguous"


def test_the_photo_after_one_in_doubt_asks_about_its_move_rather_than_wait_again() -> None:
    ref, start, doubtful = doubtful_first_photo()
    assert ref.observe(doubtful, still=True).state == "moving"
    # the next photo has a hand over all but square 5: it cannot decide, and held
    # too, it would leave a third photo to be judged for three moves
    after = play(play(start, "4-").position, "7+").position
    covered = hide(reading(after.board, after.big), set(range(12)) - {5})
    report = ref.observe(covered, still=True, partial=True)
    assert report.state == "ambiguous" and report.behind
    assert {"2+", "4-"} <= {str(m) for m in report.verdict.choices}
    assert ref.confirm("4-").behind  # (then the photo is judged again from after it)
    assert ref.position == play(start, "4-").position


def test_a_photo_judged_again_after_a_runs_first_move_asks_rather_than_calls_a_foul(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run 4- then 8+ or 11+ fitted the photo, so 4- is taken alone; judged again
    from after it, no foul may be called on that photo (here reconcile is made to find
    none that fits, as measuring the changes from before 4- can)."""
    ref, start, doubtful = doubtful_first_photo()
    assert ref.observe(doubtful, still=True).state == "moving"
    between = play(start, "4-").position
    a, b = (play(between, m).position for m in ("8+", "11+"))
    assert a.big == b.big
    shown = [
        Evidence.either(a.board[sq], b.board[sq], a.big[sq // 6] if sq % 6 == 0 else 0)
        for sq in range(12)
    ]
    real = ref._reconciled

    def judged(reading: Any, **kw: Any) -> Any:
        verdict = real(reading, **kw)
        if ref.position == between:  # (judged again, after 4-)
            return replace(verdict, kind=VerdictKind.DISPUTE, mistake="no legal move fits")
        return verdict

    monkeypatch.setattr(ref, "_reconciled", judged)
    report = ref.observe(shown, still=True)
    assert [str(m.move) for m in report.accepted] == ["4-"]
    assert report.state == "ambiguous", report.detail
    assert {"8+", "11+"} <= {str(m) for m in report.verdict.choices}


def test_a_photo_in_doubt_that_a_live_stream_keeps_showing_waits_till_none_can_follow() -> None:
    """A live camera keeps showing the board held in doubt while the next player thinks:
    those frames wait for the next move (asked about, each would bring the question at
    once); told that no frame will follow (the pipeline's time limit, a folder's end),
    the referee asks, and trusts the board after the answer."""
    ref, start, doubtful = doubtful_first_photo()
    assert ref.observe(doubtful, still=True).state == "moving"
    waits = [ref.observe(doubtful) for _ in range(3 * ref.config.settle_frames)]
    assert {r.state for r in waits} == {"moving"} and waits[-1].detail == HELD_DOUBT_LIVE
    assert ref.position == start and ref.partials_held == 1
    asked = ref.observe(doubtful, final=True)
    assert asked.state == "ambiguous" and asked.verdict is not None
    assert {"2+", "4-"} <= {str(m) for m in asked.verdict.choices}
    assert asked.verdict is not None and not asked.behind  # (about the board shown)
    assert ref.confirm("4-").confirmed  # (the board the camera shows, trusted)
    assert ref.position == play(start, "4-").position and ref.partials_held == 0


def test_a_live_frame_with_a_hand_while_a_board_waits_is_no_witness() -> None:
    """The next player's hand over the board held in doubt: the next move has begun, and
    its clear board, not a frame of the move under way, decides (with the held one)."""
    ref, start, doubtful = doubtful_first_photo()
    for _ in range(ref.config.settle_frames):
        report = ref.observe(doubtful)
    assert (report.state, report.detail) == ("moving", HELD_DOUBT_LIVE)
    after = play(play(start, "4-").position, "7+").position
    hand = ref.observe(hide(reading(after.board, after.big), {1, 2, 3}), partial=True)
    assert hand.state == "moving" and ref.partials_held == 1
    for _ in range(ref.config.settle_frames):
        report = ref.observe(reading(after.board, after.big))
    assert [str(a.move) for a in report.accepted] == ["4-", "7+"], report.detail
    assert all(a.how == "camera" for a in report.accepted)


def test_a_live_hand_at_rest_while_a_board_waits_is_a_witness() -> None:
    """The hand over the board held in doubt rests there, and no clear frame follows
    before the next hands: the board under it is judged as the photo with an arm after
    a photo held in doubt is (4- and 7+ taken on it). Judged only as the next move
    begun, it was lost, and the clear board three moves on was left to the players."""
    ref, start, doubtful = doubtful_first_photo()
    for _ in range(ref.config.settle_frames):
        report = ref.observe(doubtful)
    assert (report.state, report.detail) == ("moving", HELD_DOUBT_LIVE)
    after = play(play(start, "4-").position, "7+").position
    hand = replace(_photo_with_a_hand(after, {1, 2, 3}), still=False)
    reports = [ref.see(hand) for _ in range(ref.config.settle_frames)]
    assert all(not r.accepted for r in reports[:-1])
    assert [str(a.move) for a in reports[-1].accepted] == ["4-", "7+"], reports[-1].detail
    assert ref.position == after


def test_a_live_moves_frames_with_motion_are_one_move_not_many() -> None:
    """A live camera sees a move in many frames with motion in them (not read): they are
    one move made, so the board after it is weighed whole (all the moves it may show),
    which is what lets it say where P0 sits."""
    ref = Referee()
    start = Position.initial()
    ref.vouch(Observation(reading(start.board, start.big), still=False))
    for _ in range(8):
        ref.observe(None, fit=False, reason="motion since the previous frame")
    after = play(start, "2+").position
    seen = Observation(reading(after.board, after.big))
    for _ in range(ref.config.settle_frames - 1):
        assert ref.see(seen).state == "moving"  # (not settled yet)
    weighed = ref.weigh(seen)
    assert weighed is not None and weighed.complete
    assert [str(m) for m in weighed.moves] == ["2+"]


def test_a_live_board_asked_about_its_one_move_is_trusted_once_answered() -> None:
    """A live board is weighed for the move its frames showed and one more (a move may
    begin before the camera sees the first settle); asked about its one move, the players
    answer about the board in view, which is trusted then. Judged again, it was asked
    about a second move nobody made, and the answers ran ahead of the game."""
    ref = Referee(config=RefereeConfig(defer_doubt=False))
    start = Position.initial()
    ref.observe(reading(start.board, start.big), still=True)
    a, b = play(start, "2+").position.board, play(start, "4-").position.board
    doubtful = [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]
    ref.see(MOTION)
    reports = [ref.observe(doubtful) for _ in range(RefereeConfig().settle_frames)]
    asked = reports[-1]
    assert asked.state == "ambiguous" and asked.verdict is not None and not asked.behind
    assert {"2+", "4-"} <= {str(m) for m in asked.verdict.choices}
    answered = ref.confirm("4-")
    assert answered.confirmed and not answered.behind
    assert ref.position == play(start, "4-").position and ref.state == "settled"


def test_moves_under_hands_at_rest_are_counted_where_no_frame_moved() -> None:
    """Three moves, the first two each shown under a hand at rest, the third's board
    clear, and no frame between any two boards seen moving (a camera that missed the
    hands coming and going): the board changing under the hand is a move, and so is
    the hand gone; the clear board is weighed for all three, the two rests its
    witnesses, as the photos of the same boards are."""
    settle = RefereeConfig().settle_frames
    ref = Referee()
    game = Game()
    ref.observe(reading(game.position.board, game.position.big), still=True)
    for move, under in (("5-", {1, 2, 4, 9, 10}), ("8+", {4, 5, 7, 9, 10})):
        game.play(move)
        for obs in _live_hand(game.position, under, resting=True, frames=settle + 1):
            assert not ref.see(obs).accepted
    game.play("3-")
    clear = Observation(reading(game.position.board, game.position.big))
    reports = [ref.see(clear) for _ in range(settle)]
    assert [str(a.move) for a in reports[-1].accepted] == ["5-", "8+", "3-"]
    assert ref.position == game.position

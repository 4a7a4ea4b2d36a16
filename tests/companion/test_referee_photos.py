"""Photos of settled scenes: what each may show, what a blind camera may decide, and
the change evidence in the fit check and after several moves."""

from __future__ import annotations

from typing import Any

import pytest

from companion.commands.track import _move_lines, _Players
from companion.referee import Observation, Referee
from companion.referee.change import ChangeEvidence, ChangeModel, square_units
from companion.referee.reconcile import (
    Evidence,
    Glimpse,
    Verdict,
    VerdictKind,
    board_of,
    cleared_squares,
    reconcile,
)
from engine import Move, Position, play

START = Position.from_text("1B|7,1,1,7,7|2B|0,0,6,6,6 P0 s6/0 q0/0 d0/0 n2")


def reading(board: tuple[tuple[int, ...], tuple[int, ...]]) -> list[Evidence]:
    counts, big = board
    return [Evidence.exact(n, big[sq // 6] if sq % 6 == 0 else 0) for sq, n in enumerate(counts)]


def torn(
    a: tuple[tuple[int, ...], tuple[int, ...]], b: tuple[tuple[int, ...], tuple[int, ...]]
) -> list[Evidence]:
    """Counts that fit two boards equally well."""
    return [
        Evidence.either(a[0][sq], b[0][sq], a[1][sq // 6] if sq % 6 == 0 else 0)
        for sq in range(len(a[0]))
    ]


def test_piles_the_camera_saw_stay_are_no_misfit_however_the_counter_reads_them() -> None:
    t = play(START, "4+")  # square 4 taken up, one pebble on each of 5..11
    after = board_of(t.position)
    seen = reading(after)
    seen[5], seen[9] = Evidence.exact(4), Evidence.exact(3)  # two piles read 4 low
    assert reconcile(START, seen).kind == VerdictKind.DISPUTE  # the counts alone: no fit
    units = square_units(board_of(START), after, cleared_squares(t), ChangeModel())
    kept = tuple(
        None if START.board[sq] == 0 else (0.2 if sq in cleared_squares(t) else 1.0)
        for sq in range(12)
    )
    verdict = reconcile(START, seen, change=ChangeEvidence(tuple(units), kept=kept))
    assert verdict.kind == VerdictKind.ACCEPT and str(verdict.move) == "4+", verdict.detail


def test_the_first_of_two_moves_is_taken_when_only_the_second_is_unclear() -> None:
    opening = Position.initial()
    between = play(opening, "2+").position
    a, b = board_of(play(between, "7+").position), board_of(play(between, "7-").position)
    verdict = reconcile(opening, torn(a, b), plies=2)
    assert verdict.kind == VerdictKind.ACCEPT and str(verdict.move) == "2+"
    assert verdict.behind and not verdict.follows  # the board shows more: judged again
    # the referee takes 2+ after a photo with a hand, then asks only about the second
    ref = Referee()
    ref.vouch(Observation(reading(board_of(opening)), still=True))
    hidden = tuple(sq in (8, 9, 10) for sq in range(12))
    covered = [
        Evidence((1 / 41,) * 41, 0.5) if h else e for e, h in zip(torn(a, b), hidden, strict=True)
    ]
    assert ref.observe(covered, still=True, partial=True, hidden=hidden).state == "moving"
    report = ref.observe(torn(a, b), still=True)
    assert [str(x.move) for x in report.accepted] == ["2+"] and report.state == "ambiguous"
    assert report.verdict is not None and {str(m) for m in report.verdict.choices} >= {"7+", "7-"}
    # two photos, two moves: the answer accounts for both, so the board is trusted
    answered = ref.confirm("7+")
    assert answered.confirmed and not answered.behind


def test_a_photo_says_nothing_moved_only_as_surely_as_it_would_say_a_move() -> None:
    after = board_of(play(START, "4+").position)
    unsure = torn(board_of(START), after)  # as likely unchanged as 4+
    photos = Referee(start=START)
    photos.vouch(Observation(reading(board_of(START)), still=True))
    assert photos.observe(unsure, still=True).state != "waiting"
    live = Referee(start=START)
    live.vouch(Observation(reading(board_of(START)), still=True))
    trusted = live.trusted_boards
    states = [live.observe(unsure).state for _ in range(3)]
    # a live stream: no move yet, nothing is lost by waiting; but the board is not trusted
    # as unchanged either (vision would take it for its reference, and a move's changes
    # would never show again)
    assert states[-1] == "moving" and live.trusted_boards == trusted
    sure = [live.observe(reading(board_of(START))) for _ in range(3)]
    assert sure[-1].state == "waiting" and sure[-1].confirmed


def test_a_camera_that_cannot_see_the_pieces_asks_instead_of_deciding() -> None:
    ref = Referee(start=START)
    blurred = [Evidence.exact(0, 1 if sq % 6 == 0 else 0) for sq in range(12)]  # reads nothing
    ref.vouch(Observation(blurred, still=True))
    assert ref.blind
    report = ref.observe(reading(board_of(play(START, "4+").position)), still=True)
    assert not report.accepted and report.state == "ambiguous"
    assert report.verdict is not None and "4+" in {str(m) for m in report.verdict.choices}
    sharp = Referee(start=START)
    sharp.vouch(Observation(reading(board_of(START)), still=True))
    assert not sharp.blind


def test_a_blind_camera_takes_a_move_its_changed_areas_alone_prove() -> None:
    """The counter reads nothing here, but where the move picked up and dropped shows."""
    t = play(START, "4+")
    after = board_of(t.position)
    units = square_units(board_of(START), after, cleared_squares(t), ChangeModel())
    blurred = [Evidence.exact(0, 1 if sq % 6 == 0 else 0) for sq in range(12)]
    kept = tuple(None if START.board[sq] == 0 else (0.0 if sq == 4 else 1.0) for sq in range(12))
    ref = Referee(start=START)
    ref.vouch(Observation(blurred, still=True))
    assert ref.blind
    unsure = torn(board_of(START), after)  # the counts: as likely unchanged as 4+
    seen = ref.observe(unsure, still=True, areas=tuple(units), in_place=kept)
    assert [str(a.move) for a in seen.accepted] == ["4+"]
    assert seen.verdict is not None and seen.verdict.change_confidence is not None
    assert seen.accepted[0].confidence <= seen.verdict.change_confidence
    # no area changed anywhere: "nothing happened" is still not taken from a blind photo
    quiet = Referee(start=START)
    quiet.vouch(Observation(blurred, still=True))
    nothing = quiet.observe(unsure, still=True, areas=(0.0,) * 12, in_place=(1.0,) * 12)
    assert nothing.state != "waiting" and not nothing.accepted


def test_each_camera_move_is_checked_against_the_answers_by_its_own_ply() -> None:
    ref = Referee(start=START)
    ref.vouch(Observation(reading(board_of(START)), still=True))
    report = ref.observe(reading(board_of(play(START, "4+").position)), still=True)
    assert [str(a.move) for a in report.accepted] == ["4+"]
    right = _Players([Move.parse("4+")], START.ply)
    assert "expected" not in _move_lines(report, "f1", ref, right)[0]
    wrong = _Players([Move.parse("5+")], START.ply)
    line = _move_lines(report, "f1", ref, wrong)[0]
    assert line["expected"] == "5+" and [str(m) for m in ref.game.moves] == ["5+"]


def test_a_second_photo_of_a_move_half_made_is_asked_about() -> None:
    """Photos show settled scenes: one caught mid-move is waited on, a second in a row
    means the referee lost the thread, so the players say what was played."""
    opening = Position.initial()
    halfway = board_of(opening)
    t = play(opening, "2+")
    for square in (3, 4, 5):  # picked up square 2, three of its five sown so far
        counts = list(halfway[0])
        counts[square] += 1
        halfway = (tuple(counts), halfway[1])
    counts = list(halfway[0])
    counts[2] = 0
    halfway = (tuple(counts), halfway[1])
    ref = Referee()
    ref.vouch(Observation(reading(board_of(opening)), still=True))
    assert ref.observe(reading(halfway), still=True).state == "moving"
    second = ref.observe(reading(halfway), still=True)
    assert second.state == "ambiguous" and not second.accepted
    assert second.verdict is not None and second.verdict.choices[0] == t.move
    # a live stream waits as long as the scene takes
    live = Referee()
    live.vouch(Observation(reading(board_of(opening)), still=True))
    assert {live.observe(reading(halfway)).state for _ in range(6)} == {"moving"}


def test_two_photos_of_a_pile_no_move_touched_between_them_are_one_witness() -> None:
    """An arm's photo after the first move and a clear photo after the second read the
    piles the second move left alone the same way, errors included. Here 4- and 1- differ
    only by a pebble on each of two such piles, and both photos read them a pebble short
    (counts and changed areas, as a generated game on wood did): counted twice, that
    took 1- at 0.9999; counted once, the players are asked."""
    before = Position.from_text("5B|2,4,2,2,0|5B|0,0,1,4,10 P0 s13/2 q0/0 d0/0 n4")
    played = play(before, "4-")
    misread = play(before, "1-")
    final = play(played.position, "9-")
    short = play(misread.position, "9-")
    assert board_of(final.position)[0][4:] == board_of(short.position)[0][4:]

    def leaning(truth: tuple[int, ...], shown: tuple[int, ...]) -> list[Evidence]:
        out = reading((truth, (1, 1)))
        for sq in (2, 3):  # a pebble short, and fairly sure of it
            probs = [0.0] * (truth[sq] + 3)
            probs[shown[sq]], probs[truth[sq]] = 0.75, 0.25
            out[sq] = Evidence(tuple(probs))
        return out

    start = board_of(before)
    model = ChangeModel()

    def areas(true: tuple, short_: tuple, gone: frozenset[int]) -> tuple[float, ...]:
        # between what the two boards predict, nearer the one a pebble short
        a = square_units(start, true, gone, model)
        b = square_units(start, short_, gone, model)
        return tuple(0.3 * x + 0.7 * y for x, y in zip(a, b, strict=True))

    gone_now = cleared_squares(misread) | cleared_squares(short)
    areas_now = areas(board_of(final.position), board_of(short.position), gone_now)
    areas_then = areas(
        board_of(played.position), board_of(misread.position), cleared_squares(misread)
    )
    witness = Glimpse(
        tuple(leaning(board_of(played.position)[0], board_of(misread.position)[0])),
        ChangeEvidence(tuple(areas_then)),
    )
    seen = leaning(board_of(final.position)[0], board_of(short.position)[0])
    alone = reconcile(before, seen, plies=2, change=ChangeEvidence(tuple(areas_now)))
    both = reconcile(
        before, seen, plies=2, earlier=(witness,), change=ChangeEvidence(tuple(areas_now))
    )
    assert alone.kind != VerdictKind.ACCEPT
    assert both.kind != VerdictKind.ACCEPT, (both.move, both.confidence)
    assert abs(both.confidence - alone.confidence) < 0.01


def test_a_lone_pebble_nudged_and_seen_again_after_more_drops_is_one_witness() -> None:
    """A piece dropped beside a lone pebble nudges it, which the changed areas read much
    as that pebble taken up and one sown into its square. An arm's photo shows it so, and
    the next photo, after a move that drops one more there, shows it again: the same
    nudge, not a second witness. Here 2- (the pebble dropped on) and 4- (taken up) are
    told apart by nothing else (counts torn between them; a generated game whose arm
    photos read it so took 4- at 0.9996): counted twice that is a move taken, once, a
    question."""
    before = play(play(Position.initial(), "5+").position, "9+").position
    played, misread = play(before, "2-"), play(before, "4-")
    final, wrong = play(played.position, "9-"), play(misread.position, "9-")
    start = board_of(before)
    model = ChangeModel()
    lone = 4
    assert start[0][lone] == 1 and lone in cleared_squares(misread)
    assert lone not in cleared_squares(played) | cleared_squares(final)

    def areas(true: tuple, shown: tuple, gone: frozenset[int], shown_gone: frozenset[int]) -> tuple:
        # as the true boards predict, but the lone pebble's square as if it was taken up
        out = square_units(start, true, gone, model)
        out[lone] = square_units(start, shown, shown_gone, model)[lone]
        return tuple(out)

    taken = cleared_squares(misread)
    then = areas(
        board_of(played.position), board_of(misread.position), cleared_squares(played), taken
    )
    gone_now = cleared_squares(played) | cleared_squares(final)
    now = areas(
        board_of(final.position), board_of(wrong.position), gone_now, taken | cleared_squares(wrong)
    )

    def kept(true: tuple, gone: frozenset[int]) -> tuple[float, ...]:
        # the share of the reference's pebbles in place: the lone one's looks moved
        out = [
            0.4 if sq in gone else (0.97 if n > start[0][sq] else 1.0)
            for sq, n in enumerate(true[0])
        ]
        out[lone] = 0.4
        return tuple(out)

    witness = Glimpse(
        tuple(torn(board_of(played.position), board_of(misread.position))),
        ChangeEvidence(then, kept=kept(board_of(played.position), cleared_squares(played))),
    )
    seen = torn(board_of(final.position), board_of(wrong.position))
    change = ChangeEvidence(now, kept=kept(board_of(final.position), gone_now))
    verdict = reconcile(before, seen, plies=2, earlier=(witness,), change=change)
    alone = reconcile(before, seen, plies=2, change=change)
    assert verdict.kind is VerdictKind.AMBIGUOUS, (verdict.kind, verdict.move, verdict.confidence)
    assert {str(m) for m in verdict.choices} >= {"2-", "4-"}
    assert abs(verdict.confidence - alone.confidence) < 0.01  # the photo tells nothing new


def test_a_first_photo_of_the_trusted_board_rules_out_no_first_move_of_a_run() -> None:
    """Three photos, then a fourth after three moves: the first photo may show the board
    before any move (a photo held while the side was open), so a first move it does
    not show is still followed to the end. 9+ here sows far, and the trusted board is
    more than 60 nats from its result in that photo: ruled out as the board after the
    first move (as with two photos), the run 9+, 1+, 10+ would be lost and the last
    photo called a foul."""
    start = Position.from_text("1B|6,0,0,6,6|1B|6,0,6,6,6 P1 s6/0 q0/0 d0/0 n1")
    boards, position = [start], start
    for move in ("9+", "1+", "10+"):
        position = play(position, move).position
        boards.append(position)
    photos = tuple(Glimpse(tuple(reading(board_of(b)))) for b in boards[:3])
    verdict = reconcile(start, reading(board_of(boards[3])), plies=3, earlier=photos)
    assert verdict.kind == VerdictKind.ACCEPT, (verdict.kind, verdict.move)
    assert [str(verdict.move), *(str(t.move) for t in verdict.follows)] == ["9+", "1+", "10+"]


def test_an_arm_photo_that_would_leave_a_photo_without_its_move_is_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Photos of settled scenes come one per move. Where the photo judged has an arm over
    it and the moves its reading favours are fewer than the photos since the trusted
    board, the move the missing photo showed may lie under the arm: the referee waits
    for a clear photo rather than trust the board (a run of moves taken so on generated
    games left the referee a move behind, and every later photo was judged wrongly)."""
    import companion.referee.state as state_module

    opening = Position.initial()
    first = play(opening, "2+")
    plies: list[int] = []

    def unsure_then_one_move(position: Position, reading: object, *_: object, **kw: Any) -> Any:
        plies.append(int(kw["plies"]))
        if len(plies) == 1:  # the first arm photo: nothing decided
            return Verdict(VerdictKind.AMBIGUOUS, 0.5, choices=(first.move,))
        return Verdict(VerdictKind.ACCEPT, 0.9999, first.move, first)

    hidden = tuple(sq in (9, 10) for sq in range(12))
    covered = [
        Evidence((1 / 41,) * 41, 0.5) if h else e
        for e, h in zip(reading(board_of(first.position)), hidden, strict=True)
    ]
    for clear in (False, True):
        plies.clear()
        monkeypatch.setattr(state_module, "reconcile", unsure_then_one_move)
        ref = Referee()
        ref.vouch(Observation(reading(board_of(opening)), still=True))
        held = ref.observe(covered, still=True, partial=True, hidden=hidden)
        assert held.state == "moving" and plies == [1]
        if clear:  # a clear photo may take the one move: nothing hides a second one
            report = ref.observe(reading(board_of(first.position)), still=True)
            assert plies[-1] == 2 and [str(a.move) for a in report.accepted] == ["2+"]
        else:
            report = ref.observe(covered, still=True, partial=True, hidden=hidden)
            assert plies[-1] == 2 and report.state == "moving" and not report.accepted
            assert ref.position == opening


def test_arm_photos_weigh_each_candidate_of_a_run_as_they_would_weigh_it_alone() -> None:
    """The arm photos weigh the boards of hundreds of candidate runs at once, as arrays:
    each candidate's term must be the one it gets weighed alone (no row borrowing another
    row's fates, counts or alignment), with photos pooled with the frame judged and
    weighed given its changed areas, and without."""
    from companion.referee.reconcile import ReconcileConfig, _glimpsed, _Witness, candidates
    from engine import Rules

    before = START
    boards = [before]
    moves = ("1+", "9-", "2+")
    for move in moves:
        boards.append(play(boards[-1], move).position)
    start = board_of(before)
    model = ChangeModel()

    def areas(board: Position, gone: frozenset[int], wobble: float) -> tuple[float, ...]:
        units = square_units(start, board_of(board), gone, model)
        return tuple(max(0.0, u + wobble * ((sq * 7) % 5 - 2)) for sq, u in enumerate(units))

    gone: frozenset[int] = frozenset()
    photos = []
    for move, a, b in zip(moves, boards, boards[1:], strict=False):
        gone |= cleared_squares(play(a, move))
        evidence = ChangeEvidence(areas(b, gone, 0.1 * len(photos) + 0.1), kept=(0.9,) * 12)
        photos.append(Glimpse(tuple(torn(board_of(b), board_of(a))), evidence))
    now = ChangeEvidence(areas(boards[-1], gone, 0.05), kept=(0.95,) * 12)
    seen = torn(board_of(boards[-1]), board_of(boards[-2]))
    pool = [c for c, _ in candidates(before, Rules(), None, 3, None)]
    assert len(pool) > 300 and len({len(c.path) for c in pool}) == 3
    cfg = ReconcileConfig()
    for count, pooled in ((1, (seen, now.areas)), (2, None), (3, None)):
        witnesses = [_Witness(g, start, cfg, pooled, now) for g in photos[:count]]
        together = _glimpsed(witnesses, start, pool)
        alone = [_glimpsed(witnesses, start, [c])[0] for c in pool]
        assert max(abs(a - b) for a, b in zip(together, alone, strict=True)) < 1e-9
        assert len({round(v, 6) for v in together}) > 20  # (the photos tell runs apart)

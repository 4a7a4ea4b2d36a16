"""Reconciling camera readings with the engine: accept, wait, ask, object."""

from __future__ import annotations

from companion.referee.reconcile import (
    Evidence,
    ReconcileConfig,
    VerdictKind,
    after_sowing,
    board_of,
    candidates,
    reconcile,
)
from engine import Move, Position, Rules, legal_moves, play


def exact(board: tuple[int, ...], big: tuple[int, int], sure: float = 0.98) -> list[Evidence]:
    return [
        Evidence.exact(n, big[sq // 6] if sq % 6 == 0 else 0, sure) for sq, n in enumerate(board)
    ]


def test_every_legal_result_is_accepted_from_a_clean_reading() -> None:
    start = Position.initial()
    for move in legal_moves(start):
        after = play(start, move).position
        verdict = reconcile(start, exact(after.board, after.big))
        assert verdict.kind == "accept", (move, verdict.detail)
        assert verdict.transition is not None
        assert verdict.transition.position == after


def test_unchanged_board_means_waiting() -> None:
    start = Position.initial()
    assert reconcile(start, exact(start.board, start.big)).kind == "unchanged"


def test_board_before_the_refill_is_the_move_and_the_refill_is_owed() -> None:
    start = Position.from_text("0B|1,0,13,0,0|0B|0,0,0,0,0 P0 s20/16 q0/0 d0/0 n0")
    t = play(start, "3+")  # V11: P1 must refill afterwards
    before_refill = list(t.position.board)
    for sq in range(7, 12):
        before_refill[sq] -= 1
    verdict = reconcile(start, exact(tuple(before_refill), t.position.big))
    assert verdict.kind == "accept" and not verdict.refilled
    done = reconcile(start, exact(t.position.board, t.position.big))
    assert done.kind == "accept" and done.refilled


def test_pebble_in_the_wrong_square_is_a_dispute_naming_the_squares() -> None:
    start = Position.initial()
    after = list(play(start, "2+").position.board)  # 1 6 0 0 6 6 | 1 | 6 0 6 6 6
    after[4] -= 1
    after[5] += 1
    verdict = reconcile(start, exact(tuple(after), (1, 1)))
    assert verdict.kind == "dispute"
    assert verdict.mistake == "pebble in the wrong square"
    assert verdict.move == Move.parse("2+")
    assert {d.square for d in verdict.diffs} == {4, 5}


def test_captured_pebbles_left_on_the_board_are_named() -> None:
    start = Position.initial()
    t = play(start, "2+")
    board = list(t.position.board)
    board[3] = 6  # the capture of square 3 was not taken off
    verdict = reconcile(start, exact(tuple(board), (1, 1)))
    assert verdict.kind == "dispute"
    assert verdict.mistake == "captured pebbles left on the board"


def test_forbidden_quan_non_capture_is_named() -> None:
    start = Position.initial()
    loose = play(start, "1-", Rules(quan_non_min=0)).position
    verdict = reconcile(start, exact(loose.board, loose.big))
    assert verdict.kind == "dispute" and verdict.mistake == "quan non captured"


def test_vague_reading_between_two_moves_asks_the_players() -> None:
    start = Position.initial()
    a = play(start, "2+").position.board
    b = play(start, "4-").position.board
    reading = [Evidence.either(a[sq], b[sq], int(sq % 6 == 0)) for sq in range(12)]
    verdict = reconcile(start, reading)
    assert a != b
    assert verdict.kind == "ambiguous"
    assert set(verdict.choices) >= {Move.parse("2+"), Move.parse("4-")}


def test_nothing_fits_is_a_dispute_against_the_closest_legal_result() -> None:
    start = Position.initial()
    verdict = reconcile(start, exact((0, 9, 9, 0, 0, 0, 0, 9, 9, 0, 0, 0), (0, 0)))
    assert verdict.kind == "dispute" and verdict.mistake is None
    assert verdict.diffs


def coarse(board: tuple[int, ...], big: tuple[int, int], sigma: float = 1.2) -> list[Evidence]:
    """A counter that is only ever roughly right: Gaussian over counts, centred on the truth."""
    out = []
    for sq, n in enumerate(board):
        weights = [pow(2.718281828, -0.5 * ((k - n) / sigma) ** 2) for k in range(41)]
        total = sum(weights)
        stone = big[sq // 6] if sq % 6 == 0 else 0
        out.append(Evidence(tuple(w / total for w in weights), 0.97 if stone else 0.03))
    return out


def test_coarse_readings_accept_the_move_not_one_of_its_many_possible_mistakes() -> None:
    # Too coarse to see a pebble one square off, but clear about which move was made:
    # the dozens of one-pebble-off variants must not outvote the move played right.
    start = Position.initial()
    accepted = 0
    for move in legal_moves(start):
        after = play(start, move).position
        verdict = reconcile(start, coarse(after.board, after.big))
        assert verdict.kind in ("accept", "ambiguous"), (move, verdict.detail)
        if verdict.kind == "accept":
            accepted += 1
            assert verdict.move == move
        else:
            assert move in verdict.choices
    assert accepted >= 8


def test_fit_is_judged_against_the_readings_own_best_board() -> None:
    # The same correct result stays a good fit however wide the distributions are;
    # a board far from every candidate is no fit at any width.
    start = Position.initial()
    after = play(start, "2+").position
    for sigma in (0.4, 1.2, 2.5):
        assert reconcile(start, coarse(after.board, after.big, sigma)).kind in (
            "accept",
            "ambiguous",
        )
    nonsense = (0, 14, 0, 14, 0, 14, 0, 0, 14, 0, 14, 0)
    assert reconcile(start, coarse(nonsense, (1, 1), 0.4)).kind == "dispute"


def test_a_photo_unsure_whether_anything_happened_asks_rather_than_objects() -> None:
    # Each square reads the opening's count or the count after 2+ about evenly, and square
    # 3 one piece off the move's: "nothing happened" and "2+" share nearly all the weight.
    # Neither is a mistake to object to; the players are asked.
    start = Position.initial()
    after = play(start, "2+").position
    reading = []
    for sq in range(12):
        probs = [0.001] * 41
        probs[after.board[sq] + (1 if sq == 3 else 0)] += 0.55
        probs[start.board[sq]] += 0.45
        total = sum(probs)
        reading.append(Evidence(tuple(p / total for p in probs), 0.97 if sq % 6 == 0 else 0.03))
    verdict = reconcile(start, reading, still=True)
    assert verdict.kind == "ambiguous" and Move.parse("2+") in verdict.choices


def test_a_board_several_moves_leave_offers_them_all_not_one() -> None:
    # The last move sweeps the board bare whichever of six was played: the photo cannot
    # tell them apart, so the question offers several of them, never one alone.
    start = Position.from_text("0|1,1,1,1,1|15|1,0,1,1,1 P0 s13/13 q1/1 d0/0 n0")
    bare = {m for m in legal_moves(start) if not any(play(start, m).position.board)}
    assert len(bare) == 6
    verdict = reconcile(start, exact((0,) * 12, (0, 0)))
    assert verdict.kind == "ambiguous"
    assert len(verdict.choices) == 3 and set(verdict.choices) <= bare


def test_the_board_before_the_sweep_tells_which_move_ended_the_game() -> None:
    # 3- takes the last mandarin with pieces still in the rows: the players sweep them
    # into their stores, and the bare board after that could be any game-ending move,
    # but the camera saw the board the last pebble left, which is 3-'s alone.
    start = Position.from_text("15B|0,1,1,1,0|0|0,0,1,0,0 P0 s17/14 q1/0 d0/0 n16 t-/0")
    move = Move.parse("3-")
    ended = play(start, move)
    assert ended.position.over and not any(ended.position.board)
    board, big = after_sowing(ended)
    assert any(board)
    verdict = reconcile(start, exact(board, (big[0], big[1])))
    assert verdict.kind == "accept" and verdict.move == move, verdict.detail


def test_runs_of_three_are_followed_only_from_the_first_moves_given_and_carry_their_path() -> None:
    start = Position.initial()
    rules = Rules()
    first = Move.parse("2+")
    pool = candidates(start, rules, plies=3, deep={first})
    runs = [c for c, _ in pool if len(c.follows) == 2]
    assert runs and {c.move for c in runs} == {first}
    # every run of two still starts from any first move (a photo may show two)
    assert {c.move for c, _ in pool if len(c.follows) == 1} == set(legal_moves(start))
    for cand in runs[:5]:
        t1 = play(start, first)
        t2 = play(t1.position, cand.follows[0])
        assert [board for board, _ in cand.path] == [board_of(t1.position), board_of(t2.position)]


def _between_a_mistake_and_two_runs(mistake_share: float) -> list[Evidence]:
    """A reading that puts ``mistake_share`` of each square on 2+ played with a pebble one
    square off, and the rest on 2+ followed by 7- or by 9- (two moves since the last
    trusted board), half each."""
    first = play(Position.initial(), "2+").position
    slipped = list(first.board)
    slipped[4] -= 1
    slipped[5] += 1
    runs = [play(first, m).position.board for m in ("7-", "9-")]
    out = []
    for sq in range(12):
        probs = [0.0005] * 41
        probs[slipped[sq]] += mistake_share
        for board in runs:
            probs[board[sq]] += (1.0 - mistake_share) / 2
        total = sum(probs)
        stone = 0.97 if sq % 6 == 0 else 0.03
        out.append(Evidence(tuple(p / total for p in probs), stone))
    return out


def test_a_mistake_no_likelier_than_the_lawful_runs_together_is_asked_about() -> None:
    # the slipped pebble is the likeliest single story (0.48), the two lawful runs
    # together likelier still: ask how the moves began rather than call a foul
    start = Position.initial()
    verdict = reconcile(start, _between_a_mistake_and_two_runs(0.57), plies=2)
    assert verdict.ranked[0].kind == "mistake" and verdict.confidence < 0.5
    assert verdict.kind == "ambiguous" and verdict.behind
    assert Move.parse("2+") in verdict.choices
    # ... while a mistake likelier than all of them together is still objected to
    surer = reconcile(start, _between_a_mistake_and_two_runs(0.62), plies=2)
    assert surer.kind == "dispute" and surer.mistake == "pebble in the wrong square"


def test_no_foul_is_called_while_a_lawful_run_that_fits_is_likeliest() -> None:
    """Two moves since the trusted board: the counts favour 2+ then 7+ (0.7 to 0.3 on
    the two squares it and 4+ then 7+ leave apart), and the bar for a fit is so tight that
    only the first fits. Its share is under the bar for a question, but the rest is a
    lawful run the counts fit worse, not a mistake: the players are asked, not told they
    played wrong (a generated opening under arms was called a foul so)."""
    start = Position.from_text("1B|7,1,1,7,7|2B|0,0,6,6,6 P0 s6/0 q0/0 d0/0 n2")
    a = board_of(play(play(start, "2+").position, "7+").position)
    b = board_of(play(play(start, "4+").position, "7+").position)
    seen = []
    for sq in range(12):
        probs = [0.001] * (max(a[0][sq], b[0][sq]) + 3)
        if a[0][sq] == b[0][sq]:
            probs[a[0][sq]] = 0.98
        else:
            probs[a[0][sq]], probs[b[0][sq]] = 0.7, 0.3
        seen.append(Evidence(tuple(probs), float(a[1][sq // 6]) if sq % 6 == 0 else 0.0))
    verdict = reconcile(start, seen, plies=2, config=ReconcileConfig(max_deficit=0.5))
    assert verdict.confidence < 0.95
    assert verdict.kind == VerdictKind.AMBIGUOUS, (verdict.kind, verdict.move)
    assert [str(m) for m in verdict.choices] == ["2+"] and verdict.behind


def test_several_moves_at_once_need_more_certainty_than_one() -> None:
    # 2+ then 9- read vaguely: the run is the likeliest story at about 0.9995, enough
    # for one move (``accept``) and for a run (``accept_run``) at the defaults
    start = Position.initial()
    after = play(play(start, "2+").position, "9-").position
    seen = exact(after.board, after.big, sure=0.7)
    run = reconcile(start, seen, plies=2)
    assert run.kind == "accept" and [str(t.move) for t in run.follows] == ["9-"]
    assert ReconcileConfig().accept < run.confidence < 0.9999
    # a stricter bar for runs: only the first move is taken (the rest judged after it)
    strict = reconcile(start, seen, plies=2, config=ReconcileConfig(accept_run=0.9999))
    assert strict.kind == "accept" and str(strict.move) == "2+"
    assert strict.follows == () and strict.behind

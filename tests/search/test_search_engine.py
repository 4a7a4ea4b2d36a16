"""Behaviour of engine.search: legality, determinism, the time budget, tactics, repetition."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine.evaluate import (
    DEFAULT_WEIGHTS,
    FEATURES,
    EvalWeights,
    evaluate,
    features,
    settlement_diff,
)
from engine.game import Game
from engine.move import Move
from engine.play import legal_moves, play
from engine.position import Position
from engine.rules import Rules
from engine.search import (
    CHECK_EVERY,
    CONTEMPT,
    HOPELESS_FROM,
    LEVELS,
    WIN,
    GameMemory,
    GameOverError,
    SearchCache,
    ServedGames,
    Threat,
    best_capture,
    choose_move,
    hint,
    level_move,
)

RULES = Rules()


class FakeClock:
    """Advances by ``step`` seconds at every read (about what 16 nodes cost), so no test
    sleeps or depends on the machine's load."""

    def __init__(self, step: float = 0.0002) -> None:
        self.t = 100.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.t += self.step
        self.reads += 1
        return self.t


def random_positions(n: int, seed: int) -> list[Position]:
    """Unfinished positions reached by random play, from the opening to late endgames."""
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < n:
        game = Game(RULES)
        for _ in range(rng.randint(0, 40)):
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
        if not game.is_over:
            out.append(game.position)
    return out


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_always_a_legal_move(depth: int) -> None:
    for i, pos in enumerate(random_positions(25, seed=depth)):
        result = choose_move(pos, RULES, depth=depth, rng=random.Random(i))
        assert result.move in legal_moves(pos, RULES), pos
        assert result.pv[0] == result.move
        assert 1 <= result.depth <= depth
        assert result.nodes > 0


def test_legal_under_variants() -> None:
    variants = [
        Rules(direction="ccw_only"),
        Rules(quan_non_min=0),
        Rules(mandarin_stop="always"),
        Rules(no_refill="pass"),
        Rules(end_when="big_captured", leftover="taker"),
    ]
    rng = random.Random(5)
    for rules in variants:
        game = Game(rules)
        while not game.is_over and len(game.transitions) < 60:
            move = choose_move(game.position, rules, depth=2, rng=rng).move
            assert move in game.legal_moves()
            game.play(move)


def test_deterministic_per_seed() -> None:
    pos = random_positions(1, seed=11)[0]
    a = choose_move(pos, RULES, depth=5, rng=random.Random(42))
    b = choose_move(pos, RULES, depth=5, rng=random.Random(42))
    assert (a.move, a.score, a.depth, a.nodes, a.pv) == (b.move, b.score, b.depth, b.nodes, b.pv)
    # The fake clock makes even a timed search reproducible.
    c = choose_move(pos, RULES, time_ms=80, rng=random.Random(7), clock=FakeClock())
    d = choose_move(pos, RULES, time_ms=80, rng=random.Random(7), clock=FakeClock())
    assert (c.move, c.nodes, c.depth) == (d.move, d.nodes, d.depth)


def test_seed_breaks_ties_between_equal_moves() -> None:
    # The opening is symmetric (1- and 5+ mirror each other, and so on), so
    # different seeds must be able to pick different first moves at depth 1.
    moves = {
        str(choose_move(Position.initial(), RULES, depth=1, rng=random.Random(s)).move)
        for s in range(30)
    }
    assert len(moves) >= 2


@pytest.mark.parametrize("time_ms", [5, 30, 120])
def test_time_budget_respected_with_fake_clock(time_ms: int) -> None:
    for pos in random_positions(6, seed=time_ms):
        clock = FakeClock()
        start = clock.t
        result = choose_move(pos, RULES, time_ms=time_ms, rng=random.Random(1), clock=clock)
        assert (clock.t - start) * 1000 <= time_ms
        assert result.move in legal_moves(pos, RULES)


def test_budget_kept_even_with_a_slow_clock() -> None:
    # 1 ms per reading (16 nodes): a much slower machine than the Pi.
    for pos in random_positions(6, seed=99):
        clock = FakeClock(step=0.001)
        start = clock.t
        choose_move(pos, RULES, time_ms=5, rng=random.Random(1), clock=clock)
        assert (clock.t - start) * 1000 <= 5 + 1e-9


def test_more_time_searches_deeper() -> None:
    pos = Position.initial()
    short = choose_move(pos, RULES, time_ms=20, rng=random.Random(1), clock=FakeClock())
    long = choose_move(pos, RULES, time_ms=400, rng=random.Random(1), clock=FakeClock())
    assert long.depth > short.depth
    assert long.nodes > short.nodes


def test_out_of_time_at_once_still_answers() -> None:
    calls = iter([0.0] + [50.0] * 10_000)
    result = choose_move(Position.initial(), RULES, time_ms=10, clock=lambda: next(calls))
    assert result.move in legal_moves(Position.initial(), RULES)
    # Depth 1 (ten nodes) may finish before the first reading; nothing deeper starts.
    assert result.depth <= 1
    assert result.nodes <= CHECK_EVERY


def test_finds_the_big_chain_capture() -> None:
    # V12: 1+ chain-captures 4, mandarin 6 (big + 6), 8 and 10: 25 points.
    pos = Position.from_text("0B|1,0,0,3,0|6B|0,2,0,4,0 P0 s27/7 q0/0 d0/0 n20")
    assert play(pos, "1+", RULES).captured.points == 25
    assert choose_move(pos, RULES, depth=1, rng=random.Random(0)).move == Move.parse("1+")
    # Deeper, 1- (which wins the same mandarin a move later) may be preferred, but
    # the search must keep the material: P0 leads 27-7 and expects to gain more.
    for depth in (3, 5):
        result = choose_move(pos, RULES, depth=depth, rng=random.Random(0))
        assert result.move in (Move.parse("1+"), Move.parse("1-"))
        assert result.score >= 40


def test_finds_the_winning_move_and_solves_it() -> None:
    # V21: 3+ takes the last mandarin and ends the game 42-28; 3- does not.
    pos = Position.from_text("0|0,0,1,0,0|5B|0,3,2,0,4 P0 s20/15 q0/1 d0/3 n30 t-/1")
    result = choose_move(pos, RULES, time_ms=1000, rng=random.Random(0), clock=FakeClock())
    assert result.move == Move.parse("3+")
    assert result.score == 14.0
    # The win is proven at depth 1, so the search stops instead of using the budget.
    assert result.depth == 1


def test_exact_endgame_value_matches_brute_force() -> None:
    # Few pebbles left: the search must stop on its own with the exact final margin.
    pos = Position.from_text("0|0,1,0,0,0|0|0,0,2,0,0 P0 s30/25 q1/1 d0/0 n40 t0/1")

    def solve(p: Position) -> int:
        if p.outcome is not None:
            return p.outcome.final[p.to_move] - p.outcome.final[1 - p.to_move]
        best = -1000
        for m in legal_moves(p, RULES):
            after = play(p, m, RULES).position
            v = solve(after)
            best = max(best, v if after.to_move == p.to_move else -v)
        return best

    expected = solve(pos)
    result = choose_move(pos, RULES, depth=30, rng=random.Random(0))
    assert result.exact
    assert result.score == expected


def test_repetition_in_history_is_scored_as_the_settlement() -> None:
    # V30's cycle: every P0 move leads to a position we pretend was already seen.
    pos = Position.from_text("0B|0,0,0,1,0|0B|0,1,0,0,0 P0 s24/24 q0/0 d0/0 n0")
    children = [play(pos, m, RULES).position for m in legal_moves(pos, RULES)]
    free = choose_move(pos, RULES, depth=1, rng=random.Random(0), contempt=0.0)
    seen = choose_move(pos, RULES, depth=1, rng=random.Random(0), history=children, contempt=0.0)
    assert seen.score == 0.0  # 24 + 1 on each side: the settlement is level
    # With contempt, a repetition costs the searching side that many points.
    rep = choose_move(pos, RULES, depth=1, rng=random.Random(0), history=children, contempt=3.0)
    assert rep.score == -3.0
    assert all(settlement_diff(c.to_state(), 10) == 0 for c in children)
    # Without the history the same moves are scored by the evaluation instead.
    assert free.score == max(-evaluate(c.to_state(), DEFAULT_WEIGHTS, 10) for c in children)
    assert free.score != 0.0


def test_cycle_position_search_terminates_and_plays_on() -> None:
    # V30 loops forever if both sides shuttle; the search must not, and a game
    # between two searchers that see the history must still move legally.
    pos = Position.from_text("0B|0,0,0,1,0|0B|0,1,0,0,0 P0 s24/24 q0/0 d0/0 n0")
    result = choose_move(pos, RULES, depth=8, rng=random.Random(0))
    assert result.move in legal_moves(pos, RULES)
    game = Game(RULES, pos)
    rng = random.Random(3)
    for _ in range(30):
        if game.is_over:
            break
        history = [game.start] + [t.before for t in game.transitions]
        move = choose_move(game.position, RULES, depth=4, rng=rng, history=history).move
        game.play(move)
    keys = [t.position.to_text().split(" n")[0] for t in game.transitions]
    # With the history in view, no position is visited three times.
    assert max(keys.count(k) for k in keys) <= 2


def test_repetition_rule_counts_as_a_game_end() -> None:
    rules = Rules(repetition=3)
    pos = Position.from_text("0B|0,0,0,1,0|0B|0,1,0,0,0 P0 s24/24 q0/0 d0/0 n0")
    result = choose_move(pos, rules, depth=6, rng=random.Random(0))
    assert result.move in legal_moves(pos, rules)


def test_game_over_raises() -> None:
    game = Game(RULES)
    game.play_all(["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"])  # V40
    assert game.is_over
    with pytest.raises(GameOverError):
        choose_move(game.position, RULES, depth=2)
    # A row that cannot be refilled ends the game at the start of the turn (V19).
    stuck = Position.from_text("6B|0,0,0,0,0|3B|9,8,7,6,7 P0 s1/3 q0/0 d0/0 n10")
    with pytest.raises(GameOverError):
        choose_move(stuck, RULES, depth=2)


def test_hint_explains_capture_and_prevention() -> None:
    # V21: 3+ captures 18 points and ends the game 42-28 from a 23-22 lead: +13.
    pos = Position.from_text("0|0,0,1,0,0|5B|0,3,2,0,4 P0 s20/15 q0/1 d0/3 n30 t-/1")
    h = hint(pos, RULES, 200, rng=random.Random(0), clock=FakeClock())
    assert h.move == Move.parse("3+")
    assert h.captured.points == 18
    assert h.swing == 13.0
    assert h.threat_after == 0
    # V12's 1+ is the biggest capture on the board.
    v12 = Position.from_text("0B|1,0,0,3,0|6B|0,2,0,4,0 P0 s27/7 q0/0 d0/0 n20")
    assert best_capture(v12, RULES) == Threat(Move.parse("1+"), 25)

    # P1 threatens 2- (13 points) if P0 could move now; the hint's move defuses it.
    threat_pos = Position.from_text("7B|0,12,2,0,0|4B|1,9,2,0,0 P1 s9/4 q0/0 d0/0 n5")
    h = hint(threat_pos, RULES, 200, rng=random.Random(0), clock=FakeClock())
    assert h.prevents is not None
    assert h.prevents.points >= 13
    assert h.threat_after < h.prevents.points
    assert h.move in legal_moves(threat_pos, RULES)


def test_levels_play_legal_moves() -> None:
    pos = random_positions(1, seed=8)[0]
    for name in LEVELS:
        clock = FakeClock(step=0.002)
        move = level_move(pos, RULES, name, rng=random.Random(1), clock=clock)
        assert move in legal_moves(pos, RULES)
    easy = LEVELS["easy"]
    assert easy.random_move > 0 and easy.depth is not None
    assert LEVELS["hard"].depth is None or LEVELS["hard"].depth > LEVELS["medium"].depth  # type: ignore[operator]


def test_evaluation_and_search_are_symmetric_between_players() -> None:
    # Turning the ring by 6 swaps the players exactly (rules.md R1), so the
    # evaluation and the searched value must not care who is P0.
    for i, pos in enumerate(random_positions(20, seed=31)):
        st, rot = pos.to_state(), pos.rotated().to_state()
        assert evaluate(st, DEFAULT_WEIGHTS, 10) == evaluate(rot, DEFAULT_WEIGHTS, 10)
        a = choose_move(pos, RULES, depth=3, rng=random.Random(i))
        b = choose_move(pos.rotated(), RULES, depth=3, rng=random.Random(i))
        assert a.score == b.score


def test_features_are_the_evaluation_unweighted() -> None:
    # bench/tune_eval.py fits weights to features(); evaluate() must be their dot product.
    w = EvalWeights(row=0.5, row_end=0.9, mobility=0.4, tempo=1.2, mandarin=0.1)
    w = replace(w, singles=-0.3, piles=0.2, loose=0.25)
    coef = (1.0, w.row, w.mobility, w.tempo, w.mandarin, w.row_end - w.row)
    coef += (w.singles, w.piles, w.loose)
    for pos in random_positions(40, seed=12):
        st = pos.to_state()
        f = features(st, 10, 5, w.row_full)
        assert len(f) == len(FEATURES)
        assert evaluate(st, w, 10, 5) == pytest.approx(
            sum(c * x for c, x in zip(coef, f, strict=True))
        )
        assert evaluate(st, w, 10, 5) == pytest.approx(evaluate(pos.rotated().to_state(), w, 10))


def _final_value(over: Position, side: int, root: int) -> float:
    """A finished game's value for ``side`` as the search scores it (win bonus, contempt)."""
    assert over.outcome is not None
    f = over.outcome.final
    margin = f[side] - f[1 - side]
    if margin == 0:
        return -CONTEMPT if side == root else CONTEMPT
    return margin + (WIN if margin > 0 else -WIN)


def _mandarin_worth_taking(pos: Position) -> bool:
    """A mandarin square with its stone and at least 5 pebbles, or without it and 5 or more."""
    return any(pos.board[sq] >= 5 for sq in (0, 6))


def _reply_capture_value(pos: Position, ripe_only: bool = False) -> float:
    """Depth 1 plus one capture-only ply, by brute force: what quiescence=1 must find
    (``ripe_only``: only after moves that leave a mandarin worth taking)."""
    root = pos.to_move
    best = -1e9
    for move in legal_moves(pos, RULES):
        after = play(pos, move, RULES).position
        if after.over:
            best = max(best, _final_value(after, root, root))
            continue
        side = after.to_move
        reply = evaluate(after.to_state(), DEFAULT_WEIGHTS, 10)
        if ripe_only and not _mandarin_worth_taking(after):
            best = max(best, reply if side == root else -reply)
            continue
        for answer in legal_moves(after, RULES):
            t = play(after, answer, RULES)
            if not t.captured.points:
                continue
            if t.position.over:
                reply = max(reply, _final_value(t.position, side, root))
            else:
                v = evaluate(t.position.to_state(), DEFAULT_WEIGHTS, 10)
                reply = max(reply, v if t.position.to_move == side else -v)
        best = max(best, reply if side == root else -reply)
    return best


def test_quiescence_sees_the_capture_in_reply() -> None:
    checked = 0
    for i, pos in enumerate(random_positions(30, seed=77)):
        value = _reply_capture_value(pos)
        if abs(value) >= WIN / 2:
            continue  # the search reports a win or loss as its margin
        result = choose_move(pos, RULES, depth=1, rng=random.Random(i), quiescence=1)
        assert result.score == pytest.approx(round(value, 2), abs=0.011)
        checked += 1
    assert checked >= 20


def test_ripe_quiescence_plays_out_captures_only_where_a_mandarin_is_at_stake() -> None:
    unchanged = gated = differs = 0
    for i, pos in enumerate(random_positions(40, seed=78)):
        value = _reply_capture_value(pos, ripe_only=True)
        if abs(value) > HOPELESS_FROM:
            continue  # a win, or a deficit the search reports net of its price
        result = choose_move(
            pos, RULES, depth=1, rng=random.Random(i), quiescence=1, quiesce_ripe=True
        )
        assert result.score == pytest.approx(round(value, 2), abs=0.011)
        plain = choose_move(pos, RULES, depth=1, rng=random.Random(i)).score
        full = _reply_capture_value(pos)
        unchanged += value == full
        gated += value != full
        differs += abs(result.score - plain) > 0.011
    # The gate both keeps and drops capture replies that matter, and they change values.
    assert unchanged and gated and differs


def test_a_cache_carries_the_table_to_the_next_move() -> None:
    game = Game(RULES)
    game.play_all(["2+", "9-", "4+", "11-"])
    cache = SearchCache()
    first = choose_move(game.position, RULES, depth=6, rng=random.Random(0), cache=cache)
    kept = len(cache)
    assert kept > 0
    game.play(first.move)
    reply = choose_move(game.position, RULES, depth=4, rng=random.Random(0)).move
    game.play(reply)
    cold = choose_move(game.position, RULES, depth=6, rng=random.Random(0))
    warm = choose_move(game.position, RULES, depth=6, rng=random.Random(0), cache=cache)
    assert warm.move in legal_moves(game.position, RULES)
    assert warm.nodes < cold.nodes
    assert len(cache) >= kept
    # Another searching side (or other rules) starts a fresh table.
    other = Position.initial()
    choose_move(other, Rules(quan_non_min=0), depth=2, rng=random.Random(0), cache=cache)
    assert len(cache) < kept


# A debt spiral in the making (from a bench/ai.py game): P1 is 19 behind by the
# count with 15 pebbles on square 9, and 9+ or 11- ends the game at once, lost 24-48.
BEHIND = "0|0,1,0,0,0|3|0,1,15,0,1 P1 s22/7 q2/0 d0/0 n13 t0/0"


def test_a_hopeless_game_is_ended_rather_than_spiralled() -> None:
    # Every way of playing on leaves P1 further behind (the opponent keeps taking
    # the refills), so the side behind takes the finished loss, by its margin.
    pos = Position.from_text(BEHIND)
    for depth in (4, 8):
        result = choose_move(pos, RULES, depth=depth, rng=random.Random(0))
        after = play(pos, result.move, RULES).position
        assert after.outcome is not None and after.outcome.winner == 0
        assert result.score == after.outcome.final[1] - after.outcome.final[0] == -24


def test_reductions_search_fewer_nodes_and_still_end_a_hopeless_game() -> None:
    # Not reducing the replies to a root move keeps the reply that punishes
    # playing on in sight (reduced there, depth 4 played on).
    pos = Position.from_text(BEHIND)
    for depth in (4, 6, 8):
        result = choose_move(pos, RULES, depth=depth, rng=random.Random(0), reductions=True)
        after = play(pos, result.move, RULES).position
        assert after.outcome is not None and result.score == -24
    plain = reduced = 0
    for i, p in enumerate(random_positions(8, seed=31)):
        full = choose_move(p, RULES, depth=7, rng=random.Random(i))
        lmr = choose_move(p, RULES, depth=7, rng=random.Random(i), reductions=True)
        assert lmr.move in legal_moves(p, RULES) and lmr.depth == 7
        plain += full.nodes
        reduced += lmr.nodes
    assert reduced < plain


def test_a_deficit_is_reported_as_points_not_as_its_price() -> None:
    # At depth 1 the unfinished moves (about 25 behind) still beat the finished
    # losses, and the score is the evaluation's margin, whatever the search
    # added to it internally.
    pos = Position.from_text(BEHIND)
    result = choose_move(pos, RULES, depth=1, rng=random.Random(0))
    unfinished = [
        -evaluate(after.to_state(), DEFAULT_WEIGHTS, 10)
        for after in (play(pos, m, RULES).position for m in legal_moves(pos, RULES))
        if after.outcome is None
    ]
    assert -30 < max(unfinished) < -15
    assert result.score == round(max(unfinished), 2)


def test_a_cycle_lost_by_the_count_is_broken() -> None:
    # From a bench/ai.py game cut at 300 plies: P1 (35 behind) played 8+, P0
    # 4-, and the position came back 145 times. Without a repetition rule
    # such a cycle never ends; for the side behind it is a loss, so it plays on.
    pos = Position.from_text("0|2,0,2,0,1|9B|1,1,1,1,1 P1 s28/3 q1/0 d0/0 n11 t0/-")
    back = play(play(pos, Move.parse("8+"), RULES).position, Move.parse("4-"), RULES).position
    assert back.to_text().split(" n")[0] == pos.to_text().split(" n")[0]
    for depth in (8, 12):
        result = choose_move(pos, RULES, depth=depth, rng=random.Random(0))
        assert result.move != Move.parse("8+")
    # Another such game: every way out of the cycle loses 11 more points within
    # the horizon, and it is still taken.
    worse = Position.from_text("0|2,0,2,0,1|17B|1,1,1,1,1 P1 s22/1 q1/0 d0/0 n21 t0/-")
    for depth in (12, 16):
        result = choose_move(worse, RULES, depth=depth, rng=random.Random(0))
        assert result.move != Move.parse("8+")
    # A level cycle stays what it was: a draw, less the contempt.
    level = Position.from_text("0B|0,0,0,1,0|0B|0,1,0,0,0 P0 s24/24 q0/0 d0/0 n0")
    children = [play(level, m, RULES).position for m in legal_moves(level, RULES)]
    ahead = choose_move(level, RULES, depth=1, rng=random.Random(0), history=children)
    assert ahead.score == -CONTEMPT


def test_a_game_memory_gives_the_earlier_positions_of_one_game() -> None:
    memory = GameMemory()
    game = Game(RULES)
    asked = []
    for move in ["2+", "9-", "4+", "11-"]:
        asked.append(game.position)
        assert memory.see(game.position, RULES) == tuple(asked[:-1])
        game.play(move)
    # A new game (its ply is not later), or other rules, starts afresh.
    assert memory.see(Position.initial(), RULES) == ()
    assert memory.see(game.position, Rules(quan_non_min=0)) == ()
    assert memory.see(game.position, Rules(quan_non_min=0)) == ()  # same ply: a new game
    small = GameMemory(limit=2)
    again = Game(RULES)
    for move in ["2+", "9-", "4+", "11-"]:
        small.see(again.position, RULES)
        again.play(move)
    assert [p.ply for p in small.see(again.position, RULES)] == [2, 3]


def test_a_game_memory_forgets_what_does_not_follow() -> None:
    game = Game(RULES)
    game.play_all(["2+", "9-"])
    memory = GameMemory()
    memory.see(game.position, RULES)
    # Our move and the opponent's: two plies later and reachable, the same game.
    after = Game(RULES, game.position)
    after.play_all(["4+", "11-"])
    assert memory.follows(after.position, RULES)
    # The same board with a ply that is not later, or too far ahead, or a board no
    # two moves reach (another game's): a new game.
    assert not memory.follows(replace(after.position, ply=game.position.ply), RULES)
    assert not memory.follows(replace(after.position, ply=game.position.ply + 1), RULES)
    assert not memory.follows(replace(after.position, ply=game.position.ply + 9), RULES)
    other = Game(RULES)
    for _ in range(4):
        other.play(other.legal_moves()[-1])
    assert other.position.ply == after.position.ply
    assert not memory.follows(other.position, RULES)
    assert memory.see(other.position, RULES) == ()


def test_served_games_keep_interleaved_games_apart() -> None:
    a, b = Game(RULES), Game(RULES)
    a.play_all(["2+", "9-"])
    for _ in range(2):
        b.play(b.legal_moves()[-1])
    served = ServedGames(games=2)
    assert served.see(a.position, RULES) == ()
    assert served.see(b.position, RULES) == ()
    first_a, first_b = a.position, b.position
    a.play_all(["4+", "11-"])
    for _ in range(2):
        b.play(b.legal_moves()[-1])
    assert served.see(b.position, RULES) == (first_b,)
    assert served.see(a.position, RULES) == (first_a,)
    # A third game pushes out the one least recently asked about (b).
    c = Game(RULES)
    assert served.see(c.position, RULES) == ()
    assert len(served) == 2
    for _ in range(2):
        b.play(b.legal_moves()[-1])
        a.play(a.legal_moves()[0])
    assert served.see(b.position, RULES) == ()
    assert served.see(a.position, RULES) == ()  # pushed out by b's return


def test_with_the_memory_a_shuttle_across_moves_is_seen() -> None:
    # From a bench/ai.py game cut at 300 plies: P1, 35 behind, answered each
    # request alone and shuttled its pebble 7+ 8- with P0's 1+ 2- for ever.
    cycle = ["7+", "2-", "8-", "1+"]
    game = Game(RULES, Position.from_text("4B|0,1,0,0,0|0|1,0,0,0,0 P1 s34/10 q1/0 d0/0 n200 t-/0"))
    memory = GameMemory()
    for move in cycle:
        if game.position.to_move == 1:
            memory.see(game.position, RULES)
        game.play(move)
    assert game.position.to_text() == game.start.to_text().replace("n200", "n204")
    alone = choose_move(game.position, RULES, depth=10, rng=random.Random(0))
    remembered = choose_move(
        game.position,
        RULES,
        depth=10,
        rng=random.Random(0),
        history=memory.see(game.position, RULES),
    )
    assert alone.move == Move.parse("7+")
    assert remembered.move != Move.parse("7+")

"""Game-tree search for the AI opponent, the hint button and ``oanquan ai serve``.

Negamax alpha-beta with iterative deepening over the fast kernel
(:mod:`engine.core`). Why each piece is there:

* **Iterative deepening + a deadline.** The kiosk and the serve contract give
  a time budget, not a depth. Each iteration is a complete answer, so when
  the clock runs out the best move of the last completed depth is played (or
  a better one the interrupted iteration already proved). The clock is a
  function the caller injects, read every 16 nodes, so the tests drive it
  with a fake clock instead of sleeping. The search aims at 80% of the
  budget and starts no new iteration after 85% of that, so set-up, the
  answer and a loaded machine fit in the rest.
* **Transposition table** keyed by the flat tuple of everything the future
  depends on (board, stones, stores, debts, side to move); Python hashes a
  tuple of small ints in C, which is faster than maintaining Zobrist keys
  over a kernel that mutates in place without telling us what changed.
* **Move ordering.** The table's move is tried first and alone (it causes
  most cut-offs, and then nothing else is played). Otherwise every child is
  played once (the kernel has no undo, so a child is a copied and played
  state anyway), which also tells us each move's capture, so the order is:
  bigger captures, then this ply's killers, then the history heuristic.
  Non-first moves get a null window first (principal variation search).
* **Repetition.** The default rules have real cycles (rules.md R16, V30) and
  no repetition rule. A position repeated on the search path (or in the game
  history the caller passes) is scored as the R12 settlement, the same count
  the device offers as "agree to stop", so the search neither loops nor
  chases a cycle it cannot win.
* **Exact endgames.** A subtree whose every leaf was a finished game is
  marked exact (a repetition is not: its value depends on the path); when
  the whole root is exact the search stops early, so positions with few
  pebbles are solved to the end, and it also stops once a win is proven
  (a deeper search could only widen the margin).
* **Options measured and left off**: ``quiescence`` (capture-only plies at
  the leaves) scored 21-19 at 100 ms against the same search without it, and
  0.50 (W19 D2 L19) at 200 ms of CPU, 40 games (bench/ai.py ``--opponents ai
  --seed 17 --clock cpu``; mean depth 9.7, where the plain search reaches
  about 10.8); gated on a
  mandarin worth taking (``quiesce_ripe``) 0.49 in 100 games and 0.508 in 60
  on openings within 5 points (``--balanced 5``), so neither is on;
  weights fitted to 3,000 self-play games (``bench/tune_eval.py --fit``)
  scored 29-1-30 at depth 5 against the defaults. ``reductions`` (late-move
  reductions) reach 0.9 plies deeper in the same time, but as P1 against
  depth-4 alpha-beta on 47 openings that decide games (valued +10 to +26 for
  P0 at depth 8, 300 ms of CPU a move) they did better than the plain search
  on 8 and worse on 5 (the rest alike); head to head at 200 ms of CPU on 60
  openings within 5 points they scored 0.575 (W29 D11 L20, interval
  0.50-0.65), but reducing the replies to a root move let depth 4 play on in
  the hopeless position of ``test_a_hopeless_game_is_ended_rather_than_spiralled``
  (the reply that punishes playing on was reduced out of sight), so they now
  start at ``REDUCE_PLY``. So fixed, against depth-4 alpha-beta (100 games,
  500 ms of CPU, seed 17, the same openings) they scored 0.735, as P1 0.51,
  where the plain search scored 0.755 and 0.55: no gain, so they are off. A
  :class:`SearchCache` held by a long-lived caller saves about 12% of the
  nodes per move.
* **Debt spirals** (a row emptied and refilled with borrowed pebbles again
  and again, R11): debts count against the borrower in every value, so a
  spiral reads as a loss growing by the pebbles lost each cycle. What kept
  spirals going was the side *behind*: a finished loss is worth ``-WIN``, so
  any unfinished position looked better than ending a lost game, and it kept
  the game alive while the debt grew (bench/ai.py: games cut at 300 plies at
  -300 points, with a move that ended the game on the board). Now a deficit
  past ``HOPELESS_FROM`` points is priced towards a loss (:func:`_hopeless`),
  so a hopeless game is ended at the better count; a close game is valued as
  before. This is relative to the searching side (like contempt): the
  opponent is still modelled as maximising its margin.
* **Randomness** comes only from the injected ``rng`` (root move shuffling
  before a stable sort, i.e. tie-breaking among equally ordered moves, and
  the random moves of the easy level), so a seed reproduces a game.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from engine import core
from engine.core import State
from engine.errors import EngineError
from engine.evaluate import DEFAULT_WEIGHTS, EvalWeights, evaluate, settlement_diff
from engine.move import Move
from engine.play import Captured, config
from engine.play import play as checked_play
from engine.position import Position
from engine.rules import Rules

Clock = Callable[[], float]

#: Added to the final margin of a finished game so any win beats any heuristic value.
WIN = 1000.0
_INF = 1e9
#: Null-window width for the principal-variation re-searches (values are floats).
_EPS = 1e-6
#: The clock is read once per this many nodes (a node costs ~20 µs here, a clock
#: read well under 1 µs), so even a budget of a few milliseconds is kept.
CHECK_EVERY = 16
#: Fraction of the time budget the search itself may use; the rest covers set-up,
#: the answer and a loaded machine.
TIME_SAFETY = 0.8
#: Seconds kept back from every budget on top of that: a loaded machine can
#: pause the process for a scheduler slice (a few ms) at any point.
TIME_RESERVE = 0.004
#: Do not start a new iteration after this fraction of the search budget. An
#: iteration cut by the deadline still counts (its first move is the last best
#: one, and any move it fully searched that beats it is trusted), so a late start
#: costs nothing: 0.85 gives about 30% more nodes per move than 0.55 did.
_NEW_ITERATION = 0.85
#: Default contempt: points a draw or a repetition costs the searching side, so it
#: plays on for a win where it can. Measured at 500 ms, 100 games each: 0 drew
#: 0-7% against the greedy player (91-98% wins); 3 cut that to 2-3% but lost
#: 10-14% against depth-4 alpha-beta (80-81% wins); 1.5 won 99% and 85%.
CONTEMPT = 1.5
#: Points of deficit over which an unfinished game turns from "behind" into "lost"
#: for the searching side, and where it is as bad as a finished loss (see
#: :func:`_hopeless`).
HOPELESS_FROM = 15.0
HOPELESS_AT = 35.0
#: What a cycle the searching side loses by HOPELESS_FROM or more costs beyond
#: that loss (see Searcher._repetition_value): as much as a loss, so any line
#: that moves on is preferred, whatever it costs in points. With 10 points a
#: match game still cycled to the 300-ply cap: every way out of the cycle lost
#: 11 more points within the horizon.
CYCLE_COST = WIN
MAX_DEPTH = 64
#: Plies of capture-only search at the leaves (see Searcher._quiesce).
QUIESCENCE = 0
#: Quiescence only where a mandarin square is worth taking (see Searcher._hot).
QUIESCE_RIPE = False
#: Pebbles a mandarin square without its stone needs to make a leaf "hot".
LOOSE_HOT = 5
#: Late-move reductions: at this remaining depth or more, quiet moves after the
#: first REDUCE_AFTER are searched a ply shallower first.
REDUCTIONS = False
REDUCE_DEPTH = 3
REDUCE_AFTER = 3
#: No reductions this close to the root: the replies to a root move are searched in full.
REDUCE_PLY = 2
_TT_LIMIT = 2_000_000
#: Entries a SearchCache keeps across moves before it starts afresh (about 80 MB).
CACHE_LIMIT = 250_000

_EXACT, _LOWER, _UPPER = 0, 1, 2


Table = dict[tuple[int | None, ...], tuple[int, float, int, int, bool]]


class SearchCache:
    """The transposition table kept from one move of a game to the next.

    A long-lived caller (``ai serve``, a match, the kiosk) passes the same
    cache to every :func:`choose_move`, so the subtrees searched for the last
    move (the opponent's reply is usually among them) are known at once. The
    values depend on who searches, the rules, weights, contempt and
    quiescence, so a change of any of them starts a fresh table.
    """

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._table: Table = {}

    def table(self, key: tuple[object, ...]) -> Table:
        """The table for searches under ``key``; a new key drops the old table."""
        if key != self._key or len(self._table) > CACHE_LIMIT:
            self._key = key
            self._table = {}
        return self._table

    def __len__(self) -> int:
        return len(self._table)


#: Positions a GameMemory keeps (a game cut at 300 plies asks for 150).
MEMORY_LIMIT = 400
#: Plies a request may lie beyond the last one of its game and still continue it:
#: the move answered and up to two of the opponent's (a pass under variant rules).
MEMORY_GAP = 3


def _normal_key(position: Position, rules: Rules) -> tuple[int | None, ...] | None:
    """The kernel key of ``position`` once its turn has started (None: not two seats)."""
    if len(position.board) != 12:
        return None
    st = position.to_state()
    if st.outcome is None:
        core.start_turn(st, config(rules))
    return (*state_key(st, rules.leftover == "taker"), st.ply)


def reachable(before: Position, after: Position, rules: Rules, max_plies: int = MEMORY_GAP) -> bool:
    """Whether ``after`` follows ``before`` by ``after.ply - before.ply`` legal plies
    (1 to ``max_plies``): the test that a request continues a served game."""
    gap = after.ply - before.ply
    target = _normal_key(after, rules)
    start = _normal_key(before, rules)
    if not 0 < gap <= max_plies or target is None or start is None:
        return False
    cfg = config(rules)
    with_taker = rules.leftover == "taker"
    st = before.to_state()
    if st.outcome is None:
        core.start_turn(st, cfg)
    frontier = {start: st}
    for _ in range(gap):
        nxt: dict[tuple[int | None, ...], State] = {}
        for cur in frontier.values():
            for code in core.legal_codes(cur, cfg):
                child = cur.copy()
                core.play(child, code, cfg)
                nxt.setdefault((*state_key(child, with_taker), child.ply), child)
        frontier = nxt
    return target in frontier


class GameMemory:
    """The positions a long-lived caller was asked to move in, for one game at a time.

    ``ai serve`` answers one position per request and gets no game history,
    so a search cannot see a cycle that runs across its own moves: each
    answer plans a way forward, the next one plans another, and together they
    shuttle the same pebbles for ever (a bench/ai.py game as P1, 35 behind,
    cut at 300 plies). Passing :meth:`see`'s positions as ``choose_move``'s
    ``history`` makes the search value a return to one of them as the cycle it
    is. A request that does not :meth:`follow <follows>` the last one (a new
    game, other rules, a jump in the plies) starts afresh, so a client that
    always sends ply 0 is simply remembered nothing, and a position from
    another game never counts as a repetition.
    """

    def __init__(self, limit: int = MEMORY_LIMIT) -> None:
        self._limit = limit
        self._rules: Rules | None = None
        self._seen: list[Position] = []

    def follows(self, position: Position, rules: Rules) -> bool:
        """Whether ``position`` continues this game: same rules, reachable from the
        last position seen in as many legal plies as its ply is later (at most
        :data:`MEMORY_GAP`)."""
        return (
            bool(self._seen) and rules == self._rules and reachable(self._seen[-1], position, rules)
        )

    def see(self, position: Position, rules: Rules) -> tuple[Position, ...]:
        """The earlier positions of this game; then ``position`` is remembered too."""
        if not self.follows(position, rules):
            self._seen = []
        earlier = tuple(self._seen)
        self._seen.append(position)
        del self._seen[: -self._limit]
        self._rules = rules
        return earlier


#: Games an ``ai serve`` process tells apart at once (clients that interleave games).
SERVED_GAMES = 8


class ServedGames:
    """One :class:`GameMemory` per game a server is playing, told apart by position.

    A request continues the game whose last position it follows (see
    :meth:`GameMemory.follows`); any other starts a new game in place of the
    one least recently asked about. The JSON requests carry no game id, so
    this is what keeps two interleaved games (or a new game after the last)
    from mixing their histories.
    """

    def __init__(self, games: int = SERVED_GAMES) -> None:
        self._games = games
        self._memories: list[GameMemory] = []

    def see(self, position: Position, rules: Rules) -> tuple[Position, ...]:
        """The earlier positions of ``position``'s game (``()`` for a new game)."""
        found = next((m for m in self._memories if m.follows(position, rules)), None)
        if found is None:
            found = GameMemory()
            if len(self._memories) >= self._games:
                self._memories.pop()
        else:
            self._memories.remove(found)
        self._memories.insert(0, found)
        return found.see(position, rules)

    def __len__(self) -> int:
        return len(self._memories)


class GameOverError(EngineError, ValueError):
    """The position is finished (or ends at the start of the turn): there is no move."""


class _OutOfTime(Exception):
    pass


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The chosen move and what the search knows about it.

    ``score`` is in points for the side to move: the expected final margin
    when ``exact`` (a solved game), otherwise the evaluation of the
    principal variation's end.
    """

    move: Move
    score: float
    depth: int
    nodes: int
    pv: tuple[Move, ...]
    exact: bool = False
    elapsed: float = 0.0


def _reported(value: float, finished: bool = True) -> float:
    """The root's value as a margin in points: the win bonus stripped, and an
    unfinished deficit (``finished`` false: the principal variation does not
    end the game) freed of what :func:`_hopeless` added."""
    if value >= WIN / 2:
        value -= WIN
    elif value < 0 and not finished:
        value = _unfinished_value(value)
    elif value <= -WIN / 2:
        value += WIN
        if value <= -WIN / 2:
            value += CYCLE_COST  # a lost cycle: a loss and its price
    return round(value, 2)


def _hopeless(deficit: float) -> float:
    """What an unfinished deficit (points behind) costs the searching side beyond itself.

    A finished loss is worth ``-WIN`` plus its margin, so without this the side
    that is behind prefers any unfinished position to ending the game: it keeps
    a lost game going, and under the default rules that is a debt spiral whose
    loss grows by about a pebble a ply until a cap judges it by the count. Here
    a deficit past ``HOPELESS_FROM`` points grows towards a loss, reached at
    ``HOPELESS_AT``, so a hopeless game is ended when that gives the better
    count, while a game still close is valued as before and played on for a win.
    """
    if deficit <= HOPELESS_FROM:
        return 0.0
    if deficit >= HOPELESS_AT:
        return WIN
    return WIN * (deficit - HOPELESS_FROM) / (HOPELESS_AT - HOPELESS_FROM)


def _to_root(value: float, root_to_move: bool) -> float:
    """An unfinished position's value (for the side to move) with the root's deficit priced in."""
    if root_to_move:
        return value - _hopeless(-value) if value < -HOPELESS_FROM else value
    return value + _hopeless(value) if value > HOPELESS_FROM else value


def _unfinished_value(root_value: float) -> float:
    """The inverse of :func:`_to_root` for the root: the value as a margin again."""
    if root_value >= -HOPELESS_FROM:
        return root_value
    if root_value <= -HOPELESS_AT - WIN:
        return _reported(root_value)
    slope = WIN / (HOPELESS_AT - HOPELESS_FROM)
    return (root_value - slope * HOPELESS_FROM) / (1 + slope)


def _terminal_value(st: State, contempt: float, root: int) -> float:
    outcome = st.outcome
    assert outcome is not None
    _, final, winner, _, _ = outcome
    p = st.to_move
    margin = final[p] - final[1 - p]
    if winner is None:
        return margin - contempt if p == root else margin + contempt
    return margin + (WIN if winner == p else -WIN)


def state_key(st: State, with_taker: bool = False) -> tuple[int | None, ...]:
    """Everything the rest of the game depends on, as one flat hashable tuple."""
    big, s, q, d = st.big, st.store, st.bigs, st.debt
    key: tuple[int | None, ...] = (
        *st.b,
        big[0],
        big[1],
        s[0],
        s[1],
        q[0],
        q[1],
        d[0],
        d[1],
        st.to_move,
    )
    if with_taker:
        key += (st.taker[0], st.taker[1])
    return key


class Searcher:
    """One search: its table, counters and deadline. Build a new one per move."""

    def __init__(
        self,
        rules: Rules,
        *,
        weights: EvalWeights = DEFAULT_WEIGHTS,
        clock: Clock = time.monotonic,
        deadline: float | None = None,
        history: Iterable[tuple[int | None, ...]] = (),
        contempt: float = 0.0,
        quiescence: int = 0,
        table: dict[tuple[int | None, ...], tuple[int, float, int, int, bool]] | None = None,
        reductions: bool = False,
        quiesce_ripe: bool = False,
    ) -> None:
        self.rules = rules
        #: quiescence only at leaves with a mandarin worth taking (see _hot)
        self.qripe = quiesce_ripe
        #: late-move reductions (see _node)
        self.reduce = reductions
        #: plies of capture-only search at the leaves (0: the static value)
        self.qdepth = quiescence
        #: points a draw or a repetition costs the side searching (set in search())
        self.contempt = contempt
        self.root = 0
        self.cfg = config(rules)
        self.value = rules.mandarin_value
        self.ripe_min = rules.quan_non_min
        self.weights = weights
        self.clock = clock
        self.deadline = deadline
        self.with_taker = rules.leftover == "taker"
        #: repetitions end the game for real when the rules say so
        self.rep_is_end = rules.repetition > 0
        self.tt: Table = {} if table is None else table
        self.history_table = [0] * 25
        self.killers: list[list[int]] = [[0, 0] for _ in range(MAX_DEPTH + 2)]
        self.game_history = frozenset(history)
        self.path: set[tuple[int | None, ...]] = set()
        self.nodes = 0
        #: the last clock reading
        self.now = 0.0
        #: leaves cut by the depth limit so far (0 change over a subtree = exact subtree)
        self.cuts = 0

    # -- leaves ---------------------------------------------------------------

    def _repetition_value(self, st: State) -> float:
        v = float(settlement_diff(st, self.value))
        rooted = st.to_move == self.root
        if self.rep_is_end and v:
            v += WIN if v > 0 else -WIN
        elif v <= -HOPELESS_FROM if rooted else v >= HOPELESS_FROM:
            # Without a repetition rule a cycle goes on until someone stops and
            # counts (the device's offer, a match's ply cap). For the searching
            # side hopelessly behind by the count that is a loss, and one that
            # never ends, so it is priced below any other loss by CYCLE_COST
            # and the side behind plays on rather than cycle. A closer cycle
            # stays the plain count: pricing every cycle lost by a point as a
            # loss makes the search shun any line where the opponent could
            # repeat, which a real opponent seldom does (with it, bench/ai.py
            # against ab4 scored 0.765 at seed 18, as P1 0.57; without it 0.81
            # and 0.68 at seed 17: within the noise, but no gain either).
            v += WIN + CYCLE_COST if v > 0 else -WIN - CYCLE_COST
        # A cycle is draw-ish: the searching side would rather play on.
        return v - self.contempt if rooted else v + self.contempt

    def _leaf(self, st: State) -> float:
        """The static value of an unfinished leaf, as the root sees a deficit."""
        v = evaluate(st, self.weights, self.value, self.ripe_min)
        return _to_root(v, st.to_move == self.root)

    def _hot(self, st: State) -> bool:
        """Whether a mandarin square is worth a capture: its stone with enough
        pebbles to escape quan non, or no stone and LOOSE_HOT pebbles.

        Citizen captures are a few pebbles and nearly every leaf has one (the
        evaluation's tempo stands for them); a mandarin is the 15-point swing a
        static value misses, so only such leaves are worth playing out.
        """
        b, big, ripe = st.b, st.big, self.ripe_min
        return any(b[sq] >= (ripe if big[k] else LOOSE_HOT) for k, sq in ((0, 0), (1, 6)))

    def _quiesce(self, st: State, alpha: float, beta: float, qd: int) -> float:
        """The leaf value once the captures the side to move has are played out.

        A leaf where the side to move can take a mandarin is worth much more to
        it than the static value says; here it may take any capture (and the
        opponent reply with one) for ``qd`` plies, or stand on the static value.
        """
        stand = self._leaf(st)
        if stand >= beta or qd <= 0 or (self.qripe and not self._hot(st)):
            return stand
        best = stand
        if stand > alpha:
            alpha = stand
        cfg = self.cfg
        p = st.to_move
        for code in core.legal_codes(st, cfg):
            child = st.copy()
            cap, mask, _ = core.play(child, code, cfg)
            if not (cap or mask):
                continue
            self.nodes += 1
            if not self.nodes % CHECK_EVERY and self.deadline is not None:
                self.now = self.clock()
                if self.now >= self.deadline:
                    raise _OutOfTime
            same = child.to_move == p
            if child.outcome is not None:
                v = _terminal_value(child, self.contempt, self.root)
                if not same:
                    v = -v
            elif same:
                v = self._quiesce(child, alpha, beta, qd - 1)
            else:
                v = -self._quiesce(child, -beta, -alpha, qd - 1)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        break
        return best

    # -- the recursive search -------------------------------------------------

    def _moves(self, st: State, tt_move: int, ply: int) -> Iterator[tuple[int, State, bool]]:
        """(code, child, quiet) triples, best first, played lazily; ``quiet``: a move
        that captures nothing and is neither the table's move nor a killer.

        The table's move is played and yielded alone first: it causes most
        cut-offs, and then the other moves are never played at all. The rest
        are played together so each one's capture can order them: bigger
        captures first, then the killers of this ply, then the history score.
        """
        cfg = self.cfg
        codes = core.legal_codes(st, cfg)
        if tt_move and tt_move in codes:
            child = st.copy()
            core.play(child, tt_move, cfg)
            yield tt_move, child, False
        else:
            tt_move = 0
        value = self.value
        killers = self.killers[ply]
        k0, k1 = killers
        hist = self.history_table
        rest = []
        for code in codes:
            if code == tt_move:
                continue
            child = st.copy()
            cap, mask, _ = core.play(child, code, cfg)
            if mask:
                cap += value * ((mask & 1) + (mask >> 1))
            order = cap * 1e7 + min(hist[code + 12], 4_000_000)
            if code == k0:
                order += 5e6
            elif code == k1:
                order += 4.5e6
            rest.append((order, code, child))
        rest.sort(key=_first, reverse=True)
        for order, code, child in rest:
            yield code, child, order < 4e6

    def _node(self, st: State, depth: int, alpha: float, beta: float, ply: int) -> float:
        """Negamax value of ``st`` for its side to move, within (alpha, beta)."""
        self.nodes += 1
        if not self.nodes % CHECK_EVERY and self.deadline is not None:
            self.now = self.clock()
            if self.now >= self.deadline:
                raise _OutOfTime
        if st.outcome is not None:
            return _terminal_value(st, self.contempt, self.root)
        key = state_key(st, self.with_taker)
        if key in self.path or key in self.game_history:
            # Path-dependent: the same position reached another way is not a
            # repetition, so this value must never make a subtree "exact".
            self.cuts += 1
            return self._repetition_value(st)
        tt = self.tt
        entry = tt.get(key)
        tt_move = 0
        if entry is not None:
            e_depth, e_value, e_flag, e_move, e_exact = entry
            if e_depth >= depth or e_exact:
                if e_flag == _EXACT:
                    if not e_exact:
                        self.cuts += 1
                    return e_value
                if e_flag == _LOWER:
                    if e_value >= beta:
                        if not e_exact:
                            self.cuts += 1
                        return e_value
                elif e_value <= alpha:
                    if not e_exact:
                        self.cuts += 1
                    return e_value
            tt_move = e_move
        if depth <= 0:
            self.cuts += 1
            if self.qdepth:
                return self._quiesce(st, alpha, beta, self.qdepth)
            return self._leaf(st)
        cuts_before = self.cuts
        alpha0 = alpha
        p = st.to_move
        path = self.path
        path.add(key)
        best = -_INF
        best_move = 0
        first = True
        reduce = self.reduce and depth >= REDUCE_DEPTH and ply >= REDUCE_PLY
        tried = 0
        for code, child, quiet in self._moves(st, tt_move, ply):
            same = child.to_move == p
            tried += 1
            if reduce and quiet and tried > REDUCE_AFTER and not same:
                # Late-move reduction: a quiet move this far down the order is
                # first searched shallower; only one that beats alpha is searched
                # again at full depth.
                v = -self._node(child, depth - 2, -alpha - _EPS, -alpha, ply + 1)
                if v <= alpha:
                    if v > best:
                        best = v
                        best_move = code
                    continue
            if first:
                if same:
                    v = self._node(child, depth - 1, alpha, beta, ply + 1)
                else:
                    v = -self._node(child, depth - 1, -beta, -alpha, ply + 1)
                first = False
            else:
                if same:
                    v = self._node(child, depth - 1, alpha, alpha + _EPS, ply + 1)
                    if alpha < v < beta:
                        v = self._node(child, depth - 1, v, beta, ply + 1)
                else:
                    v = -self._node(child, depth - 1, -alpha - _EPS, -alpha, ply + 1)
                    if alpha < v < beta:
                        v = -self._node(child, depth - 1, -beta, -v, ply + 1)
            if v > best:
                best = v
                best_move = code
                if v > alpha:
                    alpha = v
                    if v >= beta:
                        killers = self.killers[ply]
                        if killers[0] != code:
                            killers[1] = killers[0]
                            killers[0] = code
                        self.history_table[code + 12] += depth * depth
                        break
        path.discard(key)
        if best <= alpha0:
            flag = _UPPER
        elif best >= beta:
            flag = _LOWER
        else:
            flag = _EXACT
        if len(tt) > _TT_LIMIT:
            tt.clear()
        tt[key] = (depth, best, flag, best_move, self.cuts == cuts_before)
        return best

    # -- the root -------------------------------------------------------------

    def search(
        self,
        st: State,
        max_depth: int,
        rng: random.Random,
        start: float,
    ) -> SearchResult:
        """Iterative deepening from a normalized, unfinished state."""
        cfg = self.cfg
        p = self.root = st.to_move
        codes = list(core.legal_codes(st, cfg))
        rng.shuffle(codes)
        root: list[tuple[int, State, int]] = []
        for code in codes:
            child = st.copy()
            cap, mask, _ = core.play(child, code, cfg)
            gain = cap + (self.value * ((mask & 1) + (mask >> 1)) if mask else 0)
            root.append((code, child, gain))
        # Captures first; the stable sort keeps the random order among equals.
        root.sort(key=_third, reverse=True)
        root_key = state_key(st, self.with_taker)
        best_code = root[0][0]
        best_value = -_INF
        done_depth = 0
        exact = False
        scores: dict[int, float] = {}
        budget = None if self.deadline is None else self.deadline - start
        self.now = start
        won = False
        for depth in range(1, max_depth + 1):
            if budget is not None and depth > 1:
                self.now = self.clock()
                if self.now - start > _NEW_ITERATION * budget:
                    break
            cuts_before = self.cuts
            alpha = -_INF
            iter_best = -_INF
            iter_code = 0
            self.path = {root_key}
            try:
                for i, (code, child, _) in enumerate(root):
                    move_cuts = self.cuts
                    same = child.to_move == p
                    if i == 0:
                        if same:
                            v = self._node(child, depth - 1, alpha, _INF, 1)
                        else:
                            v = -self._node(child, depth - 1, -_INF, -alpha, 1)
                    elif same:
                        v = self._node(child, depth - 1, alpha, alpha + _EPS, 1)
                        if v > alpha:
                            v = self._node(child, depth - 1, v, _INF, 1)
                    else:
                        v = -self._node(child, depth - 1, -alpha - _EPS, -alpha, 1)
                        if v > alpha:
                            v = -self._node(child, depth - 1, -_INF, -v, 1)
                    scores[code] = v
                    if v > iter_best:
                        iter_best = v
                        iter_code = code
                        alpha = max(alpha, v)
                        # A move fully searched at this depth that beats the previous
                        # best is trusted even if the iteration does not finish.
                        best_code, best_value = iter_code, iter_best
                        won = v >= WIN / 2 and self.cuts == move_cuts
            except _OutOfTime:
                break
            done_depth = depth
            best_code, best_value = iter_code, iter_best
            # Next iteration: best first, the others by this iteration's bounds.
            root.sort(key=lambda r: (r[0] == best_code, scores.get(r[0], -_INF)), reverse=True)
            if self.cuts == cuts_before:
                # Every leaf was a finished game or a repetition: the value is exact.
                exact = True
                break
            if won:
                # A proven win (its whole subtree is exact): a deeper search could
                # only find a bigger margin, not a better result.
                break
        pv, finished = self._pv(st, best_code, done_depth)
        return SearchResult(
            Move.from_code(best_code),
            _reported(best_value, finished or exact or self.rep_is_end)
            if best_value > -_INF
            else 0.0,
            done_depth,
            self.nodes,
            pv,
            exact,
            # With a budget, the last reading rather than a new one (a read is time too).
            self.now - start if budget is not None else self.clock() - start,
        )

    def _pv(self, st: State, first: int, depth: int) -> tuple[tuple[Move, ...], bool]:
        """Follow the table's best moves from the root (stops at a repetition);
        also whether they end the game (by the rules or by a repetition)."""
        moves = [Move.from_code(first)]
        cur = st.copy()
        core.play(cur, first, self.cfg)
        seen = {state_key(st, self.with_taker)}
        while cur.outcome is None:
            key = state_key(cur, self.with_taker)
            if key in seen or key in self.game_history:
                # A repetition is valued like a game ended by the count.
                return tuple(moves), True
            if len(moves) >= depth:
                break
            seen.add(key)
            entry = self.tt.get(key)
            if entry is None or entry[3] == 0:
                break
            code = entry[3]
            if code not in core.legal_codes(cur, self.cfg):
                break
            moves.append(Move.from_code(code))
            core.play(cur, code, self.cfg)
        return tuple(moves), cur.outcome is not None


def _first(item: tuple[float, int, State]) -> float:
    return item[0]


def _third(item: tuple[int, State, int]) -> int:
    return item[2]


def search_budget(time_ms: float) -> float:
    """Seconds the search itself may use out of a budget of ``time_ms``."""
    budget = max(time_ms, 0) / 1000.0
    return max(budget * TIME_SAFETY - TIME_RESERVE, budget / 2)


def _start_state(position: Position, rules: Rules) -> State:
    """The kernel state after start-of-turn processing; raises if there is no move."""
    st = position.to_state()
    if st.outcome is None:
        core.start_turn(st, config(rules))
    if st.outcome is not None:
        raise GameOverError("the game is over: there is no move to choose")
    return st


def choose_move(
    position: Position,
    rules: Rules,
    *,
    time_ms: int | None = None,
    depth: int | None = None,
    rng: random.Random | None = None,
    clock: Clock = time.monotonic,
    weights: EvalWeights = DEFAULT_WEIGHTS,
    history: Iterable[Position] = (),
    contempt: float = CONTEMPT,
    quiescence: int = QUIESCENCE,
    cache: SearchCache | None = None,
    reductions: bool = REDUCTIONS,
    quiesce_ripe: bool = QUIESCE_RIPE,
) -> SearchResult:
    """The best move found within ``time_ms`` and/or ``depth`` plies.

    With neither given, the budget is 500 ms. ``history`` lists earlier
    positions of the game so repetitions across real moves count too.
    ``contempt`` is what a draw or a repetition costs the side to move, in
    points, so it plays on for a win where it can. ``cache`` keeps the
    transposition table between the moves of a game (:class:`SearchCache`).
    Raises :class:`GameOverError` when the game is over.
    """
    start = clock()
    if time_ms is None and depth is None:
        time_ms = 500
    rng = rng if rng is not None else random.Random()
    st = _start_state(position, rules)
    deadline = None if time_ms is None else start + search_budget(time_ms)
    with_taker = rules.leftover == "taker"
    keys = []
    for earlier in history:
        est = earlier.to_state()
        if est.outcome is None:
            keys.append(state_key(est, with_taker))
    table = None
    if cache is not None:
        table = cache.table(
            (rules, st.to_move, weights, contempt, quiescence, reductions, quiesce_ripe)
        )
    searcher = Searcher(
        rules,
        weights=weights,
        clock=clock,
        deadline=deadline,
        history=keys,
        contempt=contempt,
        quiescence=quiescence,
        table=table,
        reductions=reductions,
        quiesce_ripe=quiesce_ripe,
    )
    max_depth = MAX_DEPTH if depth is None else max(1, min(depth, MAX_DEPTH))
    return searcher.search(st, max_depth, rng, start)


# -- hints ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Threat:
    """An opponent's capture: the move and the points it would take."""

    move: Move
    points: int


@dataclass(frozen=True, slots=True)
class Hint:
    """What the hint button shows.

    * ``move``: the suggested move;
    * ``swing``: expected change of the point difference (for the player to
      move) over the search horizon if both sides play well from here;
    * ``captured``: what the move takes at once (from :func:`engine.play.play`);
    * ``prevents``: the opponent's best capture in the position as it stands
      (as if they could move now) when the suggested move removes or reduces
      it, with ``threat_after`` their best capture once the move is played.
    """

    move: Move
    swing: float
    captured: Captured
    prevents: Threat | None
    threat_after: int
    result: SearchResult


def best_capture(position: Position, rules: Rules) -> Threat | None:
    """The biggest immediate capture of the side to move (None if nothing captures)."""
    st = position.to_state()
    cfg = config(rules)
    if st.outcome is None:
        core.start_turn(st, cfg)
    best: Threat | None = None
    for code in core.legal_codes(st, cfg):
        child = st.copy()
        cap, mask, _ = core.play(child, code, cfg)
        points = cap + rules.mandarin_value * bin(mask).count("1")
        if points and (best is None or points > best.points):
            best = Threat(Move.from_code(code), points)
    return best


def _opponent_to_move(position: Position) -> Position:
    return Position(
        position.board,
        position.big,
        position.store,
        position.bigs,
        position.debt,
        1 - position.to_move,
        position.ply,
        position.big_taker,
        position.field_owner,
    )


def hint(
    position: Position,
    rules: Rules,
    time_ms: int = 500,
    *,
    rng: random.Random | None = None,
    clock: Clock = time.monotonic,
) -> Hint:
    """Suggest a move and explain it in points (the companion's hint screen)."""
    result = choose_move(position, rules, time_ms=time_ms, rng=rng, clock=clock)
    transition = checked_play(position, result.move, rules)
    p = _start_state(position, rules).to_move
    now = position.points(rules)
    swing = result.score - (now[p] - now[1 - p])
    threat_now = None
    if transition.before.outcome is None:
        threat_now = best_capture(_opponent_to_move(position), rules)
    after = transition.position
    threat_after = 0
    if after.outcome is None and after.to_move != p:
        t = best_capture(after, rules)
        threat_after = 0 if t is None else t.points
    prevents = threat_now if threat_now is not None and threat_after < threat_now.points else None
    return Hint(result.move, round(swing, 2), transition.captured, prevents, threat_after, result)


# -- difficulty levels ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Level:
    """A kiosk difficulty: depth cap, time per move and a chance of a random move."""

    depth: int | None
    time_ms: int
    random_move: float


#: Measured with bench/ai.py (4 random opening plies, colours swapped): greedy scores
#: 0.78 against random (40 games); easy 0.95 against random and 0.69 against greedy
#: (100 games; depth 2 with 25% random moves scored 0.61, hardly above greedy); medium
#: 0.83 against easy (40); hard 0.80 against medium (20). Again with the hopeless
#: deficits priced (``--clock cpu --seed 17``, 20 games each): easy 1.0 against
#: random and 0.75 against greedy, medium 0.725 against easy, hard 0.80 against medium.
LEVELS: dict[str, Level] = {
    # Sees a capture, the reply and its own answer, and blunders now and then.
    "easy": Level(depth=3, time_ms=200, random_move=0.15),
    # A few plies ahead: catches most tactics, still beatable by planning.
    "medium": Level(depth=4, time_ms=400, random_move=0.0),
    # Everything the time allows (about 1 s per move on a Raspberry Pi).
    "hard": Level(depth=None, time_ms=1000, random_move=0.0),
}


def level_move(
    position: Position,
    rules: Rules,
    level: str | Level,
    *,
    rng: random.Random | None = None,
    clock: Clock = time.monotonic,
    history: Iterable[Position] = (),
) -> Move:
    """The move a kiosk opponent of this level plays."""
    spec = LEVELS[level] if isinstance(level, str) else level
    rng = rng if rng is not None else random.Random()
    st = _start_state(position, rules)
    if spec.random_move and rng.random() < spec.random_move:
        return Move.from_code(rng.choice(core.legal_codes(st, config(rules))))
    return choose_move(
        position,
        rules,
        time_ms=spec.time_ms,
        depth=spec.depth,
        rng=rng,
        clock=clock,
        history=history,
    ).move

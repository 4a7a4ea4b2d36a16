"""Match the search AI against baseline players or any ``ai serve``-style command.

    .venv/bin/python bench/ai.py --time-ms 500 --games 100 --opponents ab4
    .venv/bin/python bench/ai.py --games 4 --opponents random          # quick look
    .venv/bin/python bench/ai.py --opponent-cmd "other-engine --serve"  # an outside engine
    .venv/bin/python bench/ai.py --ai medium --opponents easy           # the level ladder

Players (``--ai`` and ``--opponents``):

* ``ai``: :func:`engine.search.choose_move` in this process at ``--time-ms``
  (``--depth`` also caps it), called exactly as ``oanquan ai serve`` calls it
  (as history, the positions it was asked about earlier in the game, as the
  server's :class:`engine.search.ServedGames` remembers them) unless
  ``--history`` is given (the whole game's positions);
* ``ai{JSON}``: the same with choose_move options (``{"quiescence": 2}``,
  ``{"weights": {"tempo": 1.0}}``, ``{"depth": 4, "time_ms": null}``,
  ``{"cache": true}`` to keep the search's table between moves,
  ``{"memory": false}`` to pass no history at all, as ``ai serve`` did before
  it remembered its games), e.g. to
  match two settings head to head;
* ``easy``, ``medium``, ``hard``: the kiosk levels (:data:`engine.search.LEVELS`);
* ``random``: a uniformly random legal move;
* ``greedy``: the move with the biggest immediate capture, ties at random;
* ``ab4`` (any ``abN``): plain fixed-depth alpha-beta on the score difference,
  written here independently of ``engine.search`` so it is a second opinion;
* ``cmd:COMMAND``: a process speaking the ``oanquan ai serve`` JSON Lines
  (interchange.md), sent ``--time-ms`` per move; ``--opponent-cmd COMMAND``
  adds one without the prefix (commas allowed).

Games come in pairs: ``--opening-plies`` uniformly random plies (4 by default),
played twice, the AI taking P0 in the first game and P1 in the second. A game
still running after ``--ply-cap`` plies (300) is *judged by its projected final
count*, the R12 settlement as if it ended there: rows swept to their owners,
debts repaid, mandarin contents unclaimed. So a debt spiral that is cut is the
loss it is, not a draw, and the cut games are reported apart. ``--repeat N``
also ends a game by that count when a position occurs N times (off by default,
as in outside matches). The move time is the wall-clock time of each of the
AI's moves (for a command: request written to answer read, not counting the
first answer, which includes the process's start-up); no move may exceed the
budget, and the exit status is 1 if one did. The CPU time of each in-process
move is reported too: on a loaded machine the scheduler can hold a process
back past any deadline, and the CPU time shows what the search itself spent.
``--clock cpu`` goes further: the in-process searches read this process's CPU
time for their deadline, so on a loaded machine they search as much as an
idle one lets them, and the budget is kept in CPU time (``over_budget_cpu``);
the wall-clock move times then say nothing. ``score_ci95`` is a 95% interval
for the score rate over the colour-swapped pairs.
``--balanced N`` keeps only openings a depth-8 search values within N points.

Why P1 scores less than P0 here: 4 uniformly random plies often leave P0, who
moves next, a mandarin to take (P1's random fourth ply walks into it). Of 30
such openings (seed 2024) a depth-10 search valued 15 at +16 points or more
for P0. Played as P1 against ab4, those at +29 or more were lost at 500 ms
and at six times that alike: they are lost positions. Those at +16 to +21
were not: 500 ms won 2 of 8 and 3000 ms won 5 and drew 1 (the search of
9dca03d, wall clock on a loaded machine). ``--seat 1 --opening-range LOW
HIGH`` replays such a test: the AI as P1 only, on openings valued in that
range, the same openings for every setting of one seed.
``--opening-depth D`` values each opening with a depth-D search and splits the
AI's results as P1 into openings won for P0 (>= +15) and the others.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

# Run as a script, this folder comes first on sys.path and bench/engine.py
# would shadow the engine package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from engine import core  # noqa: E402
from engine.evaluate import DEFAULT_WEIGHTS, EvalWeights  # noqa: E402
from engine.game import Game  # noqa: E402
from engine.move import Move  # noqa: E402
from engine.play import config, end_now, legal_moves  # noqa: E402
from engine.play import play as checked_play  # noqa: E402
from engine.position import Position  # noqa: E402
from engine.rules import Rules  # noqa: E402
from engine.search import (  # noqa: E402
    LEVELS,
    GameMemory,
    SearchCache,
    choose_move,
    level_move,
)

PLY_CAP = 300
LONG_GAME = 100
EARLY_PLY = 12
OPENING_PLIES = 4

#: The old name-to-function interface (bench/tune_eval.py): (game, rng) -> move.
Player = Callable[[Game, random.Random], Move]


@dataclass
class Reply:
    """A player's move and what it said about it."""

    move: Move
    depth: int = 0
    nodes: int = 0
    error: str = ""
    #: the first answer of a freshly started process (its start-up is not the move's time)
    startup: bool = False


class Agent:
    """A player in a match: ``reply`` picks a move, ``close`` frees what it holds."""

    name = "agent"
    #: whether move times are measured against the budget (searching players)
    timed = False
    #: the budget per move in ms, when it has one
    budget_ms: float | None = None

    def reply(self, game: Game, rng: random.Random) -> Reply:
        raise NotImplementedError

    def close(self) -> None:
        pass


class FunctionAgent(Agent):
    def __init__(self, name: str, fn: Player) -> None:
        self.name = name
        self.fn = fn

    def reply(self, game: Game, rng: random.Random) -> Reply:
        return Reply(self.fn(game, rng))


class SearchAgent(Agent):
    """engine.search.choose_move, as ``ai serve`` calls it (with its game memory)
    unless ``history`` (every earlier position of the game)."""

    timed = True

    def __init__(
        self,
        time_ms: int | None,
        depth: int | None,
        *,
        history: bool = False,
        weights: EvalWeights = DEFAULT_WEIGHTS,
        name: str = "ai",
        options: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.clock = clock
        self.time_ms = time_ms
        self.budget_ms = time_ms
        self.depth = depth
        self.history = history
        self.weights = weights
        #: further keyword arguments of choose_move (contempt, quiescence, ...)
        self.options = dict(options or {})
        if self.options.pop("cache", False):
            # One table for all of this player's moves, as a long-lived server would keep.
            self.options["cache"] = SearchCache()
        #: the positions this player was asked about, as ai serve's GameMemory sees them
        self.memory = GameMemory() if self.options.pop("memory", True) else None

    def reply(self, game: Game, rng: random.Random) -> Reply:
        history: list[Position] = []
        if self.history:
            history = [t.before for t in game.transitions]
        elif self.memory is not None:
            history = list(self.memory.see(game.position, game.rules))
        result = choose_move(
            game.position,
            game.rules,
            time_ms=self.time_ms,
            depth=self.depth,
            rng=rng,
            history=history,
            weights=self.weights,
            clock=self.clock,
            **self.options,
        )
        return Reply(result.move, result.depth, result.nodes)


class LevelAgent(Agent):
    timed = True

    def __init__(self, level: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = level
        self.budget_ms = LEVELS[level].time_ms
        self.clock = clock

    def reply(self, game: Game, rng: random.Random) -> Reply:
        history = [t.before for t in game.transitions]
        move = level_move(
            game.position, game.rules, self.name, rng=rng, history=history, clock=self.clock
        )
        return Reply(move)


class CommandAgent(Agent):
    """A process speaking the ``oanquan ai serve`` protocol, kept open for the match."""

    timed = True

    def __init__(self, command: str, time_ms: int) -> None:
        self.name = f"cmd:{command}"
        self.command = command
        self.time_ms = time_ms
        self.budget_ms = time_ms
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> tuple[subprocess.Popen[str], bool]:
        fresh = self.proc is None or self.proc.poll() is not None
        if fresh:
            self.proc = subprocess.Popen(
                shlex.split(self.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )
        assert self.proc is not None
        return self.proc, fresh

    def reply(self, game: Game, rng: random.Random) -> Reply:
        proc, fresh = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        request = {
            "position": game.position.to_json(),
            "rules": game.rules.to_json(),
            "time_ms": self.time_ms,
        }
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        try:
            answer = json.loads(line)
            move = Move.parse(answer["move"])
        except (ValueError, KeyError, TypeError) as exc:
            text = line.strip() or "no answer (the process ended)"
            return Reply(game.legal_moves()[0], error=f"{text[:200]} ({exc})")
        if move not in game.legal_moves():
            return Reply(game.legal_moves()[0], error=f"illegal move {answer['move']!r}")
        depth = answer.get("depth", 0)
        nodes = answer.get("nodes", 0)
        return Reply(
            move,
            depth if isinstance(depth, int) else 0,
            nodes if isinstance(nodes, int) else 0,
            startup=fresh,
        )

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def random_player(game: Game, rng: random.Random) -> Move:
    return rng.choice(game.legal_moves())


def greedy_player(game: Game, rng: random.Random) -> Move:
    """Largest immediate capture in points; a random move among equals."""
    moves = game.legal_moves()
    rng.shuffle(moves)
    return max(moves, key=lambda m: checked_play(game.position, m, game.rules).captured.points)


def _ab(st: core.State, depth: int, alpha: int, beta: int, cfg: core.Config, value: int) -> int:
    """Negamax alpha-beta on the points difference for the side to move."""
    p = st.to_move
    if st.outcome is not None:
        final = st.outcome[1]
        return final[p] - final[1 - p]
    if depth == 0:
        s, q, d = st.store, st.bigs, st.debt
        diff = (s[0] + value * q[0] - d[0] + d[1]) - (s[1] + value * q[1] - d[1] + d[0])
        return diff if p == 0 else -diff
    best = -10_000
    for code in core.legal_codes(st, cfg):
        child = st.copy()
        core.play(child, code, cfg)
        if child.to_move == p:
            v = _ab(child, depth - 1, alpha, beta, cfg, value)
        else:
            v = -_ab(child, depth - 1, -beta, -alpha, cfg, value)
        if v > best:
            best = v
            if v > alpha:
                alpha = v
                if alpha >= beta:
                    break
    return best


def alphabeta_player(depth: int) -> Player:
    def player(game: Game, rng: random.Random) -> Move:
        cfg = config(game.rules)
        st = game.position.to_state()
        core.start_turn(st, cfg)
        codes = list(core.legal_codes(st, cfg))
        rng.shuffle(codes)
        best_code, best = codes[0], -10_000
        for code in codes:
            child = st.copy()
            core.play(child, code, cfg)
            if child.to_move == st.to_move:
                v = _ab(child, depth - 1, best, 10_000, cfg, game.rules.mandarin_value)
            else:
                v = -_ab(child, depth - 1, -10_000, -best, cfg, game.rules.mandarin_value)
            if v > best:
                best, best_code = v, code
        return Move.from_code(best_code)

    return player


OPPONENTS: dict[str, Player] = {
    "random": random_player,
    "greedy": greedy_player,
    "ab4": alphabeta_player(4),
}


def make_agent(
    spec: str,
    time_ms: int | None,
    depth: int | None,
    history: bool = False,
    options: dict[str, Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Agent:
    """The player a name on the command line stands for; ValueError names a bad one.

    ``options``: choose_move keyword arguments for ``ai``; ``weights`` may be a
    dict of :class:`EvalWeights` fields. ``clock``: what the in-process
    searches read for their deadline.
    """
    if spec.startswith("ai{"):
        return make_agent("ai", time_ms, depth, history, json.loads(spec[2:]), clock)
    if spec == "ai":
        opts = dict(options or {})
        weights = EvalWeights(**{**DEFAULT_WEIGHTS.as_dict(), **opts.pop("weights", {})})
        depth = opts.pop("depth", depth)
        time_ms = opts.pop("time_ms", time_ms)
        name = "ai" if not options else "ai" + json.dumps(options, separators=(",", ":"))
        return SearchAgent(
            time_ms, depth, history=history, weights=weights, options=opts, name=name, clock=clock
        )
    if spec in LEVELS:
        return LevelAgent(spec, clock)
    if spec.startswith("cmd:"):
        return CommandAgent(spec[4:], time_ms or 500)
    if spec in OPPONENTS:
        return FunctionAgent(spec, OPPONENTS[spec])
    m = re.fullmatch(r"ab([1-9])", spec)
    if m:
        return FunctionAgent(spec, alphabeta_player(int(m.group(1))))
    names = ", ".join(["ai", *LEVELS, *OPPONENTS, "abN", "cmd:COMMAND"])
    raise ValueError(f"unknown player {spec!r}; choose from {names}")


@dataclass
class GameRecord:
    """One game from the AI's side: its seat, the result and how the game went."""

    ai_side: int
    opening: list[Move]
    final: tuple[int, int]
    winner: int | None
    reason: str
    plies: int
    #: cut at the ply cap and judged by the projected count
    cut: bool
    moves: list[str] = field(default_factory=list)
    forfeit: str = ""
    #: the AI's margin by the projected count EARLY_PLY plies into the game (None if
    #: it ended sooner): a game lost by then was lost in the opening, not in a spiral
    early_margin: int | None = None
    #: what a search of ``--opening-depth`` values the opening at, for P0 (None: not asked)
    opening_value: float | None = None

    @property
    def margin(self) -> int:
        return self.final[self.ai_side] - self.final[1 - self.ai_side]

    @property
    def result(self) -> str:
        if self.winner is None:
            return "draw"
        return "win" if self.winner == self.ai_side else "loss"


@dataclass
class Tally:
    """The AI's games and moves against one opponent."""

    games: list[GameRecord] = field(default_factory=list)
    move_times: list[float] = field(default_factory=list)
    #: CPU time of this process per AI move (in-process players): what the search
    #: itself spent, without the scheduler's pauses on a loaded machine
    cpu_times: list[float] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    nodes: int = 0
    over_budget: int = 0


def projected_outcome(position: Position, rules: Rules, reason: str = "ply_limit") -> Position:
    """The position as if the game ended here by count (R12): the cut game's judgement."""
    return end_now(position, reason, rules).position


def _position_key(p: Position) -> tuple[object, ...]:
    return (p.board, p.big, p.store, p.bigs, p.debt, p.to_move)


def play_game(
    ai: Agent,
    opponent: Agent,
    ai_side: int,
    rng: random.Random,
    tally: Tally,
    *,
    time_ms: int | None,
    opening: list[Move],
    rules: Rules,
    ply_cap: int = PLY_CAP,
    repeat: int = 0,
) -> GameRecord:
    """One game; the AI's moves are timed into ``tally`` and the record is appended."""
    game = Game(rules)
    game.play_all(opening)
    seen: Counter[tuple[object, ...]] = Counter([_position_key(game.position)])
    forfeit = ""
    cut = False
    early: int | None = None
    while not game.is_over:
        pos = game.position
        if repeat and seen[_position_key(pos)] >= repeat:
            game.transitions.append(end_now(pos, "repetition", rules))
            break
        if len(game.transitions) >= ply_cap:
            game.transitions.append(end_now(pos, "ply_limit", rules))
            cut = True
            break
        if len(game.transitions) == EARLY_PLY:
            f = projected_outcome(pos, rules).outcome
            assert f is not None
            early = f.final[ai_side] - f.final[1 - ai_side]
        mover = ai if pos.to_move == ai_side else opponent
        t0 = time.perf_counter()
        c0 = time.process_time()
        reply = mover.reply(game, rng)
        elapsed = time.perf_counter() - t0
        if mover is ai and not reply.startup:
            tally.cpu_times.append(time.process_time() - c0)
            tally.move_times.append(elapsed)
            tally.depths.append(reply.depth)
            tally.nodes += reply.nodes
            if ai.budget_ms is not None and elapsed * 1000 > ai.budget_ms:
                tally.over_budget += 1
        if reply.error:
            forfeit = f"{mover.name}: {reply.error}"
            break
        assert reply.move in legal_moves(pos, rules), (reply.move, pos)
        game.play(reply.move)
        seen[_position_key(game.position)] += 1
    plies = len(game.moves)
    if forfeit:
        loser = game.position.to_move
        final = (1, 0) if loser else (0, 1)
        record = GameRecord(ai_side, opening, final, 1 - loser, "forfeit", plies, False)
        record.forfeit = forfeit
    else:
        outcome = game.position.outcome
        assert outcome is not None
        final = cast(tuple[int, int], outcome.final)  # two seats in this bench
        record = GameRecord(ai_side, opening, final, outcome.winner, outcome.reason, plies, cut)
    record.moves = [str(m) for m in game.moves]
    record.early_margin = early
    tally.games.append(record)
    return record


def make_opening(
    rng: random.Random, rules: Rules, plies: int = OPENING_PLIES, balanced: float | None = None
) -> list[Move]:
    """``plies`` uniformly random moves that leave the game running.

    With ``balanced``, only an opening that a depth-8 search values within that
    many points for the side to move (random plies often leave the next player
    a mandarin to take, which decides the game before it starts).
    """
    while True:
        game = Game(rules)
        for _ in range(plies):
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
        if game.is_over:
            continue
        if balanced is not None:
            score = choose_move(game.position, rules, depth=8, rng=rng).score
            if abs(score) > balanced:
                continue
        return game.moves


def _wdl(games: list[GameRecord]) -> dict[str, Any]:
    c = Counter(g.result for g in games)
    n = len(games)
    score = (c["win"] + 0.5 * c["draw"]) / n if n else 0.0
    return {"w": c["win"], "d": c["draw"], "l": c["loss"], "score": round(score, 3)}


#: An opening a search values at this many points or more for P0 is "won for P0".
WON_OPENING = 15.0


def _by_opening(games: list[GameRecord]) -> dict[str, Any]:
    """The AI's results as P1 split by how good the opening was for P0 (if valued)."""
    valued = [g for g in games if g.opening_value is not None and g.ai_side == 1]
    if not valued:
        return {}
    won = [g for g in valued if g.opening_value is not None and g.opening_value >= WON_OPENING]
    rest = [g for g in valued if g not in won]
    return {"as_p1_opening_won_for_p0": _wdl(won), "as_p1_other_openings": _wdl(rest)}


def _pct(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def score_ci95(games: list[GameRecord]) -> tuple[float, float]:
    """A 95% interval for the score rate, from the colour-swapped pairs.

    The two games of a pair share an opening, so their results are not
    independent: the unit is the pair's mean score (normal approximation).
    """
    points = [1.0 if g.result == "win" else 0.5 if g.result == "draw" else 0.0 for g in games]
    pairs = [sum(points[i : i + 2]) / len(points[i : i + 2]) for i in range(0, len(points), 2)]
    n = len(pairs)
    if n < 2:
        return (0.0, 1.0)
    mean = sum(pairs) / n
    var = sum((x - mean) ** 2 for x in pairs) / (n - 1)
    half = 1.96 * (var / n) ** 0.5
    return (round(max(0.0, mean - half), 3), round(min(1.0, mean + half), 3))


def summarise(tally: Tally, time_ms: float | None) -> dict[str, Any]:
    games = tally.games
    n = max(len(games), 1)
    margins = sorted(g.margin for g in games)
    times = sorted(tally.move_times)
    cpu = sorted(tally.cpu_times)
    cut = [g for g in games if g.cut]
    budget_s = None if time_ms is None else time_ms / 1000
    return {
        "games": len(games),
        "time_ms": time_ms,
        **{k: v for k, v in _wdl(games).items()},
        "score_ci95": list(score_ci95(games)),
        "as_p0": _wdl([g for g in games if g.ai_side == 0]),
        "as_p1": _wdl([g for g in games if g.ai_side == 1]),
        "cut_games": len(cut),
        "cut_results": _wdl(cut),
        "cut_finals": [list(g.final) for g in cut],
        "cut_early_margins": [g.early_margin for g in cut],
        "over_100_plies": sum(g.plies > LONG_GAME for g in games),
        **_by_opening(games),
        "max_plies": max((g.plies for g in games), default=0),
        "mean_plies": round(sum(g.plies for g in games) / n, 1),
        "mean_margin": round(sum(margins) / n, 2),
        "median_margin": margins[len(margins) // 2] if margins else 0,
        "end_reasons": dict(Counter(g.reason for g in games)),
        "forfeits": [g.forfeit for g in games if g.forfeit],
        "ai_moves": len(times),
        "mean_move_ms": round(1000 * sum(times) / max(len(times), 1), 1),
        "p99_move_ms": round(1000 * _pct(times, 0.99), 1),
        "max_move_ms": round(1000 * (times[-1] if times else 0.0), 1),
        "over_budget_moves": tally.over_budget,
        "p99_cpu_ms": round(1000 * _pct(cpu, 0.99), 1),
        "max_cpu_ms": round(1000 * (cpu[-1] if cpu else 0.0), 1),
        "over_budget_cpu": sum(c > budget_s for c in cpu) if budget_s is not None else 0,
        "mean_depth": round(sum(tally.depths) / max(len(tally.depths), 1), 2),
        "nodes_per_s": round(tally.nodes / sum(times)) if times and sum(times) else 0,
    }


def run(
    ai: Agent,
    opponent: Agent,
    games: int,
    *,
    time_ms: int | None,
    seed: int,
    opening_plies: int = OPENING_PLIES,
    balanced: float | None = None,
    opening_depth: int = 0,
    opening_range: tuple[float, float] | None = None,
    seat: int | None = None,
    ply_cap: int = PLY_CAP,
    repeat: int = 0,
    log: Callable[[str], None] | None = None,
    verbose: bool = False,
    games_out: Path | None = None,
) -> dict[str, Any]:
    """``games`` games (in colour-swapped pairs) against one opponent, summarised.

    ``seat``: the AI always takes that seat, a new opening every game, drawn
    from a generator of its own so that runs at other settings (``--time-ms``,
    ``--ai``) with the same seed play the same openings.
    ``opening_range``: only openings that a depth-``opening_depth`` search
    values in [low, high) points for P0.
    """
    rules = Rules()
    rng = random.Random(f"{seed}:{opponent.name}")
    openings_rng = rng if seat is None else random.Random(f"{seed}:{opponent.name}:openings")
    tally = Tally()
    t0 = time.perf_counter()
    opening: list[Move] = []
    value = None
    for i in range(games):
        if seat is not None or i % 2 == 0:
            while True:
                opening = make_opening(openings_rng, rules, opening_plies, balanced)
                value = None
                if opening_depth:
                    start = Game(rules)
                    start.play_all(opening)
                    search = choose_move(
                        start.position, rules, depth=opening_depth, rng=openings_rng
                    )
                    value = search.score if start.position.to_move == 0 else -search.score
                if opening_range is None or (
                    value is not None and opening_range[0] <= value < opening_range[1]
                ):
                    break
        g = play_game(
            ai,
            opponent,
            i % 2 if seat is None else seat,
            rng,
            tally,
            time_ms=time_ms,
            opening=opening,
            rules=rules,
            ply_cap=ply_cap,
            repeat=repeat,
        )
        g.opening_value = value
        if games_out is not None:
            with games_out.open("a") as f:
                row = {"opponent": opponent.name, "ai_side": g.ai_side, "final": list(g.final)}
                row |= {"reason": g.reason, "cut": g.cut, "early_margin": g.early_margin}
                row |= {"opening_value": g.opening_value}
                row |= {"moves": g.moves}
                f.write(json.dumps(row) + "\n")
        if verbose and log is not None:
            log(
                f"game {i}: AI is P{g.ai_side}, opening {' '.join(map(str, opening))}: "
                f"{g.result} {g.final[0]}-{g.final[1]} ({g.reason}{', cut' if g.cut else ''}, "
                f"{g.plies} plies){' ' + g.forfeit if g.forfeit else ''}"
            )
        if log is not None and ((i + 1) % 10 == 0 or i + 1 == games):
            s = summarise(tally, ai.budget_ms)
            log(
                f"{opponent.name}: {i + 1}/{games} W{s['w']} D{s['d']} L{s['l']} "
                f"P1 {s['as_p1']['score']} cut {s['cut_games']} >100 {s['over_100_plies']} "
                f"p99 {s['p99_move_ms']} ms ({time.perf_counter() - t0:.0f} s)"
            )
    summary = {"ai": ai.name, "opponent": opponent.name, **summarise(tally, ai.budget_ms)}
    if opening_depth:
        # Each game's opening and its value for P0, to rerun or compare the same ones.
        summary["openings"] = [
            [" ".join(map(str, g.opening)), g.opening_value] for g in tally.games
        ]
    summary["wall_s"] = round(time.perf_counter() - t0, 1)
    return summary


def split_specs(text: str) -> list[str]:
    """Player names separated by commas, except commas inside an ``ai{...}`` object."""
    specs: list[str] = []
    depth = 0
    current = ""
    for ch in text:
        if ch == "," and depth == 0:
            specs.append(current)
            current = ""
            continue
        depth += (ch == "{") - (ch == "}")
        current += ch
    specs.append(current)
    return [s for s in specs if s]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--time-ms", type=int, default=500, help="budget per move")
    parser.add_argument("--depth", type=int, default=None, help="also cap the AI's depth")
    parser.add_argument("--games", type=int, default=100, help="games per opponent")
    parser.add_argument("--ai", default="ai", help="the player measured (default: ai)")
    parser.add_argument("--opponents", default="random,greedy,ab4")
    parser.add_argument(
        "--opponent-cmd", action="append", default=[], help="an ai serve-style command"
    )
    parser.add_argument("--opening-plies", type=int, default=OPENING_PLIES)
    parser.add_argument(
        "--balanced",
        type=float,
        default=None,
        help="only openings a depth-8 search values within this many points",
    )
    parser.add_argument(
        "--opening-depth",
        type=int,
        default=0,
        help=f"value each opening with a search this deep and split the P1 results at "
        f"+{WON_OPENING:g} for P0",
    )
    parser.add_argument(
        "--opening-range",
        type=float,
        nargs=2,
        metavar=("LOW", "HIGH"),
        default=None,
        help="only openings valued in [LOW, HIGH) points for P0 by the --opening-depth "
        "search (10 if not given)",
    )
    parser.add_argument(
        "--seat",
        type=int,
        choices=(0, 1),
        default=None,
        help="the AI always plays this seat (a new opening every game, no colour swap)",
    )
    parser.add_argument("--ply-cap", type=int, default=PLY_CAP)
    parser.add_argument("--repeat", type=int, default=0, help="end by count at N-fold repetition")
    parser.add_argument("--history", action="store_true", help="give the AI the game history")
    parser.add_argument(
        "--ai-args", default="{}", help='choose_move options for ai, e.g. {"quiescence": 2}'
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="what the in-process AI's deadline reads: wall time (as ai serve), or this "
        "process's CPU time (the nodes an idle machine gives, on a loaded one)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON line per opponent")
    parser.add_argument("--verbose", action="store_true", help="log every game's result")
    parser.add_argument("--games-out", type=Path, default=None, help="write every game (JSONL)")
    args = parser.parse_args(argv)
    specs = split_specs(args.opponents) + [f"cmd:{c}" for c in args.opponent_cmd]
    try:
        clock = time.process_time if args.clock == "cpu" else time.monotonic
        ai = make_agent(
            args.ai, args.time_ms, args.depth, args.history, json.loads(args.ai_args), clock
        )
        opponents = [make_agent(s, args.time_ms, None, clock=clock) for s in specs]
    except ValueError as exc:
        print(f"bench/ai.py: {exc}", file=sys.stderr)
        return 2
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# load average at start: {load:.2f} on {os.cpu_count()} cores", flush=True)
    status = 0
    try:
        for opponent in opponents:
            summary = run(
                ai,
                opponent,
                args.games,
                time_ms=args.time_ms,
                seed=args.seed,
                opening_plies=args.opening_plies,
                balanced=args.balanced,
                opening_depth=args.opening_depth or (10 if args.opening_range else 0),
                opening_range=tuple(args.opening_range) if args.opening_range else None,
                seat=args.seat,
                ply_cap=args.ply_cap,
                repeat=args.repeat,
                log=lambda s: print("  " + s, file=sys.stderr, flush=True),
                verbose=args.verbose,
                games_out=args.games_out,
            )
            opponent.close()
            if args.json:
                print(json.dumps(summary), flush=True)
            else:
                s = summary
                print(
                    f"{s['ai']} vs {s['opponent']}: {s['games']} games W{s['w']} D{s['d']} "
                    f"L{s['l']} score {s['score']} (95% CI {s['score_ci95'][0]}-"
                    f"{s['score_ci95'][1]}; as P0 {s['as_p0']['score']}, "
                    f"as P1 {s['as_p1']['score']}); cut at {args.ply_cap}: {s['cut_games']} "
                    f"{s['cut_results']}; over {LONG_GAME} plies: {s['over_100_plies']}; "
                    f"margin mean {s['mean_margin']:+}, median {s['median_margin']:+}; "
                    f"moves {s['ai_moves']}: mean {s['mean_move_ms']} ms, "
                    f"p99 {s['p99_move_ms']} ms, max {s['max_move_ms']} ms, over budget "
                    f"{s['over_budget_moves']} (by CPU time: p99 {s['p99_cpu_ms']} ms, over "
                    f"{s['over_budget_cpu']}); mean depth {s['mean_depth']}; "
                    f"ends {s['end_reasons']}",
                    flush=True,
                )
            if summary["over_budget_moves"] or summary["forfeits"]:
                status = 1
    finally:
        ai.close()
        for opponent in opponents:
            opponent.close()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# load average at end: {load:.2f}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())

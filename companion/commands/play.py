"""``oanquan play``: a game in the terminal, to try the rules without hardware.

It shows the board, the legal moves with a preview of what each one does,
and the scores. Moves are typed as ``3+`` / ``9-``; ``?`` previews every
legal move, ``undo`` takes one back (against the computer: the player's own
last move with the computer's reply), ``save FILE`` writes the game as one
``rules replay`` line, which ``--load FILE`` continues. ``--moves "2+ 9- ..."``
plays a scripted game without asking (the demo uses it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import fields
from typing import IO

from companion.commands._cli import guarded
from engine import EngineError, Game, Move, Position, Rules, Transition
from engine.record import load_game, save_game
from engine.rules import _CHOICES, _RANGES

HELP = "type a move like 3+ or 9-, '?' to preview every move, 'undo', 'save FILE', or 'quit'"

DESCRIPTION = (
    "Play Ô ăn quan in the terminal: two to four players at one keyboard, or one against "
    "the computer (--ai). Type a move like 3+ or 9-; '?' previews every legal move, 'undo' "
    "takes one back, 'save FILE' writes the game, which --load FILE continues."
)


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per variant switch (``--quan-non-min 0``) plus ``--rules JSON``."""
    group = parser.add_argument_group("rules (each switch is explained in docs/rules.md)")
    group.add_argument("--rules", default=None, help="variant switches as a JSON object")
    for f in fields(Rules):
        group.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f"rule_{f.name}",
            default=None,
            metavar="VALUE",
            help=_switch_help(f.name),
        )


def _switch_help(name: str) -> str:
    """What a rule flag accepts, default first (docs/rules.md explains each)."""
    default = getattr(Rules(), name)
    if name in _CHOICES:
        return "one of " + ", ".join(_CHOICES[name]) + f" (default {default})"
    if name in _RANGES:
        low, high = _RANGES[name]
        return f"a whole number {low}-{high} (default {default})"
    return f"true or false (default {str(default).lower()})"


def rules_from_args(args: argparse.Namespace) -> Rules:
    """Merge ``--rules`` and the per-switch flags; raises RulesError with the switch named."""
    data = json.loads(args.rules) if args.rules else {}
    for f in fields(Rules):
        raw = getattr(args, f"rule_{f.name}")
        if raw is None:
            continue
        if f.name == "chain":
            data[f.name] = {"true": True, "false": False}.get(raw.lower(), raw)
        elif f.type == "int" or isinstance(getattr(Rules(), f.name), int):
            data[f.name] = int(raw) if raw.lstrip("-").isdigit() else raw
        else:
            data[f.name] = raw
    return Rules.from_json(data)


def describe(transition: Transition, rules: Rules) -> str:
    """One line saying what a move did: path length, captures, why it stopped, refills."""
    parts = [f"sows {len(transition.sown)} pebble(s)"]
    relays = len(transition.picks) - 1
    if relays > 0:
        parts.append(f"{relays} relay(s)")
    if transition.captures:
        caught = ", ".join(
            f"{sq}:{n}{'+quan' if big else ''}" for sq, n, big in transition.captures
        )
        parts.append(f"captures {caught} = {transition.captured.points} points")
    parts.append(f"stops: {transition.stop}")
    for player, own, borrowed in transition.refills:
        if player != transition.before.to_move or transition.move is None:
            text = f"P{player} refills {own}"
            if borrowed:
                text += f" + {borrowed} borrowed"
            parts.append(text)
    if transition.position.over and transition.position.outcome is not None:
        parts.append(f"game over ({transition.position.outcome.reason})")
    return "; ".join(parts)


def show(game: Game, out: IO[str]) -> None:
    position = game.position
    points = position.points(game.rules)
    out.write("\n" + str(position) + "\n")
    out.write("points now: " + "  ".join(f"P{p} {n}" for p, n in enumerate(points)) + "\n")
    if not position.over:
        moves = " ".join(str(m) for m in game.legal_moves())
        out.write(f"P{position.to_move} to move; legal: {moves}\n")


def previews(game: Game, out: IO[str]) -> None:
    for move in game.legal_moves():
        out.write(f"  {move!s:>4}  {describe(game.preview(move), game.rules)}\n")


def take_back(game: Game, computer_side: int | None = None) -> list[str]:
    """Undo the last move; against the computer, back to before the player's own last move.

    Taking back only the computer's reply would be pointless: it would play it
    again at once. So the computer's moves at the end go, then the player's
    move before them. Returns what was taken back, last first ("P1 9-"); empty
    when there is nothing of the player's to take back.
    """
    steps = game.transitions
    count = 1
    if computer_side is not None:
        replies = 0
        while replies < len(steps) and steps[-1 - replies].before.to_move == computer_side:
            replies += 1
        count = replies + 1
    if count > len(steps):
        return []
    taken = []
    for _ in range(count):
        mover = game.transitions[-1].before.to_move
        move = game.undo()
        taken.append(f"P{mover} {move}" if move is not None else f"P{mover}'s stop")
    return taken


def run(
    game: Game,
    inp: IO[str],
    out: IO[str],
    script: list[str] | None = None,
    computer: Callable[[Game], Move] | None = None,
    computer_side: int = 1,
) -> int:
    """The read-eval loop; returns the exit status (1 if a scripted move was illegal)."""
    show(game, out)
    queue = list(script) if script is not None else None
    while not game.is_over:
        if computer is not None and game.position.to_move == computer_side:
            transition = game.play(computer(game))
            out.write(f"computer plays {transition.move}: {describe(transition, game.rules)}\n")
            show(game, out)
            continue
        if queue is not None:
            if not queue:
                break
            line = queue.pop(0)
            out.write(f"> {line}\n")
        else:
            out.write("> ")
            out.flush()
            line = inp.readline()
            if not line:
                break
        line = line.strip()
        if not line:
            continue
        if line in ("q", "quit", "exit"):
            break
        if line in ("?", "help", "h"):
            out.write(HELP + "\n")
            previews(game, out)
            continue
        if line == "undo":
            taken = take_back(game, computer_side if computer is not None else None)
            if taken:
                out.write("took back " + ", ".join(taken) + "\n")
            else:
                out.write("nothing to undo\n")
            show(game, out)
            continue
        if line == "save" or line.startswith("save "):
            path = line[5:].strip()
            if not path:
                out.write("save needs a file name: save FILE\n")
                continue
            try:
                save_game(path, game)
                out.write(f"saved {path} (continue it with: oanquan play --load {path})\n")
            except OSError as exc:
                out.write(f"cannot save {path!r}: {exc.strerror or exc}\n")
            continue
        try:
            transition = game.play(Move.parse(line))
        except EngineError as exc:
            out.write(f"{exc}\n")
            if queue is not None:
                return 1
            continue
        out.write(
            f"P{transition.before.to_move} {transition.move}: {describe(transition, game.rules)}\n"
        )
        show(game, out)
    outcome = game.outcome
    if outcome is not None:
        who = "a draw" if outcome.winner is None else f"P{outcome.winner} wins"
        out.write(f"final score {outcome.final[0]} - {outcome.final[1]}: {who}\n")
    return 0


def main(argv: list[str]) -> int:
    """Ctrl-C (also during the computer's search) and ``| head`` end it without a traceback."""
    return guarded("oanquan play", lambda: _main(argv))


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="oanquan play", description=DESCRIPTION)
    add_rules_arguments(parser)
    parser.add_argument("--start", help="start position in the one-line notation")
    parser.add_argument(
        "--first", type=int, default=None, metavar="SEAT", help="who moves first: 0-3 (default 0)"
    )
    parser.add_argument(
        "--load",
        metavar="FILE",
        help="continue a saved game: its rules, start and moves (from 'save FILE', "
        "'oanquan journal export', or a 'rules replay' line)",
    )
    parser.add_argument("--moves", help="play these moves without asking, e.g. '2+ 9-'")
    parser.add_argument(
        "--ai", metavar="LEVEL", help="play against the computer: easy, medium or hard"
    )
    parser.add_argument(
        "--ai-side",
        type=int,
        default=None,
        metavar="SEAT",
        help="with --ai: the computer's seat (default 1)",
    )
    args = parser.parse_args(argv)
    try:
        game = _game_from_args(args)
        if args.ai_side is not None and not args.ai:
            raise ValueError("--ai-side needs --ai LEVEL: without --ai nobody is the computer")
        seats = game.rules.players
        if args.ai_side is not None and not 0 <= args.ai_side < seats:
            raise ValueError(f"--ai-side: a seat from 0 to {seats - 1}, got {args.ai_side}")
    except (EngineError, ValueError) as exc:
        print(f"oanquan play: {exc}", file=sys.stderr)
        return 2
    script = args.moves.split() if args.moves else None
    computer = None
    if args.ai:
        from companion.referee.ai import ai_move, level_names

        if args.ai not in level_names():
            print(f"oanquan play: --ai: choose one of {', '.join(level_names())}", file=sys.stderr)
            return 2
        level = args.ai

        def computer(game: Game) -> Move:
            history = [game.start] + [t.before for t in game.transitions]
            return ai_move(game.position, game.rules, level, history=history)

    side = 1 if args.ai_side is None else args.ai_side
    return run(game, sys.stdin, sys.stdout, script, computer, side)


def _game_from_args(args: argparse.Namespace) -> Game:
    """A new game from the rule flags, or the saved game of ``--load`` (which has its own)."""
    if args.load is None:
        rules = rules_from_args(args)
        if args.start:
            if args.first is not None:
                raise ValueError("--first: the --start position already says who moves")
            return Game(rules, Position.from_text(args.start))
        first = 0 if args.first is None else args.first
        if not 0 <= first < rules.players:
            raise ValueError(f"--first: a seat from 0 to {rules.players - 1}, got {first}")
        return Game(rules, Position.initial(rules, first=first))
    given = [
        f"--{f.name.replace('_', '-')}"
        for f in fields(Rules)
        if getattr(args, f"rule_{f.name}") is not None
    ]
    given += [f for f in ("--rules", "--start", "--first") if getattr(args, f[2:]) is not None]
    if given:
        raise ValueError(f"--load takes the rules and start from the file; leave out {given[0]}")
    try:
        return load_game(args.load).replay()
    except EngineError as exc:
        raise ValueError(f"--load {args.load}: {exc}") from None

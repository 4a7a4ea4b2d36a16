"""``oanquan demo`` and ``oanquan run``.

Until the referee lands, the demo plays the hand-traced full game of
rules.md (V40) in the terminal game, so ``make demo`` always shows something
real on a fresh machine.
"""

from __future__ import annotations

import sys

from companion import terminal
from engine import Game

DEMO_MOVES = ["5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-"]


def demo_main(argv: list[str]) -> int:
    return terminal.run(Game(), sys.stdin, sys.stdout, DEMO_MOVES)


def run_main(argv: list[str]) -> int:
    print("oanquan run: the appliance loop is not built yet", file=sys.stderr)
    return 2

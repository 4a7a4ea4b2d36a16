"""Hints for the screen: the search's best move and the reason a player can read."""

from __future__ import annotations

import random

from companion.controller import Advice
from engine import Position, Rules
from engine.search import hint


def advise(position: Position, rules: Rules, time_ms: int = 300, seed: int = 0) -> Advice:
    """Best move, and why: the points it takes now, or the capture it stops."""
    h = hint(position, rules, time_ms, rng=random.Random(seed))
    if h.captured.points:
        return Advice(h.move, "gain", h.captured.points)
    if h.prevents is not None:
        return Advice(h.move, "prevent", h.prevents.points)
    return Advice(h.move, "quiet")

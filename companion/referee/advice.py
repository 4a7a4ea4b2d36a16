"""Hints and the companion's own moves, worded for the screen.

Both end as an :class:`Advice`: the move, and the one
reason a player can read on a 128x64 panel (points taken now, a capture
stopped, or a quiet move).
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable
from dataclasses import dataclass

from companion.referee.ai import ai_move
from engine import Move, Position, Rules, multisearch
from engine.play import play
from engine.search import hint


class AdviceReason(enum.StrEnum):
    """The one reason a 128x64 panel has room for."""

    GAIN = "gain"
    PREVENT = "prevent"
    QUIET = "quiet"


@dataclass(frozen=True, slots=True)
class Advice:
    """A suggested move and why: ``gain`` points, or ``prevent`` a capture of ``amount``."""

    move: Move
    reason: AdviceReason = AdviceReason.QUIET
    amount: int = 0


def advise(position: Position, rules: Rules, time_ms: int = 300, seed: int = 0) -> Advice:
    """Best move, and why: the points it takes now, or the capture it stops."""
    if rules.players > 2:
        # Round a ring the hint is the search's move and what it takes now.
        move = multisearch.choose_move(
            position, rules, time_ms=time_ms, rng=random.Random(seed)
        ).move
        points = play(position, move, rules).captured.points
        return Advice(move, AdviceReason.GAIN, points) if points else Advice(move)
    h = hint(position, rules, time_ms, rng=random.Random(seed))
    if h.captured.points:
        return Advice(h.move, AdviceReason.GAIN, h.captured.points)
    if h.prevents is not None:
        return Advice(h.move, AdviceReason.PREVENT, h.prevents.points)
    return Advice(h.move)


def opponent_advice(
    position: Position,
    rules: Rules,
    level: str,
    *,
    rng: random.Random | None = None,
    history: Iterable[Position] = (),
) -> Advice:
    """The companion's own move at ``level``, with what it takes.

    The reason is only ever the capture: "it stops your capture" would tell
    the visitor what they were about to play.
    """
    move = ai_move(position, rules, level, rng=rng, history=history)
    points = play(position, move, rules).captured.points
    return Advice(move, AdviceReason.GAIN, points) if points else Advice(move)

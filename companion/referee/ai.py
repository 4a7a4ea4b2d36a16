"""The kiosk's computer opponent: difficulty levels over :mod:`engine.search`.

``ai_move(position, rules, level)`` is what the terminal (``--ai LEVEL``) and
the appliance call; the levels themselves (depth cap, time per move, chance
of a random move) live in :data:`engine.search.LEVELS` so the bench and the
device agree on what "medium" means.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from engine import legal_moves, multisearch
from engine.move import Move
from engine.position import Position
from engine.rules import Rules
from engine.search import LEVELS, GameOverError, Level, level_move

__all__ = ["LEVELS", "GameOverError", "Level", "ai_move", "level_names"]


def level_names() -> list[str]:
    """Level names from easiest to hardest, for menus and ``--ai`` choices."""
    return list(LEVELS)


def ai_move(
    position: Position,
    rules: Rules,
    level: str | Level = "medium",
    *,
    rng: random.Random | None = None,
    history: Iterable[Position] = (),
) -> Move:
    """The computer's move at this level.

    ``history`` (earlier positions of the game, e.g. ``[t.before for t in
    game.transitions]``) lets the search avoid repeating the game's own
    cycles. Raises ``ValueError`` for an unknown level and
    :class:`GameOverError` when the game is over.
    """
    if isinstance(level, str) and level not in LEVELS:
        raise ValueError(f"unknown AI level {level!r}; choose one of {', '.join(LEVELS)}")
    if rules.players > 2:
        return ring_move(position, rules, level, rng=rng)
    return level_move(position, rules, level, rng=rng, history=history)


def ring_move(
    position: Position, rules: Rules, level: str | Level, *, rng: random.Random | None = None
) -> Move:
    """Three or four seats: the same level's depth cap, time and blunder rate, searched by
    :mod:`engine.multisearch` (paranoid alpha-beta round the ring)."""
    lv = LEVELS[level] if isinstance(level, str) else level
    rng = rng if rng is not None else random.Random()
    if lv.random_move and rng.random() < lv.random_move:
        return rng.choice(legal_moves(position, rules))
    return multisearch.choose_move(
        position, rules, time_ms=lv.time_ms, depth=lv.depth, rng=rng
    ).move

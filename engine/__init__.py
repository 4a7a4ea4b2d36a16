"""Rules engine for Ô ăn quan: positions, moves, variants, games and records.

Standard library only, so it runs anywhere the referee does and the search
can use it on a Raspberry Pi without extra packages.

>>> from engine import Game
>>> game = Game()
>>> [str(m) for m in game.legal_moves()][:4]
['1+', '1-', '2+', '2-']

Three or four seats play round a longer ring (:mod:`engine.ring`):

>>> game = Game(Rules(players=3))
>>> game.position.to_text()
'0B|5,5,5,5,5|0B|5,5,5,5,5|0B|5,5,5,5,5 P0 s0/0/0 q0/0/0 d0/0/0 n0 l0/0/0'
"""

from engine.errors import (
    EngineError,
    GameRecordError,
    IllegalMoveError,
    NotationError,
    RulesError,
)
from engine.game import Game
from engine.match import MatchStep, match_next
from engine.move import Move
from engine.play import (
    Capture,
    Captured,
    Drop,
    Event,
    GameEnd,
    Pass,
    PickUp,
    Refill,
    Transition,
    TurnEnd,
    end_now,
    illegal_reason,
    legal_moves,
    play,
    start_turn,
)
from engine.position import Outcome, Position, PositionStatus
from engine.ring import Ring
from engine.rules import DEFAULT_RULES, Rules

__all__ = [
    "DEFAULT_RULES",
    "Capture",
    "Captured",
    "Drop",
    "EngineError",
    "Event",
    "Game",
    "GameEnd",
    "GameRecordError",
    "IllegalMoveError",
    "MatchStep",
    "Move",
    "NotationError",
    "Outcome",
    "Pass",
    "PickUp",
    "Position",
    "PositionStatus",
    "Refill",
    "Ring",
    "Rules",
    "RulesError",
    "Transition",
    "TurnEnd",
    "end_now",
    "illegal_reason",
    "legal_moves",
    "match_next",
    "play",
    "start_turn",
]

"""The engine's exception tree; each leaf is also the builtin a caller expects."""

from __future__ import annotations


class EngineError(Exception):
    """Root of every error the engine raises on purpose."""


class RulesError(EngineError, ValueError):
    """An unknown variant switch or an invalid value for one."""


class NotationError(EngineError, ValueError):
    """Text or JSON that does not describe a move or a position."""


class IllegalMoveError(EngineError, ValueError):
    """A well-formed move that the rules do not allow in this position.

    ``reason`` is the bare explanation ("square 9 is empty") for callers
    that show it without the move and position around it.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class GameRecordError(EngineError, ValueError):
    """A game record file that is truncated, corrupt or does not replay."""

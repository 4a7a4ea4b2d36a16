"""A game in progress: rules, start position, history, undo, repetition.

Positions are immutable, so the game is a thin list of transitions over them
(python-chess's move stack, with the checked path as the only way in).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from engine.errors import IllegalMoveError
from engine.move import Move
from engine.play import Transition, end_now, legal_moves, play, start_turn
from engine.position import Outcome, Position
from engine.rules import Rules


def _key(p: Position) -> tuple[object, ...]:
    return (p.board, p.big, p.store, p.bigs, p.debt, p.lent, p.to_move)


class Game:
    """Rules + start position + the moves played so far.

    >>> g = Game()
    >>> _ = g.play("2+")
    >>> g.position.store
    (6, 0)
    >>> g.undo(); g.position == Game().position
    Move.parse('2+')
    True
    """

    def __init__(self, rules: Rules | None = None, start: Position | None = None) -> None:
        self.rules = rules or Rules()
        given = start or Position.initial(self.rules)
        self.start = given
        #: the start after compulsory start-of-turn processing (a refill, or the end)
        self._first = start_turn(given, self.rules)
        self.transitions: list[Transition] = []
        self._counted: list[tuple[object, ...] | None] = []
        self._seen: Counter[tuple[object, ...]] = Counter([_key(self._first.position)])

    @property
    def position(self) -> Position:
        return self.transitions[-1].position if self.transitions else self._first.position

    @property
    def moves(self) -> list[Move]:
        return [t.move for t in self.transitions if t.move is not None]

    @property
    def outcome(self) -> Outcome | None:
        return self.position.outcome

    @property
    def is_over(self) -> bool:
        return self.position.over

    def legal_moves(self) -> list[Move]:
        return legal_moves(self.position, self.rules)

    def preview(self, move: Move | str) -> Transition:
        """What the move would do, without playing it."""
        return play(self.position, move, self.rules)

    def play(self, move: Move | str) -> Transition:
        """Play a legal move; raises :class:`IllegalMoveError` otherwise."""
        if self.is_over:
            raise IllegalMoveError(
                f"illegal move {str(move)!r}: the game is over", "the game is over"
            )
        transition = play(self.position, move, self.rules)
        if not self.transitions and self._first.events:
            # The first step also carries the start position's refill, so nothing is hidden.
            transition = Transition(
                self.start,
                transition.move,
                transition.position,
                self._first.events + transition.events,
                transition.captured,
                transition.stop,
            )
        after = transition.position
        key = None
        if not after.over and self.rules.repetition:
            key = _key(after)
            self._seen[key] += 1
            if self._seen[key] >= self.rules.repetition:
                ended = end_now(after, "repetition", self.rules)
                transition = Transition(
                    transition.before,
                    transition.move,
                    ended.position,
                    transition.events + ended.events,
                    transition.captured,
                    transition.stop,
                )
        self.transitions.append(transition)
        self._counted.append(key)
        return transition

    def play_all(self, moves: Iterable[Move | str]) -> None:
        for move in moves:
            self.play(move)

    def undo(self) -> Move | None:
        """Take back the last step (None for an agreed stop); IndexError when there is none."""
        if not self.transitions:
            raise IndexError("no move to undo")
        transition = self.transitions.pop()
        key = self._counted.pop()
        if key is not None:
            self._seen[key] -= 1
        return transition.move

    def stop_and_count(self) -> Transition:
        """Players agree to stop: settle as R12 (rules.md R16, the device's 'count now')."""
        transition = end_now(self.position, "repetition", self.rules)
        self.transitions.append(transition)
        self._counted.append(None)
        return transition

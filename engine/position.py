"""Positions: frozen values with a one-line notation and the interchange JSON.

The one-line notation lists the ring 0 | 1..5 | 6 | 7..11 with ``B`` marking a
big stone still in place, then the side to move and the bookkeeping::

    0B|5,5,5,5,5|0B|5,5,5,5,5 P0 s0/0 q0/0 d0/0 n0

``s`` is the captured pebbles (stores), ``q`` the captured big stones, ``d``
the debts and ``n`` the ply. Optional tokens: ``t0/-`` (who took each stone),
``f`` + 12 characters (field owners in match play: ``-`` for a mandarin,
``0``/``1`` for a sold or own field, ``2`` for a pawned one) and, once the
game is over, ``end:REASON:F0/F1:WINNER:SWEEP0/SWEEP1:UNCLAIMED``.

Three or four seats (``Rules(players=N)``, :mod:`engine.ring`) extend both
forms without changing the two-player ones: the board token lists every side
in ring order (``0B|5,5,5,5,5|0B|5,5,5,5,5|0B|5,5,5,5,5`` for three), the
pairs become N values in seat order (``s0/0/0``), a required ``l`` token after
the ply gives what each seat has lent (``l0/0/0``), and JSON gets N-long
lists plus ``"lent"``. Two seats need no ``lent``: each lends only to the
other, so it is the other's debt. Match play (field owners) is two-player only.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.core import END_REASONS, State
from engine.errors import NotationError
from engine.ring import players_for_squares
from engine.ringcore import RingState
from engine.rules import Rules

_JSON_KEYS = {
    "board",
    "big",
    "store",
    "bigs",
    "debt",
    "to_move",
    "ply",
    "over",
    "end_reason",
    "final",
    "winner",
    "sweep",
    "unclaimed",
    "big_taker",
    "field_owner",
    "lent",
}


class PositionStatus(enum.IntFlag):
    """Everything that can be wrong with a position, so a reading shows all of it at once."""

    VALID = 0
    NEGATIVE_COUNT = enum.auto()
    WRONG_TOTAL = enum.auto()
    STONES = enum.auto()
    STORE = enum.auto()
    OUTCOME = enum.auto()
    #: the board has another number of seats than ``Rules.players``
    SEATS = enum.auto()
    #: pebbles lent and borrowed (3-4 seats) do not add up
    DEBTS = enum.auto()


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the reason, the final scores and the winner (None = draw)."""

    reason: str
    final: tuple[int, ...]
    winner: int | None
    sweep: tuple[int, ...] | None = None
    unclaimed: int | None = None

    @property
    def margin(self) -> int:
        """Seat 0's lead over the best other seat (negative when behind)."""
        return self.final[0] - max(self.final[1:])

    def places(self) -> tuple[int, ...]:
        """Each seat's place, 1 = first; equal scores share a place (1, 2, 2, 4).

        The ranking is by final score, except that a declared winner comes
        first (two-player ``no_refill=lose`` can make the loser richer).
        """
        final = self.final
        w = self.winner
        if w is not None and (final[w] != max(final) or final.count(final[w]) > 1):
            return tuple(1 if p == w else 2 for p in range(len(final)))
        return tuple(1 + sum(1 for other in final if other > mine) for mine in final)


@dataclass(frozen=True, slots=True)
class Position:
    """A whole game position (interchange.md), immutable and hashable.

    >>> p = Position.initial()
    >>> p.to_text()
    '0B|5,5,5,5,5|0B|5,5,5,5,5 P0 s0/0 q0/0 d0/0 n0'
    >>> Position.from_text(p.to_text()) == p
    True
    """

    board: tuple[int, ...]
    big: tuple[int, ...] = (1, 1)
    store: tuple[int, ...] = (0, 0)
    bigs: tuple[int, ...] = (0, 0)
    debt: tuple[int, ...] = (0, 0)
    to_move: int = 0
    ply: int = 0
    big_taker: tuple[int | None, ...] = (None, None)
    field_owner: tuple[int | None, ...] | None = None
    outcome: Outcome | None = field(default=None)
    #: pebbles each seat has lent (3-4 seats only; empty for two, where it is the other's debt)
    lent: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.board) == 12:
            # Two seats: the checks of the two-player engine, plus one for the pairs.
            if self.to_move not in (0, 1):
                raise NotationError(f"position: to_move must be 0 or 1, got {self.to_move!r}")
            if self.field_owner is not None and len(self.field_owner) != 12:
                raise NotationError("position: field_owner must have 12 entries")
            if not (
                len(self.big) == len(self.store) == len(self.bigs) == len(self.debt) == 2
                and len(self.big_taker) == 2
                and not self.lent
                and (self.outcome is None or len(self.outcome.final) == 2)
            ):
                self._check_seats(2)
            return
        if len(self.board) not in (18, 24):
            raise NotationError(f"position: board must have 12 squares, got {len(self.board)}")
        n = len(self.board) // 6
        if self.to_move not in range(n):
            raise NotationError(f"position: to_move must be {_seats_text(n)}, got {self.to_move!r}")
        if self.field_owner is not None:
            raise NotationError("position: field_owner (match play) is two-player only")
        if not self.lent:
            object.__setattr__(self, "lent", (0,) * n)
        self._check_seats(n)

    def _check_seats(self, n: int) -> None:
        """Every per-seat field has one entry per seat (and ``lent`` only with 3-4 seats)."""
        for name in ("big", "store", "bigs", "debt", "big_taker"):
            if len(getattr(self, name)) != n:
                raise NotationError(f"position: {name} must have {n} entries, one per seat")
        if n == 2 and self.lent:
            raise NotationError("position: lent is only kept for 3 or 4 seats")
        if n > 2 and len(self.lent) != n:
            raise NotationError(f"position: lent must have {n} entries, one per seat")
        if self.outcome is not None and (
            len(self.outcome.final) != n
            or (self.outcome.sweep is not None and len(self.outcome.sweep) != n)
        ):
            raise NotationError(f"position: final and sweep must have {n} entries, one per seat")

    # -- construction -------------------------------------------------------

    @classmethod
    def initial(cls, rules: Rules | None = None, *, first: int = 0) -> Position:
        """The opening setup (R2); ``mandarin_setup=small`` puts pebbles in the mandarins."""
        rules = rules or Rules()
        n = rules.players
        if rules.mandarin_setup == "small":
            v = rules.mandarin_value
            side: tuple[int, ...] = (v, 5, 5, 5, 5, 5)
            big = (0,) * n
        else:
            side = (0, 5, 5, 5, 5, 5)
            big = (1,) * n
        if n == 2:
            return cls(side * 2, big=big, to_move=first)
        zeros = (0,) * n
        return cls(side * n, big, zeros, zeros, zeros, first, 0, (None,) * n)

    @property
    def over(self) -> bool:
        return self.outcome is not None

    @property
    def players(self) -> int:
        """Seats round the ring: 2, 3 or 4 (from the board's length)."""
        return len(self.board) // 6

    def points(self, rules: Rules | None = None) -> tuple[int, ...]:
        """Points each player holds now, debts settled as if the game ended here."""
        if self.outcome is not None:
            return self.outcome.final
        value = (rules or Rules()).mandarin_value
        s, q, d = self.store, self.bigs, self.debt
        if self.players == 2:
            return (s[0] + value * q[0] - d[0] + d[1], s[1] + value * q[1] - d[1] + d[0])
        return tuple(s[p] + value * q[p] - d[p] + self.lent[p] for p in range(self.players))

    def status(self, rules: Rules | None = None) -> PositionStatus:
        """Check the position against the rules' totals (R2, R14)."""
        rules = rules or Rules()
        n = self.players
        flags = PositionStatus.VALID
        if n != rules.players:
            flags |= PositionStatus.SEATS
        if any(v < 0 for v in self.board) or any(v < 0 for v in self.debt + self.lent):
            flags |= PositionStatus.NEGATIVE_COUNT
        if n > 2 and sum(self.debt) != sum(self.lent):
            flags |= PositionStatus.DEBTS
        if rules.refill != "bank" and any(v < 0 for v in self.store):
            flags |= PositionStatus.STORE
        if any(v not in (0, 1) for v in self.big) or any(v < 0 for v in self.bigs):
            flags |= PositionStatus.STONES
        stones = n if rules.mandarin_setup == "big" else 0
        if sum(self.big) + sum(self.bigs) != stones:
            flags |= PositionStatus.STONES
        pebbles = 25 * n + (n * rules.mandarin_value if rules.mandarin_setup == "small" else 0)
        if self.outcome is None:
            if sum(self.board) + sum(self.store) != pebbles:
                flags |= PositionStatus.WRONG_TOTAL
        else:
            o = self.outcome
            if o.reason not in END_REASONS or o.winner not in (*range(n), None):
                flags |= PositionStatus.OUTCOME
            if o.unclaimed is not None:
                total = pebbles + stones * rules.mandarin_value
                if sum(o.final) + o.unclaimed != total:
                    flags |= PositionStatus.WRONG_TOTAL
        return flags

    def is_valid(self, rules: Rules | None = None) -> bool:
        return self.status(rules) == PositionStatus.VALID

    def describe_status(self, rules: Rules | None = None) -> str:
        """One line naming every problem of :meth:`status`, for error messages."""
        flags = self.status(rules)
        if flags == PositionStatus.VALID:
            return "valid"
        problems = []
        if PositionStatus.NEGATIVE_COUNT in flags:
            problems.append("negative counts")
        if PositionStatus.STORE in flags:
            problems.append("a negative store")
        if PositionStatus.STONES in flags:
            problems.append("big stones on the board and captured do not add up")
        if PositionStatus.WRONG_TOTAL in flags:
            problems.append("pebble totals do not add up")
        if PositionStatus.OUTCOME in flags:
            problems.append("an invalid outcome")
        if PositionStatus.SEATS in flags:
            seats = (rules or Rules()).players
            problems.append(f"{self.players} seats on the board but rules for {seats}")
        if PositionStatus.DEBTS in flags:
            problems.append("pebbles borrowed and lent do not add up")
        return "impossible position: " + ", ".join(problems)

    def rotated(self) -> Position:
        """The same position with every seat moved on by one: seat p becomes p + 1.

        The ring turns one side (square ``sq`` goes to ``sq - 6``; with two
        seats that is ``sq + 6``, the players swapped).
        """
        n = self.players

        def seats(values: tuple[Any, ...]) -> Any:
            return values[-1:] + values[:-1]

        def seat(p: int | None) -> int | None:
            return None if p is None else (p + 1) % n

        owners = None
        if self.field_owner is not None:
            owners = tuple(
                None if o is None else (o if o == 2 else 1 - o)
                for o in self.field_owner[6:] + self.field_owner[:6]
            )
        outcome = None
        if self.outcome is not None:
            o = self.outcome
            outcome = Outcome(
                o.reason,
                seats(o.final),
                seat(o.winner),
                None if o.sweep is None else seats(o.sweep),
                o.unclaimed,
            )
        return Position(
            self.board[6:] + self.board[:6],
            self.big[1:] + self.big[:1],
            seats(self.store),
            seats(self.bigs),
            seats(self.debt),
            (self.to_move + 1) % n,
            self.ply,
            tuple(seat(t) for t in self.big_taker[1:] + self.big_taker[:1]),
            owners,
            outcome,
            seats(self.lent),
        )

    # -- kernel state -------------------------------------------------------

    def to_state(self) -> State:
        """The two-player kernel's state (:mod:`engine.core`); more seats: :meth:`to_ring_state`."""
        if len(self.board) != 12:
            raise NotationError(
                f"position: {self.players} seats need the ring kernel (to_ring_state)"
            )
        o = self.outcome
        return State(
            list(self.board),
            list(self.big),
            list(self.store),
            list(self.bigs),
            list(self.debt),
            self.to_move,
            self.ply,
            list(self.big_taker),
            self.field_owner,
            None
            if o is None
            else (o.reason, o.final, o.winner, o.sweep or (0, 0), o.unclaimed or 0),  # type: ignore[arg-type]
        )

    def to_ring_state(self) -> RingState:
        """The state of :mod:`engine.ringcore`, for any number of seats."""
        if self.field_owner is not None:
            raise NotationError("position: field_owner (match play) needs the two-player kernel")
        n = self.players
        o = self.outcome
        lent = self.lent if n > 2 else self.debt[::-1]
        return RingState(
            list(self.board),
            list(self.big),
            list(self.store),
            list(self.bigs),
            list(self.debt),
            list(lent),
            self.to_move,
            self.ply,
            list(self.big_taker),
            None
            if o is None
            else (o.reason, o.final, o.winner, o.sweep or (0,) * n, o.unclaimed or 0),
        )

    @classmethod
    def from_state(cls, st: State | RingState, *, sweep_known: bool = True) -> Position:
        outcome = None
        if st.outcome is not None:
            reason, final, winner, sweep, unclaimed = st.outcome
            outcome = Outcome(reason, tuple(final), winner, tuple(sweep), unclaimed)
        if isinstance(st, RingState):
            n = len(st.big)
            return cls(
                tuple(st.b),
                tuple(st.big),
                tuple(st.store),
                tuple(st.bigs),
                tuple(st.debt),
                st.to_move,
                st.ply,
                tuple(st.taker),
                None,
                outcome,
                tuple(st.lent) if n > 2 else (),
            )
        return cls(
            tuple(st.b),
            (st.big[0], st.big[1]),
            (st.store[0], st.store[1]),
            (st.bigs[0], st.bigs[1]),
            (st.debt[0], st.debt[1]),
            st.to_move,
            st.ply,
            (st.taker[0], st.taker[1]),
            st.field_owner,
            outcome,
        )

    # -- JSON ---------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The interchange.md position object (plus big_taker/field_owner when set).

        Three or four seats: every per-seat list has N entries and ``lent`` is added.
        """
        data: dict[str, Any] = {
            "board": list(self.board),
            "big": list(self.big),
            "store": list(self.store),
            "bigs": list(self.bigs),
            "debt": list(self.debt),
        }
        if self.lent:
            data["lent"] = list(self.lent)
        data["to_move"] = self.to_move
        data["ply"] = self.ply
        data["over"] = self.over
        if any(t is not None for t in self.big_taker):
            data["big_taker"] = list(self.big_taker)
        if self.field_owner is not None:
            data["field_owner"] = list(self.field_owner)
        if self.outcome is not None:
            o = self.outcome
            data["end_reason"] = o.reason
            data["final"] = list(o.final)
            data["winner"] = o.winner
            if o.sweep is not None:
                data["sweep"] = list(o.sweep)
            if o.unclaimed is not None:
                data["unclaimed"] = o.unclaimed
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Position:
        """Strict reader: unknown keys, wrong shapes and negative counts are errors.

        The number of seats comes from the board's length (12, 18 or 24).
        """
        if not isinstance(data, Mapping):
            raise NotationError(f"position: expected a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - _JSON_KEYS)
        if unknown:
            raise NotationError(f"position: unknown key {unknown[0]!r}")
        if "board" not in data:
            raise NotationError("position: missing key 'board'")
        raw_board = data["board"]
        n = 2
        if isinstance(raw_board, list | tuple) and len(raw_board) in (18, 24):
            n = players_for_squares(len(raw_board))
        board = _ints(raw_board, "board", 6 * n, minimum=0)
        big = _ints(data.get("big", [1] * n), "big", n, minimum=0)
        store = _ints(data.get("store", [0] * n), "store", n)
        bigs = _ints(data.get("bigs", [0] * n), "bigs", n, minimum=0)
        debt = _ints(data.get("debt", [0] * n), "debt", n, minimum=0)
        lent: tuple[int, ...] = ()
        if "lent" in data:
            if n == 2:
                raise NotationError("position: lent is only kept for 3 or 4 seats")
            lent = _ints(data["lent"], "lent", n, minimum=0)
        seats = (*range(n),)
        to_move = data.get("to_move", 0)
        if to_move not in seats or isinstance(to_move, bool):
            raise NotationError(f"position: to_move must be {_seats_text(n)}, got {to_move!r}")
        ply = data.get("ply", 0)
        if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
            raise NotationError(f"position: ply must be a non-negative integer, got {ply!r}")
        taker_raw = data.get("big_taker", [None] * n)
        if (
            not isinstance(taker_raw, list)
            or len(taker_raw) != n
            or any(t not in (None, *seats) or isinstance(t, bool) for t in taker_raw)
        ):
            raise NotationError(
                f"position: big_taker must be {_WORDS[n]} entries of {_seats_text(n)} or null"
            )
        owners = data.get("field_owner")
        if owners is not None:
            if n != 2:
                raise NotationError("position: field_owner (match play) is two-player only")
            if (
                not isinstance(owners, list)
                or len(owners) != 12
                or any(o not in (None, 0, 1, 2) or isinstance(o, bool) for o in owners)
            ):
                raise NotationError("position: field_owner must be 12 entries of 0, 1, 2 or null")
            owners = tuple(owners)
        over = data.get("over", False)
        if not isinstance(over, bool):
            raise NotationError(f"position: over must be true or false, got {over!r}")
        outcome = None
        if over:
            reason = data.get("end_reason")
            if reason not in END_REASONS:
                raise NotationError(
                    f"position: end_reason must be one of {END_REASONS}, got {reason!r}"
                )
            final = _ints(data.get("final"), "final", n)
            winner = data.get("winner")
            if winner not in (*seats, None) or isinstance(winner, bool):
                raise NotationError(
                    f"position: winner must be {_seats_text(n)} or null, got {winner!r}"
                )
            sweep = data.get("sweep")
            unclaimed = data.get("unclaimed")
            outcome = Outcome(
                reason,
                final,
                winner,
                None if sweep is None else _ints(sweep, "sweep", n, minimum=0),
                None if unclaimed is None else _ints([unclaimed], "unclaimed", 1, minimum=0)[0],
            )
        return cls(
            board,
            big,
            store,
            bigs,
            debt,
            to_move,
            ply,
            tuple(taker_raw),
            owners,
            outcome,
            lent,
        )

    # -- text ---------------------------------------------------------------

    def to_text(self) -> str:
        """One-line notation that :meth:`from_text` reads back exactly."""

        def mandarin(k: int) -> str:
            return f"{self.board[6 * k]}{'B' if self.big[k] else ''}"

        def seats(prefix: str, values: tuple[int, ...]) -> str:
            return prefix + "/".join(map(str, values))

        b = self.board
        n = self.players
        sides = "|".join(
            f"{mandarin(k)}|{','.join(map(str, b[6 * k + 1 : 6 * k + 6]))}" for k in range(n)
        )
        parts = [
            sides,
            f"P{self.to_move}",
            seats("s", self.store),
            seats("q", self.bigs),
            seats("d", self.debt),
            f"n{self.ply}",
        ]
        if self.lent:
            parts.append(seats("l", self.lent))
        if any(t is not None for t in self.big_taker):
            parts.append("t" + "/".join("-" if t is None else str(t) for t in self.big_taker))
        if self.field_owner is not None:
            parts.append("f" + "".join("-" if o is None else str(o) for o in self.field_owner))
        if self.outcome is not None:
            o = self.outcome
            winner = "-" if o.winner is None else str(o.winner)
            text = f"end:{o.reason}:{'/'.join(map(str, o.final))}:{winner}"
            if o.sweep is not None and o.unclaimed is not None:
                text += f":{'/'.join(map(str, o.sweep))}:{o.unclaimed}"
            parts.append(text)
        return " ".join(parts)

    @classmethod
    def from_text(cls, text: str) -> Position:
        """Read the one-line notation of :meth:`to_text`."""
        if not isinstance(text, str):
            raise NotationError(f"position text must be a string, got {text!r}")
        tokens = text.split()
        if len(tokens) < 6:
            raise NotationError(f"position text too short: {text!r}")
        cells = tokens[0].split("|")
        n = len(cells) // 2
        if len(cells) % 2 or not 2 <= n <= 4:
            raise NotationError(f"bad board in position text: {tokens[0]!r}")
        board: list[int] = []
        big: list[int] = []
        for k in range(n):
            m = _MANDARIN_RE.fullmatch(cells[2 * k])
            row = _ROW_RE.fullmatch(cells[2 * k + 1])
            if m is None or row is None:
                raise NotationError(f"bad board in position text: {tokens[0]!r}")
            board.append(int(m.group(1)))
            big.append(1 if m.group(2) else 0)
            board.extend(int(x) for x in cells[2 * k + 1].split(","))
        if tokens[1] not in {f"P{p}" for p in range(n)}:
            raise NotationError(f"bad side to move in position text: {tokens[1]!r}")
        store = _text_ints(tokens[2], "s", n, signed=True)
        bigs = _text_ints(tokens[3], "q", n)
        debt = _text_ints(tokens[4], "d", n)
        if not re.fullmatch(r"n\d+", tokens[5]):
            raise NotationError(f"bad ply in position text: {tokens[5]!r}")
        taker: tuple[int | None, ...] = (None,) * n
        owners: tuple[int | None, ...] | None = None
        lent: tuple[int, ...] = ()
        outcome = None
        seat = f"[-0-{n - 1}]"
        for token in tokens[6:]:
            if re.fullmatch(rf"t{seat}(?:/{seat}){{{n - 1}}}", token):
                taker = tuple(None if t == "-" else int(t) for t in token[1:].split("/"))
            elif n == 2 and re.fullmatch(r"f[-012]{12}", token):
                owners = tuple(None if c == "-" else int(c) for c in token[1:])
            elif n > 2 and token.startswith("l"):
                lent = _text_ints(token, "l", n)
            elif token.startswith("end:"):
                outcome = _text_outcome(token, n)
            else:
                raise NotationError(f"unknown token in position text: {token!r}")
        return cls(
            tuple(board),
            tuple(big),
            store,
            bigs,
            debt,
            int(tokens[1][1]),
            int(tokens[5][1:]),
            taker,
            owners,
            outcome,
            lent,
        )

    def __repr__(self) -> str:
        return f"Position.from_text({self.to_text()!r})"

    def __str__(self) -> str:
        """Draw the board as the players see it, P1's row on top (3-4 seats: side by side)."""
        if self.players != 2:
            return self._str_ring()

        def cell(n: int) -> str:
            return f"{n:>3} "

        def mandarin(k: int) -> str:
            n = self.board[6 * k]
            return f"({n:>2}{'*' if self.big[k] else ' '})"

        top = "".join(cell(self.board[sq]) for sq in (11, 10, 9, 8, 7))
        bottom = "".join(cell(self.board[sq]) for sq in (1, 2, 3, 4, 5))
        marks = ["<- to move" if self.to_move == p and not self.over else "" for p in (0, 1)]

        def side(p: int) -> str:
            return f"P{p} store {self.store[p]} quan {self.bigs[p]} debt {self.debt[p]} {marks[p]}"

        lines = [
            "       11  10   9   8   7",
            f"      {top}    {side(1)}".rstrip(),
            f"{mandarin(0)}                    {mandarin(1)}   * = big stone",
            f"      {bottom}    {side(0)}".rstrip(),
            "        1   2   3   4   5",
        ]
        if self.outcome is not None:
            o = self.outcome
            who = "draw" if o.winner is None else f"P{o.winner} wins"
            lines.append(f"game over ({o.reason}): {o.final[0]} - {o.final[1]}, {who}")
        return "\n".join(lines)

    def _str_ring(self) -> str:
        """One line per seat in turn order: its left mandarin, its row, its bookkeeping."""
        lines = []
        for p in range(self.players):
            left = 6 * ((-p) % self.players)
            k = left // 6
            row = " ".join(f"{sq}:{self.board[sq]}" for sq in range(left + 1, left + 6))
            mark = "  <- to move" if self.to_move == p and not self.over else ""
            lines.append(
                f"P{p}  ({left}:{self.board[left]}{'*' if self.big[k] else ''})  {row}"
                f"  store {self.store[p]} quan {self.bigs[p]} debt {self.debt[p]}"
                f" lent {self.lent[p]}{mark}"
            )
        lines.append("(mandarin square on each seat's left; * = big stone; turns pass down)")
        if self.outcome is not None:
            o = self.outcome
            who = "draw" if o.winner is None else f"P{o.winner} wins"
            scores = " - ".join(map(str, o.final))
            lines.append(f"game over ({o.reason}): {scores}, {who}")
        return "\n".join(lines)


_MANDARIN_RE = re.compile(r"(\d+)(B?)")
_ROW_RE = re.compile(r"\d+(?:,\d+){4}")
_WORDS = {2: "two", 3: "three", 4: "four"}


def _seats_text(n: int) -> str:
    return "0 or 1" if n == 2 else f"0-{n - 1}"


def _ints(value: Any, name: str, length: int, minimum: int | None = None) -> tuple[int, ...]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != length
        or any(not isinstance(v, int) or isinstance(v, bool) for v in value)
    ):
        raise NotationError(f"position: {name} must be a list of {length} integers, got {value!r}")
    if minimum is not None and any(v < minimum for v in value):
        raise NotationError(f"position: {name} has a negative count: {list(value)}")
    return tuple(value)


def _text_ints(token: str, prefix: str, n: int, signed: bool = False) -> tuple[int, ...]:
    number = r"-?\d+" if signed else r"\d+"
    if not re.fullmatch(rf"{prefix}{number}(?:/{number}){{{n - 1}}}", token):
        raise NotationError(f"bad {prefix!r} token in position text: {token!r}")
    return tuple(int(x) for x in token[len(prefix) :].split("/"))


def _text_outcome(token: str, n: int) -> Outcome:
    parts = token.split(":")
    if len(parts) not in (4, 6) or parts[1] not in END_REASONS:
        raise NotationError(f"bad end token in position text: {token!r}")
    final = _text_ints("x" + parts[2], "x", n, signed=True)
    if parts[3] != "-" and parts[3] not in {str(p) for p in range(n)}:
        raise NotationError(f"bad end token in position text: {token!r}")
    winner = None if parts[3] == "-" else int(parts[3])
    if len(parts) == 6:
        if not parts[5].isdigit():
            raise NotationError(f"bad end token in position text: {token!r}")
        return Outcome(parts[1], final, winner, _text_ints("x" + parts[4], "x", n), int(parts[5]))
    return Outcome(parts[1], final, winner)

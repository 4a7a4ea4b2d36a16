"""Positions: frozen values with a one-line notation and the interchange JSON.

The one-line notation lists the ring 0 | 1..5 | 6 | 7..11 with ``B`` marking a
big stone still in place, then the side to move and the bookkeeping::

    0B|5,5,5,5,5|0B|5,5,5,5,5 P0 s0/0 q0/0 d0/0 n0

``s`` is the captured pebbles (stores), ``q`` the captured big stones, ``d``
the debts and ``n`` the ply. Optional tokens: ``t0/-`` (who took each stone),
``f`` + 12 characters (field owners in match play: ``-`` for a mandarin,
``0``/``1`` for a sold or own field, ``2`` for a pawned one) and, once the
game is over, ``end:REASON:F0/F1:WINNER:SWEEP0/SWEEP1:UNCLAIMED``.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.core import END_REASONS, State
from engine.errors import NotationError
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
}


class PositionStatus(enum.IntFlag):
    """Everything that can be wrong with a position, so a reading shows all of it at once."""

    VALID = 0
    NEGATIVE_COUNT = enum.auto()
    WRONG_TOTAL = enum.auto()
    STONES = enum.auto()
    STORE = enum.auto()
    OUTCOME = enum.auto()


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the reason, the final scores and the winner (None = draw)."""

    reason: str
    final: tuple[int, int]
    winner: int | None
    sweep: tuple[int, int] | None = None
    unclaimed: int | None = None

    @property
    def margin(self) -> int:
        return self.final[0] - self.final[1]


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
    big: tuple[int, int] = (1, 1)
    store: tuple[int, int] = (0, 0)
    bigs: tuple[int, int] = (0, 0)
    debt: tuple[int, int] = (0, 0)
    to_move: int = 0
    ply: int = 0
    big_taker: tuple[int | None, int | None] = (None, None)
    field_owner: tuple[int | None, ...] | None = None
    outcome: Outcome | None = field(default=None)

    def __post_init__(self) -> None:
        if len(self.board) != 12:
            raise NotationError(f"position: board must have 12 squares, got {len(self.board)}")
        if self.to_move not in (0, 1):
            raise NotationError(f"position: to_move must be 0 or 1, got {self.to_move!r}")
        if self.field_owner is not None and len(self.field_owner) != 12:
            raise NotationError("position: field_owner must have 12 entries")

    # -- construction -------------------------------------------------------

    @classmethod
    def initial(cls, rules: Rules | None = None, *, first: int = 0) -> Position:
        """The opening setup (R2); ``mandarin_setup=small`` puts pebbles in the mandarins."""
        rules = rules or Rules()
        if rules.mandarin_setup == "small":
            v = rules.mandarin_value
            return cls((v, 5, 5, 5, 5, 5, v, 5, 5, 5, 5, 5), big=(0, 0), to_move=first)
        return cls((0, 5, 5, 5, 5, 5, 0, 5, 5, 5, 5, 5), to_move=first)

    @property
    def over(self) -> bool:
        return self.outcome is not None

    def points(self, rules: Rules | None = None) -> tuple[int, int]:
        """Points each player holds now, debts settled as if the game ended here."""
        if self.outcome is not None:
            return self.outcome.final
        value = (rules or Rules()).mandarin_value
        s, q, d = self.store, self.bigs, self.debt
        return (s[0] + value * q[0] - d[0] + d[1], s[1] + value * q[1] - d[1] + d[0])

    def status(self, rules: Rules | None = None) -> PositionStatus:
        """Check the position against the rules' totals (R2, R14)."""
        rules = rules or Rules()
        flags = PositionStatus.VALID
        if any(n < 0 for n in self.board) or any(n < 0 for n in self.debt):
            flags |= PositionStatus.NEGATIVE_COUNT
        if rules.refill != "bank" and any(n < 0 for n in self.store):
            flags |= PositionStatus.STORE
        if any(n not in (0, 1) for n in self.big) or any(n < 0 for n in self.bigs):
            flags |= PositionStatus.STONES
        stones = 2 if rules.mandarin_setup == "big" else 0
        if sum(self.big) + sum(self.bigs) != stones:
            flags |= PositionStatus.STONES
        pebbles = 50 + (2 * rules.mandarin_value if rules.mandarin_setup == "small" else 0)
        if self.outcome is None:
            if sum(self.board) + sum(self.store) != pebbles:
                flags |= PositionStatus.WRONG_TOTAL
        else:
            o = self.outcome
            if o.reason not in END_REASONS or o.winner not in (0, 1, None):
                flags |= PositionStatus.OUTCOME
            if o.unclaimed is not None:
                total = pebbles + stones * rules.mandarin_value
                if o.final[0] + o.final[1] + o.unclaimed != total:
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
        return "impossible position: " + ", ".join(problems)

    def rotated(self) -> Position:
        """The same position with the players' roles swapped (ring turned by 6)."""

        def swap(pair: tuple[Any, Any]) -> Any:
            return (pair[1], pair[0])

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
                swap(o.final),
                None if o.winner is None else 1 - o.winner,
                None if o.sweep is None else swap(o.sweep),
                o.unclaimed,
            )
        taker = tuple(None if t is None else 1 - t for t in swap(self.big_taker))
        return Position(
            self.board[6:] + self.board[:6],
            swap(self.big),
            swap(self.store),
            swap(self.bigs),
            swap(self.debt),
            1 - self.to_move,
            self.ply,
            taker,  # type: ignore[arg-type]
            owners,
            outcome,
        )

    # -- kernel state -------------------------------------------------------

    def to_state(self) -> State:
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
            else (o.reason, o.final, o.winner, o.sweep or (0, 0), o.unclaimed or 0),
        )

    @classmethod
    def from_state(cls, st: State, *, sweep_known: bool = True) -> Position:
        outcome = None
        if st.outcome is not None:
            reason, final, winner, sweep, unclaimed = st.outcome
            outcome = Outcome(reason, final, winner, sweep, unclaimed)
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
        """The interchange.md position object (plus big_taker/field_owner when set)."""
        data: dict[str, Any] = {
            "board": list(self.board),
            "big": list(self.big),
            "store": list(self.store),
            "bigs": list(self.bigs),
            "debt": list(self.debt),
            "to_move": self.to_move,
            "ply": self.ply,
            "over": self.over,
        }
        if self.big_taker != (None, None):
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
        """Strict reader: unknown keys, wrong shapes and negative counts are errors."""
        if not isinstance(data, Mapping):
            raise NotationError(f"position: expected a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - _JSON_KEYS)
        if unknown:
            raise NotationError(f"position: unknown key {unknown[0]!r}")
        if "board" not in data:
            raise NotationError("position: missing key 'board'")
        board = _ints(data["board"], "board", 12, minimum=0)
        big = _ints(data.get("big", [1, 1]), "big", 2, minimum=0)
        store = _ints(data.get("store", [0, 0]), "store", 2)
        bigs = _ints(data.get("bigs", [0, 0]), "bigs", 2, minimum=0)
        debt = _ints(data.get("debt", [0, 0]), "debt", 2, minimum=0)
        to_move = data.get("to_move", 0)
        if to_move not in (0, 1) or isinstance(to_move, bool):
            raise NotationError(f"position: to_move must be 0 or 1, got {to_move!r}")
        ply = data.get("ply", 0)
        if not isinstance(ply, int) or isinstance(ply, bool) or ply < 0:
            raise NotationError(f"position: ply must be a non-negative integer, got {ply!r}")
        taker_raw = data.get("big_taker", [None, None])
        if (
            not isinstance(taker_raw, list)
            or len(taker_raw) != 2
            or any(t not in (None, 0, 1) or isinstance(t, bool) for t in taker_raw)
        ):
            raise NotationError("position: big_taker must be two entries of 0, 1 or null")
        owners = data.get("field_owner")
        if owners is not None:
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
            final = _ints(data.get("final"), "final", 2)
            winner = data.get("winner")
            if winner not in (0, 1, None) or isinstance(winner, bool):
                raise NotationError(f"position: winner must be 0, 1 or null, got {winner!r}")
            sweep = data.get("sweep")
            unclaimed = data.get("unclaimed")
            outcome = Outcome(
                reason,
                (final[0], final[1]),
                winner,
                None if sweep is None else _pair(_ints(sweep, "sweep", 2, minimum=0)),
                None if unclaimed is None else _ints([unclaimed], "unclaimed", 1, minimum=0)[0],
            )
        return cls(
            board,
            _pair(big),
            _pair(store),
            _pair(bigs),
            _pair(debt),
            to_move,
            ply,
            (taker_raw[0], taker_raw[1]),
            owners,
            outcome,
        )

    # -- text ---------------------------------------------------------------

    def to_text(self) -> str:
        """One-line notation that :meth:`from_text` reads back exactly."""

        def mandarin(k: int) -> str:
            return f"{self.board[6 * k]}{'B' if self.big[k] else ''}"

        b = self.board
        row0, row1 = ",".join(map(str, b[1:6])), ",".join(map(str, b[7:12]))
        parts = [
            f"{mandarin(0)}|{row0}|{mandarin(1)}|{row1}",
            f"P{self.to_move}",
            f"s{self.store[0]}/{self.store[1]}",
            f"q{self.bigs[0]}/{self.bigs[1]}",
            f"d{self.debt[0]}/{self.debt[1]}",
            f"n{self.ply}",
        ]
        if self.big_taker != (None, None):
            parts.append("t" + "/".join("-" if t is None else str(t) for t in self.big_taker))
        if self.field_owner is not None:
            parts.append("f" + "".join("-" if o is None else str(o) for o in self.field_owner))
        if self.outcome is not None:
            o = self.outcome
            winner = "-" if o.winner is None else str(o.winner)
            text = f"end:{o.reason}:{o.final[0]}/{o.final[1]}:{winner}"
            if o.sweep is not None and o.unclaimed is not None:
                text += f":{o.sweep[0]}/{o.sweep[1]}:{o.unclaimed}"
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
        match = _BOARD_RE.fullmatch(tokens[0])
        if match is None:
            raise NotationError(f"bad board in position text: {tokens[0]!r}")
        row0 = [int(x) for x in match.group(3).split(",")]
        row1 = [int(x) for x in match.group(6).split(",")]
        board = (int(match.group(1)), *row0, int(match.group(4)), *row1)
        big = (1 if match.group(2) else 0, 1 if match.group(5) else 0)
        if tokens[1] not in ("P0", "P1"):
            raise NotationError(f"bad side to move in position text: {tokens[1]!r}")
        store = _text_pair(tokens[2], "s", signed=True)
        bigs = _text_pair(tokens[3], "q")
        debt = _text_pair(tokens[4], "d")
        if not re.fullmatch(r"n\d+", tokens[5]):
            raise NotationError(f"bad ply in position text: {tokens[5]!r}")
        taker: tuple[int | None, int | None] = (None, None)
        owners: tuple[int | None, ...] | None = None
        outcome = None
        for token in tokens[6:]:
            if re.fullmatch(r"t[-01]/[-01]", token):
                a, b = token[1:].split("/")
                taker = (None if a == "-" else int(a), None if b == "-" else int(b))
            elif re.fullmatch(r"f[-012]{12}", token):
                owners = tuple(None if c == "-" else int(c) for c in token[1:])
            elif token.startswith("end:"):
                outcome = _text_outcome(token)
            else:
                raise NotationError(f"unknown token in position text: {token!r}")
        return cls(
            board,
            big,
            store,
            bigs,
            debt,
            int(tokens[1][1]),
            int(tokens[5][1:]),
            taker,
            owners,
            outcome,
        )

    def __repr__(self) -> str:
        return f"Position.from_text({self.to_text()!r})"

    def __str__(self) -> str:
        """Draw the board as the players see it, P1's row on top."""

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


_BOARD_RE = re.compile(r"(\d+)(B?)\|(\d+(?:,\d+){4})\|(\d+)(B?)\|(\d+(?:,\d+){4})")


def _pair(values: tuple[int, ...]) -> tuple[int, int]:
    return (values[0], values[1])


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


def _text_pair(token: str, prefix: str, signed: bool = False) -> tuple[int, int]:
    number = r"-?\d+" if signed else r"\d+"
    if not re.fullmatch(rf"{prefix}({number})/({number})", token):
        raise NotationError(f"bad {prefix!r} token in position text: {token!r}")
    a, b = token[1:].split("/")
    return (int(a), int(b))


def _text_outcome(token: str) -> Outcome:
    parts = token.split(":")
    if len(parts) not in (4, 6) or parts[1] not in END_REASONS:
        raise NotationError(f"bad end token in position text: {token!r}")
    final = _text_pair("x" + parts[2], "x", signed=True)
    winner = None if parts[3] == "-" else int(parts[3])
    if len(parts) == 6:
        return Outcome(parts[1], final, winner, _text_pair("x" + parts[4], "x"), int(parts[5]))
    return Outcome(parts[1], final, winner)

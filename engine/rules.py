"""The rules refereed, and their regional variants as one frozen value.

Default rules (rules.md R1-R16): each mandarin square holds one big stone
worth 10 and each citizen square 5 pebbles (70 points). A player lifts all
pebbles of one of their five squares and sows them one by one in either
direction, mandarin squares included. After the last pebble, the next square
decides: a citizen square with pebbles is lifted and sown on (relay); a
mandarin square holding anything ends the turn; an empty square followed by
an occupied one is a capture, and captures chain over single empty gaps. A
mandarin square that still has its stone and fewer than 5 pebbles cannot be
captured (*quan non*): the turn ends. A player whose five squares are empty
at the start of their turn puts one pebble back on each, from their captured
pebbles first and then borrowed from the opponent as a debt repaid at the
final count; if even borrowing cannot make 5 the game ends. The game ends
when both mandarin squares are empty; the pebbles left on each row go to its
owner, and the higher total wins.

Every switch below selects a variant named in rules.md §II; the defaults are
the rules above. Unknown switches and values are errors, never ignored,
because a silently wrong rule makes a referee that players cannot trust.

``players`` (2-4) selects the ring board of :mod:`engine.ring` for three or
four seats, the project's reading of a game the sources only name: the same
rules round a longer ring, turns passing clockwise, the game over when every
mandarin square is empty. A short player may then have several possible
lenders; ``lender`` orders them: the one holding most captured pebbles
(default; ties go to the earliest in turn after the borrower), or the
``next`` or ``previous`` seats in turn order. Whatever the first cannot lend
is borrowed from the following ones. ``no_refill=lose`` stays two-player:
with more seats, who would win is not obvious.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from engine.errors import RulesError

_CHOICES: dict[str, tuple[str, ...]] = {
    "direction": ("both", "ccw_only"),
    "mandarin_setup": ("big", "small"),
    "mandarin_stop": ("occupied", "always", "take_one"),
    "refill": ("borrow", "own_only", "bank"),
    "refill_timing": ("turn_start", "any_time"),
    "no_refill": ("end", "lose", "pass"),
    "end_when": ("both_empty", "big_captured"),
    "leftover": ("unclaimed", "split", "taker"),
    "sweep": ("owner", "split"),
    "lender": ("most_captured", "next", "previous"),
}

#: integer switches: (smallest, largest) allowed
_RANGES: dict[str, tuple[int, int]] = {
    "mandarin_value": (1, 50),
    "quan_non_min": (0, 70),
    "repetition": (0, 1000),
    "max_plies": (0, 1_000_000),
    "players": (2, 4),
}


@dataclass(frozen=True, slots=True)
class Rules:
    """Variant switches of rules.md §II; the defaults are the default rules.

    >>> Rules.from_json({"quan_non_min": 0}).quan_non_min
    0
    """

    direction: str = "both"
    mandarin_setup: str = "big"
    mandarin_value: int = 10
    mandarin_stop: str = "occupied"
    chain: bool = True
    quan_non_min: int = 5
    refill: str = "borrow"
    refill_timing: str = "turn_start"
    no_refill: str = "end"
    end_when: str = "both_empty"
    leftover: str = "unclaimed"
    sweep: str = "owner"
    repetition: int = 0
    max_plies: int = 0
    #: seats round the ring (engine.ring); 2 is the two-player game of rules.md
    players: int = 2
    #: whom a short player borrows from when more than one could lend (3-4 seats)
    lender: str = "most_captured"

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise RulesError(
                    f"rules: {name}: expected one of {', '.join(choices)}, got {value!r}"
                )
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RulesError(f"rules: {name}: expected an integer {low}..{high}, got {value!r}")
        if not isinstance(self.chain, bool):
            raise RulesError(f"rules: chain: expected true or false, got {self.chain!r}")
        if self.end_when == "big_captured" and self.mandarin_setup == "small":
            raise RulesError(
                "rules: end_when: 'big_captured' needs mandarin_setup 'big' (no stones to capture)"
            )
        if self.players > 2 and self.no_refill == "lose":
            raise RulesError(
                "rules: no_refill: 'lose' is a two-player rule (with more seats use end or pass)"
            )

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Rules:
        """Build from the interchange JSON object; missing keys take defaults."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise RulesError(f"rules: expected a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise RulesError(f"rules: unknown switch {key!r}")
        return cls(**dict(data))

    def to_json(self) -> dict[str, Any]:
        """Only the switches that differ from the defaults, as the interchange expects."""
        default = asdict(Rules())
        return {k: v for k, v in asdict(self).items() if default[k] != v}

    def describe(self) -> str:
        """Short text naming the non-default switches, for screens and logs."""
        changed = self.to_json()
        if not changed:
            return "default rules"
        return ", ".join(f"{k}={v}" for k, v in changed.items())


DEFAULT_RULES = Rules()

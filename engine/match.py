"""Match play across games (rules.md §V): pawned and sold rice fields.

Before the next game the loser needs 35 pebbles to set up again. Each full 10
missing first buys back one of the winner's fields the loser holds, or else
sells one of the loser's own fields; a remainder of 1-9 pawns one more field
for the next game only (its pebbles are split at the sweep). Moving rights
never change, only who sweeps a field. The match is over when 3 fields of
one row belong to the opponent.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.board import ROWS

DEFAULT_FIELDS: tuple[int | None, ...] = (None, 0, 0, 0, 0, 0, None, 1, 1, 1, 1, 1)
SETUP_PEBBLES = 35
FIELDS_TO_WIN_MATCH = 3


@dataclass(frozen=True, slots=True)
class MatchStep:
    sold: tuple[int, ...]
    returned: tuple[int, ...]
    pawned: int | None
    match_over: bool
    field_owner: tuple[int | None, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "sold": list(self.sold),
            "returned": list(self.returned),
            "pawned": self.pawned,
            "match_over": self.match_over,
            "field_owner": list(self.field_owner),
        }


def match_next(
    final: tuple[int, int] | list[int], field_owner: tuple[int | None, ...] | None = None
) -> MatchStep:
    """Field owners for the next game after a game that ended with ``final`` scores.

    >>> match_next([48, 22]).to_json()["sold"]
    [7]
    """
    # A pawn lasts one game: pawned fields go back to their row's owner first.
    owners = [
        (0 if sq < 6 else 1) if o == 2 else o for sq, o in enumerate(field_owner or DEFAULT_FIELDS)
    ]
    sold: list[int] = []
    returned: list[int] = []
    pawned: int | None = None
    if final[0] != final[1]:
        loser = 0 if final[0] < final[1] else 1
        winner = 1 - loser
        tens, rest = divmod(max(0, SETUP_PEBBLES - final[loser]), 10)
        for _ in range(tens):
            held = [sq for sq in ROWS[winner] if owners[sq] == loser]
            own = [sq for sq in ROWS[loser] if owners[sq] == loser]
            if held:
                owners[held[0]] = winner
                returned.append(held[0])
            elif own:
                owners[own[0]] = winner
                sold.append(own[0])
        if rest:
            own = [sq for sq in ROWS[loser] if owners[sq] == loser]
            if own:
                pawned = own[0]
                owners[pawned] = 2
    over = any(
        sum(1 for sq in ROWS[p] if owners[sq] == 1 - p) >= FIELDS_TO_WIN_MATCH for p in (0, 1)
    )
    return MatchStep(tuple(sold), tuple(returned), pawned, over, tuple(owners))

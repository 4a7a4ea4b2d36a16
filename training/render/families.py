"""The kinds of ground and piece the generator draws, and the held-out split over them.

Every scene records its `ground_family` and `piece_family` in `conditions`, so a trainer
can leave a kind out and measure how well perception transfers to it (Tobin et al. 2017).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

GROUND_FAMILIES: tuple[str, ...] = (
    "asphalt",
    "concrete",
    "earth",
    "sand",
    "gravel",
    "slabs",
    "brick",
    "tiles",
    "wood",
    "lino",
    "woven_mat",
    "printed_mat",
    "paper",
)
PIECE_FAMILIES: tuple[str, ...] = ("pebbles", "marbles", "beans", "shells", "buttons", "mixed")

#: kinds never drawn for training: their own datasets measure transfer to an unseen kind
HELD_OUT_GROUNDS: frozenset[str] = frozenset({"brick"})
HELD_OUT_PIECES: frozenset[str] = frozenset({"shells"})


class FamilyError(ValueError):
    """A dataset names a ground or piece family the generator does not know."""


def check_families(grounds: Iterable[str], pieces: Iterable[str]) -> None:
    bad = [g for g in grounds if g not in GROUND_FAMILIES]
    bad += [p for p in pieces if p not in PIECE_FAMILIES]
    if bad:
        raise FamilyError(f"unknown ground/piece families: {', '.join(bad)}")


def training_grounds() -> tuple[str, ...]:
    return tuple(g for g in GROUND_FAMILIES if g not in HELD_OUT_GROUNDS)


def training_pieces() -> tuple[str, ...]:
    return tuple(p for p in PIECE_FAMILIES if p not in HELD_OUT_PIECES)


def split_of(conditions: Mapping[str, object]) -> str:
    """'train' unless the scene shows a held-out kind: then 'heldout_ground' / 'heldout_piece'.

    A mixed set containing a held-out piece kind counts as held out too.
    """
    if conditions.get("ground_family") in HELD_OUT_GROUNDS:
        return "heldout_ground"
    pieces = conditions.get("pieces")
    kinds = set(pieces.get("kinds", ())) if isinstance(pieces, Mapping) else set()
    if conditions.get("piece_family") in HELD_OUT_PIECES or kinds & HELD_OUT_PIECES:
        return "heldout_piece"
    return "train"

"""How far a board found in one frame can be trusted, as a probability.

A board the search finds in a single still is sometimes the wrong one (a tile
joint, a shadow's edge, the board shifted by a square), and every count read
on it is then confidently wrong: on renders of unseen grounds the counts
stated at 0.95 and more were right 33-73% of the time on such boards. The
template fit's quality separates those boards from right ones well (ROC area
0.93-0.99 on every test set), so it is turned into the probability that the
board is not the board, which the counts fold in (``vision.count.with_board_doubt``).
A board a person placed, or one a fixed camera's ``Locator`` has confirmed, is
the caller's to vouch for: ``read_board`` only applies this to its own search.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

from vision.config import Finder

#: Per finder, the logit of "not the board" at quality ``CENTRE`` and its rise per unit of
#: quality below it. Fitted by the likelihood of the true counts, with every square of a
#: doubted board read as a uniform guess, on renders no network was trained on: train-v4's
#: 19/20 fold and train-large-v4 428-499 with its fold (the learned finder found 238 boards
#: there, 15 of them 3% of the diagonal or more off; the classical one 225 and 38).
CENTRE = 0.7
LOGIT: Mapping[Finder, tuple[float, float]] = MappingProxyType(
    {Finder.LEARNED: (-3.0, 9.0), Finder.CLASSICAL: (-5.75, 15.0)}
)


def board_doubt(quality: float, finder: Finder) -> float:
    """Probability that the board the search found (at this fit quality) is not the board:
    0.65 at quality 0.3, 0.23 at 0.5, 0.05 at 0.7, 0.008 at 0.9 for the learned finder
    (the classical one's quality runs lower on wrong boards: 0.56, 0.08, 0.003)."""
    at_centre, slope = LOGIT[finder]
    z = at_centre + slope * (CENTRE - float(quality))
    return 1.0 / (1.0 + math.exp(-z))

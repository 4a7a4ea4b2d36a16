"""Fixed camera: locate once, then only verify the outline in every later frame.

A full search costs about a hundred milliseconds; checking that the chalk is
still under the last outline costs a ridge map. Only when the chalk no
longer supports it is the board searched again, and a fit that lands
elsewhere says the camera was bumped (or the board redrawn): whatever was
learnt against the old outline (a reference frame, a calibration) is stale.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from vision.config import LocateConfig, VisionConfig
from vision.errors import BoardNotFoundError
from vision.locate.evidence import evidence_maps, saturated
from vision.locate.outline import Outline, manual_outline
from vision.locate.ridges import downscale, ridge_map
from vision.locate.scoring import scores
from vision.locate.search import locate_board

#: A new fit whose corners moved by more than this share of a square is a moved board ...
MOVED_SHARE = 0.05
#: ... when it holds more chalk in that frame than the last outline does by at least this
#: share of the last outline's support when it was found. An arm or a hard shadow across
#: faint lines also takes the last outline under ``verify_drop``, and may lend a wrong fit
#: its straight edges: in a generated game (pebbles on asphalt, an arm across the board) a
#: fit over half the board held 0.087 where the board held 0.07 (0.123 when found), and
#: its empty squares read as a game swept bare. A bumped camera's new fit gains 0.7-1.2.
MOVED_GAIN = 0.4
#: The last outline stands, hidden in part, while it holds at least this share of the
#: support it had when found (and no fit elsewhere holds clearly more): the frame is read
#: there, an arm's photo like any other, where "board not found" lost it (the same game:
#: an arm over the board after 5+, the next photo asked about two moves at once).
HIDDEN_SHARE = 0.4


def support(
    image_bgr: NDArray[np.uint8], outline: Outline, cfg: LocateConfig | None = None
) -> float:
    """Chalk support for a known outline in a new frame (cheap re-verification)."""
    cfg = cfg or LocateConfig()
    work, scale = downscale(image_bgr, cfg.work_width)
    ridge, normal = ridge_map(work, cfg.ridge_sigmas, 0, cfg.edge_suppress)
    maps = evidence_maps(saturated(ridge), normal, 3)
    s = np.diag([scale, scale, 1.0])
    h = (s @ outline.homography)[None]
    return float(scores(maps, h, 0.1, outline.arc_depth)[0])


class Fix(enum.Enum):
    """How this frame's outline came about."""

    VERIFIED = "verified"  # the last outline still has its chalk: kept, no search
    FOUND = "found"  # a full search found the board (first frame, or where it was)
    MOVED = "moved"  # a full search found it elsewhere: camera bumped or board redrawn
    HIDDEN = "hidden"  # its chalk faded here, no fit elsewhere holds clearly more: kept
    MANUAL = "manual"  # no fit; the configured manual corners stand in
    LOST = "lost"  # no board in this frame (hidden, out of view, not yet found)


@dataclass(frozen=True)
class Located:
    """What one frame says about where the board is."""

    outline: Outline | None  # None when ``fix`` is LOST
    fix: Fix
    support: float  # chalk support of the outline checked or found in this frame

    @property
    def moved(self) -> bool:
        """The board is somewhere else than in the last frame: drop what was learnt there."""
        return self.fix is Fix.MOVED


class Locator:
    """Fixed-camera localisation: locate once, then verify cheaply per frame.

    ``locate`` takes one frame and says where the board is and how that was
    found (:class:`Located`); ``update`` is the same returning only the
    outline. ``moved`` is True after the frame whose fit differs from the
    last one and holds clearly more chalk. A frame where the outline lost its
    chalk but kept a fair share of it is HIDDEN: the outline stands and the frame
    is read there. After a LOST frame the old outline is kept and verified again
    next time (a hand over the board or a passing shadow usually goes away).
    """

    def __init__(
        self, config: VisionConfig | None = None, rng: np.random.Generator | None = None
    ) -> None:
        self.config = config or VisionConfig()
        self.rng = rng if rng is not None else np.random.default_rng(self.config.locate.seed)
        self.outline: Outline | None = None
        self.reference_quality = 0.0
        self.last_support = 0.0
        self.last: Located | None = None

    @property
    def moved(self) -> bool:
        """The last frame found the board somewhere else than the frame before."""
        return self.last is not None and self.last.moved

    def update(self, image_bgr: NDArray[np.uint8]) -> Outline | None:
        """Verify (or find) the board in this frame; only the outline."""
        return self.locate(image_bgr).outline

    def locate(self, image_bgr: NDArray[np.uint8]) -> Located:
        """Verify (or find) the board in this frame."""
        self.last = self._locate(image_bgr)
        return self.last

    def _locate(self, image_bgr: NDArray[np.uint8]) -> Located:
        cfg = self.config.locate
        if cfg.manual_corners is not None:
            # Corners a person gave are the cure for a board the search gets wrong
            # (tile joints, mats): they win over whatever the search would find.
            if self.outline is None or not self.outline.manual:
                self.outline = manual_outline(self.config, image_bgr.shape)
                assert self.outline is not None  # (the corners are set)
                self.reference_quality = support(image_bgr, self.outline, cfg)
            self.last_support = support(image_bgr, self.outline, cfg)
            return Located(self.outline, Fix.MANUAL, self.last_support)
        if self.outline is not None:
            self.last_support = support(image_bgr, self.outline, cfg)
            if self.last_support >= cfg.verify_drop * self.reference_quality:
                return Located(self.outline, Fix.VERIFIED, self.last_support)
        # the board where it was with something over it, if it still holds enough chalk
        hidden = self.outline is not None and (
            self.last_support >= HIDDEN_SHARE * self.reference_quality
        )
        try:
            new = locate_board(image_bgr, cfg, self.rng)
        except BoardNotFoundError:
            if hidden:
                return Located(self.outline, Fix.HIDDEN, self.last_support)
            return Located(None, Fix.LOST, self.last_support)
        fix = Fix.FOUND
        held = support(image_bgr, new, cfg)
        if self.outline is not None:
            shift = float(np.max(np.linalg.norm(new.corners - self.outline.corners, axis=1)))
            if shift > MOVED_SHARE * self.outline.px_per_unit():
                if hidden and held - self.last_support < MOVED_GAIN * self.reference_quality:
                    return Located(self.outline, Fix.HIDDEN, self.last_support)
                fix = Fix.MOVED
        self.outline = new
        self.reference_quality = held
        self.last_support = held
        return Located(new, fix, held)

"""From camera frames to what the referee needs: readings, fitness, settledness.

It also says which squares did not change since the last frame the referee
confirmed. With a fixed camera, a square whose pixels are the same as then
still holds what the referee knows it held, however hard its pile is to
count; only the squares a move touched are left to the counter. That is the
cheapest and most reliable evidence a fixed camera gives.

The camera is fixed, so the board is located once and then only verified
(vision's :class:`~vision.Locator`). Whether a frame shows a settled scene
is decided here: a frame that differs a lot from the one before is a new
still (a photo after a move), one that barely differs belongs to a live
stream, where the referee waits for the same reading several times before
it objects to anything.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from companion.appliance.config import as_corners, corners_problem
from companion.referee import Observation
from device.ports import Frame
from engine.board import MANDARINS, SQUARES, is_mandarin
from vision import (
    Calibration,
    Locator,
    SquareReading,
    VisionConfig,
    assess_frame,
    calibrate,
    change_canvas,
    config_from_dict,
    confirmed_canvas,
    confirmed_pebbles,
    is_new_scene,
    read_board,
    square_changes,
    thumbnail,
)
from vision.change import canvas_mask, intrusion_mask
from vision.gate import hand_mask, mask_cover
from vision.lens import undistort
from vision.locate import manual_outline, support
from vision.locate.follow import ViewFollower, camera_view, carried

log = logging.getLogger(__name__)

#: Corners as the observer keeps them: SW, SE, NE, NW, pixels of the frame as taken.
Corners = tuple[tuple[float, float], ...]


class FrameHistory:
    """What each frame is compared with: the frame before (a new still? motion?).

    A live stream compares each frame with the one before: a frame with motion
    in it is not counted (the referee waits). Stills have no "before".
    """

    def __init__(self, config: VisionConfig, stills: bool) -> None:
        self.config = config
        self.stills = stills
        self._thumb: NDArray[np.float32] | None = None
        self._image: NDArray[np.uint8] | None = None

    def step(self, image: NDArray[np.uint8]) -> tuple[bool, NDArray[np.uint8] | None]:
        """(is this a new scene, the previous frame for the motion gate or None)."""
        thumb = thumbnail(image, self.config.change)
        new_scene = is_new_scene(self._thumb, thumb, self.config.change)
        self._thumb = thumb
        previous = None if self.stills else self._image
        self._image = None if self.stills else image
        return new_scene, previous


class VisionObserver:
    """Locate once, verify every frame, count, and say whether the scene is settled."""

    def __init__(self, config: VisionConfig | None = None, *, stills: bool = False) -> None:
        """``stills``: every frame is a photo of a settled scene (a folder of stills).

        Otherwise frames come from a live camera, and a frame is only called a
        new still when it differs a lot from the one before.
        """
        self.config = config or VisionConfig()
        self.stills = stills
        self.locator = Locator(self.config)
        self.calibration: Calibration | None = None
        self._history = FrameHistory(self.config, stills)
        #: the board of the last confirmed frame, rectified (``vision.change_canvas``)
        self._reference: NDArray[np.uint8] | None = None
        self._canvas: NDArray[np.uint8] | None = None
        #: the counter's pebble density on the reference frame, and on the last frame
        self._ref_pebbles: NDArray[np.float32] | None = None
        self._pebbles: NDArray[np.float32] | None = None
        #: squares whose reference shows a hand (confirmed under one, with nothing older)
        self._no_reference: frozenset[int] = frozenset()
        self._depth = 0.95
        self._hidden: tuple[bool, ...] = ()
        #: the arm over the last frame on its change canvas (``vision.change.canvas_mask``)
        self._masked: NDArray[np.uint8] | None = None
        #: the last confirmed frame that showed no hand: what the surroundings look like
        self._clear: NDArray[np.uint8] | None = None
        self._hand_seen = False
        self._image: NDArray[np.uint8] | None = None
        #: the last frame read, as read (``again`` measures its changes anew)
        self._last: Observation | None = None
        #: a frame with a hand that showed the board between two moves (``hold_earlier``):
        #: its change canvas, pebble density and hidden squares
        self._earlier: tuple[NDArray[np.uint8], NDArray[np.float32] | None, tuple[bool, ...]] | None
        self._earlier = None
        self.last_timings: dict[str, float] = {}
        #: times the camera (or the board under it) moved and the board was found anew
        self.moves_noticed = 0
        #: the corners the config file gives, what forgetting marked corners returns to
        self._configured = self.config.locate.manual_corners
        #: given corners are followed when the camera is knocked (``vision.locate.follow``):
        #: the watch on the view, and corners carried along not yet taken by the app
        self._follower: ViewFollower | None = None
        self._followed: tuple[Corners, NDArray[np.uint8]] | None = None

    def use_corners(
        self, corners: Sequence[Sequence[float]] | None, view: NDArray[np.uint8] | None = None
    ) -> None:
        """Read the board at ``corners`` (SW, SE, NE, NW, pixels of the frame as taken)
        from the next frame on; None: back to the config's corners or the search. The
        frames read before were read at another outline: nothing learnt from them about
        where things lie stands (the pieces' look, the calibration, does). ``view``: the
        camera's view when the corners were given (``camera_view``), which later frames
        are compared with to follow a knocked camera (None: the next frame's)."""
        given = self._configured if corners is None else as_corners(corners)
        locate = replace(self.config.locate, manual_corners=given)
        self.config = replace(self.config, locate=locate)
        self.locator = Locator(self.config)
        self._reference = self._clear = self._ref_pebbles = self._earlier = None
        self._canvas = self._last = None
        self._no_reference = frozenset()
        self._follower = None if view is None else ViewFollower(view)
        self._followed = None  # (corners given now outrank any followed before)

    @property
    def configured(self) -> Corners | None:
        """The corners the config file gives (None: the board is searched for)."""
        return self._configured

    def take_followed(self) -> tuple[Corners, NDArray[np.uint8]] | None:
        """Corners carried along after the camera was knocked, and the view they hold
        for, once (the app keeps them); None when there are none new."""
        followed, self._followed = self._followed, None
        return followed

    def _follow(self, raw: NDArray[np.uint8]) -> None:
        """Carry given corners along when the whole view moved (a knocked camera): where
        no search finds the board, nothing else would notice. The chalk decides between
        the two outlines, so a view that moved for another reason keeps the corners."""
        given = self.config.locate.manual_corners
        if given is None:
            return
        if self._follower is None:
            self._follower = ViewFollower(camera_view(raw))
            return
        warp = self._follower.step(raw)
        if warp is None:
            return
        moved = as_corners(carried(np.array(given), warp))
        if corners_problem(moved) is not None:  # (a wild perspective fit: no board)
            self._follower.rejected()
            return
        image = undistort(raw, self.config.lens)
        old = manual_outline(self.config, image.shape)
        new_config = replace(self.config, locate=replace(self.config.locate, manual_corners=moved))
        new = manual_outline(new_config, image.shape)
        assert old is not None and new is not None  # (corners are given)
        before = support(image, old, self.config.locate)
        after = support(image, new, self.config.locate)
        if after < before:
            log.info("the view moved but the chalk stays at the corners: kept")
            self._follower.rejected()  # (measured again later: the chalk may be hidden now)
            return
        log.warning("the camera moved: the board's corners followed it to %s", moved)
        view = camera_view(raw)
        self.use_corners(moved, view)
        self._followed = (moved, view)
        self.moves_noticed += 1

    @property
    def calibrated(self) -> bool:
        return self.calibration is not None

    def _unread(self, reason: str | None, board_found: bool = True) -> Observation:
        """A frame nothing is read from. A still is a settled scene all the same: the
        referee counts it as a photo of a position it never saw (a move to ask about)."""
        return Observation(
            None, fit=False, reason=reason, board_found=board_found, still=self.stills
        )

    def __call__(self, frame: Frame) -> Observation:
        self._last = None
        raw = np.ascontiguousarray(frame.image)
        self._follow(raw)
        # (a wide lens's frame is straightened first: every stage assumes a pinhole)
        image = undistort(raw, self.config.lens)
        new_scene, previous = self._history.step(image)
        located = self.locator.locate(image)
        outline = located.outline
        if outline is None:
            # a frame unfit to count (motion, exposure) hides the board: say that, not
            # "board not found", which asks the players for its corners
            quality = assess_frame(image, previous, None, self.config.gate)
            return self._unread(quality.reason or "board not found", board_found=False)
        if located.moved:
            # A bumped camera: the old reference frame no longer lines up with
            # the squares, so no square may be called unchanged against it. The
            # calibration (pebble size and look, in board units) still holds.
            self._reference = self._clear = self._ref_pebbles = self._earlier = None
            self.moves_noticed += 1
        # A still with a hand held over part of the board is all there is of that
        # position; so may a live frame be where the hand rests (vision's gate turns
        # away one that moved since the frame before, and a frame unlike it is no
        # rest either): the referee judges a resting hand once.
        reading = read_board(
            image,
            self.config,
            outline=outline,
            calibration=self.calibration,
            previous=previous,
            partial=True,
        )
        self.last_timings = reading.timings_ms
        if not reading.found:
            return self._unread(reading.reason, board_found=False)
        partial = reading.frame is not None and reading.frame.hand and bool(reading.squares)
        if (reading.reason is not None and not partial) or not reading.squares:
            return self._unread(reading.reason or "frame not usable")
        # (a live frame unlike the one before it: a hand in it is on the move)
        arriving = new_scene and not self.stills
        if partial and arriving:
            return self._unread(reading.reason)
        self._image = image
        squares = reading.squares
        # An arm the skin test missed (a terracotta or wooden floor is skin-coloured):
        # something changed that reaches onto the board from beyond it.
        intruder = intrusion_mask(
            self._clear, image, outline.regions, outline.px_per_unit(), self.config.change
        )
        limit = self.config.change.intrusion_min
        cover = None if intruder is None else mask_cover(*intruder, outline.regions)
        self._hand_seen = partial or (cover is not None and max(cover) > limit)
        # the arms that hid squares: the skin test's, and the change test's where it hid more
        arms = []
        if intruder is not None and cover is not None and max(cover) > limit:
            if arriving:
                return self._unread("hand over the board")
            more = tuple(c > limit and not sq.hidden for sq, c in zip(squares, cover, strict=True))
            squares = tuple(_hidden(sq) if m else sq for sq, m in zip(squares, more, strict=True))
            if any(more):
                arms.append(intruder)
            partial = True
            reading = replace(reading, reason=reading.reason or "hand over the board")
        if reading.frame is not None and reading.frame.hand:
            gate = self.config.gate
            arms.append(hand_mask(image, outline, gate.work_width, gate.hand_margin))
        self._hidden = tuple(sq.hidden for sq in squares)
        self._canvas = change_canvas(image, outline, self.config.change)
        # hidden squares are measured on their part clear of every arm
        self._masked = None
        for arm, scale in arms:
            on = canvas_mask(arm, scale, outline, self.config.change.area_px)
            self._masked = on if self._masked is None else np.maximum(self._masked, on)
        self._depth = outline.arc_depth
        self._pebbles = reading.pebbles
        self._last = Observation(
            squares,
            fit=True,
            reason=reading.reason,
            still=self.stills or new_scene,
            partial=partial,
            hidden=self._hidden if any(self._hidden) else None,
        )
        return self._with_changes(self._last)

    def _with_changes(self, observation: Observation) -> Observation:
        """``observation`` (of the last frame read) with its squares' changes since the
        reference: changed areas, pebbles still in place, and the changed flags."""
        assert self._canvas is not None
        unknown = tuple(h or sq in self._no_reference for sq, h in enumerate(self._hidden))
        changes = square_changes(
            self._reference,
            self._canvas,
            self._depth,
            unknown,
            self.config.change,
            pebbles=self._ref_pebbles,
            masked=self._masked,
        )
        areas = None if changes is None else tuple(None if c is None else c.area for c in changes)
        kept = None if changes is None else tuple(None if c is None else c.kept for c in changes)
        # a square changed when a quarter of a pebble's area did (under a hand: unknown)
        least = self.config.change.changed_pebbles
        changed = None if areas is None else tuple(a is None or a >= least for a in areas)
        return replace(observation, changed=changed, areas=areas, kept=kept)

    def confirmed(self) -> None:
        """The referee trusts the board in the last frame: compare later frames with it.

        Squares a hand hid keep their old reference (``vision.confirmed_canvas``).
        """
        if self._canvas is None:
            return
        self._refer_to(self._canvas, self._pebbles, self._hidden)
        if self._image is not None and not self._hand_seen:
            # Never from a frame with an arm in it: its going would look like one.
            self._clear = self._image

    def _refer_to(
        self,
        canvas: NDArray[np.uint8],
        pebbles: NDArray[np.float32] | None,
        hidden: tuple[bool, ...],
    ) -> None:
        """Make a trusted frame's board the reference, but for the squares it hid."""
        under = {sq for sq, h in enumerate(hidden) if h}
        if self._reference is None:
            self._no_reference = frozenset(under)
        else:
            self._no_reference = frozenset(self._no_reference & under)
        px = self.config.change.area_px
        self._reference = confirmed_canvas(self._reference, canvas, self._depth, hidden, px)
        if pebbles is not None:
            self._ref_pebbles = confirmed_pebbles(self._ref_pebbles, pebbles, self._depth, hidden)
        self._earlier = None

    def hold_earlier(self) -> bool:
        """The last frame (a hand over part of the board) may show the board between
        two moves: keep it, in case the referee comes to trust that board."""
        if self._canvas is None or self._last is None or self._reference is None:
            return False
        self._earlier = (self._canvas, self._pebbles, self._hidden)
        return True

    def confirmed_earlier(self) -> Observation | None:
        """The referee trusts the board the held frame showed (the first of the moves
        made since the reference): compare with it, and return the last frame read
        measured against it, where the later move alone changed the squares.
        None when no frame is held (the reference is then left as it was)."""
        if self._earlier is None or self._last is None:
            return None
        self._refer_to(*self._earlier)
        return self._with_changes(self._last)

    def looks_like_opening(self, observation: Observation) -> bool:
        """Roughly 5 in every citizen square and both big stones: worth calibrating on.

        Squares under a hand are not held against it; at least half the
        citizen squares must be seen.
        """
        if observation.reading is None:
            return False
        squares = list(observation.reading)
        seen = [sq for sq in SQUARES if not (self._hidden and self._hidden[sq])]
        counts = {
            sq: max(range(len(squares[sq].probs)), key=squares[sq].probs.__getitem__) for sq in seen
        }
        citizens = [n for sq, n in counts.items() if not is_mandarin(sq)]
        stones = all(squares[m].big_prob > 0.5 for m in MANDARINS if m in counts)
        return stones and len(citizens) >= 5 and all(3 <= n <= 8 for n in citizens)

    def learn_opening(self, frame: Frame) -> None:
        """The referee confirmed the opening: learn pebble size and look from it."""
        outline = self.locator.outline
        if outline is not None:
            skip = [sq for sq, hidden in enumerate(self._hidden) if hidden]
            image = undistort(np.ascontiguousarray(frame.image), self.config.lens)
            self.calibration = calibrate(image, self.config, outline, skip)


def _hidden(square: SquareReading) -> SquareReading:
    """A square under the arm says nothing: a flat distribution, as vision gives for a hand."""
    n = len(square.probs)
    return replace(square, count=0, probs=(1.0 / n,) * n, big=0, big_prob=0.5, hidden=True)


def make_observer(settings: Mapping[str, Any] | None = None) -> VisionObserver:
    """The observer for the app, from the config's ``[vision]`` table."""
    return VisionObserver(config_from_dict(dict(settings or {})))

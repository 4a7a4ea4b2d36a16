"""Corners a person gave, followed when the camera is knocked.

Corners given by hand (``[locate] manual_corners``, or marked on the device)
are where no search finds the board, so the search cannot notice a camera
that a visitor knocked or a cleaner moved: every square would then be read a
few centimetres off, and every move disputed. The ground round the board does
notice: a fixed camera sees it unchanged, and a moved one sees all of it
shifted. So each frame's small grey view is compared with the view taken when
the corners were given, by phase correlation (a whole-frame shift, blind to the
light's drift and to pieces and hands over part of it). When several frames in
a row agree on a clear shift (found with a small turn undone where one stands
out: over a periodic ground a turn hides the shift), the move is measured by ECC
from that shift (a rotation and translation, then the perspective a tilted camera
adds), and where the two views then match, the corners are carried along. A camera turned about its own axis with no shift is
not noticed (a knocked pole shifts the view), nor is a board redrawn elsewhere.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.errors import ImagePairError
from vision.geometry import FloatArray

#: The views are compared this wide (a pixel of it is a few of the frame's).
VIEW_WIDTH = 320
#: Frame pixels per view pixel round which the view's light gradient is taken out.
FLATTEN_SIGMA = 8.0
#: A shift under this share of the frame's width is no move (a fixed camera's frames,
#: arms and moved pieces included, read under 0.5% in 3,202 frames of rendered games).
LEAST_SHIFT = 0.015
#: ... and one over this share is no knock the corners could follow: a new view.
MOST_SHIFT = 0.25
#: The least phase-correlation response of a shift taken for a move. It falls as the
#: game moves the pieces away from the reference's; chosen on generated games (seeds
#: 164-169: knocks followed at 0.2 / 0.1 / 0.05: 44 / 45 / 46 of 47, at 0.05 one 1.6%
#: of the diagonal off).
LEAST_RESPONSE = 0.1
#: The least correlation of the two views once aligned (ECC): a knock that also turned
#: the camera a degree or more over a periodic ground (the held-out brick games) fooled
#: the phase correlation into a shift by whole bricks, which then matched at 0.43; on the
#: generated games 3 of 48 right follows matched under this (one ECC did not settle).
LEAST_MATCH = 0.55
#: Turns (degrees) tried where a frame's plain shift says the camera moved: a knocked
#: camera turns a little too, and over a periodic ground a turn of a degree hides the
#: shift from the phase correlation.
TURN_STEP = 0.5
TURNS = tuple(TURN_STEP * k for k in range(-6, 7) if k)
#: ... and taken where its response is this many times the plain shift's.
TURN_GAIN = 1.5
#: A view thinner than this (a strip of a frame) says nothing of a move.
LEAST_VIEW = 16
#: Frames to wait after a move that could not be followed before measuring again.
RETRY_AFTER = 30
#: Frames in a row that must show the move, agreeing within ``AGREE`` of the width.
MOVE_FRAMES = 3
AGREE = 0.005


def view_shape(width: int, height: int) -> tuple[int, int]:
    """The (rows, columns) of the view of a frame ``width`` x ``height``."""
    return max(1, round(height * VIEW_WIDTH / width)), VIEW_WIDTH


def camera_view(image_bgr: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The small grey view of a frame that moves are measured on (kept as the reference)."""
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    rows, cols = view_shape(grey.shape[1], grey.shape[0])
    return np.asarray(cv2.resize(grey, (cols, rows), interpolation=cv2.INTER_AREA), np.uint8)


def _flat(view: NDArray[np.uint8]) -> NDArray[np.float32]:
    """The view less its slow light gradient: what is left is the ground's texture."""
    v = view.astype(np.float32)
    return np.asarray(v - cv2.GaussianBlur(v, (0, 0), FLATTEN_SIGMA), np.float32)


@dataclass(frozen=True, slots=True)
class ViewShift:
    """How the whole frame moved: turned ``degrees`` about the view's centre (as
    ``cv2.getRotationMatrix2D`` turns), then shifted (``dx``, ``dy``, frame pixels, along
    the turned axes), and how clearly (the phase correlation's response, 0..1)."""

    dx: float
    dy: float
    response: float
    degrees: float = 0.0


def view_shift(
    reference: NDArray[np.uint8], image_bgr: NDArray[np.uint8], turns: Sequence[float] = ()
) -> tuple[ViewShift, NDArray[np.uint8]]:
    """The move of ``image_bgr`` against the ``reference`` view, and its own view: the
    plain shift, or with ``turns``, the clearest of the shifts found with each of those
    turns undone first. Raises ``ImagePairError`` for a frame of another shape than the
    reference's."""
    view = camera_view(image_bgr)
    if view.shape != reference.shape:
        raise ImagePairError(
            f"camera view {view.shape} is not the reference's {reference.shape}: another size"
        )
    shift = _measure(_flat(reference), _window(reference.shape), view, image_bgr.shape[1], turns)
    return shift, view


def _measure(
    a: NDArray[np.float32],
    window: NDArray[np.float32],
    view: NDArray[np.uint8],
    width: int,
    turns: Sequence[float],
    least: float = 0.0,
) -> ViewShift:
    """The shift of ``view`` (of a frame ``width`` wide) against the flattened reference
    ``a``, and with ``turns`` where the plain shift is ``least`` frame pixels or more,
    the clearest of those found with a turn undone (``_turned``)."""
    scale = width / VIEW_WIDTH
    b = _flat(view)
    plain = _correlate(a, b, window, scale)
    if not turns or float(np.hypot(plain.dx, plain.dy)) < least:
        return plain
    return _turned(a, b, window, scale, plain, turns)


def is_move(shift: ViewShift, width: int) -> bool:
    """Whether ``shift`` (of a frame ``width`` pixels wide) says the camera moved: a
    shift of ``LEAST_SHIFT`` or more, or a turn, clear enough (``LEAST_RESPONSE``)."""
    size = float(np.hypot(shift.dx, shift.dy))
    return (size >= LEAST_SHIFT * width or shift.degrees != 0.0) and (
        shift.response >= LEAST_RESPONSE
    )


def _window(shape: tuple[int, ...]) -> NDArray[np.float32]:
    """The Hanning window the views are correlated through (their edges fade out)."""
    return np.asarray(cv2.createHanningWindow((shape[1], shape[0]), cv2.CV_32F), np.float32)


def _correlate(
    a: NDArray[np.float32], b: NDArray[np.float32], window: NDArray[np.float32], scale: float
) -> ViewShift:
    (sx, sy), response = cv2.phaseCorrelate(a, b, window)
    return ViewShift(sx * scale, sy * scale, float(response))


def _turned(
    a: NDArray[np.float32],
    b: NDArray[np.float32],
    window: NDArray[np.float32],
    scale: float,
    plain: ViewShift,
    turns: Sequence[float],
) -> ViewShift:
    """The clearest shift with one of ``turns`` undone, where it stands out from ``plain``:
    a ground without a grain of its own correlates about as well at any small turn."""
    h, w = a.shape
    best = plain
    for degrees in turns:
        undo = cv2.getRotationMatrix2D((w / 2, h / 2), -degrees, 1.0)
        turned = np.asarray(
            cv2.warpAffine(b, undo, (w, h), borderMode=cv2.BORDER_REPLICATE), np.float32
        )
        (sx, sy), response = cv2.phaseCorrelate(a, turned, window)
        if response > best.response:
            best = ViewShift(sx * scale, sy * scale, float(response), degrees)
    return best if best.response >= TURN_GAIN * plain.response else plain


def _start(shift: ViewShift, shape: tuple[int, ...], scale: float) -> NDArray[np.float32]:
    """The 2x3 map (view pixels) from the reference view to the moved one that ``shift``
    says: its turn about the view's centre, then its shift turned along."""
    h, w = shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), shift.degrees, 1.0)
    turn[:, 2] += turn[:, :2] @ np.array([shift.dx, shift.dy]) / scale
    return np.asarray(turn, np.float32)


def view_warp(
    reference: NDArray[np.uint8], view: NDArray[np.uint8], shift: ViewShift, scale: float
) -> tuple[FloatArray, float]:
    """The 3x3 map (frame pixels) from the reference frame to the moved one, and how well
    the two views then match (ECC's correlation; -1 where it did not settle). ECC
    measures a rotation and translation from ``shift`` (``scale``: frame pixels a view
    pixel), then, from that, the perspective a tilted camera adds, kept where it
    matches at least as well."""
    a, b = _flat(reference), _flat(view)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 100, 1e-5)
    euclid = np.vstack([_start(shift, reference.shape, scale), [0.0, 0.0, 1.0]]).astype(np.float32)
    match = -1.0
    with contextlib.suppress(cv2.error):  # (did not settle: no match)
        match, found = cv2.findTransformECC(a, b, euclid[:2].copy(), cv2.MOTION_EUCLIDEAN, criteria)
        euclid[:2] = np.asarray(found, np.float32)
    best = euclid
    if match >= 0.0:
        with contextlib.suppress(cv2.error):
            tilted, found = cv2.findTransformECC(
                a, b, euclid.copy(), cv2.MOTION_HOMOGRAPHY, criteria
            )
            if tilted >= match:
                best, match = np.asarray(found, np.float32), float(tilted)
    to_view = np.diag([1.0 / scale, 1.0 / scale, 1.0])
    full = np.linalg.inv(to_view) @ np.asarray(best, np.float64) @ to_view
    return full / full[2, 2], float(match)


class ViewFollower:
    """Watches one camera's frames against its view when the corners were given;
    ``step`` says when it moved, and how."""

    def __init__(self, reference: NDArray[np.uint8]) -> None:
        self._run: list[ViewShift] = []
        #: frames to wait after a move that could not be followed before trying again
        self._rest = 0
        self._set(reference)

    def _set(self, reference: NDArray[np.uint8]) -> None:
        self.reference = reference
        self._flat = _flat(reference)
        # (a strip of a frame has no view to follow: its reference says nothing)
        usable = min(reference.shape) >= LEAST_VIEW
        self._window = _window(reference.shape) if usable else None
        self._run.clear()

    def step(self, image_bgr: NDArray[np.uint8]) -> FloatArray | None:
        """The 3x3 map of points from the reference's frame into this one, once
        ``MOVE_FRAMES`` frames in a row showed the same clear move; else None. A frame of
        another size says nothing."""
        if self._rest:
            self._rest -= 1
            return None
        view = camera_view(image_bgr)
        if view.shape != self.reference.shape or self._window is None:
            self._run.clear()
            return None
        width = image_bgr.shape[1]
        # (where the plain shift says the camera moved, a turn may hide the true shift)
        shift = _measure(self._flat, self._window, view, width, TURNS, LEAST_SHIFT * width)
        clear = is_move(shift, width) and np.hypot(shift.dx, shift.dy) <= MOST_SHIFT * width
        last = self._run[-1] if self._run else None
        if not clear or (
            last is not None and np.hypot(shift.dx - last.dx, shift.dy - last.dy) > AGREE * width
        ):
            self._run.clear()
        if clear:
            self._run.append(shift)
        if len(self._run) < MOVE_FRAMES:
            return None
        self._run.clear()
        warp, match = view_warp(self.reference, view, shift, width / VIEW_WIDTH)
        if match < LEAST_MATCH:
            self.rejected()
            return None
        return warp

    def rejected(self) -> None:
        """The move just measured was not followed (the views or the chalk disagree):
        wait ``RETRY_AFTER`` frames before measuring again (each try costs a search)."""
        self._run.clear()
        self._rest = RETRY_AFTER


def carried(corners: FloatArray, warp: FloatArray) -> FloatArray:
    """``corners`` (N, 2) moved by ``warp`` (3x3, or 2x3 affine)."""
    pts = np.asarray(corners, np.float64)
    m = np.asarray(warp, np.float64)
    if m.shape == (2, 3):
        m = np.vstack([m, [0.0, 0.0, 1.0]])
    out = np.hstack([pts, np.ones((len(pts), 1))]) @ m.T
    return np.asarray(out[:, :2] / out[:, 2:], np.float64)

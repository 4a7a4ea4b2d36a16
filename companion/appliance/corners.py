"""The board's corners marked on the device, kept across restarts.

Where no search finds the board (charcoal along brick joints, a board the
frame cuts), the players mark its corners from the menu ("Mark board corners"):
a photo of the board, then one with a pebble on each outer corner
(``vision.locate.markers``). The corners found are written here, beside the
journal (the one folder the service is sure to write, on the data partition of
a read-only Pi), and read at the next start, so a power cut does not undo them.
They win over the search and over corners in the config file, since they are
the newer word; the operator menu forgets them.

The file is JSON: ``{"corners": [[x, y] x 4], "size": [width, height], "view":
"<base64 PNG>"}``, the corners SW, SE, NE, NW in pixels of the camera's frame as
taken, for frames of that size only, and the camera's small grey view when they
were marked (``vision.locate.follow``: a camera knocked while the power was off
is noticed against it at the next start; optional). It is written whole to a
temporary name, flushed to disk and renamed over the old one, so it is always
the old corners or the new ones, never one's view with the other's corners.
"""

from __future__ import annotations

import base64
import binascii
import enum
import json
import logging
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from companion.appliance.config import as_corners, corners_problem
from companion.appliance.journal.log import FileSystem, write_all
from vision.locate.follow import view_shape

log = logging.getLogger(__name__)

#: The file's name, in the journal's folder.
CORNERS_NAME = "corners.json"


class CornersFileError(ValueError):
    """The corners file cannot be read or holds no usable corners; the message says why."""


class Unused(enum.Enum):
    """Why kept corners are not used for a frame (``MarkedCorners.unused_for``)."""

    OTHER_CONFIG = "followed from the config's earlier corners, which it no longer gives"
    OTHER_SIZE = "taken on frames of another size"


@dataclass(frozen=True, slots=True)
class MarkedCorners:
    """Four board corners (SW, SE, NE, NW, pixels of the frame as taken) for frames of
    ``size`` (width, height)."""

    corners: tuple[tuple[float, float], ...]
    size: tuple[int, int]
    #: the camera's view (``vision.locate.follow.camera_view``) when they were marked
    view: NDArray[np.uint8] | None = field(default=None, compare=False)
    #: the config's corners these were followed from after a knock (None: marked on the
    #: device): once the config gives other corners, those are the newer word
    origin: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        problem = corners_problem(self.corners)
        if problem is not None:
            raise CornersFileError(problem)
        w, h = self.size
        if w < 1 or h < 1:
            raise CornersFileError(f"frame size {w}x{h} is not a size")

    def fits(self, shape: tuple[int, ...]) -> bool:
        """Whether a frame of ``shape`` (rows, columns, ...) is the size they were marked on."""
        return (int(shape[1]), int(shape[0])) == self.size

    def unused_for(
        self, shape: tuple[int, ...], configured: tuple[tuple[float, float], ...] | None
    ) -> Unused | None:
        """Why ``oanquan run`` does not read a frame of ``shape`` at these corners, the
        config giving ``configured`` (its ``[vision.locate] manual_corners``); None where
        it does. Corners followed from the config's corners stand only while the config
        gives those, and any stand only for frames of the size they were taken on."""
        if self.origin is not None and self.origin != configured:
            return Unused.OTHER_CONFIG
        if not self.fits(shape):
            return Unused.OTHER_SIZE
        return None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"corners": [list(p) for p in self.corners], "size": list(self.size)}
        if self.view is not None:
            ok, png = cv2.imencode(".png", self.view)
            if ok:
                out["view"] = base64.b64encode(png.tobytes()).decode("ascii")
        if self.origin is not None:
            out["from"] = [list(p) for p in self.origin]
        return out

    @classmethod
    def from_json(cls, data: Any) -> MarkedCorners:
        if not isinstance(data, dict) or not {"corners", "size"} <= set(data) <= KEYS:
            raise CornersFileError("expected an object with keys corners and size (and view)")
        corners, size, origin = data["corners"], data["size"], data.get("from")
        if not _pairs(corners):
            raise CornersFileError("corners: expected four [x, y] pairs of numbers")
        if not (
            isinstance(size, list)
            and len(size) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in size)
        ):
            raise CornersFileError("size: expected [width, height] in whole pixels")
        if origin is not None and not _pairs(origin):
            raise CornersFileError("from: expected four [x, y] pairs of numbers")
        found = None if origin is None else as_corners(origin)
        kept = cls(as_corners(corners), (size[0], size[1]), None, found)
        try:
            view = _view(data.get("view"), view_shape(*kept.size))
        except CornersFileError as exc:  # (the corners stand; only a knock goes unnoticed)
            log.warning("corners file: %s; dropped, a knock while off will go unnoticed", exc)
            return kept
        return replace(kept, view=view)


#: The keys a corners file may hold.
KEYS = frozenset({"corners", "size", "view", "from"})


def _pairs(value: object) -> bool:
    """Whether ``value`` is a list of four [x, y] pairs of numbers."""
    return (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(p, list) and len(p) == 2 and all(_number(v) for v in p) for p in value)
    )


def _view(text: object, shape: tuple[int, int]) -> NDArray[np.uint8] | None:
    """The kept view, decoded from its base64 PNG (None where there is none); it must be
    of ``shape``, the view of a frame of the corners' size."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise CornersFileError("view: expected a base64 PNG")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise CornersFileError("view: not base64") from None
    view = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_GRAYSCALE)
    if view is None:
        raise CornersFileError("view: not a readable PNG")
    if view.shape != shape:
        raise CornersFileError(f"view: {view.shape[1]}x{view.shape[0]}, not a view of this size")
    return np.asarray(view, np.uint8)


def _number(value: object) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # (an integer too large for a float)
        return False


def marked_corners(bare: NDArray[np.uint8], marked: NDArray[np.uint8]) -> MarkedCorners:
    """The corners of the board that ``marked`` shows with a mark on each outer corner,
    ``bare`` without them (one camera, unmoved). Raises ``vision``'s
    ``MarksNotFoundError`` (what was seen instead), ``ImagePairError`` (frames of two
    sizes), or ``CornersFileError`` (four marks that outline no usable board). The
    board's view is kept with them, which a knocked camera is noticed against."""
    from vision.geometry import order_corners
    from vision.locate.follow import camera_view
    from vision.locate.markers import marker_corners

    corners = order_corners(marker_corners(bare, marked))
    h, w = bare.shape[:2]
    return MarkedCorners(as_corners(corners), (w, h), camera_view(bare))


def load_corners(path: Path) -> MarkedCorners | None:
    """The corners kept at ``path``, or None when none were marked. Raises
    ``CornersFileError`` naming the file and what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise CornersFileError(f"{path}: cannot be read ({exc})") from None
    try:
        return MarkedCorners.from_json(json.loads(text))
    except (ValueError, RecursionError, OverflowError) as exc:
        raise CornersFileError(f"{path}: {exc}") from None


def save_corners(path: Path, corners: MarkedCorners, fs: FileSystem | None = None) -> None:
    """Write ``corners`` to ``path`` as the journal writes its files (``fs``, the
    journal's ``FileSystem``), so that a power cut leaves the old file or the new one,
    never a torn one. Raises OSError when the folder cannot be written."""
    fs = fs or FileSystem()
    tmp = path.with_name(path.name + ".tmp")
    data = (json.dumps(corners.to_json()) + "\n").encode("utf-8")
    try:
        fh = fs.open(tmp, "replace")
        try:
            write_all(fh, data)
            fh.fsync()
        finally:
            fh.close()
        fs.rename(tmp, path)
    except OSError:
        fs.remove(tmp)  # (a full disk: no half-written file left about)
        raise
    fs.fsync_dir(path.parent)


def forget_corners(path: Path, fs: FileSystem | None = None) -> bool:
    """Remove the kept corners (the search, or the config's corners, stand again);
    whether there were any. Raises OSError when the folder cannot be written."""
    fs = fs or FileSystem()
    if not fs.exists(path):
        return False
    fs.remove(path)
    fs.fsync_dir(path.parent)
    return True

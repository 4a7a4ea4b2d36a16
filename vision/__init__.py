"""Vision for the Ô ăn quan referee: find the chalk board, count the pebbles.

Stages (each pure, each with its own config section): ``lens`` (a wide
lens's distortion undone first, ``undistort``), ``locate`` (board and
homography; ``Locator`` verifies it frame to frame and notices a moved
board), ``count`` (per-square count distributions), ``gate`` (is the frame
fit to count), ``change`` (which squares changed since a confirmed frame, and
is this frame a new scene). ``read_board`` chains locate, gate and count.

One frame through them, for a fixed camera (the caller keeps ``previous``
(None for a folder of stills, where every photo is new), ``last_thumb``,
``reference``, ``calibration`` and the ``Locator`` between frames)::

    image = undistort(frame, config.lens)          # a wide lens undone (vision.lens)
    new_scene = is_new_scene(last_thumb, thumb := thumbnail(image))   # every frame
    quality = assess_frame(image, previous)       # exposure, motion: before any search
    if not quality.ok: wait                       # quality.problem says why
    located = locator.locate(image)               # verify; full search only if it fails
    if located.outline is None: no board in view  # Fix.LOST
    if located.moved: reference = calibration = None   # learnt on the old view
    reading = read_board(image, outline=located.outline, calibration=calibration,
                         previous=previous, partial=stills)   # adds the hand check
    hidden = [sq.hidden for sq in reading.squares]
    canvas, depth = change_canvas(image, located.outline), located.outline.arc_depth
    changes = square_changes(reference, canvas, depth, hidden, pebbles=ref_pebbles)  # None: none
    # once the referee confirms this frame:
    reference = confirmed_canvas(reference, canvas, depth, hidden)
    ref_pebbles = confirmed_pebbles(ref_pebbles, reading.pebbles, depth, hidden)

(The ring board of three or four seats, which has no canvas, flags changed
squares instead: ``changed_since`` and ``confirmed_reference`` on ``square_grey``.)
"""

from vision.api import BoardReading, SquareReading, calibrate, read_board
from vision.change import (
    SquareChange,
    change_canvas,
    changed_since,
    confirmed_canvas,
    confirmed_pebbles,
    confirmed_reference,
    is_new_scene,
    square_changes,
    square_grey,
    thumbnail,
)
from vision.config import (
    ChangeConfig,
    CountConfig,
    GateConfig,
    LocateConfig,
    VisionConfig,
    config_from_dict,
    load_config,
)
from vision.count import Calibration
from vision.errors import (
    BoardNotFoundError,
    ConfigError,
    ImagePairError,
    ImageReadError,
    VisionError,
)
from vision.gate import FrameQuality, Unfit, assess_frame
from vision.lens import Lens, undistort
from vision.locate import Fix, Located, Locator, Outline, locate_board, outline_from_corners
from vision.warm import warm_up

__all__ = [
    "BoardNotFoundError",
    "BoardReading",
    "Calibration",
    "ChangeConfig",
    "ConfigError",
    "CountConfig",
    "Fix",
    "FrameQuality",
    "GateConfig",
    "ImagePairError",
    "ImageReadError",
    "Lens",
    "LocateConfig",
    "Located",
    "Locator",
    "Outline",
    "SquareChange",
    "SquareReading",
    "Unfit",
    "VisionConfig",
    "VisionError",
    "assess_frame",
    "calibrate",
    "change_canvas",
    "changed_since",
    "config_from_dict",
    "confirmed_canvas",
    "confirmed_pebbles",
    "confirmed_reference",
    "is_new_scene",
    "load_config",
    "locate_board",
    "outline_from_corners",
    "read_board",
    "square_changes",
    "square_grey",
    "thumbnail",
    "undistort",
    "warm_up",
]

"""One pass of every per-frame stage before the first frame, its results thrown away.

The first frame a process reads pays costs no later frame does: each network's
first forward sets up its layers, and the heap grows to a frame's working set
page by page (the change mask alone makes about twenty canvas-sized arrays).
On render-public the first move of the first game took 310 ms where every
later one took about 130. A camera that starts the appliance, or a folder
replayed by ``oanquan track``, pays that once here, before any frame counts.
"""

from __future__ import annotations

import contextlib

import numpy as np

from vision.api import read_board
from vision.change import change_canvas, square_changes
from vision.config import VisionConfig
from vision.errors import BoardNotFoundError
from vision.lens import undistort
from vision.locate import locate_board, outline_from_corners

#: a board in the middle of the frame, as fractions of its width and height (SW, SE, NE, NW)
_CORNERS = ((0.15, 0.7), (0.85, 0.7), (0.85, 0.3), (0.15, 0.3))


def warm_up(config: VisionConfig | None = None, size: tuple[int, int] = (1280, 960)) -> None:
    """Search, count and compare once on a plain noisy frame of ``size`` (width,
    height): the camera's frames' size, so the same buffers are reused after.

    Nothing is kept and nothing the caller holds changes (pure but for the time).
    """
    cfg = config or VisionConfig()
    width, height = size
    rng = np.random.default_rng(0)
    image = rng.integers(90, 140, (height, width, 3), dtype=np.uint8)
    image = undistort(image, cfg.lens)  # (a lens's maps are built once per frame size)
    with contextlib.suppress(BoardNotFoundError):  # (none on noise; its networks ran)
        locate_board(image, cfg.locate)
    corners = np.array(_CORNERS) * np.array([width, height])
    outline = outline_from_corners(corners, cfg.locate.arc_depth)
    reading = read_board(image, cfg, outline=outline, gate=False)
    before = change_canvas(image, outline, cfg.change)
    after = change_canvas(image[::-1, ::-1].copy(), outline, cfg.change)
    square_changes(before, after, outline.arc_depth, (), cfg.change, pebbles=reading.pebbles)

"""Vision for the Ô ăn quan referee: find the chalk board, count the pebbles.

Stages (each pure, each with its own config section): ``locate`` (board and
homography), ``count`` (per-square count distributions), ``gate`` (is the
frame fit to count). ``read_board`` chains them for the referee.
"""

from vision.api import BoardReading, SquareReading, calibrate, read_board
from vision.config import (
    CountConfig,
    GateConfig,
    LocateConfig,
    VisionConfig,
    config_from_dict,
    load_config,
)
from vision.count import Calibration
from vision.errors import BoardNotFoundError, ImageReadError, VisionError
from vision.gate import FrameQuality, assess_frame
from vision.locate import Fix, Located, Locator, Outline, locate_board, outline_from_corners

__all__ = [
    "BoardNotFoundError",
    "BoardReading",
    "Calibration",
    "CountConfig",
    "Fix",
    "FrameQuality",
    "GateConfig",
    "ImageReadError",
    "LocateConfig",
    "Located",
    "Locator",
    "Outline",
    "SquareReading",
    "VisionConfig",
    "VisionError",
    "assess_frame",
    "calibrate",
    "config_from_dict",
    "load_config",
    "locate_board",
    "outline_from_corners",
    "read_board",
]

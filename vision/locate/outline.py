"""Where the board is: the outline every later stage (count, gate, verify) works on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vision.config import VisionConfig
from vision.geometry import FloatArray, homography_from_corners, project, region_polygons_board
from vision.lens import undistort_points


@dataclass(frozen=True)
class Outline:
    """Where the board is: board-to-image homography and derived geometry."""

    homography: FloatArray  # board units -> image px
    corners: FloatArray  # 4x2, SW, SE, NE, NW
    regions: tuple[FloatArray, ...]  # 12 polygons in image px, ring order
    quality: float  # 0..1, share of the template supported by chalk
    arc_depth: float
    manual: bool = False

    def px_per_unit(self) -> float:
        """Mean image length of one square side (for scale-aware stages)."""
        c = self.corners
        long_ = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 10.0
        short = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 4.0
        return float((long_ + short) / 2.0)


def outline_from_corners(
    corners: FloatArray, arc_depth: float = 0.95, quality: float = 1.0, manual: bool = False
) -> Outline:
    """Build the full outline from 4 image corners (SW, SE, NE, NW)."""
    c = np.asarray(corners, dtype=np.float64).reshape(4, 2)
    h = homography_from_corners(c)
    regions = tuple(project(h, p) for p in region_polygons_board(arc_depth))
    return Outline(h, c, regions, float(quality), float(arc_depth), manual)


def manual_outline(config: VisionConfig, shape: Sequence[int]) -> Outline | None:
    """The outline of the corners a person gave (``[locate] manual_corners``), or None.

    People give corners where they see them, in the camera's raw frame; the
    stages work on the frame with the lens undone (``vision.lens``), so the
    corners are moved there for an image of ``shape`` (rows, columns).
    """
    given = config.locate.manual_corners
    if given is None:
        return None
    corners = undistort_points(np.array(given, dtype=np.float64), shape, config.lens)
    return outline_from_corners(corners, config.locate.arc_depth, 0.0, manual=True)

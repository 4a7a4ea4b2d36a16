"""Draw a reading onto the frame, for people checking what vision saw."""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.api import BoardReading


def _warn(out: NDArray[np.uint8], text: str, scale: float, thick: int) -> None:
    """A red line of text at the top left: why the frame was not (fully) read."""
    cv2.putText(
        out,
        text,
        (10, round(30 * scale)),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.8 * scale,
        (0, 0, 255),
        thick,
        cv2.LINE_AA,
    )


def annotate(image_bgr: NDArray[np.uint8], reading: BoardReading) -> NDArray[np.uint8]:
    """Copy of the image with outline, square numbers, counts and big stones."""
    out = image_bgr.copy()
    w = out.shape[1]
    scale = max(0.4, w / 1600.0)
    thick = max(1, round(2 * scale))
    if not reading.found or reading.corners is None:
        text = f"no board: {reading.reason or 'unknown'}"
        _warn(out, text, scale, thick)
        return out
    colour = (
        (0, 255, 255) if reading.outline is None or not reading.outline.manual else (255, 0, 255)
    )
    for poly in reading.regions:
        cv2.polylines(out, [np.rint(poly).astype(np.int32)], True, colour, thick, cv2.LINE_AA)
    for name, pt in zip(("SW", "SE", "NE", "NW"), reading.corners, strict=True):
        p = (round(pt[0]), round(pt[1]))
        cv2.circle(out, p, round(5 * scale), (0, 0, 255), -1)
        cv2.putText(out, name, p, cv2.FONT_HERSHEY_SIMPLEX, 0.5 * scale, (0, 0, 255), thick)
    for i, poly in enumerate(reading.regions):
        c = poly.mean(axis=0)
        label = f"#{i}"
        if reading.squares:
            sq = reading.squares[i]
            label += f" {sq.count}" + ("+Q" if sq.big else "")
        org = (round(c[0] - 30 * scale), round(c[1]))
        # white on a black halo: readable on chalk and on dark ground alike
        for ink, width in (((0, 0, 0), thick + 2), ((255, 255, 255), thick)):
            cv2.putText(
                out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.7 * scale, ink, width, cv2.LINE_AA
            )
    if reading.reason:
        _warn(out, reading.reason, scale, thick)
    return out

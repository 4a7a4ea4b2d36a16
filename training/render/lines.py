"""The chalk (or marker, paint, tape, stick) drawing as a mask texture: numpy + Pillow, no bpy.

Lines are drawn around the board's true geometry with wobble, uneven width, gaps,
overshoot, retraced strokes, rubbed-out patches, smudges and ghosts of older boards; the
ground truth keeps the true geometry, as a player's hand wobbles around the intended line.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from training.render.geometry import Board


@dataclass(frozen=True)
class LineMask:
    """mask[row, col] in 0..1, row 0 at y = y1 (north): the texture and where it lies."""

    mask: np.ndarray
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def m_per_px(self) -> float:
        return float((self.x1 - self.x0) / self.mask.shape[1])


def _densify(poly: Sequence[tuple[float, float]], step: float) -> np.ndarray:
    out: list[np.ndarray] = []
    for a, b in itertools.pairwise(poly):
        pa, pb = np.asarray(a), np.asarray(b)
        n = max(1, math.ceil(float(np.linalg.norm(pb - pa)) / step))
        for i in range(n):
            out.append(pa + (pb - pa) * i / n)
    out.append(np.asarray(poly[-1]))
    return np.array(out)


def _wobble(pts: np.ndarray, amp: float, rng: random.Random) -> np.ndarray:
    """Shift points sideways by a smooth random amount of about amp metres."""
    if amp <= 0 or len(pts) < 2:
        return pts
    d = np.gradient(pts, axis=0)
    n = np.stack([-d[:, 1], d[:, 0]], axis=1)
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-9)
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))])
    off = np.zeros(len(pts))
    for _ in range(3):
        wl = rng.uniform(0.08, 0.6)
        off += rng.uniform(0.3, 1.0) * np.sin(2 * math.pi * s / wl + rng.uniform(0, 6.3))
    off *= amp / 2
    return pts + n * off[:, None]


def draw_lines(board: Board, p: dict[str, Any], square: float) -> LineMask:
    """Rasterise the board's strokes with the line parameters `p` (sample._lines)."""
    rng = random.Random(p["seed"])
    m_px = 0.0015 if square < 0.3 else 0.0022
    margin = 0.12
    x0, y0, x1, y1 = board.extent(margin)
    w, h = math.ceil((x1 - x0) / m_px), math.ceil((y1 - y0) / m_px)
    x1, y1 = x0 + w * m_px, y0 + h * m_px
    acc = np.zeros((h, w), dtype=np.float32)

    def to_px(pts: np.ndarray) -> list[tuple[float, float]]:
        return [((x - x0) / m_px, (y1 - y) / m_px) for x, y in pts]

    width = p["width_mm"] / 1000
    wobble = p["wobble_mm"] / 1000
    kind = p["kind"]

    def stroke(poly: Sequence[tuple[float, float]], alpha: float, wob: float, wid: float) -> None:
        pts = _densify(poly, 0.01)
        if len(pts) >= 2:
            ov = p["overshoot_mm"] / 1000 * rng.uniform(0.3, 1.2)
            for end in (0, -1):
                nb = 1 if end == 0 else -2
                d = pts[end] - pts[nb]
                d /= max(float(np.linalg.norm(d)), 1e-9)
                if end == 0:
                    pts = np.vstack([pts[0] + d * ov, pts]) if ov > 0 else pts[1:]
                else:
                    pts = np.vstack([pts, pts[-1] + d * ov]) if ov > 0 else pts[:-1]
        pts = _wobble(pts, wob, rng)
        layer = Image.new("L", (w, h), 0)
        dr = ImageDraw.Draw(layer)
        gap_rate = p["gaps_per_m"]
        i = 0
        px = to_px(pts)
        while i < len(px) - 1:
            if gap_rate > 0 and rng.random() < gap_rate * 0.01:
                i += rng.randint(1, 3)
                continue
            wv = wid * (1 + p["width_variation"] * rng.uniform(-1, 1)) / m_px
            a = int(255 * alpha * (1 - 0.3 * p["width_variation"] * rng.random()))
            dr.line([px[i], px[i + 1]], fill=a, width=max(1, round(wv)))
            r = wv / 2
            dr.ellipse(
                [px[i + 1][0] - r, px[i + 1][1] - r, px[i + 1][0] + r, px[i + 1][1] + r], fill=a
            )
            i += 1
        if kind not in ("tape",):
            layer = layer.filter(ImageFilter.GaussianBlur(0.6 if kind != "chalk" else 1.0))
        np.maximum(acc, np.asarray(layer, dtype=np.float32) / 255, out=acc)

    lines = board.lines()
    for poly in lines:
        stroke(poly, p["opacity"], wobble, width)
    for _ in range(p["retraced_strokes"]):
        stroke(rng.choice(lines), p["opacity"] * rng.uniform(0.5, 0.9), wobble * 1.2, width * 0.8)
    ghost = np.zeros_like(acc)
    for _ in range(p["ghost_strokes"]):
        drawn = rng.choice(lines)
        dx, dy = rng.uniform(-0.3, 0.3) * square, rng.uniform(-0.3, 0.3) * square
        moved = [(x + dx, y + dy) for x, y in drawn]
        before = acc.copy()
        stroke(moved, rng.uniform(0.1, 0.3), wobble, width)
        ghost = np.maximum(ghost, acc - before)
    nrng = np.random.default_rng(p["seed"])
    yy, xx = np.mgrid[0:h, 0:w]
    if p["rubbed_out"] > 0:
        for _ in range(rng.randint(1, 4)):
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            rad = rng.uniform(0.05, 0.25) * square / m_px
            blob = np.exp(-(((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * rad**2)))
            acc *= 1 - p["rubbed_out"] * blob.astype(np.float32)
    for _ in range(p["smudges"]):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        rx, ry = (rng.uniform(0.02, 0.12) * square / m_px for _ in range(2))
        blob = np.exp(-(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2) / 2)
        acc = np.maximum(acc, rng.uniform(0.08, 0.3) * p["opacity"] * blob.astype(np.float32))
    if p["grain"] > 0.06:
        g = nrng.random((h, w), dtype=np.float32)
        acc *= np.clip(1 - p["grain"] + g * p["grain"] * 1.6, 0, 1)
    return LineMask(np.clip(acc, 0, 1), x0, y0, x1, y1)

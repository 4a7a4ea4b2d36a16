"""Board geometry and camera projection for rendered scenes: pure numpy, no bpy.

The board frame follows render-public: metres, origin at the centre of the 2x5 rectangle,
x east along the long side, y north, z up, the ground at z = 0. Region names, polygon
orders (squares 4 points SW-first, semicircles 16 points from the rectangle's north end
round to its south end) and the OpenCV camera convention match that dataset so one
reader serves both.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

import numpy as np

REGIONS: tuple[str, ...] = (
    "west_mandarin",
    "east_mandarin",
    *(f"south_{k}" for k in range(5)),
    *(f"north_{k}" for k in range(5)),
)
CORNER_ORDER: tuple[str, ...] = ("SW", "SE", "NE", "NW")
ARC_POINTS = 16


def ring_index(region: str) -> int:
    """The rules' square index (interchange.md): 0 west mandarin, 1..5 south, 6, 11..7 north."""
    if region == "west_mandarin":
        return 0
    if region == "east_mandarin":
        return 6
    side, k = region.split("_")
    return 1 + int(k) if side == "south" else 11 - int(k)


def region_of_index(index: int) -> str:
    """Inverse of :func:`ring_index`."""
    for name in REGIONS:
        if ring_index(name) == index:
            return name
    raise ValueError(f"square index must be 0..11, got {index}")


@dataclass(frozen=True)
class Board:
    """A slightly irregular hand-drawn board: outer corners and every region's outline."""

    corners: tuple[tuple[float, float], ...]  # SW, SE, NE, NW
    regions: dict[str, tuple[tuple[float, float], ...]]
    square_m: tuple[float, float]

    def lines(self) -> list[tuple[tuple[float, float], ...]]:
        """The strokes a player draws: 3 long lines, 6 dividers, 2 arcs (as polylines)."""
        sw, se, ne, nw = self.corners
        south = [self.regions[f"south_{k}"] for k in range(5)]
        north = [self.regions[f"north_{k}"] for k in range(5)]
        middle = (south[0][3], south[4][2])
        out: list[tuple[tuple[float, float], ...]] = [(sw, se), middle, (nw, ne)]
        for k in range(6):
            bottom = south[k][0] if k < 5 else south[4][1]
            top = north[k][3] if k < 5 else north[4][2]
            out.append((bottom, top))
        out.append(self.regions["west_mandarin"])
        out.append(self.regions["east_mandarin"])
        return out

    def extent(self, margin: float = 0.0) -> tuple[float, float, float, float]:
        """(xmin, ymin, xmax, ymax) of all outlines, grown by margin."""
        pts = np.array([p for poly in self.regions.values() for p in poly])
        lo, hi = pts.min(axis=0) - margin, pts.max(axis=0) + margin
        return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])

    def to_json(self) -> dict[str, object]:
        return {
            "corners": [_r2(p, 4) for p in self.corners],
            "regions": {k: [_r2(p, 4) for p in self.regions[k]] for k in REGIONS},
            "square_m": [round(self.square_m[0], 4), round(self.square_m[1], 4)],
        }


def _r2(p: tuple[float, float] | np.ndarray, nd: int) -> list[float]:
    return [round(float(p[0]), nd), round(float(p[1]), nd)]


def _intersect(
    a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray
) -> tuple[float, float]:
    """Intersection of the lines a0-a1 and b0-b1 (they are never parallel here)."""
    da, db = a1 - a0, b1 - b0
    m = np.array([[da[0], -db[0]], [da[1], -db[1]]])
    s, _ = np.linalg.solve(m, b0 - a0)
    p = a0 + s * da
    return float(p[0]), float(p[1])


def make_board(
    square: float, aspect: float, rng: random.Random, irregularity: float = 1.0
) -> Board:
    """Draw a board of citizen squares `square` m wide and `square*aspect` deep.

    Corners move by up to 3% of a square, dividers by up to 8%, and each semicircle is
    a semi-ellipse 85-115% as deep as a circle, slightly skewed: a hand-drawn board.
    """
    sx, sy = square, square * aspect
    j = irregularity

    def jit(scale: float) -> float:
        return rng.uniform(-scale, scale) * j

    hx, hy = 2.5 * sx, sy
    sw = np.array([-hx + jit(0.03 * sx), -hy + jit(0.03 * sy)])
    se = np.array([hx + jit(0.03 * sx), -hy + jit(0.03 * sy)])
    ne = np.array([hx + jit(0.03 * sx), hy + jit(0.03 * sy)])
    nw = np.array([-hx + jit(0.03 * sx), hy + jit(0.03 * sy)])
    wm = sw + (0.5 + jit(0.02)) * (nw - sw)  # the middle line starts on the short sides
    em = se + (0.5 + jit(0.02)) * (ne - se)
    fr = [0.0, *[(k + jit(0.08)) / 5 for k in range(1, 5)], 1.0]
    fn = [0.0, *[(k + jit(0.08)) / 5 for k in range(1, 5)], 1.0]
    bottom = [sw + f * (se - sw) for f in fr]
    top = [nw + f * (ne - nw) for f in fn]
    mid = [wm] + [np.array(_intersect(bottom[k], top[k], wm, em)) for k in range(1, 5)] + [em]

    def pt(p: np.ndarray) -> tuple[float, float]:
        return float(p[0]), float(p[1])

    regions: dict[str, tuple[tuple[float, float], ...]] = {}
    for k in range(5):
        regions[f"south_{k}"] = (pt(bottom[k]), pt(bottom[k + 1]), pt(mid[k + 1]), pt(mid[k]))
        regions[f"north_{k}"] = (pt(mid[k]), pt(mid[k + 1]), pt(top[k + 1]), pt(top[k]))
    regions["west_mandarin"] = _arc(nw, sw, -1, rng.uniform(0.85, 1.15), jit(0.12))
    regions["east_mandarin"] = _arc(ne, se, +1, rng.uniform(0.85, 1.15), jit(0.12))
    corners = (pt(sw), pt(se), pt(ne), pt(nw))
    return Board(corners, {k: regions[k] for k in REGIONS}, (sx, sy))


def _arc(
    start: np.ndarray, end: np.ndarray, outward: int, depth: float, skew: float
) -> tuple[tuple[float, float], ...]:
    """Semi-ellipse on the flat side start->end, bulging towards x*outward, 16 points."""
    c = (start + end) / 2
    u = (start - c) / np.linalg.norm(start - c)
    n = np.array([u[1], -u[0]])
    if n[0] * outward < 0:
        n = -n
    a = float(np.linalg.norm(start - c))
    pts = []
    for i in range(ARC_POINTS):
        t = math.pi * i / (ARC_POINTS - 1)
        s = math.sin(t)
        p = c + a * math.cos(t) * u + a * depth * s * n + a * skew * s * math.cos(t) * n
        pts.append((float(p[0]), float(p[1])))
    pts[0] = (float(start[0]), float(start[1]))
    pts[-1] = (float(end[0]), float(end[1]))
    return tuple(pts)


def point_in_polygon(p: tuple[float, float], poly: tuple[tuple[float, float], ...]) -> bool:
    """Even-odd rule; the polygon is closed implicitly."""
    x, y = p
    inside = False
    n = len(poly)
    for i in range(n):
        x0, y0 = poly[i]
        x1, y1 = poly[(i + 1) % n]
        if (y0 > y) != (y1 > y):
            xc = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
            if xc > x:
                inside = not inside
    return inside


def region_at(board: Board, p: tuple[float, float]) -> str | None:
    """The region containing a ground point, or None off the board."""
    for name in REGIONS:
        if point_in_polygon(p, board.regions[name]):
            return name
    return None


def segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    t = float(np.clip(np.dot(p - a, ab) / max(float(np.dot(ab, ab)), 1e-12), 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * ab)))


def line_distance(board: Board, p: tuple[float, float]) -> float:
    """Distance in metres from a ground point to the nearest drawn line."""
    q = np.asarray(p, dtype=float)
    best = math.inf
    for poly in board.lines():
        for a, b in itertools.pairwise(poly):
            best = min(best, segment_distance(q, np.asarray(a), np.asarray(b)))
    return best


def polygon_area(poly: np.ndarray) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def sample_polygon(
    poly: tuple[tuple[float, float], ...], n: int, rng: np.random.Generator
) -> np.ndarray:
    """n points uniform in the polygon (rejection from its bounding box)."""
    arr = np.asarray(poly)
    lo, hi = arr.min(axis=0), arr.max(axis=0)
    out: list[np.ndarray] = []
    while len(out) < n:
        cand = rng.uniform(lo, hi, size=(4 * n, 2))
        out.extend(c for c in cand if point_in_polygon((c[0], c[1]), poly))
    return np.array(out[:n])


# -- camera -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Camera:
    """Pinhole camera in OpenCV convention: pixel ~ K @ (R @ X + t)."""

    K: np.ndarray
    R: np.ndarray
    t: np.ndarray
    width: int
    height: int

    @property
    def position(self) -> np.ndarray:
        return np.asarray(-self.R.T @ self.t, dtype=float)

    def project(self, pts: np.ndarray) -> np.ndarray:
        """World points (N,3) -> pixels (N,2); points behind the camera give NaN."""
        cam = (self.R @ np.asarray(pts, dtype=float).T).T + self.t
        z = cam[:, 2:3]
        uv = (self.K @ cam.T).T
        with np.errstate(divide="ignore", invalid="ignore"):
            px = uv[:, :2] / z
        px[z[:, 0] <= 1e-6] = np.nan
        return np.asarray(px, dtype=float)

    def in_frame(self, px: np.ndarray) -> np.ndarray:
        ok = np.isfinite(px).all(axis=1)
        x, y = np.nan_to_num(px[:, 0]), np.nan_to_num(px[:, 1])
        return np.asarray(ok & (x >= 0) & (x < self.width) & (y >= 0) & (y < self.height))

    def to_json(self) -> dict[str, object]:
        return {
            "K": np.round(self.K, 3).tolist(),
            "R_world_to_cam_opencv": np.round(self.R, 6).tolist(),
            "t_opencv": np.round(self.t, 5).tolist(),
            "position_m": np.round(self.position, 4).tolist(),
        }


def look_at_camera(
    eye: np.ndarray,
    target: np.ndarray,
    roll_deg: float,
    focal_36mm: float,
    width: int,
    height: int,
    away: np.ndarray | None = None,
) -> Camera:
    """A camera at eye looking at target, the image's up towards `away` (a ground direction).

    `away` defaults to the horizontal direction from eye to target, and must be given for a
    camera looking straight down. The focal length is 36-mm-equivalent across the image
    width (Blender's horizontal sensor fit).
    """
    fwd = target - eye
    fwd = fwd / np.linalg.norm(fwd)
    if away is None:
        away = np.array([fwd[0], fwd[1]])
    h = np.array([away[0], away[1], 0.0])
    right = np.cross(fwd, h)
    right = right / np.linalg.norm(right)
    down = np.cross(fwd, right)
    r = math.radians(roll_deg)
    right, down = (
        math.cos(r) * right + math.sin(r) * down,
        -math.sin(r) * right + math.cos(r) * down,
    )
    R = np.stack([right, down, fwd])
    t = -R @ eye
    f = focal_36mm / 36.0 * width
    K = np.array([[f, 0.0, width / 2], [0.0, f, height / 2], [0.0, 0.0, 1.0]])
    return Camera(K, R, t, width, height)

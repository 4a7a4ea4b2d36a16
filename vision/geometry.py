"""Board template in board units and the maps between board and image.

Board units: one citizen square is 1 x 1; the 2x5 rectangle spans x in [0, 5]
(west to east) and y in [0, 2] (south to north). Square indices follow
``engine.board``: 0 west semicircle, 1..5 south row west->east, 6 east
semicircle, 7..11 north row east->west.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from engine.board import MANDARINS, NUM_SQUARES, ROWS

FloatArray = NDArray[np.float64]

#: Rectangle corners in board units, order SW, SE, NE, NW.
BOARD_CORNERS: FloatArray = np.array([[0.0, 0.0], [5.0, 0.0], [5.0, 2.0], [0.0, 2.0]])
#: (south, north) citizen square of each board column x in [k, k + 1], west to east.
COLUMNS: tuple[tuple[int, int], ...] = tuple(zip(ROWS[0], ROWS[1][::-1], strict=True))
#: The semicircle squares at the west (x < 0) and east (x > 5) ends.
WEST, EAST = MANDARINS


def arc_points(depth: float, east: bool, n: int = 15) -> FloatArray:
    """Semi-ellipse from the north corner round to the south corner of one end."""
    t = np.linspace(0.0, np.pi, n + 1)
    x = depth * np.sin(t)
    y = 1.0 + np.cos(t)  # 2 -> 0, north to south
    if east:
        return np.stack([5.0 + x, y], axis=1)
    return np.stack([-x, y], axis=1)


def region_polygons_board(depth: float) -> list[FloatArray]:
    """The 12 region outlines in board units, indexed by ring square."""
    polys: list[FloatArray] = [np.zeros((0, 2))] * NUM_SQUARES
    polys[WEST] = arc_points(depth, east=False)
    polys[EAST] = arc_points(depth, east=True)[::-1]
    for col, (south, north) in enumerate(COLUMNS):
        x0 = float(col)
        polys[south] = np.array([[x0, 0.0], [x0 + 1, 0.0], [x0 + 1, 1.0], [x0, 1.0]])
        polys[north] = np.array([[x0, 1.0], [x0 + 1, 1.0], [x0 + 1, 2.0], [x0, 2.0]])
    return polys


def template_with_tangents(step: float, depth: float) -> tuple[FloatArray, FloatArray]:
    """Template points and the unit tangent of the chalk line at each point."""
    return _template_cached(round(step, 4), round(depth, 3))


@functools.lru_cache(maxsize=64)
def _template_cached(step: float, depth: float) -> tuple[FloatArray, FloatArray]:
    pts: list[FloatArray] = []
    tan: list[FloatArray] = []
    xs = np.arange(0.0, 5.0 + 1e-9, step)
    ys = np.arange(0.0, 2.0 + 1e-9, step)
    for y in (0.0, 1.0, 2.0):
        pts.append(np.stack([xs, np.full_like(xs, y)], axis=1))
        tan.append(np.tile([1.0, 0.0], (len(xs), 1)))
    for x in range(6):
        pts.append(np.stack([np.full_like(ys, float(x)), ys], axis=1))
        tan.append(np.tile([0.0, 1.0], (len(ys), 1)))
    # arcs are sampled twice as densely as their length: they are the one part
    # of the template that floor tiles, planks and printed stripes never have
    n_arc = max(4, int(2.0 * np.pi * 1.5 / step))
    for east in (False, True):
        a = arc_points(depth, east=east, n=n_arc)
        t = np.gradient(a, axis=0)
        t /= np.linalg.norm(t, axis=1, keepdims=True) + 1e-12
        pts.append(a[1:-1])
        tan.append(t[1:-1])
    return np.concatenate(pts, axis=0), np.concatenate(tan, axis=0)


def extension_points(step: float, depth: float) -> tuple[FloatArray, FloatArray]:
    """Points on the continuation of the template lines past the board's ends.

    A chalk board stops; floor joints and stripes run on. Evidence here counts
    against a hypothesis.
    """
    pts: list[FloatArray] = []
    tan: list[FloatArray] = []
    xs = np.concatenate(
        [
            np.arange(-depth - 0.9, -depth - 0.3, step),
            np.arange(5 + depth + 0.3, 5 + depth + 0.9, step),
        ]
    )
    for y in (0.0, 1.0, 2.0):
        pts.append(np.stack([xs, np.full_like(xs, y)], axis=1))
        tan.append(np.tile([1.0, 0.0], (len(xs), 1)))
    ys = np.concatenate([np.arange(-0.9, -0.3, step), np.arange(2.3, 2.9, step)])
    for x in range(1, 5):
        pts.append(np.stack([np.full_like(ys, float(x)), ys], axis=1))
        tan.append(np.tile([0.0, 1.0], (len(ys), 1)))
    return np.concatenate(pts, axis=0), np.concatenate(tan, axis=0)


def offgrid_with_tangents(step: float) -> tuple[FloatArray, FloatArray]:
    """Points half a square away from every line (a true fit has no chalk there) and
    the direction of the template lines they parallel.

    Evidence there only counts against a fit when it runs parallel to the
    template lines (tiles, planks, stripes shifted half a square), so pebble
    outlines inside the squares do not penalise the true board.
    """
    pts: list[FloatArray] = []
    tan: list[FloatArray] = []
    xs = np.arange(0.5, 5.0, step)
    for y in (0.5, 1.5):
        pts.append(np.stack([xs, np.full_like(xs, y)], axis=1))
        tan.append(np.tile([1.0, 0.0], (len(xs), 1)))
    ys = np.arange(0.25, 2.0, step)
    for x in (0.5, 1.5, 2.5, 3.5, 4.5):
        pts.append(np.stack([np.full_like(ys, x), ys], axis=1))
        tan.append(np.tile([0.0, 1.0], (len(ys), 1)))
    return np.concatenate(pts, axis=0), np.concatenate(tan, axis=0)


def project(h: FloatArray, pts: FloatArray) -> FloatArray:
    """Apply a 3x3 homography to Nx2 points."""
    p = np.concatenate([pts, np.ones((len(pts), 1))], axis=1) @ h.T
    w = p[:, 2:3]
    w = np.where(np.abs(w) < 1e-12, 1e-12, w)
    return p[:, :2] / w


def homography_from_corners(corners_img: FloatArray) -> FloatArray:
    """Board-to-image homography from the 4 image corners (SW, SE, NE, NW)."""
    return np.asarray(
        _dlt4(BOARD_CORNERS[None], np.asarray(corners_img, dtype=np.float64)[None])[0]
    )


def _dlt4(src: FloatArray, dst: FloatArray) -> FloatArray:
    """Batched exact homographies from 4 point pairs: src, dst are (K, 4, 2)."""
    k = src.shape[0]
    a = np.zeros((k, 8, 8))
    b = np.zeros((k, 8))
    x, y = src[..., 0], src[..., 1]
    u, v = dst[..., 0], dst[..., 1]
    for i in range(4):
        a[:, 2 * i, 0] = x[:, i]
        a[:, 2 * i, 1] = y[:, i]
        a[:, 2 * i, 2] = 1.0
        a[:, 2 * i, 6] = -x[:, i] * u[:, i]
        a[:, 2 * i, 7] = -y[:, i] * u[:, i]
        a[:, 2 * i + 1, 3] = x[:, i]
        a[:, 2 * i + 1, 4] = y[:, i]
        a[:, 2 * i + 1, 5] = 1.0
        a[:, 2 * i + 1, 6] = -x[:, i] * v[:, i]
        a[:, 2 * i + 1, 7] = -y[:, i] * v[:, i]
        b[:, 2 * i] = u[:, i]
        b[:, 2 * i + 1] = v[:, i]
    det = np.linalg.det(a)
    ok = np.abs(det) > 1e-12
    sol = np.zeros((k, 8))
    if ok.any():
        sol[ok] = np.linalg.solve(a[ok], b[ok][..., None])[..., 0]
    h = np.concatenate([sol, np.ones((k, 1))], axis=1).reshape(k, 3, 3)
    h[~ok] = np.nan
    return h


def canonical_corners(corners_img: FloatArray) -> FloatArray:
    """Reorder rectangle corners to SW, SE, NE, NW by the image-based convention.

    The input is the image of the board corners in template order for some
    symmetry of the template, mirrors included (a drawn board's lines are
    symmetric). A camera looking down never mirrors the board, so the corners
    are first put the way round a board seen from above runs (SW, SE, NE, NW
    anticlockwise on screen, the image's y pointing down); of its two half
    turns, south is then the long side nearer the image bottom. Where that side
    lies level, west is its left end; a board seen end-on keeps its handedness
    (choosing west by x alone mirrored it there).
    """
    c = np.array(corners_img, dtype=np.float64)  # a copy: the caller's stays as it was
    # long sides are (0,1) and (3,2), short sides (0,3) and (1,2), in template order
    along, across = c[1] - c[0], c[3] - c[0]
    if along[0] * across[1] - along[1] * across[0] > 0:  # mirrored: swap the ends
        c = c[[1, 0, 3, 2]]
    south_first = (c[0, 1] + c[1, 1]) >= (c[3, 1] + c[2, 1])
    return c if south_first else c[[2, 3, 0, 1]]


def order_corners(pts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Any 4 rectangle corners -> SW, SE, NE, NW by the image convention.

    The long sides are found from the convex order; south is the long side
    nearer the image bottom and west its left end.
    """
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    ring = pts[np.argsort(ang)]
    sides = [np.linalg.norm(ring[(i + 1) % 4] - ring[i]) for i in range(4)]
    start = 0 if sides[0] + sides[2] >= sides[1] + sides[3] else 1
    ordered = np.array([ring[(start + k) % 4] for k in range(4)])
    return canonical_corners(ordered)


def side_ratio(corners: FloatArray) -> float:
    """The larger of the two ratios of opposite sides' lengths of a board outline
    (SW, SE, NE, NW image corners; inf for a side of no length).

    A drawn board's opposite sides are equally long, so in a photo they differ only
    by perspective: our renders (tilt up to 55 degrees, 0.8-2.5 m away) never pass
    2.1. A fit far beyond that is a sliver of tile joints or brick mortar, no board.
    """
    c = np.asarray(corners, dtype=np.float64)
    sides = np.linalg.norm(np.roll(c, -1, axis=0) - c, axis=1)  # SW-SE, SE-NE, NE-NW, NW-SW
    ratios = []
    for a, b in ((sides[0], sides[2]), (sides[1], sides[3])):
        low = min(a, b)
        ratios.append(max(a, b) / low if low > 0 else float("inf"))
    return float(max(ratios))


#: focal lengths tried by :func:`shape_error`, image widths: a fisheye-like 0.25 (a
#: 127-degree view) to a long 2.0 (28 degrees); phones, Pi cameras and webcams lie between
_FOCALS = np.geomspace(0.25, 2.0, 64)


def shape_error(corners: FloatArray, width: int, height: int) -> float:
    """How far an outline (SW, SE, NE, NW image corners) is from a 5 x 2 rectangle of
    square squares seen through a pinhole camera whose principal point is the image
    centre, at the focal length (``_FOCALS``) that fits it best.

    The board-to-image homography is K [r1 r2 t] up to scale, so K^-1 applied to its first
    two columns gives the board's two axes in the camera's frame, which must be at right
    angles and of equal length. The error is the larger of the cosine of the angle between
    them and the logarithm of their lengths' ratio: 0 for a drawn board seen exactly, up to
    0.15 for our renders' hand-drawn boards, 0.3 for right fits of them; a rectangle of
    bricks or tiles that is not the board's shape fits no focal length.
    """
    h = homography_from_corners(corners)
    if not np.all(np.isfinite(h)):  # corners no homography fits (three in a line)
        return float("inf")
    centred = np.array([[1.0, 0.0, -width / 2.0], [0.0, 1.0, -height / 2.0], [0.0, 0.0, 1.0]])
    cols = centred @ h[:, :2]  # (3, 2): the two axes' images
    f = _FOCALS * float(width)
    # K^-1 = diag(1/f, 1/f, 1): per focal, each axis (x / f, y / f, w)
    xy = cols[:2, :, None] / f  # (2, 2, F)
    axes = np.concatenate([xy, np.broadcast_to(cols[2:, :, None], (1, 2, len(f)))], axis=0)
    length = np.linalg.norm(axes, axis=0)  # (2, F)
    cos = np.abs(np.sum(axes[:, 0] * axes[:, 1], axis=0)) / np.maximum(
        length[0] * length[1], 1e-300
    )
    ratio = np.abs(np.log(np.maximum(length[0], 1e-300) / np.maximum(length[1], 1e-300)))
    return float(np.min(np.maximum(cos, ratio)))

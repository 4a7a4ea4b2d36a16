"""A wide lens's distortion, undone before anything looks for straight lines.

Every stage after this one assumes a pinhole camera: the board is a
homography of straight chalk lines, and its squares are cut by that
homography. A wide lens (the Camera Module 3 Wide, most webcams) bows
straight lines, most near the image edges where the ends of a board that
fills the frame lie: the fit then bends to the middle and the end squares
are cut a little wrong. Such a camera's frames are undistorted first, by a
:class:`Lens` measured once (:func:`fit_lens`: lines straight in the world,
a printed chessboard's or the board's own, are straightest through the
right lens).

The model is the one-parameter division model (Fitzgibbon 2001), radial
about the image centre in units of the half-diagonal ``R``, so that one
coefficient means the same at every resolution: a point that shows at ``d``
in the raw frame (from the centre, over ``R``) lies at ``d / (1 + k1 |d|^2)``
in a pinhole's; ``k1`` below 0 is barrel distortion, and to first order the
model is the polynomial ``u (1 + k1 |u|^2)``. It goes both ways in closed
form and takes every raw pixel somewhere for any accepted ``k1``, where a
polynomial in the pinhole radius folds before the corners of a strong barrel.
The undistorted frame keeps the raw frame's size, scaled by
:func:`frame_zoom` so that a barrel's straightened edges stay in view (the
ends of a board that fills the frame lie there).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.errors import ConfigError
from vision.geometry import FloatArray, project

#: the largest coefficient accepted: within it both directions are defined over the
#: whole frame (a pincushion's ``1 - 4 k1 |u|^2`` stays above 0), and no camera this
#: app suits bends more
MAX_K = 0.25


@dataclass(frozen=True, slots=True)
class Lens:
    """The division model's coefficient (see the module docstring); 0: a pinhole."""

    k1: float = 0.0

    @property
    def pinhole(self) -> bool:
        """No distortion: frames are used as they come."""
        return self.k1 == 0.0

    def problem(self) -> str | None:
        """Why this lens cannot be used (a one-line reason), or None."""
        if not np.isfinite(self.k1) or abs(self.k1) > MAX_K:
            return f"k1 must be between -{MAX_K} and {MAX_K}, got {self.k1}"
        return None


def _frame(shape: Sequence[int]) -> tuple[NDArray[np.float64], float]:
    """Centre (x, y) and half-diagonal of an image of ``shape`` (rows, columns, ...)."""
    h, w = int(shape[0]), int(shape[1])
    return np.array([w / 2.0, h / 2.0]), float(np.hypot(w, h) / 2.0)


def frame_zoom(shape: Sequence[int], lens: Lens) -> float:
    """The undistorted frame's scale against a pinhole's at the raw frame's centre scale:
    a barrel's straightened frame is wider than the raw one, and is shrunk till the raw
    frame's left and right edges (mid-height) are in view again; only the corners' tips
    are lost. 1 for a pinhole or a pincushion."""
    if lens.k1 >= 0.0:
        return 1.0
    c, r = _frame(shape)
    half_width = c[0] / r
    return float(1.0 + lens.k1 * half_width * half_width)


def undistort_points(points: FloatArray, shape: Sequence[int], lens: Lens) -> FloatArray:
    """Where points of the raw frame (px, shape (..., 2)) lie in the undistorted one."""
    pts = np.asarray(points, np.float64)
    if lens.pinhole:
        return pts.copy()
    c, r = _frame(shape)
    d = (pts - c) / r
    q = np.sum(d * d, axis=-1, keepdims=True)
    u = d / np.maximum(1.0 + lens.k1 * q, 1e-6)
    return np.asarray(c + u * (frame_zoom(shape, lens) * r), np.float64)


def distort_points(points: FloatArray, shape: Sequence[int], lens: Lens) -> FloatArray:
    """Where points of the undistorted frame (px, shape (..., 2)) lie in the raw one (for
    a pincushion, points past where the model ends are taken to its edge)."""
    pts = np.asarray(points, np.float64)
    if lens.pinhole:
        return pts.copy()
    c, r = _frame(shape)
    u = (pts - c) / (frame_zoom(shape, lens) * r)
    q = np.sum(u * u, axis=-1, keepdims=True)
    d = u * (2.0 / (1.0 + np.sqrt(np.maximum(1.0 - 4.0 * lens.k1 * q, 0.0))))
    return np.asarray(c + d * r, np.float64)


@functools.lru_cache(maxsize=4)
def _maps(width: int, height: int, lens: Lens) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """For every pixel of the undistorted frame, where to read the raw one (cv2.remap);
    a lens no config could give is refused here, once per frame size."""
    problem = lens.problem()
    if problem is not None:
        raise ConfigError(f"vision config: [lens] {problem}")
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    raw = distort_points(np.stack([xs, ys], axis=-1), (height, width), lens).astype(np.float32)
    mx, my = np.ascontiguousarray(raw[..., 0]), np.ascontiguousarray(raw[..., 1])
    mx.setflags(write=False)
    my.setflags(write=False)
    return mx, my


def undistort(image: NDArray[np.uint8], lens: Lens) -> NDArray[np.uint8]:
    """The frame as a pinhole camera would have taken it (the same array for a pinhole).

    The maps are built once per frame size (about 0.1 s at 1280x960, in
    ``vision.warm_up``) and the remap then costs about 8 ms a frame. Pixels whose raw source lies
    outside the frame repeat its edge, which draws no line a board could use.
    """
    if lens.pinhole:
        return image
    h, w = image.shape[:2]
    mx, my = _maps(w, h, lens)
    out = cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(out, dtype=np.uint8)


# ---------------------------------------------------------------- measuring a lens


@dataclass(frozen=True, slots=True)
class LensFit:
    """A lens measured from photos, and how straight it makes their lines.

    ``rms_pinhole`` and ``rms``: the points' distance from a straight line
    through each line's points (px at the raw frame's centre scale), taken as
    they are and undistorted by ``lens``; ``straightened``: how much of their
    bend that undoes (0 none, 1 all; scale-free, as ``lens`` was chosen);
    ``lines`` and ``points`` say how much the measure rests on.
    """

    lens: Lens
    lines: int
    points: int
    rms_pinhole: float
    rms: float
    straightened: float


#: board lines the fit samples: (x0, y0, x1, y1, points) in board units (squares): the
#: three long lines and the six dividers of the 2 x 5 rectangle, ends left out (the
#: arcs and the corners bend away from any one line)
_LINES = (
    *((0.15, y, 4.85, y, 28) for y in (0.0, 1.0, 2.0)),
    *((x, 0.15, x, 1.85, 10) for x in (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)),
)


def chalk_points(
    chalk: NDArray[np.float32],
    homography: FloatArray,
    scale: float,
    reach: float = 0.25,
    least: float = 0.5,
) -> list[FloatArray]:
    """Chalk along each board line, in raw frame px: one array of points per line.

    ``chalk``: a map of how likely each pixel is chalk, at ``scale`` times
    the frame's size; ``homography``: board units -> frame px (a fit on the
    raw frame, bent lines and all). Each sample of a line is moved along the
    line's normal, up to ``reach`` squares either way, to the likeliest chalk
    there; a sample is kept where that is at least ``least`` and not at the
    window's end (another line's chalk, or none).
    """
    out: list[FloatArray] = []
    h, w = chalk.shape
    steps = np.linspace(-1.0, 1.0, 41)
    for x0, y0, x1, y1, n in _LINES:
        t = np.linspace(0.0, 1.0, n)[:, None]
        board = np.hstack([x0 + t * (x1 - x0), y0 + t * (y1 - y0)])
        normal_board = np.array([-(y1 - y0), x1 - x0]) / np.hypot(x1 - x0, y1 - y0)
        a = project(homography, board) * scale
        b = project(homography, board + reach * normal_board) * scale
        # (n, 41, 2) points across the line, from reach one side to reach the other
        across = a[:, None, :] + steps[None, :, None] * (b - a)[:, None, :]
        mx = np.ascontiguousarray(across[..., 0], np.float32)
        my = np.ascontiguousarray(across[..., 1], np.float32)
        vals = cv2.remap(chalk, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        vals = np.asarray(vals, np.float64)
        best = np.argmax(vals, axis=1)
        keep = (vals[np.arange(n), best] >= least) & (best > 0) & (best < len(steps) - 1)
        inside = (a[:, 0] >= 0) & (a[:, 0] < w) & (a[:, 1] >= 0) & (a[:, 1] < h)
        keep &= inside
        idx = np.nonzero(keep)[0]
        if len(idx) < 5:
            continue
        # sub-sample the peak with a parabola through it and its neighbours
        lo, mid, hi = (vals[idx, best[idx] + k] for k in (-1, 0, 1))
        den = lo - 2.0 * mid + hi
        off = np.where(den < 0, 0.5 * (lo - hi) / np.where(den < 0, den, -1.0), 0.0)
        s = steps[best[idx]] + off * (steps[1] - steps[0])
        pts = a[idx] + s[:, None] * (b[idx] - a[idx])
        out.append(pts / scale)
    return out


def _scatter(lines: list[FloatArray]) -> tuple[float, float]:
    """Summed over the point sets: the squared distances from each set's best straight line
    (total least squares) and its squared spread along it, the smaller and larger
    eigenvalue of each set's scatter (on 2 x 2 moments, far cheaper than an SVD a line)."""
    off, along = 0.0, 0.0
    for pts in lines:
        centred = pts - pts.mean(axis=0)
        m = centred.T @ centred
        tr, det = float(m[0, 0] + m[1, 1]), float(np.linalg.det(m))
        root = float(np.sqrt(max(0.25 * tr * tr - det, 0.0)))
        off += max(0.5 * tr - root, 0.0)
        along += 0.5 * tr + root
    return off, along


def _rms(lines: list[FloatArray]) -> float:
    """Root mean square distance of the points from the straight line through each set."""
    return float(np.sqrt(_scatter(lines)[0] / max(sum(len(p) for p in lines), 1)))


def _bend(lines: list[FloatArray]) -> float:
    """How far the sets are from straight, whatever their scale: their squared distances
    from their lines over their squared spreads along them (an undistortion that
    magnifies the edges must not look less straight for it, nor one that shrinks them
    straighter)."""
    off, along = _scatter(lines)
    return off / max(along, 1e-12)


def fit_lens(lines: list[FloatArray], shape: Sequence[int], step: float = 0.005) -> LensFit | None:
    """The ``k1`` that makes the lines of the photos straightest.

    ``lines``: raw-frame points per straight line (:func:`chalk_points`,
    :func:`chessboard_lines`). Lines that span much of the frame, near its
    edges, say most: a lens bends most there. Every ``k1`` from
    -:data:`MAX_K` to :data:`MAX_K` is tried in ``step``. None when too little
    was found to tell (fewer than three lines of five points, or fewer than
    thirty points in all).
    """
    lines = [p for p in lines if len(p) >= 5]
    if len(lines) < 3 or sum(len(p) for p in lines) < 30:
        return None
    tried = [Lens(float(round(k, 6))) for k in np.arange(-MAX_K, MAX_K + 1e-9, step)]
    bends = [_bend([undistort_points(p, shape, lens) for p in lines]) for lens in tried]
    best = int(np.argmin(bends))  # (the first of equals, the most barrel-like)
    lens = tried[best]
    straight = [undistort_points(p, shape, lens) for p in lines]
    before = _bend(lines)
    return LensFit(
        lens,
        len(lines),
        sum(len(p) for p in lines),
        _rms(lines),
        _rms(straight) / frame_zoom(shape, lens),
        1.0 - bends[best] / before if before > 0 else 0.0,
    )


def board_chalk(
    image_bgr: NDArray[np.uint8], homography: FloatArray, model: str, width: int = 960
) -> list[FloatArray]:
    """:func:`chalk_points` of one raw photo whose board was found at ``homography``
    (board units -> px, a fit on this very photo), for :func:`fit_lens`. The chalk is
    the board-line network's map (``model``), read ``width`` px wide: finer than the
    search's copy, since the points' places are the measure. Photos of one camera may
    be pooled: each line is straightened on its own."""
    from vision.locate.learned import line_probability
    from vision.locate.ridges import downscale

    work, scale = downscale(image_bgr, min(width, image_bgr.shape[1]))
    return chalk_points(line_probability(work, model), homography, scale)


def chessboard_lines(image_bgr: NDArray[np.uint8], inner: tuple[int, int]) -> list[FloatArray]:
    """The rows and columns of a printed chessboard's inner corners, for :func:`fit_lens`
    (empty when the board is not found whole). ``inner``: corners per row and per
    column (a board of 10 x 7 squares has 9 x 6). A printed board's lines are truly
    straight, where chalk wobbles: the surer measure of a lens."""
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    found, corners = cv2.findChessboardCornersSB(grey, inner, flags=cv2.CALIB_CB_EXHAUSTIVE)
    if not found or corners is None:
        return []
    grid = np.asarray(corners, np.float64).reshape(inner[1], inner[0], 2)
    return [*(grid[r] for r in range(inner[1])), *(grid[:, c] for c in range(inner[0]))]

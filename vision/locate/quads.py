"""Stage 4, quadrilaterals: board hypotheses from two long and two short lines.

A quadrilateral bounded by two lines of each direction is ranked by the chalk
along its four sides, read from per-line cumulative tables; only the best get
the 45 template assignments (which template lines they are), each one
homography. The closed-form quadrilateral solvers live here too.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from numpy.typing import NDArray

from vision.config import LocateConfig
from vision.geometry import FloatArray
from vision.locate.evidence import BINS
from vision.locate.lines import angle_diff


def _homog_lines(lines: FloatArray) -> FloatArray:
    return np.stack([np.cos(lines[:, 1]), np.sin(lines[:, 1]), -lines[:, 0]], axis=1)


def _line_profiles(
    maps: NDArray[np.float32], lines: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Cumulative direction-matched evidence along each whole line, 1 px steps.

    With these, the mean support of any segment of a line is two lookups, so
    thousands of line quadruples can be ranked at once.
    """
    _, h, w = maps.shape
    half = int(np.ceil(np.hypot(h, w)))
    t = np.arange(-half, half + 1, dtype=np.float64)
    rho, theta = lines[:, 0], lines[:, 1]
    p0 = np.stack([rho * np.cos(theta), rho * np.sin(theta)], axis=1)
    d = np.stack([-np.sin(theta), np.cos(theta)], axis=1)
    xs = np.rint(p0[:, 0:1] + t[None, :] * d[:, 0:1])
    ys = np.rint(p0[:, 1:2] + t[None, :] * d[:, 1:2])
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    chan = (np.rint(np.mod(theta, np.pi) / (np.pi / BINS)).astype(np.intp) % BINS)[:, None]
    vals = maps[
        np.broadcast_to(chan, xs.shape),
        np.clip(ys, 0, h - 1).astype(np.intp),
        np.clip(xs, 0, w - 1).astype(np.intp),
    ]
    vals = np.where(inside, vals, 0.0)
    cum = np.concatenate([np.zeros((len(lines), 1)), np.cumsum(vals, axis=1)], axis=1)
    return cum, p0 - half * d, d  # origin moved so that index = position


def _segment_mean(
    cum: FloatArray, row: NDArray[np.intp], ta: FloatArray, tb: FloatArray
) -> FloatArray:
    lo = np.minimum(ta, tb)
    hi = np.maximum(ta, tb)
    pad = 0.05 * (hi - lo)
    n = cum.shape[1] - 1
    a = np.clip(np.rint(lo + pad), 0, n).astype(np.intp)
    b = np.clip(np.rint(hi - pad), 0, n).astype(np.intp)
    return np.asarray((cum[row, b] - cum[row, a]) / np.maximum(b - a, 1), dtype=np.float64)


def assign_templates(
    quad: FloatArray, side_x: FloatArray, side_y: FloatArray, cfg: LocateConfig, width: int
) -> FloatArray:
    """Board homographies for image quadrilaterals x every template assignment.

    A quadrilateral bounded by template lines x = xa, xb and y = ya, yb; one
    4-point solve per quadrilateral, then each assignment is a product with a
    fixed affine map (45 solves per quad would dominate the search time).
    """
    if len(quad) == 0:
        return np.zeros((0, 3, 3))
    hq = square_homographies(quad)
    # all assignments at once (assignment-major order, as a loop would give)
    ux = side_x[None, :] / _ASSIGN_DX[:, None]
    uy = side_y[None, :] / _ASSIGN_DY[:, None]
    ratio = uy / np.maximum(ux, 1e-9)
    sel = (
        (ratio < cfg.max_aspect)
        & (ratio > 1.0 / cfg.max_aspect)
        & (5.0 * ux > cfg.min_board_frac * width)
        & (5.0 * ux < 1.6 * width)
    )
    ai, qi = np.nonzero(sel)
    if len(ai) == 0:
        return np.zeros((0, 3, 3))
    hs: FloatArray = np.matmul(hq[qi], _ASSIGN_MAPS[ai])
    return hs[np.all(np.isfinite(hs), axis=(1, 2))]


_ASSIGNMENTS = [
    (yp, xp)
    for yp in ((0.0, 2.0), (0.0, 1.0), (1.0, 2.0))
    for xp in itertools.combinations((0.0, 1.0, 2.0, 3.0, 4.0, 5.0), 2)
]
_ASSIGN_DX = np.array([xb - xa for _, (xa, xb) in _ASSIGNMENTS])
_ASSIGN_DY = np.array([yb - ya for (ya, yb), _ in _ASSIGNMENTS])
_ASSIGN_MAPS = np.array(  # template rectangle -> unit square, per assignment
    [
        [
            [1.0 / (xb - xa), 0.0, -xa / (xb - xa)],
            [0.0, 1.0 / (yb - ya), -ya / (yb - ya)],
            [0, 0, 1],
        ]
        for (ya, yb), (xa, xb) in _ASSIGNMENTS
    ]
)


@functools.lru_cache(maxsize=32)
def _pairs(n: int) -> NDArray[np.intp]:
    """Index pairs i < j of n items, in itertools.combinations order: (n(n-1)/2, 2)."""
    return np.array(list(itertools.combinations(range(n), 2)), np.intp).reshape(-1, 2)


def quad_hypotheses(
    fams: list[FloatArray],
    maps: NDArray[np.float32],
    cfg: LocateConfig,
) -> FloatArray:
    """Homographies from 2 long + 2 short lines and every template assignment.

    Line quadruples are first ranked by chalk support along the four sides of
    the quadrilateral they bound (a true pair of rows and columns is chalk all
    round); only the best quadruples get the 45 template assignments.
    """
    shape = maps.shape[1:]
    if len(fams) < 2 or cfg.max_quads <= 0:
        return np.zeros((0, 3, 3))
    height, width = int(shape[0]), int(shape[1])
    out: list[FloatArray] = []
    usable = [f for f in fams if len(f) >= 2]
    n_prof = max(cfg.max_long_lines, cfg.max_short_lines)
    # each family is long in some pairs and short in others: profile it once
    profs = [_line_profiles(maps, f[:n_prof]) for f in usable]
    for (fl, pl), (fs, ps) in itertools.permutations(zip(usable, profs, strict=True), 2):
        if angle_diff(fl[:1, 1], float(fs[0, 1]))[0] < np.deg2rad(25.0):
            continue
        long_l = fl[: cfg.max_long_lines]
        short_l = fs[: cfg.max_short_lines]
        if len(long_l) < 2 or len(short_l) < 2:
            continue
        hlong = _homog_lines(long_l)
        hshort = _homog_lines(short_l)
        pts = np.cross(hlong[:, None, :], hshort[None, :, :])  # (L, S, 3)
        w = pts[..., 2]
        valid = np.abs(w) > 1e-9
        inter = pts[..., :2] / np.where(valid, w, 1.0)[..., None]
        lp = _pairs(len(long_l))
        sp = _pairs(len(short_l))
        li, lj = lp[:, 0], lp[:, 1]
        sk, sm = sp[:, 0], sp[:, 1]
        # A quadrilateral is a long-line pair x a short-line pair; each of its
        # sides lies on one line between the crossings with a pair of the other
        # family, so every per-side quantity is a small (line, pair) table and
        # the (LP, SP) grid is built from row gathers of those tables.
        lo = np.array([-0.5 * width, -0.5 * height])
        hi = np.array([1.5 * width, 1.5 * height])
        pt_ok = valid & np.all((inter > lo) & (inter < hi), axis=-1)  # (L, S)
        ok_l = pt_ok[li] & pt_ok[lj]  # (LP, S)
        ok = ok_l[:, sk] & ok_l[:, sm]
        len_l = np.linalg.norm(inter[:, sm] - inter[:, sk], axis=-1)  # (L, SP)
        side_x = 0.5 * (len_l[li] + len_l[lj])
        len_s = np.linalg.norm(inter[li] - inter[lj], axis=-1)  # (LP, S)
        side_y = 0.5 * (len_s[:, sk] + len_s[:, sm])
        # only quadrilaterals that admit some template assignment: slivers
        # between the two edges of one stroke would otherwise rank first
        min_unit = 0.2 * cfg.min_board_frac * width
        ok &= (side_x > min_unit) & (side_y > min_unit / cfg.max_aspect)
        ok &= (side_x < 1.6 * width) & (side_y < 1.6 * width)
        ratio_q = side_y / np.maximum(side_x, 1e-9)
        ok &= (ratio_q > 1.0 / (5.0 * cfg.max_aspect)) & (ratio_q < 2.0 * cfg.max_aspect)
        flat = np.flatnonzero(ok)
        if len(flat) == 0:
            continue
        cl, p0l, dl = (a[: len(long_l)] for a in pl)
        cs, p0s, ds = (a[: len(short_l)] for a in ps)
        tl = np.einsum("lsk,lk->ls", inter - p0l[:, None, :], dl)  # position on long lines
        ts = np.einsum("lsk,sk->ls", inter - p0s[None, :, :], ds)  # position on short lines
        # chalk support of every side segment: (L, SP) on long lines, (S, LP) on short
        rows_l = np.repeat(np.arange(len(long_l)), len(sp))
        sup_l = _segment_mean(cl, rows_l, tl[:, sk].reshape(-1), tl[:, sm].reshape(-1))
        sup_l = sup_l.reshape(len(long_l), len(sp))
        rows_s = np.repeat(np.arange(len(short_l)), len(lp))
        sup_s = _segment_mean(cs, rows_s, ts[li].T.reshape(-1), ts[lj].T.reshape(-1))
        sup_s = sup_s.reshape(len(short_l), len(lp)).T  # (LP, S)
        s0, s1 = sup_l[li], sup_l[lj]
        s2, s3 = sup_s[:, sk], sup_s[:, sm]
        qgrid = (s0 + s1 + s2 + s3) * 0.25 + np.minimum(np.minimum(s0, s1), np.minimum(s2, s3))
        qscore = qgrid.reshape(-1)[flat]
        top = flat[np.argsort(-qscore)[: cfg.max_quads]]
        row, col = np.divmod(top, len(sp))
        ii, jj, kk, mm = li[row], lj[row], sk[col], sm[col]
        quad = np.stack([inter[ii, kk], inter[ii, mm], inter[jj, mm], inter[jj, kk]], axis=1)
        side_x, side_y = side_x.reshape(-1), side_y.reshape(-1)
        out.append(assign_templates(quad, side_x[top], side_y[top], cfg, width))
    if not out:
        return np.zeros((0, 3, 3))
    hs = np.concatenate(out, axis=0)
    return hs[np.all(np.isfinite(hs), axis=(1, 2))]


def square_homographies(quads: FloatArray) -> FloatArray:
    """Unit-square-to-image homographies for (K, 4, 2) quadrilaterals.

    Closed form (Heckbert) for corners (0,0), (1,0), (1,1), (0,1): thousands
    are needed per frame, where a general batched 8x8 solve costs more than
    the rest of the search step. NaN where degenerate.
    """
    x, y = quads[..., 0], quads[..., 1]
    sx = x[:, 0] - x[:, 1] + x[:, 2] - x[:, 3]
    sy = y[:, 0] - y[:, 1] + y[:, 2] - y[:, 3]
    dx1, dx2 = x[:, 1] - x[:, 2], x[:, 3] - x[:, 2]
    dy1, dy2 = y[:, 1] - y[:, 2], y[:, 3] - y[:, 2]
    den = dx1 * dy2 - dx2 * dy1
    bad = np.abs(den) < 1e-12
    den = np.where(bad, 1.0, den)
    g = (sx * dy2 - dx2 * sy) / den
    hh = (dx1 * sy - sx * dy1) / den
    out = np.empty((len(quads), 3, 3))
    out[:, 0, 0] = x[:, 1] - x[:, 0] + g * x[:, 1]
    out[:, 0, 1] = x[:, 3] - x[:, 0] + hh * x[:, 3]
    out[:, 0, 2] = x[:, 0]
    out[:, 1, 0] = y[:, 1] - y[:, 0] + g * y[:, 1]
    out[:, 1, 1] = y[:, 3] - y[:, 0] + hh * y[:, 3]
    out[:, 1, 2] = y[:, 0]
    out[:, 2, 0] = g
    out[:, 2, 1] = hh
    out[:, 2, 2] = 1.0
    out[bad] = np.nan
    return out


_BOARD_SCALE = np.diag([1.0 / 5.0, 1.0 / 2.0, 1.0])


def board_homographies(quads: FloatArray) -> FloatArray:
    """Board-to-image homographies for (K, 4, 2) SW, SE, NE, NW image corners
    (the greedy refinement solves 19 per round)."""
    out: FloatArray = square_homographies(quads) * np.diag(_BOARD_SCALE)[None, None, :]
    return out

"""Stage 6, scoring: sample the evidence along projected templates.

A hypothesis scores the chalk along its template minus the chalk half a
square away and past the board's ends (floor joints and stripes run on, a
chalk board stops). A sparse template prescreens the many raw hypotheses.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from vision.config import LocateConfig
from vision.geometry import (
    FloatArray,
    extension_points,
    offgrid_with_tangents,
    template_with_tangents,
)
from vision.locate.evidence import BINS

#: homogeneous points (3, P) and their tangents (2, P), or None to read the direction-free
#: channel
_Prepared = tuple[NDArray[np.float32], NDArray[np.float32] | None]


@functools.lru_cache(maxsize=8)
def _offgrid(step: float) -> tuple[FloatArray, FloatArray]:
    return offgrid_with_tangents(step)


@functools.lru_cache(maxsize=64)
def _extension(step: float, depth: float) -> tuple[FloatArray, FloatArray]:
    return extension_points(step, depth)


def _prepared(pts: FloatArray, tangents: FloatArray | None) -> _Prepared:
    """Homogeneous float32 points (3, P) and tangents (2, P) for _sample_batch."""
    ph = np.concatenate([pts, np.ones((len(pts), 1))], axis=1).T.astype(np.float32)
    return ph, None if tangents is None else np.ascontiguousarray(tangents.T, np.float32)


_CHUNK = 49152  # elements per sample batch: temporaries stay in the CPU cache (2x)

# +0.5 px folded into every homography: truncating a coordinate then rounds it
_HALF = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])


def sample(
    maps: NDArray[np.float32], hs: FloatArray, pts: FloatArray, tangents: FloatArray
) -> NDArray[np.float32]:
    """Evidence at pts projected by each homography (K, P), nearest pixel.

    Each point reads the channel matching the projected line's direction
    (from the homography's Jacobian). float32, int32 indices and one flat
    gather per cache-sized batch of hypotheses: this is the search's inner loop.
    """
    return _sample_prepared(maps, hs, _prepared(pts, tangents))


def _sample_prepared(
    maps: NDArray[np.float32],
    hs: FloatArray,
    prep: _Prepared,
    inside: NDArray[np.bool_] | None = None,
) -> NDArray[np.float32]:
    """``_sample_batch`` over cache-sized batches of hypotheses (``inside``: (K, P), set
    to which points fell in the map)."""
    per = max(1, _CHUNK // max(prep[0].shape[1], 1))
    if len(hs) <= per:
        return _sample_batch(maps, hs, prep, inside)
    return np.concatenate(
        [
            _sample_batch(
                maps, hs[s : s + per], prep, None if inside is None else inside[s : s + per]
            )
            for s in range(0, len(hs), per)
        ]
    )


def _sample_batch(
    maps: NDArray[np.float32],
    hs: FloatArray,
    prep: _Prepared,
    inside: NDArray[np.bool_] | None = None,
) -> NDArray[np.float32]:
    """One batch of ``sample`` (or of ``sample_free``, without tangents):
    coordinate-major (3, K, P) arrays so every elementwise pass runs on contiguous
    memory (strided views cost ~4x), and no bounds test: points off the map are
    clamped onto its zero frame (``evidence_maps``); a point behind the camera
    (w <= 0) lands far off."""
    _, h, wd = maps.shape
    ph, tan32 = prep
    hs32 = np.ascontiguousarray(np.matmul(_HALF, hs).transpose(1, 0, 2), np.float32)
    k = hs32.shape[1]
    x, y, w = (hs32.reshape(3 * k, 3) @ ph).reshape(3, k, -1)
    np.maximum(w, np.float32(1e-9), out=w)
    np.reciprocal(w, out=w)
    x *= w
    y *= w
    if tan32 is None:
        idx = np.full(x.shape, BINS * h * wd, np.int32)  # the direction-free channel
    else:
        dx, dy, dw = (hs32[:, :, :2].reshape(3 * k, 2) @ tan32).reshape(3, k, -1)
        # image direction of the template tangent (up to a positive factor 1/w)
        tmp = x * dw
        dx -= tmp
        np.multiply(y, dw, out=tmp)
        dy -= tmp
        idx = normal_channels(dx, dy)
        idx *= np.int32(h * wd)
    if inside is not None:  # (the frame itself is zero: a point on it reads nothing either)
        np.greater(x, 1.0, out=inside)
        inside &= x < wd - 1
        inside &= y > 1.0
        inside &= y < h - 1
    np.clip(x, 0, wd - 1, out=x)
    np.clip(y, 0, h - 1, out=y)
    row = y.astype(np.int32)
    row *= np.int32(wd)
    idx += row
    idx += x.astype(np.int32)
    vals: NDArray[np.float32] = np.take(maps.reshape(-1), idx)
    return vals


#: tangents of the edges between the first quadrant's direction bins (pi / BINS wide,
#: centred on multiples of pi / BINS)
_EDGES = tuple(
    np.float32(np.tan((2 * i - 1) * np.pi / (2 * BINS))) for i in range(1, BINS // 2 + 1)
)


def normal_channels(dx: NDArray[np.float32], dy: NDArray[np.float32]) -> NDArray[np.int32]:
    """Evidence channel of the normal of each direction (dx, dy): the direction's
    angle modulo pi rounded to a multiple of pi / BINS, plus a quarter turn.

    The same channels as rounding ``arctan2(dy, dx)``, from comparisons of |dy|
    with |dx| times the bins' edge tangents: three times faster, and this runs
    for every sampled point of the search. ``dx`` and ``dy`` are overwritten.
    """
    # (a far-off candidate's points give huge directions: a product that overflows to
    # an infinity keeps its sign and its order, so the channel is still right)
    with np.errstate(over="ignore"):
        turned = np.multiply(dx, dy) < 0  # second or fourth quadrant: the angle mirrored
        ax = np.abs(dx, out=dx)
        ay = np.abs(dy, out=dy)
        q = np.zeros(dx.shape, np.int8)
        edge = np.empty_like(ax)
        for tangent in _EDGES:
            np.multiply(ax, tangent, out=edge)
            np.add(q, np.greater(ay, edge), out=q, casting="unsafe")
    np.negative(q, out=q, where=turned)
    q += BINS // 2  # the normal: a quarter turn
    q &= BINS - 1  # BINS is a power of two
    return q.astype(np.int32)


@functools.lru_cache(maxsize=64)
def _score_template(step: float, depth: float) -> tuple[_Prepared, int, int]:
    """Template, off-grid and extension points in one prepared set, and the
    sizes of the first two (per-call overhead dominates the small batches of
    the greedy refinement, so they are sampled in one call and built once)."""
    parts = [template_with_tangents(step, depth), _offgrid(step), _extension(step, depth)]
    pts = np.concatenate([p[0] for p in parts], axis=0)
    tans = np.concatenate([p[1] for p in parts], axis=0)
    return _prepared(pts, tans), len(parts[0][0]), len(parts[1][0])


#: what a template point out of the frame counts for, as a share of the mean chalk of the
#: points in view: a board partly out of view should not lose to one squeezed into the
#: view, nor a fit hanging off the frame win on the few lines it covers
UNSEEN_CREDIT = 0.5


def scores(maps: NDArray[np.float32], hs: FloatArray, step: float, depth: float) -> FloatArray:
    """Template support minus support half a square away and past the ends.

    Each is a mean over the points in the frame, and the whole shrinks with the
    share of the template out of the frame (``UNSEEN_CREDIT``): counted as missing
    chalk, the part the camera does not see made a board cut by the frame lose to
    a board squeezed into the view.
    """
    prep, n_on, n_off = _score_template(round(step, 4), round(depth, 3))
    chunk = 2048
    res = np.empty(len(hs))
    for s in range(0, len(hs), chunk):
        part = hs[s : s + chunk]
        inside = np.empty((len(part), prep[0].shape[1]), bool)
        v = _sample_prepared(maps, part, prep, inside)
        val = np.zeros(len(part))
        for lo, hi, weight in (
            (0, n_on, 1.0),
            (n_on, n_on + n_off, -0.5),
            (n_on + n_off, None, -0.5),
        ):
            seen = inside[:, lo:hi].sum(axis=1)
            val += weight * v[:, lo:hi].sum(axis=1, dtype=np.float64) / np.maximum(seen, 1)
        view = inside[:, :n_on].mean(axis=1)
        res[s : s + chunk] = val * (view + UNSEEN_CREDIT * (1.0 - view))
    return res


def view_share(maps: NDArray[np.float32], hs: FloatArray, pts: FloatArray) -> FloatArray:
    """Share of ``pts`` that each homography projects into the map (K,): in view as
    ``scores`` counts it."""
    inside = np.empty((len(hs), len(pts)), bool)
    _sample_prepared(maps, hs, _prepared(pts, None), inside)
    return np.asarray(inside.mean(axis=1), np.float64)


def sample_free(maps: NDArray[np.float32], hs: FloatArray, pts: FloatArray) -> NDArray[np.float32]:
    """Direction-free evidence (the last channel) at pts projected by each homography
    (K, P), nearest pixel: ``sample`` without the per-point direction, a third of its cost."""
    return _sample_prepared(maps, hs, _prepared(pts, None))


def prescreen(maps: NDArray[np.float32], hs: FloatArray, cfg: LocateConfig) -> FloatArray:
    """The ``prescreen_keep`` hypotheses a sparse template supports best (all when fewer).

    A cheap first pass: the full template score costs too much for every raw
    hypothesis, and the sparse one ranks the promising few the same way. Before
    it the same points on the direction-free channel keep ``prescreen_free_keep``:
    the right board is never near the bottom of that ranking either.
    """
    if len(hs) <= cfg.prescreen_keep:
        return hs
    sparse = template_with_tangents(cfg.prescreen_step, cfg.arc_depth)
    if 0 < cfg.prescreen_free_keep < len(hs):
        free = sample_free(maps, hs, sparse[0][::2]).mean(axis=1)
        hs = hs[np.argsort(-free, kind="stable")[: cfg.prescreen_free_keep]]
    pre = sample(maps, hs, sparse[0], sparse[1]).mean(axis=1)
    return hs[np.argsort(-pre)[: cfg.prescreen_keep]]

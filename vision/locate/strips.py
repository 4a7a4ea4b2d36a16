"""Stage 5, strips: board hypotheses from dividers found between long-line pairs.

Short board lines are too short to win a global Hough vote against tile
joints or printed stripes, but inside the strip between the right pair of
long lines they are the strongest thing; the strip is warped to a canvas where
every divider slant is a sheared column sum.
"""

from __future__ import annotations

import functools
import itertools
import math

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import LocateConfig
from vision.geometry import FloatArray, project
from vision.locate.evidence import BINS
from vision.locate.lines import angle_diff
from vision.locate.quads import assign_templates


def _clip_span(
    line: FloatArray, w: int, h: int
) -> tuple[tuple[float, float], tuple[float, float], float, float] | None:
    """Point, direction and parameter range of a (rho, theta) line inside the image.

    Plain floats: this runs for every long-line pair, where numpy's per-call
    overhead on 2-vectors cost more than the arithmetic.
    """
    rho, theta = float(line[0]), float(line[1])
    c, s = math.cos(theta), math.sin(theta)
    p0 = (rho * c, rho * s)
    d = (-s, c)
    lo, hi = -math.inf, math.inf
    for k, size in ((0, w), (1, h)):
        if abs(d[k]) < 1e-9:
            if not 0.0 <= p0[k] <= size:
                return None
            continue
        ta, tb = (0.0 - p0[k]) / d[k], (size - p0[k]) / d[k]
        lo, hi = max(lo, min(ta, tb)), min(hi, max(ta, tb))
    if hi - lo < 10.0:
        return None
    return p0, d, lo, hi


@functools.lru_cache(maxsize=8)
def _shear_table(
    rows: int, max_shear_frac: float, step: float
) -> tuple[NDArray[np.intp], FloatArray, NDArray[np.intp]]:
    """Rows used, divider slants and per-row column shifts (D, R) of a strip canvas."""
    rr = np.arange(int(0.1 * rows), int(np.ceil(0.9 * rows)))
    max_shear = max_shear_frac * rows / 2.0
    shears = np.arange(-max_shear, max_shear + 1e-9, step)
    offs = np.rint(shears[:, None] * (rr[None, :] / rows)).astype(np.intp)
    return rr, shears, offs


def _strip_canvas(
    la: FloatArray, lb: FloatArray, w: int, h: int, cfg: LocateConfig
) -> tuple[FloatArray, int, int] | None:
    """Canvas->image homography, canvas width and long-line channel of the strip
    between two lines, or None when the lines do not bound a usable strip."""
    sa = _clip_span(la, w, h)
    sb = _clip_span(lb, w, h)
    if sa is None or sb is None:
        return None
    (pax, pay), (dax, day), lo, hi = sa
    (pbx, pby), (dbx, dby), lob, hib = sb
    if dax * dbx + day * dby < 0:
        dbx, dby = -dbx, -dby
        lob, hib = -hib, -lob
    # extend line a's range by the image part of line b (perpendicular feet)
    for t in (lob, hib):
        ta = (pbx + t * dbx - pax) * dax + (pby + t * dby - pay) * day
        lo, hi = min(lo, ta), max(hi, ta)
    a0 = (pax + lo * dax, pay + lo * day)
    a1 = (pax + hi * dax, pay + hi * day)
    t0 = (a0[0] - pbx) * dbx + (a0[1] - pby) * dby
    t1 = (a1[0] - pbx) * dbx + (a1[1] - pby) * dby
    b0 = (pbx + t0 * dbx, pby + t0 * dby)
    b1 = (pbx + t1 * dbx, pby + t1 * dby)
    sep = 0.5 * (math.dist(b0, a0) + math.dist(b1, a1))
    if sep < 0.2 * cfg.min_board_frac * w:
        return None
    width = min(max(round((hi - lo) / 2.0), 16), 1024)  # 2 work px per canvas column
    rows = cfg.strip_rows
    src = np.array([[0.0, 0.0], [width, 0.0], [width, rows], [0.0, rows]], np.float32)
    dst = np.array([a0, a1, b1, b0], np.float32)
    # one OpenCV 4-point solve: a batched solver's overhead would dominate here
    hcan: FloatArray = np.asarray(cv2.getPerspectiveTransform(src, dst), np.float64)
    det = float(np.linalg.det(hcan))
    if not np.isfinite(det) or abs(det) < 1e-12:
        return None
    k_long = round((float(la[1]) % np.pi) / (np.pi / BINS)) % BINS
    return hcan, width, k_long


#: cv2.remap refuses maps this wide or wider (SHRT_MAX); many long strips side by side
#: reach it on a tall frame (three boards stacked in 800x1800 did).
_REMAP_MAX_COLS = 32_000


def _remap(
    src: NDArray[np.float32], mx: NDArray[np.float32], my: NDArray[np.float32]
) -> NDArray[np.float32]:
    """Bilinear remap with zero outside, in column blocks narrow enough for OpenCV."""
    inter, border = cv2.INTER_LINEAR, cv2.BORDER_CONSTANT
    blocks = [
        np.asarray(
            cv2.remap(
                src,
                mx[:, c : c + _REMAP_MAX_COLS],
                my[:, c : c + _REMAP_MAX_COLS],
                inter,
                borderMode=border,
            ),
            np.float32,
        )
        for c in range(0, mx.shape[1], _REMAP_MAX_COLS)
    ]
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=1)


def strip_batch(
    maps: NDArray[np.float32], pairs: list[tuple[FloatArray, FloatArray]], cfg: LocateConfig
) -> list[tuple[float, FloatArray, FloatArray]]:
    """Chalk segments crossing the strips between pairs of long-line candidates.

    Each strip is mapped to a canvas whose top and bottom rows are the two
    lines; a divider is then a straight segment from (u, 0) to (u + shear, H)
    and all of them are scored at once by sheared column means. Short board
    lines are too short to win a global Hough vote against tile joints or
    printed stripes, but inside the right strip they are the strongest thing.

    All strips share one canvas, side by side with zero gaps wider than the
    largest shear, so one remap per channel and one sheared sum serve every
    pair (per-strip calls cost several times more in overhead).
    Returns (strip score, canvas->image homography, dividers as (u_bottom,
    u_top, support) rows) for the strips with at least two dividers.
    """
    _, h, w = maps.shape
    rows = cfg.strip_rows
    rr, shears, offs = _shear_table(rows, cfg.strip_max_shear, cfg.strip_shear_step)
    gap = max(int(np.abs(offs).max()) if offs.size else 0, 2)
    canv = [c for c in (_strip_canvas(la, lb, w, h, cfg) for la, lb in pairs) if c is not None]
    if not canv:
        return []
    # strips of one long-line channel side by side: one remap of that channel
    layout = sorted(range(len(canv)), key=lambda i: canv[i][2])
    starts = [0] * len(canv)
    spans: dict[int, list[int]] = {}  # channel -> [first column, end column]
    col = gap
    for i in layout:
        starts[i] = col
        span = spans.setdefault(canv[i][2], [col, col])
        col += canv[i][1]
        span[1] = col
        col += gap
    total_w = col
    # source coordinates of every canvas pixel (gaps far outside: zero)
    mx = np.full((rows, total_w), -1e4, np.float32)
    my = np.full((rows, total_w), -1e4, np.float32)
    vr = np.arange(rows, dtype=np.float64)[:, None]
    for (hcan, width, _), st in zip(canv, starts, strict=True):
        u = np.arange(width, dtype=np.float64)[None, :]
        den = hcan[2, 0] * u + hcan[2, 1] * vr + hcan[2, 2]
        mx[:, st : st + width] = (hcan[0, 0] * u + hcan[0, 1] * vr + hcan[0, 2]) / den
        my[:, st : st + width] = (hcan[1, 0] * u + hcan[1, 1] * vr + hcan[1, 2]) / den
    ev = _remap(maps[BINS], mx, my)
    for k, (c0, c1) in spans.items():
        ev[:, c0:c1] -= _remap(maps[k], mx[:, c0:c1], my[:, c0:c1])
    np.maximum(ev, 0.0, out=ev)
    spans_all = [(starts[i], canv[i][1]) for i in range(len(canv))]
    keep = list(range(len(canv)))
    if 0 < cfg.strip_prescreen < len(canv):
        # every other slant first: ranks the strips nearly as the full set does
        coarse = _sheared_dividers(ev, spans_all, rr, shears[::2], offs[::2], cfg)
        ranked = sorted((-c[0], i) for i, c in enumerate(coarse) if c is not None)
        keep = sorted(i for _, i in ranked[: cfg.strip_prescreen])
    # the kept strips on a canvas of their own, same gaps: their sums are unchanged
    cols: list[NDArray[np.float32]] = []
    sub_spans: list[tuple[int, int]] = []
    col = gap
    for i in keep:
        st, width = spans_all[i]
        cols.append(ev[:, st - gap : st + width])
        sub_spans.append((col, width))
        col += width + gap
    if not cols:
        return []
    sub = np.concatenate([*cols, np.zeros((rows, gap), np.float32)], axis=1)
    fine = _sheared_dividers(sub, sub_spans, rr, shears, offs, cfg)
    return [
        (got[0], canv[i][0], got[1]) for i, got in zip(keep, fine, strict=True) if got is not None
    ]


def _sheared_dividers(
    ev: NDArray[np.float32],
    spans: list[tuple[int, int]],
    rr: NDArray[np.intp],
    shears: FloatArray,
    offs: NDArray[np.intp],
    cfg: LocateConfig,
) -> list[tuple[float, FloatArray] | None]:
    """Best dividers of every strip (start column, width) of a shared canvas whose
    strips are separated by zero gaps at least as wide as the largest shift:
    (strip score, dividers as (u_bottom, u_top, support) rows) or None."""
    rows, total_w = ev.shape
    gap = max(int(np.abs(offs).max()) if offs.size else 0, 2)
    in_strip = np.zeros(total_w, bool)
    for st, width in spans:
        in_strip[st : st + width] = True
    # every slant is a whole-row shift per canvas row: add contiguous row windows
    evp = np.zeros((rows, total_w + 2 * gap), np.float32)
    evp[:, gap:-gap] = ev
    stride = evp.strides
    win = np.lib.stride_tricks.as_strided(
        evp, (rows, 2 * gap + 1, total_w), (stride[0], stride[1], stride[1]), writeable=False
    )  # (rows, 2G+1, U): row r shifted by s - G is win[r, s]
    total = np.zeros((len(shears), total_w), np.float32)
    for n, r in enumerate(rr):
        total += win[r, offs[:, n] + gap]
    # slant per column from a (U, D) copy: argmax along a contiguous axis
    arg = np.ascontiguousarray(total.T).argmax(axis=1)
    best = total[arg, np.arange(total_w)] / np.float32(len(rr))
    best[~in_strip] = -1.0  # gaps: no neighbour to compare with, as past a strip's end
    shear_at = shears[arg]
    pad = np.full(total_w + 4, -1.0, np.float32)
    pad[2:-2] = best
    peak = best >= cfg.strip_min_support
    for k in (-2, -1, 1, 2):
        peak &= best >= pad[2 + k : 2 + k + total_w]
    out: list[tuple[float, FloatArray] | None] = []
    for st, width in spans:
        cand = np.nonzero(peak[st : st + width])[0]
        cand = cand[np.argsort(-best[st + cand])]
        found: list[tuple[float, float, float]] = []
        for ui in cand[: 4 * cfg.strip_dividers].tolist():
            ub, ut = float(ui), float(ui + shear_at[st + ui])
            if any(abs(ub - fb) < 3.0 or abs(ut - ft) < 3.0 for fb, ft, _ in found):
                continue
            found.append((ub, ut, float(best[st + ui])))
            if len(found) >= cfg.strip_dividers:
                break
        if len(found) < 2:
            out.append(None)
            continue
        divs = np.array(found)
        top = np.sort(divs[:, 2])[::-1][:6]
        out.append((float(top.sum()), divs))
    return out


def strip_hypotheses(
    fams: list[FloatArray], maps: NDArray[np.float32], cfg: LocateConfig
) -> FloatArray:
    """Homographies from the best strips: long-line pair x divider pair x assignment."""
    w = maps.shape[2]
    pairs: list[tuple[FloatArray, FloatArray]] = []
    for fam in fams:
        lines = fam[: cfg.strip_lines]
        for i, j in itertools.combinations(range(len(lines)), 2):
            if angle_diff(lines[i : i + 1, 1], float(lines[j, 1]))[0] > np.deg2rad(20.0):
                continue
            pairs.append((lines[i], lines[j]))
    strips = strip_batch(maps, pairs, cfg)
    strips.sort(key=lambda s: -s[0])
    rows = float(cfg.strip_rows)
    out: list[FloatArray] = []
    for _, hcan, divs in strips[: cfg.max_strips]:
        n = len(divs)
        p, q = np.array(list(itertools.combinations(range(n), 2))).T
        # order each pair west->east along the strip
        swap = divs[p, 0] > divs[q, 0]
        p, q = np.where(swap, q, p), np.where(swap, p, q)
        can = np.stack(
            [
                np.stack([divs[p, 0], np.zeros(len(p))], 1),
                np.stack([divs[q, 0], np.zeros(len(p))], 1),
                np.stack([divs[q, 1], np.full(len(p), rows)], 1),
                np.stack([divs[p, 1], np.full(len(p), rows)], 1),
            ],
            axis=1,
        )
        quad = project(hcan, can.reshape(-1, 2)).reshape(-1, 4, 2)
        side_x = 0.5 * (
            np.linalg.norm(quad[:, 1] - quad[:, 0], axis=1)
            + np.linalg.norm(quad[:, 2] - quad[:, 3], axis=1)
        )
        side_y = 0.5 * (
            np.linalg.norm(quad[:, 3] - quad[:, 0], axis=1)
            + np.linalg.norm(quad[:, 2] - quad[:, 1], axis=1)
        )
        out.append(assign_templates(quad, side_x, side_y, cfg, w))
    if not out:
        return np.zeros((0, 3, 3))
    return np.concatenate(out, axis=0)

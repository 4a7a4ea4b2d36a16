"""The whole search in one frame: every stage, per ridge polarity, best fit wins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import Finder, LocateConfig
from vision.errors import BoardNotFoundError
from vision.geometry import (
    BOARD_CORNERS,
    FloatArray,
    canonical_corners,
    project,
    shape_error,
    side_ratio,
    template_with_tangents,
)
from vision.locate.evidence import direction_weights, evidence_maps, saturated
from vision.locate.learned import learned_ridges, line_probability
from vision.locate.lines import hough_families
from vision.locate.outline import Outline, outline_from_corners
from vision.locate.quads import board_homographies, quad_hypotheses
from vision.locate.refine import refine_corners
from vision.locate.ridges import downscale, ridge_maps
from vision.locate.scoring import prescreen, scores, view_share
from vision.locate.sides import outline_support, refine_sides
from vision.locate.strips import strip_hypotheses


def _distinct(hs: FloatArray, sc: FloatArray, cfg: LocateConfig) -> list[FloatArray]:
    """Corners of the ``refine_candidates`` best hypotheses that are not near-duplicates."""
    picked: list[FloatArray] = []
    for idx in np.argsort(-sc)[: cfg.refine_candidates * 20]:
        c = canonical_corners(project(hs[idx], BOARD_CORNERS))
        if any(np.max(np.linalg.norm(c - p, axis=1)) < 6.0 for p in picked):
            continue
        picked.append(c)
        if len(picked) >= cfg.refine_candidates:
            break
    return picked


def _relabellings(lines: int) -> list[tuple[float, float]]:
    """(a, b) of every map u -> a u + b, a >= 1, that takes two of the template's
    lines 0..lines onto two others, the identity left out: a board that runs on
    out of view is larger than the fit squeezed into the view, or shifted."""
    out = set()
    for p in range(lines + 1):
        for r in range(p + 1, lines + 1):
            for q in range(lines + 1):
                for t in range(q + 1, lines + 1):
                    a = (r - p) / (t - q)
                    if a >= 1.0:
                        out.add((round(a, 6), round(p - a * q, 6)))
    out.discard((1.0, 0.0))
    return sorted(out)


def _relabel_matrices() -> FloatArray:
    """(K, 3, 3) board-to-board maps: the columns relabelled, or the rows."""
    mats = [[[a, 0.0, b], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] for a, b in _relabellings(5)]
    mats += [[[1.0, 0.0, 0.0], [0.0, a, b], [0.0, 0.0, 1.0]] for a, b in _relabellings(2)]
    return np.array(mats)


_RELABEL: Final = _relabel_matrices()


def _relabelled(
    maps: NDArray[np.float32], picked: list[FloatArray], top: float, cfg: LocateConfig
) -> list[FloatArray]:
    """Larger or shifted boards running out of the view that the best fits may be
    the visible part of.

    The hypotheses come from lines in view, so a board cut by the frame edge is
    fitted squeezed into the view, its last visible divider taken for its end.
    Each pick is relabelled, its dividers (or rows) read as other lines of a
    larger or shifted board; the ``cfg.relabelled`` best of those with a share of
    their template in view within ``relabel_view``, scoring at least ``top`` (the
    best pick's score) less ``relabel_margin``, join the refinement.
    """
    if not picked or cfg.relabelled <= 0:
        return []
    hv = (board_homographies(np.stack(picked))[:, None] @ _RELABEL[None]).reshape(-1, 3, 3)
    hv = hv[np.all(np.isfinite(hv), axis=(1, 2))]
    seen = view_share(maps, hv, template_with_tangents(0.5, cfg.arc_depth)[0])
    least, most = cfg.relabel_view
    hv = hv[(seen >= least) & (seen < most)]
    if len(hv) == 0:
        return []
    sc = scores(maps, hv, 0.25, cfg.arc_depth)
    order = [i for i in np.argsort(-sc)[: cfg.relabelled] if sc[i] >= top - cfg.relabel_margin]
    return [canonical_corners(project(hv[i], BOARD_CORNERS)) for i in order]


def _fit_polarity(
    ridge: NDArray[np.float32],
    normal: NDArray[np.float32],
    cfg: LocateConfig,
    rng: np.random.Generator,
    image_bgr: NDArray[np.uint8],
    scale: float,
) -> tuple[float, FloatArray, float] | None:
    """Best refined fit (score, work-scale corners, arc depth) on one ridge map.

    The best few hypotheses get their sides refined at full resolution and
    the arc depth chosen; the template score then picks among them. None when
    there are no hypotheses, or every candidate is a shape no board takes.
    Hypotheses from the global Hough lines are tried first; the strips' (short
    dividers between long-line pairs) join them unless that fit already scores
    ``strips_below`` or more.
    """
    sat = saturated(ridge)
    weights = direction_weights(normal)
    sat_coarse = evidence_maps(sat, normal, 5, weights)
    fams = hough_families(ridge, normal, cfg)
    hs = quad_hypotheses(fams, sat_coarse, cfg)
    blurred = np.asarray(cv2.GaussianBlur(sat, (0, 0), 1.0), dtype=np.float32)
    sat_fine = evidence_maps(blurred, normal, 3, weights)
    fit = _Fit(sat_coarse, sat_fine, cfg, rng, image_bgr, scale)
    best = None
    if cfg.strips_below < 1.0 or cfg.max_strips <= 0:
        best = fit(hs)
        if cfg.max_strips <= 0 or (best is not None and best[0] >= cfg.strips_below):
            return best
    strips = strip_hypotheses(fams, sat_coarse, cfg)
    if len(strips) == 0 and best is not None:
        return best  # the same hypotheses: the same fit
    both = fit(np.concatenate([hs, strips], axis=0))
    if best is None or (both is not None and both[0] >= best[0]):
        return both
    return best


@dataclass(frozen=True)
class _Fit:
    """Prescreen, score, refine and side-fit one set of hypotheses on one frame's maps."""

    sat_coarse: NDArray[np.float32]
    sat_fine: NDArray[np.float32]
    cfg: LocateConfig
    rng: np.random.Generator
    image_bgr: NDArray[np.uint8]
    scale: float

    def plausible(self, corners: FloatArray) -> bool:
        # a sliver whose opposite sides differ past any perspective, or a rectangle no
        # camera sees a 5 x 2 board as, is no board however much joint or mortar it
        # covers: the next candidate may be the board
        height, width = self.image_bgr.shape[:2]
        c = canonical_corners(corners)
        return (
            side_ratio(c) <= self.cfg.max_side_ratio
            and shape_error(c / self.scale, width, height) <= self.cfg.max_shape_error
        )

    def __call__(self, hs: FloatArray) -> tuple[float, FloatArray, float] | None:
        cfg, sat_fine, scale = self.cfg, self.sat_fine, self.scale
        if len(hs) == 0:
            return None
        hs = prescreen(self.sat_coarse, hs, cfg)
        sc = scores(self.sat_coarse, hs, 0.25, cfg.arc_depth)
        sc = sc + self.rng.uniform(0.0, 1e-9, size=len(sc))
        picked = _distinct(hs, sc, cfg)
        picked += _relabelled(self.sat_coarse, picked, float(sc.max()), cfg)
        best: tuple[float, FloatArray, float] | None = None
        # a few greedy rounds for every candidate, then more for the leader: the
        # template score after refinement ranks candidates and is the quality
        starts = [(c, cfg.arc_depth) for c in picked]
        for rc, depth, s in refine_corners(sat_fine, starts, 2.0, cfg.quick_rounds):
            if (best is None or s > best[0]) and self.plausible(rc):
                best = (s, rc, depth)
        if best is not None and cfg.quick_rounds < cfg.refine_rounds:
            rc, depth, s = refine_corners(sat_fine, [(best[1], best[2])], 1.0, cfg.refine_rounds)[0]
            best = (s, rc, depth) if s >= best[0] and self.plausible(rc) else best
        if best is not None and cfg.side_passes:
            quality, c, depth = best
            sides = refine_sides(self.image_bgr, c / scale, cfg.side_passes) * scale
            # a side snapped to a joint or shadow loses chalk support along the
            # outline: keep the template fit then (the whole-template score would
            # also penalise the true, unevenly divided board)
            least = outline_support(sat_fine, c) - cfg.side_tolerance
            if outline_support(sat_fine, sides) >= least and self.plausible(sides):
                best = (quality, sides, depth)
        return best


def locate_board(
    image_bgr: NDArray[np.uint8],
    cfg: LocateConfig | None = None,
    rng: np.random.Generator | None = None,
) -> Outline:
    """Find the board in one frame or raise BoardNotFoundError.

    ``rng`` is accepted for tie-breaking between equal hypotheses so that the
    search stays deterministic for a given seed.
    """
    cfg = cfg or LocateConfig()
    if rng is None:
        rng = np.random.default_rng(cfg.seed)
    if image_bgr is None or image_bgr.ndim != 3 or image_bgr.size == 0:
        raise BoardNotFoundError("empty or non-colour image")
    work, scale = downscale(image_bgr, cfg.work_width)
    best: tuple[float, FloatArray, float] | None = None
    if cfg.finder is Finder.LEARNED:
        prob = line_probability(work, cfg.line_model)
        best = _fit_polarity(*learned_ridges(prob, cfg.ridge_sigmas), cfg, rng, image_bgr, scale)
    else:
        pols = tuple(int(p) for p in cfg.polarities)
        maps = ridge_maps(work, cfg.ridge_sigmas, pols, cfg.edge_suppress)
        for polarity in pols:
            found = _fit_polarity(*maps[polarity], cfg, rng, image_bgr, scale)
            if found is not None and (best is None or found[0] > best[0]):
                best = found
            if best is not None and best[0] >= cfg.accept_quality:
                break  # good enough: skip the other polarities (latency)
    if best is None:
        # (no lines in two directions, or only fits no perspective could give a board)
        raise BoardNotFoundError("no chalk outline shaped like a board")
    quality, corners_w, depth = best
    corners = canonical_corners(corners_w / scale)
    floor = cfg.learned_min_quality if cfg.finder is Finder.LEARNED else cfg.min_quality
    if quality < floor:
        raise BoardNotFoundError(f"chalk template fit too weak (quality {quality:.2f})")
    return outline_from_corners(corners, depth, quality)

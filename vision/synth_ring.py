"""Deterministic scenes of a three- or four-seat chalk ring board, with truth.

Built on :mod:`vision.synth`'s ground, pebble and conditions so the counter
sees the pebbles it was trained on; only the board (a ring of 6N squares,
:mod:`engine.ring` geometry) and the camera framing are new. As in
``vision.synth`` a scene is a pure function of its seeds: the camera, ground,
chalk and light depend only on ``scene_seed``, a square's pebbles only on
(``seed``, square, count), so a game rendered position by position keeps every
unchanged square pixel for pixel, as a fixed camera does.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.ring import SIDE, ring
from vision.geometry import FloatArray, project
from vision.ring import INNER, square_side
from vision.synth import (
    CHALKS,
    PALETTES,
    SceneConditions,
    _draw_pebble,
    _ground,
    _smooth_noise,
    random_conditions,
)

_PPU = 96  # plane pixels per square side (as vision.synth)
_PAD = 2.5  # plane margin around the board, square sides
_METRES = 0.16  # one square side on the ground


def _to_squares(players: int, pts: FloatArray) -> FloatArray:
    """Ring units (circumradius 1) -> square units (one square side = 1)."""
    return np.asarray(pts, dtype=np.float64) / square_side(players)


def _plane_map(players: int) -> tuple[FloatArray, tuple[int, int]]:
    """Square units -> plane pixels, and the plane's (height, width)."""
    r = 1.0 / square_side(players) + _PAD
    size = round(2 * r * _PPU)
    a = np.array([[_PPU, 0.0, r * _PPU], [0.0, -_PPU, r * _PPU], [0.0, 0.0, 1.0]])
    return a, (size, size)


def _chalk(
    rng: np.random.Generator,
    cond: SceneConditions,
    players: int,
    inner: float,
    a: FloatArray,
    shape: tuple[int, int],
) -> NDArray[np.float32]:
    """Alpha mask of the hand-drawn ring: outer and inner outlines, the dividers."""
    r = ring(players)
    outer = _to_squares(players, np.array(r.corners()))
    strokes: list[FloatArray] = []
    for s in range(players):
        p0, p1 = outer[s], outer[(s + 1) % players]
        t = np.linspace(0.0, 1.0, 61)[:, None]
        for scale in (1.0, inner):
            strokes.append(scale * (p0 + (p1 - p0) * t))
        for k in range(SIDE):
            q = p0 + (p1 - p0) * ((k + 0.5) / SIDE)
            u = np.linspace(inner, 1.0, 15)[:, None]
            strokes.append(q * u)
    alpha = np.zeros(shape, np.float32)
    for stroke in strokes:
        d = np.gradient(stroke, axis=0)
        n = np.stack([-d[:, 1], d[:, 0]], 1)
        n /= np.linalg.norm(n, axis=1, keepdims=True) + 1e-9
        u = np.linspace(0, 1, len(stroke))
        wob = np.zeros(len(stroke))
        for k in range(3):
            wob += rng.uniform(-1, 1) * np.sin(2 * np.pi * (k + 1) * u + rng.uniform(0, 6.3))
        wob *= cond.wobble
        pp = (stroke + n * wob[:, None]) @ a[:2, :2].T + a[:2, 2]
        for i in range(len(pp) - 1):
            wpx = max(1, round(cond.line_width * _PPU * rng.uniform(0.8, 1.2)))
            p0 = (round(pp[i, 0]), round(pp[i, 1]))
            p1 = (round(pp[i + 1, 0]), round(pp[i + 1, 1]))
            cv2.line(alpha, p0, p1, float(rng.uniform(0.75, 1.0)), wpx, cv2.LINE_AA)
    soft = np.asarray(cv2.GaussianBlur(alpha, (0, 0), 1.2), dtype=np.float32)
    grain = 1.0 - 0.35 * rng.random(shape).astype(np.float32)
    return np.asarray(np.clip(soft * grain * cond.chalk_opacity, 0, 1), dtype=np.float32)


def _inset_map(poly: FloatArray) -> tuple[FloatArray, NDArray[np.float32], float]:
    """Distance inside ``poly`` (square units) on a fine grid: (origin, map, step)."""
    step = 0.02
    lo = poly.min(axis=0) - 0.05
    hi = poly.max(axis=0) + 0.05
    w, h = (np.ceil((hi - lo) / step)).astype(int) + 1
    mask = np.zeros((h, w), np.uint8)
    pts = np.rint((poly - lo) / step * 16).astype(np.int32)
    cv2.fillPoly(mask, [pts], 1, shift=4)
    dist = cv2.distanceTransform(mask, cv2.DIST_L2, 5) * step
    return lo, dist, step


def _scatter(
    rng: np.random.Generator, poly: FloatArray, n: int, size: float, keep_out: float = 0.0
) -> tuple[FloatArray, FloatArray]:
    """Pebble centres in a (possibly non-convex) square, clustered like a dropped handful.

    Returns the centres and the square's deepest point (where a big stone lies).
    Centres stay ``0.4 * size`` inside the square, and ``keep_out`` from that point.
    """
    lo, dist, step = _inset_map(poly)
    y, x = np.unravel_index(int(np.argmax(dist)), dist.shape)
    deep = lo + np.array([x, y]) * step
    spread = 0.1 + 0.04 * np.sqrt(n)
    out: list[FloatArray] = []
    margin = 0.4 * size
    tries = 0
    while len(out) < n and tries < 400 * (n + 1):
        tries += 1
        p = deep + rng.normal(0, spread, 2)
        i, j = np.rint((p - lo) / step).astype(int)
        if not (0 <= j < dist.shape[0] and 0 <= i < dist.shape[1]):
            continue
        if dist[j, i] > margin and np.linalg.norm(p - deep) >= keep_out:
            out.append(p)
    if len(out) < n:  # bounded fallback: anywhere inside
        ys, xs = np.nonzero(dist > margin * 0.5)
        picks = rng.integers(0, len(xs), n - len(out))
        out.extend(lo + np.array([xs[k], ys[k]]) * step for k in picks)
    return np.array(out).reshape(-1, 2), deep


def _camera(cond: SceneConditions, size: tuple[int, int], outline: FloatArray) -> FloatArray:
    """Square units -> image pixels for the tilted, yawed, rolled camera."""
    w, h = size
    yaw, tilt, roll = np.deg2rad([cond.yaw_deg, cond.tilt_deg, cond.roll_deg])
    rz = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    r0 = np.diag([1.0, -1.0, -1.0])
    rx = np.array([[1, 0, 0], [0, np.cos(tilt), -np.sin(tilt)], [0, np.sin(tilt), np.cos(tilt)]])
    rr = np.array([[np.cos(roll), -np.sin(roll), 0], [np.sin(roll), np.cos(roll), 0], [0, 0, 1]])
    r = rr @ rx @ r0 @ rz
    to_m = np.diag([_METRES, _METRES, 1.0])
    ext = np.stack([r[:, 0], r[:, 1], np.array([0, 0, 2.0])], axis=1)
    h1 = ext @ to_m
    p = project(h1, outline)
    span = max(float(np.ptp(p[:, 0])) / w, float(np.ptp(p[:, 1])) / h)
    f = cond.fill / max(span, 1e-9)
    cx = w / 2 - f * float(p[:, 0].mean()) + cond.offset[0] * w
    cy = h / 2 - f * float(p[:, 1].mean()) + cond.offset[1] * h
    k = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]])
    return np.asarray(k @ h1, dtype=np.float64)


def ring_conditions(rng: np.random.Generator) -> SceneConditions:
    """``vision.synth``'s conditions, framed for a ring: the whole board in view,
    a camera above the middle (a fixed camera over a board drawn for it)."""
    cond = random_conditions(rng)
    return replace(
        cond,
        tilt_deg=float(rng.uniform(0.0, 20.0)),
        fill=float(rng.uniform(0.75, 0.9)),
        shadow=False,
        hand=False,
    )


def render_ring(
    counts: list[int] | tuple[int, ...],
    big: list[int] | tuple[int, ...],
    seed: int,
    *,
    scene_seed: int | None = None,
    size: tuple[int, int] = (1280, 960),
    inner: float | None = None,
    **conditions: Any,
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """Render one frame of a ring board and its truth.

    ``counts``: small pebbles per square (18 or 24: the seat count follows);
    ``big``: the big stone on each mandarin square (one per seat); ``seed``:
    the pebble arrangement; ``scene_seed`` (default ``seed``): camera, ground,
    chalk and light; ``inner``: the ring's inner outline share (default
    :data:`vision.ring.INNER`); ``conditions``: SceneConditions overrides.
    The truth's ``corners`` are the board's N corners in the image, in the
    order :func:`vision.ring.ring_outline` takes them; ``inner_corners`` those
    of the inner outline.
    """
    players, rest = divmod(len(counts), SIDE)
    if rest or players not in (3, 4) or any(c < 0 for c in counts):
        raise ValueError("counts must be 18 or 24 non-negative integers")
    if len(big) != players:
        raise ValueError(f"big must have one entry per mandarin square ({players})")
    scene_seed = seed if scene_seed is None else scene_seed
    srng = np.random.default_rng([scene_seed, 11])
    unknown = set(conditions) - set(SceneConditions.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown scene condition(s): {', '.join(sorted(unknown))}")
    cond = replace(ring_conditions(srng), **conditions)
    inner = INNER[players] if inner is None else inner
    r = ring(players)
    a, shape = _plane_map(players)
    plane = _ground(np.random.default_rng([scene_seed, 2]), cond.ground, shape)
    alpha = _chalk(np.random.default_rng([scene_seed, 3]), cond, players, inner, a, shape)
    chalk = np.array(CHALKS[cond.chalk], np.float32)
    plane = plane * (1 - alpha[..., None]) + chalk[None, None, :] * alpha[..., None]
    la = np.deg2rad(cond.light_deg)
    light = np.array([np.cos(la), np.sin(la)])
    polys = [_to_squares(players, np.array(p)) for p in r.polygons(inner)]
    palette = PALETTES[cond.palette]
    for sq, poly in enumerate(polys):
        prng = np.random.default_rng([seed, 7, sq, int(counts[sq])])
        stone = sq % SIDE == 0 and bool(big[sq // SIDE])
        keep_out = 0.5 * (cond.big_size + cond.pebble_size) if stone else 0.0
        cents, deep = _scatter(prng, poly, int(counts[sq]), cond.pebble_size, keep_out)
        if stone:
            cp = deep @ a[:2, :2].T + a[:2, 2]
            _draw_pebble(plane, prng, cp, cond.big_size * _PPU, (120, 125, 128), light)
        for c in cents:
            cp = c @ a[:2, :2].T + a[:2, 2]
            col = palette[int(prng.integers(0, len(palette)))]
            diam = cond.pebble_size * _PPU * prng.uniform(0.85, 1.15)
            _draw_pebble(plane, prng, cp, diam, col, light)
    w, h = size
    corners_sq = _to_squares(players, np.array(r.corners()))
    cam = _camera(cond, size, corners_sq)
    m = cam @ np.linalg.inv(a)
    img = cv2.warpPerspective(
        np.clip(plane, 0, 255).astype(np.uint8),
        m,
        (w, h),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REFLECT,
    )
    irng = np.random.default_rng([scene_seed, 4])
    out = img.astype(np.float32)
    grad = _smooth_noise(irng, (h, w), max(w, h) / 2) * cond.light_gradient
    out *= (1.0 + 0.5 * grad)[..., None]
    if cond.blur > 0:
        out = np.asarray(cv2.GaussianBlur(out, (0, 0), cond.blur), dtype=np.float32)
    # the sensor noise differs from frame to frame, as on a real camera
    nrng = np.random.default_rng([scene_seed, 5, seed, *map(int, counts)])
    out += np.asarray(nrng.normal(0, cond.noise, out.shape), dtype=np.float32)
    image = np.clip(out, 0, 255).astype(np.uint8)
    truth: dict[str, Any] = {
        "players": players,
        "width": w,
        "height": h,
        "corners": project(cam, corners_sq).round(2).tolist(),
        "inner_corners": project(cam, inner * corners_sq).round(2).tolist(),
        "inner": inner,
        "counts": [int(c) for c in counts],
        "big": [int(b) for b in big],
        "regions": [project(cam, p).round(2).tolist() for p in polys],
        "conditions": {**asdict(cond), "seed": seed, "scene_seed": scene_seed},
        "generator": "vision.synth_ring",
    }
    return image, truth

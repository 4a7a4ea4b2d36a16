"""Deterministic procedural scenes of a chalk board with pebbles, with truth.

Everything random comes from numpy Generators built from the seeds passed in
(never the global RNG), so a scene is a pure function of its arguments. The
scene (camera, ground, chalk, light) depends only on ``scene_seed``; the
pebble arrangement of a square depends only on (``seed``, square, count), so a
sequence of positions rendered with fixed seeds keeps the camera, the board
and every unchanged square identical while the others change.

Truth follows the render-public JSON shape where practical: ``corners``
(SW, SE, NE, NW), ``regions`` keyed ``west_mandarin``/``south_k``/... with
``count``, ``big``, ``polygon``, plus ``counts`` and ``conditions``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from engine.board import MANDARINS, NUM_SQUARES
from vision.geometry import BOARD_CORNERS, FloatArray, project, region_polygons_board

GROUNDS = ("asphalt", "concrete", "earth", "tiles", "wood")
CHALKS: dict[str, tuple[int, int, int]] = {  # BGR
    "white": (235, 238, 240),
    "yellow": (120, 225, 240),
    "pink": (200, 170, 245),
    "blue": (235, 200, 150),
    "charcoal": (45, 45, 50),
}
PALETTES: dict[str, list[tuple[int, int, int]]] = {
    "mixed": [(90, 95, 100), (150, 170, 190), (60, 80, 120), (40, 40, 45), (170, 180, 180)],
    "grey": [(110, 112, 115), (80, 82, 85), (140, 142, 140)],
    "warm": [(60, 90, 150), (80, 120, 170), (50, 70, 110)],
    "dark": [(40, 42, 45), (55, 50, 50), (30, 35, 40)],
}
_PPU = 96  # plane pixels per board unit
_PX0, _PX1, _PY0, _PY1 = -4.5, 9.5, -5.0, 7.0  # plane extent in board units
REGION_NAMES = [
    "west_mandarin",
    "south_0",
    "south_1",
    "south_2",
    "south_3",
    "south_4",
    "east_mandarin",
    "north_4",
    "north_3",
    "north_2",
    "north_1",
    "north_0",
]


@dataclass(frozen=True)
class SceneConditions:
    """Everything drawn at random for one scene; any field may be overridden."""

    ground: str = "concrete"
    chalk: str = "white"
    line_width: float = 0.06  # square sides
    wobble: float = 0.015
    gaps_per_unit: float = 0.3
    smudges: int = 4
    chalk_opacity: float = 0.85
    tilt_deg: float = 20.0
    yaw_deg: float = 0.0
    roll_deg: float = 0.0
    fill: float = 0.75  # board length / image width
    offset: tuple[float, float] = (0.0, 0.0)  # board centre offset, fraction of size
    light_deg: float = 45.0  # light azimuth in the plane
    light_gradient: float = 0.25  # uneven illumination strength
    shadow: bool = False
    hand: bool = False
    blur: float = 0.6
    noise: float = 3.0
    pebble_size: float = 0.15  # square sides
    palette: str = "mixed"
    big_size: float = 0.38
    # the wide generator's extras (``wide_conditions``); the defaults draw the classic scene
    pieces: str = "pebbles"  # piece family: pebbles, marbles, beans, buttons, seeds, shells
    colours: tuple[tuple[int, int, int], ...] = ()  # piece BGR colours; () = ``palette``
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # light colour, BGR gain
    exposure: float = 1.0
    glare: float = 0.0  # strength of one soft specular spot
    motion_blur: float = 0.0  # px
    jpeg_quality: int = 0  # 0: no JPEG round trip


def random_conditions(rng: np.random.Generator) -> SceneConditions:
    """Draw scene conditions covering the product's expected range."""
    return SceneConditions(
        ground=str(rng.choice(GROUNDS)),
        chalk=str(rng.choice(list(CHALKS), p=[0.55, 0.12, 0.1, 0.08, 0.15])),
        line_width=float(rng.uniform(0.035, 0.08)),
        wobble=float(rng.uniform(0.0, 0.025)),
        gaps_per_unit=float(rng.uniform(0.0, 0.6)),
        smudges=int(rng.integers(0, 8)),
        chalk_opacity=float(rng.uniform(0.55, 0.95)),
        tilt_deg=float(rng.uniform(0.0, 45.0)),
        yaw_deg=float(rng.uniform(-25.0, 25.0)),
        roll_deg=float(rng.uniform(-3.0, 3.0)),
        fill=float(rng.uniform(0.62, 0.88)),
        offset=(float(rng.uniform(-0.04, 0.04)), float(rng.uniform(-0.05, 0.05))),
        light_deg=float(rng.uniform(0, 360)),
        light_gradient=float(rng.uniform(0.0, 0.4)),
        shadow=bool(rng.random() < 0.25),
        hand=False,
        blur=float(rng.uniform(0.3, 1.0)),
        noise=float(rng.uniform(1.0, 5.0)),
        pebble_size=float(rng.uniform(0.12, 0.18)),
        palette=str(rng.choice(list(PALETTES))),
        big_size=float(rng.uniform(0.32, 0.45)),
    )


def _blurred(image: NDArray[np.float32], sigma: float) -> NDArray[np.float32]:
    """``image`` under a Gaussian blur of ``sigma`` px, typed as the float32 it stays."""
    return np.asarray(cv2.GaussianBlur(image, (0, 0), sigma), np.float32)


def _smooth_noise(
    rng: np.random.Generator, shape: tuple[int, int], scale: float
) -> NDArray[np.float32]:
    """Zero-mean unit-ish noise with features about ``scale`` pixels wide."""
    h, w = shape
    sh = (max(2, int(h / scale) + 2), max(2, int(w / scale) + 2))
    small = rng.standard_normal(sh).astype(np.float32)
    big = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.asarray(big / (big.std() + 1e-6), dtype=np.float32)


def _ground(rng: np.random.Generator, kind: str, shape: tuple[int, int]) -> NDArray[np.float32]:
    """Ground texture on the board plane, float BGR 0..255."""
    if kind in WIDE_GROUNDS and kind not in GROUNDS:
        return _wide_ground(rng, kind, shape)
    h, w = shape
    fine = rng.standard_normal((h, w)).astype(np.float32)
    if kind == "asphalt":
        base = np.array([70, 72, 75], np.float32) * rng.uniform(0.8, 1.2)
        grain = cv2.GaussianBlur(fine, (0, 0), 1.0) * 22 + _smooth_noise(rng, shape, 200) * 6
        img = base[None, None, :] + grain[..., None]
    elif kind == "concrete":
        base = np.array([150, 152, 150], np.float32) * rng.uniform(0.8, 1.1)
        mott = _smooth_noise(rng, shape, 120) * 9 + _smooth_noise(rng, shape, 25) * 4
        img = base[None, None, :] + (mott + fine * 3)[..., None]
    elif kind == "earth":
        base = np.array([90, 125, 160], np.float32) * rng.uniform(0.75, 1.1)
        mott = _smooth_noise(rng, shape, 150) * 10 + _smooth_noise(rng, shape, 12) * 5
        img = base[None, None, :] + (mott + fine * 4)[..., None]
    elif kind == "tiles":
        base = np.array([70, 100, 170], np.float32) * rng.uniform(0.85, 1.1)
        img = np.repeat((base[None, None, :] + (fine * 3)[..., None]), 1, axis=0)
        tile = int(_PPU * rng.uniform(1.3, 2.2))
        jitter = rng.uniform(-12, 12, size=(h // tile + 2, w // tile + 2)).astype(np.float32)
        ty = np.arange(h) // tile
        tx = np.arange(w) // tile
        img += jitter[ty][:, tx][..., None]
        grout = ((np.arange(h) % tile) < 3)[:, None] | ((np.arange(w) % tile) < 3)[None, :]
        img[grout] = np.array([150, 155, 160], np.float32)
    else:  # wood
        base = np.array([70, 110, 160], np.float32) * rng.uniform(0.8, 1.1)
        plank = int(_PPU * rng.uniform(0.8, 1.3))
        yy = np.arange(h)[:, None].astype(np.float32)
        grain = np.sin(yy / rng.uniform(3, 6) + _smooth_noise(rng, shape, 60) * 2) * 6
        shade = rng.uniform(-15, 15, size=h // plank + 2).astype(np.float32)[
            (np.arange(h) // plank)
        ]
        img = base[None, None, :] + (grain + shade[:, None] + fine * 2)[..., None]
        img[(np.arange(h) % plank) < 2] = base * 0.5
    return np.clip(img, 0, 255).astype(np.float32)


def _plane_map() -> FloatArray:
    """Board units -> plane pixels."""
    return np.array([[_PPU, 0, -_PX0 * _PPU], [0, -_PPU, _PY1 * _PPU], [0, 0, 1]], np.float64)


def _draw_chalk(
    rng: np.random.Generator, cond: SceneConditions, shape: tuple[int, int], depth: float
) -> NDArray[np.float32]:
    """Alpha mask of hand-drawn chalk strokes on the plane."""
    alpha = np.zeros(shape, np.float32)
    a = _plane_map()
    strokes: list[FloatArray] = []
    xs = np.linspace(0, 5, 101)
    ys = np.linspace(0, 2, 41)
    for y in (0.0, 1.0, 2.0):
        strokes.append(np.stack([xs, np.full_like(xs, y)], 1))
    for x in range(6):
        strokes.append(np.stack([np.full_like(ys, float(x)), ys], 1))
    t = np.linspace(0, np.pi, 60)
    strokes.append(np.stack([-depth * np.sin(t), 1 + np.cos(t)], 1))
    strokes.append(np.stack([5 + depth * np.sin(t), 1 + np.cos(t)], 1))
    for s in strokes:
        d = np.gradient(s, axis=0)
        n = np.stack([-d[:, 1], d[:, 0]], 1)
        n /= np.linalg.norm(n, axis=1, keepdims=True) + 1e-9
        u = np.linspace(0, 1, len(s))
        wob = np.asarray(
            sum(
                rng.uniform(-1, 1) * np.sin(2 * np.pi * (k + 1) * u + rng.uniform(0, 6.3))
                for k in range(3)
            )
            * cond.wobble,
            np.float64,
        )
        pts = s + n * wob[:, None]
        length = float(np.sum(np.linalg.norm(np.diff(s, axis=0), axis=1)))
        n_gaps = int(rng.poisson(cond.gaps_per_unit * length))
        keep = np.ones(len(pts), bool)
        for _ in range(min(n_gaps, 10)):
            c = int(rng.integers(0, len(pts)))
            keep[max(0, c - 2) : c + 2] = False
        pp = pts @ a[:2, :2].T + a[:2, 2]
        for i in range(len(pp) - 1):
            if keep[i] and keep[i + 1]:
                wpx = max(1, round(cond.line_width * _PPU * rng.uniform(0.8, 1.2)))
                p0 = (round(pp[i, 0]), round(pp[i, 1]))
                p1 = (round(pp[i + 1, 0]), round(pp[i + 1, 1]))
                cv2.line(alpha, p0, p1, float(rng.uniform(0.75, 1.0)), wpx, cv2.LINE_AA)
    for _ in range(cond.smudges):
        centre = (
            int(rng.uniform(-0.5, 5.5) * _PPU - _PX0 * _PPU),
            int((_PY1 - rng.uniform(0, 2)) * _PPU),
        )
        ax = (int(rng.uniform(0.1, 0.3) * _PPU), int(rng.uniform(0.05, 0.15) * _PPU))
        cv2.ellipse(alpha, centre, ax, float(rng.uniform(0, 180)), 0, 360, 0.12, -1)
    alpha = _blurred(alpha, 1.2)
    grain = 1.0 - 0.35 * rng.random(shape).astype(np.float32)
    return np.clip(alpha * grain * cond.chalk_opacity, 0, 1)


def _place(
    rng: np.random.Generator, poly: FloatArray, n: int, size: float, wide: bool = False
) -> FloatArray:
    """Pebble centres inside a region, clustered like dropped handfuls.

    ``wide``: the handful's spread grows with the piece size, so big pieces
    touch and overlap as a pile does instead of all landing on one spot.
    """
    centre = poly.mean(axis=0)
    spread = 0.08 + 0.035 * np.sqrt(n)
    if wide:
        spread = max(spread, 0.45 * size * np.sqrt(n))
    contour = poly.astype(np.float32).reshape(-1, 1, 2)
    out: list[FloatArray] = []
    tries = 0
    while len(out) < n and tries < 400 * (n + 1):
        tries += 1
        p = centre + rng.normal(0, spread, 2)
        inset = cv2.pointPolygonTest(contour, (float(p[0]), float(p[1])), True)
        if inset > 0.4 * size or (tries > 200 * (n + 1) and inset > 0):
            out.append(p)
    while len(out) < n:  # bounded fallback: stack on the centre
        out.append(centre + rng.normal(0, 0.01, 2))
    return np.array(out).reshape(-1, 2)


#: (rng, region polygon in board units, count, piece size, wide) -> count x 2 centres
Placer = Callable[[np.random.Generator, FloatArray, int, float, bool], FloatArray]


@dataclass(frozen=True)
class Piece:
    """One small piece of a persistent arrangement (``render_scene(placed=...)``).

    A real sequence keeps every piece where it lay until a hand takes it: a
    square that gains a pebble keeps its pile, with the new one on top. Its
    look (shape, shade, colour) comes from (``seed``, ``key``) alone.
    """

    square: int
    x: float  # board units
    y: float
    key: int


def scene_depth(scene_seed: int) -> float:
    """The semicircles' depth (square sides) of the scene ``render_scene`` draws for a seed."""
    srng = np.random.default_rng([scene_seed, 1])
    random_conditions(srng)
    return float(srng.uniform(0.85, 1.05))


def rearranged(
    placed: Sequence[Piece],
    cleared: Sequence[bool],
    added: Sequence[int],
    rng: np.random.Generator,
    depth: float,
    piece_size: float = 0.15,
    nudge: float = 0.5,
) -> tuple[Piece, ...]:
    """The arrangement after hands took up the ``cleared`` squares and dropped ``added`` pieces.

    New pieces land near the square's middle like the others (on top of the
    pile, drawn last); with probability ``nudge`` each piece a new one lands
    on is pushed a little aside, as a dropped pebble does. Untouched squares
    keep every piece exactly where it lay.
    """
    polys = region_polygons_board(depth)
    keys = max((p.key for p in placed), default=-1) + 1
    out = [p for p in placed if not cleared[p.square]]
    for sq, k in enumerate(added):
        contour = polys[sq].astype(np.float32).reshape(-1, 1, 2)
        centre = polys[sq].mean(axis=0)
        for _ in range(k):
            n = sum(p.square == sq for p in out) + 1
            spread = 0.08 + 0.035 * np.sqrt(n)
            spot = centre
            for _tries in range(400):
                p = centre + rng.normal(0, spread, 2)
                if (
                    cv2.pointPolygonTest(contour, (float(p[0]), float(p[1])), True)
                    > 0.4 * piece_size
                ):
                    spot = p
                    break
            for i, other in enumerate(out):
                gap = np.hypot(other.x - spot[0], other.y - spot[1])
                if other.square == sq and gap < piece_size and rng.random() < nudge:
                    away = (np.array([other.x, other.y]) - spot) / max(gap, 1e-6)
                    step = away * piece_size * rng.uniform(0.15, 0.4)
                    moved = (other.x + step[0], other.y + step[1])
                    inset = cv2.pointPolygonTest(contour, moved, True)
                    if inset > 0.4 * piece_size:
                        out[i] = replace(other, x=float(moved[0]), y=float(moved[1]))
            out.append(Piece(sq, float(spot[0]), float(spot[1]), keys))
            keys += 1
    return tuple(out)


def _draw_pebble(
    plane: NDArray[np.float32],
    rng: np.random.Generator,
    centre_px: FloatArray,
    diam_px: float,
    colour: tuple[int, int, int],
    light: FloatArray,
) -> None:
    """A shaded ellipse with a contact shadow, drawn in place on the plane."""
    a = diam_px / 2 * rng.uniform(0.85, 1.15)
    b = a * rng.uniform(0.65, 0.95)
    ang = float(rng.uniform(0, 180))
    c = (float(centre_px[0]), float(centre_px[1]))
    pad = int(a * 2.5) + 4
    x0, y0 = int(c[0]) - pad, int(c[1]) - pad
    if x0 < 0 or y0 < 0 or x0 + 2 * pad >= plane.shape[1] or y0 + 2 * pad >= plane.shape[0]:
        return
    patch = plane[y0 : y0 + 2 * pad, x0 : x0 + 2 * pad]
    lc = (c[0] - x0, c[1] - y0)
    shadow = np.zeros(patch.shape[:2], np.float32)
    sc = (round(lc[0] - light[0] * a * 0.35), round(lc[1] - light[1] * a * 0.35))
    cv2.ellipse(shadow, sc, (round(a * 1.05), round(b * 1.05)), ang, 0, 360, 1.0, -1)
    shadow = _blurred(shadow, max(1.0, a * 0.25))
    patch *= (1.0 - 0.45 * shadow)[..., None]
    body = np.zeros(patch.shape[:2], np.float32)
    cv2.ellipse(body, (round(lc[0]), round(lc[1])), (round(a), round(b)), ang, 0, 360, 1.0, -1)
    body = _blurred(body, 0.7)
    yy, xx = np.mgrid[0 : patch.shape[0], 0 : patch.shape[1]].astype(np.float32)
    shade = 0.8 + 0.35 * ((xx - lc[0]) * light[0] + (yy - lc[1]) * light[1]) / max(a, 1.0)
    tone = np.clip(shade, 0.55, 1.25)[..., None] * np.array(colour, np.float32)
    tone *= rng.uniform(0.85, 1.15)
    patch[:] = patch * (1 - body[..., None]) + np.clip(tone, 0, 255) * body[..., None]


def with_marks(
    image: NDArray[np.uint8],
    points: FloatArray,
    diam_px: float,
    seed: int,
    colour: tuple[int, int, int] = (150, 160, 170),
) -> NDArray[np.uint8]:
    """``image`` with a pebble on each of ``points`` (pixels), ``diam_px`` wide, lit
    from the upper left: the marks a person puts on a board's corners
    (``vision.locate.markers``)."""
    rng = np.random.default_rng(seed)
    plane = image.astype(np.float32)
    light = np.array([-0.6, -0.8])
    for point in np.asarray(points, np.float64):
        _draw_pebble(plane, rng, point, diam_px, colour, light)
    return np.asarray(np.clip(plane, 0, 255), np.uint8)


def _camera(cond: SceneConditions, size: tuple[int, int], depth: float) -> FloatArray:
    """Board units -> image pixels for the tilted, yawed, rolled camera."""
    w, h = size
    sq = 0.16
    yaw, tilt, roll = np.deg2rad([cond.yaw_deg, cond.tilt_deg, cond.roll_deg])
    rz = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    r0 = np.diag([1.0, -1.0, -1.0])
    rx = np.array([[1, 0, 0], [0, np.cos(tilt), -np.sin(tilt)], [0, np.sin(tilt), np.cos(tilt)]])
    rr = np.array([[np.cos(roll), -np.sin(roll), 0], [np.sin(roll), np.cos(roll), 0], [0, 0, 1]])
    r = rr @ rx @ r0 @ rz
    dist = 1.5
    to_m = np.array([[sq, 0, -2.5 * sq], [0, sq, -1.0 * sq], [0, 0, 1]])
    ext = np.stack([r[:, 0], r[:, 1], np.array([0, 0, dist])], axis=1)
    h1 = ext @ to_m
    outline = np.concatenate([region_polygons_board(depth)[0], region_polygons_board(depth)[6]])
    p = project(h1, outline)
    span = float(p[:, 0].max() - p[:, 0].min())
    f = cond.fill * w / max(span, 1e-6)
    cx = w / 2 - f * float(p[:, 0].mean()) + cond.offset[0] * w
    cy = h / 2 - f * float(p[:, 1].mean()) + cond.offset[1] * h
    k = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]])
    return np.asarray(k @ h1, dtype=np.float64)


def render_scene(
    board_counts: list[int],
    big: tuple[int, int],
    seed: int,
    *,
    scene_seed: int | None = None,
    size: tuple[int, int] = (1280, 960),
    placer: Placer | None = None,
    placers: Mapping[int, Placer] | None = None,
    placed: Sequence[Piece] | None = None,
    hand_seed: int | None = None,
    noise_seed: int | None = None,
    **conditions: Any,
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """Render one frame and its truth.

    ``board_counts``: small pebbles per ring square (12); ``big``: big stone on
    square 0 / square 6; ``seed``: pebble arrangement; ``scene_seed`` (default
    ``seed``): camera, ground, chalk and light; ``placer``: where a square's
    pieces lie (default: clustered handfuls; ``vision.synth_spread`` lays
    them out in one layer); ``placers``: another placer for some squares (a
    tally's unsure squares spread out again, the rest as they lay: each square
    draws from its own generator); ``conditions``: overrides of SceneConditions
    fields (e.g. ``ground="tiles"``, ``hand=True``).
    ``placed``: draw exactly these pieces, in this order (a persistent
    arrangement, see :func:`rearranged`) instead of a fresh one per count;
    the big stones then lie where they lay in the scene's first frame.
    ``hand_seed``: where the arm reaches (default: a place fixed by the
    scene), so the frames of one scene can show hands in different places.
    ``noise_seed``: the sensor's noise drawn afresh (another photo of the same
    scene); by default the scene's own.
    """
    if len(board_counts) != NUM_SQUARES or any(c < 0 for c in board_counts):
        raise ValueError("board_counts must be 12 non-negative integers")
    if placed is not None and [sum(p.square == sq for p in placed) for sq in range(12)] != list(
        board_counts
    ):
        raise ValueError("placed pieces do not match board_counts")
    scene_seed = seed if scene_seed is None else scene_seed
    srng = np.random.default_rng([scene_seed, 1])
    cond = random_conditions(srng)
    unknown = set(conditions) - set(SceneConditions.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown scene condition(s): {', '.join(sorted(unknown))}")
    cond = replace(cond, **conditions)
    depth = float(srng.uniform(0.85, 1.05))
    ph = round((_PY1 - _PY0) * _PPU)
    pw = round((_PX1 - _PX0) * _PPU)
    plane = _ground(np.random.default_rng([scene_seed, 2]), cond.ground, (ph, pw))
    alpha = _draw_chalk(np.random.default_rng([scene_seed, 3]), cond, (ph, pw), depth)
    chalk = np.array(CHALKS[cond.chalk], np.float32)
    plane = plane * (1 - alpha[..., None]) + chalk[None, None, :] * alpha[..., None]
    la = np.deg2rad(cond.light_deg)
    light = np.array([np.cos(la), np.sin(la)])
    a = _plane_map()
    polys = region_polygons_board(depth)
    palette = PALETTES[cond.palette]
    pieces: list[dict[str, Any]] = []
    wide = cond.pieces != "pebbles" or bool(cond.colours)
    colours = list(cond.colours) or palette
    place = placer or _place

    def draw(prng: np.random.Generator, sq: int, c: FloatArray) -> None:
        cp = c @ a[:2, :2].T + a[:2, 2]
        col = colours[int(prng.integers(0, len(colours)))]
        diam = cond.pebble_size * _PPU * prng.uniform(0.85, 1.15)
        if wide:
            _draw_piece(plane, prng, cp, diam, col, light, cond.pieces)
        else:
            _draw_pebble(plane, prng, cp, diam, col, light)
        pieces.append({"kind": "small", "region": REGION_NAMES[sq], "position": c.tolist()})

    for sq_i in range(NUM_SQUARES):
        prng = np.random.default_rng([seed, 7, sq_i, board_counts[sq_i]])
        has_big = sq_i in MANDARINS and big[MANDARINS.index(sq_i)]
        if has_big:
            brng = prng if placed is None else np.random.default_rng([seed, 9, sq_i])
            c = polys[sq_i].mean(axis=0) + brng.normal(0, 0.05, 2)
            cp = c @ a[:2, :2].T + a[:2, 2]
            _draw_pebble(plane, brng, cp, cond.big_size * _PPU, (120, 125, 128), light)
            pieces.append({"kind": "big", "region": REGION_NAMES[sq_i], "position": c.tolist()})
        if placed is None:
            here = (placers or {}).get(sq_i, place)
            for c in here(prng, polys[sq_i], board_counts[sq_i], cond.pebble_size, wide):
                draw(prng, sq_i, c)
    for piece in placed or ():
        draw(
            np.random.default_rng([seed, 8, piece.key]), piece.square, np.array([piece.x, piece.y])
        )
    w, h = size
    cam = _camera(cond, size, depth)
    m = cam @ np.linalg.inv(a)
    img = np.asarray(
        cv2.warpPerspective(
            np.clip(plane, 0, 255).astype(np.uint8),
            m,
            (w, h),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT,
        ),
        np.uint8,
    )
    irng = np.random.default_rng([scene_seed, 4])
    out = img.astype(np.float32)
    grad = _smooth_noise(irng, (h, w), max(w, h) / 2) * cond.light_gradient
    out *= (1.0 + 0.5 * grad)[..., None]
    if cond.shadow:
        mask = np.zeros((h, w), np.float32)
        for _ in range(int(irng.integers(2, 6))):
            cx, cy = irng.uniform(0, w), irng.uniform(0, h)
            pts = np.stack([cx + irng.normal(0, w / 8, 6), cy + irng.normal(0, h / 8, 6)], 1)
            cv2.fillPoly(mask, [cv2.convexHull(pts.astype(np.int32))], 1.0)
        mask = _blurred(mask, 3.0)
        out *= (1.0 - 0.45 * mask)[..., None]
    hand_info: dict[str, Any] = {"present": bool(cond.hand)}
    if cond.hand:
        arng = irng if hand_seed is None else np.random.default_rng([scene_seed, 5, hand_seed])
        target = project(cam, np.array([[arng.uniform(0.5, 4.5), arng.uniform(0.3, 1.7)]]))[0]
        start = np.array([arng.uniform(0, w), h + 40.0])
        unit_px = float(
            np.linalg.norm(np.diff(project(cam, np.array([[2.0, 1.0], [3.0, 1.0]])), axis=0))
        )
        width = max(12, round(arng.uniform(0.45, 0.7) * unit_px))
        skin = np.array([110, 150, 205], np.float32) * arng.uniform(0.7, 1.1)
        sh = np.zeros((h, w), np.float32)
        off = (int(0.3 * width), int(0.3 * width))
        cv2.line(
            sh,
            (int(start[0]) + off[0], int(start[1]) + off[1]),
            (int(target[0]) + off[0], int(target[1]) + off[1]),
            1.0,
            width,
        )
        out *= (1.0 - 0.35 * cv2.GaussianBlur(sh, (0, 0), 6))[..., None]
        arm = np.zeros((h, w), np.float32)
        cv2.line(arm, (int(start[0]), int(start[1])), (int(target[0]), int(target[1])), 1.0, width)
        cv2.circle(arm, (int(target[0]), int(target[1])), int(width * 0.6), 1.0, -1)
        arm = _blurred(arm, 1.5)
        out = out * (1 - arm[..., None]) + skin[None, None, :] * arm[..., None]
        hand_info["tip_px"] = [float(target[0]), float(target[1])]
    if cond.tint != (1.0, 1.0, 1.0) or cond.exposure != 1.0:
        out *= np.array(cond.tint, np.float32)[None, None, :] * cond.exposure
    if cond.glare > 0:
        g = np.zeros((h, w), np.float32)
        cv2.circle(g, (int(irng.uniform(0, w)), int(irng.uniform(0, h))), w // 10, 1.0, -1)
        out += (cv2.GaussianBlur(g, (0, 0), w / 12) * 255 * cond.glare)[..., None]
    if cond.blur > 0:
        out = _blurred(out, cond.blur)
    if cond.motion_blur >= 1.0:
        k = np.zeros((int(cond.motion_blur) | 1,) * 2, np.float32)
        k[k.shape[0] // 2, :] = 1.0 / k.shape[0]
        rot = cv2.getRotationMatrix2D(((k.shape[0] - 1) / 2,) * 2, float(irng.uniform(0, 180)), 1)
        k = np.asarray(cv2.warpAffine(k, rot, k.shape), np.float32)
        out = np.asarray(cv2.filter2D(out, -1, k / max(float(k.sum()), 1e-6)), np.float32)
    nrng = irng if noise_seed is None else np.random.default_rng([scene_seed, 6, noise_seed])
    out += nrng.normal(0, cond.noise, out.shape).astype(np.float32)
    image = np.clip(out, 0, 255).astype(np.uint8)
    if cond.jpeg_quality > 0:
        _, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, cond.jpeg_quality])
        image = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)
    corners = project(cam, BOARD_CORNERS)
    regions: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    for i, name in enumerate(REGION_NAMES):
        nb = int(big[MANDARINS.index(i)]) if i in MANDARINS else 0
        poly = project(cam, polys[i])
        regions[name] = {
            "count": int(board_counts[i]),
            "big": nb,
            "polygon": poly.round(2).tolist(),
        }
        counts[name] = {"small": int(board_counts[i]), "big": nb}
    inside = np.all((corners >= 0) & (corners < [w, h]))
    truth: dict[str, Any] = {
        "width": w,
        "height": h,
        "corners": corners.round(2).tolist(),
        "corner_order": ["SW", "SE", "NE", "NW"],
        "regions": regions,
        "counts": counts,
        "ring_counts": [int(c) for c in board_counts],
        "ring_big": [int(big[0]), int(big[1])],
        "board_partially_outside": not bool(inside),
        "hand": hand_info,
        "pieces": pieces,
        "conditions": {**asdict(cond), "arc_depth": depth, "seed": seed, "scene_seed": scene_seed},
        "generator": "vision.synth",
    }
    return image, truth


def random_position(rng: np.random.Generator) -> tuple[list[int], tuple[int, int]]:
    """A plausible mid-game position: 50 pebbles spread unevenly, big stones kept or taken."""
    total = int(rng.integers(10, 51))
    weights = rng.dirichlet(np.full(NUM_SQUARES, 0.6))
    counts = rng.multinomial(total, weights).tolist()
    big = (int(rng.random() < 0.8), int(rng.random() < 0.8))
    return [int(c) for c in counts], big


# ---------------------------------------------------------------- the wide generator
#
# Training scenes for the counter and the big-stone classifier: far more grounds, piece
# kinds, sizes, piles, light and camera effects than the classic scenes above (which the
# unit tests use and which stay exactly as they were). Families can be left out, so a
# trainer can hold one ground family and one piece family out entirely and measure on them.

#: Ground kinds of the wide generator (the classic five plus nine more).
WIDE_GROUNDS = (
    *GROUNDS,
    "sand",
    "gravel",
    "brick",
    "tiles_any",
    "slabs",
    "lino",
    "mat",
    "paper",
    "concrete_dark",
)
#: Piece families of the wide generator.
PIECE_FAMILIES = ("pebbles", "marbles", "beans", "buttons", "seeds", "shells")
#: The families kept out of training (the same as training/render's held-out kinds).
HELD_OUT_GROUND = "brick"
HELD_OUT_PIECE = "shells"


def _colour(rng: np.random.Generator, lo: float = 30, hi: float = 230) -> NDArray[np.float32]:
    return rng.uniform(lo, hi, 3).astype(np.float32)


def _wide_ground(
    rng: np.random.Generator, kind: str, shape: tuple[int, int]
) -> NDArray[np.float32]:
    """The wide generator's extra grounds, float BGR on the board plane."""
    h, w = shape
    fine = rng.standard_normal((h, w)).astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == "sand":
        base = np.array([140, 185, 210], np.float32) * rng.uniform(0.75, 1.1)
        rip = np.sin((xx * rng.uniform(-1, 1) + yy) / rng.uniform(6, 20)) * rng.uniform(2, 8)
        tex = rip + cv2.GaussianBlur(fine, (0, 0), 0.7) * 8 + _smooth_noise(rng, shape, 90) * 6
        img = base + tex[..., None]
    elif kind == "gravel":
        base = _colour(rng, 80, 170) * np.array([1.0, 1.03, 1.06], np.float32)
        img = np.ascontiguousarray(base + fine[..., None] * 4)
        r = rng.uniform(3, 9)
        for _ in range(min(int(h * w / (r * r * 3)), 30000)):
            c = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            col = tuple(float(v) for v in base * rng.uniform(0.55, 1.45) * rng.uniform(0.9, 1.1, 3))
            cv2.circle(img, c, max(1, int(r * rng.uniform(0.5, 1.3))), col, -1)
    elif kind in ("brick", "tiles_any", "slabs"):
        unit = {"brick": (0.6, 0.25), "tiles_any": (1.0, 1.0), "slabs": (2.5, 1.8)}[kind]
        scale = _PPU * rng.uniform(0.7, 1.6)
        tw, th = int(unit[0] * scale), int(unit[1] * scale)
        if kind == "brick":
            base = np.array([50, 70, 150], np.float32) * rng.uniform(0.6, 1.2)
        else:
            base = _colour(rng)
        grout_c = _colour(rng, 60, 220)
        gw = int(rng.integers(1, 8))
        row = (yy // th).astype(np.int32)
        xs = xx + np.where(row % 2 == 1, tw / 2 if kind == "brick" else 0, 0)
        col = (xs // tw).astype(np.int32)
        jit = rng.uniform(-25, 25, size=(h // th + 2, w // tw + 3)).astype(np.float32)
        img = base + (jit[row, col] + fine * 4 + _smooth_noise(rng, shape, 40) * 5)[..., None]
        if kind == "tiles_any" and rng.random() < 0.3:  # checker of two colours
            alt = ((row + col) % 2 == 1)[..., None]
            img = np.where(alt, img * 0 + _colour(rng) + fine[..., None] * 3, img)
        grout = ((yy % th) < gw) | ((xs % tw) < gw)
        img[grout] = grout_c
    elif kind == "lino":
        img = _colour(rng, 60, 220) + (fine * 3 + _smooth_noise(rng, shape, 30) * 7)[..., None]
    elif kind == "mat":
        a, b = _colour(rng), _colour(rng)
        period = rng.uniform(0.2, 1.2) * _PPU
        pattern = int(rng.integers(3))
        if pattern == 0:
            m = (np.sin(xx / period * np.pi) > 0) ^ (np.sin(yy / period * np.pi) > 0)
        elif pattern == 1:
            m = np.sin((xx * rng.uniform(-1, 1) + yy) / period * np.pi) > 0
        else:
            m = _smooth_noise(rng, shape, period) > 0.3
        weave = (np.sin(xx * 1.3) * np.sin(yy * 1.3)) * 10
        img = np.where(m[..., None], a, b) + (weave + fine * 4)[..., None]
    elif kind == "paper":
        floor = _colour(rng, 40, 160) + (fine * 5)[..., None]
        img = np.array([235, 238, 240], np.float32) * rng.uniform(0.8, 1.0) + fine[..., None] * 2
        x0, x1 = _PPU * rng.uniform(1.5, 3.3), _PPU * rng.uniform(10.7, 12.5)
        y0, y1 = _PPU * rng.uniform(2.5, 4.3), _PPU * rng.uniform(7.7, 9.5)
        out = (xx < x0) | (xx > x1) | (yy < y0) | (yy > y1)
        img = np.where(out[..., None], floor, img)
    else:  # concrete_dark
        base = np.array([95, 98, 100], np.float32) * rng.uniform(0.6, 1.0)
        mott = _smooth_noise(rng, shape, 60) * 12 + _smooth_noise(rng, shape, 8) * 5
        img = base + (mott + fine * 5)[..., None]
        for _ in range(int(rng.integers(0, 6))):  # cracks
            p = rng.uniform([0, 0], [w, h])
            pts = [p]
            for _ in range(12):
                p = p + rng.normal(0, 14, 2)
                pts.append(p)
            cv2.polylines(img, [np.array(pts, np.int32)], False, (40, 40, 40), 2)
    clipped: NDArray[np.floating[Any]] = np.clip(img, 0, 255)
    return clipped.astype(np.float32)


def _draw_piece(
    plane: NDArray[np.float32],
    rng: np.random.Generator,
    centre_px: FloatArray,
    diam_px: float,
    colour: tuple[int, int, int],
    light: FloatArray,
    family: str,
) -> None:
    """One piece of the wide generator's families, shaded, with a contact shadow."""
    round_ = family in ("marbles", "buttons")
    a = diam_px / 2 * rng.uniform(0.9, 1.1)
    aspect = {"beans": (0.5, 0.7), "seeds": (0.55, 0.8), "shells": (0.7, 0.9)}
    lo, hi = aspect.get(family, (0.93, 1.0) if round_ else (0.6, 0.95))
    b = a * rng.uniform(lo, hi)
    ang = float(rng.uniform(0, 180))
    pad = int(a * 2.5) + 4
    x0, y0 = int(centre_px[0]) - pad, int(centre_px[1]) - pad
    if x0 < 0 or y0 < 0 or x0 + 2 * pad >= plane.shape[1] or y0 + 2 * pad >= plane.shape[0]:
        return
    patch = plane[y0 : y0 + 2 * pad, x0 : x0 + 2 * pad]
    lc = (float(centre_px[0]) - x0, float(centre_px[1]) - y0)
    ic = (round(lc[0]), round(lc[1]))
    axes = (max(1, round(a)), max(1, round(b)))
    shadow = np.zeros(patch.shape[:2], np.float32)
    sc = (round(lc[0] - light[0] * a * 0.4), round(lc[1] - light[1] * a * 0.4))
    cv2.ellipse(shadow, sc, (round(a * 1.05), round(b * 1.05)), ang, 0, 360, 1.0, -1)
    shadow = _blurred(shadow, max(1.0, a * 0.25))
    patch *= (1.0 - rng.uniform(0.25, 0.55) * shadow)[..., None]
    body = np.zeros(patch.shape[:2], np.float32)
    cv2.ellipse(body, ic, axes, ang, 0, 360, 1.0, -1)
    body = _blurred(body, 0.6)
    yy, xx = np.mgrid[0 : patch.shape[0], 0 : patch.shape[1]].astype(np.float32)
    dx, dy = (xx - lc[0]) / max(a, 1.0), (yy - lc[1]) / max(a, 1.0)
    col = np.array(colour, np.float32) * rng.uniform(0.85, 1.15)
    if family == "buttons":  # flat disc, rim, two or four holes
        shade = 0.95 + 0.1 * (dx * light[0] + dy * light[1])
        tone = shade[..., None] * col
        rim = np.zeros_like(body)
        cv2.ellipse(rim, ic, axes, ang, 0, 360, 1.0, max(1, round(a * 0.15)))
        tone *= (1.0 - 0.25 * rim)[..., None]
        k = 2 if rng.random() < 0.5 else 4
        for j in range(k):
            t = ang + j * 360.0 / k
            hx = lc[0] + 0.3 * a * np.cos(np.deg2rad(t))
            hy = lc[1] + 0.3 * a * np.sin(np.deg2rad(t))
            hole = (xx - hx) ** 2 + (yy - hy) ** 2 <= (0.11 * a) ** 2
            tone[hole] *= 0.35
    else:
        shade = 0.8 + 0.35 * (dx * light[0] + dy * light[1])
        tone = np.clip(shade, 0.5, 1.25)[..., None] * col
        if family == "shells":  # radial ribs
            ribs = 0.85 + 0.15 * np.sin(np.arctan2(dy, dx) * rng.uniform(8, 16))
            tone *= ribs[..., None]
    if family in ("marbles", "seeds", "beans"):  # glossy: a small specular highlight
        hx, hy = lc[0] + light[0] * a * 0.4, lc[1] + light[1] * a * 0.4
        spot = np.exp(-((xx - hx) ** 2 + (yy - hy) ** 2) / (2 * (0.18 * a) ** 2 + 1e-6))
        tone += (spot * rng.uniform(60, 160))[..., None]
    if family == "marbles":  # see-through: some ground shows through the glass
        tone = 0.6 * tone + 0.4 * patch * (col / 160.0)
    patch[:] = patch * (1 - body[..., None]) + np.clip(tone, 0, 255) * body[..., None]


def _bgr(values: NDArray[Any]) -> tuple[int, int, int]:
    """Three channel values as an int colour, each truncated by ``int``."""
    b, g, r = (int(v) for v in values)
    return b, g, r


def _piece_colours(rng: np.random.Generator, family: str) -> tuple[tuple[int, int, int], ...]:
    """A set of 1-5 colours typical of a piece family (BGR)."""
    k = int(rng.integers(1, 6))
    if family == "pebbles" and rng.random() < 0.6:
        return tuple(_bgr(rng.uniform(40, 190) * rng.uniform(0.85, 1.15, 3)) for _ in range(k))
    if family == "beans" and rng.random() < 0.7:
        bases = [(40, 60, 140), (30, 40, 90), (200, 210, 220), (30, 30, 35), (60, 140, 170)]
        return tuple(bases[int(i)] for i in rng.integers(0, len(bases), k))
    if family == "seeds" and rng.random() < 0.7:
        bases = [(25, 30, 40), (30, 60, 110), (50, 90, 140), (20, 20, 25)]
        return tuple(bases[int(i)] for i in rng.integers(0, len(bases), k))
    if family == "shells" and rng.random() < 0.7:
        bases = [(200, 215, 230), (170, 190, 225), (150, 170, 200), (190, 185, 215)]
        return tuple(bases[int(i)] for i in rng.integers(0, len(bases), k))
    return tuple(_bgr(_colour(rng, 20, 235)) for _ in range(k))


def wide_conditions(
    rng: np.random.Generator,
    grounds: tuple[str, ...] = WIDE_GROUNDS,
    pieces: tuple[str, ...] = PIECE_FAMILIES,
) -> SceneConditions:
    """Scene conditions far wider than ``random_conditions``: any ground and piece family of
    the given ones, pieces a twentieth to a third of a square, tilt 0-55 degrees, coloured and
    low light, glare, motion blur, sensor noise and JPEG."""
    base = random_conditions(rng)
    family = str(rng.choice(list(pieces)))
    size = float(np.exp(rng.uniform(np.log(0.05), np.log(0.33))))
    low = rng.random() < 0.12
    yaw = float(rng.uniform(-180, 180)) if rng.random() < 0.15 else float(rng.uniform(-35, 35))
    return replace(
        base,
        ground=str(rng.choice(list(grounds))),
        chalk=str(rng.choice(list(CHALKS))),
        line_width=float(rng.uniform(0.02, 0.1)),
        chalk_opacity=float(rng.uniform(0.35, 0.95)),
        tilt_deg=float(rng.uniform(0.0, 55.0)),
        yaw_deg=yaw,
        roll_deg=float(rng.normal(0, 4)),
        light_gradient=float(rng.uniform(0.0, 0.7)),
        shadow=bool(rng.random() < 0.35),
        hand=bool(rng.random() < 0.12),
        blur=float(rng.uniform(0.0, 1.8)),
        noise=float(rng.uniform(6.0, 14.0) if low else rng.uniform(0.5, 6.0)),
        pebble_size=size,
        big_size=float(np.clip(rng.uniform(1.6, 3.0) * size, 0.2, 0.6)),
        pieces=family,
        colours=_piece_colours(rng, family),
        tint=tuple(float(v) for v in rng.uniform(0.75, 1.25, 3)),  # type: ignore[arg-type]
        exposure=float(rng.uniform(0.35, 0.6) if low else rng.uniform(0.75, 1.25)),
        glare=float(rng.uniform(0.1, 0.5)) if rng.random() < 0.1 else 0.0,
        motion_blur=float(rng.uniform(2, 9)) if rng.random() < 0.1 else 0.0,
        jpeg_quality=int(rng.integers(35, 96)),
    )


def wide_position(rng: np.random.Generator, piece_size: float) -> tuple[list[int], tuple[int, int]]:
    """Counts weighted to piles: openings, games, sparse boards and many squares of 8-30.

    A square never holds more pieces than cover it about once over (big pieces pile
    no higher than a real handful would).
    """
    cap = int(np.clip(1.1 / piece_size**2, 3, 30))
    mode = rng.choice(4, p=[0.08, 0.32, 0.2, 0.4])
    if mode == 0:  # opening
        counts = [0] + [5] * 5 + [0] + [5] * 5
    elif mode == 1:
        counts, _ = random_position(rng)
    elif mode == 2:  # sparse: 0-3 pieces
        counts = [int(v) for v in rng.choice(4, NUM_SQUARES, p=[0.35, 0.3, 0.2, 0.15])]
    else:  # piles
        counts = [int(v) for v in rng.integers(0, 8, NUM_SQUARES)]
        for sq in rng.choice(NUM_SQUARES, int(rng.integers(2, 8)), replace=False):
            counts[int(sq)] = int(rng.integers(8, 31))
    big = (int(rng.random() < 0.7), int(rng.random() < 0.7))
    return [min(int(c), cap) for c in counts], big


def render_wide(
    seed: int,
    *,
    grounds: tuple[str, ...] = WIDE_GROUNDS,
    pieces: tuple[str, ...] = PIECE_FAMILIES,
    size: tuple[int, int] = (800, 600),
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """One wide-generator scene and its truth, a pure function of ``seed`` and the families."""
    rng = np.random.default_rng([seed, 11])
    cond = wide_conditions(rng, grounds, pieces)
    counts, big = wide_position(rng, cond.pebble_size)
    fields = {k: v for k, v in asdict(cond).items()}
    fields["colours"] = cond.colours
    fields["offset"] = cond.offset
    fields["tint"] = cond.tint
    image, truth = render_scene(counts, big, seed, size=size, **fields)
    truth["conditions"]["ground_family"] = cond.ground
    truth["conditions"]["piece_family"] = cond.pieces
    truth["generator"] = "vision.synth.wide"
    return image, truth

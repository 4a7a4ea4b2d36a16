"""Generated tally spreads: one player's pieces laid out in a single layer, with truth.

Tally mode asks the players to spread one heap over the ten citizen squares
so that no piece hides another. These scenes are that layout on the wide
generator's grounds, piece kinds and light (``vision.synth.wide_conditions``),
with two changes a tally still implies: the fixed camera sees the whole board
(no hand, the board inside the frame) and the pieces lie in one layer, apart
or touching a neighbour, never stacked. Piece sizes span what render-public's
Blender scenes hold (0.065-0.2 of a square side). A scene is a pure function
of its seed and the families allowed, so fitting, training and measuring use
disjoint seed ranges of the same distribution.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engine.board import CITIZENS, MANDARINS, NUM_SQUARES
from vision.geometry import FloatArray, project, region_polygons_board
from vision.synth import (
    PIECE_FAMILIES,
    WIDE_GROUNDS,
    SceneConditions,
    _camera,
    render_scene,
    wide_conditions,
)

PIECE_SIZE = (0.065, 0.2)  # square sides, drawn log-uniform
MAX_PER_SQUARE = 10
TOTAL = (10, 70)  # small pieces of one spread, both ends included
LIGHTS = ("day", "shadow", "glare", "low")


def light_kind(cond: SceneConditions) -> str:
    """The scene's light in one word (for figures per condition): low light wins, then
    glare, then hard shadows; otherwise day (gradients and tints included)."""
    if cond.exposure < 0.65:
        return "low"
    if cond.glare > 0:
        return "glare"
    return "shadow" if cond.shadow else "day"


def layer_placer(touch: float) -> Any:
    """A ``vision.synth`` placer laying pieces in one layer: each piece is either put
    against one already placed (share ``touch``) or anywhere at least a piece apart;
    no two centres closer than 0.85 piece sizes, every centre half a piece inside."""

    def place(
        rng: np.random.Generator, poly: FloatArray, n: int, size: float, *_: Any
    ) -> FloatArray:
        lo = poly.min(axis=0) + 0.5 * size
        hi = poly.max(axis=0) - 0.5 * size
        out: list[FloatArray] = []
        for _try in range(40000):
            if len(out) == n:
                break
            if out and rng.random() < touch:
                ang = rng.uniform(0.0, 2.0 * np.pi)
                step = size * rng.uniform(0.85, 1.0)
                p = out[int(rng.integers(len(out)))] + step * np.array([np.cos(ang), np.sin(ang)])
                gap = 0.85 * size
            else:
                p = rng.uniform(lo, hi)
                gap = 1.1 * size
            inside = bool(np.all(p >= lo) and np.all(p <= hi))
            if inside and all(float(np.hypot(*(p - q))) >= gap for q in out):
                out.append(p)
        if len(out) < n:
            raise ValueError(f"{n} pieces of size {size:.2f} do not fit in one layer")
        return np.array(out, dtype=np.float64).reshape(-1, 2)

    return place


def _apart(fallback: Any) -> Any:
    """A placer laying a square's pieces apart (none touching), or as ``fallback`` lays
    them where they do not fit apart (big pieces, a full square)."""
    apart = layer_placer(0.0)

    def place(
        rng: np.random.Generator, poly: FloatArray, n: int, size: float, *rest: Any
    ) -> FloatArray:
        try:
            return np.asarray(apart(rng, poly, n, size, *rest), np.float64)
        except ValueError:
            return np.asarray(fallback(rng, poly, n, size, *rest), np.float64)

    return place


def spread_counts(rng: np.random.Generator, total: int) -> list[int]:
    """``total`` pieces over the ten citizen squares, unevenly, at most 10 a square."""
    while True:
        per = rng.multinomial(total, rng.dirichlet(np.full(len(CITIZENS), 3.0)))
        if per.max() <= MAX_PER_SQUARE:
            break
    board = [0] * NUM_SQUARES
    for sq, n in zip(CITIZENS, per, strict=True):
        board[sq] = int(n)
    return board


def _framed(cond: SceneConditions, size: tuple[int, int]) -> SceneConditions:
    """Shrink and centre the view until the whole board (arcs included) is in the frame."""
    outline = np.concatenate([region_polygons_board(1.05)[m] for m in MANDARINS])
    for _ in range(30):
        p = project(_camera(cond, size, 1.05), outline) / np.array(size, dtype=np.float64)
        if p.min() >= 0.02 and p.max() <= 0.98:  # 2 % margin: the arcs drawn may be shallower
            break
        cond = replace(cond, fill=cond.fill * 0.93, offset=(cond.offset[0] / 2, cond.offset[1] / 2))
    return cond


def _setup(
    seed: int,
    grounds: tuple[str, ...],
    pieces: tuple[str, ...],
    size: tuple[int, int],
    quan_pieces: bool,
) -> tuple[list[int], tuple[int, int], SceneConditions, float]:
    """Scene ``seed``'s counts, big stones, conditions and touching share (the draws of
    ``spread_scene``, in its order, so that the empty board shares them)."""
    rng = np.random.default_rng([seed, 16])
    total = int(rng.integers(TOTAL[0], TOTAL[1] + 1))
    board = spread_counts(rng, total)
    nbig = int(rng.choice(3, p=[0.5, 0.3, 0.2]))
    big = ((1, 0), (0, 1))[int(rng.integers(2))] if nbig == 1 else (nbig // 2, nbig // 2)
    if quan_pieces and rng.random() < 0.3:
        for m in MANDARINS:
            board[m] = int(rng.integers(0, 4))
    piece = float(np.exp(rng.uniform(*np.log(PIECE_SIZE))))
    touch = float(rng.uniform(0.0, 0.6))
    cond = replace(
        wide_conditions(np.random.default_rng([seed, 17]), grounds, pieces),
        hand=False,
        pebble_size=piece,
        big_size=float(np.clip(rng.uniform(2.0, 3.0) * piece, 0.25, 0.5)),
        yaw_deg=float(rng.uniform(-35.0, 35.0)),
        tilt_deg=float(rng.uniform(0.0, 50.0)),
    )
    return board, big, _framed(cond, size), touch


def _fields(cond: SceneConditions) -> dict[str, Any]:
    fields = asdict(cond)
    fields.update(colours=cond.colours, offset=cond.offset, tint=cond.tint)
    return fields


def spread_scene(
    seed: int,
    *,
    grounds: tuple[str, ...] = WIDE_GROUNDS,
    pieces: tuple[str, ...] = PIECE_FAMILIES,
    size: tuple[int, int] = (1280, 960),
    quan_pieces: bool = False,
    respread: Collection[int] = (),
    noise_seed: int | None = None,
) -> tuple[NDArray[np.uint8], dict[str, Any]]:
    """One spread and its truth (``vision.synth``'s, plus ``board``, ``big``, ``touch``
    and ``light``). ``quan_pieces``: a few small pieces on the quan squares too
    (training scenes; the guide asks for citizen squares only). ``respread``: squares
    whose pieces the players laid out again apart, as the tally screen asks for its
    unsure squares (the same scene otherwise, every other piece where it lay).
    ``noise_seed``: another frame of the same scene, its sensor noise drawn afresh."""
    board, big, cond, touch = _setup(seed, grounds, pieces, size, quan_pieces)
    placer = layer_placer(touch)
    apart = {sq: _apart(placer) for sq in respread}
    image, truth = render_scene(
        board,
        big,
        seed,
        size=size,
        placer=placer,
        placers=apart,
        noise_seed=noise_seed,
        **_fields(cond),
    )
    truth.update(board=board, big=list(big), touch=touch, light=light_kind(cond))
    truth["conditions"]["ground_family"] = cond.ground
    truth["conditions"]["piece_family"] = cond.pieces
    truth["generator"] = "vision.synth_spread"
    return image, truth


#: How far the light may drift between the photo of the empty board and the spread's
#: (a passing cloud, the camera's exposure): a gain on the whole frame, and per channel.
DRIFT_GAIN = (0.92, 1.08)
DRIFT_TINT = (0.97, 1.03)


def empty_board(
    seed: int,
    *,
    grounds: tuple[str, ...] = WIDE_GROUNDS,
    pieces: tuple[str, ...] = PIECE_FAMILIES,
    size: tuple[int, int] = (1280, 960),
    quan_pieces: bool = False,
    noise_seed: int = 1,
) -> NDArray[np.uint8]:
    """Scene ``seed``'s board before the spread: the same ground, chalk, camera and
    shadows with no piece on it (tally mode photographs it first), taken a little
    earlier: the light drifted (``DRIFT_GAIN``, ``DRIFT_TINT``) and the sensor's noise
    is a fresh draw (``noise_seed``: another frame). ``quan_pieces`` as the spread was
    drawn (it takes a draw)."""
    _, _, cond, _ = _setup(seed, grounds, pieces, size, quan_pieces)
    rng = np.random.default_rng([seed, 18])
    gain = float(rng.uniform(*DRIFT_GAIN))
    r, g, b = (float(t * rng.uniform(*DRIFT_TINT)) for t in cond.tint)
    tint = (r, g, b)
    cond = replace(cond, exposure=cond.exposure * gain, tint=tint)
    image, _ = render_scene(
        [0] * NUM_SQUARES, (0, 0), seed, size=size, noise_seed=noise_seed, **_fields(cond)
    )
    return image

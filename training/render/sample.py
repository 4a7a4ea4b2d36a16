"""Draw everything random about one scene from its seed: pure Python, no bpy.

`sample_scene(seed, ...)` returns a :class:`SceneSpec`: the board, the game position and
its physical piece list with drop positions, and every randomised condition as plain JSON
values. The Blender side only builds what the spec says, so the same seed gives the same
scene and the spec's randomisation can be tested without Blender.
"""

from __future__ import annotations

import colorsys
import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine import Game, Position
from training.render.families import GROUND_FAMILIES, PIECE_FAMILIES, check_families
from training.render.geometry import (
    REGIONS,
    Board,
    Camera,
    look_at_camera,
    make_board,
    region_of_index,
)
from training.render.lens import draw_k1

GENERATOR_VERSION = "oanquan-render 4"

# 36-mm-equivalent focal lengths of the cameras a referee might use
CAMERAS: dict[str, tuple[float, float]] = {
    "phone_main": (23.0, 28.0),
    "phone_tele": (45.0, 60.0),
    "pi_v2": (29.0, 30.5),
    "pi_v3": (26.0, 28.0),
    "pi_v3_wide": (15.0, 17.0),
    "pi_hq_6mm": (33.0, 35.0),
    "webcam": (28.0, 45.0),
}


@dataclass(frozen=True)
class PieceSpec:
    """One physical piece: what it is, where it is dropped from, which square it was meant for."""

    id: int
    kind: str  # "small" or "big"
    role: str  # "board" or "store"
    family: str  # pebbles, marbles, ... (a mixed set names each piece's own kind)
    intended_region: str | None
    size_m: float  # longest dimension
    scale: tuple[float, float, float]  # relative axes, longest 1
    colour: tuple[float, float, float]
    roughness: float
    shape_seed: int
    drop: tuple[float, float, float]  # start position in the board frame
    rotation: tuple[float, float, float]  # start Euler angles (radians)


@dataclass(frozen=True)
class SceneSpec:
    index: int
    seed: int
    dataset: str
    width: int
    height: int
    board: Board
    pieces: tuple[PieceSpec, ...]
    game: dict[str, Any]
    conditions: dict[str, Any] = field(default_factory=dict)

    def engine_counts(self) -> dict[str, dict[str, int]]:
        return self.game["engine_counts"]  # type: ignore[no-any-return]


# -- colours ------------------------------------------------------------------------------

STONE_PALETTE: dict[str, tuple[float, float, float]] = {
    "light_grey": (0.55, 0.55, 0.53),
    "dark_grey": (0.18, 0.18, 0.19),
    "near_black": (0.05, 0.05, 0.055),
    "beige": (0.62, 0.52, 0.38),
    "brown": (0.32, 0.2, 0.12),
    "reddish": (0.45, 0.18, 0.12),
    "ochre": (0.62, 0.42, 0.14),
    "green_grey": (0.3, 0.35, 0.28),
    "white_quartz": (0.85, 0.84, 0.8),
    "blue_grey": (0.3, 0.36, 0.45),
}


def _hsv(h: float, s: float, v: float) -> tuple[float, float, float]:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return round(r, 4), round(g, 4), round(b, 4)


def _jitter_colour(
    rgb: tuple[float, float, float], rng: random.Random, amount: float
) -> tuple[float, float, float]:
    k = rng.uniform(1 - amount, 1 + amount)
    return tuple(round(min(1.0, max(0.0, c * k * rng.uniform(0.93, 1.07))), 4) for c in rgb)  # type: ignore[return-value]


# -- counts -------------------------------------------------------------------------------


def _board_counts(position: Position) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for i in range(12):
        name = region_of_index(i)
        big = position.big[0 if i == 0 else 1] if i in (0, 6) else 0
        out[name] = {"small": position.board[i], "big": big}
    return {k: out[k] for k in REGIONS}


def _game_position(rng: random.Random, opening: bool) -> dict[str, Any]:
    """A position from random self-play, weighted towards plies with more and bigger piles."""
    game_seed = rng.randrange(2**31)
    grng = random.Random(game_seed)
    game = Game()
    history: list[tuple[Position, str | None]] = [(game.position, None)]
    while not game.is_over and len(game.moves) < 120:
        played = grng.choice(game.legal_moves())
        game.play(played)
        history.append((game.position, str(played)))
    if opening:
        chosen = 0
    else:
        weights = []
        for pos, _ in history[1:]:
            on = sum(pos.board)
            weights.append(on * (1 + max(pos.board)) + 1)
        chosen = 1 + rng.choices(range(len(weights)), weights=weights)[0]
    pos, move = history[chosen]
    return {
        "source": f"random self-play, game seed {game_seed}",
        "ply": pos.ply,
        "move": move,
        "engine_counts": _board_counts(pos),
        "captured_small": list(pos.store),
        "captured_big": list(pos.bigs),
    }


def _pile_position(rng: random.Random) -> dict[str, Any]:
    """Counts no game reaches quickly: many squares of 8-30, to teach big piles."""
    counts: dict[str, dict[str, int]] = {}
    for name in REGIONS:
        r = rng.random()
        n = rng.randint(8, 30) if r < 0.45 else rng.randint(0, 7) if r < 0.9 else 0
        big = int(name.endswith("mandarin") and rng.random() < 0.6)
        counts[name] = {"small": n, "big": big}
    total = sum(c["small"] for c in counts.values())
    while total > 170:  # keep the physics and the render affordable
        name = rng.choice(REGIONS)
        if counts[name]["small"] > 0:
            counts[name]["small"] -= 1
            total -= 1
    captured = [rng.randint(0, 30), rng.randint(0, 30)]
    return {
        "source": "pile-weighted synthetic counts",
        "ply": None,
        "move": None,
        "engine_counts": counts,
        "captured_small": captured,
        "captured_big": [0, 0],
    }


# -- conditions ---------------------------------------------------------------------------


def _ground(rng: random.Random, family: str) -> dict[str, Any]:
    """Parameters of a procedural ground material; the shader reads them by name."""
    p: dict[str, Any] = {"family": family, "seed": rng.randrange(10_000)}
    h = rng.random()
    if family == "asphalt":
        p |= {
            "base": _hsv(0.6, rng.uniform(0, 0.08), rng.uniform(0.06, 0.22)),
            "aggregate": _hsv(rng.random(), rng.uniform(0, 0.15), rng.uniform(0.25, 0.6)),
            "grain_mm": rng.uniform(3, 12),
            "wear": rng.uniform(0, 1),
        }
    elif family == "concrete":
        p |= {
            "base": _hsv(rng.uniform(0.05, 0.15), rng.uniform(0, 0.12), rng.uniform(0.35, 0.75)),
            "mottle": rng.uniform(0.05, 0.4),
            "cracks": rng.random() < 0.35,
            "joints_m": rng.choice([0.0, 0.0, rng.uniform(0.8, 2.0)]),
        }
    elif family == "earth":
        p |= {
            "base": _hsv(rng.uniform(0.02, 0.12), rng.uniform(0.25, 0.7), rng.uniform(0.12, 0.5)),
            "grit": rng.uniform(0.1, 0.8),
            "stones": rng.uniform(0, 0.5),
        }
    elif family == "sand":
        p |= {
            "base": _hsv(rng.uniform(0.08, 0.14), rng.uniform(0.2, 0.5), rng.uniform(0.5, 0.85)),
            "ripples": rng.uniform(0, 1),
            "grain_mm": rng.uniform(0.5, 2),
        }
    elif family == "gravel":
        p |= {
            "base": _hsv(rng.uniform(0.0, 0.15), rng.uniform(0.0, 0.3), rng.uniform(0.3, 0.7)),
            "stone_mm": rng.uniform(6, 25),
            "contrast": rng.uniform(0.3, 0.9),
        }
    elif family in ("slabs", "brick", "tiles", "wood", "lino"):
        if family == "slabs":
            size = rng.uniform(0.3, 0.9)
            col = _hsv(rng.uniform(0, 0.15), rng.uniform(0, 0.25), rng.uniform(0.3, 0.75))
            p |= {
                "tile_m": [size, size * rng.choice([1.0, 1.0, 0.5, 1.5])],
                "grout_mm": rng.uniform(3, 20),
                "offset": rng.choice([0.0, 0.5]),
            }
        elif family == "brick":
            col = _hsv(rng.uniform(0.0, 0.08), rng.uniform(0.4, 0.8), rng.uniform(0.2, 0.6))
            bw = rng.uniform(0.18, 0.25)
            p |= {
                "tile_m": [bw, bw * rng.uniform(0.3, 0.5)],
                "grout_mm": rng.uniform(5, 15),
                "offset": rng.choice([0.5, 0.5, 0.33]),
            }
        elif family == "tiles":
            size = rng.uniform(0.1, 0.6)
            col = _hsv(h, rng.uniform(0, 0.8), rng.uniform(0.2, 0.95))
            p |= {
                "tile_m": [size, size * rng.choice([1.0, 1.0, 1.0, 0.5, 2.0])],
                "grout_mm": rng.uniform(1, 12),
                "offset": rng.choice([0.0, 0.0, 0.5]),
                "glossy": rng.random() < 0.5,
                "checker": rng.random() < 0.25,
                "second": _hsv(rng.random(), rng.uniform(0, 0.8), rng.uniform(0.1, 0.95)),
            }
        elif family == "wood":
            col = _hsv(rng.uniform(0.04, 0.11), rng.uniform(0.3, 0.8), rng.uniform(0.15, 0.7))
            w = rng.uniform(0.07, 0.25)
            p |= {
                "tile_m": [w * rng.uniform(3, 10), w],
                "grout_mm": rng.uniform(0.5, 4),
                "offset": rng.uniform(0.2, 0.8),
                "parquet": rng.random() < 0.3,
                "grain": rng.uniform(0.2, 1.0),
                "glossy": rng.random() < 0.5,
            }
        else:  # lino
            col = _hsv(h, rng.uniform(0, 0.6), rng.uniform(0.2, 0.9))
            p |= {
                "tile_m": [rng.uniform(0.3, 1.0)] * 2,
                "grout_mm": rng.choice([0.0, 1.0]),
                "offset": 0.0,
                "speckle": rng.uniform(0, 0.5),
                "glossy": True,
                "second": _hsv(rng.random(), rng.uniform(0, 0.6), rng.uniform(0.2, 0.9)),
            }
        p["base"] = col
        p["grout"] = _hsv(rng.random(), rng.uniform(0, 0.2), rng.uniform(0.1, 0.8))
        p["variation"] = rng.uniform(0, 0.35)
    elif family == "woven_mat":
        p |= {
            "base": _hsv(rng.uniform(0.08, 0.14), rng.uniform(0.2, 0.6), rng.uniform(0.35, 0.8))
            if rng.random() < 0.6
            else _hsv(h, rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8)),
            "weave_mm": rng.uniform(4, 20),
            "second": _hsv(rng.random(), 0.5, 0.5),
        }
    elif family == "printed_mat":
        p |= {
            "base": _hsv(h, rng.uniform(0.2, 0.9), rng.uniform(0.3, 0.95)),
            "second": _hsv(rng.random(), rng.uniform(0.2, 0.9), rng.uniform(0.1, 0.9)),
            "pattern": rng.choice(["check", "stripes", "dots", "waves", "noise"]),
            "pattern_m": rng.uniform(0.02, 0.3),
        }
    elif family == "paper":
        p |= {
            "base": _hsv(rng.random(), rng.uniform(0, 0.5), rng.uniform(0.55, 0.95))
            if rng.random() < 0.5
            else _hsv(0.1, rng.uniform(0.1, 0.45), rng.uniform(0.4, 0.8)),
            "sheet_m": [rng.uniform(1.6, 3.5), rng.uniform(1.0, 2.0)],
            "crease": rng.uniform(0, 1),
            "floor": _hsv(rng.random(), rng.uniform(0, 0.4), rng.uniform(0.1, 0.6)),
        }
    else:  # pragma: no cover - families are checked on entry
        raise ValueError(family)
    p["roughness"] = round(rng.uniform(0.45, 0.95), 3)
    p["bump"] = round(rng.uniform(0.1, 1.0), 3)
    return p


LINE_COLOURS = {
    "white": (0.9, 0.9, 0.88),
    "yellow": (0.9, 0.8, 0.25),
    "pink": (0.9, 0.5, 0.65),
    "blue": (0.35, 0.55, 0.9),
    "green": (0.4, 0.8, 0.4),
    "orange": (0.95, 0.55, 0.2),
    "red": (0.8, 0.2, 0.18),
    "brick_red": (0.55, 0.22, 0.15),
    "black": (0.03, 0.03, 0.03),
    "charcoal": (0.06, 0.06, 0.065),
}


def _lines(rng: random.Random, ground: str) -> dict[str, Any]:
    hard = ground in ("tiles", "lino", "wood", "paper", "printed_mat", "woven_mat", "slabs")
    kinds = ["chalk", "charcoal", "marker", "paint", "tape", "scratched"]
    w = [
        6,
        1,
        2 if hard else 0.7,
        1,
        1.5 if hard else 0.5,
        1.5 if ground in ("earth", "sand") else 0,
    ]
    kind = rng.choices(kinds, weights=w)[0]
    if kind == "chalk":
        name = rng.choices(
            ["white", "yellow", "pink", "blue", "green", "orange", "brick_red", "any"],
            weights=[10, 2, 1.5, 1.5, 1, 1, 1.5, 1.5],
        )[0]
        width = rng.uniform(8, 26)
        wobble = rng.uniform(0, 8)
    elif kind == "charcoal":
        name, width, wobble = "charcoal", rng.uniform(5, 15), rng.uniform(0, 7)
    elif kind == "marker":
        name = rng.choice(["black", "blue", "red", "green", "any"])
        width, wobble = rng.uniform(2.5, 9), rng.uniform(0, 5)
    elif kind == "paint":
        name = rng.choice(["white", "yellow", "red", "blue", "any"])
        width, wobble = rng.uniform(12, 40), rng.uniform(0, 4)
    elif kind == "tape":
        name = rng.choice(["white", "yellow", "blue", "black", "red", "green", "any"])
        width, wobble = rng.uniform(18, 50), rng.uniform(0, 1.0)
    else:  # scratched into earth or sand with a stick
        name, width, wobble = "groove", rng.uniform(6, 18), rng.uniform(1, 8)
    if name == "any":
        colour = _hsv(rng.random(), rng.uniform(0.3, 1), rng.uniform(0.4, 1))
    elif name == "groove":
        colour = (0.0, 0.0, 0.0)
    else:
        colour = LINE_COLOURS[name]
    smooth = kind in ("tape", "paint", "marker")
    return {
        "kind": kind,
        "colour": name,
        "rgb": list(colour),
        "width_mm": round(width, 1),
        "width_variation": round(rng.uniform(0, 0.05 if smooth else 0.4), 3),
        "wobble_mm": round(wobble, 1),
        "opacity": round(rng.uniform(0.85, 1.0) if smooth else rng.uniform(0.45, 1.0), 3),
        "gaps_per_m": round(0.0 if kind == "tape" else rng.uniform(0, 2.5), 2),
        "overshoot_mm": round(rng.uniform(-20, 40) if kind != "tape" else rng.uniform(0, 30), 1),
        "retraced_strokes": rng.randint(0, 3) if kind in ("chalk", "charcoal") else 0,
        "rubbed_out": round(rng.uniform(0, 0.5) if rng.random() < 0.4 else 0.0, 3),
        "smudges": rng.randint(0, 8) if kind in ("chalk", "charcoal") else rng.randint(0, 2),
        "ghost_strokes": rng.randint(0, 4) if rng.random() < 0.35 else 0,
        "grain": round(rng.uniform(0.2, 0.9) if kind in ("chalk", "charcoal") else 0.05, 3),
        "seed": rng.randrange(2**31),
    }


def _piece_look(rng: random.Random, family: str, size: float) -> dict[str, Any]:
    """A set of pieces: its size, shapes and palette."""
    if family == "pebbles":
        names = rng.sample(sorted(STONE_PALETTE), rng.randint(1, 5))
        if rng.random() < 0.15:
            palette = [
                _hsv(rng.random(), rng.uniform(0.4, 0.9), rng.uniform(0.3, 0.9))
                for _ in range(rng.randint(1, 4))
            ]  # painted pebbles
            names = ["painted"]
        else:
            palette = [STONE_PALETTE[n] for n in names]
        return {
            "palette_names": names,
            "palette": palette,
            "flatness": round(rng.uniform(0.35, 0.9), 3),
            "irregularity": round(rng.uniform(0.02, 0.25), 3),
            "elongation": round(rng.uniform(0.6, 1.0), 3),
            "roughness": round(rng.uniform(0.3, 0.9), 3),
        }
    if family == "marbles":
        tints = [
            _hsv(rng.random(), rng.uniform(0.4, 1.0), rng.uniform(0.4, 1.0))
            for _ in range(rng.randint(1, 5))
        ]
        return {
            "palette": tints,
            "transmission": round(rng.uniform(0.4, 0.9), 3),
            "flatness": 1.0,
            "irregularity": 0.0,
            "elongation": 1.0,
            "roughness": 0.02,
            "cat_eye": rng.random() < 0.5,
        }
    if family == "beans":
        palette = rng.choice(
            [
                [(0.45, 0.08, 0.06)],
                [(0.05, 0.04, 0.04)],
                [(0.8, 0.72, 0.55)],
                [(0.6, 0.45, 0.2)],
                [(0.45, 0.08, 0.06), (0.8, 0.72, 0.55)],
                [(0.25, 0.35, 0.12)],
            ]
        )
        return {
            "palette": palette,
            "flatness": round(rng.uniform(0.45, 0.7), 3),
            "irregularity": 0.03,
            "elongation": round(rng.uniform(0.5, 0.75), 3),
            "roughness": round(rng.uniform(0.25, 0.6), 3),
        }
    if family == "shells":
        palette = [
            _hsv(rng.uniform(0.03, 0.12), rng.uniform(0.05, 0.5), rng.uniform(0.55, 0.95))
            for _ in range(rng.randint(1, 3))
        ]
        return {
            "palette": palette,
            "flatness": round(rng.uniform(0.3, 0.5), 3),
            "irregularity": 0.05,
            "elongation": round(rng.uniform(0.6, 0.9), 3),
            "roughness": round(rng.uniform(0.3, 0.7), 3),
            "ribs": rng.randint(8, 20),
        }
    if family == "buttons":
        palette = [
            _hsv(rng.random(), rng.uniform(0, 0.9), rng.uniform(0.1, 0.95))
            for _ in range(rng.randint(1, 5))
        ]
        return {
            "palette": palette,
            "flatness": round(rng.uniform(0.15, 0.3), 3),
            "irregularity": 0.0,
            "elongation": 1.0,
            "roughness": round(rng.uniform(0.15, 0.6), 3),
            "holes": rng.choice([2, 4]),
        }
    raise ValueError(family)  # pragma: no cover


SIZE_MM = {
    "pebbles": (12, 38),
    "marbles": (14, 25),
    "beans": (10, 20),
    "shells": (15, 35),
    "buttons": (10, 28),
}


@dataclass(frozen=True)
class PieceSet:
    """One scene's set of pieces: the kinds, their looks and the big stone, drawn once.

    :meth:`make` draws one physical piece of the set, so a game's sequence of frames can
    add the same kind of pebble later (a refill from the store) that the first frame had.
    """

    kinds: tuple[str, ...]
    looks: dict[str, dict[str, Any]]
    big_kind: str
    big_size: float
    big_colour: tuple[float, float, float]
    tight: float

    def info(self) -> dict[str, Any]:
        """conditions['pieces'] without the heaps."""
        return {
            "kinds": list(self.kinds),
            "looks": self.looks,
            "big_piece": self.big_kind,
            "big_size_mm": round(self.big_size * 1000, 1),
            "pile_tightness": round(self.tight, 3),
        }

    def make(
        self,
        rng: random.Random,
        piece_id: int,
        kind: str,
        role: str,
        region: str | None,
        xy: tuple[float, float],
        z: float,
        fam: str,
    ) -> PieceSpec:
        """A piece of this set (`kind` small or big) dropped from (xy, z)."""
        look = self.looks.get(fam, self.looks[self.kinds[0]])
        if kind == "big":
            size, colour, rough = self.big_size, _jitter_colour(self.big_colour, rng, 0.15), 0.6
            flat, el, fam_out = rng.uniform(0.45, 0.75), rng.uniform(0.7, 0.95), "big_stone"
        else:
            size = look["size_mm"] / 1000 * rng.uniform(0.8, 1.2)
            colour = _jitter_colour(tuple(rng.choice(look["palette"])), rng, 0.12)
            rough = look["roughness"]
            flat = look["flatness"] * (rng.uniform(0.85, 1.15) if look["flatness"] < 1 else 1)
            el = look["elongation"] * (rng.uniform(0.9, 1.1) if look["elongation"] < 1 else 1)
            fam_out = fam
        return PieceSpec(
            id=piece_id,
            kind=kind,
            role=role,
            family=fam_out,
            intended_region=region,
            size_m=round(size, 5),
            scale=(1.0, round(min(1.0, el), 3), round(min(1.0, flat), 3)),
            colour=colour,
            roughness=rough,
            shape_seed=rng.randrange(2**31),
            drop=(round(xy[0], 5), round(xy[1], 5), round(z, 5)),
            rotation=(rng.uniform(0, 6.283), rng.uniform(0, 6.283), rng.uniform(0, 6.283)),
        )


def _piece_set(
    rng: random.Random,
    board: Board,
    family: str,
    allowed: tuple[str, ...],
    scale: tuple[float, float] | None = None,
) -> PieceSet:
    """The kinds and looks of one scene's pieces. Each kind's size is drawn in millimetres
    and kept under a sixth of the square, or with ``scale`` as that share of the square
    (a third: large pieces on a small board); a big stone is 2-3 times the first kind,
    at most 0.35 of the square and at least 1.6 times its pieces."""
    square = min(board.square_m)
    if family == "mixed":
        kinds = rng.sample(
            [f for f in allowed if f != "mixed"],
            min(len([f for f in allowed if f != "mixed"]), rng.randint(2, 3)),
        )
    else:
        kinds = [family]
    looks: dict[str, dict[str, Any]] = {}
    for k in kinds:
        lo, hi = SIZE_MM[k]
        size = min(rng.uniform(lo, hi) / 1000, square * 0.17)
        # (with a scale the draw above is still made: rendered scenes keep their seeds' draws)
        if scale is not None:
            size = square * rng.uniform(*scale)
        looks[k] = _piece_look(rng, k, size) | {"size_mm": round(size * 1000, 1)}
    big_kind = rng.choice(["stone", "stone", "dark_stone", "light_stone", "big_same"])
    first = looks[kinds[0]]["size_mm"] / 1000
    big_size = min(first * rng.uniform(2.0, 3.0), max(square * 0.35, first * 1.6))
    big_colour = {
        "stone": STONE_PALETTE[rng.choice(sorted(STONE_PALETTE))],
        "dark_stone": STONE_PALETTE["near_black"],
        "light_stone": STONE_PALETTE["white_quartz"],
        "big_same": tuple(looks[kinds[0]]["palette"][0]),
    }[big_kind]
    tight = rng.uniform(0.4, 1.1)
    return PieceSet(tuple(kinds), looks, big_kind, big_size, big_colour, tight)


def region_centre(board: Board, name: str) -> tuple[float, float]:
    """Where a region's pile is centred: its polygon's mean, pulled towards the outer end
    in a mandarin (whose polygon mean sits near the arc's chord)."""
    poly = board.regions[name]
    cx = sum(p[0] for p in poly) / len(poly)
    cy = sum(p[1] for p in poly) / len(poly)
    if name == "west_mandarin":
        cx = (cx * 2 + board.corners[0][0]) / 3
    elif name == "east_mandarin":
        cx = (cx * 2 + board.corners[1][0]) / 3
    return cx, cy


def _pieces(
    rng: random.Random,
    board: Board,
    counts: dict[str, dict[str, int]],
    store: list[int],
    family: str,
    allowed: tuple[str, ...],
    heaps: bool,
    scale: tuple[float, float] | None = None,
) -> tuple[list[PieceSpec], dict[str, Any]]:
    pset = _piece_set(rng, board, family, allowed, scale)
    square = min(board.square_m)
    kinds, looks, big_size, tight = list(pset.kinds), pset.looks, pset.big_size, pset.tight
    pieces: list[PieceSpec] = []

    def make(
        kind: str, role: str, region: str | None, xy: tuple[float, float], z: float, fam: str
    ) -> None:
        pieces.append(pset.make(rng, len(pieces), kind, role, region, xy, z, fam))

    def pile(
        center: tuple[float, float],
        n: int,
        radius: float,
        size: float,
        region: str | None,
        role: str,
        big_first: bool,
    ) -> None:
        placed: list[tuple[float, float, float]] = []
        z0 = 0.0
        if big_first:
            make("big", role, region, center, big_size * 0.5 + 0.003, kinds[0])
            placed.append((center[0], center[1], big_size * 0.5 + 0.003))
            z0 = big_size * 0.6
        layer, tries, in_layer = 0, 0, 0
        todo = n
        while todo > 0:
            a = rng.uniform(0, 2 * math.pi)
            r = radius * math.sqrt(rng.random())
            x, y = center[0] + r * math.cos(a), center[1] + r * math.sin(a)
            z = z0 + size * (0.6 + 1.15 * layer)
            if all(
                (x - px) ** 2 + (y - py) ** 2 + (z - pz) ** 2 > (1.15 * size) ** 2
                for px, py, pz in placed[-60:]
            ):
                fam = rng.choice(kinds)
                make("small", role, region, (x, y), z, fam)
                placed.append((x, y, z))
                todo -= 1
                in_layer += 1
                tries = 0
            else:
                tries += 1
                if tries > 25:
                    layer, tries, in_layer = layer + 1, 0, 0

    size0 = looks[kinds[0]]["size_mm"] / 1000
    for name in REGIONS:
        n = counts[name]["small"]
        big = counts[name]["big"]
        cx, cy = region_centre(board, name)
        radius = min(0.3 * square, size0 * (0.5 + 0.45 * math.sqrt(n)) * tight)
        pile((cx, cy), n, radius, size0, name, "board", big > 0)
    heap_info: list[dict[str, Any]] = []
    if heaps:
        xmin, ymin, xmax, ymax = board.extent()
        for side, n in zip((-1, 1), store, strict=True):
            n = min(n, 40)
            if n == 0:
                continue
            x = rng.uniform(xmin * 0.7, xmax * 0.7)
            y = (ymax if side > 0 else ymin) + side * rng.uniform(0.06, 0.25)
            pile((x, y), n, size0 * (0.6 + 0.5 * math.sqrt(n)), size0, None, "store", False)
            heap_info.append(
                {
                    "side": "north" if side > 0 else "south",
                    "count": n,
                    "center_m": [round(x, 3), round(y, 3)],
                }
            )
    info = pset.info() | {"heaps": heap_info}
    return pieces, info


def _light(rng: random.Random) -> dict[str, Any]:
    t = rng.choices(["sun", "overcast", "indoor", "low_light"], weights=[45, 25, 22, 8])[0]
    out: dict[str, Any] = {"type": t, "seed": rng.randrange(10_000)}
    if t == "sun":
        elev = rng.uniform(12, 85)
        warm = max(0.0, 1 - elev / 35)
        out |= {
            "sun_elevation_deg": round(elev, 1),
            "sun_azimuth_deg": round(rng.uniform(0, 360), 1),
            "sun_strength": round(rng.uniform(2.5, 6.0), 2),
            "sun_angle_deg": round(rng.uniform(0.3, 2.5), 2),
            "sun_rgb": [1.0, round(1 - 0.25 * warm, 3), round(1 - 0.5 * warm, 3)],
            "sky_rgb": list(_hsv(rng.uniform(0.55, 0.62), rng.uniform(0.2, 0.6), 1.0)),
            "sky_strength": round(rng.uniform(0.3, 1.2), 3),
        }
    elif t == "overcast":
        out |= {
            "sky_rgb": list(_hsv(rng.uniform(0.5, 0.65), rng.uniform(0, 0.12), 1.0)),
            "sky_strength": round(rng.uniform(0.6, 2.0), 3),
        }
    else:
        lamps: list[dict[str, Any]] = []
        for _ in range(rng.randint(1, 3)):
            colour = (
                _hsv(rng.uniform(0.05, 0.15), rng.uniform(0.1, 0.6), 1.0)
                if rng.random() < 0.6
                else _hsv(rng.random(), rng.uniform(0, 0.8), 1.0)
            )
            a = rng.uniform(0, 2 * math.pi)
            d = rng.uniform(0.3, 2.5)
            lamps.append(
                {
                    "rgb": list(colour),
                    "power_w": round(rng.uniform(40, 400), 1),
                    "position_m": [
                        round(d * math.cos(a), 2),
                        round(d * math.sin(a), 2),
                        round(rng.uniform(1.2, 3.0), 2),
                    ],
                    "size_m": round(rng.uniform(0.05, 1.0), 3),
                }
            )
        if t == "low_light":
            for lamp in lamps:
                lamp["power_w"] = round(lamp["power_w"] * rng.uniform(0.05, 0.25), 2)
        out |= {
            "lamps": lamps,
            "ambient": round(rng.uniform(0.02, 0.25), 3),
            "ambient_rgb": list(_hsv(rng.random(), rng.uniform(0, 0.3), 1.0)),
            "window_light": rng.random() < 0.3,
        }
    return out


def _camera(rng: random.Random, board: Board, width: int, height: int) -> dict[str, Any]:
    tilt = 55 * math.sqrt(rng.random()) if rng.random() < 0.7 else rng.uniform(0, 55)
    yaw = rng.uniform(-28, 28) if rng.random() < 0.8 else rng.uniform(-180, 180)
    roll = rng.gauss(0, 3) if rng.random() < 0.85 else rng.uniform(-25, 25)
    fill = rng.uniform(0.55, 0.95)
    xmin, ymin, xmax, ymax = board.extent()
    length, depth = xmax - xmin, ymax - ymin
    off = rng.random() < 0.08
    target = [rng.gauss(0, 0.03), rng.gauss(0, 0.03)]
    if off:
        a = rng.uniform(0, 2 * math.pi)
        target = [0.35 * length * math.cos(a), 0.35 * depth * math.sin(a)]
    for _attempt in range(3):  # a big board needs a wide lens: nobody films it from 5 m
        device = rng.choice(sorted(CAMERAS))
        lo, hi = CAMERAS[device]
        focal = rng.uniform(lo, hi)
        cam = {
            "focal_mm_36mm_sensor": focal,
            "tilt_deg": tilt,
            "board_yaw_deg": yaw,
            "roll_deg": roll,
            "target_m": target,
            "distance_m": 1.5,
        }
        distance = fit_distance(cam, board, width, height, fill)
        if distance < 2.499:
            break
    fstop = rng.choice([2.8, 4.0, 5.6, 8.0, 8.0, 11.0, 11.0, 16.0, 16.0])  # 36-mm equivalent
    return {
        "device": device,
        "focal_mm_36mm_sensor": round(focal, 2),
        "tilt_deg": round(tilt, 2),
        "board_yaw_deg": round(yaw, 2),
        "roll_deg": round(roll, 2),
        "distance_m": round(distance, 3),
        "fill": round(fill, 3),
        "target_m": [round(target[0], 4), round(target[1], 4)],
        "aimed_off_board": off,
        "fstop": fstop,
        "focus_error": round(rng.gauss(0, 0.08) if rng.random() < 0.2 else 0.0, 3),
    }


def camera_from(c: dict[str, Any], width: int, height: int) -> Camera:
    """The pinhole camera that conditions['camera'] describes (Blender's camera copies it)."""
    tilt, yaw = math.radians(c["tilt_deg"]), math.radians(c["board_yaw_deg"])
    target = np.array([*c["target_m"], 0.0])
    back = np.array([math.sin(yaw), -math.cos(yaw)])  # horizontal, from target to camera
    d = c["distance_m"]
    eye = target + np.array([*(back * d * math.sin(tilt)), d * math.cos(tilt)])
    return look_at_camera(
        eye, target, c["roll_deg"], c["focal_mm_36mm_sensor"], width, height, away=-back
    )


def fit_distance(c: dict[str, Any], board: Board, width: int, height: int, fill: float) -> float:
    """Camera distance (0.8-2.5 m) at which the board's outline spans `fill` of the frame.

    Seen obliquely the near side looms larger, so the outline is projected and the
    distance rescaled a few times rather than guessed from the top-down size.
    """
    outline = np.array([p for poly in board.regions.values() for p in poly])
    pts = np.c_[outline, np.zeros(len(outline))]
    d = 1.5
    for _ in range(6):
        cam = camera_from({**c, "distance_m": d}, width, height)
        px = cam.project(pts)
        if not np.isfinite(px).all():
            d *= 1.5
            continue
        span = max(
            2 * float(np.abs(px[:, 0] - width / 2).max()) / width,
            2 * float(np.abs(px[:, 1] - height / 2).max()) / height,
        )
        d = float(np.clip(d * span / fill, 0.8, 2.5))
    return d


def hand_params(rng: random.Random) -> dict[str, Any]:
    """Where a hand and forearm reach over the board, and how they look (present or not aside)."""
    tone = rng.random()
    return {
        "from_side": rng.choices(["south", "north", "east", "west"], weights=[5, 3, 1, 1])[0],
        "height_m": round(rng.uniform(0.03, 0.22), 3),
        "over_region": rng.choice(REGIONS),
        "reach": round(rng.uniform(-0.1, 0.15), 3),
        "skin_rgb": [
            round(0.75 - 0.55 * tone, 3),
            round(0.55 - 0.42 * tone, 3),
            round(0.45 - 0.36 * tone, 3),
        ],
        "sleeve": rng.random() < 0.45,
        "sleeve_rgb": list(_hsv(rng.random(), rng.uniform(0, 0.8), rng.uniform(0.05, 0.9))),
        "spread": round(rng.uniform(0, 1), 3),
        "scale": round(rng.uniform(0.85, 1.15), 3),
    }


def _occluders(rng: random.Random, light: dict[str, Any]) -> dict[str, Any]:
    hand: dict[str, Any] = {"present": rng.random() < 0.15}
    if hand["present"]:
        hand |= hand_params(rng)
    return {"hand": hand, "shadows": _shadow_casters(rng, light)}


def _shadow_casters(rng: random.Random, light: dict[str, Any]) -> list[dict[str, Any]]:
    shadows: list[dict[str, Any]] = []
    if light["type"] in ("sun", "indoor") and rng.random() < 0.35:
        for _ in range(rng.randint(1, 2)):
            shadows.append(
                {
                    "type": rng.choice(["person", "person", "branch"]),
                    "angle_deg": round(rng.uniform(0, 360), 1),
                    "distance_m": round(rng.uniform(0.4, 1.4), 2),
                    "seed": rng.randrange(10_000),
                }
            )
    return shadows


def _post(rng: random.Random, light: dict[str, Any]) -> dict[str, Any]:
    low = light["type"] == "low_light"
    return {
        "exposure_ev": round(rng.gauss(0, 0.4), 3),
        "look": rng.choice(
            ["None", "Medium High Contrast", "Medium Low Contrast", "Base Contrast", "Punchy"]
        ),
        "noise_sigma": round(rng.uniform(4, 12) if low else rng.uniform(0, 4), 2),
        "wb_gain": [round(rng.gauss(1, 0.06), 3), 1.0, round(rng.gauss(1, 0.06), 3)],
        "vignette": round(rng.uniform(0, 0.35), 3),
        "motion_blur_px": round(rng.uniform(1.5, 6) if rng.random() < 0.12 else 0.0, 2),
        "motion_blur_deg": round(rng.uniform(0, 180), 1),
        "sharpen": round(rng.uniform(0, 0.7), 3),
        "jpeg_quality": rng.randint(55, 95),
        "seed": rng.randrange(2**31),
    }


def _with_lens(camera: dict[str, Any], seed: int, lens: bool) -> dict[str, Any]:
    """The camera with a lens drawn for its kind, from a stream of its own: a manifest
    that turns lenses on draws every other condition of a seed as one without."""
    if not lens:
        return camera
    return camera | {"lens_k1": draw_k1(random.Random(f"lens {seed}"), camera["device"])}


def sample_scene(
    index: int,
    seed: int,
    *,
    dataset: str = "train-v1",
    width: int = 1280,
    height: int = 960,
    grounds: tuple[str, ...] = GROUND_FAMILIES,
    pieces: tuple[str, ...] = PIECE_FAMILIES,
    lens: bool = False,
    piece_scale: tuple[float, float] | None = None,
) -> SceneSpec:
    """Everything random about scene `index`, drawn from `seed` alone (``lens``: bend it
    through a lens of its camera's kind, ``training.render.lens``; ``piece_scale``: the
    pieces' size as a share of the square, ``_piece_set``)."""
    check_families(grounds, pieces)
    rng = random.Random(seed)
    mode = rng.choices(["opening", "game", "piles"], weights=[6, 54, 40])[0]
    game = _pile_position(rng) if mode == "piles" else _game_position(rng, mode == "opening")
    square = rng.triangular(0.15, 0.45, 0.22)  # most boards are drawn with ~20 cm squares
    aspect = rng.uniform(0.9, 1.15)
    board = make_board(square, aspect, rng, irregularity=rng.uniform(0.3, 1.5))
    ground_family = rng.choice(grounds)
    piece_family = rng.choice(pieces)
    heaps = rng.random() < 0.5 and sum(game["captured_small"]) > 0
    plist, piece_info = _pieces(
        rng,
        board,
        game["engine_counts"],
        game["captured_small"],
        piece_family,
        pieces,
        heaps,
        piece_scale,
    )
    light = _light(rng)
    camera = _with_lens(_camera(rng, board, width, height), seed, lens)
    conditions: dict[str, Any] = {
        "split": dataset,
        "seed": {"seed": seed, "index": index},
        "generator": GENERATOR_VERSION,
        "count_mode": mode,
        "ground_family": ground_family,
        "piece_family": piece_family,
        "ground": ground_family,
        "ground_params": _ground(rng, ground_family),
        "lines": _lines(rng, ground_family),
        "pieces": piece_info,
        "light": light,
        "tilt_deg": camera["tilt_deg"],
        "yaw_deg": camera["board_yaw_deg"],
        "roll_deg": camera["roll_deg"],
        "camera": camera,
        "occluders": _occluders(rng, light),
        "store_heaps": heaps,
        "post": _post(rng, light),
        "board_square_m": [round(v, 4) for v in board.square_m],
    }
    conditions["hand"] = conditions["occluders"]["hand"]["present"]
    return SceneSpec(index, seed, dataset, width, height, board, tuple(plist), game, conditions)


# -- sequences: one fixed scene for every frame of a game -----------------------------------


@dataclass(frozen=True)
class SequenceScene:
    """What stays fixed over the frames of one game: the scene and its set of pieces.

    `spec` has no pieces and no game: each frame fills them in. `heaps` holds the
    centres of the captured heaps beside the board (south for player 0, north for
    player 1), or None when the players keep captured pebbles out of view.
    """

    spec: SceneSpec
    piece_set: PieceSet
    heaps: tuple[tuple[float, float], tuple[float, float]] | None


def _aim_at_board(
    rng: random.Random, camera: dict[str, Any], board: Board, width: int, height: int
) -> dict[str, Any]:
    """A referee's camera is set up to see the whole board: re-aim one drawn off the board."""
    if not camera["aimed_off_board"]:
        return camera
    target = [rng.gauss(0, 0.03), rng.gauss(0, 0.03)]
    cam = {**camera, "target_m": target, "distance_m": 1.5}
    distance = fit_distance(cam, board, width, height, camera["fill"])
    return camera | {
        "target_m": [round(target[0], 4), round(target[1], 4)],
        "distance_m": round(distance, 3),
        "aimed_off_board": False,
    }


def sample_sequence_scene(
    index: int,
    seed: int,
    *,
    dataset: str,
    width: int = 1280,
    height: int = 960,
    grounds: tuple[str, ...] = GROUND_FAMILIES,
    pieces: tuple[str, ...] = PIECE_FAMILIES,
    lens: bool = False,
    piece_scale: tuple[float, float] | None = None,
) -> SequenceScene:
    """The fixed scene of sequence `index`, drawn from `seed` alone.

    Drawn like a single scene (same board, grounds, lines, pieces, light, camera and
    camera effects) except what a fixed referee camera rules out: it always sees the
    whole board and is held still (no motion blur). Hands come per frame.
    """
    check_families(grounds, pieces)
    rng = random.Random(seed)
    square = rng.triangular(0.15, 0.45, 0.22)
    aspect = rng.uniform(0.9, 1.15)
    board = make_board(square, aspect, rng, irregularity=rng.uniform(0.3, 1.5))
    ground_family = rng.choice(grounds)
    piece_family = rng.choice(pieces)
    pset = _piece_set(rng, board, piece_family, pieces, piece_scale)
    heaps: tuple[tuple[float, float], tuple[float, float]] | None = None
    if rng.random() < 0.5:
        xmin, ymin, xmax, ymax = board.extent()
        south = (rng.uniform(xmin * 0.7, xmax * 0.7), ymin - rng.uniform(0.06, 0.25))
        north = (rng.uniform(xmin * 0.7, xmax * 0.7), ymax + rng.uniform(0.06, 0.25))
        heaps = (
            (round(south[0], 4), round(south[1], 4)),
            (round(north[0], 4), round(north[1], 4)),
        )
    light = _light(rng)
    camera = _aim_at_board(rng, _camera(rng, board, width, height), board, width, height)
    camera = _with_lens(camera, seed, lens)
    post = _post(rng, light) | {"motion_blur_px": 0.0}
    conditions: dict[str, Any] = {
        "split": dataset,
        "seed": {"seed": seed, "index": index, "sequence": True},
        "generator": GENERATOR_VERSION,
        "count_mode": "sequence",
        "ground_family": ground_family,
        "piece_family": piece_family,
        "ground": ground_family,
        "ground_params": _ground(rng, ground_family),
        "lines": _lines(rng, ground_family),
        "pieces": pset.info() | {"kind": piece_family},
        "light": light,
        "tilt_deg": camera["tilt_deg"],
        "yaw_deg": camera["board_yaw_deg"],
        "roll_deg": camera["roll_deg"],
        "camera": camera,
        "occluders": {"hand": {"present": False}, "shadows": _shadow_casters(rng, light)},
        "store_heaps": heaps is not None,
        "post": post,
        "board_square_m": [round(v, 4) for v in board.square_m],
        "hand": False,
    }
    spec = SceneSpec(index, seed, dataset, width, height, board, (), {}, conditions)
    return SequenceScene(spec, pset, heaps)

"""The bundled demo game (companion/commands/demo_frames): its frames and its scene.

The game is the rules' worked full game (V40: 9 plies from the opening to a 52-18
finish) with what happens at a real board: a refill with borrowed pebbles, a pebble
sown into the wrong square and put right, a hand still over the board. The scene is
the first demo seed whose draw is an ordinary daylight board a referee camera is set
up for (white chalk on concrete or earth, camera about 1.3 m above, board filling the
frame, pebbles 15+ px wide): chosen by rule from the generator's normal range, not
tuned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from engine import Game, Position
from training.render.geometry import region_of_index
from training.render.sample import (
    SequenceScene,
    camera_from,
    fit_distance,
    sample_sequence_scene,
)
from training.render.sequence.plan import FramePlan, Op, OpKind, move_ops

#: V40 of the rules; companion/commands/demo.py plays the same moves (a test checks).
DEMO_GAME: tuple[str, ...] = ("5-", "9-", "4+", "9+", "5-", "9-", "5-", "7+", "5-")
DEMO_NAME = "demo-v1"
DEMO_SEED_START = 5_000_000
#: find_demo_seed(): the first seed from DEMO_SEED_START that passes demo_ok
DEMO_SEED = 5_014_159
DEMO_SIZE = (1280, 960)
#: JPEG quality of the bundled files (they ship in git): within the generator's 55-95.
DEMO_JPEG_QUALITY = 80
MIN_PEBBLE_PX = 15.0


@dataclass(frozen=True)
class ScriptStep:
    """One entry of demo_frames/script.json (read by companion/commands/demo.py)."""

    file: str
    caption: str
    presses: list[str] = field(default_factory=list)
    ply: int | None = None


def demo_frames() -> list[FramePlan]:
    """The 13 frames of the bundled game, in order."""
    game = Game()
    frames: list[FramePlan] = []

    def shoot(
        ply: int | None, move: str | None, ops: tuple[Op, ...], caption: str, **kw: Any
    ) -> None:
        frames.append(
            FramePlan(
                len(frames), ply, move, ops, kw.get("hand", False), caption, kw.get("mover", 0)
            )
        )

    shoot(0, None, (), "the opening: 5 pebbles a square, a big stone in each quan")
    for ply, move in enumerate(DEMO_GAME, start=1):
        mover = game.position.to_move
        before = game.position
        t = game.play(move)
        during, after = move_ops(t)
        said = f"P{mover} plays {move}"
        if ply == 4:  # one pebble lands a square too far: a dispute, then the board put right
            board = _board_after(before, during)
            donor = next(sq for sq in (3, 4, 5, 2) if board[sq] > 0)
            src, dst = region_of_index(donor), region_of_index((donor + 1) % 12)
            wrong = (Op(OpKind.PICK, src, count=1), Op(OpKind.DROP, dst))
            shoot(
                None,
                move,
                during + wrong,
                f"{said}, but one pebble lands in the wrong square",
                mover=mover,
            )
            fix = (Op(OpKind.PICK, dst, count=1), Op(OpKind.DROP, src))
            shoot(ply, None, fix + after, "the players put the pebble right", mover=mover)
        elif ply == 6:
            shoot(
                None,
                move,
                during + after,
                f"{said}; a hand is still over the board",
                hand=True,
                mover=mover,
            )
            shoot(ply, None, (), "the hand is gone", mover=mover)
        else:
            shoot(ply, move, during, said, mover=mover)
            if after:
                player = t.position.to_move
                borrowed = sum(e[2] for e in t.refills)
                lender = 1 - player
                shoot(
                    ply,
                    None,
                    after,
                    f"P{player} refills with {borrowed} pebbles borrowed from P{lender}",
                    mover=player,
                )
    return frames


def _board_after(before: Position, ops: tuple[Op, ...]) -> list[int]:
    """Small pebbles per square after the operations (to pick the misplaced pebble's square)."""
    from training.render.sequence.plan import apply_ops, initial_layout

    layout, kinds = initial_layout(before)
    counts = apply_ops(layout, ops, kinds).layout.counts(kinds)
    return [counts[region_of_index(sq)]["small"] for sq in range(12)]


def script(frames: list[FramePlan]) -> list[ScriptStep]:
    """script.json's entries: each frame's file, caption, presses and the ply players know."""
    return [
        ScriptStep(
            f"frame_{f.index:02d}.jpg", f.caption, ["ok", "back"] if f.index == 0 else [], f.ply
        )
        for f in frames
    ]


def pebble_px(scene: SequenceScene) -> float:
    """How many pixels wide the set's smallest pebbles (0.8 x the drawn size) are at the
    board's centre, seen from the camera's distance."""
    spec = scene.spec
    c = spec.conditions["camera"]
    cam = camera_from(c, spec.width, spec.height)
    size = min(float(look["size_mm"]) for look in scene.piece_set.looks.values()) / 1000 * 0.8
    return float(cam.K[0, 0]) * size / float(c["distance_m"])


def _luma(rgb: Any) -> float:
    return float(0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2])


def _natural_contrasting_stones(scene: SequenceScene) -> bool:
    """A set of two or more natural stone colours that stand out from the ground."""
    look = scene.piece_set.looks["pebbles"]
    ground = _luma(scene.spec.conditions["ground_params"]["base"])
    return (
        "painted" not in look["palette_names"]
        and len(look["palette"]) >= 2
        and all(abs(_luma(c) - ground) >= 0.15 for c in look["palette"])
    )


#: The demo's camera mount, every value inside the generator's ranges (sample.py): a Pi
#: Camera 3 on a pole, nearly overhead, the board filling most of the frame. A camera set
#: up for refereeing is aimed, not drawn: only the distance follows the drawn board's size.
DEMO_CAMERA: dict[str, Any] = {
    "device": "pi_v3",
    "focal_mm_36mm_sensor": 27.0,
    "tilt_deg": 8.0,
    "board_yaw_deg": 3.0,
    "roll_deg": 0.5,
    "fill": 0.88,
    "target_m": [0.0, -0.02],
    "aimed_off_board": False,
    "fstop": 8.0,
    "focus_error": 0.0,
}


def mount_camera(scene: SequenceScene) -> SequenceScene:
    """The scene seen through DEMO_CAMERA, at the distance that frames its board."""
    spec = scene.spec
    cam = DEMO_CAMERA | {"distance_m": 1.5}
    distance = fit_distance(cam, spec.board, spec.width, spec.height, cam["fill"])
    cam |= {"distance_m": round(distance, 3)}
    conditions = spec.conditions | {
        "camera": cam,
        "tilt_deg": cam["tilt_deg"],
        "yaw_deg": cam["board_yaw_deg"],
        "roll_deg": cam["roll_deg"],
    }
    return replace(scene, spec=replace(spec, conditions=conditions))


def demo_ok(scene: SequenceScene) -> bool:
    """An ordinary board on an ordinary day, as the demo should show (camera mounted)."""
    c = scene.spec.conditions
    cam, light, lines, post = c["camera"], c["light"], c["lines"], c["post"]
    height = cam["distance_m"] * math.cos(math.radians(cam["tilt_deg"]))
    return (
        lines["kind"] == "chalk"
        and lines["colour"] == "white"
        and lines["rubbed_out"] == 0.0
        and lines["ghost_strokes"] == 0
        and (
            light["type"] == "overcast"
            or (light["type"] == "sun" and light["sun_elevation_deg"] > 40)
        )
        and not c["occluders"]["shadows"]
        and scene.heaps is None
        and _natural_contrasting_stones(scene)
        and 1.15 <= height <= 1.45
        and post["noise_sigma"] <= 2.0
        and abs(post["exposure_ev"]) <= 0.4
        and pebble_px(scene) >= MIN_PEBBLE_PX
    )


def demo_scene_at(size: tuple[int, int] = DEMO_SIZE, seed: int | None = None) -> SequenceScene:
    """The demo's scene (DEMO_SEED unless `seed`), its camera mounted, at `size`."""
    scene = sample_sequence_scene(
        0,
        DEMO_SEED if seed is None else seed,
        dataset=DEMO_NAME,
        width=size[0],
        height=size[1],
        grounds=("concrete", "earth"),
        pieces=("pebbles",),
    )
    return mount_camera(scene)


def find_demo_seed(tries: int = 100_000) -> int:
    """The first seed from DEMO_SEED_START whose scene passes :func:`demo_ok` (DEMO_SEED)."""
    for i in range(tries):
        if demo_ok(demo_scene_at(DEMO_SIZE, DEMO_SEED_START + i)):
            return DEMO_SEED_START + i
    raise RuntimeError(f"no demo scene among {tries} seeds")  # pragma: no cover

"""One frame of a sequence as a scene spec, and its truth in render-public's sequence format.

Pure Python and numpy (no bpy). Every piece of the game is drawn once (its look lasts
the game); a frame lists the pieces in view, gives the ones that kept their place the
pose they came to rest in on an earlier frame, and drop points above the pile to the
pieces that arrived. The light drifts a little from frame to frame, the sensor noise
differs, and a hand may hover over the squares the last move touched.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from training.render.geometry import REGIONS
from training.render.sample import (
    PieceSpec,
    SceneSpec,
    SequenceScene,
    hand_params,
    region_centre,
)
from training.render.sequence.plan import STORES, FramePlan, Layout

#: A resting pose: position in the board frame (m) and rotation quaternion (w, x, y, z).
Pose = tuple[float, ...]
NOTE = "pebble ids persist across frames; unchanged regions keep identical arrangements"


def frame_rng(seed: int, index: int, what: str) -> random.Random:
    """An independent stream per sequence, frame and purpose, so resuming changes nothing."""
    return random.Random(f"oanquan-sequence {seed} {index} {what}")


def catalogue(scene: SequenceScene, kinds: Mapping[int, str]) -> dict[int, PieceSpec]:
    """Every piece of the game, with the look it keeps from frame to frame."""
    rng = frame_rng(scene.spec.seed, 0, "pieces")
    pset = scene.piece_set
    out: dict[int, PieceSpec] = {}
    for i in sorted(kinds):
        fam = pset.kinds[0] if kinds[i] == "big" else rng.choice(pset.kinds)
        out[i] = pset.make(rng, i, kinds[i], "board", None, (0.0, 0.0), 0.0, fam)
    return out


def _centre(scene: SequenceScene, place: str) -> tuple[float, float]:
    if place in STORES:
        assert scene.heaps is not None
        return scene.heaps[STORES.index(place)]
    return region_centre(scene.spec.board, place)


def _radius(scene: SequenceScene, place: str, n: int) -> float:
    size0 = float(scene.piece_set.looks[scene.piece_set.kinds[0]]["size_mm"]) / 1000
    if place in STORES:
        return size0 * (0.6 + 0.5 * math.sqrt(n))
    square = min(scene.spec.board.square_m)
    return min(0.3 * square, size0 * (0.5 + 0.45 * math.sqrt(n)) * scene.piece_set.tight)


def drop_points(
    rng: random.Random,
    centre: tuple[float, float],
    radius: float,
    new: Sequence[PieceSpec],
    kept: Sequence[tuple[float, float, float, float]],
) -> list[tuple[float, float, float]]:
    """Where to drop `new` pieces into a pile whose resting pieces are `kept` (x, y, z, size).

    A big stone goes to the centre first; pebbles fall at random within `radius`, just
    above whatever rests beneath them, never inside one another (layer by layer when the
    spot is crowded), as the first frame's piles are dropped.
    """
    placed: list[tuple[float, float, float]] = []

    def under(x: float, y: float, size: float) -> float:
        tops = [
            kz + ks / 2 for kx, ky, kz, ks in kept if math.hypot(kx - x, ky - y) < (ks + size) / 2
        ]
        return max(tops, default=0.0)

    for p in new:
        size = p.size_m
        if p.kind == "big":
            x, y = centre
            z = under(x, y, size) + size * 0.5 + 0.003
            placed.append((x, y, z))
            continue
        layer, tries = 0, 0
        while True:
            a = rng.uniform(0, 2 * math.pi)
            r = radius * math.sqrt(rng.random())
            x, y = centre[0] + r * math.cos(a), centre[1] + r * math.sin(a)
            z = under(x, y, size) + size * (0.6 + 1.15 * layer)
            if all(
                (x - px) ** 2 + (y - py) ** 2 + (z - pz) ** 2 > (1.15 * size) ** 2
                for px, py, pz in placed[-60:]
            ):
                break
            tries += 1
            if tries > 25:
                layer, tries = layer + 1, 0
        placed.append((x, y, z))
    return placed


def drift_light(light: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The light of one frame: the sun moves a little, clouds and lamps vary a few percent."""
    out = dict(light)

    def vary(key: str, sigma: float) -> None:
        out[key] = round(light[key] * (1 + rng.gauss(0, sigma)), 3)

    if light["type"] == "sun":
        out["sun_elevation_deg"] = round(light["sun_elevation_deg"] + rng.gauss(0, 0.3), 2)
        out["sun_azimuth_deg"] = round(light["sun_azimuth_deg"] + rng.gauss(0, 0.4), 2)
        vary("sun_strength", 0.03)
        vary("sky_strength", 0.03)
    elif light["type"] == "overcast":
        vary("sky_strength", 0.04)
    else:
        out["lamps"] = [
            lamp | {"power_w": round(lamp["power_w"] * (1 + rng.gauss(0, 0.02)), 2)}
            for lamp in light["lamps"]
        ]
    return out


def frame_hand(rng: random.Random, frame: FramePlan, changed: Sequence[str]) -> dict[str, Any]:
    """An arm over the board: mostly the mover's, over a square the move just touched."""
    if not frame.hand:
        return {"present": False}
    hand = {"present": True} | hand_params(rng)
    if changed:
        hand["over_region"] = rng.choice(list(changed))
    if rng.random() < 0.8:
        hand["from_side"] = ("south", "north")[frame.mover]
    return hand


@dataclass(frozen=True)
class Frame:
    """A frame ready to render: its spec (pieces in view) and the poses of those that stay."""

    spec: SceneSpec
    kept: dict[int, Pose]
    changed: tuple[str, ...]
    picked_up: tuple[str, ...]


def build_frame(
    scene: SequenceScene,
    pieces: Mapping[int, PieceSpec],
    layout: Layout,
    arrived: frozenset[int],
    before: Mapping[int, Pose],
    frame: FramePlan,
    changed: Sequence[str],
    picked_up: Sequence[str],
    game: dict[str, Any],
) -> Frame:
    """The frame's spec: every piece in view (those on the heaps only when heaps are shown).

    A piece keeps its pose from `before` unless it `arrived` this frame (or was not in view
    before); the others get drop points.
    """
    seed = scene.spec.seed
    places = [*REGIONS, *(STORES if scene.heaps is not None else ())]
    drops = frame_rng(seed, frame.index, "drops")
    out: list[PieceSpec] = []
    kept: dict[int, Pose] = {}
    for place in places:
        ids = layout.of(place)
        role, region = ("store", None) if place in STORES else ("board", place)
        stay = [i for i in ids if i in before and i not in arrived]
        new = sorted((pieces[i] for i in ids if i not in stay), key=lambda p: p.kind != "big")
        resting = [(before[i][0], before[i][1], before[i][2], pieces[i].size_m) for i in stay]
        points = drop_points(
            drops, _centre(scene, place), _radius(scene, place, len(ids)), new, resting
        )
        for i in stay:
            kept[i] = before[i]
            at = (before[i][0], before[i][1], before[i][2])
            out.append(replace(pieces[i], role=role, intended_region=region, drop=at))
        for p, xyz in zip(new, points, strict=True):
            rot = (drops.uniform(0, 6.283), drops.uniform(0, 6.283), drops.uniform(0, 6.283))
            drop = (round(xyz[0], 5), round(xyz[1], 5), round(xyz[2], 5))
            out.append(replace(p, role=role, intended_region=region, drop=drop, rotation=rot))
    out.sort(key=lambda p: p.id)
    base = scene.spec.conditions
    hand = frame_hand(frame_rng(seed, frame.index, "hand"), frame, changed)
    light = drift_light(base["light"], frame_rng(seed, frame.index, "light"))
    conditions = base | {
        "light": light,
        "occluders": {"hand": hand, "shadows": base["occluders"]["shadows"]},
        "hand": hand["present"],
        "post": base["post"] | {"seed": frame_rng(seed, frame.index, "post").randrange(2**31)},
        "pieces": base["pieces"] | {"heaps": _heaps(scene, layout)},
    }
    spec = replace(scene.spec, pieces=tuple(out), game=game, conditions=conditions)
    return Frame(spec, kept, tuple(changed), tuple(picked_up))


def _heaps(scene: SequenceScene, layout: Layout) -> list[dict[str, Any]]:
    if scene.heaps is None:
        return []
    return [
        {"side": side, "count": len(layout.of(store)), "center_m": list(scene.heaps[k])}
        for k, (side, store) in enumerate(zip(("south", "north"), STORES, strict=True))
        if layout.of(store)
    ]


def sequence_truth(
    truth: dict[str, Any], frame: Frame, index: int, n_frames: int, poses: Sequence[Pose]
) -> dict[str, Any]:
    """Add render-public's `sequence` key and each piece's resting pose to a frame's truth.

    The pose (`pose`: x, y, z in metres, then the rotation quaternion w, x, y, z) is an
    addition to render-public's keys: the next frame starts from it, and a stopped run
    resumes from it exactly.
    """
    pieces = [p | {"pose": list(pose)} for p, pose in zip(truth["pieces"], poses, strict=True)]
    return truth | {
        "pieces": pieces,
        "sequence": {
            "frame": index,
            "n_frames": n_frames,
            "changed_regions": list(frame.changed),
            "picked_up_regions": list(frame.picked_up),
            "note": NOTE,
        },
    }


def poses_of(truth: Mapping[str, Any]) -> dict[int, Pose]:
    """The resting poses a frame's truth recorded, by piece id (to continue from it)."""
    return {int(p["id"]): tuple(float(v) for v in p["pose"]) for p in truth["pieces"]}

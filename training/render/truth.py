"""Assemble one scene's ground truth in render-public's JSON format: pure numpy, no bpy.

Inputs are the scene spec, the pieces' settled positions and sizes, the ray-cast
visibility and the camera; the keys and their meaning follow
../shared/datasets/render-public/README.md so one loader reads both datasets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from training.render.geometry import (
    CORNER_ORDER,
    REGIONS,
    Camera,
    line_distance,
    polygon_area,
    region_at,
)
from training.render.lens import bend_truth
from training.render.sample import SceneSpec

AMBIGUOUS_M = 0.005  # a piece whose centre is this close to a line is ambiguous
COVERED = 0.05  # a region counts as covered by the hand above this occluded share

TOP_KEYS: tuple[str, ...] = (
    "image",
    "width",
    "height",
    "corners",
    "corner_order",
    "regions",
    "counts",
    "totals",
    "pieces",
    "board_partially_outside",
    "board_visible_fraction",
    "hand",
    "board_m",
    "camera_model",
    "conditions",
    "game",
)
REGION_KEYS: tuple[str, ...] = (
    "count",
    "big",
    "polygon",
    "ambiguous",
    "in_frame_fraction",
    "occluded_fraction",
    "hidden_pieces",
)
PIECE_KEYS: tuple[str, ...] = (
    "id",
    "kind",
    "region",
    "on_board",
    "role",
    "intended_region",
    "position_m",
    "center_mm",
    "height_mm",
    "center_px",
    "in_frame",
    "visible",
    "visible_fraction",
    "top_visible",
    "ambiguous",
    "line_distance_mm",
    "size_mm",
)


def _px(cam: Camera, pts_m: Sequence[tuple[float, float]] | np.ndarray) -> list[list[float]]:
    arr = np.asarray(pts_m, dtype=float)
    px = cam.project(np.c_[arr, np.zeros(len(arr))])
    return [[round(float(x), 2), round(float(y), 2)] for x, y in px]


def truth_of_render(
    spec: SceneSpec, image_name: str, res: dict[str, Any], total_seconds: float
) -> dict[str, Any]:
    """The truth of one rendered image from what ``blender.render_scene``/``render_frame``
    returned: one place decides which render facts the conditions record."""
    return build_truth(
        spec,
        image_name,
        res["camera"],
        res["positions"],
        res["sizes"],
        res["visibility"],
        {
            "renderer": res["renderer"],
            "physics": res["physics"],
            "shadow_casters": res["casters"],
            "cycles_samples": res["samples"],
            "denoiser": res["denoiser"],
            "render_seconds": res["render_seconds"],
            "build_seconds": res["build_seconds"],
            "total_seconds": round(total_seconds, 2),
        },
    )


def build_truth(
    spec: SceneSpec,
    image_name: str,
    cam: Camera,
    positions: np.ndarray,
    sizes: list[float],
    visibility: dict[str, Any],
    extra_conditions: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON object for one image (keys in TOP_KEYS order)."""
    board = spec.board
    centers_px = cam.project(positions) if len(positions) else np.zeros((0, 2))
    in_frame = cam.in_frame(centers_px) if len(positions) else np.zeros(0, bool)
    pieces: list[dict[str, Any]] = []
    per_region: dict[str, dict[str, int]] = {
        r: {"small": 0, "big": 0, "ambiguous": 0, "hidden": 0, "hand_hidden": 0} for r in REGIONS
    }
    for k, p in enumerate(spec.pieces):
        x, y, z = (float(v) for v in positions[k])
        region = region_at(board, (x, y))
        dist = line_distance(board, (x, y))
        amb = dist < AMBIGUOUS_M
        vis = bool(visibility["visible"][k])
        if region is not None:
            acc = per_region[region]
            acc[p.kind] += 1
            acc["ambiguous"] += int(amb)
            acc["hidden"] += int(not vis)
            acc["hand_hidden"] += int(bool(visibility["hidden_by_hand"][k]))
        cpx = centers_px[k]
        pieces.append(
            {
                "id": p.id,
                "kind": p.kind,
                "region": region,
                "on_board": region is not None,
                "role": p.role,
                "intended_region": p.intended_region,
                "family": p.family,
                "position_m": [round(x, 4), round(y, 4), round(z, 4)],
                "center_mm": [round(x * 1000, 1), round(y * 1000, 1)],
                "height_mm": round(z * 1000, 1),
                "center_px": (
                    [round(float(cpx[0]), 1), round(float(cpx[1]), 1)]
                    if np.isfinite(cpx).all()
                    else None
                ),
                "in_frame": bool(in_frame[k]),
                "visible": vis,
                "visible_fraction": float(visibility["visible_fraction"][k]),
                "top_visible": bool(visibility["top_visible"][k]),
                "ambiguous": bool(amb),
                "line_distance_mm": round(dist * 1000, 1),
                "size_mm": round(float(sizes[k]) * 1000, 1),
            }
        )
    regions: dict[str, Any] = {}
    for r in REGIONS:
        acc = per_region[r]
        regions[r] = {
            "count": acc["small"],
            "big": acc["big"],
            "polygon": _px(cam, board.regions[r]),
            "ambiguous": acc["ambiguous"],
            "in_frame_fraction": float(visibility["in_frame_fraction"][r]),
            "occluded_fraction": float(visibility["occluded_fraction"][r]),
            "hidden_pieces": acc["hidden"],
        }
    counts = {r: {"small": regions[r]["count"], "big": regions[r]["big"]} for r in REGIONS}
    areas = {r: polygon_area(np.asarray(board.regions[r])) for r in REGIONS}
    vis_frac = sum(areas[r] * regions[r]["in_frame_fraction"] for r in REGIONS) / sum(
        areas.values()
    )
    corners_px = _px(cam, list(board.corners))
    outline = [p for r in REGIONS for p in regions[r]["polygon"]]
    outside = any(not (0 <= x < spec.width and 0 <= y < spec.height) for x, y in outline)
    h = spec.conditions["occluders"]["hand"]
    hand: dict[str, Any] = {"present": bool(h["present"])}
    if h["present"]:
        hand |= {k: h[k] for k in ("from_side", "height_m", "over_region", "skin_rgb")}
        hand["regions_covered"] = [r for r in REGIONS if regions[r]["occluded_fraction"] > COVERED]
        hand["hidden_board_pieces"] = sum(per_region[r]["hand_hidden"] for r in REGIONS)
    conditions = dict(spec.conditions)
    conditions["occluders"] = ([{**hand, "type": "hand"}] if h["present"] else []) + [
        {"type": s["type"], "shadow_only": True, **s}
        for s in spec.conditions["occluders"]["shadows"]
    ]
    if extra_conditions:
        conditions |= extra_conditions
    truth = {
        "image": image_name,
        "width": spec.width,
        "height": spec.height,
        "corners": corners_px,
        "corner_order": list(CORNER_ORDER),
        "regions": regions,
        "counts": counts,
        "totals": {
            "small": sum(c["small"] for c in counts.values()),
            "big": sum(c["big"] for c in counts.values()),
        },
        "pieces": pieces,
        "board_partially_outside": bool(outside),
        "board_visible_fraction": round(float(vis_frac), 3),
        "hand": hand,
        "board_m": board.to_json(),
        "camera_model": cam.to_json(),
        "conditions": conditions,
        "game": spec.game,
    }
    # the pinhole's truth, moved where a lens the camera was drawn with shows it (which
    # records the lens again)
    camera = dict(conditions["camera"])
    k1 = float(camera.pop("lens_k1", 0.0))
    if not k1:
        return truth
    return bend_truth({**truth, "conditions": {**conditions, "camera": camera}}, k1)

"""Stand-ins shared by the generator's tests (no Blender here)."""

from __future__ import annotations

from typing import Any

from training.render.geometry import REGIONS

#: camera effects that leave a picture as it was (but for JPEG): ``post.apply_post``'s
NEUTRAL_POST: dict[str, Any] = {
    "sharpen": 0.0,
    "wb_gain": [1.0, 1.0, 1.0],
    "vignette": 0.0,
    "motion_blur_px": 0.0,
    "motion_blur_deg": 0.0,
    "noise_sigma": 0.0,
    "jpeg_quality": 95,
    "seed": 1,
}


def seen_whole(n: int) -> dict[str, Any]:
    """What Blender's ray casts (``blender.measure_visibility``) would say of ``n`` pieces
    all in plain view, with no hand and every region in frame."""
    return {
        "visible": [True] * n,
        "visible_fraction": [1.0] * n,
        "top_visible": [True] * n,
        "hidden_by_hand": [False] * n,
        "occluded_fraction": dict.fromkeys(REGIONS, 0.0),
        "in_frame_fraction": dict.fromkeys(REGIONS, 1.0),
    }

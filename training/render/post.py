"""Camera effects after the render: the lens's bend, white balance, vignetting, motion
blur, sharpening, sensor noise and JPEG compression. numpy + Pillow, no bpy; driven by
conditions['post'] (and the camera's ``lens_k1``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageFilter

from training.render.lens import bend_image


def _motion_blur(img: np.ndarray, length: float, angle_deg: float) -> np.ndarray:
    n = max(2, round(length))
    a = np.radians(angle_deg)
    dx, dy = np.cos(a), np.sin(a)
    acc = np.zeros_like(img)
    for i in range(n):
        t = i / (n - 1) - 0.5
        sx, sy = round(t * length * dx), round(t * length * dy)
        acc += np.roll(img, (sy, sx), axis=(0, 1))
    return acc / n


def apply_post(png: Path, jpg: Path, p: dict[str, Any], width: int, lens_k1: float = 0.0) -> None:
    """Turn the renderer's PNG into the dataset's JPEG with the drawn camera effects; the
    lens bends the light before the sensor sees it, so it comes first."""
    rng = np.random.default_rng(p["seed"])
    im = Image.open(png).convert("RGB")
    if lens_k1:
        im = Image.fromarray(bend_image(np.asarray(im), lens_k1))
    if p["sharpen"] > 0.05:
        im = im.filter(
            ImageFilter.UnsharpMask(radius=1.2, percent=int(120 * p["sharpen"]), threshold=2)
        )
    a = np.asarray(im, dtype=np.float32)
    a *= np.asarray(p["wb_gain"], dtype=np.float32)
    h, w = a.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    a *= (1 - p["vignette"] * r2)[..., None].astype(np.float32)
    if p["motion_blur_px"] > 0:
        a = _motion_blur(a, p["motion_blur_px"] * width / 1280, p["motion_blur_deg"])
    if p["noise_sigma"] > 0:
        sig = p["noise_sigma"] * np.sqrt(np.clip(a, 1, 255) / 128)
        a += rng.normal(size=a.shape).astype(np.float32) * sig
    out = Image.fromarray(np.clip(a + 0.5, 0, 255).astype(np.uint8))
    out.save(jpg, quality=int(p["jpeg_quality"]))

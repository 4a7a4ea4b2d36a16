"""Image augmentation shared by the offline trainers (counter, spread detector, board finder).

numpy and OpenCV only. Each trainer keeps its own ranges (what its network must learn to
ignore differs), but the steps and the order of the random draws are one code path, so a
fix to one augmentation is a fix to all. A step whose probability is 0 draws nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class ColourJitter:
    """Ranges of the photometric changes, applied in this order: white balance, gamma,
    contrast and shift, desaturation, a hard shadow edge, blur, noise, JPEG re-encoding."""

    white_balance: tuple[float, float]
    gamma: tuple[float, float]
    contrast: tuple[float, float]
    shift: float
    blur_p: float
    blur_sigma: tuple[float, float]
    noise: float  # the noise sd is drawn from 0..noise
    jpeg_p: float
    jpeg_quality: tuple[int, int]
    desat_p: float = 0.0
    desat_keep: float = 0.5  # the colour kept is drawn from 0..desat_keep
    shadow_p: float = 0.0

    def __call__(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A recoloured uint8 copy of the BGR ``img``."""
        x = img.astype(np.float32) / 255.0
        x = x * rng.uniform(*self.white_balance, 3).astype(np.float32)
        x = np.clip(x, 0, 1) ** rng.uniform(*self.gamma)
        x = (x - 0.5) * rng.uniform(*self.contrast) + 0.5 + rng.uniform(-self.shift, self.shift)
        if self.desat_p and rng.random() < self.desat_p:
            g = x.mean(axis=2, keepdims=True)
            x = g + (x - g) * rng.uniform(0.0, self.desat_keep)
        if self.shadow_p and rng.random() < self.shadow_p:  # a hard shadow edge across it
            h, w = x.shape[:2]
            a = rng.uniform(0, np.pi)
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            side = (xx - rng.uniform(0, w)) * np.cos(a) + (yy - rng.uniform(0, h)) * np.sin(a) > 0
            x[side] *= rng.uniform(0.35, 0.8)
        if self.blur_p and rng.random() < self.blur_p:
            x = cv2.GaussianBlur(x, (0, 0), rng.uniform(*self.blur_sigma))
        x = x + rng.normal(0, rng.uniform(0.0, self.noise), x.shape).astype(np.float32)
        out = np.clip(x * 255.0, 0, 255).astype(np.uint8)
        if self.jpeg_p and rng.random() < self.jpeg_p:  # compression blocks and ringing
            q = int(rng.integers(*self.jpeg_quality))
            out = cv2.imdecode(cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])[1], 1)
        return np.asarray(out, dtype=np.uint8)


def random_similarity(
    rng: np.random.Generator,
    size: tuple[int, int],
    scale: tuple[float, float],
    max_deg: float,
    shift_sd: float,
    pixel_centres: bool = True,
) -> np.ndarray:
    """A random zoom, rotation and shift about the centre of a ``size`` (w, h) canvas, then
    a mirror left-right and one top-bottom, each half the time: a 3x3 canvas->canvas map.
    ``pixel_centres``: mirror about the last pixel's centre (w - 1), else about w."""
    w, h = size
    s = rng.uniform(*scale)
    ang = np.deg2rad(rng.uniform(-max_deg, max_deg))
    c, sn = np.cos(ang) * s, np.sin(ang) * s
    cx, cy = w / 2, h / 2
    tx, ty = rng.normal(0, shift_sd, 2)
    m = np.array(
        [[c, -sn, cx - c * cx + sn * cy + tx], [sn, c, cy - sn * cx - c * cy + ty], [0, 0, 1]]
    )
    edge = 1 if pixel_centres else 0
    if rng.random() < 0.5:
        m = np.array([[-1, 0, w - edge], [0, 1, 0], [0, 0, 1]]) @ m
    if rng.random() < 0.5:
        m = np.array([[1, 0, 0], [0, -1, h - edge], [0, 0, 1]]) @ m
    return m

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.vision.conftest import scene
from vision import bigstone, detect
from vision.config import CountConfig
from vision.count import rectify
from vision.locate import outline_from_corners

SPARSE = (0, 1, 0, 2, 0, 1, 0, 3, 0, 1, 2, 0)


def _rect(image: np.ndarray, truth: dict) -> np.ndarray:  # type: ignore[type-arg]
    outline = outline_from_corners(np.array(truth["corners"]), truth["conditions"]["arc_depth"])
    return rectify(image, outline, detect.PX)


def test_model_is_small() -> None:
    assert Path(bigstone.MODEL_PATH).stat().st_size < 150_000


def test_crops_mirror_the_east_end() -> None:
    # a canvas symmetric about the board's middle gives two identical crops
    w, h, _ = detect.canvas()
    rng = np.random.default_rng(0)
    half = rng.integers(0, 255, (h, w // 2, 3), dtype=np.uint8)
    rect = np.concatenate([half, half[:, ::-1]], axis=1)
    x = bigstone.crops(rect)
    assert x.shape == (2, 3, h // bigstone.DOWN, bigstone.crop_width() // bigstone.DOWN)
    assert np.allclose(x[0], x[1])


def test_presence_on_generated_scenes() -> None:
    """Random grounds, chalk, light and shadows; each big-stone layout on six scenes.

    A floor, not the target: the shipped classifier misread none of these 48
    mandarins and 2 of 96 over seeds 301-312 (a faint stone on charcoal-lined tiles).
    """
    wrong = []
    for big in ((1, 1), (0, 1), (1, 0), (0, 0)):
        for seed in range(301, 307):
            image, truth = scene(seed, SPARSE, big)
            p = bigstone.probabilities(_rect(image, truth))
            wrong += [(seed, big, side) for side in (0, 1) if (p[side] >= 0.5) != bool(big[side])]
    assert len(wrong) <= 2, wrong


def test_crop_follows_the_config() -> None:
    w, h, _ = detect.canvas()
    rect = np.zeros((h, w, 3), np.uint8)
    wide = CountConfig(big_crop_x1=0.5)
    x = bigstone.crops(rect, wide)
    assert x.shape[3] == bigstone.crop_width(detect.PX, 0.5) // bigstone.DOWN
    assert x.shape[3] > bigstone.crops(rect).shape[3]

"""Fit the count likelihood (``CountConfig.sigma_base``, ``sigma_rel``, ``tail_weight``).

The referee weighs positions by the counter's stated probabilities, so their spread is
fitted by maximum likelihood to a model's raw estimates on scenes it never trained on (the
wide generator's ``val`` split, never render-public):

    python -m training.counter.calibrate ~/.cache/oanquan/synth-wide-v1/val --model M.onnx
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.config import CountConfig
from vision.count import count_board
from vision.locate import outline_from_corners
from vision.synth import REGION_NAMES


def fit(t: NDArray[np.int64], raw: NDArray[np.float64]) -> tuple[float, float, float, float]:
    """Maximum-likelihood (base, rel, tail weight) and the mean log-likelihood per square.

    Same model as ``vision.count.count_distribution``: a Gaussian core plus a
    ``tail_scale`` times wider share, for all squares at once on a grid.
    """
    cfg = CountConfig()
    n = np.arange(cfg.max_count + 1, dtype=np.float64)
    m = np.maximum(raw.ravel().astype(np.float64), 0.0)
    truth = np.minimum(t.ravel(), cfg.max_count)
    rows = np.arange(len(m))

    def normal(sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        g = np.exp(-0.5 * ((n[None, :] - m[:, None]) / sigma[:, None]) ** 2)
        return np.asarray(g / g.sum(axis=1, keepdims=True))

    best = (-np.inf, 0.0, 0.0, 0.0)
    for base in np.arange(0.2, 1.61, 0.05):
        for rel in np.arange(0.0, 0.5, 0.02):
            sigma = np.sqrt(base**2 + (rel * m) ** 2)
            core, tail = normal(sigma), normal(cfg.tail_scale * sigma)
            for w in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3):
                p = (1 - w) * core[rows, truth] + w * tail[rows, truth]
                ll = float(np.log(p + 1e-12).sum())
                if ll > best[0]:
                    best = (ll, float(base), float(rel), w)
    return best[1], best[2], best[3], best[0] / max(t.size, 1)


def parse_fold(text: str | None) -> tuple[int, int] | None:
    """``K/N`` -> (K, N), the fold of scenes whose index % N == K; None for no fold."""
    if not text:
        return None
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and int(k) < int(n)):
        raise ValueError(f"a fold must look like K/N with K < N, got {text!r}")
    return int(k), int(n)


def in_fold(name: str, fold: tuple[int, int] | None) -> bool:
    """Whether ``img_00042.json`` is in fold (K, N) (index % N == K); every scene without one."""
    if fold is None:
        return True
    digits = "".join(ch for ch in Path(name).stem if ch.isdigit())
    return bool(digits) and int(digits) % fold[1] == fold[0]


def raw_estimates(
    folder: Path, cfg: CountConfig, limit: int | None, fold: tuple[int, int] | None = None
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """True counts and raw estimates of every square, counted on the true outline."""
    ts, raws = [], []
    names = [js for js in sorted(folder.glob("img_*.json")) if in_fold(js.name, fold)]
    for js in names[:limit]:
        data = json.loads(js.read_text("utf-8"))
        image = cv2.imread(str(js.with_suffix(".jpg")))
        if image is None:
            continue
        outline = outline_from_corners(np.array(data["corners"], np.float64))
        squares, _ = count_board(np.asarray(image, np.uint8), outline, cfg)  # imread: 8-bit
        ts.append([int(data["regions"][n]["count"]) for n in REGION_NAMES])
        raws.append([sq.raw for sq in squares])
    return np.array(ts, np.int64), np.array(raws, np.float64)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="scenes the model never trained on")
    ap.add_argument("--model", type=Path, help="counter network (default: the shipped one)")
    ap.add_argument("--big-model", type=Path, help="big-stone network (default: shipped)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--fold", help="K/N: only scenes whose index %% N == K (a validation fold)")
    args = ap.parse_args(argv)
    try:
        fold = parse_fold(args.fold)
    except ValueError as exc:
        print(f"--fold: {exc}", file=sys.stderr)
        return 2
    if not args.folder.is_dir():
        print(f"no such folder: {args.folder}", file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    cfg = CountConfig()
    if args.model:
        cfg = replace(cfg, model=str(args.model))
    if args.big_model:
        cfg = replace(cfg, big_model=str(args.big_model))
    t, raw = raw_estimates(args.folder, cfg, args.limit, fold)
    if t.size == 0:
        print(f"no scenes in {args.folder}", file=sys.stderr)
        return 2
    base, rel, tail, ll = fit(t, raw)
    print(
        f"{len(t)} scenes: sigma_base = {base:.2f}, sigma_rel = {rel:.2f}, "
        f"tail_weight = {tail:.2f} (mean log-likelihood {ll:.3f} per square)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

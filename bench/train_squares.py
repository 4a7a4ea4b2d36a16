"""Train the per-square count classifier (``vision/models/squares.onnx``) on the Blender renders.

    python bench/train_squares.py prep                     # renders -> ~/.cache/oanquan/squares/*.npz
    python bench/train_squares.py train --steps 8600       # -> ~/.cache/oanquan/squares/squares.pt
    python bench/train_squares.py export                   # -> vision/models/squares.onnx
    python bench/train_squares.py fit                      # temperature, density weight (val fold)
    python bench/train_squares.py report DIR [DIR ...]     # density / classifier / both, per bucket
    python bench/train_squares.py train --mandarins --init S.pt --lr 0.001 --steps 3400
                                                           # the mandarins net (mandarins.onnx)
    python bench/train_squares.py train --big --init M.pt --lr 0.001 --batch 96 --steps 1800
                                                           # big stone or not (bigstones.onnx)
    python bench/train_squares.py report --big DIR         # both big-stone nets, right and sure
    python bench/train_squares.py train --big --init vision/models/bigstones.onnx --lr 0.0005 \
        --batch 96 --threads 1 --steps 1200 [--negatives 0.1]  # fine-tune a shipped net
    python bench/train_squares.py soup A.onnx B.onnx --weight 0.5 --out C.onnx
                                                           # weight-space mean (B tuned from A)
    python bench/train_squares.py pack                     # the canvases as JPEGs, to send
    python bench/train_squares.py train --data pack.npz --device cuda --workers 14 --steps 40000

``prep`` rectifies every scene of ``--renders`` (train-v4) on its true outline at
``vision.squares.PX`` and stores the canvases with their counts (one npz per half, so
two processes share the work), plus ``--synth`` classic ``vision.synth`` scenes (the
unit tests' cartoon pebbles, a tenth of the samples). Scenes whose index % 20 == 19
are the validation fold: never trained on, used by ``fit``. ``train`` draws a
random citizen square of a random scene, cuts it with the jitter an outline found
in a photo has (``vision.squares.crop``: turn +-8 degrees, zoom +-10 %, shift +-0.08
of a square), turns it by one of the square's 8 symmetries, recolours it (white
balance, grey, gamma, blur, noise, JPEG) and learns its count (cross-entropy, 21
classes, 5 % label smoothing; AdamW, cosine learning rate). One or two CPU threads;
needs the ``train`` extra (PyTorch, onnx). The shipped model runs with OpenCV alone.

``report`` reads any render-public-layout folder on the true outline and prints, for
the citizen squares (``--mandarins``: the mandarins' small pieces), the mean log-loss of
the true count, the bench scripts' lines per true-count bucket (``bench/figures.py``)
and the reliability of the top count (stated against observed, per bin), for the
density alone, the classifier alone and their product as shipped: render-public and
the held-out kinds are test sets only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.figures import bucket_lines
from engine.board import CITIZENS, MANDARINS
from training.counter.calibrate import in_fold
from training.render.lens import pinhole_only
from vision import squares
from vision.config import CountConfig, LocateConfig, VisionConfig
from vision.count import big_stone_probabilities, count_board, rectify
from vision.locate.outline import Outline, outline_from_corners
from vision.synth import REGION_NAMES

CACHE = Path(os.environ.get("OANQUAN_CACHE", Path.home() / ".cache" / "oanquan"))
DATA = CACHE / "squares"
RENDERS = CACHE / "renders" / "train-v4"
FOLD = (19, 20)  # index % 20 == 19: the validation fold, as the other trainers keep it
CIT = np.array(CITIZENS)


def _truths(folder: Path) -> list[Path]:
    return [
        js
        for js in sorted(folder.rglob("*.json"))
        if js.name != "dataset.json" and js.with_suffix(".jpg").exists()
    ]


def _scenes(truths: list[Path]) -> Iterator[tuple[int, Path, dict[str, Any], np.ndarray, Outline]]:
    """Index, truth path, truth, image and true outline of every scene whose image reads."""
    depth = LocateConfig().arc_depth
    for k, js in enumerate(truths):
        image = cv2.imread(str(js.with_suffix(".jpg")))
        if image is None:
            continue
        data = json.loads(js.read_text("utf-8"))
        pinhole_only(data, js)
        yield k, js, data, image, outline_from_corners(np.array(data["corners"], np.float64), depth)


def prep(renders: Path, out: Path, part: int, parts: int) -> None:
    """One part of the renders, rectified on the true outline, with their counts."""
    canvases, counts, bigs, names = [], [], [], []
    items = _truths(renders)[part::parts]
    t0 = time.time()
    for k, js, data, image, outline in _scenes(items):
        canvases.append(rectify(image, outline, squares.PX))
        counts.append([int(data["regions"][n]["count"]) for n in REGION_NAMES])
        bigs.append([int(data["regions"][n]["big"]) for n in REGION_NAMES])
        names.append(str(js))
        if k % 500 == 0:
            rate = (k + 1) / max(time.time() - t0, 1e-6)
            print(
                f"[{k}/{len(items)}] {rate:.1f}/s, left {(len(items) - k) / rate:.0f} s", flush=True
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        out,
        canv=np.stack(canvases),
        counts=np.array(counts),
        big=np.array(bigs),
        names=np.array(names),
    )


def prep_synth(count: int, seed: int, out: Path) -> None:
    """Classic ``vision.synth`` scenes on their true outline (what the unit tests draw)."""
    from bench.train_counter import synth_items  # (needs torch: the train venv's step anyway)

    depth = LocateConfig().arc_depth
    items = synth_items(count, seed)
    canvases = [
        rectify(it.image, outline_from_corners(it.corners, depth), squares.PX) for it in items
    ]
    np.savez(
        out,
        canv=np.stack(canvases),
        counts=np.array([it.counts for it in items]),
        big=np.array([it.bigs for it in items]),
    )


def _load(paths: list[Path]) -> dict[str, np.ndarray]:
    parts = [np.load(p) for p in paths]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0].files}


def pack(data: Path, out: Path, quality: int) -> None:
    """``prep``'s canvases (the renders' and the classic scenes') in one file of JPEGs at
    ``quality``, about a tenth of the npz: what a lent GPU machine can be sent (64 MiB a
    call) to train on. ``train --data`` reads it as it reads ``prep``'s folder."""
    d = _load(sorted(data.glob("train_*.npz")))
    synth = np.load(data / "synth.npz")
    canvases = [*d["canv"], *synth["canv"]]
    blobs = [
        np.asarray(cv2.imencode(".jpg", c, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], np.uint8)
        for c in canvases
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        out,
        jpeg=np.concatenate(blobs),
        ends=np.cumsum([len(b) for b in blobs]),
        counts=np.concatenate([d["counts"], synth["counts"]]),
        big=np.concatenate([d["big"], synth["big"]]),
        classic=np.arange(len(canvases)) >= len(d["canv"]),
        names=np.concatenate([d["names"], np.array([""] * len(synth["canv"]))]),
    )
    print(f"{out}: {len(canvases)} canvases, {out.stat().st_size / 2**20:.1f} MiB", flush=True)


@dataclass(frozen=True)
class TrainingSet:
    """The renders' canvases and labels less the validation fold, the classic scenes'
    after them, and the renders' piece counts whatever the label (tiny beside the
    canvases: a big-stone run draws its stoneless mandarins holding pieces from them)."""

    canvases: np.ndarray
    labels: np.ndarray
    classic_canvases: np.ndarray
    classic_labels: np.ndarray
    counts: np.ndarray


def _training_set(data: Path, label: str) -> TrainingSet:
    """``label`` ("counts" or "big") from ``prep``'s folder, or from a file ``pack`` wrote."""
    if data.is_file():
        p = np.load(data)
        starts = np.concatenate([[0], p["ends"][:-1]])
        jpegs = [p["jpeg"][a:b] for a, b in zip(starts, p["ends"], strict=True)]
        canv = np.stack([cast(np.ndarray, cv2.imdecode(j, cv2.IMREAD_COLOR)) for j in jpegs])
        classic = p["classic"]
        keep = ~classic & np.array([not in_fold(str(n), FOLD) for n in p["names"]])
        return TrainingSet(
            canv[keep], p[label][keep], canv[classic], p[label][classic], p["counts"][keep]
        )
    d = _load(sorted(data.glob("train_*.npz")))
    keep = np.array([not in_fold(str(n), FOLD) for n in d["names"]])
    synth = np.load(data / "synth.npz")
    return TrainingSet(
        d["canv"][keep], d[label][keep], synth["canv"], synth[label], d["counts"][keep]
    )


def augment(crop: np.ndarray, rng: np.random.Generator, turns: bool = True) -> np.ndarray:
    """A recoloured crop turned by one of the square's 8 symmetries (its count is the same);
    without ``turns`` only mirrored north-south (a mandarin's one symmetry)."""
    f: np.ndarray = crop.astype(np.float32) * rng.uniform(0.75, 1.25, 3)
    if rng.random() < 0.2:
        f[:] = f.mean(axis=2, keepdims=True)
    f = 255.0 * (np.clip(f, 0, 255) / 255.0) ** rng.uniform(0.7, 1.4)
    if rng.random() < 0.3:
        f = cv2.GaussianBlur(f, (0, 0), rng.uniform(0.3, 1.2))
    f = np.clip(f + rng.normal(0.0, rng.uniform(0, 6), f.shape), 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        q = int(rng.integers(35, 95))
        jpeg = cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, q])[1]
        f = cast(np.ndarray, cv2.imdecode(jpeg, 1))  # a JPEG just encoded: never None
    k = int(rng.integers(8)) if turns else 2 * int(rng.integers(2))
    if k & 1:
        f = f[:, ::-1]
    if k & 2:
        f = f[::-1]
    if k & 4:
        f = f.transpose(1, 0, 2)
    return np.ascontiguousarray(f)


def jittered(canvas: np.ndarray, square: int, rng: np.random.Generator) -> np.ndarray:
    angle, scale = rng.uniform(-8, 8), rng.uniform(0.9, 1.1)
    dx, dy = rng.uniform(-0.08, 0.08, 2)
    shift = (float(dx), float(dy))
    if square in MANDARINS:
        east = square == MANDARINS[1]
        return squares.crop_mandarin(canvas, east, angle=angle, scale=scale, shift=shift)
    return squares.crop(canvas, square, angle=angle, scale=scale, shift=shift)


def _net(width: int = 16, classes: int = squares.CLASSES) -> Any:
    import torch
    from torch import nn

    from training.nets import conv_bn_relu

    w = width

    class SquareNet(nn.Module):
        """Seven 3x3 convolutions, two poolings, global mean, two linear layers."""

        def __init__(self) -> None:
            super().__init__()
            self.f = nn.Sequential(
                conv_bn_relu(3, w),
                conv_bn_relu(w, 2 * w, 2),
                conv_bn_relu(2 * w, 2 * w),
                nn.MaxPool2d(2),
                conv_bn_relu(2 * w, 4 * w),
                conv_bn_relu(4 * w, 4 * w),
                nn.MaxPool2d(2),
                conv_bn_relu(4 * w, 6 * w),
                conv_bn_relu(6 * w, 8 * w),
            )
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.h = nn.Sequential(
                nn.Linear(8 * w, 64), nn.ReLU(inplace=True), nn.Linear(64, classes)
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.h(torch.flatten(self.pool(self.f(x)), 1))

    return SquareNet()


def weights_from_onnx(path: Path, classes: int) -> dict[str, Any]:
    """A state dict for ``_net(classes=classes)`` from a network this script exported, so a
    shipped model can be trained on without its ``.pt``: every batch norm the identity
    plus the folded bias (``training.nets.unfold``); train with them frozen."""
    import torch

    from training.nets import folded_convs, unfold

    folded, init = folded_convs(path)
    state: dict[str, Any] = dict(_net(classes=classes).state_dict())
    convs = [k for k, v in state.items() if k.endswith(".0.weight") and v.ndim == 4]
    if len(convs) != len(folded) or any(
        tuple(state[k].shape) != w.shape for k, (w, _) in zip(convs, folded, strict=False)
    ):
        raise SystemExit(f"{path}: not a network of this script's shape ({classes} classes)")
    for key, (w, b) in zip(convs, folded, strict=True):
        unfold(state, key, w, b)
    for key in [k for k in state if k.startswith("h.")]:
        state[key] = torch.tensor(init[key])
    return state


def _crops(
    sets: TrainingSet,
    regions: np.ndarray,
    seed: int,
    batch: int,
    synth_share: float,
    mandarins: bool,
    big: bool,
    negatives: float = 0.0,
) -> Callable[[int | None], Iterator[tuple[np.ndarray, np.ndarray]]]:
    """Endless training batches: a random square of a random scene, jittered and
    recoloured. One numpy generator per loader worker (the run's seed and the worker's
    number); in this process alone, the run's seed's, as it always was. ``negatives``
    (with ``big``): the share of a batch drawn from mandarins without their stone that
    hold pieces, the call's commonest mistake."""
    canvases, counts = sets.canvases, sets.labels
    s_canvases, s_counts = sets.classic_canvases, sets.classic_labels
    stoneless = np.zeros((0, 2), np.int64)
    if big and negatives > 0:
        stoneless = np.argwhere((counts[:, regions] == 0) & (sets.counts[:, regions] > 0))
        stoneless[:, 1] = regions[stoneless[:, 1]]

    def choose(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Scenes, squares and which are classic for one batch."""
        scene = rng.integers(len(canvases), size=batch)
        sq = rng.choice(regions, size=batch)
        if len(stoneless):
            pick = rng.random(batch) < negatives
            rows = stoneless[rng.integers(len(stoneless), size=batch)]
            scene = np.where(pick, rows[:, 0], scene)
            sq = np.where(pick, rows[:, 1], sq)
        classic = rng.random(batch) < synth_share
        return np.where(classic, rng.integers(len(s_canvases), size=batch), scene), sq, classic

    def stream(worker: int | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        rng = np.random.default_rng(seed if worker is None else (seed, worker))
        while True:
            scene, sq, classic = choose(rng)
            x = np.stack(
                [
                    squares.prepare(
                        augment(
                            jittered((s_canvases if c else canvases)[i], s, rng), rng, not mandarins
                        )
                    )
                    for i, s, c in zip(scene, sq, classic, strict=True)
                ]
            )
            y = np.where(classic, s_counts[scene % len(s_counts), sq], counts[scene, sq])
            yield x, np.minimum(y, 1 if big else squares.CLASSES - 1).astype(np.int64)

    return stream


def train(
    data: Path,
    steps: int,
    out: Path,
    batch: int,
    lr: float,
    synth_share: float,
    seed: int,
    mandarins: bool = False,
    init: Path | None = None,
    big: bool = False,
    device: str = "cpu",
    workers: int = 0,
    negatives: float = 0.0,
) -> None:
    """Citizen squares, or with ``mandarins`` the two mandarins (``init``: start weights);
    ``big``: whether a mandarin holds a big stone (two classes, mandarin crops), started
    from ``init`` but for the last layer, with ``negatives`` of each batch stoneless
    mandarins; an ``init`` ONNX this script exported is taken whole, its norms then
    frozen. ``data``: ``prep``'s folder or ``pack``'s file;
    ``device`` and ``workers``: where the steps run and how many processes cut crops."""
    import torch
    import torch.nn.functional as F

    from training.nets import forked_batches, freeze_norms, on_device, save_weights

    sets = _training_set(data, "big" if big else "counts")
    mandarins = mandarins or big
    print(
        f"{len(sets.canvases)} renders, {len(sets.classic_canvases)} classic scenes, {steps} steps",
        flush=True,
    )
    torch.manual_seed(seed)
    net = _net(classes=2 if big else squares.CLASSES)
    frozen = init is not None and init.suffix == ".onnx"
    if init is not None and frozen:
        net.load_state_dict(weights_from_onnx(init, 2 if big else squares.CLASSES))
    elif init is not None:
        start = torch.load(init)
        if big:  # a count head does not fit: the last layer starts afresh
            start = {k: v for k, v in start.items() if not k.startswith("h.2.")}
        net.load_state_dict(start, strict=not big)
    on_device(net, device)
    regions = np.array(MANDARINS) if mandarins else CIT
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    out.parent.mkdir(parents=True, exist_ok=True)
    stream = _crops(sets, regions, seed, batch, synth_share, mandarins, big, negatives)
    batches = forked_batches(stream, workers)

    t0 = time.time()
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * (step - 1) / steps))
        x, y = (t.to(device, non_blocking=True) for t in next(batches))
        net.train()
        if frozen:
            freeze_norms(net)
        loss = F.cross_entropy(net(x), y, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            left = (time.time() - t0) / step * (steps - step)
            print(f"step {step} loss {loss.item():.3f}, left {left / 60:.1f} min", flush=True)
        if step % 1000 == 0 or step == steps:
            save_weights(net, out)


def export(
    weights: Path | dict[str, Any], path: Path, mandarins: bool = False, big: bool = False
) -> None:
    """The network of ``weights`` (a ``.pt`` this script saved, or a state dict) as ONNX."""
    import torch

    from training.nets import export_onnx

    net = _net(classes=2 if big else squares.CLASSES)
    mandarins = mandarins or big
    net.load_state_dict(torch.load(weights) if isinstance(weights, Path) else weights)
    w, h = squares.MANDARIN_SIZE
    shape = (2, 3, h, w) if mandarins else (len(CITIZENS), 3, squares.SIZE, squares.SIZE)
    export_onnx(net, path, torch.zeros(*shape))


def soup(first: Path, second: Path, weight: float, out: Path, mandarins: bool, big: bool) -> None:
    """The network whose every weight is ``1 - weight`` of ``first``'s and ``weight`` of
    ``second``'s: two exports of this script where one was fine-tuned from the other
    (``train --init``). The mean of the two lies in the same basin, and on kinds the
    fine-tune never saw it keeps more of the first net's calls than the fine-tune does
    (training/counter/README.md, "Large pieces"); one network, so no time is added."""
    classes = 2 if big else squares.CLASSES
    a, b = weights_from_onnx(first, classes), weights_from_onnx(second, classes)
    mixed = {
        k: v if not v.is_floating_point() else v * (1.0 - weight) + b[k] * weight
        for k, v in a.items()
    }
    export(mixed, out, mandarins, big)


def readings(
    folder: Path, cfg: CountConfig, fold: bool, mandarins: bool = False
) -> dict[str, np.ndarray]:
    """Density distributions, classifier probabilities and true counts of every citizen
    square (or both mandarins' small pieces), true outline; ``fold``: the 19/20 fold only."""
    regions = np.array(MANDARINS) if mandarins else CIT
    plain = replace(cfg, square_model="", mandarin_model="")
    dens, cls, truth = [], [], []
    truths = [js for js in _truths(folder) if not fold or in_fold(js.name, FOLD)]
    for _, _, data, image, outline in _scenes(truths):
        truth.append([int(data["regions"][REGION_NAMES[sq]]["count"]) for sq in regions])
        reading, _ = count_board(image, outline, plain)
        dens.append([reading[sq].probs for sq in regions])
        canvas = rectify(image, outline, squares.PX)
        if mandarins:
            cls.append(squares.mandarin_probabilities(canvas, cfg.mandarin_model, 1.0))
        else:
            cls.append(squares.probabilities(canvas, cfg.square_model, 1.0))
    return {"density": np.array(dens), "classes": np.array(cls), "truth": np.array(truth)}


def big_report(folder: Path, model: str) -> str:
    """Big stone or not in both mandarins of every scene, true outline: the detect
    canvas's network (``big_model``) against the mandarin crops' (``model``), with how
    often each is right when it states a probability in each bin."""
    plain = replace(CountConfig(), mandarin_big_model="")  # "" asks big_model instead
    mine = replace(plain, mandarin_big_model=model)
    old, new, truth = [], [], []
    for _, _, data, image, outline in _scenes(_truths(folder)):
        truth += [int(data["regions"][REGION_NAMES[m]]["big"]) > 0 for m in MANDARINS]
        rect = rectify(image, outline, plain.px_per_square)
        old += list(big_stone_probabilities(image, outline, plain, rect))
        new += list(big_stone_probabilities(image, outline, mine, rect))
    t = np.array(truth)
    lines = [f"{folder} ({len(t) // 2} scenes, big stone or not, true outline)"]
    for name, p in (("big_model (detect canvas)", old), ("mandarin_big_model", new)):
        q = np.array(p)
        said = q >= 0.5
        conf = np.maximum(q, 1 - q)
        bins = []
        for lo, hi in ((0.5, 0.9), (0.9, 0.99), (0.99, 1.01)):
            m = (conf >= lo) & (conf < hi)
            if m.any():
                bins.append(f"{lo:.2f}+: {(said[m] == t[m]).mean():.3f} of {int(m.sum())}")
        lines.append(
            f"  {name}: right {100 * (said == t).mean():.1f}% (stones missed "
            f"{int((~said & t).sum())}, seen where none {int((said & ~t).sum())}); "
            f"right when stated {'; '.join(bins)}"
        )
    return "\n".join(lines)


def _tempered(classes: np.ndarray, temperature: float) -> np.ndarray:
    z = np.log(np.maximum(classes, 1e-12)) / temperature
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    out: np.ndarray = p / p.sum(axis=-1, keepdims=True)
    return out


def combined(r: dict[str, np.ndarray], temperature: float, weight: float) -> np.ndarray:
    cls = _tempered(r["classes"], temperature)
    return np.array(
        [
            [squares.combine(c, d, weight) for c, d in zip(cs, ds, strict=True)]
            for cs, ds in zip(cls, r["density"], strict=True)
        ]
    )


def log_loss(probs: np.ndarray, truth: np.ndarray) -> float:
    t = np.minimum(truth, probs.shape[-1] - 1)[..., None]
    return float(-np.log(np.maximum(np.take_along_axis(probs, t, -1), 1e-6)).mean())


def reliability(probs: np.ndarray, truth: np.ndarray) -> str:
    conf, right = probs.max(-1), probs.argmax(-1) == truth
    out = []
    for lo, hi in ((0.0, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 0.99), (0.99, 1.01)):
        m = (conf >= lo) & (conf < hi)
        if m.any():
            out.append(
                f"{lo:.2f}+: {right[m].mean():.3f} of {int(m.sum())} (stated {conf[m].mean():.3f})"
            )
    return "; ".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prep")
    p.add_argument("--renders", type=Path, default=RENDERS)
    p.add_argument("--out", type=Path, default=DATA)
    p.add_argument("--part", type=int, help="only this part (0 or 1) of two, for two processes")
    p.add_argument("--synth", type=int, default=400, help="classic scenes (seed 77)")
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, default=DATA)
    t.add_argument("--steps", type=int, default=8600)
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--synth-share", type=float, default=0.1)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--out", type=Path, default=DATA / "squares.pt")
    t.add_argument("--mandarins", action="store_true", help="the two mandarins instead")
    t.add_argument(
        "--init", type=Path, help="start from these weights (.pt, or an .onnx this script exported)"
    )
    t.add_argument(
        "--negatives",
        type=float,
        default=0.0,
        help="with --big: share of each batch from stoneless mandarins holding pieces",
    )
    t.add_argument("--big", action="store_true", help="big stone or not in the mandarins")
    t.add_argument("--device", default="cpu", help="torch device: cpu, cuda")
    t.add_argument("--workers", type=int, default=0, help="processes cutting crops")
    k = sub.add_parser("pack")
    k.add_argument("--data", type=Path, default=DATA)
    k.add_argument("--out", type=Path, default=DATA / "pack.npz")
    k.add_argument("--quality", type=int, default=92, help="JPEG quality of the canvases")
    e = sub.add_parser("export")
    e.add_argument("--weights", type=Path, default=DATA / "squares.pt")
    e.add_argument("--out", type=Path, default=Path(CountConfig().square_model))
    e.add_argument("--mandarins", action="store_true", help="a mandarin network's input shape")
    e.add_argument("--big", action="store_true", help="the big-stone network (two classes)")
    m = sub.add_parser("soup", help="weight-space mean of two exports (one fine-tuned)")
    m.add_argument("first", type=Path)
    m.add_argument("second", type=Path)
    m.add_argument("--weight", type=float, default=0.5, help="the second network's share")
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--mandarins", action="store_true", help="a mandarin network's input shape")
    m.add_argument("--big", action="store_true", help="the big-stone network (two classes)")
    f = sub.add_parser("fit")
    f.add_argument("--renders", type=Path, default=RENDERS)
    f.add_argument("--model", default=CountConfig().square_model)
    r = sub.add_parser("report")
    r.add_argument("folders", type=Path, nargs="+")
    r.add_argument("--model", help="the classifier (default: the shipped one)")
    r.add_argument("--mandarins", action="store_true", help="the mandarins' small pieces")
    r.add_argument("--big", action="store_true", help="big stone or not: both networks")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    if args.cmd == "prep":
        for part in (0, 1) if args.part is None else (args.part,):
            prep(args.renders, args.out / f"train_{part}.npz", part, 2)
        if args.part in (None, 0) and args.synth:
            prep_synth(args.synth, 77, args.out / "synth.npz")
    elif args.cmd == "train":
        if args.negatives and not args.big:
            ap.error("--negatives draws stoneless mandarins: it needs --big")
        if not 0.0 <= args.negatives < 1.0:
            ap.error(f"--negatives is a share of each batch, 0 to under 1, not {args.negatives}")
        import torch

        torch.set_num_threads(args.threads)
        train(
            args.data,
            args.steps,
            args.out,
            args.batch,
            args.lr,
            args.synth_share,
            args.seed,
            args.mandarins,
            args.init,
            args.big,
            args.device,
            args.workers,
            args.negatives,
        )
    elif args.cmd == "pack":
        pack(args.data, args.out, args.quality)
    elif args.cmd == "export":
        export(args.weights, args.out, args.mandarins, args.big)
    elif args.cmd == "soup":
        if not 0.0 <= args.weight <= 1.0:
            ap.error(f"--weight is the second network's share, 0 to 1, not {args.weight}")
        missing = [str(p) for p in (args.first, args.second) if not p.is_file()]
        if missing:
            ap.error(f"no such network: {', '.join(missing)}")
        soup(args.first, args.second, args.weight, args.out, args.mandarins, args.big)
        print(
            f"wrote {args.out}: {1 - args.weight:g} x {args.first} + {args.weight:g} x {args.second}"
        )
    elif args.cmd == "fit":
        cfg = VisionConfig().count
        got = readings(args.renders, replace(cfg, square_model=args.model), True)
        print(f"validation fold: {len(got['truth'])} scenes; log-loss of the true count")
        print(f"  density alone {log_loss(got['density'], got['truth']):.4f}")
        best = (math.inf, 1.0, 0.0)
        for temperature in (0.8, 1.0, 1.2, 1.4, 1.7, 2.0):
            row = []
            for weight in (0.0, 0.25, 0.5, 0.75, 1.0):
                loss = log_loss(combined(got, temperature, weight), got["truth"])
                row.append(f"w {weight}: {loss:.4f}")
                best = min(best, (loss, temperature, weight))
            print(f"  T {temperature}: " + ", ".join(row))
        print(f"best: square_temperature = {best[1]}, square_density_weight = {best[2]}")
    elif args.big:
        model = args.model or CountConfig().mandarin_big_model
        for folder in args.folders:
            print(big_report(folder, model))
    else:
        cfg = VisionConfig().count
        if args.model:
            key = "mandarin_model" if args.mandarins else "square_model"
            cfg = replace(cfg, **{key: args.model})
        what = "mandarins" if args.mandarins else "citizen squares"
        for folder in args.folders:
            got = readings(folder, cfg, False, args.mandarins)
            print(f"{folder} ({len(got['truth'])} scenes, {what}, true outline)")
            both = combined(got, cfg.square_temperature, cfg.square_density_weight)
            for name, probs in (
                ("density", got["density"]),
                ("classifier", _tempered(got["classes"], cfg.square_temperature)),
                ("both (shipped)", both),
            ):
                print(f"  {name}: log-loss of the true count {log_loss(probs, got['truth']):.3f}")
                for line in bucket_lines(got["truth"].ravel(), probs.argmax(-1).ravel()):
                    print(f"    {line}")
                print(f"    top count right when stated: {reliability(probs, got['truth'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train the pebble-centre density network used by ``vision.count``.

    python bench/train_counter.py DATASET_DIR               # 4 CV folds, then the shipped model
    python bench/train_counter.py DATASET_DIR --run 0,1     # some folds only (parallel jobs)
    python bench/train_counter.py DATASET_DIR --run final   # writes vision/models/counter.onnx
    python bench/train_counter.py DATASET_DIR --report      # figures from out/counter only
    python bench/train_counter.py --average A.onnx B.onnx --out M.onnx   # mean of counters
    python bench/train_counter.py --average vision/models/counter.onnx@0 B.onnx --out M.onnx
    python bench/train_counter.py --data DIR --init-onnx M.onnx --init-member 1 --teacher M.onnx \
        --out S.onnx                                       # one counter learns a mean's maps

Trains ONLY on ``DATASET_DIR/singles`` (render-public layout); the sequences stay
held out and are only *evaluated*, with the model trained on all singles. Fold
k holds out the singles with index % 4 == k; its model and held-out density
maps go to ``--work`` (``bench/vision.py --cv-dir`` reuses them). The network
sees the board rectified to the canvas of ``vision.detect`` (80 px per square,
a pebble ~12 px) and regresses density maps at 1/4 resolution: small-pebble
centres and big-stone centres, each a unit-mass Gaussian at the piece's centre
projected onto the ground (the point that decides its square). Hidden pebbles
are in the targets, so the net learns how much piles hide. The big-stone
channel has not learnt anything so far and is ignored at run time. Prints
exact/within-one accuracy per true-count bucket with the run-time counting rule
and fits the count spread (``CountConfig.sigma_base``/``sigma_rel``) to the
cross-validated residuals. Seeds are fixed; one thread.

Needs the ``train`` extra (PyTorch, onnx); the shipped model runs with OpenCV only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.figures import bucket_lines
from engine.board import MANDARINS
from training.augment import ColourJitter, random_similarity
from training.counter.calibrate import in_fold, parse_fold
from training.nets import conv_bn_relu, export_onnx
from training.render.lens import pinhole_only
from vision import detect
from vision.config import CountConfig
from vision.geometry import homography_from_corners, project
from vision.synth import REGION_NAMES

STRIDE = detect.STRIDE
CROP = (320, 160)  # training window, canvas px (w, h)
LR = 3e-3
COUNT_W = 1.0  # weight of the windowed count loss against the per-cell loss
BATCH = 4  # canvases a step (``--batch``)


@dataclass(frozen=True)
class Augment:
    """What a training run perturbs: the canvas's random zoom range and its colours.

    ``large``: a share of windows zoomed further, up to ``large_zoom``, so pieces look as
    large as a third of a square (renders keep them under a sixth; real players bring
    walnuts and big pebbles). Those windows always learn the true maps (``train``)."""

    scale: tuple[float, float]
    colour: ColourJitter
    large: float = 0.0
    large_zoom: float = 1.0


#: render-public CV runs
CV_AUG = Augment(
    (0.85, 1.18),
    ColourJitter(
        white_balance=(0.75, 1.25),
        gamma=(0.7, 1.4),
        contrast=(0.7, 1.3),
        shift=0.1,
        desat_p=0.2,
        desat_keep=0.6,
        blur_p=0.3,
        blur_sigma=(0.5, 1.2),
        noise=0.03,
        jpeg_p=0.0,
        jpeg_quality=(30, 90),
    ),
)
#: ``--data`` runs (generated and rendered scenes): wider zoom and JPEG re-encoding
WIDE_AUG = Augment((0.7, 1.35), replace(CV_AUG.colour, jpeg_p=0.3))


@dataclass
class Item:
    """One labelled image: pieces as ground-plane centres in image px."""

    name: str
    image: np.ndarray
    corners: np.ndarray
    small: np.ndarray  # (n, 2) px
    big: np.ndarray  # (m, 2) px
    counts: list[int]
    bigs: list[int]


def _ground_px(data: dict[str, Any], pos: list[float]) -> tuple[float, float]:
    """Project a piece centre onto the ground (z=0): the square rule uses that point."""
    cam = data["camera_model"]
    k = np.array(cam["K"])
    r = np.array(cam["R_world_to_cam_opencv"])
    t = np.array(cam["t_opencv"])
    x = k @ (r @ np.array([pos[0], pos[1], 0.0]) + t)
    return float(x[0] / x[2]), float(x[1] / x[2])


def load_items(folder: Path, skip: set[str] | None = None) -> list[Item]:
    """Every labelled image of a render-public-layout folder (renders and wide-generator
    scenes too: those give each piece's ground point as ``ground_px``); names in ``skip``
    (already loaded) and images not yet written are passed over."""
    items = []
    for js in sorted(folder.glob("*.json")):
        if skip is not None and str(js) in skip:
            continue
        if not js.with_suffix(".jpg").exists() or js.name == "dataset.json":
            continue
        data = json.loads(js.read_text("utf-8"))
        pinhole_only(data, js)
        img = cv2.imread(str(js.with_suffix(".jpg")))
        if img is None:
            continue
        small: list[Any] = []
        big: list[Any] = []
        for p in data["pieces"]:
            if p.get("on_board") is False:  # captured heaps beside the board
                continue
            at = p["ground_px"] if "ground_px" in p else _ground_px(data, p["position_m"])
            (big if p["kind"] == "big" else small).append(at)
        regions = data["regions"]
        items.append(
            Item(
                str(js) if skip is not None else js.stem,
                img,
                np.array(data["corners"], np.float64),
                np.array(small, np.float64).reshape(-1, 2),
                np.array(big, np.float64).reshape(-1, 2),
                [int(regions[n]["count"]) for n in REGION_NAMES],
                [int(regions[n]["big"]) for n in REGION_NAMES],
            )
        )
    return items


def synth_items(n: int, seed: int) -> list[Item]:
    """Scenes from ``vision.synth`` (the cartoonish scenes the unit tests use).

    A few of them teach the net that a flat grey disc in a mandarin is the big
    stone, not a pebble, without which the repo's own tests fail.
    """
    from vision.synth import random_position, render_scene

    items = []
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        counts, big = random_position(rng)
        image, truth = render_scene(counts, big, seed=seed * 1000 + i)
        h = homography_from_corners(np.array(truth["corners"]))
        small = [p["position"] for p in truth["pieces"] if p["kind"] == "small"]
        bigs = [p["position"] for p in truth["pieces"] if p["kind"] == "big"]
        items.append(
            Item(
                f"synth_{i}",
                image,
                np.array(truth["corners"], np.float64),
                project(h, np.array(small, np.float64).reshape(-1, 2)),
                project(h, np.array(bigs, np.float64).reshape(-1, 2)),
                list(truth["ring_counts"]),
                [truth["ring_big"][0], 0, 0, 0, 0, 0, truth["ring_big"][1], 0, 0, 0, 0, 0],
            )
        )
    return items


# ---------------------------------------------------------------- model


class CounterNet(nn.Module):
    """Tiny encoder-decoder; output stride 4, receptive field ~1 square for piles."""

    def __init__(self, w: int = 16) -> None:
        super().__init__()
        self.e1 = conv_bn_relu(3, w, 2)
        self.e2 = conv_bn_relu(w, 2 * w, 2)
        self.e3 = conv_bn_relu(2 * w, 2 * w)
        self.e4 = conv_bn_relu(2 * w, 3 * w, 2)
        self.e5 = conv_bn_relu(3 * w, 3 * w, 1, 2)
        self.e6 = conv_bn_relu(3 * w, 3 * w, 1, 4)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.m1 = conv_bn_relu(5 * w, 2 * w, k=1)
        self.m2 = conv_bn_relu(2 * w, 2 * w)
        self.head = nn.Conv2d(2 * w, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.e3(self.e2(self.e1(x)))
        b = self.e6(self.e5(self.e4(a)))
        y = self.m2(self.m1(torch.cat([a, self.up(b)], 1)))
        return self.head(y) * (1.0 / detect.OUT_SCALE)


# ---------------------------------------------------------------- data


def _targets(pts: np.ndarray, shape: tuple[int, int], sigma: float) -> np.ndarray:
    """Unit-mass Gaussians (sigma in output cells) at canvas points."""
    h, w = shape
    out = np.zeros((h, w), np.float32)
    ys, xs = np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32)
    r = int(np.ceil(3 * sigma))
    # unit mass measured on an unbounded grid, so a piece near the edge keeps its share
    gk = np.arange(-r - 1, r + 2, dtype=np.float32)
    for x, y in pts / STRIDE:
        fx, fy = x - np.floor(x), y - np.floor(y)
        norm = (
            np.exp(-0.5 * ((gk - fx) / sigma) ** 2).sum()
            * np.exp(-0.5 * ((gk - fy) / sigma) ** 2).sum()
        )
        x0, x1 = max(0, int(x) - r), min(w, int(x) + r + 2)
        y0, y1 = max(0, int(y) - r), min(h, int(y) + r + 2)
        if x0 >= x1 or y0 >= y1:
            continue
        gx = np.exp(-0.5 * ((xs[x0:x1] - x) / sigma) ** 2)
        gy = np.exp(-0.5 * ((ys[y0:y1] - y) / sigma) ** 2)
        out[y0:y1, x0:x1] += np.outer(gy, gx) / norm
    return out


def sample(
    item: Item, rng: np.random.Generator, aug: Augment | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Rectified canvas (perturbed by ``aug`` if given), its input tensor, the two target
    maps, and whether the window was zoomed past ``aug.scale`` (``Augment.large``)."""
    corners = item.corners.copy()
    w, h, a = detect.canvas(detect.PX)
    extra = np.eye(3)
    large = False
    if aug is not None:
        side = float(np.linalg.norm(corners[1] - corners[0])) / 5.0
        corners += rng.normal(0, 0.025 * side, corners.shape)  # localisation error
        large = aug.large > 0 and rng.random() < aug.large
        zoom = (aug.scale[1], aug.large_zoom) if large else aug.scale
        extra = random_similarity(rng, (w, h), zoom, 3.0, 0.06 * detect.PX)
    m = extra @ a @ np.linalg.inv(homography_from_corners(corners))
    rect = cv2.warpPerspective(
        item.image, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    if aug is not None:
        rect = aug.colour(rect, rng)
    oh, ow = h // STRIDE, w // STRIDE
    ts = _targets(project(m, item.small), (oh, ow), detect.SIGMA_SMALL)
    tb = _targets(project(m, item.big), (oh, ow), detect.SIGMA_BIG)
    x, y = detect.prepare(np.asarray(rect, np.uint8)), np.stack([ts, tb])  # uint8 already
    if aug is not None:  # a 4x2-square window: half the cost, same content statistics
        cw, ch = CROP
        i = int(rng.integers(0, (h - ch) // 8 + 1)) * 8
        j = int(rng.integers(0, (w - cw) // 8 + 1)) * 8
        x = x[:, :, i : i + ch, j : j + cw]
        y = y[:, i // STRIDE : (i + ch) // STRIDE, j // STRIDE : (j + cw) // STRIDE]
    return rect, x, y, large


# ---------------------------------------------------------------- training


def train(
    items: list[Item],
    steps: int,
    seed: int,
    log: str = "",
    init: Path | None = None,
    refresh: Any = None,
    favour: tuple[str, float] | None = None,
    batch: int = BATCH,
    init_onnx: Path | None = None,
    aug: Augment = CV_AUG,
    member: int = 0,
    teacher: nn.Module | None = None,
) -> CounterNet:
    """``refresh``: called every 250 steps, returns scenes written since (a growing cache).
    ``favour`` (SUBSTR, P): a P share of samples comes from scenes whose name holds SUBSTR
    (the few Blender renders among thousands of generated scenes). ``teacher``: learn its
    density maps on each window instead of the true ones (a single net that reads as a
    mean of counters does, at half its cost); windows zoomed past its range
    (``Augment.large``) learn the true maps, so a student keeps what the teacher reads
    and learns larger pieces from few labelled scenes."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = CounterNet()
    lr = LR
    if init is not None:  # warm start: continue a finished run at a third of the rate
        net.load_state_dict(torch.load(init))
    if init_onnx is not None:
        load_onnx_weights(net, init_onnx, member)
    if init is not None or init_onnx is not None:
        lr = LR / 3
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=steps, pct_start=0.1)
    pool = nn.AvgPool2d(4, 4)
    t0 = time.time()
    run = 0.0
    for step in range(steps):
        if refresh is not None and step % 250 == 0 and step:
            new = refresh()
            items = items + new
            if new:
                print(f"  {log} step {step}: {len(items)} scenes", flush=True)
        xs, ys, larges = [], [], []
        fav = [it for it in items if favour is not None and favour[0] in it.name]
        for _ in range(batch):
            src = fav if fav and favour is not None and rng.random() < favour[1] else items
            _, x, y, large = sample(src[int(rng.integers(len(src)))], rng, aug)
            xs.append(x[0])
            ys.append(y)
            larges.append(large)
        x = torch.from_numpy(np.stack(xs))
        y = torch.from_numpy(np.stack(ys)) * detect.OUT_SCALE
        if teacher is not None:
            with torch.no_grad():
                taught = teacher(x) * detect.OUT_SCALE
            keep = torch.tensor(larges).view(-1, 1, 1, 1)
            y = torch.where(keep, y, taught)
        net.train()
        if init_onnx is not None:
            freeze_bn(net)
        pred = net(x) * detect.OUT_SCALE
        # the two big stones are ~1% of the target mass: weigh them up
        wts = torch.tensor([1.0, 30.0]).view(1, 2, 1, 1)
        loss = ((pred - y) ** 2 * wts).mean() * 100.0
        # counting loss on 16x16-px windows: sums, not shapes, are what we report
        loss = loss + ((pool(pred) * 16 - pool(y) * 16).abs() * wts).mean() * COUNT_W
        run = optimise(opt, sched, loss, run)
        progress(log, step, steps, run, t0)
    net.eval()
    return net


def load_onnx_weights(net: CounterNet, path: Path, member: int = 0) -> int:
    """Warm start from a shipped ONNX (its .pt is gone): the exporter folded each batch norm
    into its conv, so the convs take the folded weights and bias and every batch norm becomes
    the identity, to be kept frozen (``freeze_bn``) so the start is exactly the shipped net.
    A mean of counters (``--average``) holds its members' convs one after the other:
    ``member`` picks one (0 first). Returns how many counters the file holds."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    convs = [[init[x] for x in n.input[1:]] for n in graph.node if n.op_type == "Conv"]
    blocks = [net.e1, net.e2, net.e3, net.e4, net.e5, net.e6, net.m1, net.m2]
    per = len(blocks) + 1
    if not convs or len(convs) % per:
        raise SystemExit(f"{path}: {len(convs)} convs, a counter has {per}")
    if not 0 <= member < len(convs) // per:
        raise SystemExit(f"{path}: no member {member}: it holds {len(convs) // per} counters")
    held = len(convs) // per
    convs = convs[member * per : (member + 1) * per]
    with torch.no_grad():
        for block, (w, b) in zip(blocks, convs, strict=False):
            conv, bn = block[0], block[1]
            if tuple(conv.weight.shape) != w.shape:
                raise SystemExit(f"{path}: a conv of shape {w.shape} is not the counter's")
            conv.weight.copy_(torch.from_numpy(w.copy()))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(b.copy()))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        w, b = convs[-1]
        net.head.weight.copy_(torch.from_numpy(w.copy()))
        net.head.bias.copy_(torch.from_numpy(b.copy()))
    return held


class MeanCounter(nn.Module):
    """Counters run side by side, their density maps averaged: one ONNX for cv2.dnn.

    Nets trained on different data err differently; the mean keeps what each reads well
    (the render-public-trained net's empty squares, the renders-trained one's unseen
    grounds and piles).
    """

    def __init__(self, nets: list[CounterNet]) -> None:
        super().__init__()
        self.nets = nn.ModuleList(nets)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.stack([net(x) for net in self.nets]).mean(0)


def member_of(part: str) -> tuple[Path, int]:
    """``PATH`` or ``PATH@K`` (member K of a mean of counters, 0 first) of ``--average``."""
    path, at, k = part.rpartition("@")
    if at and k.isdigit():
        return Path(path), int(k)
    return Path(part), 0


def mean_of(parts: list[tuple[Path, int]]) -> MeanCounter:
    """The mean of the shipped-format counters ``parts`` (path, member), in eval mode."""
    nets = []
    for path, member in parts:
        net = CounterNet()
        load_onnx_weights(net, path, member)
        nets.append(net)
    mean = MeanCounter(nets)
    mean.eval()
    return mean


def load_mean(path: Path) -> MeanCounter:
    """Every member of a shipped mean of counters (or the one counter of a plain file)."""
    return mean_of([(path, k) for k in range(load_onnx_weights(CounterNet(), path))])


def average(parts: list[tuple[Path, int]], out: Path) -> None:
    """Write ``out``: the mean of the shipped-format counters ``parts`` (path, member)."""
    export(mean_of(parts), out)


def freeze_bn(net: nn.Module) -> None:
    """Batch norms in eval mode: folded ones must stay the identity while the rest learns."""
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def optimise(opt: torch.optim.Optimizer, sched: Any, loss: torch.Tensor, run: float) -> float:
    """One optimiser and schedule step; returns the updated running loss."""
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    return 0.98 * run + 0.02 * float(loss.detach())


def progress(log: str, step: int, steps: int, run: float, t0: float) -> None:
    """A line every 250 steps and at the end: long CPU runs must show they are alive."""
    if step % 250 == 0 or step == steps - 1:
        print(f"  {log} step {step}/{steps} loss {run:.4f} ({time.time() - t0:.0f}s)", flush=True)


def predict(net: CounterNet, item: Item) -> np.ndarray:
    """Density maps of one image rectified with its true corners."""
    w, h, a = detect.canvas(detect.PX)
    m = a @ np.linalg.inv(homography_from_corners(item.corners))
    rect = cv2.warpPerspective(
        item.image, m, (w, h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    with torch.no_grad():
        x = detect.prepare(np.asarray(rect, np.uint8))  # uint8 already
        return np.asarray(net(torch.from_numpy(x)).numpy()[0])


def save_predictions(path: Path, items: list[Item], net: CounterNet) -> None:
    """Held-out density maps and truth, so counting rules are judged without retraining."""
    np.savez_compressed(
        path,
        names=np.array([it.name for it in items]),
        true=np.array([it.counts for it in items]),
        big_true=np.array([it.bigs for it in items]),
        dens=np.array([predict(net, it) for it in items], dtype=np.float16),
    )


def region_estimates(dens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-image (small, big) region estimates with the run-time rule of vision.detect."""
    labels = detect.region_cells(0.95)
    out = [detect.region_counts(d.astype(np.float32), labels) for d in dens]
    return np.array([o[0] for o in out]), np.array([o[1] for o in out])


def summarise(title: str, files: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    """Print bucket figures for saved predictions; return (true, raw) for calibration."""
    data = [np.load(f) for f in files]
    t = np.concatenate([d["true"] for d in data])
    bt = np.concatenate([d["big_true"] for d in data])
    raw, braw = region_estimates(np.concatenate([d["dens"] for d in data]))
    p = np.rint(np.maximum(raw, 0)).astype(int)
    print(f"== {title}: {len(t)} images, {t.size} squares")
    for line in bucket_lines(t.ravel(), p.ravel()):
        print(line)
    ends = list(MANDARINS)
    acc = 100 * np.mean((braw[:, ends] > 0.5) == (bt[:, ends] > 0))
    print(f"net big-stone channel (not used at run time): accuracy {acc:.1f}%")
    print(f"images with all 12 exact: {int(np.sum(np.all(p == t, axis=1)))}/{len(t)}")
    return t, raw


def fit_spread(t: np.ndarray, raw: np.ndarray) -> tuple[float, float, float]:
    """Maximum-likelihood (base, rel, tail weight) of the count likelihood on held-out residuals.

    Same model as ``vision.count.count_distribution`` (a Gaussian core plus a
    ``tail_scale`` times wider share), computed for all squares at once.
    """
    cfg = CountConfig()
    n = np.arange(cfg.max_count + 1, dtype=np.float64)
    m = np.maximum(raw.ravel().astype(np.float64), 0.0)
    truth = np.minimum(t.ravel(), cfg.max_count)
    rows = np.arange(len(m))

    def normal(sigma: np.ndarray) -> np.ndarray:
        g = np.exp(-0.5 * ((n[None, :] - m[:, None]) / sigma[:, None]) ** 2)
        dist: np.ndarray = g / g.sum(axis=1, keepdims=True)
        return dist

    best = (-np.inf, 0.0, 0.0, 0.0)
    for base in np.arange(0.2, 1.61, 0.1):
        for rel in np.arange(0.0, 0.5, 0.04):
            sigma = np.sqrt(base**2 + (rel * m) ** 2)
            core, tail = normal(sigma), normal(cfg.tail_scale * sigma)
            for w in (0.0, 0.05, 0.1, 0.2, 0.3):
                p = (1 - w) * core[rows, truth] + w * tail[rows, truth]
                ll = float(np.log(p + 1e-12).sum())
                if ll > best[0]:
                    best = (ll, float(base), float(rel), w)
    print(
        f"count likelihood fit: sigma_base={best[1]:.2f} sigma_rel={best[2]:.2f} "
        f"tail_weight={best[3]:.2f} (mean log-lik {best[0] / t.size:.3f})"
    )
    return best[1], best[2], best[3]


def export(net: nn.Module, path: Path, dummy: torch.Tensor | None = None) -> None:
    """ONNX that cv2.dnn reads: opset 13 from the TorchScript exporter, for ``dummy``'s shape."""
    if dummy is None:
        w, h, _ = detect.canvas(detect.PX)
        dummy = torch.zeros(1, 3, h, w)
    export_onnx(net, path, dummy)


def large_arg(text: str) -> tuple[float, float]:
    """``--large SHARE,ZOOM``: a share in 0..1 and a zoom past ``WIDE_AUG``'s range."""
    try:
        share, zoom = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected SHARE,ZOOM, got {text!r}") from None
    if not 0.0 < share <= 1.0 or zoom <= WIDE_AUG.scale[1]:
        raise argparse.ArgumentTypeError(
            f"SHARE must be in (0, 1] and ZOOM above {WIDE_AUG.scale[1]}, got {text!r}"
        )
    return share, zoom


def parse_holdout(text: str | None) -> tuple[int, int] | None:
    """``K/N`` -> (K, N): scenes whose index % N == K are kept out of training (validation)."""
    try:
        return parse_fold(text)
    except ValueError as exc:
        raise SystemExit(f"--holdout: {exc}") from None


def folder_loader(
    folders: list[Path], holdout: tuple[int, int] | None = None
) -> tuple[list[Item], Any]:
    """Scenes in ``folders`` now, and a function that returns the ones written since.

    ``holdout`` (K, N): scenes whose index % N == K are never returned, so a validation
    split of the same folders stays unseen (``bench/vision.py --fold K/N`` measures it).
    """
    seen: set[str] = set()

    def kept(it: Item) -> bool:
        return holdout is None or not in_fold(it.name, holdout)

    def more() -> list[Item]:
        new = [it for f in folders if f.is_dir() for it in load_items(f, seen)]
        seen.update(it.name for it in new)
        return [it for it in new if kept(it)]

    return more(), more


def train_on_folders(
    folders: list[Path],
    steps: int,
    seed: int,
    out: Path,
    work: Path,
    extra: list[Item],
    init: Path | None = None,
    favour: tuple[str, float] | None = None,
    holdout: tuple[int, int] | None = None,
    batch: int = BATCH,
    init_onnx: Path | None = None,
    member: int = 0,
    teacher: Path | None = None,
    aug: Augment = WIDE_AUG,
) -> int:
    """Train the shipped-interface counter on scenes that are not render-public's (and the
    ``extra`` classic ``vision.synth`` scenes the unit tests draw).

    Wider zoom and JPEG re-encoding on top of the colour, blur and noise changes (``aug``);
    scenes still being written are picked up every 250 steps. The model goes to ``out``.
    """
    items, more = folder_loader(folders, holdout)
    items = items + extra
    if not items:
        print("no scenes in " + ", ".join(map(str, folders)), file=sys.stderr)
        return 2
    print(f"{len(items)} scenes from {len(folders)} folders", flush=True)
    net = train(
        items,
        steps,
        seed + 200,
        "wide",
        init,
        more,
        favour,
        batch,
        init_onnx,
        aug,
        member,
        teacher=load_mean(teacher) if teacher is not None else None,
    )
    export(net, out)
    torch.save(net.state_dict(), work / "wide.pt")
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB) after {steps} steps")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path, nargs="?", help="render-public layout (CV runs)")
    ap.add_argument(
        "--data",
        type=Path,
        action="append",
        help="train only on these folders' scenes (renders, training.counter gen); no CV",
    )
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--folds", type=int, default=4, help="cross-validation folds")
    ap.add_argument("--run", default="all", help="comma list of fold numbers and/or 'final'")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--work", type=Path, default=Path("out/counter"), help="fold models, predictions"
    )
    ap.add_argument("--out", type=Path, default=Path(detect.MODEL_PATH))
    ap.add_argument("--report", action="store_true", help="only print figures from --work")
    ap.add_argument(
        "--synth", type=int, default=0, help="add N classic vision.synth scenes to the training"
    )
    ap.add_argument(
        "--favour", help="SUBSTR=P: a P share of samples from scenes whose path holds SUBSTR"
    )
    ap.add_argument("--init", type=Path, help="warm-start the (final or --data) run from these")
    ap.add_argument(
        "--init-onnx", type=Path, help="warm-start a --data run from a shipped counter ONNX"
    )
    ap.add_argument(
        "--init-member",
        type=int,
        default=0,
        help="which counter of an --init-onnx mean (--average) to start from (0 first)",
    )
    ap.add_argument("--holdout", help="K/N: --data scenes with index %% N == K stay out (val)")
    ap.add_argument(
        "--teacher",
        type=Path,
        help="a --data run learns this counter's (or mean of counters') maps, not the truth",
    )
    ap.add_argument(
        "--large",
        type=large_arg,
        metavar="SHARE,ZOOM",
        help="a SHARE of --data windows zoomed past the usual range, up to ZOOM (pieces up to "
        "a third of a square), learning the true maps even with --teacher",
    )
    ap.add_argument("--batch", type=int, default=BATCH, help="canvases per step")
    ap.add_argument(
        "--average",
        nargs="+",
        metavar="ONNX[@K]",
        help="write --out as the mean of these counters (no training); ONNX@K: member K of a mean",
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cv2.setNumThreads(1)
    if args.average:
        parts = [member_of(p) for p in args.average]
        missing = [str(p) for p, _ in parts if not p.is_file()]
        if missing:
            print(f"--average: no such model: {', '.join(missing)}", file=sys.stderr)
            return 2
        average(parts, args.out)
        print(f"wrote {args.out}: the mean of {len(args.average)} counters")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    if args.data:
        extra = synth_items(args.synth, args.seed + 7) if args.synth else []
        favour = None
        if args.favour:
            key, _, share = args.favour.rpartition("=")
            favour = (key, float(share))
        return train_on_folders(
            args.data,
            args.steps,
            args.seed,
            args.out,
            args.work,
            extra,
            args.init,
            favour,
            parse_holdout(args.holdout),
            args.batch,
            args.init_onnx,
            args.init_member,
            args.teacher,
            WIDE_AUG
            if args.large is None
            else replace(WIDE_AUG, large=args.large[0], large_zoom=args.large[1]),
        )
    if args.dataset is None:
        ap.error("give DATASET_DIR or --data DIR")
    runs = (
        [str(f) for f in range(args.folds)] + ["final"]
        if args.run == "all"
        else args.run.split(",")
    )
    if not args.report:
        singles = load_items(args.dataset / "singles")
        print(f"{len(singles)} singles")
        for run in runs:
            if run == "final":
                extra = synth_items(args.synth, args.seed + 7) if args.synth else []
                net = train(singles + extra, args.steps, args.seed + 100, "final", args.init)
                export(net, args.out)
                torch.save(net.state_dict(), args.work / "final.pt")
                print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
                seq = [it for d in sorted(args.dataset.glob("sequence_*")) for it in load_items(d)]
                save_predictions(args.work / "sequences.npz", seq, net)
                continue
            f = int(run)
            test = [it for i, it in enumerate(singles) if i % args.folds == f]
            trn = [it for i, it in enumerate(singles) if i % args.folds != f]
            net = train(trn, args.steps, args.seed + f, f"fold {f}")
            export(net, args.work / f"fold{f}.onnx")
            torch.save(net.state_dict(), args.work / f"fold{f}.pt")
            save_predictions(args.work / f"fold{f}.npz", test, net)
    folds = sorted(args.work.glob("fold*.npz"))
    if folds:
        t, raw = summarise(f"{len(folds)}-fold CV over singles (true corners)", folds)
        fit_spread(t, raw)
    if (args.work / "sequences.npz").exists():
        summarise(
            "sequences, model trained on all singles (true corners)", [args.work / "sequences.npz"]
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

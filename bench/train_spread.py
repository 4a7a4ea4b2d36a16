"""Train the tally's piece detector (``vision/models/spread.onnx``) on generated spreads.

    python bench/train_spread.py gen --count 2400          # canvases -> ~/.cache/oanquan/spread-train
    python bench/train_spread.py train --small-only --out S1.pt   # first stage: small pieces
    python bench/train_spread.py train --init S1.pt       # -> ~/.cache/oanquan/spread-train/spread.pt
    python bench/train_spread.py export                    # -> vision/models/spread.onnx
    python bench/train_spread.py train --width 20 --out W.pt  # a wider net (12 shipped)
    python bench/train_spread.py train --stride 1 --out S.pt  # a heatmap at stride 1 (2 shipped)
    python bench/train_spread.py levels --model S.onnx     # squares exact by peak level
    python bench/train_spread.py gen --workers 16 --minutes 2.4 --count 14000  # a many-core box
    python bench/train_spread.py train --device cuda --batch 64 --workers 7 --minutes 5.2

Data: ``vision.synth_spread`` scenes from seeds 1,000,000 on (the tally bench fits its
interval model on seeds 0.. and measures on 10,000..: never these), without the
generator's held-out families (``brick`` ground, ``shells`` pieces), so the bench's
figures on those two say how the detector does on kinds it never saw. Each scene is
stored rectified with its true corners at the canvas of ``vision.spread`` with the
pieces' centres; training jitters the canvas (the located outline is never exact),
flips it, changes colour, blur, noise and JPEG. Targets: a peak of height 1 on each
small piece's centre, spread a quarter of the piece's size (so touching pieces keep
two peaks), 0 elsewhere; the same for big stones in a second channel. Loss: the penalty-reduced focal loss of
CenterNet (Zhou et al. 2019). Two stages: small pieces alone first (``--small-only``, a
one-channel head), then both channels from it (``--init``): 12,000 steps of each count
squares better than 12,000 or 24,000 of both channels from scratch (training/README.md).
One or two CPU threads; needs the ``train`` extra (PyTorch, onnx). The shipped model
runs with OpenCV alone.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from training.augment import ColourJitter, random_similarity
from vision import detect, spread
from vision.frames import mean_frame
from vision.geometry import homography_from_corners, project
from vision.synth import HELD_OUT_GROUND, HELD_OUT_PIECE, PIECE_FAMILIES, WIDE_GROUNDS
from vision.synth_spread import empty_board, spread_scene

CACHE = Path(os.environ.get("OANQUAN_CACHE", Path.home() / ".cache" / "oanquan"))
DATA = CACHE / "spread-train"
SEED0 = 1_000_000
PATCH = 160  # training window, canvas px (1.7 x 1.7 squares)
GROUNDS = tuple(g for g in WIDE_GROUNDS if g != HELD_OUT_GROUND)
PIECES = tuple(p for p in PIECE_FAMILIES if p != HELD_OUT_PIECE)


def generate(
    start: int,
    count: int,
    out: Path,
    workers: int = 1,
    minutes: float | None = None,
    pair: bool = False,
    mean_dark: int = 0,
) -> None:
    """Scenes ``SEED0 + start ..``: canvas PNG and centres (canvas px) per seed; resumable.
    ``workers`` processes share the seeds (each scene depends on its seed alone); with
    ``minutes``, the seeds not begun by then are left for a later run; ``pair``: each
    scene's empty board too (``{seed}_empty.png``), for the detector read against it;
    ``mean_dark``: half the low-light scenes (by seed) are the mean of that many frames,
    as the live tally reads a noisy scene (``frames_for``)."""
    out.mkdir(parents=True, exist_ok=True)
    todo = [
        SEED0 + i for i in range(start, start + count) if not (out / f"{SEED0 + i}.json").is_file()
    ]
    t0 = time.time()
    one = functools.partial(
        _generate_one,
        out=out,
        deadline=t0 + 60 * minutes if minutes else None,
        pair=pair,
        mean_dark=mean_dark,
    )
    made = 0
    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for made_one in pool.imap_unordered(one, todo, 4):
                made += made_one
                if made_one and made % 500 == 0:
                    print(f"  {made} scenes, {made / (time.time() - t0):.1f}/s", flush=True)
    else:
        for seed in todo:
            made_one = one(seed)
            made += made_one
            if made_one and made % 50 == 0:
                print(f"  {made} scenes, {made / (time.time() - t0):.2f}/s", flush=True)
    print(f"  {made} of {len(todo)} scenes made in {time.time() - t0:.0f}s", flush=True)


def frames_for(seed: int, light: str, mean_dark: int) -> int:
    """How many frames scene ``seed``'s canvases are the mean of: ``mean_dark`` for half
    the scenes in low light (a coin of their own seed), else one. The generator draws
    low light with strong noise only, so without such means the detector never sees a
    dark frame as clean as the mean the live tally reads there."""
    if mean_dark <= 1 or light != "low":
        return 1
    return mean_dark if np.random.default_rng([seed, 31]).random() < 0.5 else 1


def _generate_one(
    seed: int, out: Path, deadline: float | None = None, pair: bool = False, mean_dark: int = 0
) -> bool:
    """One scene's canvas and record, the PNG first and the record moved in last, so a
    record always has its image; False for a seed skipped (past ``deadline``, or unfit).
    ``pair``: the empty board's canvas too, rectified by the same corners (a fixed camera);
    ``mean_dark``: see ``frames_for``."""
    if deadline is not None and time.time() > deadline:
        return False
    cv2.setNumThreads(1)
    w, h, a = spread.canvas()
    draw = functools.partial(spread_scene, seed, grounds=GROUNDS, pieces=PIECES, quan_pieces=True)
    blank = functools.partial(empty_board, seed, grounds=GROUNDS, pieces=PIECES, quan_pieces=True)
    try:
        image, truth = draw()
    except ValueError as exc:  # big pieces that do not fit one layer: skip the seed
        print(f"  seed {seed}: {exc}", flush=True)
        return False
    frames = frames_for(seed, truth["light"], mean_dark)
    if frames > 1:  # (the same scene, the sensor's noise drawn afresh in each frame)
        image = mean_frame([draw(noise_seed=k)[0] for k in range(frames)])
    board = homography_from_corners(np.array(truth["corners"]))
    m = a @ np.linalg.inv(board)
    hom = np.linalg.inv(m)  # canvas -> image, to keep with the canvas
    rect = spread.rectify(image, board)
    small = [p["position"] for p in truth["pieces"] if p["kind"] == "small"]
    big = [p["position"] for p in truth["pieces"] if p["kind"] == "big"]

    def to_canvas(pts: list[list[float]]) -> list[list[float]]:
        if not pts:
            return []
        canvas_pts: list[list[float]] = project(a, np.array(pts)).round(2).tolist()
        return canvas_pts

    cv2.imwrite(str(out / f"{seed}.png"), rect)
    if pair:
        # (a mean's noise seeds are its own: the two photos' noise is never the same draw)
        later = range(100, 100 + frames)
        before = blank() if frames == 1 else mean_frame([blank(noise_seed=k) for k in later])
        cv2.imwrite(str(out / f"{seed}_empty.png"), spread.rectify(before, board))
    record = {
        "seed": seed,
        "small": to_canvas(small),
        "big": to_canvas(big),
        "size_px": truth["conditions"]["pebble_size"] * spread.PX,
        "big_px": truth["conditions"]["big_size"] * spread.PX,
        "ground": truth["conditions"]["ground"],
        "pieces": truth["conditions"]["pieces"],
        "frames": frames,
        "canvas_to_image": hom.tolist(),
    }
    (out / f"{seed}.tmp").write_text(json.dumps(record))
    (out / f"{seed}.tmp").replace(out / f"{seed}.json")
    assert (w, h) == rect.shape[1::-1]
    return True


# ---------------------------------------------------------------- training (torch)


def _net(width: int = 12, stride: int = 2, heads: int = 2, inputs: int = 3) -> Any:
    """SpreadNet with ``width`` channels at stride 2 (2x and 3x that deeper down); with
    ``stride`` 1, a full-resolution stage of width/2 channels before the head; ``heads``
    1 for a first stage on small pieces alone; ``inputs`` 6 for the detector read against
    the empty board (``vision.spread.pair_blob``)."""
    import torch
    from torch import nn

    from training.nets import conv_bn_relu as cbr

    class SpreadNet(nn.Module):
        """Small U-Net: stride 2, 4 and 8 encoders (dilated at 8), heatmap at stride 2
        (or 1: pieces a twentieth of a square wide are 5 canvas px, two and a half cells)."""

        def __init__(self, w: int, fine: bool, heads: int, inputs: int) -> None:
            super().__init__()
            self.e1 = nn.Sequential(cbr(inputs, w, 2), cbr(w, w))
            self.e2 = nn.Sequential(cbr(w, 2 * w, 2), cbr(2 * w, 2 * w))
            self.e3 = nn.Sequential(
                cbr(2 * w, 3 * w, 2), cbr(3 * w, 3 * w, dil=2), cbr(3 * w, 3 * w, dil=4)
            )
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.d2 = nn.Sequential(cbr(5 * w, 2 * w, k=1), cbr(2 * w, 2 * w))
            self.d1 = nn.Sequential(cbr(3 * w, w, k=1), cbr(w, w))
            self.fine = fine
            out = w
            if fine:
                out = max(4, w // 2)
                self.e0 = nn.Sequential(cbr(inputs, out), cbr(out, out))
                self.d0 = nn.Sequential(cbr(w + out, out, k=1), cbr(out, out))
            self.head = nn.Conv2d(out, heads, 1)  # small-piece centres, big-stone centres
            nn.init.constant_(self.head.bias, -2.2)  # start near the background's 0.1

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a = self.e1(x)
            b = self.e2(a)
            c = self.e3(b)
            y = self.d2(torch.cat([b, self.up(c)], 1))
            y = self.d1(torch.cat([a, self.up(y)], 1))
            if self.fine:
                y = self.d0(torch.cat([self.e0(x), self.up(y)], 1))
            return torch.sigmoid(self.head(y))

    return SpreadNet(width, stride == 1, heads, inputs)


def weights_from_onnx(path: Path, inputs: int) -> dict[str, Any]:
    """A state dict for a stride-2 SpreadNet of ``inputs`` channels from an exported one
    (the shipped detector has no ``.pt``): each batch norm the identity plus its folded
    bias (``training.nets.unfold``: train with them frozen), and input channels the export
    lacks at zero weight, so the net starts as exactly the exported one and learns what
    the new channels add."""
    import torch

    from training.nets import folded_convs, unfold

    folded, _ = folded_convs(path)
    width = int(folded[0][0].shape[0])
    state: dict[str, Any] = dict(_net(width, 2, 2, inputs).state_dict())
    convs = [k for k, v in state.items() if k.endswith(".0.weight") and v.ndim == 4]
    if len(convs) + 1 != len(folded) or any(
        tuple(state[k].shape[:1] + state[k].shape[2:]) != w.shape[:1] + w.shape[2:]
        for k, (w, _) in zip(convs, folded, strict=False)
    ):
        raise SystemExit(f"{path}: not a stride-2 SpreadNet")
    for key, (w, b) in zip(convs, folded, strict=False):
        unfold(state, key, w, b)
    state["head.weight"], state["head.bias"] = (torch.tensor(a) for a in folded[-1])
    return state


def width_of(state: dict[str, Any]) -> int:
    """The width a saved SpreadNet was built with: its first convolution's output channels."""
    return int(state["e1.0.0.weight"].shape[0])


def heads_of(state: dict[str, Any]) -> int:
    """1 for a first stage on small pieces alone, 2 for the detector the tally runs."""
    return int(state["head.weight"].shape[0])


def inputs_of(state: dict[str, Any]) -> int:
    """3 for the detector of a photo alone, 6 for one read against the empty board."""
    return int(state["e1.0.0.weight"].shape[1])


def stride_of(state: dict[str, Any]) -> int:
    """The heatmap stride a saved SpreadNet was built with: 1 when it has the fine stage."""
    return 1 if "e0.0.0.weight" in state else 2


def targets(
    pts: np.ndarray, sizes: np.ndarray, shape: tuple[int, int], s: int = spread.STRIDE
) -> np.ndarray:
    """Peaks of height 1 at canvas points, spread a quarter of each piece's size, on a
    heatmap of stride ``s``."""
    pts = pts.reshape(-1, 2)
    h, w = shape
    out = np.zeros((h, w), np.float32)
    ys, xs = np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32)
    for (x, y), size in zip(pts / s - 0.5, sizes / s, strict=True):
        sigma = max(0.6, 0.25 * float(size))
        r = int(np.ceil(3 * sigma))
        x0, x1 = max(0, int(x) - r), min(w, int(x) + r + 2)
        y0, y1 = max(0, int(y) - r), min(h, int(y) + r + 2)
        if x0 >= x1 or y0 >= y1:
            continue
        gx = np.exp(-0.5 * ((xs[x0:x1] - x) / sigma) ** 2)
        gy = np.exp(-0.5 * ((ys[y0:y1] - y) / sigma) ** 2)
        np.maximum(out[y0:y1, x0:x1], np.outer(gy, gx), out=out[y0:y1, x0:x1])
    # the nearest cell of each centre is exactly 1 (CenterNet's positives)
    for x, y in pts / s - 0.5:
        i, j = round(float(y)), round(float(x))
        if 0 <= i < h and 0 <= j < w:
            out[i, j] = 1.0
    return out


#: colour changes of a training window (a tally is read by day, by lamp, by phone camera)
COLOUR = ColourJitter(
    white_balance=(0.8, 1.2),
    gamma=(0.75, 1.33),
    contrast=(0.75, 1.25),
    shift=0.08,
    blur_p=0.25,
    blur_sigma=(0.4, 1.1),
    noise=0.025,
    jpeg_p=0.3,
    jpeg_quality=(40, 92),
)


#: how far a pair's empty board may sit off the spread in a training window (canvas px,
#: degrees): a tripod nudged between the two photos, a located outline a pixel off
PAIR_SHIFT = 1.5
PAIR_TURN = 0.3
#: the median ratio of a scene's ``vision.spread.Cover.piece`` (the changed blobs' width,
#: shadow and blur included) to its pieces' true width, on the tally bench's scenes
COVER_RATIO = 1.34


def sample(
    rect: np.ndarray,
    rec: dict[str, Any],
    rng: np.random.Generator,
    stride: int = spread.STRIDE,
    before: np.ndarray | None = None,
    read_scale: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A jittered, flipped, recoloured PATCH x PATCH window and its target; with
    ``before`` (the empty board's canvas), the input of a detector read against it
    (``vision.spread.pair_blob``), the empty board's window nudged a little off;
    ``read_scale``: zoomed about the scale the tally reads that scene at
    (``vision.spread.scale_for`` of its pieces' width with shadow, ``COVER_RATIO``)."""
    h, w = rect.shape[:2]
    centre = 1.0
    if read_scale:
        centre = spread.scale_for(COVER_RATIO * rec["size_px"] / spread.PX) / spread.PX
    zoom = (0.88 * centre, 1.14 * centre)
    m = random_similarity(rng, (w, h), zoom, 2.5, 0.03 * spread.PX, pixel_centres=False)
    s = float(np.hypot(m[0, 0], m[1, 0]))  # its zoom: pieces' sizes scale with it
    # window: mostly where pieces are (the ten squares), now and then anywhere
    if rng.random() < 0.85:
        x0 = int(rng.uniform(1.25 * spread.PX - 30, 6.25 * spread.PX + 30 - PATCH))
        y0 = int(rng.uniform(0.0, h - PATCH))
    else:
        x0, y0 = int(rng.uniform(0, w - PATCH)), int(rng.uniform(0, h - PATCH))
    x0, y0 = x0 // 8 * 8, y0 // 8 * 8
    m = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]]) @ m

    def window(img: np.ndarray, warp: np.ndarray) -> np.ndarray:
        return np.asarray(
            cv2.warpAffine(
                img,
                warp[:2],
                (PATCH, PATCH),
                flags=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_REPLICATE,
            ),
            np.uint8,
        )

    win = window(rect, m)
    if before is None:
        x = detect.prepare(COLOUR(win, rng))[0]
    else:
        # (the turn as drawn, clockwise in image rows: getRotationMatrix2D turns the other way)
        nudge = np.vstack(
            [
                cv2.getRotationMatrix2D(
                    (PATCH / 2, PATCH / 2), -rng.uniform(-PAIR_TURN, PAIR_TURN), 1.0
                ),
                [0, 0, 1],
            ]
        )
        nudge[:2, 2] += rng.uniform(-PAIR_SHIFT, PAIR_SHIFT, 2)
        both = COLOUR(np.hstack([win, window(before, nudge @ m)]), rng)  # one camera, one look
        x = spread.pair_blob(both[:, :PATCH], both[:, PATCH:])[0]
    out = []
    for key, size_key in (("small", "size_px"), ("big", "big_px")):
        pts = np.array(rec[key], np.float64).reshape(-1, 2)
        pts = project(m, pts)
        size = rec[size_key] * s * rng.uniform(0.85, 1.15, len(pts))
        out.append(targets(pts, size, (PATCH // stride, PATCH // stride), stride))
    return x, np.stack(out)


Scene = tuple[np.ndarray, dict[str, Any], np.ndarray | None]


def load(data: Path) -> list[Scene]:
    """Every scene of ``data`` (canvas, record, the empty board's canvas where ``gen
    --pair`` wrote one), read by 8 threads: 10,000 canvases take a minute on one."""
    from concurrent.futures import ThreadPoolExecutor

    def one(p: Path) -> tuple[np.ndarray | None, dict[str, Any], np.ndarray | None]:
        empty = p.with_name(f"{p.stem}_empty.png")
        before = cv2.imread(str(empty)) if empty.is_file() else None
        return cv2.imread(str(p.with_suffix(".png"))), json.loads(p.read_text()), before

    with ThreadPoolExecutor(8) as pool:
        read = list(pool.map(one, sorted(data.glob("*.json"))))
    return [(img, rec, before) for img, rec, before in read if img is not None]


def _windows(
    items: list[Scene],
    seed: int,
    stride: int,
    batch: int,
    heads: int = 2,
    pair: bool = False,
    read_scale: bool = False,
) -> Callable[[int | None], Iterator[tuple[np.ndarray, np.ndarray]]]:
    """Endless batches of training windows from the loaded scenes, one numpy generator per
    loader worker (the run's seed and the worker's number, 0 in this process); the
    targets' first ``heads`` channels; ``pair``: read against each scene's empty board."""

    def stream(worker: int | None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        rng = np.random.default_rng((seed, worker or 0))
        while True:
            xs, ys = [], []
            for _ in range(batch):
                rect, rec, before = items[int(rng.integers(len(items)))]
                x, y = sample(rect, rec, rng, stride, before if pair else None, read_scale)
                xs.append(x)
                ys.append(y[:heads])
            yield np.stack(xs), np.stack(ys)

    return stream


def train(
    data: Path,
    steps: int,
    out: Path,
    seed: int = 0,
    init: Path | None = None,
    width: int = 12,
    stride: int = spread.STRIDE,
    batch: int = 8,
    workers: int = 0,
    device: str = "cpu",
    minutes: float | None = None,
    lr: float | None = None,
    small_only: bool = False,
    pair: bool = False,
    read_scale: bool = False,
) -> None:
    """``steps`` steps of ``batch`` windows under a one-cycle schedule; with ``minutes``,
    as many steps as fit in that wall time, the schedule following the clock instead (a
    GPU run has a fixed lease, not a known speed). ``small_only``: a first stage, small
    pieces alone on a one-channel head; a run from it (``init``) starts both channels
    with its head. ``pair``: the detector read against the empty board (6 inputs, every
    scene from ``gen --pair``). An ``init`` ONNX (an exported detector, the shipped one)
    is taken whole, the inputs it lacks at zero and its norms frozen."""
    import math

    import torch

    from training.nets import forked_batches, freeze_norms, on_device, save_weights

    torch.manual_seed(seed)
    items = load(data)
    inputs = 6 if pair else 3
    if pair and any(before is None for _, _, before in items):
        raise SystemExit(f"--pair: {data} holds scenes without an empty board (gen --pair)")
    frozen = init is not None and init.suffix == ".onnx"
    state = None
    if init is not None:
        state = weights_from_onnx(init, inputs) if frozen else torch.load(init)
        if inputs_of(state) != inputs:
            raise SystemExit(f"--init {init}: a net of {inputs_of(state)} inputs, not {inputs}")
    if state is not None:
        width, stride = width_of(state), stride_of(state)  # a fine-tune keeps its start's
    heads = 1 if small_only else 2
    if state is not None and heads_of(state) > heads:
        raise SystemExit(f"--init {init}: a two-channel net; a first stage starts afresh")
    print(
        f"training width {width}, stride {stride}, {heads} channel(s), on {len(items)} scenes, "
        f"batch {batch}, "
        + (f"{minutes} min" if minutes else f"{steps} steps")
        + f", {device}, {workers} loader workers",
        flush=True,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    net = _net(width, stride, heads, inputs)
    peak = lr or 3e-3
    if state is not None:
        if heads_of(state) < heads:  # a first stage: its head starts both channels
            state["head.weight"] = state["head.weight"].repeat(2, 1, 1, 1)
            state["head.bias"] = state["head.bias"].repeat(2)
        net.load_state_dict(state)
        peak = lr or 1e-3
    on_device(net, device)
    opt = torch.optim.AdamW(net.parameters(), lr=peak, weight_decay=1e-4)
    batches = forked_batches(_windows(items, seed, stride, batch, heads, pair, read_scale), workers)
    run, t0, step = 0.0, time.time(), 0

    def progress() -> float:  # 0..1 of the run, by steps or by the clock
        if minutes:
            return (time.time() - t0) / (60.0 * minutes)
        return step / steps

    while progress() < 1.0:
        f = progress()  # one cycle: 5% warm-up, then a cosine down to nothing
        rate = peak * (f / 0.05 if f < 0.05 else 0.5 * (1 + math.cos(math.pi * (f - 0.05) / 0.95)))
        for group in opt.param_groups:
            group["lr"] = rate
        x, y = (t.to(device, non_blocking=True) for t in next(batches))
        net.train()
        if frozen:
            freeze_norms(net)
        p = net(x).clamp(1e-4, 1 - 1e-4)
        pos = (y >= 0.999).float()
        neg = (1 - pos) * (1 - y) ** 4
        cell = -(pos * (1 - p) ** 2 * torch.log(p) + neg * p**2 * torch.log(1 - p))
        # each channel by its own positives: big stones are rare, yet they count ten
        loss = sum(cell[:, c].sum() / pos[:, c].sum().clamp(min=1.0) for c in range(cell.shape[1]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        run = 0.98 * run + 0.02 * float(loss.detach())
        if step % 200 == 0:
            print(
                f"  step {step} loss {run:.4f} lr {rate:.2g} ({time.time() - t0:.0f}s)", flush=True
            )
        if step % 2000 == 0:
            save_weights(net, out)
        step += 1
    print(f"  {step} steps of {batch} in {time.time() - t0:.0f}s, loss {run:.4f}", flush=True)
    save_weights(net, out)


def export(weights: Path, path: Path) -> None:
    """ONNX that cv2.dnn reads, at the full canvas's shape."""
    import torch

    from training.nets import export_onnx

    state = torch.load(weights)
    if heads_of(state) != 2:
        raise SystemExit(f"{weights}: a first stage (small pieces only): train on from it (--init)")
    # width, stride and inputs are all in the weights: no flag to get wrong
    net = _net(width_of(state), stride_of(state), 2, inputs_of(state))
    net.load_state_dict(state)
    net.eval()
    w, h, _ = spread.canvas()
    export_onnx(net, path, torch.zeros(1, inputs_of(state), h, w))


def levels(
    models: list[str], scenes: int, pairs: tuple[str, ...] = (), first: int | None = None
) -> None:
    """Per detector, the share of citizen squares whose count of peaks at or above a level
    is the true count, on the tally bench's scenes from seed ``first`` (its new scenes,
    10000.., by default; its fitting seeds, 0.., to choose between detectors without
    looking at those), board known: how well its raw peaks count, before the tally's
    maths. ``pairs``: those of ``models`` that read the spread against its empty board
    (``bench/tally.py``'s photo of it)."""
    from bench import tally  # its scenes and their cache

    marks = (0.2, 0.3, 0.4, 0.5, 0.6)
    right = {model: dict.fromkeys(marks, 0) for model in models}
    first = tally.EVAL_SEEDS if first is None else first
    for seed in range(first, first + scenes):
        image, truth = tally.scene(seed, "wide")  # read once, for every detector
        board = homography_from_corners(np.array(truth["corners"]))
        rect = spread.rectify(image, board)
        before = spread.rectify(tally.empty_scene(seed, "wide"), board) if pairs else None
        for model in models:
            heat = spread.heatmaps(rect, model, before if model in pairs else None)[0]
            per = spread.per_square(spread.peaks(heat, truth["arc_depth"]))
            for mark in marks:
                right[model][mark] += sum(
                    sum(1 for v in per[sq] if v >= mark) == truth["board"][sq]
                    for sq in tally.CITIZENS
                )
    for model in models:
        row = " ".join(f"{m}: {100 * right[model][m] / (10 * scenes):.1f}%" for m in marks)
        print(f"{model}: squares exact, peaks at or above {row}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--start", type=int, default=0)
    g.add_argument("--count", type=int, default=2400)
    g.add_argument("--out", type=Path, default=DATA)
    g.add_argument("--workers", type=int, default=1, help="processes generating scenes")
    g.add_argument("--minutes", type=float, help="begin no scene after this wall time")
    g.add_argument("--pair", action="store_true", help="each scene's empty board too")
    g.add_argument(
        "--mean-dark",
        type=int,
        default=0,
        metavar="K",
        help="half the low-light scenes as the mean of K frames (the live tally's reading)",
    )
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, default=DATA)
    t.add_argument("--steps", type=int, default=12000)
    t.add_argument("--out", type=Path, default=DATA / "spread.pt")
    t.add_argument("--init", type=Path, help="start from a .pt, or an exported .onnx taken whole")
    t.add_argument("--pair", action="store_true", help="read against the empty board (gen --pair)")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--batch", type=int, default=8, help="windows per step")
    t.add_argument("--workers", type=int, default=0, help="processes cutting windows")
    t.add_argument("--device", default="cpu", help="torch device: cpu, cuda")
    t.add_argument("--minutes", type=float, help="train for this wall time instead of --steps")
    t.add_argument("--lr", type=float, help="peak learning rate (3e-3, or 1e-3 with --init)")
    t.add_argument(
        "--small-only",
        action="store_true",
        help="a first stage: small pieces alone, one channel (then --init from it)",
    )
    t.add_argument(
        "--read-scale",
        action="store_true",
        help="zoom each scene about the canvas scale the tally reads it at",
    )
    t.add_argument(
        "--width", type=int, default=12, help="channels at stride 2 (ignored with --init)"
    )
    t.add_argument(
        "--stride",
        type=int,
        choices=(1, 2),
        default=spread.STRIDE,
        help="heatmap stride (ignored with --init)",
    )
    lv = sub.add_parser("levels")
    lv.add_argument("--model", action="append", default=[], help="ONNX (repeat; shipped if none)")
    lv.add_argument(
        "--pair-model", action="append", default=[], help="ONNX read against the empty board"
    )
    lv.add_argument("--scenes", type=int, default=60)
    lv.add_argument(
        "--first-seed", type=int, help="from this seed (default the bench's new scenes, 10000)"
    )
    e = sub.add_parser("export")
    e.add_argument("--weights", type=Path, default=DATA / "spread.pt")
    e.add_argument("--out", type=Path, default=Path(spread.MODEL))
    args = ap.parse_args()
    cv2.setNumThreads(1)
    if args.cmd == "gen":
        generate(
            args.start, args.count, args.out, args.workers, args.minutes, args.pair, args.mean_dark
        )
    elif args.cmd == "train":
        import torch

        torch.set_num_threads(args.threads)
        train(
            args.data,
            args.steps,
            args.out,
            init=args.init,
            width=args.width,
            stride=args.stride,
            batch=args.batch,
            workers=args.workers,
            device=args.device,
            minutes=args.minutes,
            lr=args.lr,
            small_only=args.small_only,
            pair=args.pair,
            read_scale=args.read_scale,
        )
    elif args.cmd == "levels":
        pairs = tuple(args.pair_model)
        levels([*args.model, *pairs] or [spread.MODEL], args.scenes, pairs, args.first_seed)
    else:
        export(args.weights, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
